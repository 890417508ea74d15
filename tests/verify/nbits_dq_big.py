"""nbits_dq_big.py: the blocked DequantizeLinear-21 codes `opmig migrate
--precision int4 --target tensorrt --opset 21` wrote from a model whose
weights are far larger than the memory it was given, checked column by
column against a numpy implementation of onnxruntime's blockwise quantizer
(nbits_big.py's ref_column, symmetric: TensorRT takes zero point 0 only).

  nbits_dq_big.py check IN OUT BITS BLOCK
      IN is big_weights.py's model (MatMuls of [H, H] float32 weights w0,
      w1, ... in a sparse file), OUT the migrated one: each MatMul reads
      DequantizeLinear(codes, scales) with axis 0, block_size BLOCK and no
      zero point, codes an int4 (BITS 4) or int8 [H, H] initializer,
      scales float [ceil(H / BLOCK), H]; for each weight, the first and
      last columns and those holding seeded values (at most 8) hold the
      reference's codes - 2^(BITS - 1) and its scales

Run with /usr/bin/python3 (onnx 1.12, numpy) by tests/cli/t1198-migrate-int4-big.sh.
"""
import os
import sys

import numpy as np
import onnx

from big_weights import places, read_ext
from nbits_big import ref_column

INT4, INT8, FLOAT = 22, 3, 1


def tensor_array(model_path, t, dtype, count):
    ext = read_ext(model_path, t)
    if ext is None:
        return np.frombuffer(t.raw_data, dtype)[:count]
    f, off, length = ext
    f.close()
    loc = {e.key: e.value for e in t.external_data}["location"]
    return np.memmap(os.path.join(os.path.dirname(model_path), loc), dtype, "r", off, (count,))


def check(src_path, out_path, bits, bs):
    src = onnx.load(src_path, load_external_data=False)
    out = onnx.load(out_path, load_external_data=False)
    inits = {t.name: t for t in out.graph.initializer}
    made = {o: n for n in out.graph.node for o in n.output}
    mid = 2 ** (bits - 1)
    checked = 0
    for k, w in enumerate(src.graph.initializer):
        h, n = w.dims[0], w.dims[1]
        kb = -(-h // bs)
        mm = made.get("y%d" % k)
        assert mm is not None and mm.op_type == "MatMul", "y%d: no MatMul makes it" % k
        dq = made.get(mm.input[1])
        assert dq is not None and dq.op_type == "DequantizeLinear", \
            "%s: MatMul's B is not a DequantizeLinear" % w.name
        att = {a.name: a.i for a in dq.attribute}
        assert att.get("axis") == 0 and att.get("block_size") == bs and len(dq.input) == 2, \
            "%s: DequantizeLinear %s %s" % (w.name, att, list(dq.input))
        ct, st = inits[dq.input[0]], inits[dq.input[1]]
        assert ct.data_type == (INT4 if bits == 4 else INT8) and list(ct.dims) == [h, n], \
            "%s: codes of dtype %d dims %s" % (w.name, ct.data_type, list(ct.dims))
        assert st.data_type == FLOAT and list(st.dims) == [kb, n], list(st.dims)
        raw = tensor_array(out_path, ct, np.uint8, h * n // (8 // bits))
        sc = np.asarray(tensor_array(out_path, st, np.float32, kb * n)).reshape(kb, n)
        f, off, length = read_ext(src_path, w)
        f.close()
        full = np.memmap(os.path.join(os.path.dirname(src_path),
                                      {e.key: e.value for e in w.external_data}["location"]),
                         np.float32, "r", off, (h, n))
        pos, _ = places(h * n, k)
        cols = sorted(set([0, n - 1] + [int(p) % n for p in pos]))[:8]
        for c in cols:
            codes, scales, _ = ref_column(np.array(full[:, c]), bits, bs, True)
            at = np.arange(h, dtype=np.int64) * n + c
            if bits == 4:
                got = (np.asarray(raw[at // 2]).astype(np.int64) >> (4 * (at % 2))) & 15
                got = np.where(got >= 8, got - 16, got)
            else:
                got = np.asarray(raw[at]).astype(np.int8).astype(np.int64)
            want = codes[:h] - mid
            assert np.array_equal(got, want), "%s column %d: codes differ at rows %s" % (
                w.name, c, np.nonzero(got != want)[0][:8])
            assert np.array_equal(sc[:, c], scales), "%s column %d: scales %s, want %s" % (
                w.name, c, sc[:4, c], scales[:4])
            checked += 1
        del full, raw
    assert checked > 0
    print("ok: %d columns of %d weights (DequantizeLinear of int%d, block %d) equal numpy's" % (
        checked, len(src.graph.initializer), bits, bs))


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        sys.exit(__doc__)
