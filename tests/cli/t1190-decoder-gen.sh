#!/bin/sh
# t1190-decoder-gen.sh: the decoders of testdata/gen/make_decoder.py (tiny
# preset: decomposed, genai, genai --rotary-op --symmetric; the qwen
# preset's q/k/v-biased decomposed, genai and genai --rotary-op) in
# onnxruntime-node: finite logits, the KV cache consistent with a longer
# prompt (8 tokens then a 1-token decode step = 9 tokens at once), left
# padding masked, the genai models equal to the decomposed one given their
# dequantized weights; the decomposed one passes onnx.checker full_check and
# gives onnxruntime's results in `opmig run`, and so do the three qwen
# forms (tests/ort/decoder_gen_ort.py).
# The 7B preset writes a sparse weights file: it must take ~0 bytes of disk,
# pass the checker and load in `opmig inspect`.
# Skipped when onnxruntime-node or python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
RUN_LIMIT=60 run 0 "$PY" "$TOP/testdata/gen/make_decoder.py" --preset 7b --form decomposed \
	--sparse --external --check -o "$T/llm.onnx"
size=$(stat -c %s "$T/llm.data") blocks=$(stat -c %b "$T/llm.data")
[ "$size" -gt 26000000000 ] || fail "7b weights file is $size bytes, want ~27 GB"
[ "$blocks" -lt 64 ] || fail "7b weights file uses $blocks blocks of disk, want a sparse file"
run 0 "$OPMIG" inspect "$T/llm.onnx"
grep -q "past_key_values.31.value" "$T/out" || fail "opmig inspect does not list the 7b inputs"
rm -f "$T/llm.data"
timeout 300 "$PY" "$TOP/tests/ort/decoder_gen_ort.py" "$OPMIG" "$T/work" >"$T/dec.out" 2>&1
rc=$?
cat "$T/dec.out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "the generated decoders fail their checks (above)"
grep -q "^0 failures$" "$T/dec.out" || fail "decoder_gen_ort.py printed no summary"
echo "ok: generated decoders consistent through their KV cache"
