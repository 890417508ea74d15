"""migrate_int4_cast_ort.py OPMIG WORKDIR: `opmig migrate --precision int4`
(and --weight-only int8) below opset 21 for targets that take no blocked
DequantizeLinear-21 but matmul-nbits' cast-codes form (openvino, coreml,
tensorrt at their opset 17): the quantizer's own codes kept one a byte,
uint8 [K / block, block, N] with K padded to whole blocks, Cast, Sub of
uint8 zero points (their own Cast; none when symmetric), Mul of the
scales, Reshape and Slice.  Seeded single-MatMul models (K a multiple of
the block or not, K below the block, symmetric, 8 bits).  Per case and
target: exit 0 and the report's notes; the ops; the codes' and zero
points' shapes and dtypes; the written weight evaluated by numpy from the
initializers equals numpy's dequantization ((code - zero point) * scale in
float32) of `opmig quantize --weight-only` MatMulNBits (the same codes)
exactly; onnx.checker full_check; onnxruntime-node runs the migrated model
and the MatMulNBits one on the same A (within 1e-5 of the largest
|value|); `opmig run` equals `opmig run --exact` bit for bit (the
weight-only unit).  generic-npu (no Cast of uint8) is refused: exit 2, one
line, nothing written; so are float16 weights (opset 21 needed).  Exits 1 on a failure, 77 when onnxruntime-node is
absent."""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper
from onnx import numpy_helper as nh

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402
from ortlib import check  # noqa: E402
from nbits_codes_ort import unit_vs_exact, zero_points_of  # noqa: E402
from nbits_f16_lower_ort import form_ops, weights_of  # noqa: E402
from opmiglib import full_check  # noqa: E402

# name, K, N, block, options
CASES = [("b32-k100", 100, 24, 32, ["--precision", "int4"]),
         ("b16-k64-sym", 64, 16, 16, ["--precision", "int4", "--symmetric"]),
         ("b32-k100-sym", 100, 12, 32, ["--precision", "int4", "--symmetric"]),
         ("b64-k40-one", 40, 20, 64, ["--precision", "int4"]),
         ("int8-b32-k72", 72, 16, 32, ["--weight-only", "int8"])]
TARGETS = ["openvino", "coreml", "tensorrt"]


