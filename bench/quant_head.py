#!/usr/bin/python3
"""quant_head.py OPMIG MODELDIR: a copy of a generated CNN
(MODELDIR/model.onnx, from gen_quant.py) with its classifier centred on
the data, MODELDIR/centred.onnx.  With random weights the pooled features
of every image share a large mean, and the final Gemm maps that mean to
the same winning class for every input, so top-1 agreement is trivially
1.  A trained classifier is balanced over its data; this one is made so:
the Gemm's bias becomes -W mu, mu the mean pooled feature over 32
calibration samples (computed by `opmig run` with the feature as an extra
output), and the weights are scaled so that the logits' deviation across
samples is 3.  The prediction then rests on how the pooled features of
one image differ from the mean, a small part of their values: a harder
case for quantization than a trained network.  MODELDIR/centred.txt says
how many classes the samples win."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper


def main():
    opmig, d = sys.argv[1], sys.argv[2]
    path = os.path.join(d, "model.onnx")
    m = onnx.load(path)
    gemm = [n for n in m.graph.node if n.op_type == "Gemm"][-1]
    feat = gemm.input[0]
    inits = {t.name: t for t in m.graph.initializer}
    w = numpy_helper.to_array(inits[gemm.input[1]]).astype(np.float64)
    probe = onnx.ModelProto()
    probe.CopyFrom(m)
    probe.graph.output.append(helper.make_empty_tensor_value_info(feat))
    calib = os.path.join(d, "calib")
    sets = sorted(os.listdir(calib), key=lambda s: int(s.rsplit("_", 1)[1]))[:32]
    feats = []
    with tempfile.TemporaryDirectory() as tmp:
        pp = os.path.join(tmp, "probe.onnx")
        onnx.save(probe, pp)
        for k, s in enumerate(sets):
            od = os.path.join(tmp, "o%d" % k)
            subprocess.run([opmig, "run", pp, "--data", os.path.join(calib, s), "-O", od,
                            "--out-format", "npy"], check=True, stdout=subprocess.DEVNULL)
            outs = sorted(os.listdir(od))
            feats.append(np.load(os.path.join(od, outs[1])).reshape(-1))
    f = np.array(feats, dtype=np.float64)
    mu = f.mean(axis=0)
    dev = (f - mu) @ w.T
    w *= 3.0 / dev.std()
    b = -(w @ mu)
    inits[gemm.input[1]].CopyFrom(numpy_helper.from_array(w.astype(np.float32), gemm.input[1]))
    inits[gemm.input[2]].CopyFrom(numpy_helper.from_array(b.astype(np.float32), gemm.input[2]))
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(d, "centred.onnx"))
    with open(os.path.join(d, "centred.txt"), "w") as fh:
        fh.write("%d samples, %d classes won\n" % (len(sets), len(set((f @ w.T + b).argmax(1)))))


if __name__ == "__main__":
    main()
