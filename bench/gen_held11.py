#!/usr/bin/python3
"""gen_held11.py DIR: an eleventh held-out set for bench/broad.sh
(BROAD_SET=held11), written 2026-12-07 before any tuning on it and not
run through opmig when written: for a later round's first measurement
(broad.sh quantizes two of them with `opmig quantize` first); seeded,
opset 17, checked with onnx.checker:
  hifigan.onnx       a HiFi-GAN-V1-style neural vocoder in float32 on an
                     80-bin mel of 64 frames ([1, 80, 64]): a kernel-7
                     1-D Conv to 128 channels, four upsampling stages of
                     strides (8, 8, 2, 2) (LeakyRelu 0.1, a 1-D
                     ConvTranspose of kernel twice the stride, padded
                     half the stride, halving the channels to 64, 32, 16
                     and 8), each followed by a multi-receptive-field
                     fusion: three residual blocks of kernels 3, 7 and
                     11, each three units of (LeakyRelu 0.1, a 1-D Conv
                     of dilation 1, 3 or 5 padded to keep the length,
                     LeakyRelu 0.1, a 1-D Conv of dilation 1, the
                     residual Add), the three blocks' outputs Added and
                     Divided by 3; LeakyRelu 0.01, a kernel-7 1-D Conv to
                     one channel, Tanh: [1, 1, 16384] samples;
  segformer_f16.onnx a SegFormer-B0-style semantic segmenter in float16
                     (Cast in and out) on a 256x256 image: a Mix
                     Transformer encoder of four stages of widths (32,
                     64, 160, 256), each an overlapping patch embedding
                     (a 7x7 stride-4 Conv in the first, 3x3 stride-2
                     Convs after, flattened to tokens by Reshape and
                     Transpose, LayerNormalization) and two pre-LN
                     blocks: efficient self-attention of (1, 2, 5, 8)
                     heads of 32 (a q MatMul; the tokens back to an image
                     and a spatial-reduction Conv of kernel and stride
                     (8, 4, 2) with LayerNormalization, none in the last
                     stage; one kv MatMul Reshaped to [1, n, 2, heads,
                     32], Transposed and Gathered into k and v; scaled
                     scores, Softmax, an output MatMul) and a Mix-FFN
                     (a MatMul to 4x, a 3x3 depthwise Conv on the tokens
                     as an image, GELU as Erf, a MatMul back), residual
                     Adds, a LayerNormalization ending each stage; an
                     all-MLP decoder (each stage's tokens by a MatMul to
                     256, back to an image, linear Resize (half_pixel)
                     of the three smaller to the 64x64 of the first,
                     Concat in reverse order to 1024, a 1x1 Conv to 256
                     with BatchNormalization and Relu, a 1x1 Conv to 19
                     classes): [1, 19, 64, 64] logits;
  dlrm.onnx          a DLRM-style click-through recommender in float32 on
                     a batch of 256: 13 dense features through a bottom
                     MLP of Gemms 13 -> 512 -> 256 -> 64 with Relu; eight
                     sparse features as int64 index inputs [256], each
                     Gathered from its own embedding table of 10000 by
                     64; the dot interaction (each of the nine [256, 64]
                     vectors Unsqueezed and Concatenated to [256, 9, 64],
                     a MatMul by its Transpose to [256, 9, 9], Reshaped
                     to [256, 81], the 36 pairs above the diagonal by a
                     Gather of a constant flat index), Concat with the
                     bottom MLP's output to 100 features, a top MLP of
                     Gemms 100 -> 1024 -> 1024 -> 512 -> 256 -> 1 with
                     Relu (DLRM's Terabyte widths; with 512 -> 256 it
                     took 1.3 ms in onnxruntime at one thread), Sigmoid:
                     [256, 1] click probabilities;
  resnext_se.onnx    a SE-ResNeXt-50-32x4d-style classifier in float32 at
                     224x224, cut to its first two stages: a 7x7 stride-2
                     stem to 64 with BatchNormalization and Relu, a 3x3
                     stride-2 MaxPool, three bottleneck blocks of 256
                     channels at 56x56 and four of 512 at 28x28 (the
                     first entering by stride 2 in its grouped Conv):
                     a 1x1 Conv to the group width (128, 256), a GROUPED
                     3x3 Conv of cardinality 32 (4 and 8 channels a
                     group), a 1x1 Conv out, each Conv followed by
                     BatchNormalization (and Relu but the last),
                     Squeeze-Excitation of reduction 16
                     (GlobalAveragePool, 1x1 Conv, Relu, 1x1 Conv,
                     Sigmoid, Mul), a 1x1 Conv and BatchNormalization as
                     the shortcut where the shape changes, the residual
                     Add and Relu; GlobalAveragePool and a 1000-class
                     Gemm head;
  resnext_qdq.onnx   broad.sh writes it: resnext_se.onnx quantized static
                     QDQ;
  demucs_like.onnx   a Demucs(v2)-style waveform source separator in
                     float32 on about one second of stereo 16 kHz audio
                     ([1, 2, 16212], the valid length nearest 16000 of
                     four levels): the mix normalized by the mean and
                     standard deviation of its mono sum (ReduceMean, Sub,
                     Pow, Sqrt, Add eps, Div); an encoder of four levels
                     of (32, 64, 128, 256) channels, each a kernel-8
                     stride-4 1-D Conv, Relu, a 1x1 Conv to twice the
                     channels and GLU (Split, Sigmoid, Mul); a two-layer
                     bidirectional LSTM of 256 over the 62 bottleneck
                     frames (the ONNX LSTM op, between Transposes and
                     Reshapes) and a MatMul from 512 back to 256; a
                     decoder of four levels, each the skip of its
                     encoder level Added, a 3-wide 1-D Conv to twice the
                     channels and GLU, a kernel-8 stride-4 1-D
                     ConvTranspose to the level below's channels and Relu
                     (the last to 4 sources times 2 channels, no Relu);
                     the normalization undone (Mul, Add) and Reshaped to
                     [1, 4, 2, 16212];
  demucs_dyn.onnx    broad.sh writes it: demucs_like.onnx quantized by
                     `opmig quantize --dynamic`;
  nerf_mlp.onnx      a NeRF-style radiance-field MLP in float32 on 4096
                     sample points (64 rays of 64 samples; NeRF's chunk
                     of 65536 would take some 0.5 s in onnxruntime at one
                     thread): positional encoding of the [4096, 3] points
                     (10 frequencies: the points Unsqueezed, Mul by the
                     powers of two 1 .. 512, Sin and Cos, Concat,
                     Reshape, Concat with the points: 63 features) and
                     of the [4096, 3] view directions (4 frequencies: 27
                     features); eight Gemms of 256 with Relu, the
                     encoded points Concatenated to the fifth's output
                     as the skip into the sixth (NeRF's skips [4]); a
                     density Gemm to 1 with Relu, a feature Gemm to 256
                     Concatenated with the encoded directions, a Gemm to
                     128 with Relu and a colour Gemm to 3 with Sigmoid:
                     [4096, 3] colours and [4096, 1] densities."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

from gen_broad import save
from gen_held import G, bn, gelu
from gen_held4 import ln, lin
from gen_held7 import heads_of, image_in, merge_heads, reshape, split

RNG = np.random.default_rng(57885161)
F = TensorProto.FLOAT
H = TensorProto.FLOAT16
I64 = TensorProto.INT64


def w(*shape, scale=1.0):
    """He-scaled normal weights, the fan all dims but the first."""
    fan = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    return (RNG.standard_normal(shape) * np.sqrt(2.0 / fan) * scale).astype(np.float32)


def conv(g, x, cin, cout, k=3, stride=1, group=1, pad=None, bias=True, scale=1.0, dil=1):
    """A Conv of any rank: k and stride ints (2-D) or tuples; pad (each
    side) keeps the size at stride 1 unless given."""
    ks = list(k) if isinstance(k, tuple) else [k, k]
    st = list(stride) if isinstance(stride, tuple) else [stride] * len(ks)
    p = [(q - 1) * dil // 2 if pad is None else pad for q in ks] * 2
    ins = [x, g.c(w(cout, cin // group, *ks, scale=scale))]
    if bias:
        ins.append(g.c(w(cout, scale=0.1)))
    return g.op("Conv", ins, kernel_shape=ks, strides=st, group=group, pads=p,
                dilations=[dil] * len(ks))


def cba(g, x, cin, cout, k=1, stride=1, group=1, act="Relu"):
    """Conv without bias, BatchNormalization, then the activation act
    (an operator's name) unless act is None."""
    y = bn(g, conv(g, x, cin, cout, k, stride, group, bias=False), cout)
    return g.op(act, [y]) if act else y


def convt1(g, x, cin, cout, k, stride, pad=0, scale=1.0):
    """A 1-D ConvTranspose with a bias."""
    return g.op("ConvTranspose", [x, g.c(w(cin, cout, k, scale=scale)), g.c(w(cout, scale=0.1))],
                kernel_shape=[k], strides=[stride], pads=[pad, pad])


def lrelu(g, x, a=0.1):
    return g.op("LeakyRelu", [x], alpha=a)


def mrf_block(g, x, c, k, dils=(1, 3, 5)):
    """HiFi-GAN's ResBlock1: per dilation a dilated and a plain Conv."""
    for d in dils:
        y = conv(g, lrelu(g, x), c, c, (k,), dil=d, scale=0.5)
        y = conv(g, lrelu(g, y), c, c, (k,), scale=0.5)
        x = g.op("Add", [x, y])
    return x


def hifigan(path, mels=80, frames=64, c0=128, rates=(8, 8, 2, 2), kernels=(3, 7, 11)):
    g = G()
    x, c = conv(g, "x", mels, c0, (7,)), c0
    for u in rates:
        x = convt1(g, lrelu(g, x), c, c // 2, 2 * u, u, u // 2)
        c //= 2
        s = None
        for k in kernels:
            y = mrf_block(g, x, c, k)
            s = y if s is None else g.op("Add", [s, y])
        x = g.op("Div", [s, g.c(np.float32(len(kernels)))])
    y = g.op("Tanh", [conv(g, lrelu(g, x, 0.01), c, 1, (7,))])
    n = frames * int(np.prod(rates))
    save(g, path, [helper.make_tensor_value_info("x", F, [1, mels, frames])],
         [helper.make_tensor_value_info(y, F, [1, 1, n])])


def tokens(g, x, c, n):
    """[1, c, h, w] to [1, n, c]."""
    return g.op("Transpose", [reshape(g, x, [1, c, n])], perm=[0, 2, 1])


def image(g, x, c, h, w_):
    """[1, h * w_, c] to [1, c, h, w_]."""
    return reshape(g, g.op("Transpose", [x], perm=[0, 2, 1]), [1, c, h, w_])


def seg_attention(g, x, c, h, w_, heads, sr):
    n, hd = h * w_, c // heads
    q = heads_of(g, lin(g, x, c, c), n, heads, hd)
    kv, m = x, n
    if sr > 1:
        kv = conv(g, image(g, x, c, h, w_), c, c, sr, sr, pad=0)
        m = n // (sr * sr)
        kv = ln(g, tokens(g, kv, c, m), c, 1e-5)
    kv = g.op("Transpose", [reshape(g, lin(g, kv, c, 2 * c), [1, m, 2, heads, hd])],
              perm=[2, 0, 3, 1, 4])
    k = g.op("Gather", [kv, g.c(np.int64(0))], axis=0)
    v = g.op("Gather", [kv, g.c(np.int64(1))], axis=0)
    a = g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])])
    a = g.op("Softmax", [g.op("Mul", [a, g.c(np.float32(hd ** -0.5))])], axis=-1)
    return lin(g, merge_heads(g, g.op("MatMul", [a, v]), n, c), c, c)


