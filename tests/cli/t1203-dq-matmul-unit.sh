#!/bin/sh
# t1203-dq-matmul-unit.sh: MatMul(A, DequantizeLinear(constant codes,
# scale[, zero point])), the weight-only form of `opmig migrate --precision
# int4 --target tensorrt`, runs in opmig's interpreter as one unit that
# dequantizes B into a scratch freed after the product (runtime/qdq_wo.c)
# rather than keeping the float weight as a constant result
# (tests/ort/dq_matmul_ort.py): int4, uint4, int8 and uint8 codes, with and
# without zero points, blocks of 16 to 128 along K (K not a multiple among
# them), blocks along N, per-axis and per-tensor scales, batch and sequence
# dims; bit for bit equal to the graph as written (`opmig run --exact`),
# both within float32 rounding of onnxruntime-node; float16 scales left as
# written; an A dequantized itself still computed.  Skipped when
# python-onnx or onnxruntime-node is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }

timeout 120 "$PY" "$TOP/tests/ort/dq_matmul_ort.py" "$OPMIG" "$T/work" >"$T/dq.out" 2>&1
rc=$?
cat "$T/dq.out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "the weight-only DequantizeLinear+MatMul unit is wrong (above)"
grep -q "^41 cases, " "$T/dq.out" || fail "dq_matmul_ort.py ran another number of cases"
grep -q "^0 failures$" "$T/dq.out" || fail "dq_matmul_ort.py printed no summary"
echo "ok: weight-only DequantizeLinear+MatMul units equal the graph as written and onnxruntime"
