#!/bin/sh
# t0800: `opmig scan`.  Per shipped target, the probes of testdata/scan/
# (made by testdata/gen/make_scan_models.py) get the expected verdict and
# reason code: a supported op, an unsupported op and an unknown domain, a
# dtype, attribute and rank violation and a non-constant input (where a
# target's rules state no constraint of a kind, the probe must stay
# supported there); model-level findings and dtype rules on subgraph nodes;
# golden reports in every format (they change when the shipped rules or
# the rewrite passes change: review the diff, then rewrite them with
# UPDATE_GOLDEN=1);
# the html is well-formed, the dot renders; exit codes with --fail-on; bad
# models, bad rules and bad options; the shared model architectures
# against every target.
. "$TOP/tests/cli/lib.sh"
cd "$TOP" || fail "cd $TOP"
ALL=generic-npu,tensorrt,ascend,rknpu2,qnn,coreml,nnapi,openvino
G=tests/cli/golden

# ---- verdicts per target -------------------------------------------------
for f in supported unsupported dtype attribute rank constant model; do
	timeout 60 "$OPMIG" scan "testdata/scan/$f.onnx" --target "$ALL" --format json \
		-o "$T/$f.json" --fail-on never 2>"$T/err" || fail "scan $f: $(cat "$T/err")"
done
# target fixture node status code ("-": supported, no reason)
cat >"$T/expect" <<'X'
generic-npu supported relu supported -
tensorrt supported relu supported -
ascend supported relu supported -
rknpu2 supported relu supported -
qnn supported relu supported -
coreml supported relu supported -
nnapi supported relu supported -
openvino supported relu supported -
generic-npu unsupported strnorm blocked op_not_supported
tensorrt unsupported strnorm blocked op_not_supported
ascend unsupported strnorm blocked op_not_supported
rknpu2 unsupported strnorm blocked op_not_supported
qnn unsupported strnorm blocked op_not_supported
coreml unsupported strnorm blocked op_not_supported
nnapi unsupported strnorm blocked op_not_supported
openvino unsupported strnorm blocked op_not_supported
generic-npu unsupported custom blocked domain
tensorrt unsupported custom blocked domain
ascend unsupported custom blocked domain
rknpu2 unsupported custom blocked domain
qnn unsupported custom blocked domain
coreml unsupported custom blocked domain
nnapi unsupported custom blocked domain
openvino unsupported custom blocked domain
generic-npu dtype add_f64 blocked dtype
tensorrt dtype add_f64 blocked dtype
ascend dtype matmul_f32 rewritable dtype
rknpu2 dtype relu_f32 rewritable dtype
qnn dtype matmul_f32 blocked dtype
coreml dtype add_f64 supported -
nnapi dtype add_f64 supported -
openvino dtype add_f64 supported -
generic-npu attribute resize_cubic blocked attribute
tensorrt attribute resize_cubic blocked attribute
ascend attribute resize_cubic blocked attribute
rknpu2 attribute resize_cubic blocked attribute
qnn attribute resize_cubic supported -
coreml attribute resize_cubic supported -
nnapi attribute resize_cubic supported -
openvino attribute resize_cubic supported -
generic-npu rank conv1d rewritable rank
tensorrt rank maxpool1d rewritable rank
ascend rank relu9d blocked rank
rknpu2 rank conv1d rewritable rank
coreml rank conv3d blocked rank
nnapi rank conv1d rewritable rank
qnn rank relu9d supported -
openvino rank relu9d supported -
generic-npu constant conv_w_input blocked input_not_constant
tensorrt constant cumsum_axis_input blocked input_not_constant
ascend constant resize_scales_input blocked input_not_constant
coreml constant gemm_b_input rewritable input_not_constant
nnapi constant unsqueeze_axes_input blocked input_not_constant
rknpu2 constant conv_w_input supported -
qnn constant conv_w_input supported -
openvino constant conv_w_input supported -
tensorrt model inner_erf blocked dtype
tensorrt model inner_neg blocked dtype
generic-npu model to_i64 blocked dtype
qnn model inner_erf rewritable op_not_supported
X
$PY - "$T" <<'PY' || fail "verdicts differ from the expected ones"
import json, sys
d = sys.argv[1]
bad = 0
for line in open(d + "/expect"):
    tid, fx, node, status, code = line.split()
    rep = json.load(open("%s/%s.json" % (d, fx)))
    assert rep["schema"] == "opmig.scan/1"
    t = [x for x in rep["targets"] if x["id"] == tid][0]
    k = t["counts"]
    assert k["nodes"] == k["supported"] + k["limited"] + k["rewritable"] + k["blocked"], k
    n = [x for x in t["nodes"] if x["name"] == node]
    got = n[0]["status"] if n else "supported"
    codes = [r["code"] for r in n[0]["reasons"]] if n else []
    if got != status or (code != "-" and code not in codes) or (code == "-" and codes):
        bad += 1
        print("%s %s %s: got %s %s, want %s %s" % (tid, fx, node, got, codes, status, code))