def mix_ffn(g, x, c, h, w_, r=4):
    e = c * r
    y = image(g, lin(g, x, c, e), e, h, w_)
    y = tokens(g, conv(g, y, e, e, 3, group=e), e, h * w_)
    return lin(g, gelu(g, y), e, c)


# SegFormer-B0's stages: width, heads, spatial reduction, patch kernel, stride
MIT_B0 = ((32, 1, 8, 7, 4), (64, 2, 4, 3, 2), (160, 5, 2, 3, 2), (256, 8, 1, 3, 2))


def segformer_f16(path, s=256, depth=2, dec=256, classes=19):
    g = G(np.float16)
    x, cin, h, feats = g.op("Cast", ["x"], to=H), 3, s, []
    for c, heads, sr, k, stride in MIT_B0:
        h //= stride
        x = ln(g, tokens(g, conv(g, x, cin, c, k, stride), c, h * h), c, 1e-5)
        for _ in range(depth):
            x = g.op("Add", [x, seg_attention(g, ln(g, x, c, 1e-6), c, h, h, heads, sr)])
            x = g.op("Add", [x, mix_ffn(g, ln(g, x, c, 1e-6), c, h, h)])
        x = image(g, ln(g, x, c, 1e-6), c, h, h)
        feats.append((x, c, h))
        cin = c
    top = feats[0][2]
    ups = []
    for x, c, h in reversed(feats):
        y = image(g, lin(g, tokens(g, x, c, h * h), c, dec), dec, h, h)
        if h != top:
            y = g.op("Resize", [y, "", "", g.c(np.int64([1, dec, top, top]))], mode="linear",
                     coordinate_transformation_mode="half_pixel")
        ups.append(y)
    y = cba(g, g.op("Concat", ups, axis=1), 4 * dec, dec, 1)
    y = g.op("Cast", [conv(g, y, dec, classes, 1)], to=F)
    save(g, path, image_in(s), [helper.make_tensor_value_info(y, F, [1, classes, top, top])])


