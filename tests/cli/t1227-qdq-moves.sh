#!/bin/sh
# t1227-qdq-moves.sh: static QDQ units that move 8-bit codes (a nearest
# Resize under each coordinate transformation and nearest mode,
# Transpose, Reshape, Slice, Squeeze, Unsqueeze, Flatten between
# DequantizeLinear and QuantizeLinear) and the quantized SiLU (x *
# Sigmoid(x) as one table of x's codes), on seeded random chains, a
# Resize on codes stored channels last between QDQ Conv units: bit for
# bit the same units on plain tensors (OPMIG_NO_CL=1), the written graph
# (--exact), numpy's moves and onnxruntime-node (tests/ort/qdq_moves.py).
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"
timeout 300 $PY "$TOP/tests/ort/qdq_moves.py" "$OPMIG" "$T/qmv" >"$T/qmv.out" 2>&1
rc=$?
grep -v "W:onnxruntime" "$T/qmv.out"
[ $rc -eq 0 ] || fail "QDQ move units wrong (above)"
grep -q "^90 cases, 0 failures$" "$T/qmv.out" || fail "qdq_moves.py printed no summary"
echo "ok: QDQ move and SiLU units"
