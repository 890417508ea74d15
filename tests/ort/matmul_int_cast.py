"""matmul_int_cast.py OPMIG WORKDIR: MatMulInteger whose only reader is a
Cast to float32 (a dynamic quantizer's Linear layer:
DynamicQuantizeLinear, MatMulInteger, Cast, Mul by a_scale * b_scale, or
by a_scale times B's scale per column: one a column)
run as one unit writing float32 of the sums (runtime/qdq.c,
knn_matmul_integer_f32), with the Mul by the scale and the epilogue chain
after it, on seeded random cases: uint8 or int8 A with a zero point,
constant B of uint8 (zero point 128 or another: oneDNN's sums corrected)
or int8 (0 or one per column), B an input (sgemm's exact path), A of
rank 2 (the bias Add and Relu on the unit's chain) and 3 (batch dims),
K past 256.  Checked:
  * the Cast's output (a graph output) is bit for bit numpy's
    float32(exact integer sum), and the Mul's float32(acc) * scale, with
    the Add and Relu after it float32 as the nodes compute them;
  * the same bit for bit with --exact (the nodes one by one);
  * `--stats` counts the Cast (and the Mul) done by the unit (with
    --exact, the scalar Mul of the two scales alone, computed once), and
    none for the near misses (the MatMulInteger's result also a graph output,
    a Cast to double), whose values must still hold;
  * onnxruntime-node, where it has the kernel for the types, bit for bit.
Prints a line per failure and a summary; exits 1 on a failure."""
import functools
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import qdqlib  # noqa: E402
from qdqlib import T  # noqa: E402

RNG = np.random.default_rng(1240)
q8 = functools.partial(qdqlib.q8, RNG)
N_CASES = 24


def case(k):
    miss = {0: "output", 1: "double"}.get(k % 7) if k >= 14 else None
    bkind = ("u8zp", "u8_128", "i8_0", "i8_per_col")[k % 4]
    b_input = k % 6 == 5
    rank = 2 if k % 3 else 3
    kd = int(RNG.integers(200, 420)) if k % 5 == 0 else int(RNG.integers(8, 120))
    n = int(RNG.integers(16, 80))
    rows = int(RNG.integers(2, 40))
    at = np.uint8 if k % 2 == 0 else np.int8
    a = q8(at, (2, rows, kd) if rank == 3 else (rows, kd))
    az = q8(at, ())
    if bkind == "u8zp":
        bt, bz = np.uint8, np.asarray(int(RNG.integers(100, 160)) | 1, np.uint8)
    elif bkind == "u8_128":
        bt, bz = np.uint8, np.asarray(128, np.uint8)
    elif bkind == "i8_0":
        bt, bz = np.int8, np.asarray(0, np.int8)
    else:
        bt, bz = np.int8, q8(np.int8, (n,))
    b = q8(bt, (kd, n))
    acc = (a.astype(np.int64) - az.astype(np.int64)) @ (b.astype(np.int64) - bz.astype(np.int64))
    ft = np.float64 if miss == "double" else np.float32
    et = TensorProto.DOUBLE if miss == "double" else TensorProto.FLOAT
    f = acc.astype(ft)
    scale = np.float32(RNG.uniform(1e-5, 1e-3))
    s1 = np.float32(RNG.uniform(0.5, 2))
    bias = RNG.uniform(-0.2, 0.2, (n,)).astype(np.float32)
    nodes = [helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["acc"]),
             helper.make_node("Cast", ["acc"], ["f"], to=et)]
    inits = [(az, "az"), (bz, "bz")]
    ins = [helper.make_tensor_value_info("a", T[a.dtype], list(a.shape))]
    feeds = {"a": a}
    if b_input:
        ins.append(helper.make_tensor_value_info("b", T[b.dtype], list(b.shape)))
        feeds["b"] = b
    else:
        inits.append((b, "b"))
    inner = not miss and k % 2 == 1
    # per column: B's scales one per column (weights quantized per
    # channel), a Mul of the scalar and them: one scale a column
    per_col = inner and bkind == "i8_per_col" and not b_input
    if inner:
        # the scale a Mul of two scalars (a_scale * b_scale), or of the
        # scalar and a column's, then the bias Add and a Relu
        if per_col:
            s1 = RNG.uniform(0.5, 2, (n,)).astype(np.float32)
        nodes.insert(0, helper.make_node("Mul", ["s", "s1"], ["ss"]))
        nodes += [helper.make_node("Mul", ["f", "ss"], ["t"]),
                  helper.make_node("Add", ["t", "bias"], ["u"]),
                  helper.make_node("Relu", ["u"], ["y"])]
        inits += [(scale, "s"), (s1, "s1"), (bias, "bias")]
        ss = (np.float32(scale) * s1).astype(np.float32)
        refs = [np.maximum((f * ss).astype(np.float32) + bias, np.float32(0))]
        outs = [helper.make_tensor_value_info("y", et, list(acc.shape))]
    else:
        sv = np.asarray(scale, ft)
        nodes.append(helper.make_node("Mul", ["s", "f"], ["y"]))
        inits.append((sv, "s"))
        refs = [f, (f * sv).astype(ft)]
        outs = [helper.make_tensor_value_info("f", et, list(acc.shape)),
                helper.make_tensor_value_info("y", et, list(acc.shape))]
    if miss == "output":
        outs.append(helper.make_tensor_value_info("acc", TensorProto.INT32, list(acc.shape)))
        refs.append(acc.astype(np.int32))
    g = helper.make_graph(nodes, "mi", ins, outs,
                          [numpy_helper.from_array(np.asarray(v), nm) for v, nm in inits])
    mdl = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    mdl.ir_version = 8
    onnx.checker.check_model(mdl, full_check=True)
    what = "case %d (%s A of rank %d, %s B%s, K %d%s%s)" % (
        k, np.dtype(at).name, rank, bkind, " as an input" if b_input else "", kd,
        ", " + miss if miss else "",
        ", Mul (a scale per column), Add, Relu after it" if per_col else
        ", Mul, Add, Relu after it" if inner else "")
    # as nodes (--exact) a Mul after the Cast is a step of its chain when
    # it is per tensor or per channel (axis 1: a rank-2 product's
    # columns), not a per-column scale of a rank-3 product
    muls = 1 if inner else 0
    return what, mdl, feeds, refs, miss, (muls, 0 if per_col and rank == 3 else muls)


def main():
    opmig, work = sys.argv[1], sys.argv[2]
    cases = []
    for k in range(N_CASES):
        what, mdl, feeds, refs, miss, (muls, muls_exact) = case(k)
        cases.append((what, mdl, feeds, refs, (0 if miss else 1, muls), (0, muls_exact)))
    return qdqlib.unit_cases(opmig, work, cases, ("Cast", "Mul"))


if __name__ == "__main__":
    sys.exit(main())
