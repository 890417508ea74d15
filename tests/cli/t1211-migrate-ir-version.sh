#!/bin/sh
# t1211-migrate-ir-version.sh: migrate down to an older opset lowers
# ir_version to what that opset's readers know or the model's contents
# need, never above the input's (issue 25; tests/ort/ir_version_ort.py):
# opset-21/IR-10 models at opset 17, 13 and 8 pass onnx.checker full_check
# (onnx 1.12) and equal the original in onnxruntime-node; int4 and float8
# contents keep IR 10 and 9.  Skipped when onnxruntime-node or python-onnx
# is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
timeout 120 "$PY" "$TOP/tests/ort/ir_version_ort.py" "$OPMIG" "$T/work" >"$T/irv.out" 2>&1
rc=$?
cat "$T/irv.out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "a migrated model has the wrong ir_version or is invalid (above)"
grep -q "^0 failures$" "$T/irv.out" || fail "ir_version_ort.py printed no summary"
echo "ok: ir_version lowered with the opset, as far as the contents allow"
