"""fp16_skip_rms_ort.py OPMIG WORKDIR: migrate --precision fp16 converts a
com.microsoft SkipSimplifiedLayerNormalization the target keeps to float16
(onnxruntime's CPU kernel takes float16 and computes the statistics in
float32, as a LayerNormalization with stash_type 1 does), where before it
stayed float32 as an op of another domain.  A float32 model: x (up to
about 1200, so a float16 square overflows 65504) -> SkipSimplified-
LayerNormalization(x, skip, gamma) -> Mul by x -> SkipSimplified-
LayerNormalization(.., x, gamma2, bias) with the sum output, migrated with
--precision fp16 to a rules file extending qnn with the op (float16 and
float32).  Checks: both nodes stay, read float16 (their inputs are float16
values, gamma and bias float16 initializers) and write float16 outputs;
the report says they run in float16 with float32 statistics;
onnx.checker full_check; onnxruntime-node runs the original and the
migrated model on the same inputs: every output finite and within 2^-8
of the largest |value| of the float32 original's (numpy's float16
statistics would overflow: checked to be inf); a target without the op
(qnn) still lowers it.  Exits 1 on a failure, 77 when onnxruntime-node is
absent."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402
from ortlib import check  # noqa: E402

H = 64
RULES = {"schema": 1, "id": "skip-rms-npu", "name": "qnn keeping SkipSimplifiedLayerNormalization",
         "vendor": "test", "family": "test", "description": "t1237's target", "notes": "test only",
         "extends": "qnn", "sources": ["t1237"],
         "ops": {"com.microsoft:SkipSimplifiedLayerNormalization":
                 {"dtypes": ["float16", "float32"]}}}


def model(path, rng):
    g1 = nh.from_array((rng.random(H) + 0.5).astype(np.float32), "gamma")
    g2 = nh.from_array((rng.random(H) + 0.5).astype(np.float32), "gamma2")
    bias = nh.from_array(rng.standard_normal(H).astype(np.float32), "bias")
    ms = "com.microsoft"
    nodes = [h.make_node("SkipSimplifiedLayerNormalization", ["x", "skip", "gamma"], ["a"],
                         name="norm1", domain=ms, epsilon=1e-6),
             h.make_node("Mul", ["a", "x"], ["b"], name="mul"),
             h.make_node("SkipSimplifiedLayerNormalization", ["b", "x", "gamma2", "bias"],
                         ["y", "", "", "sum"], name="norm2", domain=ms, epsilon=1e-6)]
    vi = [h.make_tensor_value_info(n, T.FLOAT, [2, 5, H]) for n in ("x", "skip")]
    out = [h.make_tensor_value_info(n, T.FLOAT, [2, 5, H]) for n in ("y", "sum")]
    m = h.make_model(h.make_graph(nodes, "skiprms", vi, out, [g1, g2, bias]),
                     opset_imports=[h.make_opsetid("", 17), h.make_opsetid(ms, 1)])
    m.ir_version = 8
    onnx.save(m, path)


def main():
    args = ortlib.start(sys.argv)
    if not args:
        return 77
    opmig, work = args
    rng = np.random.default_rng(1237)
    src, dst = os.path.join(work, "skiprms.onnx"), os.path.join(work, "skiprms16.onnx")
    rules = os.path.join(work, "skip-rms-npu.json")
    with open(rules, "w") as f:
        json.dump(RULES, f)
    model(src, rng)
    r = subprocess.run([opmig, "migrate", src, "--rules", rules, "--target", "skip-rms-npu",
                        "--precision", "fp16", "--no-validate", "-o", dst],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "migrate --precision fp16: exit %d %s" %
          (r.returncode, r.stderr.strip()[-300:]))
    if r.returncode:
        return ortlib.failures()
    check("2 SkipSimplifiedLayerNormalization nodes run in float16 with float32 statistics"
          in r.stdout, "the report says both norms run in float16 with float32 statistics")
    m = onnx.load(dst)
    inits = {t.name: t.data_type for t in m.graph.initializer}
    m2 = onnx.shape_inference.infer_shapes(m)
    types = {v.name: v.type.tensor_type.elem_type for v in
             list(m2.graph.value_info) + list(m2.graph.input) + list(m2.graph.output)}
    types.update(inits)
    norms = [n for n in m.graph.node if n.op_type == "SkipSimplifiedLayerNormalization"]
    check(len(norms) == 2, "both SkipSimplifiedLayerNormalization nodes stay (%d)" % len(norms))
    def out16(o):
        """python-onnx infers no com.microsoft op's outputs: float16 when
        each reader is a Cast up to float32 (opmig casts no float32 to
        float32) or reads it beside float16 values (onnxruntime's run
        below would refuse a mix)."""
        rd = [x for x in m.graph.node if o in x.input]
        return bool(rd) and all(
            (x.op_type == "Cast" and h.get_attribute_value(x.attribute[0]) == T.FLOAT) or
            any(types.get(i) == T.FLOAT16 for i in x.input if i != o) for x in rd)

    def in16(i):
        """float16 by inference, or made by a node of float16 operands."""
        pr = [x for x in m.graph.node if i in x.output]
        return types.get(i) == T.FLOAT16 or (
            bool(pr) and any(types.get(j) == T.FLOAT16 for j in pr[0].input))

    for n in norms:
        ins = [in16(i) for i in n.input if i]
        outs = [out16(o) for o in n.output if o]
        check(all(ins) and all(outs),
              "%s reads and writes float16 (inputs %s, outputs %s)" % (n.name, ins, outs))
    try:
        onnx.checker.check_model(m, full_check=True)
        check(True, "onnx.checker full_check")
    except Exception as e:      # ValidationError, or shape inference's
        check(False, "onnx.checker: %s" % str(e).splitlines()[0])
    qd = os.path.join(work, "skiprms-qnn.onnx")
    q = subprocess.run([opmig, "migrate", src, "--target", "qnn", "--precision", "fp16",
                        "--no-validate", "-o", qd], capture_output=True, text=True, timeout=120)
    check(q.returncode == 0 and not any(n.op_type == "SkipSimplifiedLayerNormalization"
                                        for n in onnx.load(qd).graph.node),
          "qnn (no SkipSimplifiedLayerNormalization in its rules) still lowers it")
    x = (rng.standard_normal((2, 5, H)) * 400).astype(np.float32)
    skip = (rng.standard_normal((2, 5, H)) * 400).astype(np.float32)
    with np.errstate(over="ignore"):
        s16 = (x + skip).astype(np.float16)
        check(not np.all(np.isfinite(np.mean(s16 * s16, axis=-1, dtype=np.float16))),
              "numpy's float16 statistics of these inputs overflow (the test has teeth)")
    res = ortlib.run_many([(src, {"x": x, "skip": skip}), (dst, {"x": x, "skip": skip})],
                          os.path.join(work, "ort"), timeout=120)
    if any(isinstance(a, str) for a in res):
        check(False, "onnxruntime: %s" % [a for a in res if isinstance(a, str)][0])
        return ortlib.failures()
    for name, want, got in zip(("y", "sum"), res[0], res[1]):
        tol = 2.0 ** -8 * float(np.max(np.abs(want)))
        err = ortlib.max_diff(want, got)
        check(np.all(np.isfinite(got)) and err <= tol,
              "%s: finite, within %.3g of the float32 original (max |diff| %.3g)" %
              (name, tol, err))
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
