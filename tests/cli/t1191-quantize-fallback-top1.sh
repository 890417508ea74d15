#!/bin/sh
# t1191-quantize-fallback-top1.sh: the weight-only int4 fallback on a decoder
# ranks MatMuls by the top-1 flips each causes (tests/ort/fallback_top1_ort.py:
# a prompt where the cosine ranking returned every MatMul to float; the flips
# checked against onnxruntime-node).  Skipped when python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }

timeout 200 "$PY" "$TOP/tests/ort/fallback_top1_ort.py" "$OPMIG" "$T/work" >"$T/f.out" 2>&1
rc=$?
cat "$T/f.out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "the top-1 ranking of the fallback is wrong (above)"
grep -q "^0 failures$" "$T/f.out" || fail "fallback_top1_ort.py printed no summary"
echo "ok: fallback ranked by top-1 flips"
