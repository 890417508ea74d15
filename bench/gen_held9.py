#!/usr/bin/python3
"""gen_held9.py DIR: a ninth held-out set for bench/broad.sh
(BROAD_SET=held9), written 2026-12-07 before any tuning on it and not run
through opmig when written: for a later round's first measurement
(broad.sh quantizes three of them with `opmig quantize` first); seeded,
opset 17, checked with onnx.checker:
  regnet.onnx        a RegNetY-400MF-style classifier at 224x224 in
                     float32: a 3x3 stride-2 stem to 32 channels, four
                     stages of (1, 3, 6, 6) bottleneck blocks of widths
                     (48, 104, 208, 440), the first of each stride 2:
                     a 1x1 Conv, a GROUPED 3x3 Conv of group width 8 (6
                     to 55 groups, not depthwise), Squeeze-Excitation to
                     a quarter of the block's input width
                     (GlobalAveragePool, 1x1 Conv, Relu, 1x1 Conv,
                     Sigmoid, Mul), a 1x1 Conv, each Conv followed by
                     BatchNormalization (and Relu but the last), a 1x1
                     stride-2 Conv and BatchNormalization as the shortcut
                     where the shape changes, the residual Add and Relu;
                     GlobalAveragePool and a 1000-class Gemm head;
  regnet_qdq.onnx    broad.sh writes it: regnet.onnx quantized static QDQ;
  t5enc.onnx         a T5-small-style text encoder in float32: 128 int64
                     token ids, a Gather of embeddings (4096 by 512; T5's
                     32128 would be 66 MB alone), four pre-norm layers of
                     8-head attention (q, k, v and output MatMuls without
                     biases, scores not scaled, T5 style, a relative
                     position bias of T5's 32 bidirectional buckets as one
                     constant [1, 8, 128, 128] Added to every layer's
                     scores, Softmax) and a gated-GELU feed-forward of
                     1024 (two MatMuls, GELU's tanh formula decomposed
                     with Pow 3/Mul/Add/Tanh, their Mul, a MatMul back),
                     each RMSNorm decomposed (Pow 2, ReduceMean, Add eps,
                     Sqrt, Reciprocal, Mul, Mul by the weight), a final
                     RMSNorm;
  t5_dyn.onnx        broad.sh writes it: t5enc.onnx quantized by `opmig
                     quantize --dynamic`;
  esrgan_f16.onnx    an ESRGAN/RRDB-style super-resolution net in float16
                     (Cast in and out): a 64x64 image, a 3x3 Conv to 32
                     channels, two RRDB blocks of three residual dense
                     blocks each (five 3x3 Convs over the Concat of the
                     growing features, 16 new channels each, LeakyRelu
                     0.2 after the first four, the fifth back to 32,
                     scaled by Mul 0.2 and Added to the block's input;
                     the RRDB's output scaled and Added the same), a 3x3
                     trunk Conv Added to the first features, two 2x
                     upsamplings by nearest Resize, a 3x3 Conv and
                     LeakyRelu (to 256x256), a last 3x3 Conv to 3
                     channels;
  llama_f32.onnx     a Llama-style decoder prefill in float32 as
                     torch.onnx exports it: int64 input_ids [1, 128], a
                     Gather of embeddings (4096 by 512, tied to the
                     lm_head by a Transpose), four layers of an RMSNorm
                     (Pow 2, ReduceMean, Add eps, Sqrt, Div of 1, Mul, Mul
                     by the weight), grouped-query attention of 8 query
                     heads and 2 key/value heads of 64 (MatMuls without
                     biases; rotary embedding decomposed: cos and sin
                     tables Gathered by constant position ids and
                     Unsqueezed, the halves Sliced, Neg, Concat, Mul and
                     Add; keys and values repeated by Unsqueeze, Expand
                     and Reshape; scores Divided by 8, a causal mask
                     constant of float32's lowest Added, Softmax) and a
                     SwiGLU MLP of 1408 (gate MatMul, x times Sigmoid(x),
                     Mul by the up MatMul, a down MatMul), residual Adds;
                     a final RMSNorm and the lm_head MatMul to [1, 128,
                     4096] logits;
  llama_dyn.onnx     broad.sh writes it: llama_f32.onnx quantized by
                     `opmig quantize --dynamic`;
  cyclegan.onnx      a CycleGAN-ResNet-generator-style image-to-image net
                     at 128x128 in float32 (ngf 32): reflect Pad 3 and a
                     7x7 Conv, two stride-2 3x3 downsampling Convs (to 64
                     and 128 channels), four residual blocks at 32x32
                     (reflect Pad 1, 3x3 Conv, InstanceNormalization,
                     Relu, reflect Pad 1, 3x3 Conv, InstanceNormalization,
                     Add), two stride-2 3x3 ConvTransposes (output_padding
                     1, to 64 and 32 channels), every Conv and
                     ConvTranspose but the last followed by
                     InstanceNormalization and Relu, reflect Pad 3 and a
                     7x7 Conv to 3 channels, Tanh;
  c3d.onnx           an R(2+1)D-style video classifier in float32 on
                     [1, 3, 8, 56, 56] clips: each 3-D convolution
                     factored into a 1x3x3 spatial Conv, BatchNormalization
                     and Relu, then a 3x1x1 temporal Conv (R(2+1)D's middle
                     width, matching a 3x3x3's parameters); a stem of one
                     such pair (1x3x3 of stride (1, 2, 2) to 45, 3x1x1 to
                     32), BatchNormalization, Relu; two residual blocks of
                     32 at 8x28x28, a 2x2x2 MaxPool, two of 64 at 4x14x14,
                     two of 128, the first of stride 2 (to 2x7x7); each
                     block two factored convolutions with
                     BatchNormalization and Relu, a 1x1x1 Conv and
                     BatchNormalization as the shortcut where the shape
                     changes, the residual Add and Relu;
                     GlobalAveragePool and a 400-class Gemm head."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

from gen_broad import save
from gen_held import G, bn
from gen_held7 import head, heads_of, image_in, merge_heads, reshape

RNG = np.random.default_rng(86028121)
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


def cbr(g, x, cin, cout, k=3, stride=1, group=1, relu=True):
    """Conv without bias, BatchNormalization, Relu unless relu is False."""
    y = bn(g, conv(g, x, cin, cout, k, stride, group, bias=False), cout)
    return g.op("Relu", [y]) if relu else y


def se(g, x, c, squeeze):
    s = g.op("Relu", [conv(g, g.op("GlobalAveragePool", [x]), c, squeeze, 1)])
    return g.op("Mul", [x, g.op("Sigmoid", [conv(g, s, squeeze, c, 1)])])


def regnet_block(g, x, cin, cout, stride, gw):
    y = cbr(g, x, cin, cout, 1)
    y = se(g, cbr(g, y, cout, cout, 3, stride, cout // gw), cout, cin // 4)
    y = cbr(g, y, cout, cout, 1, relu=False)
    sc = x if stride == 1 and cin == cout else cbr(g, x, cin, cout, 1, stride, relu=False)
    return g.op("Relu", [g.op("Add", [sc, y])])


def regnet(path, s=224, widths=(48, 104, 208, 440), depths=(1, 3, 6, 6), gw=8, classes=1000):
    g = G()
    x, cin = cbr(g, "x", 3, 32, 3, 2), 32
    for c, n in zip(widths, depths):
        for i in range(n):
            x, cin = regnet_block(g, x, cin, c, 2 if i == 0 else 1, gw), c
    y = head(g, x, cin, classes)
    save(g, path, image_in(s), [helper.make_tensor_value_info(y, F, [1, classes])])


def proj(g, x, i, o, scale=1.0):
    """A Linear without bias as torch.onnx writes it: MatMul by [i, o]."""
    return g.op("MatMul", [x, g.c(RNG.standard_normal((i, o)) * (scale / np.sqrt(i)))])


def rmsnorm(g, x, d, eps=1e-6, recip=True):
    """RMSNorm decomposed: the inverse root by Reciprocal or Div of 1."""
    var = g.op("ReduceMean", [g.op("Pow", [x, g.c(np.float32(2))])], axes=[-1])
    r = g.op("Sqrt", [g.op("Add", [var, g.c(np.float32(eps))])])
    r = g.op("Reciprocal", [r]) if recip else g.op("Div", [g.c(np.float32(1)), r])
    return g.op("Mul", [g.c(1 + 0.1 * RNG.standard_normal(d)), g.op("Mul", [x, r])])


def gelu_pow(g, x):
    """GELU's tanh formula as HF's NewGELU exports: Pow(x, 3)."""
    inner = g.op("Add", [x, g.op("Mul", [g.c(np.float32(0.044715)),
                                         g.op("Pow", [x, g.c(np.float32(3))])])])
    t = g.op("Tanh", [g.op("Mul", [g.c(np.float32(np.sqrt(2 / np.pi))), inner])])
    half = g.op("Mul", [g.c(np.float32(0.5)), x])
    return g.op("Mul", [half, g.op("Add", [g.c(np.float32(1)), t])])


def t5_buckets(t, buckets=32, max_distance=128):
    """T5's bidirectional relative position buckets, [t, t]."""
    rel = np.arange(t)[None, :] - np.arange(t)[:, None]
    n = buckets // 2
    exact = n // 2
    a = np.abs(rel)
    large = exact + (np.log(np.maximum(a, 1) / exact) / np.log(max_distance / exact)
                     * (n - exact)).astype(np.int64)
    return (rel > 0) * n + np.where(a < exact, a, np.minimum(large, n - 1))


