#!/usr/bin/python3
"""gen_held13.py DIR [MODEL...]: a thirteenth held-out set for
bench/broad.sh (BROAD_SET=held13), written 2026-12-07 before any tuning
on it and not run through opmig when written: for its first measurement
(broad.sh quantizes two of them with `opmig quantize` first); seeded,
opset 17, checked with onnx.checker.  Every BatchNormalization that
follows a Conv is folded into it (a Conv with a bias), as torch.onnx
and tf2onnx write eval mode, unless one is named below:
  rtdetr.onnx           an RT-DETR-R18-style detection transformer in
                        float32 at 320x320, at half RT-DETR-R18's widths
                        (each Linear a MatMul and a bias Add):
                        a PResNet-18-vd backbone (a stem of three 3x3
                        Convs to 16 (stride 2), 16 and 32, each with
                        Relu; a 3x3 stride-2 MaxPool; four stages of two
                        BasicBlocks (3x3 Conv, Relu, 3x3 Conv, Add, Relu)
                        of (32, 64, 128, 256) channels, the first block
                        of each with a 1x1 Conv shortcut, behind a 2x2
                        stride-2 AveragePool (ceil_mode) where the stage
                        halves the plane); the hybrid encoder at d 128:
                        1x1 Convs of the last three stages (40x40, 20x20,
                        10x10) to d; AIFI on the 10x10 level (100 tokens
                        by Reshape and Transpose, a constant 2-D
                        sine-cosine position embedding Added to queries
                        and keys, one post-LN layer of 8-head attention
                        (q, k and v MatMuls with biases, q Mul by 1/4,
                        Softmax, an output MatMul) and a feed-forward of
                        512 with GELU as Erf, back to an image); CCFM:
                        top-down a 1x1 Conv with SiLU (Sigmoid, Mul) of
                        the higher level, a nearest 2x Resize, Concat
                        with the lower, a CSPRepLayer (two 1x1 Convs to
                        64 with SiLU, three deployed RepVGG blocks (a
                        3x3 Conv, SiLU) on the first, Add, a 1x1 Conv to
                        128 with SiLU); bottom-up a 3x3 stride-2 Conv
                        with SiLU, Concat, a CSPRepLayer; the decoder: a
                        1x1 Conv of each level, flattened and
                        Concatenated to memory [1, 2100, 128], Mul by the
                        valid-anchor mask (all ones at this size), a
                        MatMul and LayerNormalization, a score MatMul to
                        80 classes and a box MLP (three MatMuls, Relu
                        between) Added to constant logit anchors; query
                        selection: ReduceMax over the classes, TopK 300,
                        the indices Unsqueezed and Tiled, GatherElements
                        of the boxes and of the features; three decoder
                        layers (a query-position MLP 4 -> 256 -> 128 of
                        the Sigmoid reference boxes; 8-head
                        self-attention over the 300 queries;
                        multi-scale deformable cross-attention: a value
                        MatMul Reshaped to [1, 2100, 8, 16] and Split by
                        level, sampling offsets and attention weights by
                        MatMuls to 8 x 3 x 4 x 2 and 8 x 12 (Softmax),
                        locations xy + offsets / 4 * wh * 0.5 from
                        Slices of the reference box, Mul 2, Sub 1, per
                        level a Gather of its grids, Transpose and
                        Reshape to [8, 300, 4, 2] and a bilinear
                        GridSample (zeros, align_corners 0) of the value
                        as [8, 16, h, w], Unsqueeze and Concat of the
                        levels, Mul by the weights, ReduceSum, an output
                        MatMul; a Relu feed-forward of 512; post-LN
                        residual Adds; a box MLP Added to the
                        reference's inverse sigmoid (Clip, Sub, Div,
                        Log), Sigmoid): the last layer's [1, 300, 4]
                        boxes and [1, 300, 80] logits;
  bisenet_f16.onnx      a BiSeNetV2 semantic segmenter in float16 (Cast
                        in; Cast to float32 before the ArgMax) at
                        160x320, 19 classes: the detail branch (3x3
                        Convs with Relu: 64 stride 2, 64; 64 stride 2,
                        64, 64; 128 stride 2, 128, 128: 20x40); the
                        semantic branch: the stem block (a 3x3 stride-2
                        Conv to 16; a 1x1 Conv to 8 and a 3x3 stride-2
                        Conv to 16 beside a 3x3 stride-2 MaxPool,
                        Concat, a 3x3 Conv), gather-and-expansion layers
                        to 32, 64 and 128 channels (5x10) (GELayerS1: a
                        3x3 Conv, a 3x3 depthwise Conv of channel
                        multiplier 6, each with Relu, a 1x1 Conv back,
                        the residual Add, Relu; GELayerS2: a 3x3 Conv and
                        Relu, a stride-2 3x3 depthwise Conv of
                        multiplier 6, a 3x3 depthwise Conv and Relu, a
                        1x1 Conv, a shortcut of a stride-2 3x3
                        depthwise and a 1x1 Conv, Add, Relu; one S2 and
                        one S1 to 32 and to 64, one S2 and three S1 to
                        128), the context embedding (ReduceMean over the
                        plane, BatchNormalization, a 1x1 Conv and Relu,
                        Add, a 3x3 Conv and Relu); the bilateral guided
                        aggregation (detail: a 3x3 depthwise and a
                        bias-free 1x1 Conv; a 3x3 stride-2 Conv and a
                        3x3 stride-2 AveragePool counting its pads;
                        semantic: a 3x3 Conv nearest-Resized by 4
                        (asymmetric, floor); a 3x3 depthwise and a
                        bias-free 1x1 Conv; each detail side Mul by a
                        semantic side's Sigmoid, the low one
                        nearest-Resized by 4, Add, a 3x3 Conv and Relu);
                        the segment head (a 3x3 Conv to 1024 and Relu, a
                        1x1 Conv to 19, a linear Resize by 8
                        (half_pixel)); ArgMax over the classes: int64
                        [1, 160, 320] labels;
  rtmpose_f16.onnx      an RTMPose-s-style top-down pose net in float16
                        (Cast in and out) at 256x192, 17 joints: a
                        CSPNeXt backbone (deepen 0.33, widen 0.5; each
                        ConvModule a Conv and SiLU as Sigmoid, Mul): a
                        stem of 3x3 ConvModules to 16 (stride 2), 16,
                        32; four stages of a 3x3 stride-2 ConvModule to
                        (64, 128, 256, 512) and a CSPLayer (1x1
                        ConvModules to half the width, main and short;
                        (1, 2, 2, 1) CSPNeXt blocks on the main (a 3x3
                        ConvModule, a 5x5 depthwise and a 1x1
                        ConvModule, the residual Add but in the last
                        stage); Concat; channel attention:
                        GlobalAveragePool, a 1x1 Conv with bias,
                        HardSigmoid, Mul; a 1x1 ConvModule), the last
                        stage's SPP bottleneck before its CSPLayer (a
                        1x1 ConvModule to 256, stride-1 MaxPools of 5, 9
                        and 13, Concat, a 1x1 ConvModule); the RTMCC
                        head: a 7x7 Conv to 17 at 8x6, Reshape to [1,
                        17, 48], ScaleNorm (ReduceL2 over the last axis,
                        Mul by 48^-0.5, Clip at 1e-5, Div, Mul by g), a
                        MatMul to 256; a gated attention unit over the
                        17 joint tokens (ScaleNorm, a MatMul to 1152 and
                        SiLU, Split into u 512, v 512 and base 128, base
                        Unsqueezed, Mul by gamma [2, 128], Add beta,
                        Split and Squeezed into q and k, a MatMul of q
                        by k Transposed, Div by sqrt 128, Relu, squared
                        by Mul, a MatMul with v, Mul by u, a MatMul back
                        to 256; the input Mul by a scale vector Added);
                        MatMuls to the SimCC bins: [1, 17, 384] x and
                        [1, 17, 512] y;
  movenet.onnx          a MoveNet-SinglePose-Lightning-style pose net in
                        float32 as tf2onnx writes a TensorFlow model
                        after its optimizer: an int32 NHWC image [1,
                        192, 192, 3], Cast, Div 127.5, Sub 1, one
                        Transpose to NCHW; a MobileNetV2 (width 1.0,
                        Relu6 as Clip, TF's SAME pads [0, 0, 1, 1] on
                        each stride-2 3x3 Conv); a feature pyramid of 64
                        channels from stride 32 down to 4 (1x1 Conv
                        laterals of the 320, 96, 32 and 24-channel
                        levels; linear Resizes (half_pixel) to sizes,
                        Add, a 3x3 depthwise and a 1x1 Conv with Relu);
                        four heads at 48x48 (a 3x3 depthwise Conv, a 1x1
                        Conv to 96 with Relu, a 1x1 Conv to 1, 34, 17,
                        34: person centre, keypoint regression, keypoint
                        heatmaps, offsets), each Transposed to NHWC; the
                        decoding in NHWC: the centre's Sigmoid Mul a
                        constant inverse distance to the frame centre,
                        Reshape, ArgMax, its row and column by int64 Div
                        and Mod, GatherND (batch_dims 1) of the
                        regression there, Reshape, Cast and Add; each
                        heatmap's Sigmoid Div by its distance to the
                        regressed joint + 1.8 (Sub, Mul, Add, Sqrt),
                        Reshape [1, 2304, 17], ArgMax, Div and Mod,
                        GatherND (batch_dims 1) of offsets and scores at
                        [row, column, joint], Add, Div by 48, Concat:
                        [1, 1, 17, 3] (y, x, score);
  pointpillars.onnx     a PointPillars-style LiDAR detector (OpenPCDet's)
                        in float32 on 6000 pillars of 32 points of 10
                        features ([6000, 32, 10]): the pillar feature
                        net (a bias-free MatMul to 64,
                        BatchNormalization between Transposes, Relu,
                        ReduceMax over the points, Squeeze); the scatter
                        to a 256x256 bird's-eye canvas (ConstantOfShape
                        zeros [65536, 64], ScatterND at 6000 distinct
                        cells, a constant [6000, 1] index: an input
                        would get the bench's integers in [0, 7];
                        Transpose, Reshape to [1, 64, 256, 256]); the
                        2-D backbone at half OpenPCDet's widths: three
                        blocks of (32, 64, 128) channels, each a zero
                        Pad of 1, a 3x3 stride-2 Conv and (3, 5, 5) 3x3
                        Convs, each with Relu; each block's output to
                        128x128 by a bias-free ConvTranspose of kernel
                        and stride 1, 2 and 4 to 64 channels,
                        BatchNormalization (not folded) and Relu,
                        Concat to 192; 1x1 Conv heads Transposed to
                        NHWC: [1, 128, 128, 18] class, [1, 128, 128, 42]
                        box and [1, 128, 128, 12] direction (6 anchors a
                        cell);
  pointpillars_qdq.onnx broad.sh writes it: pointpillars.onnx quantized
                        static QDQ;
  convtasnet.onnx       a Conv-TasNet speech separator (asteroid's) in
                        float32 on half a second of 8 kHz audio ([1, 1,
                        4000]): the encoder a bias-free 1-D Conv of 512
                        filters of 16, stride 8 ([1, 512, 499]); the
                        TDConvNet masker: gLN, a 1x1 Conv to 128; 3
                        repeats of 8 blocks of dilations 1, 2, ... 128
                        (a 1x1 Conv to 512, PRelu of one slope, gLN, a
                        depthwise 1-D Conv of kernel 3 of that dilation
                        and padding, PRelu, gLN, a 1x1 residual Conv to
                        128 Added, a 1x1 skip Conv to 128 summed);
                        PRelu and a 1x1 Conv of the skips' sum to 2 x
                        512, Reshape, Sigmoid; the encoder's output
                        Unsqueezed Mul the masks, Reshape [2, 512, 499],
                        the decoder's bias-free 1-D ConvTranspose
                        (kernel 16, stride 8) to one channel: [1, 2,
                        4000].  Each gLN: ReduceMean over channels and
                        time, Sub, Pow 2, ReduceMean, Add 1e-8, Sqrt,
                        Div, the gain Mul and the bias Add between two
                        Transposes (asteroid applies them to the
                        channels-last view).  (A second of audio took
                        273 ms in onnxruntime at one thread);
  convtasnet_dyn.onnx   broad.sh writes it: convtasnet.onnx quantized
                        by `opmig quantize --dynamic`;
  raft_small.onnx       a RAFT-small optical-flow net in float32 on two
                        192x256 images ([1, 3, 192, 256] each; Div 255,
                        Mul 2, Sub 1), 4 refinement iterations unrolled
                        (RAFT-small's default is 12): the feature
                        encoder on both images at once (Concat on the
                        batch, Split after) and the context encoder on
                        the first, each a 7x7 stride-2 Conv to 32 and
                        Relu, bottleneck blocks (1x1, 3x3 of stride 1 or
                        2 and 1x1 Convs, each with Relu; a strided 1x1
                        Conv shortcut where the plane halves; Add, Relu),
                        two per stage of (32, 64, 96) channels, a 1x1
                        Conv to 128 (features: InstanceNormalization
                        after each Conv but the last) or to 160
                        (context, no normalization: Split into a Tanh
                        hidden state of 96 and a Relu input of 64);
                        all-pairs correlation: one MatMul [1, 768, 128]
                        by [1, 128, 768], Div by sqrt 128, Reshaped to
                        [768, 1, 24, 32] and AveragePooled 2x2 thrice to
                        a four-level pyramid; each iteration looks up the
                        pyramid at the current coordinates (per level
                        the coordinates [1, 24, 32, 2] Reshaped to [768,
                        1, 1, 2], Div by 2^level, a constant 7x7 grid of
                        offsets Added, Split, scaled to [-1, 1] (Mul 2,
                        Div by the size - 1, Sub 1), Concat, a bilinear
                        GridSample (zeros, align_corners 1) to [768, 1,
                        7, 7], Reshape to [1, 24, 32, 49]; Concat,
                        Transpose: [1, 196, 24, 32]) and runs the small
                        update block whose weights every iteration
                        shares (motion encoder: a 1x1 Conv to 96 of the
                        correlation, a 7x7 Conv to 64 and a 3x3 to 32 of
                        the flow, a 3x3 Conv to 80 of their Concat, Relu
                        after each, Concat with the flow; a ConvGRU of
                        hidden 96 with 3x3 Convs from 242 channels: z
                        and r by Sigmoid, q by Tanh of the Concat of r *
                        h and x, h = (1 - z) * h + z * q; a flow head of
                        a 3x3 Conv to 128, Relu, a 3x3 Conv to 2) Added
                        to the coordinates: the [1, 2, 24, 32] flow and
                        its 8x upsampling (a linear Resize to sizes,
                        align_corners, Mul 8): [1, 2, 192, 256].
With MODEL names, only those are written (sizing; the weights then
differ: the set is what a run without names writes)."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

from gen_broad import save
from gen_held import G
from gen_held7 import heads_of, merge_heads, reshape, split

RNG = np.random.default_rng(77232917)
F = TensorProto.FLOAT
H = TensorProto.FLOAT16
I32 = TensorProto.INT32
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


def f32(g, v):
    """A float32 scalar constant whatever the graph's dtype (Resize's
    scales)."""
    return g.c(np.float32(v), np.float32)


class ConvW:
    """A Conv's constant weight and bias, made once and applied to any
    number of inputs (an unrolled loop's convolutions share them); k and
    stride ints (2-D) or tuples (any rank); pads each side keep the size
    at stride 1 unless pad (each side) or pads (the ONNX list) is
    given."""

    def __init__(self, g, cin, cout, k=3, stride=1, group=1, pad=None, pads=None, bias=True,
                 scale=1.0, dil=1):
        ks = list(k) if isinstance(k, tuple) else [k, k]
        self.at = dict(kernel_shape=ks,
                       strides=list(stride) if isinstance(stride, tuple) else [stride] * len(ks),
                       group=group, dilations=[dil] * len(ks),
                       pads=pads if pads is not None else
                       [(q - 1) * dil // 2 if pad is None else pad for q in ks] * 2)
        self.ins = [g.c(w(cout, cin // group, *ks, scale=scale))]
        if bias:
            self.ins.append(g.c(w(cout, scale=0.1)))

    def __call__(self, g, x):
        return g.op("Conv", [x] + self.ins, **self.at)


def conv(g, x, cin, cout, k=3, stride=1, **kw):
    return ConvW(g, cin, cout, k, stride, **kw)(g, x)


def silu(g, x):
    """SiLU as torch.onnx writes it: Sigmoid, Mul."""
    return g.op("Mul", [x, g.op("Sigmoid", [x])])


def act(g, y, a):
    if a == "silu":
        return silu(g, y)
    if a == "relu6":
        return g.op("Clip", [y, g.c(np.float32(0)), g.c(np.float32(6))])
    return g.op(a, [y]) if a else y


def cba(g, x, cin, cout, k=3, stride=1, a="Relu", **kw):
    """Conv (its BatchNormalization folded into weight and bias, as an
    exporter writes eval mode) and the activation a."""
    return act(g, conv(g, x, cin, cout, k, stride, **kw), a)


def bn(g, x, c, eps=1e-5):
    return g.op("BatchNormalization",
                [x, g.c(1 + 0.1 * RNG.standard_normal(c)), g.c(0.1 * RNG.standard_normal(c)),
                 g.c(0.1 * RNG.standard_normal(c)), g.c(0.5 + RNG.random(c))], epsilon=eps)


def ln(g, x, n, eps=1e-5):
    return g.op("LayerNormalization", [x, g.c(1 + 0.1 * RNG.standard_normal(n)),
                                       g.c(0.1 * RNG.standard_normal(n))], axis=-1, epsilon=eps)


def lin(g, x, i, o, bias=True, scale=1.0):
    """nn.Linear on a [.., i] tensor: MatMul by the transposed weight,
    the bias Added."""
    y = g.op("MatMul", [x, g.c(w(i, o, scale=scale))])
    return g.op("Add", [y, g.c(w(o, scale=0.1))]) if bias else y


def resize(g, x, scale, mode="nearest", ctm="asymmetric"):
    at = dict(mode=mode, coordinate_transformation_mode=ctm)
    if mode == "nearest":
        at["nearest_mode"] = "floor"
    return g.op("Resize", [x, "", g.c(np.float32([1, 1, scale, scale]), np.float32)], **at)


def gelu_erf(g, x):
    """GELU as torch.onnx writes it: Div by sqrt 2, Erf, Add 1, Mul, Mul
    0.5."""
    e = g.op("Erf", [g.op("Div", [x, g.c(np.float32(np.sqrt(2)))])])
    return g.op("Mul", [g.op("Mul", [x, g.op("Add", [e, g.c(np.float32(1))])]),
                        g.c(np.float32(0.5))])


# ---- rtdetr -----------------------------------------------------------------

def res_basic(g, x, cin, cout, stride, first):
    """PResNet's BasicBlock (variant d): 3x3 Conv, Relu, 3x3 Conv; the
    first block of a stage has a 1x1 Conv shortcut, after a 2x2 stride-2
    AveragePool (ceil_mode) where it halves the plane; Add, Relu."""
    y = conv(g, g.op("Relu", [conv(g, x, cin, cout, 3, stride)]), cout, cout, 3, scale=0.5)
    sc = x
    if first:
        if stride == 2:
            sc = g.op("AveragePool", [x], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
        sc = conv(g, sc, cin, cout, 1)
    return g.op("Relu", [g.op("Add", [y, sc])])


def sincos_2d(h, w_, d, temp=10000.0):
    """RT-DETR's build_2d_sincos_position_embedding: [1, h * w, d]."""
    gw, gh = np.meshgrid(np.arange(w_, dtype=np.float32), np.arange(h, dtype=np.float32),
                         indexing="ij")
    om = 1.0 / temp ** (np.arange(d // 4, dtype=np.float32) / (d // 4))
    ow, oh = gw.reshape(-1, 1) * om, gh.reshape(-1, 1) * om
    return np.concatenate([np.sin(ow), np.cos(ow), np.sin(oh), np.cos(oh)], 1)[None]


def mha(g, q, k, v, tq, tk, d, heads):
    """torch's nn.MultiheadAttention: q, k and v MatMuls with biases,
    heads by Reshape/Transpose, q Mul by hd^-0.5, scores, Softmax,
    MatMul, the output MatMul."""
    hd = d // heads
    qh = heads_of(g, g.op("Mul", [lin(g, q, d, d), g.c(np.float32(hd ** -0.5))]), tq, heads, hd)
    kh = heads_of(g, lin(g, k, d, d), tk, heads, hd)
    vh = heads_of(g, lin(g, v, d, d), tk, heads, hd)
    kt = g.op("Transpose", [kh], perm=[0, 1, 3, 2])
    s = g.op("Softmax", [g.op("MatMul", [qh, kt])], axis=-1)
    return lin(g, merge_heads(g, g.op("MatMul", [s, vh]), tq, d), d, d)


def rep_c3(g, x, cin, cout, n=3, e=0.5):
    """CSPRepLayer: two 1x1 Convs with SiLU, n RepVGG blocks (deployed:
    one 3x3 Conv and SiLU) after the first, the branches Added, a 1x1
    Conv and SiLU to cout where the hidden width differs."""
    hid = int(cout * e)
    a = cba(g, x, cin, hid, 1, a="silu")
    for _ in range(n):
        a = cba(g, a, hid, hid, 3, a="silu")
    y = g.op("Add", [a, cba(g, x, cin, hid, 1, a="silu")])
    return cba(g, y, hid, cout, 1, a="silu") if hid != cout else y


def mlp(g, x, dims):
    """RT-DETR's MLP: Linears with Relu between."""
    for i, (a, b) in enumerate(zip(dims, dims[1:])):
        x = lin(g, x, a, b)
        if i < len(dims) - 2:
            x = g.op("Relu", [x])
    return x


def inverse_sigmoid(g, x, eps=1e-5):
    x = g.op("Clip", [x, g.c(np.float32(0)), g.c(np.float32(1))])
    a = g.op("Clip", [x, g.c(np.float32(eps))])
    b = g.op("Clip", [g.op("Sub", [g.c(np.float32(1)), x]), g.c(np.float32(eps))])
    return g.op("Log", [g.op("Div", [a, b])])


def ms_deform_attn(g, query, ref, memory, shapes, d, heads, pts, q):
    """MSDeformableAttention as torch.onnx writes RT-DETR's
    deformable_attention_core_func: one GridSample per level."""
    nl, hd = len(shapes), d // heads
    value = reshape(g, lin(g, memory, d, d), [1, -1, heads, hd])
    vals = split(g, value, [h * w_ for h, w_ in shapes], 1)
    off = reshape(g, lin(g, query, d, heads * nl * pts * 2, scale=0.3), [1, q, heads, nl, pts, 2])
    aw = reshape(g, lin(g, query, d, heads * nl * pts), [1, q, heads, nl * pts])
    aw = reshape(g, g.op("Softmax", [aw], axis=-1), [1, q, heads, nl, pts])
    xy = reshape(g, g.op("Slice", [ref, axes(g, 0), axes(g, 2), axes(g, -1)]), [1, q, 1, 1, 1, 2])
    wh = reshape(g, g.op("Slice", [ref, axes(g, 2), axes(g, 4), axes(g, -1)]), [1, q, 1, 1, 1, 2])
    step = g.op("Mul", [g.op("Div", [off, g.c(np.float32(pts))]), wh])
    loc = g.op("Add", [xy, g.op("Mul", [step, g.c(np.float32(0.5))])])
    grids = g.op("Sub", [g.op("Mul", [loc, g.c(np.float32(2))]), g.c(np.float32(1))])
    sampled = []
    for lvl, (h, w_) in enumerate(shapes):
        v = g.op("Transpose", [reshape(g, vals[lvl], [1, h * w_, d])], perm=[0, 2, 1])
        v = reshape(g, v, [heads, hd, h, w_])
        gl = g.op("Gather", [grids, g.c(np.int64(lvl))], axis=3)  # [1, q, heads, pts, 2]
        gl = reshape(g, g.op("Transpose", [gl], perm=[0, 2, 1, 3, 4]), [heads, q, pts, 2])
        s = g.op("GridSample", [v, gl], mode="bilinear", padding_mode="zeros", align_corners=0)
        sampled.append(g.op("Unsqueeze", [s, axes(g, -2)]))  # [heads, hd, q, 1, pts]
    st = reshape(g, g.op("Concat", sampled, axis=-2), [heads, hd, q, nl * pts])
    aw = reshape(g, g.op("Transpose", [aw], perm=[0, 2, 1, 3, 4]), [heads, 1, q, nl * pts])
    o = g.op("ReduceSum", [g.op("Mul", [st, aw]), axes(g, -1)], keepdims=0)  # [heads, hd, q]
    o = g.op("Transpose", [reshape(g, o, [1, d, q])], perm=[0, 2, 1])
    return lin(g, o, d, d)


def rtdetr(path, s=320, widths=(32, 64, 128, 256), d=128, heads=8, ff=512, classes=80,
           queries=300, layers=3, pts=4):
    g = G()
    x = cba(g, "x", 3, widths[0] // 2, 3, 2)
    x = cba(g, x, widths[0] // 2, widths[0] // 2, 3)
    x = cba(g, x, widths[0] // 2, widths[0], 3)
    x = g.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)
    feats, cin = [], widths[0]
    for i, c in enumerate(widths):
        st = 1 if i == 0 else 2
        x = res_basic(g, x, cin, c, st, True)
        x = res_basic(g, x, c, c, 1, False)
        cin = c
        if i:
            feats.append(x)
    sizes = [s // 8, s // 16, s // 32]
    # hybrid encoder: input projections, AIFI on the stride-32 level
    p = [conv(g, f, c, d, 1) for f, c in zip(feats, widths[1:])]
    r = sizes[2]
    t = g.op("Transpose", [reshape(g, p[2], [1, d, r * r])], perm=[0, 2, 1])
    qk = g.op("Add", [t, g.c(sincos_2d(r, r, d))])
    t = ln(g, g.op("Add", [t, mha(g, qk, qk, t, r * r, r * r, d, heads)]), d)
    t = ln(g, g.op("Add", [t, lin(g, gelu_erf(g, lin(g, t, d, ff)), ff, d, scale=0.5)]), d)
    p[2] = reshape(g, g.op("Transpose", [t], perm=[0, 2, 1]), [1, d, r, r])
    # CCFM: top-down
    inner = [p[2]]
    for idx in (1, 0):
        hi = cba(g, inner[0], d, d, 1, a="silu")
        inner[0] = hi
        inner.insert(0, rep_c3(g, g.op("Concat", [resize(g, hi, 2), p[idx]], axis=1), 2 * d, d))
    outs = [inner[0]]
    for idx in range(2):  # bottom-up
        dn = cba(g, outs[-1], d, d, 3, 2, a="silu")
        outs.append(rep_c3(g, g.op("Concat", [dn, inner[idx + 1]], axis=1), 2 * d, d))
    # decoder input: projections, flatten, the encoder's query selection
    shapes = [(r_, r_) for r_ in sizes]
    mem = [g.op("Transpose", [reshape(g, conv(g, o, d, d, 1), [1, d, r_ * r_])], perm=[0, 2, 1])
           for o, r_ in zip(outs, sizes)]
    mem = g.op("Concat", mem, axis=1)
    n = sum(r_ * r_ for r_ in sizes)
    anchors = []
    for lvl, r_ in enumerate(sizes):
        gy, gx = np.meshgrid(np.arange(r_), np.arange(r_), indexing="ij")
        xy = (np.stack([gx, gy], -1).reshape(-1, 2) + 0.5) / r_
        anchors.append(np.concatenate([xy, np.full_like(xy, 0.05 * 2.0 ** lvl)], 1))
    anchors = np.concatenate(anchors)[None].astype(np.float32)
    valid = np.all((anchors > 0.01) & (anchors < 0.99), -1, keepdims=True).astype(np.float32)
    anchors = np.log(anchors / (1 - anchors))
    mem = g.op("Mul", [g.c(valid), mem])
    om = ln(g, lin(g, mem, d, d), d)
    score = lin(g, om, d, classes)
    coord = g.op("Add", [mlp(g, om, [d, d, d, 4]), g.c(anchors)])
    _, topi = ops(g, "TopK", [g.op("ReduceMax", [score], axes=[-1], keepdims=0),
                              g.c(np.int64([queries]))], 2, axis=1, largest=1, sorted=1)
    ti = g.op("Unsqueeze", [topi, axes(g, -1)])
    ref_un = g.op("GatherElements", [coord, g.op("Tile", [ti, g.c(np.int64([1, 1, 4]))])], axis=1)
    tgt = g.op("GatherElements", [om, g.op("Tile", [ti, g.c(np.int64([1, 1, d]))])], axis=1)
    ref = g.op("Sigmoid", [ref_un])
    for i in range(layers):
        qpos = mlp(g, ref, [4, 2 * d, d])
        qk = g.op("Add", [tgt, qpos])
        tgt = ln(g, g.op("Add", [tgt, mha(g, qk, qk, tgt, queries, queries, d, heads)]), d)
        ca = ms_deform_attn(g, g.op("Add", [tgt, qpos]), g.op("Unsqueeze", [ref, axes(g, 2)]), mem,
                            shapes, d, heads, pts, queries)
        tgt = ln(g, g.op("Add", [tgt, ca]), d)
        y = lin(g, g.op("Relu", [lin(g, tgt, d, ff)]), ff, d, scale=0.5)
        tgt = ln(g, g.op("Add", [tgt, y]), d)
        box = g.op("Sigmoid", [g.op("Add", [mlp(g, tgt, [d, d, d, 4]), inverse_sigmoid(g, ref)])])
        if i == layers - 1:
            logits = lin(g, tgt, d, classes)
        ref = box
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, s, s])],
         [helper.make_tensor_value_info(ref, F, [1, queries, 4]),
          helper.make_tensor_value_info(logits, F, [1, queries, classes])])


# ---- bisenet_f16 --------------------------------------------------------------

def ge_s1(g, x, c, e=6):
    """GELayerS1: 3x3 Conv and Relu, a 3x3 depthwise Conv to e * c
    (channel multiplier e) and Relu, a 1x1 Conv back, the residual Add,
    Relu."""
    y = cba(g, x, c, c)
    y = cba(g, y, c, c * e, 3, group=c)
    y = cba(g, y, c * e, c, 1, a=None, scale=0.5)
    return g.op("Relu", [g.op("Add", [y, x])])


def ge_s2(g, x, cin, cout, e=6):
    """GELayerS2: 3x3 Conv and Relu, a stride-2 3x3 depthwise Conv to e *
    cin, a 3x3 depthwise Conv and Relu, a 1x1 Conv to cout; the shortcut
    a stride-2 3x3 depthwise Conv and a 1x1 Conv; Add, Relu."""
    m = cin * e
    y = cba(g, x, cin, cin)
    y = cba(g, y, cin, m, 3, 2, a=None, group=cin)
    y = cba(g, y, m, m, 3, group=m)
    y = cba(g, y, m, cout, 1, a=None, scale=0.5)
    sc = cba(g, cba(g, x, cin, cin, 3, 2, a=None, group=cin), cin, cout, 1, a=None)
    return g.op("Relu", [g.op("Add", [y, sc])])


def bisenet_f16(path, hgt=160, wid=320, mid=1024, classes=19):
    g = G(np.float16)
    x = g.op("Cast", ["x"], to=H)
    # detail branch
    dt = cba(g, cba(g, x, 3, 64, 3, 2), 64, 64)
    dt = cba(g, cba(g, cba(g, dt, 64, 64, 3, 2), 64, 64), 64, 64)
    dt = cba(g, cba(g, cba(g, dt, 64, 128, 3, 2), 128, 128), 128, 128)
    # semantic branch: the stem block
    st = cba(g, x, 3, 16, 3, 2)
    left = cba(g, cba(g, st, 16, 8, 1), 8, 16, 3, 2)
    right = g.op("MaxPool", [st], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)
    sm = cba(g, g.op("Concat", [left, right], axis=1), 32, 16)
    sm = ge_s1(g, ge_s2(g, sm, 16, 32), 32)
    sm = ge_s1(g, ge_s2(g, sm, 32, 64), 64)
    sm = ge_s2(g, sm, 64, 128)
    for _ in range(3):
        sm = ge_s1(g, sm, 128)
    # context embedding
    ce = bn(g, g.op("ReduceMean", [sm], axes=[2, 3], keepdims=1), 128)
    ce = cba(g, ce, 128, 128, 1)
    sm = cba(g, g.op("Add", [ce, sm]), 128, 128)
    # bilateral guided aggregation
    l1 = conv(g, conv(g, dt, 128, 128, 3, group=128), 128, 128, 1, bias=False)
    l2 = g.op("AveragePool", [conv(g, dt, 128, 128, 3, 2)], kernel_shape=[3, 3], strides=[2, 2],
              pads=[1] * 4, count_include_pad=1)
    r1 = resize(g, conv(g, sm, 128, 128, 3), 4)
    r2 = conv(g, conv(g, sm, 128, 128, 3, group=128), 128, 128, 1, bias=False)
    lt = g.op("Mul", [l1, g.op("Sigmoid", [r1])])
    rt = resize(g, g.op("Mul", [l2, g.op("Sigmoid", [r2])]), 4)
    y = cba(g, g.op("Add", [lt, rt]), 128, 128)
    # segment head
    y = conv(g, cba(g, y, 128, mid), mid, classes, 1)
    y = resize(g, y, 8, "linear", "half_pixel")
    pred = g.op("ArgMax", [g.op("Cast", [y], to=F)], axis=1, keepdims=0)
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, hgt, wid])],
         [helper.make_tensor_value_info(pred, I64, [1, hgt, wid])])


