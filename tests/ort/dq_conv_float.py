"""dq_conv_float.py OPMIG WORKDIR: a Conv of DequantizeLinear inputs whose
float32 result is not quantized again (a static QDQ model's Conv before
an InstanceNormalization, a Softmax, a graph output) run as one unit on
oneDNN's exact integer convolution (runtime/qdq.c dq_conv_unit,
knn_dq_conv_f32), on seeded random cases: 1-D, 2-D and 3-D windows,
groups, strides, pads, dilations, batch 2, uint8 or int8 input, weights
int8 per output channel or uint8 per tensor with a zero point (oneDNN's
sums corrected by an all-ones channel) or at 128, the int32 bias or
none, a Relu after it (the unit's epilogue), windows of 256 and 300
channels by 3x3 (W in parts past 2^24).  Checked:
  * the default run is bit for bit the unit's value computed here:
    float32(float32(exact sum + bias) * float32(x_scale * w_scale[o]));
  * the default run, --exact (the written graph: dequantized copies and a
    float32 convolution) and onnxruntime-node are each within the float32
    rounding bound of the exact value (computed in float64): the unit's
    two roundings, the written graph's (window + 4) * 2^-23 of the sum of
    the products' magnitudes;
  * `--stats`: the DequantizeLinear nodes done inside the unit (where
    oneDNN's integer primitives are exact here: VNNI), none with --exact,
    with OPMIG_NO_DNNL=1, or for the near misses (the bias at another
    scale than x_scale * w_scale, the input's scale per channel), whose
    values must still hold.
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
from qdq_units import vnni  # noqa: E402
from qdqlib import T  # noqa: E402

RNG = np.random.default_rng(1241)
q8 = functools.partial(qdqlib.q8, RNG)
N_CASES = 40
F32 = TensorProto.FLOAT


def conv_nd(x, w, stride, dil, pads, group):
    """Conv of x (n, c, sp...) by w (m, c / group, k...) in their dtype
    (int64: exact; float64)."""
    r = x.ndim - 2
    sp, ks, m, cg = x.shape[2:], w.shape[2:], w.shape[0], w.shape[1]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[r + i]) for i in range(r)])
    out = [(sp[i] + pads[i] + pads[r + i] - dil[i] * (ks[i] - 1) - 1) // stride[i] + 1
           for i in range(r)]
    y = np.zeros((x.shape[0], m) + tuple(out), np.result_type(x, w))
    mg = m // group
    for tap in np.ndindex(*ks):
        sl = tuple(slice(tap[i] * dil[i], tap[i] * dil[i] + (out[i] - 1) * stride[i] + 1,
                         stride[i]) for i in range(r))
        xs = xp[(slice(None), slice(None)) + sl]
        for gi in range(group):
            wg = w[(slice(gi * mg, (gi + 1) * mg), slice(None)) + tap]
            y[:, gi * mg:(gi + 1) * mg] += np.einsum("nc...,mc->nm...",
                                                     xs[:, gi * cg:(gi + 1) * cg], wg)
    return y


def case(k):
    miss = {0: "bias_scale", 1: "x_per_ch"}.get(k % 11) if k >= 11 else None
    r = 1 + k % 3
    wkind = ("i8_per_ch", "u8zp", "u8_128", "i8_0")[(k // 3) % 4]
    group = 2 if k % 7 == 3 else 1
    cg, mg = int(RNG.integers(2, 12)), int(RNG.integers(2, 20))
    ks = [int(RNG.integers(1, 4)) for _ in range(r)]
    stride = [int(RNG.integers(1, 3)) for _ in range(r)]
    dil = [int(RNG.integers(1, 3)) for _ in range(r)]
    pads = [int(RNG.integers(0, 2)) for _ in range(2 * r)]
    top = (24, 14, 9)[r - 1]
    sp = [int(RNG.integers(ks[i] * dil[i], top)) for i in range(r)]
    if k >= 36:
        # 256 or 300 input channels by 3x3 over the whole 8-bit range:
        # sums past 2^24, W split into parts on oneDNN
        miss, r, group, mg, cg = None, 2, 1, 12 + k % 3, (256, 300)[k % 2]
        ks, stride, dil, pads = [3, 3], [1, 1], [1, 1], [1, 1, 1, 1]
        sp = [int(RNG.integers(5, 9)), int(RNG.integers(5, 9))]
        wkind = ("u8zp", "i8_per_ch", "u8_128", "i8_0")[k - 36]
    n, m = 2 if k % 4 == 0 else 1, mg * group
    xt = np.uint8 if k % 2 == 0 else np.int8
    x = q8(xt, [n, cg * group] + sp)
    xz = q8(xt, ())
    if wkind == "u8zp":
        wt, wz = np.uint8, np.asarray(int(RNG.integers(100, 160)) | 1, np.uint8)
    elif wkind == "u8_128":
        wt, wz = np.uint8, np.asarray(128, np.uint8)
    elif wkind == "i8_0":
        wt, wz = np.int8, np.asarray(0, np.int8)
    else:
        wt, wz = np.int8, np.zeros(m, np.int8)
    wq = q8(wt, [m, cg] + ks)
    xs = np.float32(RNG.uniform(0.005, 0.05))
    ws = RNG.uniform(0.001, 0.02, m if wkind == "i8_per_ch" else ()).astype(np.float32)
    wsv = np.broadcast_to(ws, (m,)).astype(np.float32)
    mult = (xs * wsv).astype(np.float32)
    has_bias = k % 5 != 2 or miss == "bias_scale"
    bq = RNG.integers(-20000, 20000, m).astype(np.int32)
    bs = mult * np.float32(1.5) if miss == "bias_scale" else mult
    relu = k % 3 == 1
    nodes, inits = [], [(wq, "wq"), (wz, "wz"), (ws, "ws"), (xz, "xz")]
    if miss == "x_per_ch":
        xsv = np.full(cg * group, xs, np.float32)
        xsv[0] = np.float32(xs * 2)
        nodes.append(helper.make_node("DequantizeLinear", ["x", "xs", "xzv"], ["xd"], axis=1))
        inits += [(xsv, "xs"), (np.full(cg * group, xz, xt), "xzv")]
    else:
        nodes.append(helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xd"]))
        inits.append((xs, "xs"))
    nodes.append(helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"],
                                  **({"axis": 0} if wkind == "i8_per_ch" else {})))
    cin = ["xd", "wd"]
    if has_bias:
        nodes.append(helper.make_node("DequantizeLinear", ["bq", "bs"], ["bd"], axis=0))
        inits += [(bq, "bq"), (bs, "bs")]
        cin.append("bd")
    nodes.append(helper.make_node("Conv", cin, ["c" if relu else "y"], group=group,
                                  kernel_shape=ks, strides=stride, dilations=dil, pads=pads))
    if relu:
        nodes.append(helper.make_node("Relu", ["c"], ["y"]))
    xi = x.astype(np.int64) - int(xz)
    wi = wq.astype(np.int64) - np.asarray(wz, np.int64).reshape((-1,) + (1,) * (r + 1))
    acc = conv_nd(xi, wi, stride, dil, pads, group)
    mag = conv_nd(np.abs(xi), np.abs(wi), stride, dil, pads, group)
    cshape = (1, m) + (1,) * r
    b = bq.astype(np.int64).reshape(cshape) if has_bias else 0
    # the exact value (float64 of the float32 scales; x_per_ch's first
    # channel at twice the scale: no unit, so only the bound is checked)
    exact = (acc + b) * mult.astype(np.float64).reshape(cshape)
    bsd = bs.astype(np.float64).reshape(cshape)
    if miss:
        xsd = (np.full(cg * group, xs, np.float64) if miss != "x_per_ch" else
               xsv.astype(np.float64))
        xr = xi * xsd.reshape((1, -1) + (1,) * r)
        wr = wi * wsv.astype(np.float64).reshape((-1,) + (1,) * (r + 1))
        exact = conv_nd(xr, wr, stride, dil, pads, group) + (bq.reshape(cshape) * bsd
                                                              if has_bias else 0)
        mag = conv_nd(np.abs(xr), np.abs(wr), stride, dil, pads, group) / \
            mult.astype(np.float64).reshape(cshape)
    unit = ((acc + b).astype(np.float32) * mult.reshape(cshape)).astype(np.float32)
    if relu:
        exact, unit = np.maximum(exact, 0), np.maximum(unit, np.float32(0))
    kl = cg * int(np.prod(ks))
    scale = np.abs(mult.astype(np.float64)).reshape(cshape)
    bound = (kl + 4) * 2.0 ** -23 * (mag * scale + (np.abs(b) * scale if has_bias else 0)) \
        + 1e-30
    inits = [numpy_helper.from_array(np.asarray(v), nm) for v, nm in inits]
    g = helper.make_graph(nodes, "dqc", [helper.make_tensor_value_info("x", T[x.dtype],
                                                                      list(x.shape))],
                          [helper.make_tensor_value_info("y", F32, list(acc.shape))], inits)
    mdl = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    mdl.ir_version = 8
    onnx.checker.check_model(mdl, full_check=True)
    what = "case %d (%d-D, %s x, %s weights, group %d%s%s%s)" % (
        k, r, np.dtype(xt).name, wkind, group, ", bias" if has_bias else "",
        ", Relu" if relu else "", ", " + miss if miss else "")
    return what, mdl, x, exact, unit, bound, miss, 2 + has_bias



def far(got, exact, bound):
    """Values of got outside exact +- bound (-1: another shape)."""
    if got.shape != exact.shape:
        return -1
    return int(np.sum(np.abs(got.astype(np.float64) - exact) > bound))


def main():
    opmig, work = sys.argv[1], sys.argv[2]
    fails, jobs, wants = 0, [], []
    units = vnni()
    for k in range(N_CASES):
        what, mdl, x, exact, unit, bound, miss, n_dq = case(k)
        d = os.path.join(work, "c%d" % k)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "m.onnx")
        onnx.save(mdl, path)
        runs = [qdqlib.run(opmig, path, {"x": x}, d, *flags, env=env) for flags, env in
                (((), None), (("--exact",), None),
                 ((), dict(os.environ, OPMIG_NO_DNNL="1")))]
        bad = [msg for (msg, stats) in runs if stats is None]
        if bad:
            print("FAIL %s: %s" % (what, bad[0]))
            fails += 1
            continue
        (got, st), (ex, st_ex), (plain, st_plain) = [(o[0], s) for o, s in runs]
        done = [qdqlib.fused(s, "DequantizeLinear") for s in (st, st_ex, st_plain)]
        want = n_dq if units and not miss else 0
        if not miss and units and not qdqlib.same(got, unit):
            bad.append("%d of %d values differ from the unit's" %
                       (int(np.sum(got != unit)) if got.shape == unit.shape else -1, unit.size))
        for name, v in (("default", got), ("--exact", ex), ("OPMIG_NO_DNNL=1", plain)):
            n = far(v, exact, bound)
            if n:
                bad.append("%s: %d values past the rounding bound" % (name, n))
        if done != [want, 0, 0]:
            bad.append("input DequantizeLinear done inside the unit: %s (default, --exact, "
                       "OPMIG_NO_DNNL=1), expected [%d, 0, 0]" % (done, want))
        if bad:
            print("FAIL %s: %s" % (what, "; ".join(bad)))
            fails += 1
        jobs.append((path, {"x": x}))
        wants.append((what, exact, bound))
    why = ortlib.available()
    if why:
        print("notice: %s; onnxruntime comparison skipped" % why)
    else:
        n_run = 0
        for (what, exact, bound), res in zip(wants, ortlib.run_many(jobs,
                                                                    os.path.join(work, "ort"))):
            if isinstance(res, str):
                continue   # no kernel for these types in onnxruntime's CPU provider
            n_run += 1
            n = far(np.asarray(res[0]), exact, bound)
            if n:
                print("FAIL %s: onnxruntime: %d values past the rounding bound" % (what, n))
                fails += 1
        print("onnxruntime: %d cases run" % n_run)
    print("%d cases, %d failures" % (N_CASES, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
