#!/bin/sh
# t0945-profile.sh: `opmig run --profile FILE` writes every node run as a
# Chrome trace-event JSON array in onnxruntime's profile format, and
# `--stats` lists the slowest nodes.  A model with a named MatMul, an
# unnamed Add, and an If whose branch runs a Mul, run three times: per run
# one "model_run" event (cat Session) and one event per node (cat Node,
# NAME_kernel_time, ph X, integer microseconds) with the op, the domain,
# the inputs' dtypes and shapes as the model has them and the graph depth
# (the branch's Mul at 1, inside its If's span); node events inside their
# run's span, runs one after the other.  An unwritable --profile path is
# an error (nothing written, exit 4 or 3) and leaves no partial file.
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"

$PY - <<'PY' || fail "cannot generate the test model"
import numpy as np, onnx
from onnx import helper as h, TensorProto as TP, numpy_helper as nh
w = nh.from_array(np.ones((256, 128), np.float32), "w")
two = nh.from_array(np.float32(2), "two")
then = h.make_graph([h.make_node("Mul", ["m", "two"], ["t"], name="double")], "then", [],
                    [h.make_tensor_value_info("t", TP.FLOAT, [64, 128])])
other = h.make_graph([h.make_node("Identity", ["m"], ["o"], name="keep")], "else", [],
                     [h.make_tensor_value_info("o", TP.FLOAT, [64, 128])])
g = h.make_graph([h.make_node("MatMul", ["x", "w"], ["m"], name="project"),
                  h.make_node("If", ["c"], ["y0"], name="branch", then_branch=then,
                              else_branch=other),
                  h.make_node("Add", ["y0", "m"], ["y"])], "p",
                 [h.make_tensor_value_info("x", TP.FLOAT, [64, 256]),
                  h.make_tensor_value_info("c", TP.BOOL, [])],
                 [h.make_tensor_value_info("y", TP.FLOAT, [64, 128])], [w, two])
m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
onnx.checker.check_model(m, full_check=True)
onnx.save(m, "p.onnx")
np.save("x.npy", np.ones((64, 256), np.float32))
np.save("c.npy", np.array(True))
PY

run 0 "$OPMIG" run p.onnx x=x.npy c=c.npy --repeat 3 --stats --profile prof.json
grep -q "^slowest nodes:" "$T/out" || fail "--stats lists no slowest nodes: $(cat "$T/out")"
grep -q "^project  *MatMul  *3 " "$T/out" || fail "MatMul 'project' not among the slowest nodes"
grep -q "^#2  *Add  *3 " "$T/out" || fail "the unnamed Add is not listed as #2"
$PY - <<'PY' || fail "the profile is wrong (above)"
import json
ev = json.load(open("prof.json"))
runs = [e for e in ev if e["cat"] == "Session"]
nodes = [e for e in ev if e["cat"] == "Node"]
assert len(runs) == 3 and all(e["name"] == "model_run" for e in runs), runs
for e in ev:
    assert e["ph"] == "X" and isinstance(e["ts"], int) and isinstance(e["dur"], int), e
    assert e["ts"] >= 0 and e["dur"] >= 0 and e["pid"] == 0 and e["tid"] == 0, e
names = sorted({e["name"] for e in nodes})
assert names == ["Add#2_kernel_time", "branch_kernel_time", "double_kernel_time",
                 "project_kernel_time"], names
for e in nodes:
    assert sum(1 for f in nodes if f["name"] == e["name"]) == 3, e["name"]
by = {e["name"]: e["args"] for e in nodes}
assert by["project_kernel_time"] == {"op_name": "MatMul", "domain": "ai.onnx",
    "input_type_shape": [{"float": [64, 256]}, {"float": [256, 128]}], "provider": "opmig",
    "graph_depth": 0}, by["project_kernel_time"]
assert by["branch_kernel_time"]["input_type_shape"] == [{"bool": []}]
assert by["double_kernel_time"]["graph_depth"] == 1
assert by["double_kernel_time"]["input_type_shape"] == [{"float": [64, 128]}, {"float": []}]
# times are whole microseconds, each rounded on its own: a node event
# belongs to the last run that started at or before it, and lies inside
# that run's span up to a microsecond of rounding
srt = sorted(runs, key=lambda e: e["ts"])
owner = {}
for k, e in enumerate(nodes):
    before = [r for r, run in enumerate(srt) if run["ts"] <= e["ts"]]
    assert before, ("a node event before every run", e)
    owner[k] = before[-1]
for r, run in enumerate(srt):
    if r:
        prev = srt[r - 1]
        assert run["ts"] >= prev["ts"] + prev["dur"], (prev, run)
    inside = [e for k, e in enumerate(nodes) if owner[k] == r]
    assert len(inside) == 4, (run, inside)
    for e in inside:
        assert e["ts"] + e["dur"] <= run["ts"] + run["dur"] + 1, (run, e)
    br = [e for e in inside if e["name"] == "branch_kernel_time"][0]
    mul = [e for e in inside if e["name"] == "double_kernel_time"][0]
    assert br["ts"] <= mul["ts"] and mul["ts"] + mul["dur"] <= br["ts"] + br["dur"] + 1, (br, mul)
print("ok: profile of 3 runs, %d node events" % len(nodes))
PY

mkdir ro && chmod 555 ro
if [ "$(id -u)" != 0 ]; then
	"$OPMIG" run p.onnx x=x.npy c=c.npy --profile ro/prof.json >/dev/null 2>"$T/err"
	rc=$?
	[ $rc -eq 3 ] || [ $rc -eq 4 ] || fail "unwritable --profile path exited $rc"
	[ -z "$(ls ro)" ] || fail "files left in the unwritable folder: $(ls ro)"
fi
"$OPMIG" run p.onnx x=x.npy c=c.npy --profile nodir/prof.json >/dev/null 2>"$T/err"
rc=$?
[ $rc -eq 3 ] || [ $rc -eq 4 ] || fail "--profile in a missing folder exited $rc"
grep -q "nodir/prof.json" "$T/err" || fail "the error does not name the file: $(cat "$T/err")"
[ ! -e nodir ] || fail "a folder was created for the profile"
echo "ok: run --profile and --stats' slowest nodes"
