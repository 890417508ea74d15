"""fuse_gqa_forms_ort.py MODE OPMIG WORKDIR: the fusion fuse-gqa of opmig
migrate on the decoder forms beyond fuse_gqa_ort.py's (testdata/gen/
make_decoder.py, tiny preset), each migrated to qnn (which declares
com.microsoft GroupQueryAttention) at static (batch, sequence, past)
settings and once with symbolic dims (qnn as if it took them, a rules
file): each fused model holds one GroupQueryAttention per layer and no
Softmax, opmig's own validation says equivalent, and onnxruntime-node
gives it the original's logits and present key/value on seeded inputs
(float32: 1e-4 absolute, logits of unit size, the same products summed
in another order; float16: 2e-3 of the largest |value|, an ulp or two of
float16's 2^-10, see fuse_gqa_ort.py).  MODE:

nopast: a prefill-only export (--no-past: no past_key_values inputs, no
  Concat, present = the new key and value); GroupQueryAttention gets no
  past inputs (onnxruntime: the first prompt), its present outputs read by
  none.  A right-padded prompt too, where the padding is checked to
  matter; the float16 export (--dtype float16) as well, and one without
  present outputs either (--no-present: the value's head transpose is
  read by the attention only, so the projection feeds the fused node
  directly); the causal mask
  made strict stays decomposed with a note; the fusion alone passes
  onnx.checker full_check.
causal: decoders without attention_mask, their causal mask built from
  the shapes (--mask causal: Range(0, T) <= Range(T - S, T), T the past's
  length + S; with a past and without), and torch's export of
  scaled_dot_product_attention(is_causal=True) (--mask sdpa: Where(Equal(
  Trilu(ones [S, T]), 0), -inf, 0)) without a past, and the Trilu forms
  --mask tril (seen where Trilu(true)) and --mask triu (masked where
  Trilu(true, upper, 1)); seqlens_k and total_sequence_length are made
  from shapes (constants at static dims).  Constant bool conditions of
  the mask's Where (folded with it by migrate's constant folding: proven
  by the values of the additive constant) fuse when they hold the causal
  mask, seen (Where(C, 0, lowest)) or masked (Where(C', lowest, 0)), and
  one shifted by a key stays decomposed with a note.
  Refused with a note: the sdpa mask after a past (tril counted from the
  first key, not the causal mask), its Trilu of zeros instead of ones
  (every key masked), and the causal mask made strict; the
  fusion alone passes onnx.checker full_check.
half: float16 with symbolic dims: the float16 export (torch's half
  model; with attention_mask, without a past, without attention_mask)
  fused once with symbolic dims and compared at several settings with the
  unfused float16 model, and the float32 decoder through the fp16 pass
  (to qnn with MatMul in float16, symbolic dims) with fuse-gqa against
  the same passes without it, and so the float32 decoder without
  attention_mask at static dims (its folded causal mask, of float32's
  lowest, added in float32 inside the Softmax's Cast island: to qnn, the
  MatMuls kept float32, and with MatMul taken in float16); the genai
  form in float16 (--form genai --dtype float16: float16 MatMulNBits,
  SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization,
  GroupQueryAttention with do_rotary)
  runs in onnxruntime and agrees with the float32 genai model within
  float16's rounding of its activations (1e-2 of the largest logit; seen
  1.2e-3), it migrates to qnn (GroupQueryAttention kept) into a model
  onnxruntime computes the same with, and opmig run computes what
  onnxruntime does (2e-3 of the largest |value|).
cache: transformers' cache_position mask (--mask cache: Trilu(lowest, 1)
  * (Range(0, T) > Range(past, past + S)), expanded to [B, 1, S, T], the
  padding put back by ScatterND over index grids, as torch.onnx exports
  _prepare_4d_causal_attention_mask_with_cache_position; each layer adds
  it sliced to its keys, whose length it reads from the repeated keys'
  Shape), first checked to compute exactly what --mask padding does in
  onnxruntime (right-padded too) and to pass onnx.checker full_check;
  with a past and without, float32 and float16, fused at static settings
  (a right-padded prompt among them, the padding checked to matter) and
  once with symbolic dims, the fusion alone passing full_check (static
  and symbolic), and the float32 decoder through the fp16 pass at
  static dims (its mask kept float32 and Cast) fused against the same
  passes without fuse-gqa; and migrated --precision fp16 with symbolic
  dims for ascend, which must validate without --force (its mask's
  ConstantOfShape filling float16's lowest, not a Cast to -inf) and equal
  the float32 original in onnxruntime within 2e-2 of the largest value.  Mutations that are not the causal mask stay
  decomposed with a note per layer, static and symbolic, each checked
  to change the logits in onnxruntime: Trilu's k 2 (query i sees key
  i + 1 without a past), a lower Trilu, the comparison reversed
  (Less), GreaterOrEqual (no query after a past sees itself), the
  ScatterND's grid with its query and key parts swapped (the mask
  written transposed), the padding Where's branches swapped and each
  layer's slice of the mask cut to one key (broadcast over the keys).
bf16: the float16 export turned into bfloat16 (every float16 tensor,
  type and Cast; checked by onnx.checker full_check) migrated to qnn,
  which declares GroupQueryAttention for any dtype, keeps its attention
  with a note per layer (onnxruntime-node has no bfloat16
  GroupQueryAttention to check a fusion against), at static and at
  symbolic dims; needs no onnxruntime.
Prints one line per check; exits 1 on a failure, 77 when onnxruntime-node
is absent (but for bf16)."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ortlib  # noqa: E402
from decoder_common import (DYN_RULES, LAYERS, check, diff, feeds_for, gen,  # noqa: E402
                            migrate, ops)

TOL = 1e-4
TOL16 = 2e-3


class Jobs:
    """onnxruntime runs gathered, then compared pairwise."""

    def __init__(self):
        self.jobs, self.cmp = [], []

    def pair(self, what, want, have, feeds, rel=None, pad_from=None):
        """want and have on feeds: equal within TOL (rel: rel of the
        largest |value|); pad_from (feeds without padding, sequence
        start): the padding must change the padded positions' logits."""
        k = len(self.jobs)
        self.jobs += [(want, feeds), (have, feeds)]
        if pad_from:
            self.jobs.append((want, pad_from[0]))
        self.cmp.append((what, k, rel, pad_from))

    def differ(self, what, a, b, feeds):
        """a and b on feeds: the logits must differ by more than 1e-2."""
        k = len(self.jobs)
        self.jobs += [(a, feeds), (b, feeds)]
        self.cmp.append((what, k, "differ", None))

    def run(self, work):
        res = ortlib.run_many(self.jobs, os.path.join(work, "ort"))
        for what, k, rel, pad_from in self.cmp:
            want, have = res[k], res[k + 1]
            if isinstance(want, str) or isinstance(have, str):
                check(False, "%s: onnxruntime: %s" % (what, want if isinstance(want, str)
                                                       else have))
                continue
            if rel == "differ":
                d = diff(want[0], have[0])
                check(d > 1e-2, "%s: the logits change by %.3g (> 0.01)" % (what, d))
                continue
            check(len(want) == len(have), "%s: %d outputs (want %d)"
                  % (what, len(have), len(want)))
            worst, top = 0.0, 0.0
            for w, h in zip(want, have):
                worst = max(worst, diff(w, h))
                top = max(top, float(np.max(np.abs(np.asarray(w, np.float64)))))
            lim = rel * top if rel else TOL
            check(worst <= lim, "%s: logits and present max abs diff %.3g (<= %.3g)"
                  % (what, worst, lim))
            if pad_from:
                ones, s0 = res[k + 2], pad_from[1]
                d = diff(want[0][-1, s0:], ones[0][-1, s0:])
                check(d > 1e-2, "%s: the padding matters (padded positions' logits move "
                      "by %.3g from an unpadded mask's)" % (what, d))


