"""fuse_llm_ort.py OPMIG WORKDIR: the LLM fusions of opmig migrate
(fuse-rms-norm, fuse-rotary) on torch's decomposed patterns.  The tiny decomposed
decoder of testdata/gen/make_decoder.py and hand-built RMSNorm variants
(Pow or x*x; Div, 1/r or Reciprocal; gamma on either side; float16 inside
Cast to float32 and back) and rotate-half rotary variants (operands in
either order) are migrated to a target that declares the fused ops: a
rules file extending openvino with com.microsoft
SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization and
RotaryEmbedding, and tensorrt with --opset 23 (RMSNormalization,
RotaryEmbedding; the decoder also with symbolic dims, and in float16,
where the mean square stays float32).  Each must have the fused op in
place of every pattern and give, in onnxruntime-node, the original's
outputs within float tolerance; at opset 17 a standalone RMS norm stays
primitives (onnx has no op for it: onnxruntime's
SimplifiedLayerNormalization is registered in the default domain, where
onnx.checker rejects it) and passes onnx.checker full_check, and the
decoder's norms after a residual Add become
SkipSimplifiedLayerNormalization.
Near misses (eps a graph input, an intermediate read twice, the mean over
another axis, gamma varying along another axis; cache halves unequal, the
rotated half read twice, cos from a graph input, x split off the middle)
and targets that declare
no fused op (openvino; tensorrt at opset 17) must be left alone and pass
onnx.checker full_check.  Prints one line per check; exits 1 on a
failure, 77 when onnxruntime-node is absent."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402
from decoder_common import HD, KV, LAYERS, VOCAB, check, diff, dims, gen  # noqa: E402

SHAPE = [2, 5, 16]
RULES = {
    "schema": 1, "id": "npu-fused", "name": "openvino with fused LLM ops",
    "vendor": "test", "family": "test", "description": "fuse_llm_ort.py",
    "extends": "openvino", "sources": ["fuse_llm_ort.py"],
    "ops": {"com.microsoft:SimplifiedLayerNormalization":
            {"dtypes": ["float32", "float16"]},
            "com.microsoft:SkipSimplifiedLayerNormalization":
            {"dtypes": ["float32", "float16"]},
            "com.microsoft:RotaryEmbedding": {"dtypes": ["float32", "float16"]},
            "com.microsoft:MatMulNBits": {"dtypes": ["float32"]}},
}


def rms(name, x_mul=False, div="one", gamma_first=True, f16=False, eps_input=False,
        twice=False, axis=-1, gamma_shape=None):
    """One RMSNorm pattern as a model: x [2, 5, 16] -> y."""
    f = TensorProto.FLOAT16 if f16 else TensorProto.FLOAT
    nodes, inits, ins = [], [], [helper.make_tensor_value_info("x", f, SHAPE)]
    outs = [helper.make_tensor_value_info("y", f, SHAPE)]
    rng = np.random.default_rng(7)
    gs = gamma_shape or [SHAPE[-1]]
    g = (1 + 0.1 * rng.standard_normal(gs)).astype(np.float16 if f16 else np.float32)
    inits.append(numpy_helper.from_array(g, "gamma"))
    inits += [numpy_helper.from_array(np.array(v, np.float32), n)
              for n, v in (("two", 2.0), ("one", 1.0))]
    if eps_input:
        ins.append(helper.make_tensor_value_info("eps", TensorProto.FLOAT, []))
    else:
        # large enough that an epsilon lost or changed shows in the output
        inits.append(numpy_helper.from_array(np.array(0.05, np.float32), "eps"))
    x = "x"
    if f16:
        nodes.append(helper.make_node("Cast", ["x"], ["xf"], to=TensorProto.FLOAT))
        x = "xf"
    if x_mul:
        nodes.append(helper.make_node("Mul", [x, x], ["sq"]))
    else:
        nodes.append(helper.make_node("Pow", [x, "two"], ["sq"]))
    nodes += [helper.make_node("ReduceMean", ["sq"], ["ms"], axes=[axis], keepdims=1),
              helper.make_node("Add", ["ms", "eps"], ["var"]),
              helper.make_node("Sqrt", ["var"], ["r"])]
    if div == "x":
        nodes.append(helper.make_node("Div", [x, "r"], ["n"]))
    else:
        if div == "one":
            nodes.append(helper.make_node("Div", ["one", "r"], ["inv"]))
        else:
            nodes.append(helper.make_node("Reciprocal", ["r"], ["inv"]))
        nodes.append(helper.make_node("Mul", ["inv", x] if div == "recip" else [x, "inv"], ["n"]))
    if twice:   # an intermediate (ms, r or xf) is read outside the pattern too
        nodes.append(helper.make_node("Add", [twice, "one"], ["extra"]))
        shape = list(SHAPE)
        shape[axis] = 1 if twice != "xf" else shape[axis]
        outs.append(helper.make_tensor_value_info("extra", TensorProto.FLOAT, shape))
    if f16:
        nodes.append(helper.make_node("Cast", ["n"], ["nh"], to=TensorProto.FLOAT16))
    last = "nh" if f16 else "n"
    nodes.append(helper.make_node("Mul", ["gamma", last] if gamma_first else [last, "gamma"],
                                  ["y"]))
    for i, n in enumerate(nodes):
        n.name = "%s_%d_%s" % (name, i, n.op_type)
    m = helper.make_model(helper.make_graph(nodes, name, ins, outs, inits),
                          opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


RSHAPE, POS = [2, 3, 5, 8], 16      # x [B, N, S, D], cache rows


def rope(name, swap=False, halves_differ=False, twice=False, cos_input=False, split=4,
         pos_batch=None):
    """One rotate-half rotary as a model: x [2, 3, 5, 8], position_ids
    [2, 5] -> y; swap: the operands of each Mul and of the Add reversed."""
    d, f = RSHAPE[-1], TensorProto.FLOAT
    inv = 1.0 / (10000 ** (np.arange(0, d, 2) / d))
    ang = np.arange(POS)[:, None] * inv[None, :]
    if not halves_differ:
        ang = np.concatenate([ang, ang], axis=1)
    else:
        ang = np.concatenate([ang, 0.5 * ang], axis=1)
    ins = [helper.make_tensor_value_info("x", f, RSHAPE),
           helper.make_tensor_value_info("position_ids", TensorProto.INT64,
                                         [pos_batch or RSHAPE[0], RSHAPE[2]])]
    outs = [helper.make_tensor_value_info("y", f, RSHAPE)]
    inits = [numpy_helper.from_array(np.sin(ang).astype(np.float32), "sin_cache"),
             numpy_helper.from_array(np.array([1], np.int64), "ax1")]
    for nm, v in (("s0", 0), ("sh", split), ("se", d), ("sa", -1)):
        inits.append(numpy_helper.from_array(np.array([v], np.int64), nm))
    if cos_input:
        ins.append(helper.make_tensor_value_info("cos_cache", f, [POS, d]))
    else:
        inits.append(numpy_helper.from_array(np.cos(ang).astype(np.float32), "cos_cache"))
    mm = lambda a, b, o: helper.make_node("Mul", [b, a] if swap else [a, b], [o])  # noqa: E731
    nodes = [helper.make_node("Gather", ["cos_cache", "position_ids"], ["cg"]),
             helper.make_node("Unsqueeze", ["cg", "ax1"], ["cos"]),
             helper.make_node("Gather", ["sin_cache", "position_ids"], ["sg"]),
             helper.make_node("Unsqueeze", ["sg", "ax1"], ["sin"]),
             helper.make_node("Slice", ["x", "s0", "sh", "sa"], ["x1"]),
             helper.make_node("Slice", ["x", "sh", "se", "sa"], ["x2"]),
             helper.make_node("Neg", ["x2"], ["nx2"]),
             helper.make_node("Concat", ["nx2", "x1"], ["rot"], axis=-1),
             mm("x", "cos", "a"), mm("rot", "sin", "b"),
             helper.make_node("Add", ["b", "a"] if swap else ["a", "b"], ["y"])]
    if twice:   # the rotated half is read outside the pattern too
        nodes.append(helper.make_node("Neg", ["rot"], ["extra"]))
        outs.append(helper.make_tensor_value_info("extra", f, RSHAPE))
    for i, n in enumerate(nodes):
        n.name = "%s_%d_%s" % (name, i, n.op_type)
    m = helper.make_model(helper.make_graph(nodes, name, ins, outs, inits),
                          opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


INT4, UINT4 = 22, 21   # TensorProto data types onnx 1.12 predates


def int4_tensor(codes, name, signed):
    """An int4/uint4 initializer: two codes a byte, the first in the low
    nibble (raw_data as ONNX packs 4-bit types)."""
    flat = (codes.astype(np.int64).ravel() & 15).astype(np.uint8)
    if flat.size % 2:
        flat = np.append(flat, np.uint8(0))
    t = onnx.TensorProto()
    t.name = name
    t.data_type = INT4 if signed else UINT4
    t.dims.extend(codes.shape)
    t.raw_data = (flat[0::2] | (flat[1::2] << 4)).tobytes()
    return t


def nbits(name, k=64, n=24, bs=32, signed=False, zp=True, axis=0, twice=False,
          w_input=False):
    """A [3, 4, K] x DequantizeLinear-21(codes [K, N] blocked along K) ->
    y [3, 4, N]."""
    rng = np.random.default_rng(5)
    kb = (k + bs - 1) // bs
    lo, hi = (-8, 8) if signed else (0, 16)
    f = TensorProto.FLOAT
    sshape = [kb, n] if axis == 0 else [k, (n + bs - 1) // bs]
    ins = [helper.make_tensor_value_info("a", f, [3, 4, k])]
    outs = [helper.make_tensor_value_info("y", f, [3, 4, n])]
    inits = [numpy_helper.from_array((0.02 + 0.05 * rng.random(sshape)).astype(np.float32),
                                     "scale")]
    codes = rng.integers(lo, hi, size=(k, n))
    if w_input:
        ins.append(helper.make_tensor_value_info("w", INT4 if signed else UINT4, [k, n]))
    else:
        inits.append(int4_tensor(codes, "w", signed))
    dq_in = ["w", "scale"]
    if zp:
        inits.append(int4_tensor(rng.integers(lo, hi, size=sshape), "zp", signed))
        dq_in.append("zp")
    nodes = [helper.make_node("DequantizeLinear", dq_in, ["wf"], axis=axis, block_size=bs),
             helper.make_node("MatMul", ["a", "wf"], ["y"])]
    if twice:   # the dequantized weights are read by another node too
        nodes.append(helper.make_node("ReduceSum", ["wf"], ["extra"], keepdims=0))
        outs.append(helper.make_tensor_value_info("extra", f, []))
    for i, nd in enumerate(nodes):
        nd.name = "%s_%d_%s" % (name, i, nd.op_type)
    m = helper.make_model(helper.make_graph(nodes, name, ins, outs, inits),
                          opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    return m, codes


NBITS_CASES = (   # name, builder options, fused?
    ("nbits-uint4-zp", dict(), True),
    ("nbits-uint4", dict(zp=False), True),
    ("nbits-int4-zp", dict(signed=True), True),
    ("nbits-int4", dict(signed=True, zp=False), True),
    ("nbits-partial-block", dict(k=80, bs=32, signed=True), True),
    ("nbits-block16", dict(bs=16, n=7), True),
    ("near-nbits-block8", dict(bs=8), False),
    ("near-nbits-axis1", dict(axis=1), False),
    ("near-nbits-twice", dict(twice=True), False),
    ("near-nbits-w-input", dict(w_input=True), False),
)

ROPE_CASES = (   # name, builder options, fused?
    ("rope", dict(), True),
    ("rope-swapped", dict(swap=True), True),
    ("near-rope-halves", dict(halves_differ=True), False),
    ("near-rope-twice", dict(twice=True), False),
    ("near-rope-cos-input", dict(cos_input=True), False),
    ("near-rope-split", dict(split=2), False),
    ("near-rope-pos-broadcast", dict(pos_batch=1), False),
)

CASES = (   # name, builder options, fused?
    ("pow-one-div", dict(), True),
    ("mulxx-div", dict(x_mul=True, div="x", gamma_first=False), True),
    ("pow-recip", dict(div="recip"), True),
    ("f16-cast", dict(f16=True), True),
    ("near-eps-input", dict(eps_input=True), False),
    ("near-twice-ms", dict(twice="ms"), False),
    ("near-twice-r", dict(twice="r"), False),
    ("near-twice-xf", dict(f16=True, twice="xf"), False),
    ("near-axis", dict(axis=1), False),
    ("near-gamma", dict(gamma_shape=[5, 16]), False),
)


def migrate(opmig, src, dst, target, extra, what):
    """Migrate; returns the rewrites' pass names or None."""
    rep = dst + ".json"
    r = subprocess.run([opmig, "migrate", src, "--target", target, "-o", dst, "--format",
                        "json", "--report", rep] + extra,
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, "%s: opmig migrate exit %d %s" % (what, r.returncode,
                                                               r.stderr.strip()[:300]))
    if r.returncode:
        return None
    return [x["pass"] for x in json.load(open(rep))["rewrites"]]


