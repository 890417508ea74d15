#!/bin/sh
# t1212-nbits-float16.sh: com.microsoft MatMulNBits of float16 data
# (onnxruntime-genai's int4 exports of float16 models) lowered by
# matmul-nbits to DequantizeLinear-21 with float16 scales and a float16
# MatMul, equal to MatMulNBits in onnxruntime-node and to a numpy
# reference within 2^-9 of the largest |value| (tests/ort/nbits_f16_ort.py);
# a target without DequantizeLinear-21 codes keeps the node.  Skipped when
# onnxruntime-node or python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
timeout 120 "$PY" "$TOP/tests/ort/nbits_f16_ort.py" "$OPMIG" "$T/work" >"$T/nb.out" 2>&1
rc=$?
cat "$T/nb.out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "a float16 MatMulNBits lowering is wrong (above)"
grep -q "^0 failures$" "$T/nb.out" || fail "nbits_f16_ort.py printed no summary"
echo "ok: float16 MatMulNBits as DequantizeLinear-21 with float16 scales"
