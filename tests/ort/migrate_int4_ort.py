"""migrate_int4_ort.py OPMIG WORKDIR: `opmig migrate --precision int4` of the
tiny decomposed decoder (testdata/gen/make_decoder.py --preset tiny):
- tensorrt at --opset 21 (DequantizeLinear of int4 codes, zero point 0 only):
  with --no-fallback every projection MatMul reads a blocked
  DequantizeLinear-21 of an int4 [K, N] constant, no zero point, no
  MatMulNBits left; the codes are the numpy reference quantizer's symmetric
  codes minus 8 (tests/ort/quantize_nbits_ort.py) and the scales its scales;
  onnxruntime-node loads it (onnx 1.12's checker stops at opset 17) and its
  outputs equal opmig's interpreter on it; with the fallback (the prompt
  as --validation-data, blocks of 16) the result is written, and onnxruntime-node's
  logits of it against its logits of the original meet the per-position
  criterion (cosine >= 0.99 and the same top-1 token at every position)
  that opmig's report says it met, with the numbers opmig reports;
- qnn keeps MatMulNBits (its rules declare it), onnxruntime-node runs it as
  opmig's interpreter does;
- coreml and tensorrt below opset 21 take matmul-nbits' cast-codes form
  (uint8 codes through Cast, Sub and Mul): written, no MatMulNBits left;
- generic-npu (none of these) refuses: exit 2, one line, nothing written.
Exits 1 on a failure, 77 when onnxruntime-node is absent."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import ortlib  # noqa: E402
import quantize_nbits_ort as qn  # noqa: E402
check = ortlib.check
DIMS = qn.DIMS
INT4 = 22


def migrate(opmig, src, dst, target, extra):
    rep = dst + ".json"
    if os.path.exists(dst):
        os.remove(dst)
    r = subprocess.run([opmig, "migrate", src, "--target", target, "-o", dst, "--precision",
                        "int4", "--report", rep, "--format", "json"] + DIMS + extra,
                       capture_output=True, text=True, timeout=120)
    try:
        with open(rep) as f:
            return r, json.load(f)
    except (OSError, ValueError):
        return r, None


def int4_codes(t):
    raw = np.frombuffer(t.raw_data, np.uint8).astype(np.int64)
    v = np.stack([raw & 15, raw >> 4], axis=1).reshape(-1)[:int(np.prod(t.dims))]
    return np.where(v >= 8, v - 16, v).reshape(tuple(t.dims))


def main():
    args = ortlib.start(sys.argv)
    if not args:
        return 77
    opmig, work = args
    src = qn.tiny_decoder(work)
    orig = onnx.load(src)
    weights = {i.name: nh.to_array(i) for i in orig.graph.initializer}
    names = [i.name for i in orig.graph.input]
    f = qn.feeds(np.random.default_rng(25).integers(0, qn.VOCAB, size=(1, qn.S)))
    data = os.path.join(work, "data")
    qn.write_samples(data, [f], names)

    # 1. tensorrt, every projection quantized: the form and the codes
    dst = os.path.join(work, "trt.onnx")
    r, rep = migrate(opmig, src, dst, "tensorrt", ["--opset", "21", "--no-fallback", "--force",
                                                   "--data", data])
    check(r.returncode == 1 and rep and rep.get("precision") == "int4" and os.path.exists(dst),
          "tensorrt --no-fallback: exit %d (1: the criterion not met), precision %s, written"
          % (r.returncode, rep and rep.get("precision")))
    check("symmetric" in r.stdout + json.dumps(rep),
          "tensorrt: the report says the weights were made symmetric")
    m = onnx.load(dst)
    inits = {i.name: i for i in m.graph.initializer}
    dqs = [n for n in m.graph.node if n.op_type == "DequantizeLinear"]
    check(not [n for n in m.graph.node if n.op_type == "MatMulNBits"] and len(dqs) == 15,
          "tensorrt: 15 DequantizeLinear, no MatMulNBits (%d)" % len(dqs))
    check(dict((o.domain, o.version) for o in m.opset_import).get("") == 21, "tensorrt: opset 21")
    users = {i: n for n in m.graph.node for i in n.input}
    matched = 0
    for dq in dqs:
        at = {a.name: a.i for a in dq.attribute}
        x, s = inits.get(dq.input[0]), inits.get(dq.input[1])
        ok = (len(dq.input) == 2 and x is not None and x.data_type == INT4 and s is not None and
              at.get("axis") == 0 and at.get("block_size") == 32 and
              users.get(dq.output[0]) is not None and
              users[dq.output[0]].op_type == "MatMul" and users[dq.output[0]].input[1] == dq.output[0])
        if not ok:
            check(False, "tensorrt: %s is not a blocked int4 DQ without zero point read as "
                  "MatMul's B" % dq.name)
            continue
        codes, scale = int4_codes(x), nh.to_array(s)
        k, n = codes.shape
        w = [v for v in weights.values() if v.shape == (k, n) and v.dtype == np.float32]
        hit = False
        for wv in w:
            rc, rs, _ = qn.ref_quantize(wv, 4, 32, True)
            if np.array_equal(rs.T, scale) and np.array_equal((rc[:, :k] - 8).T, codes):
                hit = True
                break
        matched += hit
    check(matched == 15, "tensorrt: %d of 15 DQs hold the numpy reference's codes - 8 and "
          "scales of one of the original weights" % matched)

    # 2. with the fallback: written, meets the criterion in onnxruntime too
    fb = os.path.join(work, "trt_fb.onnx")
    r, frep = migrate(opmig, src, fb, "tensorrt", ["--opset", "21", "--block-size", "16",
                                                   "--validation-data", data, "--data", data])
    check(r.returncode == 0 and frep and frep.get("ok") is not False and os.path.exists(fb),
          "tensorrt with the fallback: exit %d, written" % r.returncode)
    nq = sum(n.op_type == "DequantizeLinear" for n in onnx.load(fb).graph.node) \
        if os.path.exists(fb) else 0
    check(nq >= 1, "tensorrt with the fallback: %d MatMuls still int4" % nq)
    res = ortlib.run_many([(src, f), (dst, f), (fb, f)], os.path.join(work, "ort"),
                          timeout=120)
    ok = not any(isinstance(x, str) for x in res)
    check(ok, "onnxruntime-node runs the original and both int4 models %s" %
          [x for x in res if isinstance(x, str)])
    if ok:
        got = qn.opmig_run(opmig, dst, f, names, os.path.join(work, "run"))
        check(not isinstance(got, str) and qn.by_position([got[0]], [res[1][0]])[1] == qn.S and
              float(np.abs(got[0] - res[1][0]).max()) < 1e-4,
              "tensorrt --no-fallback: onnxruntime-node equals opmig's interpreter (max %s)" %
              (None if isinstance(got, str) else float(np.abs(got[0] - res[1][0]).max())))
        cmin, top, npos = qn.by_position([res[2][0]], [res[0][0]])
        check(cmin >= 0.99 and top == npos,
              "tensorrt with the fallback in onnxruntime: min cosine %.6f >= 0.99, top-1 %d/%d"
              % (cmin, top, npos))
        cmin1, top1, _ = qn.by_position([res[1][0]], [res[0][0]])
        check(cmin1 < 0.99 or top1 < npos,
              "tensorrt --no-fallback in onnxruntime fails the criterion as opmig says "
              "(min cosine %.6f, top-1 %d/%d)" % (cmin1, top1, npos))

    # 3. qnn keeps MatMulNBits
    q = os.path.join(work, "qnn.onnx")
    r, qrep = migrate(opmig, src, q, "qnn", ["--no-fallback", "--force", "--data", data])
    ops = [n.op_type for n in onnx.load(q).graph.node] if os.path.exists(q) else []
    check(ops.count("MatMulNBits") == 15 and "DequantizeLinear" not in ops,
          "qnn: 15 MatMulNBits kept (exit %d, %s)" % (r.returncode, r.stderr.strip()[:160]))
    if os.path.exists(q):
        # onnx 1.12's checker lacks SimplifiedLayerNormalization (onnxruntime
        # registers it in the default domain): onnxruntime-node judges it
        got = qn.opmig_run(opmig, q, f, names, os.path.join(work, "runq"))
        want = ortlib.run_many([(q, f)], os.path.join(work, "ortq"), timeout=120)[0]
        check(not isinstance(got, str) and not isinstance(want, str) and
              float(np.abs(got[0] - want[0]).max()) < 1e-4,
              "qnn: onnxruntime-node runs it and equals opmig's interpreter")

    # 4. below opset 21, coreml and tensorrt take matmul-nbits' cast-codes
    # form (t1239 checks its numbers): written, no MatMulNBits left, every
    # quantized MatMul's codes a uint8 initializer read by a Cast
    for target in ("coreml", "tensorrt"):
        c = os.path.join(work, target + "-17.onnx")
        r, rep = migrate(opmig, src, c, target, ["--no-accuracy-check", "--no-validate"])
        m = onnx.load(c) if r.returncode == 0 and os.path.exists(c) else None
        ops = [x.op_type for x in m.graph.node] if m else []
        u8 = {t.name for t in m.graph.initializer if t.data_type == 2} if m else set()
        casts = sum(1 for x in m.graph.node if x.op_type == "Cast" and x.input[0] in u8) \
            if m else 0
        check(m is not None and "MatMulNBits" not in ops and casts >= 2 and
              "cast-codes" in json.dumps(rep),
              "%s below opset 21: written with uint8 codes through Cast (exit %d, %d Casts "
              "of uint8, MatMulNBits left: %s) %s" % (
                  target, r.returncode, casts, "MatMulNBits" in ops,
                  r.stderr.strip()[-200:] if r.returncode else ""))
    # 5. generic-npu takes none of them: refused
    c = os.path.join(work, "generic-npu.onnx")
    r, _ = migrate(opmig, src, c, "generic-npu", [])
    err = r.stderr.strip().splitlines()
    check(r.returncode == 2 and len(err) == 1 and "--precision int4: generic-npu takes neither "
          "com.microsoft:MatMulNBits nor DequantizeLinear-21 of int4 codes nor Cast of uint8 "
          "codes" in err[0] and not os.path.exists(c),
          "generic-npu: refused, exit %d: %s" % (r.returncode, err))
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
