"""lowerings_llm.py OPMIG WORKDIR [SEED]: the lowerings of the LLM operators
against onnxruntime, in the frame of lowerings.py (same report checks,
onnx.checker where opset <= 17, one onnxruntime-node process): random
com.microsoft RotaryEmbedding and MultiHeadAttention models (default opset
17, com.microsoft 1) and ai.onnx RotaryEmbedding and Attention models
(opset 23), each migrated with `--passes rotary` or `--passes attention`
to a test target lacking the op.  Masks keep key 0 for every query so that
no row is masked whole.  Run by tests/cli/t1176-lowerings-llm.sh."""
import os
import sys

from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lowerings as L  # noqa: E402

F, I64, I32, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32, TensorProto.BOOL
ROPE_OPS = ["Gather", "Slice", "Mul", "Sub", "Add", "Concat", "Reshape", "Unsqueeze"]
PLAIN_OPS = ["Reshape", "Transpose", "MatMul", "Mul", "Softmax", "Add", "Concat", "Slice"]
# attention's variants: what each covers beyond the plain form, its extra ops
SDPA = [("sdpa", set(), []), ("sdpa-padding", {"pad"}, ["Cast", "Unsqueeze", "Sub"]),
        ("sdpa-where", {"bool"}, ["Where"]), ("sdpa-kv-share", {"share"}, ["Unsqueeze", "Expand"]),
        ("sdpa-softcap", {"cap"}, ["Div", "Tanh"]),
        ("sdpa-all", {"pad", "bool", "share", "cap"},
         ["Cast", "Unsqueeze", "Sub", "Where", "Expand", "Div", "Tanh"])]


def sdpa_variant(needs):
    """The first variant covering what the node needs, and its ops."""
    for name, covers, extra in SDPA:
        if needs <= covers:
            return name, PLAIN_OPS + extra
    raise AssertionError(needs)


def draw(rng, dt, shape, mode="real"):
    """lowerings.draw, and ("keep",): a 0/1 mask (bool or integer) whose
    first key is kept."""
    if isinstance(mode, tuple) and mode[0] == "keep":
        v = rng.integers(0, 2, tuple(shape))
        v[..., 0] = 1
        return v.astype(L.NP[dt])
    return L.real_draw(rng, dt, shape, mode)


def model(node, inputs, outputs, opset):
    """outputs typed with their shapes: onnx 1.12 infers neither
    com.microsoft ops nor opset 23"""
    g = helper.make_graph([node], "g", inputs, outputs)
    imports = [helper.make_opsetid("", opset)]
    if node.domain == "com.microsoft":
        imports.append(helper.make_opsetid("com.microsoft", 1))
    m = helper.make_model(g, opset_imports=imports)
    m.ir_version = 10 if opset >= 21 else 8
    return m


def vi(name, dt, shape):
    return helper.make_tensor_value_info(name, dt, shape)


