#!/bin/sh
# t0312: an input with external data gives an output with external data,
# whatever became of its weights.  A model with 2 MiB of external float32
# weights (2 MatMuls of [512, 512] in a sparse file) is quantized (int8
# QDQ, dynamic, QOperator) and migrated to int8, whose weights are all
# computed in memory: every output keeps its initializers of 1 KiB or more
# in OUT.data, passes onnx.checker's full check with it, and runs in
# onnxruntime-node to IN's outputs.  --external-data still names the file;
# an input without external data is still written inline.
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$TOP" || fail "cannot cd to $TOP"
BW="$PY tests/verify/big_weights.py"
RUN_LIMIT=120

$BW make "$T/m" 2 512 >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "cannot make the model"; }
M="$T/m/model.onnx"

# small OUT, OUT.data beside it
kept() {
	[ -f "$T/$1.data" ] || fail "$2 wrote no $1.data: $(ls "$T" | tr '\n' ' ')"
	[ "$(wc -c <"$T/$1")" -lt 65536 ] || fail "$2 wrote its weights inline into $1 ($(wc -c <"$T/$1") bytes)"
}

run 0 "$OPMIG" quantize "$M" -o "$T/q.onnx" --samples 1
kept q.onnx "quantize (QDQ)"
run 0 "$OPMIG" quantize "$M" -o "$T/d.onnx" --dynamic --samples 1
kept d.onnx "quantize --dynamic"
run 0 "$OPMIG" quantize "$M" -o "$T/o.onnx" --format qoperator --samples 1
kept o.onnx "quantize --format qoperator"
# ascend keeps Quantize/DequantizeLinear blocked: --force writes it
run 1 "$OPMIG" migrate "$M" --target ascend --precision int8 --samples 1 --force -o "$T/i.onnx"
grep -q "^result: .*i.onnx written (--force)" "$T/out" || { cat "$T/out"; fail "migrate --precision int8 did not write"; }
kept i.onnx "migrate --precision int8"
$BW external "$M" "$T/q.onnx" "$T/d.onnx" "$T/o.onnx" "$T/i.onnx" >"$T/py" 2>&1 ||
	{ cat "$T/py" >&2; fail "the outputs"; }
cat "$T/py"

# --external-data names it
run 0 "$OPMIG" quantize "$M" -o "$T/n.onnx" --samples 1 --external-data n.bin
[ -f "$T/n.bin" ] && [ ! -e "$T/n.onnx.data" ] || fail "--external-data n.bin not followed: $(ls "$T" | tr '\n' ' ')"

# an input without external data stays inline
run 0 "$OPMIG" quantize testdata/sample.onnx -o "$T/s.onnx" --samples 1
[ ! -e "$T/s.onnx.data" ] || fail "quantize of an inline model wrote s.onnx.data"
echo "ok: external data kept through int8 quantization and migration"
