#!/usr/bin/python3
"""make_testdata.py: writes opmig's generated test models.

Owns testdata/sample.onnx, testdata/models/, testdata/ext/ and testdata/bad/
(see testdata/README.md).  Deterministic: fixed seeds, no timestamps, so a
re-run gives byte-identical files.  Run with /usr/bin/python3 (onnx 1.12):
    /usr/bin/python3 testdata/gen/make_testdata.py
Defects the onnx Python API refuses to build are written as raw protobuf
bytes with the small encoder below.
"""

import os
import random
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.onnx_ml_pb2 import (AttributeProto, GraphProto, ModelProto,
                              SparseTensorProto, TypeProto)

DATA = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRODUCER = ("opmig-testdata", "1")
IR_VERSION = 8
T = TensorProto

# ---- raw protobuf encoder ---------------------------------------------------

WT_VARINT, WT_I64, WT_LEN, WT_I32 = 0, 1, 2, 5


def pb_varint(n):
    """Base-128 varint; negative numbers as 64-bit two's complement."""
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def pb_key(field, wt):
    return pb_varint((field << 3) | wt)


def pb_int(field, n):
    return pb_key(field, WT_VARINT) + pb_varint(n)


def pb_bytes(field, b):
    if isinstance(b, str):
        b = b.encode("utf-8")
    return pb_key(field, WT_LEN) + pb_varint(len(b)) + b


def pb_fixed32(field, n):
    return pb_key(field, WT_I32) + struct.pack("<I", n)


def pb_fixed64(field, n):
    return pb_key(field, WT_I64) + struct.pack("<Q", n)


# ---- small helpers ----------------------------------------------------------


def finish(graph, opsets, doc=None, functions=None, metadata=None, **kw):
    m = helper.make_model(graph, opset_imports=[
        helper.make_opsetid(d, v) for d, v in opsets],
        producer_name=PRODUCER[0], producer_version=PRODUCER[1],
        functions=functions or [], **kw)
    m.ir_version = IR_VERSION
    if doc:
        m.doc_string = doc
    for k, v in (metadata or []):
        e = m.metadata_props.add()
        e.key, e.value = k, v
    return m


def check(m, full=True):
    onnx.checker.check_model(m)
    if full:
        onnx.shape_inference.infer_shapes(m, check_type=True,
                                          strict_mode=True)


