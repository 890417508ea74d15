#!/bin/sh
# t1237-fp16-skip-rms.sh: migrate --precision fp16 runs a com.microsoft
# SkipSimplifiedLayerNormalization the target keeps in float16 (float32
# statistics inside onnxruntime's kernel), checked against onnxruntime-node
# with inputs whose float16 squares overflow (tests/ort/fp16_skip_rms_ort.py,
# whose docstring says what is checked).  Skipped when onnxruntime-node or
# python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
timeout 120 "$PY" "$TOP/tests/ort/fp16_skip_rms_ort.py" "$OPMIG" "$T/work" >"$T/skip.out" 2>&1
rc=$?
cat "$T/skip.out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "a float16 SkipSimplifiedLayerNormalization is wrong (above)"
grep -q "^0 failures$" "$T/skip.out" || fail "fp16_skip_rms_ort.py printed no summary"
echo "ok: SkipSimplifiedLayerNormalization kept by the target runs in float16"
