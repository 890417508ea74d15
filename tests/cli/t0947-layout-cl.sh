#!/bin/sh
# t0947-layout-cl.sh: results stored channels last between convolutions
# (runtime/layout_cl.c) against onnxruntime-node on seeded random
# convolutional graphs and on the paths between the two layouts
# (tests/ort/layout_cl_ort.py), 3-D and 1-D convolutions and MaxPools
# too, and a large 1x1 reading a channels-last result into a plain one
# (k_conv_cl1.c); the --stats line that counts them.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"

timeout 300 $PY "$TOP/tests/ort/layout_cl_ort.py" "$OPMIG" "$T/cl" >"$T/cl.out" 2>&1
rc=$?
cat "$T/cl.out"
if [ $rc -eq 77 ]; then
	exit 0
fi
[ $rc -eq 0 ] || fail "channels-last results differ from onnxruntime (above)"
grep -q "^0 failures$" "$T/cl.out" || fail "layout_cl_ort.py printed no summary"
grep -q "^ok: cl4[0-2] (as chosen): .* [1-9][0-9]* stored channels last" "$T/cl.out" ||
	fail "no fixed graph stored a result channels last where opmig picks oneDNN"
for i in 43 44 45 46; do
	grep -q "^ok: cl$i (as chosen): .* [1-9][0-9]* stored channels last" "$T/cl.out" ||
		fail "NHWC, 3-D or 1-D graph cl$i stored no result channels last"
done
# the 3-D and 1-D graphs: each convolution before a MaxPool and each
# MaxPool (1 to 3 spatial dims) stored channels last
grep -q "^ok: cl45 (as chosen): .* 3 stored channels last" "$T/cl.out" ||
	fail "3-D graph cl45: its convolution and two MaxPools not all channels last"
grep -q "^ok: cl46 (as chosen): .* 2 stored channels last" "$T/cl.out" ||
	fail "1-D graph cl46: its convolution and MaxPool not both channels last"
grep -q "^ok: cl47 (as chosen): 2 outputs, 1 stored channels last" "$T/cl.out" ||
	fail "graph cl47 (a large 1x1 on a channels-last result, its own plain) did not run as expected"
# the AveragePool graphs: the convolution and each pool channels last
grep -q "^ok: cl48 (as chosen): .* 2 stored channels last" "$T/cl.out" ||
	fail "3-D graph cl48: its convolution and AveragePool not both channels last"
grep -q "^ok: cl49 (as chosen): .* 3 stored channels last" "$T/cl.out" ||
	fail "2-D graph cl49: its convolution and two AveragePools not all channels last"
echo "ok: channels-last results equal onnxruntime's"
