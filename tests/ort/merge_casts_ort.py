"""merge_casts_ort.py OPMIG WORKDIR: pass merge-casts (rewriters/merge_casts.c):
Cast(Cast(x, to M), to D) as Cast(x, to D) where the first Cast is exact
and nothing else reads the middle value.  Small graphs of Casts, migrated
for openvino and ascend (--no-validate): the written Casts (source dtype
and `to` of each, in order) are the expected ones; onnxruntime-node runs
the original and the migrated model on the same X and their outputs are
equal bit for bit, and the original's equal numpy's chain of astype.
Merged: uint8/int8 -> float32 -> float16, bool -> int32 -> float32,
float16 -> float32 -> int32, int8 -> int16 -> int32 -> float32 (three into
one), float16 -> float32 -> float16 (a round trip: both go).  Not merged:
float32 -> int32 -> float32 (truncates), float64 -> float32 -> float16
(rounds twice: values chosen where it differs from one rounding),
int32 -> float32 -> int32 (float32 rounds odd values past 2^24), a middle
value with a second reader, a middle value that is a graph output.  Then
onnxruntime-genai's int4 decoder (testdata/gen/make_decoder.py --form
genai, float32) on ascend: no Cast reads a Cast, the codes' and zero
points' Casts of uint8 go to float16 directly, and onnxruntime-node's
logits of the migrated decoder are within float16's tolerance of the
original's.  Exits 1 on a failure, 77 when onnxruntime-node is absent."""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opmiglib  # noqa: E402
import ortlib  # noqa: E402
from ortlib import check  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NP = {T.UINT8: np.uint8, T.INT8: np.int8, T.INT16: np.int16, T.INT32: np.int32,
      T.FLOAT: np.float32, T.FLOAT16: np.float16, T.DOUBLE: np.float64, T.BOOL: np.bool_}
NAME = {T.UINT8: "uint8", T.INT8: "int8", T.INT16: "int16", T.INT32: "int32",
        T.FLOAT: "float32", T.FLOAT16: "float16", T.DOUBLE: "float64", T.BOOL: "bool"}


def sample(dt, rng, n=96):
    """X of dtype dt: every value of 8-bit types, else a spread."""
    if dt == T.UINT8:
        return np.arange(256, dtype=np.uint8).reshape(4, 64)
    if dt == T.INT8:
        return np.arange(-128, 128, dtype=np.int16).astype(np.int8).reshape(4, 64)
    if dt == T.BOOL:
        return rng.random((4, 24)) < 0.5
    if dt == T.INT32:
        # beyond 2^24, where float32 rounds
        return (rng.integers(-2 ** 30, 2 ** 30, (4, 24)) | 1).astype(np.int32)
    if dt == T.DOUBLE:
        # float16 midpoints nudged up by less than float32 keeps: one
        # rounding goes up, float32 first lands on the midpoint (ties to
        # even: down)
        base = rng.integers(1024, 2047, n).astype(np.float64)
        return (base + 0.5 + 2.0 ** -40).reshape(4, -1) * np.float64(2.0 ** -10)
    return (rng.standard_normal((4, 24)) * 50).astype(NP[dt])


# name, source dtype, the chain's `to`s, extra readers of the middle value
# ("neg": a Neg reads it too, "out": it is a graph output), the ops'
# expected (source dtype, to) after merge-casts
CASES = [
    ("uint8-f32-f16", T.UINT8, [T.FLOAT, T.FLOAT16], "", [(T.UINT8, T.FLOAT16)]),
    ("int8-f32-f16", T.INT8, [T.FLOAT, T.FLOAT16], "", [(T.INT8, T.FLOAT16)]),
    ("bool-i32-f32", T.BOOL, [T.INT32, T.FLOAT], "", [(T.BOOL, T.FLOAT)]),
    ("f16-f32-i32", T.FLOAT16, [T.FLOAT, T.INT32], "", [(T.FLOAT16, T.INT32)]),
    ("int8-i16-i32-f32", T.INT8, [T.INT16, T.INT32, T.FLOAT], "", [(T.INT8, T.FLOAT)]),
    ("f16-f32-f16-neg", T.FLOAT16, [T.FLOAT, T.FLOAT16], "tail", []),
    ("f32-i32-f32", T.FLOAT, [T.INT32, T.FLOAT], "",
     [(T.FLOAT, T.INT32), (T.INT32, T.FLOAT)]),
    ("f64-f32-f16", T.DOUBLE, [T.FLOAT, T.FLOAT16], "",
     [(T.DOUBLE, T.FLOAT), (T.FLOAT, T.FLOAT16)]),
    ("i32-f32-i32", T.INT32, [T.FLOAT, T.INT32], "",
     [(T.INT32, T.FLOAT), (T.FLOAT, T.INT32)]),
    ("uint8-f32-f16-two-readers", T.UINT8, [T.FLOAT, T.FLOAT16], "neg",
     [(T.UINT8, T.FLOAT), (T.FLOAT, T.FLOAT16)]),
    ("uint8-f32-f16-middle-out", T.UINT8, [T.FLOAT, T.FLOAT16], "out",
     [(T.UINT8, T.FLOAT), (T.FLOAT, T.FLOAT16)]),
]


