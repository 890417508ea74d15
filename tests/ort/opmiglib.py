"""opmiglib.py: what the seeded random graph tests share beside ortlib
(/usr/bin/python3 with onnx and numpy): a built graph saved as a checked
model, `opmig run` of it with its outputs and --stats text, outputs
compared with a reference relative to their magnitude; a seeded
com.microsoft MatMulNBits model with its dequantized weights.

    import opmiglib
    opmiglib.save(nodes, inits, inputs, outputs, path)
    outs, stats = opmiglib.run(opmig, model, x_npy, outdir, env)
    # outs: the outputs' serialized TensorProtos (bytes, for byte-equality),
    # or a str (why the run failed); stats: its stdout
    worst = opmiglib.rel_diff(outs, refs)
    w, bias = opmiglib.matmul_nbits(path, bits, k, n, block, zp, bias, seed)
"""
import os
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


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
