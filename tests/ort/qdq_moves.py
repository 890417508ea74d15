"""qdq_moves.py OPMIG WORKDIR: static QDQ units that move 8-bit codes
(runtime/qdq_table.c: DequantizeLinear -> a nearest Resize, Transpose,
Reshape, Slice, Squeeze, Unsqueeze or Flatten -> QuantizeLinear; a Split
whose every piece is quantized, in the last 20 cases) and the
quantized SiLU (x * Sigmoid(x) of one DequantizeLinear, a table of x's
codes), on seeded random chains.

Each case is a graph whose input is 8-bit codes; at times a QDQ Conv
first (a QLinearConv unit storing its codes channels last; power-of-two
scales and small weights, so that its float32 sums are exact and the
unit equals the written graph bit for bit), then 1 to 4 steps, each a
move op (Resize nearest under each coordinate transformation and
nearest mode, by scales or sizes, the channels resized at times;
Transpose, Reshape, Slice with negative steps, Squeeze, Unsqueeze,
Flatten) or a SiLU, each between DequantizeLinear and QuantizeLinear of
the same scale and zero point (the codes copied) or of others (mapped,
at times to the other 8-bit type); some intermediate codes are graph
outputs, and at times the Sigmoid's codes are (no derived unit then).
Checked:
  * every output of the default run is bit for bit the run with
    OPMIG_NO_CL=1 and the written graph (`opmig run --exact`: no units);
  * no QuantizeLinear runs in the default run (every one done by a
    unit), while --exact runs them all;
  * the outputs of the moves but Resize are bit for bit numpy's
    (the op on the codes, QuantizeLinear(DequantizeLinear(code)) in
    float32);
  * `--stats` shows results stored channels last (over all cases);
  * onnxruntime-node, with its graph optimizations: bit for bit where
    the chain is of moves, within one step with a SiLU (its Sigmoid is
    its own); the cases bit-identical are counted.
Prints a line per failure and a summary; exits 1 on a failure."""
import functools
import os
import re
import sys

import numpy as np
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import opmiglib  # noqa: E402
import ortlib  # noqa: E402
import qdqlib  # noqa: E402
from qdqlib import T, remap  # noqa: E402

RNG = np.random.default_rng(2627)
q8 = functools.partial(qdqlib.q8, RNG)
N_FIRST = 70    # the cases drawn before Splits were
N_CASES = 90
COORDS = ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
          "tf_half_pixel_for_nn")
NEAREST = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


