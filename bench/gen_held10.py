#!/usr/bin/python3
"""gen_held10.py DIR: a tenth held-out set for bench/broad.sh
(BROAD_SET=held10), written 2026-12-07 before any tuning on it and not
run through opmig when written: for a later round's first measurement
(broad.sh quantizes two of them with `opmig quantize` first); seeded,
opset 17, checked with onnx.checker:
  pointnet.onnx      a PointNet classifier in float32 on [1, 3, 4096]
                     points: an input T-Net (kernel-1 1-D Convs 3 -> 64 ->
                     128 -> 1024 each with BatchNormalization and Relu,
                     GlobalMaxPool over the points, Gemms 1024 -> 512 ->
                     256 with BatchNormalization and Relu, a Gemm to 3x3
                     whose bias is the identity, Reshape) whose 3x3
                     transform the points are MatMul'ed by (between
                     Transposes), two kernel-1 Convs to 64, a feature
                     T-Net of the same kind predicting a 64x64 transform
                     applied the same way, kernel-1 Convs 64 -> 64 -> 128
                     -> 1024 (the last with BatchNormalization but no
                     Relu), GlobalMaxPool, Flatten, a Gemm head 1024 ->
                     512 -> 256 -> 40 classes, LogSoftmax;
  unet3d.onnx        a 3-D U-Net for medical volumes in float32 on
                     [1, 1, 32, 64, 64]: three levels of (8, 16, 32)
                     channels (at (16, 32, 64) it took 200 ms in
                     onnxruntime at one thread), each two 3x3x3 Convs with
                     InstanceNormalization and LeakyRelu 0.01, 2x2x2
                     MaxPools down, 2x2x2 stride-2 ConvTransposes up,
                     Concat with the encoder's level as the skip, two
                     3x3x3 Convs of the same kind, a 1x1x1 Conv to 3
                     classes;
  unet3d_qdq.onnx    broad.sh writes it: unet3d.onnx quantized static QDQ;
  detr_f16.onnx      a DETR-style detector in float16 (Cast in and out)
                     on a 400x400 image: a small ResNet-style backbone (7x7
                     stride-2 stem to 32 with BatchNormalization and Relu,
                     a 3x3 stride-2 MaxPool, basic blocks of 32, 64 and
                     128 channels, the last two entering by stride 2 with
                     a 1x1 Conv and BatchNormalization as the shortcut) to
                     a 25x25 map, a 1x1 Conv to d 128, flattened to 625
                     tokens (Reshape, Transpose), a constant DETR sine
                     positional embedding; two post-LN encoder layers (the
                     positions Added to queries and keys only, 8 heads of
                     16 with separate q, k, v MatMuls and biases, scaled
                     scores, Softmax, a Relu feed-forward of 512) and two
                     post-LN decoder layers over 100 object queries
                     (targets starting at a zero constant, a learned query
                     position constant; self-attention, cross-attention to
                     the encoder's memory with its positions Added to the
                     keys, the feed-forward), a final LayerNormalization,
                     a 92-class MatMul head and a three-layer Relu box MLP
                     (its last MatMul without a bias, then an Add) with
                     Sigmoid: [1, 100, 92] logits and [1, 100, 4] boxes;
  mamba_like.onnx    a Mamba-2-style selective state-space language model in
                     float32 as its chunked (SSD) form exports without a
                     Loop: 256 int64 token ids, a Gather of embeddings (1024
                     by 256), four blocks of a pre-LN (LayerNormalization),
                     an input MatMul to z, x, B, C and dt (512, 512, 32, 32,
                     8) Split in z, xBC and dt, a causal depthwise 1-D Conv
                     of kernel 4 (padded 3 on the left only) over xBC between
                     Transposes, SiLU (Mul by Sigmoid), Split in x, B and C;
                     dt by Softplus of an Add of its bias, A = -Exp(A_log) of
                     8 heads, the decay's log by CumSum along time of dt * A,
                     the [8, 256, 256] segment sums by Unsqueeze and Sub, a
                     causal mask of float32's lowest Added, Exp, Mul by C
                     B^T, a MatMul with x * dt in 8 heads of 64, D * x Added,
                     gating by SiLU(z), a gated RMSNorm decomposed (Pow 2,
                     ReduceMean, Add eps, Sqrt, Div, Mul by the weight), an
                     output MatMul back to 256 and the residual Add; a final
                     LayerNormalization and a MatMul to [1, 256, 1024]
                     logits;
  mamba_dyn.onnx     broad.sh writes it: mamba_like.onnx quantized by
                     `opmig quantize --dynamic`;
  sr_espcn.onnx      an ESPCN-style real-time super-resolution net in
                     float32 at 360x640 (3x to 1080x1920): a 5x5 Conv to
                     32 channels and Tanh, a 3x3 Conv to 16 and Tanh, a
                     3x3 Conv to 3 * 3^2, DepthToSpace of 3 (CRD, as
                     PixelShuffle exports), Clip to [0, 1] (ESPCN's 64 and
                     32 channels took 150 ms in onnxruntime at one
                     thread);
  ocr_det.onnx       a DBNet-style text detector at 640x640 in float32 on a
                     MobileNetV3-Small-style backbone: a 3x3 stride-2 stem to
                     16 with HardSwish, eleven inverted residuals (1x1 expand
                     but in the first, 3x3 or 5x5 depthwise,
                     Squeeze-Excitation by
                     GlobalAveragePool/Conv/Relu/Conv/HardSigmoid/Mul where
                     MobileNetV3 has it, 1x1 project, each Conv with
                     BatchNormalization, Relu or HardSwish), taps at strides
                     4, 8, 16 and 32 (the last through a 1x1 Conv to 576 with
                     HardSwish); a DB FPN (1x1 Convs to 96, top-down nearest
                     2x Resize and Add, 3x3 Convs to 24, nearest Resizes by
                     8, 4 and 2 to the 160x160 level, Concat to 96), the DB
                     probability head (a 3x3 Conv to 24, BatchNormalization,
                     Relu, a 2x2 stride-2 ConvTranspose, BatchNormalization,
                     Relu, a 2x2 stride-2 ConvTranspose to 1, Sigmoid) to a
                     [1, 1, 640, 640] map."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

from gen_broad import save
from gen_held import G, bn
from gen_held4 import ln, lin
from gen_held7 import heads_of, image_in, merge_heads, reshape, split

RNG = np.random.default_rng(31415077)
F = TensorProto.FLOAT
H = TensorProto.FLOAT16
I64 = TensorProto.INT64


def w(*shape, scale=1.0):
    """He-scaled normal weights, the fan all dims but the first."""
    fan = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    return (RNG.standard_normal(shape) * np.sqrt(2.0 / fan) * scale).astype(np.float32)


def conv(g, x, cin, cout, k=3, stride=1, group=1, pad=None, bias=True, scale=1.0):
    """A Conv of any rank: k and stride ints (2-D) or tuples; pad (each
    side) k // 2 unless given."""
    ks = list(k) if isinstance(k, tuple) else [k, k]
    st = list(stride) if isinstance(stride, tuple) else [stride] * len(ks)
    p = [q // 2 if pad is None else pad for q in ks] * 2
    ins = [x, g.c(w(cout, cin // group, *ks, scale=scale))]
    if bias:
        ins.append(g.c(w(cout, scale=0.1)))
    return g.op("Conv", ins, kernel_shape=ks, strides=st, group=group, pads=p)


def cba(g, x, cin, cout, k=1, stride=1, group=1, act="Relu"):
    """Conv without bias, BatchNormalization, then the activation act
    (an operator's name) unless act is None."""
    y = bn(g, conv(g, x, cin, cout, k, stride, group, bias=False), cout)
    return g.op(act, [y]) if act else y


def upsample(g, x, f):
    """Nearest Resize by f in both spatial dims."""
    return g.op("Resize", [x, "", g.c(np.float32([1, 1, f, f]), np.float32)], mode="nearest",
                coordinate_transformation_mode="asymmetric", nearest_mode="floor")


def fc(g, x, i, o, relu=True):
    """A Gemm, then BatchNormalization and Relu unless relu is False."""
    y = g.op("Gemm", [x, g.c(w(o, i)), g.c(w(o, scale=0.1))], transB=1)
    return g.op("Relu", [bn(g, y, o)]) if relu else y


def pn_convs(g, x, widths, last_relu=True):
    """Kernel-1 1-D Convs over the points, BatchNormalization, Relu."""
    for i, (cin, cout) in enumerate(zip(widths, widths[1:])):
        x = cba(g, x, cin, cout, (1,), act="Relu" if last_relu or i < len(widths) - 2 else None)
    return x


def tnet(g, x, k):
    """A T-Net: the [1, k, k] transform predicted from x [1, k, n]."""
    y = g.op("Flatten", [g.op("GlobalMaxPool", [pn_convs(g, x, (k, 64, 128, 1024))])])
    y = fc(g, fc(g, y, 1024, 512), 512, 256)
    y = g.op("Gemm", [y, g.c(w(k * k, 256, scale=0.05)), g.c(np.eye(k).reshape(-1))], transB=1)
    return reshape(g, y, [1, k, k])


def transform(g, x, k):
    """x [1, k, n] moved by its T-Net's transform: (x^T T)^T."""
    y = g.op("MatMul", [g.op("Transpose", [x], perm=[0, 2, 1]), tnet(g, x, k)])
    return g.op("Transpose", [y], perm=[0, 2, 1])


def pointnet(path, n=4096, classes=40):
    g = G()
    x = transform(g, "x", 3)
    x = transform(g, pn_convs(g, x, (3, 64, 64)), 64)
    x = pn_convs(g, x, (64, 64, 128, 1024), last_relu=False)
    y = g.op("Flatten", [g.op("GlobalMaxPool", [x])])
    y = fc(g, fc(g, fc(g, y, 1024, 512), 512, 256), 256, classes, relu=False)
    y = g.op("LogSoftmax", [y], axis=1)
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, n])],
         [helper.make_tensor_value_info(y, F, [1, classes])])


