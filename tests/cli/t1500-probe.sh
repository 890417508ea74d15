#!/bin/sh
# t1500-probe.sh: `opmig probe` against a fake runtime with known gaps
# (tests/probe/fake_runtime.py: refuses opsets below 13, refuses Abs,
# refuses Softmax axis 0, returns wrong float16 Relu, crashes on rank 5,
# hangs on Neg) recovers exactly those rules; --resume runs only what is
# missing; the reports; `rules diff`; `migrate --verify-with` with runtimes
# that agree, refuse, crash and differ; and a small probe of
# onnxruntime-node where it is installed.
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
FAKE="$PY $TOP/tests/probe/fake_runtime.py {model} {inputs} {outdir}"
export OPMIG
# a probe runs a process per case (70 here): minutes under the sanitizers
# on a busy machine; a hang is the probe's own --timeout to catch
RUN_LIMIT=600

# ---- usage --------------------------------------------------------------
run 2 "$OPMIG" probe -o "$T/x.json"
grep -q "needs --runtime" "$T/err" || fail "no --runtime: $(cat "$T/err")"
run 2 "$OPMIG" probe --runtime 'rt {inputs}' -o "$T/x.json"
grep -q "does not name {model}" "$T/err" || fail "no {model}: $(cat "$T/err")"
run 2 "$OPMIG" probe --runtime 'rt {model}' -o "$T/x.json" --ops Relu,NoSuchOp
grep -q "no operator 'NoSuchOp'" "$T/err" || fail "unknown op: $(cat "$T/err")"
run 2 "$OPMIG" probe --runtime 'rt {model}' -o "$T/x.json" --dtypes float32,float99
run 2 "$OPMIG" probe --runtime 'rt {model}' -o "$T/x.json" --opset 14..12
# a command that cannot run: every case rejected, exit 1 with its message
run 1 "$OPMIG" probe --runtime 'no-such-runtime-here {model}' -o "$T/none.json" --ops Relu \
	--opset 14 --dtypes float32 -j 2
grep -q "no case passed.*not found" "$T/err" || fail "broken command: $(cat "$T/err")"

# ---- the fake runtime: refusals, a wrong dtype, a crash -------------------
run 0 "$OPMIG" probe --runtime "$FAKE" -o "$T/fake.json" --ops Abs,Softmax,Relu \
	--opset 12..14 --dtypes float32,float16,int32 -j 2 --timeout 60 \
	--format json --report "$T/fake-report.json"
run 0 "$OPMIG" rules check "$T/fake.json"
$PY - "$T/fake.json" "$T/fake-report.json" <<'EOF' || fail "fake runtime: rules not recovered"
import json, sys
r = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))
def want(got, exp, what):
    if got != exp:
        print('%s: got %r, want %r' % (what, got, exp))
        sys.exit(1)
want(r['id'], 'fake', 'id')
want(r['opset'], [13, 14], 'opset (opset 12 refused)')
want(r['max_rank'], 4, 'max_rank (rank 5 crashes)')
want(r['missing_dtypes'], [], 'missing_dtypes')
want(r['dynamic_shapes'], True, 'dynamic_shapes')
want(sorted(r['ops']), ['Abs', 'Relu', 'Softmax'], 'ops')
ops = r['ops']
want(sorted(ops['Abs']), ['notes', 'supported'], 'Abs keys')
want(ops['Abs']['supported'], False, 'Abs refused')
assert 'fake: Abs is not supported' in ops['Abs']['notes'], ops['Abs']['notes']
want(sorted(ops['Relu']), ['dtypes', 'inputs', 'notes', 'versions'], 'Relu keys')
want(ops['Relu']['versions'], [13, None], 'Relu versions (Relu-6 only at opset 12)')
want(ops['Relu']['dtypes'], ['float32', 'int32'], 'Relu dtypes (float16 wrong)')
want(ops['Relu']['inputs'], {'0': {'rank': [0, 4]}}, 'Relu ranks (rank 5 crashes)')
assert 'accepted but wrong' in ops['Relu']['notes'] and 'signal 11' in ops['Relu']['notes'], ops['Relu']['notes']
want(sorted(ops['Softmax']), ['attrs', 'inputs', 'notes', 'versions'], 'Softmax keys')
want(ops['Softmax']['versions'], [13, None], 'Softmax versions')
want(ops['Softmax']['attrs'], {'axis': {'allowed': [-1, 1, 2]}}, 'Softmax axis (0 refused; the seed is rank 3)')
want(ops['Softmax']['inputs'], {'0': {'rank': [0, 4]}}, 'Softmax ranks')
assert 'fake: Softmax axis 0 is not supported' in ops['Softmax']['notes']
assert any('fake 1.0' in s for s in r['sources']), r['sources']
want(rep['schema'], 'opmig.probe/1', 'report schema')
want(rep['runtime'], 'fake 1.0', 'report runtime')
cases = {c['id']: c for c in rep['cases']}
want(cases['Relu-14.float16']['verdict'], 'wrong', 'Relu-14.float16')
want(cases['Relu-14.rank5']['verdict'], 'crashed', 'Relu-14.rank5')
want(cases['Relu-14.float32']['verdict'], 'equal', 'Relu-14.float32')
want(cases['Abs-13.float32']['verdict'], 'rejected', 'Abs-13.float32')
want(cases['Abs-13.float32']['message'], 'fake: Abs is not supported', 'Abs message')
want(cases['Softmax-13.attr.axis=0']['value'], 0, 'attr value')
want(cases['~opset.12']['verdict'], 'rejected', 'opset 12')
n = rep['counts']
want(n['wrong'], sum(c['verdict'] == 'wrong' for c in rep['cases']), 'counts')
want(n['timeout'], 0, 'no timeouts')
EOF
# the text report says the same
run 0 "$OPMIG" probe --runtime "$FAKE" -o "$T/fake.json" --ops Abs,Softmax,Relu \
	--opset 12..14 --dtypes float32,float16,int32 -j 2 --timeout 60 --resume
