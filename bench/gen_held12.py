#!/usr/bin/python3
"""gen_held12.py DIR: a twelfth held-out set for bench/broad.sh
(BROAD_SET=held12), written 2026-12-07 before any tuning on it and not
run through opmig when written: for a later round's first measurement
(broad.sh quantizes two of them with `opmig quantize` first); seeded,
opset 17, checked with onnx.checker:
  inception_f16.onnx an Inception-v3 classifier in float16 (Cast in and
                     out) at 299x299, torchvision's whole network with
                     each BasicConv2d's BatchNormalization folded into
                     its Conv (as torch.onnx writes eval mode: Conv with
                     a bias, Relu): transform_input (each channel
                     Gathered, Unsqueezed, Mul and Add, Concat); the stem
                     (3x3 stride-2, 3x3 and padded 3x3 Convs to 32, 32,
                     64, a 3x3 stride-2 MaxPool, 1x1 to 80, 3x3 to 192,
                     a MaxPool: 35x35); Mixed_5b..5d (Inception-A: a 1x1
                     of 64, 1x1 48 then 5x5 64, 1x1 64 then two 3x3 of
                     96, a 3x3 stride-1 pad-1 AveragePool of
                     count_include_pad 0 then 1x1 of 32, 64, 64, Concat:
                     256, 288, 288); Mixed_6a (a 3x3 stride-2 of 384, 1x1
                     64, 3x3 96, 3x3 stride-2 96, a 3x3 stride-2 MaxPool:
                     768 at 17x17); Mixed_6b..6e (Inception-C: 1x1 192;
                     1x1 c7, 1x7 c7, 7x1 192; 1x1 c7, 7x1, 1x7, 7x1 c7,
                     1x7 192; AveragePool and 1x1 192; c7 128, 160, 160,
                     192); Mixed_7a (1x1 192 then 3x3 stride-2 320; 1x1,
                     1x7, 7x1 192 then 3x3 stride-2 192; MaxPool: 1280
                     at 8x8); Mixed_7b, 7c (Inception-E: 1x1 320; 1x1
                     384 forked into 1x3 and 3x1 of 384; 1x1 448, 3x3
                     384 forked the same; AveragePool and 1x1 192:
                     2048); GlobalAveragePool, Flatten, a 1000-class Gemm:
                     [1, 1000] logits.  The AveragePools leave the
                     padding out of the count as TF's Inception v3 (and
                     pytorch-fid's copy of it) does; torchvision's own
                     F.avg_pool2d counts it;
  einsum_enc.onnx    an ALBERT-base-style text encoder written with
                     Einsum as Keras's EinsumDense and MultiHeadAttention
                     export through tf2onnx, on int64 input_ids [1, 128]:
                     a Gather from a 30000 by 128 word table, the first
                     128 rows of a 512 by 128 position table Sliced and
                     Added, a token-type row Added, LayerNormalization, a
                     factorized projection Einsum "abc,cd->abd" from 128
                     to 768 with a bias Add; six post-LN layers all
                     sharing one set of weights (ALBERT): query, key and
                     value Einsums "abc,cde->abde" to [1, 128, 12, 64]
                     with biases, the query Mul by 1/8, scores Einsum
                     "aecd,abcd->acbe" of key and query to [1, 12, 128,
                     128], Softmax, context Einsum "acbe,aecd->abcd", the
                     output Einsum "abcd,cde->abe", residual Add,
                     LayerNormalization, a feed-forward of Einsums
                     "abc,cd->abd" to 3072 and back with GELU in the tanh
                     form (Pow 3, Tanh), residual Add,
                     LayerNormalization; a pooler (the first token
                     Gathered, a MatMul, Tanh): [1, 128, 768] and
                     [1, 768];
  gcn.onnx           a GraphSAGE-mean graph network in float32 on 4096
                     nodes of 128 features ([4096, 128] the input) and
                     16384 random directed edges, the int64 edge index
                     [2, 16384] a graph constant (an input would get the
                     bench's integers in [0, 7]: every edge between eight
                     nodes), its rows Gathered as sources and
                     destinations; three layers 128 -> 128 -> 128 -> 40
                     (ogbn-arxiv's widths), each as PyG's scatter writes
                     them through torch.onnx: the source features
                     Gathered per edge, ScatterElements (reduction add,
                     axis 0) onto a ConstantOfShape of zeros with the
                     destination index Unsqueezed and Expanded to the
                     messages' Shape, the in-degree by ScatterElements of
                     ones (ConstantOfShape of the index's Shape), Clip at
                     1, Unsqueeze, Div; Concat of self and neighbour
                     means, MatMul and bias Add, Relu but the last;
                     LogSoftmax: [4096, 40].  (32768 edges at widths 128
                     -> 256 -> 256 took 600 ms in onnxruntime at one
                     thread, nearly all in ScatterElements);
  gcn_dyn.onnx       broad.sh writes it: gcn.onnx quantized by `opmig
                     quantize --dynamic`;
  tabnet.onnx        a TabNet (pytorch-tabnet) tabular model in float32
                     on a batch of 1024 rows of 64 features: the input's
                     BatchNormalization; feature transformers of four GLU
                     layers (a bias-free MatMul to 256, its own
                     BatchNormalization, Split into halves, a *
                     Sigmoid(b): 128), the first two layers' MatMul
                     weights shared by all five transformers, each layer
                     after the first Added to its input and Mul by
                     sqrt(0.5); an initial splitter's second 64 as the
                     attention input; four decision steps (n_d = n_a =
                     64, gamma 1.3), each an attentive transformer (a
                     MatMul 64 -> 64, BatchNormalization, Mul by the
                     prior) and sparsemax over the 64 features as
                     torch.onnx writes it (ReduceMax and Sub, TopK of all
                     64 sorted descending, CumSum, Sub 1, Mul by a 1..64
                     constant, Greater, Cast, ReduceSum, GatherElements
                     of the threshold at the support size - 1, Cast, Div,
                     Sub, Max with 0), the prior Mul by (gamma - mask),
                     the mask Mul the normalized input, a feature
                     transformer, Split into the decision half (Relu) and
                     the next attention half; the decisions Unsqueezed,
                     Concatenated and ReduceSum'd over the steps; a Gemm
                     to 8: [1024, 8];
  hourglass.onnx     a stacked-hourglass pose net (pytorch-pose) in
                     float32 at 256x256: a 7x7 stride-2 Conv to 64 and
                     Relu (its BatchNormalization folded), a residual to
                     128, a 2x2 MaxPool, two residuals (64x64); two
                     stacks of a depth-4 hourglass of 128 channels (per
                     level a residual on the skip, a 2x2 stride-2
                     MaxPool, a residual, the next level (a residual at
                     4x4 at the bottom), a residual, nearest Resize by
                     scales 2 (asymmetric, floor: torch's Upsample), the
                     skip Add), a residual, a 1x1 Conv and Relu, a 1x1
                     Conv to 16 joint heatmaps; between the stacks the
                     features, a 1x1 Conv of them and a 1x1 Conv of the
                     heatmaps Added.  Each residual is pytorch-pose's
                     pre-activation bottleneck: BatchNormalization, Relu,
                     1x1 Conv to 64, Relu, 3x3 Conv, Relu, 1x1 Conv to
                     128 (the inner BatchNormalizations folded into the
                     Convs), a 1x1 Conv shortcut where the width
                     changes, Add: [1, 16, 64, 64] heatmaps of each
                     stack;
  hourglass_qdq.onnx broad.sh writes it: hourglass.onnx quantized static
                     QDQ;
  stylegan.onnx      a StyleGAN2(-ADA)-style generator in float32 to a
                     128x128 image from z [1, 512]: the mapping network
                     (z normalized: Pow 2, ReduceMean, Add 1e-8, Sqrt,
                     Div of 1, Mul; eight Gemms of 512, LeakyRelu 0.2,
                     Mul sqrt 2), w Unsqueezed and Tiled to 12 and each
                     layer's Gathered; synthesis blocks at 4, 8, ..., 128
                     of 256, 256, 256, 128, 64, 32 channels (channel_base
                     4096, max 256) from a constant [1, 256, 4, 4]: per
                     layer a modulated 3x3 convolution as fused
                     modulated_conv2d exports at batch 1 (the styles a
                     Gemm of w with bias 1; the constant weight [1, O, I,
                     3, 3] Mul by the styles Reshaped [1, 1, I, 1, 1];
                     demodulation: Pow 2, ReduceSum over I and the
                     kernel, Add 1e-8, Sqrt, Div of 1, Mul; x and the
                     weight Reshaped to the batch's groups (1); Conv with
                     that runtime weight; the first layer of each block
                     upsamples: the weight Transposed to [I, O, 3, 3], a
                     stride-2 ConvTranspose, then upfirdn2d's [1, 3, 3,
                     1] filter (Pad 1, depthwise 1x4 and 4x1 Convs of
                     gain 4)), a constant noise map Mul its strength and
                     Added, a bias Add, LeakyRelu 0.2, Mul sqrt 2; toRGB
                     a modulated 1x1 Conv to 3 without demodulation (the
                     styles Mul by 1/sqrt(fan-in)) and a bias Add; the
                     image skip path upsampled by a linear (half_pixel)
                     Resize of scales 2 (the interior equal to
                     upfirdn2d's upsample2d) and Added: [1, 3, 128, 128];
  yolo_post.onnx     a YOLOX-style detection post-process in float32 on
                     the raw head outputs of a batch of 8 images at
                     640x640 ([8, 8400, 85]: 80x80, 40x40 and 20x20 grids
                     of strides 8, 16, 32; box offsets, log sizes,
                     objectness and 80 class logits): Split into [2, 2,
                     1, 80]; centres (offset + grid) * stride and sizes
                     Exp * stride, corners by Mul 0.5, Sub, Add, Concat;
                     Sigmoid of objectness and classes, the score the
                     objectness Mul the classes' ReduceMax and the class
                     their ArgMax; torchvision's batched_nms offset (the
                     class Cast and Mul by ReduceMax of the boxes + 1,
                     Added); NonMaxSuppression (100 boxes per image, IoU
                     0.45, score 0.25; the scores Transposed to [8, 1,
                     8400]); the selected [k, 3] Split into image and box
                     columns, Concat, GatherND of boxes, scores and
                     classes: [k, 4], [k], [k] and the image index [k]
                     (the bench's random inputs in [-1, 1) put some 6870
                     boxes an image over the score threshold: k = 800)."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

from gen_broad import save
from gen_held import G, bn
from gen_held4 import ln
from gen_held7 import reshape, split
from gen_held9 import gelu_pow
from gen_held11 import conv

RNG = np.random.default_rng(74207281)
F = TensorProto.FLOAT
H = TensorProto.FLOAT16
I64 = TensorProto.INT64


def w(*shape, scale=1.0):
    """He-scaled normal weights, the fan all dims but the first."""
    fan = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    return (RNG.standard_normal(shape) * np.sqrt(2.0 / fan) * scale).astype(np.float32)


def ops(g, op, ins, n, **at):
    """A node of n outputs: their names."""
    ys = [g.name("v") for _ in range(n)]
    g.nodes.append(helper.make_node(op, ins, ys, **at))
    return ys


def axes(g, *a):
    return g.c(np.int64(a))


def gemm(g, x, i, o, scale=1.0, bias=0.1):
    """torch's 2-D Linear: Gemm by [o, i] transposed."""
    return g.op("Gemm", [x, g.c(w(o, i, scale=scale)), g.c(w(o, scale=bias))], transB=1)


