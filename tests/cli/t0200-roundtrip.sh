#!/bin/sh
# t0200: `opmig convert A B` keeps the model.  Every model of the ONNX
# backend test data (node, pytorch-converted, pytorch-operator, simple), the
# shared real-architecture models and our own testdata must convert with
# exit 0, and one roundtrip_judge.py run must find every output equal to its
# input.  Models onnx.load itself cannot read are skipped with a notice.
. "$TOP/tests/cli/lib.sh"
cd "$TOP" || fail "cannot cd to $TOP"

L=$T/models
: >"$L"
D=/usr/share/libonnx-testdata/data
if [ -d "$D" ]; then
	for s in node pytorch-converted pytorch-operator simple; do
		[ -d "$D/$s" ] || { echo "notice: $D/$s absent, skipped"; continue; }
		find "$D/$s" -name '*.onnx' -type f | LC_ALL=C sort >>"$L"
	done
else
	echo "notice: $D absent (package libonnx-testdata), its models skipped"
fi
S=$TOP/../shared/models
if [ -d "$S" ]; then
	find "$S" -name '*.onnx' -type f | LC_ALL=C sort >>"$L"
else
	echo "notice: $S absent, shared models skipped"
fi
for f in testdata/models/*.onnx testdata/sample.onnx; do
	[ -f "$f" ] || fail "$f missing (run testdata/gen/make_testdata.py)"
	echo "$f" >>"$L"
done

JUDGE="$PY tests/roundtrip_judge.py"
$JUDGE --unloadable "$L" >"$T/skip" 2>"$T/skip.why" ||
	{ cat "$T/skip.why" >&2; fail "roundtrip_judge.py --unloadable failed"; }
sed 's/^/notice: onnx.load cannot read it, /' "$T/skip.why"

PAIRS=$T/pairs
CF=$T/convert-failures
: >"$PAIRS"
: >"$CF"
n=0
nskip=0
while IFS= read -r a; do
	if [ -s "$T/skip" ] && grep -Fxq -e "$a" "$T/skip"; then
		nskip=$((nskip + 1))
		continue
	fi
	n=$((n + 1))
	timeout 60 "$OPMIG" convert "$a" "$T/$n.onnx" >"$T/out" 2>"$T/err" \
		</dev/null
	rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "convert $a: exit $rc: $(head -n 1 "$T/err")" >>"$CF"
		continue
	fi
	printf '%s %s\n' "$a" "$T/$n.onnx" >>"$PAIRS"
done <"$L"
[ "$n" -gt 0 ] || fail "no models to convert"

$JUDGE --list "$PAIRS" >"$T/judge" 2>"$T/judge.err"
jrc=$?
[ "$jrc" -le 1 ] || { cat "$T/judge" "$T/judge.err" >&2; fail "judge exit $jrc"; }
grep -v '^mismatch: ' "$T/judge" >&2   # e.g. "skip:" lines, not expected
grep '^mismatch: ' "$T/judge" >"$T/mismatch"
nc=$(wc -l <"$CF")
nm=$(wc -l <"$T/mismatch")
echo "converted $n models ($nc failed), $nm differ, $nskip skipped"
if [ "$nc" -gt 0 ] || [ "$nm" -gt 0 ] || [ "$jrc" -ne 0 ]; then
	cat "$CF" "$T/mismatch" >&2
	fail "$nc convert failures, $nm round-trip mismatches"
fi
