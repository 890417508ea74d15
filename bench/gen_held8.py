#!/usr/bin/python3
"""gen_held8.py DIR: an eighth held-out set for bench/broad.sh
(BROAD_SET=held8), written 2026-12-07 before any tuning on it and not run
through opmig when written: for a later round's first measurement
(broad.sh quantizes two of them with `opmig quantize` first); seeded,
opset 17, checked with onnx.checker:
  mobilevit.onnx     a MobileViT-XS-style classifier at 192x192 in
                     float32: a 3x3 stride-2 stem, MobileNetV2 inverted
                     residuals (1x1 expand, 3x3 depthwise, 1x1 project,
                     BatchNormalization, SiLU as Mul by Sigmoid) of (32,
                     48, 64, 80, 96) channels, MobileViT blocks after the
                     last three (a local 3x3 Conv and a 1x1 Conv to d of
                     96, 120, 144, unfolding into 2x2 patches by
                     Reshape/Transpose to [4, N, d], two pre-LN
                     transformer layers of 4 heads with one qkv MatMul
                     Split in three and an MLP of 2d with SiLU, a final
                     LayerNormalization, folding back, a 1x1 Conv, Concat
                     with the block's input, a 3x3 fusion Conv), a 1x1 Conv
                     to 384, GlobalAveragePool and a 1000-class Gemm head;
  vae_f16.onnx       a Stable-Diffusion-VAE-decoder-style stack in float16
                     (Cast in and out), reduced to 32x32 latents of 4
                     channels (at 64x64 its attention alone would be
                     4096 x 4096): a 3x3 conv_in to 128, a mid block of a
                     ResNet block, single-head self-attention over the
                     32x32 places (GroupNormalization as
                     InstanceNormalization over 32 groups via Reshape,
                     MatMul q, k, v and out, Softmax) and a ResNet block;
                     two up blocks of a ResNet block to (64, 32) channels,
                     nearest 2x Resize and a 3x3 Conv; a last ResNet
                     block at 128x128; GroupNormalization, SiLU and a 3x3
                     conv_out to 3 channels; each ResNet block's
                     GroupNormalization (32 groups) decomposed as
                     ReduceMean/Sub/Pow/ReduceMean/Sqrt/Div, SiLU, 3x3
                     Convs and a 1x1 Conv shortcut where the width
                     changes;
  fastspeech.onnx    a FastSpeech2-style encoder and decoder in float32:
                     64 int64 phoneme ids (at 128 it took 64 ms in
                     onnxruntime at one thread), a Gather of embeddings (80 by
                     256), sinusoidal positions Added as a constant, four
                     post-LN FFT blocks (attention of 2 heads with one qkv
                     MatMul Gathered in three, a 1-D Conv of kernel 9 to
                     256 with Relu and a 1-D Conv of kernel 1, residual
                     Adds and LayerNormalization), a length regulator
                     fixed at 4 frames a phoneme (Unsqueeze, Expand,
                     Reshape to 256 frames), positions Added again, four
                     decoder FFT blocks and a MatMul to 80 mel bins;
  tts_dyn.onnx       broad.sh writes it: fastspeech.onnx quantized by
                     `opmig quantize --dynamic`;
  ssdlite.onnx       an SSDLite-MobileNetV2-style detector at 320x320 in
                     float32: a MobileNetV2 backbone (inverted residuals
                     with BatchNormalization and Relu6 as Clip, a 1x1 Conv
                     to 1280), extra levels of 1x1 Conv, 3x3 depthwise
                     stride-2 Conv and 1x1 Conv to (512, 256, 256, 128),
                     depthwise separable class and box heads of 6 anchors
                     at 6 levels (the expansion of the 160-channel stage at
                     20x20, then 10x10 to 1x1), each head's output
                     Transposed NHWC and Reshaped, Concat'ed to
                     [1, 3234, 91] class logits with Softmax over the last
                     axis and [1, 3234, 4] boxes;
  ssdlite_qdq.onnx   broad.sh writes it: ssdlite.onnx quantized static
                     QDQ."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

from gen_broad import save
from gen_held import G, bn
from gen_held4 import attention, ln, lin, silu
from gen_held5 import conv, gnorm
from gen_held6 import conv1d, sinusoids
from gen_held7 import head, heads_of, image_in, merge_heads, reshape, split

RNG = np.random.default_rng(49979687)
F = TensorProto.FLOAT
H = TensorProto.FLOAT16
I64 = TensorProto.INT64


def relu6(g, x):
    return g.op("Clip", [x, g.c(np.float32(0)), g.c(np.float32(6))])


def cba(g, x, cin, cout, k=1, stride=1, group=1, act=None):
    """Conv without bias, BatchNormalization, then act(g, y) if given."""
    y = bn(g, conv(g, x, cin, cout, k, stride, group, bias=False), cout)
    return act(g, y) if act else y


def inverted(g, x, cin, cout, e, stride, act, expanded=None):
    """A MobileNetV2 inverted residual; expanded, where given, is x's 1x1
    expansion already made (a detector's tap)."""
    c = cin * e
    y = expanded or (x if e == 1 else cba(g, x, cin, c, 1, act=act))
    y = cba(g, cba(g, y, c, c, 3, stride, c, act), c, cout)
    return g.op("Add", [x, y]) if stride == 1 and cin == cout else y


def stage(g, x, cin, cout, e, n, stride, act):
    """n inverted residuals, the first of the given stride."""
    for i in range(n):
        x = inverted(g, x, cin if i == 0 else cout, cout, e, stride if i == 0 else 1, act)
    return x


def mha(g, x, b, t, d, heads):
    """Self-attention over [b, t, d]: one qkv MatMul Split in three."""
    hd = d // heads
    q, k, v = (heads_of(g, p, t, heads, hd, b) for p in split(g, lin(g, x, d, 3 * d), [d] * 3, 2))
    s = g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])])
    s = g.op("Mul", [s, g.c(np.float32(hd ** -0.5))])
    o = g.op("MatMul", [g.op("Softmax", [s], axis=-1), v])
    return lin(g, merge_heads(g, o, t, d, b), d, d)


