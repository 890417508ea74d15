#!/bin/sh
# t1215-wo-packed-codes.sh: int4/uint4 codes read by the weight-only unit
# (MatMul of DequantizeLinear of constant codes, runtime/qdq_wo.c) stay
# packed, two a byte as the file has them (RT_VALUE_PACKED): the unit
# unpacks a row of B at a time into its scratch, and the interpreter never
# holds the codes a byte each.  Checked:
#   1. a [2055, 4097] int4 B with zero points in blocks of 32 along K (odd
#      K, odd N: rows start on either nibble): `run --stats` says a peak
#      tensor memory below half the codes' count (unpacked a byte each they
#      alone were the codes' count; before this change the peak was 8.7 MB
#      for 8.4 M codes), the result equals `run --exact` (the graph as
#      written, codes unpacked for the DequantizeLinear) bit for bit, and
#      numpy's float64 product within 1e-5 of the largest output;
#   2. uint4 codes read by the unit and returned as a graph output (the
#      output unpacked at the end of the run), and int4 codes read by a
#      Cast before the unit (unpacked for the Cast; the unit then reads
#      them unpacked): outputs equal numpy's, codes exactly, products
#      within 1e-5, and `run` equals `run --exact` bit for bit.
# Skipped when python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "no $T"

$PY - "$TOP" <<'PY' || fail "cannot make the models"
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper
sys.path.insert(0, sys.argv[1] + "/tests/ort")
import dq_matmul_ort as d

rng = np.random.default_rng(1215)
# 1. the big B
K, N = 2055, 4097
a = d.make_case("big.onnx", rng, K, N, (2, K), d.INT4, True, 32, 0, False)
np.save("big_a.npy", a)
m = onnx.load("big.onnx")
init = {t.name: t for t in m.graph.initializer}
def unpack(t, n, sgn):
    b = np.frombuffer(t.raw_data, np.uint8)
    v = np.empty(2 * b.size, np.int64)
    v[0::2], v[1::2] = b & 15, b >> 4
    v = v[:n]
    return np.where(v >= 8, v - 16, v) if sgn else v
nb = (K + 31) // 32
codes = unpack(init["codes"], K * N, True).reshape(K, N)
zp = unpack(init["zp"], nb * N, True).reshape(nb, N)
sc = np.array(init["scale"].float_data, np.float64).reshape(nb, N)
w = (codes - np.repeat(zp, 32, axis=0)[:K]) * np.repeat(sc, 32, axis=0)[:K]
np.save("big_want.npy", a.astype(np.float64) @ w)

# 2. codes also a graph output (uint4) / read by a Cast first (int4)
def small(path, dt, cast_first):
    K, N = 45, 19
    lo, hi = (0, 15) if dt == d.UINT4 else (-8, 7)
    c = rng.integers(lo, hi + 1, size=(K, N))
    s = rng.uniform(0.5, 2, size=(2, N)).astype(np.float32)
    inits = [d.code_tensor("codes", dt, c),
             helper.make_tensor("scale", TensorProto.FLOAT, [2, N], s.ravel().tolist())]
    nodes = [helper.make_node("DequantizeLinear", ["codes", "scale"], ["w"], axis=0,
                              block_size=32, name="dq"),
             helper.make_node("MatMul", ["a", "w"], ["y"], name="mm")]
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, N])]
    if cast_first:
        nodes.insert(0, helper.make_node("Cast", ["codes"], ["cf"], to=TensorProto.FLOAT,
                                         name="cast"))
        outs.append(helper.make_tensor_value_info("cf", TensorProto.FLOAT, [K, N]))
    else:
        outs.append(helper.make_tensor_value_info("codes", dt, [K, N]))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(
        "a", TensorProto.FLOAT, [2, K])], outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    onnx.save(m, path + ".onnx")
    a = rng.standard_normal((2, K)).astype(np.float32)
    np.save(path + "_a.npy", a)
    w = c * np.repeat(s.astype(np.float64), 32, axis=0)[:K]
    np.save(path + "_want.npy", a.astype(np.float64) @ w)
    np.save(path + "_codes.npy", c)
small("u4out", d.UINT4, False)
small("i4cast", d.INT4, True)
PY

# 1. the big B: packed, as written, as numpy
run 0 "$OPMIG" run big.onnx big_a.npy --stats -O f --out-format npy
peak=$(sed -n 's/^peak tensor memory: \([0-9]*\) bytes$/\1/p' "$T/out")
[ -n "$peak" ] || { cat "$T/out"; fail "no peak tensor memory in --stats"; }
[ "$peak" -lt $((2055 * 4097 / 2)) ] ||
	fail "peak tensor memory $peak bytes: the 8.4 M int4 codes were unpacked (want < half their count)"
grep -q "^DequantizeLinear  *0 " "$T/out" || { cat "$T/out"; fail "the unit did not run"; }
run 0 "$OPMIG" run big.onnx big_a.npy --exact -O e --out-format npy
cmp f/output_0.npy e/output_0.npy || fail "big: the unit differs from the graph as written"

# 2. codes unpacked for other readers
for m in u4out i4cast; do
	run 0 "$OPMIG" run $m.onnx ${m}_a.npy -O $m.f
	run 0 "$OPMIG" run $m.onnx ${m}_a.npy --exact -O $m.e
	for o in 0 1; do
		cmp $m.f/output_$o.pb $m.e/output_$o.pb ||
			fail "$m: output $o differs from the graph as written"
	done
done

$PY - <<'PY' || fail "the results differ from numpy's (above)"
import numpy as np
from onnx import TensorProto
def pb(path):
    t = TensorProto()
    t.ParseFromString(open(path, "rb").read())
    n = int(np.prod(t.dims))
    if t.data_type in (21, 22):        # uint4, int4: two a byte
        b = np.frombuffer(t.raw_data, np.uint8)
        v = np.empty(2 * b.size, np.int64)
        v[0::2], v[1::2] = b & 15, b >> 4
        v = v[:n]
        return (np.where(v >= 8, v - 16, v) if t.data_type == 22 else v).reshape(t.dims)
    return np.frombuffer(t.raw_data, np.float32).reshape(t.dims)
def close(got, want, what):
    err = np.max(np.abs(got.astype(np.float64) - want)) / max(np.max(np.abs(want)), 1e-30)
    assert got.shape == want.shape and err <= 1e-5, (what, got.shape, want.shape, err)
close(np.load("f/output_0.npy"), np.load("big_want.npy"), "big")
for m in ("u4out", "i4cast"):
    close(pb(m + ".f/output_0.pb"), np.load(m + "_want.npy"), m + " product")
    c = pb(m + ".f/output_1.pb")
    assert np.array_equal(c, np.load(m + "_codes.npy")), (m, "codes output")
print("ok")
PY
echo "ok: int4/uint4 codes stay packed for the weight-only unit, unpacked for other readers"