def rotary(rng, k):
    """RotaryEmbedding of both domains: 3-D and 4-D input, halves and
    interleaved pairs, whole or partial rotation, position ids as [B, S],
    as an offset (com.microsoft) or absent (ai.onnx, caches [B, S, half])."""
    ms = k % 2 == 0
    inter = (k // 2) % 2
    rank = [3, 4][(k // 4) % 2]
    b, s, nh = int(rng.integers(1, 3)), int(rng.integers(1, 6)), int(rng.integers(1, 4))
    d = 2 * int(rng.integers(2, 5))
    rot = d if (k // 8) % 2 == 0 else 2 * int(rng.integers(1, d // 2))
    half, rows = rot // 2, s + 6
    xs = [b, s, nh * d] if rank == 3 else [b, nh, s, d]
    attrs = {"interleaved": inter}
    if rot != d:
        attrs["rotary_embedding_dim"] = rot
    if rank == 3 or rot != d or rng.integers(0, 2):
        attrs["num_heads"] = nh
    feeds = {"x": ("real", F, xs)}
    if ms:
        offset = k % 3 == 0
        ps = [1] if offset else [b, s]
        feeds["pos"] = (("ints", 0, rows - s if offset else rows - 1), I64, ps)
        feeds["cos"] = ("real", F, [rows, half])
        feeds["sin"] = ("real", F, [rows, half])
        node = helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"],
                                domain="com.microsoft", **attrs)
        ins = [vi("x", F, xs), vi("pos", I64, ps), vi("cos", F, [rows, half]),
               vi("sin", F, [rows, half])]
        opset, form = [17, 13, 21][(k // 2) % 3], "offset" if offset else "ids"
    else:
        nopos = k % 3 == 1
        cs = [b, s, half] if nopos else [rows, half]
        feeds["cos"] = ("real", F, cs)
        feeds["sin"] = ("real", F, cs)
        ins = [vi("x", F, xs), vi("cos", F, cs), vi("sin", F, cs)]
        names = ["x", "cos", "sin"]
        if not nopos:
            feeds["pos"] = (("ints", 0, rows - 1), I64, [b, s])
            ins.append(vi("pos", I64, [b, s]))
            names.append("pos")
        node = helper.make_node("RotaryEmbedding", names, ["y"], **attrs)
        opset, form = 23, "no ids" if nopos else "ids"
    m = model(node, ins, [vi("y", F, xs)], opset)
    # interleaved pairs: a rank-5 view, or Gather where the target stops at rank 4
    rank4 = inter and (k // 3) % 2 == 1
    v = "interleaved-gather" if rank4 else "interleaved" if inter else "rotate-half"
    return L.Case("RotaryEmbedding %s %s x %s rot %d %s opset %d"
                  % ("ms" if ms else "23", v, xs, rot, form, opset),
                  "rotary", [v], ROPE_OPS, m, feeds, atol=1e-5, rtol=1e-5,
                  max_rank=4 if rank4 else None)


def attention23(rng, k):
    """Attention-23: 3-D and 4-D, shared kv heads, float or bool mask,
    is_causal, past key/value with the present outputs, scale, softcap,
    the qk output in each mode."""
    rank = [3, 4][k % 2]
    b, s, d = int(rng.integers(1, 3)), int(rng.integers(1, 5)), int(rng.integers(2, 6))
    hkv = int(rng.integers(1, 3))
    hq = hkv * (int(rng.integers(1, 3)) if k % 3 else 1)
    dv = d if k % 4 else int(rng.integers(2, 6))
    past = int(rng.integers(1, 4)) if (k // 2) % 2 else 0
    lk = s if past or k % 5 else int(rng.integers(1, 6))
    t = past + lk
    mask = ["none", "float", "bool"][(k // 3) % 3]
    causal = (k // 4) % 2
    softcap = 2.5 if k % 7 == 3 else 0.0
    qk_mode = [None, 0, 1, 2, 3][k % 5]

    def shp(h, n, dd):
        return [b, n, h * dd] if rank == 3 else [b, h, n, dd]
    feeds = {"q": ("real", F, shp(hq, s, d)), "k": ("real", F, shp(hkv, lk, d)),
             "v": ("real", F, shp(hkv, lk, dv))}
    ins = [vi(x, F, feeds[x][2]) for x in ("q", "k", "v")]
    names = ["q", "k", "v"]
    if mask != "none":
        ms = [s, t] if k % 2 else [b, 1, s, t]
        feeds["m"] = (("keep",) if mask == "bool" else "real", B if mask == "bool" else F, ms)
        ins.append(vi("m", feeds["m"][1], ms))
        names.append("m")
    if past:
        names += [""] * (4 - len(names)) + ["pk", "pv"]
        feeds["pk"] = ("real", F, [b, hkv, past, d])
        feeds["pv"] = ("real", F, [b, hkv, past, dv])
        ins += [vi("pk", F, [b, hkv, past, d]), vi("pv", F, [b, hkv, past, dv])]
    outs = ["y"]
    if past or rank == 3:
        outs += ["pres_k", "pres_v"]
    if qk_mode is not None:
        outs += [""] * (3 - len(outs)) + ["qk"]
    attrs = {"is_causal": causal}
    if rank == 3:
        attrs["q_num_heads"], attrs["kv_num_heads"] = hq, hkv
    if k % 3 == 2:
        attrs["scale"] = 0.3
    if softcap:
        attrs["softcap"] = softcap
    if qk_mode:
        attrs["qk_matmul_output_mode"] = qk_mode
    node = helper.make_node("Attention", names, outs, **attrs)
    m = model(node, ins, [vi(o, F, None) for o in outs if o], 23)
    v, ops = sdpa_variant({x for x, on in (("bool", mask == "bool"), ("cap", softcap),
                                           ("share", hq != hkv)) if on})
    return L.Case("Attention-23 %d-D hq %d hkv %d s %d t %d past %d mask %s causal %d cap %g qk %s"
                  % (rank, hq, hkv, s, t, past, mask, causal, softcap, qk_mode), "attention",
                  [v], ops, m, feeds, atol=2e-5, rtol=2e-5)


def mha(rng, k):
    """com.microsoft MultiHeadAttention: separate 3-D query, key and value,
    bias, key_padding_mask, attention_bias, past and present, unidirectional,
    the qk output."""
    b, s, nh, d = (int(rng.integers(1, 3)), int(rng.integers(1, 5)), int(rng.integers(1, 4)),
                   int(rng.integers(2, 6)))
    past = int(rng.integers(1, 4)) if k % 2 else 0
    dv = d if k % 3 or past else int(rng.integers(2, 6))    # onnxruntime: past needs dv = d
    lk = s if past or k % 4 else int(rng.integers(1, 6))
    t = past + lk
    bias, kpm, ab = (k // 2) % 2, (k // 4) % 2, k % 3 == 1
    uni = (k // 8) % 2 if past or lk == s else 0
    feeds = {"q": ("real", F, [b, s, nh * d]), "k": ("real", F, [b, lk, nh * d]),
             "v": ("real", F, [b, lk, nh * dv])}
    names = ["q", "k", "v"]
    if bias:
        feeds["bias"] = ("real", F, [nh * (2 * d + dv)])
        names.append("bias")
    if kpm:
        feeds["kpm"] = (("keep",), I32, [b, t])
        names += [""] * (4 - len(names)) + ["kpm"]
    if ab:
        feeds["ab"] = ("real", F, [1 if k % 2 else b, 1 if k % 4 else nh, s, t])
        names += [""] * (5 - len(names)) + ["ab"]
    if past:
        feeds["pk"] = ("real", F, [b, nh, past, d])
        feeds["pv"] = ("real", F, [b, nh, past, dv])
        names += [""] * (6 - len(names)) + ["pk", "pv"]
    ins = [vi(x, feeds[x][1], feeds[x][2]) for x in names if x]
    outs = ["y", "pres_k", "pres_v"] if past or k % 5 == 0 else ["y"]
    if k % 2 == 0:
        outs += [""] * (3 - len(outs)) + ["qk"]
    attrs = {"num_heads": nh, "unidirectional": uni}
    if k % 5 == 2:
        attrs["scale"] = 0.4
    node = helper.make_node("MultiHeadAttention", names, outs, domain="com.microsoft", **attrs)
    shapes = {"y": [b, s, nh * dv], "pres_k": [b, nh, t, d], "pres_v": [b, nh, t, dv],
              "qk": [b, nh, s, t]}
    opset = [17, 13, 21][k % 3]
    m = model(node, ins, [vi(o, F, shapes[o]) for o in outs if o], opset)
    v, ops = sdpa_variant({"pad"} if kpm else set())
    return L.Case("MultiHeadAttention nh %d s %d t %d past %d bias %d kpm %d ab %d uni %d opset %d"
                  % (nh, s, t, past, bias, kpm, ab, uni, opset), "attention", [v],
                  ops, m, feeds, atol=2e-5, rtol=2e-5)


L.real_draw = L.draw
L.draw = draw
L.BUILDERS = [(rotary, 24), (attention23, 40), (mha, 20)]

if __name__ == "__main__":
    sys.exit(L.main())
