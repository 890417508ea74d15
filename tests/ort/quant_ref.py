"""quant_ref.py OPMIG WORKDIR: QuantizeLinear (per tensor and per axis,
to uint8, int8, int16, uint16) and DynamicQuantizeLinear in opmig's
interpreter against a numpy reference of the spec, bit for bit, on the
rounding cases (ties n + 0.5 of both parities and signs, their float
neighbours, saturation at both ends, infinities, NaN, -0.0, denormals)
and random values, at one thread and at several, with rows long enough
for the vector paths and their tails; DynamicQuantizeLinear also after a
Concat (opmig's one-node unit of the two).  The reference divides in float32
(x / scale, as the spec's float32 x and scale do), rounds half to even
(np.rint), adds the zero point and saturates; NaN gives 0.  Prints one
line per failing case and a summary; exits 1 on a failure."""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(2026)
TP = {np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.int8): TensorProto.INT8,
      np.dtype(np.uint16): TensorProto.UINT16, np.dtype(np.int16): TensorProto.INT16}


def values(s, n):
    """The rounding cases for scale s, then random values, n in all."""
    t = []
    for k in list(range(-300, 301)) + [32766, 32767, 32768, 65534, 65535, 65536]:
        for v in (np.float32(k + 0.5) * s, np.float32(k) * s):
            v = np.float32(v)
            t += [v, np.nextafter(v, np.float32(np.inf)), np.nextafter(v, np.float32(-np.inf))]
    t += [np.inf, -np.inf, np.nan, -0.0, 0.0, 1e30, -1e30, 1e-45, -1e-45, 1e-39, -1e-39]
    t = np.array(t, np.float32)
    r = (RNG.standard_normal(max(n - t.size, 0)) * 200 * s).astype(np.float32)
    x = np.concatenate([t, r])[:n]
    return RNG.permutation(x)


def ref(x, s, z, dt):
    """The spec, per element; s and z broadcast to x."""
    info = np.iinfo(dt)
    with np.errstate(all="ignore"):
        q = (x.astype(np.float32) / s.astype(np.float32)).astype(np.float32)
        r = np.rint(q.astype(np.float64)) + z.astype(np.float64)
    r = np.where(np.isnan(r), 0, np.clip(r, info.min, info.max))
    return r.astype(dt)


def save(path, nodes, x, outs, inits, opset):
    g = helper.make_graph(nodes, "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                     list(x.shape))],
                          outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    if opset <= 17:   # onnx 1.12 knows opsets up to 17
        m.ir_version = 8
        onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)


