"""nbits_codes_ort.py OPMIG WORKDIR: com.microsoft MatMulNBits lowered by
matmul-nbits for targets below opset 21 with the codes kept one a byte
(uint8), not dequantized into float32 / float16 weights:
  dequantize-per-axis: one block over all of K (block_size >= K), float32
      data (float16 from opset 19, where DequantizeLinear takes float16
      scales): DequantizeLinear (axis 1) of uint8 codes [K, N], scales and
      zero points [N] (openvino at its default opset 17; --opset 19);
  cast-codes: uint8 codes [K / block, block, N] (the last block padded
      with B's own codes), Cast to the data's dtype, Sub of the zero
      points (a scalar 2^(bits - 1) when there are none) and Mul of the
      scales [K / block, 1, N], Reshape to [K', N], Slice of K rows
      (openvino's true blocks and float16 at 17, ascend and rknpu2 for
      float16, coreml, opencv-dnn for float32);
  dequantized (no such form legal): generic-npu's rules take no Cast of
      uint8, so its weights stay float32 / float16;
  tensorrt --opset 17: its DequantizeLinear takes int8 only and its MatMul
      no 8-bit input (the scan reads a per-axis DequantizeLinear's MatMul
      as a QDQ unit of the codes), so even one block is cast-codes.
Seeded single-node models (nbits_f16_lower_ort.make: bits 4 and 8, blocks
16 to 128, K not a multiple of the block, block_size >= K, odd N, zero
points or none, a bias), float32 and float16.  Per target and case: the
ops and the report's form; the written weight evaluated by numpy from the
initializers (nbits_f16_lower_ort.weights_of) equals numpy's (code - zero
point) * scale in float32 exactly (float16: rounded once to float16); the
codes are a uint8 initializer of K' * N bytes and the float initializers
together hold less than K * N bytes; onnx.checker full_check (opset 17);
and
onnxruntime-node runs the migrated model and the original com.microsoft
one on the same A: float32 within 1e-5 of the largest |value|, float16
within 2^-9 (each weight rounded to float16 where MatMulNBits keeps
float32).  A 1024 x 512 model's file: about K * N bytes (not 4 K N as the
dequantized form writes for generic-npu).  opmig's interpreter runs each
float32 cast chain and its MatMul as one weight-only unit
(runtime/qdq_wo.c): `opmig run` equals `opmig run --exact` bit for bit,
the Cast is fused and no constant result kept; also on hand-made chains
(hand_made) and not where the Sub's inputs are swapped.  Exits 1 on a
failure, 77 when onnxruntime-node is absent."""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper
from onnx import numpy_helper as nh

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opmiglib  # noqa: E402
import ortlib  # noqa: E402
from ortlib import check  # noqa: E402
from nbits_f16_lower_ort import form_ops, migrate, weights_of  # noqa: E402
from opmiglib import matmul_nbits as make  # noqa: E402
from opmiglib import full_check  # noqa: E402

F32, F16 = np.float32, np.float16
DT_NAME = {T.UINT8: "uint8", T.FLOAT: "float32", T.FLOAT16: "float16"}
# name, bits, K, N, block, zero points, bias, dtype
CASES = [("f32-b4-32", 4, 100, 17, 32, True, True, F32),
         ("f32-b4-16-sym", 4, 64, 16, 16, False, False, F32),
         ("f32-b8-64", 8, 150, 12, 64, True, False, F32),
         ("f32-b4-128-one", 4, 100, 16, 128, True, False, F32),
         ("f32-b8-64-one-sym", 8, 64, 10, 64, False, True, F32),
         ("f16-b4-32", 4, 100, 16, 32, True, True, F16),
         ("f16-b8-16-sym", 8, 40, 8, 16, False, False, F16),
         ("f16-b4-128-one", 4, 90, 16, 128, True, False, F16),
         ("f16-b4-64-sym-odd", 4, 200, 17, 64, False, False, F16)]


def axis_or_cast(one, half, opset):
    return "uint8" if one and (not half or opset >= 19) else "cast"


# target, options, the form per (one block, float16): the weights' kind
# (None: not run; ascend's and rknpu2's MatMul take float16 only, so their
# float32 cases go through Casts to float16)
TARGETS = [("openvino", [], lambda one, half: axis_or_cast(one, half, 17)),
           ("openvino", ["--opset", "19"], lambda one, half: axis_or_cast(one, half, 19)),
           ("ascend", [], lambda one, half: "cast" if half else None),
           ("rknpu2", [], lambda one, half: "cast" if half else None),
           ("coreml", [], lambda one, half: "cast"),
           ("opencv-dnn", [], lambda one, half: None if half else "cast"),
           ("generic-npu", [], lambda one, half: "float16" if half else "float32"),
           ("tensorrt", ["--opset", "17"], lambda one, half: "cast")]
