#!/bin/sh
# t1176-lowerings-llm.sh: the lowerings of the LLM operators against
# onnxruntime.  Random RotaryEmbedding (com.microsoft and ai.onnx 23: 3-D
# and 4-D, halves and interleaved pairs, partial rotation, position ids,
# an offset or none), Attention-23 (3-D and 4-D, shared kv heads, float and
# boolean masks, is_causal, past and present, scale, softcap, the qk
# output modes) and MultiHeadAttention (bias, key_padding_mask,
# attention_bias, past and present, unidirectional, the qk output) go
# through `opmig migrate --passes rotary|attention` to test targets lacking
# the op and compute in onnxruntime-node what the originals compute
# (tests/ort/lowerings_llm.py).  Skipped when onnxruntime-node or
# python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
timeout 600 $PY "$TOP/tests/ort/lowerings_llm.py" "$OPMIG" "$T/work" >"$T/out" 2>&1
rc=$?
cat "$T/out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "the LLM lowerings disagree with onnxruntime (above)"
grep -q " 0 failures$" "$T/out" || fail "no summary"
for v in "rotary  *rotate-half" "rotary  *interleaved " "rotary  *interleaved-gather" "attention  *sdpa " "attention  *sdpa-padding" \
	"attention  *sdpa-where" "attention  *sdpa-kv-share" "attention  *sdpa-softcap" "attention  *sdpa-all"; do
	grep -q "^$v" "$T/out" || fail "no case of $v"
done