def fused_ops(path):
    m = onnx.load(path)
    ops = [n.op_type for n in m.graph.node]
    opset = max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))
    return ops, opset


def full_check(path, what):
    try:
        onnx.checker.check_model(path, full_check=True)
        check(True, "%s: onnx.checker full_check" % what)
    except onnx.checker.ValidationError as e:
        check(False, "%s: onnx.checker: %s" % (what, str(e).splitlines()[0]))


def main():
    args = ortlib.start(sys.argv)
    if not args:
        return 77
    opmig, work = args
    rules = os.path.join(work, "npu-fused.json")
    with open(rules, "w") as f:
        json.dump(RULES, f)
    fused_rules = ["--rules", rules]
    jobs, names = [], []
    rng = np.random.default_rng(11)

    # hand-built patterns
    for name, opts, fuse in CASES:
        src = os.path.join(work, name + ".onnx")
        onnx.save(rms(name, **opts), src)
        full_check(src, "%s: the source" % name)
        x = rng.standard_normal(SHAPE).astype(np.float16 if opts.get("f16") else np.float32)
        feeds = {"x": x}
        if opts.get("eps_input"):
            feeds["eps"] = np.array(0.05, np.float32)
        routes = [("sln", "npu-fused", fused_rules, "SimplifiedLayerNormalization", 17)]
        if not opts.get("f16"):
            routes.append(("rms23", "tensorrt", ["--opset", "23"], "RMSNormalization", 23))
        for tag, target, extra, op, want_opset in routes:
            dst = os.path.join(work, "%s-%s.onnx" % (name, tag))
            what = "%s on %s%s" % (name, target, " opset 23" if want_opset == 23 else "")
            if not fuse:
                extra = extra + ["--no-validate"]
            done = migrate(opmig, src, dst, target, extra, what)
            if done is None:
                continue
            ops, opset = fused_ops(dst)
            # no standalone norm op below opset 23 (onnx has none)
            want = 1 if fuse and want_opset >= 23 else 0
            check(done.count("fuse-rms-norm") == want and ops.count(op) == want and
                  opset == want_opset and
                  (not want or not {"Sqrt", "ReduceMean", "Pow"} & set(ops)),
                  "%s: %d fuse-rms-norm, ops %s at opset %d (want %d %s)"
                  % (what, done.count("fuse-rms-norm"), ops, opset, want, op))
            if want_opset <= 17:
                full_check(dst, what)
            jobs += [(src, feeds), (dst, feeds)]
            names.append((what, 2e-3 if opts.get("f16") else 1e-5))
    # hand-built rotary patterns
    for name, opts, fuse in ROPE_CASES:
        src = os.path.join(work, name + ".onnx")
        onnx.save(rope(name, **opts), src)
        full_check(src, "%s: the source" % name)
        feeds = {"x": rng.standard_normal(RSHAPE).astype(np.float32),
                 "position_ids": rng.integers(0, POS, size=(opts.get("pos_batch") or RSHAPE[0],
                                                            RSHAPE[2]))}
        if opts.get("cos_input"):
            feeds["cos_cache"] = rng.standard_normal((POS, RSHAPE[-1])).astype(np.float32)
        for tag, target, extra, dom in (("ms", "npu-fused", fused_rules, "com.microsoft"),
                                        ("rope23", "tensorrt", ["--opset", "23"], "")):
            dst = os.path.join(work, "%s-%s.onnx" % (name, tag))
            what = "%s on %s%s" % (name, target, " opset 23" if tag == "rope23" else "")
            done = migrate(opmig, src, dst, target,
                           extra + ([] if fuse else ["--no-validate"]), what)
            if done is None:
                continue
            m = onnx.load(dst)
            ops = [n.op_type for n in m.graph.node]
            rot = [n.domain for n in m.graph.node if n.op_type == "RotaryEmbedding"]
            want = 1 if fuse else 0
            check(done.count("fuse-rotary") == want and rot == [dom] * want and
                  (not fuse or ops == ["RotaryEmbedding"]),
                  "%s: %d fuse-rotary, ops %s (want %d RotaryEmbedding in '%s')"
                  % (what, done.count("fuse-rotary"), ops, want, dom))
            if tag == "ms":
                full_check(dst, what)
            jobs += [(src, feeds), (dst, feeds)]
            names.append((what, 1e-5))
    # blocked int4 weights (opset 21: onnxruntime-node checks them, onnx
    # 1.12 cannot)
    for name, opts, fuse in NBITS_CASES:
        src = os.path.join(work, name + ".onnx")
        m, codes = nbits(name, **opts)
        onnx.save(m, src)
        k = opts.get("k", 64)
        feeds = {"a": rng.standard_normal((3, 4, k)).astype(np.float32)}
        for target, extra in (("npu-fused", fused_rules), ("openvino", [])):
            dst = os.path.join(work, "%s-%s.onnx" % (name, target))
            what = "%s on %s" % (name, target)
            want = 1 if fuse and target == "npu-fused" else 0
            done = migrate(opmig, src, dst, target,
                           extra + ([] if want else ["--no-validate"]), what)
            if done is None:
                continue
            ops = [nd.op_type for nd in onnx.load(dst).graph.node]
            check(done.count("fuse-matmul-nbits") == want and ops.count("MatMulNBits") == want
                  and (not want or "DequantizeLinear" not in ops),
                  "%s: %d fuse-matmul-nbits, ops %s (want %d MatMulNBits)"
                  % (what, done.count("fuse-matmul-nbits"), ops, want))
            if not opts.get("w_input"):   # no int4 input from numpy
                jobs += [(src, feeds), (dst, feeds)]
                names.append((what, 1e-5))
    # the targets that declare no fused op leave the pattern alone
    src = os.path.join(work, "pow-one-div.onnx")
    for target, extra in (("openvino", []), ("tensorrt", [])):
        dst = os.path.join(work, "pow-one-div-%s-plain.onnx" % target)
        done = migrate(opmig, src, dst, target, extra + ["--no-validate"],
                       "pow-one-div on %s at opset 17" % target)
        if done is not None:
            ops, _ = fused_ops(dst)
            check("fuse-rms-norm" not in done and "Sqrt" in ops,
                  "pow-one-div on %s: no fusion where the target declares no fused op "
                  "for the model's opset (ops %s)" % (target, ops))
            full_check(dst, "pow-one-div on %s" % target)

    # the tiny decomposed decoder
    dec = os.path.join(work, "decoder.onnx")
    gen(dec)
    static = dims(1, 8, 0)
    tok = np.random.default_rng(25).integers(0, VOCAB, size=(1, 8))
    feeds = {"input_ids": tok.astype(np.int64), "attention_mask": np.ones((1, 8), np.int64),
             "position_ids": np.arange(8, dtype=np.int64).reshape(1, 8)}
    for i in range(LAYERS):
        for kind in ("key", "value"):
            feeds["past_key_values.%d.%s" % (i, kind)] = np.zeros((1, KV, 0, HD), np.float32)
    n_norm = 2 * LAYERS + 1
    for tag, target, extra, op in (("sln", "npu-fused", fused_rules,
                                    "SimplifiedLayerNormalization"),
                                   ("rms23", "tensorrt", ["--opset", "23"], "RMSNormalization"),
                                   ("rms23-dynamic", "tensorrt", ["--opset", "23"],
                                    "RMSNormalization"),
                                   ("rms23-fp16", "tensorrt", ["--opset", "23", "--precision",
                                                               "fp16"], "RMSNormalization")):
        dst = os.path.join(work, "decoder-%s.onnx" % tag)
        what = "decoder on %s%s%s%s" % (target, " opset 23" if tag != "sln" else "",
                                        ", symbolic dims" if "dynamic" in tag else "",
                                        ", float16" if "fp16" in tag else "")
        done = migrate(opmig, dec, dst, target,
                       extra + ([] if "dynamic" in tag else static), what)
        if done is None:
            continue
        ops, opset = fused_ops(dst)
        if tag == "sln":
            # opset 17: the 2 * LAYERS norms after a residual Add become
            # SkipSimplifiedLayerNormalization, the first layer's input norm
            # stays primitives, and nothing onnx lacks is written
            n_skip = ops.count("SkipSimplifiedLayerNormalization")
            check("fuse-rms-norm" not in done and op not in ops and
                  done.count("fuse-skip-norm") == 2 * LAYERS and n_skip == 2 * LAYERS and
                  ops.count("Sqrt") == 1, "%s: %d fuse-rms-norm, %d %s, %d fuse-skip-norm, "
                  "%d SkipSimplifiedLayerNormalization (want %d), %d Sqrt left (want 1)"
                  % (what, done.count("fuse-rms-norm"), ops.count(op), op,
                     done.count("fuse-skip-norm"), n_skip, 2 * LAYERS, ops.count("Sqrt")))
            full_check(dst, what)
        else:
            check(done.count("fuse-rms-norm") == n_norm and ops.count(op) == n_norm and
                  "Sqrt" not in ops, "%s: %d fuse-rms-norm, %d %s (want %d), no Sqrt left"
                  % (what, done.count("fuse-rms-norm"), ops.count(op), op, n_norm))
        rot = [n.domain for n in onnx.load(dst).graph.node if n.op_type == "RotaryEmbedding"]
        want = "com.microsoft" if tag == "sln" else ""
        check(done.count("fuse-rotary") == 2 * LAYERS and rot == [want] * (2 * LAYERS) and
              "Neg" not in ops, "%s: %d fuse-rotary, RotaryEmbedding in domains %s (want %d "
              "in '%s'), no Neg left" % (what, done.count("fuse-rotary"), rot, 2 * LAYERS, want))
        jobs += [(dec, feeds), (dst, feeds)]
        names.append((what, 1e-2 if "fp16" in tag else 1e-4))

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