VARIANT = {"uint8": "dequantize-per-axis", "cast": "cast-codes", "float32": "dequantized",
           "float16": "dequantized"}


def init_bytes(m):
    """Bytes of the largest uint8 initializer (the codes) and of the
    float ones together."""
    u8 = fl = 0
    for t in m.graph.initializer:
        nb = len(t.raw_data) if t.raw_data else len(onnx.numpy_helper.to_array(t).tobytes())
        if t.data_type == T.UINT8:
            u8 = max(u8, nb)
        elif t.data_type in (T.FLOAT, T.FLOAT16):
            fl += nb
    return u8, fl


def zero_points_of(m):
    """How the cast form's Sub gets its zero points: ("uint8", shape)
    through a Cast of a uint8 initializer, (dtype, shape) of a float
    initializer read directly, or ("?", op) otherwise."""
    inits = {t.name: t for t in m.graph.initializer}
    prod = {o: x for x in m.graph.node for o in x.output}
    sub = [x for x in m.graph.node if x.op_type == "Sub"]
    if len(sub) != 1:
        return "?", "no single Sub"
    z = sub[0].input[1]
    if z in inits:
        return DT_NAME.get(inits[z].data_type, "?"), list(inits[z].dims)
    c = prod.get(z)
    if c is None or c.op_type != "Cast" or c.input[0] not in inits:
        return "?", c.op_type if c is not None else "none"
    t = inits[c.input[0]]
    return DT_NAME.get(t.data_type, "?") + " cast", list(t.dims)


def hand_made(work, rng):
    """Cast chains written by hand beside migrate's: int8 codes [K, N]
    with a scalar zero point and scales [N], Reshape to [-1, N], no Slice;
    uint8 codes [3, 16, N] with zero points along the block's rows [3, 16,
    1] and scales [1, 1, N], a Slice of 40 rows with axes and steps; and
    the zero point minus the codes (Sub's inputs swapped), which is no
    such chain and must run as written.  Zero points of 8-bit codes
    through their own Cast to float32 (what migrate writes): uint8 [3, 1,
    N], int8 [N] of int8 codes [K, N], both Casts fused; not where the
    zero points' Cast has a second reader (a graph output), nor swapped.
    (what, path, A, unit expected)."""
    out = []
    n = 24
    u8 = rng.integers(0, 256, (3, 16, n)).astype(np.uint8)
    zu8 = rng.integers(0, 256, (3, 1, n)).astype(np.uint8)
    sc3 = rng.random((3, 1, n)).astype(np.float32) * 0.1
    for name, q, zp, sc, shape, sl, unit, zcast in (
            ("int8-rank2", rng.integers(-128, 128, (48, n)).astype(np.int8),
             np.float32(-3.0), rng.random(n).astype(np.float32) * 0.1, [-1, n], None, True,
             ""),
            ("uint8-rows", rng.integers(0, 256, (3, 16, n)).astype(np.uint8),
             (rng.integers(0, 256, (3, 16, 1)) - 0.5).astype(np.float32),
             rng.random((1, 1, n)).astype(np.float32) * 0.1, [48, n], 40, True, ""),
            ("swapped-sub", rng.integers(0, 256, (3, 16, n)).astype(np.uint8),
             rng.random((3, 1, n)).astype(np.float32) * 100,
             rng.random((3, 1, n)).astype(np.float32) * 0.1, [48, n], None, False, ""),
            ("uint8-zp-cast", u8, zu8, sc3, [48, n], 40, True, "one"),
            ("int8-zp-cast", rng.integers(-128, 128, (48, n)).astype(np.int8),
             rng.integers(-128, 128, n).astype(np.int8),
             rng.random(n).astype(np.float32) * 0.1, [-1, n], None, True, "one"),
            ("zp-cast-two-readers", u8, zu8, sc3, [48, n], 40, False, "two"),
            ("zp-cast-swapped-sub", u8, zu8, sc3, [48, n], None, False, "one")):
        zf = "zf" if zcast else "Z"
        nodes = [helper.make_node("Cast", ["Q"], ["c"], to=T.FLOAT),
                 helper.make_node("Sub", ["c", zf] if unit or zcast == "two" else [zf, "c"],
                                  ["s"]),
                 helper.make_node("Mul", ["S", "s"], ["m"]),
                 helper.make_node("Reshape", ["m", "shape"], ["w" if sl else "W"])]
        if zcast:
            nodes.insert(0, helper.make_node("Cast", ["Z"], ["zf"], to=T.FLOAT))
        inits = [nh.from_array(q, "Q"),
                 nh.from_array(zp if zcast else np.asarray(zp, np.float32), "Z"),
                 nh.from_array(sc, "S"), nh.from_array(np.int64(shape), "shape")]
        k = sl or 48
        if sl:
            nodes.append(helper.make_node("Slice", ["w", "st", "en", "ax", "sp"], ["W"]))
            inits += [nh.from_array(np.int64([0]), "st"), nh.from_array(np.int64([sl]), "en"),
                      nh.from_array(np.int64([0]), "ax"), nh.from_array(np.int64([1]), "sp")]
        nodes.append(helper.make_node("MatMul", ["A", "W"], ["Y"]))
        path = os.path.join(work, "hand-%s.onnx" % name)
        outs = [helper.make_tensor_value_info("Y", T.FLOAT, [2, 5, n])]
        if zcast == "two":
            outs.append(helper.make_tensor_value_info("zf", T.FLOAT, list(zp.shape)))
        opmiglib.save(nodes, inits, [helper.make_tensor_value_info("A", T.FLOAT, [2, 5, k])],
                      outs, path)
        out.append(("hand-made " + name, path, rng.standard_normal((2, 5, k)).astype(F32), unit))
    return out


