#!/usr/bin/python3
"""quant_layers.py OPMIG QDQ_MODEL DATA_DIR...: where opmig and
onnxruntime-node (graph as written, one thread) first part on a QDQ
model, layer by layer (tests/ort/qlayers.py says how).  Each DATA_DIR
holds input_0.pb.  Per sample: the first QuantizeLinear whose outputs
differ, how many elements, how far apart the two float values it rounds
are (in steps) and how far from the rounding boundary n + 1/2 they sit.
Then per layer over all samples the largest difference in steps and the
share of elements that differ: how one flip propagates.  See
bench/README.md, "Quantization (issue 23)"."""
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "ort"))
import ortlib  # noqa: E402
import qlayers  # noqa: E402


def main():
    opmig, model, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
    why = ortlib.available()
    if why:
        print("quant_layers.py: onnxruntime-node unavailable (%s)" % why)
        return 2
    tmp = tempfile.mkdtemp(prefix="qlayers")
    inst = os.path.join(tmp, "inst.onnx")
    qs, outs = qlayers.instrument(model, inst)
    iname = onnx.load(model, load_external_data=False).graph.input[0].name
    feeds, mine = [], []
    for k, d in enumerate(dirs):
        t = onnx.TensorProto()
        with open(os.path.join(d, "input_0.pb"), "rb") as fh:
            t.ParseFromString(fh.read())
        feeds.append({iname: numpy_helper.to_array(t)})
        od = os.path.join(tmp, "opmig%d" % k)
        mine.append(qlayers.run_opmig(opmig, inst, outs, ["--data", d], od))
    theirs = ortlib.run_many([(inst, f) for f in feeds], os.path.join(tmp, "ort"))
    for r in theirs:
        if isinstance(r, str):
            print("quant_layers.py: onnxruntime: %s" % r)
            return 2
    theirs = [dict(zip(outs, r)) for r in theirs]
    print("%d quantized layers, %d samples" % (len(qs), len(dirs)))
    print("first divergence per sample:")
    for k in range(len(dirs)):
        f = qlayers.first_divergence(qs, mine[k], theirs[k])
        if f is None:
            print("  sample %d: every quantized value equal" % k)
            continue
        print("  sample %d: layer %d of %d (%s): %d of %d elements, %d step; float inputs "
              "%.2g steps apart there (%.2g over the layer, %d equal), %.2g steps from "
              "n+1/2" % (k, f["index"] + 1, len(qs), f["node"], f["differing"], f["size"],
                         f["steps"], f["gap"], f["gap_all"], f["equal_inputs"],
                         f["boundary"]))
    print("per layer over all samples (node order): layer, max steps, share differing")
    per = [qlayers.layer_steps(qs, m, t) for m, t in zip(mine, theirs)]
    for i, (name, _, _, _) in enumerate(qs):
        print("  %3d %-40s %3d %8.4f%%" % (i + 1, name[:40], max(p[i][1] for p in per),
                                         100.0 * np.mean([p[i][2] for p in per])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
