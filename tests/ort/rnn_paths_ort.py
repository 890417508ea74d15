"""rnn_paths_ort.py OPMIG WORKDIR: the LSTM and GRU kernels' paths that
tests/ort/rnn_kernels_ort.py leaves out (runtime/kernels/k_rnn.c): the
input projection on W packed for pgemm, per run (W a graph input) or kept
from a node's second run with R's (float16 nodes then read neither W nor
R again); the products of up to twelve rows straight to the micro-kernels
(hidden sizes past 256 and not a multiple of 32: a panel group and a
narrow last panel; an R past the L2 read from its last panel back every
other step, on a CPU whose L2 is 2 MiB or less); a GRU without
linear_before_reset (H R^T of z and r only); the default cells in
AVX-512 passes reading their gates in the projection; one to three rows
on the own cells and four on oneDNN's at one thread; sequence_lens (reverse
and bidirectional), initial states or none, clip.  (onnxruntime takes no
layout 1.)  Each seeded case runs in opmig at one thread (one run, and
three: the last one's outputs) and at two (three runs) and in
onnxruntime-node; every output must agree within 2e-5 (float32) or 3e-3
(float16 outputs, rounded by both).  Prints one line per check; exits 1
on a failure."""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402

RNG = np.random.default_rng(2611)
GATES = {"LSTM": 4, "GRU": 3}
# op, direction, seq, batch, input, hidden, attributes, options: f16 (the
# node's X, W, R, B and states float16), lens (sequence_lens), states
# (initial_h and initial_c), w_in (W a graph input, not a constant)
CASES = [
    ("LSTM", "forward", 9, 1, 24, 40, {}, {}),
    ("LSTM", "bidirectional", 11, 3, 20, 270, {}, {"lens": [11, 7, 1]}),
    ("LSTM", "reverse", 7, 5, 16, 100, {}, {"lens": [7, 3, 5, 1, 6], "states": True}),
    ("LSTM", "forward", 8, 2, 150, 96, {}, {"states": True}),
    ("LSTM", "forward", 5, 2, 8, 32, {}, {"w_in": True}),
    ("LSTM", "reverse", 6, 1, 12, 48, {"clip": 0.7}, {"lens": [4]}),
    ("LSTM", "bidirectional", 6, 1, 160, 128, {}, {"f16": True, "states": True}),
    ("GRU", "forward", 8, 2, 12, 72, {"linear_before_reset": 0}, {"lens": [8, 5], "states": True}),
    ("GRU", "bidirectional", 6, 3, 20, 264, {"linear_before_reset": 0}, {}),
    ("GRU", "bidirectional", 6, 1, 14, 48, {"linear_before_reset": 1}, {}),
    ("GRU", "forward", 7, 3, 40, 80, {"linear_before_reset": 0, "clip": 3.0}, {"f16": True}),
    # four rows and more at one thread, from the second run: oneDNN's
    ("LSTM", "forward", 6, 4, 16, 64, {}, {"states": True}),
    ("GRU", "reverse", 6, 4, 16, 64, {"linear_before_reset": 1}, {}),
    # R past three quarters of a 2 MiB L2: read back and forth (r_past_l2)
    ("LSTM", "bidirectional", 5, 2, 12, 330, {}, {"lens": [5, 3]}),
    ("GRU", "forward", 5, 1, 10, 400, {"linear_before_reset": 1}, {"states": True}),
]


def build(path, op, direction, seq, batch, inp, hid, attrs, opt):
    """The case's model at path (and, for a float16 one, its float32 twin
    of the same values at path + ".f32.onnx", which onnxruntime's CPU
    LSTM and GRU take); its feeds."""
    f16 = opt.get("f16")
    m, feeds = make(op, direction, seq, batch, inp, hid, attrs, opt,
                    np.float16 if f16 else np.float32)
    onnx.save(m, path)
    if f16:
        onnx.save(ortlib.f32_twin(m), path + ".f32.onnx")
    return feeds


