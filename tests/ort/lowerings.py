"""lowerings.py OPMIG WORKDIR [SEED]: the decompositions against
onnxruntime.  Builds random single-op models (seeded: shapes, attributes,
dtypes, constants), migrates each with `opmig migrate MODEL --passes PASS
--rules RULES --target ID -o OUT` to a test target that lacks the op and
has only the ops of the variants the case is meant to exercise, checks the
report (exit 0, the rewrite made by that pass with one of those variants),
onnx.checker's full check of the result (opset <= 17), then runs every
original and migrated model in one onnxruntime-node process on the same
random inputs and compares the outputs (floats within the case's bound,
NaN where NaN; other dtypes exactly).  Prints a count per pass and variant;
exits 1 on the first failures, 77 when onnxruntime-node is unavailable.
Run by tests/cli/t1170-lowerings-ort.sh with /usr/bin/python3."""
import json
import os
import subprocess
import sys
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402

NP = {TensorProto.FLOAT: np.float32, TensorProto.INT32: np.int32,
      TensorProto.INT64: np.int64, TensorProto.BOOL: np.bool_,
      TensorProto.INT8: np.int8, TensorProto.UINT8: np.uint8}


class Case:
    """One random model: its op's pass, the variants allowed, the ops the
    target has, and how to draw its inputs."""

    def __init__(self, name, pass_, variants, ops, model, feeds, atol=0.0, rtol=0.0,
                 max_rank=None, validate=True, keeps=()):
        self.name, self.pass_, self.variants, self.ops = name, pass_, variants, ops
        # op types the migrated model must still have (not folded away)
        self.keeps = keeps
        self.model, self.feeds, self.atol, self.rtol = model, feeds, atol, rtol
        self.max_rank = max_rank
        # False: opmig's seeded inputs cannot run the original (a zero
        # integer divisor); onnxruntime compares the models below
        self.validate = validate


def vi(name, dt, shape):
    return helper.make_tensor_value_info(name, dt, shape)


def model(nodes, inputs, outputs, inits=(), opset=13):
    """The model, its outputs typed with the shapes onnx infers (the full
    check wants them; onnx 1.12 knows opsets up to 17)."""
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    if opset <= 17:
        m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    return m


def draw(rng, dt, shape, mode="real"):
    shape = tuple(shape)
    if isinstance(mode, tuple) and mode[0] == "nonzero":    # ("nonzero", m): +-1..m
        v = rng.integers(1, mode[1] + 1, shape) * rng.choice([-1, 1], shape)
        return v.astype(NP[dt])
    if isinstance(mode, tuple) and mode[0] == "ints":    # ("ints", lo, hi)
        return rng.integers(mode[1], mode[2] + 1, shape).astype(NP[dt])
    if isinstance(mode, tuple):    # ("classes", C, ignore_index or None)
        _, classes, ignore = mode
        v = rng.integers(0, classes, shape)
        if ignore is not None:
            v[rng.random(shape) < 0.25] = ignore
        return v.astype(NP[dt])
    if dt == TensorProto.BOOL:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dt != TensorProto.FLOAT:
        lo = 0 if dt == TensorProto.UINT8 else -9
        return rng.integers(lo, 10, shape).astype(NP[dt])
    if mode == "ties":
        return rng.integers(-2, 3, shape).astype(np.float32)
    if mode == "special":
        v = rng.integers(-2, 3, shape).astype(np.float32)
        sp = np.array([np.nan, np.inf, -np.inf, -0.0], np.float32)
        pick = rng.random(shape) < 0.25
        v[pick] = sp[rng.integers(0, 4, shape)][pick]
        return v
    if mode == "positive":
        return rng.uniform(0.1, 3, shape).astype(np.float32)
    if mode == "wide":
        return (rng.choice([-1, 1], shape) * 10.0 ** rng.uniform(-3, 4, shape)).astype(np.float32)
    return rng.uniform(-3, 3, shape).astype(np.float32)


# ---- the cases ---------------------------------------------------------------