# ---- rtmpose_f16 --------------------------------------------------------------

def cspnext_block(g, x, c, add):
    """CSPNeXtBlock: 3x3 ConvModule, a 5x5 depthwise and a 1x1
    ConvModule (each Conv, folded BatchNormalization, SiLU), the residual
    Add where add."""
    y = cba(g, x, c, c, 3, a="silu")
    y = cba(g, cba(g, y, c, c, 5, group=c, a="silu"), c, c, 1, a="silu", scale=0.5)
    return g.op("Add", [y, x]) if add else y


def csp_layer(g, x, cin, cout, n, add):
    """CSPLayer: main and short 1x1 ConvModules to cout / 2, n blocks on
    the main, Concat, channel attention (GlobalAveragePool, a 1x1 Conv
    with bias, HardSigmoid, Mul), a final 1x1 ConvModule."""
    m = cout // 2
    short = cba(g, x, cin, m, 1, a="silu")
    main = cba(g, x, cin, m, 1, a="silu")
    for _ in range(n):
        main = cspnext_block(g, main, m, add)
    y = g.op("Concat", [main, short], axis=1)
    at = conv(g, g.op("GlobalAveragePool", [y]), 2 * m, 2 * m, 1)
    y = g.op("Mul", [y, g.op("HardSigmoid", [at], alpha=1 / 6, beta=0.5)])
    return cba(g, y, 2 * m, cout, 1, a="silu")