# ---- inception_f16 ----------------------------------------------------------

def basic(g, x, cin, cout, k=1, stride=1, pad=None):
    """torchvision's BasicConv2d with its BatchNormalization folded into
    the Conv's weight and bias (torch.onnx in eval mode): Conv, Relu."""
    return g.op("Relu", [conv(g, x, cin, cout, k, stride, pad=pad)])


def avgpool3(g, x):
    return g.op("AveragePool", [x], kernel_shape=[3, 3], strides=[1, 1], pads=[1] * 4,
                count_include_pad=0)


def maxpool3(g, x):
    return g.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2])


def inception_a(g, x, cin, pool):
    b1 = basic(g, x, cin, 64)
    b5 = basic(g, basic(g, x, cin, 48), 48, 64, 5)
    b3 = basic(g, basic(g, basic(g, x, cin, 64), 64, 96, 3), 96, 96, 3)
    bp = basic(g, avgpool3(g, x), cin, pool)
    return g.op("Concat", [b1, b5, b3, bp], axis=1), 224 + pool


def inception_b(g, x, cin):
    b3 = basic(g, x, cin, 384, 3, 2, pad=0)
    bd = basic(g, basic(g, basic(g, x, cin, 64), 64, 96, 3), 96, 96, 3, 2, pad=0)
    return g.op("Concat", [b3, bd, maxpool3(g, x)], axis=1), 480 + cin


