#!/bin/sh
# t1012-validate-decoder.sh: validation of a decoder (tiny preset of
# testdata/gen/make_decoder.py): generated inputs follow the decoder rules
# (attention_mask all ones, as long as past + new tokens unless --dim says,
# position_ids past + 0..S-1; --range overrides),
# the fp16 migration to ascend is judged by per-position cosine and top-1
# token of its logits (equivalent, with the element-wise verdict reported
# beside), --logits exact judges it by rtol/atol, and a model whose lm_head
# is perturbed just enough to flip one position's top-1 token is NOT
# equivalent; migrate --time reports the time per run of both models.  Skipped when python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
run 0 "$PY" "$TOP/testdata/gen/make_decoder.py" --preset tiny --form decomposed -o "$T/tiny.onnx"
D="--dim batch_size=1 --dim sequence_length=8 --dim past_sequence_length=0 --dim total_sequence_length=8"

# 1. the inputs: batch 2, 4 new tokens after a past of 3
run 0 "$OPMIG" validate "$T/tiny.onnx" "$T/tiny.onnx" --dim batch_size=2 --dim sequence_length=4 \
	--dim past_sequence_length=3 --dim total_sequence_length=7 --save "$T/in"
grep -q "^inputs: attention_mask all ones; position_ids past length + 0..S-1 per row (past length 3)$" "$T/out" ||
	{ cat "$T/out"; fail "validate does not say how it generated the decoder inputs"; }
run 0 "$OPMIG" validate "$T/tiny.onnx" "$T/tiny.onnx" --dim batch_size=2 --dim sequence_length=4 \
	--dim past_sequence_length=3 --dim total_sequence_length=7 --range attention_mask=0:1 --save "$T/rng"
# without total_sequence_length the mask still spans past + new tokens
run 0 "$OPMIG" validate "$T/tiny.onnx" "$T/tiny.onnx" --dim batch_size=2 --dim sequence_length=4 \
	--dim past_sequence_length=3 --save "$T/tot"
$PY - "$T" <<'PYEOF' || fail "generated decoder inputs are wrong (above)"
import sys
import numpy as np
import onnx
from onnx import numpy_helper as nh
t = sys.argv[1]
def inp(d, k):
    x = onnx.load_tensor("%s/%s/sample_0/input_%d.pb" % (t, d, k))
    return x.name, nh.to_array(x)
names = [inp("in", k)[0] for k in range(4)]
assert names == ["input_ids", "attention_mask", "position_ids", "past_key_values.0.key"], names
ids, mask, pos, past = (inp("in", k)[1] for k in range(4))
assert ids.shape == (2, 4) and ids.min() >= 0 and ids.max() < 256, ids
assert mask.shape == (2, 7) and mask.dtype == np.int64 and (mask == 1).all(), mask
want = np.array([[3, 4, 5, 6], [3, 4, 5, 6]], np.int64)
assert pos.dtype == np.int64 and (pos == want).all(), pos
assert past.shape == (2, 2, 3, 16) and past.dtype == np.float32 and past.min() >= -1 and past.max() < 1
assert inp("tot", 1)[1].shape == (2, 7), inp("tot", 1)[1].shape   # past 3 + 4 new
rmask = inp("rng", 1)[1]
assert set(np.unique(rmask)) == {0, 1}, rmask     # --range wins over the rule
print("inputs ok: mask", mask.tolist(), "positions", pos.tolist())
PYEOF

# 2. fp16 migration: logits judged by position, both verdicts reported
run 0 "$OPMIG" migrate "$T/tiny.onnx" --target ascend -o "$T/t.onnx" $D --map "$T/t.map" --time
grep -q "validation (fp16, .*): equivalent$" "$T/out" || { cat "$T/out"; fail "migrate's validation is not equivalent"; }
grep -q "^  time per run: reference [0-9.e+-]* ms, candidate [0-9.e+-]* ms (mean of 1; " "$T/out" ||
	{ cat "$T/out"; fail "migrate --time reports no time per run"; }