def scale_norm(g, x, d, eps=1e-5):
    """mmpose's ScaleNorm: x / clamp(ReduceL2(x) * d^-0.5, eps) * g."""
    n = g.op("Mul", [g.op("ReduceL2", [x], axes=[-1], keepdims=1), g.c(np.float32(d ** -0.5))])
    n = g.op("Clip", [n, g.c(np.float32(eps))])
    return g.op("Mul", [g.op("Div", [x, n]), g.c(np.float32([1.0]))])


def rtmpose_f16(path, hgt=256, wid=192, stem=16, widths=(64, 128, 256, 512), blocks=(1, 2, 2, 1),
                joints=17, hid=256, s=128, e=2, ratio=2.0):
    g = G(np.float16)
    x = g.op("Cast", ["x"], to=H)
    x = cba(g, x, 3, stem, 3, 2, a="silu")
    x = cba(g, x, stem, stem, 3, a="silu")
    x = cba(g, x, stem, 2 * stem, 3, a="silu")
    cin = 2 * stem
    for i, (c, n) in enumerate(zip(widths, blocks)):
        last = i == len(widths) - 1
        x = cba(g, x, cin, c, 3, 2, a="silu")
        if last:  # SPPBottleneck
            y = cba(g, x, c, c // 2, 1, a="silu")
            pools = [g.op("MaxPool", [y], kernel_shape=[k, k], strides=[1, 1], pads=[k // 2] * 4)
                     for k in (5, 9, 13)]
            x = cba(g, g.op("Concat", [y] + pools, axis=1), 2 * c, c, 1, a="silu")
        x = csp_layer(g, x, c, c, n, not last)
        cin = c
    fh, fw = hgt // 32, wid // 32
    x = conv(g, x, cin, joints, 7)
    x = reshape(g, x, [1, joints, fh * fw])
    x = g.op("MatMul", [scale_norm(g, x, fh * fw), g.c(w(fh * fw, hid))])
    # RTMCCBlock (gated attention unit)
    ed = e * hid
    y = scale_norm(g, x, hid)
    uv = silu(g, g.op("MatMul", [y, g.c(w(hid, 2 * ed + s))]))
    u, v, base = split(g, uv, [ed, ed, s], 2)
    base = g.op("Add", [g.op("Mul", [g.op("Unsqueeze", [base, axes(g, 2)]),
                                     g.c(RNG.random((2, s)))]), g.c(RNG.random((2, s)))])
    q, k = [g.op("Squeeze", [t, axes(g, 2)]) for t in split(g, base, [1, 1], 2)]
    qk = g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 2, 1])])
    ker = g.op("Relu", [g.op("Div", [qk, g.c(np.float32(np.sqrt(s)))])])
    ker = g.op("Mul", [ker, ker])
    y = g.op("Mul", [u, g.op("MatMul", [ker, v])])
    y = g.op("MatMul", [y, g.c(w(ed, hid, scale=0.5))])
    x = g.op("Add", [g.op("Mul", [x, g.c(np.ones(hid, np.float32))]), y])
    sx = g.op("Cast", [g.op("MatMul", [x, g.c(w(hid, int(wid * ratio)))])], to=F)
    sy = g.op("Cast", [g.op("MatMul", [x, g.c(w(hid, int(hgt * ratio)))])], to=F)
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, hgt, wid])],
         [helper.make_tensor_value_info(sx, F, [1, joints, int(wid * ratio)]),
          helper.make_tensor_value_info(sy, F, [1, joints, int(hgt * ratio)])])


