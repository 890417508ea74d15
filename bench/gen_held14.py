#!/usr/bin/python3
"""gen_held14.py DIR [MODEL...]: a fourteenth held-out set for
bench/broad.sh (BROAD_SET=held14), written 2026-12-07 before any tuning
on it; its first measurement is broad.sh's run on the binary of the
ninth session's starting tree (broad.sh quantizes two of them with
`opmig quantize` first); seeded, opset 17, checked with onnx.checker.
Every BatchNormalization that follows a Conv is folded into it (a Conv
with a bias), as torch.onnx writes eval mode; each Linear is a MatMul
and a bias Add.  Families none of the thirteen sets before has:
  nafnet_f16.onnx       a NAFNet image-restoration net in float16 (Cast
                        in and out) at 256x256, width 16: a 3x3 Conv in,
                        an encoder of (1, 1, 1, 2) NAFBlocks per level
                        with a 2x2 stride-2 Conv down doubling the
                        width, two middle blocks, a decoder of a bias-free
                        1x1 Conv to twice the width, DepthToSpace (CRD,
                        PixelShuffle) by 2, the skip Added and one
                        NAFBlock per level; a 3x3 Conv to 3 Added to the
                        input.  A NAFBlock: LayerNorm2d over the channels
                        as torch.onnx writes it (ReduceMean, Sub, Pow 2,
                        ReduceMean, Add, Sqrt, Div, Mul, Add), a 1x1 Conv
                        to 2c, a 3x3 depthwise Conv, SimpleGate (Split of
                        the channels, Mul), simplified channel attention
                        (GlobalAveragePool, 1x1 Conv, Mul), a 1x1 Conv,
                        Mul by beta, Add; LayerNorm2d, a 1x1 Conv to 2c,
                        SimpleGate, a 1x1 Conv, Mul by gamma, Add;
  efficientvit_f16.onnx an EfficientViT-B1-style classifier in float16
                        (Cast in and out) at 224x224, widths (16, 32, 64,
                        128, 256), depths (1, 2, 3, 3, 4): a stride-2 3x3
                        Conv stem with HardSwish and a residual DSConv;
                        MBConvs (1x1 expand by 4, 3x3 depthwise, each with
                        HardSwish, 1x1 project; Add where the shape
                        stays); in the last two stages after a stride-2
                        MBConv, EfficientViT blocks: ReLU linear
                        attention (LiteMLA: a 1x1 qkv Conv, a multi-scale
                        branch of a 5x5 depthwise and a grouped 1x1 Conv,
                        Concat; in float32 between Casts as its forward
                        casts it: Reshape and Transpose to heads of 16,
                        Split into q, k, v, Relu of q and k, v Padded
                        with a column of ones, k^T @ v, q @ that, Split
                        off the last column, Add 1e-15, Div; a 1x1
                        projection) Added, then an MBConv; a 1x1 Conv to
                        1536 with HardSwish, GlobalAveragePool, a Linear
                        to 1600, LayerNormalization, HardSwish, a Linear
                        to 1000;
  dpt.onnx              a Depth-Anything/DPT-style monocular depth net
                        in float32 at 224x224: a ViT of d 192 (patch-16
                        Conv, a class token Concatenated, a position
                        embedding Added), twelve pre-LN DINOv2 blocks (3
                        heads: one qkv Linear, Reshape to [1, 197, 3, 3,
                        64], Transpose, Gather of q, k and v, Softmax
                        attention; GELU as Erf; LayerScale Muls); the
                        outputs of blocks 3, 6, 9 and 12 normalized by
                        the final LayerNormalization, the class token
                        Sliced off, Transposed and Reshaped to 14x14;
                        reassembled (1x1 Convs to 48, 96, 192 and 384, a
                        4x4 stride-4 and a 2x2 stride-2 ConvTranspose,
                        identity, a 3x3 stride-2 Conv; bias-free 3x3
                        Convs to 64); four feature-fusion blocks
                        (residual conv units of Relu, 3x3 Conv, Relu,
                        3x3 Conv, Add; a bilinear Resize to sizes,
                        align_corners; a 1x1 Conv) to 112x112; the depth
                        head (a 3x3 Conv to 32, a bilinear Resize to
                        224x224, a 3x3 Conv to 32, Relu, a 1x1 Conv to
                        1, Relu);
  bigvgan.onnx          a BigVGAN-style vocoder in float32: 32 frames of
                        an 80-band mel to 8192 samples: a 7-tap Conv1d
                        to 128; four upsamplings by (8, 8, 2, 2)
                        (ConvTranspose1d of kernel 2u, pads u / 2,
                        halving the channels to 8), each followed by
                        three AMP blocks of kernels 3, 7 and 11 (per
                        dilation 1, 3, 5: an anti-aliased SnakeBeta, a
                        dilated Conv1d, an anti-aliased SnakeBeta, a
                        Conv1d, Add) summed and Div by 3; an anti-aliased
                        SnakeBeta, a 7-tap Conv1d to 1, Tanh.  The
                        anti-aliased activation as alias-free-torch
                        writes it: an edge Pad of 5, a depthwise
                        stride-2 ConvTranspose1d of a 12-tap kaiser
                        sinc, Mul 2, a Slice of 15 each side; SnakeBeta
                        x + 1 / beta * sin(alpha * x)^2 (Mul, Sin, Pow,
                        Mul, Add); an edge Pad of 5 and 6, a depthwise
                        stride-2 Conv1d of the filter;
  mixer.onnx            an MLP-Mixer classifier in float32 at 224x224:
                        a patch-16 Conv to d 384 (196 tokens), eight
                        mixer layers (LayerNormalization, Transpose, a
                        token-mixing MLP 196 -> 192 -> 196 with GELU as
                        Erf, Transpose, Add; LayerNormalization, a
                        channel MLP 384 -> 1536 -> 384, Add), a final
                        LayerNormalization, ReduceMean over the tokens,
                        a Linear to 1000;
  superpoint.onnx       a SuperPoint keypoint net in float32 on a
                        240x320 grey image: a VGG encoder (pairs of 3x3
                        Convs with Relu of 64, 64, 128, 128 channels, a
                        2x2 MaxPool after the first three); the detector
                        head (a 3x3 Conv to 256 and Relu, a 1x1 Conv to
                        65, Softmax over the channels, Slice of the first
                        64, DepthToSpace DCR by 8) and SuperGlue's
                        simple_nms of radius 4 (9x9 stride-1 MaxPools,
                        Equal, Cast, Greater, Where, Not, And, Or) to
                        [1, 1, 240, 320] scores; the descriptor head (a
                        3x3 Conv to 256 and Relu, a 1x1 Conv to 256, L2
                        normalized over the channels: ReduceL2, Clip,
                        Div) to [1, 256, 30, 40];
  svtr.onnx             a PP-OCRv3-style SVTR text recognizer in float32
                        on a batch of 6 lines of 48x320: a
                        MobileNetV1Enhance-style LCNet backbone at scale
                        0.5 (a stride-2 3x3 Conv with HardSwish,
                        thirteen depthwise-separable blocks (a 3x3 or
                        5x5 depthwise Conv, strides (2, 1) thrice and (1,
                        2) once, HardSwish; SE of GlobalAveragePool, 1x1
                        Convs, Relu, HardSigmoid of slope 0.2 and Mul in
                        the last two; a 1x1 Conv with HardSwish), a 2x2
                        AveragePool to [6, 512, 1, 40]); the
                        EncoderWithSVTR neck (a 1x3 Conv to 64 and a 1x1
                        to 120 with Swish, two global-mixing blocks of 8
                        heads (LayerNormalization, one qkv Linear,
                        Reshape, Transpose, Gather, Softmax attention;
                        an MLP of 240 with Swish), LayerNormalization, a
                        1x1 Conv to 512, Concat with the backbone's
                        output, a 1x3 Conv to 64, a 1x1 Conv to 64; Swish
                        as Sigmoid, Mul); the CTC head (Squeeze,
                        Transpose, a Linear to 6625, Softmax): [6, 40,
                        6625];
  rwkv.onnx             an RWKV-4-style language model in float32 on 128
                        int64 tokens: an embedding Gather (vocabulary
                        2048, d 256), LayerNormalization, four layers of
                        time mixing (LayerNormalization; the token shift
                        as a Pad of a negative end, nn.ZeroPad2d((0, 0,
                        1, -1)); the r, k and v mixes (Mul, Mul, Add), bias-free
                        MatMuls, Sigmoid of r; the WKV recurrence as a
                        Scan over the 128 tokens whose body updates the
                        state (aa, bb, pp) of 256 each with Add, Max,
                        Sub, Exp, Mul and Div, time_first and the decay
                        read from the outer graph; Mul by r, an output
                        MatMul, Add) and channel mixing (the shift and
                        mixes, a MatMul to 1024, Relu, squared by Mul, a
                        MatMul back, Mul by the Sigmoid of a third,
                        Add); a final LayerNormalization and a MatMul to
                        the vocabulary: [1, 128, 2048] logits.
With MODEL names, only those are written (sizing; the weights then
differ: the set is what a run without names writes)."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

from gen_broad import save
from gen_held import G
from gen_held7 import merge_heads, reshape, split

RNG = np.random.default_rng(14061931)
F = TensorProto.FLOAT
H = TensorProto.FLOAT16
I64 = TensorProto.INT64


def w(*shape, scale=1.0):
    """He-scaled normal weights, the fan all dims but the first."""
    fan = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    return (RNG.standard_normal(shape) * np.sqrt(2.0 / fan) * scale).astype(np.float32)


def axes(g, *a):
    return g.c(np.int64(a))


def f32(g, v):
    """A float32 constant whatever the graph's dtype (a float32 region
    inside a float16 graph; Resize's scales)."""
    return g.c(np.float32(v), np.float32)


