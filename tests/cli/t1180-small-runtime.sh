#!/bin/sh
# t1180-small-runtime.sh: real-world-shaped models migrated to a small
# embedded runtime (tests/fixtures/small-runtime.json: 68 ops, opsets 7 to
# 9, no Constant/Cast/Shape/Identity nodes, static shapes) through chains
# of lowerings: an LSTM, an If on a sample-rate input bound by
# --input-value, ConvTranspose stride 2, Resize (to Upsample), TopK k=1,
# Max/Min, Pow, Sign and Greater, and the shared light models where they
# are.  Each result holds only the runtime's ops at its opsets, passes
# onnx.checker and computes in onnxruntime-node what the original does
# (tests/ort/small_runtime.py; numbers skipped without onnxruntime).
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY "$TOP/tests/ort/small_runtime.py" "$OPMIG" "$T/work" "$TOP/../shared/models/onnx-light" \
	>"$T/log" 2>&1
rc=$?
grep -v '^\[\|onnxruntime:' "$T/log" | tail -30
[ $rc -eq 0 ] || fail "models the small runtime cannot take after migration"
