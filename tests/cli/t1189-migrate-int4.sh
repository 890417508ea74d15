#!/bin/sh
# t1189-migrate-int4.sh: `opmig migrate --precision int4` of the tiny decoder
# (tests/ort/migrate_int4_ort.py): blocked int4 DequantizeLinear-21 + MatMul for
# tensorrt at --opset 21 with the numpy reference's codes, onnxruntime-node
# against the interpreter and the per-position criterion; MatMulNBits kept for
# qnn; coreml and tensorrt below opset 21 written in the cast-codes form;
# generic-npu refused with exit 2 and one line; the int4-only options
# refused without --precision int4.  Skipped when
# python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }

timeout 200 "$PY" "$TOP/tests/ort/migrate_int4_ort.py" "$OPMIG" "$T/work" >"$T/m4.out" 2>&1
rc=$?
cat "$T/m4.out"
if [ "$rc" -ne 77 ]; then
	[ "$rc" -eq 0 ] || fail "migrate --precision int4 is wrong (above)"
	grep -q "^0 failures$" "$T/m4.out" || fail "migrate_int4_ort.py printed no summary"
fi

cd "$T" || fail "no $T"
"$PY" "$TOP/testdata/gen/make_decoder.py" --preset tiny --form decomposed -o tiny.onnx >/dev/null ||
	fail "cannot build the decoder"
run 2 "$OPMIG" migrate tiny.onnx --target tensorrt -o x.onnx --precision int8 --block-size 16
grep -q "^opmig: --block-size needs --precision int4" err || { cat err; fail "--block-size taken with int8"; }
run 2 "$OPMIG" migrate tiny.onnx --target tensorrt -o x.onnx --precision int4 --dynamic
grep -q "quantizes weights only" err || { cat err; fail "--dynamic taken with int4"; }
run 2 "$OPMIG" migrate tiny.onnx --target tensorrt -o x.onnx --precision int2
grep -q "fp32, fp16, int8 or int4" err || { cat err; fail "--precision int2 taken"; }
[ ! -e x.onnx ] || fail "a refused migration wrote its output"
echo "ok: migrate --precision int4"
