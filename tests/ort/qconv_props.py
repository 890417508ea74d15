"""qconv_props.py OPMIG WORKDIR: QLinearConv on seeded random shapes, bit
for bit against onnxruntime-node and a numpy reference.

QLinearConv (and the static QDQ units that run as one, runtime/qdq.c) is
requantized by oneDNN itself where that is exact (k_conv_dnnl.c,
dn_rq_exact), else from the int32 sums by opmig's own pass.  The value is
saturate(round_half_even(float32(acc + bias) * m) + y_zero_point), m the
float32 product x_scale * w_scale / y_scale.  Cases: channels not
multiples of 16, groups, strides, asymmetric pads, dilations, batches;
uint8/int8 input and output; weights int8 per channel or per tensor, or
uint8 with zero point 128 or another one (the correction's path); input
and output zero points 0, 128, -128, the dtype's ends and odd values;
scales of powers of two (many products land on a tie), ordinary ones, and
large ones (saturation at both ends); biases absent, small, near and past
2^24.  Two cases are made by hand where float32(acc) + float32(bias)
differs from float32(acc + bias) at a rounding tie (a bias past 2^24; sums
past 2^24): only the exact requantization gets them right.
Prints a line per failure and a summary; exits 1 on a failure."""
import functools
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ortlib  # noqa: E402
import qdqlib  # noqa: E402
from int_ops_ref import conv_ref  # noqa: E402
from qdqlib import LIM, T  # noqa: E402

RNG = np.random.default_rng(4926)
q8 = functools.partial(qdqlib.q8, RNG)
N_RANDOM = 40


def zero_point(dt):
    lo, hi = LIM[np.dtype(dt)]
    r = int(RNG.integers(0, 6))
    v = (0, 128 if lo == 0 else -128, lo, hi, int(RNG.integers(lo, hi + 1)) | 1,
         int(RNG.integers(lo, hi + 1)))[r]
    return np.array(min(max(v, lo), hi), dt)


def random_case(k):
    group = int(RNG.choice([1, 1, 2, 3]))
    cg, mg = int(RNG.integers(1, 41)), int(RNG.integers(1, 41))
    kh, kw = int(RNG.integers(1, 4)), int(RNG.integers(1, 4))
    stride = [int(RNG.integers(1, 3)), int(RNG.integers(1, 3))]
    dil = [int(RNG.integers(1, 4)), int(RNG.integers(1, 4))]
    pads = [int(RNG.integers(0, 3)) for _ in range(4)]
    big = k % 4 == 0
    h = int(RNG.integers(kh * dil[0], 48 if big else 14))
    wd = int(RNG.integers(kw * dil[1], 48 if big else 14))
    xt, yt = RNG.choice([np.uint8, np.int8]), RNG.choice([np.uint8, np.int8])
    m = mg * group
    wkind = ("s8ch", "s8ch", "s8t", "u8t128", "u8tz", "s8tz")[k % 6]
    # onnxruntime's kernels: x uint8 with W either, or all int8; y as x
    mixed = k % 8 == 7
    if not mixed:
        yt = xt
        if xt == np.int8 and wkind.startswith("u8"):
            xt = yt = np.uint8
    if wkind in ("u8tz", "s8tz"):
        group = 1       # the correction channel: ungrouped only
        m = mg
    x = q8(xt, (int(RNG.integers(1, 3)), cg * group, h, wd))
    wt = np.uint8 if wkind.startswith("u8") else np.int8
    w = q8(wt, (m, cg, kh, kw))
    if wkind == "s8ch":
        wz = np.zeros(m, np.int8)
    elif wkind == "u8t128":
        wz = np.array(128, np.uint8)
    elif wkind in ("u8tz", "s8tz"):
        wz = q8(wt, ())
    else:
        wz = np.array(0, np.int8)
    xz, yz = zero_point(xt), zero_point(yt)
    scale = k % 3
    if scale == 0:      # powers of two: m is one, many ties
        xs = np.float32(2.0 ** -int(RNG.integers(4, 9)))
        ws = np.float32(2.0 ** -int(RNG.integers(4, 9)))
        ys = np.float32(2.0 ** int(RNG.integers(-2, 6)))
        ws = np.full(m, ws, np.float32) if wkind == "s8ch" else ws
    else:
        xs = np.float32(RNG.uniform(0.005, 0.05))
        ws = np.asarray(RNG.uniform(0.001, 0.01, m) if wkind == "s8ch"
                        else RNG.uniform(0.001, 0.01), np.float32)
        ys = np.float32(RNG.uniform(0.05, 0.3) if scale == 1 else RNG.uniform(0.0005, 0.005))
    bk = int(RNG.integers(0, 4))
    b = None if bk == 0 else (RNG.integers(-3000, 3000, m) if bk == 1 else
                              RNG.integers(-(1 << 24) - 40, (1 << 24) + 40, m)).astype(np.int32)
    attrs = dict(strides=stride, dilations=dil, pads=pads, group=group, kernel_shape=[kh, kw])
    return "random case %d (%s, group %d, %dx%d/%d%s)" % (k, wkind, group, kh, kw, cg,
                                                          ", mixed" if mixed else ""), \
        x, w, xs, xz, ws, wz, ys, yz, b, attrs