grep -q "^runtime: fake 1.0$" "$T/out" || fail "text report: $(cat "$T/out")"
grep -q "Relu-14.rank5: crashed: killed by signal 11" "$T/out" || fail "text report: crash"
grep -q "Abs-13: rejected: fake: Abs is not supported" "$T/out" || fail "text report: Abs"

# ---- resume: only the cases without a result run again ----------------
cp "$T/fake.json" "$T/fake.before.json"
W="$T/fake.probe/cases"
rm "$W/Relu-14.float32/result.json" "$W/Softmax-13.attr.axis=0/result.json" "$W/~opset.13/result.json"
FAKE_LOG="$T/fake.log" run 0 "$OPMIG" probe --runtime "$FAKE" -o "$T/fake.json" --ops Abs,Softmax,Relu \
	--opset 12..14 --dtypes float32,float16,int32 -j 2 --timeout 60 --resume
[ "$(wc -l <"$T/fake.log")" -eq 3 ] || fail "--resume ran $(wc -l <"$T/fake.log") cases, want 3: $(cat "$T/fake.log")"
grep -q "Softmax-13.attr.axis=0$" "$T/fake.log" || fail "--resume did not rerun the case it lacked"
cmp -s "$T/fake.json" "$T/fake.before.json" || fail "--resume derived other rules"
# the HTML matrix
run 0 "$OPMIG" probe --runtime "$FAKE" -o "$T/fake.json" --ops Abs,Softmax,Relu \
	--opset 12..14 --dtypes float32,float16,int32 --resume --format html --report "$T/fake.html"
grep -q "<td>Relu-14</td>" "$T/fake.html" || fail "html: no Relu-14 row"
grep -q 'class="v wrong"' "$T/fake.html" || fail "html: the wrong float16 Relu"
if command -v xmllint >/dev/null 2>&1; then
	xmllint --html --noout "$T/fake.html" 2>"$T/xml.err" || fail "html: $(cat "$T/xml.err")"
fi

# ---- a hang is a verdict --------------------------------------------------
run 0 "$OPMIG" probe --runtime "$FAKE" -o "$T/hang.json" --ops Neg --opset 14 --dtypes float32 \
	-j 2 --timeout 3 --format json --report "$T/hang-report.json"
$PY - "$T/hang.json" "$T/hang-report.json" <<'EOF' || fail "hang not recovered"
import json, sys
r = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))
neg = r['ops']['Neg']
assert neg['supported'] is False, neg
assert 'timeout: no answer within the timeout of 3 s' in neg['notes'], neg['notes']
ran = [c for c in rep['cases'] if c['op'] == 'Neg' and c['verdict'] != 'invalid']
assert ran and all(c['verdict'] in ('timeout', 'crashed') for c in ran), ran
assert any(c['verdict'] == 'timeout' for c in ran), ran
EOF

# ---- rules diff -----------------------------------------------------------
run 1 "$OPMIG" rules diff generic-npu "$T/fake.json"
grep -q "^Relu: dtypes: float32,int8,int32,float16 | float32,int32$" "$T/out" ||
	fail "rules diff: Relu dtypes: $(grep Relu "$T/out")"
grep -q "^Abs: op: not listed | unsupported$" "$T/out" || fail "rules diff: Abs"
grep -q "^opset: 11-17 | 13-14$" "$T/out" || fail "rules diff: opset"
run 0 "$OPMIG" rules diff "$T/fake.json" "$T/fake.before.json"
grep -q "^0 differences" "$T/out" || fail "rules diff of equal files"
run 2 "$OPMIG" rules diff generic-npu "$T/nowhere.json"

# ---- migrate --verify-with -------------------------------------------------
S="$TOP/testdata/sample.onnx"
run 0 "$OPMIG" migrate "$S" --batch 1 -o "$T/v.onnx" --verify-with "$OPMIG run {model} --data {inputs} -O {outdir}"
grep -q "^runtime check (the runtime printed no version, 1 sample, rtol 0.001, atol 1e-05): equal$" "$T/out" ||
	fail "verify-with: $(cat "$T/out")"
