#!/bin/sh
# run.sh: the whole test suite.  Runs the CUnit runner ($RUNNER), then every
# CLI test tests/cli/t*.sh against $OPMIG; exits non-zero if anything failed.
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
n=0; nf=0
for t in tests/cli/t*.sh; do
	n=$((n + 1))
	out=$(mktemp)
	t0=$(date +%s)
	if sh "$t" >"$out" 2>&1; then
		echo "ok   $t ($(($(date +%s) - t0)) s)"
	else
		nf=$((nf + 1)); fail=1
		echo "FAIL $t ($(($(date +%s) - t0)) s)"; sed 's/^/     | /' "$out" | tail -40
	fi
	rm -f "$out"
done
echo "== cli tests: $n run, $nf failed"
exit $fail
