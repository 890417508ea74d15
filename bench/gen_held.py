#!/usr/bin/python3
"""gen_held.py DIR: a third held-out set for bench/broad.sh
(BROAD_SET=held), written 2026-12-06 evening before any tuning of that
session and not run through opmig until the session's final measurement;
seeded, opset 17, checked with onnx.checker:
  crnn_f16.onnx  an OCR recognizer (CRNN): a VGG-style stack of 3x3
                 convolutions in float16 (the input Cast to float16, as a
                 converter's fp16 pass writes it) with BatchNormalization,
                 2x2 and 2x1 max pools from 32x320 down to a 1x79 feature
                 row, then Cast to float32, a bidirectional LSTM of 128,
                 a MatMul to 97 classes and LogSoftmax;
  mbv3.onnx      a MobileNetV3-Small-style classifier at 224x224: HardSwish
                 stem, inverted residuals with 3x3 and 5x5 depthwise
                 convolutions (stride 2 and 1), squeeze-excite blocks
                 (GlobalAveragePool, 1x1 Conv, Relu, 1x1 Conv,
                 HardSigmoid, Mul), a pooled 1x1 head;
  w2v.onnx       a wav2vec2-style speech encoder: one second of 16 kHz
                 audio through a 1-D convolutional feature extractor
                 (kernel 10 stride 5, then kernels 3 and 2 stride 2; GELU
                 as Erf; InstanceNormalization after the first), a
                 LayerNormalization and projection, two transformer
                 encoder layers (6 heads of 64, GELU feed-forward of
                 1536) over the 49 frames."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from gen_broad import save

RNG = np.random.default_rng(4099)
F = TensorProto.FLOAT
H = TensorProto.FLOAT16


class G:
    def __init__(self, dtype=np.float32):
        self.nodes, self.inits, self.k, self.dt = [], [], 0, dtype

    def name(self, s):
        self.k += 1
        return "%s%d" % (s, self.k)

    def c(self, a, dtype=None):
        n = self.name("c")
        a = np.asarray(a)
        if a.dtype.kind == "f":
            a = a.astype(dtype or self.dt)
        self.inits.append(numpy_helper.from_array(a, n))
        return n

    def op(self, op, ins, **at):
        y = self.name("v")
        self.nodes.append(helper.make_node(op, ins, [y], **at))
        return y


def w(*shape, scale=1.0):
    fan = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    return (RNG.standard_normal(shape) * np.sqrt(2.0 / fan) * scale).astype(np.float32)


def conv(g, x, cin, cout, k=3, stride=1, group=1, bias=True, pads=None):
    ins = [x, g.c(w(cout, cin // group, *k) if isinstance(k, tuple) else w(cout, cin // group, k, k))]
    if bias:
        ins.append(g.c(w(cout, scale=0.1)))
    ks = list(k) if isinstance(k, tuple) else [k, k]
    p = pads if pads is not None else [ks[0] // 2, ks[1] // 2] * 2
    return g.op("Conv", ins, kernel_shape=ks, strides=[stride] * 2, group=group, pads=p)


def bn(g, x, c):
    return g.op("BatchNormalization",
                [x, g.c(1 + 0.1 * RNG.standard_normal(c)), g.c(0.1 * RNG.standard_normal(c)),
                 g.c(0.1 * RNG.standard_normal(c)), g.c(0.5 + RNG.random(c))], epsilon=1e-5)


def crnn_f16(path, hgt=32, wid=320, hid=128, classes=97):
    g = G(np.float16)
    x = g.op("Cast", ["x"], to=H)
    chans = 3
    for cout, pool, use_bn in ((32, (2, 2), False), (64, (2, 2), False), (128, None, True),
                               (128, (2, 1), False), (256, None, True), (256, (2, 1), True)):
        x = conv(g, x, chans, cout, bias=not use_bn)
        if use_bn:
            x = bn(g, x, cout)
        x = g.op("Relu", [x])
        if pool:
            x = g.op("MaxPool", [x], kernel_shape=list(pool), strides=list(pool))
        chans = cout
    x = g.op("Relu", [conv(g, x, chans, 256, k=2, pads=[0, 0, 0, 0])])  # [1,256,1,79]
    t = wid // 4 - 1
    x = g.op("Squeeze", [x, g.c(np.int64([2]))])
    x = g.op("Transpose", [x], perm=[2, 0, 1])  # [T,1,256]
    x = g.op("Cast", [x], to=F)
    y = g.op("LSTM", [x, g.c(w(2, 4 * hid, 256), np.float32), g.c(w(2, 4 * hid, hid), np.float32),
                      g.c(w(2, 8 * hid, scale=0.1), np.float32)],
             hidden_size=hid, direction="bidirectional")
    y = g.op("Transpose", [y], perm=[0, 2, 1, 3])
    y = g.op("Reshape", [y, g.c(np.int64([t, 1, 2 * hid]))])
    y = g.op("Add", [g.op("MatMul", [y, g.c(w(2 * hid, classes), np.float32)]),
                     g.c(w(classes, scale=0.1), np.float32)])
    y = g.op("LogSoftmax", [y], axis=2)
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, hgt, wid])],
         [helper.make_tensor_value_info(y, F, [t, 1, classes])])


def mbv3(path, s=224):
    g = G()

    def hs(x):
        return g.op("HardSwish", [x])

    def se(x, c):
        r = max(8, c // 4)
        p = g.op("GlobalAveragePool", [x])
        p = g.op("Relu", [conv(g, p, c, r, k=1)])
        p = g.op("HardSigmoid", [conv(g, p, r, c, k=1)], alpha=1.0 / 6, beta=0.5)
        return g.op("Mul", [x, p])

    x = hs(bn(g, conv(g, "x", 3, 16, stride=2, bias=False), 16))
    chans = 16
    # (kernel, expand, out, se, hardswish, stride) as MobileNetV3-Small
    for k, e, o, use_se, use_hs, st in ((3, 16, 16, 1, 0, 2), (3, 72, 24, 0, 0, 2),
                                        (3, 88, 24, 0, 0, 1), (5, 96, 40, 1, 1, 2),
                                        (5, 240, 40, 1, 1, 1), (5, 240, 40, 1, 1, 1),
                                        (5, 120, 48, 1, 1, 1), (5, 144, 48, 1, 1, 1),
                                        (5, 288, 96, 1, 1, 2), (5, 576, 96, 1, 1, 1),
                                        (5, 576, 96, 1, 1, 1)):
        act = hs if use_hs else (lambda v: g.op("Relu", [v]))
        y = x
        if e != chans:
            y = act(bn(g, conv(g, y, chans, e, k=1, bias=False), e))
        y = act(bn(g, conv(g, y, e, e, k=k, stride=st, group=e, bias=False), e))
        if use_se:
            y = se(y, e)
        y = bn(g, conv(g, y, e, o, k=1, bias=False), o)
        x = g.op("Add", [y, x]) if st == 1 and o == chans else y
        chans = o
    x = hs(bn(g, conv(g, x, chans, 576, k=1, bias=False), 576))
    x = g.op("GlobalAveragePool", [x])
    x = hs(conv(g, x, 576, 1024, k=1))
    x = conv(g, x, 1024, 1000, k=1)
    y = g.op("Flatten", [x])
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, s, s])],
         [helper.make_tensor_value_info(y, F, [1, 1000])])


def gelu(g, x):
    e = g.op("Erf", [g.op("Mul", [x, g.c(np.float32(0.7071067811865476))])])
    return g.op("Mul", [g.op("Mul", [x, g.op("Add", [e, g.c(np.float32(1))])]), g.c(np.float32(0.5))])


def w2v(path, samples=16000, c=256, d=384, heads=6, ff=1536):
    g = G()
    x = g.op("Unsqueeze", ["x", g.c(np.int64([1]))])  # [1,1,S]

    def conv1(x, cin, cout, k, s):
        return g.op("Conv", [x, g.c(w(cout, cin, k))], kernel_shape=[k], strides=[s])

    x = conv1(x, 1, c, 10, 5)
    x = g.op("InstanceNormalization", [x, g.c(1 + 0.1 * RNG.standard_normal(c)),
                                       g.c(0.1 * RNG.standard_normal(c))], epsilon=1e-5)
    x = gelu(g, x)
    for k in (3, 3, 3, 3, 2, 2):
        x = gelu(g, conv1(x, c, c, k, 2))
    x = g.op("Transpose", [x], perm=[0, 2, 1])  # [1,T,c]

    def ln(x, n):
        return g.op("LayerNormalization", [x, g.c(1 + 0.1 * RNG.standard_normal(n)),
                                           g.c(0.1 * RNG.standard_normal(n))], axis=-1, epsilon=1e-5)

    def lin(x, i, o):
        return g.op("Add", [g.op("MatMul", [x, g.c(w(i, o))]), g.c(w(o, scale=0.1))])

    x = lin(ln(x, c), c, d)
    hd = d // heads
    for _ in range(2):
        def split(v):
            v = g.op("Reshape", [v, g.c(np.int64([1, -1, heads, hd]))])
            return g.op("Transpose", [v], perm=[0, 2, 1, 3])
        q = split(g.op("Mul", [lin(x, d, d), g.c(np.float32(hd ** -0.5))]))
        k = g.op("Transpose", [split(lin(x, d, d))], perm=[0, 1, 3, 2])
        v = split(lin(x, d, d))
        a = g.op("Softmax", [g.op("MatMul", [q, k])], axis=-1)
        o = g.op("Transpose", [g.op("MatMul", [a, v])], perm=[0, 2, 1, 3])
        o = g.op("Reshape", [o, g.c(np.int64([1, -1, d]))])
        x = ln(g.op("Add", [x, lin(o, d, d)]), d)
        f = lin(gelu(g, lin(x, d, ff)), ff, d)
        x = ln(g.op("Add", [x, f]), d)
    save(g, path, [helper.make_tensor_value_info("x", F, [1, samples])],
         [helper.make_tensor_value_info(x, F, [1, 49, d])])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    crnn_f16(os.path.join(out, "crnn_f16.onnx"))
    mbv3(os.path.join(out, "mbv3.onnx"))
    w2v(os.path.join(out, "w2v.onnx"))


if __name__ == "__main__":
    main()
