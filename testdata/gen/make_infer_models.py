#!/usr/bin/python3
"""make_infer_models.py: writes testdata/infer/*.onnx, the small models of
the inference unit suite (tests/unit/suite_infer.c).  Graph outputs are
declared without shapes, so expectations come from the test, not the file.
Deterministic; run with /usr/bin/python3 (onnx 1.12):
    /usr/bin/python3 testdata/gen/make_infer_models.py
"""

import os

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                   "infer")


def vi(name, dtype=None, shape=None):
    if dtype is None:
        v = onnx.ValueInfoProto()
        v.name = name
        return v
    return helper.make_tensor_value_info(name, dtype, shape)


def i64(name, vals):
    return numpy_helper.from_array(np.array(vals, dtype=np.int64), name)


def f32(name, shape):
    return numpy_helper.from_array(np.zeros(shape, dtype=np.float32), name)


def save(name, nodes, inputs, outputs, inits=(), opset=13, value_info=(),
         functions=(), domains=()):
    g = helper.make_graph(nodes, name, inputs, [vi(o) for o in outputs],
                          list(inits), value_info=list(value_info))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)] +
                          [helper.make_opsetid(d, 1) for d in domains],
                          producer_name="opmig-testdata", functions=functions)
    m.ir_version = 8
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


N = helper.make_node


