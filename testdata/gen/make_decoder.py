#!/usr/bin/python3
"""make_decoder.py: write a Llama/Qwen-shaped decoder with a KV cache, in
one of the two forms LLM exports take (issue 25): `decomposed` (standard
opset 17, as torch.onnx exports a Llama) or `genai` (the onnxruntime-genai
model builder's form: com.microsoft GroupQueryAttention, MatMulNBits,
SkipSimplifiedLayerNormalization; with --rotary-op, com.microsoft
RotaryEmbedding before GroupQueryAttention).  Seeded and deterministic.

    make_decoder.py --preset tiny --form decomposed -o tiny.onnx
    make_decoder.py --preset 7b --form decomposed --sparse --external -o llm.onnx
    make_decoder.py --form genai --layers 2 --hidden 64 --heads 4 --kv-heads 2 \\
        --intermediate 128 --vocab 256 -o g.onnx

Presets: tiny (2 layers, hidden 64, 4 heads, 2 kv heads, intermediate 128,
vocab 256, 128 positions), 7b (32 layers, hidden 4096, 32 heads, 32 kv
heads, intermediate 11008, vocab 32000, 4096 positions) and qwen (tiny's
sizes, Qwen2's q/k/v biases and rope theta 1e6); options given
after --preset override it (--kv-heads 8 gives a GQA 7B).
--qkv-bias (Qwen2: what sets it apart from Llama besides its sizes)
writes biases on the q, k and v projections, normal with deviation 0.5,
as the exporters do: decomposed, Add(bias, MatMul) after each projection
(torch.onnx's export of a Linear with a bias on 3-D input; the bias
model.layers.{i}.self_attn.q_proj.bias); genai, Add(MatMulNBits, bias)
as onnxruntime-genai's builder writes it (make_add_bias: one packed Add
of the concatenated [q | k | v] biases after the packed QKV MatMulNBits,
model.layers.{i}.attn.qkv_proj.Add.bias; with --rotary-op one per
projection, before its RotaryEmbedding), not MatMulNBits' own bias input
(input 5), which the builder leaves empty.  Tied embeddings (small Qwen2
models) are not generated.

Weights are seeded random, scaled so that activations stay near unit size
(projections normal / sqrt(fan_in), norm weights 1 + 0.1 normal).
--external writes every weight to OUT.data (OUT minus .onnx, plus .data),
4096-aligned; --sparse (implies --external) writes no weight at all: the
initializers carry only their external_data entries and OUT.data is a
sparse file of the right size (all zeros), so a 7B model takes seconds,
little memory and ~0 bytes of disk.  No weight array is ever held whole:
dense weights are written in row chunks.

Inputs (both forms): input_ids int64 [batch_size, sequence_length],
attention_mask int64 [batch_size, total_sequence_length], position_ids
int64 [batch_size, sequence_length] (not in genai without --rotary-op: the
builder drops it when GroupQueryAttention does the rotary), past_key_values.{i}.key/.value
float [batch_size, kv_heads, past_sequence_length, head_dim]; outputs
logits float [batch_size, sequence_length, vocab] and present.{i}.key/.value
[batch_size, kv_heads, total_sequence_length, head_dim].
--dtype float16 (decomposed) writes the weights, the KV cache inputs and
outputs and the logits in float16, as torch exports a half model (HF's
eager Llama: RMSNorm and Softmax in float32 between Casts, the mask
Where(.., 0, float16's lowest)); float32 stays the default.  With --form
genai it writes the builder's float16 model: embeddings, norms, rotary
caches, MatMulNBits scales (and so A), the KV cache and the logits in
float16.
Decomposed only: --no-past writes a prefill-only export (no
past_key_values inputs, no Concat; present.{i}.key/.value are the new
key (rotated) and value, [batch_size, kv_heads, sequence_length,
head_dim]), --no-present besides drops the present outputs (an export
with use_cache=False); --mask causal drops attention_mask (the causal mask built
from the shapes of input_ids and the past: Range(0, T) <= Range(T - S,
T)), --mask sdpa too, the mask then as torch exports
scaled_dot_product_attention(is_causal=True): Where(Equal(Trilu(ones
[S, T]), 0), -inf, 0), counted from the first key (the causal mask only
without a past); --mask tril (Where(Trilu(true [S, T]), 0, lowest)) and
--mask triu (Where(Trilu(true [S, T], upper, k 1), lowest, 0)) alike.
--mask cache writes the mask of transformers >= 4.38 (Llama's
_prepare_4d_causal_attention_mask_with_cache_position, with
attention_mask) as torch.onnx exports it: Trilu(ConstantOfShape([S, T],
lowest), 1, upper) * Cast(Range(0, T) > Reshape(cache_position, [-1,
1])), cache_position = Range(past, past + S), Unsqueezed and Expanded to
[B, 1, S, T], attention_mask's padding Where(Equal(mask + attention_mask,
0), lowest, mask) put back by ScatterND over index grids (torch's
index_put of a slice assignment); each layer adds it sliced to its keys.

Needs onnx (1.12) and numpy: run it with /usr/bin/python3.
"""
import argparse
import os
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEED = 20261205
IR_VERSION = 8
ALIGN = 4096
CHUNK = 1 << 24          # elements generated at once for dense weights
MS = "com.microsoft"
INLINE_MAX = 2 ** 31 - (16 << 20)   # inline weights, with room for the graph
PRESETS = {
    "tiny": dict(layers=2, hidden=64, heads=4, kv_heads=2, intermediate=128,
                 vocab=256, positions=128),
    "7b": dict(layers=32, hidden=4096, heads=32, kv_heads=32,
               intermediate=11008, vocab=32000, positions=4096),
    # tiny's sizes with what sets Qwen2 apart from Llama: q, k and v
    # projection biases and rope_theta 1e6
    "qwen": dict(layers=2, hidden=64, heads=4, kv_heads=2, intermediate=128,
                 vocab=256, positions=128, qkv_bias=True, theta=1e6),
}
NP = {TensorProto.FLOAT: np.float32, TensorProto.UINT8: np.uint8,
      TensorProto.INT64: np.int64, TensorProto.FLOAT16: np.float16}