# ---- movenet ------------------------------------------------------------------

SAME2 = [0, 0, 1, 1]  # TF's SAME padding of a stride-2 3x3 on an even plane


def mbv2_block(g, x, cin, cout, t, stride):
    y = cba(g, x, cin, cin * t, 1, a="relu6") if t != 1 else x
    m = cin * t
    y = cba(g, y, m, m, 3, stride, a="relu6", group=m, pads=SAME2 if stride == 2 else None)
    y = cba(g, y, m, cout, 1, a=None, scale=0.5)
    return g.op("Add", [y, x]) if stride == 1 and cin == cout else y


def movenet(path, s=192, fpn=64, hc=96, joints=17):
    g = G()
    x = g.op("Cast", ["input"], to=F)
    x = g.op("Sub", [g.op("Div", [x, g.c(np.float32(127.5))]), g.c(np.float32(1))])
    x = g.op("Transpose", [x], perm=[0, 3, 1, 2])
    x = cba(g, x, 3, 32, 3, 2, a="relu6", pads=SAME2)
    cin, feats = 32, []
    for t, c, n, st in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                        (6, 160, 3, 2), (6, 320, 1, 1)):
        if st == 2 and cin != 16:  # the stride-2 plane is not a level
            feats.append((x, cin))
        for i in range(n):
            x = mbv2_block(g, x, cin, c, t, st if i == 0 else 1)
            cin = c
    feats.append((x, cin))  # strides 4, 8, 16, 32: 24, 32, 96, 320 channels
    p = conv(g, feats[-1][0], feats[-1][1], fpn, 1)
    r = s // 32
    for f, c in reversed(feats[:-1]):
        r *= 2
        p = g.op("Resize", [p, "", "", g.c(np.int64([1, fpn, r, r]))], mode="linear",
                 coordinate_transformation_mode="half_pixel")
        p = g.op("Add", [p, conv(g, f, c, fpn, 1)])
        p = cba(g, conv(g, p, fpn, fpn, 3, group=fpn), fpn, fpn, 1)
    heads = []
    for out in (1, 2 * joints, joints, 2 * joints):  # centre, regression, heatmap, offset
        y = cba(g, conv(g, p, fpn, fpn, 3, group=fpn), fpn, hc, 1)
        heads.append(g.op("Transpose", [conv(g, y, hc, out, 1)], perm=[0, 2, 3, 1]))
    ctr, reg, hm, off = heads
    # decoding in NHWC
    ri = g.c(np.int64(r))
    yy, xx = np.meshgrid(np.arange(r), np.arange(r), indexing="ij")
    cw = 1 / (np.sqrt((yy - (r - 1) / 2) ** 2 + (xx - (r - 1) / 2) ** 2) + 1)
    cs = g.op("Mul", [g.op("Sigmoid", [ctr]), g.c(cw.reshape(1, r, r, 1))])
    ci = g.op("ArgMax", [reshape(g, cs, [1, r * r])], axis=1, keepdims=0)  # [1]
    cyx = g.op("Concat", [g.op("Unsqueeze", [g.op(op, [ci, ri]), axes(g, 1)])
                          for op in ("Div", "Mod")], axis=1)  # [1, 2]
    kp = reshape(g, g.op("GatherND", [reg, cyx], batch_dims=1), [1, joints, 2])
    kp = g.op("Add", [kp, g.op("Unsqueeze", [g.op("Cast", [cyx], to=F), axes(g, 1)])])
    ky, kx = [reshape(g, t, [1, 1, 1, joints]) for t in split(g, kp, [1, 1], 2)]
    dy = g.op("Sub", [g.c(np.arange(r, dtype=np.float32).reshape(1, r, 1, 1)), ky])
    dx = g.op("Sub", [g.c(np.arange(r, dtype=np.float32).reshape(1, 1, r, 1)), kx])
    dist = g.op("Sqrt", [g.op("Add", [g.op("Mul", [dy, dy]), g.op("Mul", [dx, dx])])])
    hs = g.op("Sigmoid", [hm])
    wt = g.op("Div", [hs, g.op("Add", [dist, g.c(np.float32(1.8))])])
    ki = g.op("ArgMax", [reshape(g, wt, [1, r * r, joints])], axis=1, keepdims=0)  # [1, 17]
    kyx = [g.op("Unsqueeze", [g.op(op, [ki, ri]), axes(g, -1)]) for op in ("Div", "Mod")]
    ind = g.op("Concat", kyx + [g.c(np.arange(joints, dtype=np.int64).reshape(1, joints, 1))],
               axis=-1)  # [1, 17, 3]
    o = g.op("GatherND", [reshape(g, off, [1, r, r, joints, 2]), ind], batch_dims=1)  # [1, 17, 2]
    sc = g.op("GatherND", [hs, ind], batch_dims=1)  # [1, 17]
    pos = g.op("Div", [g.op("Add", [g.op("Cast", [g.op("Concat", kyx, axis=-1)], to=F), o]),
                       g.c(np.float32(r))])
    y = reshape(g, g.op("Concat", [pos, g.op("Unsqueeze", [sc, axes(g, -1)])], axis=-1),
                [1, 1, joints, 3])
    save(g, path, [helper.make_tensor_value_info("input", I32, [1, s, s, 3])],
         [helper.make_tensor_value_info(y, F, [1, 1, joints, 3])])


