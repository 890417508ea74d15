#!/usr/bin/python3
"""gen_held7.py DIR: a seventh held-out set for bench/broad.sh
(BROAD_SET=held7), written 2026-12-07 before any tuning on it and not run
through opmig when written: for a later round's first measurement
(broad.sh quantizes one of them with `opmig quantize` first); seeded,
opset 17, checked with onnx.checker:
  shufflenet.onnx    a ShuffleNetV2-x1.0-style classifier at 224x224 in
                     float32: a 3x3 stride-2 stem and MaxPool, stages of
                     (116, 232, 464) channels and (4, 8, 4) units (a
                     channel Split in halves, 1x1 Conv + BatchNormalization
                     + Relu, 3x3 depthwise Conv of stride 1 or 2 with
                     BatchNormalization, Concat, channel shuffle as
                     Reshape-Transpose-Reshape), a 1x1 Conv to 1024,
                     GlobalAveragePool and a 1000-class Gemm head;
  shufflenet_qdq.onnx  broad.sh writes it: shufflenet.onnx quantized
                     static QDQ;
  densenet_f16.onnx  a DenseNet-121-style classifier at 160x160 in float16
                     (Cast in and out), reduced: growth 32, dense blocks
                     of (6, 12, 8) layers, each layer a Concat of all the
                     block's features so far, then BatchNormalization +
                     Relu + 1x1 Conv to 128 + BatchNormalization + Relu +
                     3x3 Conv to 32; transitions of BatchNormalization +
                     Relu + 1x1 Conv halving the channels and a 2x2
                     AveragePool; a 7x7 stride-2 stem with MaxPool, a
                     final BatchNormalization + Relu, GlobalAveragePool
                     and a 1000-class Gemm head;
  hrnet.onnx         an HRNet-W18-small-style pose net at 256x192 in
                     float32: two 3x3 stride-2 stem Convs, one Bottleneck,
                     then 2, 3 and 4 parallel branches of (18, 36, 72,
                     144) channels at 1/4 to 1/32 of the input, two
                     BasicBlocks a branch a stage, fused by strided 3x3
                     Convs downwards and 1x1 Conv + bilinear Resize
                     (half_pixel) upwards, summed and Relu'd; a 1x1 Conv to
                     17 heatmaps at 64x48;
  gpt_f16.onnx       a GPT-2-small-shaped decoder prefill in float16: 128
                     int64 token ids, Gather of token embeddings (vocab
                     8000, d 512) plus Gathered positions, four pre-LN
                     layers (8 heads of 64, one qkv MatMul Split in three,
                     scores Div by 8, a causal mask of -65504 Added as a
                     constant, Softmax, an MLP of 2048 with GELU in tanh
                     form), a final LayerNormalization, an lm_head MatMul
                     by the Transposed token embeddings (the same
                     initializer), logits Cast to float32;
  swin.onnx          a Swin-T-like stage pair at 112x112 in float32: a 4x4
                     stride-4 patch embedding Conv and LayerNormalization,
                     two blocks of 96 channels (3 heads) at 28x28, patch
                     merging (four strided Slices, Concat,
                     LayerNormalization, MatMul), two blocks of 192
                     channels (6 heads) at 14x14; each block window
                     attention over 7x7 windows (Reshape/Transpose
                     partition and merge), every second block's windows
                     shifted by 3 (a roll as Slice + Concat, and the shift
                     mask Added), a relative position bias Added as a
                     constant, an MLP of 4x with GELU in Erf form; a final
                     LayerNormalization."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

from gen_broad import save
from gen_held import G, bn
from gen_held4 import gelu_tanh, ln, lin, w
from gen_held5 import cbr, conv, gelu
from gen_held6 import patch

RNG = np.random.default_rng(32452843)
F = TensorProto.FLOAT
H = TensorProto.FLOAT16
I64 = TensorProto.INT64


def split(g, x, sizes, axis):
    """Split x along axis into parts of the given sizes: their names."""
    ys = [g.name("v") for _ in sizes]
    g.nodes.append(helper.make_node("Split", [x, g.c(np.int64(sizes))], ys, axis=axis))
    return ys


def reshape(g, x, shape):
    return g.op("Reshape", [x, g.c(np.int64(shape))])


def maxpool(g, x):
    return g.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)


def head(g, x, c, classes):
    """GlobalAveragePool, Flatten and a Gemm to classes."""
    x = g.op("Flatten", [g.op("GlobalAveragePool", [x])])
    return g.op("Gemm", [x, g.c(w(classes, c)), g.c(w(classes, scale=0.1))], transB=1)


def image_in(s, t=None):
    return [helper.make_tensor_value_info("x", F, [1, 3, s, s if t is None else t])]


def shufflenet(path, s=224, stages=(116, 232, 464), units=(4, 8, 4), classes=1000):
    g = G()

    def dw(x, c, stride):
        # scaled by 1/sqrt(2): a 1x1 Conv reads it without a Relu between
        # (a trained net's BatchNormalization keeps the scale so)
        y = g.op("Conv", [x, g.c(w(c, 1, 3, 3, scale=0.5 ** 0.5))], kernel_shape=[3, 3],
                 strides=[stride] * 2, group=c, pads=[1] * 4)
        return bn(g, y, c)

    def shuffle(a, b, c, hw):
        x = reshape(g, g.op("Concat", [a, b], axis=1), [1, 2, c // 2, hw, hw])
        return reshape(g, g.op("Transpose", [x], perm=[0, 2, 1, 3, 4]), [1, c, hw, hw])

    x = maxpool(g, cbr(g, "x", 3, 24, 3, 2))
    cin, hw = 24, s // 4
    for c, n in zip(stages, units):
        half, hw = c // 2, hw // 2
        a = cbr(g, dw(x, cin, 2), cin, half, 1)
        b = cbr(g, dw(cbr(g, x, cin, half, 1), half, 2), half, half, 1)
        x = shuffle(a, b, c, hw)
        for _ in range(n - 1):
            a, b = split(g, x, [half, half], 1)
            x = shuffle(a, cbr(g, dw(cbr(g, b, half, half, 1), half, 1), half, half, 1), c, hw)
        cin = c
    y = head(g, cbr(g, x, cin, 1024, 1), 1024, classes)
    save(g, path, image_in(s), [helper.make_tensor_value_info(y, F, [1, classes])])


def densenet_f16(path, s=160, growth=32, blocks=(6, 12, 8), c0=64, classes=1000):
    g = G(np.float16)

    def br(x, c):
        return g.op("Relu", [bn(g, x, c)])

    x = maxpool(g, cbr(g, g.op("Cast", ["x"], to=H), 3, c0, 7, 2))
    c = c0
    for i, n in enumerate(blocks):
        feats = [x]
        for k in range(n):
            y = x if k == 0 else g.op("Concat", feats, axis=1)
            y = conv(g, br(y, c + k * growth), c + k * growth, 4 * growth, 1, bias=False)
            feats.append(conv(g, br(y, 4 * growth), 4 * growth, growth, 3, bias=False))
        x = g.op("Concat", feats, axis=1)
        c += n * growth
        if i < len(blocks) - 1:
            x = conv(g, br(x, c), c, c // 2, 1, bias=False)
            x = g.op("AveragePool", [x], kernel_shape=[2, 2], strides=[2, 2])
            c //= 2
    y = g.op("Cast", [head(g, br(x, c), c, classes)], to=F)
    save(g, path, image_in(s), [helper.make_tensor_value_info(y, F, [1, classes])])


def hrnet(path, h=256, wd=192, widths=(18, 36, 72, 144), joints=17):
    g = G()

    def basic(x, c):
        y = bn(g, conv(g, cbr(g, x, c, c), c, c, bias=False), c)
        return g.op("Relu", [g.op("Add", [y, x])])

    def to(x, j, i):
        """Branch j's features brought to branch i's width and size."""
        if j > i:
            x = bn(g, conv(g, x, widths[j], widths[i], 1, bias=False), widths[i])
            f = float(2 ** (j - i))
            return g.op("Resize", [x, "", g.c(np.float32([1, 1, f, f]))], mode="linear",
                        coordinate_transformation_mode="half_pixel")
        for _ in range(i - j - 1):
            x = cbr(g, x, widths[j], widths[j], 3, 2)
        return bn(g, conv(g, x, widths[j], widths[i], 3, 2, bias=False), widths[i])

    def fuse(bs, outs):
        res = []
        for i in range(outs):
            y = bs[i]
            for j, b in enumerate(bs):
                if j != i:
                    y = g.op("Add", [y, to(b, j, i)])
            res.append(g.op("Relu", [y]))
        return res

    x = cbr(g, cbr(g, "x", 3, 64, 3, 2), 64, 64, 3, 2)
    y = bn(g, conv(g, cbr(g, cbr(g, x, 64, 32, 1), 32, 32), 32, 128, 1, bias=False), 128)
    x = g.op("Relu", [g.op("Add", [y, bn(g, conv(g, x, 64, 128, 1, bias=False), 128)])])
    bs = [cbr(g, x, 128, widths[0]), cbr(g, x, 128, widths[1], 3, 2)]
    for n in (2, 3, 4):
        if n > 2:
            bs.append(cbr(g, bs[-1], widths[n - 2], widths[n - 1], 3, 2))
        bs = [basic(basic(b, widths[i]), widths[i]) for i, b in enumerate(bs)]
        bs = fuse(bs, n if n < 4 else 1)
    y = conv(g, bs[0], widths[0], joints, 1)
    save(g, path, image_in(h, wd),
         [helper.make_tensor_value_info(y, F, [1, joints, h // 4, wd // 4])])


def heads_of(g, v, t, heads, hd, b=1):
    """[b, t, heads * hd] to [b, heads, t, hd]."""
    return g.op("Transpose", [reshape(g, v, [b, t, heads, hd])], perm=[0, 2, 1, 3])


def merge_heads(g, o, t, d, b=1):
    """[b, heads, t, hd] to [b, t, d]."""
    return reshape(g, g.op("Transpose", [o], perm=[0, 2, 1, 3]), [b, t, d])


def gpt_f16(path, t=128, d=512, heads=8, layers=4, vocab=8000, ff=2048):
    g = G(np.float16)
    hd = d // heads
    wte = g.c(0.02 * RNG.standard_normal((vocab, d)))
    pos = g.op("Gather", [g.c(0.01 * RNG.standard_normal((t, d))),
                          g.c(np.arange(t, dtype=np.int64)[None])], axis=0)
    x = g.op("Add", [g.op("Gather", [wte, "ids"], axis=0), pos])
    mask = g.c(np.triu(np.full((t, t), -65504.0), 1)[None, None])
    for _ in range(layers):
        q, k, v = (heads_of(g, p, t, heads, hd)
                   for p in split(g, lin(g, ln(g, x, d, 1e-5), d, 3 * d), [d] * 3, 2))
        s = g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])])
        s = g.op("Add", [g.op("Div", [s, g.c(np.float32(hd ** 0.5))]), mask])
        o = g.op("MatMul", [g.op("Softmax", [s], axis=-1), v])
        x = g.op("Add", [x, lin(g, merge_heads(g, o, t, d), d, d)])
        x = g.op("Add", [x, lin(g, gelu_tanh(g, lin(g, ln(g, x, d, 1e-5), d, ff)), ff, d)])
    x = ln(g, x, d, 1e-5)
    y = g.op("MatMul", [x, g.op("Transpose", [wte], perm=[1, 0])])
    y = g.op("Cast", [y], to=F)
    save(g, path, [helper.make_tensor_value_info("ids", I64, [1, t])],
         [helper.make_tensor_value_info(y, F, [1, t, vocab])])


def rel_bias(win, heads):
    """Swin's relative position bias of a win x win window: [1, heads, n, n]."""
    table = 0.02 * RNG.standard_normal(((2 * win - 1) ** 2, heads))
    yx = np.stack(np.meshgrid(np.arange(win), np.arange(win), indexing="ij")).reshape(2, -1)
    rel = yx[:, :, None] - yx[:, None, :] + win - 1
    return table[rel[0] * (2 * win - 1) + rel[1]].transpose(2, 0, 1)[None]