def conv_transpose(rng, k):
    """k picks the formulation the target leaves: phases-d2s, phases,
    zero-insert, direct (strides 1), dynamic (the weight an input)."""
    form = ["phases-d2s", "phases", "zero-insert", "direct", "dynamic"][k % 5]
    sp = 2 if form == "phases-d2s" else int(rng.integers(1, 4))
    g, cg, mg = int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(1, 3))
    eq = int(rng.integers(2, 4))
    while True:
        xs = [int(rng.integers(1, 4 if sp == 3 else 6)) for _ in range(sp)]
        ks = [int(rng.integers(1, 4 if sp == 3 else 5)) for _ in range(sp)]
        st = [1 if form == "direct" else eq if form == "phases-d2s" else int(rng.integers(1, 4))
              for _ in range(sp)]
        if form in ("phases", "zero-insert", "phases-d2s") and max(st) == 1:
            st[0] = 2
        dl = [int(rng.integers(1, 3)) for _ in range(sp)]
        mode = ["pads", "SAME_UPPER", "SAME_LOWER", "output_shape", "VALID", "bigpads"][
            int(rng.integers(0, 6))]
        # onnx 1.12's shape inference adds output_padding to a SAME output
        # (onnxruntime and opmig do not): none with SAME
        op = [int(rng.integers(0, s)) if s > 1 and mode not in ("SAME_UPPER", "SAME_LOWER",
                                                                 "output_shape") else 0
              for s in st]
        full = [s * (x - 1) + o + d * (kk - 1) + 1 for s, x, o, d, kk in zip(st, xs, op, dl, ks)]
        big = 2 if mode == "bigpads" else 0
        pads = [int(rng.integers(0, d * (kk - 1) + big + 1)) for d, kk in zip(dl, ks)] + \
               [int(rng.integers(0, d * (kk - 1) + big + 1)) for d, kk in zip(dl, ks)]
        # an output_shape 2 or more past the full output means negative
        # pads, where onnxruntime departs from the spec's split (the
        # interpreter's and opmig's), and it refuses one stride or more
        # past: at most 1, and less than the stride
        outs = [f + int(rng.integers(-2, min(1, s - 1) + 1)) for f, s in zip(full, st)]
        if mode in ("pads", "bigpads"):
            if all(f - pads[i] - pads[sp + i] >= 1 for i, f in enumerate(full)):
                break
        elif all(o >= 1 for o in outs):
            break
    attrs = {"strides": st, "dilations": dl, "group": g}
    if mode in ("pads", "bigpads"):
        attrs["pads"] = pads
    elif mode == "output_shape":
        attrs["output_shape"] = outs
    else:
        attrs["auto_pad"] = mode
    if mode != "output_shape":
        attrs["output_padding"] = op
    x = [int(rng.integers(1, 3)), g * cg] + xs
    w = [g * cg, mg] + ks
    inits = []
    ins = [vi("x", TensorProto.FLOAT, x)]
    if form == "dynamic":
        ins.append(vi("w", TensorProto.FLOAT, w))
    else:
        inits.append(numpy_helper.from_array(rng.uniform(-1, 1, w).astype(np.float32), "w"))
    names = ["x", "w"]
    if rng.integers(0, 2) and form != "dynamic":
        inits.append(numpy_helper.from_array(rng.uniform(-1, 1, [g * mg]).astype(np.float32), "b"))
        names.append("b")
    m = model([helper.make_node("ConvTranspose", names, ["y"], **attrs)], ins,
              [vi("y", TensorProto.FLOAT, None)], inits)
    if mode == "output_shape":   # onnx 1.12 infers output_shape's rank, not the output's
        dims = m.graph.output[0].type.tensor_type.shape.dim
        del dims[:]
        for v in [x[0], g * mg] + outs:
            dims.add().dim_value = v
    ops = {"phases-d2s": ["Conv", "DepthToSpace", "Slice"],
           "phases": ["Conv", "Reshape", "Transpose", "Slice"],
           "zero-insert": ["Reshape", "Pad", "Conv", "Slice"],
           "direct": ["Conv", "Slice"],
           "dynamic": ["Slice", "Reshape", "Transpose", "Pad", "Conv"]}[form]
    variants = {"phases-d2s": ["phases-d2s", "phases-d2s-slice"],
                "phases": ["phases", "phases-slice"],
                "zero-insert": ["zero-insert", "zero-insert-slice"],
                "direct": ["conv", "conv-slice"],
                "dynamic": ["dynamic", "dynamic-pad"]}[form]
    feeds = {"x": ("real", TensorProto.FLOAT, x)}
    if form == "dynamic":
        feeds["w"] = ("real", TensorProto.FLOAT, w)
    return Case("ConvTranspose %dD %s %s" % (sp, form, mode), "conv-transpose", variants, ops,
                m, feeds, 2e-5, 1e-5)


BINARY = {
    "max-min": [("Max", "greater-where", ["Greater", "Where"]),
                ("Min", "less-where", ["Less", "Where"]),
                ("Max", "add-relu", ["Sub", "Relu", "Add"]),
                ("Min", "sub-relu", ["Sub", "Relu"])],
    "compare": [("Greater", "less", ["Less"]), ("Less", "greater", ["Greater"]),
                ("GreaterOrEqual", "less-or-equal", ["LessOrEqual"]),
                ("LessOrEqual", "greater-or-equal", ["GreaterOrEqual"]),
                ("GreaterOrEqual", "or-greater-equal", ["Greater", "Equal", "Or"]),
                ("LessOrEqual", "or-less-equal", ["Less", "Equal", "Or"]),
                ("GreaterOrEqual", "not-less", ["Less", "Not"]),
                ("LessOrEqual", "not-greater", ["Greater", "Not"]),
                ("Equal", "and-ge-le", ["GreaterOrEqual", "LessOrEqual", "And"]),
                ("Equal", "not-or-less-greater", ["Less", "Greater", "Or", "Not"]),
                ("Equal", "not-xor", ["Xor", "Not"])],
}


def binary(rng, k, pass_):
    op, variant, ops = BINARY[pass_][k % len(BINARY[pass_])]
    if variant in ("not-less", "not-greater", "not-or-less-greater"):
        dt = TensorProto.INT32
    elif variant == "not-xor":
        dt = TensorProto.BOOL
    elif variant in ("add-relu", "sub-relu"):
        dt = [TensorProto.FLOAT, TensorProto.INT32][int(rng.integers(0, 2))]
    else:
        dt = [TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64][int(rng.integers(0, 3))]
    d = [int(rng.integers(1, 4)) for _ in range(3)]
    shb = [[d[0], 1, d[2]], [d[1], 1]] if rng.integers(0, 2) else [d, d[2:]]
    mode = "special" if pass_ == "compare" and variant in (
        "less", "greater", "less-or-equal", "greater-or-equal", "or-greater-equal",
        "or-less-equal", "and-ge-le") else "real"
    opset = 14 if variant in ("add-relu", "sub-relu") and dt != TensorProto.FLOAT else 13
    out = TensorProto.BOOL if pass_ == "compare" else dt
    m = model([helper.make_node(op, ["a", "b"], ["y"])],
              [vi("a", dt, shb[0]), vi("b", dt, shb[1])], [vi("y", out, None)], opset=opset)
    tol = 6 * 2.0 ** -23 if variant in ("add-relu", "sub-relu") else 0.0
    return Case("%s %s %s" % (op, variant, TensorProto.DataType.Name(dt)), pass_, [variant],
                ops, m, {"a": (mode, dt, shb[0]), "b": (mode, dt, shb[1])}, tol)


