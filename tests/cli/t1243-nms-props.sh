#!/bin/sh
# t1243-nms-props.sh: NonMaxSuppression's candidates in score order from
# a heap, boxes read as they are reached (runtime/kernels/k_detect.c), on
# seeded random cases with many tied scores, classes, batches, center
# boxes, thresholds and limits: the selected indices onnxruntime-node's
# exactly, in order (tests/ort/nms_props.py).
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"
timeout 300 $PY "$TOP/tests/ort/nms_props.py" "$OPMIG" "$T/nms" >"$T/nms.out" 2>&1
rc=$?
cat "$T/nms.out"
[ $rc -eq 77 ] && exit 0
[ $rc -eq 0 ] || fail "NonMaxSuppression differs from onnxruntime (above)"
grep -q "^40 cases, 0 failures$" "$T/nms.out" || fail "nms_props.py printed no summary"
echo "ok: NonMaxSuppression against onnxruntime"
