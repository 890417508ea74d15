#!/bin/sh
# t0317: int64 initializers larger than the memory opmig is given narrowed
# to int32 (narrow-int64, for a target without int64).  A Gather by 64 Mi
# int64 indices (512 MiB of external data in a sparse file: seeded
# int32-range values at 64 places, zeros elsewhere) is migrated under an
# address-space limit of half its size: the indices' range is read once
# in pieces, neither mapped nor held (mapping it needed ~360 MB of address
# space for 256 MiB of indices, and under a smaller limit the indices
# stayed int64 "of unknown values" without an error), and the int32 copy
# is made while it is written into OUT.data.  The int32 indices equal the
# int64 ones.  With one index beyond int32 (the last), nothing is
# narrowed.  Skipped when python-onnx is absent.
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$TOP" || fail "cannot cd to $TOP"
LIMIT_KB=262144      # half the 512 MiB of indices
RUN_LIMIT=120
# AddressSanitizer reserves terabytes of address space for its shadow:
# under it the limit does not apply (the values still do)
case $OPMIG in */asan/*) LIMIT_KB=unlimited ;; esac
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MALLOC_ARENA_MAX=2
BW="$PY tests/verify/big_weights.py"
N=$((64 * 1024 * 1024))

# 1. every index fits int32: narrowed
$BW make-i64 "$T/m" $N >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "cannot make the model"; }
limited 0 "$OPMIG" migrate "$T/m/model.onnx" --target generic-npu --no-validate -o "$T/n.onnx"
grep -q "^  narrow-int64: 1 change$" "$T/out" || { cat "$T/out"; fail "the indices were not narrowed"; }
$BW i64 "$T/m/model.onnx" "$T/n.onnx" >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "narrowed indices"; }
cat "$T/py"
rm -rf "$T/m" "$T/n.onnx" "$T/n.onnx.data"

# 2. the last index is 2^33: read to the end, kept int64
$BW make-i64 "$T/w" $N wide >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "cannot make the wide model"; }
limited 0 "$OPMIG" migrate "$T/w/model.onnx" --target generic-npu --no-validate -o "$T/k.onnx"
grep -q "^note: tensor 'c' stays int64: its values reach 8589934592, beyond int32$" "$T/out" ||
	{ cat "$T/out"; fail "the wide indices were not kept for their values"; }
echo "ok: 512 MiB of int64 indices narrowed to int32 under ulimit -v $LIMIT_KB KiB, values kept"
