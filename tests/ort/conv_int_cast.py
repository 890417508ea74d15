"""conv_int_cast.py OPMIG WORKDIR: ConvInteger whose only reader is a Cast
to float32 (a dynamic quantizer's layer) run as one unit writing float32
of the sums (runtime/qdq.c, knn_conv_integer_f32), on seeded random
cases: uint8 or int8 input with a zero point, uint8 weights with a zero
point other than 128 (oneDNN's sums corrected, an all-ones channel),
uint8 at 128, int8 at 0 or per output channel, groups (corrected ones
run on opmig's own kernels), strides, pads, dilations, batch 2, 16 to
48 output channels over planes of whole 64-pixel tiles, windows of 256
and 300 channels by 3x3 (sums past 2^24: W in parts), the Cast
followed by a Mul as the quantizer writes it.  Checked:
  * the Cast's output (a graph output) is bit for bit numpy's
    float32(exact integer sum), and the Mul's float32(acc) * scale;
  * the same bit for bit with --exact (the nodes one by one);
  * `--stats` counts the Cast done by the unit, and none for the near
    misses (the ConvInteger's result also a graph output, a Cast to
    double), whose values must still hold;
  * onnxruntime-node, where it has a ConvInteger kernel for the types,
    bit for bit.
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
from int_ops_ref import conv_ref  # noqa: E402
from qdqlib import T  # noqa: E402

RNG = np.random.default_rng(1226)
q8 = functools.partial(qdqlib.q8, RNG)
N_CASES = 44


def case(k):
    miss = {0: "output", 1: "double"}.get(k % 9) if k >= 9 else None
    wkind = ("u8zp", "u8_128", "i8_0", "i8_per_ch")[k % 4 if k % 2 == 0 else (k // 2) % 4]
    # (corrected groups: opmig's own kernels, case 1 with the Mul and its chain)
    group = 2 if k % 5 == 4 or k % 8 == 1 else 1
    cg, mg = int(RNG.integers(2, 12)), int(RNG.integers(2, 20))
    kh, kw = int(RNG.integers(1, 4)), int(RNG.integers(1, 4))
    stride = [int(RNG.integers(1, 3)), int(RNG.integers(1, 3))]
    dil = [int(RNG.integers(1, 3)), int(RNG.integers(1, 3))]
    pads = [int(RNG.integers(0, 2)) for _ in range(4)]
    h, w = int(RNG.integers(kh * dil[0], 20)), int(RNG.integers(kw * dil[1], 20))
    if 36 <= k < 40:
        # 16, 32 or 48 output channels over planes of whole 64-pixel
        # tiles: the sums moved by 16 x 16 blocks (k_conv_dnnl_int.c)
        miss, group, mg, stride = None, 1, 16 * (1 + k % 3), [1, 1]
        wkind = ("u8zp", "i8_per_ch", "u8zp", "u8_128")[k - 36]
        h, w = int(RNG.integers(12, 26)), int(RNG.integers(12, 26))
    if k >= 40:
        # 256 or 300 input channels by 3x3 over the whole 8-bit range:
        # sums past 2^24, W split into parts on oneDNN (dn_parts)
        miss, group, mg, stride, dil = None, 1, 12 + k % 3, [1, 1], [1, 1]
        cg, kh, kw = (256, 300)[k % 2], 3, 3
        wkind = ("u8zp", "i8_per_ch", "u8_128", "i8_0")[k - 40]
        h, w = int(RNG.integers(5, 9)), int(RNG.integers(5, 9))
    n, m = 2 if k % 3 == 0 else 1, mg * group
    xt = np.uint8 if k % 2 == 0 else np.int8
    x = q8(xt, (n, cg * group, h, w))
    xz = q8(xt, ())
    if wkind == "u8zp":
        wt, wz = np.uint8, np.asarray(int(RNG.integers(100, 160)) | 1, np.uint8)
    elif wkind == "u8_128":
        wt, wz = np.uint8, np.asarray(128, np.uint8)
    elif wkind == "i8_0":
        wt, wz = np.int8, np.asarray(0, np.int8)
    else:
        wt, wz = np.int8, q8(np.int8, (m,))
    wq = q8(wt, (m, cg, kh, kw))
    scale = np.float32(RNG.uniform(1e-5, 1e-3))
    ft = np.float64 if miss == "double" else np.float32
    # odd cases: the Cast's result read by the Mul alone (the unit does the
    # Mul too, and its epilogue: a bias Add per channel and a Relu, with
    # the scale x_scale * w_scale a Mul of two scalars as a dynamic
    # quantizer writes it; every fifth, a scale per channel: no Mul done)
    inner = k % 2 == 1 and not miss
    per_ch = inner and k % 5 == 3
    sv = np.asarray(RNG.uniform(1e-5, 1e-3, (1, m, 1, 1)) if per_ch else scale, ft)
    nodes = [helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["acc"], group=group,
                              kernel_shape=[kh, kw], strides=stride, dilations=dil, pads=pads),
             helper.make_node("Cast", ["acc"], ["f"],
                              to=TensorProto.DOUBLE if miss == "double" else TensorProto.FLOAT)]
    acc = conv_ref(x, wq, xz, wz if wz.ndim else np.full(m, wz), stride, dil, pads, group)
    f = acc.astype(ft)
    et = TensorProto.DOUBLE if miss == "double" else TensorProto.FLOAT
    inits = [(wq, "w"), (xz, "xz"), (wz, "wz")]
    if inner:
        s1 = np.float32(RNG.uniform(0.5, 2))
        bias = RNG.uniform(-0.2, 0.2, (1, m, 1, 1)).astype(np.float32)
        nodes.insert(0, helper.make_node("Mul", ["s", "s1"], ["ss"]))
        nodes += [helper.make_node("Mul", ["ss", "f"], ["t"]),
                  helper.make_node("Add", ["t", "bias"], ["u"]),
                  helper.make_node("Relu", ["u"], ["y"])]
        ss = sv * np.float32(s1) if per_ch else np.float32(scale * s1)
        y = np.maximum((f * ss).astype(np.float32) + bias, np.float32(0))
        inits += [(sv, "s"), (s1, "s1"), (bias, "bias")]
        refs = [y]
        outs = [helper.make_tensor_value_info("y", et, list(acc.shape))]
    else:
        nodes.append(helper.make_node("Mul", ["f", "s"], ["y"]))
        inits.append((sv, "s"))
        refs = [f, (f * sv).astype(ft)]
        outs = [helper.make_tensor_value_info("f", et, list(acc.shape)),
                helper.make_tensor_value_info("y", et, list(acc.shape))]
    if miss == "output":
        outs.append(helper.make_tensor_value_info("acc", TensorProto.INT32, list(acc.shape)))
        refs.append(acc.astype(np.int32))
    inits = [numpy_helper.from_array(np.asarray(v), nm) for v, nm in inits]
    g = helper.make_graph(nodes, "ci", [helper.make_tensor_value_info("x", T[x.dtype],
                                                                     list(x.shape))],
                          outs, inits)
    mdl = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    mdl.ir_version = 8
    onnx.checker.check_model(mdl, full_check=True)
    what = "case %d (%s x, %s weights, group %d, %dx%d%s)" % (
        k, np.dtype(xt).name, wkind, group, kh, kw, ", " + miss if miss else "")
    what += ", Mul, Add, Relu after it" if inner and not per_ch else ", a Mul per channel" \
        if per_ch else ""
    return what, mdl, x, refs, miss, (1 if inner else 0)


def main():
    opmig, work = sys.argv[1], sys.argv[2]
    cases = []
    for k in range(N_CASES):
        what, mdl, x, refs, miss, muls = case(k)
        # the Cast, the Mul and the Relu done inside other nodes: by the
        # unit, on its epilogue chain, or (--exact) on the Cast's chain
        cases.append((what, mdl, {"x": x}, refs, (0 if miss else 1, muls, muls),
                      (0, muls, muls)))
    return qdqlib.unit_cases(opmig, work, cases, ("Cast", "Mul", "Relu"))


if __name__ == "__main__":
    sys.exit(main())
