#!/bin/sh
# t1244-einsum-props.sh: Einsum's contractions over the session's threads
# (runtime/kernels/k_einsum.c) on seeded random operands of exporters'
# equations (projections and attention as TF/JAX/ALBERT write them,
# batched products, outer product, trace, sums, ellipsis), float32,
# float64 and int64, at one thread and two: within 1e-5 of numpy's einsum
# in float64, int64 exact (tests/ort/einsum_props.py).
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"
timeout 300 $PY "$TOP/tests/ort/einsum_props.py" "$OPMIG" "$T/ein" >"$T/ein.out" 2>&1
rc=$?
cat "$T/ein.out"
[ $rc -eq 0 ] || fail "Einsum differs from numpy (above)"
grep -q "^31 cases, 0 failures$" "$T/ein.out" || fail "einsum_props.py printed no summary"
echo "ok: Einsum against numpy at one and two threads"
