"""gqa_ort.py OPMIG WORKDIR: com.microsoft GroupQueryAttention against
onnxruntime-node's CPU provider on seeded random cases: prompt (no past,
or a buffer of unused rows), decode (a past, one new token, also with a
past buffer longer than the rows in use and with batch entries of
different lengths) and chunked prefill (a past and several new tokens),
packed and separate QKV, num_heads / kv_num_heads of 1, 2 and 4, rotary
embedding (full and partial, interleaved or not), local_window_size,
softcap, smooth_softmax, head_sink, a custom scale, batch 1 and 2, float32
and float16; all three outputs (output, present_key, present_value) are
compared.  Then the existing attention-family kernels on random inputs:
com.microsoft MultiHeadAttention and RotaryEmbedding, ai.onnx
Attention-23, RotaryEmbedding-23 and RMSNormalization-23 (masks, biases,
float16, the qk_matmul_output modes: masked scores, -inf in opmig as in
the ONNX reference and the lowest float in onnxruntime, compare equal).
Then the group-query-attention lowering: models with a constant
total_sequence_length migrated to a target without the op (`opmig migrate
--passes group-query-attention`; a batch of 2 after a past takes the
run-time path, its entries may be padded), onnx.checker's full check at opset 17,
and the migrated model's outputs in onnxruntime against the original's.
Tolerances: float32 1e-5 absolute + 1e-5 relative (the largest error seen
is below 5e-6), float16 2e-3 + 2e-3 (one unit in the last place near 1;
onnxruntime rounds the rotated query and key to float16, opmig keeps them
in float32).  Prints one line per failing case and a summary; exits 1 on a
failure, 77 when onnxruntime-node is absent."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402

RNG = np.random.default_rng(952)
TP = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16,
      np.dtype(np.int32): TensorProto.INT32, np.dtype(np.int64): TensorProto.INT64,
      np.dtype(np.bool_): TensorProto.BOOL}
TOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float16): 2e-3}


def vi(name, a):
    return helper.make_tensor_value_info(name, TP[a.dtype], list(a.shape))


def make_model(node, feeds, outs, opset):
    """One node; outs: [(name, dtype)] with unknown shapes."""
    g = helper.make_graph([node], "g", [vi(k, v) for k, v in feeds.items()],
                          [helper.make_tensor_value_info(n, TP[np.dtype(t)], None)
                           for n, t in outs])
    imports = [helper.make_opsetid("", opset)]
    if node.domain == "com.microsoft":
        imports.append(helper.make_opsetid("com.microsoft", 1))
    m = helper.make_model(g, opset_imports=imports)
    m.ir_version = 10 if opset >= 23 else 8
    return m


def rope_cache(rows, half, dt):
    inv = 1.0 / (10000 ** (np.arange(half) / half))
    ang = np.arange(rows)[:, None] * inv[None, :]
    return np.cos(ang).astype(dt), np.sin(ang).astype(dt)


def gqa_case(mode, dt, packed, nh, kvh, d, rotary, inter, window, softcap, smooth,
             scale, batch, extra_rows=0, ragged=False, sink=False):
    """mode: prompt | decode | chunk.  Returns (name, model, feeds, outs)."""
    s = {"prompt": int(RNG.integers(2, 7)), "decode": 1, "chunk": int(RNG.integers(2, 5))}[mode]
    past = 0 if mode == "prompt" else int(RNG.integers(1, 7))
    lens = [past] * batch
    if ragged:
        lens = [past, max(0, past - 2)]
    # a past buffer of unused rows at the prompt is a static cache: at
    # least total_sequence_length rows
    pm = past + extra_rows + (s if mode == "prompt" and extra_rows else 0)
    total = max(lens) + s
    mag = 3.0 if softcap else 1.0
    feeds = {}
    if packed:
        feeds["query"] = (RNG.standard_normal((batch, s, (nh + 2 * kvh) * d)) * mag).astype(dt)
    else:
        feeds["query"] = (RNG.standard_normal((batch, s, nh * d)) * mag).astype(dt)
        feeds["key"] = (RNG.standard_normal((batch, s, kvh * d)) * mag).astype(dt)
        feeds["value"] = RNG.standard_normal((batch, s, kvh * d)).astype(dt)
    if mode != "prompt" or extra_rows:
        feeds["past_key"] = (RNG.standard_normal((batch, kvh, pm, d)) * mag).astype(dt)
        feeds["past_value"] = RNG.standard_normal((batch, kvh, pm, d)).astype(dt)
    feeds["seqlens_k"] = np.array([n + s - 1 for n in lens], np.int32)
    if ragged and mode == "prompt":
        # right padding: the last entry's final two rows are pads
        feeds["seqlens_k"][-1] = max(0, s - 3)
    feeds["total_sequence_length"] = np.array(total, np.int32)
    if rotary:
        half = rotary // 2
        feeds["cos_cache"], feeds["sin_cache"] = rope_cache(total + 3, half, dt)
    if sink:
        feeds["head_sink"] = RNG.standard_normal((nh,)).astype(dt)
    names = ["query", "key", "value", "past_key", "past_value", "seqlens_k",
             "total_sequence_length", "cos_cache", "sin_cache", "position_ids",
             "attention_bias", "head_sink"]
    ins = [n if n in feeds else "" for n in names]
    while ins[-1] == "":
        ins.pop()
    attrs = dict(num_heads=nh, kv_num_heads=kvh)
    if rotary:
        attrs.update(do_rotary=1, rotary_interleaved=int(inter))
    if window > 0:
        attrs["local_window_size"] = window
    if softcap:
        attrs["softcap"] = softcap
    if smooth:
        attrs["smooth_softmax"] = 1
    if scale:
        attrs["scale"] = scale
    node = helper.make_node("GroupQueryAttention", ins, ["output", "present_key", "present_value"],
                            domain="com.microsoft", **attrs)
    m = make_model(node, feeds, [("output", dt), ("present_key", dt), ("present_value", dt)], 21)
    name = "gqa %s %s %s nh=%d kvh=%d d=%d b=%d s=%d past=%d%s rot=%d%s win=%d cap=%g%s%s%s" % (
        mode, np.dtype(dt).name, "packed" if packed else "qkv", nh, kvh, d, batch, s, past,
        " pm=%d" % pm if extra_rows else "", rotary, " inter" if inter else "", window,
        softcap, " smooth" if smooth else "", " ragged" if ragged else "",
        " sink" if sink else "")
    return name, m, feeds


def gqa_cases():
    out = []
    heads = [(1, 1), (2, 1), (2, 2), (4, 1), (4, 2), (4, 4)]
    for k in range(60):
        mode = ["prompt", "decode", "chunk"][k % 3]
        dt = np.float16 if k % 5 == 4 else np.float32
        nh, kvh = heads[k % len(heads)]
        d = [16, 32, 16, 32, 8][k % 5]
        rotary = 0
        if d >= 16 and RNG.random() < 0.6:
            rotary = int(RNG.choice([d, 16])) if d == 32 else d
        inter = bool(RNG.random() < 0.5)
        window = int(RNG.choice([-1, -1, 1, 2, 3]))
        softcap = float(RNG.choice([0, 0, 0, 1.5, 4.0]))
        smooth = bool(RNG.random() < 0.2)
        scale = float(RNG.choice([0, 0, 0, 0.3]))
        batch = 1 if mode == "chunk" else int(RNG.integers(1, 3))
        packed = k % 2 == 1
        extra = int(RNG.choice([0, 0, 3])) if mode != "chunk" else 0
        # a right-padded prompt without a window (a window over its padded
        # rows is not checked)
        ragged = batch == 2 and (mode == "decode" and k % 4 == 1 or
                                 mode == "prompt" and k % 4 == 0 and window <= 0)
        sink = k % 7 == 6
        out.append(gqa_case(mode, dt, packed, nh, kvh, d, rotary, inter, window, softcap,
                            smooth, scale, batch, extra, ragged, sink))
    return out


# ---- the existing attention-family kernels ------------------------------

def mha_cases():
    out = []
    for k in range(8):
        b, s, nh, d = int(RNG.integers(1, 3)), int(RNG.integers(1, 5)), [1, 2, 4][k % 3], 8
        past = int(RNG.integers(0, 4)) if k % 2 else 0
        feeds = {"q": RNG.standard_normal((b, s, nh * d)).astype(np.float32),
                 "k": RNG.standard_normal((b, s, nh * d)).astype(np.float32),
                 "v": RNG.standard_normal((b, s, nh * d)).astype(np.float32)}
        ins = ["q", "k", "v"]
        outs = [("y", np.float32)]
        if k % 4 == 3:
            feeds["bias"] = RNG.standard_normal((3 * nh * d,)).astype(np.float32)
            ins.append("bias")
        if past:
            feeds["pk"] = RNG.standard_normal((b, nh, past, d)).astype(np.float32)
            feeds["pv"] = RNG.standard_normal((b, nh, past, d)).astype(np.float32)
            ins += [""] * (6 - len(ins)) + ["pk", "pv"]
            outs += [("ok", np.float32), ("ov", np.float32)]
        attrs = {"num_heads": nh}
        if k % 3 == 2:
            attrs["unidirectional"] = 1
        node = helper.make_node("MultiHeadAttention", ins, [o for o, _ in outs],
                                domain="com.microsoft", **attrs)
        out.append(("ms MultiHeadAttention b=%d s=%d nh=%d past=%d%s" % (
            b, s, nh, past, " causal" if k % 3 == 2 else ""),
            make_model(node, feeds, outs, 21), feeds))
    return out


def ms_rotary_cases():
    out = []
    for k in range(6):
        b, s, nh, d = int(RNG.integers(1, 3)), int(RNG.integers(1, 5)), [1, 2, 3][k % 3], 8
        inter = k % 2
        rot = 0 if k < 3 else 4
        half = (rot or d) // 2
        cos, sin = rope_cache(12, half, np.float32)
        x = RNG.standard_normal((b, s, nh * d) if k % 3 else (b, nh, s, d)).astype(np.float32)
        pos = RNG.integers(0, 12 - s, size=(b, s)).astype(np.int64)
        feeds = {"x": x, "pos": pos, "cos": cos, "sin": sin}
        attrs = {"interleaved": inter}
        if rot or k % 3:
            attrs["num_heads"] = nh
        if rot:
            attrs["rotary_embedding_dim"] = rot
        node = helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"],
                                domain="com.microsoft", **attrs)
        out.append(("ms RotaryEmbedding %s inter=%d rot=%d" % (x.shape, inter, rot),
                    make_model(node, feeds, [("y", np.float32)], 21), feeds))
    return out


def onnx_rotary_cases():
    out = []
    for k in range(6):
        b, s, nh, d = int(RNG.integers(1, 3)), int(RNG.integers(1, 5)), [1, 2, 3][k % 3], 8
        inter = k % 2
        rot = 0 if k < 3 else 4
        half = (rot or d) // 2
        cos, sin = rope_cache(12, half, np.float32)
        x = RNG.standard_normal((b, s, nh * d) if k % 3 else (b, nh, s, d)).astype(np.float32)
        feeds = {"x": x, "cos": cos, "sin": sin}
        ins = ["x", "cos", "sin"]
        if k % 2 == 0:
            feeds["pos"] = RNG.integers(0, 12 - s, size=(b, s)).astype(np.int64)
            ins.append("pos")
        else:
            pos = RNG.integers(0, 12 - s, size=(b, s))
            feeds["cos"], feeds["sin"] = cos[pos], sin[pos]
        attrs = {"interleaved": inter}
        if k % 3:
            attrs["num_heads"] = nh
        if rot:
            attrs["rotary_embedding_dim"] = rot
        node = helper.make_node("RotaryEmbedding", ins, ["y"], **attrs)
        out.append(("RotaryEmbedding-23 %s inter=%d rot=%d pos=%d" % (x.shape, inter, rot,
                                                                      k % 2 == 0),
                    make_model(node, feeds, [("y", np.float32)], 23), feeds))
    return out


def onnx_attention_cases():
    out = []
    for k in range(10):
        b, sq, hq, hkv, d = int(RNG.integers(1, 3)), int(RNG.integers(1, 5)), \
            [2, 4, 4, 1][k % 4], [2, 2, 1, 1][k % 4], 8
        skv = sq if k % 2 else int(RNG.integers(1, 6))
        past = int(RNG.integers(1, 4)) if k % 3 == 1 else 0
        rank4 = k % 2 == 0
        if rank4:
            feeds = {"q": RNG.standard_normal((b, hq, sq, d)).astype(np.float32),
                     "k": RNG.standard_normal((b, hkv, skv, d)).astype(np.float32),
                     "v": RNG.standard_normal((b, hkv, skv, d)).astype(np.float32)}
            attrs = {}
        else:
            feeds = {"q": RNG.standard_normal((b, sq, hq * d)).astype(np.float32),
                     "k": RNG.standard_normal((b, skv, hkv * d)).astype(np.float32),
                     "v": RNG.standard_normal((b, skv, hkv * d)).astype(np.float32)}
            attrs = {"q_num_heads": hq, "kv_num_heads": hkv}
        ins = ["q", "k", "v"]
        outs = [("y", np.float32)]
        total = past + skv
        if k % 4 == 1:
            feeds["mask"] = RNG.standard_normal((sq, total)).astype(np.float32)
            ins.append("mask")
        if past:
            feeds["pk"] = RNG.standard_normal((b, hkv, past, d)).astype(np.float32)
            feeds["pv"] = RNG.standard_normal((b, hkv, past, d)).astype(np.float32)
            ins += [""] * (4 - len(ins)) + ["pk", "pv"]
            outs += [("ok", np.float32), ("ov", np.float32)]
        if k % 5 == 2:
            attrs["is_causal"] = 1
        if k % 5 == 3:
            attrs["softcap"] = 2.0
        if k % 7 == 5:
            attrs["scale"] = 0.2
        node = helper.make_node("Attention", ins, [o for o, _ in outs], **attrs)
        out.append(("Attention-23 b=%d sq=%d skv=%d hq=%d hkv=%d past=%d %s%s" % (
            b, sq, skv, hq, hkv, past, "4d" if rank4 else "3d",
            "".join(" %s=%s" % kv for kv in attrs.items() if "heads" not in kv[0])),
            make_model(node, feeds, outs, 23), feeds))
    return out


def rms_cases():
    out = []
    for k in range(6):
        shape = [(2, 3, 8), (4, 16), (1, 2, 3, 5), (3, 7), (2, 2, 6), (5, 4)][k]
        axis = [-1, 1, 2, -1, 1, 0][k]
        x = RNG.standard_normal(shape).astype(np.float32)
        w = RNG.standard_normal(shape[axis:] if axis >= 0 else shape[axis:]).astype(np.float32)
        feeds = {"x": x, "w": w}
        node = helper.make_node("RMSNormalization", ["x", "w"], ["y"], axis=axis,
                                epsilon=float([1e-5, 1e-3][k % 2]))
        out.append(("RMSNormalization-23 %s axis=%d" % (shape, axis),
                    make_model(node, feeds, [("y", np.float32)], 23), feeds))
    return out


def more_cases():
    """Masks, packed forms, float16 and extra outputs of the same kernels."""
    out = []
    f32, f16 = np.float32, np.float16
    # MultiHeadAttention: key_padding_mask (lengths, raw 2-D and 3-D),
    # attention_bias, bias, float16 (onnxruntime's CPU provider has no
    # packed QKV or KV forms)
    for k in range(8):
        b, s, nh, d = 2, int(RNG.integers(2, 5)), [1, 2, 4][k % 3], 8
        dt = f16 if k == 7 else f32
        feeds, attrs = {}, {"num_heads": nh}
        feeds["q"] = RNG.standard_normal((b, s, nh * d)).astype(dt)
        feeds["k"] = RNG.standard_normal((b, s + 1, nh * d)).astype(dt)
        feeds["v"] = RNG.standard_normal((b, s + 1, nh * d)).astype(dt)
        ins = ["q", "k", "v"]
        if k == 2:
            feeds["bias"] = RNG.standard_normal((3 * nh * d,)).astype(dt)
            ins.append("bias")
        if k == 3:
            feeds["mask"] = (RNG.random((b, s, s + 1)) < 0.7).astype(np.int32)
            feeds["mask"][..., 0] = 1
            ins += [""] * (4 - len(ins)) + ["mask"]
        if k in (0, 4):
            feeds["mask"] = np.array([s + 1, 1 + k % 3], np.int32)
            ins += [""] * (4 - len(ins)) + ["mask"]
        if k in (1, 5):
            feeds["mask"] = (RNG.random((b, s + 1)) < 0.7).astype(np.int32)
            feeds["mask"][:, 0] = 1
            ins += [""] * (4 - len(ins)) + ["mask"]
        if k in (5, 6):
            feeds["ab"] = RNG.standard_normal((1, nh, s, s + 1)).astype(dt)
            ins += [""] * (5 - len(ins)) + ["ab"]
        if k == 6:
            attrs["scale"] = 0.25
        node = helper.make_node("MultiHeadAttention", ins, ["y"], domain="com.microsoft", **attrs)
        out.append(("ms MultiHeadAttention more k=%d %s %s" % (k, feeds["q"].shape,
                                                             np.dtype(dt).name),
                    make_model(node, feeds, [("y", dt)], 21), feeds))
    # com.microsoft RotaryEmbedding: float16, a one-element position offset
    for k in range(3):
        b, s, nh, d = 2, 3, 2, 8
        dt = f16 if k != 1 else f32
        cos, sin = rope_cache(12, d // 2, dt)
        x = RNG.standard_normal((b, s, nh * d)).astype(dt)
        pos = (np.array([2], np.int64) if k == 1 else
               RNG.integers(0, 9, size=(b, s)).astype(np.int64))
        feeds = {"x": x, "pos": pos, "cos": cos, "sin": sin}
        node = helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"],
                                domain="com.microsoft", num_heads=nh, interleaved=k % 2)
        out.append(("ms RotaryEmbedding more k=%d %s" % (k, np.dtype(dt).name),
                    make_model(node, feeds, [("y", dt)], 21), feeds))
    # Attention-23: boolean and additive masks, is_causal with a past, the
    # qk_matmul_output modes, float16
    for k in range(8):
        b, sq, h, d = 2, 3, 2, 8
        skv, past = sq + (k % 2), 2 if k in (2, 3, 6) else 0
        dt = f16 if k == 7 else f32
        feeds = {"q": RNG.standard_normal((b, h, sq, d)).astype(dt),
                 "k": RNG.standard_normal((b, h, skv, d)).astype(dt),
                 "v": RNG.standard_normal((b, h, skv, d)).astype(dt)}
        ins, outs, attrs = ["q", "k", "v"], [("y", dt)], {}
        total = skv + past
        if k in (0, 1, 3):
            mk = RNG.random((b, 1, sq, total)) < 0.7
            mk[..., 0] = True
            feeds["mask"] = mk
            ins.append("mask")
        if k == 4:
            feeds["mask"] = RNG.standard_normal((sq, total)).astype(dt)
            ins.append("mask")
        if past:
            feeds["pk"] = RNG.standard_normal((b, h, past, d)).astype(dt)
            feeds["pv"] = RNG.standard_normal((b, h, past, d)).astype(dt)
            ins += [""] * (4 - len(ins)) + ["pk", "pv"]
            outs += [("ok", dt), ("ov", dt)]
        if k in (2, 3, 6):
            attrs["is_causal"] = 1
        if k in (5, 6):
            attrs["qk_matmul_output_mode"] = k - 4
            attrs["softcap"] = 3.0
            while len(outs) < 3:
                outs.append(("o%d" % len(outs), dt))
            outs.append(("qk", dt))
        node = helper.make_node("Attention", ins, [o for o, _ in outs], **attrs)
        out.append(("Attention-23 more k=%d %s" % (k, np.dtype(dt).name),
                    make_model(node, feeds, outs, 23), feeds))
    # RotaryEmbedding-23 and RMSNormalization-23 in float16
    cos, sin = rope_cache(12, 4, f16)
    feeds = {"x": RNG.standard_normal((2, 3, 16)).astype(f16), "cos": cos, "sin": sin,
             "pos": RNG.integers(0, 9, size=(2, 3)).astype(np.int64)}
    node = helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"], num_heads=2)
    out.append(("RotaryEmbedding-23 more float16", make_model(node, feeds, [("y", f16)], 23),
                feeds))
    feeds = {"x": RNG.standard_normal((2, 3, 8)).astype(f16),
             "w": RNG.standard_normal((8,)).astype(f16)}
    node = helper.make_node("RMSNormalization", ["x", "w"], ["y"], axis=-1)
    out.append(("RMSNormalization-23 more float16", make_model(node, feeds, [("y", f16)], 23),
                feeds))
    return out


def run_opmig(opmig, mf, feeds, d, n_out):
    args = []
    for name, a in feeds.items():
        np.save(os.path.join(d, name + ".npy"), a)
        args.append("%s=%s" % (name, os.path.join(d, name + ".npy")))
    r = subprocess.run([opmig, "run", mf] + args + ["-O", d, "--out-format", "npy"],
                       capture_output=True, text=True)
    if r.returncode:
        return r.stderr.strip()
    return [np.load(os.path.join(d, "output_%d.npy" % i)) for i in range(n_out)]


def compare(got, want, dt):
    """'' when every output agrees, else where the worst element is."""
    tol = TOL[np.dtype(dt)]
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape:
            return "output %d: shape %s, onnxruntime %s" % (i, g.shape, w.shape)
        # masked scores: -inf in opmig (the ONNX reference's Where(allowed,
        # 0, -inf)), the lowest float in onnxruntime's is_causal
        g64 = np.maximum(g.astype(np.float64), -1e38)
        w64 = np.maximum(w.astype(np.float64), -1e38)
        err = np.abs(g64 - w64) - (tol + tol * np.abs(w64))
        if err.size and (np.isnan(g64) != np.isnan(w64)).any():
            return "output %d: NaN where onnxruntime has none" % i
        if err.size and np.nanmax(err) > 0:
            j = np.unravel_index(np.nanargmax(err), err.shape)
            return "output %d at %s: %r, onnxruntime %r" % (i, j, g64[j], w64[j])
    return ""


# ---- the group-query-attention lowering ---------------------------------

LOWER_OPS = ["Slice", "Reshape", "Transpose", "Concat", "Identity", "Unsqueeze", "Expand",
             "MatMul", "Mul", "Div", "Tanh", "Add", "Sub", "Less", "Where", "Softmax",
             # the run-time path (a batch of 2 after a past: entries may be padded)
             "Shape", "Gather", "Cast", "Range", "Equal", "Max", "Min", "GatherElements"]


def lowering_cases():
    """GQA models with total_sequence_length a constant, opset 17, float32
    and float16: 12 without rotary, then 8 with do_rotary (halves and
    interleaved pairs, full and partial)."""
    out = []
    heads = [(1, 1), (2, 1), (4, 2), (4, 4), (4, 1)]
    for k in range(20):
        mode = ["prompt", "decode", "chunk"][k % 3]
        nh, kvh = heads[k % len(heads)]
        dt = np.float16 if k % 4 == 3 else np.float32
        d, rot = [8, 16][k % 2], 0
        if k >= 12:
            d = 32 if k % 2 else 16
            rot = 16 if k % 4 == 1 else d
        window = int(RNG.choice([-1, -1, 2]))
        name, m, feeds = gqa_case(mode, dt, k % 2 == 1, nh, kvh, d, rot,
                                  k % 4 >= 2, window,
                                  float(RNG.choice([0, 0, 2.0])), False,
                                  float(RNG.choice([0, 0.3])), 1 if mode == "chunk" else 2,
                                  ragged=mode == "prompt" and k % 2 == 0 and window <= 0)
        tot = feeds.pop("total_sequence_length")
        g = m.graph
        keep = [i for i in g.input if i.name != "total_sequence_length"]
        del g.input[:]
        g.input.extend(keep)
        g.initializer.append(helper.make_tensor("total_sequence_length", TensorProto.INT32,
                                                [], [int(tot)]))
        q = feeds["query"]
        d = q.shape[2] // (nh if "key" in feeds else nh + 2 * kvh)
        rows = int(tot)
        shapes = [(q.shape[0], q.shape[1], nh * d)] + [(q.shape[0], kvh, rows, d)] * 2
        for o, shape in zip(g.output, shapes):
            o.CopyFrom(helper.make_tensor_value_info(o.name, TP[np.dtype(dt)], list(shape)))
        m.opset_import[0].version = 17
        m.ir_version = 8
        out.append(("lowered " + name, m, feeds))
    return out


def lower(opmig, work, cases):
    """Migrate each case to a target without GroupQueryAttention; returns
    the migrated paths (or an error string each) and the rules' path."""
    rules = os.path.join(work, "gqa-rules.json")
    with open(rules, "w") as f:
        json.dump({"schema": 1, "id": "t-gqa-lower", "sources": ["tests/ort/gqa_ort.py"],
                   "ops": {op: {} for op in LOWER_OPS}}, f)
    res = []
    for k, (name, m, feeds) in enumerate(cases):
        d = os.path.join(work, "l%d" % k)
        os.makedirs(d, exist_ok=True)
        src, dst, rep = [os.path.join(d, f) for f in ("m.onnx", "out.onnx", "rep.json")]
        onnx.save(m, src)
        p = subprocess.run([opmig, "migrate", src, "--passes", "group-query-attention",
                            "--rules", rules, "--target", "t-gqa-lower", "-o", dst,
                            "--no-validate", "--format", "json", "--report", rep],
                           capture_output=True, text=True, timeout=120)
        if p.returncode:
            res.append("migrate exited %d: %s" % (p.returncode, p.stderr.strip()[:300]))
            continue
        made = [x for x in json.load(open(rep))["rewrites"]
                if x["pass"] == "group-query-attention"]
        if not made:
            res.append("no group-query-attention rewrite")
            continue
        try:
            onnx.checker.check_model(onnx.load(dst), full_check=True)
        except Exception as e:  # the checker's own exception types vary
            res.append("checker: %s" % str(e).splitlines()[0])
            continue
        res.append((src, dst))
    return res


