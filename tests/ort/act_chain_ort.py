"""act_chain_ort.py OPMIG WORKDIR: activations that exporters write as
several nodes done as one step of the value's epilogue chain
(runtime/chain.c, chain_act.c): SiLU, Mul of v by Sigmoid(v), and GELU in
Erf form, v * (Erf(v / c) + 1) (torch) or (v * 0.5) * (Erf(v / c) + 1)
(BERT), Div or Mul for the scaling, either operand order; HardSwish and
HardSigmoid (MobileNetV3's), one node one step.  Seeded random
float32 graphs: Conv
(grouped, depthwise, strided, 1x1 and 3x3, plane sizes for the direct,
packed and oneDNN paths) or an Add of two results heading SiLU in either
operand order, after BatchNormalization, before Relu/Clip/Mul by a
constant/a residual Add, into Concat, MaxPool and Resize, and forms that
must not be fused (the Sigmoid's result or v also a graph output, v read
by a third node, Mul by another value's Sigmoid); transformer-style
graphs (MatMul, a bias Add along the last axis, GELU of each form, also
with an Add of 2 instead of 1 or a Sigmoid in place of the Erf, which must
stay nodes, the GELU's value also an output; GELU after a convolution);
tf2onnx-style graphs (NHWC, each convolution between Transposes, the Relu or
Clip after the Transpose back: done by the convolution before the move;
also after a Reshape, after BatchNormalization, the Transpose's result
read twice or a graph output, a Clip bound per channel, which must stay
nodes); batch 1 and 2; a
quarter of them in float16 (the input Cast, float16 weights: each step
then rounds its result, lowp.c); and four float16 graphs of Conv,
BatchNormalization (float16 parameters) and SiLU or Relu, whose
BatchNormalizations must be done as steps.  Each
graph runs in opmig four ways: as chosen and with oneDNN for every
convolution (OPMIG_DNNL_ALL=1, results stored channels last between
convolutions), each with and without chains (OPMIG_NO_CHAIN=1), no
BatchNormalization folded into a oneDNN convolution's weights
(OPMIG_NO_BNFOLD=1): the outputs must be the same bytes, and agree with
onnxruntime-node within 1e-4 of each output's largest magnitude (3e-2 in
float16, where onnxruntime drops Cast pairs); and with chains and
folding (the default): within 1e-5 of the nodes' values (float16 graphs:
their bytes, nothing folded there), and with onnxruntime-node as above.
Across the graphs opmig must have fused Sigmoids and Erfs both ways
(--stats), and folding must have changed some run's outputs.  Prints
one line per check; exits 1 on a failure."""
import os
import re
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opmiglib  # noqa: E402
import ortlib  # noqa: E402

RNG = np.random.default_rng(7411)
N = 48
N_BN = 4   # after the N random graphs: float16 BatchNormalization steps
F = TensorProto.FLOAT


class G:
    def __init__(self, half=False):
        self.nodes, self.inits, self.outs, self.k = [], [], [], 0
        self.dt = np.float16 if half else np.float32

    def name(self, p):
        self.k += 1
        return "%s%d" % (p, self.k)

    def c(self, a):
        n = self.name("c")
        self.inits.append(numpy_helper.from_array(np.asarray(a, dtype=self.dt), n))
        return n

    def op(self, op, ins, **at):
        y = self.name("v")
        self.nodes.append(helper.make_node(op, ins, [y], name=self.name("n"), **at))
        return y


