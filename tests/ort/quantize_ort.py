"""quantize_ort.py OPMIG WORKDIR: opmig quantize against onnxruntime, per
op.  Small float models (each op after a quantized Conv, or on its own)
are quantized by `opmig quantize` in the forms and types the case names
(QDQ, QOperator, dynamic; uint8/int8/uint16 activations, symmetric,
per-tensor, int4 weights; minmax, percentile, entropy); every result must
pass onnx.checker's full check (opset <= 17) and the report must say what
it did; then each quantized model runs in opmig (`opmig run`) and in one
onnxruntime-node process, twice: computing what the graph says (no graph
optimizations) and with all of onnxruntime's optimizations (QDQ node units
fused into its integer kernels).  Outputs must agree within one
quantization step of the output (the scale of the DequantizeLinear making
it), bit for bit on the integer paths (QLinearConv/QLinearMatMul outputs,
MatMulInteger/ConvInteger results) where onnxruntime computes what the graph
says.  Prints one line per case; exits 1 on a failure, 77 when
onnxruntime-node is unavailable.  Run by tests/cli/t1185-quantize.sh with
/usr/bin/python3."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402

RNG = np.random.default_rng(20261205)
X = (1, 4, 6, 6)


def he(*shape):
    fan = int(np.prod(shape[1:]))
    return (RNG.standard_normal(shape) * np.sqrt(2.0 / fan)).astype(np.float32)


class Net:
    def __init__(self):
        self.nodes, self.inits, self.k = [], [], 0

    def const(self, a, p="c"):
        self.k += 1
        n = "%s%d" % (p, self.k)
        self.inits.append(numpy_helper.from_array(np.asarray(a), n))
        return n

    def op(self, op, ins, n_out=1, **attrs):
        self.k += 1
        outs = ["%s%d" % (op.lower(), self.k) + ("_%d" % i if i else "") for i in range(n_out)]
        self.nodes.append(helper.make_node(op, ins, outs, name="%s_%d" % (op, self.k), **attrs))
        return outs[0] if n_out == 1 else outs

    def conv(self, x, cin, cout, k=1, **attrs):
        b = (RNG.standard_normal(cout) * 0.1).astype(np.float32)
        return self.op("Conv", [x, self.const(he(cout, cin, k, k), "w"), self.const(b, "b")],
                       kernel_shape=[k, k], pads=[k // 2] * 4, **attrs)

    def model(self, outs, in_shape=X, opset=13, extra_inputs=()):
        ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(in_shape))]
        ins += [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in extra_inputs]
        g = helper.make_graph(self.nodes, "q", ins,
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs],
                              self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 8 if opset <= 17 else 10
        if opset <= 17:
            m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
        return m


def after_conv(op, n_out=1, **attrs):
    """x -> Conv 1x1 -> op -> y"""
    def build():
        n = Net()
        y = n.op(op, [n.conv("x", 4, 4)], n_out, **attrs)
        return n.model(y if isinstance(y, list) else [y])
    return build


def with_const(op, const):
    def build():
        n = Net()
        c = n.conv("x", 4, 4)
        return n.model([n.op(op, [c, n.const(const)])])
    return build


def cases():
    c = {}
    c["Conv"] = lambda: (lambda n: n.model([n.conv(n.conv("x", 4, 8, 3), 8, 4, 3)]))(Net())
    def depthwise():
        n = Net()
        return n.model([n.op("Conv", [n.conv("x", 4, 4), n.const(he(4, 1, 3, 3), "w")],
                             kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=4)])
    c["Conv-depthwise"] = depthwise
    c["ConvTranspose"] = lambda: (lambda n: n.model([n.op("ConvTranspose", [
        n.conv("x", 4, 4), n.const(he(4, 3, 2, 2), "w"), n.const(np.float32([0.1, -0.2, 0.05]))],
        kernel_shape=[2, 2], strides=[2, 2])]))(Net())

    def matmul():
        n = Net()
        y = n.op("MatMul", ["x", n.const(he(6, 5), "w")])
        return n.model([n.op("MatMul", [y, n.const(he(5, 3), "w")])], in_shape=(2, 4, 6))
    c["MatMul"] = matmul

    def matmul_acts():
        n = Net()
        a = n.op("MatMul", ["x", n.const(he(6, 6), "w")])
        return n.model([n.op("MatMul", [a, n.op("Transpose", ["x"], perm=[0, 2, 1])])],
                       in_shape=(2, 4, 6))
    c["MatMul-activations"] = matmul_acts

    def gemm(tb):
        def build():
            n = Net()
            w = he(5, 6) if tb else he(6, 5)
            y = n.op("Gemm", ["x", n.const(w, "w"), n.const((RNG.standard_normal(5) * 0.1)
                                                              .astype(np.float32))], transB=tb)
            return n.model([n.op("Gemm", [y, n.const(he(3, 5), "w")], transB=1)], in_shape=(3, 6))
        return build
    c["Gemm-transB"] = gemm(1)
    c["Gemm"] = gemm(0)

    def two_convs(op, **attrs):
        def build():
            n = Net()
            return n.model([n.op(op, [n.conv("x", 4, 4), n.conv("x", 4, 4, 3)], **attrs)])
        return build
    c["Add"] = two_convs("Add")
    c["Mul"] = two_convs("Mul")
    c["Sub"] = two_convs("Sub")
    c["Concat"] = two_convs("Concat", axis=1)
    c["Add-const"] = with_const("Add", RNG.standard_normal((4, 1, 1)).astype(np.float32))
    c["Mul-const"] = with_const("Mul", RNG.uniform(0.5, 2, (1, 4, 1, 1)).astype(np.float32))
    c["AveragePool"] = after_conv("AveragePool", kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    c["GlobalAveragePool"] = after_conv("GlobalAveragePool")
    c["MaxPool"] = after_conv("MaxPool", kernel_shape=[2, 2], strides=[2, 2])
    c["GlobalMaxPool"] = after_conv("GlobalMaxPool")
    c["Relu"] = after_conv("Relu")
    c["LeakyRelu"] = after_conv("LeakyRelu", alpha=0.1)
    c["Sigmoid"] = after_conv("Sigmoid")
    c["Tanh"] = after_conv("Tanh")
    c["HardSigmoid"] = after_conv("HardSigmoid")
    c["Flatten"] = after_conv("Flatten")
    c["Transpose"] = after_conv("Transpose", perm=[0, 2, 3, 1])
    c["DepthToSpace"] = after_conv("DepthToSpace", blocksize=2)
    c["SpaceToDepth"] = after_conv("SpaceToDepth", blocksize=2)

    def clip(lo, hi):
        def build():
            n = Net()
            return n.model([n.op("Clip", [n.conv("x", 4, 4), n.const(np.float32(lo)),
                                          n.const(np.float32(hi))])])
        return build
    c["Clip-0-6"] = clip(0, 6)
    c["Clip-0-0.5"] = clip(0, 0.5)
    c["Clip--1-1"] = clip(-1, 1)

    def shaped(op, *consts, **attrs):
        def build():
            n = Net()
            return n.model([n.op(op, [n.conv("x", 4, 4)] + [n.const(v) for v in consts], **attrs)])
        return build
    c["Reshape"] = shaped("Reshape", np.int64([1, 8, 18]))
    c["Resize"] = shaped("Resize", np.float32([]), np.float32([1, 1, 2, 2]), mode="nearest")
    c["Resize-linear"] = shaped("Resize", np.float32([]), np.float32([1, 1, 2, 2]), mode="linear")
    c["Pad"] = shaped("Pad", np.int64([0, 0, 1, 1, 0, 0, 1, 1]))
    c["Slice"] = shaped("Slice", np.int64([1]), np.int64([3]), np.int64([1]))
    c["Unsqueeze"] = shaped("Unsqueeze", np.int64([0]))
    c["Tile"] = shaped("Tile", np.int64([1, 1, 2, 1]))
    c["Expand"] = shaped("Expand", np.int64([2, 4, 6, 6]))
    c["Gather"] = shaped("Gather", np.int64([2, 0]), axis=1)

    def split():
        n = Net()
        return n.model(n.op("Split", [n.conv("x", 4, 4), n.const(np.int64([1, 3]))], 2, axis=1))
    c["Split"] = split

    def cnn():
        n = Net()
        y = n.op("Relu", [n.conv("x", 4, 8, 3)])
        p = n.op("MaxPool", [y], kernel_shape=[2, 2], strides=[2, 2])
        z = n.op("Relu", [n.conv(p, 8, 8, 3)])
        a = n.op("Add", [z, p])
        g = n.op("Flatten", [n.op("GlobalAveragePool", [a])])
        return n.model([n.op("Gemm", [g, n.const(he(10, 8), "w"), n.const(np.zeros(10, np.float32))],
                             transB=1)])
    c["cnn"] = cnn

    def ties():
        n = Net()
        return n.model([n.op("Add", ["x", n.const(np.zeros((1, 4, 1, 1), np.float32))])])
    c["ties"] = ties
    return c


# Values at exact rounding ties: calibrated on [0, 255/64] (scale 1/64,
# zero point 0 in uint8), fed (k + 0.5) / 64: QuantizeLinear must round
# half to even.
TIES_CALIB = np.linspace(0, 255 / 64, int(np.prod(X)), dtype=np.float32).reshape(X)
TIES_FEED = ((np.arange(int(np.prod(X))) % 250 + 0.5) / 64).astype(np.float32).reshape(X)


# case: (model, quantize options, integer path)
PLAN = [(k, [], False) for k in cases()] + [
    ("Conv", ["--format", "qoperator"], True),
    ("MatMul", ["--format", "qoperator"], True),
    ("cnn", ["--format", "qoperator"], False),
    ("MatMul", ["--dynamic"], True),
    ("Gemm-transB", ["--dynamic"], True),
    ("Gemm", ["--dynamic", "--per-tensor"], True),
    ("Conv", ["--dynamic"], True),
    ("cnn", ["--activations", "int8"], False),
    ("cnn", ["--symmetric", "--activations", "int8"], False),
    ("cnn", ["--symmetric"], False),
    ("cnn", ["--per-tensor"], False),
    ("cnn", ["--weights", "uint8"], False),
    ("cnn", ["--method", "percentile", "--percentile", "99.9"], False),
    ("cnn", ["--method", "entropy"], False),
    ("Conv", ["--activations", "uint16"], False),
    ("Conv", ["--activations", "int16"], False),
    ("Conv", ["--weights", "int4"], False),
    ("Concat", ["--activations", "int8"], False),
    ("MatMul", ["--weights", "uint8"], False),
    ("ties", ["--calibrate", "CALIB"], True),
]


def out_steps(m):
    """Per graph output, the scale of the DequantizeLinear making it (or
    None)."""
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer
             if t.data_type == TensorProto.FLOAT}
    prod = {o: n for n in m.graph.node for o in n.output}
    steps = []
    for o in m.graph.output:
        n = prod.get(o.name)
        steps.append(float(inits[n.input[1]].max()) if n is not None and
                     n.op_type == "DequantizeLinear" and n.input[1] in inits else None)
    return steps


def main():
    opmig, work = sys.argv[1], sys.argv[2]
    why = ortlib.available()
    if why:
        print("skipped: %s" % why)
        return 77
    os.makedirs(work, exist_ok=True)
    builders = cases()
    jobs, meta, failures = [], [], []
    for k, (name, opts, integer) in enumerate(PLAN):
        m = builders[name]()
        src = os.path.join(work, "m%d.onnx" % k)
        dst = os.path.join(work, "m%d.q.onnx" % k)
        onnx.save(m, src)
        label = "%s %s" % (name, " ".join(opts) or "(qdq)")
        if "CALIB" in opts:
            cdir = os.path.join(work, "calib%d" % k)
            os.makedirs(cdir, exist_ok=True)
            np.save(os.path.join(cdir, "x.npy"), TIES_CALIB)
            opts = [cdir if o == "CALIB" else o for o in opts]
        r = subprocess.run([opmig, "quantize", src, "-o", dst, "--json", "--samples", "4",
                            "--threads", "1", "--no-fallback", "--force"] + opts,
                           capture_output=True, text=True)
        if r.returncode not in (0, 1) or not os.path.exists(dst):
            failures.append("%s: opmig quantize exited %d: %s" % (label, r.returncode,
                                                                  r.stderr.strip()))
            continue
        rep = json.loads(r.stdout)
        q = onnx.load(dst)
        ops = sorted({n.op_type for n in q.graph.node})
        quant_ops = {"QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul",
                     "DynamicQuantizeLinear", "MatMulInteger", "ConvInteger"}
        if not quant_ops & set(ops) or rep["nodes_quantized"] < 1:
            failures.append("%s: nothing quantized (%s)" % (label, ", ".join(ops)))
            continue
        if "qoperator" in opts and not {"QLinearConv", "QLinearMatMul"} & set(ops):
            failures.append("%s: no QLinear op (%s)" % (label, ", ".join(ops)))
        if "--dynamic" in opts and not {"MatMulInteger", "ConvInteger"} & set(ops):
            failures.append("%s: no integer op (%s)" % (label, ", ".join(ops)))
        opset = max(o.version for o in q.opset_import if o.domain in ("", "ai.onnx"))
        if opset <= 17:
            try:
                onnx.checker.check_model(q, full_check=True)
            except Exception as e:  # noqa: BLE001
                failures.append("%s: onnx.checker: %s" % (label, str(e).splitlines()[0]))
        shape = [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim]
        feed = {"x": TIES_FEED if name == "ties" else RNG.uniform(-1, 1, shape).astype(np.float32)}
        np.save(os.path.join(work, "x%d.npy" % k), feed["x"])
        jobs.append((dst, feed))
        meta.append((label, k, integer, out_steps(q), ops))
    plain = ortlib.run_many(jobs, os.path.join(work, "ort"))
    fused = ortlib.run_many(jobs, os.path.join(work, "ort-opt"), optimize=True)
    for (label, k, integer, steps, ops), a, b, (dst, _) in zip(meta, plain, fused, jobs):
        if isinstance(a, str) or isinstance(b, str):
            failures.append("%s: onnxruntime: %s" % (label, a if isinstance(a, str) else b))
            continue
        od = os.path.join(work, "out%d" % k)
        r = subprocess.run([opmig, "run", dst, os.path.join(work, "x%d.npy" % k), "-O", od,
                            "--out-format", "npy", "--threads", "1"], capture_output=True, text=True)
        if r.returncode:
            failures.append("%s: opmig run: %s" % (label, r.stderr.strip()))
            continue
        mine = [np.load(os.path.join(od, f)) for f in sorted(os.listdir(od))]
        worst_plain = worst_fused = 0.0
        ok = True
        for i, (o, x, y) in enumerate(zip(mine, a, b)):
            step = steps[i]
            tol = step * (1 + 1e-5) if step else 1e-5 * float(np.abs(x).max()) + 1e-6
            dp = float(np.abs(o - x).max())
            df = float(np.abs(o - y).max())
            if step:
                worst_plain = max(worst_plain, dp / step)
                worst_fused = max(worst_fused, df / step)
            exact = integer and dp != 0
            if dp > tol or df > tol or exact:
                ok = False
                failures.append("%s: output %d: opmig vs onnxruntime %g (optimized %g), "
                                "allowed %g%s" % (label, i, dp, df, 0 if integer else tol,
                                                  " (integer path)" if integer else ""))
        if ok:
            print("ok %-40s steps apart: %.2g as written, %.2g optimized" %
                  (label, worst_plain, worst_fused))
    print("%d cases, %d failures" % (len(PLAN), len(failures)))
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
