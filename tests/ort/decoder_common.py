"""decoder_common.py: what the decoder test scripts share (fuse_gqa_ort.py,
fuse_llm_ort.py, decoder_gen_ort.py, decoder_lower_ort.py,
quantize_nbits_ort.py, norm_valid_ort.py, fuse_gqa_forms_ort.py): the
repository's paths, ortlib's tally, the tiny preset of
testdata/gen/make_decoder.py (its sizes read from the generator, so they
cannot drift), generating a decoder, the --dim options of a static
(batch, sequence, past) setting, seeded inputs for any of the
generator's forms, a migration, and a model's op types.

    from decoder_common import check, diff, LAYERS, KV, HD, VOCAB, gen, dims
    src = gen(os.path.join(work, "tiny.onnx"), "--form", "genai")
"""
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
GEN = os.path.join(TOP, "testdata", "gen", "make_decoder.py")
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.dirname(GEN))
import ortlib  # noqa: E402
import make_decoder  # noqa: E402

check = ortlib.check
diff = ortlib.max_diff

_TINY = make_decoder.PRESETS["tiny"]
LAYERS, HEADS, KV = _TINY["layers"], _TINY["heads"], _TINY["kv_heads"]
H, VOCAB = _TINY["hidden"], _TINY["vocab"]
HD = H // HEADS


def gen(out, *args, quiet=True):
    """The tiny decoder written to out by the generator (with args such as
    "--form", "genai"; decomposed float32 by default; "--preset", "qwen"
    gives tiny's sizes with Qwen2's q/k/v biases); returns out."""
    subprocess.run(["/usr/bin/python3", GEN, "--preset", "tiny", "-o", out] + list(args),
                   check=True, capture_output=quiet)
    return out


def dims(b, s, p):
    """opmig's --dim options for batch b, sequence s after p past tokens."""
    return ["--dim", "batch_size=%d" % b, "--dim", "sequence_length=%d" % s,
            "--dim", "past_sequence_length=%d" % p, "--dim", "total_sequence_length=%d" % (p + s)]


# qnn as if it took symbolic dims (one migrated model for every setting)
DYN_RULES = {"schema": 1, "id": "qnn-dyn", "name": "qnn with dynamic shapes", "vendor": "test",
             "family": "test", "description": "decoder_common.py", "extends": "qnn",
             "sources": ["decoder_common.py"], "dynamic_shapes": True, "ops": {}}


def feeds_for(b, s, p, seed, pad=0, kv=KV, dt=np.float32, past=True, mask=True,
              position_ids=True):
    """Seeded inputs of the generator's decoders: input_ids, attention_mask
    (all ones, the last row's last pad positions 0; mask False: none),
    position_ids past + 0..s-1, past key/value uniform in [-1, 1] of dtype
    dt (past False: none, p must be 0)."""
    rng = np.random.default_rng(seed)
    f = {"input_ids": rng.integers(0, VOCAB, (b, s)).astype(np.int64)}
    if mask:
        f["attention_mask"] = np.ones((b, p + s), np.int64)
        if pad:
            f["attention_mask"][-1, p + s - pad:] = 0
    if position_ids:
        f["position_ids"] = np.tile(np.arange(p, p + s, dtype=np.int64), (b, 1))
    for i in range(LAYERS):
        for kind in ("key", "value"):
            a = rng.uniform(-1, 1, (b, kv, p, HD)).astype(np.float32).astype(dt)
            if past:
                f["past_key_values.%d.%s" % (i, kind)] = a
    return f


def migrate(opmig, src, dst, b, s, p, passes=None, more=()):
    """opmig migrate src to dst for qnn at the static setting (b, s, p),
    or with symbolic dims for qnn-dyn (b None); passes: --passes; more:
    options instead of --target qnn.  The CompletedProcess."""
    if b is None:
        rules = os.path.join(os.path.dirname(os.path.abspath(dst)), "qnn-dyn.json")
        with open(rules, "w") as f:
            json.dump(DYN_RULES, f)
        more = list(more) or ["--target", "qnn-dyn", "--rules", rules]
        d = []
    else:
        more = list(more) or ["--target", "qnn"]
        d = dims(b, s, p)
    more += ["--passes", passes] if passes else []
    return subprocess.run([opmig, "migrate", src, "--force", "-o", dst] + d + more,
                          capture_output=True, text=True)


def ops(path):
    """The op types of the model at path ([] when there is none)."""
    import onnx
    return [n.op_type for n in onnx.load(path).graph.node] if os.path.exists(path) else []
