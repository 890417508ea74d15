"""decoder_gen_ort.py OPMIG WORKDIR: the decoders of
testdata/gen/make_decoder.py (tiny preset, both forms) computed by
onnxruntime-node, checked against themselves through the KV cache: the
logits of a 9-token prompt at once must equal, position by position, those
of an 8-token prompt (causality) followed by a 1-token decode step fed the
8-token run's present.* as past_key_values.* (the cache holds what the
graph computes), and the decode step's present.* must equal the 9-token
run's.  The decomposed form also passes onnx.checker full_check, masks
left padding (a batch row with two padded positions gives the logits of
the unpadded row) and runs in `opmig run` with onnxruntime's results.
The genai forms (GroupQueryAttention with its rotary or after
com.microsoft RotaryEmbedding, MatMulNBits, SkipSimplifiedLayerNormalization)
run in onnxruntime only; the genai model also equals, within 1e-4, the
decomposed model given its weights (MatMulNBits dequantized here in
float64), which checks both forms' semantics against each other.
The qwen preset (Qwen2's q/k/v projection biases: an Add after each
projection MatMul, in genai the builder's packed Add after the QKV
MatMulNBits or one per projection before RotaryEmbedding) takes the same
checks: the KV cache consistent in each form, each genai form equal to
the decomposed one given its weights and biases, and `opmig run` equal
to onnxruntime, the genai forms too (their MatMulNBits, biases,
GroupQueryAttention or RotaryEmbedding in opmig's kernels).  Prints one
line per check; exits 1 on a failure, 77 when onnxruntime-node is
absent."""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402
from decoder_common import HD, KV, LAYERS, VOCAB, check, diff, gen  # noqa: E402

TOL = 1e-4


# the generator's forms: name, options; GroupQueryAttention's own rotary
# (no position_ids input) in NO_POS; LIKE: each genai form and the
# decomposed one its weights are put into
FORMS = (("decomposed", []), ("genai", ["--form", "genai"]),
         ("genai-rotary-op", ["--form", "genai", "--rotary-op", "--symmetric"]),
         ("qwen", ["--preset", "qwen"]), ("qwen-genai", ["--preset", "qwen", "--form", "genai"]),
         ("qwen-genai-rotary-op", ["--preset", "qwen", "--form", "genai", "--rotary-op"]))
NO_POS = ("genai", "qwen-genai")
LIKE = (("genai", "decomposed"), ("genai-rotary-op", "decomposed"), ("qwen-genai", "qwen"),
        ("qwen-genai-rotary-op", "qwen"))


def feeds(ids, mask, pos, past, genai):
    f = {"input_ids": ids.astype(np.int64), "attention_mask": mask.astype(np.int64)}
    if not genai:
        f["position_ids"] = pos.astype(np.int64)
    for i in range(LAYERS):
        for j, kind in enumerate(("key", "value")):
            f["past_key_values.%d.%s" % (i, kind)] = past[2 * i + j]
    return f


def empty_past(batch):
    return [np.zeros((batch, KV, 0, HD), np.float32) for _ in range(2 * LAYERS)]


def run_opmig(opmig, model, f, d):
    os.makedirs(d, exist_ok=True)
    args = []
    for name, a in f.items():
        p = os.path.join(d, name + ".npy")
        np.save(p, a)
        args.append("%s=%s" % (name, p))
    r = subprocess.run([opmig, "run", model] + args + ["-O", d, "--out-format", "npy",
                                                       "--threads", "1"],
                       capture_output=True, text=True, timeout=120)
    if r.returncode:
        return r.stderr.strip()
    return [np.load(os.path.join(d, "output_%d.npy" % k)) for k in range(1 + 2 * LAYERS)]


def dequant(b, scales, zp, k, n):
    """MatMulNBits' weight as a float64 [k, n] matrix (ContribOperators:
    B [n, blocks, 16] uint8, element k of column n in the low nibble of
    byte k/2 of its block when k is even; zero points packed two a byte,
    8 when absent)."""
    blocks = b.shape[1]
    q = np.empty((n, blocks, 32), np.int64)
    q[:, :, 0::2], q[:, :, 1::2] = b & 15, b >> 4
    if zp is None:
        z = np.full((n, blocks), 8, np.int64)
    else:
        zb = zp.reshape(n, -1).astype(np.int64)
        z = np.stack([zb & 15, zb >> 4], axis=2).reshape(n, -1)[:, :blocks]
    w = (q - z[:, :, None]) * scales.reshape(n, blocks, 1).astype(np.float64)
    return w.reshape(n, blocks * 32)[:, :k].T


