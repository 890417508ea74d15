#!/usr/bin/python3
"""quant_report.py OPMIG WORKDIR MODEL...: the tables of bench/quant.sh
from its reports (WORKDIR/MODEL/HEAD.METHOD.json, .time), plus
onnxruntime-node (one thread) against opmig on each model's minmax int8
model over the validation samples, computing the graph as written (no
graph optimizations: the QDQ graph's float semantics, as opmig does) and
optimized (its integer kernels in place of the QDQ node units): the
largest difference in steps
of the output's quantization (or relative to the output's largest value
when the output is float, as a LayerNormalization's), the share of
elements where the two agree exactly, and each runtime's cosine against
the float model (onnxruntime's float run)."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "ort"))
import ortlib  # noqa: E402

METHODS = ("minmax", "percentile", "entropy")


def mib(b):
    return "%.1f MiB" % (b / 1048576.0)


def load(path):
    with open(path) as f:
        return json.load(f)


def times(path):
    with open(path) as f:
        w, u = f.read().split()[-2:]
    return float(w), float(u)


def cos(a, b):
    a, b = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def out_step(path):
    m = onnx.load(path)
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer
             if t.data_type == TensorProto.FLOAT}
    o = m.graph.output[0].name
    for n in m.graph.node:
        if o in n.output and n.op_type == "DequantizeLinear" and n.input[1] in inits:
            return float(inits[n.input[1]])
    return None


def main():
    opmig, work, models = sys.argv[1], sys.argv[2], sys.argv[3:]
    print("%-12s %-8s %-10s %9s %8s %6s %8s %10s %10s %7s %7s" %
          ("model", "head", "method", "cosine", "snr dB", "top1", "max abs", "fp32", "int8",
           "wall s", "cpu s"))
    for m in models:
        for head in ("model", "centred"):
            for meth in METHODS + ("fallback", "timing"):
                p = os.path.join(work, m, "%s.%s.json" % (head, meth))
                if not os.path.exists(p):
                    continue
                r = load(p)
                o = r["outputs"][0]
                w, u = times(p[:-5] + ".time")
                top1 = "%.3f" % o["top1"] if o["top1"] is not None else "-"
                print("%-12s %-8s %-10s %9.6f %8.1f %6s %8.3g %10s %10s %7.1f %7.1f" %
                      (m, "raw" if head == "model" else head, meth, o["cosine"], o["snr_db"],
                       top1, o["max_abs"], mib(r["size"]["weights_before"]),
                       mib(r["size"]["weights_after"]), w, u))
                if meth == "fallback":
                    print("%-12s   criterion %s %s (%.6g before), %d nodes quantized, %d in "
                          "float; returned: %s" %
                          ("", r["criterion"]["text"],
                           "met" if r["criterion"]["met"] else "NOT met",
                           r["criterion"]["worst_before_fallback"], r["nodes_quantized"],
                           r["nodes_float"],
                           ", ".join(s["node"] for s in r["fallback"]) or "none"))
                if meth == "timing":
                    print("%-12s   %d calibration samples, evaluated on them" %
                          ("", r["samples"]["calibration"]))
    why = ortlib.available()
    if why:
        print("onnxruntime: skipped (%s)" % why)
        return 0
    print()
    print("%-12s %8s %-11s %12s %9s %12s %12s" %
          ("model", "samples", "onnxruntime", "max diff", "exact", "opmig cos", "ort cos"))
    for m in models:
        q = os.path.join(work, m, "model.minmax.onnx")
        f = os.path.join(work, m, "model.onnx")
        vdir = os.path.join(work, m, "val")
        sets = sorted(os.listdir(vdir), key=lambda s: int(s.rsplit("_", 1)[1]))
        feeds, mine = [], []
        name = onnx.load(f, load_external_data=False).graph.input[0].name
        for k, s in enumerate(sets):
            t = onnx.TensorProto()
            with open(os.path.join(vdir, s, "input_0.pb"), "rb") as fh:
                t.ParseFromString(fh.read())
            feeds.append({name: numpy_helper.to_array(t)})
            od = os.path.join(work, m, "ort-cmp", "opmig%d" % k)
            os.makedirs(os.path.dirname(od), exist_ok=True)
            subprocess.run([opmig, "run", q, "--data", os.path.join(vdir, s), "-O", od,
                            "--out-format", "npy", "--threads", "1"], check=True,
                           stdout=subprocess.DEVNULL)
            mine.append(np.load(os.path.join(od, sorted(os.listdir(od))[0])))
        ort_f = ortlib.run_many([(f, x) for x in feeds], os.path.join(work, m, "ort-f"),
                                optimize=True)
        step = out_step(q)
        a = np.concatenate([x.ravel() for x in mine])
        for opt in (False, True):
            ort_q = ortlib.run_many([(q, x) for x in feeds],
                                    os.path.join(work, m, "ort-q%d" % opt), optimize=opt)
            bad = [x for x in ort_q + ort_f if isinstance(x, str)]
            if bad:
                print("%-12s onnxruntime: %s" % (m, bad[0]))
                continue
            b = np.concatenate([x[0].ravel() for x in ort_q])
            fl = np.concatenate([x[0].ravel() for x in ort_f])
            d = np.abs(a - b).max()
            diff = "%.2f steps" % (d / step) if step else "%.2g rel" % (d / np.abs(b).max())
            print("%-12s %8d %-11s %12s %8.2f%% %12.6f %12.6f" %
                  (m, len(sets), "optimized" if opt else "as written", diff,
                   100.0 * np.mean(a == b), cos(a, fl), cos(b, fl)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
