#!/usr/bin/python3
"""gen_held15.py DIR [MODEL...]: a fifteenth held-out set for
bench/broad.sh (BROAD_SET=held15), written 2026-12-07 at the end of the
ninth session before any tuning on it; its first measurement is
broad.sh's run on that session's final binary (broad.sh quantizes two of
them with `opmig quantize` first); seeded, opset 17, checked with
onnx.checker.  Every BatchNormalization that follows a Conv is folded
into it (a Conv with a bias), as torch.onnx writes eval mode; each
Linear is a MatMul and a bias Add.  Families none of the fourteen sets
before has, each sized to about 10-70 ms in onnxruntime at one thread:
  yoloseg.onnx       a YOLOv8-seg-style instance segmenter in float32 at
                     320x320: a stride-32 backbone of SiLU ConvBNs and
                     C2f blocks (Split, two bottlenecks, Concat), three
                     levels (40x40, 20x20, 10x10) each with a box branch
                     (DFL: Reshape to [1, 4, 16, n], Softmax over the
                     bins, a 1x1 Conv of fixed weights 0..15), a class
                     branch (Sigmoid) and a mask-coefficient branch (32);
                     dist2bbox against constant anchors (Sub, Add,
                     Concat, Mul by the strides); the prototype net on the
                     40x40 level (a 3x3 ConvBN, a 2x2 stride-2
                     ConvTranspose, two ConvBNs to 32 prototypes at
                     80x80); the 64 best candidates by ReduceMax of the
                     class scores and TopK, their coefficients Gathered,
                     MatMul with the prototypes, Sigmoid: boxes [1, 4,
                     2100], scores [1, 80, 2100], masks [1, 64, 80, 80];
  samdec_f16.onnx    a MobileSAM/SAM-style prompt encoder and mask decoder
                     in float16 (Cast in and out): 64x64 image embeddings
                     of 256 and 4 points; the random-Fourier positional
                     encoding of the points (MatMul, Mul 2 pi, Sin, Cos,
                     Concat), an IoU token and 4 mask tokens Concatenated;
                     a two-way transformer of depth 2 (token
                     self-attention of 8 heads, token-to-image
                     cross-attention downsampled to 128, a ReLU MLP of
                     2048, image-to-token cross-attention, LayerNorms),
                     a final token-to-image attention; the upscaling (two
                     2x2 stride-2 ConvTransposes, LayerNorm2d, GELU as
                     Erf) to [1, 32, 256, 256]; four hypernetwork MLPs
                     Concatenated, MatMul with the upscaled embedding to
                     [1, 4, 256, 256] masks; the IoU MLP to [1, 4];
  lightglue.onnx     a LightGlue/SuperGlue-style feature matcher in float32
                     of 256 and 256 keypoints with descriptors of 256: a
                     keypoint MLP encoder Added; four layers of
                     self-attention of 4 heads per set (one qkv Linear,
                     an output Linear, an FFN on the Concat of the state
                     and the message: Linear, LayerNormalization, GELU as
                     Erf, Linear; Add) and bidirectional cross-attention
                     (one shared qk Linear per set, the similarity
                     Softmaxed along both axes); the assignment: final
                     projections, the similarity scaled, LogSoftmax both
                     ways plus log-sigmoid matchability (a Linear,
                     Sigmoid, Log) to [1, 256, 256]; and SuperGlue's
                     optimal transport: a dustbin row and column
                     Concatenated, 20 log-space Sinkhorn iterations
                     unrolled (ReduceLogSumExp, Sub) to [1, 257, 257];
  ldm_xattn_f16.onnx a Stable-Diffusion-style UNet denoiser stage in
                     float16 (Cast in and out) on a 4x16x16 latent, a
                     timestep and 77 text tokens of 768: the sinusoidal
                     timestep embedding (Mul, Sin, Cos, Concat), a Linear,
                     SiLU, a Linear; two ResBlocks (GroupNorm of 32 groups
                     as InstanceNormalization between Reshapes, SiLU, 3x3
                     Conv, the embedding's Linear Added via Unsqueeze) at
                     256 channels, each followed by a spatial transformer
                     (GroupNorm, a 1x1 Conv in, self-attention of 8 heads,
                     cross-attention to the text with bias-free q, k, v,
                     a GEGLU feed-forward (Split, GELU as Erf, Mul), a 1x1
                     Conv out, Add); a stride-2 Conv, one more ResBlock and
                     transformer at 8x8 and 512 channels, a nearest 2x
                     Resize, a skip Concat, a ResBlock back to 256, a
                     GroupNorm, SiLU and a 3x3 Conv to 4;
  tacotron.onnx      a Tacotron2-style decoder in float32, ten steps
                     unrolled, on 160 encoder frames of 512: the memory
                     layer once; per step the prenet (two bias-free Linears
                     with Relu), the attention LSTM (512, an LSTM op of one
                     step), location-sensitive attention (the previous and
                     the cumulative weights through a 31-tap Conv1d of 32
                     and a Linear to 128, the query Linear, Add, Tanh, a
                     Linear to 1, Softmax; the context by MatMul), the
                     decoder LSTM (512), the mel projection (80) and the
                     gate Linear with Sigmoid; the mels Concatenated to
                     [1, 10, 80] and the gates [1, 10, 1];
  crn.onnx           a CRN/DeepFilterNet-style speech enhancer in float32
                     on 100 frames of a 161-bin complex spectrum: causal
                     (2, 3) stride-(1, 2) Conv encoders (a Pad of the past
                     frame, ELU) of 16, 32, 64, 128 and 128 channels, the
                     bottleneck Transposed and Reshaped to [100, 1, 640],
                     two GRUs of 320, ConvTranspose decoders with the skips
                     Concatenated, two output channels as a complex ratio
                     mask bounded by Tanh, applied as complex
                     multiplication (Mul, Sub, Add, Concat) to [1, 2, 100,
                     161];
  capsnet.onnx       a CapsNet classifier in float32 on a batch of 4
                     28x28 digits: a 9x9 Conv to 256 with Relu, the
                     primary capsules (a 9x9 stride-2 Conv to 32 x 8,
                     Reshape, Transpose to 1152 capsules of 8, squash as
                     ReduceSum of squares, Add, Sqrt, Div, Mul), the
                     prediction vectors by one batched MatMul with
                     [1152, 10, 8, 16] weights, three iterations of
                     routing by agreement unrolled (Softmax over the
                     classes, Mul, ReduceSum, squash, the agreement by
                     Mul and ReduceSum Added to the logits), the class
                     capsules' lengths by ReduceL2: [4, 10] and [4, 10,
                     16].
With MODEL names, only those are written (sizing; the weights then
differ: the set is what a run without names writes)."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

from gen_broad import save
from gen_held import G
from gen_held7 import merge_heads, reshape, split

RNG = np.random.default_rng(15071207)
F = TensorProto.FLOAT
H = TensorProto.FLOAT16
I64 = TensorProto.INT64


def w(*shape, scale=1.0):
    """He-scaled normal weights, the fan all dims but the first."""
    fan = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    return (RNG.standard_normal(shape) * np.sqrt(2.0 / fan) * scale).astype(np.float32)


def axes(g, *a):
    return g.c(np.int64(a))


def conv(g, x, cin, cout, k=3, stride=1, group=1, pad=None, bias=True, scale=1.0):
    """A Conv of constant weight and bias; k and stride ints (2-D) or
    tuples (any rank); pads keep the size at stride 1 unless pad (a list
    of begins then ends) is given."""
    ks = list(k) if isinstance(k, tuple) else [k, k]
    ins = [x, g.c(w(cout, cin // group, *ks, scale=scale))]
    if bias:
        ins.append(g.c(w(cout, scale=0.1)))
    return g.op("Conv", ins, kernel_shape=ks,
                strides=list(stride) if isinstance(stride, tuple) else [stride] * len(ks),
                group=group, pads=[(q - 1) // 2 for q in ks] * 2 if pad is None else pad)


def silu(g, x):
    """SiLU as torch.onnx writes it: Sigmoid, Mul."""
    return g.op("Mul", [x, g.op("Sigmoid", [x])])


def cbs(g, x, cin, cout, k=3, stride=1):
    """ConvBN (folded) and SiLU."""
    return silu(g, conv(g, x, cin, cout, k, stride))


def ln(g, x, n, eps=1e-5):
    return g.op("LayerNormalization", [x, g.c(1 + 0.1 * RNG.standard_normal(n)),
                                       g.c(0.1 * RNG.standard_normal(n))], axis=-1, epsilon=eps)


def lin(g, x, i, o, bias=True, scale=1.0):
    y = g.op("MatMul", [x, g.c(w(i, o, scale=scale))])
    return g.op("Add", [y, g.c(w(o, scale=0.1))]) if bias else y


def gelu_erf(g, x):
    e = g.op("Erf", [g.op("Div", [x, g.c(np.float32(np.sqrt(2)))])])
    return g.op("Mul", [g.op("Mul", [x, g.op("Add", [e, g.c(np.float32(1))])]),
                        g.c(np.float32(0.5))])


def heads_of(g, x, t, heads, hd, b=1):
    """[b, t, heads * hd] to [b, heads, t, hd]."""
    return g.op("Transpose", [reshape(g, x, [b, t, heads, hd])], perm=[0, 2, 1, 3])


def mha(g, xq, xkv, tq, tk, dq, dkv, inner, heads, dout=None, bias=True):
    """Attention with separate q, k and v Linears (dq or dkv to inner),
    Softmax(q k^T / sqrt(hd)) v, an output Linear to dout (dq)."""
    hd = inner // heads
    q = heads_of(g, lin(g, xq, dq, inner, bias), tq, heads, hd)
    k = heads_of(g, lin(g, xkv, dkv, inner, bias), tk, heads, hd)
    v = heads_of(g, lin(g, xkv, dkv, inner, bias), tk, heads, hd)
    s = g.op("Mul", [g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])]),
                     g.c(np.float32(hd ** -0.5))])
    o = g.op("MatMul", [g.op("Softmax", [s], axis=-1), v])
    return lin(g, merge_heads(g, o, tq, inner), inner, dout or dq, scale=0.5)


# ---- yoloseg ------------------------------------------------------------------

def c2f(g, x, cin, cout, n=1):
    """C2f: a 1x1 ConvBN, Split in two, n bottlenecks (two 3x3 ConvBNs,
    Add) each appended, Concat, a 1x1 ConvBN."""
    c = cout // 2
    y = split(g, cbs(g, x, cin, 2 * c, 1), [c, c], 1)
    for _ in range(n):
        b = cbs(g, cbs(g, y[-1], c, c), c, c)
        y.append(g.op("Add", [y[-1], b]))
    return cbs(g, g.op("Concat", y, axis=1), (2 + n) * c, cout, 1)


def yoloseg(path, s=320, classes=80, nm=32, reg=16, top=64):
    g = G()
    x = cbs(g, "x", 3, 16, 3, 2)
    x = cbs(g, x, 16, 32, 3, 2)
    x = c2f(g, x, 32, 32)
    feats, c = [], 32
    for co, n in ((64, 2), (128, 2), (256, 1)):
        x = c2f(g, cbs(g, x, c, co, 3, 2), co, co, n)
        feats.append(x)
        c = co
    boxes, clss, coefs, anchors, strides = [], [], [], [], []
    c2, c3 = 64, 80
    for f, ch in zip(feats, (64, 128, 256)):
        hw = {64: s // 8, 128: s // 16, 256: s // 32}[ch]
        n = hw * hw
        b = conv(g, cbs(g, cbs(g, f, ch, c2), c2, c2), c2, 4 * reg, 1)
        boxes.append(reshape(g, b, [1, 4 * reg, n]))
        k = conv(g, cbs(g, cbs(g, f, ch, c3), c3, c3), c3, classes, 1)
        clss.append(reshape(g, k, [1, classes, n]))
        m = conv(g, cbs(g, cbs(g, f, ch, nm), nm, nm), nm, nm, 1)
        coefs.append(reshape(g, m, [1, nm, n]))
        yy, xx = np.meshgrid(np.arange(hw), np.arange(hw), indexing="ij")
        anchors.append(np.stack([xx.ravel(), yy.ravel()]) + 0.5)
        strides.append(np.full(n, s / hw))
    na = sum(a.shape[1] for a in anchors)
    box = g.op("Concat", boxes, axis=2)
    # DFL: Softmax over the 16 bins, a 1x1 Conv of fixed weights 0..15
    d = g.op("Transpose", [reshape(g, box, [1, 4, reg, na])], perm=[0, 2, 1, 3])
    d = g.op("Conv", [g.op("Softmax", [d], axis=1),
                      g.c(np.arange(reg, dtype=np.float32).reshape(1, reg, 1, 1))],
             kernel_shape=[1, 1])
    d = reshape(g, d, [1, 4, na])
    lt, rb = split(g, d, [2, 2], 1)
    anc = g.c(np.concatenate(anchors, 1)[None])
    x1y1, x2y2 = g.op("Sub", [anc, lt]), g.op("Add", [anc, rb])
    cxy = g.op("Div", [g.op("Add", [x1y1, x2y2]), g.c(np.float32(2))])
    wh = g.op("Sub", [x2y2, x1y1])
    dbox = g.op("Mul", [g.op("Concat", [cxy, wh], axis=1),
                        g.c(np.concatenate(strides)[None, None])])
    cls = g.op("Sigmoid", [g.op("Concat", clss, axis=2)])
    coef = g.op("Concat", coefs, axis=2)  # [1, nm, na]
    # prototypes on the stride-8 level
    p = cbs(g, feats[0], 64, 64)
    p = g.op("ConvTranspose", [p, g.c(w(64, 64, 2, 2)), g.c(w(64, scale=0.1))],
             kernel_shape=[2, 2], strides=[2, 2])
    p = cbs(g, cbs(g, p, 64, 64), 64, nm, 1)  # [1, nm, 80, 80]
    ph = 2 * s // 8
    # the best candidates' masks
    conf = g.op("ReduceMax", [cls], axes=[1], keepdims=0)  # [1, na]
    val, idx = (g.name("v"), g.name("v"))
    g.nodes.append(helper.make_node("TopK", [conf, axes(g, top)], [val, idx], axis=1))
    sel = g.op("Gather", [coef, reshape(g, idx, [top])], axis=2)  # [1, nm, top]
    mk = g.op("MatMul", [g.op("Transpose", [sel], perm=[0, 2, 1]),
                         reshape(g, p, [1, nm, ph * ph])])
    mk = reshape(g, g.op("Sigmoid", [mk]), [1, top, ph, ph])
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, s, s])],
         [helper.make_tensor_value_info(dbox, F, [1, 4, na]),
          helper.make_tensor_value_info(cls, F, [1, classes, na]),
          helper.make_tensor_value_info(mk, F, [1, top, ph, ph])])


# ---- samdec_f16 ---------------------------------------------------------------

def ln2d(g, x, c, eps=1e-6):
    """SAM's LayerNorm2d as torch.onnx writes it (over the channels)."""
    d = g.op("Sub", [x, g.op("ReduceMean", [x], axes=[1], keepdims=1)])
    var = g.op("ReduceMean", [g.op("Pow", [d, g.c(np.float32(2))])], axes=[1], keepdims=1)
    y = g.op("Div", [d, g.op("Sqrt", [g.op("Add", [var, g.c(np.float32(eps))])])])
    return g.op("Add", [g.op("Mul", [y, g.c((1 + 0.1 * RNG.standard_normal(c)).reshape(1, c, 1, 1))]),
                        g.c((0.1 * RNG.standard_normal(c)).reshape(1, c, 1, 1))])


