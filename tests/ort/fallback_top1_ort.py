"""fallback_top1_ort.py OPMIG WORKDIR: the accuracy fallback of `opmig
quantize --weight-only int4` on a decoder ranks MatMuls first by the top-1
flips each causes alone quantized.  The tiny decomposed decoder on one
prompt (numpy rng 6, 8 tokens) as --validation-data, where ranking by the
cosine alone returned all 15 projection MatMuls to float (0 quantized):
- the result keeps at least 8 MatMulNBits, and in onnxruntime-node its
  logits keep the original's top-1 token at every position with cosine
  >= 0.99 (the criterion opmig says it met);
- the flips the report gives for a node (top1_flips_alone) equal those
  counted from onnxruntime-node's logits of the model with only that node
  quantized (opmig quantize --exclude every other MatMul --no-fallback),
  for the first node returned to float and for one of 0 flips;
- the first node returned to float causes flips, a node returned later
  causes no more than it does.
Exits 1 on a failure, 77 when onnxruntime-node is absent."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ortlib  # noqa: E402
import quantize_nbits_ort as qn  # noqa: E402
check = ortlib.check


def quantize(opmig, src, dst, data, extra):
    r = subprocess.run([opmig, "quantize", src, "-o", dst, "--weight-only", "int4",
                        "--validation-data", data, "--json"] + qn.DIMS + extra,
                       capture_output=True, text=True, timeout=120)
    try:
        return r, json.loads(r.stdout)
    except ValueError:
        return r, None


def main():
    args = ortlib.start(sys.argv)
    if not args:
        return 77
    opmig, work = args
    src = qn.tiny_decoder(work)
    names = [i.name for i in onnx.load(src).graph.input]
    f = qn.feeds(np.random.default_rng(6).integers(0, qn.VOCAB, size=(1, qn.S)))
    data = os.path.join(work, "data")
    qn.write_samples(data, [f], names)
    dst = os.path.join(work, "q.onnx")
    r, rep = quantize(opmig, src, dst, data, [])
    check(r.returncode == 0 and rep and rep["criterion"]["met"],
          "quantize: exit %d, criterion met" % r.returncode)
    if not rep:
        return ortlib.failures()
    nq = [n.op_type for n in onnx.load(dst).graph.node].count("MatMulNBits")
    check(nq >= 8, "%d MatMulNBits kept (ranking by cosine alone kept 0)" % nq)
    nodes = {n["name"]: n for n in rep["nodes"]}
    steps = [s["node"] for s in rep["fallback"]]
    first = steps[0] if steps else None
    zero = [n["name"] for n in rep["nodes"] if n.get("top1_flips_alone") == 0]
    check(first is not None and nodes[first].get("top1_flips_alone", 0) >= 1 and
          all(nodes[s]["top1_flips_alone"] <= nodes[first]["top1_flips_alone"] for s in steps),
          "the first node returned to float causes the most flips (%s)" %
          [(s, nodes[s].get("top1_flips_alone")) for s in steps])
    check(len(zero) >= 1, "some node causes no flip alone")
    # the flips, counted here from onnxruntime-node's logits
    mm = [n["name"] for n in rep["nodes"] if n.get("rank")]
    jobs = [(src, f), (dst, f)]
    which = [x for x in (first, zero[0] if zero else None) if x]
    for k, name in enumerate(which):
        one = os.path.join(work, "one%d.onnx" % k)
        r1, _ = quantize(opmig, src, one, data, ["--no-fallback", "--force", "--exclude",
                                                  ",".join(x for x in mm if x != name)])
        check(r1.returncode in (0, 1) and os.path.exists(one), "%s alone quantized" % name)
        jobs.append((one, f))
    res = ortlib.run_many(jobs, os.path.join(work, "ort"), timeout=120)
    if any(isinstance(x, str) for x in res):
        check(False, "onnxruntime-node: %s" % [x for x in res if isinstance(x, str)])
        return ortlib.failures()
    cmin, top, npos = qn.by_position([res[1][0]], [res[0][0]])
    check(cmin >= 0.99 and top == npos, "onnxruntime-node: the result keeps every top-1 "
          "token (%d/%d), min cosine %.6f >= 0.99" % (top, npos, cmin))
    for k, name in enumerate(which):
        _, t, n = qn.by_position([res[2 + k][0]], [res[0][0]])
        check(n - t == nodes[name]["top1_flips_alone"],
              "%s alone quantized: %d flips in onnxruntime-node, opmig says %s" %
              (name, n - t, nodes[name]["top1_flips_alone"]))
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
