#!/bin/sh
# t1241-dq-conv-float.sh: a Conv of DequantizeLinear inputs whose float32
# result is not quantized again (a static QDQ model's Conv before an
# InstanceNormalization) as one unit on oneDNN's exact integer
# convolution (runtime/qdq.c, k_qlinear.c, k_conv_dnnl_int.c), on seeded
# random 1-D, 2-D and 3-D cases: bit for bit numpy's float32 of the
# exact sum plus bias times x_scale * w_scale; the default run, --exact's
# written graph, OPMIG_NO_DNNL=1 and onnxruntime-node within the float32
# rounding bound of the exact value; no unit for the near misses
# (tests/ort/dq_conv_float.py).
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"
timeout 300 $PY "$TOP/tests/ort/dq_conv_float.py" "$OPMIG" "$T/dc" >"$T/dc.out" 2>&1
rc=$?
cat "$T/dc.out"
[ $rc -eq 0 ] || fail "DequantizeLinear Conv unit wrong (above)"
grep -q "^40 cases, 0 failures$" "$T/dc.out" || fail "dq_conv_float.py printed no summary"
echo "ok: DequantizeLinear Conv units of float32 result"