def mlp(g, x, widths, last_relu=True):
    """Gemms (torch's 2-D Linear) with Relu."""
    for i, (a, b) in enumerate(zip(widths, widths[1:])):
        x = g.op("Gemm", [x, g.c(w(b, a)), g.c(w(b, scale=0.1))], transB=1)
        if last_relu or i < len(widths) - 2:
            x = g.op("Relu", [x])
    return x


def dlrm(path, b=256, dense=13, tables=8, rows=10000, d=64, bottom=(512, 256),
         top=(1024, 1024, 512, 256)):
    g = G()
    z = mlp(g, "dense", (dense, *bottom, d))
    vs = [z]
    for i in range(tables):
        t = g.c(RNG.standard_normal((rows, d)) * 0.05)
        vs.append(g.op("Gather", [t, "sparse%d" % i], axis=0))
    f = tables + 1
    t = g.op("Concat", [g.op("Unsqueeze", [v, g.c(np.int64([1]))]) for v in vs], axis=1)
    zz = reshape(g, g.op("MatMul", [t, g.op("Transpose", [t], perm=[0, 2, 1])]), [b, f * f])
    iu = np.int64([i * f + j for i in range(f) for j in range(i + 1, f)])
    zz = g.op("Gather", [zz, g.c(iu)], axis=1)
    y = mlp(g, g.op("Concat", [z, zz], axis=1), (d + len(iu), *top, 1), last_relu=False)
    y = g.op("Sigmoid", [y])
    ins = [helper.make_tensor_value_info("dense", F, [b, dense])]
    ins += [helper.make_tensor_value_info("sparse%d" % i, I64, [b]) for i in range(tables)]
    save(g, path, ins, [helper.make_tensor_value_info(y, F, [b, 1])])


