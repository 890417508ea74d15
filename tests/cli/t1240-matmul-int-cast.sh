#!/bin/sh
# t1240-matmul-int-cast.sh: MatMulInteger and its Cast to float32 as one
# unit writing float32 of the sums (runtime/qdq.c, k_qlinear.c), with the
# Mul by the scale after it and its epilogue chain (bias Add, Relu), on
# seeded random cases (B constant with its zero points corrected or not,
# B an input, A of rank 2 and 3): bit for bit numpy's float32 of the
# exact sums, --exact's nodes one by one, and onnxruntime-node; no unit
# where the int32 result is a graph output or the Cast is to double
# (tests/ort/matmul_int_cast.py).
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"
timeout 300 $PY "$TOP/tests/ort/matmul_int_cast.py" "$OPMIG" "$T/mi" >"$T/mi.out" 2>&1
rc=$?
cat "$T/mi.out"
[ $rc -eq 0 ] || fail "MatMulInteger + Cast unit wrong (above)"
grep -q "^24 cases, 0 failures$" "$T/mi.out" || fail "matmul_int_cast.py printed no summary"
echo "ok: MatMulInteger + Cast units"