def cil(g, x, cin, cout):
    """3x3x3 Conv, InstanceNormalization, LeakyRelu."""
    y = g.op("InstanceNormalization", [conv(g, x, cin, cout, (3, 3, 3)),
                                       g.c(1 + 0.1 * RNG.standard_normal(cout)),
                                       g.c(0.1 * RNG.standard_normal(cout))], epsilon=1e-5)
    return g.op("LeakyRelu", [y], alpha=0.01)


def unet3d(path, dims=(32, 64, 64), widths=(8, 16, 32), classes=3):
    g = G()
    x, cin, skips = "x", 1, []
    for i, c in enumerate(widths):
        if i:
            x = g.op("MaxPool", [x], kernel_shape=[2, 2, 2], strides=[2, 2, 2])
        x, cin = cil(g, cil(g, x, cin, c), c, c), c
        skips.append(x)
    for c, skip in zip(widths[-2::-1], skips[-2::-1]):
        x = g.op("ConvTranspose", [x, g.c(w(cin, c, 2, 2, 2)), g.c(w(c, scale=0.1))],
                 kernel_shape=[2, 2, 2], strides=[2, 2, 2])
        x, cin = cil(g, cil(g, g.op("Concat", [skip, x], axis=1), 2 * c, c), c, c), c
    y = conv(g, x, cin, classes, (1, 1, 1))
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 1, *dims])],
         [helper.make_tensor_value_info(y, F, [1, classes, *dims])])