sys.exit(1 if bad else 0)
PY
# a node blocked only because the target lacks float32 names the precision
# that fixes it: float16, which migrate then chooses by itself (ascend's
# MatMul, rknpu2's Relu), or int8 where only quantized types run (qnn)
$PY - "$T/dtype.json" <<'PY' || fail "precision fixes"
import json, sys
rep = json.load(open(sys.argv[1]))
t = {x["id"]: x for x in rep["targets"]}
fix = lambda tid, node: [x for x in t[tid]["nodes"] if x["name"] == node][0]["rewrite"]
assert fix("ascend", "matmul_f32") == "fp16", fix("ascend", "matmul_f32")
assert fix("rknpu2", "relu_f32") == "fp16", fix("rknpu2", "relu_f32")
assert fix("qnn", "matmul_f32") == "--precision int8", fix("qnn", "matmul_f32")
assert fix("generic-npu", "add_f64") is None, fix("generic-npu", "add_f64")
PY
# model-level findings, and the rewrite hook's fix
$PY - "$T/model.json" <<'PY' || fail "model-level findings"
import json, sys
rep = json.load(open(sys.argv[1]))
t = {x["id"]: x for x in rep["targets"]}
f = {x["code"]: x["status"] for x in t["generic-npu"]["findings"]}
assert f == {"opset_out_of_range": "blocked", "dynamic_input": "blocked",
             "int64": "blocked", "float64": "blocked"}, f
assert {x["code"] for x in t["ascend"]["findings"]} == {"dynamic_input"}
assert rep["model"]["subgraph_nodes"] == 2 and rep["model"]["opset"] == 10
n = [x for x in t["qnn"]["nodes"] if x["name"] == "inner_erf"][0]
assert n["rewrite"] == "erf-poly" and n["graph"] == "main/branch.then_branch", n
m = {r["op_type"]: r["status"] for r in rep["matrix"]}
assert m["Erf"] == {"generic-npu": "blocked", "tensorrt": "blocked", "ascend": "supported",
                    "rknpu2": "supported", "qnn": "rewritable", "coreml": "supported",
                    "nnapi": "rewritable", "openvino": "supported"}, m["Erf"]
PY
run 1 "$OPMIG" scan testdata/ext/model.onnx --target tensorrt --fail-on limited
grep -q '^    limited    external_data ' "$T/out" || fail "external data finding"
# nodes of model-local functions are scanned
run 1 "$OPMIG" scan testdata/models/functions.onnx --format json
$PY -c "
import json; r = json.load(open('$T/out'))
assert r['model']['function_nodes'] == 5 and r['model']['main_nodes'] == 3, r['model']
n = {x['name']: x for x in r['targets'][0]['nodes']}['alpha_const']
assert n['function'] == 'ScaledRelu' and n['graph'] == 'fn:com.opmig.fn:ScaledRelu', n
assert n['version'] == 13 and n['status'] == 'blocked', n
" || fail "function nodes"

# ---- golden reports --------------------------------------------------------
golden() {  # NAME ARGS...: stdout of a scan (exit 1) against $G/NAME
	name=$1; shift
	run 1 "$OPMIG" scan "$@"
	if [ -n "${UPDATE_GOLDEN:-}" ]; then
		cp "$T/out" "$G/$name"
	else
		cmp -s "$T/out" "$G/$name" || { diff -u "$G/$name" "$T/out" | head -40; fail "golden $name differs"; }
	fi
}
for fmt in text json md html dot; do
	golden "model.$fmt" testdata/scan/model.onnx --target generic-npu,tensorrt,qnn --format "$fmt"
	golden "rank.$fmt" testdata/scan/rank.onnx --format "$fmt"
done
golden sample.text testdata/sample.onnx --target generic-npu,tensorrt,ascend,rknpu2

