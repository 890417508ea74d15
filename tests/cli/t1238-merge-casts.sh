#!/bin/sh
# t1238-merge-casts.sh: pass merge-casts: a Cast of a Cast as one Cast
# where the first is exact and nothing else reads the middle value
# (uint8/int8 -> float32 -> float16, bool -> int32 -> float32, float16 ->
# float32 -> int32, three Casts into one, a round trip removed), and not
# float32 -> int32 -> float32, float64 -> float32 -> float16 (double
# rounding, on values where it shows), int32 -> float32 -> int32, a
# middle with a second reader or that is a graph output; on openvino and
# ascend, each model in onnxruntime-node bit for bit equal to the
# original and the original to numpy (tests/ort/merge_casts_ort.py); the
# genai int4 decoder on ascend: no Cast of a Cast, uint8 codes and zero
# points cast to float16 directly, logits as the original's.
# Skipped when onnxruntime-node or python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
timeout 120 "$PY" "$TOP/tests/ort/merge_casts_ort.py" "$OPMIG" "$T/work" >"$T/mc.out" 2>&1
rc=$?
cat "$T/mc.out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "merge-casts is wrong (above)"
grep -q "^0 failures$" "$T/mc.out" || fail "merge_casts_ort.py printed no summary"
echo "ok: exact Cast pairs merged, the others kept"
