"""norm_valid_ort.py OPMIG WORKDIR: every model opmig migrate writes for a
Llama- or Qwen-shaped decoder is valid for the opset it declares (issue
25).  The tiny decoder of testdata/gen/make_decoder.py, decomposed and in
onnxruntime-genai's form, each in float32 and float16, and the qwen
preset's (q/k/v projection biases) in both forms in float32 (genai's: its first
norm a default-domain
SimplifiedLayerNormalization, the others com.microsoft
SkipSimplifiedLayerNormalization), is migrated at opset 17 to every target
in oprules/ and to "qnn-skip" (a rules file: qnn that also declares
com.microsoft SkipSimplifiedLayerNormalization), and to qnn and qnn-skip
at opset 23 (RMSNormalization-23, which qnn declares).  Each written model
of opset <= 17 must pass onnx.checker full_check (onnx 1.12; it skips the
com.microsoft domain, which onnxruntime checks when it loads); no written
model holds a default-domain SimplifiedLayerNormalization (onnx has none:
onnxruntime registers it there and nowhere else); each loads in
onnxruntime-node and gives the original's logits and present key/value
(static dims: batch 1, 5 new tokens after 3 past ones) within 1e-4 of the
largest |value| (float32: fused norms sum in another order, 100 times
what is seen), 2e-3 for the float16 decoder (fuse_gqa_ort.py's: float16's
2^-10, an ulp or two) and 1e-2 where migrate chose float16 for a float32
model (fuse_llm_ort.py's).  The fusions stay where a valid form exists:
on qnn-skip at opset 17 the 2 * LAYERS norms after a residual Add are
SkipSimplifiedLayerNormalization (the first layer's input norm stays
primitives, with a note saying why); at opset 23 qnn has 2 * LAYERS + 1
RMSNormalization (genai's form 1: its skip norms, lowered for qnn, stay
primitives), qnn-skip 1 with 2 * LAYERS SkipSimplifiedLayerNormalization.
A target that narrows int64 inputs to int32 gets them so.
All models run in one onnxruntime-node process.  Prints one line per
check; exits 1 on a failure, 77 when onnxruntime-node is absent.
A lone default-domain SimplifiedLayerNormalization (float32 and float16,
its inv_std_var read or not) migrated to qnn (which declares it) and
openvino becomes primitives (float16: statistics in float32 between two
Casts), passes full_check and equals onnxruntime's contrib kernel within
1e-5 (float32) or 2e-3 (float16's 2^-10 relative, an ulp or two)."""
import glob
import json
import os
import subprocess
import sys

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402
from decoder_common import LAYERS, TOP, VOCAB, check, dims, gen  # noqa: E402

B, S, P = 1, 5, 3            # batch, new tokens, past tokens
DIMS = dims(B, S, P)
SKIP_RULES = {"schema": 1, "id": "qnn-skip", "name": "qnn with SkipSimplifiedLayerNormalization",
              "vendor": "test", "family": "test", "description": "norm_valid_ort.py",
              "extends": "qnn", "sources": ["norm_valid_ort.py"],
              "ops": {"com.microsoft:SkipSimplifiedLayerNormalization":
                      {"dtypes": ["float32", "float16"]}}}
# (tag, form, dtype, more generator options)
FORMS = (("decomposed", "decomposed", "float32", []), ("decomposed", "decomposed", "float16", []),
         ("genai", "genai", "float32", []), ("genai", "genai", "float16", []),
         ("qwen", "decomposed", "float32", ["--preset", "qwen"]),
         ("qwen-genai", "genai", "float32", ["--preset", "qwen"]))
NP = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.FLOAT16: np.float16,
      onnx.TensorProto.INT64: np.int64, onnx.TensorProto.INT32: np.int32}


def feeds_for(path, rng):
    """Seeded inputs for the decoder's graph inputs (static dims above)."""
    out = {}
    for i in onnx.load(path, load_external_data=False).graph.input:
        dt = NP[i.type.tensor_type.elem_type]
        if i.name == "input_ids":
            out[i.name] = rng.integers(0, VOCAB, size=(B, S)).astype(dt)
        elif i.name == "attention_mask":
            out[i.name] = np.ones((B, S + P), dt)
        elif i.name == "position_ids":
            out[i.name] = np.tile(np.arange(P, P + S, dtype=dt), (B, 1))
        elif i.name.startswith("past_key_values."):
            d = [x.dim_value for x in i.type.tensor_type.shape.dim]
            out[i.name] = rng.standard_normal((B, d[1], P, d[3])).astype(dt)
        else:
            raise ValueError("%s: unexpected input %s" % (path, i.name))
    return out


