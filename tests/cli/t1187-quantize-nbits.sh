#!/bin/sh
# t1187-quantize-nbits.sh: `opmig quantize --weight-only int4|int8`: the tiny
# decomposed decoder in 12 forms (tests/ort/quantize_nbits_ort.py: onnx.checker,
# codes against a numpy reimplementation of onnxruntime's quantizer,
# onnxruntime-node against the interpreter, per-position logits numbers
# against onnxruntime's); MatMuls whose B is not a constant 2-D initializer
# stay, each with its reason in the report; bad options exit 2 and a bad model
# 3, with one line.  Skipped when python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }

# 1. the decoder against onnxruntime and the numpy reference
timeout 300 "$PY" "$TOP/tests/ort/quantize_nbits_ort.py" "$OPMIG" "$T/work" >"$T/nb.out" 2>&1
rc=$?
cat "$T/nb.out"
if [ "$rc" -ne 77 ]; then
	[ "$rc" -eq 0 ] || fail "weight-only quantization of the decoder is wrong (above)"
	grep -q "^0 failures$" "$T/nb.out" || fail "quantize_nbits_ort.py printed no summary"
fi

# 2. what stays: B a graph input, B of rank 3, B an int64 constant
cd "$T" || fail "no $T"
$PY - <<'PYEOF' || fail "cannot build the model"
import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh
r = np.random.default_rng(3)
w = nh.from_array(r.uniform(-1, 1, (40, 24)).astype(np.float32), "w")
w3 = nh.from_array(r.uniform(-1, 1, (2, 24, 8)).astype(np.float32), "w3")
g = h.make_graph([
    h.make_node("MatMul", ["x", "w"], ["a"], name="proj"),
    h.make_node("MatMul", ["a", "b"], ["y"], name="by_input"),
    h.make_node("MatMul", ["a", "w3"], ["z"], name="rank3"),
], "g", [h.make_tensor_value_info("x", TP.FLOAT, [2, 40]),
         h.make_tensor_value_info("b", TP.FLOAT, [24, 8])],
   [h.make_tensor_value_info("y", TP.FLOAT, [2, 8]),
    h.make_tensor_value_info("z", TP.FLOAT, [2, 2, 8])], [w, w3])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
onnx.checker.check_model(m, full_check=True)
onnx.save(m, "mm.onnx")
PYEOF
run 0 "$OPMIG" quantize mm.onnx -o q.onnx --weight-only int8 --block-size 16
grep -q "^types: float activations, int8 weights in blocks of 16 along K (asymmetric, zero points), accuracy_level 0$" out ||
	{ cat out; fail "the report does not say the weight-only form"; }
grep -q "^nodes: 1 quantized, 2 in float$" out || { cat out; fail "not 1 of 3 MatMuls quantized"; }
# validate takes a MatMulNBits candidate for an int8 one (its tolerances)
run 0 "$OPMIG" validate mm.onnx q.onnx
grep -q "^precision int8: rtol 0.05, atol 0.05;" out || { cat out; fail "validate does not guess int8"; }
run 0 "$OPMIG" quantize mm.onnx -o q.onnx --weight-only int8 --block-size 16
grep -q "^float: by_input (MatMul): B is not a constant initializer$" out ||
	{ cat out; fail "no reason for the MatMul whose B is a graph input"; }
grep -q "^float: rank3 (MatMul): B is not 2-D (K x N)$" out ||
	{ cat out; fail "no reason for the MatMul whose B has rank 3"; }
$PY - <<'PYEOF' || fail "the quantized model is wrong (above)"
import onnx
m = onnx.load("q.onnx")
onnx.checker.check_model(m, full_check=True)
ops = [(n.op_type, n.domain, n.name) for n in m.graph.node]
assert ops == [("MatMulNBits", "com.microsoft", "proj_Q8"), ("MatMul", "", "by_input"),
               ("MatMul", "", "rank3")], ops