def fused(opmig, what, src, dst, b, s, p, passes=None):
    """Migrate src (static at (b, s, p), symbolic when b is None); check one
    GroupQueryAttention per layer, no Softmax, an equivalent validation.
    Returns the fused nodes."""
    r = migrate(opmig, src, dst, b, s, p, passes)
    o = ops(dst)
    check(o.count("GroupQueryAttention") == LAYERS and "Softmax" not in o,
          "%s: %d GroupQueryAttention, %d Softmax (want %d, 0)%s"
          % (what, o.count("GroupQueryAttention"), o.count("Softmax"), LAYERS,
             "" if o else ": migrate wrote nothing (exit %d) %s"
             % (r.returncode, r.stderr.strip()[-300:])))
    if not passes:
        check("): equivalent" in r.stdout, "%s: opmig's own validation says equivalent" % what)
    return [n for n in onnx.load(dst).graph.node if n.op_type == "GroupQueryAttention"] \
        if o else []


def refused(opmig, what, src, dst, b, s, p, why):
    """src migrated keeps its attention, with a note per layer saying why."""
    r = migrate(opmig, src, dst, b, s, p)
    o = ops(dst)
    check(o and "GroupQueryAttention" not in o and o.count("Softmax") == LAYERS,
          "%s: %d GroupQueryAttention, %d Softmax (want 0, %d)"
          % (what, o.count("GroupQueryAttention"), o.count("Softmax"), LAYERS))
    n = r.stdout.count("left decomposed: " + why)
    check(n == LAYERS, "%s: %d notes say why (want %d)%s" % (what, n, LAYERS,
                                                            "" if n else ": " + r.stdout))


def edit(src, dst, fn):
    m = onnx.load(src)
    fn(m)
    onnx.save(m, dst)


