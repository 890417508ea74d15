#!/usr/bin/python3
"""gen_ops.py DIR: single-operator models for bench/ops.sh, written
2026-12-07 to find the operators whose kernels lag onnxruntime by a
multiple (a model's time hides one slow op among hundreds of nodes):
each reads a million float32 elements ([1, 64, 128, 128] unless noted)
and runs one operator (or two: an Abs before Log and Sqrt, a Greater
before Where): unary activations and math, binary ops by a per-channel
and a per-row operand, Pow by 2, 3 and 0.5, comparisons, reductions over
the last axis and over channels, ArgMax, Softmax and the normalizations,
four Transposes, Concat, Slice, Split, Gather, Expand, Tile, Pad,
DepthToSpace, Resize, Cast, CumSum, TopK, pools, a batched MatMul and an
Einsum; and spatial ops (convolutions, pools, normalizations, Resize, a
reflecting Pad) in 1, 2 and 3 spatial dims (s_ prefix).  Each also in float16 (f16_ prefix): a Cast of the input to
float16 and of the output back, float16 weights, as a float16 model's
nodes see them.  Seeded; opset 17 unless the operator needs more."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
S = [1, 64, 128, 128]
N = helper.make_node
RNG = np.random.default_rng(2612)


def c(a, name):
    return numpy_helper.from_array(np.asarray(a), name)


def models():
    """(name, nodes, initializers, inputs (name, shape), output type, opset)"""
    out = []

    def mk(name, nodes, inits=(), ins=None, out_t=F, opset=17):
        out.append((name, nodes, list(inits), ins or [("x", S)], out_t, opset))

    for op in ["Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Sigmoid", "Tanh", "Relu",
               "Elu", "Selu", "Softplus", "Softsign", "Erf", "HardSigmoid", "HardSwish",
               "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Atan", "Mish"]:
        mk("u_" + op, [N("Abs", ["x"], ["a"]), N(op, ["a"], ["y"])] if op in ("Log", "Sqrt")
           else [N(op, ["x"], ["y"])], opset=18 if op == "Mish" else 17)
    mk("u_LeakyRelu", [N("LeakyRelu", ["x"], ["y"], alpha=0.1)])
    mk("u_Gelu", [N("Gelu", ["x"], ["y"])], opset=20)
    mk("u_GeluTanh", [N("Gelu", ["x"], ["y"], approximate="tanh")], opset=20)
    mk("u_Clip", [N("Clip", ["x", "lo", "hi"], ["y"])],
       [c(np.float32(-0.5), "lo"), c(np.float32(0.5), "hi")])
    for op in ["Add", "Mul", "Sub", "Div", "Max", "Min", "Pow"]:
        mk("b_%s_ch" % op, [N(op, ["x", "b"], ["y"])],
           [c(RNG.random((1, 64, 1, 1), np.float32) + 0.5, "b")])
        mk("b_%s_row" % op, [N(op, ["x", "b"], ["y"])],
           [c(RNG.random(128, np.float32) + 0.5, "b")])
    for e, nm in ((2, "Pow2"), (3, "Pow3")):
        mk("b_" + nm, [N("Pow", ["x", "b"], ["y"])], [c(np.float32(e), "b")])
    mk("b_PowHalf", [N("Abs", ["x"], ["a"]), N("Pow", ["a", "b"], ["y"])],
       [c(np.float32(0.5), "b")])
    for op in ["Equal", "Greater", "Less"]:
        mk("c_" + op, [N(op, ["x", "b"], ["y"])], [c(np.float32(0.1), "b")],
           out_t=TensorProto.BOOL)
    mk("c_Where", [N("Greater", ["x", "b"], ["m"]), N("Where", ["m", "x", "z"], ["y"])],
       [c(np.float32(0.1), "b"), c(np.float32(0), "z")])
    for op in ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceL2", "ReduceSumSquare",
               "ReduceLogSumExp"]:
        for ax, nm in ((-1, "last"), (1, "ch")):
            if op == "ReduceSum":
                mk("r_%s_%s" % (op, nm), [N(op, ["x", "ax"], ["y"])],
                   [c(np.array([ax], np.int64), "ax")])
            else:
                mk("r_%s_%s" % (op, nm), [N(op, ["x"], ["y"], axes=[ax])])
    for ax, nm in ((1, "ch"), (-1, "last")):
        mk("r_ArgMax_" + nm, [N("ArgMax", ["x"], ["y"], axis=ax)], out_t=TensorProto.INT64)
        mk("n_Softmax_" + nm, [N("Softmax", ["x"], ["y"], axis=ax)])
    mk("n_LogSoftmax", [N("LogSoftmax", ["x"], ["y"], axis=-1)])
    ones, zeros = np.ones(64, np.float32), np.zeros(64, np.float32)
    mk("n_LayerNorm", [N("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1)],
       [c(np.ones(128, np.float32), "g"), c(np.zeros(128, np.float32), "b")])
    mk("n_InstanceNorm", [N("InstanceNormalization", ["x", "g", "b"], ["y"])],
       [c(ones, "g"), c(zeros, "b")])
    mk("n_GroupNorm", [N("GroupNormalization", ["x", "g", "b"], ["y"], num_groups=8)],
       [c(ones, "g"), c(zeros, "b")], opset=21)
    mk("n_LpNorm", [N("LpNormalization", ["x"], ["y"], axis=1)])
    mk("n_BN", [N("BatchNormalization", ["x", "g", "b", "m", "v"], ["y"])],
       [c(ones, "g"), c(zeros, "b"), c(zeros, "m"), c(ones, "v")])
    for p in ([0, 2, 3, 1], [0, 3, 1, 2], [0, 1, 3, 2], [0, 2, 1, 3]):
        mk("t_Transpose_" + "".join(map(str, p)), [N("Transpose", ["x"], ["y"], perm=p)])
    mk("m_Concat", [N("Concat", ["x", "x"], ["y"], axis=1)])
    mk("m_Slice", [N("Slice", ["x", "s", "e", "a"], ["y"])],
       [c(np.array([1, 1], np.int64), "s"), c(np.array([63, 127], np.int64), "e"),
        c(np.array([1, 3], np.int64), "a")])
    mk("m_Gather", [N("Gather", ["x", "i"], ["y"], axis=1)],
       [c(np.arange(63, -1, -1, dtype=np.int64), "i")])
    mk("m_Expand", [N("Expand", ["x", "s"], ["y"])],
       [c(np.array(S, np.int64), "s")], ins=[("x", [1, 1, 128, 128])])
    mk("m_Tile", [N("Tile", ["x", "r"], ["y"])], [c(np.array([1, 2, 1, 1], np.int64), "r")])
    pads = c(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "p")
    mk("m_Pad", [N("Pad", ["x", "p"], ["y"])], [pads])
    mk("m_PadRefl", [N("Pad", ["x", "p"], ["y"], mode="reflect")], [pads])
    mk("m_DepthToSpace", [N("DepthToSpace", ["x"], ["y"], blocksize=2)])
    sc = c(np.array([1, 1, 2, 2], np.float32), "sc")
    mk("m_Resize2x", [N("Resize", ["x", "", "sc"], ["y"], mode="nearest")], [sc],
       ins=[("x", [1, 64, 64, 64])])
    mk("m_ResizeLin", [N("Resize", ["x", "", "sc"], ["y"], mode="linear")], [sc],
       ins=[("x", [1, 64, 64, 64])])
    mk("m_CumSum", [N("CumSum", ["x", "a"], ["y"])], [c(np.array(3, np.int64), "a")])
    mk("m_TopK", [N("TopK", ["x", "k"], ["y", "i"], axis=-1)],
       [c(np.array([5], np.int64), "k")])
    mk("p_MaxPool", [N("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                       pads=[1, 1, 1, 1])])
    mk("p_AvgPool", [N("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])])
    mk("p_GAP", [N("GlobalAveragePool", ["x"], ["y"])])
    # spatial ops in 1, 2 and 3 spatial dims (s_OP_Nd; 32 channels, 0.3
    # to 0.6M elements): the 1-D and 3-D forms take other paths than
    # the 2-D ones a model zoo mostly has (added 2026-12-07, fifth
    # session: 3-D pools and small 3-D convolutions were 4-26x slower)
    for nd, shp in ((1, [1, 32, 16384]), (2, [1, 32, 96, 96]), (3, [1, 32, 8, 48, 48])):
        def w(name, shape, sc=0.1):
            return c((RNG.standard_normal(shape) * sc).astype(np.float32), name)

        k3, one = [3] * nd, [1] * nd
        sp = dict(ins=[("x", shp)])
        mk("s_ConvT_%dd" % nd, [N("ConvTranspose", ["x", "w"], ["y"], kernel_shape=[2] * nd,
                                  strides=[2] * nd)], [w("w", [32, 16] + [2] * nd)], **sp)
        mk("s_ConvDw_%dd" % nd, [N("Conv", ["x", "w"], ["y"], kernel_shape=k3, pads=one * 2,
                                   group=32)], [w("w", [32, 1] + k3)], **sp)
        mk("s_Conv8_%dd" % nd, [N("Conv", ["x", "w"], ["y"], kernel_shape=k3, pads=one * 2)],
           [w("w", [8, 32] + k3)], **sp)
        mk("s_MaxPool_%dd" % nd, [N("MaxPool", ["x"], ["y"], kernel_shape=k3, strides=[2] * nd,
                                    pads=one * 2)], **sp)
        mk("s_AvgPool_%dd" % nd, [N("AveragePool", ["x"], ["y"], kernel_shape=[2] * nd,
                                    strides=[2] * nd)], **sp)
        mk("s_LpPool_%dd" % nd, [N("LpPool", ["x"], ["y"], kernel_shape=[2] * nd,
                                   strides=[2] * nd)], **sp)
        mk("s_GMaxPool_%dd" % nd, [N("GlobalMaxPool", ["x"], ["y"])], **sp)
        mk("s_GAP_%dd" % nd, [N("GlobalAveragePool", ["x"], ["y"])], **sp)
        mk("s_INorm_%dd" % nd, [N("InstanceNormalization", ["x", "s", "b"], ["y"])],
           [w("s", [32], 1), w("b", [32], 1)], **sp)
        mk("s_BN_%dd" % nd, [N("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])],
           [w("s", [32], 1), w("b", [32], 1), w("m", [32], 1),
            c((np.abs(RNG.standard_normal(32)) + 0.5).astype(np.float32), "v")], **sp)
        s2 = c(np.array([1, 1] + [2] * nd, np.float32), "sc")
        mk("s_ResizeLin_%dd" % nd, [N("Resize", ["x", "", "sc"], ["y"], mode="linear")], [s2],
           **sp)
        mk("s_ResizeNN_%dd" % nd, [N("Resize", ["x", "", "sc"], ["y"], mode="nearest")], [s2],
           **sp)
        mk("s_PadRefl_%dd" % nd, [N("Pad", ["x", "p"], ["y"], mode="reflect")],
           [c(np.array([0, 0] + [2] * nd + [0, 0] + [2] * nd, np.int64), "p")], **sp)
    mk("k_MatMulB", [N("MatMul", ["x", "x2"], ["y"])],
       ins=[("x", [8, 128, 64]), ("x2", [8, 64, 128])])
    mk("k_Einsum", [N("Einsum", ["x", "x2"], ["y"], equation="bhid,bhjd->bhij")],
       ins=[("x", [1, 8, 128, 64]), ("x2", [1, 8, 128, 64])])
    return out


def build(name, nodes, inits, ins, out_t, opset, half):
    nodes, inits = list(nodes), list(inits)
    if half:
        H = TensorProto.FLOAT16
        pre = [N("Cast", [n + "_32"], [n], to=H) for n, _ in ins]
        # Resize's scales stay float32
        inits = [numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name)
                 if t.data_type == F and t.name != "sc" else t for t in inits]
        for n in nodes:
            for k, o in enumerate(n.output):
                if o == "y" and out_t == F:
                    n.output[k] = "y_16"
        post = [N("Cast", ["y_16"], ["y"], to=F)] if out_t == F else []
        nodes = pre + nodes + post
        gin = [helper.make_tensor_value_info(n + "_32", F, s) for n, s in ins]
    else:
        gin = [helper.make_tensor_value_info(n, F, s) for n, s in ins]
    g = helper.make_graph(nodes, name, gin, [helper.make_tensor_value_info("y", out_t, None)],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    for name, nodes, inits, ins, out_t, opset in models():
        for half in (0, 1):
            # fresh node protos per variant (build renames outputs)
            ns = [onnx.NodeProto() for _ in nodes]
            for a, b in zip(ns, nodes):
                a.CopyFrom(b)
            m = build(name, ns, inits, ins, out_t, opset, half)
            onnx.save(m, os.path.join(d, ("f16_" if half else "") + name + ".onnx"))


if __name__ == "__main__":
    main()
