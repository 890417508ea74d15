"""ir_version_ort.py OPMIG WORKDIR: a model opmig migrate converts to an
older opset declares the IR version that opset's readers know, or what its
contents need, never more than the input's (issue 25).  Opset-21 models of
IR 10 (written with onnx 1.12's helper, which cannot check them) are
migrated down:
  plain (MatMul, Split num_outputs-18, ReduceMean axes-input-18) at
  --opset 17, to generic-npu (opset 11..17, no --opset), at --opset 13 and
  at --opset 8: IR 8, 8, 7 and 4 (opset 8's IR is 3, but IR 3 wants every
  initializer among the graph inputs); each passes onnx.checker full_check
  (onnx 1.12) and gives the original's outputs in onnxruntime-node within
  1e-5 of the largest |value|; the same model claiming IR 8 at --opset 19
  stays IR 8 (opset 19's is 9: never above the input's), version only;
  a model-local function called from the graph at --opset 13: IR 7
  (migrate inlines it, so nothing asks for functions' IR 8), full_check
  and onnxruntime as above;
  an int4 DequantizeLinear whose int4 initializer is folded away at
  --opset 17: IR 8 (what the pass saw asked for 10: migrate settles the
  version after its passes), full_check, onnxruntime;
  int4 initializers read by a custom-domain node inside both branches of
  an If, at --opset 19: IR 10 (int4's; opset 19's would be 9), and a
  float8 initializer read by a custom-domain node at --opset 17 from an
  input that claims IR 11: IR 9 (float8's; opset 17's would be 8) --
  their versions only: onnx 1.12 reads IR 8 at most and onnxruntime has
  no such node.
The report notes each change ("ir_version 10 -> 8").
Prints one line per check; exits 1 on a failure, 77 when onnxruntime-node
is absent."""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402

FAILS = []
INT4, FLOAT8E4M3FN = 22, 17


def check(ok, what):
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        FAILS.append(what)


def model(nodes, inputs, outputs, inits=(), ir=10, opset=21, functions=(), domains=()):
    m = h.make_model(h.make_graph(nodes, "g", inputs, outputs, list(inits)),
                     opset_imports=[h.make_opsetid("", opset)] +
                     [h.make_opsetid(d, 1) for d in domains] +
                     ([h.make_opsetid("local", 1)] if functions else []))
    m.functions.extend(functions)
    m.ir_version = ir
    return m


def int4_tensor(name, vals, dims):
    t = T()
    t.name = name
    t.data_type = INT4
    t.dims.extend(dims)
    v = np.asarray(vals, np.int8)
    t.raw_data = bytes(((v[0::2] & 15) | ((v[1::2] & 15) << 4)).astype(np.uint8))
    return t


def plain(rng, ir=10):
    return model([h.make_node("MatMul", ["x", "W"], ["mm"]),
                  h.make_node("Relu", ["mm"], ["r"]),
                  h.make_node("Split", ["r"], ["s0", "s1"], axis=2, num_outputs=2),
                  h.make_node("Add", ["s0", "s1"], ["a"]),
                  h.make_node("ReduceMean", ["a", "ax"], ["y"], keepdims=1)],
                 [h.make_tensor_value_info("x", T.FLOAT, [2, 3, 4])],
                 [h.make_tensor_value_info("y", T.FLOAT, [2, 1, 3])],
                 [nh.from_array(rng.standard_normal((4, 6)).astype(np.float32), "W"),
                  nh.from_array(np.array([1], np.int64), "ax")], ir=ir)