def strict(m):
    """The causal LessOrEqual made Less: a query no longer sees itself."""
    n = [n for n in m.graph.node if n.op_type == "LessOrEqual"]
    assert len(n) == 1
    n[0].op_type = "Less"


def checker(opmig, what, src, dst, b, s, p):
    """The fusion alone (no other pass of qnn) passes full_check (b None:
    with symbolic dims)."""
    fused(opmig, what + ", fuse-gqa alone", src, dst, b, s, p,
          "static-dims,fold-constants,fuse-gqa" if b else "fold-constants,fuse-gqa")
    try:
        onnx.checker.check_model(dst, full_check=True)
        check(True, "%s, fuse-gqa alone: onnx.checker full_check" % what)
    except Exception as e:  # noqa: BLE001 (onnx raises several kinds)
        check(False, "%s, fuse-gqa alone: onnx.checker: %s" % (what, str(e).splitlines()[0]))


def fp16_fused(opmig, J, what, src, un, fu, b, s, p, more, feeds):
    """src through the fp16 pass into un, and with fuse-gqa after it into
    fu (static at (b, s, p), symbolic when b is None): one
    GroupQueryAttention a layer and no Softmax in fu, a Softmax a layer in
    un; the two equal within TOL16 on each of feeds."""
    passes = ("static-dims," if b is not None else "") + "fold-constants,fp16"
    migrate(opmig, src, un, b, s, p, passes, more)
    r = migrate(opmig, src, fu, b, s, p, passes + ",fuse-gqa", more)
    o, ou = ops(fu), ops(un)
    check(o.count("GroupQueryAttention") == LAYERS and "Softmax" not in o and
          ou.count("Softmax") == LAYERS, "%s: %d GroupQueryAttention, %d Softmax; "
          "without fuse-gqa %d Softmax (want %d, 0; %d)%s"
          % (what, o.count("GroupQueryAttention"), o.count("Softmax"),
             ou.count("Softmax"), LAYERS, LAYERS, "" if o else ": " + r.stderr.strip()[-300:]))
    if o and ou:
        for tag, f in feeds:
            J.pair(what + tag, un, fu, f, TOL16)


def settings_run(opmig, work, J, tag, src, settings, kw, rel=None, sym=True):
    """src fused at each (b, s, p, pad) and once with symbolic dims, all
    compared with src in onnxruntime."""
    for k, (b, s, p, pad) in enumerate(settings):
        what = "%s, B=%d S=%d past=%d%s" % (tag, b, s, p, " right-padded by %d" % pad
                                            if pad else "")
        dst = os.path.join(work, "%s_%d.onnx" % (tag.replace(" ", "_"), k))
        fused(opmig, what, src, dst, b, s, p)
        f = feeds_for(b, s, p, 100 + k, pad, **kw)
        J.pair(what, src, dst, f, rel,
               (feeds_for(b, s, p, 100 + k, 0, **kw), s - pad) if pad else None)
    if sym:
        dst = os.path.join(work, "%s_sym.onnx" % tag.replace(" ", "_"))
        g = fused(opmig, tag + ", symbolic dims", src, dst, None, None, None)
        for k, (b, s, p, pad) in enumerate(settings):
            J.pair("%s, symbolic dims, B=%d S=%d past=%d%s" % (
                tag, b, s, p, " right-padded by %d" % pad if pad else ""), src, dst,
                feeds_for(b, s, p, 200 + k, pad, **kw), rel)
        return g
    return None


def mode_nopast(opmig, work, J):
    src = gen(os.path.join(work, "nopast.onnx"), "--no-past")
    kw = dict(past=False)
    settings = [(2, 5, 0, 0), (3, 6, 0, 2), (1, 1, 0, 0)]
    g = settings_run(opmig, work, J, "no past", src, settings, kw)
    check(bool(g) and all(n.input[3] == "" and n.input[4] == "" for n in g),
          "no past: GroupQueryAttention has no past_key, past_value inputs")
    nc = gen(os.path.join(work, "nocache.onnx"), "--no-past", "--no-present")
    g = settings_run(opmig, work, J, "no cache", nc, [(2, 5, 0, 0), (3, 6, 0, 2)], kw)
    m = onnx.load(os.path.join(work, "no_cache_0.onnx"))
    prod = {o: n for n in m.graph.node for o in n.output}
    v = [prod.get(n.input[2]) for n in m.graph.node if n.op_type == "GroupQueryAttention"]
    check(len(v) == LAYERS and all(x is not None and x.op_type == "MatMul" for x in v),
          "no cache: GroupQueryAttention's value is the projection's MatMul (%s)"
          % [x.op_type if x is not None else None for x in v])
    h16 = gen(os.path.join(work, "nopast16.onnx"), "--no-past", "--dtype", "float16")
    settings_run(opmig, work, J, "no past float16", h16, [(2, 5, 0, 0), (3, 6, 0, 2)],
                 dict(past=False, dt=np.float16), TOL16, sym=False)
    bad = os.path.join(work, "nopast_strict.onnx")
    edit(src, bad, strict)
    refused(opmig, "no past, strict causal mask", bad, os.path.join(work, "nps_q.onnx"),
            2, 5, 0, "the mask's other part is not the causal mask")
    checker(opmig, "no past", src, os.path.join(work, "nopast_only.onnx"), 2, 5, 0)


