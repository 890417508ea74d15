"""pool_bool_props.py OPMIG WORKDIR: the typed fast paths of issue 26 on
seeded random cases, at one thread and two, against numpy references of
what the per-element paths computed, and against onnxruntime-node where
it defines the case:

- MaxPool of stride 1 (runtime/kernels/k_pool_win.c for windows of 25
  taps or more, the other kernels below): kernels 1 to 16 a side, square
  or not, asymmetric pads below the kernel, planes narrow and wide, few
  and many, tall ones split in bands over threads; data with ties, -inf,
  inf and (some cases) NaN.  Each output is the max of its window: NaN
  where the window holds one, else the largest value (the sign of a zero
  maximum and a NaN's payload are not compared).
- And, Or, Xor, Not on bool; Equal, Greater, GreaterOrEqual, Less,
  LessOrEqual on float32, double, int64, int32, int8, uint8 (and Equal
  on bool): same shapes, a scalar on either side, and a broadcast,
  floats with NaN, zeros of both signs and infinities: bit for bit.
- Cast between float32, double, int64, int32, int8, uint8 and bool:
  bit for bit what the per-element path gives (integers wrap; a float
  goes to an integer through int64, NaN and below -2^63 to INT64_MIN,
  above to INT64_MAX; nonzero and NaN are true; int64 to float32 through
  double), on values out of range too; onnxruntime on values in range.
Prints one line per check; exits 1 on a failure, 77 when
onnxruntime-node is absent."""
import os
import sys

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opmiglib  # noqa: E402
import ortlib  # noqa: E402
from qdqlib import run  # noqa: E402

RNG = np.random.default_rng(1247)
ONNX_T = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
          np.int64: TensorProto.INT64, np.int32: TensorProto.INT32,
          np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8, np.bool_: TensorProto.BOOL}


def vi(name, dt, shape):
    return helper.make_tensor_value_info(name, ONNX_T[dt], list(shape))


# ---- MaxPool ------------------------------------------------------------

def pool_cases():
    """(n, c, h, w, kh, kw, pads [top, left, bottom, right], nan)"""
    fixed = [(1, 1, 240, 320, 9, 9, [4, 4, 4, 4], 0),     # SuperPoint's NMS
             (1, 1, 240, 320, 9, 9, [4, 4, 4, 4], 1),
             (1, 1, 100, 64, 13, 13, [6, 6, 6, 6], 0),
             (1, 20, 14, 14, 5, 5, [2, 2, 2, 2], 0),      # sixteen-plane kernel
             (1, 20, 14, 14, 5, 5, [2, 2, 2, 2], 1),
             (2, 3, 30, 30, 16, 16, [7, 8, 8, 7], 0),     # a power of two
             (1, 2, 40, 50, 8, 8, [3, 4, 4, 3], 1),
             (1, 2, 70, 40, 1, 25, [0, 12, 0, 12], 1),    # one row
             (1, 2, 70, 40, 25, 1, [12, 0, 12, 0], 0),    # one column
             (1, 1, 9, 300, 9, 9, [0, 0, 0, 0], 0),       # no pads
             (1, 5, 33, 29, 7, 5, [6, 0, 0, 4], 1),
             (1, 1, 200, 30, 3, 3, [1, 1, 1, 1], 1),      # small windows: other kernels
             (1, 1, 64, 64, 5, 5, [2, 2, 2, 2], 1)]
    out = list(fixed)
    for _ in range(27):
        kh, kw = int(RNG.integers(1, 16)), int(RNG.integers(1, 16))
        if kh * kw < 25 and RNG.random() < 0.7:
            kh = max(kh, 5)
            kw = max(kw, 5)
        pads = [int(RNG.integers(0, kh)), int(RNG.integers(0, kw)),
                int(RNG.integers(0, kh)), int(RNG.integers(0, kw))]
        h = int(RNG.integers(max(1, kh - pads[0] - pads[2]), 90))
        w = int(RNG.integers(max(1, kw - pads[1] - pads[3]), 80))
        out.append((int(RNG.integers(1, 3)), int(RNG.choice([1, 2, 3, 17, 20])), h, w, kh, kw,
                    pads, int(RNG.random() < 0.4)))
    return out


def pool_data(shape, nan):
    x = RNG.standard_normal(shape).astype(np.float32)
    ties = RNG.random(shape) < 0.3
    x[ties] = np.round(x[ties])                   # equal values, zeros
    special = RNG.random(shape)
    x[special < 0.01] = -np.inf
    x[(special >= 0.01) & (special < 0.013)] = np.inf
    x[(special >= 0.013) & (special < 0.02)] = -0.0
    if nan:
        x[RNG.random(shape) < 0.004] = np.nan
    return x