def se(g, x, c, squeeze):
    s = g.op("Relu", [conv(g, g.op("GlobalAveragePool", [x]), c, squeeze, 1)])
    return g.op("Mul", [x, g.op("Sigmoid", [conv(g, s, squeeze, c, 1)])])


def resnext_block(g, x, cin, width, cout, stride, card=32, red=16):
    y = cba(g, x, cin, width, 1)
    y = cba(g, y, width, width, 3, stride, card)
    y = se(g, cba(g, y, width, cout, 1, act=None), cout, cout // red)
    sc = x if stride == 1 and cin == cout else cba(g, x, cin, cout, 1, stride, act=None)
    return g.op("Relu", [g.op("Add", [sc, y])])


def resnext_se(path, s=224, stages=((128, 256, 3), (256, 512, 4)), classes=1000):
    g = G()
    x = cba(g, "x", 3, 64, 7, 2)
    x = g.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)
    cin = 64
    for i, (width, cout, n) in enumerate(stages):
        for j in range(n):
            x = resnext_block(g, x, cin, width, cout, 2 if i and not j else 1)
            cin = cout
    x = g.op("Flatten", [g.op("GlobalAveragePool", [x])])
    y = g.op("Gemm", [x, g.c(w(classes, cin)), g.c(w(classes, scale=0.1))], transB=1)
    save(g, path, image_in(s), [helper.make_tensor_value_info(y, F, [1, classes])])


def glu(g, x, c):
    """torch's GLU over the channels: a * Sigmoid(b)."""
    a, b = split(g, x, [c, c], 1)
    return g.op("Mul", [a, g.op("Sigmoid", [b])])


def blstm(g, x, t, i, hid):
    """A bidirectional LSTM layer on [t, 1, i]: [t, 1, 2 * hid]."""
    y = g.op("LSTM", [x, g.c(w(2, 4 * hid, i, scale=0.7)), g.c(w(2, 4 * hid, hid, scale=0.7)),
                      g.c(w(2, 8 * hid, scale=0.1))], hidden_size=hid, direction="bidirectional")
    return reshape(g, g.op("Transpose", [y], perm=[0, 2, 1, 3]), [t, 1, 2 * hid])