def inception_c(g, x, cin, c7):
    b1 = basic(g, x, cin, 192)
    b7 = basic(g, basic(g, basic(g, x, cin, c7), c7, c7, (1, 7)), c7, 192, (7, 1))
    bd = basic(g, x, cin, c7)
    for k in ((7, 1), (1, 7), (7, 1)):
        bd = basic(g, bd, c7, c7, k)
    bd = basic(g, bd, c7, 192, (1, 7))
    bp = basic(g, avgpool3(g, x), cin, 192)
    return g.op("Concat", [b1, b7, bd, bp], axis=1), 768


def inception_d(g, x, cin):
    b3 = basic(g, basic(g, x, cin, 192), 192, 320, 3, 2, pad=0)
    b7 = basic(g, basic(g, basic(g, x, cin, 192), 192, 192, (1, 7)), 192, 192, (7, 1))
    b7 = basic(g, b7, 192, 192, 3, 2, pad=0)
    return g.op("Concat", [b3, b7, maxpool3(g, x)], axis=1), 512 + cin


def inception_e(g, x, cin):
    b1 = basic(g, x, cin, 320)

    def fork(y, c):
        return [basic(g, y, c, 384, (1, 3)), basic(g, y, c, 384, (3, 1))]

    b3 = fork(basic(g, x, cin, 384), 384)
    bd = fork(basic(g, basic(g, x, cin, 448), 448, 384, 3), 384)
    bp = basic(g, avgpool3(g, x), cin, 192)
    return g.op("Concat", [b1, *b3, *bd, bp], axis=1), 2048


