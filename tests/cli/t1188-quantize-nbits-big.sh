#!/bin/sh
# t1188: weight-only quantization of weights larger than the memory opmig
# is given.  A model with 1 GiB of external float32 weights (4 MatMuls of
# [8192, 8192] in a sparse file: seeded values at 64 places per weight) is
# quantized to MatMulNBits with --no-accuracy-check under an address-space
# limit of a quarter of its weights: the codes are computed a range of
# columns at a time while written (int4 blocks of 32: 2048 columns at a
# time, 8 MiB of codes; int8 blocks of 16: 1024), a read per row, the
# float weights read with pread; the first and last columns and those
# holding seeded values equal a numpy implementation of the quantizer.
# With the accuracy check (not limited: the interpreter maps the float
# weights) the float reference is the input read in place and no float
# copy is written.  Skipped when python-onnx is absent.
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$TOP" || fail "cannot cd to $TOP"
LIMIT_KB=262144      # a quarter of the 1 GiB of weights
RUN_LIMIT=300
# AddressSanitizer reserves terabytes of address space for its shadow:
# under it the limit does not apply (the values still do)
case $OPMIG in */asan/*) LIMIT_KB=unlimited ;; esac

$PY tests/verify/big_weights.py make "$T/m" 4 8192 >"$T/py" 2>&1 ||
	{ cat "$T/py" >&2; fail "cannot make the model"; }
M="$T/m/model.onnx"
NB="$PY tests/verify/nbits_big.py"


# 1. int4, asymmetric, blocks of 32
limited 0 "$OPMIG" quantize "$M" -o "$T/q4.onnx" --weight-only int4 --no-accuracy-check
grep -q "^criterion cosine>=0.99: not checked (--no-accuracy-check)$" "$T/out" ||
	{ cat "$T/out"; fail "the report does not say the check was skipped"; }
grep -q "^nodes: 4 quantized, 0 in float$" "$T/out" || { cat "$T/out"; fail "not 4 MatMuls quantized"; }
# the report's numbers come from the codes' pass: w0 holds its seeded values
grep -q "^  weight     w0 uint4 per channel (axis 0, 2097152): scale -*[0-9.e-]*\.\.[0-9.e-]*, range \[-[0-9.e-]*, [0-9.e-]*\]$" "$T/out" ||
	{ cat "$T/out"; fail "no scales and range for w0"; }
[ -f "$T/q4.onnx.data" ] || fail "no q4.onnx.data: $(ls "$T")"
# per weight: 8192 columns of 256 blocks, 16 bytes of codes, a float scale
# and half a byte of zero point each (64-byte alignment between tensors)
size=$(wc -c <"$T/q4.onnx.data")
want=$((4 * 8192 * 256 * (16 + 4) + 4 * 8192 * 128))
[ "$size" -ge "$want" ] && [ "$size" -lt $((want + 1024)) ] || fail "q4.onnx.data has $size bytes, want $want"
$NB check "$M" "$T/q4.onnx" 4 32 0 >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "int4 codes"; }
cat "$T/py"
rm -f "$T/q4.onnx" "$T/q4.onnx.data"

# 2. int8, symmetric, blocks of 16 (codes of 1024 columns at a time)
limited 0 "$OPMIG" quantize "$M" -o "$T/q8.onnx" --weight-only int8 --symmetric --block-size 16 \
	--no-accuracy-check
$NB check "$M" "$T/q8.onnx" 8 16 1 >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "int8 codes"; }
cat "$T/py"
rm -f "$T/q8.onnx" "$T/q8.onnx.data"

# 3. the accuracy check: the reference is the input in place (no float
#    copy in TMPDIR), the trial written there and removed after
mkdir "$T/tmp" || fail "no $T/tmp"
TMPDIR="$T/tmp" run 0 "$OPMIG" quantize "$M" -o "$T/c4.onnx" --weight-only int4 --samples 1 --force
grep -q "^criterion cosine>=0.99 on 1 sample: " "$T/out" || { cat "$T/out"; fail "no accuracy check"; }
[ -z "$(ls "$T/tmp")" ] || fail "left in TMPDIR: $(ls -R "$T/tmp")"
$NB check "$M" "$T/c4.onnx" 4 32 0 >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "int4 codes (checked)"; }

# 4. --no-accuracy-check belongs to --weight-only
run 2 "$OPMIG" quantize "$M" -o "$T/x.onnx" --no-accuracy-check
grep -q "^opmig: --no-accuracy-check needs --weight-only$" "$T/err" || { cat "$T/err"; fail "not refused alone"; }
echo "ok: 1 GiB of weights quantized to int4 and int8 under ulimit -v $LIMIT_KB KiB, codes equal numpy's"
