#!/bin/sh
# t0900: `opmig run`: binding inputs (.pb, .npy in both byte orders and C or
# Fortran order, NAME=FILE, --data), seeded random inputs and --dim,
# writing outputs (.pb and .npy, read back by python-onnx and numpy),
# --check verdicts, --max-memory, --stats, and clean refusals (wrong dtype
# or shape, broken .npy, no kernel, bad data) with exit codes.
. "$TOP/tests/cli/lib.sh"
cd "$T" || fail "cannot cd to $T"
D=/usr/share/libonnx-testdata/data/node

# Small models, written by python-onnx (the independent judge of the files).
$PY - <<'PY' || fail "cannot generate the test models"
import numpy as np, onnx
from onnx import helper as h, TensorProto as TP, numpy_helper as nh
def save(name, nodes, ins, outs, inits=(), opset=13, domains=()):
    g = h.make_graph(nodes, name, ins, outs, initializer=list(inits))
    ops = [h.make_opsetid("", opset)] + [h.make_opsetid(d, 1) for d in domains]
    m = h.make_model(g, opset_imports=ops)
    onnx.checker.check_model(m)
    onnx.save(m, name + ".onnx")
f = lambda n, s: h.make_tensor_value_info(n, TP.FLOAT, s)
# y = relu(x + b), x dynamic in its first dim
b = nh.from_array(np.array([0.5, -0.5, 1.0], np.float32), "b")
save("addrelu", [h.make_node("Add", ["x", "b"], ["s"], name="add"),
                 h.make_node("Relu", ["s"], ["y"], name="relu")],
     [f("x", ["N", 3])], [f("y", ["N", 3])], [b])
# two inputs, for NAME=FILE binding: z = a - c
save("sub", [h.make_node("Sub", ["a", "c"], ["z"], name="sub")],
     [f("a", [2, 2]), f("c", [2, 2])], [f("z", [2, 2])])
# an op of a domain opmig has no kernel for
save("custom", [h.make_node("Frobnicate", ["x"], ["y"], name="frob", domain="com.example")],
     [f("x", [2])], [f("y", [2])], domains=["com.example"])
# Gather whose indices come from the input: out of range at run time
data = nh.from_array(np.arange(12, dtype=np.float32).reshape(4, 3), "data")
save("gather", [h.make_node("Gather", ["data", "i"], ["g"], name="pick", axis=0)],
     [h.make_tensor_value_info("i", TP.INT64, [2])], [f("g", [2, 3])], [data])
# a big intermediate: 64 x 1024 x 1024 floats (256 MiB) from a small input
shape = nh.from_array(np.array([64, 1024, 1024], np.int64), "shape")
save("big", [h.make_node("Expand", ["x", "shape"], ["e"], name="expand"),
             h.make_node("ReduceSum", ["e"], ["y"], name="sum", keepdims=0)],
     [f("x", [1])], [f("y", [])], [shape])
# inputs as .npy in several layouts, and as .pb
x = np.array([[1, -2, 3], [-4, 5, -6]], np.float32)
np.save("x_le.npy", x)
np.save("x_be.npy", x.astype(">f4"))
np.save("x_f.npy", np.asfortranarray(x))
np.save("x_i.npy", x.astype(np.int32))
np.save("x_bad_shape.npy", np.ones((2, 4), np.float32))
np.save("x_obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
open("x_trunc.npy", "wb").write(open("x_le.npy", "rb").read()[:-5])
open("x.pb", "wb").write(nh.from_array(x, "x").SerializeToString())
np.save("a.npy", np.array([[5, 6], [7, 8]], np.float32))
np.save("c.npy", np.array([[1, 2], [3, 4]], np.float32))
np.save("idx_bad.npy", np.array([1, 9], np.int64))
np.save("expected_relu.npy", np.maximum(x + np.array([0.5, -0.5, 1.0], np.float32), 0))
PY

# 1. The backend layout: --data and --check, one ok line per output.
run 0 "$OPMIG" run $D/test_identity/model.onnx --data $D/test_identity/test_data_set_0 \
	--check $D/test_identity/test_data_set_0
grep -q "^ok    output 0 'y'" "$T/out" || fail "--check did not say ok: $(cat "$T/out")"

# 2. --check against different numbers: exit 1, FAIL naming the worst element.
$PY -c "
import numpy as np, onnx
from onnx import numpy_helper as nh
t = onnx.load_tensor('$D/test_identity/test_data_set_0/output_0.pb')
a = nh.to_array(t).copy(); a.flat[2] += 0.5
import os; os.makedirs('wrong', exist_ok=True)
open('wrong/output_0.pb', 'wb').write(nh.from_array(a, t.name).SerializeToString())
" || fail "cannot write wrong/output_0.pb"
run 1 "$OPMIG" run $D/test_identity/model.onnx --data $D/test_identity/test_data_set_0 --check wrong
grep -q "^FAIL  output 0 'y': 1 of 4 elements differ; worst at 2:" "$T/out" ||
	fail "--check mismatch not reported: $(cat "$T/out")"

# 3. Every .npy layout gives the same result, written as .npy and read by numpy.
for x in x_le.npy x_be.npy x_f.npy x.pb "x=x_le.npy"; do
	rm -rf o
	run 0 "$OPMIG" run addrelu.onnx "$x" -O o --out-format npy
	$PY -c "
import numpy as np
got, want = np.load('o/output_0.npy'), np.load('expected_relu.npy')
assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape)
assert (got == want).all(), (got, want)
" || fail "input $x: output differs from numpy's"
done

