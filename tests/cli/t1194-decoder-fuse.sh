#!/bin/sh
# t1194-decoder-fuse.sh: the LLM fusions of opmig migrate on torch's
# decomposed patterns (tests/ort/fuse_llm_ort.py): RMSNorm and rotate-half
# rotary variants and the tiny decomposed decoder fused into
# SimplifiedLayerNormalization and com.microsoft RotaryEmbedding (a rules
# file declaring them) and RMSNormalization and RotaryEmbedding (tensorrt at
# opset 23), equal to the originals in onnxruntime-node; near misses and
# targets that declare no fused op left alone (onnx.checker full_check).
# Skipped when onnxruntime-node or python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
timeout 300 "$PY" "$TOP/tests/ort/fuse_llm_ort.py" "$OPMIG" "$T/work" >"$T/fuse.out" 2>&1
rc=$?
cat "$T/fuse.out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "the fusions differ from what is expected (above)"
grep -q "^0 failures$" "$T/fuse.out" || fail "fuse_llm_ort.py printed no summary"
echo "ok: LLM patterns fused where the target declares the fused op, equal in onnxruntime"
