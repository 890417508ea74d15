"""lowp_ort.py OPMIG WORKDIR: float16 and bfloat16 computed in float32.
One small model per op (seeded random weights and inputs), in float16 and
in bfloat16, runs in opmig three ways: as usual (float32 arithmetic, one
rounding at each op's output), with --exact (double arithmetic, one
rounding) and, for float16, in onnxruntime-node (its CPU provider places
Casts to float32 around the nodes).  Every output element must lie within
one unit in the last place of the low-precision format (at the value's
magnitude, float16: 2^-10 relative, bfloat16: 2^-7) of the double result,
plus 1e-6 of the output's largest magnitude (float32 accumulation in sums
of hundreds of terms); and opmig's float16 results no further from the
double result than onnxruntime's.  (onnxruntime is no float16 reference
here: around nodes it has no float16 kernel for it places Casts to float32
and back, then removes Cast pairs, the model's own float32 -> float16
input Cast with them, so several of its results are not float16 values
and lie 5-100 bounds from the double result.)  Prints one line per case; exits 1 on a failure."""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402

RNG = np.random.default_rng(940)
LOW = {"float16": (TensorProto.FLOAT16, 10), "bfloat16": (TensorProto.BFLOAT16, 7)}


def w(*shape, scale=None):
    fan = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    return (RNG.standard_normal(shape) * (scale or np.sqrt(2.0 / fan))).astype(np.float32)


def cases():
    """name: (input shape, [(op, extra inputs as float32 arrays or None, attrs)])"""
    x4 = (1, 8, 12, 12)
    return {
        "Conv": (x4, [("Conv", [w(16, 8, 3, 3), w(16, scale=0.1)], {"pads": [1] * 4})]),
        "Conv-dilated-group": (x4, [("Conv", [w(8, 4, 3, 3)], {"pads": [2] * 4,
                                                               "dilations": [2, 2], "group": 2})]),
        "ConvTranspose": (x4, [("ConvTranspose", [w(8, 4, 2, 2)], {"strides": [2, 2]})]),
        "MatMul": ((2, 5, 64), [("MatMul", [w(64, 48)], {})]),
        "Gemm": ((4, 64), [("Gemm", [w(32, 64), w(32, scale=0.1)], {"transB": 1})]),
        "Softmax": ((3, 40), [("Softmax", [], {"axis": -1})]),
        "LayerNormalization": ((2, 6, 32), [("LayerNormalization",
                                             [w(32, scale=1.0), w(32, scale=0.1)],
                                             {"axis": -1})]),
        "ReduceSum": ((4, 300), [("ReduceSum", [np.int64([1])], {"keepdims": 0})]),
        "ReduceMean": ((4, 300), [("ReduceMean", [], {"axes": [1]})]),
        "AveragePool": (x4, [("AveragePool", [], {"kernel_shape": [3, 3], "pads": [1] * 4})]),
        "MaxPool": (x4, [("MaxPool", [], {"kernel_shape": [2, 2], "strides": [2, 2]})]),
        "GlobalAveragePool": (x4, [("GlobalAveragePool", [], {})]),
        "BatchNormalization": (x4, [("BatchNormalization",
                                     [w(8, scale=1), w(8, scale=0.1), w(8, scale=0.1),
                                      np.abs(w(8, scale=1)) + 0.5], {})]),
        "elementwise": ((3, 50), [("Sigmoid", [], {}), ("Mul", [w(50, scale=2)], {}),
                                  ("Tanh", [], {}), ("Add", [w(50)], {}), ("Exp", [], {}),
                                  ("Sqrt", [], {}), ("Erf", [], {}), ("Relu", [], {})]),
        "LSTM": ((5, 2, 8), [("LSTM", [w(1, 64, 8, scale=0.3), w(1, 64, 16, scale=0.3)],
                              {"hidden_size": 16})]),
        "rounding": ((3, 50), [("Mul", [w(50, scale=8)], {}), ("Floor", [], {}),
                               ("Add", [w(50)], {}), ("Ceil", [], {}), ("Mul", [w(50)], {}),
                               ("Round", [], {}), ("Neg", [], {}), ("Abs", [], {}),
                               ("Mul", [w(50)], {}), ("Sign", [], {})]),
        "Greater": ((3, 50), [("Greater", [w(50)], {})]),
        "LessOrEqual": ((3, 50), [("LessOrEqual", [w(50)], {})]),
        "Equal": ((3, 50), [("Relu", [], {}), ("Equal", [np.zeros(50, np.float32)], {})]),
        "ArgMax": ((4, 30, 5), [("ArgMax", [], {"axis": 1})]),
        "ArgMin": ((4, 30), [("ArgMin", [], {"axis": 1, "select_last_index": 1})]),
        "CumSum": ((3, 200), [("CumSum", [np.int64(1)], {})]),
    }


