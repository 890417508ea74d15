#!/usr/bin/python3
"""gen_held6.py DIR: a sixth held-out set for bench/broad.sh
(BROAD_SET=held6), written 2026-12-07 before any tuning on it and not run
through opmig when written: for a later round's first measurement
(broad.sh quantizes two of them with `opmig quantize` first); seeded,
opset 17, checked with onnx.checker:
  convnext_f16.onnx a ConvNeXt-Tiny-style classifier at 160x160 in
                    float16 (Cast in and out): a 4x4 stride-4 patchify
                    Conv, stages of (48, 96, 192, 384) channels and
                    (2, 2, 4, 2) blocks (7x7 depthwise Conv, Transpose to
                    NHWC, LayerNormalization over channels, a MatMul MLP
                    of 4x with GELU in Erf form, a layer-scale Mul,
                    Transpose back, residual Add), downsampling layers
                    between stages (the same Transpose + LayerNormalization,
                    a 2x2 stride-2 Conv), a pooled LayerNormalization and
                    a 1000-class Gemm head;
  tcn.onnx          a temporal convolution network for audio in float32:
                    64 mel bins of 2000 frames, a 1x1 Conv to 128
                    channels, 1-D Convs of kernel 3 and dilations 1, 2, 4,
                    8, 16 with BatchNormalization and PRelu and residual
                    Adds, a 1x1 Conv skip path from each summed, Relu, a
                    1x1 Conv, Relu, a 1x1 Conv to 40 classes and Softmax
                    over the class axis;
  fpn.onnx          a RetinaNet/FPN-style detector at 384x384 in float32:
                    a ResNet-18-style backbone of (32, 64, 128, 256)
                    channels (7x7 stride-2 stem, MaxPool, BasicBlocks with
                    BatchNormalization and Relu, strided 3x3 downsampling
                    with 1x1 projection shortcuts), an FPN of 64 channels
                    (1x1 laterals, nearest 2x Resize top-down and Add, 3x3
                    output Convs at strides 8, 16, 32), class and box
                    heads of two 3x3 Conv + Relu and a 3x3 prediction Conv
                    whose weights all levels share, 3 anchors a place,
                    each level's output Transposed and Reshaped and
                    Concat'ed to [1, 9072, 20] (Sigmoid) and [1, 9072, 4];
  fpn_qdq.onnx      broad.sh writes it: fpn.onnx quantized static QDQ;
  whisper.onnx      a Whisper-tiny-style audio encoder in float32: 80 mel
                    bins of 1000 frames, two 1-D Convs of kernel 3 (the
                    second stride 2) with GELU in Erf form, sinusoidal
                    positions added as a constant, four pre-LN layers of
                    d 384 (6 heads of 64, q and k each scaled by 64^-0.25,
                    k without bias, an MLP of 1536 with GELU in Erf form),
                    a final LayerNormalization;
  whisper_dyn.onnx  broad.sh writes it: whisper.onnx quantized by
                    `opmig quantize --dynamic`."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

from gen_broad import save
from gen_held import G, bn
from gen_held4 import ln, lin, w
from gen_held5 import cbr, conv, gelu

RNG = np.random.default_rng(15485863)
F = TensorProto.FLOAT
H = TensorProto.FLOAT16


def patch(g, x, cin, cout, k):
    """A k x k stride-k Conv (ConvNeXt's stem and downsampling)."""
    return g.op("Conv", [x, g.c(w(cout, cin, k, k)), g.c(w(cout, scale=0.1))],
                kernel_shape=[k, k], strides=[k, k])


def ln_cf(g, x, c):
    """LayerNormalization over the channels of NCHW x, through NHWC."""
    y = ln(g, g.op("Transpose", [x], perm=[0, 2, 3, 1]), c)
    return g.op("Transpose", [y], perm=[0, 3, 1, 2])


def convnext_f16(path, s=160, dims=(48, 96, 192, 384), depths=(2, 2, 4, 2), classes=1000):
    g = G(np.float16)
    x = g.op("Cast", ["x"], to=H)
    x = ln_cf(g, patch(g, x, 3, dims[0], 4), dims[0])
    for i, (c, n) in enumerate(zip(dims, depths)):
        if i:
            x = patch(g, ln_cf(g, x, dims[i - 1]), dims[i - 1], c, 2)
        for _ in range(n):
            y = conv(g, x, c, c, 7, group=c)
            y = ln(g, g.op("Transpose", [y], perm=[0, 2, 3, 1]), c)
            y = lin(g, gelu(g, lin(g, y, c, 4 * c)), 4 * c, c)
            y = g.op("Mul", [y, g.c(0.1 + 0.05 * RNG.random(c))])
            x = g.op("Add", [x, g.op("Transpose", [y], perm=[0, 3, 1, 2])])
    x = ln(g, g.op("Flatten", [g.op("GlobalAveragePool", [x])]), dims[-1])
    y = g.op("Cast", [g.op("Gemm", [x, g.c(w(classes, dims[-1])), g.c(w(classes, scale=0.1))],
                           transB=1)], to=F)
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, s, s])],
         [helper.make_tensor_value_info(y, F, [1, classes])])


