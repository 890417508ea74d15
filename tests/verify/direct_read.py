"""Whole passes over external weights read them past the page cache
(O_DIRECT) where the file system allows it, in blocks around each tensor's
bytes: tensors at offsets that are not block-aligned, of lengths that are
not whole blocks, over one or several read pieces, must come out exactly.
Writes a model (an int8 tensor of odd length first, so that the float
weights after it sit at unaligned offsets) in FOLDER, converts it and
migrates it to float16, and compares every weight with numpy; quantizes
its MatMul weights to int4 (weight-only) from the file and from an inline
copy of the model, and compares the two.

usage: direct_read.py OPMIG FOLDER    exit 0 equal, 1 not, 2 setup."""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    opmig, d = sys.argv[1], sys.argv[2]
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(3)
    a = rng.integers(-128, 127, size=(4097,), dtype=np.int8)
    w = rng.standard_normal((700, 1001)).astype(np.float32)      # 2.8 MB: one piece
    w2 = rng.standard_normal((1500, 1001)).astype(np.float32)    # 6 MB: two pieces
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"]),
             helper.make_node("Identity", ["a"], ["ao"]),
             helper.make_node("MatMul", ["z", "w2"], ["y2"])]
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 700]),
           helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 1500])]
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1001]),
            helper.make_tensor_value_info("ao", TensorProto.INT8, [4097]),
            helper.make_tensor_value_info("y2", TensorProto.FLOAT, [1, 1001])]
    inits = [numpy_helper.from_array(a, "a"), numpy_helper.from_array(w, "w"),
             numpy_helper.from_array(w2, "w2")]
    m = helper.make_model(helper.make_graph(nodes, "g", ins, outs, inits),
                          opset_imports=[helper.make_opsetid("", 17)])
    # the inline copy first: saving with external data rewrites m's tensors
    # into references to the data file
    inline = os.path.join(d, "inline.onnx")
    onnx.save_model(m, inline)
    src = os.path.join(d, "m.onnx")
    onnx.save_model(m, src, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="m.data", size_threshold=0)
    offs = [int({e.key: e.value for e in t.external_data}["offset"])
            for t in onnx.load(src, load_external_data=False).graph.initializer]
    if not any(o % 4096 for o in offs):
        print("setup: every offset is block-aligned %s" % offs)
        return 2
    if any(t.external_data for t in onnx.load(inline, load_external_data=False).graph.initializer):
        print("setup: the inline copy refers to external data")
        return 2
    conv, half = os.path.join(d, "c.onnx"), os.path.join(d, "h.onnx")
    q_ext, q_in = os.path.join(d, "qe.onnx"), os.path.join(d, "qi.onnx")
    wo = ["--weight-only", "int4", "--block-size", "16", "--no-accuracy-check"]
    for cmd in (["convert", src, conv],
                ["migrate", src, "--target", "ascend", "--precision", "fp16",
                 "--no-validate", "-o", half],
                ["quantize", src, "-o", q_ext] + wo, ["quantize", inline, "-o", q_in] + wo):
        r = subprocess.run([opmig] + cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print("FAIL: opmig %s exited %d: %s" % (cmd[0], r.returncode, r.stderr.strip()))
            return 1
    c = {t.name: numpy_helper.to_array(t) for t in onnx.load(conv).graph.initializer}
    h = {t.name: numpy_helper.to_array(t) for t in onnx.load(half).graph.initializer}
    fails = 0
    for name, want in (("a", a), ("w", w), ("w2", w2)):
        ok = name in c and np.array_equal(c[name], want)
        fails += not ok
        print("%s: convert keeps '%s' (offset %d)" % ("ok" if ok else "FAIL", name,
                                                     offs[["a", "w", "w2"].index(name)]))
    for name, want in (("w", w), ("w2", w2)):
        ok = name in h and h[name].dtype == np.float16 and \
            np.array_equal(h[name], want.astype(np.float16))
        fails += not ok
        print("%s: fp16 '%s' is numpy's rounding of the weight" % ("ok" if ok else "FAIL", name))
    # weight-only codes read a block of rows at a time through a reader:
    # from the file past the cache, they equal those of the inline weights
    qe = {t.name: numpy_helper.to_array(t) for t in onnx.load(q_ext).graph.initializer}
    qi = {t.name: numpy_helper.to_array(t) for t in onnx.load(q_in).graph.initializer}
    names = sorted(k for k in qi if k.startswith("w"))
    ok = len(names) >= 6 and sorted(qe) == sorted(qi) and \
        all(np.array_equal(qe[k], qi[k]) for k in names)
    fails += not ok
    print("%s: weight-only codes, scales and zero points read from the file equal the "
          "inline weights' (%s)" % ("ok" if ok else "FAIL", ", ".join(names)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