def basic(g, x, cin, cout, stride):
    """A ResNet basic block."""
    y = cba(g, cba(g, x, cin, cout, 3, stride), cout, cout, 3, act=None)
    sc = x if stride == 1 and cin == cout else cba(g, x, cin, cout, 1, stride, act=None)
    return g.op("Relu", [g.op("Add", [sc, y])])


def sine_pos(h, w_, d, temp=10000.0):
    """DETR's PositionEmbeddingSine (normalized): [1, h * w_, d]."""
    npf, eps, scale = d // 2, 1e-6, 2 * np.pi
    y = np.arange(1, h + 1, dtype=np.float64)[:, None].repeat(w_, 1) / (h + eps) * scale
    x = np.arange(1, w_ + 1, dtype=np.float64)[None, :].repeat(h, 0) / (w_ + eps) * scale
    dim_t = temp ** (2 * (np.arange(npf) // 2) / npf)

    def emb(a):
        p = a[..., None] / dim_t
        return np.stack([np.sin(p[..., 0::2]), np.cos(p[..., 1::2])], axis=3).reshape(h, w_, npf)
    return np.concatenate([emb(y), emb(x)], axis=2).reshape(1, h * w_, d)


def proj(g, x, i, o, scale=1.0):
    """A Linear without bias: MatMul by [i, o]."""
    return g.op("MatMul", [x, g.c(RNG.standard_normal((i, o)) * (scale / np.sqrt(i)))])


def mha(g, q, k, v, tq, tk, d, heads):
    """Multi-head attention as torch's MultiheadAttention exports it."""
    hd = d // heads
    q = heads_of(g, g.op("Mul", [lin(g, q, d, d), g.c(np.float32(hd ** -0.5))]), tq, heads, hd)
    k = heads_of(g, lin(g, k, d, d), tk, heads, hd)
    v = heads_of(g, lin(g, v, d, d), tk, heads, hd)
    a = g.op("Softmax", [g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])])], axis=-1)
    return lin(g, merge_heads(g, g.op("MatMul", [a, v]), tq, d), d, d)