def crafted_bias():
    """float32(acc) + float32(bias) rounds the bias (2^24 + 2^16 + 3 ->
    +4) and crosses the tie 128.5 (acc -2: 129); float32(acc + bias) is
    the tie, 128."""
    x = np.arange(21, dtype=np.uint8).reshape(1, 1, 3, 7)
    w = np.ones((1, 1, 1, 1), np.int8)
    b = np.array([(1 << 24) + (1 << 16) + 3], np.int32)
    attrs = dict(strides=[1, 1], dilations=[1, 1], pads=[0, 0, 0, 0], group=1,
                 kernel_shape=[1, 1])
    return "crafted case: bias past 2^24", x, w, np.float32(2.0 ** -8), np.array(10, np.uint8), \
        np.float32(2.0 ** -9), np.array(0, np.int8), np.float32(1.0), np.array(0, np.uint8), b, attrs


def crafted_sums():
    """Sums past 2^24: acc = 2^17 * 140 + 2^16 + 3, bias -2.  float32(acc)
    rounds up by one (+4), the tie 140.5 is crossed (141); float32(acc +
    bias) is the tie (140)."""
    c = 576
    target = (1 << 17) * 140 + (1 << 16) + 3
    w = np.full((1, c, 1, 1), 127, np.int8)
    w[0, -1] = 1
    last = target % 127
    rest = (target - last) // 127
    xs_ = np.zeros(c - 1, np.int64)
    for i in range(c - 1):
        xs_[i] = min(255, rest)
        rest -= int(xs_[i])
    x = np.zeros((1, c, 1, 2), np.uint8)
    x[0, :-1, 0, 0] = xs_
    x[0, -1, 0, 0] = last
    x[0, :, 0, 1] = x[0, :, 0, 0][::-1]
    assert int((x[0, :, 0, 0].astype(np.int64) * w[0, :, 0, 0]).sum()) == target
    attrs = dict(strides=[1, 1], dilations=[1, 1], pads=[0, 0, 0, 0], group=1,
                 kernel_shape=[1, 1])
    return "crafted case: sums past 2^24", x, w, np.float32(2.0 ** -8), np.array(0, np.uint8), \
        np.float32(2.0 ** -9), np.array(0, np.int8), np.float32(1.0), np.array(0, np.uint8), \
        np.array([-2], np.int32), attrs


