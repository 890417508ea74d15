#!/bin/sh
# t1185-quantize.sh: `opmig quantize` and `migrate --precision int8`.  Per
# op, form and type, the quantized models pass onnx.checker and compute in
# opmig what onnxruntime-node computes, within one quantization step, bit
# for bit on integer paths (tests/ort/quantize_ort.py, one node process).
# A whole residual CNN, layer by layer: where opmig and onnxruntime first
# part, it is float summation order at a rounding boundary, never a
# semantic difference (tests/ort/quantize_layers_ort.py).
# A model with one deliberately sensitive layer (a Conv reading an
# activation whose range a huge channel sets) fails cosine >= 0.99 fully
# quantized; the fallback ranks that Conv first and returns it, and only
# it, to float.  --no-fallback reports the failure, exits 1 and writes
# nothing unless --force.  Calibration from .npy files and from the backend
# layout, the warning without one, bad sample folders (exit 3), usage
# errors (exit 2), the JSON report.  migrate --precision int8 of a float
# CNN for qnn and rknpu2 leaves no blocker; the scan names --precision int8
# for a float MatMul on qnn.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"

# ---- onnxruntime, per op ---------------------------------------------------
timeout 300 $PY "$TOP/tests/ort/quantize_ort.py" "$OPMIG" "$T/ort" >"$T/ort.out" 2>&1
rc=$?
cat "$T/ort.out"
case $rc in
0) grep -q " 0 failures$" "$T/ort.out" || fail "quantize_ort.py printed no summary" ;;
77) echo "notice: onnxruntime-node absent, its comparison skipped" ;;
*) fail "quantized models disagree with onnxruntime (above)" ;;
esac

# ---- onnxruntime, a whole network layer by layer ----------------------------
timeout 300 $PY "$TOP/tests/ort/quantize_layers_ort.py" "$OPMIG" "$T/layers" >"$T/layers.out" 2>&1
rc=$?
cat "$T/layers.out"
case $rc in
0) grep -q " 0 failures$" "$T/layers.out" || fail "quantize_layers_ort.py printed no summary" ;;
77) ;;
*) fail "a quantized network parts from onnxruntime other than by summation order (above)" ;;
esac

# ---- models ----------------------------------------------------------------
$PY - <<'PY' || fail "cannot generate the test models"
import os
import numpy as np, onnx
from onnx import helper as h, TensorProto as TP, numpy_helper as nh
rng = np.random.default_rng(2)
def W(*s):
    return (rng.standard_normal(s) * np.sqrt(2.0 / np.prod(s[1:]))).astype(np.float32)
def save(nodes, name, x, y, inits):
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("x", TP.FLOAT, x)],
                     [h.make_tensor_value_info("y", TP.FLOAT, y)],
                     [nh.from_array(np.asarray(v, np.float32), k) for k, v in inits.items()])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, name + ".onnx")
# conv1's channel 0 has a bias of 1000: r1's range is [0, ~1000], one
# quantization step ~4 wipes out the other channels, which conv2 reads
# (its weights for channel 0 are 1e-3, so the float model does not care)
b1 = np.zeros(8); b1[0] = 1000
w2 = W(8, 8, 3, 3); w2[:, 0] *= 1e-3
conv = lambda i, w, b, o, n: h.make_node("Conv", [i, w, b], [o], pads=[1, 1, 1, 1], name=n)
save([conv("x", "w1", "b1", "c1", "conv1"), h.make_node("Relu", ["c1"], ["r1"], name="relu1"),
      conv("r1", "w2", "b2", "c2", "conv2"), h.make_node("Relu", ["c2"], ["r2"], name="relu2"),
      conv("r2", "w3", "b3", "y", "conv3")], "sensitive", [1, 3, 8, 8], [1, 4, 8, 8],
     {"w1": W(8, 3, 3, 3), "b1": b1, "w2": w2, "b2": np.zeros(8), "w3": W(4, 8, 3, 3),
      "b3": np.zeros(4)})
# a small CNN: conv, relu, pool, conv + residual, global pool, MatMul head
save([conv("x", "w1", "b1", "c1", "conv1"), h.make_node("Relu", ["c1"], ["r1"], name="relu1"),
      h.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2], name="pool"),
      conv("p1", "w2", "b2", "c2", "conv2"), h.make_node("Relu", ["c2"], ["r2"], name="relu2"),
      h.make_node("Add", ["r2", "p1"], ["a"], name="add"),
      h.make_node("GlobalAveragePool", ["a"], ["g"], name="gap"),
      h.make_node("Flatten", ["g"], ["f"], name="flat"),
      h.make_node("MatMul", ["f", "w3"], ["y"], name="fc")], "cnn", [1, 3, 16, 16], [1, 10],
     {"w1": W(8, 3, 3, 3), "b1": rng.standard_normal(8) * 0.1, "w2": W(8, 8, 3, 3),
      "b2": rng.standard_normal(8) * 0.1, "w3": W(10, 8).T})