def conv(g, x, cin, cout, k=3, stride=1, group=1, pad=None, bias=True, scale=1.0, dil=1):
    """A Conv of constant weight and bias; k and stride ints (2-D) or
    tuples (any rank); pads keep the size at stride 1 unless pad (each
    side) is given."""
    ks = list(k) if isinstance(k, tuple) else [k, k]
    ins = [x, g.c(w(cout, cin // group, *ks, scale=scale))]
    if bias:
        ins.append(g.c(w(cout, scale=0.1)))
    return g.op("Conv", ins, kernel_shape=ks,
                strides=list(stride) if isinstance(stride, tuple) else [stride] * len(ks),
                group=group, dilations=[dil] * len(ks),
                pads=[(q - 1) * dil // 2 if pad is None else pad for q in ks] * 2)


def silu(g, x):
    """SiLU (Swish) as torch.onnx writes it: Sigmoid, Mul."""
    return g.op("Mul", [x, g.op("Sigmoid", [x])])


def act(g, y, a):
    if a == "silu":
        return silu(g, y)
    return g.op(a, [y]) if a else y


def cba(g, x, cin, cout, k=3, stride=1, a="Relu", **kw):
    """Conv (its BatchNormalization folded into weight and bias, as an
    exporter writes eval mode) and the activation a."""
    return act(g, conv(g, x, cin, cout, k, stride, **kw), a)


def ln(g, x, n, eps=1e-5):
    return g.op("LayerNormalization", [x, g.c(1 + 0.1 * RNG.standard_normal(n)),
                                       g.c(0.1 * RNG.standard_normal(n))], axis=-1, epsilon=eps)


def lin(g, x, i, o, bias=True, scale=1.0):
    """nn.Linear on a [.., i] tensor: MatMul by the transposed weight,
    the bias Added."""
    y = g.op("MatMul", [x, g.c(w(i, o, scale=scale))])
    return g.op("Add", [y, g.c(w(o, scale=0.1))]) if bias else y


def gelu_erf(g, x):
    """GELU as torch.onnx writes it: Div by sqrt 2, Erf, Add 1, Mul, Mul
    0.5."""
    e = g.op("Erf", [g.op("Div", [x, g.c(np.float32(np.sqrt(2)))])])
    return g.op("Mul", [g.op("Mul", [x, g.op("Add", [e, g.c(np.float32(1))])]),
                        g.c(np.float32(0.5))])


def chan(v):
    """A per-channel constant [1, c, 1, 1]."""
    return np.asarray(v, np.float32).reshape(1, -1, 1, 1)


def attention(g, x, t, d, heads, b=1):
    """timm's Attention: one qkv Linear, Reshape to [b, t, 3, heads, hd],
    Transpose to [3, b, heads, t, hd], q, k and v by Gather, q @ k^T Mul
    by hd^-0.5, Softmax, @ v, the output Linear."""
    hd = d // heads
    qkv = g.op("Transpose", [reshape(g, lin(g, x, d, 3 * d), [b, t, 3, heads, hd])],
               perm=[2, 0, 3, 1, 4])
    q, k, v = (g.op("Gather", [qkv, g.c(np.int64(i))], axis=0) for i in range(3))
    s = g.op("Mul", [g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])]),
                     g.c(np.float32(hd ** -0.5))])
    o = g.op("MatMul", [g.op("Softmax", [s], axis=-1), v])
    return lin(g, merge_heads(g, o, t, d, b), d, d, scale=0.5)


# ---- nafnet_f16 ---------------------------------------------------------------

def ln2d(g, x, c, eps=1e-6):
    """NAFNet's LayerNorm2d as torch.onnx writes it: over the channels
    (ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div, Mul, Add)."""
    d = g.op("Sub", [x, g.op("ReduceMean", [x], axes=[1], keepdims=1)])
    var = g.op("ReduceMean", [g.op("Pow", [d, g.c(np.float32(2))])], axes=[1], keepdims=1)
    y = g.op("Div", [d, g.op("Sqrt", [g.op("Add", [var, g.c(np.float32(eps))])])])
    return g.op("Add", [g.op("Mul", [y, g.c(chan(1 + 0.1 * RNG.standard_normal(c)))]),
                        g.c(chan(0.1 * RNG.standard_normal(c)))])


def simple_gate(g, x, c):
    a, b = split(g, x, [c, c], 1)
    return g.op("Mul", [a, b])


def naf_block(g, x, c):
    """NAFBlock: LayerNorm2d, 1x1 Conv to 2c, 3x3 depthwise, SimpleGate,
    simplified channel attention (GlobalAveragePool, 1x1 Conv, Mul), 1x1
    Conv, Mul by beta, Add; LayerNorm2d, 1x1 Conv to 2c, SimpleGate, 1x1
    Conv, Mul by gamma, Add."""
    y = conv(g, ln2d(g, x, c), c, 2 * c, 1)
    y = simple_gate(g, conv(g, y, 2 * c, 2 * c, 3, group=2 * c), c)
    y = g.op("Mul", [y, conv(g, g.op("GlobalAveragePool", [y]), c, c, 1)])
    y = conv(g, y, c, c, 1, scale=0.5)
    x = g.op("Add", [x, g.op("Mul", [y, g.c(chan(0.3 * RNG.standard_normal(c)))])])
    y = simple_gate(g, conv(g, ln2d(g, x, c), c, 2 * c, 1), c)
    y = conv(g, y, c, c, 1, scale=0.5)
    return g.op("Add", [x, g.op("Mul", [y, g.c(chan(0.3 * RNG.standard_normal(c)))])])


def nafnet_f16(path, s=256, width=16, enc=(1, 1, 1, 2), mid=2, dec=(1, 1, 1, 1)):
    g = G(np.float16)
    inp = g.op("Cast", ["x"], to=H)
    x = conv(g, inp, 3, width, 3)
    skips, c = [], width
    for n in enc:
        for _ in range(n):
            x = naf_block(g, x, c)
        skips.append(x)
        x = conv(g, x, c, 2 * c, 2, 2, pad=0)
        c *= 2
    for _ in range(mid):
        x = naf_block(g, x, c)
    for n, sk in zip(dec, reversed(skips)):
        x = g.op("DepthToSpace", [conv(g, x, c, 2 * c, 1, bias=False)], blocksize=2, mode="CRD")
        c //= 2
        x = g.op("Add", [x, sk])
        for _ in range(n):
            x = naf_block(g, x, c)
    y = g.op("Cast", [g.op("Add", [conv(g, x, width, 3, 3), inp])], to=F)
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, s, s])],
         [helper.make_tensor_value_info(y, F, [1, 3, s, s])])