def mvit_block(g, x, c, d, r, heads=4, layers=2):
    """MobileViT's block over [1, c, r, r] with 2x2 patches."""
    y = conv(g, cba(g, x, c, c, 3, act=silu), c, d, 1, bias=False)
    h, n = r // 2, (r // 2) ** 2
    y = reshape(g, y, [1, d, h, 2, h, 2])
    y = reshape(g, g.op("Transpose", [y], perm=[0, 3, 5, 2, 4, 1]), [4, n, d])
    for _ in range(layers):
        y = g.op("Add", [y, mha(g, ln(g, y, d, 1e-5), 4, n, d, heads)])
        y = g.op("Add", [y, lin(g, silu(g, lin(g, ln(g, y, d, 1e-5), d, 2 * d)), 2 * d, d)])
    y = reshape(g, ln(g, y, d, 1e-5), [1, 2, 2, h, h, d])
    y = reshape(g, g.op("Transpose", [y], perm=[0, 5, 3, 1, 4, 2]), [1, d, r, r])
    y = cba(g, y, d, c, 1, act=silu)
    return cba(g, g.op("Concat", [x, y], axis=1), 2 * c, c, 3, act=silu)


def mobilevit(path, s=192, classes=1000):
    g = G()
    x = stage(g, cba(g, "x", 3, 16, 3, 2, act=silu), 16, 32, 4, 1, 1, silu)
    x = stage(g, x, 32, 48, 4, 3, 2, silu)
    cin, r = 48, s // 4
    for c, d in ((64, 96), (80, 120), (96, 144)):
        r //= 2
        x = mvit_block(g, inverted(g, x, cin, c, 4, 2, silu), c, d, r)
        cin = c
    y = head(g, cba(g, x, cin, 384, 1, act=silu), 384, classes)
    save(g, path, image_in(s), [helper.make_tensor_value_info(y, F, [1, classes])])


def gnorm_decomposed(g, x, c, s, groups=32, eps=1e-6):
    """GroupNormalization as an exporter decomposes it."""
    y = reshape(g, x, [1, groups, -1])
    d = g.op("Sub", [y, g.op("ReduceMean", [y], axes=[2])])
    var = g.op("ReduceMean", [g.op("Pow", [d, g.c(np.float32(2))])], axes=[2])
    y = g.op("Div", [d, g.op("Sqrt", [g.op("Add", [var, g.c(np.float32(eps))])])])
    y = g.op("Mul", [reshape(g, y, [1, c, s, s]), g.c(1 + 0.1 * RNG.standard_normal((c, 1, 1)))])
    return g.op("Add", [y, g.c(0.1 * RNG.standard_normal((c, 1, 1)))])


def vae_res(g, x, cin, cout, s):
    y = conv(g, silu(g, gnorm_decomposed(g, x, cin, s)), cin, cout)
    y = conv(g, silu(g, gnorm_decomposed(g, y, cout, s)), cout, cout)
    return g.op("Add", [x if cin == cout else conv(g, x, cin, cout, 1), y])


def vae_attn(g, x, c, s):
    """The VAE's single-head self-attention over the s x s places."""
    y = g.op("Transpose", [reshape(g, gnorm(g, x, c, s, 32), [1, c, s * s])], perm=[0, 2, 1])
    q, k, v = (lin(g, y, c, c) for _ in range(3))
    a = g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 2, 1])])
    a = g.op("Softmax", [g.op("Mul", [a, g.c(np.float32(c ** -0.5))])], axis=-1)
    y = lin(g, g.op("MatMul", [a, v]), c, c)
    return g.op("Add", [x, reshape(g, g.op("Transpose", [y], perm=[0, 2, 1]), [1, c, s, s])])


