"""nbits_f16_lower_ort.py OPMIG WORKDIR: float16 com.microsoft MatMulNBits
(onnxruntime-genai's int4 exports of float16 models) lowered by
matmul-nbits on targets without com.microsoft MatMulNBits:
  ascend (opset 17, no DequantizeLinear, Cast of uint8): uint8 codes
      [K / block, block, N] through Cast, Sub of the zero points, Mul of
      the scales, Reshape and Slice (t1236 checks that form further);
  generic-npu (opset 17, no DequantizeLinear, no uint8 Cast): MatMul on
      float16 [K, N] weights dequantized while the model is written;
  openvino --opset 21: DequantizeLinear-21 of uint4 codes (uint8 for
      8 bits or, float16 4-bit codes of an odd N having no whole bytes per
      row, 4-bit codes widened to int8 code - zero point);
  tensorrt --opset 21 (no uint4): 4-bit codes as int4 (symmetric) or int8
      code - zero point, 8-bit ones as int8 when symmetric, else (no
      uint8 DequantizeLinear) dequantized float16 weights.
Seeded single-node models (bits 4 and 8, block sizes 16 to 128, K not a
multiple of the block, odd N, with and without zero points and a bias, A
[2, 3, K]): the written weights are checked against numpy ((code - zero
point) * scale in float32 rounded once to float16: the codes, scales and
zero points of a DequantizeLinear are dequantized by numpy the same way),
then onnxruntime-node runs the original and the migrated model on the same
float16 A: they must agree within 2^-9 of the largest |value| (float16
weights are rounded where MatMulNBits keeps float32: one float16 ulp in
some outputs), and the original must equal numpy's MatMulNBits.  opset 17
results pass onnx.checker full_check.  The tiny float16 genai decoder
migrated to ascend, openvino and generic-npu keeps no MatMulNBits and its
logits match the original's in onnxruntime-node within 2^-8 of their
largest |value|.  Exits 1 on a failure, 77 when onnxruntime-node is
absent."""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opmiglib  # noqa: E402
import ortlib  # noqa: E402
from decoder_common import check, dims, feeds_for, gen  # noqa: E402

TOL = 2.0 ** -9
# name, bits, K, N, block, zero points, bias
CASES = [("b4-16", 4, 40, 16, 16, True, False), ("b4-32-odd", 4, 100, 17, 32, True, True),
         ("b4-64-sym", 4, 150, 24, 64, False, False), ("b4-128", 4, 300, 9, 128, True, False),
         ("b8-16", 8, 72, 12, 16, True, True), ("b8-32-sym", 8, 45, 7, 32, False, False),
         ("b8-64", 8, 200, 10, 64, True, False), ("b8-128-sym", 8, 130, 16, 128, False, True)]
# target, opset option, the form expected per (bits, zero points, N odd)
TARGETS = [("ascend", [], lambda b, z, o: "cast"),
           ("generic-npu", [], lambda b, z, o: "float16"),
           ("openvino", ["--opset", "21"],
            lambda b, z, o: "uint8" if b == 8 else ("int8" if o else "uint4")),
           ("tensorrt", ["--opset", "21"],
            lambda b, z, o: ("cast" if z else "int8") if b == 8 else
            ("int8" if z or o else "int4"))]
DT = {T.FLOAT16: "float16", T.FLOAT: "float32", T.UINT8: "uint8", T.INT8: "int8", 21: "uint4", 22: "int4"}


def unpack4(t):
    """A 4-bit initializer's elements (low nibble first), signed for int4."""
    raw = np.frombuffer(t.raw_data, np.uint8)
    v = np.stack([raw & 15, raw >> 4], axis=-1).reshape(-1)[:int(np.prod(t.dims))]
    v = v.astype(np.int32)
    if t.data_type == 22:
        v = np.where(v >= 8, v - 16, v)
    return v.reshape(tuple(t.dims))


def arr(t):
    return unpack4(t) if t.data_type in (21, 22) else nh.to_array(t)


