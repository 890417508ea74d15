#!/bin/sh
# t0316: BatchNormalization folded into weights larger than the memory
# opmig is given.  A model with 512 MiB of external float32 Conv weights
# (8 1x1 Convs of [4096, 4096] in a sparse file: seeded values at 64
# places per weight), each followed by a BatchNormalization, is migrated
# (fuse-batch-norm, --no-validate) under an address-space limit of a
# quarter of its weights: each folded weight is computed from the input's
# a piece at a time while it is written into OUT.data, never held (the
# fold that kept every folded weight in memory until the model was saved
# needed ~1.21 GB of address space here, the streamed one ~100 MB).  The
# folded weights and biases equal numpy's bit for bit at the seeded places
# (zeros between), and no BatchNormalization is left; a dry run reads no
# weight (the copying fold read them all).  A Conv of 8192
# channels is folded too (the fold used to stop at 4096), and a small
# model with validation: the interpreter reads the folded weights
# (computed when read) and computes what the original computes, also
# where three Convs share a weight.  Skipped when python-onnx is absent.
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$TOP" || fail "cannot cd to $TOP"
LIMIT_KB=262144      # a quarter of the 512 MiB of weights
RUN_LIMIT=120
# AddressSanitizer reserves terabytes of address space for its shadow and
# faults its pages in: under it the limit and the page-fault bound do not
# apply (the values still do)
case $OPMIG in */asan/*) LIMIT_KB=unlimited FAULTS_MAX=1000000000 ;; *) FAULTS_MAX=4000 ;; esac
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MALLOC_ARENA_MAX=2
BW="$PY tests/verify/big_weights.py"

# 1. 8 Conv + BatchNormalization layers, 512 MiB of weights
$BW make-bn "$T/m" 8 4096 >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "cannot make the model"; }
limited 0 "$OPMIG" migrate "$T/m/model.onnx" --target tensorrt --no-validate -o "$T/f.onnx"
[ "$(grep -c "^  fuse-batch-norm: node 'bn[0-7]' (BatchNormalization) -> 1 node$" "$T/out")" -eq 8 ] ||
	{ cat "$T/out"; fail "not 8 BatchNormalizations folded"; }
[ "$(wc -c <"$T/f.onnx.data")" -ge $((8 * 4096 * 4096 * 4)) ] ||
	fail "f.onnx.data holds $(wc -c <"$T/f.onnx.data") bytes"
$BW bn "$T/m/model.onnx" "$T/f.onnx" >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "folded weights"; }
cat "$T/py"
# a dry run folds without reading a weight (mapped, the 512 MiB would
# fault ~130,000 pages in; the fold that copied them took ~157,000)
$BW usage "$OPMIG" migrate "$T/m/model.onnx" --target tensorrt --dry-run >"$T/use" 2>&1 ||
	{ cat "$T/use" >&2; fail "dry run"; }
read -r rc faults bytes rss <"$T/use"
[ "$rc" -eq 0 ] || fail "dry run exited $rc"
[ "$faults" -lt "$FAULTS_MAX" ] || fail "dry run took $faults page faults: it read weights"
[ "$bytes" -lt 16000000 ] || fail "dry run read $bytes bytes: it read weights"
rm -rf "$T/m" "$T/f.onnx" "$T/f.onnx.data"

# 2. more than 4096 output channels
$BW make-bn "$T/w" 1 8192 >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "cannot make the wide model"; }
limited 0 "$OPMIG" migrate "$T/w/model.onnx" --target tensorrt --no-validate -o "$T/g.onnx"
$BW bn "$T/w/model.onnx" "$T/g.onnx" >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "8192 channels"; }
rm -rf "$T/w" "$T/g.onnx" "$T/g.onnx.data"

# 3. validated: the interpreter reads the folded weights; three Convs
#    share one weight, each BatchNormalization folds it its own way (the
#    three computed weights have one source: dedup-constants must not
#    merge them)
$BW make-bn "$T/s" 3 512 shared >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "cannot make the small model"; }
run 0 "$OPMIG" migrate "$T/s/model.onnx" --target tensorrt --threads 1 -o "$T/v.onnx"
grep -q "^validation (fp32, .*): equivalent$" "$T/out" || { cat "$T/out"; fail "not validated equivalent"; }
$BW bn "$T/s/model.onnx" "$T/v.onnx" >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "validated model's weights"; }
echo "ok: 512 MiB of Conv weights folded with their BatchNormalizations under ulimit -v $LIMIT_KB KiB, values equal numpy's"
