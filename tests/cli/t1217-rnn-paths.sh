#!/bin/sh
# t1217-rnn-paths.sh: the LSTM and GRU kernels' packed input projection
# (per run, and kept with R from a node's second run, float16 nodes
# included), their few-row recurrent products, a GRU without
# linear_before_reset, sequence_lens and initial states on the default
# cells, at one and two threads, against onnxruntime-node
# (tests/ort/rnn_paths_ort.py).
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"

timeout 300 $PY "$TOP/tests/ort/rnn_paths_ort.py" "$OPMIG" "$T/r" >"$T/r.out" 2>&1
rc=$?
cat "$T/r.out"
if [ $rc -eq 77 ]; then
	exit 0
fi
[ $rc -eq 0 ] || fail "recurrent kernels differ from onnxruntime (above)"
grep -q "^0 failures$" "$T/r.out" || fail "rnn_paths_ort.py printed no summary"
[ "$(grep -c '^ok: ' "$T/r.out")" -eq 45 ] || fail "not every case was checked"
echo "ok: recurrent kernels' paths agree with onnxruntime at one and two threads"