def write(path, data):
    path = os.path.join(DATA, path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if isinstance(data, ModelProto):
        data = data.SerializeToString()
    with open(path, "wb") as f:
        f.write(data)
    return path


def symlink(target, path):
    path = os.path.join(DATA, path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.lexists(path):
        os.unlink(path)
    os.symlink(target, path)


def vi(name, elem, shape, doc=None):
    v = helper.make_tensor_value_info(name, elem, shape)
    if doc:
        v.doc_string = doc
    return v


def node(op, ins, outs, name, doc=None, domain=None, **attrs):
    n = helper.make_node(op, ins, outs, name=name, doc_string=doc,
                         domain=domain, **attrs)
    return n


# ---- sample.onnx --------------------------------------------------------------


def make_sample():
    rng = np.random.RandomState(1301)

    def w(shape, fan_in):
        return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)

    mean = np.array([0.485, 0.456, 0.406], np.float32).reshape(1, 3, 1, 1)
    std = np.array([0.229, 0.224, 0.225], np.float32).reshape(1, 3, 1, 1)
    fn = helper.make_function(
        "com.opmig.sample", "Normalize", ["X"], ["Y"], [
            node("Constant", [], ["mean"], "mean",
                 value=numpy_helper.from_array(mean, "mean")),
            node("Constant", [], ["std"], "std",
                 value=numpy_helper.from_array(std, "std")),
            node("Sub", ["X", "mean"], ["centered"], "sub"),
            node("Div", ["centered", "std"], ["Y"], "div"),
        ], [helper.make_opsetid("", 13)],
        doc_string="per-channel (x - mean) / std with ImageNet statistics")

    inits = [
        numpy_helper.from_array(w((8, 3, 3, 3), 27), "conv1.weight"),
        numpy_helper.from_array(w((8,), 27), "conv1.bias"),
        numpy_helper.from_array(w((16, 8, 3, 3), 72), "conv2.weight"),
        numpy_helper.from_array(w((16,), 72), "conv2.bias"),
        numpy_helper.from_array(w((10, 16), 16), "fc.weight"),
        numpy_helper.from_array(w((10,), 16), "fc.bias"),
        numpy_helper.from_array(np.array(0, np.int64), "batch_axis"),
        numpy_helper.from_array(np.array([0], np.int64), "unsqueeze_axes"),
        numpy_helper.from_array(np.array([10], np.int64), "num_classes"),
        numpy_helper.from_array(np.array(True), "return_probs"),
    ]
    inits[0].doc_string = "first convolution, 3 -> 8 channels"

    then_g = helper.make_graph(
        [node("Identity", ["probs"], ["then_out"], "then_identity")],
        "then_branch", [], [vi("then_out", T.FLOAT, ["N", 10])],
        doc_string="probabilities (captures outer 'probs')")
    else_g = helper.make_graph(
        [node("Identity", ["logits2"], ["else_out"], "else_identity")],
        "else_branch", [], [vi("else_out", T.FLOAT, ["N", 10])],
        doc_string="raw logits (captures outer 'logits2')")

    nodes = [
        node("Normalize", ["image"], ["x"], "normalize",
             domain="com.opmig.sample", doc="model-local function"),
        node("Conv", ["x", "conv1.weight", "conv1.bias"], ["c1"], "conv1",
             kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1],
             doc="3x3 convolution"),
        node("Relu", ["c1"], ["r1"], "relu1"),
        node("MaxPool", ["r1"], ["p1"], "pool1", kernel_shape=[2, 2],
             strides=[2, 2]),
        node("Conv", ["p1", "conv2.weight", "conv2.bias"], ["c2"], "conv2",
             kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        node("Relu", ["c2"], ["r2"], "relu2"),
        node("GlobalAveragePool", ["r2"], ["gap"], "gap"),
        node("Flatten", ["gap"], ["flat"], "flatten", axis=1),
        node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"], "fc",
             alpha=1.0, beta=1.0, transB=1),
        node("Shape", ["image"], ["image_shape"], "shape",
             doc="exporter-style dynamic batch size"),
        node("Gather", ["image_shape", "batch_axis"], ["batch"], "gather",
             axis=0),
        node("Unsqueeze", ["batch", "unsqueeze_axes"], ["batch1"],
             "unsqueeze"),
        node("Concat", ["batch1", "num_classes"], ["out_shape"], "concat",
             axis=0),
        node("Reshape", ["logits", "out_shape"], ["logits2"], "reshape"),
        node("Softmax", ["logits2"], ["probs"], "softmax", axis=1),
        node("If", ["return_probs"], ["scores"], "select",
             then_branch=then_g, else_branch=else_g,
             doc="probabilities or logits"),
    ]
    g = helper.make_graph(
        nodes, "tiny_classifier",
        [vi("image", T.FLOAT, ["N", 3, 32, 32], doc="RGB image, 32x32")],
        [vi("scores", T.FLOAT, ["N", 10], doc="class scores")],
        initializer=inits,
        doc_string="a small CIFAR-style classifier with random weights",
        value_info=[vi("x", T.FLOAT, ["N", 3, 32, 32]),
                    vi("logits2", T.FLOAT, ["N", 10])])
    m = finish(g, [("", 13), ("com.opmig.sample", 1)],
               doc="opmig's sample model (made by testdata/gen)",
               functions=[fn],
               metadata=[("author", "opmig developers"),
                         ("license", "CC0-1.0"),
                         ("description", "sample for 'make demo'")])
    m.domain = "org.opmig.testdata"
    m.model_version = 1
    check(m)
    return m, then_g


# ---- models/ --------------------------------------------------------------------

# name, dtype, values, typed field name, numpy dtype of raw bytes
DTYPES = [
    ("float", T.FLOAT, [0.0, -0.0, 1.5, -3.25, float("inf"), float("-inf"),
                        float("nan"), 1e-45, 3.4028235e38]),
    ("float16", T.FLOAT16, [0.0, -0.0, 1.0, -2.5, 65504.0, 6e-8,
                            float("inf"), float("nan")]),
    ("bfloat16", T.BFLOAT16, [0.0, 1.0, -2.5, 3.0e38, float("-inf")]),
    ("double", T.DOUBLE, [0.0, -1.0, 2.0 ** -1074, 1.7976931348623157e308,
                          float("nan")]),
    ("int8", T.INT8, [-128, -1, 0, 1, 127]),
    ("uint8", T.UINT8, [0, 1, 128, 255]),
    ("int16", T.INT16, [-32768, -1, 0, 32767]),
    ("uint16", T.UINT16, [0, 1, 32768, 65535]),
    ("int32", T.INT32, [-2 ** 31, -1, 0, 2 ** 31 - 1]),
    ("uint32", T.UINT32, [0, 1, 2 ** 31, 2 ** 32 - 1]),
    ("int64", T.INT64, [-2 ** 63, -1, 0, 2 ** 63 - 1]),
    ("uint64", T.UINT64, [0, 1, 2 ** 63, 2 ** 64 - 1]),
    ("bool", T.BOOL, [True, False, True]),
    ("string", T.STRING, [b"", b"opmig", "h\u00e9llo".encode(), b"a\x00b"]),
    ("complex64", T.COMPLEX64, [complex(1, -1), complex(0, 0.5),
                                complex(-2.25, 3)]),
    ("complex128", T.COMPLEX128, [complex(1e300, -1e-300), complex(0, 1)]),
]

NP = {T.FLOAT: np.float32, T.FLOAT16: np.float16, T.DOUBLE: np.float64,
      T.INT8: np.int8, T.UINT8: np.uint8, T.INT16: np.int16,
      T.UINT16: np.uint16, T.INT32: np.int32, T.UINT32: np.uint32,
      T.INT64: np.int64, T.UINT64: np.uint64, T.BOOL: np.bool_,
      T.COMPLEX64: np.complex64, T.COMPLEX128: np.complex128}


