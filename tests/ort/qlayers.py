"""qlayers.py: where opmig and onnxruntime part on a QDQ model, layer by
layer (tests/ort/quantize_layers_ort.py, bench/quant_layers.py).

instrument() makes every QuantizeLinear's float input and quantized output
a graph output.  first_divergence() walks the QuantizeLinear nodes in node
order and describes the first whose outputs differ between two runs: all
earlier quantized values agree, so that layer's inputs are the same in
both runtimes and only the float arithmetic between DequantizeLinear and
QuantizeLinear can part them.  Summation order shows as differing float
inputs that sit within float32's rounding of a boundary n + 1/2; a
semantic difference shows as equal float inputs rounded differently, or
as values far from any boundary."""
import os
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper, mapping, numpy_helper


def instrument(src, dst):
    """Write src with every QuantizeLinear's input and output appended to
    the graph's outputs to dst; returns ([(node, float input, quantized
    output, scale)], output names in graph order)."""
    m = onnx.load(src)
    g = m.graph
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    have = {o.name for o in g.output}
    qs = []
    for n in g.node:
        if n.op_type != "QuantizeLinear" or n.input[1] not in inits:
            continue
        zt = inits[n.input[2]].dtype if len(n.input) > 2 and n.input[2] in inits else np.uint8
        qs.append((n.name or n.output[0], n.input[0], n.output[0],
                   float(inits[n.input[1]].ravel()[0])))
        for name, et in ((n.input[0], TensorProto.FLOAT),
                         (n.output[0], mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(zt)])):
            if name not in have:
                g.output.append(helper.make_tensor_value_info(name, et, None))
                have.add(name)
    onnx.save(m, dst)
    return qs, [o.name for o in g.output]


def run_opmig(opmig, model, outs, inputs, outdir):
    """Run model (instrumented) in opmig at one thread on inputs (its run
    arguments: files, or ["--data", DIR]); returns {output name: ndarray}
    for the output names outs, in graph order."""
    subprocess.run([opmig, "run", model] + list(inputs) + ["-O", outdir, "--out-format", "npy",
                                                          "--threads", "1"],
                   check=True, stdout=subprocess.DEVNULL)
    return {o: np.load(os.path.join(outdir, "output_%d.npy" % i)) for i, o in enumerate(outs)}


def first_divergence(qs, a, b):
    """a, b: {output name: ndarray} of two runs of the instrumented model.
    None when every quantized value agrees, else a dict: index (in qs),
    node, differing (count), size, steps (largest difference), gap (largest
    distance of the two float inputs in steps over the differing
    elements), gap_all (over all elements), equal_inputs (differing
    elements whose float inputs are equal), boundary (largest distance of
    x/scale from n + 1/2 over the differing elements, both runs)."""
    for i, (name, xin, yout, s) in enumerate(qs):
        ya, yb = a[yout].astype(np.int64), b[yout].astype(np.int64)
        if np.array_equal(ya, yb):
            continue
        xa, xb = a[xin].astype(np.float64), b[xin].astype(np.float64)
        bad = ya != yb
        gap = np.abs(xa - xb) / s
        frac = [np.abs(v[bad] / s - np.floor(v[bad] / s) - 0.5) for v in (xa, xb)]
        return {"index": i, "node": name, "differing": int(bad.sum()), "size": int(bad.size),
                "steps": int(np.abs(ya - yb).max()), "gap": float(gap[bad].max()),
                "gap_all": float(gap.max()),
                "equal_inputs": int((xa[bad] == xb[bad]).sum()),
                "boundary": float(max(f.max() for f in frac))}
    return None


def layer_steps(qs, a, b):
    """Per QuantizeLinear (node order): (node, largest difference in
    steps, share of elements that differ) between runs a and b."""
    return [(name, int(np.abs(a[y].astype(np.int64) - b[y].astype(np.int64)).max()),
             float(np.mean(a[y] != b[y]))) for name, _, y, _ in qs]
