#!/bin/sh
# t0010-man.sh: the manual pages agree with the binary.  Every man/*.1
# renders without groff warnings and names the version `opmig --version`
# prints; each command page's SYNOPSIS is the first line of `opmig CMD --help`
# less "usage: "; `opmig help CMD` prints what `opmig CMD --help` prints; and
# every `$ ` line in a page's EXAMPLES runs, from a folder where testdata/ is
# reachable, and exits 0.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"

case $OPMIG in /*) ;; *) OPMIG=$(pwd)/$OPMIG ;; esac
[ -x "$OPMIG" ] || fail "OPMIG '$OPMIG' is not an executable"
command -v groff >/dev/null 2>&1 || fail "groff not found (make deps installs groff-base)"

# render PAGE OUT: the page as plain text in OUT, without overstriking, wide
# enough that no line is broken.
render() {
	groff -man -Tascii -P-c -P-b -P-u -rLL=250n "$1" >"$T/raw" 2>"$T/groff.err" ||
		fail "$1: groff failed: $(cat "$T/groff.err")"
	tr -d '\010' <"$T/raw" >"$2"
}
# section NAME: the body of section NAME of a rendered page (stdin); the
# section ends at the next line that starts in the first column.
section() {
	awk -v s="$1" '$0 == s { on = 1; next } on && /^[^ \t]/ { exit } on { print }'
}
# squash: whitespace runs to one space, none at either end.
squash() {
	tr '\t\n' '  ' | tr -s ' ' | sed 's/^ //; s/ $//'
}

for p in opmig opmig-inspect opmig-convert; do
	[ -f "$TOP/man/$p.1" ] || fail "man/$p.1 is missing"
done
# Section 5 pages (file formats) render without warnings too.
for f in "$TOP"/man/*.5; do
	[ -f "$f" ] || continue
	w=$(groff -man -ww -z "$f" 2>&1)
	[ -z "$w" ] || fail "$(basename "$f"): groff warns: $w"
done
# Every command `opmig help` lists has its page.
"$OPMIG" help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }' >"$T/cmds"
[ -s "$T/cmds" ] || fail "opmig help lists no commands"
while read -r c; do
	[ "$c" = help ] || [ -f "$TOP/man/opmig-$c.1" ] || fail "command '$c' has no man/opmig-$c.1"
done <"$T/cmds"

run 0 "$OPMIG" --version
version=$(cat "$T/out")
[ "$version" = "opmig 0.1.0" ] || fail "opmig --version printed '$version', want 'opmig 0.1.0'"

render "$TOP/man/opmig.1" "$T/overview.txt"

# The binary the examples run: `opmig` on PATH is $OPMIG.
mkdir "$T/bin" || fail "mkdir $T/bin"
ln -s "$OPMIG" "$T/bin/opmig" || fail "cannot link $T/bin/opmig"

for f in "$TOP"/man/*.1; do
	page=$(basename "$f" .1)

	# 1. No warnings, and the header names the page and the version.
	w=$(groff -man -ww -z "$f" 2>&1)
	[ -z "$w" ] || fail "man/$page.1: groff warns: $w"
	th=$(sed -n 's/^\.TH //p' "$f" | head -1)
	[ -n "$th" ] || fail "man/$page.1: no .TH line"
	upper=$(printf '%s\n' "$page" | tr 'a-z-' 'A-Z-')
	name=$(printf '%s\n' "$th" | awk '{ print $1 }' | sed 's/\\-/-/g')
	[ "$name" = "$upper" ] || fail "man/$page.1: .TH names '$name', want '$upper'"
	case $th in
	*"\"$version\""*) ;;
	*) fail "man/$page.1: .TH '$th' does not name \"$version\"" ;;
	esac
	render "$f" "$T/page.txt"
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" ENVIRONMENT FILES EXAMPLES "SEE ALSO"; do
		grep -qx "$s" "$T/page.txt" || fail "man/$page.1: no $s section"
	done

	# 2. A command page: SYNOPSIS == usage line; help CMD == CMD --help.
	case $page in
	opmig-*)
		cmd=${page#opmig-}
		grep -q "opmig-$cmd(1)" "$T/overview.txt" ||
			fail "man/opmig.1 does not refer to opmig-$cmd(1)"
		syn=$(section SYNOPSIS <"$T/page.txt" | squash)
		run 0 "$OPMIG" "$cmd" --help
		cp "$T/out" "$T/help.cmd"
		first=$(head -1 "$T/help.cmd")
		case $first in
		"usage: "*) ;;
		*) fail "'opmig $cmd --help' starts with '$first', not 'usage: '" ;;
		esac
		usage=$(printf '%s\n' "${first#usage: }" | squash)
		[ "$syn" = "$usage" ] || fail "man/$page.1: SYNOPSIS differs from 'opmig $cmd --help'
  man:  $syn
  help: $usage"
		run 0 "$OPMIG" help "$cmd"
		cmp -s "$T/out" "$T/help.cmd" ||
			fail "'opmig help $cmd' and 'opmig $cmd --help' print different text"
		;;
	esac

	# 3. The examples run, in order, in a fresh folder of their own.
	section EXAMPLES <"$T/page.txt" | sed -n 's/^[ \t]*\$ //p' >"$T/examples"
	[ -s "$T/examples" ] || fail "man/$page.1: EXAMPLES has no '\$ ' command"
	ex="$T/ex-$page"
	mkdir "$ex" || fail "cannot make $ex"
	ln -s "$TOP/testdata" "$ex/testdata" || fail "cannot link $ex/testdata"
	n=0
	while IFS= read -r line; do
		n=$((n + 1))
		(cd "$ex" && PATH="$T/bin:$PATH" timeout 60 sh -c "$line") \
			</dev/null >"$T/ex.out" 2>"$T/ex.err"
		rc=$?
		[ "$rc" -eq 0 ] || {
			cat "$T/ex.err" >&2
			fail "man/$page.1: example '$line' exited $rc, want 0"
		}
	done <"$T/examples"
	echo "ok man/$page.1 ($n examples)"
done
exit 0