att = {a.name: a.i for a in m.graph.node[0].attribute}
assert att == {"K": 40, "N": 24, "bits": 8, "block_size": 16}, att
shapes = {t.name: list(t.dims) for t in m.graph.initializer}
# K = 40 padded to 3 blocks of 16; zero points one byte per block
assert shapes == {"w_Q8": [24, 3, 16], "w_scales": [72], "w_zero_points": [72],
                  "w3": [2, 24, 8]}, shapes
assert {o.domain: o.version for o in m.opset_import} == {"": 13, "com.microsoft": 1}
print("ok: 1 MatMulNBits, 2 MatMuls kept, shapes", shapes)
PYEOF
run 0 "$OPMIG" quantize mm.onnx -o q4.onnx --weight-only int4 --symmetric --accuracy-level 4 --json
$PY - "$T/out" <<'PYEOF' || fail "the JSON report is wrong (above)"
import json, sys
import onnx
r = json.load(open(sys.argv[1]))
assert r["format"] == "weight-only" and r["weights"] == "int4" and r["symmetric"], r
assert r["weight_only"] == {"bits": 4, "block_size": 32, "accuracy_level": 4}, r["weight_only"]
why = {n["name"]: n["why"] for n in r["nodes"] if n["state"] == "float"}
assert why == {"by_input": "B is not a constant initializer",
               "rank3": "B is not 2-D (K x N)"}, why
n = onnx.load("q4.onnx").graph.node[0]
assert len(n.input) == 3, n.input          # symmetric: no zero points
assert {a.name: a.i for a in n.attribute}["accuracy_level"] == 4
print("ok: JSON report and accuracy_level")
PYEOF

# 3. the decoder's logits are judged by position: int8 on 8 seeded random
# prompts keeps the whole-output cosine (0.99996) but flips the top-1 token
# at 1 of 64 positions, a near tie of the random decoder: NOT met
run 0 "$PY" "$TOP/testdata/gen/make_decoder.py" --preset tiny --form decomposed -o tiny.onnx
D="--dim batch_size=1 --dim sequence_length=8 --dim past_sequence_length=0 --dim total_sequence_length=8"
# shellcheck disable=SC2086
run 1 "$OPMIG" quantize tiny.onnx -o t8.onnx --weight-only int8 --block-size 16 --no-fallback $D
grep -q "^criterion cosine>=0.99 on 8 samples: NOT met$" out || { cat out; fail "int8 on 8 prompts is met"; }
grep -q "^  logits  *cosine 0\.9999[0-9]*, .* (fails)$" out || { cat out; fail "no whole-output cosine above 0.9999"; }
grep -q "^    by position: min cosine 0\.9999[0-9]* at position [0-9]* (>= 0.99 required), top-1 63/64, " out ||
	{ cat out; fail "the logits are not judged by position"; }
[ -e t8.onnx ] && fail "a model failing the criterion was written"

# 4. bad options (exit 2: a line, then the usage) and a bad model (exit 3,
# one line)
for args in "--weight-only int3" "--weight-only int4 --block-size 24" \
	"--weight-only int4 --block-size 8" "--weight-only int8 --accuracy-level 5" \
	"--weight-only int4 --calibrate ." "--weight-only int4 --dynamic" \
	"--weight-only int4 --method entropy" "--weight-only int4 --weights int8" \
	"--block-size 32" "--accuracy-level 1"; do
	# shellcheck disable=SC2086
	run 2 "$OPMIG" quantize mm.onnx -o x.onnx $args
	# one line saying what is wrong, then the usage line
	head -1 err | grep -q "^opmig: " && [ "$(wc -l <err)" -eq 2 ] &&
		sed -n 2p err | grep -q "^usage: opmig quantize " || { cat err; fail "'$args': not one line"; }
	[ -e x.onnx ] && fail "'$args' wrote a model"
done
grep -q "^opmig: --accuracy-level needs --weight-only$" err || { cat err; fail "--accuracy-level alone is not refused"; }
run 3 "$OPMIG" quantize "$TOP/testdata/bad/cycle.onnx" -o x.onnx --weight-only int4
[ "$(wc -l <err)" -eq 1 ] || { cat err; fail "a bad model: not one line"; }
echo "ok: weight-only quantization"
