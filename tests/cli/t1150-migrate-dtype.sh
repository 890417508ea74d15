#!/bin/sh
# t1150: `opmig migrate` narrowing dtypes and converting precision:
# int64 token ids and index constants to int32 on generic-npu (which lacks
# int64 and float64), the input's dtype change in the report's name map and
# the --map file, Reshape's shape constant kept int64; a target whose Cast
# takes int64 keeps the input int64 behind a Cast; a constant beyond int32
# refused with a note; float64 to float32; --precision fp16 with Softmax
# kept in float32 and validated with the fp16 tolerances, and --fp16-io.
# Shape arithmetic on a symbolic dim is refused with the dim named, and
# narrowed once --dim makes it static.  Every written model passes
# onnx.checker.check_model(full_check=True).
. "$TOP/tests/cli/lib.sh"
cd "$T" || fail "cannot cd to $T"

$PY - <<'PY' || fail "cannot generate the test models"
import numpy as np, onnx
from onnx import helper as h, TensorProto as TP, numpy_helper as nh
rng = np.random.default_rng(3)
def save(nodes, name, ins, outs, inits):
    g = h.make_graph(nodes, name, ins, outs, initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, name + ".onnx")
E = rng.standard_normal((50, 8)).astype(np.float32)
W = rng.standard_normal((8, 4)).astype(np.float32)
save([h.make_node("Gather", ["emb", "ids"], ["e"], name="gather"),
      h.make_node("Gather", ["e", "sel"], ["e2"], name="gather2", axis=2),
      h.make_node("MatMul", ["e2", "w"], ["m"], name="mm"),
      h.make_node("Reshape", ["m", "shp"], ["r"], name="reshape"),
      h.make_node("Softmax", ["r"], ["y"], name="sm", axis=-1)],
     "tok", [h.make_tensor_value_info("ids", TP.INT64, [2, 3])],
     [h.make_tensor_value_info("y", TP.FLOAT, [2, 12])],
     [nh.from_array(E, "emb"), nh.from_array(W[:, :4], "w"),
      nh.from_array(np.array([2, 12], np.int64), "shp"),
      nh.from_array(np.array([7, 0, 1, 5, 2, 3, 4, 6], np.int64), "sel")])
save([h.make_node("Add", ["ids", "big"], ["y"], name="add")],
     "big", [h.make_tensor_value_info("ids", TP.INT64, [4])],
     [h.make_tensor_value_info("y", TP.INT64, [4])],
     [nh.from_array(np.array([3000000000, 0, 0, 0], np.int64), "big")])
save([h.make_node("Mul", ["x", "k"], ["a"], name="mul"),
      h.make_node("Cast", ["a"], ["a16"], name="cast16", to=TP.FLOAT16),
      h.make_node("Cast", ["a16"], ["b"], name="cast", to=TP.DOUBLE),
      h.make_node("Add", ["b", "k"], ["y"], name="add")],
     "dbl", [h.make_tensor_value_info("x", TP.DOUBLE, [2, 3])],
     [h.make_tensor_value_info("y", TP.DOUBLE, [2, 3])],
     [nh.from_array(rng.standard_normal((2, 3)), "k")])
W1 = (rng.standard_normal((16, 32)) * 0.3).astype(np.float32)
B1 = (rng.standard_normal(32) * 0.1).astype(np.float32)
W2 = (rng.standard_normal((32, 8)) * 0.3).astype(np.float32)
save([h.make_node("MatMul", ["x", "w1"], ["h1"], name="mm1"),
      h.make_node("Add", ["h1", "b1"], ["h2"], name="add1"),
      h.make_node("Relu", ["h2"], ["h3"], name="relu"),
      h.make_node("MatMul", ["h3", "w2"], ["h4"], name="mm2"),
      h.make_node("Softmax", ["h4"], ["y"], name="sm", axis=1)],
     "mlp", [h.make_tensor_value_info("x", TP.FLOAT, [4, 16])],
     [h.make_tensor_value_info("y", TP.FLOAT, [4, 8])],
     [nh.from_array(W1, "w1"), nh.from_array(B1, "b1"), nh.from_array(W2, "w2")])
