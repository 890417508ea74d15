#!/bin/sh
# t1221-fuse-gqa-causal.sh: the fusion fuse-gqa of opmig migrate on decoders
# without attention_mask (a causal mask from Range over shapes, torch's
# scaled_dot_product_attention is_causal Trilu) fused, seqlens_k and
# total_sequence_length from shapes (tests/ort/fuse_gqa_forms_ort.py causal,
# whose docstring says what is checked): one GroupQueryAttention per layer,
# equal to the original in onnxruntime-node at several batch, sequence and
# past settings. Skipped when onnxruntime-node or python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
timeout 120 "$PY" "$TOP/tests/ort/fuse_gqa_forms_ort.py" causal "$OPMIG" "$T/work" >"$T/forms.out" 2>&1
rc=$?
cat "$T/forms.out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "the fusion differs from what is expected (above)"
grep -q "^0 failures$" "$T/forms.out" || fail "fuse_gqa_forms_ort.py printed no summary"
echo "ok: fuse-gqa causal forms fused into GroupQueryAttention, equal in onnxruntime"
