#!/bin/sh
# t1100-migrate.sh: opmig migrate end to end.  The sample and the ONNX light
# models (when ../shared/models is present) migrate to the shipped targets,
# validate against the original and pass python-onnx's full checker; the
# reports (text and opmig.migrate/1 JSON) say what was done; blockers and
# failed validation keep OUT unwritten unless --force; bad input gets one
# line and exit 3; the man page lists every pass of --list-passes.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
cd "$T" || fail "cd $T"
S=$TOP/testdata/sample.onnx

# check MODEL: python-onnx's full checker accepts MODEL
check() {
	$PY -c 'import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)' \
		"$1" 2>"$T/chk" || fail "onnx.checker rejects $1: $(tail -1 "$T/chk")"
}

# --- the sample for the default target --------------------------------------
run 0 "$OPMIG" migrate "$S" --target generic-npu --batch 1 -o s.onnx --map s.map
grep -q '^after: 12/12 nodes supported, 0 limited, 0 rewritable, 0 blocked$' "$T/out" ||
	fail "sample: unexpected coverage: $(grep '^after' "$T/out")"
for p in inline-functions if-const fold-constants static-dims; do
	grep -q "^  $p" "$T/out" || fail "sample: pass $p not reported"
done
grep -q '^validation (fp32, rtol 0.001, atol 1e-05, 1 sample): equivalent$' "$T/out" ||
	fail "sample: validation line missing"
grep -q "^result: s.onnx written$" "$T/out" || fail "sample: result line missing"
check s.onnx
ls -a | grep -q '\.tmp' && fail "a temporary file was left behind"
# the migrated model has no function, no If, no Shape arithmetic, keeps its
# interface names, and validates again on other seeds, layer by layer
$PY - s.onnx <<'EOF' || fail "sample: migrated model is not as expected"
import onnx, sys
m = onnx.load(sys.argv[1])
ops = [n.op_type for n in m.graph.node]
assert not m.functions, m.functions
assert not {"If", "Shape", "Gather", "Concat", "Normalize", "Identity"} & set(ops), ops
assert [i.name for i in m.graph.input] == ["image"]
assert [o.name for o in m.graph.output] == ["scores"]
assert m.graph.input[0].type.tensor_type.shape.dim[0].dim_value == 1
EOF
run 0 "$OPMIG" validate "$S" s.onnx --dim N=1 --samples 3 --seed 9 --map s.map --layerwise

# --- NHWC interface: the map carries the permutation for validate ------------
run 0 "$OPMIG" migrate "$S" --target generic-npu --batch 1 --layout nhwc -o n.onnx --map n.map
grep -q "^  nhwc-io: 1 change$" "$T/out" || fail "nhwc: pass not reported"
grep -qx "input image image perm=0,2,3,1" n.map || fail "nhwc: map lacks the input's perm: $(cat n.map)"
check n.onnx
$PY -c 'import onnx,sys; m=onnx.load(sys.argv[1]); d=[x.dim_value for x in m.graph.input[0].type.tensor_type.shape.dim]; assert d==[1,32,32,3], d; assert m.graph.node[0].op_type=="Transpose"' \
	n.onnx || fail "nhwc: the input is not NHWC"
run 0 "$OPMIG" validate "$S" n.onnx --dim N=1 --samples 2 --map n.map
run 3 "$OPMIG" validate "$S" n.onnx --dim N=1      # without the map: explained refusal
grep -q "input 'image'" "$T/err" || fail "nhwc without map: the input is not named"

# --- batch: static batches validate at that batch; --fit-memory -------------
run 0 "$OPMIG" migrate "$S" --batch 3 -o b3.onnx
grep -q ": equivalent$" "$T/out" || fail "--batch 3: not validated"
cat >npu.json <<'EOF'
{ "schema": 1, "id": "tiny-npu", "name": "Tiny NPU (test)", "vendor": "test",
  "family": "test", "description": "generic-npu with 4 MiB of device memory",
  "extends": "generic-npu", "sources": ["tests/cli/t1100-migrate.sh"],
  "device_memory_bytes": 4194304 }
