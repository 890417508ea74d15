#!/bin/sh
# t1236-nbits-codes-opset17.sh: com.microsoft MatMulNBits lowered below
# opset 21 with the codes kept one a byte: a per-axis DequantizeLinear of
# uint8 codes where one block spans K, else uint8 codes [K / block, block,
# N] through Cast, Sub (zero points), Mul (scales), Reshape and Slice,
# on openvino (17 and 19), ascend, opencv-dnn, and rknpu2's dequantized
# float32 fallback; weights checked by numpy, bytes on disk, onnx.checker,
# and onnxruntime-node against the original (tests/ort/nbits_codes_ort.py);
# opmig's interpreter runs each float32 cast chain with its MatMul as one
# weight-only unit (runtime/qdq_wo.c: nothing kept, Cast not run), bit for
# bit equal to `opmig run --exact`, also on hand-made chains (int8 codes,
# broadcast zero points, a Slice with axes and steps) and not on a Sub of
# swapped inputs.
# Skipped when onnxruntime-node or python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
timeout 120 "$PY" "$TOP/tests/ort/nbits_codes_ort.py" "$OPMIG" "$T/work" >"$T/nb.out" 2>&1
rc=$?
cat "$T/nb.out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "a byte-codes MatMulNBits lowering is wrong (above)"
grep -q "^0 failures$" "$T/nb.out" || fail "nbits_codes_ort.py printed no summary"
echo "ok: MatMulNBits below opset 21 keeps uint8 codes"
