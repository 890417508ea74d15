#!/bin/sh
# t1247-pool-bool-props.sh: the typed paths of the boolean, comparison and
# Cast kernels (k_binary.c, k_elem.c, k_elem_cmp.c, k_cast.c) bit for bit
# what the per-element paths computed, and stride-1 MaxPools of large
# windows by doubling (k_pool_win.c) each window's max, NaN kept, on
# seeded random cases at one thread and two, against numpy references and
# onnxruntime-node (tests/ort/pool_bool_props.py).
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"
timeout 300 $PY "$TOP/tests/ort/pool_bool_props.py" "$OPMIG" "$T/pb" >"$T/pb.out" 2>&1
rc=$?
cat "$T/pb.out"
[ $rc -eq 77 ] && exit 0
[ $rc -eq 0 ] || fail "a fast path differs (above)"
grep -q "^0 failures$" "$T/pb.out" || fail "pool_bool_props.py printed no summary"
[ "$(grep -c '^ok: MaxPool .* thread(s): each window' "$T/pb.out")" -eq 80 ] ||
	fail "not every MaxPool case ran at one thread and two"
[ "$(grep -c '^ok: .* bit for bit$' "$T/pb.out")" -eq 716 ] ||
	fail "not every elementwise case ran"
echo "ok: boolean, comparison, Cast and large MaxPool paths as before, and as onnxruntime's"
