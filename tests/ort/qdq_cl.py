"""qdq_cl.py OPMIG WORKDIR: static QDQ graphs whose units keep their 8-bit
results channels last between them (runtime/layout_cl.c with qdq.c and
qdq_table.c), on seeded random chains.

Each case is a graph whose input is 8-bit codes (batch 1 or 2, channel
counts that are no multiples of 16), then 3 to 7 layers, each a QDQ
unit as a quantizer writes it: a Conv (3x3 or 1x1, strides, pads,
dilations, per-channel int8 weights whose sums oneDNN requantizes, or
per-tensor uint8 weights with a zero point that opmig corrects and
requantizes itself, more than 64 output channels at times, a Relu
before a zero point that makes it a no-op), a MaxPool, a Resize
(nearest or linear), a Concat of channels with an earlier value, an Add
of an earlier value, a Sigmoid or (the last 20 cases) a squeeze and
excitation's per-channel scale, each between DequantizeLinear and
QuantizeLinear; some intermediate codes are graph outputs too, and at
times a depthwise Conv (too narrow for a unit: run as written, reading a
channels-last DequantizeLinear result).  Checked:
  * every output of the default run is bit for bit the run with
    OPMIG_NO_CL=1 (the same units on plain tensors);
  * where the chain so far is of Conv, MaxPool and Concat units, bit for
    bit numpy's value of the units: exact integer sums requantized as
    QLinearConv (float32(acc + bias) * float32 multiplier, half to even,
    plus the zero point, saturated), the largest code of each window
    mapped through QuantizeLinear(DequantizeLinear(code)) in float32, a
    Concat's inputs each mapped so;
  * `--stats` shows results stored channels last (over all cases);
  * onnxruntime-node (its graph optimizations fuse the same units): the
    largest difference in steps is printed, the cases bit-identical
    counted; more than 2 steps anywhere is a failure.
Prints a line per failure and a summary; exits 1 on a failure."""
import functools
import os
import re
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ortlib  # noqa: E402
import qdqlib  # noqa: E402
from int_ops_ref import conv_ref  # noqa: E402
from qdqlib import LIM, T, remap, requant, steps  # noqa: E402

RNG = np.random.default_rng(1225)
q8 = functools.partial(qdqlib.q8, RNG)
N_FIRST = 80    # the cases before squeeze and excitation scales were drawn
N_CASES = 100


def maxpool_codes(x, k, st, pads, dt):
    lo = LIM[np.dtype(dt)][0]
    n, c, h, w = x.shape
    xp = np.full((n, c, h + pads[0] + pads[2] + k, w + pads[1] + pads[3] + k), lo, np.int64)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + w] = x
    oh = (h + pads[0] + pads[2] - k) // st + 1
    ow = (w + pads[1] + pads[3] - k) // st + 1
    y = np.full((n, c, oh, ow), lo, np.int64)
    for i in range(k):
        for j in range(k):
            y = np.maximum(y, xp[:, :, i:i + st * (oh - 1) + 1:st, j:j + st * (ow - 1) + 1:st])
    return y.astype(dt)