def ffn(g, x, d, ff):
    return lin(g, g.op("Relu", [lin(g, x, d, ff)]), ff, d)


def post(g, x, y, d):
    """DETR's post-norm residual: LayerNormalization(x + y)."""
    return ln(g, g.op("Add", [x, y]), d, 1e-5)


def detr_f16(path, s=400, d=128, heads=8, ff=512, enc=2, dec=2, queries=100, classes=92):
    g = G(np.float16)
    x = cba(g, g.op("Cast", ["x"], to=H), 3, 32, 7, 2)
    x = g.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)
    cin = 32
    for c, stride in ((32, 1), (64, 2), (128, 2)):
        x, cin = basic(g, basic(g, x, cin, c, stride), c, c, 1), c
    r = s // 16
    t = r * r
    x = reshape(g, conv(g, x, cin, d, 1), [1, d, t])
    src = g.op("Transpose", [x], perm=[0, 2, 1])
    pos = g.c(sine_pos(r, r, d))
    for _ in range(enc):
        qk = g.op("Add", [src, pos])
        src = post(g, src, mha(g, qk, qk, src, t, t, d, heads), d)
        src = post(g, src, ffn(g, src, d, ff), d)
    mem_k = g.op("Add", [src, pos])
    qpos = g.c(RNG.standard_normal((1, queries, d)))
    tgt = g.c(np.zeros((1, queries, d)))
    for _ in range(dec):
        qk = g.op("Add", [tgt, qpos])
        tgt = post(g, tgt, mha(g, qk, qk, tgt, queries, queries, d, heads), d)
        tgt = post(g, tgt, mha(g, g.op("Add", [tgt, qpos]), mem_k, src, queries, t, d, heads), d)
        tgt = post(g, tgt, ffn(g, tgt, d, ff), d)
    hs = ln(g, tgt, d, 1e-5)
    logits = g.op("Cast", [lin(g, hs, d, classes)], to=F)
    b = g.op("Relu", [lin(g, g.op("Relu", [lin(g, hs, d, d)]), d, d)])
    b = g.op("Add", [proj(g, b, d, 4), g.c(w(4, scale=0.1))])
    boxes = g.op("Cast", [g.op("Sigmoid", [b])], to=F)
    save(g, path, image_in(s),
         [helper.make_tensor_value_info(logits, F, [1, queries, classes]),
          helper.make_tensor_value_info(boxes, F, [1, queries, 4])])


def silu(g, x):
    return g.op("Mul", [x, g.op("Sigmoid", [x])])


