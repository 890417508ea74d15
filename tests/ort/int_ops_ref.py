"""int_ops_ref.py OPMIG WORKDIR: the integer paths of ConvInteger,
MatMulInteger and QLinearConv against a numpy int64 reference, on seeded
random shapes (channels, groups, kernels, strides, dilations, pads,
int8/uint8 operands, scalar and per-channel zero points, batched
MatMul).  opmig computes these sums on its float32 cores when no partial
sum can reach 2^24 and in double otherwise (runtime/kernels/k_qlinear.c); the
cases cover both (operands at the ends of their range with long
reductions push the bound past 2^24; two MatMulInteger cases by hand have
sums of one sign past 2^24, where oneDNN's integer matmul is not exact)
and every result must be bit-exact.
QLinearConv's requantization is onnxruntime's: float32(acc) times the
float32 multiplier, rounded half to even, plus the zero point,
saturated.  Prints one line per failing case and a summary; exits 1 on a
failure."""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(26)
T = {np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint8): TensorProto.UINT8}


def q8(dtype, shape, full=False):
    lo, hi = (-128, 127) if dtype == np.int8 else (0, 255)
    if full:   # extremes: the bound's worst case
        return RNG.choice([lo, hi], size=shape).astype(dtype)
    return RNG.integers(lo, hi + 1, size=shape).astype(dtype)


def conv_ref(x, w, xz, wz, stride, dil, pads, group):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xi = x.astype(np.int64) - int(xz)
    wi = w.astype(np.int64) - np.asarray(wz, np.int64).reshape(-1, 1, 1, 1)
    xp = np.pad(xi, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (h + pads[0] + pads[2] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + pads[1] + pads[3] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, m, oh, ow), np.int64)
    mg = m // group
    for g in range(group):
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg,
                           i * dil[0]:i * dil[0] + stride[0] * (oh - 1) + 1:stride[0],
                           j * dil[1]:j * dil[1] + stride[1] * (ow - 1) + 1:stride[1]]
                y[:, g * mg:(g + 1) * mg] += np.einsum("nchw,mc->nmhw", patch,
                                                       wi[g * mg:(g + 1) * mg, :, i, j])
    return y


def conv_case(k, full):
    group = int(RNG.choice([1, 1, 2, 4]))
    cg, mg = int(RNG.integers(2, 9)) * (16 if full else 1), int(RNG.integers(1, 5))
    kh, kw = (3, 3) if full else (int(RNG.integers(1, 4)), int(RNG.integers(1, 4)))
    stride = [int(RNG.integers(1, 3)), int(RNG.integers(1, 3))]
    dil = [int(RNG.integers(1, 3)), int(RNG.integers(1, 3))]
    pads = [int(RNG.integers(0, 3)) for _ in range(4)]
    h, wd = int(RNG.integers(kh * dil[0], 14)), int(RNG.integers(kw * dil[1], 14))
    xt, wt = RNG.choice([np.uint8, np.int8]), RNG.choice([np.int8, np.uint8])
    x = q8(xt, (int(RNG.integers(1, 3)), cg * group, h, wd), full)
    w = q8(wt, (mg * group, cg, kh, kw), full)
    xz = q8(xt, ())
    wz = q8(wt, (mg * group,)) if RNG.random() < 0.5 else q8(wt, ())
    attrs = dict(strides=stride, dilations=dil, pads=pads, group=group,
                 kernel_shape=[kh, kw])
    return x, w, xz, wz, attrs, conv_ref(x, w, xz, wz, stride, dil, pads, group)