# calibration samples: .npy files, and the backend layout
os.makedirs("npy"); os.makedirs("sets/test_data_set_0"); os.makedirs("sets/test_data_set_1")
for k in range(3):
    np.save("npy/s%d.npy" % k, rng.uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32))
for k in range(2):
    t = nh.from_array(rng.uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32), "x")
    open("sets/test_data_set_%d/input_0.pb" % k, "wb").write(t.SerializeToString())
PY

# ---- the fallback ----------------------------------------------------------
run 0 "$OPMIG" quantize sensitive.onnx -o s.q.onnx --calibrate npy --json
cp "$T/out" s.json
grep -q "no --calibrate" "$T/err" && fail "a warning about random samples with --calibrate"
$PY - s.json <<'PY' || fail "the fallback report is wrong (above)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["schema"] == "opmig.quantize/1"
c = r["criterion"]
assert c["text"] == "cosine>=0.99" and c["met"], c
assert c["worst_before_fallback"] < 0.9, c          # fully quantized it fails
assert r["sensitivity"][0] == "conv2", r["sensitivity"]
n = {x["name"]: x for x in r["nodes"]}
# conv2 alone in float meets the criterion; conv1 or conv3 alone does not
assert n["conv2"]["metric_if_float"] >= 0.99 > n["conv1"]["metric_if_float"], n
assert n["conv3"]["metric_if_float"] < 0.99, n
assert [s["node"] for s in r["fallback"]] == ["conv2"], r["fallback"]
st = {n["name"]: n for n in r["nodes"]}
assert st["conv2"]["state"] == "float" and "fallback" in st["conv2"]["why"], st["conv2"]
assert st["conv1"]["state"] == "quantized" and st["conv3"]["state"] == "quantized", st
assert st["relu1"]["state"] == "fused", st["relu1"]
assert r["outputs"][0]["cosine"] >= 0.99 and r["samples"]["calibration"] == 3
# conv2 reads r1 in float: r1 has no QuantizeLinear
assert all(t["name"] != "r1" for t in r["tensors"]), [t["name"] for t in r["tensors"]]
ws = [t for t in r["tensors"] if t["name"] == "w1"][0]
assert ws["kind"] == "weight" and ws["axis"] == 0 and ws["channels"] == 8, ws
PY
$PY -c "import onnx; onnx.checker.check_model(onnx.load('s.q.onnx'), full_check=True)" ||
	fail "s.q.onnx fails onnx.checker"
# ranked by local SNR, conv2 comes first too
run 0 "$OPMIG" quantize sensitive.onnx -o s.l.onnx --calibrate npy --json --sensitivity local
$PY - "$T/out" <<'PY' || fail "the local-SNR fallback report is wrong (above)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["sensitivity"][0] == "conv2" and [s["node"] for s in r["fallback"]] == ["conv2"], r
n = {x["name"]: x for x in r["nodes"]}
assert n["conv2"]["sensitivity_snr_db"] < 10 < n["conv1"]["sensitivity_snr_db"], n
assert n["conv2"]["metric_if_float"] is None, n["conv2"]
PY
# without fallback the criterion fails
run 1 "$OPMIG" quantize sensitive.onnx -o nf.onnx --calibrate npy --no-fallback
[ -e nf.onnx ] && fail "a failing criterion wrote its model"
grep -q "criterion cosine>=0.99 on 3 samples: NOT met" "$T/out" || fail "no failed criterion: $(cat "$T/out")"
grep -q "result: NOT written" "$T/out" || fail "no 'NOT written' line"
run 1 "$OPMIG" quantize sensitive.onnx -o nf.onnx --calibrate npy --no-fallback --force
[ -s nf.onnx ] || fail "--force wrote nothing"
# a loose criterion (max-abs): nothing to return
run 0 "$OPMIG" quantize sensitive.onnx -o l.onnx --calibrate sets --accuracy 'max-abs<=1000'
grep -q "on 2 samples: met" "$T/out" || fail "backend-layout samples not read: $(cat "$T/out")"
grep -q "^fallback" "$T/out" && fail "a met criterion fell back"