class Weights:
    """The initializers of one model.  add() records a weight and either
    stores it inline (raw_data), writes it to the external-data file at its
    offset (dense), or only records where it would be (sparse); "count"
    only adds up the bytes (the size check before an inline model).  fill(rng,
    start, count) returns `count` elements of the flattened tensor from
    element `start` on; it is called in order, so a seeded rng gives the
    same bytes whatever CHUNK is."""

    def __init__(self, mode, data_path, location):
        self.mode, self.location = mode, location
        self.inits, self.offset, self.count = [], 0, 0
        self.f = None
        if mode in ("dense", "sparse"):
            if os.path.exists(data_path):
                os.remove(data_path)   # a stale file would keep its blocks
            self.f = open(data_path, "wb")
        self.data_path = data_path

    def add(self, name, dtype, shape, fill):
        self.count += 1
        t = TensorProto()
        t.name, t.data_type = name, dtype
        t.dims.extend(shape)
        n = int(np.prod(shape, dtype=np.int64))
        nbytes = n * np.dtype(NP[dtype]).itemsize
        rng = np.random.default_rng([SEED, self.count])
        if self.mode == "count":
            self.offset += nbytes
        elif self.mode == "inline":
            self.offset += nbytes
            t.raw_data = np.ascontiguousarray(fill(rng, 0, n), NP[dtype]).tobytes()
        else:
            off = (self.offset + ALIGN - 1) // ALIGN * ALIGN
            if self.mode == "dense":
                self.f.seek(off)
                for s in range(0, n, CHUNK):
                    a = fill(rng, s, min(CHUNK, n - s))
                    self.f.write(np.ascontiguousarray(a, NP[dtype]).tobytes())
            t.data_location = TensorProto.EXTERNAL
            for k, v in (("location", self.location), ("offset", str(off)),
                         ("length", str(nbytes))):
                e = t.external_data.add()
                e.key, e.value = k, v
            self.offset = off + nbytes
        self.inits.append(t)
        return name

    def close(self):
        if self.f:
            self.f.truncate(self.offset)   # sparse: the holes stay holes
            self.f.close()


def normal(scale):
    return lambda rng, s, n: rng.standard_normal(n, dtype=np.float32) * np.float32(scale)


def around_one(rng, s, n):
    return np.float32(1) + np.float32(0.1) * rng.standard_normal(n, dtype=np.float32)


def rope_cache(positions, dim, theta, fn, half):
    """cos or sin of position * inv_freq, [positions, dim] (HF's cat of the
    two halves) or [positions, dim/2] (GroupQueryAttention's cache)."""
    def fill(rng, s, n):
        inv = 1.0 / (theta ** (np.arange(0, dim, 2, dtype=np.float64) / dim))
        f = np.outer(np.arange(positions, dtype=np.float64), inv)
        if not half:
            f = np.concatenate([f, f], axis=1)
        return fn(f).astype(np.float32).reshape(-1)[s:s + n]
    return fill


class Graph:
    def __init__(self, w):
        self.w, self.nodes, self.consts = w, [], {}

    def node(self, op, ins, outs=None, name=None, domain=None, **attrs):
        name = name or "/%s_%d" % (op, len(self.nodes))
        if outs is None:
            outs = [name + "/output_0"]
        self.nodes.append(helper.make_node(op, ins, outs, name=name, domain=domain, **attrs))
        return outs[0] if len(outs) == 1 else outs

    def const(self, values, dtype=np.int64, scalar=False):
        """A small inline initializer, shared by value."""
        a = np.array(values, dtype=dtype)
        if scalar:
            a = a.reshape(())
        key = (a.dtype.str, a.shape, a.tobytes())
        if key not in self.consts:
            name = "const_%d" % len(self.consts)
            self.consts[key] = name
            self.w.inits.append(numpy_helper.from_array(a, name))
        return self.consts[key]


def io(cfg, position_ids):
    kv, hd = cfg["kv_heads"], cfg["hidden"] // cfg["heads"]
    f, i64 = cfg.get("dtype", TensorProto.FLOAT), TensorProto.INT64
    no_past, mask = cfg.get("no_past"), cfg.get("mask", "padding")
    ins = [helper.make_tensor_value_info("input_ids", i64, ["batch_size", "sequence_length"])]
    if mask in ("padding", "cache"):
        ins.append(helper.make_tensor_value_info("attention_mask", i64,
                                                 ["batch_size", "total_sequence_length"]))
    if position_ids:
        ins.append(helper.make_tensor_value_info("position_ids", i64,
                                                 ["batch_size", "sequence_length"]))
    outs = [helper.make_tensor_value_info("logits", f, ["batch_size", "sequence_length",
                                                        cfg["vocab"]])]
    for i in range(cfg["layers"]):
        for kind in ("key", "value"):
            if not no_past:
                ins.append(helper.make_tensor_value_info(
                    "past_key_values.%d.%s" % (i, kind), f,
                    ["batch_size", kv, "past_sequence_length", hd]))
            if cfg.get("no_present"):
                continue
            outs.append(helper.make_tensor_value_info(
                "present.%d.%s" % (i, kind), f,
                ["batch_size", kv, "sequence_length" if no_past else "total_sequence_length",
                 hd]))
    return ins, outs


def rms_norm(g, x, weight, eps, p, half=False):
    """HF's LlamaRMSNorm; half: x float16, normalized in float32 (Cast to
    float32 and back), the weight float16."""
    if half:
        x = g.node("Cast", [x], name=p + "/Cast", to=TensorProto.FLOAT)
    sq = g.node("Pow", [x, g.const(2.0, np.float32, True)], name=p + "/Pow")
    mean = g.node("ReduceMean", [sq], name=p + "/ReduceMean", axes=[-1], keepdims=1)
    var = g.node("Add", [mean, g.const(eps, np.float32, True)], name=p + "/Add")
    std = g.node("Sqrt", [var], name=p + "/Sqrt")
    inv = g.node("Div", [g.const(1.0, np.float32, True), std], name=p + "/Div")
    y = g.node("Mul", [x, inv], name=p + "/Mul")
    if half:
        y = g.node("Cast", [y], name=p + "/Cast_1", to=TensorProto.FLOAT16)
    return g.node("Mul", [weight, y], name=p + "/Mul_1")


