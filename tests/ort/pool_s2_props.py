"""pool_s2_props.py OPMIG WORKDIR: float32 max pools of column stride 2
with 2x2, 3x3, 2x3 and 3x2 windows (row stride 1 or 2), on seeded random
cases at one thread and two, against numpy: stored plain (a graph input:
k_pool_s2.c and the kernels k_pool.c tries before it) and stored
channels last (the result of a convolution, runtime/layout_cl.c: the
channels-last kernel of k_pool_nhwc.c), channel counts below, at and
past the kernels' blocks of 16 and 64 channels, odd and even planes,
pads below the window on each side, ceil_mode.  Data with ties, zeros of
both signs, infinities and (some cases) NaN: each output is NaN where
its window holds one, else the window's largest value (the sign of a
zero and a NaN's payload are not compared).  The channels-last cases
read the pool's input as Conv(x, W) of one input channel and a 1x1
window of weights +-1, +-2, +-0.5 (exact products: channel k is x times
its weight), and must have stored both results channels last (--stats).
Prints one line per check; exits 1 on a failure, 77 when onnxruntime-node
is absent (the harness's convention; onnxruntime is not run)."""
import os
import re
import sys

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opmiglib  # noqa: E402
import ortlib  # noqa: E402
from qdqlib import run  # noqa: E402

RNG = np.random.default_rng(2026)
SCALES = np.float32([1, -1, 2, -2, 0.5, -0.5, 4, -0.25])


def cases():
    """(n, c, h, w, kh, kw, sh, pads [top, left, bottom, right], ceil, nan)"""
    fixed = [(1, 64, 60, 80, 2, 2, 2, [0, 0, 0, 0], 0, 0),    # SuperPoint's
             (1, 64, 61, 81, 2, 2, 2, [0, 0, 0, 0], 1, 1),
             (1, 24, 57, 57, 3, 3, 2, [1, 1, 1, 1], 0, 1),    # a ResNet stem's
             (2, 130, 15, 33, 3, 3, 2, [0, 1, 2, 0], 1, 0),
             (1, 80, 9, 40, 3, 2, 1, [1, 0, 1, 1], 0, 1)]
    out = list(fixed)
    while len(out) < 24:
        kh, kw = int(RNG.choice([2, 3])), int(RNG.choice([2, 3]))
        pads = [int(RNG.integers(0, kh)), int(RNG.integers(0, kw)),
                int(RNG.integers(0, kh)), int(RNG.integers(0, kw))]
        h = int(RNG.integers(max(1, kh - pads[0] - pads[2]), 50))
        w = int(RNG.integers(max(1, kw - pads[1] - pads[3]), 75))
        sh, ceil = int(RNG.choice([1, 2])), int(RNG.random() < 0.4)
        if ceil and not (ceil_clear(h, kh, sh, pads[0], pads[2]) and
                         ceil_clear(w, kw, 2, pads[1], pads[3])):
            continue
        out.append((int(RNG.integers(1, 3)), int(RNG.choice([1, 3, 16, 17, 64, 65, 100])),
                    h, w, kh, kw, sh, pads, ceil, int(RNG.random() < 0.5)))
    return out


def out_size(i, k, s, pb, pe, ceil):
    return (i + pb + pe - k + (s - 1 if ceil else 0)) // s + 1


def ceil_clear(i, k, s, pb, pe):
    """Whether ceil_mode's last window starts inside the input or its left
    pad (where the opsets' shape rules agree; the cases keep to those)."""
    return (out_size(i, k, s, pb, pe, 1) - 1) * s < i + pb


def pool_data(shape, nan):
    x = RNG.standard_normal(shape).astype(np.float32)
    ties = RNG.random(shape) < 0.3
    x[ties] = np.round(x[ties])
    special = RNG.random(shape)
    x[special < 0.01] = -np.inf
    x[(special >= 0.01) & (special < 0.013)] = np.inf
    x[(special >= 0.013) & (special < 0.02)] = -0.0
    if nan:
        x[RNG.random(shape) < 0.004] = np.nan
    return x


