"""migrate_int4_opts.py OPMIG WORKDIR: the options of `opmig migrate
--precision int4` besides the form (migrate_int4_ort.py), on the tiny
decomposed decoder, with numpy's codes (quantize_nbits_ort.ref_quantize):
- --weight-only int8 --no-validate for tensorrt at --opset 21: every
  projection MatMul reads a blocked DequantizeLinear-21 of an int8 [K, N]
  constant, no zero point, the reference's symmetric codes - 128 and its
  scales; nothing was run (the report says the check was skipped by
  --no-validate, the validation skipped, 15 MatMuls quantized); JSON
  precision int8, weight_only true;
- --precision int4 --block-size 16 --no-validate: 15 DequantizeLinear of
  int4 codes (with the check, the fallback returns MatMuls to float:
  migrate_int4_ort.py), equal to the reference's;
- --no-accuracy-check with validation: 15 int4 DequantizeLinear, the
  validation runs and its header names "int4 weight-only" and the
  criterion, not int8's tolerances (text and JSON);
- qnn --weight-only int8 --no-validate: 15 MatMulNBits of 8 bits,
  asymmetric, with the reference's codes, scales and zero points, and the
  attention of both layers fused into GroupQueryAttention (no MatMul left);
- a weight-only int8 validation's header says "int8 weight-only".
Exits 1 on a failure."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ortlib  # noqa: E402
import quantize_nbits_ort as qn  # noqa: E402
check = ortlib.check
INT4, INT8 = 22, 3


def migrate(opmig, src, dst, target, extra, fmt="json"):
    for p in (dst, dst + ".data"):
        if os.path.exists(p):
            os.remove(p)
    r = subprocess.run([opmig, "migrate", src, "--target", target, "-o", dst, "--format", fmt]
                       + qn.DIMS + extra, capture_output=True, text=True, timeout=120)
    rep = None
    if fmt == "json":
        try:
            rep = json.loads(r.stdout)
        except ValueError:
            pass
    return r, rep


def codes_of(t):
    """A DequantizeLinear's [K, N] codes as signed integers."""
    if t.data_type == INT8:
        return nh.to_array(t).astype(np.int64)
    raw = np.frombuffer(t.raw_data, np.uint8).astype(np.int64)
    v = np.stack([raw & 15, raw >> 4], axis=1).reshape(-1)[:int(np.prod(t.dims))]
    return np.where(v >= 8, v - 16, v).reshape(tuple(t.dims))