def main():
    os.makedirs(OUT, exist_ok=True)
    # Conv and pools: kernel, pads, strides, dilations, auto_pad, ceil_mode.
    save("conv", [
        N("Conv", ["x", "w"], ["conv_p1"], "conv_p1", pads=[1, 1, 1, 1]),
        N("Conv", ["x", "w"], ["conv_s2"], "conv_s2", strides=[2, 2]),
        N("Conv", ["x", "w"], ["conv_d2"], "conv_d2", dilations=[2, 2]),
        N("Conv", ["x", "w"], ["conv_same"], "conv_same", auto_pad="SAME_UPPER",
          strides=[2, 2]),
        N("MaxPool", ["x"], ["mp_ceil"], "mp_ceil", kernel_shape=[3, 3],
          strides=[2, 2], ceil_mode=1),
        N("MaxPool", ["x"], ["mp_floor"], "mp_floor", kernel_shape=[3, 3],
          strides=[2, 2]),
        N("AveragePool", ["x"], ["ap_valid"], "ap_valid", kernel_shape=[3, 3],
          strides=[2, 2], auto_pad="VALID"),
        N("AveragePool", ["x"], ["ap_lower"], "ap_lower", kernel_shape=[2, 2],
          strides=[3, 3], auto_pad="SAME_LOWER"),
        N("GlobalAveragePool", ["conv_p1"], ["gap"], "gap"),
        N("BatchNormalization", ["conv_p1", "s", "s", "s", "s"], ["bn"], "bn"),
        N("Flatten", ["gap"], ["flat"], "flat"),
    ], [vi("x", T.FLOAT, [1, 3, 32, 32])],
        ["conv_p1", "conv_s2", "conv_d2", "conv_same", "mp_ceil", "mp_floor",
         "ap_valid", "ap_lower", "gap", "bn", "flat"],
        [f32("w", [8, 3, 3, 3]), f32("s", [8])])
    # Shape -> Gather -> Unsqueeze -> Concat -> Reshape, static and symbolic.
    for tag, shape in (("static", [2, 3, 8, 8]), ("sym", ["N", 3, 8, 8])):
        save("chain_" + tag, [
            N("Shape", ["x"], ["shp"], "shp"),
            N("Gather", ["shp", "zero"], ["batch"], "gather", axis=0),
            N("Unsqueeze", ["batch", "axes0"], ["batch1"], "unsq"),
            N("Concat", ["batch1", "minus1"], ["target"], "concat", axis=0),
            N("Reshape", ["x", "target"], ["y"], "reshape"),
            N("Reshape", ["x", "zero_m1"], ["y2"], "reshape0"),
            N("Size", ["x"], ["n"], "size"),
            N("Shape", ["x"], ["tail"], "shape15", start=-2),
        ], [vi("x", T.FLOAT, shape)], ["target", "y", "y2", "n", "tail"],
            [i64("zero", 0), i64("axes0", [0]), i64("minus1", [-1]),
             i64("zero_m1", [0, 3, -1])], opset=15)
    # Broadcasting, type errors, folding arithmetic.
    save("bcast", [
        N("Add", ["a", "b"], ["y"], "add"),
        N("Where", ["c", "a", "b"], ["w"], "where"),
        N("Mul", ["k1", "k2"], ["kk"], "mul"),
        N("Sub", ["kk", "k1"], ["kd"], "sub"),
        N("Div", ["kk", "k2"], ["kq"], "div"),
        N("Equal", ["a", "b"], ["eq"], "eq"),
        N("MatMul", ["m1", "m2"], ["mm"], "matmul"),
        N("MatMul", ["v", "m2"], ["mv"], "matvec"),
        N("Gemm", ["g1", "g2"], ["gemm"], "gemm", transA=1, transB=1),
    ], [vi("a", T.FLOAT, [2, 1, 4]), vi("b", T.FLOAT, [3, 1]),
        vi("c", T.BOOL, [4]), vi("m1", T.FLOAT, [2, 1, 3, 4]),
        vi("m2", T.FLOAT, [5, 4, 6]), vi("v", T.FLOAT, [4]),
        vi("g1", T.FLOAT, [7, 3]), vi("g2", T.FLOAT, [5, 7])],
        ["y", "w", "kk", "kd", "kq", "eq", "mm", "mv", "gemm"],
        [i64("k1", [2, 3]), i64("k2", [4])])
    save("bad_bcast", [N("Add", ["a", "b"], ["y"], "add_bad")],
         [vi("a", T.FLOAT, [2, 3]), vi("b", T.FLOAT, [4])], ["y"])
    save("bad_types", [N("Add", ["a", "b"], ["y"], "add_types")],
         [vi("a", T.FLOAT, [2]), vi("b", T.INT64, [2])], ["y"])
    save("bad_conv", [N("Conv", ["x", "w"], ["y"], "conv_bad")],
         [vi("x", T.FLOAT, [3, 32]), vi("w", T.FLOAT, [8, 3, 3])], ["y"])
    save("bad_conv_w", [N("Conv", ["x", "w"], ["y"], "conv_w")],
         [vi("x", T.FLOAT, [1, 3, 32, 32]), vi("w", T.FLOAT, [8, 3, 3])], ["y"])
    save("bad_constraint", [N("Sqrt", ["a"], ["y"], "sqrt_int")],
         [vi("a", T.INT64, [2])], ["y"])
    save("bad_concat", [N("Concat", ["a", "a"], ["y"], "concat_noaxis")],
         [vi("a", T.FLOAT, [2])], ["y"])
    # Shape ops with constant inputs.
    save("shapes", [
        N("Range", ["r0", "r1", "r2"], ["rng"], "range"),
        N("ConstantOfShape", ["cs"], ["cos"], "cos",
          value=numpy_helper.from_array(np.array([7], dtype=np.int64))),
        N("Slice", ["x", "st", "en", "ax", "sp"], ["sl"], "slice"),
        N("Slice", ["rng", "st1", "en1"], ["rsl"], "slice_const"),
        N("Transpose", ["x"], ["tr"], "transpose", perm=[2, 0, 1]),
        N("Squeeze", ["u"], ["sq"], "squeeze"),
        N("Squeeze", ["u", "ax1"], ["sq1"], "squeeze1"),
        N("Split", ["x", "spl"], ["s0", "s1"], "split", axis=2),
        N("ReduceMean", ["x"], ["rm"], "rmean", axes=[1], keepdims=1),
        N("ReduceSum", ["x", "ax1"], ["rs"], "rsum", keepdims=0),
        N("ReduceMax", ["x"], ["rx"], "rmax", keepdims=0),
        N("Expand", ["u", "es"], ["ex"], "expand"),
        N("Tile", ["x", "rep"], ["ti"], "tile"),
        N("Pad", ["x", "pads"], ["pd"], "pad"),
        N("Resize", ["img", "", "scales"], ["rz"], "resize", mode="nearest"),
        N("Constant", [], ["kints"], "kints", value_ints=[24, -1]),
        N("Reshape", ["x", "kints"], ["rk"], "reshape_k"),
        N("Cast", ["x"], ["xc"], "cast", to=T.FLOAT16),
        N("Softmax", ["x"], ["smx"], "softmax"),
        N("LayerNormalization", ["x", "ln_s"], ["ln", "ln_m"], "lnorm",
          axis=-1),
        N("Gather", ["x", "gidx"], ["ga"], "gather2", axis=1),
        N("Einsum", ["e1", "e2"], ["ein"], "einsum", equation="bij,bjk->bik"),
        N("Einsum", ["x"], ["ein2"], "einsum2", equation="...ij->...ji"),
        N("Einsum", ["e1", "e2"], ["ein3"], "einsum3", equation="bij,bjk"),
    ], [vi("x", T.FLOAT, [4, 6, 10]), vi("u", T.FLOAT, [1, 5, 1]),
        vi("img", T.FLOAT, [1, 3, 4, 6]), vi("e1", T.FLOAT, [2, 3, 4]),
        vi("e2", T.FLOAT, [2, 4, 5])],
        ["rng", "cos", "sl", "rsl", "tr", "sq", "sq1", "s0", "s1", "rm", "rs",
         "rx", "ex", "ti", "pd", "rz", "rk", "xc", "smx", "ln", "ln_m", "ga",
         "ein", "ein2", "ein3"],
        [i64("r0", 1), i64("r1", 11), i64("r2", 3), i64("cs", [2, 3]),
         i64("st", [1, -4]), i64("en", [1000, -1]), i64("ax", [0, 2]),
         i64("sp", [2, 1]), i64("st1", [1]), i64("en1", [3]),
         i64("ax1", [0]), i64("spl", [3, 7]), i64("es", [2, 5, 3]),
         i64("rep", [1, 2, 3]), i64("pads", [0, 1, 2, 0, 1, 2]),
         numpy_helper.from_array(np.array([1, 1, 2, 1.5], dtype=np.float32),
                                 "scales"),
         f32("ln_s", [10]), i64("gidx", [[0, 1], [2, 3]])], opset=17)
    # Squeeze/Unsqueeze attribute form before opset 13.
    save("opset11", [
        N("Unsqueeze", ["x"], ["u"], "unsq", axes=[0, 3]),
        N("Squeeze", ["u"], ["s"], "sq", axes=[0]),
        N("Split", ["x"], ["p0", "p1"], "split", axis=1, split=[1, 2]),
    ], [vi("x", T.FLOAT, [2, 3])], ["u", "s", "p0", "p1"], opset=11)
    # Subgraphs: If with a symbolic and a static branch, Loop with a scan
    # output, and a declared value_info that conflicts.
    then_g = helper.make_graph([N("Relu", ["x"], ["t"], "t_relu")], "then", [],
                               [vi("t")])
    else_g = helper.make_graph([N("Neg", ["x"], ["e"], "e_neg")], "else", [],
                               [vi("e")])
    body = helper.make_graph(
        [N("Add", ["acc", "x"], ["acc2"], "b_add"),
         N("Identity", ["cond"], ["cond2"], "b_id"),
         N("Relu", ["acc2"], ["scan_out"], "b_relu")], "body",
        [vi("i", T.INT64, []), vi("cond", T.BOOL, []), vi("acc", T.FLOAT, None)],
        [vi("cond2"), vi("acc2"), vi("scan_out")])
    scan_body = helper.make_graph(
        [N("Add", ["st", "elem"], ["st2"], "s_add"),
         N("Identity", ["st2"], ["out_e"], "s_id")], "scan_body",
        [vi("st", T.FLOAT, None), vi("elem", T.FLOAT, None)],
        [vi("st2"), vi("out_e")])
    save("ctrl", [
        N("If", ["c"], ["yif"], "if", then_branch=then_g, else_branch=else_g),
        N("Loop", ["trip", "", "x"], ["acc_out", "scans"], "loop", body=body),
        N("Relu", ["x"], ["r"], "relu_declared"),
        N("If", ["ctrue"], ["yconst"], "if_const", then_branch=then_g,
          else_branch=else_g),
        N("Mystery", ["x"], ["myst"], "mystery", domain="com.opmig.test"),
        N("Relu", ["myst"], ["after"], "after_mystery"),
        N("Scan", ["s0", "seq"], ["s_final", "s_all"], "scan",
          num_scan_inputs=1, body=scan_body),
    ], [vi("x", T.FLOAT, [2, 3]), vi("c", T.BOOL, [])],
        ["yif", "acc_out", "scans", "r", "yconst", "after", "s_final",
         "s_all"],
        [i64("trip", 5), numpy_helper.from_array(np.array(True), "ctrue"),
         f32("s0", [3]), f32("seq", [6, 3])],
        value_info=[vi("r", T.FLOAT, [2, 4]), vi("myst", T.FLOAT, [7])],
        domains=["com.opmig.test"])
    # Dims as sums of symbols: Concat lengths, shape arithmetic, Range
    # lengths; a declared name that reads like a sum is unknown.
    save("symsum", [
        N("Concat", ["x", "y"], ["cat"], "cat", axis=0),
        N("Concat", ["y", "x"], ["cat2"], "cat2", axis=0),
        N("Shape", ["x"], ["sx"], "sx"), N("Gather", ["sx", "zero"], ["p"], "gp", axis=0),
        N("Shape", ["y"], ["sy"], "sy"), N("Gather", ["sy", "zero"], ["s"], "gs", axis=0),
        N("Shape", ["z"], ["sz"], "sz"), N("Gather", ["sz", "zero"], ["t"], "gt", axis=0),
        N("Shape", ["w"], ["sw"], "sw"), N("Gather", ["sw", "zero"], ["u"], "gu", axis=0),
        N("Add", ["p", "s"], ["ps"], "ps"),
        N("Add", ["s", "p"], ["sp"], "sp"),
        N("Equal", ["ps", "sp"], ["same"], "same"),
        N("Range", ["zero", "ps", "one"], ["r_ps"], "r_ps"),
        N("Sub", ["t", "s"], ["d"], "d"),
        N("Range", ["d", "t", "one"], ["r_seq"], "r_seq"),
        N("Range", ["s", "t", "one"], ["r_neg"], "r_neg"),
        N("Add", ["s", "three"], ["s3"], "s3"),
        N("Range", ["s", "s3", "one"], ["r_three"], "r_three"),
        N("Mul", ["s", "two"], ["s2"], "s2"),
        N("Range", ["zero", "s2", "one"], ["r_twice"], "r_twice"),
        N("Range", ["d", "t", "two"], ["r_step"], "r_step"),
        N("Add", ["t", "minus3"], ["tm3"], "tm3"),
        N("Range", ["zero", "tm3", "one"], ["r_less"], "r_less"),
        N("Range", ["zero", "u", "one"], ["r_u"], "r_u"),
    ], [vi("x", T.FLOAT, ["past", 4]), vi("y", T.FLOAT, ["seq", 4]),
        vi("z", T.FLOAT, ["total", 4]), vi("w", T.FLOAT, ["(past + seq)", 4])],
        ["cat", "cat2", "ps", "same", "r_ps", "d", "r_seq", "r_neg", "r_three", "r_twice",
         "r_step", "r_less", "r_u"],
        [i64("zero", 0), i64("one", 1), i64("two", 2), i64("three", 3), i64("minus3", -3)])
    # Slices whose ends are shape elements (torch's x[..., :n]), and
    # torch's expand idiom Where(Equal(size, -1), 1, size): a dim is never
    # -1, a sum of symbols may be anything.
    big = np.iinfo(np.int64).max
    save("symslice", [
        N("Shape", ["am"], ["sa"], "sa"), N("Gather", ["sa", "one"], ["t"], "gt", axis=0),
        N("Unsqueeze", ["t", "ax0"], ["tend"], "tend"),
        N("Slice", ["x", "z1", "tend", "ax3"], ["sl_keep"], "sl_keep"),
        N("Shape", ["y"], ["sy"], "sy"), N("Gather", ["sy", "one"], ["k"], "gk", axis=0),
        N("Unsqueeze", ["k", "ax0"], ["kend"], "kend"),
        N("Slice", ["x", "z1", "kend", "ax3", "one1"], ["sl_other"], "sl_other"),
        N("Slice", ["x", "one1", "tend", "ax3"], ["sl_start"], "sl_start"),
        N("Concat", ["tend", "big"], ["ends2"], "ends2", axis=0),
        N("Slice", ["x", "z2", "ends2", "ax32"], ["sl_two"], "sl_two"),
        N("Shape", ["x"], ["sx"], "sx"), N("Gather", ["sx", "zero"], ["n"], "gn", axis=0),
        N("Unsqueeze", ["n", "ax0"], ["n1"], "n1"),
        N("Concat", ["n1", "one1", "neg1", "neg1"], ["size"], "size", axis=0),
        N("Equal", ["size", "neg1"], ["eq"], "eq"),
        N("Where", ["eq", "one1", "size"], ["size2"], "size2"),
        N("Expand", ["c", "size2"], ["ex"], "ex"),
        N("Add", ["t", "k"], ["tk"], "tk"),
        N("Equal", ["tk", "minus1"], ["eq_sum"], "eq_sum"),
    ], [vi("x", T.FLOAT, ["N", 1, "S", "T"]), vi("am", T.INT64, ["N", "T"]),
        vi("y", T.FLOAT, ["N", "K"]), vi("c", T.FLOAT, [1, 1, "S", "T"])],
        ["sl_keep", "sl_other", "sl_start", "sl_two", "eq", "ex", "eq_sum"],
        [i64("zero", 0), i64("one", 1), i64("minus1", -1), i64("ax0", [0]),
         i64("ax3", [3]), i64("ax32", [3, 2]), i64("z1", [0]), i64("z2", [0, 0]),
         i64("one1", [1]), i64("neg1", [-1]), i64("big", [big])])


if __name__ == "__main__":
    main()
