#!/usr/bin/python3
"""gen_held16.py DIR [MODEL...]: a sixteenth held-out set for
bench/broad.sh (BROAD_SET=held16), written 2026-12-07 in the tenth
session by a helper, before any tuning on it; its first
measurement is broad.sh's run on that session's starting binary
(broad.sh quantizes two of them with `opmig quantize` first); seeded,
opset 17, checked with onnx.checker.  Every BatchNormalization that
follows a Conv is folded into it (a Conv with a bias), as torch.onnx
writes eval mode; each Linear is a MatMul and a bias Add.  Families none
of the fifteen sets before has, each sized to about 10-70 ms in
onnxruntime at one thread:
  convnextv2_f16.onnx a ConvNeXt-V2-Femto-style classifier at 224x224 in
                     float16 (Cast in and out): a 4x4 stride-4 stem and
                     2x2 stride-2 downsamplings each with a channels-first
                     LayerNorm as torch.onnx writes it (ReduceMean, Sub,
                     Pow, ReduceMean, Add, Sqrt, Div, Mul, Add); blocks
                     (2, 2, 6, 2) of 48, 96, 192, 384 channels: a 7x7
                     depthwise Conv, Transpose to channels last,
                     LayerNormalization, a Linear to 4x, GELU as Erf,
                     global response normalization (GRN: ReduceL2 over
                     the plane and its ReduceMean over the channels in
                     float32 between Casts, as autocast runs norms; Div,
                     Mul by gamma, Add beta and the input), a Linear back,
                     Transpose, Add; ReduceMean over the plane,
                     LayerNormalization, a Linear to 1000;
  mbv4.onnx          a MobileNetV4-Conv-Small-style classifier in float32
                     on a batch of 4 at 256x256 (ReLU): a 3x3 stride-2
                     stem, two fused inverted-bottleneck stages (a 3x3
                     stride-2 ConvBN, a 1x1 ConvBN), universal inverted
                     bottlenecks (UIB) in all four forms (ExtraDW: a
                     depthwise Conv before the expansion and one after
                     it; IB: only after; ConvNext-like: only before; FFN:
                     none) with 3x3 and 5x5 depthwise kernels, stride 2
                     on the first depthwise Conv, residual Adds at
                     stride 1; a 1x1 ConvBN to 960,
                     GlobalAveragePool, a 1x1 Conv to 1280, Flatten, a
                     Gemm to 1000: [4, 1000];
  mbv4_qdq.onnx      broad.sh writes it: mbv4.onnx quantized static QDQ;
  wavenet.onnx       a WaveNet-style vocoder in float32 on 2048 samples
                     and 8 mel frames of 80: the mels upsampled by a
                     nearest Resize (hop 256); a causal 1x1 Conv in to 64
                     residual channels; 16 layers of dilations 1..128
                     twice, each a left Pad of the dilation and a 2-tap
                     dilated Conv to 128, the mels' 1x1 Conv Added, Split
                     in two, gated Tanh * Sigmoid, a 1x1 Conv to the
                     residual (Add, Mul by sqrt(0.5)) and one to 64 skip
                     channels; the skips summed, Relu, a 1x1 Conv, Relu, a
                     1x1 Conv to 256 classes: [1, 256, 2048] logits;
  rife.onnx          a RIFE-style video frame interpolator in float32 on
                     two 192x320 frames: three IFBlocks at scales 4, 2
                     and 1 (a bilinear Resize down, two 3x3 stride-2 Convs
                     with PRelu, four 3x3 Convs with PRelu and a residual
                     Add, a 4x4 stride-2 ConvTranspose to 4 flow channels
                     and a mask, a bilinear Resize up, the flow scaled);
                     each block after the first fed the frames warped by
                     the flow so far and the flow (Concat) and its
                     output Added; backward warping by GridSample
                     (bilinear, border, align_corners 1) on a constant
                     base grid plus the flow normalized (Slice, Mul,
                     Concat, Transpose); the two warped frames blended by
                     the Sigmoid mask: [1, 3, 192, 320];
  gpt2_kv.onnx       a GPT-2-style decoder step in float32 with past key
                     and value inputs (past_key_values.N.key/value of
                     [1, 12, 384, 64] for 4 layers of d 768) and one
                     int64 token: a token Gather and the position-384
                     embedding Added; per layer LayerNormalization, one qkv
                     Linear (768 to 2304) Split three ways, the new key and
                     value Concatenated to the past ones (the present outputs),
                     q k^T scaled, Softmax, v, an output Linear, Add,
                     LayerNormalization, an MLP of 3072 with GPT-2's tanh GELU
                     (Pow 3, Mul, Add, Tanh), Add; a final LayerNormalization
                     and an untied lm_head MatMul to 16384: logits [1, 1,
                     16384] and eight presents;
  gpt2_kv_dyn.onnx   broad.sh writes it: gpt2_kv.onnx quantized by
                     `opmig quantize --dynamic`;
  pointnet2.onnx     a PointNet++-SSG-style point-cloud classifier in
                     float32 on [1, 2048, 3] points (ordered by
                     farthest-point sampling outside the graph, so the
                     centroids are leading Slices): two set abstractions
                     (512 centroids with 32 neighbours, 128 with 64) each
                     grouping by k nearest: squared distances by MatMul,
                     ReduceSum of squares and Add, TopK (smallest), the
                     neighbours Gathered from the flattened points,
                     relative coordinates by Sub, Concat with their
                     features, Transpose to [1, C, npoint, k], a shared
                     MLP of three 1x1 ConvBNs with Relu, ReduceMax over the
                     neighbours; a group-all abstraction (MLP to 1024,
                     ReduceMax) and a head of three Linears with Relu to
                     40 classes, LogSoftmax;
  effdet_nhwc.onnx   an EfficientDet-Lite-style detector at 384x384 as
                     tf2onnx writes it before its optimizer: the input
                     NHWC and every Conv, MaxPool and Resize between
                     Transposes; an MBConv backbone with Relu6 (Clip), no
                     SE, to P3-P5 (40, 112, 192 channels), P6 and P7 by a
                     1x1 Conv and 3x3 stride-2 MaxPools; three BiFPN
                     layers of 64 channels, each fusion a fast normalized
                     weighted sum (Relu of the weights, ReduceSum, Add
                     eps, Div, Gather each, Mul, Add) of nearest Resizes
                     up or MaxPools down, Relu6 and a separable Conv
                     (depthwise 3x3, pointwise 1x1 ConvBN); class and box
                     nets of three separable Convs with Relu6 shared
                     across the five levels, 9 anchors, 90 classes with
                     Sigmoid: [1, 27621, 90] and [1, 27621, 4];
  vqgan.onnx         a VQGAN-style image tokenizer (taming-transformers'
                     encoder and quantizer) in float32 at 128x128: a 3x3
                     Conv in to 32, ResBlocks (GroupNorm of 8 groups as
                     InstanceNormalization between Reshapes, SiLU, 3x3
                     Convs, 1x1 shortcuts where the width changes) at
                     32, 64, 128, 128 channels and downsamplings by an
                     asymmetric Pad (0, 1) and a 3x3 stride-2 Conv to
                     16x16; a mid block of ResBlock, single-head
                     self-attention of 1x1 q, k, v Convs over 256
                     positions, ResBlock; GroupNorm, SiLU, a 3x3 Conv to
                     64, a 1x1 quant Conv; the codebook lookup against
                     1024 codes of 64 (ReduceSum of squares, MatMul, Sub,
                     Add, ArgMin, Gather, Transpose): indices [1, 256] and
                     quantized latents [1, 64, 16, 16];
  u2netp.onnx        a U^2-Net-lite (U2NETP) salient-object segmenter in
                     float32 at 112x112: six stages of residual U-blocks
                     (RSU-7, 6, 5, 4 and two RSU-4F of dilations 1, 2,
                     4, 8) of 16 mid and 64 out channels, each block a
                     nested encoder-decoder of 3x3 ConvBN Relus with
                     MaxPools (ceil mode) and bilinear Resizes back and
                     Concat skips, its input conv Added; the stages
                     joined by MaxPools and bilinear Resizes, six side
                     outputs (3x3 Conv to 1, Resize to 112x112), a 1x1
                     fusion Conv of their Concat, Sigmoid: [1, 1, 112,
                     112] and the six sides [1, 6, 112, 112].
With MODEL names, only those are written (sizing; the weights then
differ: the set is what a run without names writes)."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

from gen_broad import save
from gen_held import G
from gen_held7 import merge_heads, reshape, split

RNG = np.random.default_rng(16071207)
F = TensorProto.FLOAT
H = TensorProto.FLOAT16
I64 = TensorProto.INT64


def w(*shape, scale=1.0):
    """He-scaled normal weights, the fan all dims but the first."""
    fan = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    return (RNG.standard_normal(shape) * np.sqrt(2.0 / fan) * scale).astype(np.float32)


def axes(g, *a):
    return g.c(np.int64(a))


def conv(g, x, cin, cout, k=3, stride=1, group=1, pad=None, bias=True, scale=1.0, dil=1):
    """A Conv of constant weight and bias; k and stride ints (2-D) or
    tuples (any rank); pads keep the size at stride 1 unless pad (a list
    of begins then ends) is given."""
    ks = list(k) if isinstance(k, tuple) else [k, k]
    ins = [x, g.c(w(cout, cin // group, *ks, scale=scale))]
    if bias:
        ins.append(g.c(w(cout, scale=0.1)))
    at = {}
    if dil != 1:
        at["dilations"] = [dil] * len(ks)
    return g.op("Conv", ins, kernel_shape=ks,
                strides=list(stride) if isinstance(stride, tuple) else [stride] * len(ks),
                group=group, pads=[dil * (q - 1) // 2 for q in ks] * 2 if pad is None else pad,
                **at)


def relu(g, x):
    return g.op("Relu", [x])


def relu6(g, x):
    return g.op("Clip", [x, g.c(np.float32(0)), g.c(np.float32(6))])


def silu(g, x):
    return g.op("Mul", [x, g.op("Sigmoid", [x])])


def ln(g, x, n, eps=1e-6):
    return g.op("LayerNormalization", [x, g.c(1 + 0.1 * RNG.standard_normal(n)),
                                       g.c(0.1 * RNG.standard_normal(n))], axis=-1, epsilon=eps)


def lin(g, x, i, o, bias=True, scale=1.0):
    y = g.op("MatMul", [x, g.c(w(i, o, scale=scale))])
    return g.op("Add", [y, g.c(w(o, scale=0.1))]) if bias else y


def gelu_erf(g, x):
    e = g.op("Erf", [g.op("Div", [x, g.c(np.float32(np.sqrt(2)))])])
    return g.op("Mul", [g.op("Mul", [x, g.op("Add", [e, g.c(np.float32(1))])]),
                        g.c(np.float32(0.5))])


def ln2d(g, x, c, eps=1e-6):
    """A channels-first LayerNorm as torch.onnx writes it."""
    d = g.op("Sub", [x, g.op("ReduceMean", [x], axes=[1], keepdims=1)])
    var = g.op("ReduceMean", [g.op("Pow", [d, g.c(np.float32(2))])], axes=[1], keepdims=1)
    y = g.op("Div", [d, g.op("Sqrt", [g.op("Add", [var, g.c(np.float32(eps))])])])
    return g.op("Add", [g.op("Mul", [y, g.c((1 + 0.1 * RNG.standard_normal(c)).reshape(1, c, 1, 1))]),
                        g.c((0.1 * RNG.standard_normal(c)).reshape(1, c, 1, 1))])


def resize(g, x, scale, mode="nearest", sizes=None, align=False):
    at = {"mode": mode}
    if mode == "linear":
        at["coordinate_transformation_mode"] = "align_corners" if align else "half_pixel"
    if sizes is not None:
        return g.op("Resize", [x, "", "", g.c(np.int64(sizes))], **at)
    return g.op("Resize", [x, "", g.c(np.float32([1, 1, scale, scale]), np.float32)], **at)


# ---- convnextv2_f16 -----------------------------------------------------------

def grn(g, x, c):
    """ConvNeXt-V2's global response normalization of NHWC x, its norms
    in float32 as autocast runs them."""
    x32 = g.op("Cast", [x], to=F)
    gx = g.op("ReduceL2", [x32], axes=[1, 2], keepdims=1)
    nx = g.op("Div", [gx, g.op("Add", [g.op("ReduceMean", [gx], axes=[-1], keepdims=1),
                                       g.c(np.float32(1e-6), np.float32)])])
    nx = g.op("Cast", [nx], to=H)
    y = g.op("Mul", [g.c(0.1 * RNG.standard_normal((1, 1, 1, c))), g.op("Mul", [x, nx])])
    return g.op("Add", [g.op("Add", [y, g.c(0.1 * RNG.standard_normal((1, 1, 1, c)))]), x])


def convnextv2_f16(path, s=224, depths=(2, 2, 6, 2), dims=(48, 96, 192, 384), classes=1000):
    g = G(np.float16)
    x = g.op("Cast", ["x"], to=H)
    x = ln2d(g, conv(g, x, 3, dims[0], 4, 4, pad=[0, 0, 0, 0]), dims[0])
    for i, (n, d) in enumerate(zip(depths, dims)):
        if i:
            x = conv(g, ln2d(g, x, dims[i - 1]), dims[i - 1], d, 2, 2, pad=[0, 0, 0, 0])
        for _ in range(n):
            y = conv(g, x, d, d, 7, group=d)
            y = ln(g, g.op("Transpose", [y], perm=[0, 2, 3, 1]), d)
            y = grn(g, gelu_erf(g, lin(g, y, d, 4 * d)), 4 * d)
            y = lin(g, y, 4 * d, d, scale=0.5)
            x = g.op("Add", [x, g.op("Transpose", [y], perm=[0, 3, 1, 2])])
    x = ln(g, g.op("ReduceMean", [x], axes=[2, 3], keepdims=0), dims[-1])
    y = g.op("Cast", [lin(g, x, dims[-1], classes)], to=F)
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, s, s])],
         [helper.make_tensor_value_info(y, F, [1, classes])])


# ---- mbv4 ---------------------------------------------------------------------

def cbr(g, x, cin, cout, k=3, stride=1, group=1, act=True):
    y = conv(g, x, cin, cout, k, stride, group)
    return relu(g, y) if act else y


def uib(g, x, cin, cout, start, mid, stride, expand):
    """MobileNetV4's universal inverted bottleneck: an optional depthwise
    Conv (start) before the 1x1 expansion, an optional one (mid) after
    it; stride on the first depthwise Conv."""
    y = x
    if start:
        y = cbr(g, y, cin, cin, start, stride, cin, act=False)
    e = int(cin * expand)
    y = cbr(g, y, cin, e, 1)
    if mid:
        y = cbr(g, y, e, e, mid, 1 if start else stride, e)
    res = stride == 1 and cin == cout
    y = conv(g, y, e, cout, 1, scale=0.3 if res else 1.0)
    return g.op("Add", [x, y]) if res else y


def mbv4(path, b=4, s=256, classes=1000):
    g = G()
    x = cbr(g, "x", 3, 32, 3, 2)
    x = cbr(g, cbr(g, x, 32, 32, 3, 2), 32, 32, 1)
    x = cbr(g, cbr(g, x, 32, 96, 3, 2), 96, 64, 1)
    c = 64
    for co, start, mid, st, e in ((96, 5, 5, 2, 3.0), (96, 0, 3, 1, 2.0), (96, 0, 3, 1, 2.0),
                                  (96, 0, 3, 1, 2.0), (96, 0, 3, 1, 2.0), (96, 3, 0, 1, 4.0),
                                  (128, 3, 3, 2, 6.0), (128, 5, 5, 1, 4.0), (128, 0, 5, 1, 4.0),
                                  (128, 0, 5, 1, 3.0), (128, 0, 3, 1, 4.0), (128, 0, 3, 1, 4.0),
                                  (128, 0, 0, 1, 2.0)):
        x = uib(g, x, c, co, start, mid, st, e)
        c = co
    x = cbr(g, x, c, 960, 1)
    x = relu(g, conv(g, g.op("GlobalAveragePool", [x]), 960, 1280, 1))
    x = g.op("Gemm", [g.op("Flatten", [x]), g.c(w(classes, 1280)), g.c(w(classes, scale=0.1))],
             transB=1)
    save(g, path, [helper.make_tensor_value_info("x", F, [b, 3, s, s])],
         [helper.make_tensor_value_info(x, F, [b, classes])])


# ---- wavenet ------------------------------------------------------------------

def wavenet(path, t=2048, hop=256, mels=80, res=64, gate=128, skip=64, cycles=2, per=8,
            classes=256):
    g = G()
    cond = g.op("Resize", ["mel", "", g.c(np.float32([1, 1, hop]), np.float32)], mode="nearest")
    x = conv(g, "audio", 1, res, (1,), 1, pad=[0, 0])
    skips = None
    for i in range(cycles * per):
        d = 2 ** (i % per)
        y = g.op("Pad", [x, g.c(np.int64([0, 0, d, 0, 0, 0]))], mode="constant")
        y = g.op("Conv", [y, g.c(w(gate, res, 2)), g.c(w(gate, scale=0.1))], kernel_shape=[2],
                 dilations=[d], pads=[0, 0])
        y = g.op("Add", [y, conv(g, cond, mels, gate, (1,), 1, pad=[0, 0], bias=False)])
        a, b = split(g, y, [gate // 2, gate // 2], 1)
        z = g.op("Mul", [g.op("Tanh", [a]), g.op("Sigmoid", [b])])
        sk = conv(g, z, gate // 2, skip, (1,), 1, pad=[0, 0])
        skips = sk if skips is None else g.op("Add", [skips, sk])
        if i < cycles * per - 1:
            r = conv(g, z, gate // 2, res, (1,), 1, pad=[0, 0], scale=0.5)
            x = g.op("Mul", [g.op("Add", [x, r]), g.c(np.float32(np.sqrt(0.5)))])
    y = conv(g, relu(g, skips), skip, skip, (1,), 1, pad=[0, 0], scale=0.5)
    y = conv(g, relu(g, y), skip, classes, (1,), 1, pad=[0, 0])
    save(g, path, [helper.make_tensor_value_info("audio", F, [1, 1, t]),
                   helper.make_tensor_value_info("mel", F, [1, mels, t // hop])],
         [helper.make_tensor_value_info(y, F, [1, classes, t])])


# ---- rife ---------------------------------------------------------------------

def prelu_conv(g, x, cin, cout, k=3, stride=1):
    y = conv(g, x, cin, cout, k, stride)
    return g.op("PRelu", [y, g.c((0.25 + 0.05 * RNG.standard_normal(cout)).reshape(cout, 1, 1))])


def ifblock(g, x, cin, c, scale, h, wd):
    if scale != 1:
        x = resize(g, x, 1.0 / scale, "linear", sizes=[1, cin, h // scale, wd // scale])
    x = prelu_conv(g, prelu_conv(g, x, cin, c // 2, 3, 2), c // 2, c, 3, 2)
    y = x
    for _ in range(4):
        y = prelu_conv(g, y, c, c)
    x = g.op("Add", [x, y])
    t = g.op("ConvTranspose", [x, g.c(w(c, 5, 4, 4, scale=0.2)), g.c(w(5, scale=0.1))],
             kernel_shape=[4, 4], strides=[2, 2], pads=[1, 1, 1, 1])
    t = resize(g, t, 2 * scale, "linear", sizes=[1, 5, h, wd])
    flow, mask = split(g, t, [4, 1], 1)
    return g.op("Mul", [flow, g.c(np.float32(scale))]), mask


def warp(g, img, flow, h, wd):
    """Backward warping by GridSample: base grid plus the flow
    normalized to [-1, 1]."""
    fx, fy = split(g, flow, [1, 1], 1)
    fl = g.op("Concat", [g.op("Mul", [fx, g.c(np.float32(2.0 / (wd - 1)))]),
                         g.op("Mul", [fy, g.c(np.float32(2.0 / (h - 1)))])], axis=1)
    gy, gx = np.meshgrid(np.linspace(-1, 1, h), np.linspace(-1, 1, wd), indexing="ij")
    base = np.stack([gx, gy])[None].astype(np.float32)
    grid = g.op("Transpose", [g.op("Add", [g.c(base), fl])], perm=[0, 2, 3, 1])
    return g.op("GridSample", [img, grid], mode="bilinear", padding_mode="border",
                align_corners=1)


def rife(path, h=192, wd=320, chans=(96, 64, 32)):
    g = G()
    i0, i1 = "img0", "img1"
    flow = mask = w0 = w1 = None
    for c, scale in zip(chans, (4, 2, 1)):
        if flow is None:
            x, cin = g.op("Concat", [i0, i1], axis=1), 6
        else:
            x, cin = g.op("Concat", [i0, i1, w0, w1, flow, mask], axis=1), 17
        f, m = ifblock(g, x, cin, c, scale, h, wd)
        flow = f if flow is None else g.op("Add", [flow, f])
        mask = m if mask is None else g.op("Add", [mask, m])
        f0, f1 = split(g, flow, [2, 2], 1)
        w0, w1 = warp(g, i0, f0, h, wd), warp(g, i1, f1, h, wd)
    m = g.op("Sigmoid", [mask])
    y = g.op("Add", [g.op("Mul", [w0, m]),
                     g.op("Mul", [w1, g.op("Sub", [g.c(np.float32(1)), m])])])
    save(g, path, [helper.make_tensor_value_info("img0", F, [1, 3, h, wd]),
                   helper.make_tensor_value_info("img1", F, [1, 3, h, wd])],
         [helper.make_tensor_value_info(y, F, [1, 3, h, wd])])


# ---- gpt2_kv ------------------------------------------------------------------

def gelu_tanh(g, x):
    c3 = g.op("Mul", [g.op("Pow", [x, g.c(np.float32(3))]), g.c(np.float32(0.044715))])
    t = g.op("Tanh", [g.op("Mul", [g.op("Add", [x, c3]), g.c(np.float32(np.sqrt(2 / np.pi)))])])
    return g.op("Mul", [g.op("Mul", [x, g.c(np.float32(0.5))]),
                        g.op("Add", [t, g.c(np.float32(1))])])


def gpt2_kv(path, d=768, heads=12, layers=4, past=384, vocab=16384, ff=3072):
    g = G()
    hd = d // heads
    x = g.op("Gather", [g.c(0.02 * RNG.standard_normal((vocab, d))), "input_ids"], axis=0)
    pos = g.c((0.01 * RNG.standard_normal((1, 1, d))))
    x = g.op("Add", [x, pos])  # [1, 1, d]
    ins = [helper.make_tensor_value_info("input_ids", I64, [1, 1])]
    outs = []
    for li in range(layers):
        pk, pv = "past_key_values.%d.key" % li, "past_key_values.%d.value" % li
        ins += [helper.make_tensor_value_info(n, F, [1, heads, past, hd]) for n in (pk, pv)]
        q, k, v = split(g, lin(g, ln(g, x, d, 1e-5), d, 3 * d), [d, d, d], 2)
        q, k, v = (g.op("Transpose", [reshape(g, a, [1, 1, heads, hd])], perm=[0, 2, 1, 3])
                   for a in (q, k, v))
        k = g.op("Concat", [pk, k], axis=2)
        v = g.op("Concat", [pv, v], axis=2)
        outs += [helper.make_tensor_value_info(k, F, [1, heads, past + 1, hd]),
                 helper.make_tensor_value_info(v, F, [1, heads, past + 1, hd])]
        s = g.op("Div", [g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])]),
                         g.c(np.float32(np.sqrt(hd)))])
        o = g.op("MatMul", [g.op("Softmax", [s], axis=-1), v])
        x = g.op("Add", [x, lin(g, merge_heads(g, o, 1, d), d, d, scale=0.5)])
        y = gelu_tanh(g, lin(g, ln(g, x, d, 1e-5), d, ff))
        x = g.op("Add", [x, lin(g, y, ff, d, scale=0.5)])
    logits = g.op("MatMul", [ln(g, x, d, 1e-5), g.c(0.02 * RNG.standard_normal((d, vocab)))])
    save(g, path, ins, [helper.make_tensor_value_info(logits, F, [1, 1, vocab])] + outs)


# ---- pointnet2 ----------------------------------------------------------------

def set_abstraction(g, xyz, feat, n, cf, npoint, k, mlp):
    """xyz [1, n, 3], feat [1, n, cf] or None: the first npoint points as
    centroids, k nearest by TopK of squared distances, grouped by Gather,
    a shared MLP of 1x1 Convs, ReduceMax over the neighbours: the
    centroids [1, npoint, 3] and features [1, npoint, mlp[-1]]."""
    cen = g.op("Slice", [xyz, axes(g, 0), axes(g, npoint), axes(g, 1)])
    sq = lambda a: g.op("ReduceSum", [g.op("Mul", [a, a]), axes(g, 2)], keepdims=1)  # noqa: E731
    d2 = g.op("Sub", [g.op("Add", [sq(cen), g.op("Transpose", [sq(xyz)], perm=[0, 2, 1])]),
                      g.op("Mul", [g.op("MatMul", [cen, g.op("Transpose", [xyz], perm=[0, 2, 1])]),
                                   g.c(np.float32(2))])])  # [1, npoint, n]
    val, idx = g.name("v"), g.name("v")
    g.nodes.append(helper.make_node("TopK", [d2, axes(g, k)], [val, idx], axis=2, largest=0))
    pts = xyz if feat is None else g.op("Concat", [xyz, feat], axis=2)
    c = 3 + cf
    grp = g.op("Gather", [reshape(g, pts, [n, c]), reshape(g, idx, [npoint, k])], axis=0)
    rel, f = (split(g, grp, [3, cf], 2) if cf else (grp, None))
    rel = g.op("Sub", [rel, reshape(g, cen, [npoint, 1, 3])])
    grp = rel if f is None else g.op("Concat", [rel, f], axis=2)  # [npoint, k, c]
    y = g.op("Transpose", [reshape(g, grp, [1, npoint, k, c])], perm=[0, 3, 1, 2])
    for co in mlp:
        y = relu(g, conv(g, y, c, co, 1))
        c = co
    y = g.op("ReduceMax", [y], axes=[3], keepdims=0)  # [1, c, npoint]
    return cen, g.op("Transpose", [y], perm=[0, 2, 1])


def pointnet2(path, n=2048, classes=40):
    g = G()
    xyz, f = set_abstraction(g, "xyz", None, n, 0, 512, 32, (64, 64, 128))
    xyz, f = set_abstraction(g, xyz, f, 512, 128, 128, 64, (128, 128, 256))
    y = g.op("Transpose", [g.op("Concat", [xyz, f], axis=2)], perm=[0, 2, 1])
    y = g.op("Unsqueeze", [y, axes(g, 3)])  # [1, 259, 128, 1]
    c = 259
    for co in (256, 512, 1024):
        y = relu(g, conv(g, y, c, co, 1))
        c = co
    y = g.op("ReduceMax", [y], axes=[2, 3], keepdims=0)  # [1, 1024]
    y = relu(g, lin(g, y, 1024, 512))
    y = relu(g, lin(g, y, 512, 256))
    y = g.op("LogSoftmax", [lin(g, y, 256, classes)], axis=1)
    save(g, path, [helper.make_tensor_value_info("xyz", F, [1, n, 3])],
         [helper.make_tensor_value_info(y, F, [1, classes])])


# ---- effdet_nhwc --------------------------------------------------------------

def tfc(g, x, cin, cout, k=1, stride=1, group=1, act=False):
    """An NHWC Conv between Transposes as tf2onnx writes it (SAME pads)."""
    t = g.op("Transpose", [x], perm=[0, 3, 1, 2])
    p = (k - 1) // 2 if stride == 1 else [(k - 2) // 2, (k - 2) // 2, k // 2, k // 2]
    t = conv(g, t, cin, cout, k, stride, group, pad=[p] * 4 if stride == 1 else p)
    t = g.op("Transpose", [t], perm=[0, 2, 3, 1])
    return relu6(g, t) if act else t


def tf_pool(g, x):
    t = g.op("Transpose", [x], perm=[0, 3, 1, 2])
    t = g.op("MaxPool", [t], kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1])
    return g.op("Transpose", [t], perm=[0, 2, 3, 1])


def tf_up(g, x):
    t = g.op("Transpose", [x], perm=[0, 3, 1, 2])
    t = resize(g, t, 2.0)
    return g.op("Transpose", [t], perm=[0, 2, 3, 1])


def sepconv(g, x, c, cout=None, act=False):
    y = tfc(g, x, c, c, 3, group=c)
    return tfc(g, y, c, cout or c, 1, act=act)


def fuse(g, xs, c):
    """EfficientDet's fast normalized fusion, then Relu6 and a separable
    ConvBN."""
    wt = relu(g, g.c(1 + 0.1 * RNG.standard_normal(len(xs))))
    wt = g.op("Div", [wt, g.op("Add", [g.op("ReduceSum", [wt], keepdims=1),
                                       g.c(np.float32(1e-4))])])
    acc = None
    for i, x in enumerate(xs):
        y = g.op("Mul", [x, g.op("Gather", [wt, g.c(np.int64(i))], axis=0)])
        acc = y if acc is None else g.op("Add", [acc, y])
    return sepconv(g, relu6(g, acc), c)


def mbconv(g, x, cin, cout, k, stride, e):
    y = x
    if e != 1:
        y = tfc(g, y, cin, cin * e, 1, act=True)
    y = tfc(g, y, cin * e, cin * e, k, stride, cin * e, act=True)
    y = tfc(g, y, cin * e, cout, 1)
    return g.op("Add", [x, y]) if stride == 1 and cin == cout else y


def effdet_nhwc(path, s=384, c=64, classes=90, anchors=9, layers=3):
    g = G()
    x = tfc(g, "x", 3, 32, 3, 2, act=True)
    cin, feats = 32, []
    for cout, k, st, e, n in ((16, 3, 1, 1, 1), (24, 3, 2, 6, 2), (40, 5, 2, 6, 2),
                              (80, 3, 2, 6, 3), (112, 5, 1, 6, 3), (192, 5, 2, 6, 4)):
        for j in range(n):
            x = mbconv(g, x, cin, cout, k, st if j == 0 else 1, e)
            cin = cout
        if cout in (40, 112, 192):
            feats.append((x, cout))
    p3, p4, p5 = (tfc(g, f, ch, c, 1) for f, ch in feats)
    p6 = tf_pool(g, tfc(g, feats[2][0], 192, c, 1))
    p7 = tf_pool(g, p6)
    ps = [p3, p4, p5, p6, p7]
    for _ in range(layers):
        td = [None] * 5
        td[4] = ps[4]
        for i in (3, 2, 1, 0):
            td[i] = fuse(g, [ps[i], tf_up(g, td[i + 1])], c)
        out = [td[0]]
        for i in (1, 2, 3, 4):
            xs = [ps[i], tf_pool(g, out[-1])] + ([td[i]] if i < 4 else [])
            out.append(fuse(g, xs, c))
        ps = out
    cw = [[(w(c, 1, 3, 3), w(c, c, 1, 1), w(c, scale=0.1)) for _ in range(3)] for _ in range(2)]
    ow = [(w(c, 1, 3, 3), w(anchors * classes, c, 1, 1), np.full(anchors * classes, -4.6,
                                                                  np.float32)),
          (w(c, 1, 3, 3), w(anchors * 4, c, 1, 1, scale=0.3), w(anchors * 4, scale=0.1))]
    consts = [[tuple(g.c(a) for a in t) for t in net] for net in cw]
    oc = [tuple(g.c(a) for a in t) for t in ow]

    def tsep(x, dw, pw, b, cout, act):
        t = g.op("Transpose", [x], perm=[0, 3, 1, 2])
        t = g.op("Conv", [t, dw], kernel_shape=[3, 3], pads=[1] * 4, group=c)
        t = g.op("Conv", [t, pw, b], kernel_shape=[1, 1])
        t = g.op("Transpose", [t], perm=[0, 2, 3, 1])
        return relu6(g, t) if act else t

    cls, box = [], []
    for p in ps:
        for net, o, n, acc in ((0, classes, anchors * classes, cls), (1, 4, anchors * 4, box)):
            y = p
            for dw, pw, b in consts[net]:
                y = tsep(y, dw, pw, b, c, True)
            y = tsep(y, *oc[net], n, False)
            acc.append(reshape(g, y, [1, -1, o]))
    cls = g.op("Sigmoid", [g.op("Concat", cls, axis=1)])
    box = g.op("Concat", box, axis=1)
    na = anchors * sum((-(-s // q)) ** 2 for q in (8, 16, 32, 64, 128))
    save(g, path, [helper.make_tensor_value_info("x", F, [1, s, s, 3])],
         [helper.make_tensor_value_info(cls, F, [1, na, classes]),
          helper.make_tensor_value_info(box, F, [1, na, 4])])


# ---- vqgan --------------------------------------------------------------------

def gnorm(g, x, c, hw, groups=8, eps=1e-6):
    y = g.op("InstanceNormalization", [reshape(g, x, [1, groups, -1]), g.c(np.ones(groups)),
                                       g.c(np.zeros(groups))], epsilon=eps)
    y = reshape(g, y, [1, c, hw, hw])
    return g.op("Add", [g.op("Mul", [y, g.c((1 + 0.1 * RNG.standard_normal(c)).reshape(1, c, 1, 1))]),
                        g.c((0.1 * RNG.standard_normal(c)).reshape(1, c, 1, 1))])


def vq_res(g, x, cin, cout, hw):
    y = conv(g, silu(g, gnorm(g, x, cin, hw)), cin, cout)
    y = conv(g, silu(g, gnorm(g, y, cout, hw)), cout, cout, scale=0.5)
    return g.op("Add", [x if cin == cout else conv(g, x, cin, cout, 1), y])


def vq_attn(g, x, c, hw):
    n = hw * hw
    h = gnorm(g, x, c, hw)
    q, k, v = (reshape(g, conv(g, h, c, c, 1), [1, c, n]) for _ in range(3))
    s = g.op("Mul", [g.op("MatMul", [g.op("Transpose", [q], perm=[0, 2, 1]), k]),
                     g.c(np.float32(c ** -0.5))])  # [1, n, n]
    a = g.op("Softmax", [s], axis=2)
    o = g.op("MatMul", [v, g.op("Transpose", [a], perm=[0, 2, 1])])  # [1, c, n]
    return g.op("Add", [x, conv(g, reshape(g, o, [1, c, hw, hw]), c, c, 1, scale=0.5)])


def vqgan(path, s=128, chans=(32, 64, 128, 128), zc=64, codes=1024):
    g = G()
    x = conv(g, "x", 3, chans[0])
    c, hw = chans[0], s
    for i, co in enumerate(chans):
        x = vq_res(g, x, c, co, hw)
        c = co
        if i < len(chans) - 1:
            x = g.op("Pad", [x, g.c(np.int64([0, 0, 0, 0, 0, 0, 1, 1]))], mode="constant")
            x = conv(g, x, c, c, 3, 2, pad=[0, 0, 0, 0])
            hw //= 2
    x = vq_res(g, vq_attn(g, vq_res(g, x, c, c, hw), c, hw), c, c, hw)
    z = conv(g, silu(g, gnorm(g, x, c, hw)), c, zc)
    z = conv(g, z, zc, zc, 1)
    n = hw * hw
    zf = g.op("Transpose", [reshape(g, z, [1, zc, n])], perm=[0, 2, 1])  # [1, n, zc]
    cb = RNG.standard_normal((codes, zc)).astype(np.float32)
    d = g.op("Sub", [g.op("Add", [g.op("ReduceSum", [g.op("Mul", [zf, zf]), axes(g, 2)],
                                       keepdims=1),
                                  g.c((cb * cb).sum(1)[None, None])]),
                     g.op("Mul", [g.op("MatMul", [zf, g.c(cb.T.copy())]), g.c(np.float32(2))])])
    idx = g.op("ArgMin", [d], axis=2, keepdims=0)  # [1, n]
    zq = g.op("Gather", [g.c(cb), idx], axis=0)  # [1, n, zc]
    zq = reshape(g, g.op("Transpose", [zq], perm=[0, 2, 1]), [1, zc, hw, hw])
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, s, s])],
         [helper.make_tensor_value_info(idx, I64, [1, n]),
          helper.make_tensor_value_info(zq, F, [1, zc, hw, hw])])


# ---- u2netp -------------------------------------------------------------------

def rebnconv(g, x, cin, cout, dil=1):
    return relu(g, conv(g, x, cin, cout, 3, dil=dil))


def pool(g, x):
    return g.op("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)


def up_like(g, x, c, hw):
    return resize(g, x, None, "linear", sizes=[1, c, hw, hw])


def rsu(g, x, depth, cin, mid, cout, hw):
    """RSU-depth: an input ConvBN, an encoder of depth - 1 ConvBNs with
    MaxPools between, a dilated bottom, a decoder of Concat, ConvBN and
    bilinear Resize; the input conv Added."""
    xin = rebnconv(g, x, cin, cout)
    enc, sizes, y, c = [], [], xin, cout
    h = hw
    for i in range(depth - 1):
        y = rebnconv(g, y, c, mid)
        c = mid
        enc.append(y)
        sizes.append(h)
        if i < depth - 2:
            y = pool(g, y)
            h = -(-h // 2)
    y = rebnconv(g, y, mid, mid, 2)
    for i in range(depth - 2, -1, -1):
        y = rebnconv(g, g.op("Concat", [y, enc[i]], axis=1), 2 * mid, mid if i else cout)
        if i:
            y = up_like(g, y, mid, sizes[i - 1])
    return g.op("Add", [y, xin])


def rsu4f(g, x, cin, mid, cout):
    xin = rebnconv(g, x, cin, cout)
    e1 = rebnconv(g, xin, cout, mid)
    e2 = rebnconv(g, e1, mid, mid, 2)
    e3 = rebnconv(g, e2, mid, mid, 4)
    e4 = rebnconv(g, e3, mid, mid, 8)
    d3 = rebnconv(g, g.op("Concat", [e4, e3], axis=1), 2 * mid, mid, 4)
    d2 = rebnconv(g, g.op("Concat", [d3, e2], axis=1), 2 * mid, mid, 2)
    d1 = rebnconv(g, g.op("Concat", [d2, e1], axis=1), 2 * mid, cout)
    return g.op("Add", [d1, xin])


def u2netp(path, s=112, mid=16, c=64):
    g = G()
    hws = [s]
    for _ in range(5):
        hws.append(-(-hws[-1] // 2))
    e1 = rsu(g, "x", 7, 3, mid, c, hws[0])
    e2 = rsu(g, pool(g, e1), 6, c, mid, c, hws[1])
    e3 = rsu(g, pool(g, e2), 5, c, mid, c, hws[2])
    e4 = rsu(g, pool(g, e3), 4, c, mid, c, hws[3])
    e5 = rsu4f(g, pool(g, e4), c, mid, c)
    e6 = rsu4f(g, pool(g, e5), c, mid, c)
    d = up_like(g, e6, c, hws[4])
    d5 = rsu4f(g, g.op("Concat", [d, e5], axis=1), 2 * c, mid, c)
    d4 = rsu(g, g.op("Concat", [up_like(g, d5, c, hws[3]), e4], axis=1), 4, 2 * c, mid, c, hws[3])
    d3 = rsu(g, g.op("Concat", [up_like(g, d4, c, hws[2]), e3], axis=1), 5, 2 * c, mid, c, hws[2])
    d2 = rsu(g, g.op("Concat", [up_like(g, d3, c, hws[1]), e2], axis=1), 6, 2 * c, mid, c, hws[1])
    d1 = rsu(g, g.op("Concat", [up_like(g, d2, c, hws[0]), e1], axis=1), 7, 2 * c, mid, c, hws[0])
    sides = []
    for f, hw in ((d1, hws[0]), (d2, hws[1]), (d3, hws[2]), (d4, hws[3]), (d5, hws[4]),
                  (e6, hws[5])):
        sd = conv(g, f, c, 1, 3)
        sides.append(sd if hw == s else up_like(g, sd, 1, s))
    sd = g.op("Concat", sides, axis=1)
    y = g.op("Sigmoid", [conv(g, sd, 6, 1, 1)])
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, s, s])],
         [helper.make_tensor_value_info(y, F, [1, 1, s, s]),
          helper.make_tensor_value_info(g.op("Sigmoid", [sd]), F, [1, 6, s, s])])


MODELS = (convnextv2_f16, mbv4, wavenet, rife, gpt2_kv, pointnet2, effdet_nhwc, vqgan, u2netp)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    only = sys.argv[2:]
    for f in MODELS:
        if not only or f.__name__ in only:
            f(os.path.join(out, f.__name__ + ".onnx"))


if __name__ == "__main__":
    main()
