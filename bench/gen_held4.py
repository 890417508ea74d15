#!/usr/bin/python3
"""gen_held4.py DIR: a fourth held-out set for bench/broad.sh
(BROAD_SET=held4), written 2026-12-06 (night) before any tuning of that
session and not run through opmig until the session's final measurement
(broad.sh quantizes two of them with `opmig quantize` first); seeded,
opset 17, checked with onnx.checker:
  yolo.onnx      a YOLOv8-nano-style detector at 320x320: SiLU written as
                 Sigmoid and Mul, C2f blocks (1x1 Conv, Split, two 3x3
                 bottlenecks with a residual Add, Concat, 1x1 Conv), SPPF
                 (three chained 5x5 stride-1 MaxPools, Concat), a neck of
                 nearest 2x Resizes and Concats, three 3x3 + 1x1 heads
                 reshaped and concatenated to [1, 84, 2100];
                 broad.sh also writes yolo_qdq.onnx from it (static QDQ);
  vit_f16.onnx   a ViT-Tiny-style classifier in float16 (Cast in and out):
                 a 16x16 stride-16 patch Conv at 224x224, a class token
                 and position embeddings, four encoder layers (float16
                 LayerNormalization, 3 heads of 64 from one qkv MatMul,
                 Reshape/Transpose/Gather, GELU in its tanh form), a
                 1000-class head;
  conformer.onnx a Conformer-style speech encoder in float32: 400 frames of
                 80 features through two 3x3 stride-2 Conv + Relu
                 subsampling layers (99 frames), two conformer blocks
                 (half-step Swish feed-forwards, 4-head self-attention,
                 a convolution module: pointwise Conv1d, GLU as Split +
                 Sigmoid + Mul, depthwise Conv1d of 15, BatchNormalization,
                 Swish, pointwise Conv1d), LayerNormalization;
                 broad.sh also writes conformer_dyn.onnx from it
                 (`opmig quantize --dynamic`)."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

from gen_broad import save
from gen_held import G, bn

RNG = np.random.default_rng(7919)
F = TensorProto.FLOAT
H = TensorProto.FLOAT16


def w(*shape, scale=1.0):
    fan = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    return (RNG.standard_normal(shape) * np.sqrt(2.0 / fan) * scale).astype(np.float32)


def conv(g, x, cin, cout, k=3, stride=1, group=1, pad=None):
    p = k // 2 if pad is None else pad
    return g.op("Conv", [x, g.c(w(cout, cin // group, k, k)), g.c(w(cout, scale=0.1))],
                kernel_shape=[k, k], strides=[stride] * 2, group=group, pads=[p] * 4)


def silu(g, x):
    return g.op("Mul", [x, g.op("Sigmoid", [x])])


def cbs(g, x, cin, cout, k=3, stride=1):
    return silu(g, conv(g, x, cin, cout, k, stride))


def c2f(g, x, cin, cout, n=1, shortcut=True):
    h = cout // 2
    y = cbs(g, x, cin, 2 * h, 1)
    a = g.name("s")
    b = g.name("s")
    g.nodes.append(helper.make_node("Split", [y, g.c(np.int64([h, h]))], [a, b], axis=1))
    parts = [a, b]
    for _ in range(n):
        t = cbs(g, cbs(g, parts[-1], h, h), h, h)
        parts.append(g.op("Add", [parts[-1], t]) if shortcut else t)
    return cbs(g, g.op("Concat", parts, axis=1), (2 + n) * h, cout, 1)


def yolo(path, s=320, classes=80):
    g = G()
    x = cbs(g, "x", 3, 16, 3, 2)
    x = c2f(g, cbs(g, x, 16, 32, 3, 2), 32, 32)
    p3 = c2f(g, cbs(g, x, 32, 64, 3, 2), 64, 64, 2)
    p4 = c2f(g, cbs(g, p3, 64, 128, 3, 2), 128, 128, 2)
    p5 = c2f(g, cbs(g, p4, 128, 256, 3, 2), 256, 256)
    y = cbs(g, p5, 256, 128, 1)  # SPPF
    m1 = g.op("MaxPool", [y], kernel_shape=[5, 5], pads=[2] * 4)
    m2 = g.op("MaxPool", [m1], kernel_shape=[5, 5], pads=[2] * 4)
    m3 = g.op("MaxPool", [m2], kernel_shape=[5, 5], pads=[2] * 4)
    p5 = cbs(g, g.op("Concat", [y, m1, m2, m3], axis=1), 512, 256, 1)

    def up(v):
        return g.op("Resize", [v, "", g.c(np.float32([1, 1, 2, 2]))], mode="nearest")

    n4 = c2f(g, g.op("Concat", [up(p5), p4], axis=1), 384, 128, shortcut=False)
    n3 = c2f(g, g.op("Concat", [up(n4), p3], axis=1), 192, 64, shortcut=False)
    n4 = c2f(g, g.op("Concat", [cbs(g, n3, 64, 64, 3, 2), n4], axis=1), 192, 128, shortcut=False)
    n5 = c2f(g, g.op("Concat", [cbs(g, n4, 128, 128, 3, 2), p5], axis=1), 384, 256, shortcut=False)
    outs = []
    for v, c in ((n3, 64), (n4, 128), (n5, 256)):
        hd = conv(g, cbs(g, cbs(g, v, c, 64), 64, 64), 64, 4 + classes, k=1)
        outs.append(g.op("Reshape", [hd, g.c(np.int64([1, 4 + classes, -1]))]))
    y = g.op("Concat", outs, axis=2)
    n = (s // 8) ** 2 + (s // 16) ** 2 + (s // 32) ** 2
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, s, s])],
         [helper.make_tensor_value_info(y, F, [1, 4 + classes, n])])


def ln(g, x, n, eps=1e-6):
    return g.op("LayerNormalization", [x, g.c(1 + 0.1 * RNG.standard_normal(n)),
                                       g.c(0.1 * RNG.standard_normal(n))], axis=-1, epsilon=eps)


def lin(g, x, i, o):
    return g.op("Add", [g.op("MatMul", [x, g.c(w(i, o))]), g.c(w(o, scale=0.1))])


def gelu_tanh(g, x):
    x3 = g.op("Mul", [g.op("Mul", [x, x]), x])
    inner = g.op("Add", [x, g.op("Mul", [x3, g.c(np.float32(0.044715))])])
    t = g.op("Tanh", [g.op("Mul", [inner, g.c(np.float32(0.7978845608028654))])])
    return g.op("Mul", [g.op("Mul", [x, g.c(np.float32(0.5))]), g.op("Add", [t, g.c(np.float32(1))])])


def attention(g, x, t, d, heads):
    hd = d // heads
    qkv = lin(g, x, d, 3 * d)
    qkv = g.op("Reshape", [qkv, g.c(np.int64([1, t, 3, heads, hd]))])
    qkv = g.op("Transpose", [qkv], perm=[2, 0, 3, 1, 4])  # [3,1,h,t,hd]
    q, k, v = (g.op("Gather", [qkv, g.c(np.int64(i))], axis=0) for i in range(3))
    q = g.op("Mul", [q, g.c(np.float32(hd ** -0.5))])
    a = g.op("Softmax", [g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])])], axis=-1)
    o = g.op("Transpose", [g.op("MatMul", [a, v])], perm=[0, 2, 1, 3])
    return lin(g, g.op("Reshape", [o, g.c(np.int64([1, t, d]))]), d, d)


def vit_f16(path, s=224, patch=16, d=192, heads=3, layers=4, classes=1000):
    g = G(np.float16)
    x = g.op("Cast", ["x"], to=H)
    x = g.op("Conv", [x, g.c(w(d, 3, patch, patch)), g.c(w(d, scale=0.1))],
             kernel_shape=[patch, patch], strides=[patch, patch])
    t = (s // patch) ** 2
    x = g.op("Transpose", [g.op("Reshape", [x, g.c(np.int64([1, d, t]))])], perm=[0, 2, 1])
    x = g.op("Concat", [g.c(0.02 * RNG.standard_normal((1, 1, d))), x], axis=1)
    t += 1
    x = g.op("Add", [x, g.c(0.02 * RNG.standard_normal((1, t, d)))])
    for _ in range(layers):
        x = g.op("Add", [x, attention(g, ln(g, x, d), t, d, heads)])
        x = g.op("Add", [x, lin(g, gelu_tanh(g, lin(g, ln(g, x, d), d, 4 * d)), 4 * d, d)])
    x = ln(g, x, d)
    x = g.op("Gather", [x, g.c(np.int64(0))], axis=1)  # [1,d]
    y = g.op("Cast", [lin(g, x, d, classes)], to=F)
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, s, s])],
         [helper.make_tensor_value_info(y, F, [1, classes])])


def conformer(path, frames=400, feats=80, d=144, heads=4, blocks=2, k=15):
    g = G()
    x = g.op("Unsqueeze", ["x", g.c(np.int64([1]))])  # [1,1,T,F]
    x = g.op("Relu", [conv(g, x, 1, d, 3, 2, pad=0)])
    x = g.op("Relu", [conv(g, x, d, d, 3, 2, pad=0)])  # [1,d,99,19]
    t = ((frames - 3) // 2 + 1 - 3) // 2 + 1
    f = ((feats - 3) // 2 + 1 - 3) // 2 + 1
    x = g.op("Reshape", [g.op("Transpose", [x], perm=[0, 2, 1, 3]), g.c(np.int64([1, t, d * f]))])
    x = lin(g, x, d * f, d)

    def swish(v):
        return g.op("Mul", [v, g.op("Sigmoid", [v])])

    def ffn(v):
        y = lin(g, swish(lin(g, ln(g, v, d), d, 4 * d)), 4 * d, d)
        return g.op("Add", [v, g.op("Mul", [y, g.c(np.float32(0.5))])])

    def conv1(v, cin, cout, kk=1, group=1):
        return g.op("Conv", [v, g.c(w(cout, cin // group, kk)), g.c(w(cout, scale=0.1))],
                    kernel_shape=[kk], pads=[kk // 2] * 2, group=group)

    for _ in range(blocks):
        x = ffn(x)
        x = g.op("Add", [x, attention(g, ln(g, x, d), t, d, heads)])
        c = g.op("Transpose", [ln(g, x, d)], perm=[0, 2, 1])  # [1,d,T]
        c = conv1(c, d, 2 * d)
        a, b = g.name("s"), g.name("s")
        g.nodes.append(helper.make_node("Split", [c, g.c(np.int64([d, d]))], [a, b], axis=1))
        c = g.op("Mul", [a, g.op("Sigmoid", [b])])
        c = swish(bn(g, conv1(c, d, d, k, group=d), d))
        c = g.op("Transpose", [conv1(c, d, d)], perm=[0, 2, 1])
        x = ln(g, ffn(g.op("Add", [x, c])), d)
    save(g, path, [helper.make_tensor_value_info("x", F, [1, frames, feats])],
         [helper.make_tensor_value_info(x, F, [1, t, d])])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    yolo(os.path.join(out, "yolo.onnx"))
    vit_f16(os.path.join(out, "vit_f16.onnx"))
    conformer(os.path.join(out, "conformer.onnx"))


if __name__ == "__main__":
    main()
