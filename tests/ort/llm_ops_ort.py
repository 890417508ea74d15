"""llm_ops_ort.py OPMIG WORKDIR [SEED]: the com.microsoft operators of
onnxruntime-genai style decoders against onnxruntime-node and a float64
numpy reference, on seeded random cases: MatMulNBits (bits 2, 4 and 8,
block sizes 16 to 128, K not a multiple of the block, zero points absent,
packed uint8 or float, bias, batch dims in A, float32 and float16),
SkipSimplifiedLayerNormalization (bias or not, the input_skip_bias_sum,
mean and inv_std_var outputs, float32 and float16) and
SkipLayerNormalization, the mean-subtracting form (beta and bias or not,
a 2-D skip, hidden sizes 13 to 96, inputs offset by 3 so that the mean
matters, epsilon 1e-12 to 0.3; its mean, inv_std_var and
input_skip_bias_sum outputs, which onnxruntime's CPU kernel fills;
float32 and float16).  Each case's model runs in
`opmig run` and, all in one process, in onnxruntime; the outputs must agree
within a bound derived from the dtype and the case's magnitudes (see
bound() and skip_norm_case()); g_idx and bits 3 must
be refused with exit 3 and a one-line message.  Prints one line per
failing case and a summary; exits 1 on a failure, 77 when onnxruntime-node
is unavailable.  The case builders (matmul_nbits_case, skip_norm_case,
pack_bits) are importable by other scripts.  Run by
tests/cli/t0950-llm-ops.sh with /usr/bin/python3."""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402

MS = "com.microsoft"
TP = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16,
      np.dtype(np.uint8): TensorProto.UINT8}
EPS = {np.dtype(np.float32): 2.0 ** -23, np.dtype(np.float16): 2.0 ** -10}


class Case:
    """A model, its feeds, and per output the float64 reference and the
    float64 magnitude the error bound scales with."""

    def __init__(self, name, model, feeds, refs, mags, terms, dtype):
        self.name, self.model, self.feeds = name, model, feeds
        self.refs, self.mags, self.terms, self.dtype = refs, mags, terms, dtype


