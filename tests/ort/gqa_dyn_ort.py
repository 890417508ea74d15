"""gqa_dyn_ort.py OPMIG WORKDIR: the group-query-attention lowering's
run-time path (symbolic batch, sequence and past dims; seqlens_k and
total_sequence_length computed where the model runs) against
onnxruntime-node's com.microsoft GroupQueryAttention.

Decoders: the tiny genai decoders of testdata/gen/make_decoder.py
(GroupQueryAttention with do_rotary; the qwen preset's packed q/k/v bias
Add; --rotary-op, GroupQueryAttention without rotary after
com.microsoft RotaryEmbedding) migrated once by `opmig migrate --target
openvino` without --dim: the report names the group-query-attention
(dynamic) lowering of every layer, no com.microsoft op is left, the
inputs keep their symbolic dims and the model passes onnx.checker
full_check (opset <= 17).  The one migrated model then runs in
onnxruntime-node at several settings: a prompt of 8 (batch 1), a prompt of
6 in a batch of 2 whose second entry is right-padded by 2
(attention_mask), a decode step after each (the padded entry's new row at
its seqlens_k, inside the past rows), and a chunk of 3 after the first
prompt; logits and present.* within 1e-4 of the original's, each step fed
the original's present.* of the step before.  `opmig run` of the migrated
genai model at the padded decode step and the chunk equals them too.

Single nodes: seeded GroupQueryAttention models with symbolic dims
(query [B, S, ..], past [B, kvh, P, d], seqlens_k and
total_sequence_length graph inputs; with and without a past, packed or
separate QKV, kv heads shared, rotary halves or interleaved pairs (full
and partial; a target of max_rank 4 takes the pairs by Gather), local
windows, softcap, float16), lowered by `opmig migrate --passes
group-query-attention` to a test target without the op, full_check, then
each lowered model run at two or three settings (a right-padded prompt,
a decode step with entries of different lengths, a chunk, a past buffer
longer than the rows in use) against onnxruntime on the original node:
all three outputs within 1e-5 + 1e-5 relative (float32; float16 2e-3),
and `opmig run` of some lowered models equal to the same.

Prints one line per check; exits 1 on a failure, 77 when
onnxruntime-node is absent."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402
from decoder_common import HD, KV, LAYERS, VOCAB, check, diff, gen  # noqa: E402

TOL = 1e-4
FORMS = (("genai", []), ("qwen-genai", ["--preset", "qwen"]),
         ("genai-rotary-op", ["--rotary-op"]))
RNG = np.random.default_rng(1245)


# ---- decoders ------------------------------------------------------------

def dec_feeds(ids, mask, past, rotary_op):
    """The decoder's inputs: position_ids (the rotary-op form) where
    onnxruntime's GroupQueryAttention puts the rows: seqlens_k + 1 - S + i
    after a past, i in the first prompt."""
    b, s = ids.shape
    f = {"input_ids": ids.astype(np.int64), "attention_mask": mask}
    if rotary_op:
        first = mask.shape[1] == s
        start = np.zeros(b, np.int64) if first else mask.sum(1) - s
        f["position_ids"] = (start[:, None] + np.arange(s)[None, :]).astype(np.int64)
    for i in range(LAYERS):
        for j, kind in enumerate(("key", "value")):
            f["past_key_values.%d.%s" % (i, kind)] = past[2 * i + j]
    return f


def dec_migrate(opmig, src, dst, what):
    rep = dst + ".json"
    r = subprocess.run([opmig, "migrate", src, "--target", "openvino", "-o", dst,
                        "--no-validate", "--format", "json", "--report", rep],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "%s: opmig migrate without --dim exit %d %s"
          % (what, r.returncode, r.stderr.strip()[:300]))
    if r.returncode:
        return False
    done = [(x["pass"], x["variant"]) for x in json.load(open(rep))["rewrites"]]
    n = done.count(("group-query-attention", "dynamic"))
    check(n == LAYERS, "%s: %d group-query-attention (dynamic) lowerings (want %d)"
          % (what, n, LAYERS))
    m = onnx.load(dst)
    left = sorted({x.op_type for x in m.graph.node if x.domain not in ("", "ai.onnx")})
    check(not left, "%s: no com.microsoft op left %s" % (what, left))
    sym = {d.dim_param for i in m.graph.input for d in i.type.tensor_type.shape.dim
           if d.dim_param}
    check({"batch_size", "sequence_length", "past_sequence_length",
           "total_sequence_length"} <= sym, "%s: the inputs keep their symbolic dims %s"
          % (what, sorted(sym)))
    opset = max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))
    try:
        onnx.checker.check_model(dst, full_check=True)
        check(opset <= 17, "%s: onnx.checker full_check (opset %d)" % (what, opset))
    except onnx.checker.ValidationError as e:
        check(False, "%s: onnx.checker: %s" % (what, str(e).splitlines()[0]))
    return True


def opmig_run(opmig, model, feeds, d, n_out):
    """`opmig run` of model: its outputs, or the error (a str)."""
    os.makedirs(d, exist_ok=True)
    args = []
    for name, a in feeds.items():
        np.save(os.path.join(d, name + ".npy"), a)
        args.append("%s=%s" % (name, os.path.join(d, name + ".npy")))
    r = subprocess.run([opmig, "run", model] + args + ["-O", d, "--out-format", "npy"],
                       capture_output=True, text=True, timeout=120)
    if r.returncode:
        return r.stderr.strip()[:300] or "exit %d" % r.returncode
    return [np.load(os.path.join(d, "output_%d.npy" % i)) for i in range(n_out)]


def decoders(opmig, work):
    tok = RNG.integers(0, VOCAB, size=(2, 12))
    empty = [[np.zeros((b, KV, 0, HD), np.float32) for _ in range(2 * LAYERS)] for b in (0, 1, 2)]
    pad = np.ones((2, 6), np.int64)
    pad[1, 4:] = 0
    pad_step = np.ones((2, 7), np.int64)
    pad_step[1, 5:] = 0   # the padded entry: 4 rows and its new one
    models = {}
    for form, args in FORMS:
        src = gen(os.path.join(work, form + ".onnx"), "--form", "genai", *args)
        dst = os.path.join(work, form + "-ov.onnx")
        if dec_migrate(opmig, src, dst, form):
            models[form] = (src, dst)
    names = ["logits"] + ["present.%d.%s" % (i, k) for i in range(LAYERS)
                          for k in ("key", "value")]
    res, steps = {}, {}
    # round 1: the prompts; round 2: a step after each, fed the original's present.*
    rounds = [[("prompt b1 s8", None, tok[:1, :8], np.ones((1, 8), np.int64)),
               ("prompt b2 s6 padded", None, tok[:, :6], pad)],
              [("decode b1 p8", "prompt b1 s8", tok[:1, 8:9], np.ones((1, 9), np.int64)),
               ("decode b2 p6 padded", "prompt b2 s6 padded", tok[:, 6:7], pad_step),
               ("chunk b1 s3 p8", "prompt b1 s8", tok[:1, 8:11], np.ones((1, 11), np.int64))]]
    for r, steps_r in enumerate(rounds):
        jobs, keys = [], []
        for form, (src, dst) in models.items():
            for step, after, ids, mask in steps_r:
                base = res.get((form, "orig", after)) if after else empty[ids.shape[0]]
                if not isinstance(base, list):
                    continue
                f = dec_feeds(ids, mask, base[1:] if after else base, "rotary-op" in form)
                steps[(form, step)] = f
                for kind, m in (("orig", src), ("ov", dst)):
                    jobs.append((m, f))
                    keys.append((form, kind, step))
        res.update(zip(keys, ortlib.run_many(jobs, os.path.join(work, "ort%d" % r),
                                             timeout=300)))
    for form in models:
        for step, _, ids, _ in rounds[0] + rounds[1]:
            want, got = res.get((form, "orig", step)), res.get((form, "ov", step))
            if not isinstance(want, list) or not isinstance(got, list):
                check(False, "%s %s: onnxruntime: %s / %s" % (form, step, want, got))
                continue
            lg = want[0]
            check(np.all(np.isfinite(lg)) and np.ptp(lg) > 1e-3,
                  "%s %s: original logits %s finite, not constant" % (form, step,
                                                                      list(lg.shape)))
            worst = max(diff(b, a) for a, b in zip(want, got))
            check(worst <= TOL, "%s %s: migrated logits and present.* %s within %g of "
                  "onnxruntime's original (max |diff| %.3g)"
                  % (form, step, [list(np.shape(b)) for b in got[:2]], TOL, worst))
    # opmig's interpreter on the migrated model
    src, dst = models.get("genai", (None, None))
    for step in ("decode b2 p6 padded", "chunk b1 s3 p8"):
        want = res.get(("genai", "orig", step))
        if dst is None or not isinstance(want, list):
            continue
        got = opmig_run(opmig, dst, steps[("genai", step)],
                        os.path.join(work, "run-" + step.replace(" ", "-")), len(want))
        worst = max(diff(b, a) for a, b in zip(want, got)) if isinstance(got, list) else -1
        check(0 <= worst <= TOL, "genai %s: opmig run of the migrated model within %g of "
              "onnxruntime's original (max |diff| %s)" % (step, TOL, got if worst < 0 else
                                                         "%.3g" % worst))


# ---- single nodes --------------------------------------------------------

NODE_OPS = ["Shape", "Gather", "Cast", "Range", "Equal", "Max", "Min", "GatherElements",
            "Slice", "Reshape", "Transpose", "Concat", "Identity", "Unsqueeze", "Expand",
            "MatMul", "Mul", "Div", "Tanh", "Add", "Sub", "Less", "Where", "Softmax"]
TP = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16}
NTOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float16): 2e-3}


def rope_cache(rows, half):
    inv = 1.0 / (10000 ** (np.arange(half) / half))
    ang = np.arange(rows)[:, None] * inv[None, :]
    return np.cos(ang), np.sin(ang)


def node_case(k):
    """Case k: (name, model, dtype, settings), settings [(what, feeds)]."""
    nh, kvh = [(4, 2), (2, 1), (4, 1), (2, 2), (4, 4)][k % 5]
    past = k % 3 != 0
    packed = k % 2 == 1
    d = [16, 32][k // 2 % 2]
    rot = [0, d, 16, d][k % 4] if k % 6 != 5 else 0
    inter = rot and (k % 8 >= 4 or k == 3)
    window = [-1, -1, 2, 3][k % 4] if k % 5 != 1 else -1
    softcap = 2.5 if k % 4 == 3 else 0.0
    dt = np.float16 if k in (4, 9) else np.float32
    cache_input = k == 7   # cos/sin graph inputs of symbolic rows
    half = rot // 2
    qw = (nh + 2 * kvh) * d if packed else nh * d
    names = ["query", "key", "value", "past_key", "past_value", "seqlens_k",
             "total_sequence_length", "cos_cache", "sin_cache"]
    vi = helper.make_tensor_value_info
    f = TP[np.dtype(dt)]
    ins = [vi("query", f, ["B", "S", qw])]
    if not packed:
        ins += [vi("key", f, ["B", "S", kvh * d]), vi("value", f, ["B", "S", kvh * d])]
    if past:
        ins += [vi(n, f, ["B", kvh, "P", d]) for n in ("past_key", "past_value")]
    ins += [vi("seqlens_k", TensorProto.INT32, ["B"]),
            vi("total_sequence_length", TensorProto.INT32, [])]
    inits = []
    cos, sin = rope_cache(16, half) if rot else (None, None)
    if rot and cache_input:
        ins += [vi(n, f, ["R", half]) for n in ("cos_cache", "sin_cache")]
    elif rot:
        inits = [helper.make_tensor(n, f, [16, half], c.astype(dt).ravel().tolist())
                 for n, c in (("cos_cache", cos), ("sin_cache", sin))]
    given = {i.name for i in ins} | {t.name for t in inits}
    node_in = [n if n in given else "" for n in names]
    while node_in[-1] == "":
        node_in.pop()
    attrs = dict(num_heads=nh, kv_num_heads=kvh)
    if rot:
        attrs.update(do_rotary=1, rotary_interleaved=int(bool(inter)))
    if window > 0:
        attrs["local_window_size"] = window
    if softcap:
        attrs["softcap"] = softcap
    node = helper.make_node("GroupQueryAttention", node_in, ["y", "pk", "pv"],
                            domain="com.microsoft", name="gqa%d" % k, **attrs)
    outs = [vi("y", f, ["B", "S", nh * d])] + [vi(n, f, ["B", kvh, "T", d]) for n in ("pk", "pv")]
    m = helper.make_model(helper.make_graph([node], "g", ins, outs, inits),
                          opset_imports=[helper.make_opsetid("", 17),
                                         helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8

    def feeds(b, s, pm, lens, total, seqlens):
        x = {"query": RNG.standard_normal((b, s, qw)).astype(dt)}
        if not packed:
            x["key"] = RNG.standard_normal((b, s, kvh * d)).astype(dt)
            x["value"] = RNG.standard_normal((b, s, kvh * d)).astype(dt)
        if past:
            for n in ("past_key", "past_value"):
                a = RNG.standard_normal((b, kvh, pm, d)).astype(dt)
                for i, n_i in enumerate(lens):
                    a[i, :, n_i:] = 0   # rows past an entry's length are unused
                x[n] = a
        x["seqlens_k"] = np.array(seqlens, np.int32)
        x["total_sequence_length"] = np.array(total, np.int32)
        if rot and cache_input:
            x["cos_cache"], x["sin_cache"] = cos.astype(dt), sin.astype(dt)
        return x
    # a right-padded prompt (a window there: the padded rows are not
    # compared, see compare_node), and a second prompt
    sets = [("prompt b2 s5 padded", feeds(2, 5, 0, [0, 0], 5, [4, 2])),
            ("prompt b1 s3", feeds(1, 3, 0, [0], 3, [2]))]
    if past:
        sets[1:] = [("decode b2 p6 lens 6,3", feeds(2, 1, 6, [6, 3], 7, [6, 3])),
                    ("chunk b1 s3 p4", feeds(1, 3, 4, [4], 7, [6]))]
        if k % 2:
            sets.append(("decode b2 buffer 8 lens 5,3", feeds(2, 1, 8, [5, 3], 6, [5, 3])))
    name = "node %d nh=%d kvh=%d d=%d %s%s rot=%d%s win=%d cap=%g %s%s" % (
        k, nh, kvh, d, "packed" if packed else "qkv", " past" if past else "", rot,
        " inter" if inter else "", window, softcap, np.dtype(dt).name,
        " cache-inputs" if cache_input else "")
    return name, m, dt, sets, window


def compare_node(got, want, dt, feeds, window):
    """'' when the outputs agree, else where the worst element is.  With
    a window and a padded prompt the rows after an entry's seqlens_k (the
    padded queries, which may see no key) are left out of the output."""
    tol = NTOL[np.dtype(dt)]
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape:
            return "output %d: shape %s, onnxruntime %s" % (i, g.shape, w.shape)
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        if i == 0 and window > 0 and feeds["total_sequence_length"] == g.shape[1]:
            for b, sl in enumerate(feeds["seqlens_k"]):
                g64[b, sl + 1:] = w64[b, sl + 1:] = 0
        err = np.abs(g64 - w64) - (tol + tol * np.abs(w64))
        if np.isnan(g64).any() or np.isnan(w64).any():
            return "output %d: NaN" % i
        if err.size and err.max() > 0:
            j = np.unravel_index(np.argmax(err), err.shape)
            return "output %d at %s: %r, onnxruntime %r" % (i, j, g64[j], w64[j])
    return ""


def nodes(opmig, work):
    rules = {}
    for rank in (None, 4):
        path = os.path.join(work, "gqa-dyn-%s.json" % rank)
        r = {"schema": 1, "id": "t-gqa-dyn%s" % (rank or ""), "sources": ["gqa_dyn_ort.py"],
             "ops": {op: {} for op in NODE_OPS}}
        if rank:
            r["max_rank"] = rank
        with open(path, "w") as f:
            json.dump(r, f)
        rules[rank] = (path, r["id"])
    cases, jobs, lowered = [], [], []
    for k in range(12):
        name, m, dt, sets, window = node_case(k)
        d = os.path.join(work, "n%d" % k)
        os.makedirs(d, exist_ok=True)
        src, dst, rep = (os.path.join(d, x) for x in ("m.onnx", "low.onnx", "rep.json"))
        onnx.save(m, src)
        rank = 4 if k in (3, 8) else None   # kv heads not shared (that takes rank 5)
        p = subprocess.run([opmig, "migrate", src, "--passes", "group-query-attention",
                            "--rules", rules[rank][0], "--target", rules[rank][1], "-o", dst,
                            "--no-validate", "--format", "json", "--report", rep],
                           capture_output=True, text=True, timeout=120)
        variants = [x["variant"] for x in json.load(open(rep))["rewrites"]
                    if x["pass"] == "group-query-attention"] if p.returncode == 0 else []
        inter = any(a.name == "rotary_interleaved" and a.i for a in m.graph.node[0].attribute)
        want = "dynamic-gather" if inter and rank == 4 else "dynamic"
        ok = variants == [want]
        check(ok, "%s: lowered by group-query-attention (%s) %s %s"
              % (name, want, variants, p.stderr.strip()[:200]))
        if not ok:
            continue
        try:
            onnx.checker.check_model(onnx.load(dst), full_check=True)
        except Exception as e:  # the checker's own exception types vary
            check(False, "%s: onnx.checker: %s" % (name, str(e).splitlines()[0]))
            continue
        for what, f in sets:
            cases.append((name, what, dt, f, window, dst))
            jobs += [(src, f), (dst, f)]
        lowered.append(name)
    res = ortlib.run_many(jobs, os.path.join(work, "ort-nodes"), timeout=300)
    for j, (name, what, dt, f, window, dst) in enumerate(cases):
        want, got = res[2 * j], res[2 * j + 1]
        msg = want if isinstance(want, str) else got if isinstance(got, str) else \
            compare_node(got, want, dt, f, window)
        check(not msg, "%s %s: lowered equals onnxruntime's GroupQueryAttention %s"
              % (name, what, msg.splitlines()[0][:300] if msg else ""))
        # opmig's interpreter on the lowered model, for a few
        if j % 4 == 1 and isinstance(want, list):
            got = opmig_run(opmig, dst, f, os.path.join(work, "run%d" % j), 3)
            msg = got if isinstance(got, str) else compare_node(got, want, dt, f, window)
            check(not msg, "%s %s: opmig run of the lowered model equals onnxruntime %s"
                  % (name, what, msg[:300]))
    check(len(lowered) == 12, "%d of 12 single-node cases lowered" % len(lowered))


def main():
    args = ortlib.start(sys.argv)
    if not args:
        return 77
    opmig, work = args
    decoders(opmig, work)
    nodes(opmig, work)
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