def main():
    opmig, work = sys.argv[1], sys.argv[2]
    why = ortlib.available()
    if why:
        print("skipped: %s" % why)
        return 77
    cases = gqa_cases() + mha_cases() + ms_rotary_cases() + onnx_rotary_cases() + \
        onnx_attention_cases() + rms_cases() + more_cases()
    jobs = []
    for k, (name, m, feeds) in enumerate(cases):
        d = os.path.join(work, "c%d" % k)
        os.makedirs(d, exist_ok=True)
        mf = os.path.join(d, "m.onnx")
        onnx.save(m, mf)
        jobs.append((mf, feeds))
    low = lowering_cases()
    lowered = lower(opmig, work, low)
    low_jobs = [k for k, r in enumerate(lowered) if not isinstance(r, str)]
    for k in low_jobs:
        jobs += [(lowered[k][0], low[k][2]), (lowered[k][1], low[k][2])]
    ref = ortlib.run_many(jobs, os.path.join(work, "ort"), timeout=600)
    fails = 0
    for k, r in enumerate(lowered):
        if isinstance(r, str):
            print("FAIL %s: %s" % (low[k][0], r))
            fails += 1
    for j, k in enumerate(low_jobs):
        want, got = ref[len(cases) + 2 * j], ref[len(cases) + 2 * j + 1]
        msg = want if isinstance(want, str) else got if isinstance(got, str) else \
            compare(got, want, low[k][2]["query"].dtype)
        if msg:
            print("FAIL %s: %s" % (low[k][0], msg.splitlines()[0][:300]))
            fails += 1
    for k, (name, m, feeds) in enumerate(cases):
        want = ref[k]
        if isinstance(want, str):
            print("FAIL %s: onnxruntime refused: %s" % (name, want.splitlines()[0][:300]))
            fails += 1
            continue
        d = os.path.join(work, "c%d" % k)
        got = run_opmig(opmig, os.path.join(d, "m.onnx"), feeds, d, len(want))
        if isinstance(got, str):
            print("FAIL %s: opmig: %s" % (name, got))
            fails += 1
            continue
        msg = compare(got, want, feeds[m.graph.input[0].name].dtype)
        if msg:
            print("FAIL %s: %s" % (name, msg))
            fails += 1
    print("%d cases, %d failures" % (len(cases) + len(low), fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