def topk(rng, k):
    largest = k % 2 == 0
    gather = (k // 2) % 2 == 1
    dt = [TensorProto.FLOAT, TensorProto.INT32][int(rng.integers(0, 2))]
    r = int(rng.integers(1, 4))
    shape = [int(rng.integers(1, 6)) for _ in range(r)]
    axis = int(rng.integers(-r, r))
    arg = "ArgMax" if largest else "ArgMin"
    ops = [arg, "GatherElements"] if gather else [arg, "ReduceMax" if largest else "ReduceMin"]
    variant = ("argmax" if largest else "argmin") + ("-gather" if gather else
                                                      "-reducemax" if largest else "-reducemin")
    m = model([helper.make_node("TopK", ["x", "k"], ["y", "i"], axis=axis, largest=int(largest))],
              [vi("x", dt, shape)], [vi("y", dt, None), vi("i", TensorProto.INT64, None)],
              [numpy_helper.from_array(np.array([1], np.int64), "k")])
    return Case("TopK %s axis %d" % (variant, axis), "topk-arg", [variant], ops, m,
                {"x": ("ties", dt, shape)})


def cast_identity(rng, k):
    dt = [TensorProto.FLOAT, TensorProto.INT32][k % 2]
    shape = [int(rng.integers(1, 5)) for _ in range(2)]
    nodes = [helper.make_node("Relu" if dt == TensorProto.FLOAT else "Abs", ["x"], ["a"])]
    if k % 4 < 2:
        nodes.append(helper.make_node("Cast", ["a"], ["y"], to=dt))
        inits, opset = [], 13
    else:
        nodes.append(helper.make_node("CastLike", ["a", "like"], ["y"]))
        inits = [numpy_helper.from_array(np.zeros([], NP[dt]), "like")]
        opset = 15
    m = model(nodes, [vi("x", dt, shape)], [vi("y", dt, None)], inits, opset=opset)
    return Case("%s identity" % nodes[1].op_type, "eliminate-identity", [None],
                [nodes[0].op_type], m, {"x": ("real", dt, shape)})


def depth_space(rng, k):
    form = ["rank4", "onehot", "rank4", "onehot"][k % 4]
    s2d = (k // 4) % 3 == 2
    crd = (k // 4) % 3 == 1
    b = int(rng.integers(2, 4))
    if s2d:
        x = [int(rng.integers(1, 3)), int(rng.integers(1, 4)), b * int(rng.integers(1, 3)),
             b * int(rng.integers(1, 3))]
        node = helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=b)
    else:
        x = [int(rng.integers(1, 3)), b * b * int(rng.integers(1, 4)), int(rng.integers(1, 4)),
             int(rng.integers(1, 4))]
        node = helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=b,
                                mode="CRD" if crd else "DCR")
    m = model([node], [vi("x", TensorProto.FLOAT, x)], [vi("y", TensorProto.FLOAT, None)])
    if form == "rank4":
        ops, variants, mr = ["Reshape", "Transpose"], ["rank4"], 4
    else:
        ops = ["Conv"] if s2d else ["ConvTranspose"]
        variants, mr = ["conv" if s2d else "conv-transpose"], None
    return Case("%s %s" % (node.op_type, form), "depth-space", variants, ops, m,
                {"x": ("real", TensorProto.FLOAT, x)}, 0.0, 0.0, mr)


REDUCE = [("ReduceL1", "l1", ["Abs"]), ("ReduceL2", "l2", ["Mul", "Sqrt"]),
          ("ReduceLogSum", "log-sum", ["Log"]),
          ("ReduceLogSumExp", "log-sum-exp", ["ReduceMax", "Sub", "Exp", "Log", "Add"]),
          ("ReduceSumSquare", "sum-square", ["Mul"])]


def reduce(rng, k):
    op, variant, base = REDUCE[k % 5]
    mean = (k // 5) % 2 == 1
    r = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, 5)) for _ in range(r)]
    axes = sorted(set(int(rng.integers(0, r)) for _ in range(int(rng.integers(1, r + 1)))))
    m = model([helper.make_node(op, ["x"], ["y"], axes=axes, keepdims=int(rng.integers(0, 2)))],
              [vi("x", TensorProto.FLOAT, shape)], [vi("y", TensorProto.FLOAT, None)])
    ops = base + (["ReduceMean", "Mul"] if mean else ["ReduceSum"])
    return Case("%s %s" % (op, "mean" if mean else "sum"), "reduce",
                [variant + ("-mean" if mean else "")], ops, m,
                {"x": ("positive" if op == "ReduceLogSum" else "real", TensorProto.FLOAT, shape)},
                1e-5, 1e-5)


def mean_sum(rng, k):
    op = ["ReduceMean", "ReduceSum"][k % 2]
    r = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, 5)) for _ in range(r)]
    axes = sorted(set(int(rng.integers(0, r)) for _ in range(int(rng.integers(1, r + 1)))))
    inits, names, attrs = [], ["x"], {"keepdims": int(rng.integers(0, 2))}
    if op == "ReduceSum":
        inits.append(numpy_helper.from_array(np.array(axes, np.int64), "axes"))
        names.append("axes")
    else:
        attrs["axes"] = axes
    m = model([helper.make_node(op, names, ["y"], **attrs)], [vi("x", TensorProto.FLOAT, shape)],
              [vi("y", TensorProto.FLOAT, None)], inits)
    variant, ops = ("sum-div", ["ReduceSum", "Div"]) if op == "ReduceMean" else \
        ("mean-mul", ["ReduceMean", "Mul"])
    return Case(op, "reduce-mean-sum", [variant], ops, m, {"x": ("real", TensorProto.FLOAT, shape)},
                1e-5, 1e-5)