def mode_causal(opmig, work, J):
    causal = gen(os.path.join(work, "causal.onnx"), "--mask", "causal")
    kw = dict(mask=False)
    g = settings_run(opmig, work, J, "causal mask", causal,
                     [(2, 5, 0, 0), (2, 1, 6, 0), (1, 3, 4, 0)], kw)
    check(bool(g) and all(n.input[3] for n in g), "causal mask: GroupQueryAttention reads "
          "the past")
    nop = gen(os.path.join(work, "causal_nopast.onnx"), "--mask", "causal", "--no-past")
    settings_run(opmig, work, J, "causal mask no past", nop, [(2, 5, 0, 0), (1, 1, 0, 0)],
                 dict(mask=False, past=False))
    sdpa = gen(os.path.join(work, "sdpa.onnx"), "--mask", "sdpa", "--no-past")
    settings_run(opmig, work, J, "sdpa is_causal", sdpa, [(2, 5, 0, 0), (3, 2, 0, 0)],
                 dict(mask=False, past=False))
    for m in ("tril", "triu"):
        src = gen(os.path.join(work, "%s.onnx" % m), "--mask", m, "--no-past")
        settings_run(opmig, work, J, "%s mask no past" % m, src, [(2, 5, 0, 0), (1, 1, 0, 0)],
                     dict(mask=False, past=False))
    # constant conditions (folded with the Where before fuse-gqa): seen
    # (Where(C, 0, lowest)), masked (Where(C', lowest, 0)), and one off
    b, s, p = 1, 3, 4
    i, j = np.arange(s)[:, None], np.arange(p + s)[None, :]
    for tag, cond, swap, ok in (("seen", j <= p + i, False, True),
                                ("masked", j > p + i, True, True),
                                ("seen one off", j <= p + i + 1, False, False)):
        src = os.path.join(work, "const_%s.onnx" % tag.replace(" ", "_"))

        def put(m, cond=cond, swap=swap):
            w = [n for n in m.graph.node if n.op_type == "Where"]
            assert len(w) == 1
            m.graph.initializer.append(onnx.numpy_helper.from_array(cond, "const_cond"))
            w[0].input[0] = "const_cond"
            if swap:
                w[0].input[1], w[0].input[2] = w[0].input[2], w[0].input[1]
        edit(causal, src, put)
        what = "constant %s condition, B=%d S=%d past=%d" % (tag, b, s, p)
        dst = os.path.join(work, "const_%s_q.onnx" % tag.replace(" ", "_"))
        if ok:
            fused(opmig, what, src, dst, b, s, p, "static-dims,fuse-gqa")
            J.pair(what, src, dst, feeds_for(b, s, p, 600, mask=False))
        else:
            r = migrate(opmig, src, dst, b, s, p, "static-dims,fuse-gqa")
            o = ops(dst)
            n = r.stdout.count("left decomposed: the mask is not the causal mask [S, T]")
            check("GroupQueryAttention" not in o and n == LAYERS, "%s: %d GroupQueryAttention, "
                  "%d notes say why (want 0, %d)" % (what, o.count("GroupQueryAttention"), n,
                                                    LAYERS))
    # the seqlens_k and total_sequence_length constants of a static migration
    m = onnx.load(os.path.join(work, "causal_mask_1.onnx"))
    init = {t.name: onnx.numpy_helper.to_array(t) for t in m.graph.initializer}
    n = [n for n in m.graph.node if n.op_type == "GroupQueryAttention"]
    got = [(init.get(x.input[5]).tolist() if x.input[5] in init else None,
            int(init[x.input[6]]) if x.input[6] in init else None) for x in n]
    check(got == [([6, 6], 7)] * LAYERS, "causal mask, B=2 S=1 past=6: seqlens_k, "
          "total_sequence_length constants %s (want [6, 6], 7 per layer)" % got)
    # refused: torch's is_causal after a past (tril from the first key)
    sp = gen(os.path.join(work, "sdpa_past.onnx"), "--mask", "sdpa")
    why = "the mask is not the causal mask [S, T]"
    refused(opmig, "sdpa is_causal after a past", sp, os.path.join(work, "sp_q.onnx"),
            2, 1, 6, why)
    refused(opmig, "sdpa is_causal after a past, symbolic dims", sp,
            os.path.join(work, "sp_sym.onnx"), None, None, None, why)
    # the Trilu of zeros instead of ones: every key masked
    def zeros(m):
        e = [n for n in m.graph.node if n.op_type == "Expand" and n.name.startswith("/model/mask")]
        assert len(e) == 1
        m.graph.initializer.append(onnx.numpy_helper.from_array(np.zeros(1, np.float32), "z"))
        e[0].input[0] = "z"
    bad = os.path.join(work, "sdpa_zeros.onnx")
    edit(sdpa, bad, zeros)
    refused(opmig, "sdpa of a Trilu of zeros, symbolic dims", bad,
            os.path.join(work, "sz_sym.onnx"), None, None, None, why)
    bad = os.path.join(work, "causal_strict.onnx")
    edit(causal, bad, strict)
    refused(opmig, "causal mask made strict", bad, os.path.join(work, "cs_q.onnx"),
            1, 3, 4, why)
    refused(opmig, "causal mask made strict, symbolic dims", bad,
            os.path.join(work, "cs_sym.onnx"), None, None, None, why)
    checker(opmig, "causal mask", causal, os.path.join(work, "causal_only.onnx"), 2, 1, 6)


