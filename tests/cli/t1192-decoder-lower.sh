#!/bin/sh
# t1192-decoder-lower.sh: the tiny genai decoders of testdata/gen/make_decoder.py
# (GroupQueryAttention with do_rotary or after com.microsoft RotaryEmbedding,
# MatMulNBits asymmetric and symmetric; the qwen preset's q/k/v bias Adds,
# packed or per projection) migrated to openvino with static dims
# for a prompt of 8 and a decode step after 8: no com.microsoft op left,
# onnx.checker full_check, and onnxruntime-node's logits and present.* of
# the migrated models within 1e-4 of the originals' (tests/ort/decoder_lower_ort.py).
# Skipped when onnxruntime-node or python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
timeout 300 "$PY" "$TOP/tests/ort/decoder_lower_ort.py" "$OPMIG" "$T/work" >"$T/dec.out" 2>&1
rc=$?
cat "$T/dec.out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "the migrated decoders differ from the originals (above)"
grep -q "^0 failures$" "$T/dec.out" || fail "decoder_lower_ort.py printed no summary"
echo "ok: migrated genai decoders equal the originals in onnxruntime"