i64 = lambda v, n: nh.from_array(np.array(v, np.int64), n)
save([h.make_node("Shape", ["x"], ["s"], name="shape"),
      h.make_node("Gather", ["s", "zero"], ["n"], name="g", axis=0),
      h.make_node("Unsqueeze", ["n", "ax"], ["n1"], name="u"),
      h.make_node("Concat", ["n1", "m1"], ["shp"], name="cat", axis=0),
      h.make_node("Reshape", ["x", "shp"], ["r"], name="rs"),
      h.make_node("Range", ["z0", "n", "one"], ["y2"], name="range"),
      h.make_node("Relu", ["r"], ["y"], name="relu")],
     "dyn", [h.make_tensor_value_info("x", TP.FLOAT, ["N", 4, 2])],
     [h.make_tensor_value_info("y", TP.FLOAT, ["N", 8]), h.make_tensor_value_info("y2", TP.INT64, ["N"])],
     [i64(0, "zero"), i64([0], "ax"), i64([-1], "m1"), i64(0, "z0"), i64(1, "one")])
PY
cat >dynamic.json <<'EOF'
{"schema": 1, "id": "npu-dynamic", "name": "generic-npu with dynamic shapes",
 "vendor": "test", "family": "test", "description": "t1150", "extends": "generic-npu",
 "sources": ["t1150"], "dynamic_shapes": true, "ops": {"Shape": {}, "Range": {}}}
EOF
cat >cast64.json <<'EOF'
{
 "schema": 1,
 "id": "npu-cast64",
 "name": "generic-npu whose Cast takes int64",
 "vendor": "test",
 "family": "test",
 "description": "t1150",
 "extends": "generic-npu",
 "sources": ["t1150"],
 "ops": {
  "Cast": {"dtypes": ["float32", "float16", "int32", "int8", "int64"]}
 }
}
EOF
check() {
	$PY -c "import onnx; onnx.checker.check_model(onnx.load('$1'), full_check=True)" ||
		fail "onnx.checker rejects $1"
}