def rotary(g, x, cos, sin, hd, p, out=None):
    """x * cos + rotate_half(x) * sin, x [B, heads, S, hd] (into out)."""
    h = g.const([hd // 2])
    x1 = g.node("Slice", [x, g.const([0]), h, g.const([-1])], name=p + "/Slice")
    x2 = g.node("Slice", [x, h, g.const([np.iinfo(np.int64).max]), g.const([-1])],
                name=p + "/Slice_1")
    rot = g.node("Concat", [g.node("Neg", [x2], name=p + "/Neg"), x1],
                 name=p + "/Concat", axis=-1)
    a = g.node("Mul", [x, cos], name=p + "/Mul")
    b = g.node("Mul", [rot, sin], name=p + "/Mul_1")
    return g.node("Add", [a, b], [out] if out else None, name=p + "/Add")


def causal_mask(g, cfg, fnp):
    """The additive mask [B, 1, S, T] or [S, T] (cfg mask): "padding"
    (torch's export of HF's Llama: key position <= query position, the
    queries sitting at past .. total-1, and attention_mask[b, key] != 0),
    "causal" (the same causal part without attention_mask: T from the
    shapes of input_ids and the past), "sdpa" (torch's export of
    scaled_dot_product_attention(is_causal=True): Where(Equal(Trilu(ones
    [S, T]), 0), -inf, 0), key j <= query i counted from the first key,
    the causal mask only without a past)."""
    p = "/model/mask"
    mask = cfg.get("mask", "padding")
    one = g.const(1, scalar=True)
    seq = g.node("Gather", [g.node("Shape", ["input_ids"], name=p + "/Shape"), one],
                 name=p + "/Gather", axis=0)
    if mask == "padding":
        total = g.node("Gather", [g.node("Shape", ["attention_mask"], name=p + "/Shape_1"),
                                  one], name=p + "/Gather_1", axis=0)
    elif cfg.get("no_past"):
        total = seq
    else:
        pl = g.node("Gather", [g.node("Shape", ["past_key_values.0.key"], name=p + "/Shape_2"),
                               g.const(2, scalar=True)], name=p + "/Gather_2", axis=0)
        total = g.node("Add", [pl, seq], name=p + "/Add")
    if mask in ("sdpa", "tril", "triu"):
        size = g.node("Concat", [g.node("Unsqueeze", [seq, g.const([0])], name=p + "/Unsqueeze_2"),
                                 g.node("Unsqueeze", [total, g.const([0])],
                                        name=p + "/Unsqueeze_3")], name=p + "/Concat", axis=0)
        zero, low = g.const(0.0, fnp, True), g.const(np.finfo(fnp).min, fnp, True)
        if mask == "tril":   # seen: Trilu(true [S, T]) (j <= i)
            ones = g.node("Expand", [g.const([True], np.bool_), size], name=p + "/Expand")
            tril = g.node("Trilu", [ones], name=p + "/Trilu", upper=0)
            return g.node("Where", [tril, zero, low], name=p + "/Where")
        if mask == "triu":   # masked: Trilu(true [S, T], 1) (j >= i + 1)
            ones = g.node("Expand", [g.const([True], np.bool_), size], name=p + "/Expand")
            triu = g.node("Trilu", [ones, g.const(1, scalar=True)], name=p + "/Trilu", upper=1)
            return g.node("Where", [triu, low, zero], name=p + "/Where")
        ones = g.node("Expand", [g.const([1.0], fnp), size], name=p + "/Expand")
        tril = g.node("Trilu", [ones], name=p + "/Trilu", upper=0)
        return g.node("Where", [g.node("Equal", [tril, zero], name=p + "/Equal"),
                                g.const(-np.inf, fnp, True), zero], name=p + "/Where")
    past = g.node("Sub", [total, seq], name=p + "/Sub")
    qpos = g.node("Range", [past, total, one], name=p + "/Range")
    kpos = g.node("Range", [g.const(0, scalar=True), total, one], name=p + "/Range_1")
    qcol = g.node("Unsqueeze", [qpos, g.const([1])], name=p + "/Unsqueeze")
    allowed = g.node("LessOrEqual", [kpos, qcol], name=p + "/LessOrEqual")
    if mask == "padding":
        pad = g.node("Cast", ["attention_mask"], name=p + "/Cast", to=TensorProto.BOOL)
        pad4 = g.node("Unsqueeze", [pad, g.const([1, 2])], name=p + "/Unsqueeze_1")
        allowed = g.node("And", [allowed, pad4], name=p + "/And")
    return g.node("Where", [allowed, g.const(0.0, fnp, True),
                            g.const(np.finfo(fnp).min, fnp, True)], name=p + "/Where")


INT64_MAX = np.iinfo(np.int64).max
BIAS_SCALE = 0.5         # q/k/v biases: large enough that a lost one shows


def torch_slice(g, x, axis, end, p, start=0):
    """x[..., start:end] on axis, as torch.onnx writes a slice (end a
    value name or an int: INT64_MAX for a full `:`)."""
    e = end if isinstance(end, str) else g.const([end])
    return g.node("Slice", [x, g.const([start]), e, g.const([axis]), g.const([1])], name=p)


def torch_expand(g, x, size, p):
    """torch's expand to a size that may hold -1 (kept dims): Expand(x,
    Where(Equal(size, -1), 1, size)), the ones ConstantOfShape(Shape(size))."""
    ones = g.node("ConstantOfShape", [g.node("Shape", [size], name=p + "/Shape")],
                  name=p + "/ConstantOfShape",
                  value=numpy_helper.from_array(np.array([1], np.int64)))
    neg = g.node("Mul", [ones, g.const(-1, scalar=True)], name=p + "/Mul")
    size = g.node("Where", [g.node("Equal", [size, neg], name=p + "/Equal"), ones, size],
                  name=p + "/Where")
    return g.node("Expand", [x, size], name=p + "/Expand")


def cache_mask(g, cfg, fnp, emb):
    """The mask of transformers >= 4.38 (Llama's _update_causal_mask with
    _prepare_4d_causal_attention_mask_with_cache_position), as torch.onnx
    (TorchScript, opset 17, dynamic axes, traced with a prompt of more than
    one token) exports it:
        cache_position = arange(past, past + S)
        causal = full((S, T), min); causal = triu(causal, 1)
        causal *= arange(T) > cache_position.reshape(-1, 1)
        causal = causal[None, None, :, :].expand(B, 1, -1, -1)
        pad = causal[:, :, :, :L] + attention_mask[:, None, None, :]
        causal[:, :, :, :L] = causal[:, :, :, :L].masked_fill(pad == 0, min)
    (T = L = attention_mask's length; the slice assignment is torch's
    index_put of the four slices' aranges: ScatterND over index grids
    broadcast and concatenated, the values expand_as'ed and reshaped).
    Returns the [B, 1, S, T] mask; each layer slices it to its keys."""
    p = "/model"
    low = np.finfo(fnp).min
    shape_e = g.node("Shape", [emb], name=p + "/Shape")
    seq = g.node("Gather", [shape_e, g.const(1, scalar=True)], name=p + "/Gather", axis=0)
    if cfg.get("no_past"):
        past = g.const(0, scalar=True)
    else:
        past = g.node("Gather", [g.node("Shape", ["past_key_values.0.key"], name=p + "/Shape_1"),
                                 g.const(2, scalar=True)], name=p + "/Gather_1", axis=0)
    end = g.node("Add", [past, seq], name=p + "/Add")
    cache_pos = g.node("Range", [past, end, g.const(1, scalar=True)], name=p + "/Range")
    pm = p + "/mask"
    seq2 = g.node("Gather", [g.node("Shape", [emb], name=pm + "/Shape"), g.const(1, scalar=True)],
                  name=pm + "/Gather", axis=0)
    tgt = g.node("Gather", [g.node("Shape", ["attention_mask"], name=pm + "/Shape_1"),
                            g.const(1, scalar=True)], name=pm + "/Gather_1", axis=0)
    size = g.node("Concat", [g.node("Unsqueeze", [seq2, g.const([0])], name=pm + "/Unsqueeze"),
                             g.node("Unsqueeze", [tgt, g.const([0])], name=pm + "/Unsqueeze_1")],
                  name=pm + "/Concat", axis=0)
    full = g.node("ConstantOfShape", [size], name=pm + "/ConstantOfShape",
                  value=numpy_helper.from_array(np.array([low], fnp)))
    causal = g.node("Trilu", [full, g.const(1, scalar=True)], name=pm + "/Trilu", upper=1)
    keys = g.node("Range", [g.const(0, scalar=True), tgt, g.const(1, scalar=True)],
                  name=pm + "/Range")
    col = g.node("Reshape", [cache_pos, g.const([-1, 1])], name=pm + "/Reshape")
    after = g.node("Greater", [keys, col], name=pm + "/Greater")
    causal = g.node("Mul", [causal, g.node("Cast", [after], name=pm + "/Cast",
                                               to=cfg.get("dtype", TensorProto.FLOAT))],
                    name=pm + "/Mul")
    x = g.node("Unsqueeze", [causal, g.const([0])], name=pm + "/Unsqueeze_2")
    x = g.node("Unsqueeze", [x, g.const([1])], name=pm + "/Unsqueeze_3")
    x = torch_slice(g, x, 2, INT64_MAX, pm + "/Slice")
    x = torch_slice(g, x, 3, INT64_MAX, pm + "/Slice_1")
    batch = g.node("Gather", [g.node("Shape", [emb], name=pm + "/Shape_2"),
                              g.const(0, scalar=True)], name=pm + "/Gather_2", axis=0)
    bsize = g.node("Concat", [g.node("Unsqueeze", [batch, g.const([0])], name=pm + "/Unsqueeze_4"),
                              g.const([1]), g.const([-1]), g.const([-1])],
                   name=pm + "/Concat_1", axis=0)
    causal = torch_expand(g, x, bsize, pm + "/expand")
    # padding
    mlen = g.node("Gather", [g.node("Shape", ["attention_mask"], name=pm + "/Shape_3"),
                             g.const(1, scalar=True)], name=pm + "/Gather_3", axis=0)
    mend = g.node("Unsqueeze", [mlen, g.const([0])], name=pm + "/Unsqueeze_5")

    def sl(x, tag):   # causal[:, :, :, :mask_length]
        for ax in range(3):
            x = torch_slice(g, x, ax, INT64_MAX, pm + "/%s/Slice_%d" % (tag, ax))
        return torch_slice(g, x, 3, mend, pm + "/%s/Slice_3" % tag)
    am = torch_slice(g, "attention_mask", 0, INT64_MAX, pm + "/Slice_2")
    am = g.node("Unsqueeze", [am, g.const([1])], name=pm + "/Unsqueeze_6")
    am = g.node("Unsqueeze", [am, g.const([2])], name=pm + "/Unsqueeze_7")
    am = torch_slice(g, am, 3, INT64_MAX, pm + "/Slice_3")
    amf = g.node("Cast", [am], name=pm + "/Cast_1", to=cfg.get("dtype", TensorProto.FLOAT))
    pad = g.node("Add", [sl(causal, "a"), amf], name=pm + "/Add")
    pad = g.node("Equal", [pad, g.const(0.0, fnp, True)], name=pm + "/Equal")
    fill = g.node("Where", [pad, g.const(low, fnp, True), sl(causal, "b")], name=pm + "/Where")
    # causal[:, :, :, :mask_length] = fill: torch's copy_ into the slice,
    # an index_put over the slices' aranges
    target = sl(causal, "c")
    fill = g.node("Expand", [fill, g.node("Shape", [target], name=pm + "/Shape_4")],
                  name=pm + "/Expand")
    shape_c = g.node("Shape", [causal], name=pm + "/index_put/Shape")
    idx = []
    for ax in range(4):
        q = pm + "/index_put/%d" % ax
        n = g.node("Gather", [shape_c, g.const(ax, scalar=True)], name=q + "/Gather", axis=0)
        r = g.node("Range", [g.const(0, scalar=True), n, g.const(1, scalar=True)],
                   name=q + "/Range")
        r = torch_slice(g, r, 0, mend if ax == 3 else INT64_MAX, q + "/Slice")
        idx.append(g.node("Reshape", [r, g.const([-1] + [1] * (3 - ax))], name=q + "/Reshape"))
    q = pm + "/index_put"
    s = idx[0]
    for j in range(1, 4):
        s = g.node("Add", [s, idx[j]], name=q + "/Add_%d" % j)
    bshape = g.node("Shape", [s], name=q + "/Shape_1")
    parts = [g.node("Unsqueeze", [torch_expand(g, i, bshape, q + "/%d/expand" % j),
                                  g.const([-1])], name=q + "/%d/Unsqueeze" % j)
             for j, i in enumerate(idx)]
    index = g.node("Concat", parts, name=q + "/Concat", axis=-1)
    sub = g.node("Slice", [shape_c, g.const([4]), g.const([INT64_MAX]), g.const([0])],
                 name=q + "/Slice")
    vshape = g.node("Concat", [bshape, sub], name=q + "/Concat_1", axis=0)
    fill = g.node("Reshape", [fill, vshape], name=q + "/Reshape")
    return g.node("ScatterND", [causal, index, fill], name=pm + "/ScatterND")


def build_decomposed(cfg, w):
    """float16 (cfg dtype, torch's half export of HF's eager Llama): the
    weights, KV cache, logits and the mask (Where(.., 0, float16's lowest))
    in float16, RMSNorm and Softmax in float32 (Cast there and back)."""
    g = Graph(w)
    L, H, A, KV = cfg["layers"], cfg["hidden"], cfg["heads"], cfg["kv_heads"]
    hd, I, V, eps = H // A, cfg["intermediate"], cfg["vocab"], 1e-6
    F = cfg.get("dtype", TensorProto.FLOAT)
    half = F == TensorProto.FLOAT16
    fnp = NP[F]
    emb = w.add("model.embed_tokens.weight", F, [V, H], normal(1.0))
    cos_c = w.add("model.rotary_emb.cos_cached", F, [cfg["positions"], hd],
                  rope_cache(cfg["positions"], hd, cfg["theta"], np.cos, False))
    sin_c = w.add("model.rotary_emb.sin_cached", F, [cfg["positions"], hd],
                  rope_cache(cfg["positions"], hd, cfg["theta"], np.sin, False))
    x = g.node("Gather", [emb, "input_ids"], name="/model/embed_tokens/Gather")

    cache = cfg.get("mask") == "cache"
    bias = cache_mask(g, cfg, fnp, x) if cache else causal_mask(g, cfg, fnp)

    p = "/model/rotary_emb"
    cos = g.node("Unsqueeze", [g.node("Gather", [cos_c, "position_ids"], name=p + "/Gather"),
                               g.const([1])], name=p + "/Unsqueeze")
    sin = g.node("Unsqueeze", [g.node("Gather", [sin_c, "position_ids"], name=p + "/Gather_1"),
                               g.const([1])], name=p + "/Unsqueeze_1")

    heads_shape = g.const([0, 0, A, hd])
    kv_shape = g.const([0, 0, KV, hd])
    perm = [0, 2, 1, 3]
    for i in range(L):
        pre, p = "model.layers.%d." % i, "/model/layers.%d" % i
        ln1 = w.add(pre + "input_layernorm.weight", F, [H], around_one)
        h = rms_norm(g, x, ln1, eps, p + "/input_layernorm", half)
        proj = {}
        for nm, n_out in (("q", A * hd), ("k", KV * hd), ("v", KV * hd), ("o", H)):
            proj[nm] = w.add(pre + "self_attn.%s_proj.weight" % nm, F,
                             [A * hd if nm == "o" else H, n_out],
                             normal(1.0 / np.sqrt(A * hd if nm == "o" else H)))
        pa = p + "/self_attn"
        q = g.node("MatMul", [h, proj["q"]], name=pa + "/q_proj/MatMul")
        k = g.node("MatMul", [h, proj["k"]], name=pa + "/k_proj/MatMul")
        v = g.node("MatMul", [h, proj["v"]], name=pa + "/v_proj/MatMul")
        if cfg.get("qkv_bias"):   # Qwen2: nn.Linear(bias=True), torch's Add(bias, MatMul)
            q, k, v = (g.node("Add", [w.add(pre + "self_attn.%s_proj.bias" % nm, F, [n],
                                            normal(BIAS_SCALE)), x3],
                              name=pa + "/%s_proj/Add" % nm)
                       for nm, n, x3 in (("q", A * hd, q), ("k", KV * hd, k), ("v", KV * hd, v)))
        q = g.node("Transpose", [g.node("Reshape", [q, heads_shape], name=pa + "/Reshape")],
                   name=pa + "/Transpose", perm=perm)
        k = g.node("Transpose", [g.node("Reshape", [k, kv_shape], name=pa + "/Reshape_1")],
                   name=pa + "/Transpose_1", perm=perm)
        v = g.node("Transpose", [g.node("Reshape", [v, kv_shape], name=pa + "/Reshape_2")],
                   ["present.%d.value" % i] if cfg.get("no_past") and not cfg.get("no_present")
                   else None,
                   name=pa + "/Transpose_2", perm=perm)
        q = rotary(g, q, cos, sin, hd, pa + "/rotary_q")
        if cfg.get("no_past"):   # prefill only: present = the new key and value
            k = rotary(g, k, cos, sin, hd, pa + "/rotary_k",
                       None if cfg.get("no_present") else "present.%d.key" % i)
        else:
            k = rotary(g, k, cos, sin, hd, pa + "/rotary_k")
            k = g.node("Concat", ["past_key_values.%d.key" % i, k], ["present.%d.key" % i],
                       name=pa + "/Concat_k", axis=2)
            v = g.node("Concat", ["past_key_values.%d.value" % i, v], ["present.%d.value" % i],
                       name=pa + "/Concat_v", axis=2)
        if A != KV:   # repeat_kv: [B, KV, T, hd] -> [B, KV, rep, T, hd] -> [B, A, T, hd]
            rep = g.const([1, 1, A // KV, 1, 1])
            ax, rs = g.const([2]), g.const([0, A, -1, hd])
            k = g.node("Reshape", [g.node("Expand", [g.node("Unsqueeze", [k, ax],
                                                            name=pa + "/repeat_k/Unsqueeze"),
                                                     rep], name=pa + "/repeat_k/Expand"), rs],
                       name=pa + "/repeat_k/Reshape")
            v = g.node("Reshape", [g.node("Expand", [g.node("Unsqueeze", [v, ax],
                                                            name=pa + "/repeat_v/Unsqueeze"),
                                                     rep], name=pa + "/repeat_v/Expand"), rs],
                       name=pa + "/repeat_v/Reshape")
        kt = g.node("Transpose", [k], name=pa + "/Transpose_3", perm=[0, 1, 3, 2])
        s = g.node("MatMul", [q, kt], name=pa + "/MatMul")
        s = g.node("Div", [s, g.const(np.sqrt(hd), fnp, True)], name=pa + "/Div")
        m = bias
        if cache:   # attention_mask[:, :, :, :key_states.shape[-2]]
            kl = g.node("Gather", [g.node("Shape", [k], name=pa + "/Shape"),
                                   g.const(2, scalar=True)], name=pa + "/Gather", axis=0)
            kl = g.node("Unsqueeze", [kl, g.const([0])], name=pa + "/Unsqueeze")
            for ax in range(3):
                m = torch_slice(g, m, ax, INT64_MAX, pa + "/Slice_%d" % ax)
            m = torch_slice(g, m, 3, kl, pa + "/Slice_3")
        s = g.node("Add", [s, m], name=pa + "/Add")
        if half:   # softmax(dtype=torch.float32).to(float16)
            s = g.node("Cast", [s], name=pa + "/Cast", to=TensorProto.FLOAT)
        s = g.node("Softmax", [s], name=pa + "/Softmax", axis=-1)
        if half:
            s = g.node("Cast", [s], name=pa + "/Cast_1", to=TensorProto.FLOAT16)
        o = g.node("MatMul", [s, v], name=pa + "/MatMul_1")
        o = g.node("Transpose", [o], name=pa + "/Transpose_4", perm=perm)
        o = g.node("Reshape", [o, g.const([0, 0, A * hd])], name=pa + "/Reshape_3")
        o = g.node("MatMul", [o, proj["o"]], name=pa + "/o_proj/MatMul")
        x = g.node("Add", [x, o], name=p + "/Add")

        ln2 = w.add(pre + "post_attention_layernorm.weight", F, [H], around_one)
        h = rms_norm(g, x, ln2, eps, p + "/post_attention_layernorm", half)
        pm = p + "/mlp"
        wg = w.add(pre + "mlp.gate_proj.weight", F, [H, I], normal(1 / np.sqrt(H)))
        wu = w.add(pre + "mlp.up_proj.weight", F, [H, I], normal(1 / np.sqrt(H)))
        wd = w.add(pre + "mlp.down_proj.weight", F, [I, H], normal(1 / np.sqrt(I)))
        gate = g.node("MatMul", [h, wg], name=pm + "/gate_proj/MatMul")
        act = g.node("Mul", [gate, g.node("Sigmoid", [gate], name=pm + "/act_fn/Sigmoid")],
                     name=pm + "/act_fn/Mul")
        up = g.node("MatMul", [h, wu], name=pm + "/up_proj/MatMul")
        d = g.node("MatMul", [g.node("Mul", [act, up], name=pm + "/Mul"), wd],
                   name=pm + "/down_proj/MatMul")
        x = g.node("Add", [x, d], name=p + "/Add_1")

    fn = w.add("model.norm.weight", F, [H], around_one)
    h = rms_norm(g, x, fn, eps, "/model/norm", half)
    head = w.add("lm_head.weight", F, [H, V], normal(1 / np.sqrt(H)))
    g.node("MatMul", [h, head], ["logits"], name="/lm_head/MatMul")
    return g


def nbits_any(g, w, x, name, k, n, zero_points, out=None, pname=None,
              dtype=TensorProto.FLOAT):
    """MatMulNBits, 4 bits, block 32: B uint8 [n, k/32, 16] of random
    nibbles, scales [n * k/32] sized so that (q - zp) * scale has a standard
    deviation of about 1/sqrt(k); of dtype (A's, float32 or float16)."""
    blocks = (k + 31) // 32
    qb = w.add(name + ".MatMul.weight_Q4", TensorProto.UINT8, [n, blocks, 16],
               lambda rng, s, c: rng.integers(0, 256, c, dtype=np.uint8))
    sc = np.float32(1 / (np.sqrt(k) * 4.6))
    scales = w.add(name + ".MatMul.weight_scales", dtype, [n * blocks],
                   lambda rng, s, c: sc * (np.float32(0.8) + np.float32(0.4) *
                                           rng.random(c, dtype=np.float32)))
    ins = [x, qb, scales]
    if zero_points:
        ins.append(w.add(name + ".MatMul.weight_zp", TensorProto.UINT8,
                         [n * ((blocks + 1) // 2)],
                         lambda rng, s, c: (rng.integers(6, 11, c, dtype=np.uint8) |
                                            (rng.integers(6, 11, c, dtype=np.uint8) << 4))))
    return g.node("MatMulNBits", ins, [out] if out else None, name=pname or name + "/MatMul_Q4",
                  domain=MS, K=k, N=n, bits=4, block_size=32, accuracy_level=0)


def bias_add(g, w, x, name, n, dtype):
    """The builder's make_add_bias: Add(x, bias) named name, the bias [n]
    an initializer named after the node (/model/layers.0/attn/q_proj/Add
    -> model.layers.0.attn.q_proj.Add.bias)."""
    b = w.add(name[1:].replace("/", ".") + ".bias", dtype, [n], normal(BIAS_SCALE))
    return g.node("Add", [x, b], name=name)


def build_genai(cfg, w):
    g = Graph(w)
    L, H, A, KV = cfg["layers"], cfg["hidden"], cfg["heads"], cfg["kv_heads"]
    hd, I, V, eps, zp = H // A, cfg["intermediate"], cfg["vocab"], 1e-6, cfg["zero_points"]
    F = cfg.get("dtype", TensorProto.FLOAT)   # float16: as the builder's -p fp16

    def nbits(g, w, x, name, k, n, zero_points, out=None, pname=None):
        return nbits_any(g, w, x, name, k, n, zero_points, out, pname, F)
    emb = w.add("model.embed_tokens.weight", F, [V, H], normal(1.0))
    cos_c = w.add("cos_cache", F, [cfg["positions"], hd // 2],
                  rope_cache(cfg["positions"], hd, cfg["theta"], np.cos, True))
    sin_c = w.add("sin_cache", F, [cfg["positions"], hd // 2],
                  rope_cache(cfg["positions"], hd, cfg["theta"], np.sin, True))
    x = g.node("Gather", [emb, "input_ids"], name="/model/embed_tokens/Gather")

    # seqlens_k = sum(attention_mask, 1) - 1 and total_sequence_length, as
    # int32, the way the builder reformats the mask for GroupQueryAttention.
    p = "/model/attn_mask_reformat/attn_mask_subgraph"
    rs = g.node("ReduceSum", ["attention_mask", g.const([1])], name=p + "/ReduceSum",
                keepdims=0)
    sub = g.node("Sub", [rs, g.const(1, scalar=True)], name=p + "/Sub")
    seqlens = g.node("Cast", [sub], name=p + "/Sub/Cast", to=TensorProto.INT32)
    shp = g.node("Shape", ["attention_mask"], name=p + "/Shape")
    tot = g.node("Gather", [shp, g.const(1, scalar=True)], name=p + "/Gather", axis=0)
    total = g.node("Cast", [tot], name=p + "/Gather/Cast", to=TensorProto.INT32)

    skip = None
    for i in range(L):
        pre, p = "model.layers.%d." % i, "/model/layers.%d" % i
        ln1 = w.add(pre + "input_layernorm.weight", F, [H], around_one)
        if skip is None:
            h = g.node("SimplifiedLayerNormalization", [x, ln1],
                       name=p + "/input_layernorm/LayerNorm", axis=-1, epsilon=eps,
                       stash_type=1)
            res = x
        else:
            h, _, _, res = g.node("SkipSimplifiedLayerNormalization", [skip, res, ln1],
                                  [p + "/input_layernorm/output_0", "", "",
                                   p + "/input_layernorm/output_3"],
                                  name=p + "/input_layernorm/SkipLayerNorm", domain=MS,
                                  epsilon=eps)
        pa = p + "/attn"
        if cfg["rotary_op"]:   # the builder's form where GQA cannot do the rotary
            q = nbits(g, w, h, pre + "attn.q_proj", H, A * hd, zp, pname=pa + "/q_proj/MatMul_Q4")
            k = nbits(g, w, h, pre + "attn.k_proj", H, KV * hd, zp, pname=pa + "/k_proj/MatMul_Q4")
            v = nbits(g, w, h, pre + "attn.v_proj", H, KV * hd, zp, pname=pa + "/v_proj/MatMul_Q4")
            if cfg.get("qkv_bias"):
                q, k, v = (bias_add(g, w, x3, pa + "/%s_proj/Add" % nm, n, F)
                           for nm, n, x3 in (("q", A * hd, q), ("k", KV * hd, k),
                                             ("v", KV * hd, v)))
            q = g.node("RotaryEmbedding", [q, "position_ids", cos_c, sin_c],
                       name=pa + "/q_rotary/RotaryEmbedding", domain=MS, interleaved=0)
            k = g.node("RotaryEmbedding", [k, "position_ids", cos_c, sin_c],
                       name=pa + "/k_rotary/RotaryEmbedding", domain=MS, interleaved=0)
            qkv, rot = [q, k, v], dict(do_rotary=0)
            caches = []
        else:
            qkv = nbits(g, w, h, pre + "attn.qkv_proj", H, (A + 2 * KV) * hd, zp,
                        pname=pa + "/qkv_proj/MatMul_Q4")
            if cfg.get("qkv_bias"):   # the builder's packed Add of [q | k | v] biases
                qkv = bias_add(g, w, qkv, pa + "/qkv_proj/Add", (A + 2 * KV) * hd, F)
            qkv = [qkv, "", ""]
            rot, caches = dict(do_rotary=1, rotary_interleaved=0), [cos_c, sin_c]
        o, _, _ = g.node("GroupQueryAttention",
                         qkv + ["past_key_values.%d.key" % i, "past_key_values.%d.value" % i,
                                seqlens, total] + caches,
                         [pa + "/GroupQueryAttention/output_0", "present.%d.key" % i,
                          "present.%d.value" % i],
                         name=pa + "/GroupQueryAttention", domain=MS, num_heads=A,
                         kv_num_heads=KV, scale=float(1 / np.sqrt(hd)), local_window_size=-1,
                         softcap=0.0, **rot)
        o = nbits(g, w, o, pre + "attn.o_proj", A * hd, H, zp, pname=pa + "/o_proj/MatMul_Q4")
        ln2 = w.add(pre + "post_attention_layernorm.weight", F, [H], around_one)
        h, _, _, res = g.node("SkipSimplifiedLayerNormalization", [o, res, ln2],
                              [p + "/post_attention_layernorm/output_0", "", "",
                               p + "/post_attention_layernorm/output_3"],
                              name=p + "/post_attention_layernorm/SkipLayerNorm", domain=MS,
                              epsilon=eps)
        pm = p + "/mlp"
        gate = nbits(g, w, h, pre + "mlp.gate_proj", H, I, zp, pname=pm + "/gate_proj/MatMul_Q4")
        up = nbits(g, w, h, pre + "mlp.up_proj", H, I, zp, pname=pm + "/up_proj/MatMul_Q4")
        act = g.node("Mul", [gate, g.node("Sigmoid", [gate], name=pm + "/act_fn/Sigmoid")],
                     name=pm + "/act_fn/Mul")
        m = g.node("Mul", [act, up], name=pm + "/Mul")
        skip = nbits(g, w, m, pre + "mlp.down_proj", I, H, zp, pname=pm + "/down_proj/MatMul_Q4")

    fn = w.add("model.norm.weight", F, [H], around_one)
    h = g.node("SkipSimplifiedLayerNormalization", [skip, res, fn],
               ["/model/layers.%d/final_norm_layernorm/output_0" % L],
               name="/model/layers.%d/final_norm_layernorm/SkipLayerNorm" % L, domain=MS,
               epsilon=eps)
    nbits(g, w, h, "lm_head", H, V, zp, out="logits", pname="/lm_head/MatMul_Q4")
    return g


def parse(argv):
    ap = argparse.ArgumentParser(description="write a Llama/Qwen-shaped decoder")
    ap.add_argument("--preset", choices=sorted(PRESETS))
    ap.add_argument("--form", choices=["decomposed", "genai"], default="decomposed")
    for k in ("layers", "hidden", "heads", "kv-heads", "intermediate", "vocab", "positions"):
        ap.add_argument("--" + k, type=int)
    ap.add_argument("--theta", type=float, help="rotary base (10000; the qwen preset 1e6)")
    ap.add_argument("--qkv-bias", action="store_true",
                    help="biases on the q, k and v projections, as Qwen2 has: decomposed an "
                    "Add(bias, MatMul) after each projection (torch's export of a Linear with "
                    "bias); genai an Add after the projection's MatMulNBits, one packed Add "
                    "of [q | k | v] after the packed QKV (onnxruntime-genai's builder); the "
                    "qwen preset sets it")
    ap.add_argument("--symmetric", action="store_true",
                    help="genai: MatMulNBits without zero points")
    ap.add_argument("--rotary-op", action="store_true",
                    help="genai: separate Q/K/V MatMulNBits and com.microsoft RotaryEmbedding "
                    "(with a position_ids input) instead of GroupQueryAttention's do_rotary")
    ap.add_argument("--external", action="store_true", help="weights in OUT.data")
    ap.add_argument("--sparse", action="store_true",
                    help="all-zero weights in a sparse OUT.data (implies --external)")
    ap.add_argument("--dtype", choices=["float32", "float16"], default="float32",
                    help="float16: decomposed as torch's half export (weights, KV cache, "
                    "logits and mask in float16; RMSNorm and Softmax in float32); genai "
                    "as the builder's fp16 precision (float16 activations, norms, caches "
                    "and MatMulNBits scales)")
    ap.add_argument("--no-past", action="store_true",
                    help="decomposed: a prefill-only export, no past_key_values inputs and "
                    "no Concat (present = the new key and value)")
    ap.add_argument("--no-present", action="store_true",
                    help="with --no-past: no present outputs either (use_cache=False)")
    ap.add_argument("--mask", choices=["padding", "cache", "causal", "sdpa", "tril", "triu"],
                    default="padding",
                    help="decomposed: the causal mask with attention_mask's padding "
                    "(default); cache, the same as transformers >= 4.38 builds it from "
                    "cache_position (full of lowest, triu, times arange(T) > cache_position, "
                    "expanded, padding put in by ScatterND) and each layer slices it to its "
                    "keys; causal without an attention_mask input (Range over the "
                    "shapes); sdpa, torch's scaled_dot_product_attention(is_causal=True) "
                    "export (Trilu of ones, top-left aligned: causal without a past only); "
                    "tril, Where(Trilu(true), 0, lowest), and triu, Where(Trilu(true, upper, "
                    "1), lowest, 0), alike")
    ap.add_argument("--check", action="store_true",
                    help="decomposed: onnx.checker full_check of the written model")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args(argv)
    cfg = dict(PRESETS[a.preset]) if a.preset else {}
    for k in ("layers", "hidden", "heads", "kv_heads", "intermediate", "vocab", "positions"):
        if getattr(a, k) is not None:
            cfg[k] = getattr(a, k)
    missing = [k for k in ("layers", "hidden", "heads", "kv_heads", "intermediate", "vocab")
               if k not in cfg]
    if missing:
        ap.error("give --preset or --%s" % " --".join(m.replace("_", "-") for m in missing))
    cfg.setdefault("positions", 2048)
    if a.theta is not None:
        cfg["theta"] = a.theta
    cfg.setdefault("theta", 10000.0)
    cfg["qkv_bias"] = cfg.get("qkv_bias", False) or a.qkv_bias
    cfg["zero_points"] = not a.symmetric
    cfg["rotary_op"] = a.rotary_op and a.form == "genai"
    if a.dtype == "float16":
        cfg["dtype"] = TensorProto.FLOAT16
    if (a.no_past or a.mask != "padding") and a.form != "decomposed":
        ap.error("--no-past and --mask are for --form decomposed")
    if a.no_present and not a.no_past:
        ap.error("--no-present needs --no-past")
    cfg["no_past"], cfg["no_present"], cfg["mask"] = a.no_past, a.no_present, a.mask
    if cfg["hidden"] % cfg["heads"] or cfg["heads"] % cfg["kv_heads"] or \
            (cfg["hidden"] // cfg["heads"]) % 2:
        ap.error("hidden must split into heads of even size, heads into kv heads")
    return a, cfg


def main(argv):
    a, cfg = parse(argv)
    t0 = time.time()
    out = a.output
    base = out[:-5] if out.endswith(".onnx") else out
    data_path = base + ".data"
    mode = "sparse" if a.sparse else "dense" if a.external else "inline"
    build = build_genai if a.form == "genai" else build_decomposed
    if mode == "inline":   # refuse before generating anything
        w = Weights("count", None, None)
        build(cfg, w)
        if w.offset >= INLINE_MAX:
            print("make_decoder: %s: %d bytes of weights, past protobuf's 2 GB: use "
                  "--external or --sparse" % (out, w.offset), file=sys.stderr)
            return 2
    w = Weights(mode, data_path, os.path.basename(data_path))
    g = build(cfg, w)
    w.close()
    ins, outs = io(cfg, a.form == "decomposed" or cfg["rotary_op"])
    graph = helper.make_graph(g.nodes, "decoder_%s" % a.form, ins, outs, initializer=w.inits)
    opsets = [helper.make_opsetid("", 17)]
    if a.form == "genai":
        opsets.append(helper.make_opsetid(MS, 1))
    m = helper.make_model(graph, producer_name="opmig-testdata", producer_version="1",
                          opset_imports=opsets)
    m.ir_version = IR_VERSION
    data = m.SerializeToString()
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, out)
    if a.check:
        onnx.checker.check_model(out, full_check=a.form == "decomposed")
    print("make_decoder: %s: %s, %d nodes, %d weights, %d bytes of weights%s (%.2fs)"
          % (out, a.form, len(g.nodes), w.count, w.offset,
             " in %s (%s)" % (data_path, mode) if mode != "inline" else "",
             time.time() - t0), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