def model(path, k, n, seed):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((k, n)).astype(np.float32)
    g = helper.make_graph([helper.make_node("MatMul", ["A", "W"], ["Y"])], "mm",
                          [helper.make_tensor_value_info("A", T.FLOAT, [2, 3, k])],
                          [helper.make_tensor_value_info("Y", T.FLOAT, [2, 3, n])],
                          [nh.from_array(w, "W")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


def nbits_weight(path):
    """numpy's (code - zero point) * scale in float32 of the one
    MatMulNBits in path: [K, N], and whether it has zero points."""
    m = onnx.load(path)
    nodes = [x for x in m.graph.node if x.op_type == "MatMulNBits"]
    if len(nodes) != 1:
        return None, None
    x = nodes[0]
    at = {a.name: a.i for a in x.attribute}
    k, n, bits, bs = at["K"], at["N"], at.get("bits", 4), at["block_size"]
    inits = {t.name: nh.to_array(t) for t in m.graph.initializer}
    kb = -(-k // bs)
    b = inits[x.input[1]].reshape(n, kb, bs * bits // 8)
    if bits == 4:
        codes = np.stack([b & 15, b >> 4], axis=-1).reshape(n, kb, bs)
    else:
        codes = b
    sc = inits[x.input[2]].reshape(n, kb).astype(np.float32)
    zp = len(x.input) > 3 and x.input[3]
    if zp:
        z = inits[x.input[3]].reshape(n, -1)
        if bits == 4:
            z = np.stack([z & 15, z >> 4], axis=-1).reshape(n, -1)
        z = z[:, :kb].astype(np.float32)
    else:
        z = np.full((n, kb), float(1 << (bits - 1)), np.float32)
    w = (codes.astype(np.float32) - z[:, :, None]) * sc[:, :, None]
    return w.reshape(n, kb * bs)[:, :k].T.copy(), bool(zp)


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def main():
    args = ortlib.start(sys.argv)
    if not args:
        return 77
    opmig, work = args
    rng = np.random.default_rng(1239)
    jobs, cmp, units = [], [], []
    for i, (name, k, n, bs, opts) in enumerate(CASES):
        src = os.path.join(work, name + ".onnx")
        model(src, k, n, 70 + i)
        bits = "8" if "int8" in opts else "4"
        sym = ["--symmetric"] if "--symmetric" in opts else []
        q = os.path.join(work, name + "-nbits.onnx")
        r = run([opmig, "quantize", src, "-o", q, "--weight-only", "int" + bits,
                 "--block-size", str(bs), "--no-accuracy-check"] + sym)
        check(r.returncode == 0, "%s: opmig quantize exit %d %s" % (
            name, r.returncode, r.stderr.strip()[-300:] if r.returncode else ""))
        if r.returncode:
            continue
        ref, zp = nbits_weight(q)
        a = rng.standard_normal((2, 3, k)).astype(np.float32)
        jobs.append((q, {"A": a}))
        orig = len(jobs) - 1
        for target in TARGETS:
            what = "%s on %s" % (name, target)
            dst = os.path.join(work, "%s-%s.onnx" % (name, target))
            r = run([opmig, "migrate", src, "--target", target, "-o", dst, "--no-validate",
                     "--block-size", str(bs)] + opts)
            check(r.returncode == 0, "%s: opmig migrate exit %d %s" % (
                what, r.returncode, (r.stdout + r.stderr).strip()[-300:] if r.returncode else ""))
            if r.returncode:
                continue
            check("the codes are kept one a byte (uint8) through Cast, Sub and Mul" in r.stdout
                  and "matmul-nbits (cast-codes)" in r.stdout,
                  "%s: the report says the codes are kept one a byte (cast-codes)" % what)
            m = onnx.load(dst)
            ops = sorted(x.op_type for x in m.graph.node)
            want = form_ops("cast", k, bs, zp, False)
            check(ops == want, "%s: ops %s (want %s)" % (what, ops, want))
            kb = -(-k // bs)
            one = kb == 1
            # the codes: what the Cast read by the Sub's first input reads
            prod = {o: x for x in m.graph.node for o in x.output}
            inits = {t.name: t for t in m.graph.initializer}
            sub = [x for x in m.graph.node if x.op_type == "Sub"]
            c = prod.get(sub[0].input[0]) if len(sub) == 1 else None
            t = inits.get(c.input[0]) if c is not None and c.op_type == "Cast" else None
            cdims = [k, n] if one else [kb, bs, n]
            check(t is not None and t.data_type == T.UINT8 and list(t.dims) == cdims,
                  "%s: uint8 codes %s (want %s)" % (
                      what, list(t.dims) if t is not None else None, cdims))
            if t is not None and not one and k % bs:
                # the padded rows of the last block: its zero point's codes
                # (2^(bits - 1) when symmetric), sliced off again
                pad = nh.to_array(t)[-1, k % bs:, :]
                zl = nh.to_array(inits[prod[sub[0].input[1]].input[0]])[-1, 0, :] if zp \
                    else np.full(n, 1 << (int(bits) - 1))
                check(bool(np.all(pad == zl[None, :])),
                      "%s: the %d padded rows hold the last block's zero points" %
                      (what, bs - k % bs))
            zk, zs = zero_points_of(m)
            wz = ("uint8 cast", [n] if one else [kb, 1, n]) if zp else ("float32", [])
            check((zk, zs) == wz, "%s: zero points %s %s (want %s %s)" %
                  (what, zk, zs, wz[0], wz[1]))
            got, kind = weights_of(m, name, k, n, bs)
            bad = int(np.sum(got != ref)) if got is not None and got.shape == ref.shape else -1
            check(kind == "cast" and bad == 0,
                  "%s: the written weight (%s) is numpy's dequantization of opmig quantize's "
                  "MatMulNBits (%d of %d differ)" % (what, kind, bad, ref.size))
            full_check(dst, what)
            jobs.append((dst, {"A": a}))
            cmp.append((what + ": against MatMulNBits in onnxruntime", len(jobs) - 1, orig))
            units.append((what, dst, a, True))
    for j, case in enumerate(units):
        unit_vs_exact(opmig, case, j)
    # generic-npu's Cast takes no uint8: refused
    src = os.path.join(work, CASES[0][0] + ".onnx")
    dst = os.path.join(work, "generic-npu.onnx")
    r = run([opmig, "migrate", src, "--target", "generic-npu", "-o", dst, "--no-validate",
             "--precision", "int4"])
    err = r.stderr.strip().splitlines()
    check(r.returncode == 2 and len(err) == 1 and "generic-npu takes neither "
          "com.microsoft:MatMulNBits nor DequantizeLinear-21 of int4 codes nor Cast of uint8 "
          "codes" in err[0] and not os.path.exists(dst),
          "generic-npu: refused, exit %d: %s" % (r.returncode, err))
    # float16 weights: the quantizer's float16 codes have no cast form,
    # refused as before (opset 21 needed)
    h = os.path.join(work, "half.onnx")
    m = onnx.load(src)
    w = nh.to_array(m.graph.initializer[0]).astype(np.float16)
    m.graph.initializer[0].CopyFrom(nh.from_array(w, "W"))
    for v in list(m.graph.input) + list(m.graph.output):
        v.type.tensor_type.elem_type = T.FLOAT16
    onnx.save(m, h)
    r = run([opmig, "migrate", h, "--target", "openvino", "-o", dst, "--no-validate",
             "--precision", "int4"])
    err = r.stderr.strip().splitlines()
    check(r.returncode == 2 and len(err) == 1 and "needs opset 21" in err[0] and
          not os.path.exists(dst),
          "float16 weights on openvino: refused, exit %d: %s" % (r.returncode, err))
    res = ortlib.run_many(jobs, os.path.join(work, "ort"), timeout=300)
    for what, j, o in cmp:
        got, want = res[j], res[o]
        if isinstance(got, str) or isinstance(want, str):
            check(False, "%s: onnxruntime: %s" % (what, got if isinstance(got, str) else want))
            continue
        g, w = np.asarray(got[0]), np.asarray(want[0])
        tol = 1e-5 * float(np.max(np.abs(w)))
        err = float(np.max(np.abs(g - w))) if g.shape == w.shape else float("inf")
        check(err <= tol, "%s: max |diff| %.3g, tol %.3g" % (what, err, tol))
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