def check_dq(path, weights, bits, bs, what):
    """Every DequantizeLinear: signed codes of bits, no zero point, read as
    a MatMul's B, the reference's symmetric codes - 2^(bits - 1) and scales
    of one of the original weights; returns how many matched."""
    m = onnx.load(path)
    inits = {i.name: i for i in m.graph.initializer}
    users = {i: n for n in m.graph.node for i in n.input}
    dqs = [n for n in m.graph.node if n.op_type == "DequantizeLinear"]
    check(not [n for n in m.graph.node if n.op_type == "MatMulNBits"],
          "%s: no MatMulNBits left" % what)
    matched = 0
    for dq in dqs:
        at = {a.name: a.i for a in dq.attribute}
        x, s = inits.get(dq.input[0]), inits.get(dq.input[1])
        if not (len(dq.input) == 2 and x is not None and s is not None and
                x.data_type == (INT4 if bits == 4 else INT8) and at.get("axis") == 0 and
                at.get("block_size") == bs and users.get(dq.output[0]) is not None and
                users[dq.output[0]].op_type == "MatMul"):
            check(False, "%s: %s is not a blocked int%d DQ without zero point read by a MatMul"
                  % (what, dq.name, bits))
            continue
        codes, scale = codes_of(x), nh.to_array(s)
        k, n = codes.shape
        for wv in weights.values():
            if wv.shape != (k, n) or wv.dtype != np.float32:
                continue
            rc, rs, _ = qn.ref_quantize(wv, bits, bs, True)
            if np.array_equal(rs.T, scale) and \
                    np.array_equal((rc[:, :k] - (1 << (bits - 1))).T, codes):
                matched += 1
                break
    # unused initializers (MatMulNBits' leftovers) would be written too
    used = {i for n in m.graph.node for i in n.input}
    check(all(i.name in used for i in m.graph.initializer),
          "%s: every initializer is read by a node" % what)
    return len(dqs), matched


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    opmig, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    src = qn.tiny_decoder(work)
    weights = {i.name: nh.to_array(i) for i in onnx.load(src).graph.initializer}
    names = [i.name for i in onnx.load(src).graph.input]
    f = qn.feeds(np.random.default_rng(25).integers(0, qn.VOCAB, size=(1, qn.S)))
    data = os.path.join(work, "data")
    qn.write_samples(data, [f], names)

    # 1. weight-only int8 for tensorrt, nothing run
    d8 = os.path.join(work, "w8.onnx")
    r, rep = migrate(opmig, src, d8, "tensorrt", ["--opset", "21", "--weight-only", "int8",
                                                  "--no-validate"])
    notes = " | ".join(rep.get("notes", [])) if rep else ""
    check(r.returncode == 0 and rep and rep.get("precision") == "int8" and
          rep.get("weight_only") is True and rep.get("validation") is None,
          "--weight-only int8 --no-validate: exit %d, precision int8, weight_only, validation "
          "skipped (%s)" % (r.returncode, r.stderr.strip()[:200]))
    check("15 MatMuls quantized weight-only (int8 weights in blocks of 32 along K, symmetric)"
          in notes and "not checked (--no-validate: nothing run" in notes,
          "--weight-only int8 --no-validate: the notes say 15 quantized unchecked: %s"
          % notes[:400])
    if os.path.exists(d8):
        n, ok = check_dq(d8, weights, 8, 32, "int8 tensorrt")
        check(n == 15 and ok == 15, "int8 tensorrt: %d of %d DQs hold the numpy reference's "
              "codes - 128 and scales (15 wanted)" % (ok, n))

    # 2. int4 blocks of 16 with --no-validate: no fallback, 15 int4 DQs
    d4 = os.path.join(work, "t4.onnx")
    r, rep = migrate(opmig, src, d4, "tensorrt", ["--opset", "21", "--precision", "int4",
                                                  "--block-size", "16", "--no-validate"])
    check(r.returncode == 0 and os.path.exists(d4), "int4 --no-validate: exit %d" % r.returncode)
    if os.path.exists(d4):
        n, ok = check_dq(d4, weights, 4, 16, "int4 tensorrt --no-validate")
        check(n == 15 and ok == 15, "int4 --no-validate: %d of %d DQs hold the reference's "
              "codes - 8 and scales (15 wanted)" % (ok, n))

    # 3. --no-accuracy-check, validation on: the header says int4 weight-only
    dn = os.path.join(work, "t4n.onnx")
    r, _ = migrate(opmig, src, dn, "tensorrt", ["--opset", "21", "--precision", "int4",
                                                "--block-size", "16", "--no-accuracy-check",
                                                "--force", "--data", data], fmt="text")
    out = r.stdout
    check("not checked (--no-accuracy-check: nothing run, none returned to float)" in out,
          "--no-accuracy-check: the note says the check was skipped")
    check("\nvalidation (int4 weight-only, cosine>=0.99, 1 sample): " in out and
          "validation (int8" not in out,
          "--no-accuracy-check: validation ran, its header names int4 weight-only: %s" %
          [x for x in out.splitlines() if x.startswith("validation")])
    if os.path.exists(dn):
        n, ok = check_dq(dn, weights, 4, 16, "int4 --no-accuracy-check")
        check(n == 15 and ok == 15, "--no-accuracy-check: 15 int4 DQs (%d, %d match)" % (n, ok))
    r, rep = migrate(opmig, src, dn, "tensorrt", ["--opset", "21", "--precision", "int4",
                                                  "--no-accuracy-check", "--force", "--data",
                                                  data])
    v = rep.get("validation") if rep else None
    check(v and v.get("precision") == "int4 weight-only" and v.get("criterion") == "cosine>=0.99",
          "JSON validation names int4 weight-only and its criterion: %s" %
          (v and {k: v.get(k) for k in ("precision", "criterion")}))

    # 4. qnn keeps MatMulNBits of 8 bits
    dq = os.path.join(work, "q8.onnx")
    r, rep = migrate(opmig, src, dq, "qnn", ["--weight-only", "int8", "--no-validate",
                                             "--force"])
    check(os.path.exists(dq), "qnn --weight-only int8: written (exit %d)" % r.returncode)
    if os.path.exists(dq):
        # qnn declares GroupQueryAttention: fuse-gqa takes the attention's
        # own MatMuls (Q K^T and the weights times V), so none is left
        qn.check_weights(dq, src, 8, 32, False, "qnn --weight-only int8", n_left=0)
        gqa = [n for n in onnx.load(dq).graph.node if n.op_type == "GroupQueryAttention"]
        check(len(gqa) == 2, "qnn --weight-only int8: %d GroupQueryAttention (2 layers)" %
              len(gqa))

    # 5. an int8 weight-only validation's header
    r, _ = migrate(opmig, src, d8, "tensorrt", ["--opset", "21", "--weight-only", "int8",
                                                "--force", "--data", data], fmt="text")
    check("\nvalidation (int8 weight-only, cosine>=0.99, 1 sample): " in r.stdout,
          "--weight-only int8: the validation header says int8 weight-only: %s" %
          [x for x in r.stdout.splitlines() if x.startswith("validation")])
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
