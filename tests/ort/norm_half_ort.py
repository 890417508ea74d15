"""norm_half_ort.py OPMIG WORKDIR: float16 normalizations lowered to
standard ops equal onnxruntime's kernels (issue 25 item 3), and the skip
norms and RMSNormalization-23 in float32 too (see the end).

Seeded single-node float16 models of com.microsoft SkipLayerNormalization
and SkipSimplifiedLayerNormalization (hidden sizes 13, 37 and 70, not
multiples of 8; with and without bias and beta, a 2-D skip; their mean,
inv_std_var and input_skip_bias_sum outputs read or not) are migrated to
qnn and tensorrt (which have no such op), LayerNormalization-17 (Mean and
InvStdDev read, over one axis and two) to generic-npu,
RMSNormalization-23 to openvino at opset 23, GroupNormalization-18 and -21
to nnapi, and com.microsoft SimplifiedLayerNormalization (inv_std_var
read) to tensorrt, compared with onnxruntime's default-domain one (it
registers none in com.microsoft).  Each written model must hold
no normalization op but two Casts per norm (the statistics in float32,
as onnxruntime's kernels accumulate), pass onnx.checker full_check (opset
<= 17), and give onnxruntime-node's outputs of the original (its CPU
kernels) within float16's tolerance: 2e-3 of the output's largest |value|
(2^-10 relative: an ulp or two; the float32 statistics outputs too, which
onnxruntime computes from the unrounded sum); and so must opmig run
--exact's outputs of the written model (each op rounded to float16, as
a float16 device computes: onnxruntime's CPU provider runs float16 ops
that lack a float16 kernel in float32, so it alone would not see
statistics left in float16).  The data has rows of large values (|x| up
to 400: their squares overflow float16, so statistics in float16 give
inf and zeros) and rows of small ones with epsilons of 0.05 and 0.3 (a
wrong epsilon shows).
The tiny onnxruntime-genai float16 decoder (its SkipSimplifiedLayerNorms
blocked on these targets before) migrated to qnn and tensorrt keeps no
SkipSimplifiedLayerNormalization, passes full_check and gives the
original's logits and present key/value within 2e-3 (norm_valid_ort.py's
float16 tolerance).  A bfloat16 SkipSimplifiedLayerNormalization lowered
for tensorrt is checked against numpy's float32 computation (bf16_case);
on a target whose ReduceMean takes float16 only, a float16 skip norm stays
blocked with a note saying why (refusal_case).
float32 (DTYPES): SkipLayerNormalization (beta and bias, all four outputs
read; a 2-D skip), SkipSimplifiedLayerNormalization (bias, inv_std_var and
the sum read), hidden 13 to 70, migrated to qnn and tensorrt, and
RMSNormalization-23 to openvino at opset 23, on the same kind of data (own
seeded draws): no normalization op and no Cast left, full_check (opset <=
17), and onnxruntime-node's outputs of the lowered model, and opmig run's,
within 2 (h + 8) 2^-23 of each row's largest |value| of onnxruntime's on
the original (llm_ops_ort.py's bound: both sum h + 8 float32 terms; seen:
up to 4% of it).
Exits 1 on a failure, 77 when onnxruntime-node is
absent."""
import functools
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opmiglib  # noqa: E402
import ortlib  # noqa: E402
from decoder_common import check, dims, feeds_for, gen  # noqa: E402

TOL = 2e-3
# per dtype: the element type, the Casts a lowered norm holds (float16:
# its statistics in float32 between two), and the tolerance of a norm
# over h elements relative to each row's largest |value|: float16's an
# ulp or two (TOL); float32's as llm_ops_ort.py's bound, both sides sum
# h + 8 float32 terms (the mean, the mean square, the few operations
# after), each within (h + 8) 2^-23 of the row's magnitude, so they
# differ by at most twice that
DTYPES = {np.float16: dict(tp=TP.FLOAT16, casts=2, tol=lambda h: TOL, name="float16"),
          np.float32: dict(tp=TP.FLOAT, casts=0, tol=lambda h: 2 * (h + 8) * 2.0 ** -23,
                           name="float32")}
NORMS = ("SkipLayerNormalization", "SkipSimplifiedLayerNormalization", "LayerNormalization",
         "RMSNormalization", "SimplifiedLayerNormalization", "GroupNormalization")