# ---- efficientvit_f16 ----------------------------------------------------------

def mbconv(g, x, cin, cout, stride, e=4, res=True):
    """MBConv: 1x1 Conv to e * cin, 3x3 depthwise (stride), each with
    HardSwish, a 1x1 Conv to cout; Add where the shape stays."""
    m = cin * e
    y = cba(g, x, cin, m, 1, a="HardSwish")
    y = cba(g, y, m, m, 3, stride, a="HardSwish", group=m)
    y = cba(g, y, m, cout, 1, a=None, scale=0.5)
    return g.op("Add", [x, y]) if res and stride == 1 and cin == cout else y


def lite_mla(g, x, c, r, dim=16, k=5):
    """EfficientViT's LiteMLA: a 1x1 qkv Conv, a multi-scale branch (5x5
    depthwise and grouped 1x1 Convs) Concatenated, in float32 as its
    forward casts it (Cast), heads by Reshape and Transpose, Relu of q
    and k, v Padded by a column of ones, k^T @ v, q @ that, the last
    column the denominator (Slice by Split, Add eps, Div), back to
    float16 and the 1x1 projection."""
    heads = c // dim
    qkv = conv(g, x, c, 3 * c, 1, bias=False)
    agg = conv(g, conv(g, qkv, 3 * c, 3 * c, k, group=3 * c, bias=False), 3 * c, 3 * c, 1,
               group=3 * heads, bias=False)
    nh = 2 * heads
    qkv = reshape(g, g.op("Cast", [g.op("Concat", [qkv, agg], axis=1)], to=F),
                  [1, nh, 3 * dim, r * r])
    q, k_, v = split(g, g.op("Transpose", [qkv], perm=[0, 1, 3, 2]), [dim] * 3, 3)
    q, k_ = g.op("Relu", [q]), g.op("Relu", [k_])
    v = g.op("Pad", [v, g.c(np.int64([0, 0, 0, 0, 0, 0, 0, 1])), f32(g, 1)], mode="constant")
    vk = g.op("MatMul", [g.op("Transpose", [k_], perm=[0, 1, 3, 2]), v])  # [1, nh, dim, dim + 1]
    num, den = split(g, g.op("MatMul", [q, vk]), [dim, 1], 3)
    o = g.op("Div", [num, g.op("Add", [den, f32(g, 1e-15)])])
    o = reshape(g, g.op("Transpose", [o], perm=[0, 1, 3, 2]), [1, nh * dim, r, r])
    return conv(g, g.op("Cast", [o], to=H), nh * dim, c, 1, scale=0.5)


