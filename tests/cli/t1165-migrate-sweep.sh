#!/bin/sh
# t1165-migrate-sweep.sh: every node case of the ONNX backend suite
# migrated to every shipped target (tests/sweep/run.sh): no written model
# may be invalid (onnx.checker, onnxruntime) or compute other values than
# the case's expected outputs, and the per-target counts of migrated-and-
# equal cases may not fall below tests/sweep/counts.txt.  Under the
# sanitizer build every 8th case only (the counts are not compared then).
# Skipped when the test data or onnxruntime-node is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
case $OPMIG in
*/asan/*) export SWEEP_SAMPLE=8 ;;
esac
sh "$TOP/tests/sweep/run.sh" "$T/sweep" >"$T/log" 2>&1
rc=$?
grep -v '^\[' "$T/log" | grep -v 'onnxruntime' | tail -40
[ $rc -eq 0 ] || fail "the migrate sweep failed"
