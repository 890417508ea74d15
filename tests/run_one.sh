#!/bin/sh
# run_one.sh TEST: one CLI test for run.sh; prints "ok"/"FAIL" with its
# time (a failure with the last lines of its output) as one block, under a
# lock so that tests ending together do not interleave, and appends a
# failure's name to $R/failed.
t=$1
out=$(mktemp)
t0=$(date +%s)
if sh "$t" >"$out" 2>&1; then
	msg="ok   $t ($(($(date +%s) - t0)) s)"
	: >"$out"
else
	msg="FAIL $t ($(($(date +%s) - t0)) s)"
	tail -40 "$out" | sed 's/^/     | /' >"$out.tail"
	mv "$out.tail" "$out"
	flock "$R/lock" sh -c 'echo "$1" >>"$R/failed"' sh "$t"
fi
flock "$R/lock" sh -c 'echo "$1"; cat "$2"' sh "$msg" "$out"
rm -f "$out"
exit 0
