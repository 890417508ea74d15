"""nbits_f16_ort.py OPMIG WORKDIR: com.microsoft MatMulNBits of float16
data (float16 A and scales, onnxruntime-genai's int4 export of a float16
model) migrated to openvino at opset 21 becomes DequantizeLinear-21 of
uint4 codes blocked along K with float16 scales and uint4 zero points
(8 where the node has none) feeding a float16 MatMul (and Add of the bias):
no MatMulNBits is left, the scales are float16 [ceil(K / block), N].
Cases: 4 bits, block 16, K 64, N 16, packed zero points; symmetric with a
bias, K 40 (a partial last block); block 32, K 96, N 24, zero points and
a bias.  onnxruntime-node runs the original and the migrated model on the
same seeded float16 A; both must equal a numpy reference of MatMulNBits
(codes minus zero point times the scale, in float32, A in float32, the
sum rounded once to float16) within 2^-9 of the largest |value| (each
side is float16: the migrated W is (code - zero point) * scale rounded to
float16 where MatMulNBits keeps it in float32, a relative 2^-11 per
weight, and MatMul sums float16 operands; measured: one float16 ulp at
most, in about a third of the elements; MatMulNBits itself equals the
reference exactly), and each other within the same.
tensorrt at opset 21 takes no uint4 codes: the node with zero points
becomes DequantizeLinear-21 of int8 code - zero point (no zero point),
the report saying which form and why (t1235 checks the other targets).
Prints one line per check; exits 1 on a failure, 77 when onnxruntime-node
is absent."""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opmiglib  # noqa: E402
import ortlib  # noqa: E402

FAILS = []


def check(ok, what):
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        FAILS.append(what)


def make(path, k, n, bs, zp, bias, seed):
    """The model and a numpy reference of it: f(A) -> float16 Y."""
    w, bv = opmiglib.matmul_nbits(path, 4, k, n, bs, zp, bias, seed, opset=21)

    def ref(a):
        y = a.astype(np.float32) @ w
        if bias:
            y = y + bv.astype(np.float32)
        return y.astype(np.float16)
    return ref


def main():
    args = ortlib.start(sys.argv)
    if not args:
        return 77
    opmig, work = args
    rng = np.random.default_rng(16)
    cases = [("zp", 64, 16, 16, True, False), ("sym-bias", 40, 16, 16, False, True),
             ("b32", 96, 24, 32, True, True)]
    jobs, refs = [], []
    for i, (name, k, n, bs, zp, bias) in enumerate(cases):
        src = os.path.join(work, name + ".onnx")
        dst = os.path.join(work, name + "-openvino.onnx")
        ref = make(src, k, n, bs, zp, bias, i)
        r = subprocess.run([opmig, "migrate", src, "--target", "openvino", "--opset", "21",
                            "-o", dst, "--no-validate"], capture_output=True, text=True,
                           timeout=60)
        check(r.returncode == 0, "%s: opmig migrate exit %d %s" % (name, r.returncode,
                                                                  r.stderr.strip()[:200]))
        if r.returncode:
            continue
        m = onnx.load(dst)
        ops = [x.op_type for x in m.graph.node]
        inits = {t.name: t for t in m.graph.initializer}
        dq = [x for x in m.graph.node if x.op_type == "DequantizeLinear"]
        want = ["DequantizeLinear", "MatMul"] + (["Add"] if bias else [])
        check(sorted(ops) == sorted(want), "%s: %s (want %s)" % (name, ops, want))
        if dq:
            s, c = inits.get(dq[0].input[1]), inits.get(dq[0].input[0])
            kb = (k + bs - 1) // bs
            z = inits.get(dq[0].input[2]) if len(dq[0].input) == 3 else None
            check(s is not None and s.data_type == T.FLOAT16 and list(s.dims) == [kb, n] and
                  c is not None and c.data_type == 21 and list(c.dims) == [k, n] and
                  z is not None and z.data_type == 21 and list(z.dims) == [kb, n],
                  "%s: DequantizeLinear of uint4 [%d, %d] codes, float16 [%d, %d] scales, "
                  "uint4 zero points (8 where the node has none)" % (name, k, n, kb, n))
        a = rng.standard_normal((2, 3, k)).astype(np.float16)
        jobs += [(src, {"A": a}), (dst, {"A": a})]
        refs.append((name, ref(a)))
    res = ortlib.run_many(jobs, os.path.join(work, "ort"))
    for i, (name, want) in enumerate(refs):
        orig, got = res[2 * i], res[2 * i + 1]
        if isinstance(orig, str) or isinstance(got, str):
            check(False, "%s: onnxruntime: %s" % (name, orig if isinstance(orig, str) else got))
            continue
        w32, o32, g32 = (x.astype(np.float32) for x in (want, orig[0], got[0]))
        tol = 2.0 ** -9 * float(np.max(np.abs(w32)))
        for what, x in (("MatMulNBits in onnxruntime", o32), ("migrated in onnxruntime", g32)):
            err = float(np.max(np.abs(x - w32)))
            check(got[0].dtype == np.float16 and err <= tol,
                  "%s: %s equals the reference (max |diff| %.3g, tol %.3g)" %
                  (name, what, err, tol))
        err = float(np.max(np.abs(o32 - g32)))
        check(err <= tol, "%s: migrated equals MatMulNBits in onnxruntime (max |diff| %.3g, "
              "%d of %d differ)" % (name, err, int(np.sum(o32 != g32)), o32.size))
    # a target without uint4 codes: int8 code - zero point, the report saying so
    src, dst = os.path.join(work, "zp.onnx"), os.path.join(work, "zp-tensorrt.onnx")
    r = subprocess.run([opmig, "migrate", src, "--target", "tensorrt", "--opset", "21", "-o", dst,
                        "--no-validate", "--force"], capture_output=True, text=True, timeout=60)
    m = onnx.load(dst) if os.path.exists(dst) else None
    dq = [x for x in m.graph.node if x.op_type == "DequantizeLinear"] if m else []
    codes = [t for t in m.graph.initializer if dq and t.name == dq[0].input[0]] if m else []
    check(r.returncode == 0 and "DequantizeLinear-21 of int8 codes" in r.stdout and
          sorted(x.op_type for x in m.graph.node) == ["DequantizeLinear", "MatMul"] and
          len(dq[0].input) == 2 and codes and codes[0].data_type == T.INT8,
          "tensorrt: int8 code - zero point codes, no zero point, the report says so "
          "(exit %d)" % r.returncode)
    print("%d failures" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
