"""shared_weights_ort.py OPMIG WORKDIR: weights a kernel derives from an
initializer (LSTM packs, oneDNN's reordered LSTM and MatMul weights, a
MatMul's packed B, float16 constants widened) made once for every node
of the session that reads the same initializer (runtime/shared.c): an
unrolled decoder whose one-step LSTMs read two weight sets of the same
shapes, one step mixing them (W of one, R of the other) and one with its
own bias, the next step's input by a MatMul of one of two projections;
beside it a chain of MatMuls of which three read one B and one another.
Batch 1 (the own cells, a packed B of two rows) and batch 4 (oneDNN's
LSTM at one thread, oneDNN's matmul of 16 rows), in float32 and in
float16.  Each runs in opmig at one thread (two runs and three: the
nodes after the first take its weights in the second) and at two,
against onnxruntime-node (float16 models: their float32 twins, rounded):
within 2e-5 (float32) or 3e-3 (float16); and opmig's --stats must show
the weights taken by other nodes at least as often as the decoder's
steps of one set allow.  Prints one line per check; exits 1 on a
failure."""
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402

RNG = np.random.default_rng(1255)
# per step: its W, R, B and the projection to the next step's input
STEPS = [("a", "a", "a", "a"), ("a", "a", "a", "a"), ("a", "a", "a", "a"),
         ("b", "b", "b", "b"), ("a", "a", "a", "a"), ("b", "b", "b", "a"),
         ("a", "b", "a", "a"), ("a", "a", "c", "b")]
MM_SETS = ["a", "a", "b", "a"]
# name, float16, batch, input, hidden, MatMul rows, MatMul width
CASES = [("b1", False, 1, 96, 128, 2, 768), ("b4", False, 4, 32, 64, 16, 320),
         ("b1_f16", True, 1, 96, 128, 2, 768), ("b4_f16", True, 4, 32, 64, 16, 320)]