def t5enc(path, t=128, d=512, heads=8, layers=4, ff=1024, vocab=4096, buckets=32):
    g = G()
    hd = d // heads
    x = g.op("Gather", [g.c(RNG.standard_normal((vocab, d))), "ids"], axis=0)
    table = 0.5 * RNG.standard_normal((buckets, heads))
    bias = g.c(table[t5_buckets(t, buckets)].transpose(2, 0, 1)[None])
    for _ in range(layers):
        h = rmsnorm(g, x, d)
        # T5 folds the 1/sqrt(hd) into q's weights: the scores are not scaled
        q, k, v = (heads_of(g, proj(g, h, d, d, sc), t, heads, hd) for sc in (hd ** -0.5, 1, 1))
        s = g.op("Add", [g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])]), bias])
        o = g.op("MatMul", [g.op("Softmax", [s], axis=-1), v])
        x = g.op("Add", [x, proj(g, merge_heads(g, o, t, d), d, d)])
        h = rmsnorm(g, x, d)
        h = g.op("Mul", [gelu_pow(g, proj(g, h, d, ff)), proj(g, h, d, ff)])
        x = g.op("Add", [x, proj(g, h, ff, d)])
    y = rmsnorm(g, x, d)
    save(g, path, [helper.make_tensor_value_info("ids", I64, [1, t])],
         [helper.make_tensor_value_info(y, F, [1, t, d])])


