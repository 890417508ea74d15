#!/bin/sh
# t1204-migrate-int4-validate-big.sh: `opmig migrate --precision int4
# --target tensorrt --opset 21` WITH its accuracy check and validation, of
# weights larger than the anonymous memory opmig is given.  The model: 32
# MatMuls of [4096, 4096] float32 (2 GiB in a sparse file,
# tests/verify/big_weights.py).  The limit is ulimit -d (RLIMIT_DATA: heap
# and private writable mappings, not the read-only mappings of the weights,
# which are page cache, as t1198's ulimit -v counts them): 1 GiB, half the
# weights.  What stays under it: the float reference and each trial of the
# accuracy check are copies of the model in memory sharing its weights
# (ir_model_clone), and the validation runs each blocked DequantizeLinear-21
# + MatMul as one unit (runtime/qdq_wo.c) instead of keeping 2 GiB of
# dequantized weights; the int4 codes stay packed two a byte (256 MiB).
# And no float copy of the weights goes to TMPDIR: files are capped at
# 768 MiB (ulimit -f), above the written models (int4: 320 MiB of codes
# and scales, int8: 576 MiB), below a copy's 2 GiB.  Before, it failed (out
# of memory, or OpenBLAS waiting for memory until the time limit).
# Skipped when python-onnx is absent, and under AddressSanitizer.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
case $OPMIG in */asan/*) echo "notice: no memory limit under AddressSanitizer, skipped"; exit 0 ;; esac
cd "$TOP" || fail "cannot cd to $TOP"
DATA_KB=1048576      # half the 2 GiB of weights
FILE_BLOCKS=1572864  # 512-byte blocks: 768 MiB

$PY tests/verify/big_weights.py make "$T/m" 32 4096 >"$T/py" 2>&1 ||
	{ cat "$T/py" >&2; fail "cannot make the model"; }
mkdir "$T/tmp" || fail "no $T/tmp"

# capped CMD...: run under the limits, TMPDIR in $T/tmp; fail unless it exits 0
capped() {
	(ulimit -d "$DATA_KB" && ulimit -f "$FILE_BLOCKS" && TMPDIR="$T/tmp" &&
		export TMPDIR && exec timeout 90 "$@") >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" -eq 0 ] || { cat "$T/out" "$T/err" >&2; fail "'$*' under ulimit -d $DATA_KB KiB exited $rc, want 0"; }
}

# 1. the accuracy check and validation
capped "$OPMIG" migrate "$T/m/model.onnx" --target tensorrt --opset 21 --precision int4 \
	-o "$T/t4.onnx"
grep -q "^note: int4: 32 MatMuls quantized weight-only (int4 weights in blocks of 32 along K, symmetric), 0 in float; cosine>=0.99 met on 8 samples$" "$T/out" ||
	{ cat "$T/out"; fail "the accuracy check did not run on 32 quantized MatMuls"; }
grep -q "^validation (int4 weight-only, cosine>=0.99, 1 sample): equivalent$" "$T/out" ||
	{ cat "$T/out"; fail "validation did not run or did not pass"; }
grep -q "^result: $T/t4.onnx written$" "$T/out" || { cat "$T/out"; fail "not written"; }
$PY tests/verify/nbits_dq_big.py check "$T/m/model.onnx" "$T/t4.onnx" 4 32 >"$T/py" 2>&1 ||
	{ cat "$T/py" >&2; fail "int4 codes"; }
rm -f "$T/t4.onnx" "$T/t4.onnx.data"
[ -z "$(ls -A "$T/tmp")" ] || { ls -la "$T/tmp"; fail "files left in TMPDIR"; }

# 2. --weight-only int8, validation without the accuracy check
capped "$OPMIG" migrate "$T/m/model.onnx" --target tensorrt --opset 21 --weight-only int8 \
	--no-accuracy-check -o "$T/t8.onnx"
grep -q "^validation (int8 weight-only, cosine>=0.99, 1 sample): equivalent$" "$T/out" ||
	{ cat "$T/out"; fail "int8 validation did not run or did not pass"; }
rm -f "$T/t8.onnx" "$T/t8.onnx.data"
echo "ok: 2 GiB of weights migrated to int4 and int8 with validation under ulimit -d $DATA_KB KiB, nothing in TMPDIR"