def make(path, src, tos, extra):
    """X -> Cast(tos[0]) -> ... -> Y; extra: "neg" a Neg of the first
    Cast's result as output Z, "out" that result as output Z too, "tail" a
    Neg of the last Cast's result as Y."""
    nodes, v = [], "X"
    for i, to in enumerate(tos):
        nodes.append(helper.make_node("Cast", [v], ["c%d" % i], to=to))
        v = "c%d" % i
    outs = []
    if extra == "tail":
        nodes.append(helper.make_node("Neg", [v], ["Y"]))
    else:
        nodes[-1].output[0] = "Y"
    outs.append(helper.make_tensor_value_info("Y", tos[-1], [4, None]))
    if extra == "neg":
        nodes.append(helper.make_node("Neg", ["c0"], ["Z"]))
    if extra in ("neg", "out"):
        outs.append(helper.make_tensor_value_info("Z" if extra == "neg" else "c0", tos[0],
                                                  [4, None]))
    opmiglib.save(nodes, [], [helper.make_tensor_value_info("X", src, [4, None])], outs, path)


def numpy_ref(x, tos, extra):
    v = x
    mids = []
    for to in tos:
        v = v.astype(NP[to])
        mids.append(v)
    y = -v if extra == "tail" else v
    return [y] + ([-mids[0]] if extra == "neg" else [mids[0]] if extra == "out" else [])


def casts_of(m):
    """(source dtype, to) of each Cast, in order; the source's dtype from
    the graph's inputs or the producing Cast."""
    types = {i.name: i.type.tensor_type.elem_type for i in m.graph.input}
    out = []
    for n in m.graph.node:
        to = [a.i for a in n.attribute if a.name == "to"]
        if n.op_type == "Cast":
            out.append((types.get(n.input[0], -1), to[0]))
        for o in n.output:
            types[o] = to[0] if n.op_type == "Cast" else types.get(n.input[0], -1)
    return out


def migrate(opmig, src, dst, target, extra=()):
    return subprocess.run([opmig, "migrate", src, "--target", target, "-o", dst,
                           "--no-validate"] + list(extra),
                          capture_output=True, text=True, timeout=120)