# ---- pointpillars -------------------------------------------------------------

def pointpillars(path, pillars=6000, pts=32, feats=10, grid=256, c0=64, widths=(32, 64, 128),
                 layers=(3, 5, 5), up=64, anchors=6, classes=3):
    g = G()
    x = g.op("MatMul", ["voxels", g.c(w(feats, c0))])  # [P, pts, c0]
    x = bn(g, g.op("Transpose", [x], perm=[0, 2, 1]), c0, 1e-3)
    x = g.op("Transpose", [x], perm=[0, 2, 1])
    x = g.op("ReduceMax", [g.op("Relu", [x])], axes=[1], keepdims=1)
    x = g.op("Squeeze", [x, axes(g, 1)])  # [P, c0]
    cells = np.sort(RNG.choice(grid * grid, pillars, replace=False)).astype(np.int64)
    canvas = g.op("ConstantOfShape", [g.c(np.int64([grid * grid, c0]))],
                  value=helper.make_tensor("z", F, [1], [0.0]))
    x = g.op("ScatterND", [canvas, g.c(cells.reshape(-1, 1)), x])
    x = reshape(g, g.op("Transpose", [x], perm=[1, 0]), [1, c0, grid, grid])
    ups, cin = [], c0
    for i, (c, n) in enumerate(zip(widths, layers)):
        x = g.op("Pad", [x, g.c(np.int64([0, 0, 1, 1, 0, 0, 1, 1]))], mode="constant")
        x = cba(g, x, cin, c, 3, 2, pad=0)
        for _ in range(n):
            x = cba(g, x, c, c, 3)
        cin, st = c, 2 ** i
        u = g.op("ConvTranspose", [x, g.c(w(c, up, st, st))], kernel_shape=[st, st],
                 strides=[st, st])
        ups.append(g.op("Relu", [bn(g, u, up, 1e-3)]))
    x = g.op("Concat", ups, axis=1)
    outs = []
    r = grid // 2
    for o in (anchors * classes, anchors * 7, anchors * 2):
        y = g.op("Transpose", [conv(g, x, len(widths) * up, o, 1)], perm=[0, 2, 3, 1])
        outs.append(helper.make_tensor_value_info(y, F, [1, r, r, o]))
    save(g, path, [helper.make_tensor_value_info("voxels", F, [pillars, pts, feats])], outs)


