"""nbits_big.py: the MatMulNBits codes opmig wrote from a model whose
weights are far larger than the memory it was given, checked column by
column against a numpy implementation of onnxruntime's blockwise
quantizer (MLAS: float32 arithmetic, roundf halves away from zero).

  nbits_big.py check IN OUT BITS BLOCK SYM
      IN is big_weights.py's model (MatMuls of [H, H] float32 weights w0,
      w1, ... in a sparse file), OUT `opmig quantize IN --weight-only`'s:
      every MatMul became com.microsoft MatMulNBits with IN's bits, block
      size and symmetry; for each weight, the first and last columns and
      those holding seeded values (at most 8) have exactly the codes,
      scales and zero points computed here from IN's column

Run with /usr/bin/python3 (onnx 1.12, numpy) by tests/cli/t1188-quantize-nbits-big.sh.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto

from big_weights import places, read_ext


def round_away(t):
    """roundf of float32 values (halves away from zero), exactly."""
    t = t.astype(np.float64)
    return np.sign(t) * np.floor(np.abs(t) + 0.5)


def ref_column(col, bits, bs, sym):
    """Codes (one a byte, K padded to whole blocks), scales, zero points."""
    k = len(col)
    kb = -(-k // bs)
    qmax, mid = 2 ** bits - 1, 2 ** (bits - 1)
    codes = np.zeros(kb * bs, np.int64)
    scales = np.zeros(kb, np.float32)
    zps = np.zeros(kb, np.int64)
    for b in range(kb):
        blk = col[b * bs:min((b + 1) * bs, k)].astype(np.float32)
        mn, mx = np.float32(blk.min()), np.float32(blk.max())
        if sym:
            m = mx if abs(mx) > abs(mn) else mn
            s = np.float32(-m) / np.float32(mid)
            z = mid
        else:
            lo, hi = min(mn, np.float32(0)), max(mx, np.float32(0))
            s = (np.float32(hi) - np.float32(lo)) / np.float32(qmax)
            zf = np.float32(lo) if s == 0 else np.float32(0) - np.float32(lo) / s
            z = 0 if zf < 0 else qmax if zf > qmax else int(round_away(np.array([zf]))[0])
        rs = np.float32(1) / s if s != 0 else np.float32(0)
        t = round_away(blk * rs + np.float32(z))
        c = np.where(np.isnan(t), z, np.clip(t, 0, qmax)).astype(np.int64)
        codes[b * bs:b * bs + len(blk)] = c
        codes[b * bs + len(blk):(b + 1) * bs] = z
        scales[b], zps[b] = s, z
    return codes, scales, zps


def pack(vals, bits, nbytes, fill):
    """Low bits first; a 4-bit row's unused high nibble `fill`."""
    if bits == 8:
        return vals.astype(np.uint8)
    out = np.full(nbytes, fill, np.uint8)
    for i, v in enumerate(vals):
        out[i // 2] = (out[i // 2] & (0xF0 if i % 2 == 0 else 0x0F)) | (int(v) << (4 * (i % 2)))
    return out


def tensor_bytes(model_path, t):
    ext = read_ext(model_path, t)
    if ext is None:
        return t.raw_data
    f, off, length = ext
    with f:
        f.seek(off)
        return f.read(length)


def check(src_path, out_path, bits, bs, sym):
    src = onnx.load(src_path, load_external_data=False)
    out = onnx.load(out_path, load_external_data=False)
    inits = {t.name: t for t in out.graph.initializer}
    nodes = {n.input[1]: n for n in out.graph.node}
    checked = 0
    for k, w in enumerate(src.graph.initializer):
        h = w.dims[0]
        kb = -(-h // bs)
        blob, zrow = bs * bits // 8, (kb * bits + 7) // 8
        qname = "%s_Q%d" % (w.name, bits)
        n = nodes.get(qname)
        assert n is not None and n.op_type == "MatMulNBits" and n.domain == "com.microsoft", \
            "%s: no MatMulNBits reads %s" % (w.name, qname)
        att = {a.name: a.i for a in n.attribute}
        assert att["K"] == h and att["N"] == w.dims[1] and att["bits"] == bits and \
            att["block_size"] == bs, att
        assert (len(n.input) == 3) == sym, n.input
        q = np.frombuffer(tensor_bytes(out_path, inits[qname]), np.uint8).reshape(-1, kb, blob)
        sc = np.frombuffer(tensor_bytes(out_path, inits[n.input[2]]), np.float32).reshape(-1, kb)
        zp = None if sym else \
            np.frombuffer(tensor_bytes(out_path, inits[n.input[3]]), np.uint8).reshape(-1, zrow)
        f, off, length = read_ext(src_path, w)
        f.close()
        full = np.memmap(os.path.join(os.path.dirname(src_path),
                                      {e.key: e.value for e in w.external_data}["location"]),
                         np.float32, "r", off, (h, w.dims[1]))
        pos, _ = places(h * w.dims[1], k)
        cols = sorted(set([0, w.dims[1] - 1] + [int(p) % w.dims[1] for p in pos]))[:8]
        for c in cols:
            codes, scales, zps = ref_column(np.array(full[:, c]), bits, bs, sym)
            want_q = pack(codes, bits, kb * blob, 0).reshape(kb, blob)
            assert np.array_equal(q[c], want_q), "%s column %d: codes differ at blocks %s" % (
                w.name, c, np.nonzero((q[c] != want_q).any(axis=1))[0][:8])
            assert np.array_equal(sc[c], scales), "%s column %d: scales %s, want %s" % (
                w.name, c, sc[c][:4], scales[:4])
            if zp is not None:
                want_z = pack(zps, bits, zrow, 0x88)
                assert np.array_equal(zp[c], want_z), "%s column %d: zero points %s, want %s" % (
                    w.name, c, zp[c][:4], want_z[:4])
            checked += 1
        del full
    assert checked > 0
    print("ok: %d columns of %d weights (%d bits, block %d, %s) equal numpy's" % (
        checked, len(src.graph.initializer), bits, bs, "symmetric" if sym else "asymmetric"))


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6] == "1")
    else:
        sys.exit(__doc__)