EOF
run 0 "$OPMIG" migrate "$S" --rules npu.json --target tiny-npu --fit-memory -o fit.onnx
# weights 6,273 bytes; a sample's activations peak at 82,432 bytes (the
# 3x32x32 input, conv1's 8x32x32 output and its Relu live together):
# floor((4194304 - 6273) / 82432) = 50
grep -q "^note: --fit-memory: batch 50: weights 6273 + 50 x 82432 bytes" "$T/out" ||
	fail "--fit-memory: unexpected batch: $(grep fit-memory "$T/out")"
grep -q ": equivalent$" "$T/out" || fail "--fit-memory: not validated"
$PY -c 'import onnx,sys; m=onnx.load(sys.argv[1]); assert m.graph.input[0].type.tensor_type.shape.dim[0].dim_value == 50' \
	fit.onnx || fail "--fit-memory: the batch is not 50"
run 2 "$OPMIG" migrate "$S" --fit-memory -o x.onnx
grep -q "give no device memory" "$T/err" || fail "--fit-memory without device memory: $(cat "$T/err")"
run 2 "$OPMIG" migrate "$S" --fit-memory --batch 2 -o x.onnx
sed 's/4194304/65536/' npu.json >small.json
run 3 "$OPMIG" migrate "$S" --rules small.json --target tiny-npu --fit-memory -o x.onnx
grep -q "even batch 1 needs" "$T/err" || fail "--fit-memory too small: $(cat "$T/err")"

# --- JSON report -------------------------------------------------------------
run 0 "$OPMIG" migrate "$S" --target generic-npu --batch 1 --dry-run --format json
$PY - "$T/out" <<'EOF' || fail "dry-run JSON is not as documented"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["schema"] == "opmig.migrate/1"
assert r["dry_run"] is True and r["written"] is False and r["ok"] is True
assert r["before"]["nodes"] == 22 and r["before"]["blocked"] >= 7, r["before"]
assert r["after"] == {"nodes": 12, "supported": 12, "limited": 0,
                      "rewritable": 0, "blocked": 0}, r["after"]
passes = [x["pass"] for x in r["rewrites"]]
assert "inline-functions" in passes and "fold-constants" in passes, passes
inl = [x for x in r["rewrites"] if x["pass"] == "inline-functions"][0]
assert inl["node"] == "normalize" and inl["op_type"] == "Normalize" and inl["nodes_emitted"] == 4
assert r["validation"] is None and r["blockers"] == []
EOF
[ -e s2.onnx ] && fail "a dry run wrote something"
run 0 "$OPMIG" migrate "$S" --target generic-npu --batch 1 -o j.onnx --format json --report rep.json
[ -s "$T/out" ] && fail "--report still printed to stdout"
$PY -c 'import json,sys; r=json.load(open(sys.argv[1])); v=r["validation"]; assert v["equivalent"] and v["outputs"][0]["name"]=="scores" and v["outputs"][0]["cosine"]>0.999999, v' \
	rep.json || fail "JSON validation block is not as documented"

# --- blockers keep OUT unwritten, --force writes it -------------------------
# (static-dims left out by --passes: the dynamic batch blocks generic-npu)
run 1 "$OPMIG" migrate "$S" --target generic-npu --passes fp16 -o dyn.onnx
grep -q "^result: NOT written" "$T/out" || fail "dynamic batch: result line missing"
grep -q "graph input with dynamic dims (first .image. float\[N,3,32,32\])" "$T/out" ||
	fail "dynamic batch: the dynamic dim is not reported"