def transform_input(g, x):
    """torchvision's transform_input (ImageNet to [-1, 1] statistics):
    each channel Gathered, Unsqueezed, Mul and Add, Concat."""
    mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
    chans = []
    for i in range(3):
        c = g.op("Unsqueeze", [g.op("Gather", [x, g.c(np.int64(i))], axis=1), axes(g, 1)])
        chans.append(g.op("Add", [g.op("Mul", [c, g.c(np.float32(std[i] / 0.5))]),
                                  g.c(np.float32((mean[i] - 0.5) / 0.5))]))
    return g.op("Concat", chans, axis=1)


def inception_f16(path, s=299, c7s=(128, 160, 160, 192), classes=1000):
    g = G(np.float16)
    x = transform_input(g, g.op("Cast", ["x"], to=H))
    x = basic(g, x, 3, 32, 3, 2, pad=0)
    x = basic(g, x, 32, 32, 3, pad=0)
    x = maxpool3(g, basic(g, x, 32, 64, 3))
    x = basic(g, basic(g, x, 64, 80), 80, 192, 3, pad=0)
    x, c = maxpool3(g, x), 192
    for pool in (32, 64, 64):
        x, c = inception_a(g, x, c, pool)
    x, c = inception_b(g, x, c)
    for c7 in c7s:
        x, c = inception_c(g, x, c, c7)
    if len(c7s) == 4:
        x, c = inception_d(g, x, c)
        for _ in range(2):
            x, c = inception_e(g, x, c)
    x = g.op("Flatten", [g.op("GlobalAveragePool", [x])])
    y = g.op("Cast", [gemm(g, x, c, classes)], to=F)
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, s, s])],
         [helper.make_tensor_value_info(y, F, [1, classes])])


# ---- einsum_enc -------------------------------------------------------------

def dense(g, x, eq, shape, bias_shape):
    """A Keras EinsumDense as tf2onnx writes it: Einsum and a bias Add."""
    return g.op("Add", [g.op("Einsum", [x, shape], equation=eq), bias_shape])


def albert_weights(g, d, heads, ff):
    """One layer's weights, shared by every layer (ALBERT)."""
    hd = d // heads

    def c(*shape, scale=1.0):
        return g.c(w(*shape, scale=scale))

    p = {k: (c(d, heads, hd, scale=0.7), c(heads, hd, scale=0.1)) for k in "qkv"}
    p["o"] = (c(heads, hd, d, scale=0.7), c(d, scale=0.1))
    p["f1"] = (c(d, ff, scale=0.7), c(ff, scale=0.1))
    p["f2"] = (c(ff, d, scale=0.7), c(d, scale=0.1))
    p["ln1"] = (g.c(1 + 0.1 * RNG.standard_normal(d)), g.c(0.1 * RNG.standard_normal(d)))
    p["ln2"] = (g.c(1 + 0.1 * RNG.standard_normal(d)), g.c(0.1 * RNG.standard_normal(d)))
    return p


def layer_norm(g, x, wb, eps=1e-12):
    return g.op("LayerNormalization", [x, *wb], axis=-1, epsilon=eps)


def albert_layer(g, x, p, hd):
    """Keras MultiHeadAttention's Einsums (projections "abc,cde->abde",
    scores "aecd,abcd->acbe" of key and query, context
    "acbe,aecd->abcd", output "abcd,cde->abe"), post-LN, a GELU
    (tanh form, Pow 3) feed-forward of EinsumDense "abc,cd->abd"."""
    q, k, v = (dense(g, x, "abc,cde->abde", *p[n]) for n in "qkv")
    q = g.op("Mul", [q, g.c(np.float32(hd ** -0.5))])
    a = g.op("Softmax", [g.op("Einsum", [k, q], equation="aecd,abcd->acbe")], axis=-1)
    o = g.op("Einsum", [a, v], equation="acbe,aecd->abcd")
    x = layer_norm(g, g.op("Add", [x, dense(g, o, "abcd,cde->abe", *p["o"])]), p["ln1"])
    f = dense(g, gelu_pow(g, dense(g, x, "abc,cd->abd", *p["f1"])), "abc,cd->abd", *p["f2"])
    return layer_norm(g, g.op("Add", [x, f]), p["ln2"])


