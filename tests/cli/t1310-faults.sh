#!/bin/sh
# t1310: write failures.  With a file size limit (ulimit -f) smaller than
# what they write, convert (also with external data), migrate -o and
# scan -o fail with exit 4 and one clear line on stderr, leave an existing
# output untouched (an absent one absent) and remove their temporaries;
# a full stdout (/dev/full) is exit 4 too.  Allocation failures are
# injected by the unit suite "fault" (tests/unit/suite_fault.c).
. "$TOP/tests/cli/lib.sh"
cd "$TOP" || fail "cannot cd to $TOP"
SAMPLE=testdata/sample.onnx
[ -f "$SAMPLE" ] || fail "testdata missing"

# limited EXPECTED_RC CMD...: run CMD with files limited to 2 KiB (4
# blocks of 512 bytes in dash, 4 KiB in bash: both below what is written)
limited() {
	want=$1; shift
	( ulimit -f 4 && exec timeout 60 "$@" ) >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" -eq "$want" ] || { cat "$T/err" >&2; fail "'$*' under ulimit -f exited $rc, want $want"; }
}
# clean DIR WHAT: DIR holds only the files listed after WHAT
clean() {
	dir=$1; what=$2; shift 2
	got=$(cd "$dir" && ls -A | sort | tr '\n' ' ')
	want=$(printf '%s\n' "$@" | sed '/^$/d' | sort | tr '\n' ' ')
	[ "$got" = "$want" ] || fail "$what: left '$got' in $dir, want '$want'"
}
# said WHAT PATTERN: exactly one stderr line, matching PATTERN
said() {
	[ "$(wc -l <"$T/err")" -eq 1 ] || { cat "$T/err" >&2; fail "$1: want one stderr line"; }
	grep -q "$2" "$T/err" || { cat "$T/err" >&2; fail "$1: message lacks '$2'"; }
}

mkdir "$T/w" || fail "mkdir"
echo "old bytes" >"$T/w/out.onnx"

# 1. convert over an existing file: untouched, no temporary left
limited 4 "$OPMIG" convert "$SAMPLE" "$T/w/out.onnx"
said "convert" "out.onnx.*file too large"
[ "$(cat "$T/w/out.onnx")" = "old bytes" ] || fail "convert changed its output"
clean "$T/w" "convert" out.onnx

# 2. convert to a new file with external data: neither file appears
limited 4 "$OPMIG" convert "$SAMPLE" "$T/w/new.onnx" --external-data new.data --size-threshold 64
said "convert --external-data" "file too large"
clean "$T/w" "convert --external-data" out.onnx

# 3. migrate -o: the existing output stays, nothing else appears
limited 4 "$OPMIG" migrate "$SAMPLE" --batch 1 -o "$T/w/out.onnx"
said "migrate -o" "out.onnx.*file too large"
[ "$(cat "$T/w/out.onnx")" = "old bytes" ] || fail "migrate changed its output"
clean "$T/w" "migrate -o" out.onnx

# 4. migrate -o to a new file: it does not appear
limited 4 "$OPMIG" migrate "$SAMPLE" --batch 1 -o "$T/w/m.onnx" --format json
clean "$T/w" "migrate -o new" out.onnx

# 5. scan -o: a report too big for the limit is not left half-written
limited 4 "$OPMIG" scan "$SAMPLE" --target generic-npu,tensorrt,qnn --format html -o "$T/w/r.html"
said "scan -o" "r.html.*file too large"
clean "$T/w" "scan -o" out.onnx

# 6. without the limit, all of them work (the limit was the only cause)
run 0 "$OPMIG" convert "$SAMPLE" "$T/w/out.onnx"
run 0 "$OPMIG" migrate "$SAMPLE" --batch 1 -o "$T/w/m.onnx"
clean "$T/w" "unlimited" out.onnx m.onnx

# 7. a full standard output
timeout 60 "$OPMIG" inspect "$SAMPLE" >/dev/full 2>"$T/err"
rc=$?
[ "$rc" -eq 4 ] || fail "inspect >/dev/full exited $rc, want 4"
said "inspect >/dev/full" "cannot write to standard output"
exit 0