def bf16_bits(values):
    bits = np.array(values, np.float32).view(np.uint32)
    return (bits >> 16).astype(np.uint16)   # all chosen values are exact


def raw_tensor(name, dtype, dims, values):
    t = TensorProto(name=name, data_type=dtype, dims=dims)
    if dtype == T.BFLOAT16:
        t.raw_data = bf16_bits(values).astype("<u2").tobytes()
    else:
        t.raw_data = np.array(values, NP[dtype]).tobytes()  # little endian
    return t


def typed_tensor(name, dtype, dims, values):
    """Fill the typed field the ONNX spec assigns to the dtype."""
    t = TensorProto(name=name, data_type=dtype, dims=dims)
    if dtype == T.FLOAT:
        t.float_data.extend(values)
    elif dtype == T.FLOAT16:
        t.int32_data.extend(int(b) for b in
                            np.array(values, np.float16).view(np.uint16))
    elif dtype == T.BFLOAT16:
        t.int32_data.extend(int(b) for b in bf16_bits(values))
    elif dtype in (T.INT8, T.UINT8, T.INT16, T.UINT16, T.INT32, T.BOOL):
        t.int32_data.extend(int(v) for v in values)
    elif dtype == T.INT64:
        t.int64_data.extend(values)
    elif dtype in (T.UINT32, T.UINT64):
        t.uint64_data.extend(values)
    elif dtype == T.DOUBLE:
        t.double_data.extend(values)
    elif dtype == T.COMPLEX64:
        t.float_data.extend(x for c in values for x in (c.real, c.imag))
    elif dtype == T.COMPLEX128:
        t.double_data.extend(x for c in values for x in (c.real, c.imag))
    elif dtype == T.STRING:
        t.string_data.extend(values)
    return t


def make_newer_dtypes():
    """Types newer than onnx 1.12 (float8 17-20, uint4 21, int4 22,
    float4e2m1 23) as plain initializers: onnx 1.12 loads and compares them
    but its checker does not know them, so this model is not checked."""
    inits = []
    for code, name in [(17, "float8e4m3fn"), (18, "float8e4m3fnuz"),
                       (19, "float8e5m2"), (20, "float8e5m2fnuz")]:
        inits.append(TensorProto(name=name + "_raw", data_type=code, dims=[4],
                                 raw_data=bytes([0x00, 0x38, 0xb8, 0x7e])))
        inits.append(TensorProto(name=name + "_typed", data_type=code,
                                 dims=[4], int32_data=[0x00, 0x38, 0xb8, 0x7e]))
    for code, name in [(21, "uint4"), (22, "int4"), (23, "float4e2m1")]:
        # five 4-bit elements: packed low nibble first, 3 bytes
        inits.append(TensorProto(name=name + "_raw", data_type=code, dims=[5],
                                 raw_data=bytes([0x21, 0x43, 0x05])))
        inits.append(TensorProto(name=name + "_typed", data_type=code,
                                 dims=[5], int32_data=[0x21, 0x43, 0x05]))
    g = helper.make_graph([], "newer_dtypes", [], [], initializer=inits)
    return finish(g, [("", 13)], doc="dtypes newer than onnx 1.12")


def make_dtypes():
    inits, nodes, outs = [], [], []
    for name, dt, vals in DTYPES:
        forms = [("typed", typed_tensor)]
        if dt != T.STRING:
            forms.insert(0, ("raw", raw_tensor))
        for form, mk in forms:
            tn = "%s_%s" % (name, form)
            inits.append(mk(tn, dt, [len(vals)], vals))
            nodes.append(node("Identity", [tn], [tn + "_out"], "id_" + tn))
            outs.append(vi(tn + "_out", dt, [len(vals)]))
    extra = [
        raw_tensor("float_scalar", T.FLOAT, [], [2.5]),
        raw_tensor("float_empty", T.FLOAT, [0, 4], []),
        typed_tensor("int64_matrix", T.INT64, [2, 3], [1, -2, 3, -4, 5, -6]),
        raw_tensor("uint8_cube", T.UINT8, [2, 2, 2], list(range(8))),
        typed_tensor("double_empty", T.DOUBLE, [3, 0], []),
    ]
    extra[0].doc_string = "a rank-0 tensor"
    for t in extra:
        inits.append(t)
        nodes.append(node("Identity", [t.name], [t.name + "_out"],
                          "id_" + t.name))
        outs.append(vi(t.name + "_out", t.data_type, list(t.dims)))
    g = helper.make_graph(nodes, "dtypes", [], outs, initializer=inits,
                          doc_string="every dtype, raw_data and typed fields")
    m = finish(g, [("", 13)], doc="initializers of every tensor dtype")
    check(m)
    return m


def sparse(name, dims, values, indices, idx_dims=None):
    v = numpy_helper.from_array(np.array(values, np.float32), name)
    i = numpy_helper.from_array(np.array(indices, np.int64), name + "_idx")
    if idx_dims is not None:
        i.dims[:] = idx_dims
    return helper.make_sparse_tensor(v, i, dims)