def conv(g, x, c, k, stride, group, m):
    w = (RNG.standard_normal((m, c // group, k, k)) * np.sqrt(2.0 / (c // group * k * k)))
    return g.op("Conv", [x, g.c(w), g.c(RNG.standard_normal(m) * 0.3)], kernel_shape=[k, k],
                pads=[k // 2] * 4, strides=[stride] * 2, group=group)


def bn(g, v, c):
    return g.op("BatchNormalization", [v, g.c(1 + 0.2 * RNG.standard_normal(c)),
                                       g.c(0.1 * RNG.standard_normal(c)),
                                       g.c(0.1 * RNG.standard_normal(c)),
                                       g.c(0.5 + RNG.random(c))])


def silu(g, v, order):
    s = g.op("Sigmoid", [v])
    return g.op("Mul", [v, s] if order else [s, v])


def gelu(g, v, form):
    """v's GELU in one of the forms exporters write (form 0-5), or a
    look-alike that is no GELU (6: Add 2, 7: Sigmoid for the Erf)"""
    r2 = np.sqrt(2.0)
    t = g.op("Div", [v, g.c(r2)]) if form % 2 == 0 else \
        g.op("Mul", [g.c(1 / r2), v] if form == 3 else [v, g.c(1 / r2)])
    e = g.op("Sigmoid" if form == 7 else "Erf", [t])
    a = g.op("Add", [g.c(1.0), e] if form == 4 else [e, g.c(2.0 if form == 6 else 1.0)])
    if form in (2, 3):   # (v * 0.5) * (erf + 1)
        return g.op("Mul", [g.op("Mul", [g.c(0.5), v] if form == 3 else [v, g.c(0.5)]), a])
    y = g.op("Mul", [a, v] if form == 5 else [v, a])
    return g.op("Mul", [y, g.c(0.5)])


def build_tf(path, i, half):
    """a transformer-style feed-forward stack: [n, T, D] through MatMul,
    bias Add, GELU, MatMul"""
    g = G(half)
    n, t, d = 1 + (i % 3 == 2), int(RNG.integers(3, 40)), int(RNG.choice([16, 48, 64]))
    x = g.op("Cast", ["x"], to=TensorProto.FLOAT16) if half else "x"
    for b in range(int(RNG.integers(1, 4))):
        h = int(RNG.choice([32, 64, 96]))
        v = g.op("Add", [g.op("MatMul", [x, g.c(RNG.standard_normal((d, h)) / np.sqrt(d))]),
                         g.c(RNG.standard_normal(h) * 0.3)])
        y = gelu(g, v, int(RNG.integers(0, 8)))
        if RNG.random() < 0.15:
            g.outs.append((v, [n, t, h]))
        x = g.op("MatMul", [y, g.c(RNG.standard_normal((h, d)) / np.sqrt(h))])
    g.outs.append((x, [n, t, d]))
    return g, [n, t, d]


def build_move(path, i, half):
    """NHWC: Transpose, Conv (BatchNormalization), Transpose back or a
    Reshape, then Relu or Clip (or forms that must stay nodes)"""
    g = G(half)
    n, s, c = 1 + (i % 5 == 4), int(RNG.integers(5, 40)), int(RNG.choice([3, 8, 16]))
    shape = [n, s, s, c]
    x = g.op("Cast", ["x"], to=TensorProto.FLOAT16) if half else "x"
    for b in range(int(RNG.integers(2, 4))):
        kind = int(RNG.integers(0, 8))
        m = int(RNG.choice([8, 16, 24]))
        t = g.op("Transpose", [x], perm=[0, 3, 1, 2])
        v = conv(g, t, c, int(RNG.choice([1, 3])), 1, 1, m)
        c = m
        if kind == 1:
            v = bn(g, v, c)
        if kind == 2:   # a Reshape (to NHWC's shape, the bytes as they are) moves
            sh = g.name("sh")
            g.inits.append(numpy_helper.from_array(np.int64([n, s, s, c]), sh))
            u = g.op("Reshape", [v, sh])
        else:
            u = g.op("Transpose", [v], perm=[0, 2, 3, 1])
        if kind == 3:   # the moved value read twice: no step
            y = g.op("Add", [g.op("Relu", [u]), u])
        elif kind == 4:   # the moved value a graph output too
            g.outs.append((u, [n, s, s, c]))
            y = g.op("Relu", [u])
        elif kind == 5:   # a bound per channel after the move: stays a node
            y = g.op("Clip", [u, g.c(-0.5), g.c(1.5)]) if half else \
                g.op("Min", [g.op("Relu", [u]), g.c(1 + RNG.random(c))])
        elif kind % 2:
            y = g.op("Clip", [u, g.c(-0.3), g.c(float(RNG.choice([1.0, 6.0])))])
        else:
            y = g.op("Relu", [u])
        if RNG.random() < 0.2:
            g.outs.append((y, [n, s, s, c]))
        x = y
    if not g.outs or g.outs[-1][0] != x:
        g.outs.append((x, [n, s, s, c]))
    return g, shape


def build(path, i):
    half = i % 4 == 1
    if i % 3 == 1 or i % 6 == 2:
        g, shape = (build_tf if i % 3 == 1 else build_move)(path, i, half)
        return save(g, path, i, half, shape)
    g = G(half)
    n = 1 + (i % 5 == 4)
    big = i % 3 == 0
    c = int(RNG.choice([3, 8, 16, 24]))
    h = int(RNG.integers(40, 70)) if big else int(RNG.integers(5, 20))
    w = h + int(RNG.integers(-3, 4))
    x, shape = g.op("Cast", ["x"], to=TensorProto.FLOAT16) if half else "x", [n, c, h, w]
    for b in range(int(RNG.integers(2, 5))):
        kind = int(RNG.integers(0, 10))
        k = int(RNG.choice([1, 3, 3]))
        stride = int(RNG.choice([1, 1, 2])) if h >= 8 else 1
        dw = c >= 8 and RNG.random() < 0.3
        m = c if dw else int(RNG.choice([8, 16, 20, 32]))
        v = conv(g, x, c, k, stride, c if dw else 1, m)
        h, w = (h + stride - 1) // stride, (w + stride - 1) // stride
        c = m
        if kind == 1:
            v = bn(g, v, c)
        if kind == 2:   # an Add of two results heads it
            v = g.op("Add", [v, conv(g, x if stride == 1 and dw else v, c, 1, 1, 1, c)])
        if kind == 3:   # the Sigmoid's result is an output too: not fused
            s = g.op("Sigmoid", [v])
            g.outs.append((s, [n, c, h, w]))
            y = g.op("Mul", [v, s])
        elif kind == 4:   # v read by a third node: not fused
            s = g.op("Sigmoid", [v])
            y = g.op("Add", [g.op("Mul", [s, v]), g.op("Relu", [v])])
        elif kind == 5:   # Mul by another value's Sigmoid: not SiLU
            y = g.op("Mul", [v, g.op("Sigmoid", [g.op("Neg", [v])])])
        elif kind == 6:   # GELU after a convolution
            y = gelu(g, v, int(RNG.integers(0, 6)))
        elif kind == 8:   # MobileNetV3's activations
            y = g.op("HardSwish", [v])
        elif kind == 9:
            y = g.op("HardSigmoid", [v], alpha=float(RNG.uniform(0.1, 0.4)),
                     beta=float(RNG.uniform(0.2, 0.7)))
        else:
            y = silu(g, v, int(RNG.integers(0, 2)))
        after = int(RNG.integers(0, 7))
        if after == 1:
            y = g.op("Relu", [y])
        elif after == 2:
            y = g.op("Clip", [y, g.c(-0.2), g.c(2.5)])
        elif after == 3:
            y = g.op("Mul", [y, g.c(RNG.standard_normal((c, 1, 1)))])
        elif after == 4:
            y = g.op("Concat", [y, silu(g, conv(g, y, c, 1, 1, 1, 8), 1)], axis=1)
            c += 8
        elif after == 5 and h >= 4:
            y = g.op("MaxPool", [y], kernel_shape=[2, 2], strides=[2, 2])
            h, w = h // 2, w // 2
        elif after == 6:
            sc = g.name("sc")
            g.inits.append(numpy_helper.from_array(np.float32([1, 1, 2, 2]), sc))
            y = g.op("Resize", [y, "", sc], mode="nearest")
            h, w = h * 2, w * 2
        if RNG.random() < 0.2:
            g.outs.append((y, [n, c, h, w]))
        x = y
    if not g.outs or g.outs[-1][0] != x:
        g.outs.append((x, [n, c, h, w]))
    return save(g, path, i, half, shape)


def build_bn16(path, i):
    """float16: Conv -> BatchNormalization -> SiLU, Relu or nothing, as a
    float16 CNN's blocks (each step rounds its result, its parameters
    float16), on the direct, depthwise and oneDNN paths; own generator, so
    the random graphs above stay as they are"""
    r = np.random.default_rng(90000 + i)
    g = G(True)
    c, h = 16, 24 + 4 * i
    x, shape = g.op("Cast", ["x"], to=TensorProto.FLOAT16), [1, c, h, h]
    for b, (k, m, grp, act) in enumerate(((1, 24, 1, "silu"), (3, 24, 24, "relu"),
                                          (3, 32, 1, "silu"), (1, 16, 1, ""))):
        v = conv(g, x, c, k, 1, grp, m)
        sc = g.c(1 + 0.2 * r.standard_normal(m))
        bb = g.c(0.2 * r.standard_normal(m))
        mu = g.c(0.2 * r.standard_normal(m))
        var = g.c(0.5 + r.random(m))
        v = g.op("BatchNormalization", [v, sc, bb, mu, var], epsilon=1e-3)
        if act == "silu":
            v = silu(g, v, (i + b) % 2)
        elif act == "relu":
            v = g.op("Relu", [v])
        x, c = v, m
    g.outs.append((x, [1, c, h, h]))
    return save(g, path, i, True, shape)


def save(g, path, i, half, shape):
    opmiglib.save(g.nodes, g.inits, [helper.make_tensor_value_info("x", F, shape)],
                  [helper.make_tensor_value_info(o, TensorProto.FLOAT16 if half else F, s)
                   for o, s in g.outs], path, name="act%d" % i)
    return shape


def run(opmig, model, x, od, env):
    """outputs and the Sigmoid and Erf nodes --stats counts as fused"""
    outs, stats = opmiglib.run(opmig, model, x, od, env, ["--threads", "2", "--repeat", "2"])
    return outs, {m.group(1): int(m.group(2)) for m in
                  re.finditer(r"^(Sigmoid|Erf|Relu|Clip|BatchNormalization|HardSwish|HardSigmoid)\s+\d+\s+\d+\s+"
                              r"(\d+)\s", stats, re.M)}


def main():
    got = ortlib.start(sys.argv)
    if not got:
        return 77
    opmig, work = got
    cases = []
    for i in range(N + N_BN):
        path = os.path.join(work, "s%d.onnx" % i)
        shape = build(path, i) if i < N else build_bn16(path, i - N)
        x = RNG.standard_normal(shape).astype(np.float32)
        xf = os.path.join(work, "x%d.npy" % i)
        np.save(xf, x)
        cases.append((path, x, xf, i % 4 == 1 or i >= N))
    refs = ortlib.run_many([(c[0], {"x": c[1]}) for c in cases], os.path.join(work, "ort"))
    acts = ("Sigmoid", "Erf", "HardSwish", "HardSigmoid")
    fused = {(how, op): 0 for how, _ in opmiglib.WAYS for op in acts}
    tf_erf = 0   # in the transformer graphs: after a bias Add along the last axis
    moved = 0    # Relu and Clip after a Transpose or Reshape, done before it
    bn16 = 0     # float16 BatchNormalizations done as steps
    folded = 0   # runs whose outputs folding changed
    for i, (path, x, xf, half) in enumerate(cases):
        for how, extra in opmiglib.WAYS:
            got = {}
            # 1: chains, 0: none (both with no BatchNormalization folded
            # into a oneDNN convolution's weights: the nodes' bytes);
            # 2: chains with folding (other last bits)
            for chain in (1, 0, 2):
                env = {k: v for k, v in os.environ.items()
                       if k not in ("OPMIG_DNNL_ALL", "OPMIG_NO_CHAIN", "OPMIG_NO_BNFOLD")}
                env.update(extra)
                if not chain:
                    env["OPMIG_NO_CHAIN"] = "1"
                if chain < 2:
                    env["OPMIG_NO_BNFOLD"] = "1"
                got[chain] = run(opmig, path, xf,
                                 os.path.join(work, "o%d_%d%d" % (i, len(extra), chain)), env)
            (a, n_fused), (b, n_off), (c, _) = got[1], got[0], got[2]
            if isinstance(a, str) or isinstance(b, str) or isinstance(c, str):
                ortlib.check(False, "s%d (%s): %s" % (i, how, [t for t in (a, b, c)
                                                              if isinstance(t, str)][0]))
                continue
            # folding: float32 only, within a few float32 roundings of
            # the nodes' values
            ortlib.check(c == a if half else opmiglib.rel_diff(c, a) <= 1e-5,
                         "s%d (%s): BatchNormalization folded, largest difference %.2e of "
                         "the magnitude" % (i, how, opmiglib.rel_diff(c, a)))
            folded += c != a
            for op in acts:
                fused[(how, op)] += n_fused.get(op, 0)
            if i >= N:
                bn16 += n_fused.get("BatchNormalization", 0)
            elif i % 3 == 1:
                tf_erf += n_fused.get("Erf", 0)
            elif i % 6 == 2:
                moved += n_fused.get("Relu", 0) + n_fused.get("Clip", 0)
            ortlib.check(len(a) == len(b) and a == b and not any(n_off.values()),
                         "s%d%s (%s): %d outputs the same bytes with and without chains "
                         "(%d Sigmoids, %d Erfs fused)" %
                         (i, " float16" if half else "", how, len(a),
                          n_fused.get("Sigmoid", 0), n_fused.get("Erf", 0)))
            ref = refs[i]
            if isinstance(ref, str):
                ortlib.check(False, "s%d: onnxruntime: %s" % (i, ref))
                continue
            for o, what in ((a, ""), (c, ", folded")):
                worst = opmiglib.rel_diff(o, ref)
                ortlib.check(len(o) == len(ref) and worst <= (3e-2 if half else 1e-4),
                             "s%d (%s%s): against onnxruntime, largest difference %.2e of "
                             "the magnitude" % (i, how, what, worst))
    for (how, op), k in sorted(fused.items()):
        ortlib.check(k > 0, "%ss fused into chains (%s): %d" % (op, how, k))
    ortlib.check(tf_erf > 0, "Erfs fused after a MatMul's bias Add: %d" % tf_erf)
    ortlib.check(moved > 0, "Relus and Clips done before a Transpose or Reshape: %d" % moved)
    ortlib.check(bn16 > 0, "float16 BatchNormalizations done as chain steps: %d" % bn16)
    ortlib.check(folded > 0, "runs changed by BatchNormalizations folded into oneDNN's "
                 "weights: %d" % folded)
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
