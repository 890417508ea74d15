#!/usr/bin/python3
"""gen_broad.py DIR: the kinds of model issue 26 names beside the
convolutional ones of gen_nets.py and gen_lowp.py, for bench/broad.sh;
seeded, float32, opset 17, written without running opmig on them first
(held out from every tuning loop so far):
  nhwc.onnx   a tf2onnx-style NHWC conv net at 256x256: the input NHWC,
              each 3x3 convolution between a Transpose to NCHW and one
              back (as tf2onnx writes a TensorFlow Conv2D before its
              optimizer runs), the Relu, residual Add and Concat (axis 3)
              in NHWC, a ReduceMean over H and W and a MatMul head;
  lstm.onnx   a speech-style recurrent encoder: 200 frames of 80 features,
              a bidirectional LSTM of 256 then a forward one, a MatMul
              projection to 64 (batch 1);
  gru.onnx    the same with GRUs (linear_before_reset 1, as PyTorch
              exports);
  tiny.onnx   per-node overhead: a Loop of 64 iterations whose body runs
              an If (two branches of a few ops on a 1x16 vector) and 20
              elementwise ops on a 1x32 state, then 400 more tiny ops in
              the main graph.
nhwc, lstm and gru were profiled and tuned on (2026-12-06); these two
were written with them and not run until the final measurement:
  nhwc_dw.onnx  a tf2onnx-style NHWC MobileNet block stack at 224x224:
                1x1 expand, 3x3 depthwise, 1x1 project, each between
                Transposes, Clip 0..6 in NHWC, residual Adds;
  lstm_b4.onnx  batch 4, 50 frames of 40 features, one reverse LSTM of
                384 and a GRU of 128 (linear_before_reset 0), a
                projection to 32.
nhwc_dw and lstm_b4 were then profiled and tuned on too; these two were
written after that and not run until the final measurement:
  gru_bi.onnx    batch 2, 80 frames of 64 features, a bidirectional GRU
                 of 200 (linear_before_reset 1), an LSTM of 96 with
                 initial states, a projection to 16;
  nhwc_seg.onnx  a tf2onnx-style NHWC encoder-decoder at 192x192: strided
                 3x3 convolutions down, nearest Resize (as tf2onnx writes
                 tf.image.resize: scales on an NCHW Transpose) up,
                 Concat of the skips on axis 3, Sigmoid head."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(2027)
F = TensorProto.FLOAT


class G:
    def __init__(self, prefix=""):
        self.nodes, self.inits, self.k, self.p = [], [], 0, prefix

    def name(self, s):
        self.k += 1
        return "%s%s%d" % (self.p, s, self.k)

    def c(self, a):
        n = self.name("c")
        self.inits.append(numpy_helper.from_array(np.asarray(a), n))
        return n

    def op(self, op, ins, n_out=1, **at):
        ys = [self.name("v") for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, ins, ys, **at))
        return ys[0] if n_out == 1 else ys


def w(*shape):
    fan = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    return (RNG.standard_normal(shape) * np.sqrt(2.0 / fan)).astype(np.float32)


def save(g, path, ins, outs):
    graph = helper.make_graph(g.nodes, os.path.basename(path)[:-5], ins, outs, g.inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)


def tf_conv(g, x, cin, cout, stride=1):
    """a 3x3 convolution with bias and Relu of NHWC x, as tf2onnx writes
    it before its optimizer: between Transposes to NCHW and back"""
    t = g.op("Transpose", [x], perm=[0, 3, 1, 2])
    t = g.op("Conv", [t, g.c(w(cout, cin, 3, 3)), g.c(w(cout) * 0.1)],
             kernel_shape=[3, 3], pads=[1] * 4, strides=[stride] * 2)
    return g.op("Relu", [g.op("Transpose", [t], perm=[0, 2, 3, 1])])


def nhwc(path, s=256):
    g = G()

    def conv(x, cin, cout, stride=1):
        return tf_conv(g, x, cin, cout, stride)

    x = conv("x", 3, 16, 2)
    chans = 16
    for cout in (32, 64, 96):
        a = conv(x, chans, cout, 2)
        b = conv(a, cout, cout)
        b = g.op("Add", [b, a])
        x = g.op("Concat", [b, conv(b, cout, cout)], axis=3)
        chans = 2 * cout
    m = g.op("ReduceMean", [x], axes=[1, 2], keepdims=0)
    y = g.op("MatMul", [m, g.c(w(chans, 10))])
    save(g, path, [helper.make_tensor_value_info("x", F, [1, s, s, 3])],
         [helper.make_tensor_value_info(y, F, [1, 10])])


def rnn(path, kind, t=200, feat=80, hid=256):
    g = G()
    gates = 4 if kind == "LSTM" else 3
    at = {"linear_before_reset": 1} if kind == "GRU" else {}

    def layer(x, inp, dirs):
        ins = [x, g.c(w(dirs, gates * hid, inp)), g.c(w(dirs, gates * hid, hid)),
               g.c(w(dirs, 2 * gates * hid) * 0.1)]
        y = g.op(kind, ins, hidden_size=hid,
                 direction="bidirectional" if dirs == 2 else "forward", **at)
        # [T, dirs, 1, hid] -> [T, 1, dirs * hid]
        y = g.op("Transpose", [y], perm=[0, 2, 1, 3])
        return g.op("Reshape", [y, g.c(np.int64([t, 1, dirs * hid]))])

    y = layer("x", feat, 2)
    y = layer(y, 2 * hid, 1)
    y = g.op("MatMul", [y, g.c(w(hid, 64))])
    save(g, path, [helper.make_tensor_value_info("x", F, [t, 1, feat])],
         [helper.make_tensor_value_info(y, F, [t, 1, 64])])


def nhwc_dw(path, s=224):
    g = G()

    def conv(x, cin, cout, k=1, stride=1, group=1, act=True):
        t = g.op("Transpose", [x], perm=[0, 3, 1, 2])
        t = g.op("Conv", [t, g.c(w(cout, cin // group, k, k)), g.c(w(cout) * 0.1)],
                 kernel_shape=[k, k], pads=[k // 2] * 4, strides=[stride] * 2, group=group)
        t = g.op("Transpose", [t], perm=[0, 2, 3, 1])
        return g.op("Clip", [t, g.c(np.float32(0)), g.c(np.float32(6))]) if act else t

    x = conv("x", 3, 16, 3, 2)
    chans = 16
    for cout, stride in ((24, 2), (24, 1), (32, 2), (32, 1), (64, 2), (64, 1)):
        e = conv(x, chans, chans * 6)
        d = conv(e, chans * 6, chans * 6, 3, stride, chans * 6)
        y = conv(d, chans * 6, cout, act=False)
        x = g.op("Add", [y, x]) if stride == 1 and cout == chans else y
        chans = cout
    m = g.op("ReduceMean", [x], axes=[1, 2], keepdims=0)
    y = g.op("MatMul", [m, g.c(w(chans, 10))])
    save(g, path, [helper.make_tensor_value_info("x", F, [1, s, s, 3])],
         [helper.make_tensor_value_info(y, F, [1, 10])])


def rnn_b4(path, t=50, n=4, feat=40):
    g = G()
    y = g.op("LSTM", ["x", g.c(w(1, 4 * 384, feat)), g.c(w(1, 4 * 384, 384)),
                      g.c(w(1, 8 * 384) * 0.1)], hidden_size=384, direction="reverse")
    y = g.op("Reshape", [y, g.c(np.int64([t, n, 384]))])
    y = g.op("GRU", [y, g.c(w(1, 3 * 128, 384)), g.c(w(1, 3 * 128, 128)),
                     g.c(w(1, 6 * 128) * 0.1)], hidden_size=128)
    y = g.op("Reshape", [y, g.c(np.int64([t, n, 128]))])
    y = g.op("MatMul", [y, g.c(w(128, 32))])
    save(g, path, [helper.make_tensor_value_info("x", F, [t, n, feat])],
         [helper.make_tensor_value_info(y, F, [t, n, 32])])


def gru_bi(path, t=80, n=2, feat=64, hid=200):
    g = G()
    y = g.op("GRU", ["x", g.c(w(2, 3 * hid, feat)), g.c(w(2, 3 * hid, hid)),
                     g.c(w(2, 6 * hid) * 0.1)], hidden_size=hid, direction="bidirectional",
             linear_before_reset=1)
    y = g.op("Transpose", [y], perm=[0, 2, 1, 3])
    y = g.op("Reshape", [y, g.c(np.int64([t, n, 2 * hid]))])
    h0 = g.c(w(1, n, 96) * 0.5)
    c0 = g.c(w(1, n, 96) * 0.5)
    y = g.op("LSTM", [y, g.c(w(1, 4 * 96, 2 * hid)), g.c(w(1, 4 * 96, 96)),
                      g.c(w(1, 8 * 96) * 0.1), "", h0, c0], hidden_size=96)
    y = g.op("Reshape", [y, g.c(np.int64([t, n, 96]))])
    y = g.op("MatMul", [y, g.c(w(96, 16))])
    save(g, path, [helper.make_tensor_value_info("x", F, [t, n, feat])],
         [helper.make_tensor_value_info(y, F, [t, n, 16])])


def nhwc_seg(path, s=192):
    g = G()

    def conv(x, cin, cout, stride=1):
        return tf_conv(g, x, cin, cout, stride)

    skips, x, chans = [], "x", 3
    for cout in (16, 32, 64):
        x = conv(conv(x, chans, cout), cout, cout, 2)
        skips.append((x, cout))
        chans = cout
    for sk, c in reversed(skips[:-1]):
        t = g.op("Transpose", [x], perm=[0, 3, 1, 2])
        t = g.op("Resize", [t, "", g.c(np.float32([1, 1, 2, 2]))], mode="nearest")
        x = g.op("Concat", [g.op("Transpose", [t], perm=[0, 2, 3, 1]), sk], axis=3)
        x = conv(x, chans + c, c)
        chans = c
    t = g.op("Transpose", [x], perm=[0, 3, 1, 2])
    t = g.op("Conv", [t, g.c(w(1, chans, 1, 1))], kernel_shape=[1, 1])
    y = g.op("Sigmoid", [g.op("Transpose", [t], perm=[0, 2, 3, 1])])
    save(g, path, [helper.make_tensor_value_info("x", F, [1, s, s, 3])],
         [helper.make_tensor_value_info(y, F, [1, s // 2, s // 2, 1])])


UN = ["Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Exp"]


def tiny_ops(g, x, n, width):
    for i in range(n):
        r = i % 5
        if r == 0:
            x = g.op("Add", [x, g.c(w(1, width) * 0.1)])
        elif r == 1:
            x = g.op("Mul", [x, g.c(np.float32(0.5 + 0.01 * i))])
        elif r == 2:
            x = g.op(UN[i % len(UN)] if UN[i % len(UN)] != "Exp" else "Tanh", [x])
        elif r == 3:
            x = g.op("Clip", [x, g.c(np.float32(-3)), g.c(np.float32(3))])
        else:
            x = g.op("Sub", [x, g.op("ReduceMean", [x], axes=[1], keepdims=1)])
    return x


def tiny(path, iters=64):
    b = G("b_")
    branches = []
    for k in range(2):
        bg = G("br%d_" % k)
        y = tiny_ops(bg, "s", 4 + k, 32)
        branches.append(helper.make_graph(bg.nodes, "branch%d" % k, [],
                                          [helper.make_tensor_value_info(y, F, [1, 32])],
                                          bg.inits))
    cond = b.op("Greater", [b.op("ReduceSum", ["s"], keepdims=0), b.c(np.float32(0))])
    s = b.op("If", [cond], then_branch=branches[0], else_branch=branches[1])
    s = tiny_ops(b, s, 20, 32)
    keep = b.op("Identity", ["cond_in"])
    body = helper.make_graph(
        b.nodes, "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s", F, [1, 32])],
        [helper.make_tensor_value_info(keep, TensorProto.BOOL, []),
         helper.make_tensor_value_info(s, F, [1, 32])], b.inits)
    g = G()
    y = g.op("Loop", [g.c(np.int64(iters)), g.c(np.bool_(True)), "x"], body=body)
    y = tiny_ops(g, y, 400, 32)
    save(g, path, [helper.make_tensor_value_info("x", F, [1, 32])],
         [helper.make_tensor_value_info(y, F, [1, 32])])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    nhwc(os.path.join(out, "nhwc.onnx"))
    rnn(os.path.join(out, "lstm.onnx"), "LSTM")
    rnn(os.path.join(out, "gru.onnx"), "GRU")
    tiny(os.path.join(out, "tiny.onnx"))
    nhwc_dw(os.path.join(out, "nhwc_dw.onnx"))
    rnn_b4(os.path.join(out, "lstm_b4.onnx"))
    gru_bi(os.path.join(out, "gru_bi.onnx"))
    nhwc_seg(os.path.join(out, "nhwc_seg.onnx"))


if __name__ == "__main__":
    main()
