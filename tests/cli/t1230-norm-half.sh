#!/bin/sh
# t1230-norm-half.sh: float16 normalizations lowered with float32
# statistics between Casts equal onnxruntime's kernels (issue 25 item 3;
# tests/ort/norm_half_ort.py): seeded single-node SkipLayerNormalization,
# SkipSimplifiedLayerNormalization (their optional outputs read),
# LayerNormalization-17, RMSNormalization-23 and GroupNormalization-18
# and -21 in float16 lowered for qnn, tensorrt, generic-npu, openvino and
# nnapi (a bfloat16 skip norm for tensorrt against numpy), and the float16
# onnxruntime-genai decoder migrated to qnn and tensorrt with no
# SkipSimplifiedLayerNormalization left; each passes onnx.checker
# full_check (opset <= 17) and equals onnxruntime-node on the original
# within float16's tolerance, also when opmig run --exact rounds each op
# of the written model to float16.  The skip norms and RMSNormalization-23
# in float32 too, lowered for the same targets with no Cast, within
# float32's bound (2 (h + 8) 2^-23 of each row).  Skipped when
# onnxruntime-node or python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
timeout 120 "$PY" "$TOP/tests/ort/norm_half_ort.py" "$OPMIG" "$T/work" >"$T/norm.out" 2>&1
rc=$?
cat "$T/norm.out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "a lowered float16 norm differs from onnxruntime's (above)"
grep -q "^0 failures$" "$T/norm.out" || fail "norm_half_ort.py printed no summary"
echo "ok: float16 norms lowered with float32 statistics, and float32 skip and RMS norms, equal onnxruntime's kernels"
