#!/bin/sh
# t0100: every entry of testdata/bad/ is refused cleanly.  For each entry
# (a folder entry stands for the model.onnx inside it, if any), `opmig
# inspect`, `opmig convert` and `opmig run` must exit 3 within the time
# limit, print exactly one stderr line "opmig: PATH: message" with PATH as
# given, print nothing on stdout (convert, run), and leave no output or temp
# file behind.
. "$TOP/tests/cli/lib.sh"
cd "$TOP" || fail "cannot cd to $TOP"

LIMIT=30
O=$T/o                    # convert writes here; it must stay empty
mkdir "$O" || fail "cannot create $O"
P=$T/problems
: >"$P"
note() { echo "$*" >>"$P"; }

tree_sum() { find testdata/bad -print | LC_ALL=C sort | while IFS= read -r f; do
	if [ -L "$f" ]; then echo "link $f -> $(readlink "$f")"
	elif [ -f "$f" ]; then cksum <"$f" | sed "s|\$| $f|"
	else echo "dir $f"; fi
done; }

# refused PATH CMD ARG...: run opmig CMD ARG... and note every broken promise.
refused() {
	path=$1; shift
	what="opmig $*"
	timeout "$LIMIT" "$OPMIG" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	if [ "$rc" -eq 124 ]; then
		note "$what: no answer within $LIMIT s"
	elif [ "$rc" -ne 3 ]; then
		note "$what: exit $rc, want 3"
	fi
	nl=$(wc -l <"$T/err")
	lines=$(awk 'END { print NR }' "$T/err")
	if [ "$nl" -ne 1 ] || [ "$lines" -ne 1 ]; then
		note "$what: $lines stderr lines ($nl newlines), want exactly one:"
		sed -n '1,5s/^/    | /p' "$T/err" >>"$P"
	fi
	line=$(head -n 1 "$T/err")
	case $line in
	"opmig: $path: "?*) ;;
	*) note "$what: stderr line does not read 'opmig: $path: MESSAGE': $line" ;;
	esac
	if [ "$1" != inspect ] && [ -s "$T/out" ]; then
		note "$what: stdout not empty: $(head -c 200 "$T/out")"
	fi
	left=$(ls -A "$O")
	if [ -n "$left" ]; then
		note "$what: left behind in the output folder: $left"
		rm -rf "$O" && mkdir "$O"
	fi
}

before=$(tree_sum)
n=0
for e in testdata/bad/*; do
	[ -e "$e" ] || [ -L "$e" ] || continue
	p=$e
	if [ -d "$e" ]; then
		m=$(find "$e" -name model.onnx -type f | LC_ALL=C sort | head -n 1)
		[ -n "$m" ] && p=$m
	fi
	n=$((n + 1))
	refused "$p" inspect "$p"
	refused "$p" convert "$p" "$O/out.onnx"
	refused "$p" run "$p" -O "$O"
done
[ "$n" -ge 20 ] || fail "only $n entries in testdata/bad (regenerate testdata?)"
[ "$(tree_sum)" = "$before" ] || note "testdata/bad changed while being read"

if [ -s "$P" ]; then
	cat "$P" >&2
	fail "$(grep -c '^opmig' "$P") broken promises over $n bad inputs"
fi
echo "ok: $n bad inputs refused by inspect, convert and run"
