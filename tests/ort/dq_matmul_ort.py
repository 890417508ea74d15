"""dq_matmul_ort.py OPMIG WORKDIR: MatMul(A, DequantizeLinear(codes, scale
[, zero point])) with constant codes, the weight-only form that `opmig
migrate --precision int4 --target tensorrt` writes, which opmig's
interpreter runs as one dequantizing product (runtime/qdq_wo.c) instead
of keeping the dequantized float weight.  Random cases: int4, uint4, int8
and uint8 codes, with and without zero points, blocks of 16/32/64/128
along K (K not a multiple of the block among them), blocks along N,
per-axis and per-tensor scales, batch and sequence dims on A, one row and
many; float16 scales (a float16 MatMul, left as written).  For each:
  - `opmig run` equals `opmig run --exact` (the graph as written, node by
    node) bit for bit, and --stats shows no DequantizeLinear run (the unit
    ran; the float16 cases run it), but for an A itself dequantized from a
    uint8 input and read by two such units, whose DequantizeLinear runs;
  - both are within rounding of onnxruntime-node (relative error against
    the largest output <= 1e-5; 2e-2 for float16).
Prints one line per failure and "N failures" last; exit 1 on a failure,
77 when onnxruntime-node is absent.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402

INT4, UINT4 = 22, 21
FAILS = []


def check(ok, what):
    if not ok:
        FAILS.append(what)
        print("FAIL: " + what)


def pack4(codes):
    """int4/uint4 codes (any int array) as ONNX raw_data: two a byte, the
    first in the low nibble."""
    v = (codes.astype(np.int64).ravel() & 15).astype(np.uint8)
    if v.size % 2:
        v = np.append(v, np.uint8(0))
    return (v[0::2] | (v[1::2] << 4)).tobytes()


def code_tensor(name, dtype, codes):
    t = TensorProto()
    t.name = name
    t.dims.extend(codes.shape)
    if dtype in (INT4, UINT4):
        t.data_type = dtype
        t.raw_data = pack4(codes)
    else:
        t.data_type = TensorProto.INT8 if dtype == "int8" else TensorProto.UINT8
        t.raw_data = codes.astype(np.int8 if dtype == "int8" else np.uint8).tobytes()
    return t


def make_case(path, rng, kd, n, a_shape, dtype, zp, block, axis, half):
    """The model and its input A; block 0: per axis (axis) or, axis None,
    per tensor."""
    lo, hi = {INT4: (-8, 7), UINT4: (0, 15), "int8": (-128, 127), "uint8": (0, 255)}[dtype]
    codes = rng.integers(lo, hi + 1, size=(kd, n))
    if block:
        sshape = [(kd + block - 1) // block, n] if axis == 0 else [kd, (n + block - 1) // block]
    elif axis is None:
        sshape = []
    else:
        sshape = [kd if axis == 0 else n]
    sdt = np.float16 if half else np.float32
    scale = (rng.uniform(0.5, 2.0, size=sshape) / (hi - lo)).astype(sdt)
    inits = [code_tensor("codes", dtype, codes),
             helper.make_tensor("scale", TensorProto.FLOAT16 if half else TensorProto.FLOAT,
                                sshape, scale.astype(np.float32).ravel().tolist())]
    ins = ["codes", "scale"]
    if zp:
        inits.append(code_tensor("zp", dtype, rng.integers(lo, hi + 1, size=sshape)))
        ins.append("zp")
    attrs = {}
    if axis is not None:
        attrs["axis"] = axis
    if block:
        attrs["block_size"] = block
    et = TensorProto.FLOAT16 if half else TensorProto.FLOAT
    g = helper.make_graph(
        [helper.make_node("DequantizeLinear", ins, ["w"], name="dq", **attrs),
         helper.make_node("MatMul", ["a", "w"], ["y"], name="mm")],
        "dq_matmul", [helper.make_tensor_value_info("a", et, list(a_shape))],
        [helper.make_tensor_value_info("y", et, list(a_shape[:-1]) + [n])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    onnx.save(m, path)
    a = rng.standard_normal(a_shape).astype(sdt)
    return a


def make_act_case(path, rng, kd, n):
    """A from DequantizeLinear of a uint8 input, read by two weight-only
    MatMuls (both units) added: that DequantizeLinear must still run."""
    inits, nodes = [], [helper.make_node("DequantizeLinear", ["aq", "as", "az"], ["a"],
                                         name="dq_a")]
    inits += [helper.make_tensor("as", TensorProto.FLOAT, [], [0.05]),
              helper.make_tensor("az", TensorProto.UINT8, [], [128])]
    for j in range(2):
        inits += [code_tensor("c%d" % j, INT4, rng.integers(-8, 8, size=(kd, n))),
                  helper.make_tensor("s%d" % j, TensorProto.FLOAT, [(kd + 31) // 32, n],
                                     (rng.uniform(0.5, 2.0, size=((kd + 31) // 32) * n) /
                                      15).astype(np.float32).tolist())]
        nodes += [helper.make_node("DequantizeLinear", ["c%d" % j, "s%d" % j], ["w%d" % j],
                                   name="dq%d" % j, axis=0, block_size=32),
                  helper.make_node("MatMul", ["a", "w%d" % j], ["y%d" % j], name="mm%d" % j)]
    nodes.append(helper.make_node("Add", ["y0", "y1"], ["y"], name="add"))
    g = helper.make_graph(nodes, "dq_act", [helper.make_tensor_value_info(
        "aq", TensorProto.UINT8, [3, kd])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, [3, n])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    onnx.save(m, path)
    return rng.integers(0, 256, size=(3, kd)).astype(np.uint8)


def opmig_run(opmig, model, a_path, out_dir, extra):
    os.makedirs(out_dir, exist_ok=True)
    r = subprocess.run([opmig, "run", model, a_path, "-O", out_dir, "--out-format", "npy"] +
                       extra, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()
    return np.load(os.path.join(out_dir, "output_0.npy")), r.stdout


def main():
    got = ortlib.start(sys.argv)
    if not got:
        sys.exit(77)
    opmig, work = got
    rng = np.random.default_rng(20261206)
    cases = []
    # (kd, n, A shape, codes, zero point, block, axis, float16 scale)
    for dtype in (INT4, UINT4, "int8", "uint8"):
        for zp in (False, True):
            for block in (16, 32, 64, 128):
                kd = block * 3 + (7 if block != 32 else 0)
                rows = (1, kd) if block in (16, 64) else (2, 3, kd)
                cases.append((kd, 37 + block, rows, dtype, zp, block, 0, False))
    cases += [
        (200, 300, (4, 200), INT4, True, 32, 1, False),      # blocks along N
        (96, 130, (1, 1, 96), "uint8", True, 0, 1, False),    # per output column
        (96, 130, (5, 96), "int8", False, 0, 0, False),       # per row of B
        (64, 70, (3, 64), UINT4, True, 0, None, False),       # per tensor
        (300, 257, (2, 7, 300), INT4, False, 64, 0, False),   # N past one column block
        (77, 40, (77,), "uint8", True, 16, 0, False),          # A one-dimensional
        (96, 48, (2, 96), INT4, True, 32, 0, True),           # float16 scales
        (80, 33, (1, 80), "uint8", False, 16, 0, True),
    ]
    cases.append((96, 50, (3, 96), "act", False, 32, 0, False))  # A dequantized
    runs = []
    for i, (kd, n, shape, dtype, zp, block, axis, half) in enumerate(cases):
        path = os.path.join(work, "c%d.onnx" % i)
        if dtype == "act":
            a = make_act_case(path, rng, kd, n)
        else:
            a = make_case(path, rng, kd, n, shape, dtype, zp, block, axis, half)
        np.save(os.path.join(work, "a%d.npy" % i), a)
        runs.append((path, {"aq" if dtype == "act" else "a": a}))
    ort = ortlib.run_many(runs, work)
    for i, c in enumerate(cases):
        name = "case %d %s" % (i, c)
        a_path = os.path.join(work, "a%d.npy" % i)
        fused, stats = opmig_run(opmig, runs[i][0], a_path, os.path.join(work, "f%d" % i),
                                 ["--stats"])
        exact, err = opmig_run(opmig, runs[i][0], a_path, os.path.join(work, "e%d" % i),
                               ["--exact"])
        if fused is None or exact is None:
            check(False, "%s: opmig failed: %s" % (name, stats if fused is None else err))
            continue
        half = c[7]
        ran_dq = [int(line.split()[1]) for line in stats.splitlines()
                  if line.split()[:1] == ["DequantizeLinear"]]
        want_dq = 1 if half or c[3] == "act" else 0   # the activation's runs
        check(ran_dq == ([want_dq] if want_dq else [0]),
              "%s: DequantizeLinear ran %s times, want %d (%s)" %
              (name, ran_dq, want_dq, "no unit" if not want_dq else "unit for float16?"))
        check(fused.dtype == exact.dtype and fused.shape == exact.shape and
              np.array_equal(fused.view(np.uint8), exact.view(np.uint8)),
              "%s: the unit differs from the graph as written (largest difference %g)" %
              (name, float(np.max(np.abs(fused.astype(np.float64) - exact)))
               if fused.shape == exact.shape else -1))
        want = ort[i]
        if isinstance(want, str):
            check(False, "%s: onnxruntime-node: %s" % (name, want))
            continue
        want = want[0].astype(np.float64)
        tol = 2e-2 if half else 1e-5
        big = max(float(np.max(np.abs(want))), 1e-30)
        for label, v in (("the unit", fused), ("--exact", exact)):
            err = float(np.max(np.abs(v.astype(np.float64) - want))) / big \
                if v.shape == want.shape else float("inf")
            check(err <= tol, "%s: %s against onnxruntime: relative error %g > %g" %
                  (name, label, err, tol))
    print("%d cases, onnxruntime-node %s" % (len(cases), ortlib.version()))
    print("%d failures" % len(FAILS))
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
