#!/bin/sh
# t1186: int8 QDQ weight quantization in memory that does not grow with
# the weights.  A model with 512 MiB of external float32 weights (2
# MatMuls of [8192, 8192] in a sparse file: seeded values at 64 places per
# weight) is quantized (static int8 QDQ, per channel and per tensor, one
# sample, no fallback) under an address-space limit: each weight's range
# is read piece by piece and its codes are computed while they are written
# into OUT.data, none held in memory.  The limit is above what the
# interpreter needs for the calibration and the accuracy check (it maps
# the float weights and dequantizes one weight at a time: ~1.15 GB with
# one thread), and below what building the codes in memory took (a float
# copy of a weight and every int8 weight held until saved: ~1.55 GB).
# The codes, scales and zero points equal a numpy implementation at the
# seeded places and at zeros.  Skipped when python-onnx is absent.
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$TOP" || fail "cannot cd to $TOP"
LIMIT_KB=1350000
RUN_LIMIT=300
# AddressSanitizer reserves terabytes of address space for its shadow:
# under it the limit does not apply (the values still do)
case $OPMIG in */asan/*) LIMIT_KB=unlimited ;; esac
# one thread each, and two malloc arenas: the address space taken then
# does not depend on the machine's count of CPUs
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MALLOC_ARENA_MAX=2
BW="$PY tests/verify/big_weights.py"

$BW make "$T/m" 2 8192 >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "cannot make the model"; }
M="$T/m/model.onnx"

# 1. per channel (int8 weights are symmetric)
limited 0 "$OPMIG" quantize "$M" -o "$T/q.onnx" --samples 1 --no-fallback --threads 1
grep -q "^nodes: 2 quantized, 0 in float$" "$T/out" || { cat "$T/out"; fail "not 2 MatMuls quantized"; }
grep -q "^  weight     w0 int8 per channel (axis 1, 8192): " "$T/out" || { cat "$T/out"; fail "no w0 per channel"; }
[ "$(wc -c <"$T/q.onnx.data")" -ge $((2 * 8192 * 8192)) ] || fail "q.onnx.data holds $(wc -c <"$T/q.onnx.data") bytes"
$BW qdq "$M" "$T/q.onnx" sym >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "per-channel codes"; }
cat "$T/py"
rm -f "$T/q.onnx" "$T/q.onnx.data"

# 2. per tensor
limited 0 "$OPMIG" quantize "$M" -o "$T/t.onnx" --samples 1 --no-fallback --threads 1 --per-tensor
grep -q "^  weight     w1 int8: scale " "$T/out" || { cat "$T/out"; fail "no w1 per tensor"; }
$BW qdq "$M" "$T/t.onnx" sym >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "per-tensor codes"; }
cat "$T/py"
echo "ok: 512 MiB of weights quantized to int8 QDQ under ulimit -v $LIMIT_KB KiB, codes equal numpy's"