def run(opmig, work, name, model, x, threads):
    d = os.path.join(work, "%s.t%d" % (name, threads))
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "x.npy"), x)
    p = subprocess.run([opmig, "run", model, os.path.join(d, "x.npy"), "-O", d,
                        "--out-format", "npy", "--threads", str(threads)],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return None, p.stderr.strip()
    outs = sorted(f for f in os.listdir(d) if f.startswith("output_"))
    return [np.load(os.path.join(d, f)) for f in outs], ""


def compare(name, got, want):
    if got.dtype != want.dtype or got.shape != want.shape:
        return "%s: got %s%s, want %s%s" % (name, got.dtype, got.shape, want.dtype, want.shape)
    bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
    if bad.size:
        i = bad[0]
        return "%s: %d elements differ, first %d: got %s want %s" % (
            name, bad.size, i, got.reshape(-1)[i], want.reshape(-1)[i])
    return None


def cases():
    """(name, nodes, x, outputs, initializers, opset, expected outputs)."""
    for dt, opset in ((np.uint8, 13), (np.int8, 13), (np.int16, 21), (np.uint16, 21)):
        info = np.iinfo(dt)
        for s in (0.0371, 3.0, 0.5):
            for z in (info.min, 0 if info.min < 0 else 3, info.max):
                sv, zv = np.float32(s), np.array(z, dt)
                x = values(sv, 16 * 1024 + 13).reshape(1, -1)
                yield ("per_tensor_%s_s%g_z%d" % (np.dtype(dt).name, s, z),
                       [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])], x,
                       [helper.make_tensor_value_info("y", TP[np.dtype(dt)], list(x.shape))],
                       [numpy_helper.from_array(np.array(sv), "s"),
                        numpy_helper.from_array(zv, "z")], opset,
                       [ref(x, np.array(sv), zv, dt)])
    # per axis: axis 1 of [3, 5, 37]: rows of 37 (two 16-lane vectors, a tail)
    for dt in (np.uint8, np.int8):
        info = np.iinfo(dt)
        s = np.array([0.0371, 3.0, 0.1, 1.5, 7.0 / 3.0], np.float32)
        z = np.array([info.min, info.max, 0 if info.min < 0 else 3, 1, info.max - 1], dt)
        x = values(np.float32(1.0), 3 * 5 * 37).reshape(3, 5, 37) * s.reshape(1, 5, 1)
        x = x.astype(np.float32)
        yield ("per_axis_%s" % np.dtype(dt).name,
               [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1)], x,
               [helper.make_tensor_value_info("y", TP[np.dtype(dt)], list(x.shape))],
               [numpy_helper.from_array(s, "s"), numpy_helper.from_array(z, "z")], 13,
               [ref(x, s.reshape(1, 5, 1), z.reshape(1, 5, 1), dt)])
    # DynamicQuantizeLinear: the spec's scale and zero point (no NaN input)
    # (5 * 32768 + 11: blocks of the kernel's passes over threads)
    for n, shift in ((16 * 1024 + 7, 0.0), (70, 5.0), (33, -5.0), (5 * 32768 + 11, -0.5)):
        x = dyn_values(n, shift).reshape(1, -1)
        yield dynamic_case("dynamic_n%d_shift%g" % (n, shift), x, x, [], [])
    # a Concat whose only reader is DynamicQuantizeLinear (one node in
    # opmig: each input's codes at their place, runtime/qdq.c): of x and a
    # constant along axis 1, -1 or 0, x twice; the range's ends in either
    for k, (shape, cshape, axis) in enumerate((((2, 3, 5), (2, 4, 5), 1),
                                               ((3, 7, 2 * 32768 + 5), (3, 7, 33), -1),
                                               ((4, 9000), (3, 9000), 0),
                                               ((2, 70), None, 1))):
        x = dyn_values(int(np.prod(shape)), (-1) ** k * 0.7).reshape(shape)
        c = x if cshape is None else dyn_values(int(np.prod(cshape)), (-1) ** k * -1.3) \
            .reshape(cshape) * np.float32(2.5 if k % 2 else 0.5)
        c = c.astype(np.float32)
        full = np.concatenate([x, c] if k % 2 == 0 else [c, x], axis=axis)
        ins = ["x", "x" if cshape is None else "c"]
        yield dynamic_case("dynamic_concat%d" % k, x, full,
                           [helper.make_node("Concat", ins if k % 2 == 0 else ins[::-1],
                                             ["cat"], axis=axis)],
                           [] if cshape is None else [numpy_helper.from_array(c, "c")], "cat")


def dyn_values(n, shift):
    x = values(np.float32(0.0371), n)
    x = np.where(np.isfinite(x), x, 1.0).astype(np.float32) + np.float32(shift)
    return np.clip(x, -1e4, 1e4).astype(np.float32)


def dynamic_case(name, x, full, pre, inits, src="x"):
    """DynamicQuantizeLinear of src (full's values) after the nodes pre."""
    lo, hi = np.float32(min(0.0, full.min())), np.float32(max(0.0, full.max()))
    sc = np.float32((hi - lo) / np.float32(255))
    zp = np.array(np.clip(np.rint(np.float32(0) - lo / sc), 0, 255), np.uint8)
    return (name, pre + [helper.make_node("DynamicQuantizeLinear", [src], ["y", "ys", "yz"])], x,
            [helper.make_tensor_value_info("y", TensorProto.UINT8, list(full.shape)),
             helper.make_tensor_value_info("ys", TensorProto.FLOAT, []),
             helper.make_tensor_value_info("yz", TensorProto.UINT8, [])], inits, 13,
            [ref(full, np.array(sc), zp, np.uint8), np.array(sc, np.float32), zp])


def main():
    opmig, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    n = fails = 0
    for name, nodes, x, outs, inits, opset, want in cases():
        model = os.path.join(work, name + ".onnx")
        save(model, nodes, x, outs, inits, opset)
        for threads in (1, 4):
            n += 1
            got, err = run(opmig, work, name, model, x, threads)
            msgs = [err] if got is None else \
                [m for m in (compare("%s output %d" % (name, i), g, w)
                             for i, (g, w) in enumerate(zip(got, want))) if m]
            if got is not None and len(got) != len(want):
                msgs.append("%s: %d outputs, want %d" % (name, len(got), len(want)))
            for m in msgs:
                print("FAIL threads %d: %s" % (threads, m))
            fails += bool(msgs)
    print("%d cases, %d failures" % (n, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
