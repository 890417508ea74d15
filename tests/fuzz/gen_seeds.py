#!/usr/bin/python3
"""gen_seeds.py: writes the generated part of the fuzz seed corpora under
tests/fuzz/corpus/ (models with external data naming the files the model
harness puts beside them, .npy and TensorProto/SequenceProto/OptionalProto
files, zip archives with safe and unsafe entries, external data locations).
Run from the source tree with Debian's python3-onnx (1.12) and numpy."""
import io
import os
import stat
import zipfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

C = "tests/fuzz/corpus"


def put(kind, name, data):
    os.makedirs(os.path.join(C, kind), exist_ok=True)
    with open(os.path.join(C, kind, name), "wb") as f:
        f.write(data)


def ext_model(location, n_floats, offset=None):
    t = TensorProto()
    t.name = "w"
    t.data_type = TensorProto.FLOAT
    t.dims.extend([n_floats])
    t.data_location = TensorProto.EXTERNAL
    for k, v in [("location", location), ("offset", offset),
                 ("length", str(4 * n_floats) if offset else None)]:
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, v
    g = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n_floats])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n_floats])],
        [t])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m.SerializeToString()


def models():
    # The model harness's folder: weights.bin (64 bytes), sub/w.bin (8),
    # in.bin -> weights.bin, out.bin -> /etc/passwd.
    for name, loc, n, off in [
            ("ext-ok", "weights.bin", 16, None),
            ("ext-offset", "weights.bin", 4, "16"),
            ("ext-sub", "sub/w.bin", 2, None),
            ("ext-symlink-in", "in.bin", 16, None),
            ("ext-symlink-out", "out.bin", 2, None),
            ("ext-dotdot", "sub/../weights.bin", 16, None),
            ("ext-escape", "../weights.bin", 16, None),
            ("ext-absolute", "/etc/passwd", 2, None),
            ("ext-short", "sub/w.bin", 16, None),
            ("ext-folder", "sub", 1, None),
            ("ext-offset-huge", "weights.bin", 2, "18446744073709551615")]:
        put("model", name + ".onnx", ext_model(loc, n, off))
    # Control flow, sequences, a function, shape arithmetic for inference.
    then_g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["t"])], "then", [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e"])], "else", [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])])
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Reshape", ["x", "s"], ["r"]),
        helper.make_node("ReduceSum", ["r"], ["sum"], keepdims=0),
        helper.make_node("Cast", ["sum"], ["c"], to=TensorProto.BOOL),
        helper.make_node("If", ["c"], ["y"], then_branch=then_g,
                         else_branch=else_g),
        helper.make_node("SequenceConstruct", ["x", "y"], ["sq"]),
        helper.make_node("ConcatFromSequence", ["sq"], ["z"], axis=0),
    ]
    g = helper.make_graph(
        nodes, "ctrl",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["N"])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    put("model", "gen-ctrl.onnx", m.SerializeToString())
    put("scan", "gen-ctrl.onnx", m.SerializeToString())
    conv = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1],
                          strides=[2, 2], name="conv"),
         helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[2, 2]),
         helper.make_node("Flatten", ["p"], ["f"]),
         helper.make_node("Gemm", ["f", "gw"], ["y"], transB=1)],
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])],
        [numpy_helper.from_array(np.ones((2, 3, 3, 3), np.float32), "w"),
         numpy_helper.from_array(np.ones((4, 8), np.float32), "gw")])
    m = helper.make_model(conv, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    put("model", "gen-conv.onnx", m.SerializeToString())
    put("scan", "gen-conv.onnx", m.SerializeToString())


def npys():
    arrays = {
        "f32": np.arange(6, dtype="<f4").reshape(2, 3),
        "f64-be": np.arange(4, dtype=">f8"),
        "f16": np.ones((2, 2), np.float16),
        "i8": np.array([-1, 2, 3], np.int8),
        "u64": np.array([1, 2**63], np.uint64),
        "bool": np.array([True, False]),
        "fortran": np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3)),
        "scalar": np.array(3.5, np.float32),
        "empty": np.zeros((0, 3), np.int64),
        "str": np.array(["ab", "cde"], "S3"),
        "ustr": np.array(["ab", "cde"], "U3"),
        "c64": np.array([1 + 2j], np.complex64),
        "rank5": np.zeros((1, 1, 1, 1, 2), np.uint8),
    }
    for name, a in arrays.items():
        b = io.BytesIO()
        np.save(b, a)
        put("npy", name + ".npy", b.getvalue())
    b = io.BytesIO()
    np.lib.format.write_array(b, np.arange(3, dtype=np.int16), version=(2, 0))
    put("npy", "v2.npy", b.getvalue())
    good = open(os.path.join(C, "npy", "f32.npy"), "rb").read()
    put("npy", "truncated.npy", good[:-5])
    put("npy", "bad-header.npy", good.replace(b"'descr'", b"'dexcr'"))
    put("npy", "huge-shape.npy", good.replace(b"(2, 3)", b"(99999999999, 99999999999)"))