# ---- convtasnet ---------------------------------------------------------------

def gln(g, x, c, eps=1e-8):
    """asteroid's GlobLN: mean and variance over channels and time
    (ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div), the gain
    and bias applied between Transposes."""
    d = g.op("Sub", [x, g.op("ReduceMean", [x], axes=[1, 2], keepdims=1)])
    var = g.op("ReduceMean", [g.op("Pow", [d, g.c(np.float32(2))])], axes=[1, 2], keepdims=1)
    y = g.op("Div", [d, g.op("Sqrt", [g.op("Add", [var, g.c(np.float32(eps))])])])
    y = g.op("Transpose", [y], perm=[0, 2, 1])
    y = g.op("Add", [g.op("Mul", [g.c(1 + 0.1 * RNG.standard_normal(c)), y]),
                     g.c(0.1 * RNG.standard_normal(c))])
    return g.op("Transpose", [y], perm=[0, 2, 1])


def prelu(g, x):
    """nn.PReLU(): one slope."""
    return g.op("PRelu", [x, g.c(np.float32([0.25]))])


def convtasnet(path, n=4000, N=512, L=16, B=128, Hc=512, Sc=128, X=8, R=3, P=3, src=2):
    g = G()
    tf = conv(g, "wav", 1, N, (L,), (L // 2,), pad=0, bias=False)  # [1, N, T]
    y = conv(g, gln(g, tf, N), N, B, (1,))
    skip = None
    for _ in range(R):
        for xb in range(X):
            dil = 2 ** xb
            h = gln(g, prelu(g, conv(g, y, B, Hc, (1,))), Hc)
            h = gln(g, prelu(g, conv(g, h, Hc, Hc, (P,), group=Hc, dil=dil)), Hc)
            y = g.op("Add", [y, conv(g, h, Hc, B, (1,), scale=0.5)])
            s = conv(g, h, Hc, Sc, (1,), scale=0.5)
            skip = s if skip is None else g.op("Add", [skip, s])
    t = (n - L) // (L // 2) + 1
    m = g.op("Sigmoid", [reshape(g, conv(g, prelu(g, skip), Sc, src * N, (1,)), [1, src, N, t])])
    m = reshape(g, g.op("Mul", [g.op("Unsqueeze", [tf, axes(g, 1)]), m]), [src, N, t])
    out = g.op("ConvTranspose", [m, g.c(w(N, 1, L, scale=0.3))], kernel_shape=[L],
               strides=[L // 2])
    out = reshape(g, out, [1, src, n])
    save(g, path, [helper.make_tensor_value_info("wav", F, [1, 1, n])],
         [helper.make_tensor_value_info(out, F, [1, src, n])])


# ---- raft_small ---------------------------------------------------------------

def inorm(g, x, c):
    """InstanceNorm2d (affine False)."""
    return g.op("InstanceNormalization", [x, g.c(np.ones(c)), g.c(np.zeros(c))], epsilon=1e-5)


def raft_bottleneck(g, x, cin, c, stride, norm):
    nm = (lambda y, k: inorm(g, y, k)) if norm else (lambda y, k: y)
    q = c // 4
    y = g.op("Relu", [nm(conv(g, x, cin, q, 1), q)])
    y = g.op("Relu", [nm(conv(g, y, q, q, 3, stride), q)])
    y = g.op("Relu", [nm(conv(g, y, q, c, 1, scale=0.5), c)])
    if stride != 1:
        x = nm(conv(g, x, cin, c, 1, stride), c)
    return g.op("Relu", [g.op("Add", [x, y])])


def small_encoder(g, x, out, norm):
    y = conv(g, x, 3, 32, 7, 2)
    y = g.op("Relu", [inorm(g, y, 32) if norm else y])
    cin = 32
    for c, st in ((32, 1), (64, 2), (96, 2)):
        y = raft_bottleneck(g, y, cin, c, st, norm)
        y = raft_bottleneck(g, y, c, c, 1, norm)
        cin = c
    return conv(g, y, cin, out, 1)


def raft_small(path, hgt=192, wid=256, iters=4, radius=3, levels=4, fd=128, hd=96, cd=64):
    g = G()
    ims = [g.op("Sub", [g.op("Mul", [g.op("Div", [n, g.c(np.float32(255))]), g.c(np.float32(2))]),
                        g.c(np.float32(1))]) for n in ("image1", "image2")]
    f1, f2 = split(g, small_encoder(g, g.op("Concat", ims, axis=0), fd, True), [1, 1], 0)
    net, inp = split(g, small_encoder(g, ims[0], hd + cd, False), [hd, cd], 1)
    net, inp = g.op("Tanh", [net]), g.op("Relu", [inp])
    h, wd = hgt // 8, wid // 8
    n = h * wd
    corr = g.op("MatMul", [g.op("Transpose", [reshape(g, f1, [1, fd, n])], perm=[0, 2, 1]),
                           reshape(g, f2, [1, fd, n])])
    corr = g.op("Div", [reshape(g, corr, [1, h, wd, 1, h, wd]), g.c(np.float32(np.sqrt(fd)))])
    pyr = [reshape(g, corr, [n, 1, h, wd])]
    for _ in range(levels - 1):
        pyr.append(g.op("AveragePool", [pyr[-1]], kernel_shape=[2, 2], strides=[2, 2]))
    k = 2 * radius + 1
    dl = np.linspace(-radius, radius, k, dtype=np.float32)
    delta = g.c(np.stack(np.meshgrid(dl, dl, indexing="ij"), -1).reshape(1, k, k, 2))
    gy, gx = np.meshgrid(np.arange(h), np.arange(wd), indexing="ij")
    coords0 = g.c(np.stack([gx, gy])[None].astype(np.float32))
    # the update block's weights, shared by every iteration
    convc1 = ConvW(g, levels * k * k, 96, 1)
    convf1, convf2 = ConvW(g, 2, 64, 7), ConvW(g, 64, 32, 3)
    mconv = ConvW(g, 128, 80, 3)
    cx = hd + cd + 82
    convz, convr, convq = (ConvW(g, cx, hd, 3, scale=0.5) for _ in range(3))
    fh1, fh2 = ConvW(g, hd, 128, 3), ConvW(g, 128, 2, 3, scale=0.1)
    coords1 = coords0
    for _ in range(iters):
        cp = g.op("Transpose", [coords1], perm=[0, 2, 3, 1])  # [1, h, w, 2]
        outs = []
        for i in range(levels):
            hi, wi = h >> i, wd >> i
            cl = g.op("Add", [g.op("Div", [reshape(g, cp, [n, 1, 1, 2]), g.c(np.float32(2 ** i))]),
                              delta])
            xg, yg = split(g, cl, [1, 1], 3)
            xg = g.op("Sub", [g.op("Div", [g.op("Mul", [g.c(np.float32(2)), xg]),
                                           g.c(np.float32(wi - 1))]), g.c(np.float32(1))])
            yg = g.op("Sub", [g.op("Div", [g.op("Mul", [g.c(np.float32(2)), yg]),
                                           g.c(np.float32(hi - 1))]), g.c(np.float32(1))])
            smp = g.op("GridSample", [pyr[i], g.op("Concat", [xg, yg], axis=3)], mode="bilinear",
                       padding_mode="zeros", align_corners=1)  # [n, 1, k, k]
            outs.append(reshape(g, smp, [1, h, wd, k * k]))
        cf = g.op("Transpose", [g.op("Concat", outs, axis=3)], perm=[0, 3, 1, 2])
        flow = g.op("Sub", [coords1, coords0])
        cor = g.op("Relu", [convc1(g, cf)])
        flo = g.op("Relu", [convf2(g, g.op("Relu", [convf1(g, flow)]))])
        mo = g.op("Relu", [mconv(g, g.op("Concat", [cor, flo], axis=1))])
        xin = g.op("Concat", [inp, mo, flow], axis=1)
        hx = g.op("Concat", [net, xin], axis=1)
        z = g.op("Sigmoid", [convz(g, hx)])
        rr = g.op("Sigmoid", [convr(g, hx)])
        q = g.op("Tanh", [convq(g, g.op("Concat", [g.op("Mul", [rr, net]), xin], axis=1))])
        net = g.op("Add", [g.op("Mul", [g.op("Sub", [g.c(np.float32(1)), z]), net]),
                           g.op("Mul", [z, q])])
        coords1 = g.op("Add", [coords1, fh2(g, g.op("Relu", [fh1(g, net)]))])
    flow = g.op("Sub", [coords1, coords0])
    up = g.op("Resize", [flow, "", "", g.c(np.int64([1, 2, hgt, wid]))], mode="linear",
              coordinate_transformation_mode="align_corners")
    up = g.op("Mul", [g.c(np.float32(8)), up])
    save(g, path, [helper.make_tensor_value_info(n_, F, [1, 3, hgt, wid])
                   for n_ in ("image1", "image2")],
         [helper.make_tensor_value_info(flow, F, [1, 2, h, wd]),
          helper.make_tensor_value_info(up, F, [1, 2, hgt, wid])])


MODELS = (rtdetr, bisenet_f16, rtmpose_f16, movenet, pointpillars, convtasnet, raft_small)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    only = sys.argv[2:]
    for f in MODELS:
        if not only or f.__name__ in only:
            f(os.path.join(out, f.__name__ + ".onnx"))


if __name__ == "__main__":
    main()