def efficientvit_f16(path, s=224, widths=(16, 32, 64, 128, 256), depths=(1, 2, 3, 3, 4),
                     head=(1536, 1600), classes=1000):
    g = G(np.float16)
    x = cba(g, g.op("Cast", ["x"], to=H), 3, widths[0], 3, 2, a="HardSwish")
    for _ in range(depths[0]):  # DSConv
        y = cba(g, x, widths[0], widths[0], 3, group=widths[0], a="HardSwish")
        x = g.op("Add", [x, cba(g, y, widths[0], widths[0], 1, a=None, scale=0.5)])
    cin, r = widths[0], s // 2
    for i in (1, 2):
        for j in range(depths[i]):
            x = mbconv(g, x, cin, widths[i], 2 if j == 0 else 1)
            cin = widths[i]
        r //= 2
    for i in (3, 4):
        x = mbconv(g, x, cin, widths[i], 2, res=False)
        cin, r = widths[i], r // 2
        for _ in range(depths[i]):
            x = g.op("Add", [x, lite_mla(g, x, cin, r)])
            x = mbconv(g, x, cin, cin, 1)
    y = cba(g, x, cin, head[0], 1, a="HardSwish")
    y = reshape(g, g.op("GlobalAveragePool", [y]), [1, head[0]])
    y = g.op("HardSwish", [ln(g, lin(g, y, head[0], head[1]), head[1])])
    y = g.op("Cast", [lin(g, y, head[1], classes)], to=F)
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, s, s])],
         [helper.make_tensor_value_info(y, F, [1, classes])])


