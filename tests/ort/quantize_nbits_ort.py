"""quantize_nbits_ort.py OPMIG WORKDIR: `opmig quantize --weight-only` of the
tiny decomposed decoder (testdata/gen/make_decoder.py --preset tiny --form
decomposed), int4 and int8, block sizes 16, 32 and 128, asymmetric and
--symmetric, on two prompts of 8 tokens given as --validation-data:
- the model passes onnx.checker full_check (opset 17 plus com.microsoft 1),
  its 15 projection MatMuls are MatMulNBits with onnxruntime's attributes
  and initializer shapes, the 4 attention MatMuls (B not constant) stay;
- the codes, scales and zero points equal a float32 numpy reimplementation
  of onnxruntime's blockwise quantizer (MLAS: min/max over the block,
  scale (max - min) / 15 with a rounded zero point, or -absmax / 8
  symmetric; roundf, halves away from zero, of w * (1 / scale) + zero
  point), and so do the dequantized weights, exactly;
- onnxruntime-node runs the quantized model and its outputs equal opmig's
  interpreter on it (`opmig run`) within 1e-4;
- the per-position logits cosine and top-1 that opmig reports against the
  float model equal those computed here from onnxruntime-node's outputs of
  both models; int8 meets the criterion (cosine >= 0.99 and the top-1
  token at every position), and opmig's verdict follows the numbers;
- int4 with the accuracy fallback (the default) is written and meets the
  criterion in onnxruntime-node too;
- a MatMul whose float32 and float16 weight is built for the formulas'
  edges (magnitude tie, all-zero block, half steps, K = 40 in blocks of 16)
  gives the reference's codes exactly, and the same in onnxruntime-node as
  in the interpreter.
Prints one line per check; exits 1 on a failure, 77 when onnxruntime-node
is absent."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper as nh

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402
from decoder_common import HD, KV, LAYERS, VOCAB, check, dims, gen  # noqa: E402

S = 8
DIMS = dims(1, S, 0)

CONFIGS = [(bits, bs, sym) for bits in (4, 8) for bs in (16, 32, 128) for sym in (False, True)]


# ---- the reference quantizer (float32 throughout, as MLAS computes) ----

def roundf(x):
    """C roundf: halves away from zero."""
    return np.sign(x) * np.floor(np.abs(x) + np.float32(0.5))


def ref_quantize(w, bits, bs, sym):
    """codes [N, kb*bs] (rows past K: unused), scales [N, kb], zero points
    [N, kb] of a float32 or float16 [K, N] weight (float16: the scales
    stored in float16 and the codes computed with the rounded scale)."""
    half = w.dtype == np.float16
    k, n = w.shape
    kb = (k + bs - 1) // bs
    qmax, mid = (1 << bits) - 1, 1 << (bits - 1)
    codes = np.zeros((n, kb * bs), np.int64)
    scales = np.zeros((n, kb), np.float32)
    zps = np.zeros((n, kb), np.int64)
    for b in range(kb):
        blk = w[b * bs:(b + 1) * bs, :].astype(np.float32)      # [rows, N]
        mn, mx = blk.min(axis=0), blk.max(axis=0)
        if sym:
            m = np.where(np.abs(mx) > np.abs(mn), mx, mn)
            s = (-m / np.float32(mid)).astype(np.float32)
            z = np.full(n, mid, np.int64)
        else:
            lo, hi = np.minimum(mn, np.float32(0)), np.maximum(mx, np.float32(0))
            s = ((hi - lo) / np.float32(qmax)).astype(np.float32)
            with np.errstate(divide="ignore", invalid="ignore"):
                zf = np.where(s != 0, np.float32(0) - lo / s, lo).astype(np.float32)
            z = np.clip(roundf(zf), 0, qmax).astype(np.int64)
        if half:
            s = s.astype(np.float16).astype(np.float32)
        with np.errstate(divide="ignore"):
            rs = np.where(s != 0, np.float32(1) / s, np.float32(0)).astype(np.float32)
        t = (blk * rs).astype(np.float32) + z.astype(np.float32)
        q = np.clip(roundf(t.astype(np.float32)), 0, qmax).astype(np.int64)   # [rows, N]
        codes[:, b * bs:b * bs + blk.shape[0]] = q.T
        scales[:, b] = s
        zps[:, b] = z
    return codes, scales, zps


def unpack(data, bits, count):
    """The first `count` codes of each row of packed bytes [N, ...]."""
    data = data.reshape(data.shape[0], -1).astype(np.int64)
    if bits == 8:
        return data[:, :count]
    lo, hi = data & 15, data >> 4
    out = np.stack([lo, hi], axis=2).reshape(data.shape[0], -1)
    return out[:, :count]


def check_weights(qpath, orig, bits, bs, sym, what, n_nbits=15, n_left=4):
    m, o = onnx.load(qpath), onnx.load(orig)
    inits = {t.name: t for t in m.graph.initializer}
    oinits = {t.name: nh.to_array(t) for t in o.graph.initializer}
    nb = [n for n in m.graph.node if n.op_type == "MatMulNBits"]
    mm = [n for n in m.graph.node if n.op_type == "MatMul"]
    omm = [n for n in o.graph.node if n.op_type == "MatMul" and n.input[1] in oinits]
    check(len(nb) == len(omm) == n_nbits and len(mm) == n_left and
          all(n.domain == "com.microsoft" for n in nb),
          "%s: %d MatMulNBits (com.microsoft), %d MatMul left" % (what, len(nb), len(mm)))
    ops = {x.domain: x.version for x in m.opset_import}
    want_ops = {x.domain: x.version for x in o.opset_import}
    want_ops["com.microsoft"] = 1
    check(ops == want_ops, "%s: opset imports %s" % (what, ops))
    worst = 0.0
    bad = []
    for node, onode in zip(nb, omm):
        w = oinits[onode.input[1]]
        k, n = w.shape
        kb = (k + bs - 1) // bs
        attrs = {a.name: a.i for a in node.attribute}
        want = {"K": k, "N": n, "bits": bits, "block_size": bs}
        if attrs != want or node.input[0] != onode.input[0] or node.output != onode.output:
            bad.append("%s attrs %s" % (node.name, attrs))
            continue
        q = nh.to_array(inits[node.input[1]])
        s = nh.to_array(inits[node.input[2]])
        if q.shape != (n, kb, bs * bits // 8) or q.dtype != np.uint8 or s.shape != (n * kb,) \
                or s.dtype != w.dtype or len(node.input) != (3 if sym else 4):
            bad.append("%s shapes %s %s inputs %d" % (node.name, q.shape, s.shape,
                                                     len(node.input)))
            continue
        codes = unpack(q.reshape(n, -1), bits, kb * bs)
        s = s.reshape(n, kb).astype(np.float32)
        if sym:
            z = np.full((n, kb), 1 << (bits - 1), np.int64)
        else:
            zb = nh.to_array(inits[node.input[3]])
            if zb.shape != (n * ((kb * bits + 7) // 8),):
                bad.append("%s zero points %s" % (node.name, zb.shape))
                continue
            z = unpack(zb.reshape(n, -1), bits, kb)
        rc, rs, rz = ref_quantize(w, bits, bs, sym)
        if not (np.array_equal(codes[:, :k], rc[:, :k]) and np.array_equal(s, rs)
                and np.array_equal(z, rz)):
            nd = int((codes[:, :k] != rc[:, :k]).sum())
            bad.append("%s: %d codes, %d scales, %d zero points differ" % (
                node.name, nd, int((s != rs).sum()), int((z != rz).sum())))
            continue
        # the padding of K to a block dequantizes to 0
        if not np.array_equal(codes[:, k:], np.repeat(z, bs, axis=1)[:, k:]):
            bad.append("%s: padding codes are not the zero point" % node.name)
        blk = np.repeat(np.arange(kb), bs)[:k]
        deq = ((codes[:, :k] - z[:, blk]).astype(np.float32) * s[:, blk]).T
        ref = ((rc[:, :k] - rz[:, blk]).astype(np.float32) * rs[:, blk]).T
        if not np.array_equal(deq, ref):
            bad.append("%s: dequantized weights differ" % node.name)
        worst = max(worst, float(np.abs(deq - w.astype(np.float32)).max()))
    check(not bad, "%s: codes, scales, zero points and dequantized weights equal the numpy "
          "reference exactly %s(max |w - dequantized| %.3g)" % (what, bad[:2], worst))


def edge_cases(opmig, work):
    """A weight built for the formulas' edges: a block whose max and min
    have equal magnitude (symmetric picks min), an all-zero block (scale
    0), an all-positive block, values a half step from a code, and K = 40
    (a partial last block)."""
    from onnx import TensorProto as TP, helper as h
    r = np.random.default_rng(7)
    w = r.uniform(-1, 1, (40, 6)).astype(np.float32)
    w[:16, 0] = np.linspace(-0.5, 0.5, 16, dtype=np.float32)   # tie: -0.5 and 0.5
    w[:, 1] = 0                                                  # scale 0
    w[:, 2] = np.abs(w[:, 2]) + 0.25                             # all positive
    w[:16, 3] = np.arange(16, dtype=np.float32) * np.float32(0.125) - 1   # grid
    w[5, 3] = np.float32(-0.3125)      # half a step between codes
    w[:, 4] = np.float32(0.5) * (np.arange(40) % 3 - 1)          # -0.5, 0, 0.5
    g = h.make_graph([h.make_node("MatMul", ["x", "w"], ["y"], name="edge")], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [3, 40])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [3, 6])],
                     [nh.from_array(w, "w")])
    src = os.path.join(work, "edge.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), src)
    g16 = h.make_graph([h.make_node("MatMul", ["x", "w"], ["y"], name="edge")], "g",
                       [h.make_tensor_value_info("x", TP.FLOAT16, [3, 40])],
                       [h.make_tensor_value_info("y", TP.FLOAT16, [3, 6])],
                       [nh.from_array(w.astype(np.float16), "w")])
    src16 = os.path.join(work, "edge16.onnx")
    onnx.save(h.make_model(g16, opset_imports=[h.make_opsetid("", 17)]), src16)
    x = r.uniform(-1, 1, (3, 40)).astype(np.float32)
    jobs, names = [], []
    for (src, tag), bits, sym in [((a, b), c, d) for a, b in ((src, ""), (src16, " float16"))
                                  for c in (4, 8) for d in (False, True)]:
        if True:
            what = "edge weight%s int%d %s" % (tag, bits, "symmetric" if sym else "asymmetric")
            dst = os.path.join(work, "edge%s_%d_%d.onnx" % (tag.strip(), bits, sym))
            r2 = subprocess.run([opmig, "quantize", src, "-o", dst, "--weight-only",
                                 "int%d" % bits, "--block-size", "16", "--no-fallback",
                                 "--force"] + (["--symmetric"] if sym else []),
                                capture_output=True, text=True, timeout=120)
            check(r2.returncode in (0, 1) and os.path.exists(dst), "%s: exit %d %s" % (
                what, r2.returncode, r2.stderr.strip()[:200]))
            if os.path.exists(dst):
                check_weights(dst, src, bits, 16, sym, what, 1, 0)
                xi = x.astype(np.float16) if tag else x
                mine = opmig_run(opmig, dst, {"x": xi}, ["x"], dst + ".run", 1)
                jobs.append((dst, {"x": xi}))
                names.append((what, mine))
    for (what, mine), got in zip(names, ortlib.run_many(jobs, os.path.join(work, "ort_edge"),
                                                         timeout=120)):
        ok = not isinstance(mine, str) and not isinstance(got, str)
        d = float(np.abs(mine[0].astype(np.float64) - got[0]).max()) if ok else float("inf")
        tol = 1e-4 if mine[0].dtype == np.float32 else 1e-2
        check(d <= tol, "%s: onnxruntime-node equals opmig's interpreter within %g (max |diff| "
              "%.3g) %s" % (what, tol, d, "" if ok else (mine, got)))


# ---- the run ----------------------------------------------------------

def tiny_decoder(work):
    """The generator's tiny decomposed decoder written to WORK/tiny.onnx."""
    src = os.path.join(work, "tiny.onnx")
    return gen(src)