def lrelu(g, x):
    return g.op("LeakyRelu", [x], alpha=0.2)


def scaled_add(g, y, x):
    """ESRGAN's residual scaling: y * 0.2 + x."""
    return g.op("Add", [g.op("Mul", [y, g.c(np.float32(0.2))]), x])


def rdb(g, x, nf, gc):
    """A residual dense block: five 3x3 Convs over the growing Concat."""
    feats = [x]
    for i in range(4):
        y = feats[0] if i == 0 else g.op("Concat", feats, axis=1)
        feats.append(lrelu(g, conv(g, y, nf + i * gc, gc)))
    return scaled_add(g, conv(g, g.op("Concat", feats, axis=1), nf + 4 * gc, nf), x)


def esrgan_f16(path, s=64, nf=32, gc=16, blocks=2):
    g = G(np.float16)
    fea = conv(g, g.op("Cast", ["x"], to=H), 3, nf)
    x = fea
    for _ in range(blocks):
        y = x
        for _ in range(3):
            y = rdb(g, y, nf, gc)
        x = scaled_add(g, y, x)
    x = g.op("Add", [fea, conv(g, x, nf, nf)])
    r = s
    for _ in range(2):
        x = g.op("Resize", [x, "", g.c(np.float32([1, 1, 2, 2]), np.float32)], mode="nearest",
                 coordinate_transformation_mode="asymmetric", nearest_mode="floor")
        x, r = lrelu(g, conv(g, x, nf, nf)), 2 * r
    y = g.op("Cast", [conv(g, x, nf, 3)], to=F)
    save(g, path, image_in(s), [helper.make_tensor_value_info(y, F, [1, 3, r, r])])


