"""nms_props.py OPMIG WORKDIR: NonMaxSuppression (runtime/kernels/
k_detect.c: candidates taken in score order from a heap, each box read
when its candidate is reached) on seeded random cases against
onnxruntime-node: batches, classes, corner boxes with either diagonal and
center boxes, scores with many ties (equal scores: the lower box index
first), with and without a score threshold, output limits from 1 to all
boxes, IoU thresholds 0 to 1.  Each case's selected indices must be
onnxruntime's exactly, in order.
Prints a line per failure and a summary; exits 1 on a failure (77 when
onnxruntime-node is absent: skipped)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ortlib  # noqa: E402
from qdqlib import opmig_out  # noqa: E402

RNG = np.random.default_rng(1243)
N_CASES = 40


def case(k):
    nb, nc, ns = 1 + k % 3, 1 + (k // 3) % 4, int(RNG.integers(1, 400))
    center = k % 4 == 1
    if center:
        xy = RNG.uniform(0, 50, (nb, ns, 2))
        wh = RNG.uniform(0.5, 12, (nb, ns, 2))
        boxes = np.concatenate([xy, wh], axis=2).astype(np.float32)
    else:
        boxes = RNG.uniform(0, 50, (nb, ns, 4)).astype(np.float32)
    # coarse scores: many ties
    scores = (RNG.integers(0, 20, (nb, nc, ns)) / 20.0).astype(np.float32)
    max_out = int(RNG.choice([1, 3, 10, 50, ns + 5]))
    iou = np.float32(RNG.choice([0.0, 0.3, 0.5, 0.7, 1.0]))
    thr = k % 3 != 2
    ins = ["boxes", "scores", "max_out", "iou"] + (["thr"] if thr else [])
    inits = [numpy_helper.from_array(np.asarray([max_out], np.int64), "max_out"),
             numpy_helper.from_array(np.asarray([iou], np.float32), "iou")]
    if thr:
        inits.append(numpy_helper.from_array(np.asarray([0.4], np.float32), "thr"))
    node = helper.make_node("NonMaxSuppression", ins, ["sel"], center_point_box=int(center))
    g = helper.make_graph([node], "nms",
                          [helper.make_tensor_value_info("boxes", TensorProto.FLOAT,
                                                         list(boxes.shape)),
                           helper.make_tensor_value_info("scores", TensorProto.FLOAT,
                                                         list(scores.shape))],
                          [helper.make_tensor_value_info("sel", TensorProto.INT64,
                                                         ["n", 3])], inits)
    mdl = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    mdl.ir_version = 8
    onnx.checker.check_model(mdl, full_check=True)
    what = "case %d (%d batches, %d classes, %d boxes%s, limit %d, iou %.1f%s)" % (
        k, nb, nc, ns, ", center" if center else "", max_out, iou,
        ", score threshold" if thr else "")
    return what, mdl, {"boxes": boxes, "scores": scores}



def main():
    start = ortlib.start(sys.argv)
    if not start:
        return 77
    opmig, work = start
    jobs, gots, whats, fails = [], [], [], 0
    for k in range(N_CASES):
        what, mdl, feeds = case(k)
        d = os.path.join(work, "c%d" % k)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "m.onnx")
        onnx.save(mdl, path)
        jobs.append((path, feeds))
        gots.append(opmig_out(opmig, path, feeds, d, None))
        whats.append(what)
    for what, got, res in zip(whats, gots, ortlib.run_many(jobs, os.path.join(work, "ort"))):
        if isinstance(got, str) or isinstance(res, str):
            print("FAIL %s: %s" % (what, got if isinstance(got, str) else res))
            fails += 1
        elif got.shape != np.asarray(res[0]).shape or not np.array_equal(got, res[0]):
            print("FAIL %s: %d selected, onnxruntime %d, or another order" % (
                what, got.shape[0], np.asarray(res[0]).shape[0]))
            fails += 1
    print("%d cases, %d failures" % (N_CASES, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