# 4. .pb output read by python-onnx.
run 0 "$OPMIG" run addrelu.onnx x_le.npy -O pbout
$PY -c "
import numpy as np, onnx
from onnx import numpy_helper as nh
t = onnx.load_tensor('pbout/output_0.pb')
assert t.name == 'y', t.name
assert (nh.to_array(t) == np.load('expected_relu.npy')).all()
" || fail "output_0.pb is not the expected TensorProto"

# 5. NAME=FILE binds out of order.
run 0 "$OPMIG" run sub.onnx c=c.npy a=a.npy -O subout --out-format npy
$PY -c "
import numpy as np
assert (np.load('subout/output_0.npy') == np.full((2, 2), 4, np.float32)).all()
" || fail "NAME=FILE binding gave the wrong result"

# 6. Refusals: wrong dtype or shape (both types named), broken .npy files.
run 3 "$OPMIG" run addrelu.onnx x_i.npy
grep -q "^opmig: x_i.npy: input 'x' is int32\[2,3\], the model declares float\[N,3\]" "$T/err" ||
	fail "wrong dtype message: $(cat "$T/err")"
run 3 "$OPMIG" run addrelu.onnx x_bad_shape.npy
grep -q "^opmig: x_bad_shape.npy: input 'x' is float\[2,4\], the model declares float\[N,3\]" "$T/err" ||
	fail "wrong shape message: $(cat "$T/err")"
run 3 "$OPMIG" run addrelu.onnx x_obj.npy
grep -q "object arrays" "$T/err" || fail "object .npy message: $(cat "$T/err")"
run 3 "$OPMIG" run addrelu.onnx x_trunc.npy
grep -q "truncated" "$T/err" || fail "truncated .npy message: $(cat "$T/err")"
run 2 "$OPMIG" run addrelu.onnx x_le.npy x_le.npy
run 2 "$OPMIG" run addrelu.onnx --threads 0
run 2 "$OPMIG" run addrelu.onnx --out-format csv
for f in "$T/err"; do [ "$(wc -l <"$f")" -ge 1 ] || fail "no usage message"; done

# 7. Seeded random inputs: same seed, same output; --dim sets the batch.
run 0 "$OPMIG" run addrelu.onnx --seed 3 --dim N=5
cp "$T/out" seed3
grep -q "^y  float\[5,3\]" seed3 || fail "--dim N=5 not applied: $(cat seed3)"
run 0 "$OPMIG" run addrelu.onnx --seed 3 --dim N=5
cmp -s seed3 "$T/out" || fail "same seed gave different outputs"
run 0 "$OPMIG" run addrelu.onnx --seed 4 --dim N=5
cmp -s seed3 "$T/out" && fail "different seeds gave the same outputs"

# 8. No kernel: refused before running, naming node, op, domain and version.
run 3 "$OPMIG" run custom.onnx
grep -q "node 'frob' (Frobnicate): no kernel for operator Frobnicate of domain 'com.example' at opset 1" "$T/err" ||
	fail "no-kernel message: $(cat "$T/err")"

# 9. Bad data: a clean error naming the node, exit 3.
run 3 "$OPMIG" run gather.onnx idx_bad.npy
grep -q "node 'pick' (Gather): " "$T/err" || fail "bad index message: $(cat "$T/err")"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "more than one error line: $(cat "$T/err")"

# 10. --max-memory: refused before running when the plan is above it (the
# 256 MiB Expand), accepted when it fits.
run 3 "$OPMIG" run big.onnx --max-memory 64M
grep -q "planned peak of live tensors is [0-9]* bytes, above --max-memory 67108864; not running" "$T/err" ||
	fail "--max-memory message: $(cat "$T/err")"
run 0 "$OPMIG" run big.onnx --max-memory 1G --stats
grep -q "^peak tensor memory: 2684354[0-9][0-9] bytes" "$T/out" ||
	fail "peak of the 256 MiB run not reported: $(cat "$T/out")"
grep -q "^Expand  *1 " "$T/out" || fail "--stats lacks the Expand line: $(cat "$T/out")"

# 11. --time with --repeat.
run 0 "$OPMIG" run addrelu.onnx --time --repeat 5
grep -q "^time: 5 runs, min [0-9.]* ms, median [0-9.]* ms, mean [0-9.]* ms" "$T/out" ||
	fail "--time output: $(cat "$T/out")"
grep -q "^cpu: 5 runs, min [0-9.]* ms, median [0-9.]* ms, mean [0-9.]* ms" "$T/out" ||
	fail "--time's cpu line: $(cat "$T/out")"
# one thread: the CPU time of a run is no more than its wall time (0.05
# ms of slack for the two clocks' reads)
run 0 "$OPMIG" run addrelu.onnx --time --repeat 5 --threads 1
awk '/^time:/ { w = $5 } /^cpu:/ { c = $5 } END { exit !(w != "" && c != "" && c <= w + 0.05) }' \
	"$T/out" || fail "cpu min above wall min: $(cat "$T/out")"
echo "ok: opmig run binds, generates, writes, checks and refuses as documented"
