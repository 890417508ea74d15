#!/bin/sh
# t0302: whole passes over external weights (the fp16 range check, saving)
# read past the page cache where the file system allows it (O_DIRECT), in
# whole blocks around each tensor; tensors at unaligned offsets, over one
# or two read pieces, come out exactly (tests/verify/direct_read.py), in a
# folder on the temporary file system and, where /dev/shm exists (tmpfs:
# direct reads may be refused there, and the reads go on as usual), there.
# Skipped when python-onnx is absent.
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }

$PY "$TOP/tests/verify/direct_read.py" "$OPMIG" "$T/disk" >"$T/py" 2>&1 ||
	{ cat "$T/py" >&2; fail "weights read past the page cache differ"; }
cat "$T/py"
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	S=$(mktemp -d /dev/shm/opmig-t0302.XXXXXX) || fail "cannot make a folder in /dev/shm"
	$PY "$TOP/tests/verify/direct_read.py" "$OPMIG" "$S" >"$T/py" 2>&1
	rc=$?
	rm -rf "$S"
	[ "$rc" -eq 0 ] || { cat "$T/py" >&2; fail "weights read from /dev/shm differ"; }
fi
echo "ok: weights read past the page cache at unaligned offsets"