def make_model(nodes, inputs, outputs, inits, opset=17):
    g = helper.make_graph(nodes, "llm", inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset),
                                            helper.make_opsetid(MS, 1)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def pack_bits(q, bits):
    """Integers q [..., L] (L * bits a multiple of 8) packed low bits first
    into uint8 [..., L * bits / 8]."""
    per = 8 // bits
    q = q.astype(np.uint16).reshape(q.shape[:-1] + (q.shape[-1] // per, per))
    out = np.zeros(q.shape[:-1], np.uint16)
    for j in range(per):
        out |= q[..., j] << (j * bits)
    return out.astype(np.uint8)


def matmul_nbits_case(rng, bits, bs, k, n, a_shape, zp="none", bias=False,
                      dtype=np.float32, name="mnb", opset=17):
    """MatMulNBits with B, scales, zero points and bias as initializers
    (as exported models have them), A fed; zp: "none", "packed" or
    "float"; opset: the default domain's import.  The block padding past K holds random codes, which no
    result may read."""
    kb = (k + bs - 1) // bs
    q = rng.integers(0, 1 << bits, (n, kb * bs))
    scales = rng.uniform(0.005, 0.05, (n, kb)).astype(dtype)
    a = rng.standard_normal(tuple(a_shape) + (k,)).astype(dtype)
    inits = [numpy_helper.from_array(pack_bits(q, bits).reshape(n, kb, bs * bits // 8), "B"),
             numpy_helper.from_array(scales, "scales")]
    ins = ["A", "B", "scales"]
    z = np.full((n, kb), float(1 << (bits - 1)))
    if zp == "packed":
        zq = rng.integers(0, 1 << bits, (n, kb))
        per = 8 // bits
        zrow = (kb * bits + 7) // 8
        zpad = np.zeros((n, zrow * per), np.int64)
        zpad[:, :kb] = zq
        inits.append(numpy_helper.from_array(pack_bits(zpad, bits), "zp"))
        z = zq.astype(np.float64)
        ins.append("zp")
    elif zp == "float":
        zf = rng.uniform(0, (1 << bits) - 1, (n, kb)).astype(dtype)
        inits.append(numpy_helper.from_array(zf, "zp"))
        z = zf.astype(np.float64)
        ins.append("zp")
    w = (q[:, :k] - np.repeat(z, bs, axis=1)[:, :k]) * \
        np.repeat(scales.astype(np.float64), bs, axis=1)[:, :k]
    ref = a.astype(np.float64) @ w.T
    mag = np.abs(a.astype(np.float64)) @ np.abs(w).T
    if bias:
        b = rng.standard_normal(n).astype(dtype)
        inits.append(numpy_helper.from_array(b, "bias"))
        while len(ins) < 5:
            ins.append("")
        ins.append("bias")
        ref = ref + b.astype(np.float64)
        mag = mag + np.abs(b.astype(np.float64))
    node = helper.make_node("MatMulNBits", ins, ["Y"], domain=MS, K=k, N=n, bits=bits,
                            block_size=bs)
    t = TP[np.dtype(dtype)]
    m = make_model([node], [helper.make_tensor_value_info("A", t, list(a.shape))],
                   [helper.make_tensor_value_info("Y", t, list(ref.shape))], inits, opset)
    return Case(name, m, {"A": a}, [ref], [mag], [k + 2], np.dtype(dtype))


def skip_norm_case(rng, shape, skip_shape=None, bias=False, outs=(0,), eps=1e-6,
                   dtype=np.float32, name="ssln", mean=False, beta=False, offset=0.0):
    """SkipSimplifiedLayerNormalization, or with mean SkipLayerNormalization
    (the mean-subtracting form; beta: its beta input), with gamma (beta,
    bias) initializers, input and skip fed; outs: the outputs the graph
    asks for (0 output, 1 mean, 2 inv_std_var, 3 input_skip_bias_sum;
    onnxruntime's CPU kernel fills all four of either op, the simplified
    one's mean with zeros); offset: added to the input, a mean the
    mean-subtracting form must take out (onnxruntime's variance, E[s^2] -
    mean^2 in float32, then loses digits: the bound below says how
    many)."""
    h = shape[-1]
    x = (rng.standard_normal(shape) + offset).astype(dtype)
    skip = rng.standard_normal(skip_shape or shape).astype(dtype)
    gamma = rng.uniform(0.5, 1.5, h).astype(dtype)
    inits = [numpy_helper.from_array(gamma, "gamma")]
    ins = ["x", "skip", "gamma"]
    g64 = np.abs(gamma.astype(np.float64))
    b64 = np.zeros(h)
    if mean:
        ins.append("beta" if beta else "")
        if beta:
            bt = rng.standard_normal(h).astype(dtype)
            inits.append(numpy_helper.from_array(bt, "beta"))
            b64 = bt.astype(np.float64)
    s = x.astype(np.float64) + skip.astype(np.float64)
    # magnitudes the roundings scale with: the addends of s, through y
    ssum = np.abs(x.astype(np.float64)) + np.abs(skip.astype(np.float64))
    if bias:
        b = rng.standard_normal(h).astype(dtype)
        inits.append(numpy_helper.from_array(b, "bias"))
        ins.append("bias")
        s = s + b.astype(np.float64)
        ssum = ssum + np.abs(b.astype(np.float64))
    mu = np.mean(s, axis=-1, keepdims=True) if mean else np.zeros(s.shape[:-1] + (1,))
    d = s - mu
    var = np.mean(d * d, axis=-1, keepdims=True)
    inv = 1.0 / np.sqrt(var + eps)
    full = {0: d * inv * gamma.astype(np.float64) + b64, 1: mu, 2: inv, 3: s}
    if mean:
        # the mean sums h addends of size |s|; the variance, as E[s^2] -
        # mean^2, h squares of size s^2 and the mean's square: its error
        # relative to var + eps (and half of it in inv) is that magnitude
        # over var + eps; y = (s - mean) inv gamma + beta carries the
        # errors of s - mean and of inv
        m_mu = np.mean(ssum, axis=-1, keepdims=True)
        m_var = np.mean(ssum * ssum, axis=-1, keepdims=True) + 2 * m_mu * m_mu
        m_inv = inv * (1 + m_var / (var + eps))
        m_y = g64 * (np.abs(d) * m_inv + inv * (ssum + m_mu)) + np.abs(b64)
        mags = {0: m_y, 1: m_mu, 2: m_inv, 3: ssum}
    else:
        # the mean output is a placeholder of the RMS form: zeros
        mags = {0: ssum * inv * g64, 1: inv, 2: inv, 3: ssum}
    names = {0: "y", 1: "mean", 2: "inv", 3: "sum"}
    onames = [names[i] if i in outs else "" for i in range(max(outs) + 1)]
    op = "SkipLayerNormalization" if mean else "SkipSimplifiedLayerNormalization"
    node = helper.make_node(op, ins, onames, domain=MS, epsilon=eps)
    t = TP[np.dtype(dtype)]
    ovi = []
    for i in outs:
        ot = TensorProto.FLOAT if i in (1, 2) else t
        ovi.append(helper.make_tensor_value_info(names[i], ot, list(full[i].shape)))
    m = make_model([node], [helper.make_tensor_value_info("x", t, list(x.shape)),
                            helper.make_tensor_value_info("skip", t, list(skip.shape))],
                   ovi, inits)
    refs = [full[i] for i in outs]
    # the error of each output grows with the terms of its sums: the mean
    # square's h for y and inv (and the mean), the two additions for the sum
    terms = [h + 8 if i in (0, 1, 2) else 2 for i in outs]
    return Case(name, m, {"x": x, "skip": skip}, refs, [mags[i] for i in outs], terms,
                np.dtype(dtype))


def bound(case, j, out):
    """|opmig - onnxruntime| allowed for output j: both sum `terms` float32
    products, each within terms * eps32 * mag of the exact value (mag: the
    sum of the terms' magnitudes), so they differ by at most twice that;
    a float16 output adds one rounding of each (2^-11 relative), plus the
    smallest subnormal."""
    b = 2 * case.terms[j] * 2.0 ** -23 * case.mags[j]
    if out.dtype == np.float16:
        b = b + 2.0 ** -10 * np.abs(case.refs[j]) + 2.0 ** -24
    return b


def run_opmig(opmig, case, d):
    os.makedirs(d, exist_ok=True)
    mf = os.path.join(d, "m.onnx")
    onnx.save(case.model, mf)
    args = []
    for name, a in case.feeds.items():
        np.save(os.path.join(d, name + ".npy"), a)
        args.append("%s=%s" % (name, os.path.join(d, name + ".npy")))
    r = subprocess.run([opmig, "run", mf] + args + ["-O", d, "--out-format", "npy"],
                       capture_output=True, text=True)
    if r.returncode:
        return r.stderr.strip()
    return [np.load(os.path.join(d, "output_%d.npy" % j)) for j in range(len(case.refs))]


def compare(case, got, ort):
    """None, or why the outputs disagree."""
    if isinstance(got, str):
        return "opmig: " + got
    if isinstance(ort, str):
        return "onnxruntime: " + ort
    for j, (g, o) in enumerate(zip(got, ort)):
        if g.shape != o.shape or g.dtype != o.dtype:
            return "output %d: %s %s, onnxruntime %s %s" % (j, g.dtype, g.shape, o.dtype,
                                                            o.shape)
        err = np.abs(g.astype(np.float64) - o.astype(np.float64))
        b = bound(case, j, o)
        if not np.all(err <= b):
            i = int(np.argmax(err - b))
            return "output %d: element %d: %r vs onnxruntime %r (bound %.3g)" % (
                j, i, g.reshape(-1)[i], o.reshape(-1)[i], np.broadcast_to(b, err.shape).reshape(-1)[i])
        # and both near the float64 reference (one more rounding of it)
        err = np.abs(g.astype(np.float64) - case.refs[j])
        if not np.all(err <= b):
            i = int(np.argmax(err - b))
            return "output %d: element %d: %r vs float64 %r" % (j, i, g.reshape(-1)[i],
                                                               case.refs[j].reshape(-1)[i])
    return None


def cases(rng):
    out = []
    shapes = [[1], [3], [2, 3], [1, 5], [2, 1, 4]]
    k = 0
    for bits in (4, 8, 2):
        for bs in (16, 32, 64, 128):
            for zp in ("none", "packed", "float"):
                if zp == "float" and bits != 4:
                    continue    # onnxruntime's CPU kernel: float zero points 4-bit only
                if bits == 2 and bs > 32:
                    continue
                kd = int(rng.integers(1, 5)) * bs + int(rng.integers(0, bs)) * (k % 3 != 0)
                n = int(rng.integers(1, 40))
                dt = np.float16 if k % 4 == 3 else np.float32
                out.append(matmul_nbits_case(rng, bits, bs, kd, n, shapes[k % len(shapes)],
                                             zp, bias=k % 2 == 1, dtype=dt,
                                             name="MatMulNBits bits=%d block=%d K=%d N=%d zp=%s %s"
                                             % (bits, bs, kd, n, zp, np.dtype(dt))))
                k += 1
    # a bigger one: the row slices and threads of the kernel
    out.append(matmul_nbits_case(rng, 4, 32, 1000, 700, [2, 7], "packed", bias=True,
                                 name="MatMulNBits bits=4 block=32 K=1000 N=700 big"))
    for shape, sk, bias, outs, dt in (
            ([2, 3, 64], None, False, (0,), np.float32),
            ([2, 3, 64], None, True, (0, 3), np.float32),
            ([4, 96], None, True, (0, 1, 2, 3), np.float32),
            ([2, 5, 48], [5, 48], True, (0, 3), np.float32),
            ([2, 3, 64], None, True, (0, 3), np.float16),
            ([3, 128], None, False, (0, 2, 3), np.float16),
            ([1, 1, 256], None, True, (0,), np.float16)):
        out.append(skip_norm_case(rng, shape, sk, bias, outs, dtype=dt,
                                  name="SkipSimplifiedLayerNormalization %s skip=%s bias=%d "
                                  "outputs=%s %s" % (shape, sk, bias, outs, np.dtype(dt))))
    # the mean-subtracting form: hidden sizes off the vector widths, an
    # input offset of 3 (a mean to take out), epsilon large enough to
    # matter in one
    for shape, sk, beta, bias, outs, eps, dt in (
            ([2, 3, 64], None, True, True, (0, 1, 2, 3), 1e-12, np.float32),
            ([4, 37], None, False, True, (0, 3), 1e-5, np.float32),
            ([2, 5, 70], [5, 70], True, False, (0, 1, 2), 0.3, np.float32),
            ([3, 13], None, False, False, (0,), 1e-5, np.float32),
            ([2, 3, 96], None, True, True, (0, 1, 2, 3), 1e-5, np.float16),
            ([1, 2, 40], [2, 40], False, True, (0, 3), 1e-3, np.float16)):
        out.append(skip_norm_case(rng, shape, sk, bias, outs, eps, dt, mean=True, beta=beta,
                                  offset=3.0,
                                  name="SkipLayerNormalization %s skip=%s beta=%d bias=%d "
                                  "eps=%g outputs=%s %s" % (shape, sk, beta, bias, eps, outs,
                                                            np.dtype(dt))))
    return out


def refusals(rng, work, opmig):
    """Models opmig must refuse with exit 3 and one line naming the node
    and the reason: g_idx present (deprecated, not supported), bits 3
    (onnxruntime takes 2, 4 and 8 only).  Returns the failures."""
    fails = []
    c = matmul_nbits_case(rng, 4, 32, 64, 8, [2], "packed", name="g_idx")
    c.model.graph.node[0].input.append("g_idx")
    c.model.graph.initializer.append(numpy_helper.from_array(np.arange(64, dtype=np.int32) // 32,
                                                             "g_idx"))
    d = matmul_nbits_case(rng, 4, 32, 64, 8, [2], name="bits 3")
    for a in d.model.graph.node[0].attribute:
        if a.name == "bits":
            a.i = 3
    for case, want in ((c, "g_idx (input 4) is not supported"), (d, "bits must be 2, 4 or 8")):
        dd = os.path.join(work, "r_" + case.name.replace(" ", "_"))
        os.makedirs(dd, exist_ok=True)
        mf = os.path.join(dd, "m.onnx")
        onnx.save(case.model, mf)
        np.save(os.path.join(dd, "A.npy"), case.feeds["A"])
        r = subprocess.run([opmig, "run", mf, "A=" + os.path.join(dd, "A.npy"), "-O", dd],
                           capture_output=True, text=True)
        err = r.stderr.strip()
        if r.returncode != 3 or "\n" in err or "node #0 (MatMulNBits): " + want not in err:
            fails.append("FAIL refusal %s: exit %d: %s" % (case.name, r.returncode, err))
    return fails


def main():
    opmig, work = sys.argv[1], sys.argv[2]
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 25
    why = ortlib.available()
    if why:
        print("skipped: %s" % why)
        return 77
    os.makedirs(work, exist_ok=True)
    cs = cases(np.random.default_rng(seed))
    files = []
    for i, c in enumerate(cs):
        f = os.path.join(work, "c%d.onnx" % i)
        onnx.save(c.model, f)
        files.append((f, c.feeds))
    ort = ortlib.run_many(files, os.path.join(work, "ort"))
    fails = 0
    for i, c in enumerate(cs):
        msg = compare(c, run_opmig(opmig, c, os.path.join(work, "o%d" % i)), ort[i])
        if msg:
            fails += 1
            print("FAIL %s: %s" % (c.name, msg))
    refused = refusals(np.random.default_rng(seed + 1), work, opmig)
    for f in refused:
        print(f)
    fails += len(refused)
    print("%d cases, %d failures (onnxruntime-node %s)" % (len(cs) + 2, fails, ortlib.version()))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
