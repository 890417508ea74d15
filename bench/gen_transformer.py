#!/usr/bin/python3
"""gen_transformer.py OUTDIR N_NODES: write a transformer-like model of about
N_NODES nodes to OUTDIR/transformer-N_NODES.onnx, deterministically (issue 3,
inference scaling benchmark).

Graph (opset 17, IR version 8): input "hidden" float[batch, seq, HIDDEN] with
symbolic dims "batch" and "seq", then BLOCKS encoder blocks, then a final
LayerNormalization giving output "out" float[batch, seq, HIDDEN].  One block
has 40 nodes:

  LayerNormalization                                              1
  Q, K, V: MatMul + Add bias                                      6
  Shape -> Gather(0), Gather(1) -> Unsqueeze x2 -> Concat
      [batch, seq, HEADS, HEAD_DIM] (shape arithmetic)            6
  Reshape Q, K, V to heads; Transpose Q, V (0,2,1,3),
      K (0,2,3,1)                                                 6
  MatMul QK^T, Div sqrt(HEAD_DIM), Softmax, MatMul V              4
  Transpose back (0,2,1,3), Concat [batch, seq, HIDDEN], Reshape  3
  MatMul + Add output projection, residual Add                    3
  LayerNormalization                                              1
  MatMul + Add (HIDDEN -> FFN), Gelu in Erf form
      (Div sqrt2, Erf, Add 1, Mul, Mul 0.5), MatMul + Add         9
  residual Add                                                    1

BLOCKS = max(1, round((N_NODES - 1) / 40)), so the model has 40 * BLOCKS + 1
nodes.  No value_info is written: every intermediate shape has to be
inferred.  Every block has its own weights (4 LayerNorm vectors, 6 weight
matrices, 6 biases), filled from a seeded numpy Generator and stored in
raw_data; the small constants (gather indices, unsqueeze axes, head
sizes, scalars) are shared initializers.  Two runs write byte-identical
files.  The model passes onnx.checker.check_model (not full_check).

Needs onnx and numpy: run it with /usr/bin/python3.
"""
import os
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper

SEED = 20261202
OPSET = 17
IR_VERSION = 8
HIDDEN, HEADS, FFN = 32, 4, 64
HEAD_DIM = HIDDEN // HEADS
NODES_PER_BLOCK = 40


def tensor(name, a):
    t = TensorProto()
    t.name = name
    t.data_type = helper.np_dtype_to_tensor_dtype(a.dtype) \
        if hasattr(helper, "np_dtype_to_tensor_dtype") else \
        onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype]
    t.dims.extend(a.shape)
    t.raw_data = np.ascontiguousarray(a).tobytes()
    return t


