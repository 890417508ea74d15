#!/usr/bin/python3
"""gen_scan_model.py OUT.onnx [NODES]: write the `opmig scan` benchmark
model, deterministically: a chain of NODES (default 100,000) nodes over a
float[1,8,8,8] activation, in units of ten ops that keep the shape (Conv
3x3 pads 1 with one shared weight, Relu, Add and Mul by constants, Sigmoid,
Erf, Softmax, Transpose of H and W, LeakyRelu, MaxPool 3x3 pads 1), so every
target sees a mix of supported, constrained and unsupported ops.  Weights
are tiny: the model measures the graph work, not I/O.
Needs onnx and numpy: run it with /usr/bin/python3.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
    shape = [1, 8, 8, 8]
    inits = [numpy_helper.from_array(np.full([8, 8, 3, 3], 0.01, np.float32), "w"),
             numpy_helper.from_array(np.full([1], 0.5, np.float32), "k")]
    nodes = []
    cur = "x"
    for i in range(n):
        kind = i % 10
        nxt = "v%d" % i
        name = "n%d" % i
        if kind == 0:
            nd = helper.make_node("Conv", [cur, "w"], [nxt], name=name, pads=[1, 1, 1, 1])
        elif kind == 1:
            nd = helper.make_node("Relu", [cur], [nxt], name=name)
        elif kind == 2:
            nd = helper.make_node("Add", [cur, "k"], [nxt], name=name)
        elif kind == 3:
            nd = helper.make_node("Mul", [cur, "k"], [nxt], name=name)
        elif kind == 4:
            nd = helper.make_node("Sigmoid", [cur], [nxt], name=name)
        elif kind == 5:
            nd = helper.make_node("Erf", [cur], [nxt], name=name)
        elif kind == 6:
            nd = helper.make_node("Softmax", [cur], [nxt], name=name, axis=1)
        elif kind == 7:
            nd = helper.make_node("Transpose", [cur], [nxt], name=name, perm=[0, 1, 3, 2])
        elif kind == 8:
            nd = helper.make_node("LeakyRelu", [cur], [nxt], name=name)
        else:
            nd = helper.make_node("MaxPool", [cur], [nxt], name=name, kernel_shape=[3, 3],
                                  pads=[1, 1, 1, 1])
        nodes.append(nd)
        cur = nxt
    g = helper.make_graph(nodes, "scan_bench",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info(cur, TensorProto.FLOAT, shape)],
                          initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="opmig-bench", producer_version="1")
    m.ir_version = 8
    onnx.save(m, out)


if __name__ == "__main__":
    main()
