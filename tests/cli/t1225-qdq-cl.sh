#!/bin/sh
# t1225-qdq-cl.sh: static QDQ units keeping their 8-bit results channels
# last between them (QLinearConv units, MaxPool, Concat, Add and Sigmoid
# units, DequantizeLinear/QuantizeLinear around MaxPool and Resize) on
# seeded random chains with intermediate outputs, batch 2 and channel
# counts no multiple of 16: bit for bit the same units on plain tensors
# (OPMIG_NO_CL=1) and numpy's units where numpy computes them, within
# two steps of onnxruntime-node (tests/ort/qdq_cl.py).
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"
timeout 300 $PY "$TOP/tests/ort/qdq_cl.py" "$OPMIG" "$T/qcl" >"$T/qcl.out" 2>&1
rc=$?
cat "$T/qcl.out"
[ $rc -eq 0 ] || fail "channels-last QDQ units wrong (above)"
grep -q "^100 cases, 0 failures$" "$T/qcl.out" || fail "qdq_cl.py printed no summary"
echo "ok: channels-last QDQ units"