[ -e dyn.onnx ] && fail "dyn.onnx written although blocked"
run 1 "$OPMIG" migrate "$S" --target generic-npu --passes fp16 -o dyn.onnx --force
[ -s dyn.onnx ] || fail "--force did not write dyn.onnx"
check dyn.onnx
# --- a static-shape target makes open dims 1 by itself, with a note ----------
run 0 "$OPMIG" migrate "$S" --target generic-npu -o one.onnx
grep -q "^note: input 'image' dim 0 (N) set to 1: generic-npu takes static shapes only" "$T/out" ||
	fail "static-shape default: no note"
check one.onnx
$PY -c 'import onnx,sys; m=onnx.load(sys.argv[1]); d=m.graph.input[0].type.tensor_type.shape.dim[0]; assert d.dim_value==1, d' \
	one.onnx || fail "static-shape default: dim 0 is not 1"

# --- external data follows the model -----------------------------------------
run 0 "$OPMIG" convert "$S" ext.onnx --external-data ext.bin --size-threshold 64
run 0 "$OPMIG" migrate ext.onnx --target tensorrt --dim N=2 -o ext2.onnx
[ -s ext2.onnx.data ] || fail "external data of the migrated model not written"
check ext2.onnx

# --- bad input ---------------------------------------------------------------
run 3 "$OPMIG" migrate nosuch.onnx --target generic-npu -o x.onnx
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "missing model: not one line: $(cat "$T/err")"
grep -q "nosuch.onnx" "$T/err" || fail "missing model: the file is not named"
run 2 "$OPMIG" migrate "$S" --target no-such-chip -o x.onnx
grep -q "no-such-chip" "$T/err" || fail "unknown target not named"
cp "$S" same.onnx
run 2 "$OPMIG" migrate same.onnx --target generic-npu --batch 1 -o same.onnx
cmp -s "$S" same.onnx || fail "the input was overwritten"
run 2 "$OPMIG" migrate "$S" --target generic-npu          # no -o
run 2 "$OPMIG" migrate "$S" --target generic-npu -o x.onnx --batch 0
run 2 "$OPMIG" migrate "$S" --target generic-npu -o x.onnx --layout nhwc-ish
printf 'not a model' >junk.onnx
run 3 "$OPMIG" migrate junk.onnx --target generic-npu -o x.onnx
grep -q "junk.onnx" "$T/err" || fail "corrupt model: the file is not named"

# --- the pass catalogue is documented ----------------------------------------
run 0 "$OPMIG" migrate --list-passes
awk '/^[a-z]/ { print $1 }' "$T/out" >passes
[ "$(wc -l <passes)" -ge 30 ] || fail "fewer than 30 passes listed"
groff -man -Tascii -P-c -P-b -P-u "$TOP/man/opmig-migrate.1" 2>/dev/null | tr -d '\010' >page
while read -r p; do
	grep -qE "^ {7}$p( |\$)" page || fail "pass $p is not in man/opmig-migrate.1's catalogue"
done <passes

# --- real architectures, validated and checked ---------------------------------
# Every light model but the three with 4096-wide fully connected layers
# (AlexNet, ZFNet, VGG-19: seconds each, minutes under ASan; they migrate the
# same way) for the default target; the two smallest for every target that
# runs float32 (rknpu2 needs int8 or float16).
n=0
for f in "$TOP"/../shared/models/onnx-light/*.onnx; do
	[ -e "$f" ] || continue
	b=$(basename "$f" .onnx)
	for t in generic-npu ascend tensorrt qnn coreml nnapi openvino; do
		case $t:$b in
		*:light_bvlc_alexnet|*:light_zfnet512|*:light_vgg19) continue ;;
		generic-npu:*|*:light_squeezenet|*:light_shufflenet) ;;
		*) continue ;;
		esac
		run 0 "$OPMIG" migrate "$f" --target "$t" -o "$b.$t.onnx"
		grep -q ": equivalent$" "$T/out" || fail "$b on $t: not validated"
		check "$b.$t.onnx"
		n=$((n + 1))
	done
done
[ "$n" -eq 0 ] && echo "notice: $TOP/../shared/models absent, only the sample is migrated"
exit 0