def lp_norm(rng, k):
    p = 1 + k % 2
    mean = (k // 2) % 2 == 1
    r = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, 5)) for _ in range(r)]
    axis = int(rng.integers(-r, r))
    m = model([helper.make_node("LpNormalization", ["x"], ["y"], p=p, axis=axis)],
              [vi("x", TensorProto.FLOAT, shape)], [vi("y", TensorProto.FLOAT, None)])
    ops = (["Abs"] if p == 1 else ["Mul", "Sqrt"]) + ["Div"] + \
        (["ReduceMean", "Mul"] if mean else ["ReduceSum"])
    variant = "l%d%s" % (p, "-mean" if mean else "")
    return Case("LpNormalization %s" % variant, "lp-norm", [variant], ops, m,
                {"x": ("real", TensorProto.FLOAT, shape)}, 1e-6, 1e-5)


def group_norm(rng, k):
    r = int(rng.integers(3, 5))
    g = int(rng.integers(1, 4))
    shape = [int(rng.integers(1, 3)), g * int(rng.integers(1, 3))] + \
        [int(rng.integers(1, 5)) for _ in range(r - 2)]
    sc = rng.uniform(-1, 1, [g]).astype(np.float32)
    bi = rng.uniform(-1, 1, [g]).astype(np.float32)
    m = model([helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=g,
                                epsilon=1e-5)],
              [vi("x", TensorProto.FLOAT, shape)], [vi("y", TensorProto.FLOAT, None)],
              [numpy_helper.from_array(sc, "s"), numpy_helper.from_array(bi, "b")], opset=18)
    ops = ["Reshape", "ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div", "Unsqueeze"]
    return Case("GroupNormalization", "group-norm", ["mean-var"], ops, m,
                {"x": ("real", TensorProto.FLOAT, shape)}, 1e-5, 1e-5)


def gather(rng, k):
    r = int(rng.integers(1, 4))
    shape = [int(rng.integers(1, 4)) for _ in range(r)]
    axis = int(rng.integers(0, r))
    scalar = k % 2 == 0
    if scalar:
        idx = np.array(int(rng.integers(-shape[axis], shape[axis])), np.int64)
    else:
        step = int(rng.choice([1, 2, -1, -2]))
        n = int(rng.integers(1, 4))
        shape[axis] = max(shape[axis], (n - 1) * abs(step) + 1)
        first = int(rng.integers(0, shape[axis] - (n - 1) * abs(step)))
        if step < 0:
            first += (n - 1) * abs(step)
        idx = np.array([first + i * step for i in range(n)], np.int64)
    m = model([helper.make_node("Gather", ["x", "i"], ["y"], axis=axis - r * int(rng.integers(0, 2)))],
              [vi("x", TensorProto.FLOAT, shape)], [vi("y", TensorProto.FLOAT, None)],
              [numpy_helper.from_array(idx, "i")])
    ops = ["Slice", "Squeeze"] if scalar else ["Slice"]
    return Case("Gather %s" % idx.tolist(), "gather-slice", ["slice-squeeze" if scalar else "slice"],
                ops, m, {"x": ("real", TensorProto.FLOAT, shape)})


def clip(rng, k):
    """An absent bound of float data is the dtype's limit (inf is clamped):
    float Clip always becomes Max and Min, or Relu and Min; on integers the
    absent bound's op is left out."""
    form = ["relu-min", "relu", "max-min", "max", "min"][k % 5]
    dt = TensorProto.FLOAT if k % 10 < 5 else TensorProto.INT32
    shape = [int(rng.integers(1, 5)) for _ in range(2)]
    lo = 0 if form.startswith("relu") else int(rng.integers(-3, 1))
    hi = int(rng.integers(-1, 4))
    inits, names = [], ["x", "", ""]
    if form in ("relu-min", "relu", "max-min", "max"):
        inits.append(numpy_helper.from_array(np.array(lo, NP[dt]), "lo"))
        names[1] = "lo"
    if form in ("relu-min", "max-min", "min"):
        inits.append(numpy_helper.from_array(np.array(hi, NP[dt]), "hi"))
        names[2] = "hi"
    while names[-1] == "":
        names.pop()
    m = model([helper.make_node("Clip", names, ["y"])], [vi("x", dt, shape)], [vi("y", dt, None)],
              inits, opset=14)
    if dt == TensorProto.FLOAT:
        variant = "relu-min" if form.startswith("relu") else "max-min"
    else:
        variant = form
    ops = {"relu-min": ["Relu", "Min"], "relu": ["Relu"], "max-min": ["Max", "Min"],
           "max": ["Max"], "min": ["Min"]}[variant]
    return Case("Clip %s %s" % (form, TensorProto.DataType.Name(dt)), "clip", [variant], ops, m,
                {"x": ("special" if dt == TensorProto.FLOAT else "real", dt, shape)})


UNARY = [("Sigmoid", "sigmoid", "exp", ["Sub", "Exp", "Add", "Div"], "wide", 2e-7, 1e-6),
         ("Sigmoid", "sigmoid", "tanh", ["Mul", "Tanh", "Add"], "wide", 2e-7, 1e-6),
         ("Tanh", "tanh", "sigmoid", ["Mul", "Sigmoid", "Sub"], "wide", 4e-7, 0.0),
         ("Tanh", "tanh", "exp", ["Mul", "Exp", "Add", "Div", "Sub"], "wide", 4e-7, 0.0),
         ("Neg", "neg", "mul", ["Mul"], "special", 0.0, 0.0),
         ("Sign", "sign", "compare", ["Greater", "Less", "Cast", "Sub"], "real", 0.0, 0.0),
         ("Sign", "sign", "where", ["Greater", "Less", "Where"], "real", 0.0, 0.0),
         ("Softplus", "softplus", "stable", ["Relu", "Abs", "Neg", "Exp", "Add", "Log"], "wide",
          1e-6, 1e-6),
         ("Softplus", "softplus", "direct", ["Exp", "Add", "Log"], "real", 1e-6, 1e-6),
         ("Softsign", "softsign", "div", ["Abs", "Add", "Div"], "wide", 1e-7, 1e-6),
         ("ThresholdedRelu", "thresholded-relu", "where", ["Greater", "Where"], "special", 0.0,
          0.0),
         ("ThresholdedRelu", "thresholded-relu", "cast-mul", ["Greater", "Cast", "Mul"], "real",
          0.0, 0.0),
         ("Mish", "mish", "stable", ["Relu", "Abs", "Neg", "Exp", "Add", "Log", "Tanh", "Mul"],
          "wide", 1e-6, 1e-5)]


