"""qdq_units.py OPMIG WORKDIR: static QDQ units (DequantizeLinear ->
Conv/MatMul -> QuantizeLinear, runtime/qdq.c) on seeded random cases.

Each case is a model whose graph input is an 8-bit tensor, dequantized,
convolved or multiplied with dequantized constant weights (per tensor or
per output channel; a Conv's bias dequantized from int32 at scale x_scale
* w_scale), optionally through a Relu, and quantized again; the quantized
tensor is the graph output.  Checked:
  * opmig's default run is bit for bit the fused unit's value, computed
    here in numpy: the exact integer sum plus the bias, as float32, times
    the float32 multiplier x_scale * w_scale / y_scale, rounded half to
    even, plus the zero point, saturated (onnxruntime's QLinearConv);
  * `opmig run --exact` and the default run are each within one step of
    the written graph's value computed in float64 (the unit's float32
    multiplier and the written graph's float32 sums round differently);
  * `--stats` counts the QuantizeLinear nodes the units did: one a run
    for each fusable case, none for the near misses (the bias at another
    scale, a Relu before a zero point that is not the least value, the
    Conv's result also a graph output), whose values must still hold;
  * a window of fewer than 64 products (narrow 1x1 and depthwise 3x3
    layers) is a unit where oneDNN's exact integer primitives run (this
    CPU has VNNI: /proc/cpuinfo), and with OPMIG_NO_DNNL=1 runs as written
    unless a full 3x3 over 3 channels (the "rgb" cases, units either way);
  * onnxruntime-node, with its graph optimizations (which fuse the same
    units), agrees within one step;
  * table units (runtime/qdq_table.c: a Concat of inputs at different
    scales and dtypes, an elementwise op of one input, Sigmoid, Tanh,
    LeakyRelu, Exp, of two broadcast inputs, Add, Mul, Sub, Max, between
    DequantizeLinear and QuantizeLinear) give the written graph's codes
    bit for bit: opmig's default run equals its --exact run, and they run
    as units (--stats).
Prints a line per failure and a summary; exits 1 on a failure."""
import functools
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ortlib  # noqa: E402
import qdqlib  # noqa: E402
from int_ops_ref import conv_ref  # noqa: E402
from qdqlib import LIM, T, requant, steps  # noqa: E402

RNG = np.random.default_rng(2612)
q8 = functools.partial(qdqlib.q8, RNG)


def written(real, ys, zp, dt):
    """QuantizeLinear of the written graph's value, in float64."""
    lo, hi = LIM[np.dtype(dt)]
    return np.clip(np.rint(real / np.float64(ys)) + int(zp), lo, hi).astype(dt)


