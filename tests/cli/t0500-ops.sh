#!/bin/sh
# t0500: `opmig ops` prints the registry.  The version lists of the default
# domain agree with python-onnx's schemas for opset <= 17 (independent
# judge), versions newer than 17 are listed, one op's JSON is well formed,
# and an unknown op is a usage error.
. "$TOP/tests/cli/lib.sh"
run 0 "$OPMIG" ops --domain ai.onnx
grep -q '^ai.onnx Conv 1, 11' "$T/out" || fail "Conv versions"
grep -q '^ai.onnx Softmax 1, 11, 13' "$T/out" || fail "Softmax versions"
cp "$T/out" "$T/list"
$PY - "$T/list" <<'PY' || fail "registry disagrees with python-onnx"
import sys, onnx.defs as D
ours = {}
for line in open(sys.argv[1]):
    dom, name, vers = line.rstrip("\n").split(" ", 2)
    ours[name] = [int(v) for v in vers.split(", ")]
theirs = {}
for s in D.get_all_schemas_with_history():
    if s.domain == "" and s.since_version <= 17:
        theirs.setdefault(s.name, set()).add(s.since_version)
bad = 0
for name, vs in sorted(theirs.items()):
    mine = {v for v in ours.get(name, []) if v <= 17}
    if mine != vs:
        print("mismatch", name, sorted(mine), sorted(vs)); bad += 1
newer = sum(1 for vs in ours.values() for v in vs if v > 17)
if newer < 50:
    print("only", newer, "versions above opset 17"); bad += 1
sys.exit(1 if bad else 0)
PY
run 0 "$OPMIG" ops Conv --json
$PY -c "
import json, sys
d = json.load(open('$T/out'))
assert d['schema'] == 'opmig.ops/1', d['schema']
ops = d['operators']
assert [o['since_version'] for o in ops][:2] == [1, 11], ops
a = {x['name']: x for x in ops[1]['attributes']}
assert a['auto_pad']['default'] == 'NOTSET' and a['kernel_shape']['type'] == 'ints'
assert ops[1]['min_inputs'] == 2 and ops[1]['max_inputs'] == 3
" || fail "ops Conv --json"
run 2 "$OPMIG" ops NoSuchOp
grep -q "no operator 'NoSuchOp'" "$T/err" || fail "unknown op message"
run 2 "$OPMIG" ops Conv Relu
exit 0