def sln_model(f16, inv):
    """x [2, 5, 16] -> default-domain SimplifiedLayerNormalization (as
    onnxruntime-genai writes it; stash_type 1, eps large enough to show)
    -> y (and its inv_std_var, float32, as a second output)."""
    from onnx import TensorProto, helper, numpy_helper
    f = TensorProto.FLOAT16 if f16 else TensorProto.FLOAT
    g = (1 + 0.1 * np.random.default_rng(3).standard_normal(16)).astype(
        np.float16 if f16 else np.float32)
    outs = [helper.make_tensor_value_info("y", f, [2, 5, 16])]
    names = ["y"]
    if inv:
        outs.append(helper.make_tensor_value_info("inv", TensorProto.FLOAT, [2, 5, 1]))
        names.append("inv")
    n = helper.make_node("SimplifiedLayerNormalization", ["x", "gamma"], names, name="sln",
                         axis=-1, epsilon=0.05, stash_type=1)
    m = helper.make_model(helper.make_graph(
        [n], "sln", [helper.make_tensor_value_info("x", f, [2, 5, 16])], outs,
        [numpy_helper.from_array(g, "gamma")]), opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def migrate(opmig, src, dst, target, extra):
    """opmig migrate (written with --force where blockers remain); the
    JSON report, or None."""
    rep = dst + ".json"
    r = subprocess.run([opmig, "migrate", src, "--target", target, "-o", dst, "--force",
                        "--no-validate", "--format", "json", "--report", rep] + DIMS + extra,
                       capture_output=True, text=True, timeout=120)
    ok = r.returncode in (0, 1) and os.path.exists(dst)
    check(ok, "%s: opmig migrate exit %d %s" % (dst, r.returncode, r.stderr.strip()[:300]))
    return json.load(open(rep)) if ok else None


def main():
    args = ortlib.start(sys.argv)
    if not args:
        return 77
    opmig, work = args
    rules = os.path.join(work, "qnn-skip.json")
    with open(rules, "w") as f:
        json.dump(SKIP_RULES, f)
    targets = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(TOP, "oprules",
                                                                               "*.json")))
    routes = [(t, [], 17) for t in targets] + [("qnn-skip", ["--rules", rules], 17),
                                              ("qnn", [], 23),
                                              ("qnn-skip", ["--rules", rules], 23)]
    rng = np.random.default_rng(25)
    jobs, names = [], []
    for tag, form, dtype, more in FORMS:
        src = os.path.join(work, "%s-%s.onnx" % (tag, dtype))
        gen(src, "--form", form, "--dtype", dtype, *more)
        feeds = feeds_for(src, rng)
        for target, extra, opset in routes:
            dst = os.path.join(work, "%s-%s-%s-%d.onnx" % (tag, dtype, target, opset))
            what = "%s %s on %s at opset %d" % (tag, dtype, target, opset)
            rep = migrate(opmig, src, dst, target, extra + ["--opset", str(opset)])
            if rep is None:
                continue
            m = onnx.load(dst)
            got = max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))
            ops = [n.op_type for n in m.graph.node]
            sln = [n.name for n in m.graph.node if n.op_type == "SimplifiedLayerNormalization"
                   and n.domain in ("", "ai.onnx")]
            check(got == opset and not sln, "%s: opset %d, no default-domain "
                  "SimplifiedLayerNormalization (%s)" % (what, got, sln))
            if got <= 17:
                try:
                    onnx.checker.check_model(dst, full_check=True)
                    check(True, "%s: onnx.checker full_check" % what)
                except onnx.checker.ValidationError as e:
                    check(False, "%s: onnx.checker: %s" % (what, str(e).splitlines()[0]))
            if target.startswith("qnn"):
                skip = ops.count("SkipSimplifiedLayerNormalization")
                rms = ops.count("RMSNormalization")
                # genai's SkipSimplifiedLayerNormalization lowered for qnn
                # stays so (a lowering's output is never fused back)
                want = (2 * LAYERS if target == "qnn-skip" else 0,
                        (1 if target == "qnn-skip" or form == "genai" else 2 * LAYERS + 1)
                        if opset >= 23 else 0)
                check((skip, rms) == want, "%s: %d SkipSimplifiedLayerNormalization, %d "
                      "RMSNormalization (want %d, %d)" % ((what, skip, rms) + want))
                if target == "qnn-skip" and opset < 23:
                    done = [x["pass"] for x in rep["rewrites"]]
                    notes = [n for n in rep.get("notes", []) if "RMS norm" in n]
                    check(done.count("fuse-skip-norm") == (2 * LAYERS if form == "decomposed"
                                                           else 0) and
                          ops.count("Sqrt") == 1 and len(notes) == 1,
                          "%s: %d fuse-skip-norm, %d Sqrt (want 1: the first input norm), "
                          "a note on it: %s" % (what, done.count("fuse-skip-norm"),
                                                ops.count("Sqrt"), notes))
            tol = 2e-3 if dtype == "float16" else 1e-2 if rep["precision"] == "fp16" else 1e-4
            # the migrated model's own input dtypes (generic-npu narrows
            # int64 to int32)
            types = {i.name: NP[i.type.tensor_type.elem_type] for i in m.graph.input}
            jobs += [(src, feeds), (dst, {k: v.astype(types[k]) for k, v in feeds.items()})]
            names.append((what, tol))

    # a lone SimplifiedLayerNormalization as genai writes it (float16: its
    # statistics in float32 between Casts; inv_std_var read)
    for f16, inv in ((False, False), (False, True), (True, False), (True, True)):
        tag = "sln-%s%s" % ("f16" if f16 else "f32", "-inv" if inv else "")
        src = os.path.join(work, tag + ".onnx")
        onnx.save(sln_model(f16, inv), src)
        feeds = {"x": rng.standard_normal((2, 5, 16)).astype(np.float16 if f16 else np.float32)}
        for target in ("qnn", "openvino"):
            dst = os.path.join(work, "%s-%s.onnx" % (tag, target))
            what = "%s on %s" % (tag, target)
            if migrate(opmig, src, dst, target, []) is None:
                continue
            ops = [n.op_type for n in onnx.load(dst).graph.node]
            check("SimplifiedLayerNormalization" not in ops and "Sqrt" in ops and
                  ops.count("Cast") == (2 if f16 else 0), "%s: primitives %s" % (what, ops))
            try:
                onnx.checker.check_model(dst, full_check=True)
                check(True, "%s: onnx.checker full_check" % what)
            except onnx.checker.ValidationError as e:
                check(False, "%s: onnx.checker: %s" % (what, str(e).splitlines()[0]))
            jobs += [(src, feeds), (dst, feeds)]
            names.append((what, 2e-3 if f16 else 1e-5))

    res = ortlib.run_many(jobs, os.path.join(work, "ort"), timeout=300)
    worst = 0.0
    for k, (what, tol) in enumerate(names):
        want, got = res[2 * k], res[2 * k + 1]
        if isinstance(want, str) or isinstance(got, str):
            check(False, "%s: onnxruntime: %s / %s" % (what, want, got))
            continue
        check(np.all(np.isfinite(np.asarray(want[0], np.float64))) and
              np.ptp(np.asarray(want[0], np.float64)) > 1e-3,
              "%s: the original's output 0 finite, not constant" % what)
        bad = []
        for j, (a, b) in enumerate(zip(want, got)):
            scale = max(1.0, float(np.max(np.abs(np.asarray(a, np.float64)))))
            d = ortlib.max_diff(a, b) / scale
            worst = max(worst, d / tol)
            if d > tol:
                bad.append("output %d: %.3g" % (j, d))
        check(len(want) == len(got) and not bad,
              "%s: onnxruntime's outputs of the migrated model within %g of the "
              "original's (relative to the largest |value|) %s" % (what, tol, bad))
    print("largest difference: %.3g of the tolerance" % worst)
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
