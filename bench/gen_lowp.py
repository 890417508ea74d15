#!/usr/bin/python3
"""gen_lowp.py DIR: float16 models for bench/lowp.sh (issue 26, item 2),
seeded, float32 interface with Casts around the float16 body:
  rsu_f16.onnx   a U2-Net-style RSU block at 1024x1024: stem 3->16, an
                 encoder of 3x3 convolutions with dilations 1, 2, 4, 8
                 (16 channels), a decoder concatenating each level with
                 the one below (32->16), a residual add and a sigmoid;
  enc_f16.onnx   a transformer encoder layer (sequence 256, hidden 256, 4
                 heads, MatMul/Softmax/LayerNormalization/Erf-GELU), never
                 looked at while writing the float16 path: the held-out
                 model;
  unet_f16.onnx  a U-Net at 512x512 (2 convolutions per level, 16 to 128
                 channels, MaxPool down, linear Resize up, Concat with the
                 skip, 1x1 head, sigmoid), written after the channels-last
                 work and never tuned on: held out;
  det_f16.onnx   a YOLO-style detector at 640x640 (strided 3x3
                 convolutions with SiLU as Sigmoid and Mul, 16 to 128
                 channels down to 20x20, a neck of nearest 2x Resize and
                 Concat, three 1x1 heads), written with the U-Net and never
                 run before the final measurement: held out;
and rsu_f32.onnx, enc_f32.onnx, unet_f32.onnx, det_f32.onnx: the same
graphs in float32 (the float16 weights widened, the Casts to float32)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(2026)
H = TensorProto.FLOAT16


class G:
    def __init__(self):
        self.nodes, self.inits, self.k = [], [], 0

    def c(self, a):
        self.k += 1
        n = "c%d" % self.k
        self.inits.append(numpy_helper.from_array(np.asarray(a), n))
        return n

    def op(self, op, ins, **at):
        self.k += 1
        o = "%s%d" % (op.lower(), self.k)
        self.nodes.append(helper.make_node(op, ins, [o], **at))
        return o

    def conv(self, x, ci, co, d=1):
        w = (RNG.standard_normal((co, ci, 3, 3)) * np.sqrt(2.0 / (9 * ci))).astype(np.float16)
        b = (RNG.standard_normal(co) * 0.1).astype(np.float16)
        return self.op("Relu", [self.op("Conv", [x, self.c(w), self.c(b)], kernel_shape=[3, 3],
                                        pads=[d] * 4, dilations=[d, d])])

    def save(self, y, shape_in, shape_out, path):
        self.nodes.insert(0, helper.make_node("Cast", ["x"], ["xh"], to=H))
        self.nodes.append(helper.make_node("Cast", [y], ["y"], to=TensorProto.FLOAT))
        g = helper.make_graph(self.nodes, os.path.basename(path),
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape_in)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape_out)],
                              self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        onnx.checker.check_model(m, full_check=True)
        onnx.save(m, path)


def rsu(path, s=1024, c=16):
    g = G()
    x0 = g.conv("xh", 3, c)
    enc = [g.conv(x0, c, c, 1)]
    for d in (2, 4, 8):
        enc.append(g.conv(enc[-1], c, c, d))
    y = enc[-1]
    for d, e in zip((4, 2, 1), reversed(enc[:-1])):
        y = g.conv(g.op("Concat", [y, e], axis=1), 2 * c, c, d)
    y = g.op("Sigmoid", [g.op("Add", [y, x0])])
    g.save(y, [1, 3, s, s], [1, c, s, s], path)


def encoder(path, t=256, h=256, heads=4):
    g = G()
    d = h // heads

    def lin(x, i, o):
        w = (RNG.standard_normal((i, o)) / np.sqrt(i)).astype(np.float16)
        return g.op("Add", [g.op("MatMul", [x, g.c(w)]), g.c(np.zeros(o, np.float16))])

    def ln(x):
        return g.op("LayerNormalization", [x, g.c(np.ones(h, np.float16)),
                                           g.c(np.zeros(h, np.float16))], axis=-1)

    x = "xh"
    heads_of = lambda v: g.op("Transpose", [g.op("Reshape", [v, g.c(np.int64([1, t, heads, d]))])],
                              perm=[0, 2, 1, 3])
    q, k, v = (heads_of(lin(x, h, h)) for _ in range(3))
    s = g.op("Mul", [g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])]),
                     g.c(np.float16(1 / np.sqrt(d)))])
    a = g.op("MatMul", [g.op("Softmax", [s], axis=-1), v])
    a = g.op("Reshape", [g.op("Transpose", [a], perm=[0, 2, 1, 3]), g.c(np.int64([1, t, h]))])
    x = ln(g.op("Add", [x, lin(a, h, h)]))
    f = lin(x, h, 4 * h)
    f = g.op("Mul", [g.op("Mul", [f, g.c(np.float16(0.5))]),
                     g.op("Add", [g.op("Erf", [g.op("Div", [f, g.c(np.float16(np.sqrt(2)))])]),
                                  g.c(np.float16(1))])])
    x = ln(g.op("Add", [x, lin(f, 4 * h, h)]))
    g.save(x, [1, t, h], [1, t, h], path)


def unet(path, s=512, chans=(16, 32, 64, 128)):
    g = G()
    x, ci, skips = "xh", 3, []
    for i, c in enumerate(chans):
        x = g.conv(g.conv(x, ci, c), c, c)
        ci = c
        if i < len(chans) - 1:
            skips.append(x)
            x = g.op("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    for c, sk in zip(reversed(chans[:-1]), reversed(skips)):
        up = g.op("Resize", [x, "", g.c(np.float32([1, 1, 2, 2]))], mode="linear")
        x = g.conv(g.conv(g.op("Concat", [up, sk], axis=1), ci + c, c), c, c)
        ci = c
    w = (RNG.standard_normal((1, ci, 1, 1)) / np.sqrt(ci)).astype(np.float16)
    y = g.op("Sigmoid", [g.op("Conv", [x, g.c(w), g.c(np.zeros(1, np.float16))],
                              kernel_shape=[1, 1])])
    g.save(y, [1, 3, s, s], [1, 1, s, s], path)


def det(path, s=640):
    g = G()

    def cbs(x, ci, co, k=3, st=1):
        w = (RNG.standard_normal((co, ci, k, k)) * np.sqrt(2.0 / (k * k * ci))).astype(np.float16)
        b = (RNG.standard_normal(co) * 0.1).astype(np.float16)
        y = g.op("Conv", [x, g.c(w), g.c(b)], kernel_shape=[k, k], strides=[st, st],
                 pads=[k // 2] * 4)
        return g.op("Mul", [y, g.op("Sigmoid", [y])])

    x = cbs(cbs("xh", 3, 16, st=2), 16, 32, st=2)          # 160
    feats, ci = [], 32
    for co in (32, 64, 128, 128):                          # 80, 40, 20 (and 20)
        st = 2 if co != 128 or ci != 128 else 1
        x = cbs(cbs(x, ci, co, st=st), co, co)
        ci = co
        feats.append(x)
    p5 = feats[3]
    up = g.op("Resize", [p5, "", g.c(np.float32([1, 1, 2, 2]))], mode="nearest")
    p4 = cbs(g.op("Concat", [up, feats[1]], axis=1), 128 + 64, 64)
    up = g.op("Resize", [p4, "", g.c(np.float32([1, 1, 2, 2]))], mode="nearest")
    p3 = cbs(g.op("Concat", [up, feats[0]], axis=1), 64 + 32, 32)
    heads = []
    for f, c in ((p3, 32), (p4, 64), (p5, 128)):
        w = (RNG.standard_normal((85, c, 1, 1)) / np.sqrt(c)).astype(np.float16)
        heads.append(g.op("Conv", [f, g.c(w), g.c(np.zeros(85, np.float16))],
                          kernel_shape=[1, 1]))
    # one output: the three heads' maps flattened and joined
    flat = [g.op("Reshape", [h, g.c(np.int64([1, 85, -1]))]) for h in heads]
    y = g.op("Concat", flat, axis=2)
    n = (s // 8) ** 2 + (s // 16) ** 2 + (s // 32) ** 2
    g.save(y, [1, 3, s, s], [1, 85, n], path)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, make in (("rsu", rsu), ("enc", encoder), ("unet", unet), ("det", det)):
        f16 = os.path.join(out, name + "_f16.onnx")
        make(f16)
        widen(f16, os.path.join(out, name + "_f32.onnx"))
    return 0


def widen(src, dst):
    m = onnx.load(src)
    for t in m.graph.initializer:
        if t.data_type == H:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float32),
                                               t.name))
    for n in m.graph.node:
        for a in n.attribute:
            if n.op_type == "Cast" and a.name == "to":
                a.i = TensorProto.FLOAT
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, dst)


if __name__ == "__main__":
    sys.exit(main())
