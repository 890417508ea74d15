#!/bin/sh
# t1216-quantize-rank-budget.sh: the accuracy fallback's ranking and steps
# stay linear in the model's size beyond 16 quantized nodes
# (rewriters/quant_fallback.c): the tiny decoder with 4 layers (29
# MatMuls) quantized weight-only int4 with one prompt as
# --validation-data (as t1191 with 2 layers).  Checked, against
# onnxruntime-node where numbers are involved:
#   - the report's notes say the ranking went by groups, with how many
#     nodes tried one by one (at most 16); exactly those nodes have
#     metric_if_float and top1_flips_alone and rank first;
#   - the nodes tried alone are the whole groups (4 consecutive MatMuls in
#     graph order) most helpful in float, by onnxruntime-node's logits of
#     the model with each group in float (fewest top-1 flips left, then the
#     highest worst cosine over the outputs), up to 16 nodes;
#   - each node's flips alone quantized, counted from onnxruntime-node's
#     logits of the model with only that node quantized (quantize
#     --exclude every other MatMul --no-fallback), equal opmig's for every
#     node it gives them for, and a node of the most flips of all 29 is
#     among those it tried;
#   - prompt 6 (no batches): the result keeps the original's top-1 token at
#     every position with cosine >= 0.99 in onnxruntime-node, as opmig says
#     (13 MatMuls stay quantized; the old full ranking kept 6);
#   - prompt 11: past 16 single steps the fallback returns 2, then 4 nodes
#     a trial (steps of a batch share worst_before and worst_after), and the
#     result again keeps every top-1 token in onnxruntime-node.
# Skipped when python-onnx or onnxruntime-node is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }

timeout 200 $PY - "$TOP" "$OPMIG" "$T/work" >"$T/f.out" 2>&1 <<'PY'
import json, os, re, subprocess, sys
import numpy as np
import onnx
sys.path.insert(0, sys.argv[1] + "/tests/ort")
import ortlib
import quantize_nbits_ort as qn
from decoder_common import GEN
check = ortlib.check
LAYERS = 4

args = ortlib.start(sys.argv[1:])
if not args:
    sys.exit(77)
opmig, work = args
os.chdir(work)
subprocess.run(["/usr/bin/python3", GEN, "--preset", "tiny", "--layers", str(LAYERS), "-o",
                "t.onnx"], check=True, capture_output=True)
names = [i.name for i in onnx.load("t.onnx").graph.input]


def feeds(seed):
    f = qn.feeds(np.random.default_rng(seed).integers(0, qn.VOCAB, size=(1, qn.S)))
    for i in range(LAYERS):
        for k in ("key", "value"):
            f["past_key_values.%d.%s" % (i, k)] = np.zeros((1, qn.KV, 0, qn.HD), np.float32)
    return f


def quantize(dst, data, extra):
    r = subprocess.run([opmig, "quantize", "t.onnx", "-o", dst, "--weight-only", "int4",
                        "--validation-data", data, "--json"] + qn.DIMS + extra,
                       capture_output=True, text=True, timeout=120)
    try:
        return r, json.loads(r.stdout)
    except ValueError:
        return r, None