def rotary(g, x, cos, sin, hd):
    """x * cos + rotate_half(x) * sin, rotate_half by Slice/Neg/Concat."""
    def half(a, b):
        return g.op("Slice", [x, g.c(np.int64([a])), g.c(np.int64([b])), g.c(np.int64([-1]))])
    rot = g.op("Concat", [g.op("Neg", [half(hd // 2, np.iinfo(np.int64).max)]), half(0, hd // 2)],
               axis=-1)
    return g.op("Add", [g.op("Mul", [x, cos]), g.op("Mul", [rot, sin])])


def repeat_kv(g, x, t, kv, rep, hd):
    """[1, kv, t, hd] to [1, kv * rep, t, hd] by Unsqueeze/Expand/Reshape."""
    x = g.op("Unsqueeze", [x, g.c(np.int64([2]))])
    x = g.op("Expand", [x, g.c(np.int64([1, kv, rep, t, hd]))])
    return reshape(g, x, [1, kv * rep, t, hd])


def llama_f32(path, t=128, d=512, heads=8, kv=2, layers=4, ff=1408, vocab=4096, max_pos=512):
    g = G()
    hd = d // heads
    emb = g.c(0.02 * RNG.standard_normal((vocab, d)))
    x = g.op("Gather", [emb, "input_ids"], axis=0)
    inv = 1.0 / 10000 ** (np.arange(0, hd, 2) / hd)
    ang = np.arange(max_pos)[:, None] * inv[None, :]
    ang = np.concatenate([ang, ang], axis=1)
    pos = g.c(np.arange(t, dtype=np.int64)[None])
    cos, sin = (g.op("Unsqueeze", [g.op("Gather", [g.c(f(ang)), pos], axis=0), g.c(np.int64([1]))])
                for f in (np.cos, np.sin))
    mask = g.c(np.triu(np.full((t, t), np.finfo(np.float32).min), 1)[None, None])
    for _ in range(layers):
        h = rmsnorm(g, x, d, 1e-5, recip=False)
        q = rotary(g, heads_of(g, proj(g, h, d, d), t, heads, hd), cos, sin, hd)
        k = rotary(g, heads_of(g, proj(g, h, d, kv * hd), t, kv, hd), cos, sin, hd)
        v = heads_of(g, proj(g, h, d, kv * hd), t, kv, hd)
        k, v = (repeat_kv(g, a, t, kv, heads // kv, hd) for a in (k, v))
        s = g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])])
        s = g.op("Add", [g.op("Div", [s, g.c(np.float32(np.sqrt(hd)))]), mask])
        o = g.op("MatMul", [g.op("Softmax", [s], axis=-1), v])
        x = g.op("Add", [x, proj(g, merge_heads(g, o, t, d), d, d)])
        h = rmsnorm(g, x, d, 1e-5, recip=False)
        gate = proj(g, h, d, ff)
        h = g.op("Mul", [g.op("Mul", [gate, g.op("Sigmoid", [gate])]), proj(g, h, d, ff)])
        x = g.op("Add", [x, proj(g, h, ff, d)])
    x = rmsnorm(g, x, d, 1e-5, recip=False)
    y = g.op("MatMul", [x, g.op("Transpose", [emb], perm=[1, 0])])
    save(g, path, [helper.make_tensor_value_info("input_ids", I64, [1, t])],
         [helper.make_tensor_value_info(y, F, [1, t, vocab])])


def rpad(g, x, p):
    return g.op("Pad", [x, g.c(np.int64([0, 0, p, p] * 2))], mode="reflect")


def inr(g, x, c, relu=True):
    """InstanceNormalization, then Relu unless relu is False."""
    y = g.op("InstanceNormalization", [x, g.c(1 + 0.1 * RNG.standard_normal(c)),
                                       g.c(0.1 * RNG.standard_normal(c))], epsilon=1e-5)
    return g.op("Relu", [y]) if relu else y


def cyclegan(path, s=128, ngf=32, blocks=4):
    g = G()
    x, c = inr(g, conv(g, rpad(g, "x", 3), 3, ngf, 7, pad=0), ngf), ngf
    for _ in range(2):
        x, c = inr(g, conv(g, x, c, 2 * c, 3, 2), 2 * c), 2 * c
    for _ in range(blocks):
        y = inr(g, conv(g, rpad(g, x, 1), c, c, 3, pad=0), c)
        x = g.op("Add", [x, inr(g, conv(g, rpad(g, y, 1), c, c, 3, pad=0), c, relu=False)])
    for _ in range(2):
        x = g.op("ConvTranspose", [x, g.c(w(c, c // 2, 3, 3)), g.c(w(c // 2, scale=0.1))],
                 kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4, output_padding=[1, 1])
        x, c = inr(g, x, c // 2), c // 2
    y = g.op("Tanh", [conv(g, rpad(g, x, 3), c, 3, 7, pad=0)])
    save(g, path, image_in(s), [helper.make_tensor_value_info(y, F, [1, 3, s, s])])


def conv21(g, x, cin, cout, stride=1, tstride=None, mid=None):
    """A (2+1)D convolution: 1x3x3 spatial Conv, BatchNormalization, Relu,
    3x1x1 temporal Conv (of stride tstride, default stride); mid as
    R(2+1)D's (a 3x3x3's parameters)."""
    mid = mid or 27 * cin * cout // (9 * cin + 3 * cout)
    y = cbr(g, x, cin, mid, (1, 3, 3), (1, stride, stride))
    t = stride if tstride is None else tstride
    return conv(g, y, mid, cout, (3, 1, 1), (t, 1, 1), bias=False)


def block21(g, x, cin, cout, stride=1):
    y = g.op("Relu", [bn(g, conv21(g, x, cin, cout, stride), cout)])
    y = bn(g, conv21(g, y, cout, cout), cout)
    sc = x if stride == 1 and cin == cout else cbr(g, x, cin, cout, (1, 1, 1), stride, relu=False)
    return g.op("Relu", [g.op("Add", [sc, y])])


def c3d(path, frames=8, s=56, classes=400):
    g = G()
    x = g.op("Relu", [bn(g, conv21(g, "x", 3, 32, 2, 1, 45), 32)])
    c = 32
    for cout, stride, pool in ((32, 1, False), (64, 1, True), (128, 2, False)):
        if pool:
            x = g.op("MaxPool", [x], kernel_shape=[2, 2, 2], strides=[2, 2, 2])
        x, c = block21(g, block21(g, x, c, cout, stride), cout, cout), cout
    y = head(g, x, c, classes)
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 3, frames, s, s])],
         [helper.make_tensor_value_info(y, F, [1, classes])])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    regnet(os.path.join(out, "regnet.onnx"))
    t5enc(os.path.join(out, "t5enc.onnx"))
    esrgan_f16(os.path.join(out, "esrgan_f16.onnx"))
    llama_f32(os.path.join(out, "llama_f32.onnx"))
    cyclegan(os.path.join(out, "cyclegan.onnx"))
    c3d(os.path.join(out, "c3d.onnx"))


if __name__ == "__main__":
    main()