def feeds(ids):
    f = {"input_ids": ids.astype(np.int64), "attention_mask": np.ones((1, S), np.int64),
         "position_ids": np.arange(S, dtype=np.int64).reshape(1, S)}
    for i in range(LAYERS):
        for kind in ("key", "value"):
            f["past_key_values.%d.%s" % (i, kind)] = np.zeros((1, KV, 0, HD), np.float32)
    return f


def write_samples(path, samples, names):
    for k, f in enumerate(samples):
        d = os.path.join(path, "test_data_set_%d" % k)
        os.makedirs(d, exist_ok=True)
        for j, name in enumerate(names):
            t = nh.from_array(f[name], name)
            with open(os.path.join(d, "input_%d.pb" % j), "wb") as fh:
                fh.write(t.SerializeToString())


def by_position(got, want):
    """min per-position cosine and top-1 agreement over [.., V] rows."""
    a = np.concatenate([g.reshape(-1, g.shape[-1]) for g in got]).astype(np.float64)
    b = np.concatenate([w.reshape(-1, w.shape[-1]) for w in want]).astype(np.float64)
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return float(cos.min()), int((a.argmax(1) == b.argmax(1)).sum()), a.shape[0]


def opmig_run(opmig, model, f, names, out, n_out=1 + 2 * LAYERS):
    os.makedirs(out, exist_ok=True)
    args = []
    for name in names:
        p = os.path.join(out, "in_%s.npy" % name.replace(".", "_"))
        np.save(p, f[name])
        args.append("%s=%s" % (name, p))
    r = subprocess.run([opmig, "run", model] + args + ["-O", out, "--out-format", "npy"],
                       capture_output=True, text=True, timeout=300)
    if r.returncode:
        return "exit %d: %s" % (r.returncode, r.stderr.strip()[:200])
    return [np.load(os.path.join(out, "output_%d.npy" % i)) for i in range(n_out)]