def decoder(opmig, work, jobs, cmp):
    """The genai int4 decoder on ascend."""
    src = os.path.join(work, "genai.onnx")
    dst = os.path.join(work, "genai-ascend.onnx")
    r = subprocess.run(["/usr/bin/python3", os.path.join(TOP, "testdata/gen/make_decoder.py"),
                        "--preset", "tiny", "--form", "genai", "-o", src],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "make_decoder.py --preset tiny --form genai: exit %d %s" %
          (r.returncode, r.stderr.strip()[-200:] if r.returncode else ""))
    if r.returncode:
        return
    dims = ["--dim", "batch_size=1", "--dim", "sequence_length=8", "--dim",
            "past_sequence_length=0", "--dim", "total_sequence_length=8"]
    r = migrate(opmig, src, dst, "ascend", dims)
    check(r.returncode == 0, "genai decoder on ascend: exit %d %s" %
          (r.returncode, (r.stdout + r.stderr).strip()[-300:] if r.returncode else ""))
    if r.returncode:
        return
    m = onnx.load(dst)
    prod = {o: n for n in m.graph.node for o in n.output}
    inits = {t.name: t.data_type for t in m.graph.initializer}
    pairs = [n.name for n in m.graph.node if n.op_type == "Cast" and
             n.input[0] in prod and prod[n.input[0]].op_type == "Cast"]
    check(not pairs, "genai decoder on ascend: no Cast reads a Cast (%s)" % pairs[:3])
    u8 = [[a.i for a in n.attribute if a.name == "to"][0] for n in m.graph.node
          if n.op_type == "Cast" and inits.get(n.input[0]) == T.UINT8]
    check(len(u8) >= 2 and set(u8) == {T.FLOAT16},
          "genai decoder on ascend: %d Casts of uint8 codes and zero points, all to float16 "
          "(%s)" % (len(u8), sorted(set(u8))))
    rng = np.random.default_rng(5)
    feeds = {}
    for i in m.graph.input:
        shape = [d.dim_value or 0 for d in i.type.tensor_type.shape.dim]
        if i.name == "input_ids":
            feeds[i.name] = rng.integers(0, 100, shape).astype(np.int64)
        elif i.name == "attention_mask":
            feeds[i.name] = np.ones(shape, np.int64)
        else:
            feeds[i.name] = np.zeros(shape, NP[i.type.tensor_type.elem_type])
    jobs.append((src, feeds))
    jobs.append((dst, feeds))
    cmp.append(("genai decoder on ascend against the original", len(jobs) - 1, len(jobs) - 2,
                "fp16"))


def main():
    args = ortlib.start(sys.argv)
    if not args:
        return 77
    opmig, work = args
    rng = np.random.default_rng(1238)
    jobs, cmp = [], []
    for name, src, tos, extra, want in CASES:
        path = os.path.join(work, name + ".onnx")
        make(path, src, tos, extra)
        x = sample(src, rng)
        ref = numpy_ref(x, tos, extra)
        jobs.append((path, {"X": x}))
        orig = len(jobs) - 1
        cmp.append(("%s: the original in onnxruntime against numpy" % name, orig, ref, "exact"))
        if name in ("f64-f32-f16", "i32-f32-i32"):
            once = x.astype(NP[tos[-1]])
            check(np.sum(once != ref[0]) > 0,
                  "%s: numpy: %d of %d values differ from one Cast" %
                  (name, int(np.sum(once != ref[0])), x.size))
        for target in ("openvino", "ascend"):
            what = "%s on %s" % (name, target)
            dst = os.path.join(work, "%s-%s.onnx" % (name, target))
            r = migrate(opmig, path, dst, target, ["--precision", "fp32", "--force"])
            check(r.returncode == 0, "%s: opmig migrate exit %d %s" %
                  (what, r.returncode,
                   (r.stdout + r.stderr).strip()[-300:] if r.returncode else ""))
            if r.returncode:
                continue
            got = casts_of(onnx.load(dst))
            check(got == want, "%s: Casts %s (want %s)" % (
                what, [(NAME.get(a, a), NAME.get(b, b)) for a, b in got],
                [(NAME[a], NAME[b]) for a, b in want]))
            merged = "merge-casts" in r.stdout
            check(merged == (len(want) < len(tos)),
                  "%s: the report %s merge-casts" % (what, "names" if merged else "omits"))
            jobs.append((dst, {"X": x}))
            cmp.append(("%s: against the original in onnxruntime" % what, len(jobs) - 1, orig,
                        "exact"))
    decoder(opmig, work, jobs, cmp)
    res = ortlib.run_many(jobs, os.path.join(work, "ort"), timeout=300)
    for what, j, o, how in cmp:
        got = res[j]
        want = o if isinstance(o, list) else res[o]
        if isinstance(got, str) or isinstance(want, str):
            check(False, "%s: onnxruntime: %s" % (what, got if isinstance(got, str) else want))
            continue
        if how == "exact":
            same = len(got) == len(want) and all(
                np.asarray(g).dtype == np.asarray(w).dtype and
                np.asarray(g).tobytes() == np.asarray(w).tobytes() for g, w in zip(got, want))
            check(same, "%s: equal bit for bit" % what)
            continue
        g, w = np.asarray(got[0], np.float32), np.asarray(want[0], np.float32)
        tol = 2.0 ** -7 * float(np.max(np.abs(w)))
        err = float(np.max(np.abs(g - w))) if g.shape == w.shape else float("inf")
        check(err <= tol, "%s: logits max |diff| %.3g, tol %.3g" % (what, err, tol))
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
