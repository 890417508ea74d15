#!/usr/bin/python3
"""make_scan_models.py: writes the fixtures of `opmig scan` (testdata/scan/).

Each model holds probe nodes, each named after what it probes, so that
tests/cli/t0800-scan.sh can check per shipped target the verdict of a
supported op, an unsupported op, a dtype, attribute and rank violation and
a non-constant input.  Deterministic (no randomness, no timestamps):
    /usr/bin/python3 testdata/gen/make_scan_models.py
Needs /usr/bin/python3 with onnx 1.12 (Debian python3-onnx).
"""

import os

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scan")
F16, F32, F64, I64, I32, STR = T.FLOAT16, T.FLOAT, T.DOUBLE, T.INT64, T.INT32, T.STRING


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def save(name, nodes, inputs, outputs, inits=(), opset=13, extra_opsets=(), check=True):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(g, opset_imports=ops, producer_name="opmig-testdata",
                          producer_version="1")
    m.ir_version = 8
    if check:
        onnx.checker.check_model(m)
    onnx.save(m, os.path.join(OUT, name + ".onnx"))


def main():
    os.makedirs(OUT, exist_ok=True)
    # Relu on float16 NCHW: supported by every shipped target.
    save("supported",
         [helper.make_node("Relu", ["x"], ["y"], name="relu")],
         [vi("x", F16, [1, 3, 8, 8])], [vi("y", F16, [1, 3, 8, 8])])
    # StringNormalizer: no target runs it; a custom-domain op: no target
    # knows the domain.
    save("unsupported",
         [helper.make_node("StringNormalizer", ["s"], ["s2"], name="strnorm"),
          helper.make_node("Relu", ["x"], ["h"], name="relu"),
          helper.make_node("Frobnicate", ["h"], ["y"], name="custom", domain="com.example")],
         [vi("s", STR, [2]), vi("x", F16, [1, 3, 8, 8])],
         [vi("s2", STR, [2]), vi("y", F16, [1, 3, 8, 8])],
         extra_opsets=[("com.example", 1)])
    # dtype violations: Add on float64 (generic-npu lacks it, tensorrt's
    # Add has no float64), MatMul on float32 (ascend: float16 only; qnn:
    # uint8/uint16 only), Relu on float32 (rknpu2: int8/float16 only).
    save("dtype",
         [helper.make_node("Add", ["a", "b"], ["c"], name="add_f64"),
          helper.make_node("MatMul", ["p", "q"], ["r"], name="matmul_f32"),
          helper.make_node("Relu", ["r"], ["y"], name="relu_f32")],
         [vi("a", F64, [2, 3]), vi("b", F64, [2, 3]), vi("p", F32, [2, 3]),
          vi("q", F32, [3, 4])],
         [vi("c", F64, [2, 3]), vi("y", F32, [2, 4])])
    # attribute violation: Resize mode cubic (generic-npu, tensorrt,
    # ascend, rknpu2 take nearest/linear only); scales constant, float16.
    save("attribute",
         [helper.make_node("Resize", ["x", "", "scales"], ["y"], name="resize_cubic",
                           mode="cubic")],
         [vi("x", F16, [1, 1, 4, 4])], [vi("y", F16, [1, 1, 8, 8])],
         [const("scales", np.array([1, 1, 2, 2], np.float32))])
    # rank violations: 1-D Conv (generic-npu, rknpu2, nnapi want rank 4),
    # 3-D Conv (coreml: rank 3-4; generic-npu max rank 4), 1-D MaxPool
    # (tensorrt: rank 4-5), Relu on a rank-9 tensor (ascend: max rank 8).
    save("rank",
         [helper.make_node("Conv", ["x1", "w1"], ["y1"], name="conv1d"),
          helper.make_node("Conv", ["x3", "w3"], ["y3"], name="conv3d"),
          helper.make_node("MaxPool", ["x1"], ["p1"], name="maxpool1d", kernel_shape=[2]),
          helper.make_node("Relu", ["x9"], ["y9"], name="relu9d")],
         [vi("x1", F16, [1, 3, 8]), vi("x3", F16, [1, 3, 4, 4, 4]),
          vi("x9", F16, [1] * 9)],
         [vi("y1", F16, [1, 4, 6]), vi("y3", F16, [1, 4, 2, 2, 2]),
          vi("p1", F16, [1, 3, 7]), vi("y9", F16, [1] * 9)],
         [const("w1", np.ones([4, 3, 3], np.float16)),
          const("w3", np.ones([4, 3, 3, 3, 3], np.float16))])
    # inputs that must be constant, fed by graph inputs: Conv weights
    # (generic-npu), Gemm B (generic-npu, coreml), Unsqueeze axes
    # (generic-npu, nnapi), CumSum axis (tensorrt), Resize scales (ascend).
    save("constant",
         [helper.make_node("Conv", ["x", "w"], ["cy"], name="conv_w_input"),
          helper.make_node("Gemm", ["a", "b"], ["gy"], name="gemm_b_input"),
          helper.make_node("Unsqueeze", ["a", "axes"], ["uy"], name="unsqueeze_axes_input"),
          helper.make_node("CumSum", ["af", "axis"], ["sy"], name="cumsum_axis_input"),
          helper.make_node("Resize", ["x", "", "scales"], ["ry"], name="resize_scales_input",
                           mode="nearest")],
         [vi("x", F16, [1, 3, 8, 8]), vi("w", F16, [4, 3, 3, 3]), vi("a", F16, [2, 3]),
          vi("b", F16, [3, 4]), vi("af", F32, [2, 3]), vi("axes", I64, [1]), vi("axis", I32, []),
          vi("scales", F32, [4])],
         [vi("cy", F16, [1, 4, 6, 6]), vi("gy", F16, [2, 4]), vi("uy", F16, ["u0", "u1", "u2"]),
          vi("sy", F32, [2, 3]), vi("ry", F16, ["r0", "r1", "r2", "r3"])])
    # model-level findings: opset 10 (outside generic-npu's 11-17), a
    # dynamic batch, int64 and float64 computed at run time; an If whose
    # branch holds an Erf on float64 (dtype rules on an inner node).
    then_g = helper.make_graph([helper.make_node("Erf", ["d"], ["t"], name="inner_erf")],
                               "then", [], [vi("t", F64, ["N", 4])])
    else_g = helper.make_graph([helper.make_node("Neg", ["d"], ["e"], name="inner_neg")],
                               "else", [], [vi("e", F64, ["N", 4])])
    save("model",
         [helper.make_node("Cast", ["x"], ["d"], name="to_f64", to=F64),
          helper.make_node("If", ["c"], ["o"], name="branch", then_branch=then_g,
                           else_branch=else_g),
          helper.make_node("Cast", ["x"], ["i"], name="to_i64", to=I64),
          helper.make_node("Relu", ["x"], ["y"], name="relu")],
         [vi("x", F32, ["N", 4]), vi("c", T.BOOL, [])],
         [vi("o", F64, ["N", 4]), vi("i", I64, ["N", 4]), vi("y", F32, ["N", 4])],
         opset=10)


if __name__ == "__main__":
    main()
