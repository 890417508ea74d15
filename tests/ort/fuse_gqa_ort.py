"""fuse_gqa_ort.py OPMIG WORKDIR: the fusion fuse-gqa of opmig migrate.
The tiny decomposed decoder of testdata/gen/make_decoder.py (2 layers, 4
query heads sharing 2 kv heads, rotary on [B, H, S, D] after the head
transpose, the causal + attention_mask padding mask) is migrated to qnn
(which declares com.microsoft GroupQueryAttention) with static dims at
several (batch, sequence, past) settings: each migrated model must hold
one GroupQueryAttention per layer and no Softmax, the rotations of Q and
K fused by fuse-rotary into RotaryEmbedding on the 3-D projections
(num_heads set, no Transpose left; ai.onnx's at --opset 23), and give in
onnxruntime-node the original's logits and present key/value on seeded
inputs (attention_mask all ones; position_ids past + 0..S-1) within
float32 rounding (the same products summed in another order: 1e-4
absolute on logits of unit size, 100 times what is seen); a right-padded
prompt too, padded positions included (there each query sees the row's
valid keys in both), where the padding is checked to matter.
Refused: the same decoder with its causal mask made strict (key j < query
position: no longer the mask GroupQueryAttention applies), or with -1 as
the masked value (masked keys keep some weight), keeps its attention,
with a note naming the mask, and so does a batch of 2 with a
sequence after a past (onnxruntime's GroupQueryAttention refuses it).
The decoder with 4 kv heads (no repeat) and with 1 fuses and agrees as
well.  The decoder migrated with symbolic dims (qnn as if it took them) fuses
too, and that one model equals the original at each setting; the strict
mask is refused there as well.  The qwen preset (q/k/v projection
biases: an Add between each projection MatMul and its head Reshape)
fuses alike at a prompt, a decode step and a right-padded prompt, static
and symbolic: one GroupQueryAttention per layer reading the biased
projections, the rotations fused, the six bias Adds kept, equal to the
original; its float16 export too.  opmig's own validation of each migration
says equivalent; the decoder migrated by fuse-gqa alone passes
onnx.checker full_check (onnx 1.12 skips the com.microsoft op; qnn's
other fusions put SimplifiedLayerNormalization in the default domain,
which onnx does not know).
float16, in two forms, fused into GroupQueryAttention on float16 data
(onnxruntime's CPU kernel runs it in float16) and compared in onnxruntime
with the decomposed float16 model at the prompt, decode, sequence-after-a-
past and right-padded settings: (a) the decoder as torch exports a half
model (make_decoder.py --dtype float16: float16 weights, KV cache, logits
and mask Where(.., 0, -65504); Softmax in float32 between Casts) migrated
to qnn against itself; (b) the float32 decoder migrated with --precision
fp16 (float32 inputs and outputs, the mask's Where kept in float32 and Cast
to float16, which makes its lowest -inf) to qnn with MatMul taken in
float16 (a rules file) and to qnn itself (MatMul quantized only: the fp16
pass keeps the attention's MatMuls in float32 between Casts, the fused
node takes their float16 inputs), fuse-gqa's passes with and without it.  Tolerance 2e-3 of the largest
|value| (logits, present key/value): float16 keeps 11 significant bits
(2^-10 relative, 1 ulp = 0.002 for logits between 2 and 4); both models
round the attention's output and its sums to float16 in another order,
so they differ by an ulp or two (seen: up to 1 ulp); a wrong mask moves
logits by tenths.  A float16 mask whose masked value is -1 stays
decomposed with a note.
Prints one line per check; exits 1 on a failure, 77 when onnxruntime-node
is absent."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402
from decoder_common import HD, HEADS, KV, LAYERS, VOCAB, check, diff, dims, gen  # noqa: E402

TOL = 1e-4
TOL16 = 2e-3     # of the largest |value|: float16's 2^-10, an ulp or two
MM16_RULES = {"schema": 1, "id": "qnn-mm16", "name": "qnn with float16 MatMul", "vendor": "test",
              "family": "test", "description": "fuse_gqa_ort.py", "extends": "qnn",
              "sources": ["fuse_gqa_ort.py"], "dynamic_shapes": False,
              "ops": {"MatMul": {"dtypes": ["float16", "uint8", "uint16"]}}}
SETTINGS16 = [(2, 5, 0, 0), (2, 1, 6, 0), (1, 3, 4, 0), (3, 6, 0, 2)]
DYN_RULES = {"schema": 1, "id": "qnn-dyn", "name": "qnn with dynamic shapes", "vendor": "test",
             "family": "test", "description": "fuse_gqa_ort.py", "extends": "qnn",
             "sources": ["fuse_gqa_ort.py"], "dynamic_shapes": True, "ops": {}}
# (batch, sequence, past, right padding of the last row, --opset): at
# opset 23 the rotations become ai.onnx RotaryEmbedding, else com.microsoft's
SETTINGS = [(2, 5, 0, 0, None), (2, 1, 6, 0, None), (1, 3, 4, 0, None), (3, 6, 0, 2, None),
            (2, 1, 6, 0, 23)]
# the qwen preset (q/k/v biases): a prompt, a decode step, a right-padded
# prompt
QWEN = [(2, 5, 0, 0), (2, 1, 6, 0), (3, 6, 0, 2)]


def feeds(b, s, p, pad, seed, kv=KV, dt=np.float32):
    rng = np.random.default_rng(seed)
    mask = np.ones((b, p + s), np.int64)
    if pad:
        mask[-1, p + s - pad:] = 0
    f = {"input_ids": rng.integers(0, VOCAB, (b, s)).astype(np.int64),
         "attention_mask": mask,
         "position_ids": np.tile(np.arange(p, p + s, dtype=np.int64), (b, 1))}
    for i in range(LAYERS):
        for kind in ("key", "value"):
            f["past_key_values.%d.%s" % (i, kind)] = \
                rng.uniform(-1, 1, (b, kv, p, HD)).astype(np.float32).astype(dt)
    return f


def migrate(opmig, src, dst, b, s, p, passes=None, opset=None, more=()):
    if b is None:   # symbolic dims: qnn as if it took them (a rules file)
        rules = os.path.join(os.path.dirname(dst), "qnn-dyn.json")
        with open(rules, "w") as f:
            json.dump(DYN_RULES, f)
        return subprocess.run([opmig, "migrate", src, "--target", "qnn-dyn", "--rules", rules,
                               "--force", "-o", dst], capture_output=True, text=True)
    more = list(more) or ["--target", "qnn"]
    more += (["--passes", passes] if passes else []) + (["--opset", str(opset)] if opset else [])
    return subprocess.run([opmig, "migrate", src, "--force", "-o", dst] + dims(b, s, p) + more,
                          capture_output=True, text=True)


def ops(path):
    return [n.op_type for n in onnx.load(path).graph.node]


def checker(path, what):
    try:
        onnx.checker.check_model(path, full_check=True)
        check(True, "%s: onnx.checker full_check" % what)
    except onnx.checker.ValidationError as e:
        check(False, "%s: onnx.checker: %s" % (what, str(e).splitlines()[0]))


def strict_causal(src, dst):
    """The decoder with its causal LessOrEqual made Less: query i sees keys
    before its own position only."""
    m = onnx.load(src)
    n = [n for n in m.graph.node if n.op_type == "LessOrEqual"]
    assert len(n) == 1
    n[0].op_type = "Less"
    onnx.save(m, dst)


def soft_mask(src, dst, dt=np.float32):
    """The decoder with its mask's masked value -1 instead of the dtype's
    lowest: masked keys keep some weight."""
    m = onnx.load(src)
    w = [n for n in m.graph.node if n.op_type == "Where" and n.name.startswith("/model/mask")]
    assert len(w) == 1
    m.graph.initializer.append(numpy_helper.from_array(np.array(-1, dt), "soft"))
    w[0].input[2] = "soft"
    onnx.save(m, dst)


def refused(opmig, work, name, make, why, dims=(2, 5, 0), src="tiny.onnx"):
    """The decoder src changed by make(src, dst) migrated (dims: batch,
    sequence, past; None: symbolic): its attention stays, with a note per
    layer saying why."""
    bad = os.path.join(work, name + ".onnx")
    make(os.path.join(work, src), bad)
    dst = os.path.join(work, name + "_qnn.onnx")
    r = migrate(opmig, bad, dst, *(dims or (None, None, None)))
    o = ops(dst) if os.path.exists(dst) else []
    check(os.path.exists(dst) and "GroupQueryAttention" not in o and o.count("Softmax") == LAYERS,
          "%s: %d GroupQueryAttention, %d Softmax (want 0, %d)"
          % (name, o.count("GroupQueryAttention"), o.count("Softmax"), LAYERS))
    n = r.stdout.count("left decomposed: " + why)
    check(n == LAYERS, "%s: %d notes say why (want %d)" % (name, n, LAYERS))


def half_cases(opmig, work, src, jobs, cases):
    """The float16 forms (see the top): migrations checked here, the
    onnxruntime jobs (unfused, fused) added to jobs and their names to
    cases."""
    h16 = os.path.join(work, "tiny16.onnx")
    gen(h16, "--dtype", "float16")
    rules = os.path.join(work, "qnn-mm16.json")
    with open(rules, "w") as f:
        json.dump(MM16_RULES, f)
    forms = (("fp16 pass", ["--target", "qnn-mm16", "--rules", rules, "--precision", "fp16"]),
             ("fp16 pass, qnn", ["--target", "qnn", "--precision", "fp16"]))
    for k, (b, s, p, pad) in enumerate(SETTINGS16):
        what = "B=%d S=%d past=%d%s" % (b, s, p, " right-padded by %d" % pad if pad else "")
        da = os.path.join(work, "half_a%d.onnx" % k)
        r = migrate(opmig, h16, da, b, s, p)
        todo = [("float16 export", da, r, h16)]
        for j, (form, more) in enumerate(forms):
            un, fu = (os.path.join(work, "half_b%d%d%s.onnx" % (j, k, x)) for x in ("u", "f"))
            migrate(opmig, src, un, b, s, p, "static-dims,fold-constants,fp16", more=more)
            rb = migrate(opmig, src, fu, b, s, p, "static-dims,fold-constants,fp16,fuse-gqa",
                         more=more)
            todo.append((form, fu, rb, un))
            o = ops(un) if os.path.exists(un) else []
            check(o.count("Softmax") == LAYERS and "GroupQueryAttention" not in o,
                  "%s without fuse-gqa, %s: %d Softmax (want %d)"
                  % (form, what, o.count("Softmax"), LAYERS))
        for form, dst, rr, base in todo:
            o = ops(dst) if os.path.exists(dst) else []
            g = [n for n in onnx.load(dst).graph.node
                 if n.op_type == "GroupQueryAttention"] if o else []
            check(len(g) == LAYERS and "Softmax" not in o,
                  "%s, %s: %d GroupQueryAttention, %d Softmax (want %d, 0)"
                  % (form, what, len(g), o.count("Softmax"), LAYERS))
            check("validation (fp16" in rr.stdout and "): equivalent" in rr.stdout,
                  "%s, %s: opmig's own validation says equivalent" % (form, what))
            dt = np.float16 if base == h16 else np.float32
            jobs += [(base, feeds(b, s, p, pad, 300 + k, dt=dt)),
                     (dst, feeds(b, s, p, pad, 300 + k, dt=dt))]
            cases.append("%s, %s" % (form, what))
    # the fused nodes run on float16: GroupQueryAttention's past_key (of
    # its one type T) is the float16 graph input, its present the output
    m = onnx.load(os.path.join(work, "half_a0.onnx"))
    types = {v.name: v.type.tensor_type.elem_type for v in
             list(m.graph.input) + list(m.graph.output)}
    q = [(types.get(n.input[3]), types.get(n.output[1])) for n in m.graph.node
         if n.op_type == "GroupQueryAttention"]
    check(q == [(onnx.TensorProto.FLOAT16,) * 2] * LAYERS,
          "float16 export: GroupQueryAttention's past and present float16 (%s)" % q)
    refused(opmig, work, "soft-mask-float16", lambda a, b: soft_mask(a, b, np.float16),
            "the mask is not Where(And(causal, padding), 0, lowest)", src="tiny16.onnx")


def main():
    got = ortlib.start(sys.argv)
    if not got:
        return 77
    opmig, work = got
    src = os.path.join(work, "tiny.onnx")
    gen(src)
    jobs, cases = [], []
    for k, (b, s, p, pad, opset) in enumerate(SETTINGS):
        what = "B=%d S=%d past=%d%s%s" % (b, s, p, " right-padded by %d" % pad if pad else "",
                                         " opset %d" % opset if opset else "")
        dst = os.path.join(work, "gqa_%d.onnx" % k)
        r = migrate(opmig, src, dst, b, s, p, opset=opset)
        if not os.path.exists(dst):
            check(False, "%s: migrate wrote nothing (exit %d): %s" % (what, r.returncode,
                                                                     r.stderr.strip()[-300:]))
            continue
        o = ops(dst)
        check(o.count("GroupQueryAttention") == LAYERS and "Softmax" not in o,
              "%s: %d GroupQueryAttention, %d Softmax (want %d, 0)"
              % (what, o.count("GroupQueryAttention"), o.count("Softmax"), LAYERS))
        # the rotations on the 3-D projections: no head transpose is left
        rot = [n for n in onnx.load(dst).graph.node if n.op_type == "RotaryEmbedding"]
        heads = sorted(a.i for n in rot for a in n.attribute if a.name == "num_heads")
        dom = set(n.domain for n in rot)
        want = {"" if opset == 23 else "com.microsoft"}
        check(heads == [KV] * LAYERS + [HEADS] * LAYERS and "Transpose" not in o and dom == want,
              "%s: RotaryEmbedding num_heads %s, domain %s, %d Transpose (want %s, %s, 0)"
              % (what, heads, dom, o.count("Transpose"), [KV] * LAYERS + [HEADS] * LAYERS, want))
        check("validation (fp32" in r.stdout and "): equivalent" in r.stdout,
              "%s: opmig's own validation (attention_mask all ones) says equivalent" % what)
        f = feeds(b, s, p, pad, 100 + k)
        jobs += [(src, f), (dst, f), (src, feeds(b, s, p, 0, 100 + k))]
        cases.append((what, s, pad))
    # one kv head per query head (no repeat) and one kv head for all
    for kv in (HEADS, 1):
        what = "%d kv heads, B=2 S=1 past=5" % kv
        mk = os.path.join(work, "kv%d.onnx" % kv)
        gen(mk, "--kv-heads", str(kv))
        dst = os.path.join(work, "kv%d_qnn.onnx" % kv)
        migrate(opmig, mk, dst, 2, 1, 5)
        o = ops(dst) if os.path.exists(dst) else []
        check(o.count("GroupQueryAttention") == LAYERS, "%s: %d GroupQueryAttention (want %d)"
              % (what, o.count("GroupQueryAttention"), LAYERS))
        f = feeds(2, 1, 5, 0, 50 + kv, kv)
        jobs += [(mk, f), (dst, f), (mk, f)]
        cases.append((what, 1, 0))
    # Qwen2's biases between the projections and the head Reshapes: the
    # fused node reads the biased projections (q and v as they are, k
    # through its rotation), the Adds kept; static and symbolic dims
    qwen = gen(os.path.join(work, "qwen.onnx"), "--preset", "qwen")
    qsym = os.path.join(work, "qwen_sym.onnx")
    migrate(opmig, qwen, qsym, None, None, None)
    for k, (b, s, p, pad) in enumerate(QWEN):
        what = "qwen (q/k/v biases) B=%d S=%d past=%d%s" % (
            b, s, p, " right-padded by %d" % pad if pad else "")
        dst = os.path.join(work, "qwen_%d.onnx" % k)
        migrate(opmig, qwen, dst, b, s, p)
        for m, how in ((dst, ""), (qsym, "symbolic dims, ")):
            nodes = onnx.load(m).graph.node if os.path.exists(m) else []
            o = [n.op_type for n in nodes]
            adds = sum(n.name == "/model/layers.%d/self_attn/%s_proj/Add" % (i, x)
                       for n in nodes for i in range(LAYERS) for x in "qkv")
            check(o.count("GroupQueryAttention") == LAYERS and "Softmax" not in o and
                  o.count("RotaryEmbedding") == 2 * LAYERS and adds == 3 * LAYERS,
                  "%s%s: %d GroupQueryAttention, %d Softmax, %d RotaryEmbedding, %d bias "
                  "Adds (want %d, 0, %d, %d)" % (how, what, o.count("GroupQueryAttention"),
                                                 o.count("Softmax"), o.count("RotaryEmbedding"),
                                                 adds, LAYERS, 2 * LAYERS, 3 * LAYERS))
            f = feeds(b, s, p, pad, 200 + k)
            jobs += [(qwen, f), (m, f), (qwen, feeds(b, s, p, 0, 200 + k))]
            cases.append((how + what, s, pad))
    # symbolic dims: one migrated model for every setting
    sym = os.path.join(work, "gqa_sym.onnx")
    r = migrate(opmig, src, sym, None, None, None)
    o = ops(sym) if os.path.exists(sym) else []
    check(o.count("GroupQueryAttention") == LAYERS and "Softmax" not in o,
          "symbolic dims: %d GroupQueryAttention, %d Softmax (want %d, 0)"
          % (o.count("GroupQueryAttention"), o.count("Softmax"), LAYERS))
    check("refuses to run a batch above 1 with a sequence after a past" in r.stdout,
          "symbolic dims: a note says what onnxruntime refuses")
    for k, (b, s, p, pad, opset) in enumerate(SETTINGS):
        if not opset:
            f = feeds(b, s, p, pad, 100 + k)
            jobs += [(src, f), (sym, f), (src, feeds(b, s, p, 0, 100 + k))]
            cases.append(("symbolic dims, B=%d S=%d past=%d%s" % (
                b, s, p, " right-padded by %d" % pad if pad else ""), s, pad))
    half_jobs, half = [], []
    half_cases(opmig, work, src, half_jobs, half)
    # the qwen preset as torch's half export, fused on float16 data
    q16 = gen(os.path.join(work, "qwen16.onnx"), "--preset", "qwen", "--dtype", "float16")
    dst = os.path.join(work, "qwen16_qnn.onnx")
    migrate(opmig, q16, dst, 2, 1, 6)
    o = ops(dst) if os.path.exists(dst) else []
    check(o.count("GroupQueryAttention") == LAYERS and "Softmax" not in o,
          "qwen float16 export, B=2 S=1 past=6: %d GroupQueryAttention, %d Softmax (want %d, 0)"
          % (o.count("GroupQueryAttention"), o.count("Softmax"), LAYERS))
    f = feeds(2, 1, 6, 0, 400, dt=np.float16)
    half_jobs += [(q16, f), (dst, f)]
    half.append("qwen float16 export, B=2 S=1 past=6")
    res = ortlib.run_many(jobs + half_jobs, os.path.join(work, "ort"))
    names = ["logits"] + ["present.%d.%s" % (i, kind) for i in range(LAYERS)
                          for kind in ("key", "value")]
    for k, what in enumerate(half):
        want, have = res[len(jobs) + 2 * k:len(jobs) + 2 * k + 2]
        if isinstance(want, str) or isinstance(have, str):
            check(False, "%s: onnxruntime: %s" % (what, want if isinstance(want, str) else have))
            continue
        for name, w, h in zip(names, want, have):
            d, top = diff(w, h), float(np.max(np.abs(np.asarray(w, np.float64))))
            check(d <= TOL16 * top, "%s: %s max abs diff %.3g (<= %g of the largest %.3g)"
                  % (what, name, d, TOL16, top))
    res = res[:len(jobs)]
    for k, (what, s, pad) in enumerate(cases):
        want, have, ones = res[3 * k:3 * k + 3]
        if isinstance(want, str) or isinstance(have, str):
            check(False, "%s: onnxruntime: %s" % (what, want if isinstance(want, str) else have))
            continue
        for name, w, h in zip(names, want, have):
            d = diff(w, h)
            check(d <= TOL, "%s: %s max abs diff %.3g (<= %g)" % (what, name, d, TOL))
        if pad:   # the padding changes what the padded positions see
            d = diff(want[0][-1, s - pad:], ones[0][-1, s - pad:])
            check(d > 1e-2, "%s: the padding matters (padded positions' logits move by %.3g "
                  "from an unpadded mask's)" % (what, d))
    # onnx.checker: the fusion alone (qnn's other fusions put
    # SimplifiedLayerNormalization in the default domain, where onnxruntime
    # registers it and onnx does not)
    dst = os.path.join(work, "only.onnx")
    migrate(opmig, src, dst, 2, 1, 6, "static-dims,fold-constants,fuse-gqa")
    if os.path.exists(dst):
        check(ops(dst).count("GroupQueryAttention") == LAYERS, "fuse-gqa alone: %d fused"
              % ops(dst).count("GroupQueryAttention"))
        checker(dst, "fuse-gqa alone")
    else:
        check(False, "fuse-gqa alone: migrate wrote nothing")
    # refused: a batch of 2 with a sequence after a past (onnxruntime's
    # GroupQueryAttention refuses to run it)
    dst = os.path.join(work, "b2s4p3.onnx")
    r = migrate(opmig, src, dst, 2, 4, 3)
    o = ops(dst) if os.path.exists(dst) else []
    check(os.path.exists(dst) and "GroupQueryAttention" not in o,
          "B=2 S=4 past=3: %d GroupQueryAttention (want 0)" % o.count("GroupQueryAttention"))
    n = r.stdout.count("left decomposed: a sequence of 4 after a past of 3 with batch 2")
    check(n == LAYERS, "B=2 S=4 past=3: %d notes say why (want %d)" % (n, LAYERS))
    # refused: masks that are not GroupQueryAttention's
    refused(opmig, work, "strict-causal", strict_causal,
            "the mask's other part is not the causal mask")
    refused(opmig, work, "strict-causal-symbolic", strict_causal,
            "the mask's other part is not the causal mask", None)
    refused(opmig, work, "soft-mask", soft_mask,
            "the mask is not Where(And(causal, padding), 0, lowest)")
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
