"""decoder_lower_ort.py OPMIG WORKDIR: the tiny genai decoders of
testdata/gen/make_decoder.py (GroupQueryAttention with do_rotary, or after
com.microsoft RotaryEmbedding; MatMulNBits asymmetric or --symmetric; the
qwen preset's q/k/v biases, a packed Add after the QKV MatMulNBits or one
per projection before RotaryEmbedding)
migrated by `opmig migrate --target openvino` with static dims, once for
the prompt (sequence 8, past 0) and once for a decode step (sequence 1,
past 8): the report must say exit 0 and name the group-query-attention
(and, with the separate op, rotary) lowerings, no com.microsoft node may
remain, the model must pass onnx.checker full_check (opset <= 17), and in
onnxruntime-node the migrated models must give the originals' logits and
present.* within 1e-4 on the same seeded tokens, the decode step fed the
original prompt's present.*.  Prints one line per check; exits 1 on a
failure, 77 when onnxruntime-node is absent."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402
from decoder_common import HD, KV, LAYERS, VOCAB, check, diff, dims, gen  # noqa: E402

TOL = 1e-4
FORMS = (("genai", []), ("genai-sym", ["--symmetric"]),
         ("genai-rotary-op", ["--rotary-op"]),
         ("genai-rotary-op-sym", ["--rotary-op", "--symmetric"]),
         ("qwen-genai", ["--preset", "qwen"]),
         ("qwen-genai-rotary-op", ["--preset", "qwen", "--rotary-op"]))
STEPS = (("prompt", 8, 0), ("decode", 1, 8))   # sequence, past


def feeds(ids, past_len, past, rotary_op):
    s = ids.shape[1]
    f = {"input_ids": ids.astype(np.int64),
         "attention_mask": np.ones((1, past_len + s), np.int64)}
    if rotary_op:
        f["position_ids"] = np.arange(past_len, past_len + s, dtype=np.int64).reshape(1, s)
    for i in range(LAYERS):
        for j, kind in enumerate(("key", "value")):
            f["past_key_values.%d.%s" % (i, kind)] = past[2 * i + j]
    return f


def migrate(opmig, src, dst, rep, s, p, rotary_op, what):
    """Migrate src with static dims; check the report and the model."""
    r = subprocess.run([opmig, "migrate", src, "--target", "openvino", "-o", dst,
                        "--no-validate", "--format", "json", "--report", rep] + dims(1, s, p),
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, "%s: opmig migrate exit %d %s" % (what, r.returncode,
                                                               r.stderr.strip()[:300]))
    if r.returncode:
        return False
    done = [x["pass"] for x in json.load(open(rep))["rewrites"]]
    ops = [n.op_type for n in onnx.load(src).graph.node]
    want = {"group-query-attention": ops.count("GroupQueryAttention"),
            "matmul-nbits": ops.count("MatMulNBits")}
    if rotary_op:
        want["rotary"] = ops.count("RotaryEmbedding")
    rot = [a.i for n in onnx.load(src).graph.node if n.op_type == "GroupQueryAttention"
           for a in n.attribute if a.name == "do_rotary"]
    check(want["group-query-attention"] == LAYERS and rot == [0 if rotary_op else 1] * LAYERS
          and (not rotary_op or want["rotary"] == 2 * LAYERS),
          "%s: the source has %s, do_rotary %s" % (what, want, rot))
    for name, k in want.items():
        check(done.count(name) == k, "%s: %d %s lowerings (want %d)"
              % (what, done.count(name), name, k))
    m = onnx.load(dst)
    left = sorted({n.op_type for n in m.graph.node if n.domain not in ("", "ai.onnx")})
    check(not left, "%s: no com.microsoft op left %s" % (what, left))
    opset = max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))
    if opset <= 17:
        try:
            onnx.checker.check_model(dst, full_check=True)
            check(True, "%s: onnx.checker full_check (opset %d)" % (what, opset))
        except onnx.checker.ValidationError as e:
            check(False, "%s: onnx.checker: %s" % (what, str(e).splitlines()[0]))
    return True


def main():
    args = ortlib.start(sys.argv)
    if not args:
        return 77
    opmig, work = args
    tok = np.random.default_rng(25).integers(0, VOCAB, size=(1, 9))
    empty = [np.zeros((1, KV, 0, HD), np.float32) for _ in range(2 * LAYERS)]
    models = {}
    for form, args in FORMS:
        src = os.path.join(work, form + ".onnx")
        gen(src, "--form", "genai", *args)
        models[form] = {"orig": src}
        for step, s, p in STEPS:
            dst = os.path.join(work, "%s-%s.onnx" % (form, step))
            if migrate(opmig, src, dst, dst + ".json", s, p, "--rotary-op" in args,
                       "%s %s" % (form, step)):
                models[form][step] = dst
    # round 1: the prompt in the original and migrated models
    jobs, names = [], []
    for form, _ in FORMS:
        f = feeds(tok[:, :8], 0, empty, "rotary-op" in form)
        for kind in ("orig", "prompt"):
            if kind in models[form]:
                jobs.append((models[form][kind], f))
                names.append((form, kind, "prompt"))
    res = dict(zip(names, ortlib.run_many(jobs, os.path.join(work, "ort1"), timeout=300)))
    # round 2: the decode step on the original prompt's present.*
    jobs, names = [], []
    for form, _ in FORMS:
        base = res.get((form, "orig", "prompt"))
        if not isinstance(base, list):
            continue
        f = feeds(tok[:, 8:], 8, base[1:], "rotary-op" in form)
        for kind in ("orig", "decode"):
            if kind in models[form]:
                jobs.append((models[form][kind], f))
                names.append((form, kind, "decode"))
    res.update(zip(names, ortlib.run_many(jobs, os.path.join(work, "ort2"), timeout=300)))
    for form, _ in FORMS:
        for step, s, p in STEPS:
            want, got = res.get((form, "orig", step)), res.get((form, step, step))
            if isinstance(want, str) or isinstance(got, str) or want is None or got is None:
                check(False, "%s %s: onnxruntime: %s / %s" % (form, step, want, got))
                continue
            lg = want[0]
            check(lg.shape == (1, s, VOCAB) and np.all(np.isfinite(lg)) and np.ptp(lg) > 1e-3,
                  "%s %s: original logits %s finite, not constant" % (form, step, list(lg.shape)))
            names = ["logits"] + ["present.%d.%s" % (i, k) for i in range(LAYERS)
                                  for k in ("key", "value")]
            for name, a, b in zip(names, want, got):
                d = diff(b, a)
                check(d <= TOL, "%s %s: migrated %s %s within %g of onnxruntime's original "
                      "(max |diff| %.3g)" % (form, step, name, list(np.shape(b)), TOL, d))
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
