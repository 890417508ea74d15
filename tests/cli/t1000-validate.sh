#!/bin/sh
# t1000: `opmig validate`: a model against itself (every error exactly 0,
# cosine 1), against a copy with one perturbed weight (the first divergent
# value is that weight's consumer, with a local error), against a float16
# conversion (passes with the fp16 defaults, fails with fp32 tolerances),
# renamed and reordered outputs (paired, mapped or refused clearly), and
# reproducible multi-sample runs, each model's time per run with --time only.
. "$TOP/tests/cli/lib.sh"
cd "$T" || fail "cannot cd to $T"

$PY - <<'PY' || fail "cannot generate the test models"
import numpy as np, onnx
from onnx import helper as h, TensorProto as TP, numpy_helper as nh
rng = np.random.default_rng(1)
W1 = rng.standard_normal((8, 16)).astype(np.float32)
B1 = rng.standard_normal(16).astype(np.float32)
W2 = rng.standard_normal((16, 4)).astype(np.float32)
B2 = rng.standard_normal(4).astype(np.float32)
def mlp(name, w2=W2, dt=TP.FLOAT, npdt=np.float32, outs=("y",), extra=False):
    nodes = [h.make_node("MatMul", ["x", "w1"], ["h1"], name="mm1"),
             h.make_node("Add", ["h1", "b1"], ["h2"], name="add1"),
             h.make_node("Relu", ["h2"], ["h3"], name="relu"),
             h.make_node("MatMul", ["h3", "w2"], ["h4"], name="mm2"),
             h.make_node("Add", ["h4", "b2"], [outs[0]], name="add2")]
    out_vi = [h.make_tensor_value_info(outs[0], dt, ["N", 4])]
    if extra:
        nodes.append(h.make_node("Relu", [outs[0]], [outs[1]], name="relu2"))
        out_vi.append(h.make_tensor_value_info(outs[1], dt, ["N", 4]))
    inits = [nh.from_array(a.astype(npdt), n) for a, n in
             ((W1, "w1"), (B1, "b1"), (w2, "w2"), (B2, "b2"))]
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("x", dt, ["N", 8])],
                     out_vi, initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, name + ".onnx")
mlp("ref")
w2 = W2.copy(); w2[3, 1] += 0.5
mlp("perturbed", w2=w2)
mlp("half", dt=TP.FLOAT16, npdt=np.float16)
mlp("renamed", outs=("logits",))
mlp("two", outs=("y", "z"), extra=True)
mlp("two_renamed", outs=("p", "q"), extra=True)
open("two.map", "w").write("# test map\noutput y p\noutput z q\n")
PY

# 1. A model against itself: exact.
run 0 "$OPMIG" validate ref.onnx ref.onnx --dim N=3 --samples 2 --format json
$PY -c "
import json; r = json.load(open('$T/out'))
assert r['schema'] == 'opmig.validate/1' and r['equivalent'] is True, r
o = r['outputs'][0]
assert o['max_abs_error'] == 0 and o['rmse'] == 0 and o['cosine'] == 1, o
assert o['snr_db'] is None and o['outside_tolerance'] == 0 and o['elements'] == 24, o
" || fail "self-validation is not exact: $(cat "$T/out")"

# 2. One perturbed weight of mm2: outputs differ (exit 1); layer by layer,
# h1..h3 agree and the first divergent value is h4 from mm2, a local error.
run 1 "$OPMIG" validate ref.onnx perturbed.onnx --layerwise --format json
$PY -c "
import json; r = json.load(open('$T/out'))
assert r['equivalent'] is False
lw = r['layerwise']
assert lw['compared'] == 5, lw['compared']
f = lw['first_divergent']
assert f['value'] == 'h4' and f['node'] == 'mm2' and f['op_type'] == 'MatMul', f
assert f['error'] == 'local', f
assert f['local']['ok'] is False
w = [x['value'] for x in lw['worst']]
assert set(w[:2]) == {'h4', 'y'}, w
" || fail "perturbed weight not located: $(cat "$T/out")"
run 1 "$OPMIG" validate ref.onnx perturbed.onnx --layerwise
grep -q "^first divergent value: 'h4' from node 'mm2' (MatMul): local" "$T/out" ||
	fail "text report does not name mm2: $(cat "$T/out")"

# 3. float16 conversion: fp16 defaults pass, forced fp32 tolerances fail.
run 0 "$OPMIG" validate ref.onnx half.onnx --samples 4
grep -q "^precision fp16: rtol 0.01, atol 0.001; 4 samples" "$T/out" ||
	fail "fp16 not guessed: $(cat "$T/out")"
