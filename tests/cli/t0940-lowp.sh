#!/bin/sh
# t0940-lowp.sh: float16 and bfloat16 computed in float32, one rounding at
# each op's output (runtime/lowp.c), against the double path (run
# --exact) and onnxruntime-node: tests/ort/lowp_ort.py, per op.  Then
# --exact in the usage text.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"

timeout 300 $PY "$TOP/tests/ort/lowp_ort.py" "$OPMIG" "$T/lowp" >"$T/lowp.out" 2>&1
rc=$?
cat "$T/lowp.out"
[ $rc -eq 0 ] || fail "float16/bfloat16 results out of bounds (above)"
grep -q "^0 failures$" "$T/lowp.out" || fail "lowp_ort.py printed no summary"
grep -q "^ok Conv float16 .*float32 vs double" "$T/lowp.out" || fail "no Conv float16 case ran"

run 0 "$OPMIG" run --help
grep -q -- "--exact" "$T/out" || fail "run --help does not name --exact"
echo "ok: float16 and bfloat16 in float32, within one rounding of the double path"