def unary(rng, k):
    op, pass_, variant, ops, mode, atol, rtol = UNARY[k % len(UNARY)]
    dt = TensorProto.FLOAT
    if op == "Sign" and k % 2:
        dt = TensorProto.UINT8
    shape = [int(rng.integers(1, 6)) for _ in range(int(rng.integers(1, 4)))]
    attrs = {"alpha": float(rng.uniform(-1, 2))} if op == "ThresholdedRelu" else {}
    m = model([helper.make_node(op, ["x"], ["y"], **attrs)], [vi("x", dt, shape)],
              [vi("y", dt, None)], opset=18 if op == "Mish" else 14)
    return Case("%s %s" % (op, variant), pass_, [variant], ops, m, {"x": (mode, dt, shape)},
                atol, rtol)


def expand(rng, k):
    a, b = int(rng.integers(1, 5)), int(rng.integers(2, 5))
    dt = [TensorProto.FLOAT, TensorProto.INT32][k % 2]
    if k % 4 < 2:
        shape, node = [a, 1], helper.make_node("Expand", ["x", "s"], ["y"])
        init = numpy_helper.from_array(np.array([2, a, b], np.int64), "s")
    else:
        shape, node = [1, a, 1], helper.make_node("Tile", ["x", "s"], ["y"])
        init = numpy_helper.from_array(np.array([2, 1, b], np.int64), "s")
    m = model([node], [vi("x", dt, shape)], [vi("y", dt, None)], [init])
    return Case("%s mul-ones" % node.op_type, "expand-tile", ["mul-ones"], ["Mul"], m,
                {"x": ("special" if dt == TensorProto.FLOAT else "real", dt, shape)})


LOSS_FORMS = {"gather-elements": ["Unsqueeze", "Equal", "Where", "Gather", "GatherElements",
                                   "ReduceSum", "Mul", "Neg"],
              "gather-elements-flat": ["Unsqueeze", "Flatten", "Squeeze", "Reshape", "Equal",
                                       "Where", "Gather", "GatherElements", "ReduceSum", "Mul",
                                       "Neg"],
              "onehot-equal": ["Unsqueeze", "Equal", "Cast", "Mul", "ReduceSum", "Neg"],
              "onehot-arith": ["Unsqueeze", "Cast", "Sub", "Mul", "Relu", "ReduceSum", "Neg"]}


def loss(rng, k):
    """NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss in each form,
    every reduction, weights or not, ignore_index inside or outside [0, C)."""
    form = ["gather-elements", "onehot-equal", "onehot-arith"][k % 3]
    sce = (k // 3) % 2 == 1
    red = ["none", "sum", "mean", None][int(rng.integers(0, 4))]
    r = int(rng.integers(2, 6))
    opset = [12, 13, 13 if sce else 22][int(rng.integers(0, 3))]
    c = int(rng.integers(2, 6))
    x = [int(rng.integers(1, 4)), c] + [int(rng.integers(1, 4)) for _ in range(r - 2)]
    t = [x[0]] + x[2:]
    tdt = [TensorProto.INT64, TensorProto.INT32][int(rng.integers(0, 2))]
    attrs = {}
    if red:
        attrs["reduction"] = red
    ig = [None, int(rng.integers(0, c)), int(rng.integers(-100, 0)),
          int(rng.integers(c, c + 20))][int(rng.integers(0, 4))]
    if ig is not None:
        attrs["ignore_index"] = ig
    names, ins = ["x", "t"], [vi("x", TensorProto.FLOAT, x), vi("t", tdt, t)]
    feeds = {"x": ("real", TensorProto.FLOAT, x), "t": (("classes", c, ig), tdt, t)}
    if rng.integers(0, 2):
        names.append("w")
        ins.append(vi("w", TensorProto.FLOAT, [c]))
        feeds["w"] = ("positive", TensorProto.FLOAT, [c])
    logp = sce and rng.integers(0, 2) == 1
    outs = [vi("y", TensorProto.FLOAT, None)] + ([vi("lp", TensorProto.FLOAT, None)] if logp else [])
    op = "SoftmaxCrossEntropyLoss" if sce else "NegativeLogLikelihoodLoss"
    m = model([helper.make_node(op, names, [o.name for o in outs], **attrs)], ins, outs,
              opset=opset)
    mean = red in ("mean", None)
    moved = sce and opset < 13 and r > 2
    if form == "gather-elements" and r > 2:
        form = "gather-elements-flat"
    ops = LOSS_FORMS[form] + (["Div"] if mean else []) + (["LogSoftmax"] if sce else []) + \
        (["Transpose"] if moved else [])
    variant = ("last-" if moved else "") + form + ("-mean" if mean else "")
    return Case("%s %s rank %d %s ignore %s opset %d" % (op, variant, r, red, ig, opset),
                "sce-loss" if sce else "nll-loss", [variant], ops, m, feeds, 1e-5, 1e-5)


def layer_norm_stats(rng, k):
    """LayerNormalization with its Mean and/or InvStdDev outputs read."""
    r = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, 5)) for _ in range(r)]
    axis = int(rng.integers(-r, r))
    tail = shape[axis % r:]
    outs = ["y", ["mean", "", "mean"][k % 3], ["inv", "inv", ""][k % 3]]
    while outs[-1] == "":
        outs.pop()
    inits = [numpy_helper.from_array(rng.uniform(0.5, 1.5, tail).astype(np.float32), "s"),
             numpy_helper.from_array(rng.uniform(-1, 1, tail).astype(np.float32), "b")]
    m = model([helper.make_node("LayerNormalization", ["x", "s", "b"], outs, axis=axis,
                                epsilon=float(rng.choice([1e-5, 0.1])))],
              [vi("x", TensorProto.FLOAT, shape)],
              [vi(o, TensorProto.FLOAT, None) for o in outs if o], inits, opset=17)
    return Case("LayerNormalization axis %d outputs %s" % (axis, outs), "layer-norm",
                ["mean-var"], ["ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div"], m,
                {"x": ("real", TensorProto.FLOAT, shape)}, 1e-5, 1e-5)


