#!/bin/sh
# t0910: spec operators defined as functions run through their function
# bodies when no kernel covers them: with OPMIG_NO_KERNEL naming the nine
# ops that have a static body, every backend test case of those ops still
# matches its expected outputs (--check), --stats shows the body's ops ran,
# and an op with neither kernel nor body (or a body op without kernel) is
# refused before running, exit 3, naming node, op, domain and version.
. "$TOP/tests/cli/lib.sh"
cd "$T" || fail "cannot cd to $T"
D=/usr/share/libonnx-testdata/data/node
OPS=BlackmanWindow,DynamicQuantizeLinear,GreaterOrEqual,HammingWindow,HannWindow,HardSwish,LessOrEqual,MeanVarianceNormalization,Range

# 1. Every data set of every case of the nine ops, through the bodies.
n=0
for c in blackmanwindow blackmanwindow_symmetric dynamicquantizelinear \
	dynamicquantizelinear_max_adjusted dynamicquantizelinear_min_adjusted \
	greater_equal greater_equal_bcast hammingwindow hammingwindow_symmetric \
	hannwindow hannwindow_symmetric hardswish less_equal less_equal_bcast \
	mvn range_float_type_positive_delta range_int32_type_negative_delta; do
	[ -d "$D/test_$c" ] || fail "missing backend case test_$c"
	for s in "$D/test_$c"/test_data_set_*; do
		run 0 env OPMIG_NO_KERNEL=$OPS "$OPMIG" run "$D/test_$c/model.onnx" \
			--data "$s" --check "$s" --stats
		grep -q "^ok " "$T/out" || fail "test_$c: no ok line: $(cat "$T/out")"
		grep -q "^FAIL" "$T/out" && fail "test_$c: $(cat "$T/out")"
		n=$((n + 1))
	done
done
[ "$n" -ge 17 ] || fail "only $n data sets ran"

# 2. The bodies did run: their ops appear in the statistics, nested ones
# too (a window's body calls Range, whose body runs a Loop).
run 0 env OPMIG_NO_KERNEL=$OPS "$OPMIG" run $D/test_hardswish/model.onnx \
	--data $D/test_hardswish/test_data_set_0 --stats
grep -q "^HardSigmoid  *1 " "$T/out" || fail "HardSwish body did not run: $(cat "$T/out")"
run 0 env OPMIG_NO_KERNEL=$OPS "$OPMIG" run $D/test_hannwindow/model.onnx \
	--data $D/test_hannwindow/test_data_set_0 --stats
grep -q "^Loop  *1 " "$T/out" || fail "Range body inside HannWindow's did not run: $(cat "$T/out")"
# without the variable the kernels run
run 0 "$OPMIG" run $D/test_hardswish/model.onnx \
	--data $D/test_hardswish/test_data_set_0 --stats
grep -q "^HardSigmoid" "$T/out" && fail "HardSwish ran its body with a kernel: $(cat "$T/out")"

# 3. No kernel and no body: refused before running, exit 3.
run 3 env OPMIG_NO_KERNEL=Relu "$OPMIG" run $D/test_relu/model.onnx \
	--data $D/test_relu/test_data_set_0
grep -q "node #0 (Relu): no kernel for ai.onnx Relu version 14 (model opset 14)" "$T/err" ||
	fail "no-kernel message: $(cat "$T/err")"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "more than one error line: $(cat "$T/err")"

# 4. A body op without kernel: the message names the calling node too.
run 3 env OPMIG_NO_KERNEL=HardSwish,HardSigmoid "$OPMIG" run $D/test_hardswish/model.onnx \
	--data $D/test_hardswish/test_data_set_0
grep -q "(HardSigmoid): no kernel for ai.onnx HardSigmoid version 6.*, in the function body of ai.onnx HardSwish version 14 run for node #0 (HardSwish)" "$T/err" ||
	fail "body no-kernel message: $(cat "$T/err")"
echo "ok: $n backend data sets ran through spec function bodies; refusals name the node"