def tensor_type(elem, shape):
    return helper.make_tensor_type_proto(elem, shape)


def map_type(key, value):
    t = TypeProto()
    t.map_type.key_type = key
    t.map_type.value_type.CopyFrom(value)
    return t


def make_attrs():
    def sub(name, op):
        return helper.make_graph(
            [node(op, ["gx"], ["gy"], name + "_n")], name,
            [vi("gx", T.FLOAT, [2])], [vi("gy", T.FLOAT, [2])])

    seq = helper.make_sequence_type_proto(tensor_type(T.INT64, [None]))
    mp = map_type(T.STRING, tensor_type(T.FLOAT, [3]))
    opt = helper.make_optional_type_proto(tensor_type(T.FLOAT, ["K"]))
    sp = helper.make_sparse_tensor_type_proto(T.FLOAT, [3, 4])
    strs = typed_tensor("strs", T.STRING, [2], [b"x", b"yz"])
    captured = helper.make_graph(
        [node("Add", ["X", "gx"], ["gy"], "captures_X")], "captures",
        [vi("gx", T.FLOAT, ["N", 3])], [vi("gy", T.FLOAT, ["N", 3])],
        doc_string="references the outer-scope value 'X'")
    attrs = dict(
        f=0.25, i=-7, s=b"h\xc3\xa9llo", t=numpy_helper.from_array(
            np.array([[1, 2], [3, 4]], np.float32), "t"),
        g=captured,
        sparse=sparse("sp", [2, 4], [1.0, 2.0, 3.0], [1, 4, 7]),
        tp=tensor_type(T.FLOAT, ["N", 3]),
        floats=[1.0, -2.0, 0.5], ints=[1, -1, 2 ** 40],
        strings=[b"a", b"", b"c"],
        tensors=[numpy_helper.from_array(np.array([5, 6, 7], np.int64),
                                         "ints3"), strs],
        graphs=[sub("neg", "Neg"), sub("abs", "Abs")],
        sparses=[sparse("sp1", [3], [9.0], [2]),
                 sparse("sp2", [2, 3], [1.0, 2.0], [0, 1, 1, 2],
                        idx_dims=[2, 2])],
        tps=[seq, mp, opt, sp],
    )
    a = [helper.make_attribute(k, v) for k, v in attrs.items()]
    a[0].doc_string = "a float attribute with a doc string"
    n = node("AllAttrs", ["X"], ["Y", "Z"], "all_attrs",
             domain="com.opmig.test",
             doc="custom op carrying one attribute of every kind")
    n.attribute.extend(a)
    nodes = [n,
             node("LeakyRelu", ["Y"], ["Y2"], "leaky", alpha=0.1),
             node("Cast", ["Y2"], ["Y3"], "cast", to=T.DOUBLE),
             node("Transpose", ["Y3"], ["out"], "transpose", perm=[1, 0])]
    zt = TypeProto()
    zt.CopyFrom(mp)
    g = helper.make_graph(
        nodes, "attrs", [vi("X", T.FLOAT, ["N", 3])],
        [vi("out", T.DOUBLE, [3, "N"]),
         helper.make_value_info("Z", zt, doc_string="a map-typed output")],
        value_info=[vi("Y", T.FLOAT, ["N", 3])])
    m = finish(g, [("", 13), ("com.opmig.test", 1)],
               doc="attributes of every kind on a custom-domain node")
    check(m, full=False)   # no schema for AllAttrs: inference cannot type Z
    return m


def make_sparse():
    s = sparse("S", [3, 4], [1.0, -2.0, 3.5, 4.0], [0, 5, 6, 11])
    c = sparse("C", [3, 4], [2.0, 0.5], [[0, 0], [2, 3]], idx_dims=[2, 2])
    c.indices.int64_data[:] = []
    c.indices.raw_data = np.array([[0, 0], [2, 3]], np.int64).tobytes()
    nodes = [node("Add", ["X", "S"], ["Y"], "add_sparse_init"),
             node("Constant", [], ["Cd"], "sparse_const", sparse_value=c),
             node("Mul", ["Y", "Cd"], ["Z"], "mul")]
    g = helper.make_graph(nodes, "sparse", [vi("X", T.FLOAT, [3, 4])],
                          [vi("Z", T.FLOAT, [3, 4])], sparse_initializer=[s],
                          doc_string="a sparse_initializer and a sparse "
                          "Constant attribute")
    m = finish(g, [("", 13)], doc="sparse tensors")
    check(m, full=False)   # inference types S as sparse_tensor, Add rejects
    return m


