"""einsum_props.py OPMIG WORKDIR: Einsum (runtime/kernels/k_einsum.c:
pairwise contractions as batched products, the batch's products or one
product's rows over the session's threads) on seeded random operands of
the equations exporters write (a transformer's projections and attention
as TF/JAX/ALBERT export them, batched matrix products, an outer product,
a trace, a sum over a label, implicit output, an ellipsis), float32 and
float64, at one thread and at two: each result within 1e-5 of numpy's
einsum in float64 (relative to the largest magnitude), and the int64 ones
exact.
Prints a line per failure and a summary; exits 1 on a failure."""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qdqlib import opmig_out  # noqa: E402

RNG = np.random.default_rng(1244)
CASES = [
    ("abc,cde->abde", [(2, 33, 48), (48, 6, 16)]),
    ("aecd,abcd->acbe", [(1, 40, 6, 16), (1, 37, 6, 16)]),
    ("acbe,aecd->abcd", [(1, 6, 37, 40), (1, 40, 6, 16)]),
    ("abcd,cde->abe", [(2, 30, 6, 16), (6, 16, 96)]),
    ("abc,cd->abd", [(3, 25, 96), (96, 130)]),
    ("bhqd,bhkd->bhqk", [(2, 12, 20, 32), (2, 12, 24, 32)]),
    ("bhqk,bhkd->bhqd", [(2, 12, 20, 24), (2, 12, 24, 32)]),
    ("ij,jk", [(70, 300), (300, 90)]),
    ("i,j->ij", [(50,), (60,)]),
    ("ii->", [(40, 40)]),
    ("ij->i", [(30, 70)]),
    ("...ij,...jk->...ik", [(3, 2, 17, 19), (3, 2, 19, 23)]),
    ("bij,bjk->bik", [(64, 8, 8), (64, 8, 8)]),
]



def main():
    opmig, work = sys.argv[1], sys.argv[2]
    fails, n = 0, 0
    for k, (eq, shapes) in enumerate(CASES):
        for dt in (np.float32, np.float64, np.int64):
            if dt == np.int64 and k % 3:
                continue
            n += 1
            ops = [(RNG.integers(-9, 10, s) if dt == np.int64 else
                    RNG.standard_normal(s)).astype(dt) for s in shapes]
            want = np.einsum(eq, *[o.astype(np.float64) if dt != np.int64 else o for o in ops])
            names = ["x%d" % i for i in range(len(ops))]
            t = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dt)]
            g = helper.make_graph(
                [helper.make_node("Einsum", names, ["y"], equation=eq)], "e",
                [helper.make_tensor_value_info(nm, t, list(o.shape)) for nm, o in zip(names, ops)],
                [helper.make_tensor_value_info("y", t, list(want.shape))])
            mdl = helper.make_model(g, opset_imports=[helper.make_opsetid("", 12)])
            mdl.ir_version = 8
            onnx.checker.check_model(mdl, full_check=True)
            d = os.path.join(work, "c%d_%s" % (k, np.dtype(dt).name))
            os.makedirs(d, exist_ok=True)
            path = os.path.join(d, "m.onnx")
            onnx.save(mdl, path)
            for threads in (1, 2):
                got = opmig_out(opmig, path, dict(zip(names, ops)), d, threads)
                if isinstance(got, str):
                    bad = got
                elif got.shape != want.shape:
                    bad = "shape %s, numpy %s" % (got.shape, want.shape)
                elif dt == np.int64:
                    bad = None if np.array_equal(got, want) else "differs from numpy"
                else:
                    err = np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30) \
                        if want.size else 0
                    bad = None if err <= 1e-5 else "%.2e from numpy" % err
                if bad:
                    print("FAIL %s %s, %d threads: %s" % (eq, np.dtype(dt).name, threads, bad))
                    fails += 1
    print("%d cases, %d failures" % (n, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