def with_function(rng):
    f = h.make_function("local", "AddRelu", ["a", "b"], ["c"],
                        [h.make_node("Add", ["a", "b"], ["t"]),
                         h.make_node("Relu", ["t"], ["c"])],
                        [h.make_opsetid("", 21)])
    return model([h.make_node("AddRelu", ["x", "B"], ["y"], domain="local")],
                 [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                 [h.make_tensor_value_info("y", T.FLOAT, [2, 3])],
                 [nh.from_array(rng.standard_normal((2, 3)).astype(np.float32), "B")],
                 functions=[f])


def int4_folded(rng):
    return model([h.make_node("DequantizeLinear", ["q", "sc"], ["Wd"]),
                  h.make_node("MatMul", ["x", "Wd"], ["y"])],
                 [h.make_tensor_value_info("x", T.FLOAT, [2, 3, 4])],
                 [h.make_tensor_value_info("y", T.FLOAT, [2, 3, 6])],
                 [int4_tensor("q", rng.integers(-8, 8, 24), [4, 6]),
                  nh.from_array(np.array(0.5, np.float32), "sc")])


def custom(inits, op="Widen"):
    """A node of a custom domain (no type constraints opset-convert could
    check) reading inits."""
    return h.make_node(op, [t.name for t in inits], ["u"], domain="com.example")


def int4_branch(rng):
    def branch(name, op):
        q = int4_tensor(name + "_q", rng.integers(-8, 8, 8), [2, 4])
        return h.make_graph([custom([q]), h.make_node(op, ["u"], [name + "_y"])], name, [],
                            [h.make_tensor_value_info(name + "_y", T.FLOAT, [2, 4])], [q])
    return model([h.make_node("If", ["c"], ["y"], then_branch=branch("then", "Relu"),
                              else_branch=branch("else", "Neg"))],
                 [h.make_tensor_value_info("c", T.BOOL, [])],
                 [h.make_tensor_value_info("y", T.FLOAT, [2, 4])],
                 opset=21, ir=10, domains=["com.example"])


def float8(rng):
    q = T()
    q.name, q.data_type = "f8", FLOAT8E4M3FN
    q.dims.extend([2, 3])
    q.raw_data = bytes(rng.integers(0, 0x70, 6).astype(np.uint8))
    return model([custom([q]), h.make_node("Add", ["u", "x"], ["y"])],
                 [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                 [h.make_tensor_value_info("y", T.FLOAT, [2, 3])], [q], ir=11,
                 domains=["com.example"])


def migrate(opmig, src, dst, args):
    r = subprocess.run([opmig, "migrate", src, "-o", dst, "--no-validate", "--force"] + args,
                       capture_output=True, text=True, timeout=60)
    ok = r.returncode in (0, 1) and os.path.exists(dst)
    check(ok, "%s: opmig migrate %s exit %d %s" % (os.path.basename(dst), " ".join(args),
                                                   r.returncode, r.stderr.strip()[:200]))
    return r.stdout if ok else None


def main():
    args = ortlib.start(sys.argv)
    if not args:
        return 77
    opmig, work = args
    rng = np.random.default_rng(25)
    # (name, model, migrate args, expected opset, expected ir, checked and run)
    cases = [("plain", plain, ["--opset", "17", "--target", "openvino"], 17, 8, True),
             ("plain", plain, ["--target", "generic-npu"], 17, 8, True),
             ("plain", plain, ["--opset", "13"], 13, 7, True),
             ("plain", plain, ["--opset", "8"], 8, 4, True),
             ("plain-ir8", lambda r: plain(r, ir=8), ["--opset", "19"], 19, 8, False),
             ("function", with_function, ["--opset", "13"], 13, 7, True),
             ("int4-folded", int4_folded, ["--opset", "17"], 17, 8, True),
             ("int4-branch", int4_branch, ["--opset", "19"], 19, 10, False),
             ("float8", float8, ["--opset", "17"], 17, 9, False)]
    jobs, names = [], []
    for k, (name, make, extra, opset, ir, run) in enumerate(cases):
        src = os.path.join(work, "%s-%d.onnx" % (name, k))
        onnx.save(make(np.random.default_rng(k)), src)
        dst = os.path.join(work, "%s-%d.out.onnx" % (name, k))
        out = migrate(opmig, src, dst, extra)
        if out is None:
            continue
        m = onnx.load(dst)
        got = max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))
        what = "%s %s" % (name, " ".join(extra))
        check(got == opset and m.ir_version == ir,
              "%s: opset %d ir_version %d (want %d, %d)" % (what, got, m.ir_version, opset, ir))
        check(("ir_version %d -> %d" % (onnx.load(src).ir_version, ir) in out) ==
              (ir < onnx.load(src).ir_version),
              "%s: the report notes the ir_version change" % what)
        if not run:
            continue
        try:
            onnx.checker.check_model(dst, full_check=True)
            check(True, "%s: onnx.checker full_check" % what)
        except onnx.checker.ValidationError as e:
            check(False, "%s: onnx.checker: %s" % (what, str(e).splitlines()[0]))
        feeds = {i.name: rng.standard_normal(
            [d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
            for i in onnx.load(src).graph.input}
        jobs += [(src, feeds), (dst, feeds)]
        names.append(what)
    res = ortlib.run_many(jobs, os.path.join(work, "ort"))
    for i, what in enumerate(names):
        want, got = res[2 * i], res[2 * i + 1]
        if isinstance(want, str) or isinstance(got, str):
            check(False, "%s: onnxruntime: %s" % (what, want if isinstance(want, str) else got))
            continue
        err = max(float(np.max(np.abs(a - b))) if a.size else 0.0 for a, b in zip(want, got))
        ref = max(float(np.max(np.abs(a))) if a.size else 0.0 for a in want)
        check(len(want) == len(got) and err <= 1e-5 * max(ref, 1.0),
              "%s: onnxruntime agrees (max |diff| %.3g)" % (what, err))
    print("%d failures" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