# ---- dpt ----------------------------------------------------------------------

def vit_layer(g, x, t, d, heads, ff):
    """A DINOv2 block: pre-LN attention and GELU feed-forward, each
    scaled by LayerScale (Mul) before its residual Add."""
    y = attention(g, ln(g, x, d, 1e-6), t, d, heads)
    x = g.op("Add", [x, g.op("Mul", [y, g.c(0.5 + 0.1 * RNG.standard_normal(d))])])
    y = lin(g, gelu_erf(g, lin(g, ln(g, x, d, 1e-6), d, ff)), ff, d, scale=0.5)
    return g.op("Add", [x, g.op("Mul", [y, g.c(0.5 + 0.1 * RNG.standard_normal(d))])])


def rcu(g, x, f):
    """ResidualConvUnit: Relu, 3x3 Conv, Relu, 3x3 Conv, Add."""
    y = conv(g, g.op("Relu", [x]), f, f, 3)
    return g.op("Add", [conv(g, g.op("Relu", [y]), f, f, 3, scale=0.5), x])


def fusion(g, x, skip, f, size):
    """FeatureFusionBlock: the skip's RCU Added, an RCU, a bilinear
    Resize to size (align_corners), a 1x1 Conv."""
    if skip is not None:
        x = g.op("Add", [x, rcu(g, skip, f)])
    x = g.op("Resize", [rcu(g, x, f), "", "", g.c(np.int64([1, f, size, size]))], mode="linear",
             coordinate_transformation_mode="align_corners")
    return conv(g, x, f, f, 1)


