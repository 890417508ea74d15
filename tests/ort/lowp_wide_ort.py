"""lowp_wide_ort.py OPMIG WORKDIR: float16 and bfloat16 results kept in
float32 between the nodes that compute in float32 (runtime/lowp.c,
RT_VALUE_WIDE), and rounded by the kernels as they write them (the
elementwise ops, Pow, the norms, Softmax: rt_lowp_round_out).  Seeded
random graphs of a 16-bit float dtype: Conv (also where oneDNN stores
results channels last), the elementwise ops, Pow by 2 and 3, binary ops of
two results and of constants, Concat, pooling, Resize, BatchNormalization,
LayerNormalization, InstanceNormalization (also on groups, as
GroupNormalization is exported below opset 18), Softmax, MatMul,
ReduceMean, the data movement ops that keep such values (Reshape,
Transpose, Slice, Split, Pad, Gather, Tile, Expand, DepthToSpace, Flatten,
Identity, Squeeze, Unsqueeze), Casts to float32 and back and to the same
dtype, ops that read no such value (Less, Where), a value read inside an
If branch, intermediate results as graph outputs, batch 1 and 2; and two
fixed float16 graphs at 130x130 for the paths between layouts (a result
kept in float32 and stored channels last read where it must be plain).
Each graph runs in opmig four ways: as chosen and with oneDNN for every
convolution (OPMIG_DNNL_ALL=1), each with and without kept results
(OPMIG_NO_WIDE=1): the outputs must be the same bytes (one rounding at each
op's output either way: a kept result a kernel did not round would carry
float32 digits into its readers), and the float16 graphs must agree with
onnxruntime-node within 3e-2 of each output's largest magnitude
(onnxruntime drops some Cast pairs, so it is no bit reference; lowp_ort.py
bounds each op against double).  Across the graphs opmig must have kept
results (its --stats line).  Prints one line per check; exits 1 on a
failure."""
import os
import re
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opmiglib  # noqa: E402
import ortlib  # noqa: E402

RNG = np.random.default_rng(2615)
N_F16, N_BF16 = 32, 10


class G:
    def __init__(self, low, shape):
        self.low = low
        self.nodes, self.inits, self.k = [], [], 0
        self.vals = []      # (name, shape) of 4-D low-precision values

    def name(self, p):
        self.k += 1
        return "%s%d" % (p, self.k)

    def init(self, a):
        n = self.name("c")
        self.inits.append(numpy_helper.from_array(np.asarray(a), n))
        return n

    def lowc(self, a):
        """a constant of the low dtype (a Cast of a float32 initializer)"""
        return self.op("Cast", [self.init(np.float32(a))], None, to=self.low)

    def op(self, op, ins, shape, n_out=1, **at):
        ys = [self.name("v") for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, ins, ys, name=self.name("n"), **at))
        if shape is not None:
            for y in ys:
                self.vals.append((y, shape))
        return ys[0] if n_out == 1 else ys


def wt(*shape):
    fan = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    return RNG.standard_normal(shape) * np.sqrt(1.0 / fan)