grep -q "logits by position: min cosine 0\.99.* (>= 0.999 required), top-1 8/8, top-5 overlap .*; element-wise rtol/atol: outside" "$T/out" ||
	{ cat "$T/out"; fail "migrate's report lacks the logits criterion"; }
run 0 "$OPMIG" validate "$T/tiny.onnx" "$T/t.onnx" --map "$T/t.map" $D --format json
cp "$T/out" "$T/fp16.json"
run 1 "$OPMIG" validate "$T/tiny.onnx" "$T/t.onnx" --map "$T/t.map" $D --logits exact
grep -q "^NOT equivalent$" "$T/out" || fail "--logits exact does not judge by rtol/atol"
if grep -q "logits by position" "$T/out"; then fail "--logits exact still reports the logits criterion"; fi

# 3. a candidate whose lm_head makes one position's top-1 token another
run 0 "$OPMIG" validate "$T/tiny.onnx" "$T/tiny.onnx" $D --save "$T/ref"
$PY - "$T" <<'PYEOF' || fail "cannot build the perturbed model (above)"
import sys
import numpy as np
import onnx
from onnx import numpy_helper as nh
t = sys.argv[1]
logits = nh.to_array(onnx.load_tensor(t + "/ref/sample_0/reference/output_0.pb"))[0]
m = onnx.load(t + "/tiny.onnx")
head = [n for n in m.graph.node if n.name == "/lm_head/MatMul"][0].input[1]
init = [x for x in m.graph.initializer if x.name == head][0]
w = nh.to_array(init).copy()                       # [hidden, vocab]
# the position whose top-2 token is relatively closest to its top-1
best = None
for p in range(logits.shape[0]):
    o = np.argsort(-logits[p])
    a, b = int(o[0]), int(o[1])
    if logits[p, a] > 0:
        gap = (logits[p, a] - logits[p, b]) / logits[p, a]
        if best is None or gap < best[0]:
            best = (gap, p, a, b)
gap, p, a, b = best
eps = gap * 1.5 + 1e-3                             # logit_b + eps * logit_a > logit_a at p
w[:, b] += eps * w[:, a]
init.CopyFrom(nh.from_array(w, head))
onnx.save(m, t + "/mut.onnx")
print("perturbed token %d by %.4f of token %d (position %d, gap %.4f)" % (b, eps, a, p, gap))
PYEOF
run 1 "$OPMIG" validate "$T/tiny.onnx" "$T/mut.onnx" $D --format json
cp "$T/out" "$T/mut.json"
$PY - "$T" <<'PYEOF' || fail "the verdicts are wrong (above)"
import json, sys
t = sys.argv[1]
for f, eq in (("fp16.json", True), ("mut.json", False)):
    r = json.load(open(t + "/" + f))
    o = [x for x in r["outputs"] if x["reference_name"] == "logits"][0]
    lg = o["logits"]
    print(f, "equivalent", r["equivalent"], "min cosine %.6f" % lg["min_cosine"],
          "top-1 %d/%d" % (lg["top1_agree"], lg["positions"]), "top-5 %.3f" % lg["top5_overlap"],
          "within tolerance", lg["within_tolerance"])
    assert r["equivalent"] is eq and o["ok"] is eq, f
    assert lg["criterion"] == "cosine_top1" and lg["positions"] == 8
    assert r["generated_inputs"].startswith("attention_mask all ones")
    if eq:
        assert lg["top1_agree"] == 8 and lg["min_cosine"] >= 0.999 and lg["within_tolerance"] is False
    else:
        # the cosine alone would pass: the top-1 rule must catch it
        assert lg["min_cosine"] >= 0.999 and lg["top1_agree"] < 8, lg
        assert "top-1 token differs" in o["why"], o["why"]
    kv = [x for x in r["outputs"] if x["reference_name"] == "present.1.value"][0]["logits"]
    assert kv["criterion"] == "cosine" and kv["positions"] == 16, kv
PYEOF
echo "ok: decoder inputs by rule; logits judged by position cosine and top-1"