def einsum_enc(path, t=128, e=128, d=768, heads=12, ff=3072, layers=6, vocab=30000, max_pos=512):
    g = G()
    x = g.op("Gather", [g.c(RNG.standard_normal((vocab, e)) * 0.02), "input_ids"], axis=0)
    pos = g.op("Slice", [g.c(RNG.standard_normal((max_pos, e)) * 0.02), axes(g, 0), axes(g, t),
                         axes(g, 0)])
    x = g.op("Add", [g.op("Add", [x, pos]), g.c(RNG.standard_normal(e) * 0.02)])  # + type 0
    x = ln(g, x, e, 1e-12)
    x = dense(g, x, "abc,cd->abd", g.c(w(e, d)), g.c(w(d, scale=0.1)))
    p = albert_weights(g, d, heads, ff)
    for _ in range(layers):
        x = albert_layer(g, x, p, d // heads)
    cls = g.op("Gather", [x, g.c(np.int64(0))], axis=1)
    pooled = g.op("Tanh", [g.op("Add", [g.op("MatMul", [cls, g.c(w(d, d, scale=0.7))]),
                                        g.c(w(d, scale=0.1))])])
    save(g, path, [helper.make_tensor_value_info("input_ids", I64, [1, t])],
         [helper.make_tensor_value_info(x, F, [1, t, d]),
          helper.make_tensor_value_info(pooled, F, [1, d])])


# ---- gcn --------------------------------------------------------------------

def zeros(g, shape):
    return g.op("ConstantOfShape", [g.c(np.int64(shape))],
                value=helper.make_tensor("z", F, [1], [0.0]))


def sage_layer(g, x, src, dst, n, fin, fout, relu=True):
    """GraphSAGE-mean: the sources' features Gathered per edge, scattered
    onto the destinations by ScatterElements (reduction add, the index
    Expanded to the messages' Shape, as torch's scatter_add_ exports), Div
    by the in-degree (ScatterElements of ones, Clip at 1), Concat of self
    and neighbours, MatMul and bias, Relu."""
    msg = g.op("Gather", [x, src], axis=0)
    idx = g.op("Expand", [g.op("Unsqueeze", [dst, axes(g, 1)]), g.op("Shape", [msg])])
    agg = g.op("ScatterElements", [zeros(g, [n, fin]), idx, msg], axis=0, reduction="add")
    ones = g.op("ConstantOfShape", [g.op("Shape", [dst])],
                value=helper.make_tensor("one", F, [1], [1.0]))
    deg = g.op("ScatterElements", [zeros(g, [n]), dst, ones], axis=0, reduction="add")
    deg = g.op("Clip", [deg, g.c(np.float32(1))])
    mean = g.op("Div", [agg, g.op("Unsqueeze", [deg, axes(g, 1)])])
    h = g.op("Concat", [x, mean], axis=1)
    y = g.op("Add", [g.op("MatMul", [h, g.c(w(2 * fin, fout))]), g.c(w(fout, scale=0.1))])
    return g.op("Relu", [y]) if relu else y


def gcn(path, n=4096, edges=16384, widths=(128, 128, 128, 40)):
    g = G()
    ei = g.c(RNG.integers(0, n, (2, edges)).astype(np.int64))
    src = g.op("Gather", [ei, g.c(np.int64(0))], axis=0)
    dst = g.op("Gather", [ei, g.c(np.int64(1))], axis=0)
    x = "x"
    for i, (a, b) in enumerate(zip(widths, widths[1:])):
        x = sage_layer(g, x, src, dst, n, a, b, relu=i < len(widths) - 2)
    y = g.op("LogSoftmax", [x], axis=1)
    save(g, path, [helper.make_tensor_value_info("x", F, [n, widths[0]])],
         [helper.make_tensor_value_info(y, F, [n, widths[-1]])])


# ---- tabnet -----------------------------------------------------------------

def glu_layer(g, x, fc, out):
    """pytorch-tabnet's GLU_Layer: a bias-free Linear (MatMul; fc shared
    across steps or not), its own BatchNormalization, the halves Split,
    a * Sigmoid(b)."""
    a, b = split(g, bn(g, g.op("MatMul", [x, fc]), 2 * out), [out, out], 1)
    return g.op("Mul", [a, g.op("Sigmoid", [b])])


def feat_transformer(g, x, shared, out, n_ind=2):
    """Two shared GLU layers then n_ind step-specific ones; each after
    the first Added to its input and scaled by sqrt(0.5)."""
    fcs = shared + [g.c(w(out, 2 * out)) for _ in range(n_ind)]
    x = glu_layer(g, x, fcs[0], out)
    for fc in fcs[1:]:
        y = glu_layer(g, x, fc, out)
        x = g.op("Mul", [g.op("Add", [x, y]), g.c(np.float32(np.sqrt(0.5)))])
    return x


def sparsemax(g, z, n):
    """pytorch-tabnet's Sparsemax over axis 1 of [b, n] as torch.onnx
    writes it: the max subtracted, a descending sort (TopK of all n),
    CumSum minus 1, the support rho * z_sorted > cumsum (Greater), its
    size (Cast, ReduceSum), tau Gathered at size - 1 and Divided by the
    size, Max(z - tau, 0)."""
    z = g.op("Sub", [z, g.op("ReduceMax", [z], axes=[1], keepdims=1)])
    srt, _ = ops(g, "TopK", [z, g.c(np.int64([n]))], 2, axis=1, largest=1, sorted=1)
    cs = g.op("Sub", [g.op("CumSum", [srt, g.c(np.int64(1))]), g.c(np.float32(1))])
    rho = g.c(np.arange(1, n + 1, dtype=np.float32).reshape(1, n))
    sup = g.op("Cast", [g.op("Greater", [g.op("Mul", [rho, srt]), cs])], to=I64)
    size = g.op("ReduceSum", [sup, axes(g, 1)], keepdims=1)
    tau = g.op("GatherElements", [cs, g.op("Sub", [size, g.c(np.int64(1))])], axis=1)
    tau = g.op("Div", [tau, g.op("Cast", [size], to=F)])
    return g.op("Max", [g.op("Sub", [z, tau]), g.c(np.float32(0))])


def tabnet(path, b=1024, feats=64, nd=64, na=64, steps=4, gamma=1.3, out=8):
    g = G()
    x = bn(g, "x", feats)
    c = nd + na
    shared = [g.c(w(feats, 2 * c)), g.c(w(c, 2 * c))]
    att = split(g, feat_transformer(g, x, shared, c), [nd, na], 1)[1]
    prior = g.op("ConstantOfShape", [g.op("Shape", [x])],
                 value=helper.make_tensor("one", F, [1], [1.0]))
    ds = []
    for _ in range(steps):
        a = bn(g, g.op("MatMul", [att, g.c(w(na, feats))]), feats)
        m = sparsemax(g, g.op("Mul", [a, prior]), feats)
        prior = g.op("Mul", [g.op("Sub", [g.c(np.float32(gamma)), m]), prior])
        d, att = split(g, feat_transformer(g, g.op("Mul", [m, x]), shared, c), [nd, na], 1)
        ds.append(g.op("Unsqueeze", [g.op("Relu", [d]), axes(g, 0)]))
    res = g.op("ReduceSum", [g.op("Concat", ds, axis=0), axes(g, 0)], keepdims=0)
    y = gemm(g, res, nd, out)
    save(g, path, [helper.make_tensor_value_info("x", F, [b, feats])],
         [helper.make_tensor_value_info(y, F, [b, out])])


# ---- hourglass --------------------------------------------------------------

def residual(g, x, cin, cout):
    """pytorch-pose's pre-activation Bottleneck: BatchNormalization and
    Relu, a 1x1 Conv to cout / 2, then (the next two BatchNormalizations
    folded into the Convs) Relu, 3x3, Relu, 1x1 to cout; the skip a 1x1
    Conv where the width changes."""
    p = cout // 2
    y = conv(g, g.op("Relu", [bn(g, x, cin)]), cin, p, 1)
    y = conv(g, g.op("Relu", [y]), p, p, 3)
    y = conv(g, g.op("Relu", [y]), p, cout, 1, scale=0.2)
    sc = x if cin == cout else conv(g, x, cin, cout, 1)
    return g.op("Add", [y, sc])


def pool2(g, x):
    return g.op("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])


def up_nearest(g, x):
    """torch's Upsample(scale_factor=2) (nearest): Resize by scales."""
    return g.op("Resize", [x, "", g.c(np.float32([1, 1, 2, 2]), np.float32)], mode="nearest",
                coordinate_transformation_mode="asymmetric", nearest_mode="floor")


def hourglass_level(g, x, c, n):
    up1 = residual(g, x, c, c)
    low = residual(g, pool2(g, x), c, c)
    low = hourglass_level(g, low, c, n - 1) if n > 1 else residual(g, low, c, c)
    return g.op("Add", [up1, up_nearest(g, residual(g, low, c, c))])


def hourglass(path, s=256, c=128, stacks=2, depth=4, joints=16):
    g = G()
    x = g.op("Relu", [conv(g, "x", 3, 64, 7, 2)])
    x = residual(g, x, 64, c)
    x = residual(g, residual(g, pool2(g, x), c, c), c, c)
    outs, r = [], s // 4
    for i in range(stacks):
        y = residual(g, hourglass_level(g, x, c, depth), c, c)
        y = g.op("Relu", [conv(g, y, c, c, 1)])
        score = conv(g, y, c, joints, 1)
        outs.append(helper.make_tensor_value_info(score, F, [1, joints, r, r]))
        if i < stacks - 1:
            x = g.op("Add", [g.op("Add", [x, conv(g, y, c, c, 1, scale=0.5)]),
                             conv(g, score, joints, c, 1, scale=0.5)])
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, s, s])], outs)


