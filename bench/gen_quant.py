#!/usr/bin/python3
"""gen_quant.py OUTDIR: the quantization benchmark's models and samples,
from a seeded numpy Generator (byte-identical every run):

  resnet18.onnx     ResNet-18-style: 7x7 stem, max pool, basic blocks
                    [2, 2, 2, 2], global average pool, Gemm 512->1000
  resnet50.onnx     ResNet-50-style: bottleneck stages [3, 4, 6, 3],
                    Gemm 2048->1000
  mobilenetv2.onnx  MobileNetV2-style: inverted residual blocks (1x1
                    expand, 3x3 depthwise, 1x1 project, Clip 0..6)
  bert6.onnx        6-layer BERT-base-style encoder: hidden 768, 12 heads,
                    FFN 3072, erf Gelu, LayerNormalization; input 1x128x768

Convolutions are He-initialized and carry a batch norm folded in: each
output channel scaled by gamma / sqrt(var + eps) (gamma in [0.5, 1.5],
var log-normal) with bias beta - mean * that scale, so per-channel weight
ranges differ as in trained networks; the last batch norm of each residual
branch has gamma in [0.1, 0.3] (so the residual sum stays bounded, as
zero-initialized gammas do).  Samples: images are smooth random fields
(a 3x7x7 field upsampled to 224x224 plus fine noise, per channel mean 0
and deviation 1, like ImageNet-normalized inputs); hidden states are
N(0, 1).  OUTDIR/<model>/calib/test_data_set_N and .../val/... hold the
calibration and validation samples (different seeds): CALIB and VAL below.

Needs onnx and numpy (/usr/bin/python3)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CALIB = {"resnet18": 32, "resnet50": 100, "mobilenetv2": 32, "bert6": 16}
VAL = {"resnet18": 16, "resnet50": 16, "mobilenetv2": 16, "bert6": 8}

rng = np.random.default_rng(20261205)


class Net:
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, p):
        self.n += 1
        return "%s%d" % (p, self.n)

    def const(self, arr, p="w"):
        nm = self.name(p)
        self.inits.append(numpy_helper.from_array(np.asarray(arr), nm))
        return nm

    def op(self, op, ins, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    def conv(self, x, cin, cout, k, s=1, group=1, act=None, last=False):
        fan = cin // group * k * k
        w = rng.standard_normal((cout, cin // group, k, k)).astype(np.float32)
        w *= np.float32(np.sqrt(2.0 / fan))
        gamma = rng.uniform(0.1, 0.3, cout) if last else rng.uniform(0.5, 1.5, cout)
        var = rng.lognormal(0, 0.5, cout)
        mean = rng.standard_normal(cout) * 0.2
        beta = rng.standard_normal(cout) * 0.1
        sc = gamma / np.sqrt(var + 1e-5)
        w = (w * sc[:, None, None, None]).astype(np.float32)
        b = (beta - mean * sc).astype(np.float32)
        y = self.op("Conv", [x, self.const(w), self.const(b, "b")], kernel_shape=[k, k],
                    strides=[s, s], group=group, pads=[k // 2] * 4)
        if act == "relu":
            y = self.op("Relu", [y])
        elif act == "relu6":
            y = self.op("Clip", [y, self.lo, self.hi])
        return y

    def model(self, in_name, in_shape, out, out_shape, opset):
        g = helper.make_graph(self.nodes, "bench",
                              [helper.make_tensor_value_info(in_name, TensorProto.FLOAT, in_shape)],
                              [helper.make_tensor_value_info(out, TensorProto.FLOAT, out_shape)],
                              self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="opmig-bench")
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


def head(net, x, cin):
    y = net.op("Flatten", [net.op("GlobalAveragePool", [x])], axis=1)
    w = (rng.standard_normal((1000, cin)) / np.sqrt(cin)).astype(np.float32)
    b = (rng.standard_normal(1000) * 0.01).astype(np.float32)
    return net.op("Gemm", [y, net.const(w), net.const(b, "b")], transB=1)


def stem(net):
    x = net.conv("input", 3, 64, 7, 2, act="relu")
    return net.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)


def resnet18():
    net = Net()
    x, cin = stem(net), 64
    for width, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        for i in range(2):
            s = stride if i == 0 else 1
            y = net.conv(x, cin, width, 3, s, act="relu")
            y = net.conv(y, width, width, 3, last=True)
            sc = net.conv(x, cin, width, 1, s) if (s != 1 or cin != width) else x
            x = net.op("Relu", [net.op("Add", [y, sc])])
            cin = width
    return net.model("input", [1, 3, 224, 224], head(net, x, cin), [1, 1000], 13)


def resnet50():
    net = Net()
    x, cin = stem(net), 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(blocks):
            s = stride if i == 0 else 1
            y = net.conv(x, cin, width, 1, act="relu")
            y = net.conv(y, width, width, 3, s, act="relu")
            y = net.conv(y, width, width * 4, 1, last=True)
            sc = net.conv(x, cin, width * 4, 1, s) if i == 0 else x
            x = net.op("Relu", [net.op("Add", [y, sc])])
            cin = width * 4
    return net.model("input", [1, 3, 224, 224], head(net, x, cin), [1, 1000], 13)


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
            res = st == 1 and cin == c
            y = net.conv(y, hid, c, 1, last=res)
            x = net.op("Add", [x, y]) if res else y
            cin = c
    x = net.conv(x, cin, 1280, 1, act="relu6")
    return net.model("input", [1, 3, 224, 224], head(net, x, 1280), [1, 1000], 13)


def bert6(layers=6, seq=128, hid=768, heads=12, ffn=3072):
    net = Net()
    dh = hid // heads

    def dense(x, n_in, n_out):
        w = (rng.standard_normal((n_in, n_out)) * 0.02).astype(np.float32)
        b = (rng.standard_normal(n_out) * 0.02).astype(np.float32)
        return net.op("Add", [net.op("MatMul", [x, net.const(w)]), net.const(b, "b")])

    def layer_norm(x):
        return net.op("LayerNormalization",
                      [x, net.const(rng.uniform(0.8, 1.2, hid).astype(np.float32), "g"),
                       net.const((rng.standard_normal(hid) * 0.05).astype(np.float32), "b")],
                      axis=-1, epsilon=1e-12)

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
    return net.model("hidden", [1, seq, hid], x, [1, seq, hid], 17)


def image(g):
    low = g.standard_normal((3, 7, 7))
    up = np.kron(low, np.ones((32, 32)))
    # a separable box blur of the blocks: smooth fields, not tiles
    k = np.ones(31) / 31
    for ax in (1, 2):
        up = np.apply_along_axis(lambda r: np.convolve(r, k, mode="same"), ax, up)
    x = up + 0.3 * g.standard_normal((3, 224, 224))
    x = (x - x.mean(axis=(1, 2), keepdims=True)) / x.std(axis=(1, 2), keepdims=True)
    return x[None].astype(np.float32)


def samples(folder, name, n, seed, make):
    g = np.random.default_rng(seed)
    for k in range(n):
        d = os.path.join(folder, "test_data_set_%d" % k)
        os.makedirs(d, exist_ok=True)
        t = numpy_helper.from_array(make(g), name)
        with open(os.path.join(d, "input_0.pb"), "wb") as f:
            f.write(t.SerializeToString())


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_quant.py OUTDIR")
    out = sys.argv[1]
    nets = (("resnet18", resnet18, "input"), ("resnet50", resnet50, "input"),
            ("mobilenetv2", mobilenetv2, "input"), ("bert6", bert6, "hidden"))
    for i, (name, fn, inp) in enumerate(nets):
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        onnx.save(fn(), os.path.join(d, "model.onnx"))
        make = image if inp == "input" else \
            (lambda g: g.standard_normal((1, 128, 768)).astype(np.float32))
        samples(os.path.join(d, "calib"), inp, CALIB[name], 1000 + i, make)
        samples(os.path.join(d, "val"), inp, VAL[name], 2000 + i, make)


if __name__ == "__main__":
    main()
