"""opmiglib.py: what the seeded random graph tests share beside ortlib
(/usr/bin/python3 with onnx and numpy): a built graph saved as a checked
model, `opmig run` of it with its outputs and --stats text, outputs
compared with a reference relative to their magnitude; a seeded
com.microsoft MatMulNBits model with its dequantized weights; a migrated
model's outputs in onnxruntime and in `opmig run --exact` checked against
the original's in onnxruntime (ortlib's tally).

    import opmiglib
    opmiglib.save(nodes, inits, inputs, outputs, path)
    outs, stats = opmiglib.run(opmig, model, x_npy, outdir, env)
    # outs: the outputs' serialized TensorProtos (bytes, for byte-equality),
    # or a str (why the run failed); stats: its stdout
    worst = opmiglib.rel_diff(outs, refs)
    w, bias = opmiglib.matmul_nbits(path, bits, k, n, block, zp, bias, seed)
    exact = opmiglib.run_exact(opmig, model, feeds)
    opmiglib.full_check(path, what)
    for k, name, want, got in opmiglib.ort_pairs(ortlib.run_many(jobs, d), names):
        worst = max(worst, opmiglib.check_close(what, want, got, diff, tol))
"""
import os
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import ortlib


# opmig's two ways of running convolutions the tests compare: as it
# chooses, and oneDNN for every convolution it can make
WAYS = (("as chosen", {}), ("oneDNN everywhere", {"OPMIG_DNNL_ALL": "1"}))


def save(nodes, inits, inputs, outputs, path, opset=17, name=None):
    """The graph as an opset-`opset` model (ir_version 8), checked with
    onnx.checker's full_check, written to path."""
    graph = helper.make_graph(nodes, name or os.path.basename(path)[:-5], inputs, outputs,
                              inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)


def run(opmig, model, x, od, env=None, args=("--threads", "2")):
    """`opmig run MODEL X -O OD --stats ARGS`: (outputs, stdout), each
    output the bytes of its output_K.pb; or (message, "") when it failed."""
    os.makedirs(od, exist_ok=True)
    r = subprocess.run([opmig, "run", model, x, "-O", od, "--stats"] + list(args),
                       capture_output=True, text=True, env=env)
    if r.returncode:
        return "exit %d: %s" % (r.returncode, r.stderr.strip()[-300:]), ""
    outs = []
    while os.path.exists(os.path.join(od, "output_%d.pb" % len(outs))):
        with open(os.path.join(od, "output_%d.pb" % len(outs)), "rb") as f:
            outs.append(f.read())
    return outs, r.stdout


def array(o):
    """An output of run() (serialized TensorProto bytes) or an array, as
    float64."""
    if isinstance(o, (bytes, bytearray)):
        t = onnx.TensorProto()
        t.ParseFromString(o)
        o = numpy_helper.to_array(t)
    return np.asarray(o, np.float64)


def rel_diff(outs, refs):
    """Largest |out - ref| over the outputs, each relative to its
    reference's largest magnitude (at least 1); inf when the counts or a
    shape differ."""
    if len(outs) != len(refs):
        return float("inf")
    worst = 0.0
    for o, r in zip(outs, refs):
        a, b = array(o), array(r)
        if a.shape != b.shape:
            return float("inf")
        if b.size:
            worst = max(worst, float(np.max(np.abs(a - b))) / max(1.0, float(np.max(np.abs(b)))))
    return worst