def reference(x, w, xs, xz, ws, wz, ys, yz, b, attrs):
    acc = conv_ref(x, w, xz, np.asarray(wz).reshape(-1) if np.ndim(wz) else wz,
                   attrs["strides"], attrs["dilations"], attrs["pads"], attrs["group"])
    if b is not None:
        acc = acc + b.astype(np.int64).reshape(1, -1, 1, 1)
    mult = (np.float32(xs) * np.asarray(ws, np.float32)).astype(np.float32) / np.float32(ys)
    mult = np.asarray(mult, np.float32).reshape(1, -1, 1, 1) if np.ndim(ws) else mult
    lo, hi = LIM[np.dtype(yz.dtype)]
    v = acc.astype(np.float32) * mult
    r = np.rint(v) + np.float32(yz)
    return np.clip(r, lo, hi).astype(yz.dtype), int(np.sum(np.abs(v - np.trunc(v)) == 0.5)), \
        int(np.sum((r < lo) | (r > hi)))


def model(x, w, xs, xz, ws, wz, ys, yz, b, attrs):
    names = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"] + (["b"] if b is not None else [])
    inits = [(xs, "xs"), (xz, "xz"), (w, "w"), (np.asarray(ws, np.float32), "ws"),
             (wz, "wz"), (ys, "ys"), (yz, "yz")] + ([(b, "b")] if b is not None else [])
    node = helper.make_node("QLinearConv", names, ["y"], **attrs)
    g = helper.make_graph([node], "qconv",
                          [helper.make_tensor_value_info("x", T[x.dtype], list(x.shape))],
                          [helper.make_tensor_value_info("y", T[np.dtype(yz.dtype)], [None] * 4)],
                          [numpy_helper.from_array(np.asarray(v), n) for v, n in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    return m


def run(opmig, path, x, d):
    np.save(os.path.join(d, "x.npy"), x)
    r = subprocess.run([opmig, "run", path, "x=" + os.path.join(d, "x.npy"), "-O", d,
                        "--out-format", "npy", "--threads", str(1 + len(d) % 2)],
                       capture_output=True, text=True)
    if r.returncode:
        return r.stderr.strip()
    return np.load(os.path.join(d, "output_0.npy"))


def main():
    opmig, work = sys.argv[1], sys.argv[2]
    cases = [random_case(k) for k in range(N_RANDOM)] + [crafted_bias(), crafted_sums()]
    fails, jobs, wants, same = 0, [], [], 0
    n_ties = n_sat = 0
    for k, (what, *args) in enumerate(cases):
        d = os.path.join(work, "c%d" % k)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "m.onnx")
        onnx.save(model(*args), path)
        want, t, sat = reference(*args)
        n_ties, n_sat = n_ties + t, n_sat + sat
        got = run(opmig, path, args[0], d)
        if isinstance(got, str) or got.shape != want.shape or not np.array_equal(got, want):
            print("FAIL %s: %s" % (what, got if isinstance(got, str) else
                                   "%d of %d codes differ from the reference" %
                                   (int(np.sum(got != want)) if got.shape == want.shape
                                    else -1, want.size)))
            fails += 1
            continue
        if "mixed" not in what:     # (onnxruntime has no kernel for these)
            jobs.append((path, {"x": args[0]}))
            wants.append((what, got))
    why = ortlib.available()
    if why:
        print("notice: %s; onnxruntime comparison skipped" % why)
    else:
        for (what, got), res in zip(wants, ortlib.run_many(jobs, os.path.join(work, "ort"))):
            if isinstance(res, str) or res[0].shape != got.shape or \
                    not np.array_equal(res[0], got):
                print("FAIL %s: onnxruntime %s" % (what, res if isinstance(res, str) else
                                                    "differs in %d codes" %
                                                    int(np.sum(res[0] != got))))
                fails += 1
            else:
                same += 1
        print("onnxruntime: %d of %d cases bit-identical" % (same, len(jobs)))
    print("%d outputs on a rounding tie, %d saturated" % (n_ties, n_sat))
    print("%d cases, %d failures" % (len(cases), fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
