#!/usr/bin/python3
"""gen_ocr.py OUT.onnx: an OCR text recognizer shaped like the ones
PaddleOCR exports (PP-OCRv3's recognizer: a MobileNetV1-enhance backbone of
depthwise-separable convolutions with HardSwish and squeeze-excitation,
an SVTR neck of transformer mixing blocks, a CTC head), for the planning
benchmark (bench/plan.sh).  Opset 11 as PaddleOCR's paddle2onnx writes it:
batch-normalized convolutions, LayerNormalization written out as
ReduceMean/Sub/Pow/Sqrt/Div, Gelu as Erf arithmetic, attention as
MatMul/Softmax with Reshape/Transpose, HardSwish as x * HardSigmoid(x).
Input x float[N, 3, 48, 320] (N symbolic); output float[N, 80, 6625].
Seeded random weights (numpy Generator), about 765 nodes.  Needs onnx and
numpy (/usr/bin/python3)."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(20261205)


class Net:
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, p):
        self.n += 1
        return "%s_%d" % (p, self.n)

    def const(self, arr, p="w"):
        nm = self.name(p)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), nm))
        return nm

    def ints(self, v):
        return self.const(np.array(v, dtype=np.int64), "shape")

    def op(self, op, ins, n_out=1, **attrs):
        outs = [self.name(op.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, ins, outs, name=self.name("n"), **attrs))
        return outs[0] if n_out == 1 else outs

    def conv_bn(self, x, cin, cout, k, s=1, group=1, act="hardswish"):
        fan = cin // group * k * k
        w = (rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / fan)).astype(np.float32)
        y = self.op("Conv", [x, self.const(w)], kernel_shape=[k, k],
                    strides=[s, s] if isinstance(s, int) else s, group=group,
                    pads=[k // 2] * 4)
        y = self.op("BatchNormalization", [
            y, self.const(np.ones(cout, np.float32)), self.const(np.zeros(cout, np.float32)),
            self.const((rng.standard_normal(cout) * 0.1).astype(np.float32)),
            self.const((rng.random(cout) + 0.5).astype(np.float32))], epsilon=1e-5)
        if act == "hardswish":    # HardSwish is opset 14: x * hardsigmoid(x)
            y = self.op("Mul", [y, self.op("HardSigmoid", [y], alpha=1.0 / 6, beta=0.5)])
        elif act == "relu":
            y = self.op("Relu", [y])
        return y

    def se(self, x, c):
        p = self.op("GlobalAveragePool", [x])
        w1 = (rng.standard_normal((c // 4, c, 1, 1)) * np.sqrt(2.0 / c)).astype(np.float32)
        w2 = (rng.standard_normal((c, c // 4, 1, 1)) * np.sqrt(8.0 / c)).astype(np.float32)
        h = self.op("Relu", [self.op("Conv", [p, self.const(w1), self.const(np.zeros(c // 4, np.float32))],
                                     kernel_shape=[1, 1])])
        h = self.op("Conv", [h, self.const(w2), self.const(np.zeros(c, np.float32))], kernel_shape=[1, 1])
        h = self.op("HardSigmoid", [h], alpha=0.2, beta=0.5)
        return self.op("Mul", [x, h])

    def dws(self, x, cin, cout, s, se=False):
        y = self.conv_bn(x, cin, cin, 3, s, group=cin)
        if se:
            y = self.se(y, cin)
        return self.conv_bn(y, cin, cout, 1)

    def linear(self, x, cin, cout):
        w = (rng.standard_normal((cin, cout)) * np.sqrt(1.0 / cin)).astype(np.float32)
        y = self.op("MatMul", [x, self.const(w)])
        return self.op("Add", [y, self.const(np.zeros(cout, np.float32), "b")])

    def layer_norm(self, x, c):
        mean = self.op("ReduceMean", [x], axes=[-1], keepdims=1)
        d = self.op("Sub", [x, mean])
        var = self.op("ReduceMean", [self.op("Pow", [d, self.const(np.float32(2.0), "two")])],
                      axes=[-1], keepdims=1)
        sd = self.op("Sqrt", [self.op("Add", [var, self.const(np.float32(1e-5), "eps")])])
        y = self.op("Div", [d, sd])
        y = self.op("Mul", [y, self.const(np.ones(c, np.float32), "g")])
        return self.op("Add", [y, self.const(np.zeros(c, np.float32), "beta")])

    def gelu(self, x):
        e = self.op("Erf", [self.op("Div", [x, self.const(np.float32(np.sqrt(2.0)), "r2")])])
        h = self.op("Mul", [self.op("Add", [e, self.const(np.float32(1.0), "one")]),
                            self.const(np.float32(0.5), "half")])
        return self.op("Mul", [x, h])

    def attention(self, x, c, heads, t):
        qkv = self.linear(x, c, 3 * c)
        qkv = self.op("Reshape", [qkv, self.ints([0, t, 3, heads, c // heads])])
        qkv = self.op("Transpose", [qkv], perm=[2, 0, 3, 1, 4])
        q, k, v = self.op("Split", [qkv], n_out=3, axis=0, split=[1, 1, 1])
        q = self.op("Squeeze", [q], axes=[0])
        k = self.op("Squeeze", [k], axes=[0])
        v = self.op("Squeeze", [v], axes=[0])
        a = self.op("MatMul", [q, self.op("Transpose", [k], perm=[0, 1, 3, 2])])
        a = self.op("Mul", [a, self.const(np.float32((c // heads) ** -0.5), "scale")])
        a = self.op("Softmax", [a], axis=-1)
        y = self.op("Transpose", [self.op("MatMul", [a, v])], perm=[0, 2, 1, 3])
        y = self.op("Reshape", [y, self.ints([0, t, c])])
        return self.linear(y, c, c)

    def block(self, x, c, heads, t):
        h = self.attention(self.layer_norm(x, c), c, heads, t)
        x = self.op("Add", [x, h])
        h = self.linear(self.gelu(self.linear(self.layer_norm(x, c), c, 2 * c)), 2 * c, c)
        return self.op("Add", [x, h])


def build():
    n = Net()
    x = "x"
    # backbone: MobileNetV1-enhance, strides (2,1) on the height late on
    y = n.conv_bn(x, 3, 16, 3, 2)
    cfg = [(16, 32, 1, False), (32, 64, 1, False), (64, 64, 1, False), (64, 128, (2, 1), False),
           (128, 128, 1, False), (128, 256, (2, 1), False)] + \
        [(256, 256, 1, False)] * 5 + [(256, 256, 1, True)] * 6 + \
        [(256, 512, (2, 1), True), (512, 512, 1, True), (512, 512, 1, True)]
    for cin, cout, s, se in cfg:
        y = n.dws(y, cin, cout, s, se)
    y = n.op("MaxPool", [y], kernel_shape=[2, 2], strides=[2, 2])        # [N, 512, 1, 80]
    # neck: SVTR mixing (conv down to 64 channels, 2 transformer blocks,
    # conv back), then the sequence
    h = n.conv_bn(y, 512, 64, 3)
    h = n.conv_bn(h, 64, 120, 1)
    seq = n.op("Transpose", [n.op("Reshape", [h, n.ints([0, 120, 80])])], perm=[0, 2, 1])
    for _ in range(11):
        seq = n.block(seq, 120, 8, 80)
    seq = n.layer_norm(seq, 120)
    h = n.op("Reshape", [n.op("Transpose", [seq], perm=[0, 2, 1]), n.ints([0, 120, 1, 80])])
    h = n.conv_bn(h, 120, 512, 1)
    h = n.op("Concat", [y, h], axis=1)
    h = n.conv_bn(h, 1024, 64, 3)
    h = n.conv_bn(h, 64, 120, 1)
    h = n.op("Squeeze", [h], axes=[2])
    h = n.op("Transpose", [h], perm=[0, 2, 1])                            # [N, 80, 120]
    h = n.linear(h, 120, 6625)
    out = n.op("Softmax", [h], axis=2)
    g = helper.make_graph(n.nodes, "ocr_rec",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 48, 320])],
                          [helper.make_tensor_value_info(out, TensorProto.FLOAT, ["N", 80, 6625])],
                          n.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)],
                          producer_name="opmig-bench-ocr")
    m.ir_version = 6
    return m


def main():
    m = build()
    onnx.checker.check_model(m)
    onnx.save(m, sys.argv[1])
    print("%s: %d nodes" % (sys.argv[1], len(m.graph.node)))


if __name__ == "__main__":
    main()
