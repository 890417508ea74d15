"""qdqlib.py: what the tests of 8-bit quantized units share (qdq_units.py,
qdq_cl.py, conv_int_cast.py, matmul_int_cast.py, qconv_props.py;
/usr/bin/python3 with onnx and numpy): the code types and their ranges,
seeded random codes, the units' requantization, `opmig run` of a model on
.npy feeds with its --stats text (the gather, NonMaxSuppression and Einsum
property tests use it too), how far apart two arrays of codes are,
and the int-cast tests' loop over their cases (unit_cases).

    import functools, qdqlib
    from qdqlib import LIM, T, requant, steps
    q8 = functools.partial(qdqlib.q8, RNG)      # q8(dtype, shape)
    outs, stats = qdqlib.run(opmig, model, {"x": x}, workdir, "--exact")
    # outs: the outputs (arrays in graph order), or a str (opmig's
    # message, stats then None)
    y = qdqlib.opmig_out(opmig, model, {"x": x}, workdir, 2)   # or its message
    n = qdqlib.fused(stats, "QuantizeLinear")
"""
import os
import re
import subprocess

import numpy as np
import onnx
from onnx import TensorProto

import ortlib

T = {np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint8): TensorProto.UINT8}
LIM = {np.dtype(np.int8): (-128, 127), np.dtype(np.uint8): (0, 255)}


def q8(rng, dtype, shape):
    """Codes of dtype drawn from rng over its whole range."""
    lo, hi = LIM[np.dtype(dtype)]
    return rng.integers(lo, hi + 1, size=shape).astype(dtype)


def requant(acc, mult, zp, dt):
    """The unit: float32(acc) * float32 mult, half to even, + zp, saturated."""
    lo, hi = LIM[np.dtype(dt)]
    v = np.rint(acc.astype(np.float32) * mult) + np.float32(zp)
    return np.clip(v, lo, hi).astype(dt)


def steps(a, b):
    """The largest difference of two arrays of codes (1 << 20 when their
    shapes differ)."""
    if a.shape != b.shape:
        return 1 << 20
    return int(np.max(np.abs(a.astype(np.int64) - b.astype(np.int64)))) if a.size else 0


def remap(c, s, z, ys, yz, yt):
    """QuantizeLinear(DequantizeLinear(c)) in float32, as the kernels."""
    lo, hi = LIM[np.dtype(yt)]
    d = (c.astype(np.int32) - int(z)).astype(np.float32) * np.float32(s)
    v = np.rint((d / np.float32(ys)).astype(np.float32)) + np.float32(int(yz))
    return np.clip(v, lo, hi).astype(yt)


def run(opmig, path, feeds, d, *flags, env=None, threads=1):
    """`opmig run PATH NAME=D/NAME.npy... -O D --out-format npy --threads
    THREADS --stats FLAGS` (threads None: opmig's default): (the outputs,
    its stdout), the output files removed once read; or (its stderr, None)
    when it failed."""
    args = []
    for name, a in feeds.items():
        np.save(os.path.join(d, name + ".npy"), a)
        args.append("%s=%s" % (name, os.path.join(d, name + ".npy")))
    r = subprocess.run([opmig, "run", path] + args + ["-O", d, "--out-format", "npy"] +
                       (["--threads", str(threads)] if threads else []) + ["--stats"] +
                       list(flags), capture_output=True, text=True, env=env)
    if r.returncode:
        return r.stderr.strip(), None
    outs = []
    while os.path.exists(os.path.join(d, "output_%d.npy" % len(outs))):
        f = os.path.join(d, "output_%d.npy" % len(outs))
        outs.append(np.load(f))
        os.remove(f)
    return outs, r.stdout


def opmig_out(opmig, path, feeds, d, threads):
    """run()'s first output, or its message (a str) when it failed."""
    outs, stats = run(opmig, path, feeds, d, threads=threads)
    return outs if stats is None else outs[0]


def fused(stats, op):
    """How many of op's nodes --stats says were done inside other nodes'
    kernels (its op table's "fused" column)."""
    m = re.search(r"^%s\s+\d+\s+\d+\s+(\d+)" % op, stats, re.M)
    return int(m.group(1)) if m else 0


def same(a, b):
    """The same dtype, shape and bytes."""
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def against(got, exact, refs):
    """What is wrong with a unit's outputs got: each must be refs' bit for
    bit and --exact's (exact); a list of messages."""
    bad = []
    for i, r in enumerate(refs):
        if not same(got[i], r):
            bad.append("output %d: %d of %d values differ from numpy's" %
                       (i, int(np.sum(got[i] != r)) if got[i].shape == r.shape else -1, r.size))
        if not same(got[i], exact[i]):
            bad.append("output %d differs from --exact's" % i)
    return bad


def ort_bitwise(jobs, wants, workdir):
    """onnxruntime-node on jobs [(model, feeds)] against wants [(what,
    opmig's outputs)]: prints a FAIL line for each case it runs that is not
    bit-identical and a summary (a notice when it is absent); the
    failures."""
    why = ortlib.available()
    if why:
        print("notice: %s; onnxruntime comparison skipped" % why)
        return 0
    fails, n_same, n_run = 0, 0, 0
    for (what, got), res in zip(wants, ortlib.run_many(jobs, workdir)):
        if isinstance(res, str):
            continue   # no kernel for these types in onnxruntime's CPU provider
        n_run += 1
        if all(same(np.asarray(a), b) for a, b in zip(res, got)):
            n_same += 1
        else:
            print("FAIL %s: onnxruntime differs" % what)
            fails += 1
    print("onnxruntime: %d of %d cases it runs bit-identical" % (n_same, n_run))
    return fails


def unit_cases(opmig, work, cases, ops):
    """The int-cast units' cases (conv_int_cast.py, matmul_int_cast.py):
    each (what, model, feeds, refs, want, want_exact) saved in WORK/cK and
    run as usual and with --exact; its outputs refs' and --exact's bit for
    bit (against), the nodes of each op of ops --stats counts as done inside
    others want (want_exact with --exact); onnxruntime-node bit for bit
    (ort_bitwise).  Prints a FAIL line per failure and the summary; returns
    the exit status (1 on a failure)."""
    fails, jobs, wants = 0, [], []
    for k, (what, mdl, feeds, refs, want, want_exact) in enumerate(cases):
        d = os.path.join(work, "c%d" % k)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "m.onnx")
        onnx.save(mdl, path)
        res = [run(opmig, path, feeds, d, *flags) for flags in ((), ("--exact",))]
        if any(stats is None for _, stats in res):
            print("FAIL %s: %s" % (what, res[0][0] if res[0][1] is None else res[1][0]))
            fails += 1
            continue
        (got, stats), (exact, stats_exact) = res
        done = tuple(fused(stats, op) for op in ops)
        done_exact = tuple(fused(stats_exact, op) for op in ops)
        bad = against(got, exact, refs)
        if done != want or done_exact != want_exact:
            bad.append("%s done inside other nodes: %s (--exact %s), expected %s (%s)" %
                       (", ".join(ops), done, done_exact, want, want_exact))
        if bad:
            print("FAIL %s: %s" % (what, "; ".join(bad)))
            fails += 1
        jobs.append((path, feeds))
        wants.append((what, got))
    fails += ort_bitwise(jobs, wants, os.path.join(work, "ort"))
    print("%d cases, %d failures" % (len(cases), fails))
    return 1 if fails else 0
