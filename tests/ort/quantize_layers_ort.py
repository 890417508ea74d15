"""quantize_layers_ort.py OPMIG WORKDIR: a whole quantized network, layer
by layer, against onnxruntime-node (graph as written).  A residual CNN
(stem, three residual blocks, pooling, classifier) is quantized by `opmig
quantize` (QDQ, minmax); every QuantizeLinear's float input and output
become graph outputs (tests/ort/qlayers.py) and both runtimes run eight
seeded samples.  Per sample the first layer whose quantized values differ
must be a rounding-boundary case of float summation order: its differing
elements' float inputs differ (never equal inputs rounded apart), sit
within 1e-3 steps of n + 1/2, and lie within 1e-3 steps of each other.
Anything else (a wrong scale, zero point, rounding or saturation, an op
computed differently) parts the runtimes far from a boundary or on equal
inputs.  Prints one line per sample; exits 1 on a failure, 77 when
onnxruntime-node is unavailable.  Run by tests/cli/t1185-quantize.sh."""
import os
import subprocess
import sys

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402
import qlayers  # noqa: E402
from quantize_ort import Net  # noqa: E402

SHAPE = (1, 3, 32, 32)
SAMPLES = 8
LIMIT = 1e-3


def resnet():
    n = Net()
    x = n.op("Relu", [n.conv("x", 3, 16, 3)])
    for _ in range(3):
        y = n.op("Relu", [n.conv(x, 16, 16, 3)])
        x = n.op("Relu", [n.op("Add", [n.conv(y, 16, 16, 3), x])])
    x = n.op("Flatten", [n.op("GlobalAveragePool", [x])])
    w = n.const((np.random.default_rng(7).standard_normal((16, 10)) * 0.3).astype(np.float32))
    return n.model([n.op("Gemm", [x, w])], in_shape=SHAPE)


def main():
    opmig, work = sys.argv[1], sys.argv[2]
    why = ortlib.available()
    if why:
        print("skipped: %s" % why)
        return 77
    os.makedirs(work, exist_ok=True)
    src, dst, inst = (os.path.join(work, f) for f in ("net.onnx", "net.q.onnx", "inst.onnx"))
    onnx.save(resnet(), src)
    subprocess.run([opmig, "quantize", src, "-o", dst, "--samples", "8", "--threads", "1",
                    "--no-fallback", "--force"], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    qs, outs = qlayers.instrument(dst, inst)
    if len(qs) < 10:
        print("FAIL only %d QuantizeLinear nodes in the quantized network" % len(qs))
        return 1
    rng = np.random.default_rng(20261205)
    feeds, mine = [], []
    for k in range(SAMPLES):
        x = rng.uniform(-1, 1, SHAPE).astype(np.float32)
        f = os.path.join(work, "x%d.npy" % k)
        np.save(f, x)
        feeds.append({"x": x})
        od = os.path.join(work, "out%d" % k)
        mine.append(qlayers.run_opmig(opmig, inst, outs, [f], od))
    theirs = ortlib.run_many([(inst, f) for f in feeds], os.path.join(work, "ort"))
    failures = 0
    for k, t in enumerate(theirs):
        if isinstance(t, str):
            print("FAIL sample %d: onnxruntime: %s" % (k, t))
            failures += 1
            continue
        f = qlayers.first_divergence(qs, mine[k], dict(zip(outs, t)))
        if f is None:
            print("ok sample %d: all %d quantized layers equal" % (k, len(qs)))
            continue
        line = ("sample %d: first difference at layer %d of %d (%s): %d elements, %d step, "
                "float inputs %.2g steps apart, %d equal, %.2g steps from n+1/2" %
                (k, f["index"] + 1, len(qs), f["node"], f["differing"], f["steps"], f["gap"],
                 f["equal_inputs"], f["boundary"]))
        ok = f["equal_inputs"] == 0 and f["boundary"] < LIMIT and f["gap"] < LIMIT
        print(("ok " if ok else "FAIL ") + line)
        failures += not ok
    print("%d samples, %d failures" % (SAMPLES, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
