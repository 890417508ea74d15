#!/bin/sh
# t1223-fuse-gqa-bf16.sh: the fusion fuse-gqa of opmig migrate on bfloat16
# decoders, left decomposed with a note (onnxruntime-node has no bfloat16
# GroupQueryAttention to check a fusion against)
# (tests/ort/fuse_gqa_forms_ort.py bf16, whose docstring says what is
# checked); needs python-onnx only. Skipped when python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
timeout 120 "$PY" "$TOP/tests/ort/fuse_gqa_forms_ort.py" bf16 "$OPMIG" "$T/work" >"$T/forms.out" 2>&1
rc=$?
cat "$T/forms.out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "the fusion differs from what is expected (above)"
grep -q "^0 failures$" "$T/forms.out" || fail "fuse_gqa_forms_ort.py printed no summary"
echo "ok: bfloat16 attention left decomposed with a note"
