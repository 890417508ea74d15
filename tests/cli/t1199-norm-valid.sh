#!/bin/sh
# t1199-norm-valid.sh: every decoder opmig migrate writes is valid for
# its opset (issue 25; tests/ort/norm_valid_ort.py): the tiny decoder
# (decomposed and onnxruntime-genai's form, each float32 and float16; the
# qwen preset's, with q/k/v biases, in both forms in float32) migrated at
# opset 17 to every target in oprules/ passes onnx.checker full_check and
# holds no default-domain SimplifiedLayerNormalization, and at opset 23 to
# qnn (RMSNormalization-23); each equals the original in
# onnxruntime-node, and the norms after a residual Add stay fused into
# com.microsoft SkipSimplifiedLayerNormalization on a qnn that declares it.
# Skipped when onnxruntime-node or python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
timeout 120 "$PY" "$TOP/tests/ort/norm_valid_ort.py" "$OPMIG" "$T/work" >"$T/norm.out" 2>&1
rc=$?
cat "$T/norm.out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "a migrated decoder is invalid or differs (above)"
grep -q "^0 failures$" "$T/norm.out" || fail "norm_valid_ort.py printed no summary"
echo "ok: migrated decoders valid for their opset, equal in onnxruntime, skip norms fused"
