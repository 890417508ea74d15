"""decoder_common.py: what the decoder test scripts share (fuse_gqa_ort.py,
fuse_llm_ort.py, decoder_gen_ort.py, decoder_lower_ort.py,
quantize_nbits_ort.py, norm_valid_ort.py): the repository's paths,
ortlib's tally, the tiny preset of testdata/gen/make_decoder.py (its
sizes read from the generator, so they cannot drift), generating a
decoder, and the --dim options of a static (batch, sequence, past)
setting.

    from decoder_common import check, diff, LAYERS, KV, HD, VOCAB, gen, dims
    src = gen(os.path.join(work, "tiny.onnx"), "--form", "genai")
"""
import os
import subprocess
import sys

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
    "--form", "genai"; decomposed float32 by default); returns out."""
    subprocess.run(["/usr/bin/python3", GEN, "--preset", "tiny", "-o", out] + list(args),
                   check=True, capture_output=quiet)
    return out


def dims(b, s, p):
    """opmig's --dim options for batch b, sequence s after p past tokens."""
    return ["--dim", "batch_size=%d" % b, "--dim", "sequence_length=%d" % s,
            "--dim", "past_sequence_length=%d" % p, "--dim", "total_sequence_length=%d" % (p + s)]
