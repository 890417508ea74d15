#!/usr/bin/python3
"""gen_model.py OUTDIR: write the benchmark models, deterministically.

  OUTDIR/inline.onnx            10,000 nodes, ~500 MB of float weights inline
                                (TensorProto.raw_data)
  OUTDIR/external/model.onnx    the same model with its weights moved to
  OUTDIR/external/weights.bin   one external-data file
  OUTDIR/external-q/model.onnx  the same graph with D=106: a quarter of the
  OUTDIR/external-q/weights.bin weights, to check that loading an external
                                model costs memory by graph, not by weights
  OUTDIR/big1g.onnx             7 nodes, 1 GiB of float weights inline, for
                                the peak-memory check

The 10,000-node graph is a chain over a float[N,16,4,D] activation built from
repeating units of three MLP blocks (MatMul by a DxD weight, Add a [D] bias,
Relu) and one conv block (3x3 Conv with bias, pads 1, then Relu): 11 nodes a
unit, 909 units, then one Identity for the graph output = 10,000 nodes.  Every
initializer is distinct and filled from a seeded numpy Generator, so two runs
write byte-identical files.  Every model passes onnx.checker; the 10,000-node
one also passes its strict shape inference (full_check).

Needs onnx and numpy: run it with /usr/bin/python3.
"""
import os
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper

SEED = 20240602
OPSET = 13
IR_VERSION = 8

# 10,000-node model
UNITS = 909              # 909 units x 11 nodes + 1 Identity = 10,000 nodes
MLP_PER_UNIT = 3
C, H, D = 16, 4, 212     # activation float[N, C, H, D]; MatMul weights DxD
D_QUARTER = 106          # external-q: same graph, a quarter of the MLP bytes
# 2727 MatMul weights of 212*212*4 = 179,776 bytes, 909 conv weights of
# 9,216 bytes and the biases: 500,997,168 bytes of raw weights.

# 1 GiB model: x float[N, BIG_D] through 4 MatMuls of BIG_D x BIG_D
BIG_D = 8192
BIG_LAYERS = 4           # 4 x 256 MiB = 1 GiB of weights


def log(msg):
    print("gen_model: " + msg, file=sys.stderr, flush=True)


def weight(rng, name, shape, scale):
    """A float TensorProto filled from rng, data in raw_data."""
    a = rng.standard_normal(shape, dtype=np.float32)
    a *= np.float32(scale)
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(shape)
    t.raw_data = a.tobytes()
    return t


def make_10k(rng, D=D):
    nodes, inits = [], []
    cur = "x"
    k = 0

    def nxt():
        nonlocal k
        k += 1
        return "t%d" % k

    for u in range(UNITS):
        for b in range(MLP_PER_UNIT):
            i = u * MLP_PER_UNIT + b
            w, bias = "mlp%d.w" % i, "mlp%d.b" % i
            inits.append(weight(rng, w, [D, D], 1.0 / np.sqrt(D)))
            inits.append(weight(rng, bias, [D], 0.01))
            a, s, r = nxt(), nxt(), nxt()
            nodes.append(helper.make_node("MatMul", [cur, w], [a],
                                          name="mlp%d.matmul" % i))
            nodes.append(helper.make_node("Add", [a, bias], [s],
                                          name="mlp%d.add" % i))
            nodes.append(helper.make_node("Relu", [s], [r],
                                          name="mlp%d.relu" % i))
            cur = r
        w, bias = "conv%d.w" % u, "conv%d.b" % u
        inits.append(weight(rng, w, [C, C, 3, 3], 1.0 / np.sqrt(C * 9)))
        inits.append(weight(rng, bias, [C], 0.01))
        c, r = nxt(), nxt()
        nodes.append(helper.make_node("Conv", [cur, w, bias], [c],
                                      name="conv%d" % u, kernel_shape=[3, 3],
                                      pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [c], [r],
                                      name="conv%d.relu" % u))
        cur = r
    nodes.append(helper.make_node("Identity", [cur], ["y"], name="out"))
    assert len(nodes) == 10000, len(nodes)
    graph = helper.make_graph(
        nodes, "opmig_bench_10k",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", C, H, D])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", C, H, D])],
        initializer=inits)
    return finish(graph)