NP = {T.FLOAT: np.float32, T.FLOAT16: np.float16}


def weights_of(m, name, k, n, bs):
    """The written model's weight [k, n] (as its dtype) and its form: the
    float initializer's dtype, the codes' dtype of a DequantizeLinear
    (blocked along K, or per axis 1 with one block), or "cast" (uint8
    codes [K / block, block, N] or [K, N] through Cast, Sub, Mul, Reshape
    and Slice), evaluated by numpy: DequantizeLinear as (x - zero point) *
    scale in float32 rounded to the scale's dtype, the others in the
    dtype of their operands (numpy rounds float16 Sub and Mul once)."""
    inits = {t.name: t for t in m.graph.initializer}
    prod = {o: x for x in m.graph.node for o in x.output}
    mm = [x for x in m.graph.node if x.op_type == "MatMul"]
    if len(mm) != 1:
        return None, "no single MatMul"
    kinds = set()

    def attrs(x):
        return {a.name: h.get_attribute_value(a) for a in x.attribute}

    def ev(v):
        if v in inits:
            return arr(inits[v])
        x = prod.get(v)
        if x is None:
            raise ValueError("%s: no producer" % v)
        at = attrs(x)
        if x.op_type == "DequantizeLinear":
            c, s = inits[x.input[0]], inits[x.input[1]]
            kinds.add(DT.get(c.data_type, str(c.data_type)))
            q = arr(c).astype(np.float32)
            sc = nh.to_array(s)
            z = arr(inits[x.input[2]]).astype(np.float32) if len(x.input) > 2 and \
                x.input[2] else np.zeros(sc.shape, np.float32)
            if at.get("block_size"):
                if at.get("axis") != 0 or q.shape != (k, n) or at["block_size"] != bs:
                    raise ValueError("DequantizeLinear %s %s" % (list(q.shape), at))
                blk = np.arange(k) // bs
                return ((q - z[blk]) * sc.astype(np.float32)[blk]).astype(sc.dtype)
            if at.get("axis") != 1 or q.shape != (k, n) or sc.shape != (n,):
                raise ValueError("per-axis DequantizeLinear %s %s" % (list(q.shape), at))
            return ((q - z) * sc.astype(np.float32)).astype(sc.dtype)
        if x.op_type == "Cast":
            a = ev(x.input[0])
            kinds.add("cast" if a.dtype == np.uint8 else "cast of %s" % a.dtype)
            return a.astype(NP[at["to"]])
        if x.op_type in ("Sub", "Mul"):
            a, b = ev(x.input[0]), ev(x.input[1])
            if a.dtype != b.dtype:
                raise ValueError("%s of %s and %s" % (x.op_type, a.dtype, b.dtype))
            return a - b if x.op_type == "Sub" else a * b
        if x.op_type == "Reshape":
            return ev(x.input[0]).reshape(tuple(ev(x.input[1])))
        if x.op_type == "Slice":
            a = ev(x.input[0])
            st, en, ax = ev(x.input[1]), ev(x.input[2]), ev(x.input[3])
            idx = [slice(None)] * a.ndim
            for i, j in enumerate(ax):
                idx[j] = slice(int(st[i]), int(en[i]))
            return a[tuple(idx)]
        raise ValueError("MatMul's B through %s" % x.op_type)

    wn = mm[0].input[1]
    try:
        w = ev(wn)
    except (ValueError, KeyError) as e:
        return None, str(e)
    if wn in inits:
        kinds.add(DT.get(inits[wn].data_type, str(inits[wn].data_type)))
    return w, "/".join(sorted(kinds))


def form_ops(want, k, bs, zp, bias):
    """The ops the written model of a single MatMulNBits has for a form."""
    ops = ["MatMul"] + (["Add"] if bias else [])
    if want == "cast":
        # the codes' Cast, and the uint8 zero points' own
        ops += ["Cast", "Sub", "Mul"] + (["Cast"] if zp else []) + \
            (["Reshape"] if k > bs else []) + \
            (["Slice"] if k > bs and k % bs else [])
    elif want not in ("float16", "float32"):
        ops.append("DequantizeLinear")
    return sorted(ops)


