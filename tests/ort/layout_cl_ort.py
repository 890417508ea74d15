"""layout_cl_ort.py OPMIG WORKDIR: results stored channels last between
convolutions (runtime/layout_cl.c) against onnxruntime-node.  Seeded random
convolutional graphs: Conv (1x1 or 3x3, dilated, strided, grouped,
depthwise, channel counts not multiples of 16), the ops that read
channels-last values (Relu, Sigmoid, Clip, LeakyRelu, Tanh, Add and Mul of
two results or of a per-channel or scalar constant, Concat of channels,
MaxPool with pads, strides, dilations and ceil_mode, AveragePool with and
without the pads counted, Resize nearest,
linear and cubic up and down, and of the channels too) and ops that do not
(BatchNormalization, Transpose, ReduceMean), values read by several
nodes, intermediate results as graph
outputs, batch 1 and 2; fixed graphs for the paths between the layouts,
and tf2onnx-style NHWC ones (Transposes around each convolution, 2-D and
1-D), and a 3-D and a 1-D graph of convolutions and MaxPools (the
channels-last pools of 1 to 3 spatial dims), and a 3-D and a 2-D graph
of convolutions and AveragePools.  Each graph runs in opmig twice (oneDNN for every
convolution, OPMIG_DNNL_ALL=1, and oneDNN where opmig picks it) and in
onnxruntime-node; every output must agree within 1e-4 of its largest
magnitude, and across the graphs opmig must have stored results channels
last (its --stats line).  Prints one line per check; exits 1 on a failure."""
import os
import re
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opmiglib  # noqa: E402
import ortlib  # noqa: E402

RNG = np.random.default_rng(2612)
N_GRAPHS = 40


class G:
    def __init__(self, n, c, hw):
        self.nodes, self.inits, self.k = [], [], 0
        self.vals = [("x", (n, c, hw, hw))]   # (name, shape)
        self.outs = []

    def name(self, p):
        self.k += 1
        return "%s%d" % (p, self.k)

    def const(self, a):
        n = self.name("c")
        self.inits.append(numpy_helper.from_array(np.asarray(a), n))
        return n

    def op(self, op, ins, shape, keep=True, **at):
        """keep: a feature map later steps may read (else read once)"""
        y = self.name("v")
        self.nodes.append(helper.make_node(op, ins, [y], name=self.name("n"), **at))
        if keep:
            self.vals.append((y, shape))
        return y


