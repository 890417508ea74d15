#!/usr/bin/env python3
"""gen_deep.py OUT [LAYERS] [CHANNELS] [SIZE]: a deep convolutional chain
for the layer-by-layer validation benchmark: LAYERS times (3x3 Conv with
bias, Relu), CHANNELS channels at SIZE x SIZE, batch 1, seeded random
weights.  Activations dominate its memory (weights are small), which is
what --layerwise must not multiply."""
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP, helper, numpy_helper


def main():
    out = sys.argv[1]
    layers = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    ch = int(sys.argv[3]) if len(sys.argv) > 3 else 64
    size = int(sys.argv[4]) if len(sys.argv) > 4 else 128
    rng = np.random.RandomState(50)
    nodes, inits, x = [], [], "x"
    for i in range(layers):
        w = (rng.standard_normal((ch, ch, 3, 3)) / np.sqrt(ch * 9)).astype(np.float32)
        b = (rng.standard_normal(ch) * 0.01).astype(np.float32)
        inits += [numpy_helper.from_array(w, "w%d" % i), numpy_helper.from_array(b, "b%d" % i)]
        nodes.append(helper.make_node("Conv", [x, "w%d" % i, "b%d" % i], ["c%d" % i],
                                      "conv%d" % i, kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", ["c%d" % i], ["r%d" % i], "relu%d" % i))
        x = "r%d" % i
    g = helper.make_graph(nodes, "deep", [helper.make_tensor_value_info("x", TP.FLOAT, [1, ch, size, size])],
                          [helper.make_tensor_value_info(x, TP.FLOAT, [1, ch, size, size])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="opmig-bench")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, out)


if __name__ == "__main__":
    main()