[ -f "$T/v.onnx" ] || fail "verify-with: OUT not written"
# a runtime that refuses: exit 1, OUT not written, its message in the report
run 1 "$OPMIG" migrate "$S" --batch 1 -o "$T/r.onnx" --verify-with 'sh -c "echo this npu says no >&2; exit 3" {model}'
[ ! -e "$T/r.onnx" ] || fail "verify-with: OUT written although the runtime refused"
grep -q "FAILED, rejected by the runtime" "$T/out" || fail "verify-with refused: $(cat "$T/out")"
grep -q "^  this npu says no$" "$T/out" || fail "verify-with: the runtime's message"
grep -q "NOT written: the runtime rejects the model: this npu says no" "$T/out" || fail "verify-with: why"
run 1 "$OPMIG" migrate "$S" --batch 1 -o "$T/r.onnx" --force --verify-with 'sh -c "kill -SEGV \$\$" {model}'
[ -f "$T/r.onnx" ] || fail "verify-with --force: OUT not written"
grep -q "FAILED, crashed by the runtime" "$T/out" || fail "verify-with crash: $(cat "$T/out")"
# a runtime that computes something else (zeros)
run 1 "$OPMIG" migrate "$S" --batch 1 -o "$T/w.onnx" --format json --verify-with \
	"$PY -c \"import sys, numpy as np; np.save(sys.argv[1] + '/output_0.npy', np.zeros((1, 10), np.float32))\" {outdir} {model}"
$PY - "$T/out" <<'EOF' || fail "verify-with wrong: runtime_check"
import json, sys
r = json.load(open(sys.argv[1]))
c = r['runtime_check']
assert c['verdict'] == 'wrong' and c['ok'] is False, c
assert c['outputs'][0]['name'] == 'scores' and c['outputs'][0]['ok'] is False, c
assert r['ok'] is False and r['written'] is False, r
EOF
run 2 "$OPMIG" migrate "$S" --batch 1 -o "$T/u.onnx" --verify-with 'rt {inputs}'
# in a batch manifest: one model the runtime takes, one it refuses
cp "$S" "$T/refused.onnx"
cat >"$T/manifest.json" <<EOF
[{"path": "$S", "batch": 1, "verify_with": "$OPMIG run {model} --data {inputs} -O {outdir}"},
 {"path": "$T/refused.onnx", "batch": 1, "verify_with": "sh -c 'echo refused by the npu >&2; exit 2' {model}"}]
EOF
run 1 "$OPMIG" batch "$T/manifest.json" --mode migrate -o "$T/batch" --quiet
grep -q "^refused,generic-npu,.*,not_migrated,.*,the runtime rejects the model: refused by the npu$" \
	"$T/batch/summary.csv" || fail "batch verify_with: $(cat "$T/batch/summary.csv")"
grep -q "^sample,generic-npu,.*,migrated," "$T/batch/summary.csv" || fail "batch verify_with: sample"
grep -q '"verdict":	"equal"' "$T/batch/sample/generic-npu/report.json" || fail "batch: runtime_check"

# ---- onnxruntime-node, where installed: nearly everything equal ---------
if ! why=$($PY -c "import sys; sys.path.insert(0, '$TOP/tests/ort'); import ortlib; print(ortlib.available() or '')"); then
	fail "ortlib: $why"
fi
if [ -n "$why" ]; then
	echo "notice: onnxruntime-node not usable ($why): its probe skipped"
	exit 0
fi
run 0 "$OPMIG" probe --runtime "node $TOP/runtimes/onnxruntime-node.js {model} {inputs} {outdir}" \
	-o "$T/ort.json" --ops Relu,Conv,Add,Transpose --opset 17 --dtypes float32,float64,int64 -j 2 \
	--format json --report "$T/ort-report.json"
$PY - "$T/ort.json" "$T/ort-report.json" <<'EOF' || fail "onnxruntime-node probe"
import json, sys
r = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))
ran = [c for c in rep['cases'] if c['verdict'] != 'invalid']
equal = [c for c in ran if c['verdict'] == 'equal']
assert rep['runtime'].startswith('onnxruntime-node '), rep['runtime']
assert len(equal) >= 0.85 * len(ran), '%d of %d equal' % (len(equal), len(ran))
assert not [c for c in ran if c['verdict'] in ('wrong', 'crashed', 'timeout')], ran
assert all(r['ops'][o].get('supported', True) for o in ('Relu', 'Conv', 'Add', 'Transpose')), r['ops']
# onnxruntime's CPU provider has no float64 Conv nor int64 Relu kernel
assert r['ops']['Conv']['dtypes'] == ['float32'], r['ops']['Conv']
assert 'Could not find an implementation for Conv' in r['ops']['Conv']['notes']
assert 'int64' not in r['ops']['Relu']['dtypes'], r['ops']['Relu']
assert r['opset'] == [17, 17] and r['dynamic_shapes'] is True, r
print('onnxruntime-node: %d of %d cases equal' % (len(equal), len(ran)))
EOF
exit 0