def conv1d(g, x, cin, cout, k=1, stride=1, dil=1, bias=True, scale=1.0):
    p = dil * (k // 2)
    ins = [x, g.c(w(cout, cin, k, scale=scale))]
    if bias:
        ins.append(g.c(w(cout, scale=0.1)))
    return g.op("Conv", ins, kernel_shape=[k], strides=[stride], dilations=[dil], pads=[p, p])


def tcn(path, mels=64, frames=2000, c=128, classes=40):
    g = G()
    x = conv1d(g, "x", mels, c)
    skip = None
    for d in (1, 2, 4, 8, 16):
        h = bn(g, conv1d(g, x, c, c, 3, dil=d, bias=False), c)
        h = g.op("PRelu", [h, g.c(0.25 + 0.05 * RNG.standard_normal((c, 1)))])
        sk = conv1d(g, h, c, c)
        skip = sk if skip is None else g.op("Add", [skip, sk])
        x = g.op("Add", [x, h])
    y = g.op("Relu", [conv1d(g, g.op("Relu", [skip]), c, c)])
    y = g.op("Softmax", [conv1d(g, y, c, classes, scale=0.05)], axis=1)
    save(g, path, [helper.make_tensor_value_info("x", F, [1, mels, frames])],
         [helper.make_tensor_value_info(y, F, [1, classes, frames])])


def fpn(path, s=384, widths=(32, 64, 128, 256), f=64, anchors=3, classes=20):
    g = G()

    def basic(x, cin, cout, stride):
        y = bn(g, conv(g, cbr(g, x, cin, cout, 3, stride), cout, cout, bias=False), cout)
        if stride != 1 or cin != cout:
            x = bn(g, conv(g, x, cin, cout, 1, stride, bias=False), cout)
        return g.op("Relu", [g.op("Add", [y, x])])

    x = cbr(g, "x", 3, widths[0], 7, 2)
    x = g.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)
    feats = []
    cin = widths[0]
    for i, c in enumerate(widths):
        x = basic(basic(x, cin, c, 2 if i else 1), c, c, 1)
        cin = c
        feats.append(x)
    c3, c4, c5 = feats[1:]
    p5 = conv(g, c5, widths[3], f, 1)
    p4 = g.op("Add", [conv(g, c4, widths[2], f, 1),
                      g.op("Resize", [p5, "", g.c(np.float32([1, 1, 2, 2]))], mode="nearest")])
    p3 = g.op("Add", [conv(g, c3, widths[1], f, 1),
                      g.op("Resize", [p4, "", g.c(np.float32([1, 1, 2, 2]))], mode="nearest")])
    levels = [conv(g, p, f, f) for p in (p3, p4, p5)]

    def shared(cout, bias=None):
        b = w(cout, scale=0.1) if bias is None else np.full(cout, bias, np.float32)
        return g.c(w(cout, f, 3, 3)), g.c(b)

    def apply(x, wb):
        return g.op("Conv", [x, *wb], kernel_shape=[3, 3], pads=[1] * 4)

    # prior 0.01 on the class logits, as RetinaNet initializes them
    cls_w = [shared(f), shared(f), shared(anchors * classes, -np.log(99.0))]
    box_w = [shared(f), shared(f), shared(anchors * 4)]
    outs = []
    for ws, n in ((cls_w, classes), (box_w, 4)):
        per = []
        for p in levels:
            t = g.op("Relu", [apply(g.op("Relu", [apply(p, ws[0])]), ws[1])])
            t = g.op("Transpose", [apply(t, ws[2])], perm=[0, 2, 3, 1])
            per.append(g.op("Reshape", [t, g.c(np.int64([1, -1, n]))]))
        outs.append(g.op("Concat", per, axis=1))
    a = anchors * sum((s // st) ** 2 for st in (8, 16, 32))
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, s, s])],
         [helper.make_tensor_value_info(g.op("Sigmoid", [outs[0]]), F, [1, a, classes]),
          helper.make_tensor_value_info(outs[1], F, [1, a, 4])])


def sinusoids(t, d):
    inc = np.log(10000.0) / (d // 2 - 1)
    ang = np.arange(t)[:, None] * np.exp(-inc * np.arange(d // 2))[None, :]
    return np.concatenate([np.sin(ang), np.cos(ang)], axis=1)[None].astype(np.float32)


def whisper(path, mels=80, frames=1000, d=384, heads=6, layers=4, ff=1536):
    g = G()
    hd = d // heads
    x = gelu(g, conv1d(g, "x", mels, d, 3))
    x = gelu(g, conv1d(g, x, d, d, 3, stride=2))
    t = (frames - 1) // 2 + 1
    x = g.op("Add", [g.op("Transpose", [x], perm=[0, 2, 1]), g.c(sinusoids(t, d))])

    def scaled(v):
        return g.op("Mul", [v, g.c(np.float32(hd ** -0.25))])

    def heads_of(v):
        v = g.op("Reshape", [v, g.c(np.int64([1, t, heads, hd]))])
        return g.op("Transpose", [v], perm=[0, 2, 1, 3])

    for _ in range(layers):
        h = ln(g, x, d, 1e-5)
        q = heads_of(scaled(lin(g, h, d, d)))
        k = heads_of(scaled(g.op("MatMul", [h, g.c(w(d, d))])))
        v = heads_of(lin(g, h, d, d))
        a = g.op("Softmax", [g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])])],
                 axis=-1)
        o = g.op("Transpose", [g.op("MatMul", [a, v])], perm=[0, 2, 1, 3])
        o = g.op("Reshape", [o, g.c(np.int64([1, t, d]))])
        x = g.op("Add", [x, lin(g, o, d, d)])
        x = g.op("Add", [x, lin(g, gelu(g, lin(g, ln(g, x, d, 1e-5), d, ff)), ff, d)])
    x = ln(g, x, d, 1e-5)
    save(g, path, [helper.make_tensor_value_info("x", F, [1, mels, frames])],
         [helper.make_tensor_value_info(x, F, [1, t, d])])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    convnext_f16(os.path.join(out, "convnext_f16.onnx"))
    tcn(os.path.join(out, "tcn.onnx"))
    fpn(os.path.join(out, "fpn.onnx"))
    whisper(os.path.join(out, "whisper.onnx"))


if __name__ == "__main__":
    main()
