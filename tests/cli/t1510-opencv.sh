#!/bin/sh
# t1510-opencv.sh: the shipped opencv-dnn target (oprules/opencv-dnn.json,
# measured by `opmig probe` on Debian's OpenCV 4.6) end to end: the shared
# light models (../shared/models/onnx-light, when present), testdata/'s
# sample and a handful of generated real-world-shaped models
# (tests/probe/gen_models.py) are migrated to opencv-dnn with
# --verify-with the OpenCV adapter, run in OpenCV and compared with
# onnxruntime on the original; a model OpenCV runs right as exported must
# still run right after migration (tests/probe/opencv_e2e.py, two models at
# a time; under the sanitizer build every third light model).  Skipped
# with a message where python3-opencv or onnxruntime-node is missing.
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
run 0 "$OPMIG" rules check "$TOP/oprules/opencv-dnn.json"
if ! $PY -c "import cv2" 2>/dev/null; then
	echo "notice: python3-opencv missing (make deps installs it): OpenCV test skipped"
	exit 0
fi
why=$($PY -c "import sys; sys.path.insert(0, '$TOP/tests/ort'); import ortlib; print(ortlib.available() or '')") ||
	fail "ortlib"
if [ -n "$why" ]; then
	echo "notice: onnxruntime-node not usable ($why): OpenCV test skipped"
	exit 0
fi
$PY "$TOP/tests/probe/gen_models.py" "$T/gen" || fail "gen_models.py"
set -- "$TOP/testdata/sample.onnx" "$T"/gen/*.onnx
# under the sanitizer build (opmig's validation several times slower) every
# third light model only
every=1
case $OPMIG in
*/asan/*) every=3 ;;
esac
n=0
k=0
for f in "$TOP"/../shared/models/onnx-light/*.onnx; do
	[ -f "$f" ] || continue
	k=$((k + 1))
	[ $(((k - 1) % every)) -eq 0 ] || continue
	set -- "$@" "$f"
	n=$((n + 1))
done
[ "$n" -eq 0 ] && echo "notice: $TOP/../shared/models absent, only testdata and generated models"
$PY "$TOP/tests/probe/opencv_e2e.py" "$OPMIG" "$T/work" opencv-dnn "$@" >"$T/e2e.txt" 2>&1
rc=$?
cat "$T/e2e.txt"
[ "$rc" -eq 0 ] || fail "a model OpenCV ran as exported does not after migration to opencv-dnn"
# the migration did something for the models OpenCV refused as exported
grep -q "^mobilenet_block -> opencv-dnn: as exported fails.*migrated runs right" "$T/e2e.txt" ||
	fail "mobilenet_block (Clip with min/max inputs) does not run after migration"
exit 0
