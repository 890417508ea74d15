#!/bin/sh
# t0930-resize-ort.sh: Resize and Upsample in `opmig run` against a float64
# reference written from the specification (tests/ort/resize_ref.py) and
# against onnxruntime-node: about 340 seeded random one-node models, every
# version x mode x coordinate_transformation_mode x nearest_mode x
# scales-or-sizes, with axes, keep_aspect_ratio_policy, antialias,
# cubic_coeff_a, exclude_outside, roi and extrapolation_value, ranks 1-5
# and several dtypes (tests/ort/resize_cases.py).  Where onnxruntime is
# absent only the reference judges (a notice says so); where it is known
# to deviate from the specification, resize_ort.py says how and compares
# that case with the reference only.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
cd "$T" || fail "cd $T"

timeout 300 $PY "$TOP/tests/ort/resize_ort.py" "$OPMIG" "$T/work" --seed 1 >out 2>err
rc=$?
cat out
[ "$rc" -eq 0 ] || { tail -5 err >&2; fail "resize_ort.py exited $rc"; }
grep -q '^340 cases: opmig differs from the float64 reference in 0$' out ||
	fail "not the 340 cases expected, or some differ"
if grep -q '^notice: onnxruntime-node not used' out; then
	exit 0
fi
# most cases must reach onnxruntime for the comparison to mean something
n=$(sed -n 's/^onnxruntime .*: compared \([0-9]*\), differs from the reference in 0;.*/\1/p' out)
[ -n "$n" ] || fail "onnxruntime's line missing or reports differences"
[ "$n" -ge 200 ] || fail "only $n cases compared with onnxruntime"
exit 0