# ---- stylegan ---------------------------------------------------------------

SQRT2 = np.float32(np.sqrt(2))


def rsqrt(g, x):
    """torch.rsqrt as torch.onnx writes it: Div of 1 by Sqrt."""
    return g.op("Div", [g.c(np.float32(1)), g.op("Sqrt", [x])])


def lrelu_gain(g, x):
    """bias_act's lrelu: LeakyRelu 0.2 times sqrt(2)."""
    return g.op("Mul", [g.op("LeakyRelu", [x], alpha=0.2), g.c(SQRT2)])


def mapping(g, z, d=512, layers=8):
    """z normalized (x * rsqrt(mean(x^2) + 1e-8)), eight Gemms of
    d with lrelu (the equalized learning rate gains folded)."""
    m = g.op("ReduceMean", [g.op("Pow", [z, g.c(np.float32(2))])], axes=[1], keepdims=1)
    x = g.op("Mul", [z, rsqrt(g, g.op("Add", [m, g.c(np.float32(1e-8))]))])
    for _ in range(layers):
        x = lrelu_gain(g, gemm(g, x, d, d, scale=np.sqrt(0.5), bias=0.05))
    return x


def modconv(g, x, wl, cin, cout, k, r, d=512, demod=True, up=False):
    """StyleGAN2-ADA's fused modulated_conv2d at batch 1 as torch.onnx
    writes it: styles = Gemm(w) (bias 1); the constant weight [1, O, I,
    k, k] Mul by the styles Reshaped to [1, 1, I, 1, 1]; demodulation
    (Pow 2, ReduceSum over I, k, k, Add 1e-8, rsqrt, Mul); x and the
    weight Reshaped to groups of the batch (1); Conv with that runtime
    weight, or for up: the weight Transposed to [I, O, k, k], a stride-2
    ConvTranspose and the [1, 3, 3, 1] FIR filter (upfirdn2d: Pad 1, a
    depthwise 1x4 and 4x1 Conv, gain 4)."""
    st = g.op("Gemm", [wl, g.c(w(cin, d, scale=np.sqrt(0.5))), g.c(np.ones(cin, np.float32))],
              transB=1)
    if not demod:
        st = g.op("Mul", [st, g.c(np.float32(1 / np.sqrt(cin * k * k)))])
    wt = g.op("Mul", [g.c(RNG.standard_normal((1, cout, cin, k, k))),
                      reshape(g, st, [1, 1, -1, 1, 1])])
    if demod:
        dc = g.op("ReduceSum", [g.op("Pow", [wt, g.c(np.float32(2))]), axes(g, 2, 3, 4)],
                  keepdims=0)
        dc = rsqrt(g, g.op("Add", [dc, g.c(np.float32(1e-8))]))
        wt = g.op("Mul", [wt, reshape(g, dc, [1, -1, 1, 1, 1])])
    x = reshape(g, x, [1, -1, r, r])
    wt = reshape(g, wt, [-1, cin, k, k])
    if not up:
        return g.op("Conv", [x, wt], kernel_shape=[k, k], pads=[k // 2] * 4)
    wt = g.op("Transpose", [wt], perm=[1, 0, 2, 3])
    x = g.op("ConvTranspose", [x, wt], kernel_shape=[k, k], strides=[2, 2])
    x = g.op("Pad", [x, g.c(np.int64([0, 0, 1, 1, 0, 0, 1, 1]))], mode="constant")
    f = np.float32([1, 3, 3, 1]) / 4
    x = g.op("Conv", [x, g.c(np.tile(f.reshape(1, 1, 1, 4), (cout, 1, 1, 1)))],
             kernel_shape=[1, 4], group=cout)
    return g.op("Conv", [x, g.c(np.tile(f.reshape(1, 1, 4, 1), (cout, 1, 1, 1)))],
                kernel_shape=[4, 1], group=cout)


def synth_layer(g, x, wl, cin, cout, r, up=False):
    """A SynthesisLayer: modulated 3x3 Conv, the constant noise map
    times its strength Added, the bias Added, lrelu."""
    x = modconv(g, x, wl, cin, cout, 3, r // 2 if up else r, up=up)
    noise = g.op("Mul", [g.c(RNG.standard_normal((r, r))), g.c(np.float32(0.1))])
    x = g.op("Add", [g.op("Add", [x, noise]), g.c(w(1, cout, 1, 1, scale=0.05))])
    return lrelu_gain(g, x)


def to_rgb(g, x, wl, c, r):
    y = modconv(g, x, wl, c, 3, 1, r, demod=False)
    return g.op("Add", [y, g.c(w(1, 3, 1, 1, scale=0.05))])


def stylegan(path, res=128, d=512, base=4096, cmax=256):
    g = G()
    levels = int(np.log2(res)) - 1  # 4, 8, ... res
    nws = 2 * levels
    ws = g.op("Tile", [g.op("Unsqueeze", [mapping(g, "z", d), axes(g, 1)]),
                       g.c(np.int64([1, nws, 1]))])

    def wl(i):
        return g.op("Gather", [ws, g.c(np.int64(i))], axis=1)

    ch = [min(base // (4 << i), cmax) for i in range(levels)]
    x = g.c(RNG.standard_normal((1, ch[0], 4, 4)))
    x = synth_layer(g, x, wl(0), ch[0], ch[0], 4)
    img = to_rgb(g, x, wl(1), ch[0], 4)
    for i in range(1, levels):
        r = 4 << i
        x = synth_layer(g, x, wl(2 * i - 1), ch[i - 1], ch[i], r, up=True)
        x = synth_layer(g, x, wl(2 * i), ch[i], ch[i], r)
        img = g.op("Resize", [img, "", g.c(np.float32([1, 1, 2, 2]))], mode="linear",
                   coordinate_transformation_mode="half_pixel")
        img = g.op("Add", [img, to_rgb(g, x, wl(2 * i + 1), ch[i], r)])
    save(g, path, [helper.make_tensor_value_info("z", F, [1, d])],
         [helper.make_tensor_value_info(img, F, [1, 3, res, res])])


# ---- yolo_post --------------------------------------------------------------

def yolox_grid(s=640, strides=(8, 16, 32)):
    """YOLOX's grids [1, n, 2] (x, y) and strides [1, n, 1]."""
    grids, sts = [], []
    for st in strides:
        r = s // st
        yv, xv = np.meshgrid(np.arange(r), np.arange(r), indexing="ij")
        grids.append(np.stack([xv, yv], -1).reshape(-1, 2))
        sts.append(np.full((r * r, 1), st))
    return (np.concatenate(grids)[None].astype(np.float32),
            np.concatenate(sts)[None].astype(np.float32))


def yolo_post(path, b=8, s=640, classes=80, max_det=100, iou=0.45, conf=0.25):
    g = G()
    grid, strides = yolox_grid(s)
    n = grid.shape[1]
    xy, wh, obj, cls = split(g, "raw", [2, 2, 1, classes], 2)
    xy = g.op("Mul", [g.op("Add", [xy, g.c(grid)]), g.c(strides)])
    wh = g.op("Mul", [g.op("Exp", [wh]), g.c(strides)])
    half = g.op("Mul", [wh, g.c(np.float32(0.5))])
    boxes = g.op("Concat", [g.op("Sub", [xy, half]), g.op("Add", [xy, half])], axis=2)
    cls = g.op("Sigmoid", [cls])
    score = g.op("Mul", [g.op("Sigmoid", [obj]),
                         g.op("ReduceMax", [cls], axes=[2], keepdims=1)])  # [b, n, 1]
    label = g.op("ArgMax", [cls], axis=2, keepdims=1)  # [b, n, 1]
    # torchvision's batched_nms: each class's boxes offset by
    # class * (max coordinate + 1) so that one NMS keeps them apart
    off = g.op("Mul", [g.op("Cast", [label], to=F),
                       g.op("Add", [g.op("ReduceMax", [boxes], keepdims=0), g.c(np.float32(1))])])
    keep = g.op("NonMaxSuppression", [g.op("Add", [boxes, off]),
                                      g.op("Transpose", [score], perm=[0, 2, 1]),
                                      g.c(np.int64([max_det])), g.c(np.float32([iou])),
                                      g.c(np.float32([conf]))])  # [k, 3]: image, 0, box
    img, _, box = split(g, keep, [1, 1, 1], 1)
    at = g.op("Concat", [img, box], axis=1)  # [k, 2]
    kb = g.op("GatherND", [boxes, at])
    ks = g.op("GatherND", [reshape(g, score, [b, n]), at])
    kc = g.op("GatherND", [reshape(g, label, [b, n]), at])
    ki = g.op("Squeeze", [img, axes(g, 1)])
    k = "k"
    save(g, path, [helper.make_tensor_value_info("raw", F, [b, n, 5 + classes])],
         [helper.make_tensor_value_info(kb, F, [k, 4]),
          helper.make_tensor_value_info(ks, F, [k]),
          helper.make_tensor_value_info(kc, I64, [k]),
          helper.make_tensor_value_info(ki, I64, [k])])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    inception_f16(os.path.join(out, "inception_f16.onnx"))
    einsum_enc(os.path.join(out, "einsum_enc.onnx"))
    gcn(os.path.join(out, "gcn.onnx"))
    tabnet(os.path.join(out, "tabnet.onnx"))
    hourglass(os.path.join(out, "hourglass.onnx"))
    stylegan(os.path.join(out, "stylegan.onnx"))
    yolo_post(os.path.join(out, "yolo_post.onnx"))


if __name__ == "__main__":
    main()