def pool_ref(x, kh, kw, sh, pads, ceil):
    oh = out_size(x.shape[2], kh, sh, pads[0], pads[2], ceil)
    ow = out_size(x.shape[3], kw, 2, pads[1], pads[3], ceil)
    # pad the far side as far as the last window reaches
    eh = max(pads[2], (oh - 1) * sh + kh - x.shape[2] - pads[0])
    ew = max(pads[3], (ow - 1) * 2 + kw - x.shape[3] - pads[1])
    p = np.pad(x, ((0, 0), (0, 0), (pads[0], eh), (pads[1], ew)), constant_values=-np.inf)
    win = sliding_window_view(p, (kh, kw), axis=(2, 3))[:, :, ::sh, ::2][:, :, :oh, :ow]
    with np.errstate(invalid="ignore"):
        m = np.max(win, axis=(-2, -1))   # NaN where a tap is NaN
    return m


def same_max(got, want):
    return got.shape == want.shape and got.dtype == want.dtype and \
        np.array_equal(np.isnan(got), np.isnan(want)) and \
        bool(np.all((got == want) | np.isnan(want)))


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))


def check(opmig, work):
    cs = cases()
    for layout in ("plain", "cl"):
        nodes, inits, ins, outs, feeds, refs, what = [], [], [], [], {}, [], []
        for i, (n, c, h, w, kh, kw, sh, pads, ceil, nan) in enumerate(cs):
            at = dict(kernel_shape=[kh, kw], strides=[sh, 2], pads=pads, ceil_mode=ceil)
            if layout == "plain":
                x = pool_data((n, c, h, w), nan)
                src = ref_in = "x%d" % i
                ref_in = x
            else:
                x = pool_data((n, 1, h, w), nan)
                s = SCALES[RNG.integers(0, len(SCALES), c)]
                inits.append(numpy_helper.from_array(s.reshape(c, 1, 1, 1), "w%d" % i))
                nodes.append(helper.make_node("Conv", ["x%d" % i, "w%d" % i], ["a%d" % i],
                                              kernel_shape=[1, 1]))
                src = "a%d" % i
                with np.errstate(invalid="ignore"):
                    ref_in = (x * s.reshape(1, c, 1, 1)).astype(np.float32)
            ref = pool_ref(ref_in, kh, kw, sh, pads, ceil)
            nodes.append(helper.make_node("MaxPool", [src], ["p%d" % i], **at))
            # a reader of channels-last values that keeps every bit and
            # is no step of the pool's kernel (a Mul by 1 would be)
            nodes.append(helper.make_node("Concat", ["p%d" % i], ["y%d" % i], axis=1))
            ins.append(vi("x%d" % i, x.shape))
            feeds["x%d" % i] = x
            refs.append(ref)
            outs.append(vi("y%d" % i, ref.shape))
            what.append("MaxPool %dx%d stride %dx2 pads %s%s on %s%s (%s)" % (
                kh, kw, sh, pads, " ceil" if ceil else "", [n, c, h, w],
                ", NaN" if nan else "", layout))
        path = os.path.join(work, "pool_s2_%s.onnx" % layout)
        opmiglib.save(nodes, inits, ins, outs, path, opset=13)
        env = dict(os.environ, OPMIG_DNNL_ALL="1")
        for threads in (1, 2):
            got, stats = run(opmig, path, feeds, work, env=env, threads=threads)
            if stats is None:
                ortlib.check(False, "%s, %d thread(s): opmig ran: %s" % (layout, threads,
                                                                          got[:300]))
                continue
            if layout == "cl":
                m = re.search(r"^results stored channels last: (\d+)$", stats, re.M)
                stored = int(m.group(1)) if m else 0
                ortlib.check(stored >= 2 * len(cs),
                             "cl, %d thread(s): %d results stored channels last (want %d)" %
                             (threads, stored, 2 * len(cs)))
            for i, ref in enumerate(refs):
                ok = same_max(got[i], ref)
                ortlib.check(ok, "%s, %d thread(s): each window's max%s" % (
                    what[i], threads, "" if ok else ": %d of %d differ" % (
                        int(np.sum(~((got[i] == ref) | (np.isnan(got[i]) & np.isnan(ref))))),
                        ref.size) if got[i].shape == ref.shape else ": shape %s, want %s" % (
                        got[i].shape, ref.shape)))


def main():
    s = ortlib.start(sys.argv)
    if not s:
        return 77
    opmig, work = s
    check(opmig, work)
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