def build(n_nodes):
    blocks = max(1, int(round((n_nodes - 1) / NODES_PER_BLOCK)))
    rng = np.random.default_rng(SEED)
    nodes, inits = [], []

    def node(op, ins, outs, **attrs):
        nodes.append(helper.make_node(op, ins, outs, name="n%d" % len(nodes), **attrs))
        return outs[0]

    def w(name, shape, scale):
        a = rng.standard_normal(shape, dtype=np.float32) * np.float32(scale)
        inits.append(tensor(name, a))
        return name

    def const(name, a):
        inits.append(tensor(name, a))
        return name

    i64 = np.int64
    c_idx0 = const("c_idx0", np.array(0, i64))
    c_idx1 = const("c_idx1", np.array(1, i64))
    c_ax0 = const("c_ax0", np.array([0], i64))
    c_heads = const("c_heads", np.array([HEADS], i64))
    c_hdim = const("c_hdim", np.array([HEAD_DIM], i64))
    c_hidden = const("c_hidden", np.array([HIDDEN], i64))
    c_scale = const("c_scale", np.array(np.sqrt(HEAD_DIM), np.float32))
    c_sqrt2 = const("c_sqrt2", np.array(np.sqrt(2.0), np.float32))
    c_one = const("c_one", np.array(1.0, np.float32))
    c_half = const("c_half", np.array(0.5, np.float32))

    x = "hidden"
    s = 1.0 / np.sqrt(HIDDEN)
    for b in range(blocks):
        p = "b%d_" % b
        ln1 = node("LayerNormalization",
                   [x, w(p + "ln1_g", [HIDDEN], 1.0), w(p + "ln1_b", [HIDDEN], 0.1)],
                   [p + "ln1"], axis=-1, epsilon=1e-5)
        qkv = []
        for k in "qkv":
            mm = node("MatMul", [ln1, w(p + "w" + k, [HIDDEN, HIDDEN], s)], [p + k + "_mm"])
            qkv.append(node("Add", [mm, w(p + "b" + k, [HIDDEN], 0.1)], [p + k]))
        shp = node("Shape", [ln1], [p + "shape"])
        bt = node("Gather", [shp, c_idx0], [p + "batch"], axis=0)
        sq = node("Gather", [shp, c_idx1], [p + "seq"], axis=0)
        bt1 = node("Unsqueeze", [bt, c_ax0], [p + "batch1"])
        sq1 = node("Unsqueeze", [sq, c_ax0], [p + "seq1"])
        hshape = node("Concat", [bt1, sq1, c_heads, c_hdim], [p + "hshape"], axis=0)
        q, k, v = [node("Reshape", [t, hshape], [t + "_r"]) for t in qkv]
        q = node("Transpose", [q], [p + "q_t"], perm=[0, 2, 1, 3])
        k = node("Transpose", [k], [p + "k_t"], perm=[0, 2, 3, 1])
        v = node("Transpose", [v], [p + "v_t"], perm=[0, 2, 1, 3])
        sc = node("MatMul", [q, k], [p + "scores"])
        sc = node("Div", [sc, c_scale], [p + "scaled"])
        pr = node("Softmax", [sc], [p + "probs"], axis=-1)
        ctx = node("MatMul", [pr, v], [p + "ctx"])
        ctx = node("Transpose", [ctx], [p + "ctx_t"], perm=[0, 2, 1, 3])
        oshape = node("Concat", [bt1, sq1, c_hidden], [p + "oshape"], axis=0)
        ctx = node("Reshape", [ctx, oshape], [p + "ctx_r"])
        o = node("MatMul", [ctx, w(p + "wo", [HIDDEN, HIDDEN], s)], [p + "o_mm"])
        o = node("Add", [o, w(p + "bo", [HIDDEN], 0.1)], [p + "o"])
        r1 = node("Add", [x, o], [p + "res1"])
        ln2 = node("LayerNormalization",
                   [r1, w(p + "ln2_g", [HIDDEN], 1.0), w(p + "ln2_b", [HIDDEN], 0.1)],
                   [p + "ln2"], axis=-1, epsilon=1e-5)
        h = node("MatMul", [ln2, w(p + "w1", [HIDDEN, FFN], s)], [p + "f1_mm"])
        h = node("Add", [h, w(p + "b1", [FFN], 0.1)], [p + "f1"])
        g = node("Div", [h, c_sqrt2], [p + "g_div"])
        g = node("Erf", [g], [p + "g_erf"])
        g = node("Add", [g, c_one], [p + "g_add"])
        g = node("Mul", [h, g], [p + "g_mul"])
        g = node("Mul", [g, c_half], [p + "gelu"])
        f = node("MatMul", [g, w(p + "w2", [FFN, HIDDEN], 1.0 / np.sqrt(FFN))], [p + "f2_mm"])
        f = node("Add", [f, w(p + "b2", [HIDDEN], 0.1)], [p + "f2"])
        x = node("Add", [r1, f], [p + "out"])
        assert len(nodes) == NODES_PER_BLOCK * (b + 1)
    node("LayerNormalization",
         [x, w("final_g", [HIDDEN], 1.0), w("final_b", [HIDDEN], 0.1)],
         ["out"], axis=-1, epsilon=1e-5)

    dims = ["batch", "seq", HIDDEN]
    graph = helper.make_graph(
        nodes, "transformer_%d" % blocks,
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, dims)],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, dims)],
        initializer=inits)
    model = helper.make_model(graph, producer_name="opmig-bench-gen_transformer",
                              producer_version="1",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    return model, blocks


def main(argv):
    if len(argv) != 3 or not argv[2].isdigit() or int(argv[2]) < 1:
        print("usage: gen_transformer.py OUTDIR N_NODES", file=sys.stderr)
        return 2
    outdir, n = argv[1], int(argv[2])
    os.makedirs(outdir, exist_ok=True)
    t0 = time.time()
    model, blocks = build(n)
    onnx.checker.check_model(model)
    path = os.path.join(outdir, "transformer-%d.onnx" % n)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(model.SerializeToString())
    os.replace(tmp, path)
    print("gen_transformer: %s: %d blocks, %d nodes, %d initializers, %d bytes, %.1f s"
          % (path, blocks, len(model.graph.node), len(model.graph.initializer),
             os.path.getsize(path), time.time() - t0), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
