#!/bin/sh
# t1253-pool-s2-props.sh: float32 max pools of column stride 2 (2x2, 3x3,
# 2x3, 3x2; pads, ceil_mode, odd planes, channel counts around 16 and 64)
# stored plain and channels last (k_pool_s2.c, k_pool_nhwc.c) each
# window's max, NaN kept, at one thread and two, against numpy
# (tests/ort/pool_s2_props.py).
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"
timeout 300 $PY "$TOP/tests/ort/pool_s2_props.py" "$OPMIG" "$T/ps" >"$T/ps.out" 2>&1
rc=$?
cat "$T/ps.out"
[ $rc -eq 77 ] && exit 0
[ $rc -eq 0 ] || fail "a stride-2 max pool differs (above)"
grep -q "^0 failures$" "$T/ps.out" || fail "pool_s2_props.py printed no summary"
[ "$(grep -c '^ok: MaxPool .* thread(s): each window' "$T/ps.out")" -eq 96 ] ||
	fail "not every case ran in both layouts at one thread and two"
[ "$(grep -c '^ok: cl, .* results stored channels last' "$T/ps.out")" -eq 2 ] ||
	fail "the channels-last cases did not store their results channels last"
echo "ok: stride-2 max pools in both layouts each window's max"