# 1. Token ids on generic-npu: ids and sel become int32, shp stays int64,
# the input's change is in the name map; exact validation.
run 0 "$OPMIG" migrate tok.onnx --target generic-npu -o tok.out.onnx --map tok.map --format json
cp "$T/out" tok.json
$PY -c "
import json; r = json.load(open('tok.json'))
assert r['ok'] is True and r['written'] is True, r
assert any(x['pass'] == 'narrow-int64' for x in r['rewrites']), r['rewrites']
assert {'kind': 'input', 'original': 'ids', 'migrated': 'ids', 'dtype': 'int32'} in r['name_map'], r['name_map']
assert any(\"input 'ids' is now int32\" in n for n in r['notes']), r['notes']
assert any(\"'shp'\" in n and 'stay' in n for n in r['notes']), r['notes']
v = r['validation']
assert v['equivalent'] is True and v['precision'] == 'fp32', v
assert v['outputs'][0]['max_abs_error'] == 0, v
" || fail "int64 narrowing report: $(cat tok.json)"
grep -q '^input ids ids dtype=int32$' tok.map || fail "map file: $(cat tok.map)"
check tok.out.onnx
$PY -c "
import onnx; from onnx import TensorProto as TP
m = onnx.load('tok.out.onnx')
assert m.graph.input[0].type.tensor_type.elem_type == TP.INT32
t = {i.name: i.data_type for i in m.graph.initializer}
assert t['sel'] == TP.INT32 and t['shp'] == TP.INT64 and t['emb'] == TP.FLOAT, t
assert [n.name for n in m.graph.node] == ['gather', 'gather2', 'mm', 'reshape', 'sm']
" || fail "tok.out.onnx has the wrong dtypes"
# the map lets validate convert the int64 data
run 0 "$OPMIG" validate tok.onnx tok.out.onnx --map tok.map

# 2. A target whose Cast takes int64: the input stays int64 behind a Cast
# (which the scan still flags: written only with --force).
run 1 "$OPMIG" migrate tok.onnx --target npu-cast64 --rules cast64.json -o tok64.onnx --force
grep -q "note: input 'ids' stays int64 with a Cast to int32 after it" "$T/out" ||
	fail "no Cast note: $(cat "$T/out")"
grep -q "validation (fp32.*equivalent" "$T/out" || fail "not validated: $(cat "$T/out")"
check tok64.onnx
$PY -c "
import onnx; from onnx import TensorProto as TP
m = onnx.load('tok64.onnx')
assert m.graph.input[0].type.tensor_type.elem_type == TP.INT64
c = [n for n in m.graph.node if n.op_type == 'Cast']
assert len(c) == 1 and c[0].input == ['ids'], c
" || fail "tok64.onnx: the input is not kept int64 behind a Cast"

# 3. A constant beyond int32 is refused, with the reason; still blocked.
run 1 "$OPMIG" migrate big.onnx --target generic-npu -o big.out.onnx --format json
$PY -c "
import json; r = json.load(open('$T/out'))
assert r['ok'] is False and r['written'] is False, r
assert any(\"'big' stays int64\" in n and 'beyond int32' in n for n in r['notes']), r['notes']
assert any(\"'ids' stays int64\" in n for n in r['notes']), r['notes']
" || fail "int64 refusal: $(cat "$T/out")"
[ ! -e big.out.onnx ] || fail "big.out.onnx written although blocked"

# 4. float64 -> float32, interface included.
run 0 "$OPMIG" migrate dbl.onnx --target generic-npu -o dbl.out.onnx --format json
$PY -c "
import json; r = json.load(open('$T/out'))
assert r['ok'] is True and r['validation']['equivalent'] is True, r
assert any(x['pass'] == 'narrow-float64' for x in r['rewrites']), r['rewrites']
m = {(e['kind'], e['original']): e.get('dtype') for e in r['name_map']}
assert m[('input', 'x')] == 'float' and m[('output', 'y')] == 'float', m
" || fail "float64 narrowing: $(cat "$T/out")"
check dbl.out.onnx
$PY -c "
import onnx; from onnx import TensorProto as TP
m = onnx.load('dbl.out.onnx')
assert m.graph.input[0].type.tensor_type.elem_type == TP.FLOAT
assert m.graph.output[0].type.tensor_type.elem_type == TP.FLOAT
assert m.graph.initializer[0].data_type == TP.FLOAT
assert [a.i for n in m.graph.node if n.op_type == 'Cast' for a in n.attribute] == [TP.FLOAT16, TP.FLOAT]
" || fail "dbl.out.onnx still has float64"

# 5. --precision fp16: weights float16, Softmax float32, interface float32,
# validated with the fp16 tolerances.
run 0 "$OPMIG" migrate mlp.onnx --target generic-npu -o mlp16.onnx --precision fp16 --format json
$PY -c "
import json; r = json.load(open('$T/out'))
assert r['ok'] is True, r
v = r['validation']
assert v['precision'] == 'fp16' and v['rtol'] == 0.01 and v['atol'] == 0.001, v
assert v['equivalent'] is True, v
assert any(x['pass'] == 'fp16' for x in r['rewrites']), r['rewrites']
assert any('Softmax node stays float32' in n for n in r['notes']), r['notes']
assert r['name_map'] == [], r['name_map']
" || fail "fp16 report: $(cat "$T/out")"
check mlp16.onnx
$PY -c "
import onnx; from onnx import TensorProto as TP
m = onnx.load('mlp16.onnx')
assert all(i.data_type == TP.FLOAT16 for i in m.graph.initializer), [i.data_type for i in m.graph.initializer]
assert m.graph.input[0].type.tensor_type.elem_type == TP.FLOAT
assert m.graph.output[0].type.tensor_type.elem_type == TP.FLOAT
ops = [n.op_type for n in m.graph.node]
assert ops.count('Cast') == 2 and ops[-1] == 'Softmax', ops
" || fail "mlp16.onnx: wrong precision layout"

# 6. --fp16-io: the interface too, recorded in the name map.
run 0 "$OPMIG" migrate mlp.onnx --target generic-npu -o mlpio.onnx --precision fp16 --fp16-io --map mlpio.map
grep -q "validation (fp16, rtol 0.01, atol 0.001, 1 sample): equivalent" "$T/out" ||
	fail "fp16-io validation: $(cat "$T/out")"
grep -q '^input x x dtype=float16$' mlpio.map && grep -q '^output y y dtype=float16$' mlpio.map ||
	fail "fp16-io map: $(cat mlpio.map)"
check mlpio.onnx
run 0 "$OPMIG" validate mlp.onnx mlpio.onnx --map mlpio.map

# 7. Shape arithmetic on a symbolic dim cannot be bounded (the note says
# which dim); with --dim it is, and the int64 output becomes int32.
run 1 "$OPMIG" migrate dyn.onnx --target npu-dynamic --rules dynamic.json -o dyn1.onnx --force
grep -q "note: tensor 's' stays int64: computed by 'shape' (Shape): dim 0 of 'x' is dynamic (N): make it static with --dim" "$T/out" ||
	fail "no note on the dynamic dim: $(cat "$T/out")"
check dyn1.onnx
run 0 "$OPMIG" migrate dyn.onnx --target generic-npu -o dyn2.onnx --dim N=3 --map dyn2.map
grep -q '^output y2 y2 dtype=int32$' dyn2.map || fail "dyn map: $(cat dyn2.map)"
grep -q "validation (fp32.*equivalent" "$T/out" || fail "dyn not validated: $(cat "$T/out")"
check dyn2.onnx
exit 0