def make(op, direction, seq, batch, inp, hid, attrs, opt, ft):
    nd, g = 2 if direction == "bidirectional" else 1, GATES[op]
    et = TensorProto.FLOAT16 if ft == np.float16 else TensorProto.FLOAT
    layout = attrs.get("layout", 0)   # (kept for a reference that takes it)

    def w(name, *shape, scale=0.15):
        t = numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(ft))
        t.name = name
        return t

    inits = [w("R", nd, g * hid, hid, scale=0.9 / np.sqrt(hid)), w("B", nd, 2 * g * hid)]
    ins, feeds, graph_in = ["X", "W", "R", "B", "", ""], {}, []
    sx = (batch, seq, inp) if layout else (seq, batch, inp)
    feeds["X"] = RNG.standard_normal(sx).astype(ft)
    graph_in.append(helper.make_tensor_value_info("X", et, list(sx)))
    wt = w("W", nd, g * hid, inp, scale=0.6 / np.sqrt(inp))
    if opt.get("w_in"):
        feeds["W"] = numpy_helper.to_array(wt)
        graph_in.append(helper.make_tensor_value_info("W", et, [nd, g * hid, inp]))
    else:
        inits.append(wt)
    if "lens" in opt:
        inits.append(numpy_helper.from_array(np.array(opt["lens"], np.int32), "L"))
        ins[4] = "L"
    sh = (batch, nd, hid) if layout else (nd, batch, hid)
    if opt.get("states"):
        inits.append(w("H0", *sh, scale=0.5))
        ins[5] = "H0"
        if op == "LSTM":
            inits.append(w("C0", *sh, scale=0.5))
            ins.append("C0")
    while not ins[-1]:
        ins.pop()
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    sy = (batch, seq, nd, hid) if layout else (seq, nd, batch, hid)
    node = helper.make_node(op, ins, outs, hidden_size=hid, direction=direction, **attrs)
    graph = helper.make_graph(
        [node], "rnn", graph_in,
        [helper.make_tensor_value_info("Y", et, list(sy))] +
        [helper.make_tensor_value_info(o, et, list(sh)) for o in outs[1:]], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 7
    onnx.checker.check_model(m, full_check=True)
    return m, feeds


def run(opmig, model, feeds, work, od, threads, runs, n_out):
    os.makedirs(od, exist_ok=True)
    args = []
    for name, v in feeds.items():
        f = os.path.join(work, "%s_%s.npy" % (os.path.basename(model), name))
        np.save(f, v)
        args.append("%s=%s" % (name, f))
    r = subprocess.run([opmig, "run", model] + args + ["-O", od, "--out-format", "npy",
                                                       "--threads", str(threads),
                                                       "--repeat", str(runs)],
                       capture_output=True, text=True)
    if r.returncode:
        return "exit %d: %s" % (r.returncode, r.stderr.strip()[-300:])
    return [np.load(os.path.join(od, "output_%d.npy" % k)) for k in range(n_out)]


def main():
    got = ortlib.start(sys.argv)
    if not got:
        return 77
    opmig, work = got
    jobs, ort_jobs = [], []
    for i, c in enumerate(CASES):
        path = os.path.join(work, "p%d.onnx" % i)
        jobs.append((path, build(path, *c)))
        ort_jobs.append((path + ".f32.onnx", {k: v.astype(np.float32) for k, v in
                                              jobs[-1][1].items()}) if c[7].get("f16") else
                        jobs[-1])
    refs = ortlib.run_many(ort_jobs, os.path.join(work, "ort"))
    for i, (c, ref) in enumerate(zip(CASES, refs)):
        what = "%s %s seq %d batch %d input %d hidden %d %s %s" % (
            c[0], c[1], c[2], c[3], c[4], c[5], c[6] or "", c[7] or "")
        if isinstance(ref, str):
            ortlib.check(False, "%s: onnxruntime: %s" % (what, ref))
            continue
        tol = 3e-3 if c[7].get("f16") else 2e-5
        if c[7].get("f16"):   # onnxruntime's float32 result rounded, as a float16 graph's
            ref = [r.astype(np.float16) for r in ref]
        for t, runs in ((1, 1), (1, 3), (2, 3)):
            ours = run(opmig, jobs[i][0], jobs[i][1], work,
                       os.path.join(work, "o%d_%d_%d" % (i, t, runs)), t, runs, len(ref))
            if isinstance(ours, str):
                ortlib.check(False, "%s, %d thread(s), %d run(s): %s" % (what, t, runs, ours))
                continue
            worst = max(ortlib.max_diff(a.astype(np.float64), b.astype(np.float64))
                        for a, b in zip(ours, ref))
            ortlib.check(worst <= tol, "%s, %d thread(s), %d run(s): largest difference %.2e" %
                         (what, t, runs, worst))
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