# ---- random samples, options -----------------------------------------------
run 0 "$OPMIG" quantize cnn.onnx -o c.q.onnx --samples 3
grep -q "warning: no --calibrate" "$T/err" || fail "no warning about random samples"
grep -q "not representative" "$T/out" || fail "the report does not say the samples are random"
run 0 "$OPMIG" quantize cnn.onnx -o c.e.onnx --method entropy --samples 3 --report rep.txt
[ -s "$T/out" ] && fail "--report wrote to stdout"
grep -q "entropy calibration" rep.txt || fail "--report: $(cat rep.txt)"
run 0 "$OPMIG" quantize cnn.onnx -o c.x.onnx --samples 2 --exclude conv2 --exclude-ops MatMul
grep -q "float: conv2 (Conv): excluded by --exclude" "$T/out" || fail "--exclude: $(cat "$T/out")"
grep -q "float: fc (MatMul): excluded by --exclude-ops" "$T/out" || fail "--exclude-ops"

# ---- bad input and usage ---------------------------------------------------
run 3 "$OPMIG" quantize missing.onnx -o x.onnx
mkdir empty
run 3 "$OPMIG" quantize cnn.onnx -o x.onnx --calibrate empty
grep -q "empty: no samples" "$T/err" || fail "an empty folder: $(cat "$T/err")"
printf 'junk' >empty/a.npy
run 3 "$OPMIG" quantize cnn.onnx -o x.onnx --calibrate empty
grep -q "a.npy" "$T/err" || fail "a bad .npy is not named: $(cat "$T/err")"
run 2 "$OPMIG" quantize cnn.onnx -o x.onnx --method median
run 2 "$OPMIG" quantize cnn.onnx -o x.onnx --accuracy 'cosine<=1'
run 2 "$OPMIG" quantize cnn.onnx -o x.onnx --activations int4
run 2 "$OPMIG" quantize cnn.onnx
run 2 "$OPMIG" quantize cnn.onnx -o x.onnx --dynamic --method entropy
run 2 "$OPMIG" migrate cnn.onnx -o x.onnx --method entropy
[ -e x.onnx ] && fail "a refused command wrote its model"

# ---- targets: scan and migrate ---------------------------------------------
run 1 "$OPMIG" scan cnn.onnx --target qnn
grep -q "precision int8" "$T/out" || fail "the scan does not name --precision int8: $(cat "$T/out")"
run 1 "$OPMIG" migrate cnn.onnx --target qnn -o x.onnx
grep -q "^result: NOT written: .* still blocked on qnn (.* only by their float dtype: give --precision int8" "$T/out" ||
	fail "migrate without --precision does not name int8: $(cat "$T/out")"
[ -e x.onnx ] && fail "a blocked migration wrote its model"
for t in qnn rknpu2; do
	run 0 "$OPMIG" migrate cnn.onnx --target "$t" --precision int8 -o "m.$t.onnx" --format json
	$PY - "$T/out" "$t" <<'PY' || fail "migrate --precision int8 --target $t (above)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ok"] and r["precision"] == "int8", (r["ok"], r["precision"], r.get("why"))
assert r["after"]["blocked"] == 0 and not r["blockers"], r["blockers"]
assert any(n.startswith("int8: ") and "quantized" in n for n in r["notes"]), r["notes"]
act = "int8" if sys.argv[2] == "rknpu2" else "uint8"
assert any(act + " activations" in n for n in r["notes"]), r["notes"]
assert r["validation"]["equivalent"], r["validation"]
PY
	run 0 "$OPMIG" scan "m.$t.onnx" --target "$t"
	# no value quantized twice: no QuantizeLinear reads a DequantizeLinear
	$PY - "m.$t.onnx" <<'PY' || fail "m.$t.onnx quantizes a value twice"
import onnx, sys
m = onnx.load(sys.argv[1])
dq = {o for n in m.graph.node if n.op_type == "DequantizeLinear" for o in n.output}
twice = [n.name for n in m.graph.node if n.op_type == "QuantizeLinear" and n.input[0] in dq]
assert not twice, twice
PY
	$PY -c "import onnx; onnx.checker.check_model(onnx.load('m.$t.onnx'), full_check=True)" ||
		fail "m.$t.onnx fails onnx.checker"
done
# qnn's MatMul takes uint8 only: its weight is uint8
$PY - <<'PY' || fail "qnn's MatMul weight is not uint8"
import onnx
m = onnx.load("m.qnn.onnx")
ty = {t.name: t.data_type for t in m.graph.initializer}
assert ty.get("w3_quantized") == onnx.TensorProto.UINT8, ty
assert ty.get("w1_quantized") == onnx.TensorProto.INT8, ty
PY
exit 0