def node_named(m, name):
    n = [n for n in m.graph.node if n.name == name]
    assert len(n) == 1, name
    return n[0]


def k2(m):
    """Trilu's k 2: query i sees key i + 1 (without a past)."""
    m.graph.initializer.append(onnx.numpy_helper.from_array(np.array(2, np.int64), "k2"))
    node_named(m, "/model/mask/Trilu").input[1] = "k2"


def lower(m):
    """A lower Trilu: nothing masked where j > past + i."""
    t = node_named(m, "/model/mask/Trilu")
    t.ClearField("attribute")
    t.attribute.append(onnx.helper.make_attribute("upper", 0))


def op_to(name, op):
    def edit_op(m):
        node_named(m, name).op_type = op
    return edit_op


def grid_transposed(m):
    """The ScatterND's grid with its query and key parts swapped: the
    padded mask written transposed (runs where S = T: without a past)."""
    c = node_named(m, "/model/mask/index_put/Concat")
    c.input[2], c.input[3] = c.input[3], c.input[2]


def one_key(m):
    """Each layer's slice of the mask cut to its first key (the Add then
    broadcasts that column over all keys)."""
    m.graph.initializer.append(onnx.numpy_helper.from_array(np.array([1], np.int64),
                                                            "one_key"))
    for i in range(LAYERS):
        node_named(m, "/model/layers.%d/self_attn/Slice_3" % i).input[2] = "one_key"


def where_swapped(m):
    """The padding Where's branches swapped: padded keys seen, the rest
    masked."""
    w = node_named(m, "/model/mask/Where")
    w.input[1], w.input[2] = w.input[2], w.input[1]


