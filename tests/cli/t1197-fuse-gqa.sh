#!/bin/sh
# t1197-fuse-gqa.sh: the fusion fuse-gqa of opmig migrate
# (tests/ort/fuse_gqa_ort.py): the tiny decomposed decoder migrated to qnn
# (which declares com.microsoft GroupQueryAttention) at several batch,
# sequence and past settings holds one GroupQueryAttention per layer and
# equals the original in onnxruntime-node (logits and present key/value,
# an unpadded and a right-padded prompt, a decode step and a sequence
# after a past; at --opset 23 too; with symbolic dims one model for all
# of them; with 4 and with 1 kv heads), its rotations fused into
# RotaryEmbedding on the 3-D projections (no Transpose left); a causal
# mask made strict, a soft mask and a batch of 2 with a sequence after a
# past stay decomposed with a note saying why.  float16 too: the decoder
# as torch exports a half model, and the float32 one through the fp16
# pass (to qnn with MatMul taken in float16), fused on float16 data and
# equal to the unfused float16 model within float16's precision; a
# float16 mask with -1 as its masked value stays decomposed.  The qwen
# preset (biases on q, k and v) fuses too, its bias Adds kept, equal to
# the original (prompt, decode, right-padded; static and symbolic dims;
# its float16 export).  Then
# the text report lists each fusion and the right-padding assumption.
# Skipped when onnxruntime-node or python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
timeout 120 "$PY" "$TOP/tests/ort/fuse_gqa_ort.py" "$OPMIG" "$T/work" >"$T/fuse.out" 2>&1
rc=$?
cat "$T/fuse.out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "the fusion differs from what is expected (above)"
grep -q "^0 failures$" "$T/fuse.out" || fail "fuse_gqa_ort.py printed no summary"

# the text report names every fused layer, and what the fusion assumes
# (exit 1: the float MatMuls stay blocked on qnn, written by --force)
RUN_LIMIT=60 run 1 "$OPMIG" migrate "$T/work/tiny.onnx" --target qnn --force \
	--dim batch_size=1 --dim sequence_length=1 --dim past_sequence_length=4 \
	--dim total_sequence_length=5 -o "$T/dec.onnx"
for l in 0 1; do
	grep -q "^  fuse-gqa: node '/model/layers.$l/self_attn/Reshape_3' (Reshape) -> [0-9]* nodes" \
		"$T/out" || { cat "$T/out"; fail "the report lists no fuse-gqa of layer $l"; }
done
grep -q "^note: fuse-gqa: GroupQueryAttention reads attention_mask as right padding" "$T/out" ||
	{ cat "$T/out"; fail "the report states no right-padding assumption"; }
grep -q "validation (fp32.*): equivalent" "$T/out" || { cat "$T/out"; fail "no equivalent validation"; }
echo "ok: decoder attention fused into GroupQueryAttention on qnn, equal in onnxruntime"