def make_loop_scan():
    W = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3)
                                / 8, "W")
    scale = numpy_helper.from_array(np.array(0.5, np.float32), "scale")
    trip = numpy_helper.from_array(np.array(3, np.int64), "trip")
    cond = numpy_helper.from_array(np.array(True), "cond")
    s0 = numpy_helper.from_array(np.zeros(3, np.float32), "state0")
    # If inside the Loop body: its branches capture 'W' two scopes up.
    then_g = helper.make_graph(
        [node("Add", ["v_in", "W"], ["t_out"], "then_add")], "then",
        [], [vi("t_out", T.FLOAT, [2, 3])])
    else_g = helper.make_graph(
        [node("Sub", ["v_in", "W"], ["e_out"], "else_sub")], "else",
        [], [vi("e_out", T.FLOAT, [2, 3])])
    body = helper.make_graph(
        [node("If", ["cond_in"], ["v_out"], "body_if", then_branch=then_g,
              else_branch=else_g),
         node("Identity", ["cond_in"], ["cond_out"], "body_cond"),
         node("Mul", ["v_out", "scale"], ["s_out"], "body_scale")],
        "loop_body",
        [vi("iter", T.INT64, []), vi("cond_in", T.BOOL, []),
         vi("v_in", T.FLOAT, [2, 3])],
        [vi("cond_out", T.BOOL, []), vi("v_out", T.FLOAT, [2, 3]),
         vi("s_out", T.FLOAT, [2, 3])],
        doc_string="captures 'W' and 'scale' from the outer graph")
    scan_body = helper.make_graph(
        [node("Add", ["st", "xt"], ["st_out"], "scan_add"),
         node("Mul", ["xt", "scale"], ["yt"], "scan_mul")],
        "scan_body",
        [vi("st", T.FLOAT, [3]), vi("xt", T.FLOAT, [3])],
        [vi("st_out", T.FLOAT, [3]), vi("yt", T.FLOAT, [3])],
        doc_string="captures 'scale' from the outer graph")
    nodes = [
        node("Loop", ["trip", "cond", "X"], ["v_final", "s_all"], "loop",
             body=body),
        node("Scan", ["state0", "X"], ["state_final", "ys"], "scan",
             body=scan_body, num_scan_inputs=1, scan_input_directions=[0],
             scan_input_axes=[0]),
    ]
    g = helper.make_graph(
        nodes, "loop_scan", [vi("X", T.FLOAT, [2, 3])],
        [vi("v_final", T.FLOAT, [2, 3]), vi("s_all", T.FLOAT, [None, 2, 3]),
         vi("state_final", T.FLOAT, [3]), vi("ys", T.FLOAT, [2, 3])],
        initializer=[W, scale, trip, cond, s0])
    m = finish(g, [("", 13)], doc="Loop and Scan with outer-scope captures")
    check(m)
    return m


def make_unsorted():
    nodes = [node("Add", ["a", "b"], ["c"], "add"),
             node("Neg", ["a"], ["b"], "neg"),
             node("Relu", ["X"], ["a"], "relu"),
             node("Mul", ["c", "X"], ["Y"], "mul")]
    g = helper.make_graph(nodes, "unsorted", [vi("X", T.FLOAT, ["N", 4])],
                          [vi("Y", T.FLOAT, ["N", 4])],
                          value_info=[vi("a", T.FLOAT, ["N", 4])],
                          doc_string="nodes stored out of topological order")
    m = finish(g, [("", 13)], doc="valid once its nodes are sorted")
    try:
        onnx.checker.check_model(m)
    except onnx.checker.ValidationError:
        pass
    else:
        sys.exit("unsorted.onnx passes the checker: not unsorted")
    s = ModelProto()
    s.CopyFrom(m)
    order = [2, 1, 0, 3]
    del s.graph.node[:]
    s.graph.node.extend(m.graph.node[i] for i in order)
    check(s)
    return m


def make_symbolic():
    rng = np.random.RandomState(7)
    Wm = numpy_helper.from_array(rng.standard_normal((16, 8)).astype(
        np.float32), "W")
    ysc = numpy_helper.from_array(np.array(0.05, np.float32), "y_scale")
    yzp = numpy_helper.from_array(np.array(0, np.uint8), "y_zp")
    x = vi("X", T.FLOAT, ["batch", "seq", 16])
    x.type.tensor_type.shape.dim[0].denotation = "DATA_BATCH"
    x.type.denotation = "TENSOR"
    h = vi("H", T.FLOAT, ["batch", None, 8])       # a dim with no value
    hq = vi("HQ", T.UINT8, ["batch", "seq", 8])
    nodes = [node("MatMul", ["X", "W"], ["H"], "matmul"),
             node("QuantizeLinear", ["H", "y_scale", "y_zp"], ["HQ"],
                  "quant"),
             node("DequantizeLinear", ["HQ", "y_scale", "y_zp"], ["Y"],
                  "dequant")]
    g = helper.make_graph(nodes, "symbolic", [x],
                          [vi("Y", T.FLOAT, ["batch", "seq", 8])],
                          initializer=[Wm, ysc, yzp], value_info=[h, hq])
    qa = g.quantization_annotation.add()
    qa.tensor_name = "HQ"
    for k, v in (("SCALE_TENSOR", "y_scale"), ("ZERO_POINT_TENSOR", "y_zp")):
        e = qa.quant_parameter_tensor_names.add()
        e.key, e.value = k, v
    m = finish(g, [("", 13)], doc="value_info with symbolic dims")
    check(m)
    return m