def build(name, shape, chain, low):
    et = LOW[low][0]
    nodes = [helper.make_node("Cast", ["x"], ["h0"], to=et)]
    inits, cur = [], "h0"
    for k, (op, extra, attrs) in enumerate(chain):
        ins = [cur]
        for j, a in enumerate(extra):
            t = numpy_helper.from_array(a, "c%d_%d" % (k, j))
            if a.dtype == np.int64:   # an index operand, as it is
                inits.append(t)
                ins.append(t.name)
                continue
            f = helper.make_tensor("c%d_%d" % (k, j), et, a.shape, a.ravel().tolist())
            inits.append(f if low == "float16" else t)
            if low == "bfloat16":   # as float32 initializer, cast in the graph
                nodes.append(helper.make_node("Cast", [t.name], [t.name + "_l"], to=et))
                ins.append(t.name + "_l")
            else:
                ins.append(t.name)
        out = "h%d" % (k + 1)
        nodes.append(helper.make_node(op, ins, [out], **attrs))
        cur = out
    nodes.append(helper.make_node("Cast", [cur], ["y"], to=TensorProto.FLOAT))
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                      list(shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    vi = {v.name: v for v in onnx.shape_inference.infer_shapes(m).graph.value_info}
    m.graph.output[0].type.tensor_type.shape.CopyFrom(vi[cur].type.tensor_type.shape)
    return m


def run(opmig, model, x, od, extra):
    r = subprocess.run([opmig, "run", model, x, "-O", od, "--out-format", "npy",
                        "--threads", "1"] + extra, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("opmig run %s: %s" % (" ".join(extra), r.stderr.strip()))
    return np.load(os.path.join(od, "output_0.npy")).astype(np.float64)


def bound(ref, bits):
    """one ulp of the format at each value's magnitude, plus 1e-6 of the
    largest magnitude"""
    mag = np.maximum(np.abs(ref), 2.0 ** -14)
    return 2.0 ** (np.floor(np.log2(mag)) - bits) + 1e-6 * float(np.abs(ref).max())


def main():
    opmig, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    why = ortlib.available()
    jobs, checks, failures = [], [], []
    for name, (shape, chain) in cases().items():
        x = RNG.uniform(-1, 1, shape).astype(np.float32)
        xf = os.path.join(work, "%s.x.npy" % name)
        np.save(xf, x)
        for low in LOW:
            label = "%s %s" % (name, low)
            mf = os.path.join(work, "%s.%s.onnx" % (name, low))
            m = build(name, shape, chain, low)
            if low == "float16":
                onnx.checker.check_model(m, full_check=True)
            onnx.save(m, mf)
            try:
                fast = run(opmig, mf, xf, os.path.join(work, label.replace(" ", ".") + ".f"), [])
                ex = run(opmig, mf, xf, os.path.join(work, label.replace(" ", ".") + ".e"),
                         ["--exact"])
            except RuntimeError as e:
                failures.append("%s: %s" % (label, e))
                continue
            b = bound(ex, LOW[low][1])
            d = np.abs(fast - ex)
            worst = float((d / b).max())
            if fast.shape != ex.shape or worst > 1:
                failures.append("%s: float32 path %.3g of the bound from the double one" %
                                (label, worst))
                continue
            print("ok %-32s float32 vs double: %.3g of the bound, %.2f%% of elements differ" %
                  (label, worst, 100.0 * float(np.mean(d > 0))))
            if low == "float16" and not why:
                jobs.append((mf, {"x": x}))
                checks.append((label, worst, ex, b))
    if jobs:
        for (label, ours, ex, b), r in zip(checks, ortlib.run_many(jobs, os.path.join(work, "ort"))):
            if isinstance(r, str):
                failures.append("%s: onnxruntime: %s" % (label, r))
                continue
            theirs = float((np.abs(r[0].astype(np.float64) - ex) / b).max())
            if ours > max(1.0, theirs):
                failures.append("%s: opmig %.3g of the bound from the double result, "
                                "onnxruntime %.3g" % (label, ours, theirs))
            else:
                print("ok %-32s onnxruntime: %.3g of the bound from the double result" %
                      (label, theirs))
    elif why:
        print("notice: onnxruntime-node absent (%s), its comparison skipped" % why)
    for f in failures:
        print("FAIL " + f)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