def pool_ref(x, kh, kw, pads):
    p = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])),
               constant_values=-np.inf)
    return np.max(sliding_window_view(p, (kh, kw), axis=(2, 3)), axis=(-2, -1))


def same_max(got, want):
    """Bit for bit but for the sign of zeros and NaN payloads."""
    return got.shape == want.shape and got.dtype == want.dtype and \
        np.array_equal(np.isnan(got), np.isnan(want)) and \
        bool(np.all((got == want) | np.isnan(want)))


def pools(opmig, work):
    cases = pool_cases()
    nodes, ins, outs, feeds, refs, what = [], [], [], {}, [], []
    for i, (n, c, h, w, kh, kw, pads, nan) in enumerate(cases):
        x = pool_data((n, c, h, w), nan)
        nodes.append(helper.make_node("MaxPool", ["x%d" % i], ["y%d" % i],
                                      kernel_shape=[kh, kw], pads=pads, strides=[1, 1],
                                      ceil_mode=int(i % 3 == 1)))
        ins.append(vi("x%d" % i, np.float32, x.shape))
        feeds["x%d" % i] = x
        refs.append(pool_ref(x, kh, kw, pads))
        outs.append(vi("y%d" % i, np.float32, refs[-1].shape))
        what.append("MaxPool %dx%d pads %s on %s%s" % (kh, kw, pads, list(x.shape),
                                                       ", NaN" if nan else ""))
    path = os.path.join(work, "pool.onnx")
    opmiglib.save(nodes, [], ins, outs, path, opset=13)
    for threads in (1, 2):
        got, _ = run(opmig, path, feeds, work, threads=threads)
        for i, ref in enumerate(refs):
            ok = not isinstance(got, str) and same_max(got[i], ref)
            ortlib.check(ok, "%s, %d thread(s): each window's max%s" % (
                what[i], threads, "" if ok else ": %s" % (
                    got[:300] if isinstance(got, str) else
                    "%d of %d differ" % (int(np.sum(~((got[i] == ref) |
                                                      (np.isnan(got[i]) & np.isnan(ref))))),
                                         ref.size))))
    # onnxruntime on the cases without NaN (its MaxPool need not keep
    # one); it starts each window at the lowest float, not -inf, so a
    # window of -inf alone is that there
    keep = [i for i, cs in enumerate(cases) if not cs[7]]
    res = ortlib.run_many([(path, feeds)], os.path.join(work, "ort_pool"))[0]
    if isinstance(res, str):
        ortlib.check(False, "onnxruntime ran the MaxPools: %s" % res.splitlines()[0][:200])
        return
    for i in keep:
        low = np.maximum(refs[i], np.finfo(np.float32).min)
        ortlib.check(same_max(res[i], low), "%s: onnxruntime's too" % what[i])


# ---- bool, comparisons, Cast ------------------------------------------------

DTYPES = (np.float32, np.float64, np.int64, np.int32, np.int8, np.uint8)
CMPS = {"Equal": np.equal, "Greater": np.greater, "GreaterOrEqual": np.greater_equal,
        "Less": np.less, "LessOrEqual": np.less_equal}
# operand shapes: the same, B a scalar, A a scalar, a broadcast of both
SHAPES = (((3, 50, 70), (3, 50, 70)), ((3, 50, 70), ()), ((), (4, 41, 130)),
          ((3, 1, 70), (3, 50, 1)))


def values(dt, shape, special):
    """Random values of dt with many ties; special: NaN, infinities, zeros
    of both signs and values out of every integer range too."""
    n = int(np.prod(shape, dtype=np.int64))
    if dt == np.bool_:
        return RNG.random(shape) < 0.5
    if dt in (np.float32, np.float64):
        v = np.round(RNG.standard_normal(n) * 3, 1)
        pick = RNG.random(n)
        v[pick < 0.2] = np.round(v[pick < 0.2])
        if special:
            sp = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e20, -1e20, 3e9, -3e9, 255.9,
                           256.5, -128.7, -129.5, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64, 1e300
                           if dt == np.float64 else 1e30, 0.5, -0.5])
            v[pick > 0.85] = RNG.choice(sp, int(np.sum(pick > 0.85)))
        return v.astype(dt).reshape(shape)
    info = np.iinfo(dt)
    if special:
        v = RNG.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        small = RNG.random(n) < 0.5
        v[small] = RNG.integers(-3 if info.min < 0 else 0, 4, int(np.sum(small)))
        if dt == np.int64:   # rounded twice to float32 (through double): not as once
            v[RNG.random(n) < 0.1] = (1 << 53) + 2 ** 29 + 1
        return v.reshape(shape)
    lo, hi = (-100, 101) if info.min < 0 else (0, 201)
    return RNG.integers(lo, hi, n).astype(dt).reshape(shape)


