#!/bin/sh
# t1255-shared-weights.sh: weights derived from an initializer (LSTM packs,
# oneDNN's LSTM and MatMul weights, a MatMul's packed B, float16
# constants widened) made once for every node that reads it: an unrolled
# decoder of two weight sets, one step mixing them, against
# onnxruntime-node at one and two threads, and the sharing counted by
# --stats (tests/ort/shared_weights_ort.py).
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"

timeout 300 $PY "$TOP/tests/ort/shared_weights_ort.py" "$OPMIG" "$T/w" >"$T/w.out" 2>&1
rc=$?
cat "$T/w.out"
if [ $rc -eq 77 ]; then
	exit 0
fi
[ $rc -eq 0 ] || fail "nodes sharing derived weights differ from onnxruntime (above)"
grep -q "^0 failures$" "$T/w.out" || fail "shared_weights_ort.py printed no summary"
[ "$(grep -c '^ok: ' "$T/w.out")" -eq 16 ] || fail "not every case was checked"
echo "ok: nodes sharing derived weights agree with onnxruntime"