class Case:
    def __init__(self, k):
        self.k, self.nodes, self.inits, self.outs, self.u = k, [], [], [], 0
        self.has_silu = False

    def name(self, p):
        self.u += 1
        return "%s%d" % (p, self.u)

    def init(self, v, p):
        n = self.name(p)
        self.inits.append(numpy_helper.from_array(np.asarray(v), n))
        return n

    def node(self, op, ins, **attrs):
        out = self.name(op[:2].lower())
        self.nodes.append(helper.make_node(op, ins, [out], **attrs))
        return out

    def dq(self, v):
        return self.node("DequantizeLinear", [v["name"], self.init(v["s"], "s"),
                                              self.init(v["z"], "z")])

    def q(self, src, v, ref, shape, same, pow2=False):
        """QuantizeLinear of src: v's scale and zero point when same, else
        others (the other 8-bit type at times; a power of two when
        pow2)."""
        if same and (not pow2 or pow2_scale(v["s"])):
            yt, ys, yz = v["dt"], v["s"], v["z"]
        else:
            yt = np.dtype(RNG.choice([np.uint8, np.int8]))
            ys = np.float32(2.0 ** -int(RNG.integers(3, 7)) if pow2 else RNG.uniform(0.01, 0.2))
            yz = np.asarray(q8(yt, ()), yt)
        out = self.node("QuantizeLinear", [src, self.init(ys, "s"), self.init(yz, "z")])
        if ref is not None:
            ref = remap(ref, v["s"], v["z"], ys, yz, yt)
        return {"name": out, "dt": np.dtype(yt), "s": np.float32(ys), "z": np.asarray(yz, yt),
                "shape": tuple(shape), "ref": ref}

    def conv(self, v):
        """A QDQ Conv 3x3, pads 1: power-of-two scales, weights in
        [-8, 8], so the float32 sums of the written graph are exact."""
        n, c, h, w = v["shape"]
        m = int(RNG.integers(3, 21))
        wq = RNG.integers(-8, 9, size=(m, c, 3, 3)).astype(np.int8)
        d = self.dq(v)
        dw = self.node("DequantizeLinear", [self.init(wq, "w"),
                                            self.init(np.float32(2.0 ** -int(RNG.integers(2, 5))),
                                                      "s"),
                                            self.init(np.int8(0), "z")])
        y = self.node("Conv", [d, dw], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        yt = np.dtype(RNG.choice([np.uint8, np.int8]))
        ys = np.float32(2.0 ** -int(RNG.integers(0, 4)))
        yz = np.asarray(q8(yt, ()), yt)
        out = self.node("QuantizeLinear", [y, self.init(ys, "s"), self.init(yz, "z")])
        return {"name": out, "dt": yt, "s": ys, "z": yz, "shape": (n, m, h, w), "ref": None}

    def resize(self, v, keep_c=False):
        shape = v["shape"]
        r = len(shape)
        attrs = {"mode": "nearest",
                 "coordinate_transformation_mode": str(RNG.choice(COORDS)),
                 "nearest_mode": str(RNG.choice(NEAREST))}
        ins = [self.dq(v), ""]
        keep_c = keep_c or r < 2 or RNG.random() < 0.85
        if RNG.random() < 0.5:
            sc = [1.0] * r
            for d in range(max(0, r - 2) if keep_c else 1, r):
                sc[d] = float(RNG.choice([0.5, 1.5, 2.0, 3.0, 0.75]))
            ins.append(self.init(np.asarray(sc, np.float32), "sc"))
            out = [int(np.floor(shape[d] * np.float32(sc[d]))) for d in range(r)]
        else:
            out = list(shape)
            for d in range(max(0, r - 2) if keep_c else 1, r):
                out[d] = int(RNG.integers(1, 2 * shape[d] + 3))
            ins += ["", self.init(np.asarray(out, np.int64), "sz")]
        if min(out) < 1:
            return v, None
        return v, (("Resize", ins, attrs, out, 13), None)

    def move(self, v, cl):
        """A move op of v's dequantized codes: (op, inputs, attributes,
        output shape, opset it needs) and its numpy function of the
        codes (None for Resize)."""
        shape = v["shape"]
        r = len(shape)
        kind = RNG.choice(["resize", "resize", "transpose", "reshape", "slice", "unsqueeze",
                           "squeeze", "flatten"])
        if cl or (kind == "resize" and r >= 1):
            return self.resize(v, cl)
        if kind == "transpose":
            perm = [int(p) for p in RNG.permutation(r)]
            return v, (("Transpose", [self.dq(v)], {"perm": perm},
                        [shape[p] for p in perm], 13), lambda a: np.transpose(a, perm))
        if kind == "reshape" and r >= 2:
            a = int(RNG.integers(1, r))
            out = [int(np.prod(shape[:a])), -1]
            tgt = [out[0], int(np.prod(shape[a:]))]
            return v, (("Reshape", [self.dq(v), self.init(np.asarray(out, np.int64), "sh")], {},
                        tgt, 13), lambda x: x.reshape(tgt))
        if kind == "slice":
            ax = int(RNG.integers(0, r))
            n = shape[ax]
            step = int(RNG.choice([1, 2, -1, -2]))
            if step > 0:
                st, en = int(RNG.integers(0, n)), int(RNG.integers(1, n + 2))
            else:
                st, en = int(RNG.integers(0, n + 1)) - 1, -n - 2
                st = max(st, 0)
            sl = [slice(None)] * r
            sl[ax] = slice(st, en if en >= -n else None, step)
            if step < 0 and en < -n:
                sl[ax] = slice(st, None, step)
            res = np.zeros(shape, np.int8)[tuple(sl)].shape
            if 0 in res:
                return v, None
            ins = [self.dq(v), self.init(np.asarray([st], np.int64), "st"),
                   self.init(np.asarray([en], np.int64), "en"),
                   self.init(np.asarray([ax - r if RNG.random() < 0.3 else ax], np.int64), "ax"),
                   self.init(np.asarray([step], np.int64), "sp")]
            return v, (("Slice", ins, {}, list(res), 13), lambda a: a[tuple(sl)])
        if kind == "unsqueeze" and r < 5:
            ax = int(RNG.integers(0, r + 1))
            out = list(shape[:ax]) + [1] + list(shape[ax:])
            return v, (("Unsqueeze", [self.dq(v), self.init(np.asarray([ax], np.int64), "ax")],
                        {}, out, 13), lambda a: a.reshape(out))
        if kind == "squeeze" and 1 in shape:
            ax = shape.index(1)
            out = list(shape[:ax]) + list(shape[ax + 1:])
            return v, (("Squeeze", [self.dq(v), self.init(np.asarray([ax], np.int64), "ax")],
                        {}, out, 13), lambda a: a.reshape(out))
        if kind == "flatten":
            ax = int(RNG.integers(0, r + 1))
            out = [int(np.prod(shape[:ax])), int(np.prod(shape[ax:]))]
            return v, (("Flatten", [self.dq(v)], {"axis": ax}, out, 13),
                       lambda a: a.reshape(out))
        return self.resize(v)

    def split(self, v):
        """A Split of v's dequantized codes into 2 to 4 pieces along an
        axis (by a split input, or equal pieces without one), each piece
        quantized on its own (the same scale or another); one piece
        goes on, the others are graph outputs."""
        shape = v["shape"]
        ax = int(RNG.integers(0, len(shape)))
        n = shape[ax]
        if n < 2:
            return v
        parts = int(RNG.integers(2, min(4, n) + 1))
        if n % parts == 0 and RNG.random() < 0.4:
            cuts = [n // parts * i for i in range(1, parts)]
            ins = [self.dq(v)]
        else:
            cuts = sorted(int(c) for c in RNG.choice(np.arange(1, n), parts - 1, replace=False))
            sizes = np.diff([0] + cuts + [n]).astype(np.int64)
            ins = [self.dq(v), self.init(sizes, "ss")]
        names = [self.name("sp") for _ in range(parts)]
        self.nodes.append(helper.make_node("Split", ins, names, axis=ax))
        refs = np.split(v["ref"], cuts, axis=ax) if v["ref"] is not None else [None] * parts
        pieces = []
        for nm, ref in zip(names, refs):
            sh = list(shape)
            sh[ax] = int(np.diff([0] + cuts + [n])[len(pieces)])
            pieces.append(self.q(nm, v, ref, sh, RNG.random() < 0.5))
        go = int(RNG.integers(0, parts))
        self.outs += [pc for i, pc in enumerate(pieces) if i != go]
        return pieces[go]

    def silu(self, v, pow2=False):
        """x * Sigmoid(x) of one DequantizeLinear of v, as a quantizer
        writes it; the Sigmoid's codes a graph output at times."""
        d = self.dq(v)
        s = self.q(self.node("Sigmoid", [d]), v, None, v["shape"], False)
        if RNG.random() < 0.15:
            self.outs.append(s)
        ds = self.dq(s)
        ins = [d, ds] if RNG.random() < 0.5 else [ds, d]
        self.has_silu = True
        return self.q(self.node("Mul", ins), v, None, v["shape"], RNG.random() < 0.2, pow2)


def pow2_scale(s):
    return float(np.log2(s)).is_integer()


def make(k):
    c = Case(k)
    xt = np.dtype(RNG.choice([np.uint8, np.int8]))
    shape = (int(RNG.integers(1, 3)), int(RNG.integers(3, 20)), int(RNG.integers(2, 13)),
             int(RNG.integers(2, 13)))
    x = q8(xt, shape)
    v = {"name": "x", "dt": xt, "s": np.float32(2.0 ** -int(RNG.integers(3, 7))),
         "z": np.asarray(q8(xt, ()), xt), "shape": shape, "ref": x}
    opset = 13
    # a Conv first (its codes channels last) and, at times, last (a
    # reader that takes them so, the chain's last scale a power of two)
    head = RNG.random() < 0.7
    tail = head and RNG.random() < 0.85
    # at times only moves that keep the codes channels last (Resize)
    cl = tail and RNG.random() < 0.5
    if head:
        v = c.conv(v)
    n = int(RNG.integers(1, 5))
    for i in range(n):
        # the cases after the first N_FIRST: Splits too
        if k >= N_FIRST and not cl and RNG.random() < 0.4:
            v = c.split(v)
            continue
        if RNG.random() < 0.25 and len(v["shape"]) >= 2:
            v = c.silu(v, tail and i == n - 1)
            continue
        v, mv = c.move(v, cl)
        if mv is None:
            continue
        (op, ins, attrs, out, need), fn = mv
        opset = max(opset, need)
        y = c.node(op, ins, **attrs)
        ref = fn(v["ref"]) if fn is not None and v["ref"] is not None else None
        v = c.q(y, v, ref, out, RNG.random() < 0.5, tail and i == n - 1)
        if RNG.random() < 0.25:
            c.outs.append(v)
    if tail and len(v["shape"]) == 4 and v["shape"][1] >= 3 and pow2_scale(v["s"]):
        v = c.conv(v)
    if not c.outs or c.outs[-1] is not v:
        c.outs.append(v)
    return c, x, opset


def ran_q(stats):
    """QuantizeLinear nodes run and done by units, from --stats."""
    m = re.search(r"^QuantizeLinear\s+(\d+)\s+\d+\s+(\d+)", stats, re.M)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def main():
    opmig, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    fails, cl, jobs, wants = 0, 0, [], []
    for k in range(N_CASES):
        c, x, opset = make(k)
        d = os.path.join(work, "c%d" % k)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "m.onnx")
        outs = [helper.make_tensor_value_info(o["name"], T[o["dt"]], list(o["shape"]))
                for o in c.outs]
        opmiglib.save(c.nodes, c.inits, [helper.make_tensor_value_info("x", T[x.dtype],
                                                                       list(x.shape))],
                      outs, path, opset=opset)
        xp = os.path.join(d, "x.npy")
        np.save(xp, x)
        ops = "/".join(n.op_type for n in c.nodes if n.op_type not in
                       ("DequantizeLinear", "QuantizeLinear"))
        what = "case %d (%s)" % (k, ops)
        args = ("--threads", "1")
        got, st = opmiglib.run(opmig, path, xp, os.path.join(d, "a"), args=args)
        plain, _ = opmiglib.run(opmig, path, xp, os.path.join(d, "b"),
                                dict(os.environ, OPMIG_NO_CL="1"), args=args)
        exact, st_x = opmiglib.run(opmig, path, xp, os.path.join(d, "e"),
                                   args=args + ("--exact",))
        bad = [r for r in (got, plain, exact) if isinstance(r, str)]
        if bad:
            print("FAIL %s: %s" % (what, bad[0]))
            fails += 1
            continue
        m = re.search(r"results stored channels last: (\d+)", st)
        cl += int(m.group(1)) if m else 0
        n_q = sum(n.op_type == "QuantizeLinear" for n in c.nodes)
        why = []
        if got != plain:
            why.append("differs from the plain run (OPMIG_NO_CL=1)")
        if got != exact:
            why.append("differs from the written graph (--exact)")
        if ran_q(st) != (0, n_q) or ran_q(st_x)[0] != n_q:
            why.append("QuantizeLinear run/done by units %s, --exact run %d, of %d" %
                       (ran_q(st), ran_q(st_x)[0], n_q))
        for o, b in zip(c.outs, got):
            if o["ref"] is not None and not np.array_equal(opmiglib.array(b), o["ref"]):
                why.append("output %s differs from numpy's" % o["name"])
        if why:
            print("FAIL %s: %s" % (what, "; ".join(why)))
            fails += 1
            continue
        jobs.append((path, {"x": x}))
        wants.append((what, got, c.has_silu))
    if cl == 0:
        print("FAIL: no result stored channels last in any case")
        fails += 1
    why = ortlib.available()
    if why:
        print("notice: %s; onnxruntime comparison skipped" % why)
    else:
        same = 0
        for (what, got, silu), res in zip(wants, ortlib.run_many(jobs, os.path.join(work, "ort"),
                                                                 optimize=True)):
            if isinstance(res, str):
                print("FAIL %s: onnxruntime: %s" % (what, res))
                fails += 1
                continue
            st = max(int(np.max(np.abs(opmiglib.array(g) - r.astype(np.float64))))
                     if r.size else 0 for g, r in zip(got, res))
            if st > (1 if silu else 0):
                print("FAIL %s: onnxruntime differs by %d steps" % (what, st))
                fails += 1
            same += st == 0
        print("onnxruntime: %d of %d cases bit-identical" % (same, len(jobs)))
    print("%d results stored channels last" % cl)
    print("%d cases, %d failures" % (N_CASES, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