def unit_vs_exact(opmig, case, j):
    """case (what, path, A, unit expected): `opmig run` (the weight-only
    unit computing the chain) equals `opmig run --exact` (node by node)
    bit for bit; the unit ran (Cast fused, no constant result kept) where
    expected, and not elsewhere."""
    what, path, a, unit = case
    exact = opmiglib.run_exact(opmig, path, {"A": a})
    d = os.path.join(os.path.dirname(path), "unit%d" % j)
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "A.npy"), a)
    r = subprocess.run([opmig, "run", path, "A=" + os.path.join(d, "A.npy"), "-O", d,
                        "--out-format", "npy", "--stats", "--threads", "2"],
                       capture_output=True, text=True, timeout=60)
    if isinstance(exact, str) or r.returncode:
        check(False, "%s: opmig run: %s %s" % (what, exact if isinstance(exact, str) else "",
                                                r.stderr.strip()[-300:]))
        return
    got = np.load(os.path.join(d, "output_0.npy"))
    check(got.tobytes() == exact[0].tobytes(),
          "%s: the weight-only unit equals the graph as written bit for bit (%d of %d differ)"
          % (what, int(np.sum(got != exact[0])), got.size))
    cast = [ln.split() for ln in r.stdout.splitlines() if ln.startswith("Cast ")]
    ran = bool(cast) and cast[0][1] != "0"
    kept = "constant results kept: 0 bytes" in r.stdout
    check(ran != unit and kept == unit,
          "%s: the cast chain %s (stats: %s; %s)" % (
              what, "runs inside the unit, nothing kept" if unit else "runs as written",
              cast, "nothing kept" if kept else "constants kept"))


