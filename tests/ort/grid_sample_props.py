"""grid_sample_props.py OPMIG WORKDIR: GridSample (runtime/kernels/
k_resize_grid.c) on seeded random cases: 2-D (opset 16) and 3-D (opset
20), modes linear/nearest/cubic, paddings zeros/border/reflection,
align_corners 0 and 1, grid points inside and up to half a plane outside,
batches of several images and channels, one thread and two.  Each float32
result must be bit for bit the float64 model's result rounded to float32
(both compute each point's taps and sums in double: the float32 path
finds a point's taps once for all channels), and within 1e-5 (relative to
the largest |value|) of onnxruntime-node where it has the case
(onnxruntime's CPU kernel computes in float32; not bicubic with border
padding, where onnxruntime pads each tap as PyTorch does and the ONNX
reference implementation clamps the point first).  The 2-D models pass
onnx.checker's full check (the 3-D ones are opset 20, past the checker
python-onnx 1.12 has).
Prints one line per check; exits 1 on a failure, 77 when
onnxruntime-node is absent."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402
from qdqlib import opmig_out  # noqa: E402

RNG = np.random.default_rng(1245)


def model(path, xs, gs, dt, opset, **at):
    t = TensorProto.FLOAT if dt == np.float32 else TensorProto.DOUBLE
    ys = list(xs[:2]) + list(gs[1:-1])
    g = helper.make_graph([helper.make_node("GridSample", ["x", "g"], ["y"], **at)], "gs",
                          [helper.make_tensor_value_info("x", t, list(xs)),
                           helper.make_tensor_value_info("g", t, list(gs))],
                          [helper.make_tensor_value_info("y", t, ys)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8 if opset < 20 else 9
    if opset <= 17:   # python-onnx 1.12's checker knows opsets up to 17
        onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)


def cases():
    out = []
    for k in range(36):
        r = 2 if k % 4 else 3
        mode = ["linear", "nearest", "cubic"][k % 3]
        if r == 3 and mode == "cubic":
            mode = "linear"     # the spec has no 3-D cubic
        pad = ["zeros", "border", "reflection"][(k // 3) % 3]
        n, c = int(RNG.integers(1, 4)), int(RNG.integers(1, 20))
        sp = [int(RNG.integers(2, 12 if r == 3 else 30)) for _ in range(r)]
        gp = [int(RNG.integers(1, 8 if r == 3 else 40)) for _ in range(r)]
        out.append(dict(r=r, mode=mode, pad=pad, align=k % 2, xs=[n, c] + sp, gs=[n] + gp + [r]))
    return out


def main():
    s = ortlib.start(sys.argv)
    if not s:
        return 77
    opmig, work = s
    jobs, runs = [], []
    for i, cs in enumerate(cases()):
        x = RNG.standard_normal(cs["xs"]).astype(np.float32)
        g = RNG.uniform(-1.5, 1.5, cs["gs"]).astype(np.float32)
        opset = 16 if cs["r"] == 2 else 20
        mode = cs["mode"] if opset == 20 else {"linear": "bilinear", "cubic": "bicubic"}.get(
            cs["mode"], cs["mode"])
        at = dict(mode=mode, padding_mode=cs["pad"], align_corners=cs["align"])
        d = os.path.join(work, "c%d" % i)
        os.makedirs(d, exist_ok=True)
        p32, p64 = os.path.join(d, "f32.onnx"), os.path.join(d, "f64.onnx")
        model(p32, cs["xs"], cs["gs"], np.float32, opset, **at)
        model(p64, cs["xs"], cs["gs"], np.float64, opset, **at)
        what = "%dD %s %s align=%d x%s grid%s" % (cs["r"], mode, cs["pad"], cs["align"],
                                                  cs["xs"], cs["gs"][1:-1])
        want = opmig_out(opmig, p64, {"x": x.astype(np.float64), "g": g.astype(np.float64)}, d, 1)
        for threads in (1, 2):
            got = opmig_out(opmig, p32, {"x": x, "g": g}, d, threads)
            ok = not isinstance(got, str) and not isinstance(want, str) and \
                got.tobytes() == want.astype(np.float32).tobytes()
            ortlib.check(ok, "%s, %d thread(s): float32 is float64's result rounded%s" % (
                what, threads, "" if ok else ": %s" % (got if isinstance(got, str) else
                                                         want if isinstance(want, str) else
                                                         "max diff %g" % ortlib.max_diff(
                                                             got, want))))
        if cs["mode"] == "cubic" and cs["pad"] == "border":
            # onnxruntime follows PyTorch here: the border is applied to each
            # of the 4 x 4 taps of an outside point, where the ONNX
            # reference implementation (and opmig) clamp the point first
            print("notice: %s: not compared with onnxruntime (it pads the taps, "
                  "the ONNX reference the point)" % what)
            continue
        jobs.append((p32, {"x": x, "g": g}))
        runs.append((what, want))
    for (what, want), res in zip(runs, ortlib.run_many(jobs, os.path.join(work, "ort"))):
        if isinstance(res, str):
            print("notice: %s: onnxruntime: %s" % (what, res.splitlines()[0][:120]))
            continue
        scale = max(float(np.max(np.abs(want))), 1e-30) if want.size else 1
        err = ortlib.max_diff(res[0], want) / scale
        ortlib.check(err <= 1e-5, "%s: against onnxruntime %.2e" % (what, err))
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
