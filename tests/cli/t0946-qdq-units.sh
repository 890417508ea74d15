#!/bin/sh
# t0946-qdq-units.sh: static QDQ units (DequantizeLinear -> Conv/MatMul ->
# QuantizeLinear run as one QLinearConv/QLinearMatMul, runtime/qdq.c) on
# seeded random cases: bit for bit the unit's requantization, within one
# step of the written graph (default and --exact), fused only where the
# unit is exact to form (narrow and depthwise windows only on oneDNN's
# exact integer primitives), and within one step of onnxruntime-node with its
# own fusions; Concat and elementwise units through tables of codes bit
# for bit the written graph (tests/ort/qdq_units.py).
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"
timeout 300 $PY "$TOP/tests/ort/qdq_units.py" "$OPMIG" "$T/qdq" >"$T/qdq.out" 2>&1
rc=$?
cat "$T/qdq.out"
[ $rc -eq 0 ] || fail "QDQ units wrong (above)"
grep -q "^127 cases, 0 failures$" "$T/qdq.out" || fail "qdq_units.py printed no summary"
echo "ok: QDQ units"