def make(f16, batch, inp, hid, rows, width):
    """The model and its feeds."""
    ft = np.float16 if f16 else np.float32
    et = TensorProto.FLOAT16 if f16 else TensorProto.FLOAT
    inits, nodes = [], []

    def w(name, *shape, scale):
        inits.append(numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(ft),
                                             name))

    for s in "ab":
        w("W" + s, 1, 4 * hid, inp, scale=0.6 / np.sqrt(inp))
        w("R" + s, 1, 4 * hid, hid, scale=0.9 / np.sqrt(hid))
        w("P" + s, hid, inp, scale=1.0 / np.sqrt(hid))
        w("M" + s, width, width, scale=1.0 / np.sqrt(width))
    for s in "abc":
        w("B" + s, 1, 8 * hid, scale=0.2)
    w("H0", 1, batch, hid, scale=0.5)
    w("C0", 1, batch, hid, scale=0.5)
    inits.append(numpy_helper.from_array(np.array([batch, hid], np.int64), "flat"))
    inits.append(numpy_helper.from_array(np.array([1, batch, inp], np.int64), "xshape"))
    x, h, c, hs = "X", "H0", "C0", []
    for t, (ws, rs, bs, ps) in enumerate(STEPS):
        y, h2, c2 = "y%d" % t, "h%d" % t, "c%d" % t
        nodes.append(helper.make_node("LSTM", [x, "W" + ws, "R" + rs, "B" + bs, "", h, c],
                                      [y, h2, c2], hidden_size=hid))
        nodes.append(helper.make_node("Reshape", [h2, "flat"], ["f%d" % t]))
        nodes.append(helper.make_node("MatMul", ["f%d" % t, "P" + ps], ["p%d" % t]))
        nodes.append(helper.make_node("Reshape", ["p%d" % t, "xshape"], ["x%d" % t]))
        x, h, c = "x%d" % t, h2, c2
        hs.append(h2)
    nodes.append(helper.make_node("Concat", hs, ["H"], axis=0))
    z = "Q"
    for i, s in enumerate(MM_SETS):
        nodes.append(helper.make_node("MatMul", [z, "M" + s], ["z%d" % i]))
        nodes.append(helper.make_node("Tanh", ["z%d" % i], ["t%d" % i]))
        z = "t%d" % i
    graph = helper.make_graph(
        nodes, "shared", [helper.make_tensor_value_info("X", et, [1, batch, inp]),
                          helper.make_tensor_value_info("Q", et, [rows, width])],
        [helper.make_tensor_value_info("H", et, [len(STEPS), batch, hid]),
         helper.make_tensor_value_info(z, et, [rows, width])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    m.ir_version = 7
    onnx.checker.check_model(m, full_check=True)
    feeds = {"X": RNG.standard_normal((1, batch, inp)).astype(ft),
             "Q": RNG.standard_normal((rows, width)).astype(ft)}
    return m, feeds


def run(opmig, model, feeds, od, threads, runs, n_out):
    """opmig's outputs of the last of `runs` runs and the --stats count of
    weights taken from another node, or an error string."""
    os.makedirs(od, exist_ok=True)
    args = []
    for name, v in feeds.items():
        f = os.path.join(od, "%s.npy" % name)
        np.save(f, v)
        args.append("%s=%s" % (name, f))
    r = subprocess.run([opmig, "run", model] + args +
                       ["-O", od, "--out-format", "npy", "--threads", str(threads),
                        "--repeat", str(runs), "--stats"], capture_output=True, text=True)
    if r.returncode:
        return "exit %d: %s" % (r.returncode, r.stderr.strip()[-300:])
    got = re.search(r"^derived weights shared: (\d+) bytes, taken (\d+) times$", r.stdout, re.M)
    if not got:
        return "no 'derived weights shared' line in --stats"
    return [np.load(os.path.join(od, "output_%d.npy" % k)) for k in range(n_out)], \
        int(got.group(2))


def main():
    got = ortlib.start(sys.argv)
    if not got:
        return 77
    opmig, work = got
    jobs, ort_jobs = [], []
    for name, f16, batch, inp, hid, rows, width in CASES:
        m, feeds = make(f16, batch, inp, hid, rows, width)
        path = os.path.join(work, name + ".onnx")
        onnx.save(m, path)
        jobs.append((path, feeds))
        if f16:
            onnx.save(ortlib.f32_twin(m), path + ".f32.onnx")
            ort_jobs.append((path + ".f32.onnx",
                             {k: v.astype(np.float32) for k, v in feeds.items()}))
        else:
            ort_jobs.append((path, feeds))
    refs = ortlib.run_many(ort_jobs, os.path.join(work, "ort"))
    # the decoder's takes: the second to fifth steps of set a (the last
    # step's own bias changes no pack on the own cells) or the second to
    # fourth (oneDNN's LSTM holds the bias too), set b's second step, and
    # two MatMuls of three on one B
    for (name, f16, batch, *_), (path, feeds), ref in zip(CASES, jobs, refs):
        if isinstance(ref, str):
            ortlib.check(False, "%s: onnxruntime: %s" % (name, ref))
            continue
        tol = 3e-3 if f16 else 2e-5
        if f16:
            ref = [r.astype(np.float16) for r in ref]
        least = (3 if batch >= 4 else 4) + 1 + 2
        # the second run: the first whose nodes take (a node that checks
        # what it took declines it on its next run)
        for t, runs in ((1, 2), (1, 3), (2, 3)):
            ours = run(opmig, path, feeds, os.path.join(work, "o_%s_%d_%d" % (name, t, runs)), t,
                       runs, len(ref))
            what = "%s, %d thread(s), %d runs" % (name, t, runs)
            if isinstance(ours, str):
                ortlib.check(False, "%s: %s" % (what, ours))
                continue
            outs, taken = ours
            worst = max(ortlib.max_diff(a.astype(np.float64), b.astype(np.float64))
                        for a, b in zip(outs, ref))
            ortlib.check(worst <= tol, "%s: largest difference %.2e" % (what, worst))
            if (t, runs) == (1, 3):
                ortlib.check(taken >= least, "%s: weights taken from another node %d times "
                             "(at least %d)" % (name, taken, least))
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
