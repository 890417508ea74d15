#!/bin/sh
# t0920: constant nodes computed once per session: `opmig run --repeat`
# runs a ConstantOfShape -> Add weight chain once and reuses its results
# (--stats: nodes, reused, the kept bytes) with the same checked outputs;
# under --max-memory the second run keeps and the third reuses; an IR 3
# model's initializer inputs count as constants, an IR 8 model's do not;
# random draws run every time; `validate --samples` and --layerwise agree
# with a model holding the same weights as an initializer.
. "$TOP/tests/cli/lib.sh"
cd "$T" || fail "cannot cd to $T"

$PY - <<'PY' || fail "cannot generate the test models"
import numpy as np, onnx
from onnx import helper as h, TensorProto as TP, numpy_helper as nh
f = lambda n, s: h.make_tensor_value_info(n, TP.FLOAT, s)
def save(name, nodes, ins, outs, inits=(), ir=8, opset=13):
    g = h.make_graph(nodes, name, ins, outs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = ir
    onnx.checker.check_model(m)
    onnx.save(m, name + ".onnx")
shp = nh.from_array(np.array([3, 2], np.int64), "shp")
B = np.arange(6, dtype=np.float32).reshape(3, 2)
half = nh.from_array(np.array([0.5], np.float32), "")
chain = [h.make_node("ConstantOfShape", ["shp"], ["c"], name="fill", value=half),
         h.make_node("Add", ["c", "B"], ["w"], name="add"),
         h.make_node("MatMul", ["x", "w"], ["y"], name="mm")]
x, y = f("x", ["N", 3]), f("y", ["N", 2])
# y = x @ (0.5 + B)
save("weights", chain, [x], [y], [shp, nh.from_array(B, "B")])
# the same with shp a graph input backed by its initializer: IR 8 lets a
# caller override it, IR 3 (every initializer an input) does not
save("shp_input", chain, [x, h.make_tensor_value_info("shp", TP.INT64, [2])],
     [y], [shp, nh.from_array(B, "B")])
save("ir3", chain, [x, h.make_tensor_value_info("shp", TP.INT64, [2]), f("B", [3, 2])],
     [y], [shp, nh.from_array(B, "B")], ir=3, opset=9)
# the weights as an initializer, for validate
save("folded", [h.make_node("MatMul", ["x", "w"], ["y"], name="mm")], [x], [y],
     [nh.from_array(B + 0.5, "w")])
# random draws feeding a Mul: never kept
save("rand", [h.make_node("RandomNormal", [], ["r"], name="draw", shape=[2, 2]),
              h.make_node("Mul", ["r", "x"], ["y"], name="mul")],
     [f("x", [2, 2])], [f("y", [2, 2])])
xv = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
np.save("x.npy", xv)
import os
os.mkdir("ref")
open("ref/output_0.pb", "wb").write(nh.from_array(xv @ (B + 0.5), "y").SerializeToString())
np.save("x2.npy", np.ones((2, 2), np.float32))
PY

# 1. Three runs: the chain ran once, reused twice, outputs as numpy says.
run 0 "$OPMIG" run weights.onnx x.npy --repeat 3 --stats --check ref
grep -q "^ok " "$T/out" || fail "--check after three runs: $(cat "$T/out")"
grep -q "^ConstantOfShape  *1  *2 " "$T/out" || fail "ConstantOfShape not reused: $(cat "$T/out")"
grep -q "^Add  *1  *2 " "$T/out" || fail "Add not reused: $(cat "$T/out")"
grep -q "^MatMul  *3  *0 " "$T/out" || fail "MatMul must run each time: $(cat "$T/out")"
grep -q "^constant results kept: 48 bytes of 2 nodes$" "$T/out" ||
	fail "kept bytes: $(cat "$T/out")"

# 2. Under --max-memory the first run measures, the second keeps.
run 0 "$OPMIG" run weights.onnx x.npy --repeat 3 --stats --check ref --max-memory 1M
grep -q "^ok " "$T/out" || fail "--check under --max-memory: $(cat "$T/out")"
grep -q "^ConstantOfShape  *2  *1 " "$T/out" || fail "--max-memory reuse: $(cat "$T/out")"

# 3. An initializer backing a graph input: a constant in IR 3 only.
run 0 "$OPMIG" run shp_input.onnx x.npy --repeat 3 --stats --check ref
grep -q "^ConstantOfShape  *3  *0 " "$T/out" || fail "IR 8 input folded: $(cat "$T/out")"
run 0 "$OPMIG" run ir3.onnx x.npy --repeat 3 --stats --check ref
grep -q "^ConstantOfShape  *1  *2 " "$T/out" || fail "IR 3 initializer not folded: $(cat "$T/out")"

# 4. Random draws run every time, and what they feed.
run 0 "$OPMIG" run rand.onnx x2.npy --repeat 3 --stats
grep -q "^RandomNormal  *3  *0 " "$T/out" || fail "RandomNormal kept: $(cat "$T/out")"
grep -q "^Mul  *3  *0 " "$T/out" || fail "Mul of a draw kept: $(cat "$T/out")"

# 5. validate: several samples in one session, and layer by layer.
run 0 "$OPMIG" validate weights.onnx folded.onnx --dim N=2 --samples 3
run 0 "$OPMIG" validate weights.onnx folded.onnx --dim N=2 --samples 2 --layerwise
echo "ok: constant nodes run once per session, reused, and kept only where safe"