def make_types():
    nodes = [node("SequenceConstruct", ["X", "X"], ["seq"], "seq"),
             node("SequenceAt", ["seq", "one"], ["y"], "at"),
             node("Optional", ["X"], ["opt"], "opt"),
             node("OptionalGetElement", ["opt"], ["z"], "get")]
    one = numpy_helper.from_array(np.array(1, np.int64), "one")
    seq_t = helper.make_sequence_type_proto(tensor_type(T.FLOAT, ["N"]))
    opt_t = helper.make_optional_type_proto(tensor_type(T.FLOAT, ["N"]))
    g = helper.make_graph(
        nodes, "types", [vi("X", T.FLOAT, ["N"])],
        [vi("y", T.FLOAT, ["N"]), vi("z", T.FLOAT, ["N"]),
         helper.make_value_info("seq", seq_t)],
        initializer=[one],
        value_info=[helper.make_value_info("opt", opt_t)])
    m = finish(g, [("", 15)], doc="sequence and optional types (opset 15)")
    check(m)
    return m


def make_functions():
    body = [node("Constant", [], ["a"], "alpha_const"),
            node("Relu", ["X"], ["r"], "relu"),
            node("Mul", ["r", "a"], ["Y"], "scale")]
    ref = AttributeProto(name="value_float", ref_attr_name="alpha",
                         type=AttributeProto.FLOAT)
    body[0].attribute.append(ref)
    fn = helper.make_function("com.opmig.fn", "ScaledRelu", ["X"], ["Y"],
                              body, [helper.make_opsetid("", 13)],
                              attributes=["alpha"],
                              doc_string="relu(x) * alpha")
    fn2 = helper.make_function(
        "com.opmig.fn", "Twice", ["X"], ["Y"],
        [node("ScaledRelu", ["X"], ["t"], "inner", domain="com.opmig.fn",
              alpha=2.0),
         node("Add", ["t", "t"], ["Y"], "add")],
        [helper.make_opsetid("", 13), helper.make_opsetid("com.opmig.fn", 1)],
        doc_string="a function calling another function")
    nodes = [node("ScaledRelu", ["X"], ["a"], "sr1", domain="com.opmig.fn",
                  alpha=0.5),
             node("ScaledRelu", ["a"], ["b"], "sr2", domain="com.opmig.fn",
                  alpha=3.0),
             node("Twice", ["b"], ["Y"], "twice", domain="com.opmig.fn")]
    g = helper.make_graph(nodes, "functions", [vi("X", T.FLOAT, [4])],
                          [vi("Y", T.FLOAT, [4])])
    m = finish(g, [("", 13), ("com.opmig.fn", 1)], functions=[fn, fn2],
               doc="model-local functions with attributes")
    check(m)
    return m


def make_unknown_fields():
    """Known messages carrying fields no ONNX version defines."""
    unk = (pb_int(1000, 42) + pb_bytes(1001, b"opaque") +
           pb_fixed32(1002, 0xDEADBEEF) + pb_fixed64(1003, 1 << 60))
    n = node("Relu", ["X"], ["Y"], "relu")
    n2 = onnx.NodeProto()
    n2.ParseFromString(n.SerializeToString() + unk)
    w = numpy_helper.from_array(np.ones(4, np.float32), "W")
    w2 = TensorProto()
    w2.ParseFromString(w.SerializeToString() + pb_int(1010, 7))
    a = helper.make_attribute("axis", 0)
    a2 = AttributeProto()
    a2.ParseFromString(a.SerializeToString() + pb_bytes(1020, b"x"))
    n3 = node("Softmax", ["Z"], ["S"], "softmax")
    n3.attribute.append(a2)
    g = helper.make_graph([n2, node("Add", ["Y", "W"], ["Z"], "add"), n3],
                          "unknown_fields", [vi("X", T.FLOAT, [4])],
                          [vi("S", T.FLOAT, [4])], initializer=[w2])
    g2 = GraphProto()
    g2.ParseFromString(g.SerializeToString() + pb_int(1030, 1))
    m = finish(g2, [("", 13)], doc="unknown fields to keep on a round trip")
    m2 = ModelProto()
    m2.ParseFromString(m.SerializeToString() + unk)
    check(m2)
    return m2


# ---- ext/ ---------------------------------------------------------------------


