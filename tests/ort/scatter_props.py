"""scatter_props.py OPMIG WORKDIR: the gather family's element walks
(runtime/kernels/k_gather_par.c: GatherElements, ScatterElements and
ScatterND with each reduction) on seeded random cases: ranks 1 to 4,
every axis, negative indices, duplicate indices (a destination updated
many times, in the indices' order), float32, float64, int32 and int64
data (the typed loops) and float16 and uint8 (the generic path), at one
thread and at two (the scatters split over a dim other than the axis).
Each output must be numpy's bit for bit: for GatherElements (data indexed by the coordinates with the axis's
replaced), the ufuncs' unbuffered .at for the reductions (which
apply the updates one by one in order), plain assignment in order for
none; an index out of range must fail naming the index.
Prints a line per failure and a summary; exits 1 on a failure."""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qdqlib import opmig_out  # noqa: E402

RNG = np.random.default_rng(1242)
TYPES = [np.float32, np.float64, np.int32, np.int64, np.float16, np.uint8]
UFUNC = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}
N_CASES = 48


def values(dt, shape):
    if np.dtype(dt).kind == "f":
        return RNG.uniform(-2, 2, shape).astype(dt)
    if dt == np.uint8:
        return RNG.integers(0, 5, shape).astype(dt)
    return RNG.integers(-50, 50, shape).astype(dt)


def elements_case(k):
    """GatherElements or ScatterElements: (nodes, feeds, inits, want)."""
    r = 1 + k % 4
    dims = [int(RNG.integers(1, 6)) for _ in range(r)]
    dims[-1] = int(RNG.integers(1, 40)) if k % 3 == 0 else dims[-1]
    axis = int(RNG.integers(-r, r))
    ax = axis % r
    dt = TYPES[k % len(TYPES)]
    x = values(dt, dims)
    idims = [int(RNG.integers(1, d + 1)) for d in dims]
    idims[ax] = int(RNG.integers(1, 3 * dims[ax] + 2))   # many repeats
    ind = RNG.integers(-dims[ax], dims[ax], idims).astype(np.int64)
    pos = np.where(ind < 0, ind + dims[ax], ind)
    if k % 2 == 0:
        full = np.indices(idims)
        full[ax] = pos
        want = x[tuple(full)]
        node = helper.make_node("GatherElements", ["x", "i"], ["y"], axis=axis)
        return "GatherElements", [node], {"x": x}, [numpy_helper.from_array(ind, "i")], want
    red = ("none", "add", "mul", "max", "min")[(k // 2) % 5]
    u = values(dt, idims)
    want = x.copy()
    if red == "none":
        # the updates in the indices' order: the last write wins
        for j in np.ndindex(*idims):
            t = list(j)
            t[ax] = pos[j]
            want[tuple(t)] = u[j]
    else:
        full = np.indices(idims)
        full[ax] = pos
        UFUNC[red].at(want, tuple(full), u)
    node = helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=axis,
                            reduction=red)
    return "ScatterElements " + red, [node], {"x": x, "u": u}, \
        [numpy_helper.from_array(ind, "i")], want


def nd_case(k):
    r = 1 + k % 3
    dims = [int(RNG.integers(1, 7)) for _ in range(r + 1)]
    m = int(RNG.integers(1, r + 1))
    dt = TYPES[k % len(TYPES)]
    x = values(dt, dims)
    ns = int(RNG.integers(1, 12))
    ind = np.stack([RNG.integers(-dims[i], dims[i], ns) for i in range(m)], axis=-1)
    ind = ind.astype(np.int64)
    red = ("none", "add", "mul", "max", "min")[k % 5]
    if red == "none":   # the spec leaves duplicates' order open: none here
        keys = {tuple(int(v) % dims[i] for i, v in enumerate(row)): row for row in ind}
        ind = np.asarray(list(keys.values()), np.int64).reshape(-1, m)
        ns = ind.shape[0]
    u = values(dt, [ns] + dims[m:])
    want = x.copy()
    for t in range(ns):
        key = tuple(int(v) % dims[i] for i, v in enumerate(ind[t]))
        if red == "none":
            want[key] = u[t]
        else:
            want[key] = UFUNC[red](want[key], u[t])
    node = helper.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction=red)
    return "ScatterND " + red, [node], {"x": x, "u": u}, \
        [numpy_helper.from_array(ind, "i")], want


def model(nodes, feeds, inits, want):
    ins = [helper.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(a.dtype)],
                                         list(a.shape)) for n, a in feeds.items()]
    out = helper.make_tensor_value_info("y", onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(want.dtype)],
                                        list(want.shape))
    g = helper.make_graph(nodes, "s", ins, [out], inits)
    mdl = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    mdl.ir_version = 8
    onnx.checker.check_model(mdl, full_check=True)
    return mdl



def main():
    opmig, work = sys.argv[1], sys.argv[2]
    fails = 0
    cases = [elements_case(k) for k in range(N_CASES)] + [nd_case(k) for k in range(N_CASES // 2)]
    for k, (what, nodes, feeds, inits, want) in enumerate(cases):
        d = os.path.join(work, "c%d" % k)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "m.onnx")
        onnx.save(model(nodes, feeds, inits, want), path)
        for threads in (1, 2):
            got = opmig_out(opmig, path, feeds, d, threads)
            if isinstance(got, str) or got.dtype != want.dtype or got.shape != want.shape or \
                    got.tobytes() != want.tobytes():
                print("FAIL case %d (%s, %s %s, %d threads): %s" % (
                    k, what, want.dtype, list(want.shape), threads,
                    got if isinstance(got, str) else "differs from numpy"))
                fails += 1
    # an index out of range: one line naming it
    x = np.zeros((3, 4), np.float32)
    bad = np.asarray([[0, 1, 5, 2]], np.int64)
    d = os.path.join(work, "bad")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "m.onnx")
    node = helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=0, reduction="add")
    onnx.save(model([node], {"x": x, "u": np.ones((1, 4), np.float32)},
                    [numpy_helper.from_array(bad, "i")], x), path)
    got = opmig_out(opmig, path, {"x": x, "u": np.ones((1, 4), np.float32)}, d, 2)
    if not isinstance(got, str) or "index 5 out of range" not in got:
        print("FAIL index out of range: %s" % (got if isinstance(got, str) else "no error"))
        fails += 1
    print("%d cases, %d failures" % (len(cases) + 1, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
