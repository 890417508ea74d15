#!/bin/sh
# t1231-fp16-norm-stats.sh: migrate --precision fp16 keeps the statistics
# of normalizations in float32 (issue 25; tests/ort/fp16_stats_ort.py,
# whose docstring says what is checked): the tiny float32 decoders (genai
# and decomposed) with their embeddings scaled by 400, so that a float16
# square of a hidden state would overflow, and unscaled, a decomposed
# LayerNorm and a LayerNormalization-17 with inputs up to 3000, migrated
# to qnn, tensorrt and generic-npu (an RMSNormalization-23 to qnn and
# tensorrt; a LayerNormalization with stash_type 16 stays float32, the
# report says why): finite outputs within float16's
# tolerance of the float32 original in onnxruntime-node and in opmig run
# --exact (float16 rounded at each op), onnx.checker full_check, and the
# report's notes.  Skipped when onnxruntime-node or python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
timeout 120 "$PY" "$TOP/tests/ort/fp16_stats_ort.py" "$OPMIG" "$T/work" >"$T/stats.out" 2>&1
rc=$?
cat "$T/stats.out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "a float16 migration lost its norms' float32 statistics (above)"
grep -q "^0 failures$" "$T/stats.out" || fail "fp16_stats_ort.py printed no summary"
echo "ok: float16 migrations keep the norms' statistics in float32"
