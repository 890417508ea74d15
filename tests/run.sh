#!/bin/sh
# run.sh: the whole test suite.  Runs the CUnit runner ($RUNNER), then every
# CLI test tests/cli/t*.sh against $OPMIG; exits non-zero if anything failed.
# The CLI tests are independent (each in its own temporary folder), so they
# run TEST_JOBS at a time (default: the number of CPUs, at most 4; most are
# one process at a time, and a few hold gigabytes); each test's lines print
# when it ends, the failures again at the end.
cd "$(dirname "$0")/.." || exit 4
: "${OPMIG:?set OPMIG to the opmig binary}" "${RUNNER:?set RUNNER}"
export OPMIG RUNNER
export TOP="$(pwd)"
fail=0
echo "== unit tests"
"$RUNNER" || fail=1
if [ -n "$CONFORMANCE" ]; then
	echo "== conformance (interpreter vs the ONNX backend test data)"
	"$CONFORMANCE" || fail=1
fi
jobs=${TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$jobs" -gt 4 ] && [ -z "${TEST_JOBS:-}" ] && jobs=4
R=$(mktemp -d)
trap 'rm -rf "$R"' EXIT
export R
echo "== cli tests ($jobs at a time)"
ls tests/cli/t*.sh | xargs -P "$jobs" -n 1 sh tests/run_one.sh
n=$(ls tests/cli/t*.sh | wc -l)
nf=$(cat "$R"/failed 2>/dev/null | wc -l)
[ "$nf" -eq 0 ] || { fail=1; echo "== failed:"; sed 's/^/   /' "$R/failed"; }
echo "== cli tests: $n run, $nf failed"
exit $fail