# html well-formed, self-contained; dot renders
for h in "$G"/*.html; do
	xmllint --html --noout "$h" 2>"$T/xml" || fail "$h: not well-formed: $(cat "$T/xml")"
	[ -s "$T/xml" ] && fail "$h: xmllint warns: $(cat "$T/xml")"
	grep -Eq '(src|href)="(http|//)|<script|<link' "$h" && fail "$h: external assets"
done
for g in "$G"/*.dot; do
	dot -Tsvg "$g" >"$T/g.svg" 2>"$T/dot.err" || fail "$g: dot fails: $(cat "$T/dot.err")"
	grep -q '<svg' "$T/g.svg" || fail "$g: no svg"
done

# ---- exit codes, -o, options ------------------------------------------------
run 0 "$OPMIG" scan testdata/scan/supported.onnx
grep -q '^generic-npu: 1/1 nodes supported, 0 limited, 0 rewritable, 0 blocked (0 op types)$' "$T/out" ||
	fail "summary line: $(cat "$T/out")"
run 1 "$OPMIG" scan testdata/scan/rank.onnx --target coreml
run 0 "$OPMIG" scan testdata/scan/rank.onnx --target coreml --fail-on never
run 0 "$OPMIG" scan testdata/scan/model.onnx --target openvino
run 1 "$OPMIG" scan testdata/scan/model.onnx --target openvino --fail-on limited
run 1 "$OPMIG" scan testdata/scan/model.onnx --target qnn,openvino --fail-on limited
run 1 "$OPMIG" scan testdata/scan/model.onnx --target generic-npu -o "$T/r.json" --format json
[ -s "$T/out" ] && fail "-o also printed to stdout"
$PY -c "import json; json.load(open('$T/r.json'))" || fail "-o json"
ls "$T" | grep -q '^r.json.' && fail "temporary file left beside -o"
run 2 "$OPMIG" scan
run 2 "$OPMIG" scan a.onnx b.onnx
run 2 "$OPMIG" scan testdata/scan/rank.onnx --format pdf
run 2 "$OPMIG" scan testdata/scan/rank.onnx --fail-on partial
run 2 "$OPMIG" scan testdata/scan/rank.onnx --target ','
run 2 "$OPMIG" scan testdata/scan/rank.onnx --bogus
run 2 "$OPMIG" scan testdata/scan/rank.onnx --target no-such-chip
grep -q "no target 'no-such-chip'" "$T/err" || fail "unknown target message"
# a user's rules file extending an installed target
run 1 "$OPMIG" scan testdata/scan/dtype.onnx --rules testdata/rules/good/extends.json \
	--target test-extends,generic-npu --format json
$PY -c "
import json; r = json.load(open('$T/out'))
t = {x['id']: x for x in r['targets']}
n = {x['name']: x for x in t['test-extends']['nodes']}
assert n['relu_f32']['reasons'][0]['code'] == 'dtype', n
assert 'relu_f32' not in {x['name'] for x in t['generic-npu']['nodes']}
" || fail "--rules target"

# severity limited: a warning, failing only with --fail-on limited
run 0 "$OPMIG" scan testdata/scan/attribute.onnx --rules testdata/scan/limited-rules.json \
	--target scan-limited
grep -q '^scan-limited: 0/1 nodes supported, 1 limited, 0 rewritable, 0 blocked (0 op types)$' "$T/out" ||
	fail "limited summary: $(cat "$T/out")"
grep -q '^  limited    Resize  *attribute  *1  resize_cubic' "$T/out" || fail "limited row: $(cat "$T/out")"
run 1 "$OPMIG" scan testdata/scan/attribute.onnx --rules testdata/scan/limited-rules.json \
	--target scan-limited --fail-on limited

# ---- bad input: one line naming the file, exit 3 --------------------------------
one_line() {  # WANT_SUBSTRING
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "not one line: $(cat "$T/err")"
	grep -q -- "$1" "$T/err" || fail "error does not name '$1': $(cat "$T/err")"
	[ -s "$T/out" ] && fail "printed a report on bad input"
	return 0
}
for b in testdata/bad/*.onnx testdata/bad/ext-*; do
	[ -d "$b" ] && [ ! -f "$b/models/model.onnx" ] && continue
	m=$b
	[ -d "$b" ] && m=$b/models/model.onnx
	run 3 "$OPMIG" scan "$m" --target "$ALL"
	one_line "$m"
done
run 3 "$OPMIG" scan testdata/infer/bad_types.onnx
one_line "testdata/infer/bad_types.onnx: node '"
run 3 "$OPMIG" scan testdata/scan/rank.onnx --rules testdata/rules/bad/unknown-op.json
one_line "testdata/rules/bad/unknown-op.json: ops.Convolution"
run 3 "$OPMIG" scan testdata/scan/rank.onnx --rules testdata/no-such-rules.json
one_line "no-such-rules.json"
run 3 "$OPMIG" scan testdata/no-such-model.onnx
one_line "no-such-model.onnx"
run 4 "$OPMIG" scan testdata/scan/rank.onnx -o "$T/no/such/dir/r.txt"
one_line "$T/no/such/dir/r.txt"

# ---- the shared architectures against every target ----------------------------
n=0
for f in "$TOP"/../shared/models/onnx-light/*.onnx; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	timeout 120 "$OPMIG" scan "$f" --target "$ALL" --format json >"$T/m.json" 2>"$T/err"
	rc=$?
	[ "$rc" -le 1 ] || fail "scan $f exited $rc: $(cat "$T/err")"
	$PY - "$T/m.json" "$f" <<'PY' || fail "scan $f: bad report"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["schema"] == "opmig.scan/1" and len(r["targets"]) == 8
for t in r["targets"]:
    k = t["counts"]
    assert k["nodes"] == r["model"]["nodes"] > 0
    assert k["nodes"] == k["supported"] + k["limited"] + k["rewritable"] + k["blocked"]
    assert len(t["nodes"]) == k["nodes"] - k["supported"]
# opset 9: outside generic-npu's 11-17
g = [t for t in r["targets"] if t["id"] == "generic-npu"][0]
assert "opset_out_of_range" in {f["code"] for f in g["findings"]}, g["findings"]
# the weights are ConstantOfShape fills of constant shapes: folded by migrate
cos = [n for n in g["nodes"] if n["op_type"] == "ConstantOfShape"]
assert cos and all(n["status"] == "rewritable" and n["rewrite"] == "fold-constants"
                   for n in cos), cos[:2]
PY
done
[ "$n" -eq 0 ] && echo "notice: $TOP/../shared/models absent, architectures not scanned"
exit 0