def dpt(path, s=224, p=16, d=192, heads=3, layers=12, ff=768, taps=(2, 5, 8, 11),
        outs=(48, 96, 192, 384), f=64):
    g = G()
    n = (s // p) ** 2
    x = reshape(g, conv(g, "x", 3, d, p, p, pad=0), [1, d, n])
    x = g.op("Concat", [g.c(0.02 * RNG.standard_normal((1, 1, d))),
                        g.op("Transpose", [x], perm=[0, 2, 1])], axis=1)
    x = g.op("Add", [x, g.c(0.02 * RNG.standard_normal((1, n + 1, d)))])
    norm_w, norm_b = g.c(1 + 0.1 * RNG.standard_normal(d)), g.c(0.1 * RNG.standard_normal(d))
    r = s // p
    feats = []
    for i in range(layers):
        x = vit_layer(g, x, n + 1, d, heads, ff)
        if i in taps:
            y = g.op("LayerNormalization", [x, norm_w, norm_b], axis=-1, epsilon=1e-6)
            y = g.op("Slice", [y, axes(g, 1), axes(g, n + 1), axes(g, 1)])
            feats.append(reshape(g, g.op("Transpose", [y], perm=[0, 2, 1]), [1, d, r, r]))
    # reassemble: 1x1 projections, then 4x and 2x ConvTranspose, identity,
    # a stride-2 3x3 Conv; each level's 3x3 Conv (no bias) to f
    lv = []
    for i, (y, o) in enumerate(zip(feats, outs)):
        y = conv(g, y, d, o, 1)
        if i < 2:
            st = 4 >> i
            y = g.op("ConvTranspose", [y, g.c(w(o, o, st, st)), g.c(w(o, scale=0.1))],
                     kernel_shape=[st, st], strides=[st, st])
        elif i == 3:
            y = conv(g, y, o, o, 3, 2)
        lv.append(conv(g, y, o, f, 3, bias=False))
    y = fusion(g, lv[3], None, f, r)
    y = fusion(g, y, lv[2], f, 2 * r)
    y = fusion(g, y, lv[1], f, 4 * r)
    y = fusion(g, y, lv[0], f, 8 * r)
    # depth head
    y = conv(g, y, f, f // 2, 3)
    y = g.op("Resize", [y, "", "", g.c(np.int64([1, f // 2, s, s]))], mode="linear",
             coordinate_transformation_mode="align_corners")
    y = g.op("Relu", [conv(g, g.op("Relu", [conv(g, y, f // 2, 32, 3)]), 32, 1, 1)])
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, s, s])],
         [helper.make_tensor_value_info(y, F, [1, 1, s, s])])


# ---- bigvgan ------------------------------------------------------------------

def kaiser_sinc(cutoff, half_width, k=12):
    """alias-free-torch's kaiser_sinc_filter1d (an even size)."""
    a = 2.285 * (k // 2 - 1) * np.pi * 4 * half_width + 7.95
    beta = 0.1102 * (a - 8.7) if a > 50 else (0.5842 * (a - 21) ** 0.4 + 0.07886 * (a - 21)
                                              if a >= 21 else 0.0)
    t = np.arange(-(k // 2), k // 2) + 0.5
    f = 2 * cutoff * np.kaiser(k, beta) * np.sinc(2 * cutoff * t)
    return (f / f.sum()).astype(np.float32)


def snake_beta(g, x, c):
    """SnakeBeta as torch.onnx writes it, exp(log alpha) and 1 / (beta +
    eps) folded: x + 1 / b * sin(x * a)^2 (Mul, Sin, Pow, Mul, Add)."""
    a = g.c(np.exp(0.3 * RNG.standard_normal((1, c, 1))))
    ib = g.c(1 / (np.exp(0.3 * RNG.standard_normal((1, c, 1))) + 1e-9))
    s = g.op("Pow", [g.op("Sin", [g.op("Mul", [x, a])]), g.c(np.float32(2))])
    return g.op("Add", [x, g.op("Mul", [s, ib])])


def aa_act(g, x, c, filt, k=12):
    """BigVGAN's Activation1d: 2x up (replicate Pad of 5, a depthwise
    ConvTranspose of the kaiser filter, Mul 2, Slice 15 each side),
    SnakeBeta, 2x down (replicate Pad 5 and 6, a depthwise stride-2
    Conv of the filter)."""
    p = k // 2 - 1
    x = g.op("Pad", [x, g.c(np.int64([0, 0, p, 0, 0, p]))], mode="edge")
    x = g.op("ConvTranspose", [x, g.c(np.tile(filt, (c, 1, 1)))], kernel_shape=[k], strides=[2],
             group=c)
    x = g.op("Mul", [x, g.c(np.float32(2))])
    cut = p * 2 + (k - 2) // 2
    x = g.op("Slice", [x, axes(g, cut), axes(g, -cut), axes(g, 2)])
    x = snake_beta(g, x, c)
    x = g.op("Pad", [x, g.c(np.int64([0, 0, k // 2 - 1, 0, 0, k // 2]))], mode="edge")
    return g.op("Conv", [x, g.c(np.tile(filt, (c, 1, 1)))], kernel_shape=[k], strides=[2],
                group=c, pads=[0, 0])


def amp_block(g, x, c, k, filt, dils=(1, 3, 5)):
    """AMPBlock1: per dilation an anti-aliased SnakeBeta, a dilated Conv, an
    anti-aliased SnakeBeta, a Conv, the residual Add."""
    for d in dils:
        y = conv(g, aa_act(g, x, c, filt), c, c, (k,), dil=d)
        y = conv(g, aa_act(g, y, c, filt), c, c, (k,), scale=0.5)
        x = g.op("Add", [x, y])
    return x


def bigvgan(path, frames=32, mels=80, ch=128, rates=(8, 8, 2, 2), kernels=(3, 7, 11)):
    g = G()
    filt = kaiser_sinc(0.25, 0.3).reshape(1, 1, -1)
    x = conv(g, "mel", mels, ch, (7,))
    c = ch
    for u in rates:
        x = g.op("ConvTranspose", [x, g.c(w(c, c // 2, 2 * u)), g.c(w(c // 2, scale=0.1))],
                 kernel_shape=[2 * u], strides=[u], pads=[u // 2, u // 2])
        c //= 2
        ys = [amp_block(g, x, c, k, filt) for k in kernels]
        x = g.op("Add", [ys[0], ys[1]])
        x = g.op("Div", [g.op("Add", [x, ys[2]]), g.c(np.float32(len(kernels)))])
    y = g.op("Tanh", [conv(g, aa_act(g, x, c, filt), c, 1, (7,), scale=0.3)])
    n = frames * int(np.prod(rates))
    save(g, path, [helper.make_tensor_value_info("mel", F, [1, mels, frames])],
         [helper.make_tensor_value_info(y, F, [1, 1, n])])


# ---- mixer --------------------------------------------------------------------

def mixer(path, s=224, p=16, d=384, tok=192, ch=1536, layers=8, classes=1000):
    g = G()
    n = (s // p) ** 2
    x = g.op("Transpose", [reshape(g, conv(g, "x", 3, d, p, p, pad=0), [1, d, n])], perm=[0, 2, 1])
    for _ in range(layers):
        y = g.op("Transpose", [ln(g, x, d, 1e-6)], perm=[0, 2, 1])  # [1, d, n]
        y = lin(g, gelu_erf(g, lin(g, y, n, tok)), tok, n, scale=0.5)
        x = g.op("Add", [x, g.op("Transpose", [y], perm=[0, 2, 1])])
        y = lin(g, gelu_erf(g, lin(g, ln(g, x, d, 1e-6), d, ch)), ch, d, scale=0.5)
        x = g.op("Add", [x, y])
    y = g.op("ReduceMean", [ln(g, x, d, 1e-6)], axes=[1], keepdims=0)
    y = lin(g, y, d, classes)
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, s, s])],
         [helper.make_tensor_value_info(y, F, [1, classes])])


# ---- superpoint ---------------------------------------------------------------

def simple_nms(g, scores, r):
    """SuperGlue's simple_nms: MaxPool of 2r + 1 at stride 1, Equal,
    twice suppressing around the maxima (Cast, MaxPool, Greater, Where,
    Equal, Not, And, Or), Where."""
    def mp(x):
        return g.op("MaxPool", [x], kernel_shape=[2 * r + 1] * 2, strides=[1, 1], pads=[r] * 4)
    zero = g.c(np.float32(0))
    mask = g.op("Equal", [scores, mp(scores)])
    for _ in range(2):
        supp = g.op("Greater", [mp(g.op("Cast", [mask], to=F)), zero])
        ss = g.op("Where", [supp, zero, scores])
        new = g.op("Equal", [ss, mp(ss)])
        mask = g.op("Or", [mask, g.op("And", [new, g.op("Not", [supp])])])
    return g.op("Where", [mask, scores, zero])


def superpoint(path, hgt=240, wid=320, widths=(64, 64, 128, 128), d=256, r=4):
    g = G()
    x, cin = "image", 1
    for i, c in enumerate(widths):
        x = cba(g, cba(g, x, cin, c), c, c)
        cin = c
        if i < 3:
            x = g.op("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    semi = conv(g, cba(g, x, cin, 256), 256, 65, 1)
    sc = g.op("Slice", [g.op("Softmax", [semi], axis=1), axes(g, 0), axes(g, 64), axes(g, 1)])
    sc = simple_nms(g, g.op("DepthToSpace", [sc], blocksize=8, mode="DCR"), r)
    desc = conv(g, cba(g, x, cin, 256), 256, d, 1)
    nrm = g.op("Clip", [g.op("ReduceL2", [desc], axes=[1], keepdims=1), g.c(np.float32(1e-12))])
    desc = g.op("Div", [desc, nrm])
    save(g, path, [helper.make_tensor_value_info("image", F, [1, 1, hgt, wid])],
         [helper.make_tensor_value_info(sc, F, [1, 1, hgt, wid]),
          helper.make_tensor_value_info(desc, F, [1, d, hgt // 8, wid // 8])])


# ---- svtr ---------------------------------------------------------------------

def dw_sep(g, x, cin, cout, k, stride, se):
    """PaddleOCR's DepthwiseSeparable: a kxk depthwise ConvBN with
    HardSwish, SE (GlobalAveragePool, 1x1 Conv, Relu, 1x1 Conv,
    HardSigmoid of slope 0.2, Mul) where se, a 1x1 ConvBN with
    HardSwish."""
    y = cba(g, x, cin, cin, k, stride, group=cin, a="HardSwish")
    if se:
        s = cba(g, g.op("GlobalAveragePool", [y]), cin, cin // 4, 1)
        s = g.op("HardSigmoid", [conv(g, s, cin // 4, cin, 1)], alpha=0.2, beta=0.5)
        y = g.op("Mul", [y, s])
    return cba(g, y, cin, cout, 1, a="HardSwish")


def svtr(path, b=6, hgt=48, wid=320, dims=64, hidden=120, heads=8, depth=2, classes=6625):
    g = G()
    x = cba(g, "x", 3, 16, 3, 2, a="HardSwish")
    cfg = [(16, 32, 3, 1, 0), (32, 64, 3, 1, 0), (64, 64, 3, 1, 0), (64, 128, 3, (2, 1), 0),
           (128, 128, 3, 1, 0), (128, 256, 3, (2, 1), 0)] + [(256, 256, 5, 1, 0)] * 5 + \
          [(256, 512, 5, (2, 1), 1), (512, 512, 5, (1, 2), 1)]
    for cin, cout, k, st, se in cfg:
        x = dw_sep(g, x, cin, cout, k, st, se)
    z = g.op("AveragePool", [x], kernel_shape=[2, 2], strides=[2, 2])  # [b, 512, 1, t]
    t = wid // 8
    c = 512
    # EncoderWithSVTR: two Convs down to hidden, global-mixing blocks
    h = cba(g, z, c, c // 8, (1, 3), a="silu")
    h = cba(g, h, c // 8, hidden, 1, a="silu")
    h = g.op("Transpose", [reshape(g, h, [b, hidden, t])], perm=[0, 2, 1])
    for _ in range(depth):
        h = g.op("Add", [h, attention(g, ln(g, h, hidden), t, hidden, heads, b)])
        y = lin(g, silu(g, lin(g, ln(g, h, hidden), hidden, 2 * hidden)), 2 * hidden, hidden,
                scale=0.5)
        h = g.op("Add", [h, y])
    h = reshape(g, g.op("Transpose", [ln(g, h, hidden)], perm=[0, 2, 1]), [b, hidden, 1, t])
    h = cba(g, h, hidden, c, 1, a="silu")
    h = cba(g, g.op("Concat", [z, h], axis=1), 2 * c, c // 8, (1, 3), a="silu")
    h = cba(g, h, c // 8, dims, 1, a="silu")
    h = g.op("Transpose", [g.op("Squeeze", [h, axes(g, 2)])], perm=[0, 2, 1])  # [b, t, dims]
    y = g.op("Softmax", [lin(g, h, dims, classes)], axis=2)
    save(g, path, [helper.make_tensor_value_info("x", F, [b, 3, hgt, wid])],
         [helper.make_tensor_value_info(y, F, [b, t, classes])])


# ---- rwkv ---------------------------------------------------------------------

def wkv_scan(g, k, v, t, d):
    """RWKV-4's WKV recurrence as a Scan over the t tokens of k and v
    ([t, d] each), the state (aa, bb, pp) of d each; time_first u and
    the decay w = -exp(time_decay) from the outer graph."""
    u = g.c(0.3 * RNG.standard_normal(d))
    wd = g.c(-np.exp(0.5 * RNG.standard_normal(d) - 1))
    nodes = []

    def op(o, ins):
        y = g.name("s")
        nodes.append(helper.make_node(o, ins, [y]))
        return y

    aa, bb, pp, kt, vt = (g.name(s) for s in ("aa", "bb", "pp", "kt", "vt"))
    ww = op("Add", [u, kt])
    p = op("Max", [pp, ww])
    e1, e2 = op("Exp", [op("Sub", [pp, p])]), op("Exp", [op("Sub", [ww, p])])
    wkv = op("Div", [op("Add", [op("Mul", [e1, aa]), op("Mul", [e2, vt])]),
                     op("Add", [op("Mul", [e1, bb]), e2])])
    ww = op("Add", [pp, wd])
    p = op("Max", [ww, kt])
    e1, e2 = op("Exp", [op("Sub", [ww, p])]), op("Exp", [op("Sub", [kt, p])])
    aa2 = op("Add", [op("Mul", [e1, aa]), op("Mul", [e2, vt])])
    bb2 = op("Add", [op("Mul", [e1, bb]), e2])
    vi = [helper.make_tensor_value_info(n, F, [d]) for n in (aa, bb, pp, kt, vt)]
    vo = [helper.make_tensor_value_info(n, F, [d]) for n in (aa2, bb2, p, wkv)]
    body = helper.make_graph(nodes, g.name("wkv"), vi, vo)
    zero = g.c(np.zeros(d))
    outs = [g.name("v") for _ in range(4)]
    g.nodes.append(helper.make_node("Scan", [zero, zero, g.c(np.full(d, -1e30)), k, v], outs,
                                    num_scan_inputs=2, body=body))
    return outs[3]


def rwkv(path, t=128, d=256, layers=4, ffn=1024, vocab=2048):
    g = G()

    def shift(x):
        """time_shift, nn.ZeroPad2d((0, 0, 1, -1)): Pad with a negative
        end."""
        return g.op("Pad", [x, g.c(np.int64([0, 1, 0, 0, -1, 0]))], mode="constant")

    def mix(x, xx):
        m = RNG.random(d).astype(np.float32)
        return g.op("Add", [g.op("Mul", [x, g.c(m)]), g.op("Mul", [xx, g.c(1 - m)])])

    x = g.op("Gather", [g.c(0.5 * RNG.standard_normal((vocab, d))), "tokens"], axis=0)
    x = ln(g, x, d)
    for _ in range(layers):
        xa = ln(g, x, d)
        xx = shift(xa)
        k = lin(g, mix(xa, xx), d, d, bias=False)
        v = lin(g, mix(xa, xx), d, d, bias=False)
        r = g.op("Sigmoid", [lin(g, mix(xa, xx), d, d, bias=False)])
        wkv = wkv_scan(g, reshape(g, k, [t, d]), reshape(g, v, [t, d]), t, d)
        y = g.op("Mul", [r, reshape(g, wkv, [1, t, d])])
        x = g.op("Add", [x, lin(g, y, d, d, bias=False, scale=0.5)])
        xa = ln(g, x, d)
        xx = shift(xa)
        kk = g.op("Relu", [lin(g, mix(xa, xx), d, ffn, bias=False)])
        kv = lin(g, g.op("Mul", [kk, kk]), ffn, d, bias=False, scale=0.3)
        r = g.op("Sigmoid", [lin(g, mix(xa, xx), d, d, bias=False)])
        x = g.op("Add", [x, g.op("Mul", [r, kv])])
    y = lin(g, ln(g, x, d), d, vocab, bias=False)
    save(g, path, [helper.make_tensor_value_info("tokens", I64, [1, t])],
         [helper.make_tensor_value_info(y, F, [1, t, vocab])])


MODELS = (nafnet_f16, efficientvit_f16, dpt, bigvgan, mixer, superpoint, svtr, rwkv)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    only = sys.argv[2:]
    for f in MODELS:
        if not only or f.__name__ in only:
            f(os.path.join(out, f.__name__ + ".onnx"))


if __name__ == "__main__":
    main()
