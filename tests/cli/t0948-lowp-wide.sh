#!/bin/sh
# t0948-lowp-wide.sh: float16 and bfloat16 results kept in float32 between
# the nodes that compute in float32 (runtime/lowp.c): on seeded random
# graphs the outputs are the same bytes with and without (OPMIG_NO_WIDE=1),
# as chosen and with oneDNN for every convolution, and the float16 ones
# agree with onnxruntime-node (tests/ort/lowp_wide_ort.py); the --stats
# line that counts them.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"

timeout 300 $PY "$TOP/tests/ort/lowp_wide_ort.py" "$OPMIG" "$T/w" >"$T/w.out" 2>&1
rc=$?
cat "$T/w.out"
if [ $rc -eq 77 ]; then
	exit 0
fi
[ $rc -eq 0 ] || fail "results kept in float32 change the outputs (above)"
grep -q "^0 failures$" "$T/w.out" || fail "lowp_wide_ort.py printed no summary"
grep -q "^ok: w4[23] float16 (oneDNN everywhere): .* [1-9][0-9]* results kept" "$T/w.out" ||
	fail "no fixed graph kept a result in float32"
echo "ok: results kept in float32 change no output"