def mode_cache(opmig, work, J):
    src = gen(os.path.join(work, "cache.onnx"), "--mask", "cache", "--check")
    pad = gen(os.path.join(work, "padding.onnx"))
    for k, (b, s, p, pd) in enumerate([(2, 5, 0, 0), (2, 1, 6, 0), (3, 6, 0, 2)]):
        J.pair("cache mask against padding mask, B=%d S=%d past=%d%s"
               % (b, s, p, " right-padded by %d" % pd if pd else ""), pad, src,
               feeds_for(b, s, p, 700 + k, pd))
    g = settings_run(opmig, work, J, "cache mask", src,
                     [(2, 5, 0, 0), (2, 1, 6, 0), (1, 3, 4, 0), (3, 6, 0, 2)], {})
    check(bool(g) and all(n.input[3] for n in g), "cache mask: GroupQueryAttention reads "
          "the past")
    nop = gen(os.path.join(work, "cache_nopast.onnx"), "--mask", "cache", "--no-past")
    g = settings_run(opmig, work, J, "cache mask no past", nop,
                     [(2, 5, 0, 0), (3, 6, 0, 2), (1, 1, 0, 0)], dict(past=False))
    check(bool(g) and all(n.input[3] == "" for n in g), "cache mask no past: "
          "GroupQueryAttention has no past inputs")
    h16 = gen(os.path.join(work, "cache16.onnx"), "--mask", "cache", "--dtype", "float16")
    settings_run(opmig, work, J, "cache mask float16", h16,
                 [(2, 5, 0, 0), (2, 1, 6, 0), (3, 6, 0, 2)], dict(dt=np.float16), TOL16)
    n16 = gen(os.path.join(work, "cache16_nopast.onnx"), "--mask", "cache", "--dtype",
              "float16", "--no-past")
    settings_run(opmig, work, J, "cache mask float16 no past", n16,
                 [(2, 5, 0, 0), (3, 6, 0, 2)], dict(dt=np.float16, past=False), TOL16,
                 sym=False)
    checker(opmig, "cache mask", src, os.path.join(work, "cache_only.onnx"), 2, 1, 6)
    checker(opmig, "cache mask, symbolic dims", src, os.path.join(work, "cache_only_sym.onnx"),
            None, None, None)
    # the fp16 pass at static dims keeps the mask in float32 (float32's
    # lowest) and casts it; fused against the same passes without fuse-gqa
    for k, (b, s, p) in enumerate([(2, 5, 0), (1, 3, 4)]):
        fp16_fused(opmig, J, "fp16 pass, cache mask, B=%d S=%d past=%d" % (b, s, p), src,
                   *(os.path.join(work, "cache_fp16_%d%s.onnx" % (k, x)) for x in "uf"),
                   b, s, p, ["--target", "qnn", "--precision", "fp16"],
                   [("", feeds_for(b, s, p, 750 + k))])
    # the fp16 pass with symbolic dims, no fuse-gqa (ascend): the mask's
    # ConstantOfShape of float32's lowest fills float16's lowest itself (a
    # Cast made -inf of it, and -inf times the 0 of the comparison NaN
    # logits, which validation refused); written without --force, equal
    # to the float32 original in onnxruntime
    h = os.path.join(work, "cache_fp16_sym.onnx")
    r = subprocess.run([opmig, "migrate", src, "--target", "ascend", "--precision", "fp16",
                        "-o", h], capture_output=True, text=True, timeout=120)
    fill = [n for n in onnx.load(h).graph.node if n.op_type == "ConstantOfShape" and
            any(a.name == "value" and a.t.data_type == onnx.TensorProto.FLOAT16 and
                onnx.numpy_helper.to_array(a.t).tolist() == [-65504.0] for a in n.attribute)] \
        if r.returncode == 0 else []
    check(r.returncode == 0 and bool(fill), "fp16 pass, cache mask, symbolic dims: written "
          "without --force (exit %d), its mask filled with float16's lowest: %d%s"
          % (r.returncode, len(fill), "" if r.returncode == 0 else ": " + r.stdout[-300:]))
    if r.returncode == 0:
        for k, (b, s, p, pd) in enumerate([(2, 5, 0, 0), (2, 1, 6, 0), (3, 6, 0, 2)]):
            J.pair("fp16 pass, cache mask, symbolic dims, against the float32 original, "
                   "B=%d S=%d past=%d%s" % (b, s, p, " right-padded by %d" % pd if pd else ""),
                   src, h, feeds_for(b, s, p, 770 + k, pd), 2e-2)
    # not causal: left decomposed, and the change shows in onnxruntime
    # (at static dims where the mutation matters: Trilu's k 2 without a
    # past, GreaterOrEqual after one)
    why = "the mask is not transformers' cache_position mask"
    for tag, fn, setting in (("Trilu k 2", k2, (2, 5, 0, 0)),
                             ("lower Trilu", lower, (2, 5, 0, 0)),
                             ("comparison reversed", op_to("/model/mask/Greater", "Less"),
                              (2, 5, 0, 0)),
                             ("GreaterOrEqual", op_to("/model/mask/Greater", "GreaterOrEqual"),
                              (1, 3, 4, 0)),
                             ("grid transposed", grid_transposed, (2, 5, 0, 0)),
                             ("padding Where swapped", where_swapped, (2, 5, 0, 0)),
                             ("layer slice one key", one_key, (2, 5, 0, 0))):
        bad = os.path.join(work, "cache_%s.onnx" % tag.replace(" ", "_"))
        edit(src, bad, fn)
        b, s, p, pd = setting
        refused(opmig, "cache mask, %s, B=%d S=%d past=%d" % (tag, b, s, p), bad,
                bad[:-5] + "_q.onnx", b, s, p, why)
        refused(opmig, "cache mask, %s, symbolic dims" % tag, bad, bad[:-5] + "_sym.onnx",
                None, None, None, why)
        J.differ("cache mask, %s, against the original, B=%d S=%d past=%d%s"
                 % (tag, b, s, p, " right-padded by %d" % pd if pd else ""), src, bad,
                 feeds_for(b, s, p, 800, pd))