def gated_rmsnorm(g, y, z, e, eps=1e-5):
    """Mamba-2's RMSNorm of y * SiLU(z), decomposed."""
    y = g.op("Mul", [y, silu(g, z)])
    var = g.op("ReduceMean", [g.op("Pow", [y, g.c(np.float32(2))])], axes=[-1])
    r = g.op("Sqrt", [g.op("Add", [var, g.c(np.float32(eps))])])
    return g.op("Mul", [g.op("Div", [y, r]), g.c(1 + 0.1 * RNG.standard_normal(e))])


def mamba_block(g, x, t, d, e, heads, n, mask, k=4):
    p = e // heads
    h = ln(g, x, d, 1e-5)
    z, xbc, dt = split(g, proj(g, h, d, 2 * e + 2 * n + heads), [e, e + 2 * n, heads], 2)
    c = e + 2 * n
    xbc = g.op("Conv", [g.op("Transpose", [xbc], perm=[0, 2, 1]), g.c(w(c, 1, k, scale=0.7)),
                        g.c(w(c, scale=0.1))], kernel_shape=[k], group=c, pads=[k - 1, 0])
    xs, bm, cm = split(g, g.op("Transpose", [silu(g, xbc)], perm=[0, 2, 1]), [e, n, n], 2)
    # dt's bias: the inverse Softplus of a step log-uniform in [1e-3, 1e-1]
    dt0 = np.exp(RNG.uniform(np.log(1e-3), np.log(1e-1), heads))
    dt = g.op("Softplus", [g.op("Add", [dt, g.c(np.log(np.expm1(dt0)))])])
    a = g.op("Neg", [g.op("Exp", [g.c(np.log(RNG.uniform(1, 16, heads)))])])
    dt_h = g.op("Transpose", [dt], perm=[0, 2, 1])  # [1, heads, t]
    cum = g.op("CumSum", [g.op("Transpose", [g.op("Mul", [dt, a])], perm=[0, 2, 1]),
                          g.c(np.int64(2))])
    seg = g.op("Sub", [g.op("Unsqueeze", [cum, g.c(np.int64([3]))]),
                       g.op("Unsqueeze", [cum, g.c(np.int64([2]))])])
    decay = g.op("Exp", [g.op("Add", [seg, mask])])  # [1, heads, t, t]
    cb = g.op("MatMul", [cm, g.op("Transpose", [bm], perm=[0, 2, 1])])
    wts = g.op("Mul", [decay, g.op("Unsqueeze", [cb, g.c(np.int64([1]))])])
    xh = heads_of(g, xs, t, heads, p)
    xdt = g.op("Mul", [xh, g.op("Unsqueeze", [dt_h, g.c(np.int64([3]))])])
    y = g.op("MatMul", [wts, xdt])
    y = g.op("Add", [y, g.op("Mul", [xh, g.c(1 + 0.1 * RNG.standard_normal((1, heads, 1, 1)))])])
    y = gated_rmsnorm(g, merge_heads(g, y, t, e), z, e)
    return g.op("Add", [x, proj(g, y, e, d)])


def mamba_like(path, t=256, d=256, layers=4, heads=8, n=32, vocab=1024):
    g = G()
    x = g.op("Gather", [g.c(RNG.standard_normal((vocab, d))), "ids"], axis=0)
    mask = g.c(np.triu(np.full((t, t), np.finfo(np.float32).min), 1)[None, None])
    for _ in range(layers):
        x = mamba_block(g, x, t, d, 2 * d, heads, n, mask)
    y = proj(g, ln(g, x, d, 1e-5), d, vocab)
    save(g, path, [helper.make_tensor_value_info("ids", I64, [1, t])],
         [helper.make_tensor_value_info(y, F, [1, t, vocab])])


def sr_espcn(path, hgt=360, wid=640, r=3, c1=32, c2=16):
    g = G()
    x = g.op("Tanh", [conv(g, "x", 3, c1, 5)])
    x = g.op("Tanh", [conv(g, x, c1, c2, 3)])
    x = g.op("DepthToSpace", [conv(g, x, c2, 3 * r * r, 3)], blocksize=r, mode="CRD")
    y = g.op("Clip", [x, g.c(np.float32(0)), g.c(np.float32(1))])
    save(g, path, image_in(hgt, wid),
         [helper.make_tensor_value_info(y, F, [1, 3, r * hgt, r * wid])])


