# lib.sh: helpers for CLI tests (sourced).  Each test runs in a fresh
# temporary folder $T, removed on exit; `fail MSG` ends the test.
set -u
: "${OPMIG:?}" "${TOP:?}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
PY=/usr/bin/python3
fail() { echo "FAIL: $*" >&2; exit 1; }
# run EXPECTED_RC CMD...: run with a limit of $RUN_LIMIT seconds (60
# unless the test sets it), keep stdout/stderr in $T/out and $T/err, fail
# unless the exit code is EXPECTED_RC.
run() {
	want=$1; shift
	timeout "${RUN_LIMIT:-60}" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" -eq "$want" ] || { cat "$T/err" >&2; fail "'$*' exited $rc, want $want"; }
}
# limited EXPECTED_RC CMD...: run as run() does, under an address-space
# limit of $LIMIT_KB KiB (the test sets it; "unlimited" under
# AddressSanitizer, whose shadow reserves terabytes)
limited() {
	want=$1; shift
	(ulimit -v "$LIMIT_KB" && exec timeout "${RUN_LIMIT:-60}" "$@") >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" -eq "$want" ] || { cat "$T/out" "$T/err" >&2; fail "'$*' under ulimit -v $LIMIT_KB exited $rc, want $want"; }
}
