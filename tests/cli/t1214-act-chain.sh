#!/bin/sh
# t1214-act-chain.sh: SiLU and GELU as exporters write them (Sigmoid and
# the Mul of the value by it; Div, Erf, Add 1, Mul, Mul by a half) done as
# one step of the value's epilogue chain (runtime/chain.c, chain_act.c):
# and a Relu or Clip after a Transpose or Reshape done by the convolution
# before it (tf2onnx's Conv, Transpose, Relu): on seeded random conv,
# transformer and NHWC graphs, also stored channels
# last between oneDNN convolutions and in float16 (each step rounding its
# result), the outputs are the same bytes with
# and without chains (OPMIG_NO_CHAIN=1) and agree with onnxruntime-node;
# forms that are not SiLU or whose values others read are not fused
# (tests/ort/act_chain_ort.py); float16 BatchNormalization done as a step
# (its parameters widened, its result rounded) gives the nodes' bytes. With
# BatchNormalizations folded into oneDNN convolutions (the default) the
# outputs are within 1e-5 of the nodes' and agree with onnxruntime-node.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"

timeout 300 $PY "$TOP/tests/ort/act_chain_ort.py" "$OPMIG" "$T/w" >"$T/w.out" 2>&1
rc=$?
cat "$T/w.out"
if [ $rc -eq 77 ]; then
	exit 0
fi
[ $rc -eq 0 ] || fail "activation chains change the outputs or disagree with onnxruntime (above)"
grep -q "^0 failures$" "$T/w.out" || fail "act_chain_ort.py printed no summary"
for op in Sigmoid Erf; do
	grep -q "^ok: ${op}s fused into chains (oneDNN everywhere): [1-9]" "$T/w.out" ||
		fail "no $op was fused"
done
echo "ok: activation chains change no output"
