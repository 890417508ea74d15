#!/bin/sh
# t0949-qconv-props.sh: QLinearConv on seeded random shapes (groups,
# strides, pads, dilations, channels not multiples of 16, per-tensor and
# per-channel scales, zero points 0/128/odd, rounding ties, saturation at
# both ends, biases near 2^24) bit for bit against onnxruntime-node and a
# numpy reference, with oneDNN requantizing where that is exact
# (k_conv_dnnl.c) and two cases made by hand where float32 sums past 2^24
# would round the wrong way (tests/ort/qconv_props.py).
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"
timeout 300 $PY "$TOP/tests/ort/qconv_props.py" "$OPMIG" "$T/qc" >"$T/qc.out" 2>&1
rc=$?
cat "$T/qc.out"
[ $rc -eq 0 ] || fail "QLinearConv properties wrong (above)"
grep -q "^42 cases, 0 failures$" "$T/qc.out" || fail "qconv_props.py printed no summary"
echo "ok: QLinearConv properties"
