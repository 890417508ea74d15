"""fuse_attn_ort.py OPMIG WORKDIR: the fusions fuse-attention and
fuse-skip-norm of opmig migrate.

fuse-attention: hand-built scaled dot-product attention over [B, H, S, D]
heads (the scale a Div, a Mul on either side, none, or Q and K^T each times
sqrt(scale) as torch's dynamo export has it; the mask absent, [B,
1, S, T] on either side of the Add, [S, T] or [1, 1, S, T]; kv heads
repeated for grouped-query attention, or one the MatMuls broadcast; keys and
values concatenated with a past; symbolic dims; float16 with Softmax inside
Casts to float32), the tiny decomposed decoder of
testdata/gen/make_decoder.py (static dims, and float16; symbolic dims
without --dim too: inference proves the mask's S, the rows of
Range(total - seq, total), and the mask's total_sequence_length, not known
to be the keys' past + seq, is expanded to it, which onnxruntime checks at
three sets of lengths, one where an attention_mask of length 1 broadcasts)
and the attention
lowering's own output (Attention-23 models lowered for openvino, their doc
strings cleared) migrated to tensorrt at opset 23 must have one Attention in
place of each pattern, pass opmig's validation, and give in onnxruntime-node
the original's outputs (python-onnx 1.12 knows no opset 23: onnxruntime
loading and running them is the check).
Near misses (the scale a graph input, or K^T times one, Softmax on another axis, the scores
before or after the scale or the probabilities read elsewhere, a mask [B, 1,
1, T] the op does not take, query heads unknown against static kv heads, the
symbolic-dims decoder with its mask's rows a Range over another input's
length or one longer than the queries (S not provable), the lowering's
output with its provenance, a target without Attention at
opset 23) are left alone (kv heads tiled rather than repeated are fused as
they are, the tiling kept); tensorrt at opset 17 (no Attention) leaves the
pattern alone and the result passes onnx.checker full_check.

fuse-skip-norm: Add(x, skip) [+ Add(bias)] then a norm (RMSNorm fused by
fuse-rms-norm, LayerNormalization with and without beta) fused into
com.microsoft SkipSimplifiedLayerNormalization / SkipLayerNormalization for
a rules file declaring them (no shipped target does), the sum as output 3
where it is read elsewhere or is a graph output; near misses (a skip that
broadcasts, the norm over another axis, the inner sum read elsewhere, the
mean output read) left alone; the decoder fused with both passes. Results at
opset 17 pass onnx.checker full_check (those without a default-domain
SimplifiedLayerNormalization, which onnx 1.12 lacks). Prints one line per
check; exits 1 on a failure, 77 when onnxruntime-node is absent."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "tests", "ort"))
import ortlib  # noqa: E402
check = ortlib.check
diff = ortlib.max_diff

GEN = os.path.join(TOP, "testdata", "gen", "make_decoder.py")
LAYERS, KV, HD, VOCAB = 2, 2, 16, 256   # the tiny preset
B, HQ, HKV, S, P, D = 2, 4, 2, 5, 3, 8
T = S + P
RULES = {
    "schema": 1, "id": "npu-skip", "name": "openvino with skip norms",
    "vendor": "test", "family": "test", "description": "fuse_attn_ort.py",
    "extends": "openvino", "sources": ["fuse_attn_ort.py"],
    "ops": {"com.microsoft:SimplifiedLayerNormalization": {"dtypes": ["float32", "float16"]},
            "com.microsoft:SkipSimplifiedLayerNormalization":
            {"dtypes": ["float32", "float16"]},
            "com.microsoft:SkipLayerNormalization": {"dtypes": ["float32", "float16"]},
            "com.microsoft:RotaryEmbedding": {"dtypes": ["float32", "float16"]}},
}
RULES23 = dict(RULES, id="trt-skip", name="tensorrt with skip norms", extends="tensorrt")


def named(nodes, name):
    for i, n in enumerate(nodes):
        n.name = "%s_%d_%s" % (name, i, n.op_type)
    return nodes


def sdpa(name, scale="div", mask=(B, 1, S, T), mask_first=False, gqa=True, past=True,
         axis=-1, twice=None, f16=False, symbolic=False, bad_repeat=False, mqa=False,
         q_heads=HQ):
    """Q [B, HQ, S, D], K and V [B, HKV, S, D] (+ past [B, HKV, P, D]) ->
    y [B, HQ, S, D] (and present key/value); gqa False: HQ kv heads, or
    one (mqa) that the MatMuls broadcast."""
    f = TensorProto.FLOAT16 if f16 else TensorProto.FLOAT
    npf = np.float16 if f16 else np.float32
    hkv = HKV if gqa else 1 if mqa else HQ

    def dims(b, h, s, d):   # symbolic: batch and sequence by name (no past)
        return ["batch" if symbolic and b == B else b, h, "seq" if symbolic else s, d]
    ins = [helper.make_tensor_value_info("q", f, dims(B, q_heads, S, D)),
           helper.make_tensor_value_info("k", f, dims(B, hkv, S, D)),
           helper.make_tensor_value_info("v", f, dims(B, hkv, S, D))]
    outs = [helper.make_tensor_value_info("y", f, dims(B, q_heads, S, D))]
    inits, nodes = [], []
    k, v = "k", "v"
    if past:
        ins += [helper.make_tensor_value_info("past_k", f, [B, hkv, P, D]),
                helper.make_tensor_value_info("past_v", f, [B, hkv, P, D])]
        outs += [helper.make_tensor_value_info("present_k", f, [B, hkv, T, D]),
                 helper.make_tensor_value_info("present_v", f, [B, hkv, T, D])]
        nodes += [helper.make_node("Concat", ["past_k", "k"], ["present_k"], axis=2),
                  helper.make_node("Concat", ["past_v", "v"], ["present_v"], axis=2)]
        k, v = "present_k", "present_v"
    if gqa:   # repeat_kv: [B, HKV, T, D] -> [B, HKV, rep, T, D] -> [B, HQ, T, D]
        inits += [numpy_helper.from_array(np.array([2], np.int64), "ax2"),
                  numpy_helper.from_array(np.array([1, 1, HQ // HKV, 1, 1], np.int64), "rep"),
                  numpy_helper.from_array(np.array([0, HQ, -1, D], np.int64), "rs")]
        if bad_repeat:   # the kv heads tiled, not repeated: [B, rep, HKV, T, D]
            inits.append(numpy_helper.from_array(np.array([1], np.int64), "ax1"))
        for x in (k, v):
            nodes += [helper.make_node("Unsqueeze", [x, "ax1" if bad_repeat else "ax2"],
                                       [x + "_u"]),
                      helper.make_node("Expand", [x + "_u", "rep" if not bad_repeat else
                                                  "rep1"], [x + "_e"]),
                      helper.make_node("Reshape", [x + "_e", "rs"], [x + "_r"])]
        if bad_repeat:
            inits.append(numpy_helper.from_array(np.array([1, HQ // HKV, 1, 1, 1], np.int64),
                                                 "rep1"))
        k, v = k + "_r", v + "_r"
    nodes.append(helper.make_node("Transpose", [k], ["kt"], perm=[0, 1, 3, 2]))
    if scale in ("qk", "qk-input"):   # torch's dynamo form: Q and K^T times sqrt(scale)
        c = np.array(np.sqrt(1 / np.sqrt(D)), npf)
        inits.append(numpy_helper.from_array(c, "c"))
        if scale == "qk-input":
            ins.append(helper.make_tensor_value_info("ck", f, []))
        nodes += [helper.make_node("Mul", ["q", "c"], ["qs"]),
                  helper.make_node("Mul", ["c" if scale == "qk" else "ck", "kt"], ["kts"]),
                  helper.make_node("MatMul", ["qs", "kts"], ["qk"])]
    else:
        nodes.append(helper.make_node("MatMul", ["q", "kt"], ["qk"]))
    s = "qk"
    if scale in ("qk", "qk-input"):
        pass
    elif scale == "input":
        ins.append(helper.make_tensor_value_info("scale", f, []))
        nodes.append(helper.make_node("Mul", ["qk", "scale"], ["scaled"]))
        s = "scaled"
    elif scale != "none":
        c = np.array(np.sqrt(D) if scale == "div" else 1 / np.sqrt(D), npf)
        inits.append(numpy_helper.from_array(c, "c"))
        ab = ["c", "qk"] if scale == "mul-swap" else ["qk", "c"]
        nodes.append(helper.make_node("Div" if scale == "div" else "Mul", ab, ["scaled"]))
        s = "scaled"
    if mask is not None:
        mdims = ["batch", 1, "seq", "seq"] if symbolic else list(mask)
        ins.append(helper.make_tensor_value_info("mask", f, mdims))
        nodes.append(helper.make_node("Add", ["mask", s] if mask_first else [s, "mask"],
                                      ["biased"]))
        s = "biased"
    if f16:
        nodes.append(helper.make_node("Cast", [s], ["s32"], to=TensorProto.FLOAT))
        s = "s32"
    nodes.append(helper.make_node("Softmax", [s], ["p"], axis=axis))
    p = "p"
    if f16:
        nodes.append(helper.make_node("Cast", ["p"], ["p16"], to=TensorProto.FLOAT16))
        p = "p16"
    nodes.append(helper.make_node("MatMul", [p, v], ["y"]))
    if twice:   # an intermediate is a graph output too
        outs.append(helper.make_tensor_value_info(twice, TensorProto.FLOAT if twice == "p"
                                                  else f, [B, HQ, S, T]))
    m = helper.make_model(helper.make_graph(named(nodes, name), name, ins, outs, inits),
                          opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def sdpa_feeds(rng, opts):
    npf = np.float16 if opts.get("f16") else np.float32
    hkv = HKV if opts.get("gqa", True) else 1 if opts.get("mqa") else HQ
    past = opts.get("past", True)
    t = T if past else S
    r = lambda *s: rng.standard_normal(s).astype(npf)  # noqa: E731
    feeds = {"q": r(B, HQ, S, D), "k": r(B, hkv, S, D), "v": r(B, hkv, S, D)}
    if past:
        feeds["past_k"], feeds["past_v"] = r(B, hkv, P, D), r(B, hkv, P, D)
    mask = opts.get("mask", (B, 1, S, T))
    if mask is not None:
        shape = [t if x == T else x for x in mask]
        # a causal part (lowest where masked) and noise
        causal = np.triu(np.full((shape[-2], t), -1e4 if npf is np.float16 else -1e9),
                         1 + t - S) if shape[-2] == S else 0
        feeds["mask"] = (causal + 0.5 * rng.standard_normal(shape)).astype(npf)
    if opts.get("scale") == "input":
        feeds["scale"] = np.array(1 / np.sqrt(D), npf)
    if opts.get("scale") == "qk-input":
        feeds["ck"] = np.array(np.sqrt(1 / np.sqrt(D)), npf)
    return feeds


ATTN_CASES = (   # name, builder options, fused?
    ("sdpa-div-gqa-past", dict(), True),
    ("sdpa-mul-mask-first", dict(scale="mul", mask_first=True), True),
    ("sdpa-mul-swap-mha", dict(scale="mul-swap", gqa=False), True),
    ("sdpa-mqa-broadcast", dict(gqa=False, mqa=True), True),
    ("sdpa-noscale-nomask", dict(scale="none", mask=None, past=False), True),
    ("sdpa-mask-2d", dict(mask=(S, T)), True),
    ("sdpa-mask-1-1", dict(mask=(1, 1, S, T)), True),
    ("sdpa-symbolic", dict(symbolic=True, past=False, mask=(B, 1, S, S)), True),
    ("sdpa-f16", dict(f16=True), True),
    ("sdpa-scaled-qk", dict(scale="qk"), True),
    ("sdpa-scaled-qk-f16", dict(scale="qk", f16=True), True),
    # kv heads tiled (Unsqueeze at 1), not repeated: no repeat to drop, the
    # fused op reads the tiled heads
    ("sdpa-tiled", dict(bad_repeat=True), True),
    ("near-attn-scale-input", dict(scale="input"), False),
    # K^T times a graph input: its Mul stays, the pattern is not the one fused
    ("near-attn-k-scale-input", dict(scale="qk-input"), False),
    ("near-attn-axis", dict(axis=2), False),
    ("near-attn-scores-read", dict(twice="scaled"), False),
    ("near-attn-qk-read", dict(twice="qk"), False),
    ("near-attn-probs-read", dict(twice="p"), False),
    ("near-attn-mask-row", dict(mask=(B, 1, 1, T)), False),
    # query heads by name against 4 kv heads: 1 would broadcast to 4
    ("near-attn-heads-unknown", dict(gqa=False, q_heads="h"), False),
)


def norm_model(name, kind="rms", bias=False, beta=True, sum_use="node", skip_shape=None,
               axis=-1, inner_read=False, mean_read=False, f16=False):
    """y = Norm(Add(x, skip) [+ bias]) over x [2, 5, 16]; sum_use: "node"
    (also read by an Add making out2), "output" (also a graph output) or
    None (read by the norm only)."""
    f = TensorProto.FLOAT16 if f16 else TensorProto.FLOAT
    npf = np.float16 if f16 else np.float32
    shape = [2, 5, 16]
    rng = np.random.default_rng(3)
    ins = [helper.make_tensor_value_info("x", f, shape),
           helper.make_tensor_value_info("skip", f, skip_shape or shape)]
    outs = [helper.make_tensor_value_info("y", f, shape)]
    inits = [numpy_helper.from_array((1 + 0.1 * rng.standard_normal(16)).astype(npf), "gamma"),
             numpy_helper.from_array((0.1 * rng.standard_normal(16)).astype(npf), "beta"),
             numpy_helper.from_array((0.3 * rng.standard_normal(16)).astype(npf), "bias")]
    nodes = [helper.make_node("Add", ["x", "skip"], ["s0"])]
    s = "s0"
    if bias:
        nodes.append(helper.make_node("Add", ["s0", "bias"], ["s"]))
        s = "s"
    if kind == "rms":   # torch's form; fuse-rms-norm makes the norm
        inits += [numpy_helper.from_array(np.array(v, np.float32), n)
                  for n, v in (("two", 2.0), ("one", 1.0), ("eps", 1e-5))]
        x = s
        if f16:
            nodes.append(helper.make_node("Cast", [s], ["sf"], to=TensorProto.FLOAT))
            x = "sf"
        nodes += [helper.make_node("Pow", [x, "two"], ["sq"]),
                  helper.make_node("ReduceMean", ["sq"], ["ms"], axes=[axis], keepdims=1),
                  helper.make_node("Add", ["ms", "eps"], ["var"]),
                  helper.make_node("Sqrt", ["var"], ["r"]),
                  helper.make_node("Div", ["one", "r"], ["inv"]),
                  helper.make_node("Mul", [x, "inv"], ["n"])]
        n = "n"
        if f16:
            nodes.append(helper.make_node("Cast", ["n"], ["nh"], to=TensorProto.FLOAT16))
            n = "nh"
        nodes.append(helper.make_node("Mul", ["gamma", n], ["y"]))
    else:
        ln_out = ["y", "mean"] if mean_read else ["y"]
        nodes.append(helper.make_node("LayerNormalization",
                                      [s, "gamma"] + (["beta"] if beta else []), ln_out,
                                      axis=axis, epsilon=1e-5))
        if mean_read:
            outs.append(helper.make_tensor_value_info("mean", TensorProto.FLOAT, [2, 5, 1]))
    if sum_use == "node":   # the residual stream goes on
        nodes.append(helper.make_node("Add", [s, "y"], ["out2"]))
        outs.append(helper.make_tensor_value_info("out2", f, shape))
    elif sum_use == "output":
        outs.append(helper.make_tensor_value_info(s, f, shape))
    if inner_read:
        nodes.append(helper.make_node("Neg", ["s0"], ["neg"]))
        outs.append(helper.make_tensor_value_info("neg", f, shape))
    m = helper.make_model(helper.make_graph(named(nodes, name), name, ins, outs, inits),
                          opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


NORM_CASES = (   # name, builder options, fused op (None: left alone), sum wired?
    ("skip-rms", dict(), "SkipSimplifiedLayerNormalization", True),
    ("skip-rms-bias", dict(bias=True, sum_use="output"), "SkipSimplifiedLayerNormalization",
     True),
    ("skip-rms-alone", dict(sum_use=None), "SkipSimplifiedLayerNormalization", False),
    ("skip-rms-f16", dict(f16=True), "SkipSimplifiedLayerNormalization", True),
    ("skip-ln", dict(kind="ln", sum_use="output"), "SkipLayerNormalization", True),
    ("skip-ln-bias-nobeta", dict(kind="ln", bias=True, beta=False),
     "SkipLayerNormalization", True),
    ("near-skip-broadcast", dict(skip_shape=[1, 5, 16]), None, False),
    ("near-skip-ln-axis", dict(kind="ln", axis=1), None, False),
    ("near-skip-inner-read", dict(bias=True, inner_read=True), None, False),
    ("near-skip-ln-mean", dict(kind="ln", mean_read=True), None, False),
)


def migrate(opmig, src, dst, target, extra, what):
    """Migrate; returns (the rewrites' pass names, the report) or None."""
    rep = dst + ".json"
    r = subprocess.run([opmig, "migrate", src, "--target", target, "-o", dst, "--format",
                        "json", "--report", rep] + extra,
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, "%s: opmig migrate exit %d %s" % (what, r.returncode,
                                                               r.stderr.strip()[:300]))
    if r.returncode:
        return None
    report = json.load(open(rep))
    return [x["pass"] for x in report["rewrites"]], report


def validated(report, what):
    v = report.get("validation") or {}
    check(report.get("ok") and v.get("equivalent"),
          "%s: opmig's validation of the migrated model passes (equivalent %s)"
          % (what, v.get("equivalent")))


def full_check(path, what):
    try:
        onnx.checker.check_model(path, full_check=True)
        check(True, "%s: onnx.checker full_check" % what)
    except onnx.checker.ValidationError as e:
        check(False, "%s: onnx.checker: %s" % (what, str(e).splitlines()[0]))


def attention23(name, causal=False, gqa=True, past=True, mask=True):
    """One Attention-23 node over 4-D heads, the lowering's input."""
    f, hkv = TensorProto.FLOAT, HKV if gqa else HQ
    ins = [helper.make_tensor_value_info("q", f, [B, HQ, S, D]),
           helper.make_tensor_value_info("k", f, [B, hkv, S, D]),
           helper.make_tensor_value_info("v", f, [B, hkv, S, D])]
    names, outs = ["q", "k", "v"], ["y"]
    vouts = [helper.make_tensor_value_info("y", f, [B, HQ, S, D])]
    names.append("mask" if mask else "")
    if mask:
        ins.append(helper.make_tensor_value_info("mask", f, [B, 1, S, T if past else S]))
    if past:
        ins += [helper.make_tensor_value_info("past_k", f, [B, hkv, P, D]),
                helper.make_tensor_value_info("past_v", f, [B, hkv, P, D])]
        names += ["past_k", "past_v"]
        outs += ["present_k", "present_v"]
        vouts += [helper.make_tensor_value_info("present_k", f, [B, hkv, T, D]),
                  helper.make_tensor_value_info("present_v", f, [B, hkv, T, D])]
    while names[-1] == "":
        names.pop()
    n = helper.make_node("Attention", names, outs, name=name, scale=0.3,
                         is_causal=1 if causal else 0)
    m = helper.make_model(helper.make_graph([n], name, ins, vouts),
                          opset_imports=[helper.make_opsetid("", 23)])
    m.ir_version = 10
    return m


def dynamic_feeds(rng, b, s, p, total, pad=0):
    """The decoder's inputs at batch b, s new tokens, a past of p and an
    attention_mask of total (p + s, or 1 to broadcast) with the first pad
    positions of row 0 masked out."""
    mask = np.ones((b, total), np.int64)
    mask[0, :pad] = 0
    feeds = {"input_ids": rng.integers(0, VOCAB, size=(b, s)).astype(np.int64),
             "attention_mask": mask,
             "position_ids": np.tile(np.arange(p, p + s, dtype=np.int64), (b, 1))}
    for i in range(LAYERS):
        for kind in ("key", "value"):
            feeds["past_key_values.%d.%s" % (i, kind)] = \
                rng.standard_normal((b, KV, p, HD)).astype(np.float32)
    return feeds


def decoder_rows_variant(src, dst, how):
    """The decoder with its mask's rows (Range(total - seq, total)) changed:
    "other": seq from the length of a new input row_ids [row_count] (the
    same at run time, not provably); "longer": up to total + 1."""
    m = onnx.load(src)
    g = m.graph
    rng_node = [n for n in g.node if n.name == "/model/mask/Range"][0]
    if how == "other":
        g.input.append(helper.make_tensor_value_info("row_ids", TensorProto.INT64,
                                                     ["row_count"]))
        g.initializer.append(numpy_helper.from_array(np.array(0, np.int64), "zero_rows"))
        extra = [helper.make_node("Shape", ["row_ids"], ["rows_shape"], name="/rows/Shape"),
                 helper.make_node("Gather", ["rows_shape", "zero_rows"], ["rows_n"],
                                  name="/rows/Gather", axis=0),
                 helper.make_node("Sub", [rng_node.input[1], "rows_n"], ["rows_start"],
                                  name="/rows/Sub")]
        rng_node.input[0] = "rows_start"
    else:
        g.initializer.append(numpy_helper.from_array(np.array(1, np.int64), "one_more"))
        extra = [helper.make_node("Add", [rng_node.input[1], "one_more"], ["rows_limit"],
                                  name="/rows/Add")]
        rng_node.input[1] = "rows_limit"
    at = list(g.node).index(rng_node)
    nodes = list(g.node[:at]) + extra + list(g.node[at:])
    del g.node[:]
    g.node.extend(nodes)
    onnx.save(m, dst)


def ops_of(path):
    m = onnx.load(path)
    return [n.op_type for n in m.graph.node], m


def main():
    args = ortlib.start(sys.argv)
    if not args:
        return 77
    opmig, work = args
    rules, rules23 = os.path.join(work, "npu-skip.json"), os.path.join(work, "trt-skip.json")
    for path, doc in ((rules, RULES), (rules23, RULES23)):
        with open(path, "w") as f:
            json.dump(doc, f)
    jobs, names = [], []
    rng = np.random.default_rng(17)

    def compare(src, dst, feeds, what, tol):
        jobs.extend([(src, feeds), (dst, feeds)])
        names.append((what, tol))

    # fuse-attention on hand-built patterns
    for name, opts, fuse in ATTN_CASES:
        src = os.path.join(work, name + ".onnx")
        onnx.save(sdpa(name, **opts), src)
        full_check(src, "%s: the source" % name)
        feeds = sdpa_feeds(rng, opts)
        dst = os.path.join(work, name + "-trt23.onnx")
        what = "%s on tensorrt opset 23" % name
        done = migrate(opmig, src, dst, "tensorrt", ["--opset", "23"], what)
        if done is None:
            continue
        passes, report = done
        ops, m = ops_of(dst)
        want = 1 if fuse else 0
        check(passes.count("fuse-attention") == want and ops.count("Attention") == want and
              (not fuse or "Softmax" not in ops),
              "%s: %d fuse-attention, ops %s (want %d Attention)"
              % (what, passes.count("fuse-attention"), ops, want))
        if fuse:
            at = [n for n in m.graph.node if n.op_type == "Attention"][0]
            attrs = {a.name: helper.get_attribute_value(a) for a in at.attribute}
            want_attrs = {"scale": 1.0 if opts.get("scale") == "none" else 1 / np.sqrt(D)}
            if opts.get("f16"):
                want_attrs["softmax_precision"] = TensorProto.FLOAT
            check(set(attrs) == set(want_attrs) and   # a float16 scale is rounded
                  all(abs(attrs[k] - v) <= 1e-3 * v for k, v in want_attrs.items()),
                  "%s: Attention's attributes %s (want %s)" % (what, attrs, want_attrs))
            check(ops.count("Expand") == (2 if opts.get("bad_repeat") else 0),
                  "%s: %d Expand left (the tiling stays, a repeat goes)"
                  % (what, ops.count("Expand")))
            validated(report, what)
        compare(src, dst, feeds, what, 5e-3 if opts.get("f16") else 1e-5)
    # a target without Attention at the model's opset leaves it alone
    src = os.path.join(work, "sdpa-div-gqa-past.onnx")
    dst = os.path.join(work, "sdpa-div-gqa-past-trt17.onnx")
    done = migrate(opmig, src, dst, "tensorrt", [], "sdpa-div-gqa-past on tensorrt opset 17")
    if done is not None:
        ops, _ = ops_of(dst)
        check("fuse-attention" not in done[0] and "Softmax" in ops,
              "sdpa-div-gqa-past on tensorrt at opset 17: no fusion without Attention (ops %s)"
              % ops)
        full_check(dst, "sdpa-div-gqa-past on tensorrt opset 17")

    # the attention lowering's output fused back
    for name, opts in (("attn23-gqa-past", dict()),
                       ("attn23-causal", dict(causal=True, gqa=False, past=False, mask=False))):
        src = os.path.join(work, name + ".onnx")
        onnx.save(attention23(name, **opts), src)
        low = os.path.join(work, name + "-lowered.onnx")
        if migrate(opmig, src, low, "openvino", [], name + " lowered for openvino") is None:
            continue
        ops, m = ops_of(low)
        check("Attention" not in ops and "Softmax" in ops,
              "%s: lowered for openvino (ops %s)" % (name, ops))
        kept = os.path.join(work, name + "-lowered-trt23.onnx")
        done = migrate(opmig, low, kept, "tensorrt", ["--opset", "23", "--no-validate"],
                       name + " lowered, with its provenance")
        if done is not None:
            check("fuse-attention" not in done[0],
                  "%s: the lowering's output (its doc strings say so) is not fused back"
                  % name)
        for n in m.graph.node:
            n.doc_string = ""
        plain = os.path.join(work, name + "-plain.onnx")
        onnx.save(m, plain)
        dst = os.path.join(work, name + "-plain-openvino.onnx")
        done = migrate(opmig, plain, dst, "openvino", ["--no-validate"],
                       name + " lowered, doc strings cleared, on openvino")
        if done is not None:
            ops, _ = ops_of(dst)
            check("fuse-attention" not in done[0] and "Attention" not in ops,
                  "%s: openvino (no Attention, opset 23) leaves the pattern alone (ops %s)"
                  % (name, ops))
        dst = os.path.join(work, name + "-refused.onnx")
        what = "%s lowered, doc strings cleared, on tensorrt opset 23" % name
        done = migrate(opmig, plain, dst, "tensorrt", ["--opset", "23"], what)
        if done is None:
            continue
        ops, _ = ops_of(dst)
        check(done[0].count("fuse-attention") == 1 and ops.count("Attention") == 1 and
              "Softmax" not in ops, "%s: fused back into one Attention (ops %s)" % (what, ops))
        validated(done[1], what)
        feeds = sdpa_feeds(rng, dict(past=opts.get("past", True), gqa=opts.get("gqa", True),
                                     mask=(B, 1, S, T) if opts.get("mask", True) else None))
        compare(src, dst, feeds, what, 1e-5)

    # fuse-skip-norm on hand-built patterns
    for name, opts, op, wired in NORM_CASES:
        src = os.path.join(work, name + ".onnx")
        onnx.save(norm_model(name, **opts), src)
        full_check(src, "%s: the source" % name)
        npf = np.float16 if opts.get("f16") else np.float32
        feeds = {"x": rng.standard_normal((2, 5, 16)).astype(npf),
                 "skip": rng.standard_normal(opts.get("skip_shape") or (2, 5, 16)).astype(npf)}
        dst = os.path.join(work, name + "-skip.onnx")
        what = "%s on npu-skip" % name
        done = migrate(opmig, src, dst, "npu-skip",
                       ["--rules", rules] + ([] if op else ["--no-validate"]), what)
        if done is None:
            continue
        passes, report = done
        ops, m = ops_of(dst)
        want = 1 if op else 0
        fused = [n for n in m.graph.node if n.op_type.startswith("Skip")]
        check(passes.count("fuse-skip-norm") == want and len(fused) == want and
              (not op or (fused[0].op_type == op and fused[0].domain == "com.microsoft" and
                          ops.count("Add") == (1 if opts.get("sum_use", "node") == "node"
                                               else 0))),
              "%s: %d fuse-skip-norm, ops %s (want %d %s)"
              % (what, passes.count("fuse-skip-norm"), ops, want, op))
        if op:
            outs = list(fused[0].output)
            want_sum = "s" if opts.get("bias") else "s0"
            check((outs[3:] == [want_sum] and outs[1:3] == ["", ""]) if wired else
                  len(outs) == 1,
                  "%s: the fused node's outputs %s (the sum %s)"
                  % (what, outs, "as output 3" if wired else "not an output"))
            validated(report, what)
        # (onnx 1.12 knows no SimplifiedLayerNormalization in the default
        # domain, where onnxruntime registers it)
        if "SimplifiedLayerNormalization" not in ops:
            full_check(dst, what)
        compare(src, dst, feeds, what, 5e-3 if opts.get("f16") else 1e-5)
    src = os.path.join(work, "skip-rms.onnx")
    dst = os.path.join(work, "skip-rms-trt.onnx")
    done = migrate(opmig, src, dst, "tensorrt", ["--opset", "23"],
                   "skip-rms on tensorrt opset 23 (no skip norm)")
    if done is not None:
        ops, _ = ops_of(dst)
        check("fuse-skip-norm" not in done[0] and "RMSNormalization" in ops and "Add" in ops,
              "skip-rms on tensorrt: RMSNormalization alone where no skip norm is declared "
              "(ops %s)" % ops)

    # the tiny decomposed decoder
    dec = os.path.join(work, "decoder.onnx")
    subprocess.run(["/usr/bin/python3", GEN, "--preset", "tiny", "--form", "decomposed",
                    "-o", dec], check=True, capture_output=True)
    dims = ["--dim", "batch_size=1", "--dim", "sequence_length=8",
            "--dim", "past_sequence_length=0", "--dim", "total_sequence_length=8"]
    tok = np.random.default_rng(25).integers(0, VOCAB, size=(1, 8))
    feeds = {"input_ids": tok.astype(np.int64), "attention_mask": np.ones((1, 8), np.int64),
             "position_ids": np.arange(8, dtype=np.int64).reshape(1, 8)}
    for i in range(LAYERS):
        for kind in ("key", "value"):
            feeds["past_key_values.%d.%s" % (i, kind)] = np.zeros((1, KV, 0, HD), np.float32)
    for tag, target, extra, n_attn, n_skip in (
            ("trt23", "tensorrt", ["--opset", "23"] + dims, LAYERS, 0),
            ("trt23-fp16", "tensorrt", ["--opset", "23", "--precision", "fp16"] + dims,
             LAYERS, 0),
            ("trt23-dynamic", "tensorrt", ["--opset", "23"], LAYERS, 0),
            ("skip", "npu-skip", ["--rules", rules] + dims, 0, 2 * LAYERS),
            ("trt-skip23", "trt-skip", ["--rules", rules23, "--opset", "23"] + dims, LAYERS,
             2 * LAYERS)):
        dst = os.path.join(work, "decoder-%s.onnx" % tag)
        what = "decoder on %s" % tag
        done = migrate(opmig, dec, dst, target, extra, what)
        if done is None:
            continue
        passes, report = done
        ops, m = ops_of(dst)
        check(passes.count("fuse-attention") == n_attn and ops.count("Attention") == n_attn and
              ops.count("Softmax") == LAYERS - n_attn,
              "%s: %d fuse-attention, %d Attention, %d Softmax (want %d Attention)"
              % (what, passes.count("fuse-attention"), ops.count("Attention"),
                 ops.count("Softmax"), n_attn))
        skips = [n for n in m.graph.node if n.op_type == "SkipSimplifiedLayerNormalization"]
        wired = sum(1 for n in skips if len(n.output) == 4 and n.output[3])
        # every residual sum but the last is read by the next residual Add
        check(passes.count("fuse-skip-norm") == n_skip and len(skips) == n_skip and
              wired == max(n_skip - 1, 0),
              "%s: %d fuse-skip-norm, %d SkipSimplifiedLayerNormalization, %d with the sum "
              "as output 3 (want %d, %d)" % (what, passes.count("fuse-skip-norm"), len(skips),
                                             wired, n_skip, max(n_skip - 1, 0)))
        if "fp16" in tag:
            sp = [helper.get_attribute_value(a) for n in m.graph.node
                  if n.op_type == "Attention" for a in n.attribute
                  if a.name == "softmax_precision"]
            check(sp == [TensorProto.FLOAT] * LAYERS,
                  "%s: softmax in float32 as the Casts had it (softmax_precision %s)"
                  % (what, sp))
        validated(report, what)
        compare(dec, dst, feeds, what, 1e-2 if "fp16" in tag else 1e-4)
        if tag == "trt23-dynamic":
            # the mask expanded to the keys' length T = past + seq, which
            # inference cannot tie to total_sequence_length
            ex = [n for n in m.graph.node if n.op_type == "Expand"]
            check(len(ex) == LAYERS and ops.count("Shape") == 2 + LAYERS,
                  "%s: %d Expand of the mask to T, %d Shape (want %d, %d)"
                  % (what, len(ex), ops.count("Shape"), LAYERS, 2 + LAYERS))
            drng = np.random.default_rng(31)
            for b, s, p, total, pad in ((2, 5, 3, 8, 2), (1, 1, 6, 7, 0), (2, 1, 5, 1, 0)):
                compare(dec, dst, dynamic_feeds(drng, b, s, p, total, pad),
                        "%s at batch %d, seq %d, past %d, attention_mask %d"
                        % (what, b, s, p, total), 1e-4)
    # near misses with symbolic dims: the mask's rows not provably S
    for how in ("other", "longer"):
        src = os.path.join(work, "decoder-rows-%s.onnx" % how)
        decoder_rows_variant(dec, src, how)
        dst = os.path.join(work, "decoder-rows-%s-trt23.onnx" % how)
        what = "decoder with the mask's rows %s on trt23-dynamic" % (
            "over another input's length" if how == "other" else "one longer than S")
        done = migrate(opmig, src, dst, "tensorrt", ["--opset", "23", "--no-validate"], what)
        if done is None:
            continue
        ops, _ = ops_of(dst)
        check("fuse-attention" not in done[0] and ops.count("Softmax") == LAYERS and
              "Attention" not in ops, "%s: left alone (%d fuse-attention, %d Softmax)"
              % (what, done[0].count("fuse-attention"), ops.count("Softmax")))
        if how == "other":
            feeds_o = dynamic_feeds(np.random.default_rng(5), 2, 5, 3, 8)
            feeds_o["row_ids"] = np.zeros(5, np.int64)
            compare(src, dst, feeds_o, what, 1e-4)

    res = ortlib.run_many(jobs, os.path.join(work, "ort"), timeout=300)
    for k, (what, tol) in enumerate(names):
        want, got = res[2 * k], res[2 * k + 1]
        if isinstance(want, str) or isinstance(got, str):
            check(False, "%s: onnxruntime: %s / %s" % (what, want, got))
            continue
        check(np.all(np.isfinite(want[0])) and np.ptp(np.asarray(want[0], np.float64)) > 1e-3,
              "%s: the original's output finite, not constant" % what)
        d = max(diff(a, b) for a, b in zip(want, got))
        scale = max(float(np.max(np.abs(np.asarray(a, np.float64)))) for a in want)
        check(len(want) == len(got) and d <= tol * max(1.0, scale),
              "%s: onnxruntime's outputs of the migrated model within %g (relative to "
              "%.3g) of the original's (max |diff| %.3g)" % (what, tol, scale, d))
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
