#!/usr/bin/python3
"""gen_nets.py OUTDIR: the interpreter benchmark's models (issue 5), with
random weights from a seeded numpy Generator (byte-identical every run):

  resnet50.onnx     ResNet-50-style: 7x7 stem, max pool, bottleneck stages
                    [3, 4, 6, 3] (batch norm folded into conv bias),
                    global average pool, Gemm 2048->1000; input 1x3x224x224
  mobilenetv2.onnx  MobileNetV2-style: inverted residual blocks (1x1 expand,
                    3x3 depthwise, 1x1 project; Clip 0..6), width 1.0,
                    input 1x3x224x224
  bert6.onnx        6-layer BERT-base-style encoder: hidden 768, 12 heads,
                    FFN 3072, erf Gelu, LayerNormalization; input hidden
                    states 1x128x768 (no embeddings)

Needs onnx and numpy (/usr/bin/python3)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(20261203)


class Net:
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, p):
        self.n += 1
        return f"{p}{self.n}"

    def const(self, arr, p="w"):
        nm = self.name(p)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), nm))
        return nm

    def op(self, op, ins, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, ins, [out], **attrs))
        return out

    def conv(self, x, cin, cout, k, s=1, group=1, act=None):
        fan = cin // group * k * k
        w = rng.standard_normal((cout, cin // group, k, k), dtype=np.float32)
        w *= np.float32(np.sqrt(2.0 / fan))
        b = (rng.standard_normal(cout, dtype=np.float32) * 0.01).astype(np.float32)
        y = self.op("Conv", [x, self.const(w), self.const(b, "b")],
                    kernel_shape=[k, k], strides=[s, s], group=group,
                    pads=[k // 2] * 4)
        if act == "relu":
            y = self.op("Relu", [y])
        elif act == "relu6":
            y = self.op("Clip", [y, self.lo, self.hi])
        return y

    def model(self, x_info, out, out_shape, opset):
        g = helper.make_graph(self.nodes, "bench", [x_info],
                              [helper.make_tensor_value_info(out, TensorProto.FLOAT, out_shape)],
                              self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="opmig-bench")
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


def head(net, x, cin):
    y = net.op("GlobalAveragePool", [x])
    y = net.op("Flatten", [y], axis=1)
    w = rng.standard_normal((1000, cin), dtype=np.float32) * np.float32(1 / np.sqrt(cin))
    return net.op("Gemm", [y, net.const(w), net.const(np.zeros(1000, np.float32), "b")],
                  transB=1)


def resnet50():
    net = Net()
    x = net.conv("input", 3, 64, 7, 2, act="relu")
    x = net.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)
    cin = 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(blocks):
            s = stride if i == 0 else 1
            y = net.conv(x, cin, width, 1, act="relu")
            y = net.conv(y, width, width, 3, s, act="relu")
            y = net.conv(y, width, width * 4, 1)
            sc = net.conv(x, cin, width * 4, 1, s) if i == 0 else x
            x = net.op("Relu", [net.op("Add", [y, sc])])
            cin = width * 4
    out = head(net, x, cin)
    info = helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 224, 224])
    return net.model(info, out, [1, 1000], 13)


def mobilenetv2():
    net = Net()
    net.lo = net.const(np.array(0, np.float32), "lo")
    net.hi = net.const(np.array(6, np.float32), "hi")
    x = net.conv("input", 3, 32, 3, 2, act="relu6")
    cin = 32
    for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):
        for i in range(n):
            st = s if i == 0 else 1
            hid = cin * t
            y = net.conv(x, cin, hid, 1, act="relu6") if t != 1 else x
            y = net.conv(y, hid, hid, 3, st, group=hid, act="relu6")
            y = net.conv(y, hid, c, 1)
            x = net.op("Add", [x, y]) if st == 1 and cin == c else y
            cin = c
    x = net.conv(x, cin, 1280, 1, act="relu6")
    out = head(net, x, 1280)
    info = helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 224, 224])
    return net.model(info, out, [1, 1000], 13)


def bert6(layers=6, seq=128, hid=768, heads=12, ffn=3072):
    net = Net()
    dh = hid // heads

    def dense(x, n_in, n_out):
        w = rng.standard_normal((n_in, n_out), dtype=np.float32) * np.float32(0.02)
        y = net.op("MatMul", [x, net.const(w)])
        return net.op("Add", [y, net.const(np.zeros(n_out, np.float32), "b")])

    def layer_norm(x):
        return net.op("LayerNormalization",
                      [x, net.const(np.ones(hid, np.float32), "g"),
                       net.const(np.zeros(hid, np.float32), "b")], axis=-1, epsilon=1e-12)

    split = net.const(np.array([1, seq, heads, dh], np.int64), "shape")
    merge = net.const(np.array([1, seq, hid], np.int64), "shape")
    scale = net.const(np.array(1 / np.sqrt(dh), np.float32), "scale")
    sqrt2 = net.const(np.array(np.sqrt(2), np.float32), "c")
    one = net.const(np.array(1, np.float32), "c")
    half = net.const(np.array(0.5, np.float32), "c")
    x = "hidden"
    for _ in range(layers):
        q = net.op("Transpose", [net.op("Reshape", [dense(x, hid, hid), split])], perm=[0, 2, 1, 3])
        k = net.op("Transpose", [net.op("Reshape", [dense(x, hid, hid), split])], perm=[0, 2, 3, 1])
        v = net.op("Transpose", [net.op("Reshape", [dense(x, hid, hid), split])], perm=[0, 2, 1, 3])
        p = net.op("Softmax", [net.op("Mul", [net.op("MatMul", [q, k]), scale])], axis=-1)
        c = net.op("Transpose", [net.op("MatMul", [p, v])], perm=[0, 2, 1, 3])
        a = dense(net.op("Reshape", [c, merge]), hid, hid)
        x = layer_norm(net.op("Add", [x, a]))
        h = dense(x, hid, ffn)
        e = net.op("Erf", [net.op("Div", [h, sqrt2])])
        h = net.op("Mul", [net.op("Mul", [h, net.op("Add", [e, one])]), half])
        x = layer_norm(net.op("Add", [x, dense(h, ffn, hid)]))
    info = helper.make_tensor_value_info("hidden", TensorProto.FLOAT, [1, seq, hid])
    return net.model(info, x, [1, seq, hid], 17)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_nets.py OUTDIR")
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, fn in (("resnet50", resnet50), ("mobilenetv2", mobilenetv2), ("bert6", bert6)):
        onnx.save(fn(), os.path.join(sys.argv[1], name + ".onnx"))


if __name__ == "__main__":
    main()
