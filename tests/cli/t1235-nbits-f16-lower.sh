#!/bin/sh
# t1235-nbits-f16-lower.sh: float16 com.microsoft MatMulNBits lowered by
# matmul-nbits on targets without MatMulNBits: MatMul on float16 weights
# dequantized while the model is written (ascend, generic-npu),
# DequantizeLinear-21 of uint4/uint8 codes (openvino --opset 21) or of
# int4, int8 code - zero point and uint8 codes (tensorrt --opset 21);
# seeded single-node models (bits 4 and 8, blocks 16 to 128, partial last
# blocks, odd N, zero points or none, bias) and the float16 genai decoder
# compared with onnxruntime-node on the original (tests/ort/
# nbits_f16_lower_ort.py).  Skipped when onnxruntime-node or python-onnx
# is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
timeout 120 "$PY" "$TOP/tests/ort/nbits_f16_lower_ort.py" "$OPMIG" "$T/work" >"$T/nb.out" 2>&1
rc=$?
cat "$T/nb.out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "a float16 MatMulNBits lowering is wrong (above)"
grep -q "^0 failures$" "$T/nb.out" || fail "nbits_f16_lower_ort.py printed no summary"
echo "ok: float16 MatMulNBits lowered per target"
