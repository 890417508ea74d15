#!/bin/sh
# t1228-fuse-gqa-cache-mask.sh: the fusion fuse-gqa of opmig migrate on
# decoders with transformers' cache_position mask (make_decoder.py --mask
# cache: _prepare_4d_causal_attention_mask_with_cache_position as
# torch.onnx exports it, ScatterND of the padding included), with a past
# and without, float32 and float16 (tests/ort/fuse_gqa_forms_ort.py
# cache, whose docstring says what is checked): one GroupQueryAttention
# per layer, full_check of the fusion alone, equal to the original in
# onnxruntime-node at several batch, sequence and past settings and with
# symbolic dims; masks that are not causal left decomposed with a note.
# Skipped when onnxruntime-node or python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
timeout 120 "$PY" "$TOP/tests/ort/fuse_gqa_forms_ort.py" cache "$OPMIG" "$T/work" >"$T/forms.out" 2>&1
rc=$?
cat "$T/forms.out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "the fusion differs from what is expected (above)"
grep -q "^0 failures$" "$T/forms.out" || fail "fuse_gqa_forms_ort.py printed no summary"
echo "ok: fuse-gqa cache_position mask fused into GroupQueryAttention, equal in onnxruntime"
