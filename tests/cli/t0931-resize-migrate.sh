#!/bin/sh
# t0931-resize-migrate.sh: the rewrites that emit Resize (opset adapters,
# Upsample -> Resize, --layout nhwc) against onnxruntime-node: 100 one-node
# Upsample/Resize models of opsets 7 to 19 migrated to targets whose opset
# range forces a conversion (generic-npu, ascend, tensorrt and test targets
# of one range each) must, when written, pass onnx's checker and compute in
# onnxruntime what the original computes there (tests/ort/resize_migrate.py).
# The faults of rewriters/opset_adapt.c known today are listed in
# resize_migrate.py (KNOWN, with their diagnosis) and may only go away.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
cd "$T" || fail "cd $T"

# under the sanitizer build every 6th migration (the counts then differ)
case $OPMIG in
*/asan/*) export RESIZE_MIGRATE_EVERY=6 ;;
esac
timeout 600 $PY "$TOP/tests/ort/resize_migrate.py" "$OPMIG" "$T/work" >out 2>err
rc=$?
cat out
[ "$rc" -eq 0 ] || { tail -5 err >&2; fail "resize_migrate.py exited $rc"; }
[ -n "${RESIZE_MIGRATE_EVERY:-}" ] && exit 0
grep -q '^549 migrations of 100 models: ' out || fail "not the 549 migrations expected"
grep -q '^notice: onnxruntime-node not used' out && exit 0
n=$(sed -n 's/.*; \([0-9]*\) compared in onnxruntime;.*/\1/p' out)
[ -n "$n" ] && [ "$n" -ge 300 ] || fail "only '$n' written models compared with onnxruntime"
exit 0