class Case:
    def __init__(self, k):
        self.k, self.nodes, self.inits, self.outs, self.u = k, [], [], [], 0
        self.vals = []           # (name, codes ref or None, dtype, scale, zp, shape)

    def name(self, p):
        self.u += 1
        return "%s%d" % (p, self.u)

    def init(self, v, p):
        n = self.name(p)
        self.inits.append(numpy_helper.from_array(np.asarray(v), n))
        return n

    def dq(self, v):
        name, _, _, s, z, _ = v
        out = self.name("d")
        self.nodes.append(helper.make_node("DequantizeLinear",
                                           [name, self.init(np.float32(s), "s"),
                                            self.init(z, "z")], [out]))
        return out

    def q(self, src, shape, ref, yt=None, ys=None, yz=None):
        yt = yt or RNG.choice([np.uint8, np.int8])
        ys = np.float32(ys if ys is not None else RNG.uniform(0.02, 0.2))
        yz = np.asarray(yz if yz is not None else q8(yt, ()), yt)
        out = self.name("q")
        self.nodes.append(helper.make_node("QuantizeLinear",
                                           [src, self.init(ys, "s"), self.init(yz, "z")], [out]))
        v = (out, ref, np.dtype(yt), ys, yz, tuple(shape))
        self.vals.append(v)
        return v

    def conv(self, v, depthwise=False):
        name, ref, xt, xs, xz, (n, c, h, w) = v
        kh = 1 if (c >= 64 and RNG.random() < 0.4) or (depthwise and RNG.random() < 0.3) else 3
        st = int(RNG.integers(1, 3)) if h > 6 and w > 6 else 1
        dil = 2 if kh == 3 and h > 8 and w > 8 and RNG.random() < 0.25 else 1
        pads = [int(RNG.integers(0, 2)) if kh == 3 else 0 for _ in range(4)]
        if min(h + pads[0] + pads[2], w + pads[1] + pads[3]) < dil * (kh - 1) + 1:
            kh, dil, pads = 3, 1, [1, 1, 1, 1]   # a small plane: padded
        group = c if depthwise else 1
        m = c if depthwise else int(RNG.choice([int(RNG.integers(5, 31)),
                                                int(RNG.integers(33, 80))], p=[0.75, 0.25]))
        per_ch = RNG.random() < 0.5
        wt = np.int8 if per_ch else np.uint8
        wq = q8(wt, (m, c // group, kh, kh))
        if per_ch:
            wz, ws = np.zeros(m, np.int8), RNG.uniform(0.001, 0.01, m).astype(np.float32)
        else:
            wz, ws = np.asarray(int(RNG.integers(100, 160)), np.uint8), \
                np.float32(RNG.uniform(0.001, 0.01))
        b = RNG.integers(-4000, 4000, m).astype(np.int32)
        bs = np.asarray(np.float32(xs) * ws, np.float32)
        wd, bd, cv = self.name("wd"), self.name("bd"), self.name("c")
        self.nodes.append(helper.make_node("DequantizeLinear", [self.init(wq, "w"),
                                           self.init(ws, "ws"), self.init(wz, "wz")], [wd],
                                           axis=0))
        self.nodes.append(helper.make_node("DequantizeLinear", [self.init(b, "b"),
                                           self.init(bs, "bs")], [bd], axis=0))
        self.nodes.append(helper.make_node("Conv", [self.dq(v), wd, bd], [cv],
                                           kernel_shape=[kh, kh], strides=[st, st],
                                           dilations=[dil, dil], pads=pads, group=group))
        yt = RNG.choice([np.uint8, np.int8])
        relu = RNG.random() < 0.4
        yz = LIM[np.dtype(yt)][0] if relu else None
        src = cv
        if relu:
            src = self.name("r")
            self.nodes.append(helper.make_node("Relu", [cv], [src]))
        oh = (h + pads[0] + pads[2] - dil * (kh - 1) - 1) // st + 1
        ow = (w + pads[1] + pads[3] - dil * (kh - 1) - 1) // st + 1
        out = self.q(src, (n, m, oh, ow), None, yt, RNG.uniform(0.05, 0.3), yz)
        if ref is not None and not depthwise:
            acc = conv_ref(ref, wq, xz, wz if per_ch else np.full(m, wz), [st, st],
                           [dil, dil], pads, group)
            acc = acc + b.reshape(1, -1, 1, 1).astype(np.int64)
            wsc = ws.reshape(1, -1, 1, 1) if per_ch else ws
            mult = ((np.float32(xs) * wsc).astype(np.float32) / out[3]).astype(np.float32)
            out = out[:1] + (requant(acc, mult, out[4], out[2]),) + out[2:]
            self.vals[-1] = out
        return out

    def pool(self, v):
        name, ref, xt, xs, xz, (n, c, h, w) = v
        k = int(RNG.integers(2, 4))
        st = int(RNG.integers(1, 3))
        pads = [int(RNG.integers(0, 2)) if k == 3 else 0 for _ in range(4)]
        if h + pads[0] + pads[2] < k or w + pads[1] + pads[3] < k:
            return v
        pv = self.name("p")
        self.nodes.append(helper.make_node("MaxPool", [self.dq(v)], [pv], kernel_shape=[k, k],
                                           strides=[st, st], pads=pads))
        oh = (h + pads[0] + pads[2] - k) // st + 1
        ow = (w + pads[1] + pads[3] - k) // st + 1
        same = RNG.random() < 0.5   # a quantizer's MaxPool keeps its input's parameters
        out = self.q(pv, (n, c, oh, ow), None, *((xt.type, xs, xz) if same else ()))
        if ref is not None:
            mx = maxpool_codes(ref, k, st, pads, xt)
            out = out[:1] + (remap(mx, xs, xz, out[3], out[4], out[2]),) + out[2:]
            self.vals[-1] = out
        return out

    def resize(self, v):
        name, _, _, _, _, (n, c, h, w) = v
        if h * w > 400:
            return v
        mode = RNG.choice(["nearest", "linear"])
        rv = self.name("rs")
        self.nodes.append(helper.make_node("Resize", [self.dq(v), "", self.init(
            np.array([1, 1, 2, 2], np.float32), "sc")], [rv], mode=mode))
        return self.q(rv, (n, c, 2 * h, 2 * w), None)

    def partner(self, v, same_c):
        sh = v[5]
        cands = [u for u in self.vals[:-1] if u[5][0] == sh[0] and u[5][2:] == sh[2:] and
                 (not same_c or u[5][1] == sh[1])]
        return cands[int(RNG.integers(len(cands)))] if cands else v

    def concat(self, v):
        u = self.partner(v, False)
        parts = [v, u] if RNG.random() < 0.5 else [u, v]
        cv = self.name("cat")
        self.nodes.append(helper.make_node("Concat", [self.dq(p) for p in parts], [cv], axis=1))
        sh = (v[5][0], v[5][1] + u[5][1]) + v[5][2:]
        # at times at v's parameters (as a quantizer writes a Concat): v's
        # codes copied as they are
        same = RNG.random() < 0.5
        out = self.q(cv, sh, None, *((v[2].type, v[3], v[4]) if same else ()))
        if all(p[1] is not None for p in parts):
            ref = np.concatenate([remap(p[1], p[3], p[4], out[3], out[4], out[2])
                                  for p in parts], axis=1)
            out = out[:1] + (ref,) + out[2:]
            self.vals[-1] = out
        return out

    def add(self, v):
        u = self.partner(v, True)
        av = self.name("add")
        self.nodes.append(helper.make_node("Add", [self.dq(v), self.dq(u)], [av]))
        return self.q(av, v[5], None)

    def scale(self, v):
        """A squeeze and excitation's scale: v's GlobalAveragePool,
        quantized, a Sigmoid unit of it, v times that per channel (a Mul
        unit of a channels-last operand and a per-channel one)."""
        sh = v[5][:2] + (1, 1)
        gv = self.name("gap")
        self.nodes.append(helper.make_node("GlobalAveragePool", [self.dq(v)], [gv]))
        g = self.q(gv, sh, None)
        sv = self.name("sig")
        self.nodes.append(helper.make_node("Sigmoid", [self.dq(g)], [sv]))
        sc = self.q(sv, sh, None, np.uint8, 1.0 / 256, 0)
        mv = self.name("mul")
        ins = [self.dq(v), self.dq(sc)]
        self.nodes.append(helper.make_node("Mul", ins if RNG.random() < 0.5 else ins[::-1], [mv]))
        return self.q(mv, v[5], None)

    def sigmoid(self, v):
        sv = self.name("sig")
        self.nodes.append(helper.make_node("Sigmoid", [self.dq(v)], [sv]))
        return self.q(sv, v[5], None, np.uint8, 1.0 / 256, 0)


def make(k):
    c = Case(k)
    n = 2 if k % 3 == 0 else 1
    ch = int(RNG.choice([3, 5, 7, 9, 12, 13, 21]))
    h, w = int(RNG.integers(6, 19)), int(RNG.integers(6, 19))
    xt = RNG.choice([np.uint8, np.int8])
    x = q8(xt, (n, ch, h, w))
    v = ("x", x, np.dtype(xt), np.float32(RNG.uniform(0.01, 0.05)), q8(xt, ()), x.shape)
    c.vals.append(v)
    v = c.conv(v)
    for _ in range(int(RNG.integers(2, 7))):
        # every third case of units numpy computes bit for bit
        op = RNG.choice(["conv", "conv", "pool", "concat"] if k % 3 == 1 else
                        ["conv", "conv", "pool", "resize", "concat", "add", "sigmoid", "dw"]
                        if k < N_FIRST else ["conv", "pool", "scale", "scale", "add", "dw"])
        v = c.conv(v, True) if op == "dw" else getattr(c, op)(v)
        if RNG.random() < 0.2 and v[0] not in [o[0] for o in c.outs]:
            c.outs.append(v)
    if v[0] not in [o[0] for o in c.outs]:
        c.outs.append(v)
    outs = [helper.make_tensor_value_info(o[0], T[o[2]], list(o[5])) for o in c.outs]
    g = helper.make_graph(c.nodes, "qdq_cl", [helper.make_tensor_value_info("x", T[x.dtype],
                                                                           list(x.shape))],
                          outs, c.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    return m, x, c.outs, [nd.op_type for nd in c.nodes if nd.op_type not in
                          ("DequantizeLinear", "QuantizeLinear")]


def run(opmig, path, x, d, env=None):
    """(the outputs, the results stored channels last), or (a message, 0)."""
    outs, stats = qdqlib.run(opmig, path, {"x": x}, d, env=env)
    if stats is None:
        return outs, 0
    cl = re.search(r"results stored channels last: (\d+)", stats)
    return outs, int(cl.group(1)) if cl else 0


def main():
    opmig, work = sys.argv[1], sys.argv[2]
    fails, n_cl, n_ref, jobs, wants = 0, 0, 0, [], []
    plain_env = dict(os.environ, OPMIG_NO_CL="1")
    for k in range(N_CASES):
        m, x, outs, ops = make(k)
        d = os.path.join(work, "c%d" % k)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "m.onnx")
        onnx.save(m, path)
        what = "case %d (%s; batch %d, %d channels)" % (k, " ".join(ops), x.shape[0],
                                                          x.shape[1])
        got, cl = run(opmig, path, x, d)
        plain, cl_plain = run(opmig, path, x, d, plain_env)
        if isinstance(got, str) or isinstance(plain, str):
            print("FAIL %s: %s" % (what, got if isinstance(got, str) else plain))
            fails += 1
            continue
        n_cl += cl
        bad = []
        if cl_plain:
            bad.append("OPMIG_NO_CL=1 stored %d results channels last" % cl_plain)
        for i, o in enumerate(outs):
            if steps(got[i], plain[i]):
                bad.append("output %s: %d of %d codes differ from OPMIG_NO_CL=1's" %
                           (o[0], int(np.sum(got[i] != plain[i])) if got[i].shape ==
                            plain[i].shape else -1, plain[i].size))
            if o[1] is not None:
                n_ref += 1
                if got[i].dtype != o[2] or steps(got[i], o[1]):
                    bad.append("output %s: %d of %d codes differ from numpy's units" %
                               (o[0], int(np.sum(got[i] != o[1])) if got[i].shape ==
                                o[1].shape else -1, o[1].size))
        if bad:
            print("FAIL %s: %s" % (what, "; ".join(bad)))
            fails += 1
        jobs.append((path, {"x": x}))
        wants.append((what, got))
    print("results stored channels last: %d; outputs checked against numpy: %d" %
          (n_cl, n_ref))
    if n_cl < N_CASES:
        print("FAIL: only %d results stored channels last over %d cases" % (n_cl, N_CASES))
        fails += 1
    why = ortlib.available()
    if why:
        print("notice: %s; onnxruntime comparison skipped" % why)
    else:
        same, worst = 0, 0
        for (what, got), res in zip(wants, ortlib.run_many(jobs, os.path.join(work, "ort"),
                                                           optimize=True)):
            if isinstance(res, str):
                print("FAIL %s: onnxruntime %s" % (what, res))
                fails += 1
                continue
            st = max(steps(a, b) for a, b in zip(res, got))
            worst = max(worst, st)
            same += st == 0
            if st > 2:
                print("FAIL %s: onnxruntime differs by %d steps" % (what, st))
                fails += 1
        print("onnxruntime: %d of %d cases bit-identical, at most %d steps apart" %
              (same, len(jobs), worst))
    print("%d cases, %d failures" % (N_CASES, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
