#!/bin/sh
# t1239-migrate-int4-cast.sh: migrate --precision int4 / --weight-only int8
# below opset 21 for targets that take matmul-nbits' cast-codes form
# (openvino, coreml, tensorrt at 17): the quantizer's codes kept one a
# byte (uint8 [K / block, block, N], K padded to whole blocks), uint8 zero
# points through their own Cast, Mul of the scales, Reshape and Slice; each
# weight equal to numpy's dequantization of `opmig quantize --weight-only`'s
# MatMulNBits, onnx.checker, onnxruntime-node against that MatMulNBits,
# the interpreter's weight-only unit bit for bit equal to run --exact;
# generic-npu refused (tests/ort/migrate_int4_cast_ort.py).
# Skipped when onnxruntime-node or python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
timeout 120 "$PY" "$TOP/tests/ort/migrate_int4_cast_ort.py" "$OPMIG" "$T/work" >"$T/mc.out" 2>&1
rc=$?
cat "$T/mc.out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "migrate --precision int4 below opset 21 is wrong (above)"
grep -q "^0 failures$" "$T/mc.out" || fail "migrate_int4_cast_ort.py printed no summary"
echo "ok: --precision int4 below opset 21 keeps the codes one a byte"
