#!/bin/sh
# t0942-int-ops.sh: ConvInteger, MatMulInteger and QLinearConv bit-exact
# against a numpy int64 reference on seeded random shapes, on both of the
# interpreter's paths (float32 cores when the sums stay below 2^24,
# double otherwise): tests/ort/int_ops_ref.py.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"
timeout 300 $PY "$TOP/tests/ort/int_ops_ref.py" "$OPMIG" "$T/int" >"$T/int.out" 2>&1
rc=$?
cat "$T/int.out"
[ $rc -eq 0 ] || fail "integer ops differ from the int64 reference (above)"
grep -q "^74 cases, 0 failures$" "$T/int.out" || fail "int_ops_ref.py printed no summary"
echo "ok: integer convolutions and products bit-exact"