def pbs():
    for name, a in [("f32", np.arange(6, dtype=np.float32).reshape(2, 3)),
                    ("i64", np.array([1, -2, 3], np.int64)),
                    ("bool", np.array([True, False])),
                    ("f16", np.ones(3, np.float16)),
                    ("scalar", np.array(2.0, np.float64)),
                    ("str", np.array([b"ab", b"c"], object))]:
        put("tensorpb", name + ".pb", numpy_helper.from_array(a, name).SerializeToString())
    t = helper.make_tensor("typed", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])
    put("tensorpb", "typed-float.pb", t.SerializeToString())
    t = helper.make_tensor("typed", TensorProto.INT8, [2], [1, -1])
    put("tensorpb", "typed-int8.pb", t.SerializeToString())
    t = helper.make_tensor("c", TensorProto.COMPLEX64, [1], [1 + 2j])
    put("tensorpb", "complex.pb", t.SerializeToString())
    ta = numpy_helper.from_array(np.ones(2, np.float32))
    tb = numpy_helper.from_array(np.zeros((1, 2), np.float32))
    seq = helper.make_sequence("s", onnx.SequenceProto.TENSOR, [ta, tb])
    put("tensorpb", "sequence.pb", seq.SerializeToString())
    put("tensorpb", "sequence-empty.pb",
        helper.make_sequence("e", onnx.SequenceProto.TENSOR, []).SerializeToString())
    opt = helper.make_optional("o", onnx.OptionalProto.TENSOR, ta)
    put("tensorpb", "optional.pb", opt.SerializeToString())
    put("tensorpb", "optional-empty.pb",
        helper.make_optional("o", onnx.OptionalProto.UNDEFINED, None).SerializeToString())
    keys = np.array([1, 2], np.int64)
    vals = helper.make_sequence("v", onnx.SequenceProto.TENSOR,
                                [numpy_helper.from_array(np.ones(2, np.float32))])
    mp = helper.make_map("m", TensorProto.INT64, keys, vals)
    put("tensorpb", "map.pb", mp.SerializeToString())
    good = numpy_helper.from_array(np.ones((2, 2), np.float32)).SerializeToString()
    put("tensorpb", "truncated.pb", good[:-3])


def zips():
    model = open("testdata/sample.onnx", "rb").read()
    small = open(os.path.join(C, "model", "gen-ctrl.onnx"), "rb").read()

    def z(name, entries, method=zipfile.ZIP_DEFLATED):
        b = io.BytesIO()
        with zipfile.ZipFile(b, "w", method) as f:
            for e in entries:
                if isinstance(e, zipfile.ZipInfo):
                    f.writestr(e, b"../../etc/passwd")
                else:
                    f.writestr(e[0], e[1])
        put("zip", name + ".zip", b.getvalue())

    z("ok", [("a.onnx", small), ("dir/b.onnx", small), ("readme.txt", b"hi")])
    z("stored", [("m.onnx", model)], zipfile.ZIP_STORED)
    z("same-names", [("a/b.onnx", small), ("a_b.onnx", small), ("a-b.ONNX", small)])
    z("slip", [("../evil.onnx", small)])
    z("absolute", [("/tmp/evil.onnx", small)])
    z("backslash", [("..\\evil.onnx", small)])
    z("drive", [("C:evil.onnx", small)])
    link = zipfile.ZipInfo("link.onnx")
    link.create_system = 3
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    z("symlink", [link])
    z("bomb", [("bomb.onnx", b"\0" * (2 << 20))])
    z("none", [("notes.txt", b"no models")])
    z("empty", [])
    good = open(os.path.join(C, "zip", "ok.zip"), "rb").read()
    put("zip", "truncated.zip", good[:len(good) // 2])


def extdata():
    for i, loc in enumerate([
            "w.bin", "sub/w.bin", "./w.bin", "sub/../w.bin", "sub/up.bin",
            "in.bin", "out.bin", "abs.bin", "loop", "dangling", "subdir-link/w.bin",
            "outdir-link/secret.bin", "../secret.bin", "/etc/passwd",
            "sub/../../secret.bin", "", ".", "sub", "empty.bin", "w.bin/",
            "sub//w.bin", "a/../../m/w.bin"]):
        put("extdata", "loc-%02d" % i, loc.encode())


models()
npys()
pbs()
zips()
extdata()
