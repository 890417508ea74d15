"""opmiglib.py: what the seeded random graph tests share beside ortlib
(/usr/bin/python3 with onnx and numpy): a built graph saved as a checked
model, `opmig run` of it with its outputs and --stats text, outputs
compared with a reference relative to their magnitude.

    import opmiglib
    opmiglib.save(nodes, inits, inputs, outputs, path)
    outs, stats = opmiglib.run(opmig, model, x_npy, outdir, env)
    # outs: the outputs' serialized TensorProtos (bytes, for byte-equality),
    # or a str (why the run failed); stats: its stdout
    worst = opmiglib.rel_diff(outs, refs)
"""
import os
import subprocess

import numpy as np
import onnx
from onnx import helper, numpy_helper


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
