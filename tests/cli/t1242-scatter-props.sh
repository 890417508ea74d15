#!/bin/sh
# t1242-scatter-props.sh: the gather family's typed and threaded element
# walks (runtime/kernels/k_gather_par.c) on seeded random GatherElements,
# ScatterElements and ScatterND cases of every reduction, rank, axis and
# six dtypes, at one thread and two: bit for bit numpy, duplicates in
# order, an index out of range named (tests/ort/scatter_props.py).
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"
timeout 300 $PY "$TOP/tests/ort/scatter_props.py" "$OPMIG" "$T/sp" >"$T/sp.out" 2>&1
rc=$?
cat "$T/sp.out"
[ $rc -eq 0 ] || fail "gather family element walks wrong (above)"
grep -q "^73 cases, 0 failures$" "$T/sp.out" || fail "scatter_props.py printed no summary"
echo "ok: gather family element walks"
