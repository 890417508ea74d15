#!/bin/sh
# t1198: `opmig migrate --precision int4 --target tensorrt --opset 21
# --no-validate` of weights larger than the memory opmig is given.  The
# 1 GiB model of t1188 (4 MatMuls of [8192, 8192] float32 in a sparse
# file) under an address-space limit of a quarter of its weights: the
# quantizer's accuracy check is skipped (--no-validate runs nothing), and
# the lowering of MatMulNBits to blocked DequantizeLinear-21 computes the
# int4 codes (signed: zero point 0, as TensorRT wants) and the scales from
# the float weight a block of rows at a time while they are written; the
# first and last columns and those holding seeded values equal a numpy
# implementation of the quantizer.  The same for --weight-only int8, and
# for a model quantize already made MatMulNBits (its B read back).
# With validation (--no-accuracy-check alone) the interpreter maps the
# float weights, which the limit does not hold: exit 4 and nothing
# written (the limit is what the test says it is).  Skipped when
# python-onnx is absent.
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$TOP" || fail "cannot cd to $TOP"
LIMIT_KB=262144      # a quarter of the 1 GiB of weights
RUN_LIMIT=300
case $OPMIG in */asan/*) LIMIT_KB=unlimited ;; esac

$PY tests/verify/big_weights.py make "$T/m" 4 8192 >"$T/py" 2>&1 ||
	{ cat "$T/py" >&2; fail "cannot make the model"; }
M="$T/m/model.onnx"
DQ="$PY tests/verify/nbits_dq_big.py"


# 1. int4 for tensorrt: blocked DequantizeLinear-21 of signed int4 codes
limited 0 "$OPMIG" migrate "$M" --target tensorrt --opset 21 --precision int4 --no-validate \
	-o "$T/t4.onnx"
grep -q "^note: int4: 4 MatMuls quantized weight-only (int4 weights in blocks of 32 along K, symmetric), 0 in float; cosine>=0.99 not checked (--no-validate: nothing run, none returned to float)$" "$T/out" ||
	{ cat "$T/out"; fail "the report does not say that 4 MatMuls were quantized unchecked"; }
grep -q "^validation: skipped$" "$T/out" || { cat "$T/out"; fail "validation not skipped"; }
# per weight: 8192 * 8192 codes of half a byte, 256 * 8192 float scales
size=$(wc -c <"$T/t4.onnx.data")
want=$((4 * (8192 * 4096 + 256 * 8192 * 4)))
[ "$size" -ge "$want" ] && [ "$size" -lt $((want + 1024)) ] || fail "t4.onnx.data has $size bytes, want $want"
$DQ check "$M" "$T/t4.onnx" 4 32 >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "int4 codes"; }
cat "$T/py"
rm -f "$T/t4.onnx" "$T/t4.onnx.data"

# 2. weight-only int8 in blocks of 64: int8 codes
limited 0 "$OPMIG" migrate "$M" --target tensorrt --opset 21 --weight-only int8 --block-size 64 \
	--no-validate -o "$T/t8.onnx"
grep -q "^note: int8: 4 MatMuls quantized weight-only (int8 weights in blocks of 64" "$T/out" ||
	{ cat "$T/out"; fail "not 4 MatMuls in int8"; }
$DQ check "$M" "$T/t8.onnx" 8 64 >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "int8 codes"; }
cat "$T/py"
rm -f "$T/t8.onnx" "$T/t8.onnx.data"

# 4. a model already in MatMulNBits form (quantize's, int8 symmetric):
#    the lowering reads its B in long runs, 32 MiB of codes (half the
#    rows) at a time.  Not under the limit: dedup-constants maps two
#    such B of 64 MiB at once to compare them (their sampled pages are
#    equal: the weights are mostly zeros)
limited 0 "$OPMIG" quantize "$M" -o "$T/q8.onnx" --weight-only int8 --symmetric --no-accuracy-check
run 0 "$OPMIG" migrate "$T/q8.onnx" --target tensorrt --opset 21 --no-validate -o "$T/g8.onnx"
$DQ check "$M" "$T/g8.onnx" 8 32 >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "int8 codes from MatMulNBits"; }
cat "$T/py"
rm -f "$T/q8.onnx" "$T/q8.onnx.data" "$T/g8.onnx" "$T/g8.onnx.data"

# 3. validation runs the float model, which the limit does not hold
#    (no limit under AddressSanitizer)
if [ "$LIMIT_KB" != unlimited ]; then
	limited 4 "$OPMIG" migrate "$M" --target tensorrt --opset 21 --precision int4 --force \
		--no-accuracy-check -o "$T/c4.onnx"
	grep -q "cannot allocate memory" "$T/err" || { cat "$T/err"; fail "not stopped by the limit"; }
	[ ! -e "$T/c4.onnx" ] || fail "written although validation could not run"
fi
echo "ok: 1 GiB of weights migrated to int4 and int8 DequantizeLinear under ulimit -v $LIMIT_KB KiB, codes equal numpy's"