def conv(g, x, s):
    n, c, h, w = s
    k = int(RNG.choice([1, 3]))
    d = int(RNG.choice([1, 1, 2])) if k == 3 else 1
    st = int(RNG.choice([1, 1, 1, 2]))
    grp = 1
    if RNG.random() < 0.2:
        grp = c                                   # depthwise
    elif c % 2 == 0 and RNG.random() < 0.15:
        grp = 2
    m = grp * int(RNG.choice([4, 8, 10])) if grp > 1 else int(RNG.choice([8, 16, 20, 32]))
    pad = d * (k - 1) // 2
    oh = (h + 2 * pad - d * (k - 1) - 1) // st + 1
    wt = (RNG.standard_normal((m, c // grp, k, k)) * np.sqrt(2.0 / (c // grp * k * k)))
    ins = [x, g.const(wt.astype(np.float32))]
    if RNG.random() < 0.7:
        ins.append(g.const((RNG.standard_normal(m) * 0.1).astype(np.float32)))
    return g.op("Conv", ins, (n, m, oh, oh), kernel_shape=[k, k], pads=[pad] * 4,
                dilations=[d, d], strides=[st, st], group=grp)


def step(g):
    """One node on a random earlier 4-D value (convolutions most often)."""
    four = [v for v in g.vals if len(v[1]) == 4]
    x, s = four[int(RNG.integers(len(four)))] if RNG.random() < 0.5 else four[-1]
    r = RNG.random()
    if r < 0.35:
        return conv(g, x, s)
    if r < 0.50:
        op = str(RNG.choice(["Relu", "Sigmoid", "Tanh", "LeakyRelu", "Clip"]))
        if op == "Clip":
            return g.op(op, [x, g.const(np.float32(-0.5)), g.const(np.float32(0.8))], s)
        return g.op(op, [x], s)
    if r < 0.65:
        same = [v for v in four if v[1] == s and v[0] != x]
        if same and RNG.random() < 0.7:
            return g.op(str(RNG.choice(["Add", "Mul"])), [x, same[int(RNG.integers(len(same)))][0]], s)
        c = (RNG.standard_normal((s[1], 1, 1)) if RNG.random() < 0.5 else RNG.standard_normal(()))
        return g.op(str(RNG.choice(["Add", "Mul"])), [x, g.const(np.float32(c))], s)
    if r < 0.78:
        same = [v for v in four if v[1][0] == s[0] and v[1][2:] == s[2:] and v[0] != x]
        if same:
            o, so = same[int(RNG.integers(len(same)))]
            return g.op("Concat", [x, o], (s[0], s[1] + so[1]) + s[2:], axis=1)
        return conv(g, x, s)
    if r < 0.84 and s[2] >= 8:
        k, st, p, d, ceil = [(2, 2, 0, 1, 0), (3, 1, 1, 1, 0), (3, 2, 1, 1, 1),
                             (3, 1, 2, 2, 0), (2, 2, 0, 1, 1)][int(RNG.integers(5))]
        span = d * (k - 1) + 1
        o = (s[2] + 2 * p - span + (st - 1 if ceil else 0)) // st + 1
        if ceil and (o - 1) * st >= s[2] + p:
            o -= 1
        if d == 1 and RNG.random() < 0.4:
            return g.op("AveragePool", [x], (s[0], s[1], o, o), kernel_shape=[k, k],
                        strides=[st, st], pads=[p] * 4, ceil_mode=ceil,
                        count_include_pad=int(RNG.integers(2)))
        return g.op("MaxPool", [x], (s[0], s[1], o, o), kernel_shape=[k, k], strides=[st, st],
                    pads=[p] * 4, dilations=[d, d], ceil_mode=ceil)
    if r < 0.87:
        mode, ct, sc = [("nearest", "asymmetric", 2.0), ("linear", "half_pixel", 2.0),
                        ("linear", "align_corners", 2.0), ("nearest", "half_pixel", 0.5),
                        ("cubic", "half_pixel", 2.0), ("linear", "pytorch_half_pixel", 0.5),
                        ("nearest", "asymmetric", -2.0)][int(RNG.integers(7))]
        if sc < 0:   # the channels resized too: no layout kept
            scales, shape = [1.0, 2.0, 1.0, 1.0], (s[0], 2 * s[1], s[2], s[3])
        else:
            o = int(np.floor(s[2] * sc))
            scales, shape = [1.0, 1.0, sc, sc], (s[0], s[1], o, o)
        return g.op("Resize", [x, "", g.const(np.float32(scales))], shape, mode=mode,
                    coordinate_transformation_mode=ct)
    if r < 0.90:
        c = s[1]
        return g.op("BatchNormalization",
                    [x] + [g.const(np.float32(a)) for a in
                           (RNG.random(c) + 0.5, RNG.standard_normal(c) * 0.1,
                            RNG.standard_normal(c) * 0.1, RNG.random(c) + 0.5)], s)
    if r < 0.95:
        if RNG.random() < 0.4:   # H and W swapped (square planes): no layout move
            y = g.op("Transpose", [x], s, keep=False, perm=[0, 1, 3, 2])
            return g.op("Relu", [g.op("Transpose", [y], s, keep=False, perm=[0, 1, 3, 2])], s)
        y = g.op("Transpose", [x], (s[0], s[2], s[3], s[1]), keep=False, perm=[0, 2, 3, 1])
        return g.op("Transpose", [y], s, perm=[0, 3, 1, 2])
    y = g.op("ReduceMean", [x], (s[0], s[1], 1, 1), keep=False, axes=[2, 3], keepdims=1)
    return g.op("Mul", [x, y], s)


def save(g, name, shape, outs, path):
    """g's graph, input x of shape, outputs outs [(name, shape)], checked
    and written: (shape, number of outputs)"""
    opmiglib.save(g.nodes, g.inits, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                  [helper.make_tensor_value_info(o, TensorProto.FLOAT, so) for o, so in outs],
                  path, name=name)
    return shape, len(outs)


def build(path, i):
    n = 1 + int(i % 3 == 2)
    c = int(RNG.choice([3, 8, 16, 24]))
    hw = int(RNG.choice([17, 24, 32, 130]))
    g = G(n, c, hw)
    x = conv(g, "x", g.vals[0][1]) if RNG.random() < 0.6 else "x"
    if x == "x":
        g.vals.append(("x", g.vals[0][1]))
    for _ in range(int(RNG.integers(6, 13))):
        step(g)
    used = {i for nd in g.nodes for i in nd.input}
    outs = [v for v in g.vals[1:] if v[0] not in used]
    outs += [v for v in g.vals[1:] if v[0] in used and v not in outs and RNG.random() < 0.15]
    return save(g, "cl%d" % i, g.vals[0][1], outs, path)


def w3(g, co, ci, k=3):
    a = RNG.standard_normal((co, ci, k, k)) * np.sqrt(2.0 / (ci * k * k))
    return g.const(a.astype(np.float32))


def fixed(path, i):
    """Graphs at 130x130 (where opmig picks oneDNN for 16 channels and 3x3
    windows) for the paths between layouts: a channels-last result read by
    a convolution that oneDNN does not take (1x1, strided), a residual Add
    after a convolution whose shortcut is stored channels last, a Concat
    of a channels-last result and a plain one."""
    s = (1, 16, 130, 130)
    g = G(*s[:2], s[2])
    cv = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    a = g.op("Conv", ["x", w3(g, 16, 16)], s, **cv)
    if i == 0:
        b = g.op("Conv", [a, w3(g, 8, 16, 1)], (1, 8, 130, 130), kernel_shape=[1, 1])
        c = g.op("Conv", [a, w3(g, 16, 16)], (1, 16, 65, 65), strides=[2, 2], **cv)
        outs = [(b, (1, 8, 130, 130)), (c, (1, 16, 65, 65))]
        m = g.op("MaxPool", [g.op("Relu", [a], s)], (1, 16, 65, 65), kernel_shape=[3, 3],
                 strides=[2, 2], pads=[1, 1, 1, 1])
        outs.append((g.op("Conv", [m, w3(g, 16, 16)], (1, 16, 65, 65), **cv), (1, 16, 65, 65)))
    elif i == 1:
        b = g.op("Conv", [a, w3(g, 16, 16), g.const(np.float32(RNG.standard_normal(16)))], s,
                 **cv)
        r = g.op("Relu", [g.op("Add", [b, a], s)], s)
        up = g.op("Resize", [r, "", g.const(np.float32([1, 1, 2, 2]))], (1, 16, 260, 260),
                  mode="linear", coordinate_transformation_mode="half_pixel")
        dn = g.op("Resize", [a, "", g.const(np.float32([1, 1, 0.5, 0.5]))], (1, 16, 65, 65),
                  mode="nearest", coordinate_transformation_mode="asymmetric")
        outs = [(r, s), (g.op("Conv", [up, w3(g, 8, 16)], (1, 8, 260, 260), **cv),
                         (1, 8, 260, 260)), (g.op("Sigmoid", [dn], (1, 16, 65, 65)), (1, 16, 65, 65))]
    else:
        t = g.op("Sigmoid", ["x"], s)
        c = g.op("Concat", [a, t], (1, 32, 130, 130), axis=1)
        outs = [(g.op("Conv", [c, w3(g, 16, 32)], s, **cv), s), (g.op("Relu", [a], s), s)]
    return save(g, "fixed%d" % i, s, outs, path)


def nhwc_fixed(path, i):
    """tf2onnx-style graphs (an NHWC input, each convolution between a
    Transpose to NCHW and one back, the activations, Adds and Concat in
    NHWC) at small planes, where a Transpose to NCHW whose readers take a
    channels-last value is a view of its input and oneDNN takes the
    convolutions of such an input; and a 1-D one (N, L, C)."""
    if i == 1:
        s = (1, 50, 16)
        g = G(1, 16, 1)
        t = g.op("Transpose", ["x"], None, keep=False, perm=[0, 2, 1])
        t = g.op("Conv", [t, g.const(np.float32(RNG.standard_normal((24, 16, 3)) * 0.2))],
                 None, keep=False, kernel_shape=[3], pads=[1, 1])
        t = g.op("Relu", [g.op("Transpose", [t], None, keep=False, perm=[0, 2, 1])], None,
                 keep=False)
        t = g.op("Transpose", [t], None, keep=False, perm=[0, 2, 1])
        t = g.op("Conv", [t, g.const(np.float32(RNG.standard_normal((8, 24, 1)) * 0.2))],
                 None, keep=False, kernel_shape=[1])
        outs = [(g.op("Transpose", [t], None, keep=False, perm=[0, 2, 1]), (1, 50, 8))]
    else:
        s = (2, 20, 20, 16)
        g = G(2, 16, 20)

        def block(x, ci, co, k=3, grp=1, act="Relu"):
            t = g.op("Transpose", [x], None, keep=False, perm=[0, 3, 1, 2])
            t = g.op("Conv", [t, w3(g, co, ci // grp, k)], None, keep=False,
                     kernel_shape=[k, k], pads=[k // 2] * 4, group=grp)
            t = g.op("Transpose", [t], None, keep=False, perm=[0, 2, 3, 1])
            return g.op(act, [t], None, keep=False) if act else t

        a = block("x", 16, 16)
        b = block(a, 16, 48, 1)
        b = block(b, 48, 48, 3, 48, "Sigmoid")
        b = block(b, 48, 16, 1, act=None)
        c = g.op("Add", [a, b], None, keep=False)
        d = g.op("Concat", [c, block(c, 16, 8)], None, keep=False, axis=3)
        outs = [(block(d, 24, 12, 1), (2, 20, 20, 12)), (c, s)]
    return save(g, "nhwc%d" % i, s, outs, path)


def nd_fixed(path, i):
    """A 3-D graph (N, C, D, H, W) and a 1-D one (N, C, L) of 16 and more
    channels, where opmig picks oneDNN for the convolutions and stores
    their results channels last: Conv, Relu, MaxPool (2x2x2 stride 2; a
    1x3x3 window of stride 1x2x2 with pads and ceil_mode; 1-D with pads
    and a dilation), Conv again; and (i 2) a 1-D 1x1 Conv of 128 -> 512
    channels with a bias on a channels-last result, its own plain (read by
    BatchNormalization, Relu and GlobalMaxPool, and a graph output)."""
    def w(co, ci, k):
        return g.const(np.float32(RNG.standard_normal((co, ci) + k) *
                                  np.sqrt(2.0 / (ci * np.prod(k)))))

    if i == 0:
        s = (1, 16, 6, 18, 18)
        g = G(1, 16, 18)
        a = g.op("Relu", [g.op("Conv", ["x", w(24, 16, (3, 3, 3))], None, keep=False,
                               kernel_shape=[3, 3, 3], pads=[1] * 6)], None, keep=False)
        m = g.op("MaxPool", [a], None, keep=False, kernel_shape=[2, 2, 2], strides=[2, 2, 2])
        b = g.op("MaxPool", [a], None, keep=False, kernel_shape=[1, 3, 3], strides=[1, 2, 2],
                 pads=[0, 1, 1, 0, 0, 0], ceil_mode=1)
        outs = [(g.op("Conv", [m, w(16, 24, (3, 1, 1))], None, keep=False,
                      kernel_shape=[3, 1, 1], pads=[1, 0, 0, 1, 0, 0]), (1, 16, 3, 9, 9)),
                (g.op("Conv", [b, w(16, 24, (1, 3, 3))], None, keep=False,
                      kernel_shape=[1, 3, 3], pads=[0, 1, 1, 0, 1, 1]), (1, 16, 6, 9, 9))]
    elif i == 2:
        # a large 1x1 after a channels-last result, its own result plain
        # (read by BatchNormalization and GlobalMaxPool): a product per
        # image over the channels-last positions (k_conv_cl1.c)
        s = (2, 32, 700)
        g = G(2, 32, 700)
        a = g.op("Relu", [g.op("Conv", ["x", w(128, 32, (3,))], None, keep=False,
                               kernel_shape=[3], pads=[1, 1])], None, keep=False)
        b = g.op("Conv", [a, w(512, 128, (1,)), g.const(np.float32(RNG.standard_normal(512)))],
                 None, keep=False, kernel_shape=[1])
        b = g.op("BatchNormalization", [b, g.const(np.float32(1 + 0.2 * RNG.standard_normal(512))),
                                        g.const(np.float32(RNG.standard_normal(512))),
                                        g.const(np.float32(0.1 * RNG.standard_normal(512))),
                                        g.const(np.float32(1 + RNG.random(512)))], None,
                 keep=False)
        r = g.op("Relu", [b], None, keep=False)
        outs = [(g.op("GlobalMaxPool", [r], None, keep=False), (2, 512, 1)), (r, (2, 512, 700))]
    elif i == 3:
        # average pools on channels-last results, kept so (k_pool_nhwc.c):
        # an Inception branch's 3x3 stride 1 without the pads counted, a
        # 2x2 stride 2 counting them with ceil_mode, a 3-D 2x3x3 one
        s = (2, 16, 4, 19, 19)
        g = G(2, 16, 19)
        a = g.op("Relu", [g.op("Conv", ["x", w(40, 16, (1, 3, 3))], None, keep=False,
                               kernel_shape=[1, 3, 3], pads=[0, 1, 1, 0, 1, 1])], None,
                 keep=False)
        p3 = g.op("AveragePool", [a], None, keep=False, kernel_shape=[2, 3, 3],
                  strides=[1, 2, 2], pads=[0, 1, 1, 1, 1, 1], count_include_pad=1)
        outs = [(g.op("Conv", [p3, w(16, 40, (1, 1, 1))], None, keep=False,
                      kernel_shape=[1, 1, 1]), (2, 16, 4, 10, 10))]
    elif i == 4:
        s = (1, 24, 35, 35)
        g = G(1, 24, 35)
        a = g.op("Relu", [g.op("Conv", ["x", w(72, 24, (3, 3))], None, keep=False,
                               kernel_shape=[3, 3], pads=[1, 1, 1, 1])], None, keep=False)
        p1 = g.op("AveragePool", [a], None, keep=False, kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                  count_include_pad=0)
        p2 = g.op("AveragePool", [a], None, keep=False, kernel_shape=[2, 2], strides=[2, 2],
                  pads=[0, 0, 1, 1], count_include_pad=1, ceil_mode=1)
        outs = [(g.op("Conv", [p1, w(16, 72, (3, 3))], None, keep=False, kernel_shape=[3, 3],
                      pads=[1, 1, 1, 1]), (1, 16, 35, 35)),
                (g.op("Conv", [p2, w(16, 72, (3, 3))], None, keep=False, kernel_shape=[3, 3]),
                 (1, 16, 16, 16))]
    else:
        s = (2, 16, 61)
        g = G(2, 16, 61)
        a = g.op("Relu", [g.op("Conv", ["x", w(32, 16, (5,))], None, keep=False,
                               kernel_shape=[5], pads=[2, 2])], None, keep=False)
        m = g.op("MaxPool", [a], None, keep=False, kernel_shape=[3], strides=[2], pads=[1, 1],
                 dilations=[2])
        outs = [(g.op("Conv", [m, w(16, 32, (3,))], None, keep=False, kernel_shape=[3],
                      dilations=[2]), (2, 16, 26))]
    return save(g, "nd%d" % i, s, outs, path)


def run(opmig, model, x, od, env):
    outs, stats = opmiglib.run(opmig, model, x, od, env)
    m = re.search(r"^results stored channels last: (\d+)$", stats, re.M)
    return outs, int(m.group(1)) if m else -1


def main():
    got = ortlib.start(sys.argv)
    if not got:
        return 77
    opmig, work = got
    cases = []
    for i in range(N_GRAPHS + 10):
        path = os.path.join(work, "cl%d.onnx" % i)
        shape, n_out = build(path, i) if i < N_GRAPHS else \
            fixed(path, i - N_GRAPHS) if i < N_GRAPHS + 3 else \
            nhwc_fixed(path, i - N_GRAPHS - 3) if i < N_GRAPHS + 5 else \
            nd_fixed(path, i - N_GRAPHS - 5)
        x = RNG.standard_normal(shape).astype(np.float32)
        xf = os.path.join(work, "x%d.npy" % i)
        np.save(xf, x)
        cases.append((path, x, xf, n_out))
    refs = ortlib.run_many([(p, {"x": x}) for p, x, _, _ in cases], os.path.join(work, "ort"))
    stored = 0
    for i, ((path, x, xf, n_out), ref) in enumerate(zip(cases, refs)):
        if isinstance(ref, str):
            ortlib.check(False, "cl%d: onnxruntime: %s" % (i, ref))
            continue
        for how, extra in (("oneDNN everywhere", {"OPMIG_DNNL_ALL": "1"}), ("as chosen", {})):
            env = dict(os.environ, **extra)
            env.pop("OPMIG_DNNL_ALL", None) if not extra else None
            od = os.path.join(work, "o%d_%s" % (i, "all" if extra else "own"))
            ours, n_cl = run(opmig, path, xf, od, env)
            if isinstance(ours, str):
                ortlib.check(False, "cl%d (%s): %s" % (i, how, ours))
                continue
            stored += max(n_cl, 0)
            worst = opmiglib.rel_diff(ours, ref)
            ortlib.check(len(ours) == len(ref) == n_out and worst <= 1e-4,
                         "cl%d (%s): %d outputs, %d stored channels last, "
                         "largest difference %.2e of the magnitude" %
                         (i, how, len(ours), n_cl, worst))
    ortlib.check(stored > 0, "results stored channels last over all graphs: %d" % stored)
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