def conv_case(k, miss):
    group = int(RNG.choice([1, 1, 2])) if miss not in ("wide", "rgb") else 1
    # dw: depthwise, a channel (or two) out of each input channel
    if miss == "dw":
        group = int(RNG.integers(3, 40))
    # wide: more output channels than one block of the channels-last pass
    mg = int(RNG.integers(1, 5)) if miss != "wide" else int(RNG.integers(33, 140))
    mg = int(RNG.integers(1, 3)) if miss == "dw" else mg
    kh, kw = int(RNG.integers(1, 4)), int(RNG.integers(1, 4))
    # 64 products per output at least, or narrower (runtime/qdq.c)
    cg = int(RNG.integers(1, 4)) if miss == "narrow" else 1 if miss == "dw" else \
        max(int(RNG.integers(4, 20)), -(-64 // (kh * kw)))
    if miss == "narrow":
        kh = kw = 1
    if miss == "dw":
        kh = kw = 3
    # rgb: an image's first layer, 3 channels by 3x3 (27 products), a unit
    if miss == "rgb":
        cg, kh, kw = 3, 3, 3
    stride = [int(RNG.integers(1, 3)), int(RNG.integers(1, 3))]
    dil = [int(RNG.integers(1, 3)), int(RNG.integers(1, 3))]
    pads = [int(RNG.integers(0, 2)) for _ in range(4)]
    h, wd = int(RNG.integers(kh * dil[0], 12)), int(RNG.integers(kw * dil[1], 12))
    xt, yt = RNG.choice([np.uint8, np.int8]), RNG.choice([np.uint8, np.int8])
    per_ch = k % 2 == 0
    wt = np.int8 if per_ch else RNG.choice([np.int8, np.uint8])
    m = mg * group
    x = q8(xt, (int(RNG.integers(1, 3)), cg * group, h, wd))
    w = q8(wt, (m, cg, kh, kw))
    xz, xs = q8(xt, ()), np.float32(RNG.uniform(0.01, 0.05))
    wz = np.zeros(m, np.int8) if per_ch else q8(wt, ())
    ws = np.asarray(RNG.uniform(0.001, 0.01, m) if per_ch else RNG.uniform(0.001, 0.01),
                    np.float32)
    relu = k % 3 == 1 or miss == "relu"
    ys = np.float32(RNG.uniform(0.05, 0.3))
    yz = np.array(LIM[np.dtype(yt)][0] if relu and miss != "relu" else q8(yt, ()), yt)
    bias = k % 4 != 3
    b = RNG.integers(-3000, 3000, m).astype(np.int32)
    bs = np.asarray(xs * ws, np.float32)
    if miss == "bias":
        bs = np.asarray(bs * np.float32(1.5), np.float32)
    attrs = dict(strides=stride, dilations=dil, pads=pads, group=group, kernel_shape=[kh, kw])
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xd"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
             helper.make_node("Conv", ["xd", "wd"] + (["bd"] if bias else []), ["c"], **attrs)]
    inits = [(xs, "xs"), (xz, "xz"), (w, "w"), (ws, "ws"), (wz, "wz"), (ys, "ys"), (yz, "yz")]
    if bias:
        nodes.insert(2, helper.make_node("DequantizeLinear", ["b", "bs"], ["bd"], axis=0))
        inits += [(b, "b"), (bs, "bs")]
    if relu:
        nodes.append(helper.make_node("Relu", ["c"], ["r"]))
    nodes.append(helper.make_node("QuantizeLinear", ["r" if relu else "c", "ys", "yz"], ["y"]))
    acc = conv_ref(x, w, xz, wz, stride, dil, pads, group)
    bb = b.reshape(1, -1, 1, 1).astype(np.int64) if bias else 0
    wsc = ws.reshape(1, -1, 1, 1) if per_ch else ws
    mult = (xs * wsc).astype(np.float32) / ys
    unit = requant(acc + bb, mult.astype(np.float32), yz, yt)
    real = acc.astype(np.float64) * np.float64(xs) * wsc.astype(np.float64)
    if bias:
        real += b.astype(np.float64).reshape(1, -1, 1, 1) * bs.astype(np.float64).reshape(1, -1, 1, 1)
    if relu:
        real = np.maximum(real, 0)
    return x, nodes, inits, unit, written(real, ys, yz, yt), acc.shape, yt


def matmul_case(k, rng=RNG, big=False):
    """big: thousands of rows of A (oneDNN's sums a block of rows at a
    time, the last block partial), drawn from rng."""
    r8 = functools.partial(qdqlib.q8, rng)
    batch = [int(rng.integers(1, 3))] if k % 2 else []
    mm, kd, nn = int(rng.integers(1, 9)), int(rng.integers(1, 80)), int(rng.integers(1, 12))
    if big:
        batch = [int(rng.integers(2, 4))]
        mm, kd, nn = int(rng.integers(300, 1200)), int(rng.integers(3, 41)), int(rng.integers(17, 71))
    at, yt = rng.choice([np.uint8, np.int8]), rng.choice([np.uint8, np.int8])
    per_col = k % 3 != 0
    a, b = r8(at, batch + [mm, kd]), r8(np.int8, [kd, nn])
    az, as_ = r8(at, ()), np.float32(rng.uniform(0.01, 0.05))
    bz = np.zeros(nn, np.int8) if per_col else r8(np.int8, ())
    bs = np.asarray(rng.uniform(0.001, 0.01, nn) if per_col else rng.uniform(0.001, 0.01),
                    np.float32)
    ys, yz = np.float32(rng.uniform(0.05, 0.3)), r8(yt, ())
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xd"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=1),
             helper.make_node("MatMul", ["xd", "wd"], ["c"]),
             helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["y"])]
    inits = [(as_, "xs"), (az, "xz"), (b, "w"), (bs, "ws"), (bz, "wz"), (ys, "ys"), (yz, "yz")]
    acc = np.matmul(a.astype(np.int64) - int(az), b.astype(np.int64) - bz.astype(np.int64))
    mult = ((as_ * bs).astype(np.float32) / ys).astype(np.float32)
    real = acc.astype(np.float64) * np.float64(as_) * bs.astype(np.float64)
    return a, nodes, inits, requant(acc, mult, yz, yt), written(real, ys, yz, yt), acc.shape, yt


