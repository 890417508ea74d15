#!/bin/sh
# t1226-conv-int-cast.sh: ConvInteger and its Cast to float32 as one unit
# writing float32 of the sums (runtime/qdq.c, k_qlinear.c, k_conv_dnnl.c),
# and the Mul by a scalar scale after it with its epilogue chain (bias
# Add, Relu), on seeded random cases (weights' zero points corrected or
# not, groups, batch 2): bit for bit numpy's float32 of the exact sums,
# --exact's nodes one by one, and onnxruntime-node where it has the
# kernel; no unit where the int32 result is a graph output or the Cast is
# to double (tests/ort/conv_int_cast.py).
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"
timeout 300 $PY "$TOP/tests/ort/conv_int_cast.py" "$OPMIG" "$T/ci" >"$T/ci.out" 2>&1
rc=$?
cat "$T/ci.out"
[ $rc -eq 0 ] || fail "ConvInteger + Cast unit wrong (above)"
grep -q "^44 cases, 0 failures$" "$T/ci.out" || fail "conv_int_cast.py printed no summary"
echo "ok: ConvInteger + Cast units"