def vae_f16(path, s=32, c=128, ups=(64, 32)):
    g = G(np.float16)
    x = conv(g, g.op("Cast", ["x"], to=H), 4, c)
    x = vae_res(g, vae_attn(g, vae_res(g, x, c, c, s), c, s), c, c, s)
    cin, r = c, s
    for cout in ups:
        x = vae_res(g, x, cin, cout, r)
        x = g.op("Resize", [x, "", g.c(np.float32([1, 1, 2, 2]), np.float32)], mode="nearest",
                 coordinate_transformation_mode="asymmetric", nearest_mode="floor")
        cin, r = cout, 2 * r
        x = conv(g, x, cin, cin)
    x = silu(g, gnorm(g, vae_res(g, x, cin, cin, r), cin, r, 32))
    y = g.op("Cast", [conv(g, x, cin, 3)], to=F)
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 4, s, s])],
         [helper.make_tensor_value_info(y, F, [1, 3, r, r])])


def fft_block(g, x, t, d, heads, k, ff):
    """FastSpeech's feed-forward Transformer block, post-LN."""
    x = ln(g, g.op("Add", [x, attention(g, x, t, d, heads)]), d, 1e-5)
    y = conv1d(g, g.op("Transpose", [x], perm=[0, 2, 1]), d, ff, k)
    y = conv1d(g, g.op("Relu", [y]), ff, d, 1)
    return ln(g, g.op("Add", [x, g.op("Transpose", [y], perm=[0, 2, 1])]), d, 1e-5)


def fastspeech(path, t=64, d=256, heads=2, layers=4, k=9, ff=256, vocab=80, rep=4, mels=80):
    g = G()
    x = g.op("Gather", [g.c(0.3 * RNG.standard_normal((vocab, d))), "ids"], axis=0)
    x = g.op("Add", [x, g.c(sinusoids(t, d))])
    for _ in range(layers):
        x = fft_block(g, x, t, d, heads, k, ff)
    x = g.op("Expand", [g.op("Unsqueeze", [x, g.c(np.int64([2]))]), g.c(np.int64([1, t, rep, d]))])
    x = g.op("Add", [reshape(g, x, [1, rep * t, d]), g.c(sinusoids(rep * t, d))])
    for _ in range(layers):
        x = fft_block(g, x, rep * t, d, heads, k, ff)
    y = lin(g, x, d, mels)
    save(g, path, [helper.make_tensor_value_info("ids", I64, [1, t])],
         [helper.make_tensor_value_info(y, F, [1, rep * t, mels])])


def ssd_head(g, x, c, r, out, anchors):
    """A depthwise separable head: [1, r * r * anchors, out]."""
    y = conv(g, cba(g, x, c, c, 3, group=c, act=relu6), c, anchors * out, 1)
    return reshape(g, g.op("Transpose", [y], perm=[0, 2, 3, 1]), [1, r * r * anchors, out])


def ssdlite(path, s=320, classes=91, anchors=6):
    g = G()
    x = cba(g, "x", 3, 32, 3, 2, act=relu6)
    cin = 16
    x = inverted(g, x, 32, cin, 1, 1, relu6)
    for c, n, stride in ((24, 2, 2), (32, 3, 2), (64, 4, 2), (96, 3, 1)):
        x, cin = stage(g, x, cin, c, 6, n, stride, relu6), c
    tap = cba(g, x, 96, 576, 1, act=relu6)
    x = inverted(g, x, 96, 160, 6, 2, relu6, expanded=tap)
    x = stage(g, x, 160, 160, 6, 2, 1, relu6)
    x = cba(g, inverted(g, x, 160, 320, 6, 1, relu6), 320, 1280, 1, act=relu6)
    feats, r = [(tap, 576, s // 16), (x, 1280, s // 32)], s // 32
    for c in (512, 256, 256, 128):
        half, r = c // 2, (r + 1) // 2
        y = cba(g, feats[-1][0], feats[-1][1], half, 1, act=relu6)
        y = cba(g, cba(g, y, half, half, 3, 2, half, relu6), half, c, 1, act=relu6)
        feats.append((y, c, r))
    cls = g.op("Concat", [ssd_head(g, f, c, r, classes, anchors) for f, c, r in feats], axis=1)
    box = g.op("Concat", [ssd_head(g, f, c, r, 4, anchors) for f, c, r in feats], axis=1)
    n = anchors * sum(r * r for _, _, r in feats)
    save(g, path, image_in(s),
         [helper.make_tensor_value_info(g.op("Softmax", [cls], axis=-1), F, [1, n, classes]),
          helper.make_tensor_value_info(box, F, [1, n, 4])])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    mobilevit(os.path.join(out, "mobilevit.onnx"))
    vae_f16(os.path.join(out, "vae_f16.onnx"))
    fastspeech(os.path.join(out, "fastspeech.onnx"))
    ssdlite(os.path.join(out, "ssdlite.onnx"))


if __name__ == "__main__":
    main()
