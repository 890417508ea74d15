#!/bin/sh
# t1196-fuse-attention.sh: the fusions fuse-attention and fuse-skip-norm of
# opmig migrate (tests/verify/fuse_attn_ort.py): scaled dot-product
# attention (hand-built variants, the tiny decomposed decoder in float32
# and float16, with static dims and with symbolic ones, the attention
# lowering's own output) fused into Attention on
# tensorrt at opset 23, residual Adds and their norms fused into
# com.microsoft SkipSimplifiedLayerNormalization / SkipLayerNormalization
# for a rules file declaring them, each equal to the original in
# onnxruntime-node and in opmig's validation; near misses and targets that
# declare no fused op left alone.  Then the text report of the decoder
# lists each fusion.  Skipped when onnxruntime-node or python-onnx is
# absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
timeout 300 "$PY" "$TOP/tests/verify/fuse_attn_ort.py" "$OPMIG" "$T/work" >"$T/fuse.out" 2>&1
rc=$?
cat "$T/fuse.out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "the fusions differ from what is expected (above)"
grep -q "^0 failures$" "$T/fuse.out" || fail "fuse_attn_ort.py printed no summary"

# the text report names every fused node, by pass
RUN_LIMIT=120 run 0 "$OPMIG" migrate "$T/work/decoder.onnx" --target trt-skip \
	--rules "$T/work/trt-skip.json" --opset 23 --dim batch_size=1 --dim sequence_length=8 \
	--dim past_sequence_length=0 --dim total_sequence_length=8 -o "$T/dec.onnx"
for l in 0 1; do
	grep -q "^  fuse-attention: node '/model/layers.$l/self_attn/MatMul_1' (MatMul) -> 1 node" \
		"$T/out" || { cat "$T/out"; fail "the report lists no fuse-attention of layer $l"; }
done
n=$(grep -c "^  fuse-skip-norm: node '.*' (RMSNormalization) -> 1 node" "$T/out")
[ "$n" -eq 4 ] || { cat "$T/out"; fail "the report lists $n fuse-skip-norm, want 4"; }
grep -q "validation (fp32.*): equivalent" "$T/out" || { cat "$T/out"; fail "no equivalent validation"; }
echo "ok: attention and skip norms fused where the target declares the fused op, equal in onnxruntime"
