"""fp16_stats_ort.py OPMIG WORKDIR: opmig migrate --precision fp16 keeps
the statistics of normalizations in float32 (issue 25; t1231).

The tiny float32 decoders of testdata/gen/make_decoder.py (genai: its
SimplifiedLayerNormalization and SkipSimplifiedLayerNormalizations lowered
to RMS norms; decomposed: torch's RMSNorm export) with the embedding table
scaled by 400 (hidden states of rms 400: a float16 square of them
overflows 65504) and unscaled, a seeded decomposed LayerNorm
((x - mean)^2) with inputs up to 3000, and a LayerNormalization-17 node
with such inputs, are migrated with --precision fp16 to qnn, tensorrt and
generic-npu at a static (batch, sequence, past); an RMSNormalization-23
node to qnn and tensorrt at opset 23.  Each written model passes
onnx.checker full_check (opset 17), its outputs in onnxruntime-node and
in opmig run --exact (float16 rounded at each op: onnxruntime's CPU
provider computes float16 ops that lack a float16 kernel in float32, so
it cannot show an overflow) are finite and within float16's tolerance of
onnxruntime's on the float32 original (relative to the largest |value|
of each tensor), and the migrate report names the norms whose statistics
stay float32.  A LayerNormalization with stash_type 16 stays float32 and
the report says why.  Exit 77 where onnxruntime-node is absent.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opmiglib  # noqa: E402
from decoder_common import check, dims, feeds_for, gen, ortlib  # noqa: E402

TOL = 1e-2          # float16 end to end, relative to the largest |value|
B, S, P = 1, 4, 3
TARGETS = ("qnn", "tensorrt", "generic-npu")


def scaled(src, dst, k):
    """src with its embedding table times k, written to dst."""
    m = onnx.load(src)
    for t in m.graph.initializer:
        if t.name == "model.embed_tokens.weight":
            a = numpy_helper.to_array(t) * np.float32(k)
            t.CopyFrom(numpy_helper.from_array(a.astype(np.float32), t.name))
    onnx.save(m, dst)
    return dst


def save(nodes, inits, path, h, opset=17):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, h])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5, 8])
    g = helper.make_graph(nodes, os.path.basename(path)[:-5], [x], [y],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8 if opset <= 17 else 10
    if opset <= 17:     # python-onnx here knows opsets up to 17
        onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)
    return path


def affine(rng, h):
    return {"gamma": rng.uniform(0.5, 1.5, h).astype(np.float32),
            "beta": rng.uniform(-0.5, 0.5, h).astype(np.float32),
            "w": (rng.standard_normal((h, 8)) / np.sqrt(h)).astype(np.float32),
            "axes": np.array([-1], np.int64), "eps": np.array(1e-5, np.float32),
            "two": np.array(2, np.float32)}


def ln_decomposed(rng, path, h=48):
    """torch's LayerNorm export, then a MatMul."""
    N = helper.make_node
    nodes = [N("ReduceMean", ["x"], ["mean"], axes=[-1]),
             N("Sub", ["x", "mean"], ["d"]),
             N("Pow", ["d", "two"], ["sq"]),
             N("ReduceMean", ["sq"], ["var"], axes=[-1]),
             N("Add", ["var", "eps"], ["ve"]),
             N("Sqrt", ["ve"], ["std"]),
             N("Div", ["d", "std"], ["n"]),
             N("Mul", ["n", "gamma"], ["ng"]),
             N("Add", ["ng", "beta"], ["nb"]),
             N("MatMul", ["nb", "w"], ["y"])]
    inits = affine(rng, h)
    del inits["axes"]
    return save(nodes, inits, path, h)


def ln_op(rng, path, h=48, **stash):
    """LayerNormalization-17 (stash_type default, or as given), then a
    MatMul."""
    N = helper.make_node
    nodes = [N("LayerNormalization", ["x", "gamma", "beta"], ["nb"], axis=-1, epsilon=1e-5,
               **stash),
             N("MatMul", ["nb", "w"], ["y"])]
    inits = affine(rng, h)
    for k in ("axes", "eps", "two"):
        del inits[k]
    return save(nodes, inits, path, h)


def rms_op(rng, path, h=48):
    """RMSNormalization-23 (stash_type default), then a MatMul."""
    N = helper.make_node
    nodes = [N("RMSNormalization", ["x", "gamma"], ["nb"], axis=-1, epsilon=1e-5),
             N("MatMul", ["nb", "w"], ["y"])]
    inits = affine(rng, h)
    for k in ("axes", "eps", "two", "beta"):
        del inits[k]
    return save(nodes, inits, path, h, 23)


def migrate(opmig, src, dst, target, extra):
    r = subprocess.run([opmig, "migrate", src, "--target", target, "-o", dst, "--precision",
                        "fp16", "--force", "--no-validate"] + extra, capture_output=True,
                       text=True, timeout=120)
    ok = r.returncode in (0, 1) and os.path.exists(dst)
    check(ok, "%s: opmig migrate --precision fp16 exit %d %s" % (
        os.path.basename(dst), r.returncode, r.stderr.strip()[-300:]))
    return r.stdout if ok else None