def mlp(g, x, dims, relu_last=False):
    for i, (a, b) in enumerate(zip(dims, dims[1:])):
        x = lin(g, x, a, b)
        if i < len(dims) - 2 or relu_last:
            x = g.op("Relu", [x])
    return x


def samdec_f16(path, e=256, hw=64, points=4, depth=2, heads=8, ff=2048, nmask=4):
    g = G(np.float16)
    t = 1 + nmask + points
    n = hw * hw
    emb = g.op("Cast", ["image_embeddings"], to=H)
    pts = g.op("Cast", ["point_coords"], to=H)  # [1, points, 2] in [0, 1]
    # prompt encoder: random Fourier features of the points
    pc = g.op("Sub", [g.op("Mul", [pts, g.c(np.float32(2))]), g.c(np.float32(1))])
    pc = g.op("Mul", [g.op("MatMul", [pc, g.c(RNG.standard_normal((2, e // 2)))]),
                      g.c(np.float32(2 * np.pi))])
    pe = g.op("Concat", [g.op("Sin", [pc]), g.op("Cos", [pc])], axis=2)
    pe = g.op("Add", [pe, g.c(0.1 * RNG.standard_normal((1, 1, e)))])
    tok = g.op("Concat", [g.c(0.1 * RNG.standard_normal((1, 1 + nmask, e))), pe], axis=1)
    img = g.op("Add", [emb, g.c(0.1 * RNG.standard_normal((1, e, 1, 1)))])  # no_mask_embed
    img = g.op("Transpose", [reshape(g, img, [1, e, n])], perm=[0, 2, 1])
    ipe = g.c(np.concatenate([np.sin(RNG.standard_normal((1, n, e // 2))),
                              np.cos(RNG.standard_normal((1, n, e // 2)))], 2))
    q, k = tok, img
    for i in range(depth):
        a = mha(g, q, q, t, t, e, e, e, heads) if i == 0 else \
            mha(g, g.op("Add", [q, tok]), g.op("Add", [q, tok]), t, t, e, e, e, heads)
        q = ln(g, a if i == 0 else g.op("Add", [q, a]), e)
        kp = g.op("Add", [k, ipe])
        a = mha(g, g.op("Add", [q, tok]), kp, t, n, e, e, e // 2, heads)
        q = ln(g, g.op("Add", [q, a]), e)
        q = ln(g, g.op("Add", [q, mlp(g, q, [e, ff, e])]), e)
        a = mha(g, kp, g.op("Add", [q, tok]), n, t, e, e, e // 2, heads)
        k = ln(g, g.op("Add", [k, a]), e)
    a = mha(g, g.op("Add", [q, tok]), g.op("Add", [k, ipe]), t, n, e, e, e // 2, heads)
    q = ln(g, g.op("Add", [q, a]), e)
    # upscaling
    u = reshape(g, g.op("Transpose", [k], perm=[0, 2, 1]), [1, e, hw, hw])
    u = g.op("ConvTranspose", [u, g.c(w(e, e // 4, 2, 2)), g.c(w(e // 4, scale=0.1))],
             kernel_shape=[2, 2], strides=[2, 2])
    u = gelu_erf(g, ln2d(g, u, e // 4))
    u = g.op("ConvTranspose", [u, g.c(w(e // 4, e // 8, 2, 2)), g.c(w(e // 8, scale=0.1))],
             kernel_shape=[2, 2], strides=[2, 2])
    u = gelu_erf(g, u)  # [1, 32, 256, 256]
    hs = []
    for i in range(nmask):
        ti = g.op("Slice", [q, axes(g, 1 + i), axes(g, 2 + i), axes(g, 1)])
        hs.append(mlp(g, ti, [e, e, e, e // 8]))
    hyper = g.op("Concat", hs, axis=1)  # [1, nmask, 32]
    m = g.op("MatMul", [hyper, reshape(g, u, [1, e // 8, 16 * n])])
    m = g.op("Cast", [reshape(g, m, [1, nmask, 4 * hw, 4 * hw])], to=F)
    it = reshape(g, g.op("Slice", [q, axes(g, 0), axes(g, 1), axes(g, 1)]), [1, e])
    iou = g.op("Cast", [mlp(g, it, [e, e, e, nmask])], to=F)
    save(g, path, [helper.make_tensor_value_info("image_embeddings", F, [1, e, hw, hw]),
                   helper.make_tensor_value_info("point_coords", F, [1, points, 2])],
         [helper.make_tensor_value_info(m, F, [1, nmask, 4 * hw, 4 * hw]),
          helper.make_tensor_value_info(iou, F, [1, nmask])])


# ---- lightglue ----------------------------------------------------------------

def lg_ffn(g, x, msg, d):
    y = g.op("Concat", [x, msg], axis=2)
    y = lin(g, gelu_erf(g, ln(g, lin(g, y, 2 * d, 2 * d), 2 * d)), 2 * d, d, scale=0.5)
    return g.op("Add", [x, y])


def lg_self(g, x, n, d, heads):
    hd = d // heads
    qkv = g.op("Transpose", [reshape(g, lin(g, x, d, 3 * d), [1, n, heads, 3, hd])],
               perm=[3, 0, 2, 1, 4])
    q, k, v = (g.op("Gather", [qkv, g.c(np.int64(i))], axis=0) for i in range(3))
    s = g.op("Mul", [g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])]),
                     g.c(np.float32(hd ** -0.5))])
    o = g.op("MatMul", [g.op("Softmax", [s], axis=-1), v])
    return lg_ffn(g, x, lin(g, merge_heads(g, o, n, d), d, d, scale=0.5), d)


def lg_cross(g, x0, x1, n0, n1, d, heads):
    """LightGlue's bidirectional cross-attention: one qk and one v Linear
    per set (shared weights), sim = qk0 qk1^T, Softmax each way."""
    hd = d // heads
    wqk, bqk, wv, bv = w(d, d), w(d, scale=0.1), w(d, d), w(d, scale=0.1)

    def proj(x, n, wt, b):
        return heads_of(g, g.op("Add", [g.op("MatMul", [x, g.c(wt)]), g.c(b)]), n, heads, hd)
    qk0, qk1 = proj(x0, n0, wqk, bqk), proj(x1, n1, wqk, bqk)
    v0, v1 = proj(x0, n0, wv, bv), proj(x1, n1, wv, bv)
    sc = g.c(np.float32(hd ** -0.25))
    sim = g.op("MatMul", [g.op("Mul", [qk0, sc]),
                          g.op("Transpose", [g.op("Mul", [qk1, sc])], perm=[0, 1, 3, 2])])
    m0 = g.op("MatMul", [g.op("Softmax", [sim], axis=-1), v1])
    m1 = g.op("MatMul", [g.op("Transpose", [g.op("Softmax", [sim], axis=-2)], perm=[0, 1, 3, 2]),
                         v0])
    wo, bo = w(d, d, scale=0.5), w(d, scale=0.1)
    outs = []
    for x, m, n in ((x0, m0, n0), (x1, m1, n1)):
        m = g.op("Add", [g.op("MatMul", [merge_heads(g, m, n, d), g.c(wo)]), g.c(bo)])
        outs.append(lg_ffn(g, x, m, d))
    return outs


def lightglue(path, n0=256, n1=256, d=256, heads=4, layers=4, iters=20):
    g = G()
    enc = [w(2, 32), w(32, scale=0.1), w(32, 64), w(64, scale=0.1), w(64, d), w(d, scale=0.1)]

    def kenc(kp, desc):
        y = kp
        for i in range(3):
            y = g.op("Add", [g.op("MatMul", [y, g.c(enc[2 * i])]), g.c(enc[2 * i + 1])])
            if i < 2:
                y = g.op("Relu", [y])
        return g.op("Add", [desc, y])
    x0, x1 = kenc("kpts0", "desc0"), kenc("kpts1", "desc1")
    for _ in range(layers):
        x0, x1 = lg_self(g, x0, n0, d, heads), lg_self(g, x1, n1, d, heads)
        x0, x1 = lg_cross(g, x0, x1, n0, n1, d, heads)
    # LightGlue's match assignment
    wp, bp = w(d, d), w(d, scale=0.1)
    md0, md1 = (g.op("Add", [g.op("MatMul", [x, g.c(wp)]), g.c(bp)]) for x in (x0, x1))
    sc = g.c(np.float32(d ** -0.25))
    sim = g.op("MatMul", [g.op("Mul", [md0, sc]),
                          g.op("Transpose", [g.op("Mul", [md1, sc])], perm=[0, 2, 1])])
    wz, bz = w(d, 1), w(1, scale=0.1)
    z0, z1 = (g.op("Log", [g.op("Sigmoid", [g.op("Add", [g.op("MatMul", [x, g.c(wz)]), g.c(bz)])])])
              for x in (x0, x1))
    asg = g.op("Add", [g.op("LogSoftmax", [sim], axis=2), g.op("LogSoftmax", [sim], axis=1)])
    asg = g.op("Add", [g.op("Add", [asg, z0]), g.op("Transpose", [z1], perm=[0, 2, 1])])
    # SuperGlue's log-space optimal transport with a dustbin
    alpha = g.c(np.float32(1.0))
    col = g.op("Expand", [alpha, g.c(np.int64([1, n0, 1]))])
    row = g.op("Expand", [alpha, g.c(np.int64([1, 1, n1 + 1]))])
    z = g.op("Concat", [g.op("Concat", [sim, col], axis=2), row], axis=1)  # [1, n0+1, n1+1]
    norm = -np.log(n0 + n1)
    lmu = g.c(np.concatenate([np.full(n0, norm), [np.log(n1) + norm]]).reshape(1, n0 + 1, 1))
    lnu = g.c(np.concatenate([np.full(n1, norm), [np.log(n0) + norm]]).reshape(1, 1, n1 + 1))
    v = g.c(np.zeros((1, 1, n1 + 1)))
    for _ in range(iters):
        u = g.op("Sub", [lmu, g.op("ReduceLogSumExp", [g.op("Add", [z, v])], axes=[2],
                                   keepdims=1)])
        v = g.op("Sub", [lnu, g.op("ReduceLogSumExp", [g.op("Add", [z, u])], axes=[1],
                                   keepdims=1)])
    ot = g.op("Sub", [g.op("Add", [g.op("Add", [z, u]), v]), g.c(np.float32(norm))])
    save(g, path, [helper.make_tensor_value_info("kpts0", F, [1, n0, 2]),
                   helper.make_tensor_value_info("kpts1", F, [1, n1, 2]),
                   helper.make_tensor_value_info("desc0", F, [1, n0, d]),
                   helper.make_tensor_value_info("desc1", F, [1, n1, d])],
         [helper.make_tensor_value_info(asg, F, [1, n0, n1]),
          helper.make_tensor_value_info(ot, F, [1, n0 + 1, n1 + 1])])


# ---- ldm_xattn_f16 ------------------------------------------------------------

def gnorm(g, x, c, hw, groups=32, eps=1e-5):
    """GroupNorm as opset-17 exporters write it: Reshape to [1, groups,
    -1], InstanceNormalization, Reshape back, Mul, Add."""
    y = g.op("InstanceNormalization", [reshape(g, x, [1, groups, -1]), g.c(np.ones(groups)),
                                       g.c(np.zeros(groups))], epsilon=eps)
    y = reshape(g, y, [1, c, hw, hw])
    return g.op("Add", [g.op("Mul", [y, g.c((1 + 0.1 * RNG.standard_normal(c)).reshape(1, c, 1, 1))]),
                        g.c((0.1 * RNG.standard_normal(c)).reshape(1, c, 1, 1))])


def resblock(g, x, temb, cin, cout, hw, tdim):
    y = conv(g, silu(g, gnorm(g, x, cin, hw)), cin, cout)
    t = lin(g, silu(g, temb), tdim, cout)
    y = g.op("Add", [y, g.op("Unsqueeze", [t, axes(g, 2, 3)])])
    y = conv(g, silu(g, gnorm(g, y, cout, hw)), cout, cout, scale=0.5)
    return g.op("Add", [y, x if cin == cout else conv(g, x, cin, cout, 1)])


def spatial_tf(g, x, ctx, c, hw, heads, cdim, tctx):
    n = hw * hw
    y = conv(g, gnorm(g, x, c, hw), c, c, 1)
    y = g.op("Transpose", [reshape(g, y, [1, c, n])], perm=[0, 2, 1])
    h = ln(g, y, c)
    y = g.op("Add", [y, mha(g, h, h, n, n, c, c, c, heads, bias=False)])
    y = g.op("Add", [y, mha(g, ln(g, y, c), ctx, n, tctx, c, cdim, c, heads, bias=False)])
    a, gate = split(g, lin(g, ln(g, y, c), c, 8 * c), [4 * c, 4 * c], 2)
    y = g.op("Add", [y, lin(g, g.op("Mul", [a, gelu_erf(g, gate)]), 4 * c, c, scale=0.5)])
    y = reshape(g, g.op("Transpose", [y], perm=[0, 2, 1]), [1, c, hw, hw])
    return g.op("Add", [x, conv(g, y, c, c, 1, scale=0.5)])


def ldm_xattn_f16(path, s=16, c=256, heads=8, tctx=77, cdim=768):
    g = G(np.float16)
    x = g.op("Cast", ["latent"], to=H)
    ctx = g.op("Cast", ["context"], to=H)
    half = c // 2
    fr = np.exp(-np.log(10000) * np.arange(half) / half).astype(np.float32)
    ts = g.op("Mul", [g.op("Unsqueeze", ["timestep", axes(g, 1)]), g.c(fr[None], np.float32)])
    temb = g.op("Cast", [g.op("Concat", [g.op("Cos", [ts]), g.op("Sin", [ts])], axis=1)], to=H)
    tdim = 4 * c
    temb = lin(g, silu(g, lin(g, temb, c, tdim)), tdim, tdim)
    x = conv(g, x, 4, c)
    h1 = x
    for _ in range(2):
        h1 = spatial_tf(g, resblock(g, h1, temb, c, c, s, tdim), ctx, c, s, heads, cdim, tctx)
    y = conv(g, h1, c, c, 3, 2)
    y = spatial_tf(g, resblock(g, y, temb, c, 2 * c, s // 2, tdim), ctx, 2 * c, s // 2, heads,
                   cdim, tctx)
    y = g.op("Resize", [y, "", g.c(np.float32([1, 1, 2, 2]), np.float32)], mode="nearest")
    y = conv(g, y, 2 * c, 2 * c)
    y = resblock(g, g.op("Concat", [y, h1], axis=1), temb, 3 * c, c, s, tdim)
    y = conv(g, silu(g, gnorm(g, y, c, s)), c, 4, scale=0.3)
    y = g.op("Cast", [y], to=F)
    save(g, path, [helper.make_tensor_value_info("latent", F, [1, 4, s, s]),
                   helper.make_tensor_value_info("timestep", F, [1]),
                   helper.make_tensor_value_info("context", F, [1, tctx, cdim])],
         [helper.make_tensor_value_info(y, F, [1, 4, s, s])])


# ---- tacotron -----------------------------------------------------------------

def tacotron(path, t=160, enc=512, steps=10, mels=80, pre=256, arnn=512, drnn=512,
             adim=128, nf=32, ks=31):
    g = G()
    keys = lin(g, "memory", enc, adim, bias=False)  # [1, t, adim]
    wq, wl, wc, wv = w(arnn, adim), w(nf, adim), w(nf, 2, ks), w(adim, 1)
    wp1, wp2 = w(mels, pre), w(pre, pre)
    wa, ua, ba = w(1, 4 * arnn, pre + enc, scale=0.5), w(1, 4 * arnn, arnn, scale=0.5), \
        w(1, 8 * arnn, scale=0.1)
    wd, ud, bd = w(1, 4 * drnn, arnn + enc, scale=0.5), w(1, 4 * drnn, drnn, scale=0.5), \
        w(1, 8 * drnn, scale=0.1)
    wm, bm, wg, bg = w(drnn + enc, mels), w(mels, scale=0.1), w(drnn + enc, 1), w(1, scale=0.1)
    cw = {k: g.c(v) for k, v in (("wq", wq), ("wl", wl), ("wc", wc), ("wv", wv), ("wp1", wp1),
                                  ("wp2", wp2), ("wa", wa), ("ua", ua), ("ba", ba), ("wd", wd),
                                  ("ud", ud), ("bd", bd), ("wm", wm), ("bm", bm), ("wg", wg),
                                  ("bg", bg))}

    def lstm(x, h, c, W, R, B, hid):
        ys = [g.name("v") for _ in range(3)]
        g.nodes.append(helper.make_node("LSTM", [x, W, R, B, "", h, c], ys, hidden_size=hid))
        return ys[1], ys[2]

    zero = lambda n: g.c(np.zeros((1, 1, n)))  # noqa: E731
    ah, ac, dh, dc = zero(arnn), zero(arnn), zero(drnn), zero(drnn)
    ctx = zero(enc)
    aw, awc = g.c(np.zeros((1, 1, t))), g.c(np.zeros((1, 1, t)))
    frame = zero(mels)
    outs, gates = [], []
    for _ in range(steps):
        p = g.op("Relu", [g.op("MatMul", [frame, cw["wp1"]])])
        p = g.op("Relu", [g.op("MatMul", [p, cw["wp2"]])])
        ah, ac = lstm(g.op("Concat", [p, ctx], axis=2), ah, ac, cw["wa"], cw["ua"], cw["ba"], arnn)
        ahq = reshape(g, ah, [1, 1, arnn])
        loc = g.op("Conv", [g.op("Concat", [aw, awc], axis=1), cw["wc"]], kernel_shape=[ks],
                   pads=[ks // 2, ks // 2])  # [1, nf, t]
        loc = g.op("MatMul", [g.op("Transpose", [loc], perm=[0, 2, 1]), cw["wl"]])
        e = g.op("Tanh", [g.op("Add", [g.op("Add", [g.op("MatMul", [ahq, cw["wq"]]), loc]), keys])])
        e = g.op("Transpose", [g.op("MatMul", [e, cw["wv"]])], perm=[0, 2, 1])  # [1, 1, t]
        aw = g.op("Softmax", [e], axis=2)
        awc = g.op("Add", [awc, aw])
        ctx = g.op("MatMul", [aw, "memory"])  # [1, 1, enc]
        dh, dc = lstm(g.op("Concat", [ahq, ctx], axis=2), dh, dc, cw["wd"], cw["ud"], cw["bd"],
                      drnn)
        hc = g.op("Concat", [reshape(g, dh, [1, 1, drnn]), ctx], axis=2)
        frame = g.op("Add", [g.op("MatMul", [hc, cw["wm"]]), cw["bm"]])
        outs.append(frame)
        gates.append(g.op("Sigmoid", [g.op("Add", [g.op("MatMul", [hc, cw["wg"]]), cw["bg"]])]))
    mel = g.op("Concat", outs, axis=1)
    gate = g.op("Concat", gates, axis=1)
    save(g, path, [helper.make_tensor_value_info("memory", F, [1, t, enc])],
         [helper.make_tensor_value_info(mel, F, [1, steps, mels]),
          helper.make_tensor_value_info(gate, F, [1, steps, 1])])


# ---- crn ----------------------------------------------------------------------

def crn(path, frames=100, bins=161, chans=(16, 32, 64, 128, 128), hid=320):
    g = G()
    x, cin, fs = "spec", 2, [bins]
    skips = []
    for c in chans:
        # causal in time: Pad one past frame, a (2, 3) Conv of stride (1, 2)
        y = g.op("Pad", [x, g.c(np.int64([0, 0, 1, 0, 0, 0, 0, 0]))], mode="constant")
        y = g.op("Elu", [conv(g, y, cin, c, (2, 3), (1, 2), pad=[0, 0, 0, 0])])
        fs.append((fs[-1] - 3) // 2 + 1)
        skips.append(y)
        x, cin = y, c
    f = fs[-1]
    r = reshape(g, g.op("Transpose", [x], perm=[2, 0, 1, 3]), [frames, 1, cin * f])
    din = cin * f
    for _ in range(2):
        ys = [g.name("v"), ""]
        g.nodes.append(helper.make_node(
            "GRU", [r, g.c(w(1, 3 * hid, din, scale=0.5)), g.c(w(1, 3 * hid, hid, scale=0.5)),
                    g.c(w(1, 6 * hid, scale=0.1))], ys[:1], hidden_size=hid,
            linear_before_reset=1))
        r, din = reshape(g, ys[0], [frames, 1, hid]), hid
    r = lin(g, r, hid, cin * f)
    x = g.op("Transpose", [reshape(g, r, [frames, 1, cin, f])], perm=[1, 2, 0, 3])
    outs = list(chans[:-1][::-1]) + [2]
    for i, co in enumerate(outs):
        sk = skips[-1 - i]
        ci = chans[-1 - i]
        y = g.op("Concat", [x, sk], axis=1)
        fo = fs[-2 - i]
        op_ = fo - ((fs[-1 - i] - 1) * 2 + 3)
        y = g.op("ConvTranspose", [y, g.c(w(2 * ci, co, 2, 3)), g.c(w(co, scale=0.1))],
                 kernel_shape=[2, 3], strides=[1, 2], output_padding=[0, op_])
        y = g.op("Slice", [y, axes(g, 0), axes(g, frames), axes(g, 2)])  # causal crop
        x = g.op("Elu", [y]) if co != 2 else g.op("Tanh", [y])
    mr, mi = split(g, x, [1, 1], 1)
    sr, si = split(g, "spec", [1, 1], 1)
    er = g.op("Sub", [g.op("Mul", [sr, mr]), g.op("Mul", [si, mi])])
    ei = g.op("Add", [g.op("Mul", [sr, mi]), g.op("Mul", [si, mr])])
    y = g.op("Concat", [er, ei], axis=1)
    save(g, path, [helper.make_tensor_value_info("spec", F, [1, 2, frames, bins])],
         [helper.make_tensor_value_info(y, F, [1, 2, frames, bins])])


# ---- capsnet ------------------------------------------------------------------

def squash(g, s, axis):
    """CapsNet's squash: |s|^2 / (1 + |s|^2) * s / |s| (ReduceSum of the
    squares, Add, Div, Sqrt, Mul)."""
    n2 = g.op("ReduceSum", [g.op("Mul", [s, s]), axes(g, axis)], keepdims=1)
    f = g.op("Div", [n2, g.op("Mul", [g.op("Add", [n2, g.c(np.float32(1))]),
                                      g.op("Sqrt", [g.op("Add", [n2, g.c(np.float32(1e-8))])])])])
    return g.op("Mul", [s, f])


def capsnet(path, b=4, s=28, caps=32, pd=8, classes=10, dd=16, iters=3):
    g = G()
    x = g.op("Relu", [conv(g, "x", 1, 256, 9, pad=[0, 0, 0, 0])])  # [b, 256, 20, 20]
    x = conv(g, x, 256, caps * pd, 9, 2, pad=[0, 0, 0, 0])  # [b, 256, 6, 6]
    n = caps * 6 * 6
    u = reshape(g, x, [b, caps, pd, 36])
    u = reshape(g, g.op("Transpose", [u], perm=[0, 1, 3, 2]), [b, n, pd])
    u = squash(g, u, 2)
    uh = g.op("MatMul", [reshape(g, u, [b, n, 1, 1, pd]), g.c(w(n, classes, pd, dd))])
    uh = reshape(g, uh, [b, n, classes, dd])
    logits = g.c(np.zeros((b, n, classes)))
    for i in range(iters):
        c = g.op("Unsqueeze", [g.op("Softmax", [logits], axis=2), axes(g, 3)])
        v = squash(g, g.op("ReduceSum", [g.op("Mul", [c, uh]), axes(g, 1)], keepdims=0), 2)
        if i < iters - 1:
            agree = g.op("ReduceSum", [g.op("Mul", [uh, g.op("Unsqueeze", [v, axes(g, 1)])]),
                                       axes(g, 3)], keepdims=0)
            logits = g.op("Add", [logits, agree])
    y = g.op("ReduceL2", [v], axes=[2], keepdims=0)
    save(g, path, [helper.make_tensor_value_info("x", F, [b, 1, s, s])],
         [helper.make_tensor_value_info(y, F, [b, classes]),
          helper.make_tensor_value_info(v, F, [b, classes, dd])])


MODELS = (yoloseg, samdec_f16, lightglue, ldm_xattn_f16, tacotron, crn, capsnet)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    only = sys.argv[2:]
    for f in MODELS:
        if not only or f.__name__ in only:
            f(os.path.join(out, f.__name__ + ".onnx"))


if __name__ == "__main__":
    main()