def demucs_like(path, n=16212, audio=2, sources=4, widths=(32, 64, 128, 256), k=8, stride=4):
    g = G()
    mono = g.op("ReduceMean", ["x"], axes=[1], keepdims=1)
    mean = g.op("ReduceMean", [mono], axes=[-1], keepdims=1)
    dev = g.op("Sub", [mono, mean])
    var = g.op("ReduceMean", [g.op("Pow", [dev, g.c(np.float32(2))])], axes=[-1], keepdims=1)
    std = g.op("Sqrt", [var])
    x = g.op("Div", [g.op("Sub", ["x", mean]), g.op("Add", [g.c(np.float32(1e-5)), std])])
    cin, skips, t = audio, [], n
    for c in widths:
        x = g.op("Relu", [conv(g, x, cin, c, (k,), stride, pad=0)])
        x = glu(g, conv(g, x, c, 2 * c, (1,)), c)
        skips.append(x)
        cin, t = c, (t - k) // stride + 1
    c = widths[-1]
    y = g.op("Transpose", [x], perm=[2, 0, 1])  # [t, 1, c]
    y = blstm(g, blstm(g, y, t, c, c), t, 2 * c, c)
    y = lin(g, y, 2 * c, c)
    x = g.op("Transpose", [y], perm=[1, 2, 0])
    outs = (*widths[-2::-1], sources * audio)
    for i, (c, cout) in enumerate(zip(widths[::-1], outs)):
        x = g.op("Add", [x, skips.pop()])
        x = glu(g, conv(g, x, c, 2 * c, (3,)), c)
        x = convt1(g, x, c, cout, k, stride)
        if i < len(widths) - 1:
            x = g.op("Relu", [x])
    x = reshape(g, x, [1, sources, audio, n])
    y = g.op("Add", [g.op("Mul", [x, g.op("Unsqueeze", [std, g.c(np.int64([1]))])]),
                     g.op("Unsqueeze", [mean, g.c(np.int64([1]))])])
    save(g, path, [helper.make_tensor_value_info("x", F, [1, audio, n])],
         [helper.make_tensor_value_info(y, F, [1, sources, audio, n])])


def posenc(g, x, n, freqs):
    """NeRF's embedding: [x, sin(x f0), cos(x f0), ...]: [n, 3 + 6 freqs]."""
    p = g.op("Mul", [g.op("Unsqueeze", [x, g.c(np.int64([1]))]),
                     g.c(np.float32(2.0 ** np.arange(freqs)).reshape(1, freqs, 1))])
    e = g.op("Concat", [g.op("Sin", [p]), g.op("Cos", [p])], axis=2)  # [n, freqs, 6]
    return g.op("Concat", [x, reshape(g, e, [n, 6 * freqs])], axis=1)


def nerf_mlp(path, n=4096, wd=256, depth=8, skip=4, pf=10, df=4):
    g = G()
    pts, dirs = posenc(g, "pts", n, pf), posenc(g, "dirs", n, df)
    ip, idr = 3 + 6 * pf, 3 + 6 * df
    h, cin = pts, ip
    for i in range(depth):
        h, cin = mlp(g, h, (cin, wd)), wd
        if i == skip:
            h, cin = g.op("Concat", [pts, h], axis=1), ip + wd
    sigma = mlp(g, h, (wd, 1))
    feat = mlp(g, h, (wd, wd), last_relu=False)
    rgb = mlp(g, mlp(g, g.op("Concat", [feat, dirs], axis=1), (wd + idr, wd // 2)),
              (wd // 2, 3), last_relu=False)
    rgb = g.op("Sigmoid", [rgb])
    save(g, path, [helper.make_tensor_value_info("pts", F, [n, 3]),
                   helper.make_tensor_value_info("dirs", F, [n, 3])],
         [helper.make_tensor_value_info(rgb, F, [n, 3]),
          helper.make_tensor_value_info(sigma, F, [n, 1])])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    hifigan(os.path.join(out, "hifigan.onnx"))
    segformer_f16(os.path.join(out, "segformer_f16.onnx"))
    dlrm(os.path.join(out, "dlrm.onnx"))
    resnext_se(os.path.join(out, "resnext_se.onnx"))
    demucs_like(os.path.join(out, "demucs_like.onnx"))
    nerf_mlp(os.path.join(out, "nerf_mlp.onnx"))


if __name__ == "__main__":
    main()
