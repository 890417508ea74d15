#!/bin/sh
# t1170-rnn-unroll.sh: the lstm, gru and rnn decompositions against
# onnxruntime.  tests/ort/rnn_unroll.py migrates 150 seeded random
# LSTM/GRU/RNN models (and the backend test data's recurrent node cases)
# for test targets without the recurrent ops (tests/fixtures/rnn-npu*.json),
# checks them with onnx.checker and runs the original and the migrated
# model in one onnxruntime process; they must agree.  Skipped when
# onnxruntime-node or python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
$PY "$TOP/tests/ort/rnn_unroll.py" "$OPMIG" "$T/work" 150 >"$T/log" 2>&1
rc=$?
cat "$T/log"
case $rc in
0) ;;
77) exit 0 ;;
*) fail "onnxruntime cross-check of the unrolled recurrent ops failed" ;;
esac
grep -q "150/150 random models agree" "$T/log" || fail "not every random model was checked"