def mode_half(opmig, work, J):
    f16 = dict(dt=np.float16)
    forms = [("float16", [], [(2, 5, 0, 0), (2, 1, 6, 0), (1, 3, 4, 0), (3, 6, 0, 2)], {}),
             ("float16 no past", ["--no-past"], [(2, 5, 0, 0), (3, 6, 0, 2)],
              dict(past=False)),
             ("float16 causal mask", ["--mask", "causal"], [(2, 5, 0, 0), (2, 1, 6, 0)],
              dict(mask=False))]
    for tag, args, settings, kw in forms:
        src = gen(os.path.join(work, tag.replace(" ", "_") + ".onnx"), "--dtype", "float16",
                  *args)
        kw.update(f16)
        dst = os.path.join(work, tag.replace(" ", "_") + "_sym.onnx")
        g = fused(opmig, tag + ", symbolic dims", src, dst, None, None, None)
        m = onnx.load(dst) if g else None
        vt = {v.name: v.type.tensor_type.elem_type for v in
              list(m.graph.input) + list(m.graph.value_info) + list(m.graph.output)} if m else {}
        check(bool(g), "%s, symbolic dims: fused" % tag)
        for k, (b, s, p, pad) in enumerate(settings):
            J.pair("%s, symbolic dims, B=%d S=%d past=%d%s" % (
                tag, b, s, p, " right-padded by %d" % pad if pad else ""), src, dst,
                feeds_for(b, s, p, 300 + k, pad, **kw), TOL16)
        if tag == "float16":
            check([vt.get(n.input[3]) for n in g] == [onnx.TensorProto.FLOAT16] * LAYERS,
                  "float16, symbolic dims: GroupQueryAttention reads the float16 past")
    # the float32 decoder through the fp16 pass with symbolic dims (MatMul
    # taken in float16: a rules file), with and without fuse-gqa
    src = gen(os.path.join(work, "tiny32.onnx"))
    rules = os.path.join(work, "qnn-dyn16.json")
    with open(rules, "w") as f:
        json.dump(dict(DYN_RULES, id="qnn-dyn16", ops={"MatMul": {"dtypes": [
            "float16", "uint8", "uint16"]}}), f)
    more = ["--target", "qnn-dyn16", "--rules", rules, "--precision", "fp16"]
    fp16_fused(opmig, J, "fp16 pass, symbolic dims", src,
               *(os.path.join(work, "fp16pass_sym_%s.onnx" % x) for x in ("u", "f")),
               None, None, None, more,
               [(", B=%d S=%d past=%d%s" % (b, s, p, " right-padded by %d" % pad if pad else ""),
                 feeds_for(b, s, p, 350 + k, pad))
                for k, (b, s, p, pad) in enumerate([(2, 5, 0, 0), (2, 1, 6, 0), (3, 6, 0, 2)])])
    # the float32 decoder without attention_mask through the fp16 pass at
    # static dims: its causal mask folds to a float32 constant of float32's
    # lowest, which float16 cannot hold, so the pass keeps the mask's Add in
    # float32 inside the Softmax's island; to qnn (MatMuls kept float32)
    # and to qnn with MatMul in float16 (a rules file)
    src = gen(os.path.join(work, "causal32.onnx"), "--mask", "causal")
    rules16 = os.path.join(work, "qnn-mm16.json")
    with open(rules16, "w") as f:
        json.dump(dict(DYN_RULES, id="qnn-mm16", dynamic_shapes=False, ops={"MatMul": {
            "dtypes": ["float16", "uint8", "uint16"]}}), f)
    for form, more in (("qnn", ["--target", "qnn"]),
                       ("qnn-mm16", ["--target", "qnn-mm16", "--rules", rules16])):
        more = more + ["--precision", "fp16"]
        for k, (b, s, p) in enumerate([(2, 5, 0), (2, 1, 6), (1, 3, 4)]):
            what = "fp16 pass without attention_mask, %s, B=%d S=%d past=%d" % (form, b, s, p)
            fp16_fused(opmig, J, what, src,
                       *(os.path.join(work, "c16_%s_%d%s.onnx" % (form, k, x)) for x in "uf"),
                       b, s, p, more, [("", feeds_for(b, s, p, 370 + k, mask=False))])
    # the genai form in float16
    g16 = gen(os.path.join(work, "genai16.onnx"), "--form", "genai", "--dtype", "float16")
    g32 = gen(os.path.join(work, "genai32.onnx"), "--form", "genai")
    m = onnx.load(g16)
    types = {t.name: t.data_type for t in m.graph.initializer}
    nb = [n for n in m.graph.node if n.op_type == "MatMulNBits"]
    check(nb and all(types[n.input[2]] == onnx.TensorProto.FLOAT16 for n in nb) and
          m.graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT16,
          "genai float16: MatMulNBits scales and logits in float16")
    k16 = [n.op_type for n in m.graph.node]
    check({"GroupQueryAttention", "SimplifiedLayerNormalization",
           "SkipSimplifiedLayerNormalization", "MatMulNBits"} <= set(k16),
          "genai float16: the builder's ops")
    for k, (b, s, p) in enumerate([(2, 5, 0), (2, 1, 6), (1, 3, 4)]):
        f = feeds_for(b, s, p, 400 + k, position_ids=False, dt=np.float16)
        f32 = {n: (a.astype(np.float32) if a.dtype == np.float16 else a) for n, a in f.items()}
        J.jobs += [(g16, f), (g32, f32)]
        J.cmp.append(("genai float16 against float32, B=%d S=%d past=%d" % (b, s, p),
                      len(J.jobs) - 2, 1e-2, None))
    # migrated to qnn (its GroupQueryAttention kept), it loads in
    # onnxruntime and computes what the original does
    dst = os.path.join(work, "genai16_qnn.onnx")
    r = migrate(opmig, g16, dst, 1, 1, 4)
    o = ops(dst)
    check(o.count("GroupQueryAttention") == LAYERS and "): equivalent" in r.stdout,
          "genai float16 to qnn: %d GroupQueryAttention (want %d), validation equivalent"
          % (o.count("GroupQueryAttention"), LAYERS))
    if o:
        J.pair("genai float16 to qnn, B=1 S=1 past=4", g16, dst,
               feeds_for(1, 1, 4, 450, position_ids=False, dt=np.float16), TOL16)
    # opmig run of the float16 genai model against onnxruntime
    d = os.path.join(work, "run16")
    os.makedirs(d, exist_ok=True)
    f = feeds_for(1, 3, 4, 500, position_ids=False, dt=np.float16)
    names = [i.name for i in m.graph.input]
    for j, n in enumerate(names):
        np.save(os.path.join(d, "in_%d.npy" % j), f[n])
    r = subprocess.run([opmig, "run", g16] + [os.path.join(d, "in_%d.npy" % j)
                                              for j in range(len(names))] +
                       ["-O", os.path.join(d, "out"), "--out-format", "npy"],
                       capture_output=True, text=True)
    outs = sorted(x for x in os.listdir(os.path.join(d, "out"))) \
        if os.path.isdir(os.path.join(d, "out")) else []
    check(r.returncode == 0 and outs, "genai float16: opmig run (exit %d) %s"
          % (r.returncode, r.stderr.strip()[-200:]))
    return (g16, f, d)