def form_note(want, dt="float16"):
    """What the report says of a form."""
    if want in ("float16", "float32"):
        return "as a MatMul on %s weights dequantized" % want
    if want == "cast":
        return "cast to %s, minus the zero points, times the scales" % dt
    return "DequantizeLinear"


def migrate(opmig, src, dst, target, extra, force=False):
    r = subprocess.run([opmig, "migrate", src, "--target", target, "-o", dst, "--no-validate"] +
                       (["--force"] if force else []) + list(extra),
                       capture_output=True, text=True, timeout=120)
    return r


def main():
    args = ortlib.start(sys.argv)
    if not args:
        return 77
    opmig, work = args
    rng = np.random.default_rng(1235)
    jobs, cmp = [], []
    for i, (name, bits, k, n, bs, zp, bias) in enumerate(CASES):
        src = os.path.join(work, name + ".onnx")
        w, bv = opmiglib.matmul_nbits(src, bits, k, n, bs, zp, bias, i)
        a = rng.standard_normal((2, 3, k)).astype(np.float16)
        ref = a.astype(np.float32) @ w + (bv.astype(np.float32) if bias else 0)
        jobs.append((src, {"A": a}))
        orig = len(jobs) - 1
        cmp.append(("%s: MatMulNBits in onnxruntime against numpy" % name, orig, None,
                    ref.astype(np.float16)))
        for target, extra, form in TARGETS:
            what = "%s on %s" % (name, target)
            dst = os.path.join(work, "%s-%s.onnx" % (name, target))
            r = migrate(opmig, src, dst, target, extra)
            check(r.returncode == 0, "%s: opmig migrate exit %d %s" % (
                what, r.returncode, (r.stdout + r.stderr).strip()[-300:] if r.returncode else ""))
            if r.returncode:
                continue
            m = onnx.load(dst)
            ops = sorted(x.op_type for x in m.graph.node)
            want = form(bits, zp, n % 2 == 1)
            exp_ops = form_ops(want, k, bs, zp, bias)
            check(ops == exp_ops, "%s: %s (want %s)" % (what, ops, exp_ops))
            got, kind = weights_of(m, name, k, n, bs)
            check(kind == want, "%s: weights as %s (want %s)" % (what, kind, want))
            if got is not None:
                exact = w.astype(np.float16)
                bad = int(np.sum(got.astype(np.float16) != exact))
                check(got.shape == (k, n) and bad == 0,
                      "%s: the weights are numpy's (code - zero point) * scale rounded to "
                      "float16 (%d of %d differ)" % (what, bad, exact.size))
            note = form_note(want) if want in ("float16", "cast") else \
                "as DequantizeLinear-21 of %s codes" % want
            check(note in r.stdout, "%s: the report says the form: %s" % (what, note))
            if [x.version for x in m.opset_import if x.domain in ("", "ai.onnx")][0] <= 17:
                opmiglib.full_check(dst, what)
            jobs.append((dst, {"A": a}))
            cmp.append((what + ": against MatMulNBits in onnxruntime", len(jobs) - 1, orig,
                        None))
    # float32 data on coreml (no DequantizeLinear): the codes cast to
    # float32 and dequantized by Sub and Mul are MatMulNBits' own W exactly
    for i, (name, bits, k, n, bs, zp, bias) in enumerate(CASES[1::3]):
        what = "float32 %s on coreml" % name
        src = os.path.join(work, name + "-f32.onnx")
        dst = os.path.join(work, name + "-f32-coreml.onnx")
        w, bv = opmiglib.matmul_nbits(src, bits, k, n, bs, zp, bias, 100 + i, np.float32)
        r = migrate(opmig, src, dst, "coreml", [])
        check(r.returncode == 0, "%s: opmig migrate exit %d" % (what, r.returncode))
        if r.returncode:
            continue
        got, kind = weights_of(onnx.load(dst), name, k, n, bs)
        check(kind == "cast" and got is not None and got.shape == (k, n) and
              np.array_equal(got, w), "%s: uint8 codes cast to float32, minus the zero points, "
              "times the scales, equal numpy's (code - zero point) * scale (%s)" % (what, kind))
        a = rng.standard_normal((2, 3, k)).astype(np.float32)
        jobs += [(src, {"A": a}), (dst, {"A": a})]
        cmp.append((what + ": against MatMulNBits in onnxruntime", len(jobs) - 1, len(jobs) - 2,
                    None))
    # the float16 genai decoder
    B, S, P = 1, 5, 3
    dsrc = gen(os.path.join(work, "genai-f16.onnx"), "--form", "genai", "--dtype", "float16")
    feeds = feeds_for(B, S, P, 7, dt=np.float16, mask=True, position_ids=False)
    declared = {i.name for i in onnx.load(dsrc, load_external_data=False).graph.input}
    feeds = {k: v for k, v in feeds.items() if k in declared}
    jobs.append((dsrc, feeds))
    dorig = len(jobs) - 1
    dec = []
    for target in ("ascend", "openvino", "generic-npu"):
        what = "genai float16 decoder on %s" % target
        dst = os.path.join(work, "genai-f16-%s.onnx" % target)
        r = migrate(opmig, dsrc, dst, target, dims(B, S, P), force=True)
        check(r.returncode in (0, 1) and os.path.exists(dst),
              "%s: opmig migrate exit %d %s" % (what, r.returncode, r.stderr.strip()[-300:]))
        if not os.path.exists(dst):
            continue
        left = [x.name for x in onnx.load(dst).graph.node if x.op_type == "MatMulNBits"]
        blocked = [ln for ln in r.stdout.splitlines() if "(MatMulNBits)" in ln and "node '" in ln
                   and "matmul-nbits" not in ln]
        check(not left and not blocked, "%s: no MatMulNBits left or blocked (%s %s)" %
              (what, left[:2], blocked[:2]))
        # a target without int64 takes the ids and mask as int32
        types = {i.name: i.type.tensor_type.elem_type for i in onnx.load(dst).graph.input}
        mine = {k: v.astype(np.int32) if types.get(k) == T.INT32 else v for k, v in feeds.items()}
        jobs.append((dst, mine))
        dec.append((what, len(jobs) - 1))
    res = ortlib.run_many(jobs, os.path.join(work, "ort"), timeout=300)
    for what, j, o, ref in cmp:
        got = res[j]
        want = ref if ref is not None else res[o]
        if isinstance(got, str) or isinstance(want, str):
            check(False, "%s: onnxruntime: %s" % (what, got if isinstance(got, str) else want))
            continue
        g = np.asarray(got[0], np.float32) if isinstance(got, list) else got
        wv = np.asarray(want[0] if isinstance(want, list) else want, np.float32)
        tol = TOL * float(np.max(np.abs(wv)))
        err = float(np.max(np.abs(g - wv)))
        if got[0].dtype == np.float32:
            tol = 1e-5 * float(np.max(np.abs(wv)))
        check(g.shape == wv.shape and err <= tol,
              "%s: max |diff| %.3g, tol %.3g (%d of %d differ)" %
              (what, err, tol, int(np.sum(g != wv)), wv.size))
    want = res[dorig]
    for what, j in dec:
        got = res[j]
        if isinstance(got, str) or isinstance(want, str):
            check(False, "%s: onnxruntime: %s" % (what, got if isinstance(got, str) else want))
            continue
        lw, lg = np.asarray(want[0], np.float32), np.asarray(got[0], np.float32)
        tol = 2.0 ** -8 * float(np.max(np.abs(lw)))
        err = float(np.max(np.abs(lw - lg)))
        check(lg.shape == lw.shape and np.all(np.isfinite(lw)) and err <= tol,
              "%s: logits equal the original's in onnxruntime (max |diff| %.3g, tol %.3g)" %
              (what, err, tol))
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
