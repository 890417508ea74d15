"""rnn_kernels_ort.py OPMIG WORKDIR: the interpreter's LSTM, GRU and RNN
kernels (runtime/kernels/k_rnn.c) at sizes where its faster paths run:
hidden sizes of 128 and more (the recurrent product's columns split over
two threads), batches of one and of several (R packed once a run for
pgemm, and kept packed for the session from its second run), the default cells' sigmoid and tanh sixteen lanes at a time and,
beside them, peepholes, input_forget, clip, other activations and
linear_before_reset 0 (the other paths); from a node's second run on, the
default cells without clip on oneDNN's RNN primitives (k_rnn_dnnl.c).  Each
seeded case runs in opmig at one thread (one run, and three: the last one's
outputs) and at two (three runs) and in onnxruntime-node; every output must
agree
within 2e-5 (the cells' activations are approximations in both).  Prints
one line per check; exits 1 on a failure."""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402

RNG = np.random.default_rng(2061)
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
CASES = [
    # op, direction, seq, batch, input, hidden, extra attributes, peepholes
    ("LSTM", "forward", 12, 1, 40, 256, {}, False),
    ("LSTM", "bidirectional", 9, 1, 24, 160, {"clip": 1.5}, False),
    ("LSTM", "reverse", 10, 3, 32, 192, {}, False),
    ("LSTM", "forward", 8, 1, 16, 128, {"input_forget": 1}, True),
    ("LSTM", "forward", 7, 2, 16, 128, {"activations": ["Sigmoid", "Relu", "Tanh"]}, False),
    ("GRU", "forward", 12, 1, 40, 256, {"linear_before_reset": 1}, False),
    ("GRU", "bidirectional", 9, 2, 24, 200, {"linear_before_reset": 0}, False),
    ("GRU", "reverse", 10, 1, 32, 192, {"linear_before_reset": 0, "clip": 2.0}, False),
    ("RNN", "forward", 12, 1, 40, 300, {}, False),
    ("RNN", "bidirectional", 6, 4, 16, 256, {"activations": ["Relu", "Tanh"]}, False),
]


def build(path, op, direction, seq, batch, inp, hid, attrs, peep):
    nd, g = 2 if direction == "bidirectional" else 1, GATES[op]

    def w(*shape, scale=0.15):
        return numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(np.float32))

    inits = [w(nd, g * hid, inp), w(nd, g * hid, hid, scale=0.08), w(nd, 2 * g * hid)]
    names = ["W", "R", "B"]
    for t, n in zip(inits, names):
        t.name = n
    ins = ["X", "W", "R", "B", "", "H0"]
    h0 = w(nd, batch, hid, scale=0.5)
    h0.name = "H0"
    inits.append(h0)
    if op == "LSTM":
        c0 = w(nd, batch, hid, scale=0.5)
        c0.name = "C0"
        inits.append(c0)
        ins.append("C0")
        if peep:
            p = w(nd, 3 * hid, scale=0.3)
            p.name = "P"
            inits.append(p)
            ins.append("P")
    outs = ["Y", "Y_h"]
    node = helper.make_node(op, ins, outs, hidden_size=hid, direction=direction, **attrs)
    graph = helper.make_graph(
        [node], "rnn", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [seq, batch, inp])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [seq, nd, batch, hid]),
         helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, [nd, batch, hid])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 7
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)
    return RNG.standard_normal((seq, batch, inp)).astype(np.float32)


def run(opmig, model, xf, od, threads, runs):
    os.makedirs(od, exist_ok=True)
    r = subprocess.run([opmig, "run", model, xf, "-O", od, "--out-format", "npy",
                        "--threads", str(threads), "--repeat", str(runs)],
                       capture_output=True, text=True)
    if r.returncode:
        return "exit %d: %s" % (r.returncode, r.stderr.strip()[-300:])
    return [np.load(os.path.join(od, "output_%d.npy" % k)) for k in range(2)]


def main():
    got = ortlib.start(sys.argv)
    if not got:
        return 77
    opmig, work = got
    jobs = []
    for i, c in enumerate(CASES):
        path = os.path.join(work, "r%d.onnx" % i)
        x = build(path, *c)
        np.save(os.path.join(work, "x%d.npy" % i), x)
        jobs.append((path, {"X": x}))
    refs = ortlib.run_many(jobs, os.path.join(work, "ort"))
    for i, (c, ref) in enumerate(zip(CASES, refs)):
        what = "%s %s seq %d batch %d hidden %d %s" % (c[0], c[1], c[2], c[3], c[5], c[6] or "")
        if isinstance(ref, str):
            ortlib.check(False, "%s: onnxruntime: %s" % (what, ref))
            continue
        for t, runs in ((1, 1), (1, 3), (2, 3)):
            ours = run(opmig, jobs[i][0], os.path.join(work, "x%d.npy" % i),
                       os.path.join(work, "o%d_%d_%d" % (i, t, runs)), t, runs)
            if isinstance(ours, str):
                ortlib.check(False, "%s, %d thread(s), %d run(s): %s" % (what, t, runs, ours))
                continue
            worst = max(ortlib.max_diff(a, b) for a, b in zip(ours, ref))
            ortlib.check(worst <= 2e-5, "%s, %d thread(s), %d run(s): largest difference %.2e" %
                         (what, t, runs, worst))
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