def main():
    args = ortlib.start(sys.argv)
    if not args:
        return 77
    opmig, work = args
    rng = np.random.default_rng(1236)
    jobs, cmp, units = [], [], []
    for i, (name, bits, k, n, bs, zp, bias, dt) in enumerate(CASES):
        src = os.path.join(work, name + ".onnx")
        w, bv = make(src, bits, k, n, bs, zp, bias, 50 + i, dt)
        half, one = dt == F16, bs >= k
        a = rng.standard_normal((2, 3, k)).astype(dt)
        ref = a.astype(np.float32) @ w + (bv.astype(np.float32) if bias else 0)
        jobs.append((src, {"A": a}))
        orig = len(jobs) - 1
        cmp.append(("%s: MatMulNBits in onnxruntime against numpy" % name, orig, None,
                    ref.astype(dt), dt))
        for target, extra, form in TARGETS:
            want = form(one, half)
            if want is None:
                continue
            what = "%s on %s%s" % (name, target, " " + " ".join(extra) if extra else "")
            dst = os.path.join(work, "%s-%s%s.onnx" % (name, target, "".join(extra)))
            r = migrate(opmig, src, dst, target, extra)
            check(r.returncode == 0, "%s: opmig migrate exit %d %s" % (
                what, r.returncode, (r.stdout + r.stderr).strip()[-300:] if r.returncode else ""))
            if r.returncode:
                continue
            check("matmul-nbits (%s)" % VARIANT[want] in r.stdout,
                  "%s: the report names the form matmul-nbits (%s)" % (what, VARIANT[want]))
            m = onnx.load(dst)
            ops = sorted(x.op_type for x in m.graph.node)
            exp = form_ops(want, k, bs, zp, bias)
            check(ops == exp, "%s: ops %s (want %s)" % (what, ops, exp))
            got, kind = weights_of(m, name, k, n, bs)
            check(kind == want, "%s: weights as %s (want %s)" % (what, kind, want))
            if got is not None:
                exact = w.astype(dt)
                bad = int(np.sum(got != exact)) if got.shape == exact.shape else -1
                check(got.dtype == dt and bad == 0,
                      "%s: the written weight is numpy's (code - zero point) * scale%s "
                      "(%d of %d differ)" % (what, " rounded to float16" if half else "", bad,
                                             exact.size))
            if want == "cast":
                # uint8 zero points [K / block, 1, N] ([N] for one block)
                # and their own Cast; a scalar 2^(bits - 1) when none
                zk, zs = zero_points_of(m)
                wz = ("uint8 cast", [n] if one else [-(-k // bs), 1, n]) if zp else \
                    ("float16" if half else "float32", [])
                check((zk, zs) == wz, "%s: zero points %s %s (want %s %s)" %
                      (what, zk, zs, wz[0], wz[1]))
            u8, fl = init_bytes(m)
            kp = k if one else -(-k // bs) * bs
            if want in ("uint8", "cast"):
                check(u8 == kp * n and fl < k * n,
                      "%s: uint8 codes of %d bytes (K' * N = %d), float initializers %d bytes "
                      "(< K * N)" % (what, u8, kp * n, fl))
            if "19" not in extra:      # python-onnx 1.12 checks no opset 19
                full_check(dst, what)
            jobs.append((dst, {"A": a}))
            cmp.append((what + ": against MatMulNBits in onnxruntime", len(jobs) - 1, orig, None,
                        dt))
            if want == "cast" and not half:
                units.append((what, dst, a, True))
    # the interpreter's weight-only unit of the cast chain
    for j, case in enumerate(units + hand_made(work, rng)):
        unit_vs_exact(opmig, case, j)
    # bytes on disk: K * N codes, against the dequantized float32 weights
    k, n, bs = 1024, 512, 32
    src = os.path.join(work, "big.onnx")
    make(src, 4, k, n, bs, True, False, 99, F32)
    sizes = {}
    for target in ("coreml", "generic-npu"):
        dst = os.path.join(work, "big-%s.onnx" % target)
        r = migrate(opmig, src, dst, target, [])
        check(r.returncode == 0, "big on %s: opmig migrate exit %d" % (target, r.returncode))
        sizes[target] = os.path.getsize(dst) if os.path.exists(dst) else 0
    side = (k // bs) * n * (4 + 1)        # float32 scales, uint8 zero points
    check(k * n + side <= sizes["coreml"] <= k * n + side + 4096,
          "1024 x 512 4-bit, block 32, on coreml: %d bytes on disk (K * N codes %d, "
          "float32 scales and uint8 zero points %d; float32 zero points would add %d)"
          % (sizes["coreml"], k * n, side, (k // bs) * n * 3))
    check(sizes["generic-npu"] >= 4 * k * n,
          "the same dequantized for generic-npu: %d bytes (4 K N = %d)" %
          (sizes["generic-npu"], 4 * k * n))
    res = ortlib.run_many(jobs, os.path.join(work, "ort"), timeout=300)
    for what, j, o, ref, dt in cmp:
        got = res[j]
        want = ref if ref is not None else res[o]
        if isinstance(got, str) or isinstance(want, str):
            check(False, "%s: onnxruntime: %s" % (what, got if isinstance(got, str) else want))
            continue
        g = np.asarray(got[0], np.float32)
        wv = np.asarray(want[0] if isinstance(want, list) else want, np.float32)
        tol = (2.0 ** -9 if dt == F16 else 1e-5) * float(np.max(np.abs(wv)))
        err = float(np.max(np.abs(g - wv))) if g.shape == wv.shape else float("inf")
        check(err <= tol, "%s: max |diff| %.3g, tol %.3g" % (what, err, tol))
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