def quantize(opmig, src, dst, data, extra):
    rep = dst + ".json"
    r = subprocess.run([opmig, "quantize", src, "-o", dst, "--validation-data", data,
                        "--json", "--report", rep] + DIMS + extra,
                       capture_output=True, text=True, timeout=300)
    return r, (json.load(open(rep)) if os.path.exists(rep) else None)


def main():
    args = ortlib.start(sys.argv)
    if not args:
        return 77
    opmig, work = args
    src = tiny_decoder(work)
    edge_cases(opmig, work)
    names = [i.name for i in onnx.load(src).graph.input]
    rng = np.random.default_rng(25)
    samples = [feeds(rng.integers(0, VOCAB, size=(1, S))) for _ in range(2)]
    data = os.path.join(work, "data")
    write_samples(data, samples, names)
    runs = {}
    for bits, bs, sym in CONFIGS:
        what = "int%d block %d %s" % (bits, bs, "symmetric" if sym else "asymmetric")
        dst = os.path.join(work, "q%d_%d_%d.onnx" % (bits, bs, sym))
        r, rep = quantize(opmig, src, dst, data, ["--weight-only", "int%d" % bits,
                                                  "--block-size", str(bs), "--no-fallback",
                                                  "--force"] + (["--symmetric"] if sym else []))
        check(r.returncode in (0, 1) and rep is not None and os.path.exists(dst),
              "%s: opmig quantize exit %d %s" % (what, r.returncode, r.stderr.strip()[:200]))
        if r.returncode not in (0, 1) or rep is None:
            continue
        try:
            onnx.checker.check_model(dst, full_check=True)
            check(True, "%s: onnx.checker full_check" % what)
        except onnx.checker.ValidationError as e:
            check(False, "%s: onnx.checker: %s" % (what, str(e).splitlines()[0]))
        check_weights(dst, src, bits, bs, sym, what)
        runs[(bits, bs, sym)] = (dst, rep, r.returncode)
    # int4 with the fallback: written, and the criterion holds
    fb = os.path.join(work, "q4_fallback.onnx")
    r, fb_rep = quantize(opmig, src, fb, data, ["--weight-only", "int4"])
    check(r.returncode == 0 and fb_rep and fb_rep["criterion"]["met"] and os.path.exists(fb),
          "int4 with the fallback: exit %d, met, %s nodes returned to float" % (
              r.returncode, len(fb_rep["fallback"]) if fb_rep else "?"))
    # onnxruntime-node: the float model, every quantized one, per sample
    jobs, keys = [], []
    for k, f in enumerate(samples):
        jobs.append((src, f))
        keys.append(("float", k))
        for cfg, (dst, _, _) in runs.items():
            jobs.append((dst, f))
            keys.append((cfg, k))
        if os.path.exists(fb):
            jobs.append((fb, f))
            keys.append(("fallback", k))
    res = dict(zip(keys, ortlib.run_many(jobs, os.path.join(work, "ort"), timeout=300)))
    for k in range(len(samples)):
        lg = res[("float", k)]
        check(not isinstance(lg, str) and lg[0].shape == (1, S, VOCAB) and np.ptp(lg[0]) > 1e-3,
              "float model in onnxruntime, sample %d" % k)
    for cfg, (dst, rep, rc) in sorted(runs.items()):
        bits, bs, sym = cfg
        what = "int%d block %d %s" % (bits, bs, "symmetric" if sym else "asymmetric")
        got = [res[(cfg, k)] for k in range(len(samples))]
        if any(isinstance(g, str) for g in got):
            check(False, "%s: onnxruntime: %s" % (what, [g for g in got if isinstance(g, str)]))
            continue
        # onnxruntime against opmig's interpreter on the quantized model
        worst = 0.0
        for k, f in enumerate(samples):
            mine = opmig_run(opmig, dst, f, names, os.path.join(work, "run_%d_%d_%d_%d" % (
                bits, bs, sym, k)))
            if isinstance(mine, str):
                worst = float("inf")
                print("  opmig run: %s" % mine)
                continue
            for a, b in zip(mine, got[k]):
                worst = max(worst, float(np.abs(a.astype(np.float64) - b).max()))
        check(worst <= 1e-4, "%s: onnxruntime-node equals opmig's interpreter (max |diff| %.3g)"
              % (what, worst))
        # the logits criterion: opmig's numbers against onnxruntime's
        cmin, top1, pos = by_position([g[0] for g in got], [res[("float", k)][0]
                                                            for k in range(len(samples))])
        lgj = [o for o in rep["outputs"] if o["name"] == "logits"][0]["by_position"]
        check(lgj["positions"] == pos and lgj["top1_agree"] == top1 and
              lgj["min_cosine_required"] == 0.99 and
              abs(lgj["min_cosine"] - cmin) <= 1e-4,
              "%s: opmig reports min position cosine %.6f, top-1 %d/%d; onnxruntime %.6f, "
              "%d/%d" % (what, lgj["min_cosine"], lgj["top1_agree"], lgj["positions"], cmin,
                         top1, pos))
        holds = cmin >= 0.99 and top1 == pos
        check(lgj["ok"] == holds and (rc == 0) == rep["criterion"]["met"] and
              (holds or not rep["criterion"]["met"]),
              "%s: opmig's verdict (%s, exit %d) follows the numbers" % (
                  what, "met" if rep["criterion"]["met"] else "NOT met", rc))
        if bits == 8:
            check(holds, "%s: every position's cosine >= 0.99 and top-1 token kept" % what)
        kv = [o["by_position"]["min_cosine"] for o in rep["outputs"] if o["name"] != "logits"]
        print("  %s: logits min cosine %.6f, top-1 %d/%d; present.* min row cosine %.6f; "
              "weights %d -> %d bytes" % (what, cmin, top1, pos, min(kv),
                                          rep["size"]["weights_before"],
                                          rep["size"]["weights_after"]))
    if fb_rep and ("fallback", 0) in res and not isinstance(res[("fallback", 0)], str):
        cmin, top1, pos = by_position([res[("fallback", k)][0] for k in range(len(samples))],
                                      [res[("float", k)][0] for k in range(len(samples))])
        check(cmin >= 0.99 and top1 == pos,
              "int4 with the fallback in onnxruntime: min position cosine %.6f, top-1 %d/%d, "
              "%d of 15 MatMuls still int4" % (cmin, top1, pos, fb_rep["nodes_quantized"]))
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