def ext_tensor(name, dtype, dims, location, offset, length):
    t = TensorProto(name=name, data_type=dtype, dims=dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)),
                 ("length", str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def tiny_ext_model(location, offset=0, length=16, name="external"):
    """Add(X, W) with W float[4] stored externally."""
    w = ext_tensor("W", T.FLOAT, [4], location, offset, length)
    g = helper.make_graph([node("Add", ["X", "W"], ["Y"], "add")], name,
                          [vi("X", T.FLOAT, [4])], [vi("Y", T.FLOAT, [4])],
                          initializer=[w])
    return finish(g, [("", 13)])


def make_ext():
    blob = bytearray(192)
    w1 = np.array([1, 2, 3, 4], np.float32)
    w2 = np.array([0.5, -0.5, 2, -2], np.float32)
    shp = np.array([2, 2], np.int64)
    blob[0:16] = w1.tobytes()
    blob[64:80] = w2.tobytes()
    blob[128:144] = shp.tobytes()
    inits = [ext_tensor("W1", T.FLOAT, [4], "weights.bin", 0, 16),
             ext_tensor("W2", T.FLOAT, [4], "weights.bin", 64, 16),
             ext_tensor("shape", T.INT64, [2], "weights.bin", 128, 16),
             numpy_helper.from_array(np.full(4, 0.25, np.float32), "B")]
    nodes = [node("Add", ["X", "W1"], ["a"], "add"),
             node("Mul", ["a", "W2"], ["b"], "mul"),
             node("Sub", ["b", "B"], ["c"], "sub"),
             node("Reshape", ["c", "shape"], ["Y"], "reshape")]
    g = helper.make_graph(nodes, "external", [vi("X", T.FLOAT, [4])],
                          [vi("Y", T.FLOAT, [2, 2])], initializer=inits)
    m = finish(g, [("", 13)], doc="initializers in weights.bin")
    write("ext/weights.bin", bytes(blob))
    path = write("ext/model.onnx", m)
    onnx.checker.check_model(path)
    full = onnx.load(path)
    onnx.shape_inference.infer_shapes(full, check_type=True, strict_mode=True)


# ---- bad/ -----------------------------------------------------------------------


def must_not_parse(data, what):
    try:
        ModelProto().ParseFromString(data)
    except Exception:       # DecodeError from the C++ parser
        return
    sys.exit("%s parses: choose another defect" % what)


def must_fail_check(m, what):
    try:
        check(m)
    except Exception:
        return
    sys.exit("%s passes the checker" % what)


def tiny(nodes, inits=(), ins=None, outs=None, opsets=(("", 13),)):
    g = helper.make_graph(
        nodes, "bad", ins if ins is not None else [vi("X", T.FLOAT, [4])],
        outs if outs is not None else [vi("Y", T.FLOAT, [4])],
        initializer=list(inits))
    return finish(g, list(opsets))


def make_deep(depth):
    """A graph attribute nested `depth` levels, built inside out so no
    recursion is needed; every level is an If node with a then_branch."""
    chunks = []
    inner = pb_bytes(2, "leaf")                         # GraphProto.name
    total = len(inner)
    for k in range(depth):
        attr_head = (pb_bytes(1, "then_branch") + pb_int(20, 5) +
                     pb_key(6, WT_LEN) + pb_varint(total))
        attr_len = len(attr_head) + total
        node_head = (pb_bytes(1, "cond") + pb_bytes(2, "out%d" % k) +
                     pb_bytes(4, "If") + pb_key(5, WT_LEN) +
                     pb_varint(attr_len))
        node_len = len(node_head) + attr_len
        graph_head = pb_key(1, WT_LEN) + pb_varint(node_len)
        chunks.append(node_head + attr_head)
        chunks.append(graph_head)
        total += len(graph_head) + len(node_head) + len(attr_head)
    # chunks were appended inner-first; the outermost graph goes first.
    body = b"".join(reversed(chunks)) + inner
    assert len(body) == total
    opset = pb_bytes(8, pb_int(2, 13))
    return (pb_int(1, IR_VERSION) + pb_bytes(2, PRODUCER[0]) +
            pb_bytes(7, body) + opset)


def make_bad(sample_bytes, then_g):
    bad = os.path.join(DATA, "bad")
    for f in os.listdir(bad) if os.path.isdir(bad) else []:
        if f.startswith("truncated-"):
            os.unlink(os.path.join(bad, f))

    write("bad/empty.onnx", b"")
    r = random.Random(0x0A11)
    data = bytes(r.getrandbits(8) for _ in range(4096))
    must_not_parse(data, "random.onnx")
    write("bad/random.onnx", data)

    # truncations of sample.onnx
    s = sample_bytes
    m = ModelProto()
    m.ParseFromString(s)
    w1 = m.graph.initializer[0].raw_data
    pos_w1 = s.find(w1)
    pos_then = s.find(then_g.SerializeToString())
    pos_graph = s.find(pb_key(7, WT_LEN))
    fn_pos = s.find(m.functions[0].SerializeToString())
    assert min(pos_w1, pos_then, pos_graph, fn_pos) > 0
    cuts = {
        1: "after the first tag, inside ir_version's varint",
        pos_graph + 2: "inside the graph field's length varint",
        pos_w1 + len(w1) // 2: "inside conv1.weight's raw_data",
        pos_then + 20: "inside the If node's then_branch graph",
        len(s) - 1: "last byte missing (inside the function)",
    }
    assert fn_pos < len(s) - 1
    for off, why in sorted(cuts.items()):
        must_not_parse(s[:off], "truncated-%d (%s)" % (off, why))
        write("bad/truncated-%d.onnx" % off, s[:off])

    # the graph field (7) written as a varint instead of length-delimited
    write("bad/wire-type.onnx",
          pb_int(1, IR_VERSION) + pb_bytes(2, PRODUCER[0]) + pb_int(7, 5) +
          pb_bytes(8, pb_int(2, 13)))

    def init_model(t, out_shape=None):
        return tiny([node("Identity", ["W"], ["Y"], "id")], [t], ins=[],
                    outs=[helper.make_tensor_value_info("Y", T.FLOAT,
                                                        out_shape)])

    t = TensorProto(name="W", data_type=T.FLOAT, dims=[1 << 62],
                    raw_data=b"\0\0\x80\x3f")
    write("bad/huge-dim.onnx", init_model(t))
    t = TensorProto(name="W", data_type=T.FLOAT, dims=[-3],
                    raw_data=bytes(12))
    write("bad/negative-dim.onnx", init_model(t))
    t = TensorProto(name="W", data_type=T.FLOAT, dims=[4], raw_data=bytes(12))
    write("bad/raw-length.onnx", init_model(t, [4]))  # onnx's checker passes it
    t = TensorProto(name="W", data_type=T.FLOAT, dims=[4], raw_data=bytes(16),
                    float_data=[1, 2, 3, 4])
    write("bad/raw-and-typed.onnx", init_model(t, [4]))
    t = TensorProto(name="W", data_type=T.INT64, dims=[3], int64_data=[1, 2])
    write("bad/typed-count.onnx", init_model(t, [3]))
    t = TensorProto(name="W", data_type=99, dims=[4], raw_data=bytes(16))
    write("bad/unknown-dtype.onnx", init_model(t, [4]))

    m = tiny([node("Add", ["X", "b"], ["a"], "add"),
              node("Relu", ["a"], ["b"], "relu"),
              node("Identity", ["a"], ["Y"], "out")])
    must_fail_check(m, "cycle.onnx")
    write("bad/cycle.onnx", m)
    m = tiny([node("Add", ["X", "nowhere"], ["Y"], "add")])
    must_fail_check(m, "undefined-input.onnx")
    write("bad/undefined-input.onnx", m)
    m = tiny([node("Relu", ["X"], ["Y"], "relu"),
              node("Neg", ["X"], ["Y"], "neg")])
    must_fail_check(m, "duplicate-output.onnx")
    write("bad/duplicate-output.onnx", m)
    m = tiny([node("Foo", ["X"], ["Y"], "foo", domain="com.x")])
    must_fail_check(m, "missing-opset.onnx")
    write("bad/missing-opset.onnx", m)
    a = AttributeProto(name="axis", type=AttributeProto.INT, f=1.0)
    n = node("Flatten", ["X"], ["Y"], "flatten")
    n.attribute.append(a)
    m = tiny([n], outs=[vi("Y", T.FLOAT, [4, 1])])
    must_fail_check(m, "attr-type.onnx")
    write("bad/attr-type.onnx", m)

    # attribute kinds the Flatten-13 / Cast-13 schemas contradict
    n = node("Flatten", ["X"], ["Y"], "flatten")
    n.attribute.append(helper.make_attribute("axis", [1, 2]))
    m = tiny([n], outs=[vi("Y", T.FLOAT, [4, 1])])
    must_fail_check(m, "attr-schema-type.onnx")
    write("bad/attr-schema-type.onnx", m)
    m = tiny([node("Cast", ["X"], ["Y"], "cast")])
    must_fail_check(m, "missing-required-attr.onnx")
    write("bad/missing-required-attr.onnx", m)

    deep = make_deep(10000)
    must_not_parse(deep, "deep-nesting.onnx")
    write("bad/deep-nesting.onnx", deep)

    # external data that must be refused, each a folder with models/model.onnx
    secret = np.array([7, 7, 7, 7], np.float32).tobytes()
    write("bad/ext-traversal/secret.bin", secret)
    write("bad/ext-traversal/models/model.onnx",
          tiny_ext_model("../secret.bin"))
    write("bad/ext-absolute/models/model.onnx", tiny_ext_model("/etc/passwd"))
    write("bad/ext-missing/models/model.onnx", tiny_ext_model("missing.bin"))
    write("bad/ext-short/models/weights.bin", bytes(20))
    write("bad/ext-short/models/model.onnx",
          tiny_ext_model("weights.bin", offset=8, length=16))
    write("bad/ext-symlink/secret.bin", secret)
    symlink("../secret.bin", "bad/ext-symlink/models/weights.bin")
    write("bad/ext-symlink/models/model.onnx", tiny_ext_model("weights.bin"))

    write("bad/a-directory.onnx/.keep", b"")


def main():
    os.umask(0o022)
    sample, then_g = make_sample()
    sample_bytes = sample.SerializeToString()
    write("sample.onnx", sample_bytes)
    for name, fn in [("dtypes", make_dtypes), ("attrs", make_attrs),
                     ("sparse", make_sparse), ("loop_scan", make_loop_scan),
                     ("unsorted", make_unsorted), ("symbolic", make_symbolic),
                     ("types", make_types), ("functions", make_functions),
                     ("unknown_fields", make_unknown_fields),
                     ("newer_dtypes", make_newer_dtypes)]:
        write("models/%s.onnx" % name, fn())
    make_ext()
    make_bad(sample_bytes, then_g)


if __name__ == "__main__":
    main()
