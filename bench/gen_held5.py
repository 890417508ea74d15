#!/usr/bin/python3
"""gen_held5.py DIR: a fifth held-out set for bench/broad.sh
(BROAD_SET=held5), written 2026-12-06 (night) after the fourth was
measured and tuned on, and not run through opmig in that session: for the
next round's first measurement, before any tuning on it (broad.sh
quantizes one of them with `opmig quantize` first); seeded, opset 17,
checked with onnx.checker:
  deeplab.onnx     a DeepLabV3-style segmenter at 256x256 in float32: a
                   residual stem to stride 8, dilated 3x3 blocks (2, 4),
                   ASPP (1x1, three 3x3 of dilation 6/12/18, image pooling
                   with a Resize back), Concat, a 1x1 projection, 21
                   classes, a linear Resize (half_pixel) to the input size;
  bert_qdq.onnx    broad.sh writes it: bert.onnx quantized static QDQ;
  bert.onnx        a BERT-small encoder in float32: 128 token embeddings
                   in (float inputs, as bench/ort_time.js feeds), positions
                   added, four layers of 4 heads of 64 with an additive
                   attention mask made from a float mask input, GELU in
                   Erf form, LayerNormalization;
  unet_gn_f16.onnx a diffusion-style UNet block in float16 at 64x64: 3x3
                   convolutions with GroupNormalization (opset 18 would
                   have it; written as InstanceNormalization over groups
                   by Reshape, as opset-17 exporters do) and SiLU, a
                   stride-2 downsample, ConvTranspose 2x upsampling, skip
                   Concats;
  effnet_f16.onnx  an EfficientNet-B0-style classifier at 224x224 in
                   float16: Swish, MBConv blocks with squeeze-excite
                   (Sigmoid gates), 5x5 depthwise convolutions, a pooled
                   head."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

from gen_broad import save
from gen_held import G, bn
from gen_held4 import lin, ln, silu, w

RNG = np.random.default_rng(104729)
F = TensorProto.FLOAT
H = TensorProto.FLOAT16


def conv(g, x, cin, cout, k=3, stride=1, group=1, dil=1, bias=True):
    p = dil * (k // 2)
    ins = [x, g.c(w(cout, cin // group, k, k))]
    if bias:
        ins.append(g.c(w(cout, scale=0.1)))
    return g.op("Conv", ins, kernel_shape=[k, k], strides=[stride] * 2, group=group,
                dilations=[dil] * 2, pads=[p] * 4)


def cbr(g, x, cin, cout, k=3, stride=1, dil=1):
    return g.op("Relu", [bn(g, conv(g, x, cin, cout, k, stride, dil=dil, bias=False), cout)])


def deeplab(path, s=256, classes=21):
    g = G()
    x = cbr(g, "x", 3, 32, 3, 2)
    x = cbr(g, x, 32, 64, 3, 2)
    x = cbr(g, x, 64, 128, 3, 2)  # stride 8: 32x32
    for dil in (2, 2, 4, 4):
        y = cbr(g, cbr(g, x, 128, 128, dil=dil), 128, 128, dil=dil)
        x = g.op("Relu", [g.op("Add", [x, y])])
    branches = [cbr(g, x, 128, 64, 1)]
    for dil in (6, 12, 18):
        branches.append(cbr(g, x, 128, 64, 3, dil=dil))
    p = g.op("GlobalAveragePool", [x])
    p = g.op("Relu", [conv(g, p, 128, 64, 1)])
    p = g.op("Resize", [p, "", "", g.c(np.int64([1, 64, s // 8, s // 8]))], mode="nearest")
    branches.append(p)
    y = cbr(g, g.op("Concat", branches, axis=1), 320, 64, 1)
    y = conv(g, y, 64, classes, 1)
    y = g.op("Resize", [y, "", g.c(np.float32([1, 1, 8, 8]))], mode="linear",
             coordinate_transformation_mode="half_pixel")
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, s, s])],
         [helper.make_tensor_value_info(y, F, [1, classes, s, s])])


def gelu(g, x):
    e = g.op("Erf", [g.op("Div", [x, g.c(np.float32(1.4142135381698608))])])
    return g.op("Mul", [g.op("Mul", [x, g.op("Add", [e, g.c(np.float32(1))])]),
                        g.c(np.float32(0.5))])


def bert(path, t=128, d=256, heads=4, layers=4):
    g = G()
    hd = d // heads
    x = g.op("Add", ["x", g.c(0.02 * RNG.standard_normal((1, t, d)))])
    x = ln(g, x, d, 1e-12)
    m = g.op("Unsqueeze", ["mask", g.c(np.int64([1, 2]))])
    m = g.op("Mul", [g.op("Sub", [g.c(np.float32(1)), m]), g.c(np.float32(-10000.0))])
    for _ in range(layers):
        def split(v):
            v = g.op("Reshape", [v, g.c(np.int64([1, t, heads, hd]))])
            return g.op("Transpose", [v], perm=[0, 2, 1, 3])
        q = split(lin(g, x, d, d))
        k = g.op("Transpose", [split(lin(g, x, d, d))], perm=[0, 1, 3, 2])
        v = split(lin(g, x, d, d))
        s = g.op("Div", [g.op("MatMul", [q, k]), g.c(np.float32(hd ** 0.5))])
        a = g.op("Softmax", [g.op("Add", [s, m])], axis=-1)
        o = g.op("Transpose", [g.op("MatMul", [a, v])], perm=[0, 2, 1, 3])
        o = g.op("Reshape", [o, g.c(np.int64([1, t, d]))])
        x = ln(g, g.op("Add", [x, lin(g, o, d, d)]), d, 1e-12)
        x = ln(g, g.op("Add", [x, lin(g, gelu(g, lin(g, x, d, 4 * d)), 4 * d, d)]), d, 1e-12)
    save(g, path, [helper.make_tensor_value_info("x", F, [1, t, d]),
                   helper.make_tensor_value_info("mask", F, [1, t])],
         [helper.make_tensor_value_info(x, F, [1, t, d])])


def gnorm(g, x, c, s, groups=8):
    y = g.op("Reshape", [x, g.c(np.int64([1, groups, -1]))])
    y = g.op("InstanceNormalization", [y, g.c(np.ones(groups)), g.c(np.zeros(groups))],
             epsilon=1e-5)
    y = g.op("Reshape", [y, g.c(np.int64([1, c, s, s]))])
    y = g.op("Mul", [y, g.c((1 + 0.1 * RNG.standard_normal((c, 1, 1))))])
    return g.op("Add", [y, g.c(0.1 * RNG.standard_normal((c, 1, 1)))])


def unet_gn_f16(path, s=64):
    g = G(np.float16)
    x = g.op("Cast", ["x"], to=H)

    def res(x, cin, cout, s):
        y = conv(g, silu(g, gnorm(g, x, cin, s)), cin, cout)
        y = conv(g, silu(g, gnorm(g, y, cout, s)), cout, cout)
        return g.op("Add", [y, x if cin == cout else conv(g, x, cin, cout, 1)])

    x = conv(g, x, 4, 64)
    h1 = res(x, 64, 64, s)
    x = conv(g, h1, 64, 64, 3, 2)
    h2 = res(x, 64, 128, s // 2)
    x = conv(g, h2, 128, 128, 3, 2)
    x = res(x, 128, 128, s // 4)
    x = g.op("ConvTranspose", [x, g.c(w(128, 128, 2, 2)), g.c(w(128, scale=0.1))],
             kernel_shape=[2, 2], strides=[2, 2])
    x = res(g.op("Concat", [x, h2], axis=1), 256, 128, s // 2)
    x = g.op("ConvTranspose", [x, g.c(w(128, 64, 2, 2)), g.c(w(64, scale=0.1))],
             kernel_shape=[2, 2], strides=[2, 2])
    x = res(g.op("Concat", [x, h1], axis=1), 128, 64, s)
    y = g.op("Cast", [conv(g, silu(g, gnorm(g, x, 64, s)), 64, 4)], to=F)
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 4, s, s])],
         [helper.make_tensor_value_info(y, F, [1, 4, s, s])])


def effnet_f16(path, s=224, classes=1000):
    g = G(np.float16)
    x = g.op("Cast", ["x"], to=H)

    def mb(x, cin, cout, e, k, stride):
        c = cin * e
        y = x
        if e != 1:
            y = silu(g, bn(g, conv(g, y, cin, c, 1, bias=False), c))
        y = silu(g, bn(g, conv(g, y, c, c, k, stride, group=c, bias=False), c))
        r = max(1, cin // 4)
        p = g.op("GlobalAveragePool", [y])
        p = g.op("Sigmoid", [conv(g, silu(g, conv(g, p, c, r, 1)), r, c, 1)])
        y = bn(g, conv(g, g.op("Mul", [y, p]), c, cout, 1, bias=False), cout)
        return g.op("Add", [y, x]) if stride == 1 and cin == cout else y

    x = silu(g, bn(g, conv(g, x, 3, 32, 3, 2, bias=False), 32))
    cin = 32
    # (expand, out, repeats, stride, kernel) as EfficientNet-B0
    for e, o, n, st, k in ((1, 16, 1, 1, 3), (6, 24, 2, 2, 3), (6, 40, 2, 2, 5),
                           (6, 80, 3, 2, 3), (6, 112, 3, 1, 5), (6, 192, 4, 2, 5),
                           (6, 320, 1, 1, 3)):
        for i in range(n):
            x = mb(x, cin, o, e, k, st if i == 0 else 1)
            cin = o
    x = silu(g, bn(g, conv(g, x, cin, 1280, 1, bias=False), 1280))
    x = g.op("Flatten", [g.op("GlobalAveragePool", [x])])
    y = g.op("Cast", [g.op("Gemm", [x, g.c(w(classes, 1280)), g.c(w(classes, scale=0.1))],
                           transB=1)], to=F)
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, s, s])],
         [helper.make_tensor_value_info(y, F, [1, classes])])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    deeplab(os.path.join(out, "deeplab.onnx"))
    bert(os.path.join(out, "bert.onnx"))
    unet_gn_f16(os.path.join(out, "unet_gn_f16.onnx"))
    effnet_f16(os.path.join(out, "effnet_f16.onnx"))


if __name__ == "__main__":
    main()
