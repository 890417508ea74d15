#!/bin/sh
# t0650: the strict schema check.  It agrees with python-onnx's
# onnx.checker (full_check) on every model of the backend node suite and
# on broken variants of every 5th (tests/verify/agree.py); loading a model
# with faults warns, one line per fault naming the file and node, ten and
# then their count, and goes on; migrate never writes a model that fails
# it, --force or not (exit 1, the report says why).
. "$TOP/tests/cli/lib.sh"
cd "$T" || fail "cd"
DATA=/usr/share/libonnx-testdata/data/node
if [ -d "$DATA" ]; then
	$PY "$TOP/tests/verify/agree.py" "$OPMIG" "$DATA" "$T/agree" --every 5 >"$T/agree.txt" 2>&1 ||
		{ cat "$T/agree.txt" >&2; fail "the strict check disagrees with onnx.checker"; }
	grep -q '^original   932 models' "$T/agree.txt" || { cat "$T/agree.txt" >&2; fail "not every case judged"; }
	rm -rf "$T/agree"
else
	echo "notice: $DATA absent, agreement with onnx.checker not judged"
fi

# 12 MaxPools at opset 9, each with ceil_mode (MaxPool-10's)
$PY - <<'PY' || fail "cannot build the models"
import onnx
from onnx import helper, TensorProto
nodes, prev = [], 'x'
for i in range(12):
    nodes.append(helper.make_node('MaxPool', [prev], ['p%d' % i], name='pool%d' % i,
                                  kernel_shape=[1, 1], ceil_mode=0))
    prev = 'p%d' % i
g = helper.make_graph(nodes, 'g', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 1, 4, 4])],
                      [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, 1, 4, 4])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 9)])
m.ir_version = 4
onnx.save(m, 'bad.onnx')
try:
    onnx.checker.check_model(m, full_check=True)
    raise SystemExit('onnx.checker accepts bad.onnx')
except onnx.checker.ValidationError:
    pass
del m.graph.node[1:]
m.graph.output[0].name = 'p0'
onnx.save(m, 'one.onnx')
m.graph.node[0].attribute.remove([a for a in m.graph.node[0].attribute if a.name == 'ceil_mode'][0])
onnx.checker.check_model(m, full_check=True)
onnx.save(m, 'good.onnx')
PY
run 0 "$OPMIG" inspect bad.onnx
[ "$(grep -c "^opmig: bad.onnx: warning: node 'pool[0-9]*' (MaxPool): attribute 'ceil_mode' is not in MaxPool-8$" "$T/err")" -eq 10 ] ||
	{ cat "$T/err" >&2; fail "ten warnings naming file and node"; }
grep -q '^opmig: bad.onnx: warning: 2 more faults not shown$' "$T/err" || fail "the count of the rest"
[ "$(wc -l <"$T/err")" -eq 11 ] || fail "one line per fault"
grep -q '^nodes: 12' "$T/out" || fail "inspect goes on"
run 0 "$OPMIG" run one.onnx --seed 1
grep -q "warning: node 'pool0' (MaxPool)" "$T/err" || fail "run warns"
run 1 "$OPMIG" scan one.onnx --target generic-npu
grep -q "warning: node 'pool0' (MaxPool)" "$T/err" || fail "scan warns"

# migrate carries the fault: not written, even with --force (to a target
# that runs the model as it is: nothing else stands in the way)
cat >t9.json <<'JSON'
{"schema": 1, "id": "t9", "sources": ["test"], "opset": [9, 9], "ops": {"MaxPool": {}}}
JSON
run 0 "$OPMIG" migrate good.onnx --rules t9.json --target t9 -o fine.onnx
[ -s fine.onnx ] || fail "the valid model is written"
run 1 "$OPMIG" migrate one.onnx --rules t9.json --target t9 -o out.onnx --force
[ ! -e out.onnx ] || fail "an invalid model was written"
grep -q "^result: NOT written: the migrated model is invalid: node 'pool0' (MaxPool): attribute 'ceil_mode' is not in MaxPool-8, as in the input model$" "$T/out" ||
	{ cat "$T/out" >&2; fail "the report says why"; }
[ "$(grep -c "warning: node 'pool0'" "$T/err")" -eq 1 ] || fail "the input warned once"
run 1 "$OPMIG" migrate one.onnx --rules t9.json --target t9 -o out.onnx --format json
$PY - "$T/out" <<'PY' || fail "JSON report"
import json, sys
r = json.load(open(sys.argv[1]))
assert r['valid'] is False and r['written'] is False and not r['ok'], r
assert 'is invalid' in r['why'], r['why']
PY
[ ! -e out.onnx ] || fail "an invalid model was written"
echo ok