def model(nodes, inputs, outputs, inits):
    g = helper.make_graph(nodes, "int", inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    return m


def vi(name, a):
    return helper.make_tensor_value_info(name, T.get(a.dtype, TensorProto.INT32), list(a.shape))


def run(opmig, m, feeds, d):
    os.makedirs(d, exist_ok=True)
    mf = os.path.join(d, "m.onnx")
    onnx.save(m, mf)
    args = []
    for name, a in feeds.items():
        np.save(os.path.join(d, name + ".npy"), a)
        args.append("%s=%s" % (name, os.path.join(d, name + ".npy")))
    r = subprocess.run([opmig, "run", mf] + args + ["-O", d, "--out-format", "npy",
                                                    "--threads", "1"],
                       capture_output=True, text=True)
    if r.returncode:
        return r.stderr.strip()
    return np.load(os.path.join(d, "output_0.npy"))


def main():
    opmig, work = sys.argv[1], sys.argv[2]
    fails = n = 0
    for k in range(48):
        full = k % 4 == 3
        x, w, xz, wz, attrs, ref = conv_case(k, full)
        # w constant (an initializer, as exported models have it), x fed
        inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(xz, "xz"),
                 numpy_helper.from_array(wz, "wz")]
        if k % 2 == 0:
            out = helper.make_tensor_value_info("y", TensorProto.INT32, list(ref.shape))
            m = model([helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], **attrs)],
                      [vi("x", x)], [out], inits)
            want, what = ref.astype(np.int32), "ConvInteger"
        else:
            xs, ws, ys = np.float32(0.02), np.float32(0.003), np.float32(0.4)
            yz = q8(np.uint8, ())
            wzs = wz if wz.ndim == 0 else wz
            b = RNG.integers(-5000, 5000, size=w.shape[0]).astype(np.int32)
            inits += [numpy_helper.from_array(v, nm) for v, nm in
                      ((xs, "xs"), (ws, "ws"), (ys, "ys"), (yz, "yz"), (b, "b"))]
            if wzs.ndim == 1 and w.dtype == np.uint8:   # QLinearConv: per-channel int8 only
                inits[2] = numpy_helper.from_array(wz.reshape(-1)[:1].reshape(()), "wz")
                wz = wz.reshape(-1)[0]
                ref = conv_ref(x, w, xz, wz, attrs["strides"], attrs["dilations"],
                               attrs["pads"], attrs["group"])
            acc = (ref + b.reshape(1, -1, 1, 1)).astype(np.float32)
            mult = np.float32(xs * ws / ys)
            want = np.clip(np.rint(acc * mult) + np.float32(yz), 0, 255).astype(np.uint8)
            out = helper.make_tensor_value_info("y", TensorProto.UINT8, list(ref.shape))
            m = model([helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys",
                                                        "yz", "b"], ["y"], **attrs)],
                      [vi("x", x)], [out], inits)
            what = "QLinearConv"
        got = run(opmig, m, {"x": x}, os.path.join(work, "c%d" % k))
        n += 1
        if isinstance(got, str) or got.shape != want.shape or not np.array_equal(got, want):
            fails += 1
            print("FAIL %s case %d (%s, %s): %s" % (what, k, x.dtype, w.dtype,
                  got if isinstance(got, str) else "%d of %d differ" %
                  (int(np.sum(got != want)) if got.shape == want.shape else -1, want.size)))
    # two by hand: sums of one sign past 2^24, where oneDNN's integer
    # matmul (which takes each sum through float32) must not be used
    one_sign = [(np.full((3, 600), 255, np.uint8), RNG.integers(100, 128, (600, 7)).astype(np.int8),
                 np.uint8(0), np.int8(0)),
                (RNG.integers(250, 256, (2, 2, 650)).astype(np.uint8),
                 RNG.integers(0, 20, (650, 5)).astype(np.uint8), np.uint8(1),
                 np.uint8([200, 250, 255, 210, 230]))]
    for k in range(24 + len(one_sign)):
        full = k % 3 == 2
        if k >= 24:
            a, b, az, bz = one_sign[k - 24]
            ref = np.matmul(a.astype(np.int64) - int(az), b.astype(np.int64) - bz.astype(np.int64))
            assert np.abs(ref).max() > 2 ** 24
            m = model([helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])],
                      [vi("a", a)], [helper.make_tensor_value_info("y", TensorProto.INT32,
                                                                   list(ref.shape))],
                      [numpy_helper.from_array(b, "b"), numpy_helper.from_array(np.array(az), "az"),
                       numpy_helper.from_array(np.array(bz), "bz")])
            got = run(opmig, m, {"a": a}, os.path.join(work, "m%d" % k))
            n += 1
            if isinstance(got, str) or not np.array_equal(got, ref.astype(np.int32)):
                fails += 1
                print("FAIL MatMulInteger case %d (sums past 2^24): %s" %
                      (k, got if isinstance(got, str) else "%d of %d differ" %
                       (int(np.sum(got != ref)), ref.size)))
            continue
        batch = [int(RNG.integers(1, 3))] if k % 2 else []
        mm, kd, nn = int(RNG.integers(1, 9)), int(RNG.integers(1, 70)) * (64 if full else 1), \
            int(RNG.integers(1, 9))
        at, bt = RNG.choice([np.uint8, np.int8]), RNG.choice([np.int8, np.uint8])
        a, b = q8(at, batch + [mm, kd], full), q8(bt, [kd, nn], full)
        az, bz = q8(at, ()), q8(bt, (nn,)) if k % 4 == 1 else q8(bt, ())
        ref = np.matmul(a.astype(np.int64) - int(az), b.astype(np.int64) - bz.astype(np.int64))
        m = model([helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])],
                  [vi("a", a)], [helper.make_tensor_value_info("y", TensorProto.INT32,
                                                               list(ref.shape))],
                  [numpy_helper.from_array(b, "b"), numpy_helper.from_array(az, "az"),
                   numpy_helper.from_array(bz, "bz")])
        got = run(opmig, m, {"a": a}, os.path.join(work, "m%d" % k))
        n += 1
        if isinstance(got, str) or not np.array_equal(got, ref.astype(np.int32)):
            fails += 1
            print("FAIL MatMulInteger case %d: %s" % (k, got if isinstance(got, str) else
                                                      "results differ"))
    print("%d cases, %d failures" % (n, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
