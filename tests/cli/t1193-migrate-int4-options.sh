#!/bin/sh
# t1193-migrate-int4-options.sh: the options of `opmig migrate
# --precision int4` (tests/ort/migrate_int4_opts.py): --weight-only int8
# (DequantizeLinear of int8 codes for tensorrt, 8-bit MatMulNBits for
# qnn), --no-validate running nothing (no accuracy check, no fallback),
# --no-accuracy-check, the validation header naming int4 / int8
# weight-only, codes against numpy; and the refusals: --weight-only
# against another --precision, --no-accuracy-check or --block-size
# without a weight-only precision, --weight-only int2.  Skipped when
# python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }

timeout 200 "$PY" "$TOP/tests/ort/migrate_int4_opts.py" "$OPMIG" "$T/work" >"$T/m4.out" 2>&1
rc=$?
cat "$T/m4.out"
[ "$rc" -eq 0 ] || fail "migrate --precision int4 options are wrong (above)"
grep -q "^0 failures$" "$T/m4.out" || fail "migrate_int4_opts.py printed no summary"

cd "$T" || fail "no $T"
M=work/tiny.onnx
run 2 "$OPMIG" migrate $M --target tensorrt -o x.onnx --precision int4 --weight-only int8
grep -q "^opmig: --weight-only int8 contradicts --precision int4$" err || { cat err; fail "int4 and int8 taken together"; }
run 2 "$OPMIG" migrate $M --target tensorrt -o x.onnx --precision fp16 --weight-only int8
grep -q "^opmig: --weight-only int8 contradicts --precision fp16$" err || { cat err; fail "fp16 and --weight-only taken"; }
run 2 "$OPMIG" migrate $M --target tensorrt -o x.onnx --precision int8 --no-accuracy-check
grep -q "^opmig: --no-accuracy-check needs --precision int4 or --weight-only int8$" err ||
	{ cat err; fail "--no-accuracy-check taken with int8 (activations)"; }
run 2 "$OPMIG" migrate $M --target tensorrt -o x.onnx --no-accuracy-check
grep -q "^opmig: --no-accuracy-check needs --precision int4 or --weight-only int8$" err ||
	{ cat err; fail "--no-accuracy-check taken alone"; }
run 2 "$OPMIG" migrate $M --target tensorrt -o x.onnx --weight-only int2
grep -q "^opmig: --weight-only is int4 or int8, not 'int2'$" err || { cat err; fail "--weight-only int2 taken"; }
run 2 "$OPMIG" migrate $M --target tensorrt -o x.onnx --weight-only int8 --dynamic
grep -q "quantizes weights only" err || { cat err; fail "--dynamic taken with --weight-only int8"; }
[ ! -e x.onnx ] || fail "a refused migration wrote its output"
echo "ok: migrate --precision int4 / --weight-only options"