for seed in (6, 11):
    f = feeds(seed)
    data = "data%d" % seed
    qn.write_samples(data, [f], names)
    r, rep = quantize("q%d.onnx" % seed, data, [])
    check(r.returncode == 0 and rep and rep["criterion"]["met"],
          "prompt %d: quantize exit %d, criterion met" % (seed, r.returncode))
    if not rep:
        print(r.stderr)
        break
    note = [n for n in rep["notes"] if n.startswith("ranking: ")]
    m = re.match(r"ranking: 29 quantized nodes in 8 groups .*; the (\d+) nodes of the most "
                 r"helpful groups ranked by the criterion with each alone in float, the "
                 r"other (\d+) after them", note[0]) if note else None
    check(m is not None and int(m.group(1)) <= 16 and int(m.group(1)) + int(m.group(2)) == 29,
          "prompt %d: the ranking's note (%s)" % (seed, note))
    meas = int(m.group(1)) if m else 0
    ranked = sorted([n for n in rep["nodes"] if n.get("rank")], key=lambda n: n["rank"])
    tried = [n["name"] for n in ranked if n.get("metric_if_float") is not None]
    check(len(ranked) == 29 and tried == [n["name"] for n in ranked[:meas]] and
          all(n.get("top1_flips_alone") is not None for n in ranked[:meas]) and
          all(n.get("top1_flips_alone") is None for n in ranked[meas:]),
          "prompt %d: the %d nodes tried alone rank first (%s)" % (seed, meas, tried))
    steps = rep["fallback"]
    nq = [n.op_type for n in onnx.load("q%d.onnx" % seed).graph.node].count("MatMulNBits")
    if seed == 6:
        check(len(steps) <= 16 and nq == 13, "prompt 6: %d steps, %d MatMulNBits kept (want "
              "13)" % (len(steps), nq))
    else:
        sizes, k = [], 16
        while k < len(steps):
            j = k
            while j < len(steps) and steps[j]["worst_before"] == steps[k]["worst_before"] and \
                    steps[j]["worst_after"] == steps[k]["worst_after"]:
                j += 1
            sizes.append(j - k)
            k = j
        fb = [n for n in rep["notes"] if n.startswith("fallback: after 16 nodes")]
        check(len(steps) > 16 and sizes[:-1] == [2 ** (i + 1) for i in range(len(sizes) - 1)]
              and 0 < sizes[-1] <= 2 ** len(sizes) and fb,
              "prompt 11: batches past 16 steps %s, note %s" % (sizes, fb))
        check(nq == 29 - len(steps), "prompt 11: %d MatMulNBits kept after %d steps" %
              (nq, len(steps)))
    # onnxruntime-node: the result, every node alone quantized, every
    # group (4 consecutive MatMuls in graph order) in float
    mm = [n["name"] for n in ranked]
    order = [n.name for n in onnx.load("t.onnx").graph.node if n.name in mm]
    groups = [order[i:i + 4] for i in range(0, 29, 4)]
    jobs = [("t.onnx", f), ("q%d.onnx" % seed, f)]
    for k, name in enumerate(mm):
        one = "one%d_%d.onnx" % (seed, k)
        r1, _ = quantize(one, data, ["--no-fallback", "--force", "--exclude",
                                     ",".join(x for x in mm if x != name)])
        check(r1.returncode in (0, 1) and os.path.exists(one), "%s alone quantized" % name)
        jobs.append((one, f))
    for k, g in enumerate(groups):
        gf = "grp%d_%d.onnx" % (seed, k)
        r1, _ = quantize(gf, data, ["--no-fallback", "--force", "--exclude", ",".join(g)])
        check(r1.returncode in (0, 1) and os.path.exists(gf), "group %d in float" % k)
        jobs.append((gf, f))
    res = ortlib.run_many(jobs, "ort%d" % seed, timeout=150)
    if any(isinstance(x, str) for x in res):
        check(False, "onnxruntime-node: %s" % [x for x in res if isinstance(x, str)][:1])
        break
    # the groups most helpful first: fewest top-1 flips left, then the
    # highest worst cosine over the outputs (the criterion's metric); whole
    # groups while they fit 16 nodes are the ones tried alone
    gkey = []
    for k, g in enumerate(groups):
        out = res[2 + len(mm) + k]
        _, t, n = qn.by_position([out[0]], [res[0][0]])
        cos = min(float(np.dot(a.ravel().astype(np.float64), b.ravel()) /
                        (np.linalg.norm(a) * np.linalg.norm(b)))
                  for a, b in zip(out, res[0]))
        gkey.append((n - t, -cos, k))
    want, budget_full = [], False
    for _, _, k in sorted(gkey):
        if not budget_full and len(want) + len(groups[k]) <= 16:
            want += groups[k]
        else:
            budget_full = True
    check(sorted(want) == sorted(tried), "prompt %d: the nodes tried alone are those of the "
          "most helpful groups in onnxruntime-node (%s)" % (seed, sorted(gkey)))
    cmin, top, npos = qn.by_position([res[1][0]], [res[0][0]])
    check(cmin >= 0.99 and top == npos, "prompt %d, onnxruntime-node: the result keeps every "
          "top-1 token (%d/%d), min cosine %.6f >= 0.99" % (seed, top, npos, cmin))
    flips = {}
    for k, name in enumerate(mm):
        _, t, n = qn.by_position([res[2 + k][0]], [res[0][0]])
        flips[name] = n - t
    bad = [(n["name"], n["top1_flips_alone"], flips[n["name"]]) for n in ranked[:meas]
           if n["top1_flips_alone"] != flips[n["name"]]]
    check(not bad, "prompt %d: opmig's flips alone equal onnxruntime-node's (%s)" % (seed, bad))
    worst = max(flips.values())
    check(any(flips[x] == worst for x in tried),
          "prompt %d: a node of the most flips (%d: %s) is among those tried alone" %
          (seed, worst, [x for x in mm if flips[x] == worst]))
sys.exit(ortlib.failures())
PY
rc=$?
cat "$T/f.out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "the ranking of more than 16 nodes is wrong (above)"
grep -q "^0 failures$" "$T/f.out" || fail "no summary"
echo "ok: the fallback's ranking and steps stay linear beyond 16 nodes"