def se_hs(g, x, c):
    """MobileNetV3's Squeeze-Excitation: a quarter (a multiple of 8)."""
    sq = max(8, (c // 4 + 4) // 8 * 8)
    s = g.op("Relu", [conv(g, g.op("GlobalAveragePool", [x]), c, sq, 1)])
    s = g.op("HardSigmoid", [conv(g, s, sq, c, 1)], alpha=1 / 6, beta=0.5)
    return g.op("Mul", [x, s])


def mbv3_block(g, x, cin, k, exp, cout, use_se, act, stride):
    y = x if exp == cin else cba(g, x, cin, exp, 1, act=act)
    y = cba(g, y, exp, exp, k, stride, exp, act)
    if use_se:
        y = se_hs(g, y, exp)
    y = cba(g, y, exp, cout, 1, act=None)
    return g.op("Add", [x, y]) if stride == 1 and cin == cout else y


# MobileNetV3-Small's blocks: kernel, expansion, out, SE, activation,
# stride, and whether the detector taps its output (strides 4, 8, 16)
MBV3_SMALL = ((3, 16, 16, True, "Relu", 2, True), (3, 72, 24, False, "Relu", 2, False),
              (3, 88, 24, False, "Relu", 1, True), (5, 96, 40, True, "HardSwish", 2, False),
              (5, 240, 40, True, "HardSwish", 1, False), (5, 240, 40, True, "HardSwish", 1, False),
              (5, 120, 48, True, "HardSwish", 1, False), (5, 144, 48, True, "HardSwish", 1, True),
              (5, 288, 96, True, "HardSwish", 2, False), (5, 576, 96, True, "HardSwish", 1, False),
              (5, 576, 96, True, "HardSwish", 1, False))


def ocr_det(path, s=640, inner=96):
    g = G()
    x, cin, taps = cba(g, "x", 3, 16, 3, 2, act="HardSwish"), 16, []
    for k, exp, cout, use_se, act, stride, tap in MBV3_SMALL:
        x, cin = mbv3_block(g, x, cin, k, exp, cout, use_se, act, stride), cout
        if tap:
            taps.append((x, cin))
    taps.append((cba(g, x, cin, 576, 1, act="HardSwish"), 576))
    ins = [conv(g, t, c, inner, 1, bias=False) for t, c in taps]
    for i in (2, 1, 0):
        ins[i] = g.op("Add", [ins[i], upsample(g, ins[i + 1], 2)])
    outs = [conv(g, y, inner, inner // 4, 3, bias=False) for y in ins]
    fuse = g.op("Concat", [upsample(g, outs[3], 8), upsample(g, outs[2], 4),
                           upsample(g, outs[1], 2), outs[0]], axis=1)
    c = inner // 4
    y = cba(g, fuse, inner, c, 3)
    y = g.op("ConvTranspose", [y, g.c(w(c, c, 2, 2)), g.c(w(c, scale=0.1))],
             kernel_shape=[2, 2], strides=[2, 2])
    y = g.op("Relu", [bn(g, y, c)])
    y = g.op("ConvTranspose", [y, g.c(w(c, 1, 2, 2)), g.c(w(1, scale=0.1))],
             kernel_shape=[2, 2], strides=[2, 2])
    y = g.op("Sigmoid", [y])
    save(g, path, image_in(s), [helper.make_tensor_value_info(y, F, [1, 1, s, s])])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    pointnet(os.path.join(out, "pointnet.onnx"))
    unet3d(os.path.join(out, "unet3d.onnx"))
    detr_f16(os.path.join(out, "detr_f16.onnx"))
    mamba_like(os.path.join(out, "mamba_like.onnx"))
    sr_espcn(os.path.join(out, "sr_espcn.onnx"))
    ocr_det(os.path.join(out, "ocr_det.onnx"))


if __name__ == "__main__":
    main()
