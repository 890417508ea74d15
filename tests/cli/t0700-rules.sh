#!/bin/sh
# t0700: the rules database from the command line: `opmig targets` lists
# the shipped targets (text and opmig.targets/1 JSON), `opmig rules check`
# accepts the good files and rejects each bad one with exit 3 and one line
# naming the file and JSON path, `opmig rules show` prints a resolved target
# whose JSON form checks again, and the complete example of opmig-rules(5)
# is a valid file.
. "$TOP/tests/cli/lib.sh"
cd "$TOP" || fail "cd $TOP"

run 0 "$OPMIG" targets
grep -q '^generic-npu  *Generic NPU' "$T/out" || fail "targets: no generic-npu line"
grep -q '^tensorrt  *TensorRT' "$T/out" || fail "targets: no tensorrt line"
grep -q 'source: ' "$T/out" || fail "targets: no sources"
for f in oprules/*.json; do
	id=$(basename "$f" .json)
	grep -q "^$id " "$T/out" || fail "targets: shipped $f not listed"
done
run 0 "$OPMIG" targets --json
$PY - "$T/out" <<'PY' || fail "targets --json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "opmig.targets/1", d["schema"]
t = {x["id"]: x for x in d["targets"]}
assert [x["id"] for x in d["targets"]] == sorted(t), "not sorted"
g, r = t["generic-npu"], t["tensorrt"]
assert g["ops_supported"] == 40 and g["opset"] == [11, 17], g
assert r["opset"] == [9, 24] and r["ops_supported"] > 100 and r["ops_unsupported"] > 0, r
assert all(x["sources"] for x in t.values())
PY
run 2 "$OPMIG" targets extra
run 2 "$OPMIG" targets --bogus

# Good files, shipped files and the example.
for f in testdata/rules/good/*.json oprules/*.json oprules/examples/*.json; do
	run 0 "$OPMIG" rules check "$f"
	grep -q "^$f: ok: target " "$T/out" || fail "rules check $f: $(cat "$T/out")"
done

# Each bad file: exit 3, exactly one line, naming file and path.
tab=$(printf '\t')
while IFS="$tab" read -r f msg; do
	run 3 "$OPMIG" rules check "testdata/rules/bad/$f"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "rules check $f: not one line: $(cat "$T/err")"
	want="opmig: testdata/rules/bad/$f: $msg"
	[ "$(cat "$T/err")" = "$want" ] || fail "rules check $f
  got:  $(cat "$T/err")
  want: $want"
	[ -s "$T/out" ] && fail "rules check $f printed to stdout"
done <testdata/rules/bad/EXPECTED
run 3 "$OPMIG" rules check testdata/rules/no-such-file.json
grep -q "no-such-file.json: cannot open" "$T/err" || fail "missing file message"

# show: resolved view, text and JSON; JSON checks again.
run 0 "$OPMIG" rules show generic-npu
grep -q '^target generic-npu: ' "$T/out" || fail "show header"
grep -q '^  dynamic shapes: not allowed' "$T/out" || fail "show dynamic shapes"
grep -q '^  Resize: .*mode in nearest|linear' "$T/out" || fail "show Resize constraint"
run 0 "$OPMIG" rules show tensorrt
grep -q '^  Loop: ' "$T/out" || fail "show tensorrt Loop"
grep -q '^  SequenceAt: not supported' "$T/out" || fail "show tensorrt unsupported op"
run 0 "$OPMIG" rules show tensorrt --json
cp "$T/out" "$T/trt.json"
run 0 "$OPMIG" rules check "$T/trt.json"
$PY -c "
import json; d = json.load(open('$T/trt.json'))
assert d['schema'] == 1 and d['id'] == 'tensorrt' and 'extends' not in d
assert d['ops']['Resize']['attrs']['mode']['allowed'] == ['nearest', 'linear']
" || fail "show --json content"
run 2 "$OPMIG" rules show no-such-target
grep -q "no target 'no-such-target'" "$T/err" || fail "unknown target message"
run 2 "$OPMIG" rules
run 2 "$OPMIG" rules frob x
run 2 "$OPMIG" rules check
run 2 "$OPMIG" rules check a b
run 2 "$OPMIG" rules check testdata/rules/good/full.json --json

# The complete example in opmig-rules(5) is a valid rules file.
awk '/^A complete file/ { on = 1 } on && /^\.EX/ { grab = 1; next }
     grab && /^\.EE/ { exit } grab { print }' man/opmig-rules.5 |
	sed 's/\\-/-/g' >"$T/example.json"
[ -s "$T/example.json" ] || fail "no example in opmig-rules.5"
run 0 "$OPMIG" rules check "$T/example.json"
exit 0
