#!/bin/sh
# t1213-rnn-kernels.sh: the interpreter's LSTM, GRU and RNN kernels at the
# sizes where their fast paths run (hidden 128-300, batch 1 and several,
# the default cells in AVX-512, the recurrent product split over two
# threads or packed for pgemm; from the second run, oneDNN's) and beside
# them the other paths, at one and two threads, against onnxruntime-node
# (tests/ort/rnn_kernels_ort.py).
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"

timeout 300 $PY "$TOP/tests/ort/rnn_kernels_ort.py" "$OPMIG" "$T/r" >"$T/r.out" 2>&1
rc=$?
cat "$T/r.out"
if [ $rc -eq 77 ]; then
	exit 0
fi
[ $rc -eq 0 ] || fail "recurrent kernels differ from onnxruntime (above)"
grep -q "^0 failures$" "$T/r.out" || fail "rnn_kernels_ort.py printed no summary"
[ "$(grep -c '^ok: ' "$T/r.out")" -eq 30 ] || fail "not every case was checked"
echo "ok: recurrent kernels agree with onnxruntime at one and two threads"
