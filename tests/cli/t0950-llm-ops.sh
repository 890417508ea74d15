#!/bin/sh
# t0950-llm-ops.sh: the com.microsoft operators of onnxruntime-genai style
# decoders in the interpreter against onnxruntime-node and a float64
# reference: MatMulNBits (2, 4 and 8 bits, block sizes 16 to 128, K not a
# multiple of the block, zero points absent, packed or float, bias, batch
# dims, float16), SkipSimplifiedLayerNormalization (bias, its optional
# outputs, float16) and SkipLayerNormalization (beta, bias, a 2-D skip,
# inputs with a mean to take out; its mean, inv_std_var and sum outputs;
# float16), tests/ort/llm_ops_ort.py.  Skipped when onnxruntime-node or
# python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
timeout 300 $PY "$TOP/tests/ort/llm_ops_ort.py" "$OPMIG" "$T/llm" >"$T/llm.out" 2>&1
rc=$?
cat "$T/llm.out"
if [ "$rc" -eq 77 ]; then
	echo "notice: onnxruntime-node absent, skipped"
	exit 0
fi
[ "$rc" -eq 0 ] || fail "the LLM operators differ from onnxruntime (above)"
grep -q "^40 cases, 0 failures" "$T/llm.out" || fail "llm_ops_ort.py printed no summary"
echo "ok: MatMulNBits, SkipSimplifiedLayerNormalization and SkipLayerNormalization agree with onnxruntime"