def rel(a, b):
    """max |a - b| relative to the largest |a|; inf for NaN or shapes."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        return float("inf")
    d = float(np.max(np.abs(a - b)) / max(1e-3, float(np.max(np.abs(a)))))
    return d if np.isfinite(d) else float("inf")


def main():
    args = ortlib.start(sys.argv)
    if not args:
        return 77
    opmig, work = args
    rng = np.random.default_rng(1231)
    cases = []      # (what, original, migrated, feeds, report, note wanted)
    for form in ("genai", "decomposed"):
        base = gen(os.path.join(work, form + ".onnx"), "--form", form)
        declared = {i.name for i in onnx.load(base).graph.input}
        feeds = {n: v for n, v in feeds_for(B, S, P, 31).items() if n in declared}
        check(set(feeds) == declared, "%s: feeds for every input" % form)
        for k in (1, 400):
            src = scaled(base, os.path.join(work, "%s-x%d.onnx" % (form, k)), k)
            for target in TARGETS:
                dst = os.path.join(work, "%s-x%d-%s.onnx" % (form, k, target))
                rep = migrate(opmig, src, dst, target, dims(B, S, P))
                if rep is not None:
                    cases.append(("%s decoder, embeddings x%d, on %s" % (form, k, target), src,
                                  dst, feeds, rep, ("RMS norms (first at",)))
    x = rng.standard_normal((2, 5, 48)).astype(np.float32)
    x[0] *= 3000 / np.max(np.abs(x[0]))
    x[1, :2] *= 0.05
    # LayerNormalization runs in float16 with stash_type 1, or its
    # lowering (generic-npu) stays float32 whole, as before
    for name, make, note in (("ln-decomposed", ln_decomposed, ("1 layer norm (first at",)),
                             ("ln-op", ln_op, ("1 LayerNormalization node runs in float16 "
                                               "with float32 statistics",
                                               "op's decomposition (its statistics)"))):
        src = make(rng, os.path.join(work, name + ".onnx"))
        for target in TARGETS:
            dst = os.path.join(work, "%s-%s.onnx" % (name, target))
            rep = migrate(opmig, src, dst, target, [])
            if rep is not None:
                cases.append(("%s on %s" % (name, target), src, dst, {"x": x}, rep, note))
    src = rms_op(rng, os.path.join(work, "rms-op.onnx"))
    for target in ("qnn", "tensorrt"):
        dst = os.path.join(work, "rms-op-%s.onnx" % target)
        rep = migrate(opmig, src, dst, target, ["--opset", "23"])
        if rep is not None:
            cases.append(("RMSNormalization-23 on %s" % target, src, dst, {"x": x}, rep,
                          ("1 RMSNormalization node runs in float16 with float32 statistics",)))
    # stash_type bfloat16: the op stays float32 whole, the report says why
    src = ln_op(rng, os.path.join(work, "ln-bf16-stash.onnx"), stash_type=16)
    dst = os.path.join(work, "ln-bf16-stash-tensorrt.onnx")
    rep = migrate(opmig, src, dst, "tensorrt", [])
    if rep is not None:
        ln = [n for n in onnx.load(dst).graph.node if n.op_type == "LayerNormalization"]
        vi = {v.name: v.type.tensor_type.elem_type for v in
              list(onnx.shape_inference.infer_shapes(onnx.load(dst)).graph.value_info) +
              list(onnx.load(dst).graph.input)}
        check(len(ln) == 1 and vi.get(ln[0].input[0]) == TensorProto.FLOAT,
              "LayerNormalization with stash_type 16 on tensorrt: its input stays float32")
        check("its stash_type asks for statistics in a type other than float32" in rep,
              "LayerNormalization with stash_type 16: the report says why it stays float32")
    jobs, exact = [], []
    for what, src, dst, feeds, rep, note in cases:
        m = onnx.load(dst)
        try:
            if max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx")) > 17:
                raise StopIteration
            onnx.checker.check_model(m, full_check=True)
            check(True, "%s: onnx.checker full_check" % what)
        except StopIteration:
            pass
        except Exception as e:  # noqa: BLE001 (any checker complaint fails)
            check(False, "%s: onnx.checker: %s" % (what, str(e).splitlines()[0]))
        half = sum(1 for t in m.graph.initializer if t.data_type == TensorProto.FLOAT16)
        check(half > 0, "%s: %d float16 initializers" % (what, half))
        check(any(t in rep for t in note), "%s: the report says '%s ...' %s" % (
            what, "' or '".join(note), [ln for ln in rep.splitlines() if "fp16:" in ln][:3]))
        # the target's inputs (generic-npu narrows int64 ids to int32)
        types = {i.name: onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[i.type.tensor_type.elem_type]
                 for i in m.graph.input}
        mine = {n: v.astype(types[n]) for n, v in feeds.items()}
        jobs += [(src, feeds), (dst, mine)]
        exact.append(opmiglib.run_exact(opmig, dst, mine))
    res = ortlib.run_many(jobs, os.path.join(work, "ort"), timeout=300)
    worst = 0.0
    for k, what, want, got in opmiglib.ort_pairs(res, [c[0] for c in cases]):
        for how, out in (("onnxruntime", got), ("opmig run --exact", exact[k])):
            worst = max(worst, opmiglib.check_close(
                "%s: %s: %d outputs, all finite, within %g of onnxruntime's on the float32 "
                "original (relative to the largest |value|)" % (what, how, len(want), TOL),
                want, out, rel, TOL))
    print("worst relative difference %.3g (tolerance %g)" % (worst, TOL))
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