def conv(g, x, s):
    n, c, h, w = s
    k = int(RNG.choice([1, 3]))
    st = 2 if k == 3 and h >= 8 and RNG.random() < 0.2 else 1
    grp = c if RNG.random() < 0.15 else 1
    m = c * int(RNG.choice([1, 2])) if grp > 1 else int(RNG.choice([4, 8, 16, 20]))
    pad = (k - 1) // 2
    oh, ow = (h + 2 * pad - k) // st + 1, (w + 2 * pad - k) // st + 1
    ins = [x, g.lowc(wt(m, c // grp, k, k))]
    if RNG.random() < 0.6:
        ins.append(g.lowc(wt(m) * 0.1))
    return g.op("Conv", ins, (n, m, oh, ow), kernel_shape=[k, k], pads=[pad] * 4,
                strides=[st, st], group=grp)


UNARY = [("Relu", {}), ("Sigmoid", {}), ("Tanh", {}), ("LeakyRelu", {"alpha": 0.1}),
         ("Abs", {}), ("Neg", {}), ("HardSwish", {}), ("Softplus", {}), ("Elu", {})]


def step(g):
    """One node (or a few) on a random earlier value, the last most often."""
    x, s = g.vals[-1] if RNG.random() < 0.5 else g.vals[int(RNG.integers(len(g.vals)))]
    n, c, h, w = s
    r = int(RNG.integers(26))
    bf = g.low == TensorProto.BFLOAT16   # onnx has no bfloat16 Conv, pooling, ...
    if r < 5 and bf:
        return g.op("MatMul", [x, g.lowc(wt(w, w))], s)
    if r < 5:
        return conv(g, x, s)
    if r == 5:
        op, at = UNARY[int(RNG.integers(6 if bf else len(UNARY)))]
        return g.op(op, [x], s, **at)
    if r == 6 and RNG.random() < 0.4:
        return g.op("Pow", [x, g.lowc(float(RNG.choice([2, 3])))], s)
    if r == 6:
        return g.op("Clip", [x, g.lowc(-0.5), g.lowc(0.75)], s)
    if r == 7:
        op = ["Add", "Sub", "Mul", "Div"][int(RNG.integers(4))]
        k = RNG.standard_normal((c, 1, 1) if RNG.random() < 0.6 else (1,))
        if op == "Div":
            k = np.sign(k) * (np.abs(k) + 0.5)
        return g.op(op, [x, g.lowc(k)], s)
    if r == 8:
        same = [v for v in g.vals if v[1] == s]
        y = same[int(RNG.integers(len(same)))][0]
        op = ["Add", "Mul", "Sub", "Max", "Min", "Sum", "Mean"][int(RNG.integers(7))]
        return g.op(op, [x, y], s)
    if r == 9:
        same = [v for v in g.vals if v[1][0] == n and v[1][2:] == s[2:]]
        y, t = same[int(RNG.integers(len(same)))]
        return g.op("Concat", [x, y], (n, c + t[1], h, w), axis=1)
    if r == 10 and bf:
        return g.op("Relu", [x], s)
    if r == 10 and h >= 4 and w >= 4:
        return g.op("MaxPool", [x], (n, c, h // 2, w // 2), kernel_shape=[2, 2],
                    strides=[2, 2])
    if r == 10:
        return g.op("AveragePool", [x], s, kernel_shape=[3, 3], pads=[1] * 4)
    if r == 11 and h <= 16:
        return g.op("Resize", [x, "", g.init(np.float32([1, 1, 2, 2]))], (n, c, 2 * h, 2 * w),
                    mode=["nearest", "linear"][int(RNG.integers(2))])
    if r == 11:
        return g.op("Resize", [x, "", "", g.init(np.int64([n, c, h // 2, w // 2]))],
                    (n, c, h // 2, w // 2), mode="linear")
    if r == 12:
        t = g.op("Transpose", [x], None, perm=[0, 2, 3, 1])
        t = g.op("Sigmoid", [t], None)
        return g.op("Transpose", [t], s, perm=[0, 3, 1, 2])
    if r == 13:
        t = g.op("Reshape", [x, g.init(np.int64([n, c, h * w]))], None)
        t = g.op("Softmax", [t], None, axis=-1)
        return g.op("Reshape", [t, g.init(np.int64(s))], s)
    if r == 14 and c >= 2:
        e = (c + 1) // 2
        return g.op("Slice", [x, g.init(np.int64([0])), g.init(np.int64([e])),
                              g.init(np.int64([1]))], (n, e, h, w))
    if r == 15 and c % 2 == 0:
        return g.op("Split", [x, g.init(np.int64([c // 2, c // 2]))], (n, c // 2, h, w),
                    n_out=2, axis=1)[int(RNG.integers(2))]
    if r == 16:
        if RNG.random() < 0.5:
            return g.op("Pad", [x, g.init(np.int64([0, 0, 1, 1, 0, 0, 1, 1])), g.lowc(0.25)],
                        (n, c, h + 2, w + 2))
        return g.op("Pad", [x, g.init(np.int64([0, 0, 1, 1, 0, 0, 1, 1]))],
                    (n, c, h + 2, w + 2), mode="reflect")
    if r == 17:
        idx = RNG.integers(0, c, int(RNG.integers(1, c + 2)))
        return g.op("Gather", [x, g.init(np.int64(idx))], (n, len(idx), h, w), axis=1)
    if r == 18 and c <= 16:
        return g.op("Tile", [x, g.init(np.int64([1, 2, 1, 1]))], (n, 2 * c, h, w))
    if r == 18:
        t = g.op("ReduceMean", [x], None, axes=[2, 3], keepdims=1)
        return g.op("Expand", [t, g.init(np.int64(s))], s)
    if r == 19 and c % 4 == 0:
        return g.op("DepthToSpace", [x], (n, c // 4, 2 * h, 2 * w), blocksize=2)
    if r == 19:
        t = g.op("Flatten", [x], None, axis=1)
        return g.op("Reshape", [g.op("Identity", [t], None), g.init(np.int64(s))], s)
    if r == 20:
        t = g.op("Unsqueeze", [x, g.init(np.int64([0]))], None)
        return g.op("Squeeze", [t, g.init(np.int64([0]))], s)
    if r == 21:
        t = g.op("Sigmoid", [g.op("Cast", [x], None, to=TensorProto.FLOAT)], None)
        return g.op("Cast", [t], s, to=g.low)
    if r == 22:
        return g.op("Cast", [x], s, to=g.low)
    if r == 23:
        neg = g.op("Less", [x, g.lowc(0)], None)
        return g.op("Where", [neg, x, g.op("Mul", [x, g.lowc(0.1)], None)], s)
    if r == 24:
        u = RNG.random()
        if u < 0.3:
            return g.op("LayerNormalization", [x, g.lowc(1 + 0.1 * wt(w)), g.lowc(0.1 * wt(w))],
                        s, axis=-1)
        if u < 0.5 and not bf:
            return g.op("InstanceNormalization", [x, g.lowc(1 + 0.1 * wt(c)),
                                                  g.lowc(0.1 * wt(c))], s)
        if u < 0.7 and not bf and c % 2 == 0:
            # GroupNormalization as exporters write it below opset 18
            t = g.op("Reshape", [x, g.init(np.int64([n, 2, -1]))], None)
            t = g.op("InstanceNormalization", [t, g.lowc(np.ones(2)), g.lowc(np.zeros(2))],
                     None)
            t = g.op("Reshape", [t, g.init(np.int64(s))], None)
            return g.op("Add", [g.op("Mul", [t, g.lowc(1 + 0.1 * wt(c, 1, 1))], None),
                                g.lowc(0.1 * wt(c, 1, 1))], s)
        return g.op("MatMul", [x, g.lowc(wt(w, w))], s)
    if r == 25:
        branch = []
        for op in ("Relu", "Neg"):
            y = g.name("b")
            branch.append(helper.make_graph(
                [helper.make_node(op, [x], [y])], g.name("g"), [],
                [helper.make_tensor_value_info(y, g.low, s)]))
        return g.op("If", [g.cond], s, then_branch=branch[0], else_branch=branch[1])
    return g.op("BatchNormalization",
                [x, g.lowc(1 + 0.1 * wt(c)), g.lowc(0.1 * wt(c)), g.lowc(0.1 * wt(c)),
                 g.lowc(0.5 + np.abs(wt(c)))], s)


def build(path, i, low):
    n = int(RNG.choice([1, 1, 2]))
    c = int(RNG.choice([3, 8, 12, 16]))
    h = int(RNG.integers(6, 21))
    s = (n, c, h, h + int(RNG.integers(0, 3)))
    g = G(low, s)
    g.cond = g.op("Greater", [g.op("ReduceSum", ["x"], None, keepdims=0), g.init(np.float32(-1e9))],
                  None)
    g.vals.append((g.op("Cast", ["x"], None, to=low), s))
    for _ in range(int(RNG.integers(6, 14))):
        step(g)
    picks = [g.vals[-1]] + [g.vals[int(RNG.integers(1, len(g.vals)))]
                            for _ in range(int(RNG.integers(0, 3)))]
    outs, seen = [], set()
    for name, shape in picks:
        if name in seen:
            continue
        seen.add(name)
        if RNG.random() < 0.4:
            name = g.op("Cast", [name], None, to=TensorProto.FLOAT)
            outs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
        else:
            outs.append(helper.make_tensor_value_info(name, low, shape))
    opmiglib.save(g.nodes, g.inits, [helper.make_tensor_value_info("x", TensorProto.FLOAT, s)],
                  outs, path, name="wide%d" % i)
    return s


def fixed(path, i):
    """float16 at 130x130, where opmig picks oneDNN for 16 channels and 3x3
    windows and stores results channels last: such a result read by
    convolutions oneDNN does not take (1x1, strided), MaxPool, Concat with a
    plain result, a residual Add, Resize."""
    s = (1, 16, 130, 130)
    g = G(TensorProto.FLOAT16, s)
    cv = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    x = g.op("Cast", ["x"], None, to=TensorProto.FLOAT16)
    a = g.op("Conv", [x, g.lowc(wt(16, 16, 3, 3))], None, **cv)
    if i == 0:
        b = g.op("Conv", [a, g.lowc(wt(8, 16, 1, 1))], None, kernel_shape=[1, 1])
        c = g.op("Conv", [a, g.lowc(wt(16, 16, 3, 3))], None, strides=[2, 2], **cv)
        m = g.op("MaxPool", [g.op("Relu", [a], None)], None, kernel_shape=[3, 3],
                 strides=[2, 2], pads=[1, 1, 1, 1])
        d = g.op("Add", [g.op("Conv", [m, g.lowc(wt(16, 16, 3, 3))], None, **cv), c], None)
        outs = [(b, (1, 8, 130, 130)), (d, (1, 16, 65, 65))]
    else:
        b = g.op("Relu", [g.op("Add", [g.op("Conv", [a, g.lowc(wt(16, 16, 3, 3))], None,
                                            **cv), a], None)], None)
        up = g.op("Resize", [b, "", g.init(np.float32([1, 1, 0.5, 0.5]))], None,
                  mode="linear")
        cat = g.op("Concat", [a, g.op("Sigmoid", [x], None)], None, axis=1)
        outs = [(g.op("Conv", [cat, g.lowc(wt(16, 32, 3, 3))], None, **cv), s),
                (g.op("Sigmoid", [up], None), (1, 16, 65, 65))]
    outs = [(g.op("Cast", [o], None, to=TensorProto.FLOAT), so) for o, so in outs]
    opmiglib.save(g.nodes, g.inits, [helper.make_tensor_value_info("x", TensorProto.FLOAT, s)],
                  [helper.make_tensor_value_info(o, TensorProto.FLOAT, so) for o, so in outs],
                  path, name="fixed%d" % i)
    return s


def run(opmig, model, x, od, env):
    outs, stats = opmiglib.run(opmig, model, x, od, env)
    m = re.search(r"^16-bit float results kept in float32: (\d+)$", stats, re.M)
    return outs, int(m.group(1)) if m else -1


def main():
    got = ortlib.start(sys.argv)
    if not got:
        return 77
    opmig, work = got
    cases = []
    for i in range(N_F16 + N_BF16 + 2):
        low = TensorProto.BFLOAT16 if N_F16 <= i < N_F16 + N_BF16 else TensorProto.FLOAT16
        path = os.path.join(work, "w%d.onnx" % i)
        shape = build(path, i, low) if i < N_F16 + N_BF16 else fixed(path, i - N_F16 - N_BF16)
        x = RNG.standard_normal(shape).astype(np.float32)
        xf = os.path.join(work, "x%d.npy" % i)
        np.save(xf, x)
        cases.append((path, x, xf, low))
    f16 = [i for i, c in enumerate(cases) if c[3] == TensorProto.FLOAT16]
    refs = dict(zip(f16, ortlib.run_many([(cases[i][0], {"x": cases[i][1]}) for i in f16],
                                         os.path.join(work, "ort"))))
    kept = 0
    for i, (path, x, xf, low) in enumerate(cases):
        for how, extra in opmiglib.WAYS:
            got = {}
            for wide in (1, 0):
                env = {k: v for k, v in os.environ.items()
                       if k not in ("OPMIG_DNNL_ALL", "OPMIG_NO_WIDE")}
                env.update(extra)
                if not wide:
                    env["OPMIG_NO_WIDE"] = "1"
                got[wide] = run(opmig, path, xf, os.path.join(work, "o%d_%d%d" %
                                                               (i, len(extra), wide)), env)
            (a, n_kept), (b, _) = got[1], got[0]
            if isinstance(a, str) or isinstance(b, str):
                ortlib.check(False, "w%d (%s): %s" % (i, how, a if isinstance(a, str) else b))
                continue
            kept += max(n_kept, 0)
            ortlib.check(len(a) == len(b) and a == b,
                         "w%d %s (%s): %d outputs the same bytes with and without %d "
                         "results kept in float32" %
                         (i, "float16" if low == TensorProto.FLOAT16 else "bfloat16", how,
                          len(a), n_kept))
            if low != TensorProto.FLOAT16 or how != "as chosen":
                continue
            ref = refs[i]
            if isinstance(ref, str):
                ortlib.check(False, "w%d: onnxruntime: %s" % (i, ref))
                continue
            worst = opmiglib.rel_diff(a, ref)
            ortlib.check(len(a) == len(ref) and worst <= 3e-2,
                         "w%d: against onnxruntime, largest difference %.2e of the magnitude" %
                         (i, worst))
    ortlib.check(kept > 0, "16-bit float results kept in float32 over all graphs: %d" % kept)
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