def qkv_slice(a, kind):
    """q, k or v's columns (last axis) of the packed QKV a."""
    nq = a.shape[-1] - 2 * KV * HD
    c0, c1 = {"q_proj": (0, nq), "k_proj": (nq, nq + KV * HD),
              "v_proj": (nq + KV * HD, nq + 2 * KV * HD)}[kind]
    return a[..., c0:c1]


def decomposed_like(genai, decomposed, out):
    """The decomposed model with the genai model's weights: MatMulNBits
    dequantized in float64 (the packed QKV split into q, k and v), the
    half-width rotary caches doubled, the q/k/v biases (the builder's
    model.layers.{i}.attn.{q,k,v,qkv}_proj.Add.bias) put in.  Written to
    out."""
    gm = onnx.load(genai)
    g = {t.name: numpy_helper.to_array(t) for t in gm.graph.initializer}
    m = onnx.load(decomposed)
    w = {}
    for node in gm.graph.node:
        if node.op_type == "MatMulNBits":
            base = node.input[1][:-len(".MatMul.weight_Q4")]
            at = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            w[base] = dequant(g[node.input[1]], g[node.input[2]],
                              g[node.input[3]] if len(node.input) > 3 else None, at["K"], at["N"])
    for t in m.graph.initializer:
        name = t.name
        if name.startswith("const_"):   # the graph's own small constants
            continue
        if name in g:
            a = g[name]
        elif name.endswith("rotary_emb.cos_cached") or name.endswith("rotary_emb.sin_cached"):
            c = g["cos_cache" if "cos" in name else "sin_cache"]
            a = np.concatenate([c, c], axis=1)
        elif name.endswith(".bias"):   # the builder's Add of q, k or v, or of [q | k | v]
            one = name.replace("self_attn.", "attn.")[:-len(".bias")] + ".Add.bias"
            a = g[one] if one in g else qkv_slice(
                g[name.split("self_attn.")[0] + "attn.qkv_proj.Add.bias"], name.split(".")[-2])
        elif name[:-len(".weight")].replace("self_attn.", "attn.") in w:
            a = w[name[:-len(".weight")].replace("self_attn.", "attn.")]
        elif "self_attn." in name:   # q, k or v of the packed QKV
            a = qkv_slice(w[name.split("self_attn.")[0] + "attn.qkv_proj"], name.split(".")[-2])
        else:
            raise KeyError("no genai weight for %s" % name)
        t.CopyFrom(numpy_helper.from_array(np.ascontiguousarray(a, np.float32), name))
    onnx.save(m, out)


