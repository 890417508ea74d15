#!/bin/sh
# t1250-pad-conv.sh: a Pad of zeros read by a Conv alone done by the
# Conv's padding (runtime/unit_padconv.c), on seeded random 1-D, 2-D and
# 3-D cases of either Pad form: fused where it is such a Pad and not
# where it is another (a value, reflect or edge, cropping, the channel
# axis, a graph output, auto_pad), within 1e-5 of --exact and of
# onnxruntime-node (tests/ort/pad_conv.py).
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"
timeout 300 $PY "$TOP/tests/ort/pad_conv.py" "$OPMIG" "$T/pc" >"$T/pc.out" 2>&1
rc=$?
grep -v "W:onnxruntime" "$T/pc.out"
[ $rc -eq 0 ] || fail "Pad folded into Conv wrong (above)"
grep -q "^47 cases, 0 failures$" "$T/pc.out" || fail "pad_conv.py printed no summary"
echo "ok: Pad folded into Conv"