def data(rng, shape, dt=np.float16):
    """data of dtype dt: normal rows, rows scaled to |x| up to 400 and rows
    of scale 0.05 (epsilon matters there)."""
    x = rng.standard_normal(shape)
    rows = x.reshape(-1, shape[-1])
    rows[0::3] *= 400 / np.max(np.abs(rows[0::3]))
    rows[1::3] *= 0.05
    return x.astype(dt)


def vec(rng, h, scale=1.0, dt=np.float16):
    return (scale * rng.standard_normal(h)).astype(dt)


def skip_model(rng, op, h, beta, bias, outs, eps, skip2d, dt=np.float16):
    """x [2, 3, h] + skip ([2, 3, h] or [3, h]) -> op, of dtype dt; outs:
    which of y, mean, inv_std_var, input_skip_bias_sum are graph outputs."""
    names = ["x", "skip", "gamma"]
    inits = [numpy_helper.from_array((1 + 0.2 * rng.standard_normal(h)).astype(dt), "gamma")]
    if op == "SkipLayerNormalization":
        names.append("beta" if beta else "")
        if beta:
            inits.append(numpy_helper.from_array(vec(rng, h, 0.5, dt), "beta"))
    if bias:
        names.append("bias")
        inits.append(numpy_helper.from_array(vec(rng, h, 0.5, dt), "bias"))
    while names[-1] == "":
        names.pop()
    all_outs = ["y", "mean", "inv", "sum"]
    out_names = [o if o in outs else "" for o in all_outs]
    while out_names[-1] == "":
        out_names.pop()
    node = helper.make_node(op, names, out_names, domain="com.microsoft", name="norm",
                            epsilon=eps)
    et = DTYPES[dt]["tp"]
    gouts = [helper.make_tensor_value_info(o, TP.FLOAT if o in ("mean", "inv") else et,
                                           [2, 3, 1] if o in ("mean", "inv") else [2, 3, h])
             for o in out_names if o]
    sk = [3, h] if skip2d else [2, 3, h]
    m = helper.make_model(helper.make_graph(
        [node], "skip", [helper.make_tensor_value_info("x", et, [2, 3, h]),
                         helper.make_tensor_value_info("skip", et, sk)], gouts, inits),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    feeds = {"x": data(rng, (2, 3, h), dt), "skip": data(rng, sk, dt)}
    return m, feeds


def ln_model(rng, h, axis, bias, stats, eps):
    """LayerNormalization-17 of float16 x [2, 3, 4, h] (stash_type 1,
    statistics float32) over the axes from axis on."""
    shape = [2, 3, 4, h]
    ns = shape[axis:]
    names = ["x", "scale"] + (["bias"] if bias else [])
    inits = [numpy_helper.from_array((1 + 0.2 * rng.standard_normal(ns)).astype(np.float16),
                                     "scale")]
    if bias:
        inits.append(numpy_helper.from_array((0.5 * rng.standard_normal(ns)).astype(
            np.float16), "bias"))
    outs = ["y", "mean", "inv"] if stats else ["y"]
    node = helper.make_node("LayerNormalization", names, outs, name="norm", axis=axis,
                            epsilon=eps)
    sdims = shape[:axis] + [1] * len(ns)
    gouts = [helper.make_tensor_value_info("y", TP.FLOAT16, shape)]
    gouts += [helper.make_tensor_value_info(o, TP.FLOAT, sdims) for o in outs[1:]]
    m = helper.make_model(helper.make_graph(
        [node], "ln", [helper.make_tensor_value_info("x", TP.FLOAT16, shape)], gouts, inits),
        opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m, {"x": data(rng, shape)}


def rms_model(rng, h, eps, dt=np.float16):
    """RMSNormalization-23 of x [2, 5, h] of dtype dt (stash_type 1)."""
    et = DTYPES[dt]["tp"]
    node = helper.make_node("RMSNormalization", ["x", "scale"], ["y"], name="norm", axis=-1,
                            epsilon=eps)
    m = helper.make_model(helper.make_graph(
        [node], "rms", [helper.make_tensor_value_info("x", et, [2, 5, h])],
        [helper.make_tensor_value_info("y", et, [2, 5, h])],
        [numpy_helper.from_array((1 + 0.2 * rng.standard_normal(h)).astype(dt), "scale")]),
        opset_imports=[helper.make_opsetid("", 23)])
    m.ir_version = 10
    return m, {"x": data(rng, (2, 5, h), dt)}


def ms_sln_model(rng, h, domain):
    """SimplifiedLayerNormalization of float16 x [2, 5, h] in domain
    (inv_std_var read, float32): onnxruntime registers it in the default
    domain only, so the default-domain twin is the com.microsoft one's
    reference."""
    node = helper.make_node("SimplifiedLayerNormalization", ["x", "scale"], ["y", "inv"],
                            name="norm", domain=domain, axis=-1, epsilon=0.05)
    m = helper.make_model(helper.make_graph(
        [node], "sln", [helper.make_tensor_value_info("x", TP.FLOAT16, [2, 5, h])],
        [helper.make_tensor_value_info("y", TP.FLOAT16, [2, 5, h]),
         helper.make_tensor_value_info("inv", TP.FLOAT, [2, 5, 1])],
        [numpy_helper.from_array((1 + 0.2 * rng.standard_normal(h)).astype(np.float16),
                                 "scale")]),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return m


def group_model(rng, opset, eps):
    """GroupNormalization of float16 x [2, 6, 5, 7], 3 groups: opset 18's
    scale and bias per group, 21's per channel (stash_type 1)."""
    n = 3 if opset < 21 else 6
    node = helper.make_node("GroupNormalization", ["x", "scale", "bias"], ["y"], name="norm",
                            num_groups=3, epsilon=eps)
    m = helper.make_model(helper.make_graph(
        [node], "group", [helper.make_tensor_value_info("x", TP.FLOAT16, [2, 6, 5, 7])],
        [helper.make_tensor_value_info("y", TP.FLOAT16, [2, 6, 5, 7])],
        [numpy_helper.from_array((1 + 0.2 * rng.standard_normal(n)).astype(np.float16),
                                 "scale"),
         numpy_helper.from_array((0.5 * rng.standard_normal(n)).astype(np.float16), "bias")]),
        opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10 if opset >= 21 else 8
    return m, {"x": data(rng, (2, 6, 5, 7))}


def migrate(opmig, src, dst, target, extra=()):
    r = subprocess.run([opmig, "migrate", src, "--target", target, "-o", dst,
                        "--no-validate"] + list(extra), capture_output=True, text=True,
                       timeout=120)
    ok = r.returncode == 0 and os.path.exists(dst)
    check(ok, "%s: opmig migrate to %s exit %d %s" % (
        os.path.basename(dst), target, r.returncode,
        "" if ok else (r.stdout + r.stderr).strip()[-400:]))
    return ok


F16_RULES = {"schema": 1, "id": "qnn-f16-mean", "name": "qnn with float16-only ReduceMean",
             "vendor": "test", "family": "test", "description": "norm_half_ort.py",
             "extends": "qnn", "sources": ["norm_half_ort.py"],
             "ops": {"ReduceMean": {"dtypes": ["float16"]}}}


def refusal_case(opmig, work, src):
    """A target whose ReduceMean takes float16 only: the float16 skip norm
    stays blocked (exit 1, nothing written) with a note saying why."""
    rules = os.path.join(work, "qnn-f16-mean.json")
    with open(rules, "w") as f:
        json.dump(F16_RULES, f)
    dst = os.path.join(work, "refused.onnx")
    r = subprocess.run([opmig, "migrate", src, "--target", "qnn-f16-mean", "--rules", rules,
                        "-o", dst, "--no-validate"], capture_output=True, text=True, timeout=60)
    note = "not lowered by skip-layer-norm: float16 data: its statistics in float, and the " \
        "target does not take float ReduceMean"
    check(r.returncode == 1 and not os.path.exists(dst) and note in r.stdout,
          "float16 skip norm on a target without float32 ReduceMean: exit %d, blocked with "
          "the note '%s'" % (r.returncode, note))


def bf16(a):
    """float32 values as bfloat16 bits, rounded to nearest even."""
    u = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7fff + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def unbf16(bits):
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def bf16_tensor(name, bits, shape):
    t = TP()
    t.name, t.data_type, t.raw_data = name, TP.BFLOAT16, bits.tobytes()
    t.dims.extend(shape)
    return t


def bf16_case(opmig, work):
    """bfloat16 SkipSimplifiedLayerNormalization (bias, inv_std_var and
    the sum read) lowered for tensorrt, which takes bfloat16: two Casts,
    full_check, and opmig run --exact's outputs equal numpy's float32
    computation of onnxruntime's kernel (sum, statistics and y in
    float32, y and the sum rounded to bfloat16 once) within 2 bfloat16
    ulps of each row's largest |value| (onnxruntime has no bfloat16
    kernel of it to ask)."""
    h, eps, rng = 37, 0.05, np.random.default_rng(1231)
    g, b = bf16(1 + 0.2 * rng.standard_normal(h)), bf16(0.5 * rng.standard_normal(h))
    x = bf16(np.concatenate([100 * rng.standard_normal((1, 3, h)),
                             0.05 * rng.standard_normal((1, 3, h))]))
    sk = bf16(rng.standard_normal((2, 3, h)))
    node = helper.make_node("SkipSimplifiedLayerNormalization", ["x", "skip", "gamma", "bias"],
                            ["y", "", "inv", "sum"], domain="com.microsoft", name="norm",
                            epsilon=eps)
    bt = TP.BFLOAT16
    m = helper.make_model(helper.make_graph(
        [node], "bf16", [helper.make_tensor_value_info(n, bt, [2, 3, h]) for n in ("x", "skip")],
        [helper.make_tensor_value_info("y", bt, [2, 3, h]),
         helper.make_tensor_value_info("inv", TP.FLOAT, [2, 3, 1]),
         helper.make_tensor_value_info("sum", bt, [2, 3, h])],
        [bf16_tensor("gamma", g, [h]), bf16_tensor("bias", b, [h])]),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    src, dst = os.path.join(work, "bf16-skip.onnx"), os.path.join(work, "bf16-skip-tensorrt.onnx")
    onnx.save(m, src)
    what = "bfloat16 SkipSimplifiedLayerNormalization on tensorrt"
    if not migrate(opmig, src, dst, "tensorrt"):
        return 0.0
    ops = [n.op_type for n in onnx.load(dst).graph.node]
    check("SkipSimplifiedLayerNormalization" not in ops and ops.count("Cast") == 2,
          "%s: primitives with two Casts %s" % (what, ops))
    opmiglib.full_check(dst, what)
    d = os.path.join(work, "bf16-run")
    os.makedirs(d, exist_ok=True)
    for name, bits in (("x", x), ("skip", sk)):
        with open(os.path.join(d, name + ".pb"), "wb") as f:
            f.write(bf16_tensor(name, bits, [2, 3, h]).SerializeToString())
    r = subprocess.run([opmig, "run", dst, "x=" + os.path.join(d, "x.pb"),
                        "skip=" + os.path.join(d, "skip.pb"), "--exact", "-O", d],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "%s: opmig run --exact exit %d %s" % (what, r.returncode,
                                                                  r.stderr.strip()[-300:]))
    if r.returncode:
        return 0.0
    got = []
    for i in range(3):
        t = TP()
        with open(os.path.join(d, "output_%d.pb" % i), "rb") as f:
            t.ParseFromString(f.read())
        a = unbf16(np.frombuffer(t.raw_data, np.uint16)) if t.data_type == bt else \
            numpy_helper.to_array(t)
        got.append(np.asarray(a, np.float32).reshape(list(t.dims)))
    s = unbf16(x) + unbf16(sk) + unbf16(b)
    inv = 1 / np.sqrt((s * s).mean(-1, keepdims=True) + eps)
    want = [unbf16(bf16(s * inv * unbf16(g))), inv, unbf16(bf16(s))]
    tol = 2 * 2.0 ** -7
    diffs = [rel_diff(w, a, by_row=True) for w, a in zip(want, got)]
    check(all(dd <= tol for dd in diffs), "%s: y, inv_std_var and the sum within %g of "
          "numpy's float32 computation: %s" % (what, tol, ["%.3g" % dd for dd in diffs]))
    return max(diffs) / tol


def rel_diff(a, b, by_row):
    """max |a - b| relative to the largest |a|: of each row along the last
    axis (by_row, where the rows are longer than 1: a row of small values
    counts as much as one of large ones), else of the whole tensor (the
    statistics, whose float32 differs by the sum's rounding, relative to
    the largest; the decoder's outputs)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        return float("inf")
    if by_row and a.shape[-1] > 1:
        scale = np.maximum(1e-3, np.max(np.abs(a), axis=-1, keepdims=True))
    else:
        scale = max(1e-3, float(np.max(np.abs(a))))
    return float(np.max(np.abs(a - b) / scale))


def main():
    args = ortlib.start(sys.argv)
    if not args:
        return 77
    opmig, work = args
    rng = np.random.default_rng(1230)
    cases = []
    k = 0
    for op in ("SkipLayerNormalization", "SkipSimplifiedLayerNormalization"):
        for h, beta, bias, outs, skip2d in ((13, True, True, ("y",), False),
                                            (37, False, False, ("y", "mean", "inv", "sum"),
                                             False),
                                            (70, True, False, ("y", "inv", "sum"), True),
                                            (13, False, True, ("y", "mean", "inv", "sum"),
                                             False),
                                            (37, True, True, ("y", "sum"), False)):
            if op == "SkipSimplifiedLayerNormalization":
                outs = tuple(o for o in outs if o != "mean")
            eps = (1e-5, 0.05, 0.3)[k % 3]
            k += 1
            m, feeds = skip_model(rng, op, h, beta, bias, outs, eps, skip2d)
            tag = "%s-h%d%s%s%s-%s" % (op, h, "-beta" if beta and op == "SkipLayerNormalization"
                                       else "", "-bias" if bias else "", "-2d" if skip2d else "",
                                       "+".join(outs))
            for target in ("qnn", "tensorrt"):
                cases.append((tag, m, feeds, target, [], 17, np.float16, h))
    for h, axis, bias, stats in ((13, -1, True, True), (37, -2, False, True), (70, -1, False,
                                                                              False)):
        eps = (0.05, 1e-5, 0.3)[k % 3]
        k += 1
        m, feeds = ln_model(rng, h, axis, bias, stats, eps)
        tag = "LayerNormalization-h%d-axis%d%s%s" % (h, axis, "-bias" if bias else "",
                                                   "-stats" if stats else "")
        cases.append((tag, m, feeds, "generic-npu", [], 17, np.float16, h))
    for h, eps in ((13, 0.05), (70, 1e-5)):
        m, feeds = rms_model(rng, h, eps)
        cases.append(("RMSNormalization-h%d" % h, m, feeds, "openvino", ["--opset", "23"], 23,
                      np.float16, h))

    for opset, eps in ((18, 0.05), (21, 0.3)):
        m, feeds = group_model(rng, opset, eps)
        cases.append(("GroupNormalization-%d" % opset, m, feeds, "nnapi", [], opset,
                      np.float16, 35))
    ms = ms_sln_model(np.random.default_rng(k), 37, "com.microsoft")
    ref = ms_sln_model(np.random.default_rng(k), 37, "")
    cases.append(("ms-SimplifiedLayerNormalization-h37", ms, {"x": data(rng, (2, 5, 37))},
                  "tensorrt", [], 17, np.float16, 37, ref))
    # float32: the skip norms and RMSNormalization-23 lowered for the
    # same targets, no Cast (own draws: the float16 cases keep theirs)
    rng32 = np.random.default_rng(1232)
    for j, (op, h, beta, bias, outs, skip2d) in enumerate((
            ("SkipLayerNormalization", 13, True, True, ("y", "mean", "inv", "sum"), False),
            ("SkipLayerNormalization", 70, False, False, ("y", "inv"), True),
            ("SkipSimplifiedLayerNormalization", 37, False, True, ("y", "inv", "sum"),
             False))):
        eps = (0.05, 1e-5, 0.3)[j]
        m, feeds = skip_model(rng32, op, h, beta, bias, outs, eps, skip2d, np.float32)
        tag = "%s-float32-h%d%s%s%s-%s" % (op, h, "-beta" if beta else "",
                                           "-bias" if bias else "", "-2d" if skip2d else "",
                                           "+".join(outs))
        for target in ("qnn", "tensorrt"):
            cases.append((tag, m, feeds, target, [], 17, np.float32, h))
    for h, eps in ((13, 0.05), (70, 1e-5)):
        m, feeds = rms_model(rng32, h, eps, np.float32)
        cases.append(("RMSNormalization-float32-h%d" % h, m, feeds, "openvino",
                      ["--opset", "23"], 23, np.float32, h))
    jobs, names, tols, fp16_runs = [], [], [], []
    for tag, m, feeds, target, extra, opset, dt, h, *ref in cases:
        src = os.path.join(work, tag + ".onnx")
        onnx.save(m, src)
        orig = src
        if ref:
            orig = os.path.join(work, tag + "-ref.onnx")
            onnx.save(ref[0], orig)
        dst = os.path.join(work, "%s-%s.onnx" % (tag, target))
        what = "%s on %s" % (tag, target)
        if not migrate(opmig, src, dst, target, extra):
            continue
        ops = [n.op_type for n in onnx.load(dst).graph.node]
        casts = DTYPES[dt]["casts"]
        check(not any(o in NORMS for o in ops) and ops.count("Cast") == casts,
              "%s: primitives with %d Casts %s" % (what, casts, ops))
        if opset <= 17:
            opmiglib.full_check(dst, what)
        jobs += [(orig, feeds), (dst, feeds)]
        names.append(what)
        tols.append(DTYPES[dt]["tol"](h))
        fp16_runs.append((len(names) - 1, opmiglib.run_exact(opmig, dst, feeds)))

    # the float16 genai decoder, its skip norms lowered
    B, S, P = 1, 5, 3
    src = gen(os.path.join(work, "genai-f16.onnx"), "--form", "genai", "--dtype", "float16")
    feeds = feeds_for(B, S, P, 7, dt=np.float16, mask=True, position_ids=False)
    declared = {i.name for i in onnx.load(src, load_external_data=False).graph.input}
    feeds = {n: v for n, v in feeds.items() if n in declared}
    check(set(feeds) == declared, "genai-f16: feeds for every input %s" % sorted(declared))
    for target in ("qnn", "tensorrt"):
        dst = os.path.join(work, "genai-f16-%s.onnx" % target)
        what = "genai float16 decoder on %s" % target
        r = subprocess.run([opmig, "migrate", src, "--target", target, "-o", dst, "--force",
                            "--no-validate"] + dims(B, S, P), capture_output=True, text=True,
                           timeout=120)
        check(r.returncode in (0, 1) and os.path.exists(dst),
              "%s: opmig migrate exit %d %s" % (what, r.returncode, r.stderr.strip()[-300:]))
        if not os.path.exists(dst):
            continue
        ops = [n.op_type for n in onnx.load(dst).graph.node]
        left = [o for o in ops if o in ("SkipSimplifiedLayerNormalization",
                                        "SimplifiedLayerNormalization")]
        blocked = [ln for ln in r.stdout.splitlines()
                   if ln.startswith("  node '") and "Normalization" in ln]
        check(not left and not blocked, "%s: no SkipSimplifiedLayerNormalization left, none "
              "blocked (%s %s)" % (what, left, blocked[:2]))
        opmiglib.full_check(dst, what)
        jobs += [(src, feeds), (dst, feeds)]
        names.append(what)
        tols.append(TOL)

    n_single = len(names) - 2
    res = ortlib.run_many(jobs, os.path.join(work, "ort"), timeout=300)
    worst = 0.0
    for k, what, want, got in opmiglib.ort_pairs(res, names):
        check(all(np.all(np.isfinite(np.asarray(a, np.float64))) for a in want),
              "%s: the original's %d outputs finite" % (what, len(want)))
        worst = max(worst, opmiglib.check_close(
            "%s: outputs within %.3g of onnxruntime's on the original (relative to the "
            "largest |value| of each row, or of the tensor)" % (what, tols[k]), want, got,
            functools.partial(rel_diff, by_row=k < n_single), tols[k]) / tols[k])
    # the lowered models as a float16 device computes them (onnxruntime's
    # CPU provider runs float16 ops without a float16 kernel in float32);
    # float32 ones as opmig's interpreter runs them
    for k, got in fp16_runs:
        want = res[2 * k]
        if isinstance(want, str):
            continue        # (a failure above)
        worst = max(worst, opmiglib.check_close(
            "%s: rounded to its dtype at each op (opmig run --exact), within %.3g of "
            "onnxruntime's on the original" % (names[k], tols[k]), want, got,
            functools.partial(rel_diff, by_row=True), tols[k]) / tols[k])
    worst = max(worst, bf16_case(opmig, work))
    refusal_case(opmig, work, os.path.join(work, cases[0][0] + ".onnx"))
    print("largest difference: %.3g of the tolerance" % worst)
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