def to_bf16(src, dst):
    """src with every float16 tensor, type and Cast made bfloat16 (values
    rounded to nearest even from float32)."""
    m = onnx.load(src)
    F16, BF16 = onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16
    for t in m.graph.initializer:
        if t.data_type == F16:
            a = onnx.numpy_helper.to_array(t).astype(np.float32).view(np.uint32)
            b = ((a + 0x7FFF + ((a >> 16) & 1)) >> 16).astype(np.uint16)
            t.ClearField("int32_data")
            t.data_type, t.raw_data = BF16, b.tobytes()
    for v in list(m.graph.input) + list(m.graph.output) + list(m.graph.value_info):
        if v.type.tensor_type.elem_type == F16:
            v.type.tensor_type.elem_type = BF16
    for n in m.graph.node:
        for a in n.attribute:
            if n.op_type == "Cast" and a.name == "to" and a.i == F16:
                a.i = BF16
    onnx.save(m, dst)


def mode_bf16(opmig, work):
    why = "bfloat16 data (onnxruntime's CPU GroupQueryAttention"
    for tag, args in (("bfloat16", []), ("bfloat16 no past", ["--no-past"])):
        h16 = gen(os.path.join(work, "h16.onnx"), "--dtype", "float16", *args)
        src = os.path.join(work, tag.replace(" ", "_") + ".onnx")
        to_bf16(h16, src)
        try:
            onnx.checker.check_model(src, full_check=True)
            check(True, "%s: the test model passes onnx.checker full_check" % tag)
        except Exception as e:  # noqa: BLE001
            check(False, "%s: onnx.checker: %s" % (tag, str(e).splitlines()[0]))
        refused(opmig, tag, src, os.path.join(work, "bf_q.onnx"), 2, 5, 0, why)
        refused(opmig, tag + ", symbolic dims", src, os.path.join(work, "bf_sym.onnx"),
                None, None, None, why)


def main():
    mode = sys.argv[1]
    if mode == "bf16":
        os.makedirs(sys.argv[3], exist_ok=True)
        mode_bf16(sys.argv[2], sys.argv[3])
        return ortlib.failures()
    got = ortlib.start(sys.argv[1:])
    if not got:
        return 77
    opmig, work = got
    J = Jobs()
    extra = {"nopast": mode_nopast, "causal": mode_causal, "half": mode_half,
             "cache": mode_cache}[mode](opmig, work, J)
    J.run(work)
    if mode == "half":
        g16, f, d = extra
        res = ortlib.run_many([(g16, f)], os.path.join(work, "ort16"))[0]
        m = onnx.load(g16)
        for k, o in enumerate(m.graph.output):
            p = os.path.join(d, "out", o.name + ".npy")
            if not os.path.exists(p):
                p = os.path.join(d, "out", "output_%d.npy" % k)
            if isinstance(res, str) or not os.path.exists(p):
                check(False, "genai float16: %s: no result (%s)" % (o.name, res if
                                                                   isinstance(res, str)
                                                                   else p))
                continue
            have, want = np.load(p), res[k]
            top = float(np.max(np.abs(want.astype(np.float64))))
            check(diff(want, have) <= TOL16 * top, "genai float16: opmig run's %s against "
                  "onnxruntime: max abs diff %.3g (<= %.3g)" % (o.name, diff(want, have),
                                                               TOL16 * top))
    return ortlib.failures()


if __name__ == "__main__":
    sys.exit(main())
