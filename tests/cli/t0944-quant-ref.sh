#!/bin/sh
# t0944-quant-ref.sh: QuantizeLinear (per tensor, per axis; uint8, int8,
# int16, uint16) and DynamicQuantizeLinear bit-exact against a numpy
# reference of the spec on every rounding case, at one thread and at
# four: tests/ort/quant_ref.py.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"
timeout 300 $PY "$TOP/tests/ort/quant_ref.py" "$OPMIG" "$T/q" >"$T/q.out" 2>&1
rc=$?
cat "$T/q.out"
[ $rc -eq 0 ] || fail "quantization differs from the numpy reference (above)"
grep -q "^92 cases, 0 failures$" "$T/q.out" || fail "quant_ref.py printed no summary"
echo "ok: quantization bit-exact"
