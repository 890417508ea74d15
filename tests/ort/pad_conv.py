"""pad_conv.py OPMIG WORKDIR: a Pad of zeros read by a Conv alone, done
by the Conv's padding (runtime/unit_padconv.c), on seeded random cases.

Each case is x -> Pad -> Conv (1-D, 2-D or 3-D; strides, dilations,
groups, the Conv's own pads or none, a bias or none), Pad by attribute
(opset 2) or by input (opset 11 and 13, its constant_value absent or a
zero), at times asymmetric, at times nothing on some axis.  Checked:
  * `--stats` counts the Pad as done inside another node where it is
    such a Pad, and runs it where it is not: a Pad of another value, a
    reflect or edge Pad, a negative (cropping) amount, an amount on the
    batch or channel axis, a Pad whose result is a graph output too, a
    Conv with auto_pad SAME_UPPER;
  * the output is within 1e-5 (of max(1, |value|)) of `--exact`'s (the
    nodes as written) and of onnxruntime-node's.
Prints a line per failure and a summary; exits 1 on a failure."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ortlib  # noqa: E402
import qdqlib  # noqa: E402

RNG = np.random.default_rng(1250)
MISSES = ("value", "reflect", "edge", "crop", "channel", "output", "same")


def case(k, miss=None):
    ns = (1, 2, 2, 2, 3)[k % 5]
    opset = (2, 11, 13)[k % 3] if miss not in ("reflect", "edge") else 13
    n, c = int(RNG.integers(1, 3)), int(RNG.choice([1, 3, 4, 8]))
    group = int(RNG.choice([1, c])) if c > 1 and k % 4 == 1 else 1
    m = c * int(RNG.integers(1, 3)) if group > 1 else int(RNG.choice([2, 5, 16]))
    size = [int(RNG.integers(5, 14 if ns < 3 else 8)) for _ in range(ns)]
    ker = [int(RNG.choice([1, 3, 5])) for _ in range(ns)]
    strides = [int(RNG.choice([1, 2])) for _ in range(ns)]
    dil = [int(RNG.choice([1, 1, 2])) for _ in range(ns)]
    if miss == "same":
        dil = [1] * ns   # onnxruntime: no dilation with auto_pad
    if miss == "channel":
        group = 1
    # every window fits the unpadded input
    size = [max(s, (kk - 1) * dd + 1) for s, kk, dd in zip(size, ker, dil)]
    cpads = [int(RNG.integers(0, 3)) for _ in range(2 * ns)] if k % 2 else None
    rank = ns + 2
    pads = [0, 0] + [int(RNG.integers(0, 4)) for _ in range(ns)] + \
        [0, 0] + [int(RNG.integers(0, 4)) for _ in range(ns)]
    if miss == "crop":
        pads[2] = -1
    if miss == "channel":
        pads[1] = 1
    value = 0.5 if miss == "value" else 0.0
    mode = miss if miss in ("reflect", "edge") else "constant"
    if mode != "constant":
        pads = [min(p, 2) for p in pads]   # reflect: below each size
    x = RNG.uniform(-1, 1, [n, c] + size).astype(np.float32)
    w = RNG.uniform(-0.5, 0.5, [m, (c + pads[1] + pads[rank + 1]) // group] + ker)
    w = w.astype(np.float32)
    b = RNG.uniform(-0.5, 0.5, m).astype(np.float32)
    inits = [numpy_helper.from_array(w, "w")]
    conv_in = ["p", "w"]
    if k % 3 != 2:
        inits.append(numpy_helper.from_array(b, "b"))
        conv_in.append("b")
    if opset < 11:
        pad = helper.make_node("Pad", ["x"], ["p"], mode=mode, pads=pads, value=value)
    else:
        inits.append(numpy_helper.from_array(np.asarray(pads, np.int64), "pads"))
        pin = ["x", "pads"]
        if miss == "value" or k % 2:
            inits.append(numpy_helper.from_array(np.float32(value), "cv"))
            pin.append("cv")
        pad = helper.make_node("Pad", pin, ["p"], mode=mode)
    attrs = dict(kernel_shape=ker, strides=strides, dilations=dil, group=group)
    if miss == "same":
        attrs["auto_pad"] = "SAME_UPPER"
    elif cpads:
        attrs["pads"] = cpads
    conv = helper.make_node("Conv", conv_in, ["y"], **attrs)
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * rank)]
    if miss == "output":
        outs.append(helper.make_tensor_value_info("p", TensorProto.FLOAT, [None] * rank))
    g = helper.make_graph([pad, conv], "pad_conv",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                          outs, inits)
    mdl = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    mdl.ir_version = 7
    onnx.checker.check_model(mdl, full_check=True)
    what = "case %d (%d-D, opset %d, pads %s, conv pads %s, strides %s, dilations %s, " \
        "group %d%s)" % (k, ns, opset, pads, cpads, strides, dil, group,
                         ", " + miss if miss else "")
    return what, mdl, x


def close(a, b):
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= 1e-5 * np.maximum(1, np.abs(b))))


def main():
    opmig, work = sys.argv[1], sys.argv[2]
    cases = [(k, None) for k in range(40)] + [(k, mi) for k, mi in enumerate(MISSES)]
    fails, jobs, wants = 0, [], []
    for k, miss in cases:
        what, mdl, x = case(k, miss)
        d = os.path.join(work, "c%d%s" % (k, miss or ""))
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "m.onnx")
        onnx.save(mdl, path)
        got, stats = qdqlib.run(opmig, path, {"x": x}, d)
        exact, _ = qdqlib.run(opmig, path, {"x": x}, d, "--exact")
        if stats is None or isinstance(exact, str):
            print("FAIL %s: %s" % (what, got if stats is None else exact))
            fails += 1
            continue
        bad = []
        fused = qdqlib.fused(stats, "Pad")
        if fused != (0 if miss else 1):
            bad.append("%d Pad done inside the Conv, expected %d" % (fused, 0 if miss else 1))
        if not close(got[0], exact[0]):
            bad.append("%g from --exact's" % float(np.max(np.abs(got[0] - exact[0])))
                       if got[0].shape == exact[0].shape else "shape %s, --exact's %s" %
                       (got[0].shape, exact[0].shape))
        if bad:
            print("FAIL %s: %s" % (what, "; ".join(bad)))
            fails += 1
        jobs.append((path, {"x": x}))
        wants.append((what, got[0]))
    why = ortlib.available()
    if why:
        print("notice: %s; onnxruntime comparison skipped" % why)
    else:
        for (what, got), res in zip(wants, ortlib.run_many(jobs, os.path.join(work, "ort"))):
            if isinstance(res, str) or not close(got, res[0]):
                print("FAIL %s: onnxruntime %s" % (
                    what, res if isinstance(res, str) else
                    "differs by %g" % float(np.max(np.abs(got - res[0])))
                    if got.shape == res[0].shape else "shape %s, opmig's %s" %
                    (res[0].shape, got.shape)))
                fails += 1
    print("%d cases, %d failures" % (len(cases), fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
