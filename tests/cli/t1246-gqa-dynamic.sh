#!/bin/sh
# t1246-gqa-dynamic.sh: the group-query-attention lowering with symbolic
# dims (issue 25): the tiny genai decoders (do_rotary; the qwen preset's
# q/k/v biases; RotaryEmbedding before GroupQueryAttention) migrated to
# openvino without --dim, then run in onnxruntime-node at a prompt, a batch
# of 2 with a right-padded entry, a decode step after each and a chunk
# after a past: equal to onnxruntime's GroupQueryAttention on the originals,
# full_check, and equal in `opmig run`; then seeded single GroupQueryAttention
# nodes with symbolic dims (with and without a past, rotary halves or pairs,
# windows, softcap, shared kv heads, float16) lowered and compared the same
# way (tests/ort/gqa_dyn_ort.py).  Skipped when onnxruntime-node or
# python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
timeout 300 "$PY" "$TOP/tests/ort/gqa_dyn_ort.py" "$OPMIG" "$T/work" >"$T/dyn.out" 2>&1
rc=$?
cat "$T/dyn.out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "the run-time GroupQueryAttention lowering differs from onnxruntime (above)"
grep -q "^0 failures$" "$T/dyn.out" || fail "gqa_dyn_ort.py printed no summary"
grep -q "^ok: 12 of 12 single-node cases lowered" "$T/dyn.out" || fail "not every node case lowered"
echo "ok: GroupQueryAttention lowered with symbolic dims equals onnxruntime's"

# a target without int64 arithmetic (rknpu2) cannot compute the positions at
# run time: without --dim the node stays blocked and says so; with static dims
# a batch of 2 after a past takes the static path, seqlens_k noted as unpadded
cd "$T" || fail "cannot cd to $T"
$PY "$TOP/testdata/gen/make_decoder.py" --preset tiny --form genai -o genai.onnx >/dev/null 2>&1 ||
	fail "cannot generate the decoder"
run 1 "$OPMIG" migrate genai.onnx --target rknpu2 -o rk.onnx --no-validate
grep -q "(GroupQueryAttention): .*; not lowered by group-query-attention: the shapes or seqlens_k are not static, and the target takes no int64 Add" "$T/out" ||
	{ cat "$T/out"; fail "rknpu2: the blocker does not say why GroupQueryAttention stays"; }
run 1 "$OPMIG" migrate genai.onnx --target rknpu2 -o rk.onnx --no-validate --dim batch_size=2 \
	--dim sequence_length=1 --dim past_sequence_length=8 --dim total_sequence_length=9
grep -q "group-query-attention (rotary): .*GroupQueryAttention" "$T/out" ||
	{ cat "$T/out"; fail "rknpu2 with static dims: not lowered by the static path"; }
grep -q "^note: group-query-attention: node '.*': seqlens_k taken to be total_sequence_length - 1 in each of its 2 entries" "$T/out" ||
	{ cat "$T/out"; fail "rknpu2 with static dims: the assumption is not noted"; }
echo "ok: a target without int64 arithmetic keeps the node blocked or notes the assumption"