def trunc_i64(v):
    """dtype.c's float to integer: C truncation through int64, NaN and
    below -2^63 INT64_MIN, from 2^63 INT64_MAX."""
    v = np.asarray(v, np.float64)
    low = np.isnan(v) | (v <= -9.2233720368547758e18)
    high = v >= 9.2233720368547758e18
    safe = np.where(low | high, 0, v)
    with np.errstate(invalid="ignore"):
        t = np.trunc(safe).astype(np.int64)
    return np.where(low, np.iinfo(np.int64).min, np.where(high, np.iinfo(np.int64).max, t))


def cast_ref(x, to):
    if to == np.bool_:
        return x != 0
    if x.dtype == np.bool_:
        x = x.astype(np.uint8)
    if np.issubdtype(x.dtype, np.floating) and np.issubdtype(np.dtype(to), np.integer):
        return trunc_i64(x).astype(to)
    if x.dtype == np.int64 and to == np.float32:
        return x.astype(np.float64).astype(np.float32)
    return x.astype(to)


def elem_model(path):
    nodes, ins, outs, refs = [], [], [], []

    def add(op, inputs, ref, out_dt, **at):
        k = len(nodes)
        nodes.append(helper.make_node(op, inputs, ["y%d" % k], **at))
        outs.append(vi("y%d" % k, out_dt, np.broadcast_shapes(*[ins_shape[n] for n in inputs])))
        refs.append((op + " " + ", ".join("%s%s" % (ins_dt[n].__name__, list(ins_shape[n]))
                                          for n in inputs), ref))

    ins_dt, ins_shape = {}, {}

    def inp(dt, shape):
        name = "x%d" % len(ins)
        ins.append(vi(name, dt, shape))
        ins_dt[name], ins_shape[name] = dt, shape
        return name

    for sa, sb in SHAPES:
        a, b = inp(np.bool_, sa), inp(np.bool_, sb)
        for op, fn in (("And", np.logical_and), ("Or", np.logical_or), ("Xor", np.logical_xor)):
            add(op, [a, b], (fn, a, b), np.bool_)
        add("Equal", [a, b], (np.equal, a, b), np.bool_)
    add("Not", [inp(np.bool_, (3, 50, 70))], (np.logical_not, "x%d" % (len(ins) - 1)), np.bool_)
    for dt in DTYPES:
        for sa, sb in SHAPES:
            a, b = inp(dt, sa), inp(dt, sb)
            for op, fn in CMPS.items():
                add(op, [a, b], (fn, a, b), np.bool_)
    for s in DTYPES + (np.bool_,):
        x = inp(s, (4, 60, 90))
        for d in DTYPES + (np.bool_,):
            if d != s:
                add("Cast", [x], (lambda v, to=d: cast_ref(v, to), x), d, to=ONNX_T[d])
    opmiglib.save(nodes, [], ins, outs, path, opset=13)
    return ins_dt, ins_shape, refs


def elementwise(opmig, work):
    path = os.path.join(work, "elem.onnx")
    ins_dt, ins_shape, refs = elem_model(path)
    for special in (1, 0):
        feeds = {n: values(ins_dt[n], ins_shape[n], special) for n in ins_dt}
        want = []
        for what, (fn, *args) in refs:
            with np.errstate(invalid="ignore", over="ignore"):
                want.append(np.asarray(fn(*[feeds[a] for a in args])))
        kind = "special values" if special else "values in range"
        for threads in (1, 2):
            got, _ = run(opmig, path, feeds, work, threads=threads)
            if isinstance(got, str):
                ortlib.check(False, "opmig ran the elementwise model: %s" % got[:300])
                continue
            for i, (what, _) in enumerate(refs):
                ok = got[i].dtype == want[i].dtype and got[i].shape == want[i].shape and \
                    got[i].tobytes() == want[i].tobytes()
                ortlib.check(ok, "%s, %s, %d thread(s): bit for bit%s" % (
                    what, kind, threads, "" if ok else ": %d of %d differ" % (
                        int(np.sum(got[i] != want[i])) if got[i].shape == want[i].shape
                        else -1, want[i].size)))
        if special:
            continue   # out of range casts are undefined in C++: not onnxruntime's
        res = ortlib.run_many([(path, feeds)], os.path.join(work, "ort_elem"))[0]
        if isinstance(res, str):
            ortlib.check(False, "onnxruntime ran the elementwise model: %s" %
                         res.splitlines()[0][:200])
            continue
        for i, (what, _) in enumerate(refs):
            ok = res[i].tobytes() == want[i].tobytes() and res[i].shape == want[i].shape
            ortlib.check(ok, "%s, %s: onnxruntime's too" % (what, kind))


def main():
    s = ortlib.start(sys.argv)
    if not s:
        return 77
    opmig, work = s
    pools(opmig, work)
    elementwise(opmig, work)
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