def make_big(rng):
    nodes, inits = [], []
    cur = "x"
    for i in range(BIG_LAYERS):
        w = "big%d.w" % i
        inits.append(weight(rng, w, [BIG_D, BIG_D], 1.0 / np.sqrt(BIG_D)))
        out = "y" if i == BIG_LAYERS - 1 else "m%d" % i
        nodes.append(helper.make_node("MatMul", [cur, w], [out],
                                      name="big%d.matmul" % i))
        cur = out
        if i != BIG_LAYERS - 1:
            nodes.append(helper.make_node("Relu", [cur], ["r%d" % i],
                                          name="big%d.relu" % i))
            cur = "r%d" % i
    graph = helper.make_graph(
        nodes, "opmig_bench_1g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", BIG_D])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", BIG_D])],
        initializer=inits)
    return finish(graph)


def finish(graph):
    m = helper.make_model(graph, producer_name="opmig-bench",
                          producer_version="1",
                          opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = IR_VERSION
    return m


def weight_bytes(m):
    return sum(len(t.raw_data) for t in m.graph.initializer)


def save_atomic(m, path, **kw):
    tmp = path + ".tmp"
    onnx.save_model(m, tmp, **kw)
    os.replace(tmp, path)


def save_external(m, folder):
    """Save m as folder/model.onnx with every initializer in
    folder/weights.bin.  This moves raw_data out of m in place.  The weights
    file is written fresh: onnx appends to an existing one."""
    os.makedirs(folder, exist_ok=True)
    wpath = os.path.join(folder, "weights.bin")
    if os.path.exists(wpath):
        os.remove(wpath)
    onnx.save_model(m, os.path.join(folder, "model.onnx"),
                    save_as_external_data=True, all_tensors_to_one_file=True,
                    location="weights.bin", size_threshold=0)
    onnx.checker.check_model(os.path.join(folder, "model.onnx"))
    return os.path.getsize(wpath)


def main(argv):
    if len(argv) != 2 or argv[1].startswith("-"):
        print("usage: gen_model.py OUTDIR", file=sys.stderr)
        return 2
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(SEED)

    t0 = time.time()
    m = make_10k(rng)
    log("10k model: %d nodes, %d initializers, %d weight bytes (%.1fs)"
        % (len(m.graph.node), len(m.graph.initializer), weight_bytes(m),
           time.time() - t0))
    onnx.checker.check_model(m, full_check=True)
    save_atomic(m, os.path.join(out, "inline.onnx"))
    log("wrote inline.onnx (%.1fs)" % (time.time() - t0))

    # After the inline save: save_external empties m's raw_data.  All
    # initializers go external (threshold 0), so model.onnx is the graph
    # alone and is the same size for both external variants.
    n = save_external(m, os.path.join(out, "external"))
    del m
    log("wrote external/model.onnx + weights.bin (%d bytes) (%.1fs)"
        % (n, time.time() - t0))

    m = make_10k(np.random.default_rng(SEED + 1), D=D_QUARTER)
    n = save_external(m, os.path.join(out, "external-q"))
    del m
    log("wrote external-q/model.onnx + weights.bin (%d bytes) (%.1fs)"
        % (n, time.time() - t0))

    m = make_big(rng)
    log("1G model: %d nodes, %d weight bytes (%.1fs)"
        % (len(m.graph.node), weight_bytes(m), time.time() - t0))
    onnx.checker.check_model(m)
    save_atomic(m, os.path.join(out, "big1g.onnx"))
    del m
    log("wrote big1g.onnx (%.1fs)" % (time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
