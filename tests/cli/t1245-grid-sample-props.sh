#!/bin/sh
# t1245-grid-sample-props.sh: GridSample (runtime/kernels/k_resize_grid.c)
# on seeded random 2-D and 3-D cases of every mode, padding and
# align_corners, at one thread and two: float32 bit for bit the float64
# model's result rounded (the float32 path finds a point's taps once for
# all channels), and within 1e-5 of onnxruntime-node where it computes the
# case the same way (tests/ort/grid_sample_props.py).
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"
timeout 300 $PY "$TOP/tests/ort/grid_sample_props.py" "$OPMIG" "$T/gs" >"$T/gs.out" 2>&1
rc=$?
cat "$T/gs.out"
[ $rc -eq 77 ] && exit 0
[ $rc -eq 0 ] || fail "GridSample differs (above)"
grep -q "^0 failures$" "$T/gs.out" || fail "grid_sample_props.py printed no summary"
[ "$(grep -c '^ok: .*float32 is float64' "$T/gs.out")" -eq 72 ] || fail "not every case ran"
echo "ok: GridSample's float32 path is its float64 one's, and onnxruntime's"