def shift_mask(r, win, shift):
    """Swin's mask of shifted windows over an r x r map: [windows, 1, n, n],
    -100 between places from different regions."""
    img = np.zeros((r, r))
    cuts = (slice(0, -win), slice(-win, -shift), slice(-shift, None))
    for k, (a, b) in enumerate((a, b) for a in cuts for b in cuts):
        img[a, b] = k
    m = img.reshape(r // win, win, r // win, win).transpose(0, 2, 1, 3).reshape(-1, win * win)
    return np.where(m[:, :, None] != m[:, None, :], -100.0, 0.0)[:, None]


def roll(g, x, r, k):
    """x [1, r, r, c] rolled by k places along both spatial axes, as
    torch.roll exports: Slice + Concat."""
    m = (r - k) % r
    for axis in (1, 2):
        a = g.op("Slice", [x, g.c(np.int64([m])), g.c(np.int64([r])), g.c(np.int64([axis]))])
        b = g.op("Slice", [x, g.c(np.int64([0])), g.c(np.int64([m])), g.c(np.int64([axis]))])
        x = g.op("Concat", [a, b], axis=axis)
    return x


def swin_block(g, x, r, c, heads, win, shift):
    n, nw, hd = win * win, (r // win) ** 2, c // heads
    y = reshape(g, ln(g, x, c, 1e-5), [1, r, r, c])
    if shift:
        y = roll(g, y, r, -shift)
    y = reshape(g, y, [1, r // win, win, r // win, win, c])
    y = reshape(g, g.op("Transpose", [y], perm=[0, 1, 3, 2, 4, 5]), [nw, n, c])
    qkv = reshape(g, lin(g, y, c, 3 * c), [nw, n, 3, heads, hd])
    qkv = g.op("Transpose", [qkv], perm=[2, 0, 3, 1, 4])
    q, k, v = (g.op("Gather", [qkv, g.c(np.int64(i))], axis=0) for i in range(3))
    q = g.op("Mul", [q, g.c(np.float32(hd ** -0.5))])
    s = g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])])
    s = g.op("Add", [s, g.c(rel_bias(win, heads))])
    if shift:
        s = g.op("Add", [s, g.c(shift_mask(r, win, shift))])
    o = g.op("MatMul", [g.op("Softmax", [s], axis=-1), v])
    y = lin(g, merge_heads(g, o, n, c, nw), c, c)
    y = reshape(g, y, [1, r // win, r // win, win, win, c])
    y = g.op("Transpose", [y], perm=[0, 1, 3, 2, 4, 5])
    if shift:
        y = roll(g, reshape(g, y, [1, r, r, c]), r, shift)
    x = g.op("Add", [x, reshape(g, y, [1, r * r, c])])
    return g.op("Add", [x, lin(g, gelu(g, lin(g, ln(g, x, c, 1e-5), c, 4 * c)), 4 * c, c)])


def patch_merge(g, x, r, c):
    """Swin's patch merging: [1, r * r, c] to [1, r * r / 4, 2c]."""
    x = reshape(g, x, [1, r, r, c])
    parts = [g.op("Slice", [x, g.c(np.int64([i, j])), g.c(np.int64([r, r])),
                            g.c(np.int64([1, 2])), g.c(np.int64([2, 2]))])
             for j in (0, 1) for i in (0, 1)]
    x = ln(g, reshape(g, g.op("Concat", parts, axis=-1), [1, r * r // 4, 4 * c]), 4 * c, 1e-5)
    return g.op("MatMul", [x, g.c(w(4 * c, 2 * c))])


def swin(path, s=112, dims=(96, 192), depths=(2, 2), heads=(3, 6), win=7):
    g = G()
    r, c = s // 4, dims[0]
    x = g.op("Transpose", [reshape(g, patch(g, "x", 3, c, 4), [1, c, r * r])], perm=[0, 2, 1])
    x = ln(g, x, c, 1e-5)
    for i, (n, nh) in enumerate(zip(depths, heads)):
        if i:
            x = patch_merge(g, x, r, c)
            r, c = r // 2, dims[i]
        for b in range(n):
            x = swin_block(g, x, r, c, nh, win, win // 2 if b % 2 and r > win else 0)
    x = ln(g, x, c, 1e-5)
    save(g, path, image_in(s), [helper.make_tensor_value_info(x, F, [1, r * r, c])])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    shufflenet(os.path.join(out, "shufflenet.onnx"))
    densenet_f16(os.path.join(out, "densenet_f16.onnx"))
    hrnet(os.path.join(out, "hrnet.onnx"))
    gpt_f16(os.path.join(out, "gpt_f16.onnx"))
    swin(os.path.join(out, "swin.onnx"))


if __name__ == "__main__":
    main()