def main():
    args = ortlib.start(sys.argv)
    if not args:
        return 77
    opmig, work = args
    models = {}
    for form, args in FORMS:
        models[form] = os.path.join(work, form + ".onnx")
        gen(models[form], *args, quiet=False)
    for form in ("decomposed", "qwen"):
        try:
            onnx.checker.check_model(models[form], full_check=True)
            check(True, "%s: onnx.checker full_check" % form)
        except onnx.checker.ValidationError as e:
            check(False, "%s: onnx.checker: %s" % (form, str(e).splitlines()[0]))
    biases = [n.name for n in onnx.load(models["qwen"]).graph.node if n.op_type == "Add" and
              n.name.endswith("_proj/Add")]
    packed = [n.name for n in onnx.load(models["qwen-genai"]).graph.node if n.op_type == "Add"
              and n.name.endswith("qkv_proj/Add")]
    check(len(biases) == 3 * LAYERS and len(packed) == LAYERS,
          "qwen: %d q/k/v bias Adds, genai %d packed ones (want %d, %d)"
          % (len(biases), len(packed), 3 * LAYERS, LAYERS))

    rng = np.random.default_rng(25)
    tok = rng.integers(0, VOCAB, size=(1, 9))
    pos9 = np.arange(9).reshape(1, 9)
    ones = np.ones((1, 9), np.int64)
    # left padding: row 0 = two pads then tokens 2..7, row 1 = tokens 0..7
    pad_ids = np.stack([np.concatenate([[0, 0], tok[0, 2:8]]), tok[0, :8]])
    pad_mask = np.array([[0, 0] + [1] * 6, [1] * 8])
    pad_pos = np.array([[1, 1] + list(range(6)), list(range(8))])

    # round 1: the prompts; round 2: the decode step on round 1's present
    jobs, names = [], []
    for form, m in models.items():
        g = form in NO_POS   # no position_ids: GroupQueryAttention does the rotary
        jobs.append((m, feeds(tok[:, :8], ones[:, :8], pos9[:, :8], empty_past(1), g)))
        jobs.append((m, feeds(tok, ones, pos9, empty_past(1), g)))
        names += [(form, "p8"), (form, "p9")]
    jobs.append((models["decomposed"], feeds(pad_ids, pad_mask, pad_pos, empty_past(2), False)))
    jobs.append((models["decomposed"], feeds(tok[:, 2:8], ones[:, :6], pos9[:, :6],
                                             empty_past(1), False)))
    names += [("decomposed", "pad"), ("decomposed", "p6")]
    for form, base in LIKE:
        like = os.path.join(work, "decomposed-like-%s.onnx" % form)
        decomposed_like(models[form], models[base], like)
        jobs.append((like, feeds(tok, ones, pos9, empty_past(1), False)))
        names.append(("like " + form, "p9"))
    res = dict(zip(names, ortlib.run_many(jobs, os.path.join(work, "ort1"), timeout=300)))
    for k, v in res.items():
        if isinstance(v, str):
            check(False, "%s %s: onnxruntime: %s" % (k[0], k[1], v))
            return 1
    jobs = []
    for form, m in models.items():
        jobs.append((m, feeds(tok[:, 8:], ones, pos9[:, 8:], res[(form, "p8")][1:],
                              form in NO_POS)))
    for form, v in zip(models, ortlib.run_many(jobs, os.path.join(work, "ort2"), timeout=300)):
        if isinstance(v, str):
            check(False, "%s d1: onnxruntime: %s" % (form, v))
            return 1
        res[(form, "d1")] = v

    for form in models:
        p8, p9, d1 = res[(form, "p8")], res[(form, "p9")], res[(form, "d1")]
        for run, out in (("p8", p8), ("p9", p9), ("d1", d1)):
            lg = out[0]
            check(np.all(np.isfinite(lg)) and np.ptp(lg) > 1e-3 and
                  min(np.ptp(lg[0, s]) for s in range(lg.shape[1])) > 1e-3,
                  "%s %s: logits %s finite, not all equal (range %.3g)"
                  % (form, run, list(lg.shape), np.ptp(lg)))
        e = diff(d1[0][:, 0], p9[0][:, 8])
        check(e <= TOL, "%s: decode step's logits = the 9-token prompt's last (max diff %.2g)"
              % (form, e))
        e = diff(p8[0], p9[0][:, :8])
        check(e <= TOL, "%s: 8-token prompt's logits = the 9-token prompt's first 8 "
              "(max diff %.2g)" % (form, e))
        e = max(diff(a, b) for a, b in zip(d1[1:], p9[1:]))
        check(e <= TOL, "%s: decode step's present.* = the 9-token prompt's (max diff %.2g)"
              % (form, e))
        check(p9[1].shape == (1, KV, 9, HD) and d1[1].shape == (1, KV, 9, HD),
              "%s: present shapes %s, %s" % (form, list(p9[1].shape), list(d1[1].shape)))
    for form, base in LIKE:
        e = max(diff(a, b) for a, b in zip(res[("like " + form, "p9")], res[(form, "p9")]))
        check(e <= TOL, "%s = the %s form with its weights dequantized in float64, "
              "logits and present.* (max diff %.2g)" % (form, base, e))
    pad, p6 = res[("decomposed", "pad")], res[("decomposed", "p6")]
    e = diff(pad[0][0, 2:], p6[0][0])
    check(e <= TOL, "decomposed: left-padded row's logits = the unpadded row's (max diff %.2g)"
          % e)
    e = diff(pad[0][1], res[("decomposed", "p8")][0][0])
    check(e <= TOL, "decomposed: unpadded row of the batch = the batch of one (max diff %.2g)"
          % e)

    runs = [("decomposed", "pad", feeds(pad_ids, pad_mask, pad_pos, empty_past(2), False))]
    for form in ("decomposed", "qwen", "qwen-genai", "qwen-genai-rotary-op"):
        runs += [(form, "p8", feeds(tok[:, :8], ones[:, :8], pos9[:, :8], empty_past(1),
                                    form in NO_POS)),
                 (form, "d1", feeds(tok[:, 8:], ones, pos9[:, 8:], res[(form, "p8")][1:],
                                    form in NO_POS))]
    for form, run, f in runs:
        got = run_opmig(opmig, models[form], f, os.path.join(work, "opmig_%s_%s" % (form, run)))
        if isinstance(got, str):
            check(False, "%s %s: opmig run: %s" % (form, run, got))
            continue
        e = max(diff(a, b) for a, b in zip(got, res[(form, run)]))
        check(e <= TOL, "%s %s: opmig run = onnxruntime, logits and present.* "
              "(max diff %.2g)" % (form, run, e))
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
