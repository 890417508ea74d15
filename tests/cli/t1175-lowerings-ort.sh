#!/bin/sh
# t1170-lowerings-ort.sh: the decompositions against onnxruntime.  Random
# single-op models (ConvTranspose of every formulation, Max/Min, the
# comparisons, TopK k = 1, Cast identities, DepthToSpace/SpaceToDepth,
# Reduce*, LpNormalization, GroupNormalization, Gather, Clip, Sigmoid, Tanh,
# Neg, Sign, Softplus, Softsign, ThresholdedRelu, Mish, Expand/Tile, the
# losses NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss,
# LayerNormalization with its statistics, CastLike, ArgMax/ArgMin,
# ReduceMax/ReduceMin as MaxPool, Trilu with k an input, GatherElements,
# integer Mod, MatMulNBits, SkipSimplifiedLayerNormalization) go through
# `opmig migrate --passes PASS --rules RULES` to test targets lacking the
# op; the results pass onnx.checker and compute in onnxruntime-node what
# the originals compute (tests/ort/lowerings.py, one node process for
# all).  Skipped when onnxruntime-node or python-onnx is absent.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
timeout 900 $PY "$TOP/tests/ort/lowerings.py" "$OPMIG" "$T/work" >"$T/out" 2>&1
rc=$?
cat "$T/out"
[ "$rc" -eq 77 ] && exit 0
[ "$rc" -eq 0 ] || fail "the lowerings disagree with onnxruntime (above)"
grep -q "failures$" "$T/out" || fail "no summary"