def feeds_model(nodes, feeds, inits, yt):
    """The checked model of nodes over graph inputs feeds (name: codes)
    and initializers inits ((value, name)), its output y of dtype yt."""
    ins = [helper.make_tensor_value_info(n, T[a.dtype], list(a.shape)) for n, a in feeds.items()]
    g = helper.make_graph(nodes, "qdq", ins, [helper.make_tensor_value_info("y", T[np.dtype(yt)],
                                                                        [None] * 4)],
                          [numpy_helper.from_array(np.asarray(v), n) for v, n in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    return m


def table_case(k, lone=0):
    """A Concat, unary or binary op between DequantizeLinear and
    QuantizeLinear; inputs x0 (and x1, x2).  lone 1 or 2: a binary op
    whose input lone - 1 holds one element (a bias or a scale: the pair
    table's row or column maps the other's codes)."""
    kind = "binary" if lone else ("concat", "unary", "binary")[k % 3]
    yt = RNG.choice([np.uint8, np.int8])
    shape = [int(RNG.integers(1, 3)), int(RNG.integers(1, 5)), int(RNG.integers(1, 7)),
             int(RNG.integers(1, 9))]
    feeds, nodes, inits, names = {}, [], [], []
    n_in = {"concat": int(RNG.integers(2, 4)), "unary": 1, "binary": 2}[kind]
    axis = int(RNG.integers(-4, 4))
    for j in range(n_in):
        sh = list(shape)
        if kind == "concat":
            sh[axis] = int(RNG.integers(1, 4))
        if kind == "binary" and j == 1 and k % 2 and not lone:
            sh = [1 if RNG.random() < 0.5 else d for d in sh[1:]]   # broadcast
        if lone and j == lone - 1:
            sh = [] if k % 2 else [1] * (k % 4)
        xt = RNG.choice([np.uint8, np.int8])
        x = q8(xt, sh)
        feeds["x%d" % j] = x
        inits += [(np.float32(RNG.uniform(0.005, 0.2)), "s%d" % j), (q8(xt, ()), "z%d" % j)]
        nodes.append(helper.make_node("DequantizeLinear", ["x%d" % j, "s%d" % j, "z%d" % j],
                                      ["d%d" % j]))
        names.append("d%d" % j)
    if kind == "concat":
        nodes.append(helper.make_node("Concat", names, ["c"], axis=axis))
    elif kind == "unary":
        op = ("Sigmoid", "Tanh", "LeakyRelu", "Exp")[(k // 3) % 4]
        nodes.append(helper.make_node(op, names, ["c"], **({"alpha": 0.07}
                                                           if op == "LeakyRelu" else {})))
    else:
        nodes.append(helper.make_node(("Add", "Mul", "Sub", "Max")[(k if lone else k // 3) % 4],
                                      names, ["c"]))
    inits += [(np.float32(RNG.uniform(0.01, 0.1)), "ys"), (q8(yt, ()), "yz")]
    nodes.append(helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["y"]))
    m = feeds_model(nodes, feeds, inits, yt)
    return "%s case %d (%s)" % (kind, k, nodes[-2].op_type), m, feeds


BIG = np.random.default_rng(2614)


def big_case(k):
    """A binary op between DequantizeLinear and QuantizeLinear on
    thousands of codes: x0 (2, C, H, W), x1 of the same shape or
    broadcast (per channel, per row, per image and channel).  Div's
    divisor never meets its zero point (a quotient onnxruntime leaves
    undefined) but in the "zero" cases, not sent to onnxruntime."""
    op = ("Add", "Sub", "Mul", "Div", "Max", "Min")[k % 6]
    zero = op == "Div" and k >= 12
    shape = [2, int(BIG.choice([3, 17, 33])), int(BIG.integers(5, 41)), int(BIG.integers(5, 41))]
    sh1 = (list(shape), [1, shape[1], 1, 1], [shape[3]], [2, shape[1], 1, 1])[(k // 6) % 4]
    feeds, inits, nodes = {}, [], []
    for j, sh in enumerate((shape, sh1)):
        xt = BIG.choice([np.uint8, np.int8])
        lo, hi = LIM[np.dtype(xt)]
        z = int(BIG.integers(lo, hi + 1))
        x = BIG.integers(lo, hi + 1, size=sh)
        if j == 1 and op == "Div":
            x = np.where(x == z, z + (1 if z < hi else -1), x)
            if zero:
                x.flat[::7] = z
        feeds["x%d" % j] = x.astype(xt)
        inits += [(np.float32(BIG.uniform(0.005, 0.2)), "s%d" % j), (np.asarray(z, xt), "z%d" % j)]
        nodes.append(helper.make_node("DequantizeLinear", ["x%d" % j, "s%d" % j, "z%d" % j],
                                      ["d%d" % j]))
    nodes.append(helper.make_node(op, ["d0", "d1"], ["c"]))
    yt = BIG.choice([np.uint8, np.int8])
    inits += [(np.float32(BIG.uniform(0.01, 0.1) * (20 if op in ("Mul", "Div") else 1)), "ys"),
              (q8(yt, ()), "yz")]
    nodes.append(helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["y"]))
    m = feeds_model(nodes, feeds, inits, yt)
    return "big %s case %d (%s)" % ("zero" if zero else "binary", k, op), m, feeds, zero


def model(nodes, x, inits, shape, yt, extra_out=False):
    outs = [helper.make_tensor_value_info("y", T[np.dtype(yt)], list(shape))]
    if extra_out:
        outs.append(helper.make_tensor_value_info("c", TensorProto.FLOAT, list(shape)))
    g = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", T[x.dtype],
                                                                      list(x.shape))],
                          outs, [numpy_helper.from_array(np.asarray(v), n) for v, n in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    return m


def run(opmig, path, x, d, *flags, env=None):
    """(the output, the QuantizeLinear nodes units did), or (a message, 0)."""
    outs, stats = qdqlib.run(opmig, path, x if isinstance(x, dict) else {"x": x}, d, *flags,
                             env=env)
    if stats is None:
        return outs, 0
    return outs[0], qdqlib.fused(stats, "QuantizeLinear")


def vnni():
    """Whether oneDNN's integer primitives are exact here (VNNI, as
    runtime/kernels/k_dnnl.c asks oneDNN)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read().split()
    except OSError:
        return False
    return "avx512_vnni" in flags or "avx_vnni" in flags


def main():
    opmig, work = sys.argv[1], sys.argv[2]
    cases = [("conv", k, None) for k in range(24)] + [("matmul", k, None) for k in range(12)]
    cases += [("conv", k, miss) for k in range(3)
              for miss in ("bias", "relu", "output", "narrow", "dw")]
    cases += [("conv", k, "wide") for k in range(6)]
    cases += [("conv", k, "rgb") for k in range(2)]
    cases += [("matmul", k, "big") for k in range(6)]
    fails, jobs, wants = 0, [], []
    for kind, k, miss in cases:
        x, nodes, inits, unit, ref, shape, yt = conv_case(k, miss) if kind == "conv" \
            else matmul_case(k, BIG, True) if miss == "big" else matmul_case(k)
        d = os.path.join(work, "%s%d%s" % (kind, k, miss or ""))
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "m.onnx")
        onnx.save(model(nodes, x, inits, shape, yt, miss == "output"), path)
        what = "%s case %d%s" % (kind, k, " (" + miss + ")" if miss else "")
        small = miss in ("narrow", "dw")
        big = miss == "big"
        miss = None if miss in ("wide", "rgb", "big") or (small and vnni()) else miss
        got, fused = run(opmig, path, x, d)
        if big and not isinstance(got, str):
            # two threads: oneDNN's blocks shared out, the same codes
            got2 = qdqlib.run(opmig, path, {"x": x}, d, threads=2)[0]
            if isinstance(got2, str) or not np.array_equal(got2[0], unit):
                print("FAIL %s: two threads: %s" % (
                    "matmul case %d (big)" % k, got2 if isinstance(got2, str) else
                    "%d of %d differ from the unit's value" % (int(np.sum(got2[0] != unit)),
                                                               unit.size)))
                fails += 1
        exact, fused_exact = run(opmig, path, x, d, "--exact")
        if small and not isinstance(got, str):
            # without oneDNN: as written, within one step
            plain, fused_plain = run(opmig, path, x, d, env=dict(os.environ, OPMIG_NO_DNNL="1"))
            if isinstance(plain, str) or fused_plain or steps(plain, ref) > 1:
                print("FAIL %s: OPMIG_NO_DNNL=1: %s" % (
                    what, plain if isinstance(plain, str) else
                    "%d QuantizeLinear done by units, %d steps from the written graph" %
                    (fused_plain, steps(plain, ref))))
                fails += 1
        if isinstance(got, str) or isinstance(exact, str):
            print("FAIL %s: %s" % (what, got if isinstance(got, str) else exact))
            fails += 1
            continue
        bad = []
        if miss is None and not np.array_equal(got, unit):
            bad.append("%d of %d differ from the unit's value" % (int(np.sum(got != unit)),
                                                                  unit.size))
        if steps(got, ref) > 1 or steps(exact, ref) > 1:
            bad.append("more than one step from the written graph (%d, --exact %d)" %
                       (steps(got, ref), steps(exact, ref)))
        if fused != (0 if miss else 1) or fused_exact:
            bad.append("%d QuantizeLinear done by units (--exact: %d), expected %d" %
                       (fused, fused_exact, 0 if miss else 1))
        if bad:
            print("FAIL %s: %s" % (what, "; ".join(bad)))
            fails += 1
        jobs.append((path, {"x": x}))
        wants.append((what, got))
    for k in range(32):
        what, m, feeds = table_case(k, 0 if k < 24 else 1 + k % 2)
        d = os.path.join(work, "t%d" % k)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "m.onnx")
        onnx.save(m, path)
        got, fused = run(opmig, path, feeds, d)
        exact, fused_exact = run(opmig, path, feeds, d, "--exact")
        cases.append(what)
        if isinstance(got, str) or isinstance(exact, str):
            print("FAIL %s: %s" % (what, got if isinstance(got, str) else exact))
            fails += 1
        elif got.shape != exact.shape or not np.array_equal(got, exact) or fused != 1 \
                or fused_exact:
            print("FAIL %s: %d of %d codes differ from the written graph's; %d QuantizeLinear "
                  "done by units (--exact %d), expected 1" %
                  (what, int(np.sum(got != exact)) if got.shape == exact.shape else -1,
                   exact.size, fused, fused_exact))
            fails += 1
        else:
            jobs.append((path, feeds))
            wants.append((what, got))
    for k in range(30):
        what, m, feeds, zero = big_case(k)
        d = os.path.join(work, "b%d" % k)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "m.onnx")
        onnx.save(m, path)
        got, fused = run(opmig, path, feeds, d)
        got2 = qdqlib.run(opmig, path, feeds, d, threads=2)[0]
        exact, fused_exact = run(opmig, path, feeds, d, "--exact")
        cases.append(what)
        if isinstance(got, str) or isinstance(exact, str) or isinstance(got2, str):
            print("FAIL %s: %s" % (what, [r for r in (got, got2, exact) if isinstance(r, str)][0]))
            fails += 1
        elif not qdqlib.same(got, exact) or not qdqlib.same(got2[0], exact) or fused != 1 \
                or fused_exact:
            print("FAIL %s: %d (two threads: %d) of %d codes differ from the written graph's; "
                  "%d QuantizeLinear done by units (--exact %d), expected 1" %
                  (what, int(np.sum(got != exact)) if got.shape == exact.shape else -1,
                   int(np.sum(got2[0] != exact)) if got2[0].shape == exact.shape else -1,
                   exact.size, fused, fused_exact))
            fails += 1
        elif not zero:
            jobs.append((path, feeds))
            wants.append((what, got))
    why = ortlib.available()
    if why:
        print("notice: %s; onnxruntime comparison skipped" % why)
    else:
        same = 0
        for (what, got), res in zip(wants, ortlib.run_many(jobs, os.path.join(work, "ort"),
                                                           optimize=True)):
            if isinstance(res, str) or steps(res[0], got) > 1:
                print("FAIL %s: onnxruntime %s" % (what, res if isinstance(res, str)
                                                    else "differs by %d steps" %
                                                    steps(res[0], got)))
                fails += 1
            else:
                same += np.array_equal(res[0], got)
        print("onnxruntime: %d of %d cases bit-identical, the rest within one step" %
              (same, len(jobs)))
    print("%d cases, %d failures" % (len(cases), fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