def matmul_nbits(path, bits, k, n, bs, zp, bias, seed, dt=np.float16, opset=17):
    """A seeded single com.microsoft MatMulNBits node (bits 4 or 8, K k,
    N n, block bs, packed zero points where zp, a bias where bias; A
    [2, 3, k] and scales of dtype dt) as an opset-`opset` model (ir_version
    8, or 10 from opset 21) written to path; returns W [k, n] float32
    ((code - zero point) * scale in float32, as MatMulNBits computes it)
    and the bias (or None)."""
    rng = np.random.default_rng(seed)
    kb = (k + bs - 1) // bs
    per = 8 // bits
    blob, zrow = bs // per, (kb * bits + 7) // 8
    b = rng.integers(0, 256, (n, kb, blob)).astype(np.uint8)
    sc = (rng.random(n * kb) * 0.05 + 0.01).astype(dt)
    z = rng.integers(0, 256, (n * zrow,)).astype(np.uint8)
    bv = rng.standard_normal(n).astype(dt)
    inits = [numpy_helper.from_array(b, "B"), numpy_helper.from_array(sc, "S")]
    ins = ["A", "B", "S"]
    if zp:
        inits.append(numpy_helper.from_array(z, "Z"))
        ins.append("Z")
    if bias:
        ins += [""] * (5 - len(ins)) + ["bias"]
        inits.append(numpy_helper.from_array(bv, "bias"))
    node = helper.make_node("MatMulNBits", ins, ["Y"], domain="com.microsoft", K=k, N=n,
                            bits=bits, block_size=bs)
    et = TensorProto.FLOAT16 if dt == np.float16 else TensorProto.FLOAT
    g = helper.make_graph([node], "nb", [helper.make_tensor_value_info("A", et, [2, 3, k])],
                          [helper.make_tensor_value_info("Y", et, [2, 3, n])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset),
                                            helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 10 if opset >= 21 else 8
    onnx.save(m, path)
    if bits == 4:
        codes = np.stack([b & 15, b >> 4], axis=-1).reshape(n, kb * bs)
        zz = np.stack([z & 15, z >> 4], axis=-1).reshape(n, zrow * 2)[:, :kb]
    else:
        codes, zz = b.reshape(n, kb * bs), z.reshape(n, zrow)[:, :kb]
    codes = codes[:, :k].astype(np.float32)
    zz = zz.astype(np.float32) if zp else np.full((n, kb), 2 ** (bits - 1), np.float32)
    blk = np.arange(k) // bs
    w = ((codes - zz[:, blk]) * sc.astype(np.float32).reshape(n, kb)[:, blk]).T
    return w.astype(np.float32), (bv if bias else None)


def run_exact(opmig, model, feeds):
    """The model's outputs (arrays in graph order) in opmig's interpreter
    with each op rounded to its type (--exact: float16 at each op, as a
    float16 device computes; onnxruntime's CPU provider runs float16 ops
    without a float16 kernel in float32), or a message; the feeds and the
    outputs as .npy files in MODEL-run/."""
    d = model[:-5] + "-run"
    os.makedirs(d, exist_ok=True)
    ins = []
    for name, a in feeds.items():
        np.save(os.path.join(d, name + ".npy"), a)
        ins.append("%s=%s" % (name, os.path.join(d, name + ".npy")))
    r = subprocess.run([opmig, "run", model] + ins + ["--exact", "-O", d, "--out-format",
                                                       "npy"], capture_output=True, text=True,
                       timeout=60)
    if r.returncode:
        return "exit %d %s" % (r.returncode, r.stderr.strip()[-300:])
    n = len(onnx.load(model, load_external_data=False).graph.output)
    return [np.load(os.path.join(d, "output_%d.npy" % i)) for i in range(n)]


def full_check(path, what):
    """Check (ortlib's tally) that the model at path passes onnx.checker's
    full_check; WHAT names it."""
    try:
        onnx.checker.check_model(path, full_check=True)
        ortlib.check(True, "%s: onnx.checker full_check" % what)
    except Exception as e:      # ValidationError, or shape inference's
        ortlib.check(False, "%s: onnx.checker: %s" % (what, str(e).splitlines()[0]))


def ort_pairs(res, names):
    """(k, name, the original's outputs, the migrated model's) for each
    name whose pair of ortlib.run_many jobs (2k the original, 2k + 1 the
    migrated model) onnxruntime ran; a failed check for each it did not."""
    for k, what in enumerate(names):
        want, got = res[2 * k], res[2 * k + 1]
        if isinstance(want, str) or isinstance(got, str):
            ortlib.check(False, "%s: onnxruntime: %s" % (what, want if isinstance(want, str)
                                                         else got))
            continue
        yield k, what, want, got


def check_close(what, want, got, diff, tol):
    """Check that got (a run's outputs, or its message) holds as many
    outputs as want, all finite, each diff(want's, got's) within tol; the
    check says WHAT and the outputs beyond tol.  Returns the largest diff
    (0 when none)."""
    if isinstance(got, str):
        ortlib.check(False, "%s: %s" % (what, got))
        return 0.0
    d = [diff(a, b) for a, b in zip(want, got)]
    fin = all(np.all(np.isfinite(np.asarray(a, np.float64))) for a in got)
    bad = ["output %d: %.3g" % (j, x) for j, x in enumerate(d) if not x <= tol]
    ortlib.check(len(want) == len(got) and fin and not bad, "%s %s" % (what, bad))
    return max(d, default=0.0)