run 1 "$OPMIG" validate ref.onnx half.onnx --samples 4 --precision fp32
run 1 "$OPMIG" validate ref.onnx half.onnx --samples 4 --rtol 1e-6 --atol 1e-7

# 4. A single renamed output pairs by elimination, with a note.
run 0 "$OPMIG" validate ref.onnx renamed.onnx
grep -q "^note: reference output 'y' paired with candidate output 'logits'" "$T/out" ||
	fail "renamed output not paired: $(cat "$T/out")"
# Two renamed outputs cannot be guessed: refused, exit 3, naming one.
run 3 "$OPMIG" validate two.onnx two_renamed.onnx
grep -q "incompatible signatures: reference output 'y' has no counterpart" "$T/err" ||
	fail "unpairable outputs message: $(cat "$T/err")"
# ... and paired by a map.
run 0 "$OPMIG" validate two.onnx two_renamed.onnx --map two.map --format json
$PY -c "
import json; r = json.load(open('$T/out'))
assert [(o['reference_name'], o['candidate_name']) for o in r['outputs']] == [('y', 'p'), ('z', 'q')], r
" || fail "map not applied: $(cat "$T/out")"
echo "output y nope" >bad.map
run 3 "$OPMIG" validate two.onnx two_renamed.onnx --map bad.map
grep -q "pairs reference output 'y' with 'nope'" "$T/err" || fail "bad map message: $(cat "$T/err")"
echo "outptu y p" >typo.map
run 3 "$OPMIG" validate two.onnx two_renamed.onnx --map typo.map
grep -q "^opmig: typo.map: line 1: unknown entry 'outptu'" "$T/err" || fail "map syntax message: $(cat "$T/err")"

# 5. Reproducible: same seed, same report; other seed, other numbers.
run 1 "$OPMIG" validate ref.onnx perturbed.onnx --samples 3 --seed 9 --format json
cp "$T/out" a.json
run 1 "$OPMIG" validate ref.onnx perturbed.onnx --samples 3 --seed 9 --format json
cmp -s a.json "$T/out" || fail "same seed gave different reports"
run 1 "$OPMIG" validate ref.onnx perturbed.onnx --samples 3 --seed 10 --format json
cmp -s a.json "$T/out" && fail "different seeds gave the same report"

# 5b. --time: each model's time per run, only when asked (reports stay
# deterministic without it); the layer-wise first sample is not timed.
run 1 "$OPMIG" validate ref.onnx perturbed.onnx --samples 3
grep -q "time per run" "$T/out" && fail "timed without --time: $(cat "$T/out")"
grep -q time_per_run a.json && fail "JSON timed without --time"
run 1 "$OPMIG" validate ref.onnx perturbed.onnx --samples 3 --time
grep -q "^time per run: reference [0-9.e+-]* ms, candidate [0-9.e+-]* ms (mean of 3; least " "$T/out" ||
	fail "no time per run line: $(cat "$T/out")"
run 1 "$OPMIG" validate ref.onnx perturbed.onnx --samples 3 --time --format json
$PY -c "
import json; t = json.load(open('$T/out'))['time_per_run_ms']
assert t['runs'] == 3, t
for m in ('reference', 'candidate'):
    assert 0 < t[m + '_min'] <= t[m + '_mean'] < 60000, t
" || fail "time_per_run_ms: $(cat "$T/out")"
run 1 "$OPMIG" validate ref.onnx perturbed.onnx --samples 2 --layerwise --time --format json
$PY -c "
import json; assert json.load(open('$T/out'))['time_per_run_ms']['runs'] == 1
" || fail "the layer-wise sample was timed: $(cat "$T/out")"

# 6. --save writes replayable samples.
run 1 "$OPMIG" validate ref.onnx perturbed.onnx --save saved
run 0 "$OPMIG" run ref.onnx --data saved/sample_0 --check saved/sample_0/reference
run 1 "$OPMIG" run ref.onnx --data saved/sample_0 --check saved/sample_0/candidate

# 7. Usage errors.
run 2 "$OPMIG" validate ref.onnx
run 2 "$OPMIG" validate ref.onnx ref.onnx --precision fp8
run 2 "$OPMIG" validate ref.onnx ref.onnx --data x --samples 2
echo "ok: opmig validate measures, locates and refuses as documented"