def cast_like(rng, k):
    """CastLike to another dtype as Cast."""
    pairs = [(TensorProto.FLOAT, TensorProto.INT32), (TensorProto.INT32, TensorProto.FLOAT),
             (TensorProto.FLOAT, TensorProto.INT64), (TensorProto.INT64, TensorProto.FLOAT),
             (TensorProto.FLOAT, TensorProto.BOOL), (TensorProto.UINT8, TensorProto.FLOAT)]
    src, dst = pairs[k % len(pairs)]
    shape = [int(rng.integers(1, 5)) for _ in range(2)]
    m = model([helper.make_node("CastLike", ["x", "like"], ["y"])], [vi("x", src, shape)],
              [vi("y", dst, None)], [numpy_helper.from_array(np.zeros([1], NP[dst]), "like")],
              opset=[15, 19, 21][k % 3])
    return Case("CastLike %s to %s" % (TensorProto.DataType.Name(src),
                                        TensorProto.DataType.Name(dst)),
                "cast-like", ["cast"], ["Cast"], m, {"x": ("wide", src, shape)})


def reduce_pool(rng, k):
    """ReduceMax/ReduceMin as MaxPool: contiguous axes, or not (Transpose)."""
    op = ["ReduceMax", "ReduceMin"][k % 2]
    r = int(rng.integers(1, 6))
    shape = [int(rng.integers(1, 5)) for _ in range(r)]
    axes = sorted(set(int(rng.integers(0, r)) for _ in range(int(rng.integers(1, r + 1)))))
    opset = [13, 18][(k // 2) % 2]
    inits, names, attrs = [], ["x"], {"keepdims": int(rng.integers(0, 2))}
    if opset >= 18:
        inits.append(numpy_helper.from_array(np.array(axes, np.int64), "axes"))
        names.append("axes")
    else:
        attrs["axes"] = axes
    m = model([helper.make_node(op, names, ["y"], **attrs)], [vi("x", TensorProto.FLOAT, shape)],
              [vi("y", TensorProto.FLOAT, None)], inits, opset=opset)
    gap = axes[-1] - axes[0] + 1 != len(axes)
    ops = ["Reshape", "MaxPool"] + (["Neg"] if op == "ReduceMin" else []) + \
        (["Transpose"] if gap else [])
    variant = ("min-neg-pool" if op == "ReduceMin" else "max-pool") + ("-transpose" if gap else "")
    return Case("%s axes %s of %s" % (op, axes, shape), "reduce-max-pool", [variant], ops, m,
                {"x": ("ties" if k % 3 == 0 else "real", TensorProto.FLOAT, shape)})


def arg_max_min(rng, k):
    """ArgMax/ArgMin by Equal or by the clipped arithmetic hit."""
    op = ["ArgMax", "ArgMin"][k % 2]
    arith = (k // 2) % 2 == 1
    dt = TensorProto.FLOAT if arith or k % 3 else TensorProto.INT32
    r = int(rng.integers(1, 5))
    shape = [int(rng.integers(1, 6)) for _ in range(r)]
    attrs = {"axis": int(rng.integers(-r, r)), "keepdims": int(rng.integers(0, 2)),
             "select_last_index": int(rng.integers(0, 2))}
    m = model([helper.make_node(op, ["x"], ["y"], **attrs)], [vi("x", dt, shape)],
              [vi("y", TensorProto.INT64, None)])
    red = ["ReduceMax"] + (["ReduceMin"] if op == "ArgMin" else [])
    ops = red + (["Sub", "Mul", "Clip", "Cast"] if arith else ["Equal", "Cast", "Mul", "Sub"])
    variant = op.lower() + ("-arith" if arith else "-equal")
    return Case("%s %s %s" % (variant, attrs, TensorProto.DataType.Name(dt)), "arg-max-min",
                [variant], ops, m, {"x": ("ties" if k % 4 < 2 else "wide", dt, shape)})


def trilu(rng, k):
    """Trilu with k constant or an input, integer or float data, by Where,
    Mul, GreaterOrEqual or the clipped mask."""
    form = ["where", "mul-int", "where-k", "mul-k-int", "clip-k", "clip-k-int"][k % 6]
    dt = TensorProto.INT64 if form.endswith("-int") else TensorProto.FLOAT
    r = int(rng.integers(2, 5))
    shape = [int(rng.integers(1, 6)) for _ in range(r)]
    kv = int(rng.integers(-3, 4))
    ins, inits, names = [vi("x", dt, shape)], [], ["x"]
    if "-k" in form:
        ins.append(vi("k", TensorProto.INT64, []))
        names.append("k")
    elif rng.integers(0, 2):
        inits.append(numpy_helper.from_array(np.array(kv, np.int64), "k"))
        names.append("k")
    m = model([helper.make_node("Trilu", names, ["y"], upper=int(rng.integers(0, 2)))], ins,
              [vi("y", dt, None)], inits, opset=14)
    ops = {"where": ["Where"], "mul-int": ["Mul"], "where-k": ["GreaterOrEqual", "Where"],
           "mul-k-int": ["GreaterOrEqual", "Cast", "Mul"], "clip-k": ["Cast", "Sub", "Clip", "Mul"],
           "clip-k-int": ["Cast", "Sub", "Clip", "Mul"]}[form]
    feeds = {"x": ("special" if dt == TensorProto.FLOAT and form == "where" else "real", dt,
                   shape)}
    if "k" in names and not inits:
        feeds["k"] = (("ints", -4, 4), TensorProto.INT64, [])
    return Case("Trilu %s %s" % (form, shape), "trilu", [form], ops, m, feeds)


def gather_elements(rng, k):
    """GatherElements as a one-hot sum, by Equal or arithmetic, float or
    integer data, negative indices."""
    form = ["onehot-equal", "onehot-equal-int", "onehot-arith", "onehot-arith-int"][k % 4]
    dt = TensorProto.INT64 if form.endswith("-int") else TensorProto.FLOAT
    r = int(rng.integers(1, 5))
    d = [int(rng.integers(1, 5)) for _ in range(r)]
    axis = int(rng.integers(0, r))
    ix = list(d)
    ix[axis] = int(rng.integers(1, 6))
    m = model([helper.make_node("GatherElements", ["x", "i"], ["y"],
                                axis=axis - r * int(rng.integers(0, 2)))],
              [vi("x", dt, d), vi("i", TensorProto.INT64, ix)], [vi("y", dt, None)])
    ops = ["Unsqueeze", "Cast", "Add", "Mul", "ReduceSum"] + \
        (["Equal"] if "equal" in form else ["Sub", "Relu"])
    return Case("GatherElements %s axis %d of %s" % (form, axis, d), "gather-elements", [form],
                ops, m, {"x": ("real", dt, d),
                         "i": (("ints", -d[axis], d[axis] - 1), TensorProto.INT64, ix)})


def mod_int(rng, k):
    """Mod of int32/int64 data, fmod 0 and 1, by Div."""
    fmod = k % 2
    dt = [TensorProto.INT32, TensorProto.INT64][(k // 2) % 2]
    d = [int(rng.integers(1, 5)) for _ in range(3)]
    shb = d[2:] if rng.integers(0, 2) else d
    m = model([helper.make_node("Mod", ["a", "b"], ["y"], fmod=fmod)],
              [vi("a", dt, d), vi("b", dt, shb)], [vi("y", dt, None)])
    ops = ["Div", "Mul", "Sub"] + ([] if fmod else ["Clip"])
    return Case("Mod fmod %d %s" % (fmod, TensorProto.DataType.Name(dt)), "mod-int",
                ["trunc" if fmod else "floor"], ops, m,
                {"a": (("ints", -1000, 1000), dt, d), "b": (("nonzero", 9), dt, shb)},
                validate=False)


def matmul_nbits(rng, k):
    """com.microsoft MatMulNBits (constant B, scales, zero points) as
    MatMul on the dequantized weights, plus Add of the bias."""
    import llm_ops_ort
    bits, bs = [4, 8, 2][k % 3], [16, 32, 64, 128][k % 4]
    zp = ["none", "packed", "float"][k // 3 % 3] if bits == 4 else ["none", "packed"][k // 3 % 2]
    kd = int(rng.integers(1, 4)) * bs + int(rng.integers(0, bs))
    n = int(rng.integers(1, 24))
    shape = [[3], [2, 3], [1, 2, 2]][k % 3]
    c = llm_ops_ort.matmul_nbits_case(rng, bits, bs, kd, n, shape, zp, bias=k % 2 == 0)
    # A in [-3, 3]: |Y| stays below sum |a| |w| <~ 3 K 2^bits 0.05; both
    # sum K float32 products
    return Case("MatMulNBits bits %d block %d K %d N %d zp %s bias %d" %
                (bits, bs, kd, n, zp, k % 2 == 0), "matmul-nbits", ["dequantized"],
                ["MatMul", "Add"], c.model,
                {"A": ("real", TensorProto.FLOAT, shape + [kd])}, 2e-4, 1e-4)


def matmul_nbits_dq(rng, k):
    """MatMulNBits in an opset 21 model, for a target with
    DequantizeLinear: the codes kept as uint4/uint8, blocked along K."""
    import llm_ops_ort
    bits, bs = [4, 8, 2][k % 3], [16, 32, 64, 128][k % 4]
    zp = ["none", "packed"][k // 3 % 2]
    kd = int(rng.integers(1, 4)) * bs + int(rng.integers(0, bs))
    n = int(rng.integers(1, 24))
    shape = [[3], [2, 3], [1, 2, 2]][k % 3]
    c = llm_ops_ort.matmul_nbits_case(rng, bits, bs, kd, n, shape, zp, bias=k % 2 == 0,
                                      opset=21)
    return Case("MatMulNBits opset 21 bits %d block %d K %d N %d zp %s bias %d" %
                (bits, bs, kd, n, zp, k % 2 == 0), "matmul-nbits", ["dequantize-linear"],
                ["DequantizeLinear", "MatMul", "Add"], c.model,
                {"A": ("real", TensorProto.FLOAT, shape + [kd])}, 2e-4, 1e-4,
                keeps=["DequantizeLinear"])


def skip_simplified(rng, k):
    """com.microsoft SkipSimplifiedLayerNormalization as Add then the RMS
    form of layer-norm (its sum output read or not, bias or not)."""
    import llm_ops_ort
    shape = [[2, 3, 16], [4, 32], [1, 2, 8]][k % 3]
    outs = [(0,), (0, 3)][k % 2]
    c = llm_ops_ort.skip_norm_case(rng, shape, None, k % 3 != 1, outs,
                                   eps=float(rng.choice([1e-6, 0.1])))
    return Case("SkipSimplifiedLayerNormalization %s outputs %s" % (shape, outs),
                "skip-layer-norm", ["rms"], ["ReduceMean", "Mul", "Add", "Sqrt", "Div"],
                c.model, {"x": ("real", TensorProto.FLOAT, shape),
                          "skip": ("real", TensorProto.FLOAT, shape)}, 1e-5, 1e-5)


BUILDERS = [(conv_transpose, 40), (lambda r, k: binary(r, k, "max-min"), 12),
            (lambda r, k: binary(r, k, "compare"), 22), (topk, 12), (cast_identity, 4),
            (depth_space, 12), (reduce, 20), (mean_sum, 6), (lp_norm, 8), (group_norm, 4),
            (gather, 10), (clip, 10), (unary, 24), (expand, 4), (loss, 30),
            (layer_norm_stats, 6), (cast_like, 6), (reduce_pool, 12),
            (arg_max_min, 16), (trilu, 12), (gather_elements, 8), (mod_int, 8),
            (matmul_nbits, 12), (skip_simplified, 6), (matmul_nbits_dq, 8)]


# ---- the run -------------------------------------------------------------------

def rules_for(work, case):
    ops = {op: {} for op in case.ops}
    key = "-".join(sorted(case.ops)) + ("-r%d" % case.max_rank if case.max_rank else "")
    ident = "t-%08x" % zlib.crc32(key.encode())
    path = os.path.join(work, ident + ".json")
    if not os.path.exists(path):
        doc = {"schema": 1, "id": ident, "sources": ["tests/ort/lowerings.py"], "ops": ops}
        if case.max_rank:
            doc["max_rank"] = case.max_rank
        with open(path, "w") as f:
            json.dump(doc, f)
    return path, ident


def agree(case, got, want):
    if got.shape != want.shape or got.dtype != want.dtype:
        return "shape/dtype %s %s, want %s %s" % (got.shape, got.dtype, want.shape, want.dtype)
    if want.dtype.kind != "f":
        bad = np.argwhere(got != want)
    else:
        g, w = got.astype(np.float64), want.astype(np.float64)
        nan = np.isnan(g) | np.isnan(w)
        with np.errstate(invalid="ignore"):
            close = (g == w) | (np.abs(g - w) <= case.atol + case.rtol * np.abs(w))
        bad = np.argwhere(~np.where(nan, np.isnan(g) & np.isnan(w), close))
    if len(bad):
        i = tuple(bad[0])
        return "element %s is %r, want %r" % (list(i), got[i], want[i])
    return None


def main():
    opmig, work = sys.argv[1], sys.argv[2]
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 2027
    why = ortlib.available()
    if why:
        print("notice: %s: skipped" % why)
        return 77
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(seed)
    cases, jobs, fails, counts = [], [], [], {}
    n = 0
    for build, count in BUILDERS:
        for k in range(count):
            case = build(rng, k)
            n += 1
            src = os.path.join(work, "m%03d.onnx" % n)
            out = os.path.join(work, "m%03d.out.onnx" % n)
            rep = os.path.join(work, "m%03d.json" % n)
            onnx.save(case.model, src)
            rules, ident = rules_for(work, case)
            cmd = [opmig, "migrate", src, "--rules", rules, "--target", ident, "-o", out,
                   "--format", "json", "--report", rep]
            if case.variants != [None]:
                cmd[3:3] = ["--passes", case.pass_]
            if not case.validate:
                cmd.append("--no-validate")
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            where = "m%03d (%s)" % (n, case.name)
            if p.returncode != 0:
                fails.append("%s: migrate exited %d: %s %s" % (where, p.returncode,
                                                              p.stderr.strip()[:300],
                                                              open(rep).read()[:600]
                                                              if os.path.exists(rep) else ""))
                continue
            r = json.load(open(rep))
            made = [(x["pass"], x["variant"]) for x in r["rewrites"] if x["pass"] == case.pass_]
            if not made or any(v not in case.variants for _, v in made):
                fails.append("%s: rewrites %s, want %s %s" % (where, r["rewrites"], case.pass_,
                                                              case.variants))
                continue
            for _, v in made:
                counts[(case.pass_, v)] = counts.get((case.pass_, v), 0) + 1
            m = onnx.load(out)
            lost = [op for op in case.keeps if all(x.op_type != op for x in m.graph.node)]
            if lost:
                fails.append("%s: the migrated model lost its %s" % (where, ", ".join(lost)))
                continue
            opset = max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))
            if opset <= 17:
                try:
                    onnx.checker.check_model(m, full_check=True)
                except Exception as e:  # the checker's own exception types vary
                    fails.append("%s: checker: %s" % (where, str(e).splitlines()[0]))
                    continue
            feeds = {name: draw(rng, dt, shape, mode)
                     for name, (mode, dt, shape) in case.feeds.items()}
            cases.append((where, case))
            jobs += [(src, feeds), (out, feeds)]
    res = ortlib.run_many(jobs, os.path.join(work, "ort"), timeout=600)
    for i, (where, case) in enumerate(cases):
        want, got = res[2 * i], res[2 * i + 1]
        if isinstance(want, str):
            fails.append("%s: onnxruntime refused the original: %s" % (where, want[:200]))
            continue
        if isinstance(got, str):
            fails.append("%s: onnxruntime refused the migrated model: %s" % (where, got[:200]))
            continue
        for j, (g, w) in enumerate(zip(got, want)):
            msg = agree(case, g, w)
            if msg:
                fails.append("%s: output %d: %s" % (where, j, msg))
    for (p, v), c in sorted(counts.items()):
        print("%-16s %-22s %d" % (p, v, c))
    print("%d models, %d compared in onnxruntime %s, %d failures" %
          (n, len(cases), ortlib.version(), len(fails)))
    for f in fails[:20]:
        print("FAIL " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
