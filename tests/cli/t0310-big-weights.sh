#!/bin/sh
# t0310: weights larger than the memory opmig is given.  A model with 1 GiB
# of external float32 weights (a sparse file: seeded values at 64 places
# per weight, zeros elsewhere) is converted and migrated to float16 under
# an address-space limit of a quarter of its weights: the weights are
# mapped one at a time and the float16 ones computed while written; what
# is written keeps its weights external, passes onnx.checker's full check
# and holds the right values; a dry run reads no weight (its page faults
# and bytes read stay those of a run that touches none); onnxruntime-node
# loads the
# outputs.  A 2.1 GB model (past protobuf's 2 GiB) round-trips through
# convert with its weights in OUT.data.
. "$TOP/tests/cli/lib.sh"
cd "$TOP" || fail "cannot cd to $TOP"
BW="$PY tests/verify/big_weights.py"
LIMIT_KB=262144      # a quarter of the 1 GiB of weights
RUN_LIMIT=240
# AddressSanitizer reserves terabytes of address space for its shadow and
# faults its pages in: under it the limit and the page-fault bound do not
# apply (the values, the read bytes and the round trip still do)
case $OPMIG in */asan/*) LIMIT_KB=unlimited FAULTS_MAX=1000000000 ;; *) FAULTS_MAX=4000 ;; esac

$BW make "$T/m" 64 2048 >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "cannot make the model"; }
M="$T/m/model.onnx"


# 1. convert keeps the weights external (OUT.data beside OUT)
limited 0 "$OPMIG" convert "$M" "$T/c.onnx"
[ -f "$T/c.onnx.data" ] || fail "convert wrote no c.onnx.data: $(ls "$T")"
[ "$(wc -c <"$T/c.onnx")" -lt 1000000 ] || fail "convert inlined weights into c.onnx"
$BW check "$M" "$T/c.onnx" >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "convert's output"; }

# 2. float16 migration: weights converted piece by piece into OUT.data
limited 0 "$OPMIG" migrate "$M" --target ascend --precision fp16 --no-validate -o "$T/f.onnx"
$BW check "$M" "$T/f.onnx" >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "fp16 migration's output"; }
[ "$(wc -c <"$T/f.onnx.data")" -eq $((64 * 2048 * 2048 * 2)) ] ||
	fail "f.onnx.data has $(wc -c <"$T/f.onnx.data") bytes, want the float16 weights'"

# 3. --external-data names the file; --size-threshold keeps small ones inline
limited 0 "$OPMIG" migrate "$M" --target ascend --precision fp16 --no-validate \
	-o "$T/g.onnx" --external-data g.bin --size-threshold 1M
[ -f "$T/g.bin" ] && [ ! -e "$T/g.onnx.data" ] || fail "--external-data g.bin not followed: $(ls "$T")"
$BW check "$M" "$T/g.onnx" >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "--external-data output"; }
run 2 "$OPMIG" migrate "$M" --target ascend -o "$T/h.onnx" --size-threshold lots

# 4. a dry run reads no weight: mapped, the 1 GiB would fault ~16,000
#    pages in; read, it would count 1 GiB of read bytes
$BW usage "$OPMIG" migrate "$M" --target ascend --precision fp16 --dry-run >"$T/use" 2>&1 ||
	{ cat "$T/use" >&2; fail "dry run"; }
read -r rc faults bytes rss <"$T/use"
[ "$rc" -eq 0 ] || fail "dry run exited $rc"
[ "$faults" -lt "$FAULTS_MAX" ] || fail "dry run took $faults page faults: it read weights"
[ "$bytes" -lt 16000000 ] || fail "dry run read $bytes bytes: it read weights"
$BW usage "$OPMIG" convert "$M" "$T/c2.onnx" >"$T/use" 2>&1 || { cat "$T/use" >&2; fail "convert"; }
read -r rc faults2 bytes2 rss <"$T/use"
[ "$bytes2" -gt 1000000000 ] || [ "$faults2" -gt 16000 ] ||
	fail "convert read $bytes2 bytes with $faults2 page faults: the probe cannot see it read 1 GiB"
rm -f "$T/c2.onnx" "$T/c2.onnx.data"

# 5. onnxruntime-node loads what was written
$BW ort "$M" "$T/c.onnx" "$T/f.onnx" >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "onnxruntime-node"; }
grep -q '^skip' "$T/py" && cat "$T/py"
rm -rf "$T/c.onnx"* "$T/f.onnx"* "$T/g.onnx" "$T/g.bin" "$T/m"

# 6. past 2 GiB: 34 weights of 64 MiB round-trip through convert
$BW make "$T/b" 34 4096 >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "cannot make the 2 GiB model"; }
limited 0 "$OPMIG" convert "$T/b/model.onnx" "$T/b1.onnx"
limited 0 "$OPMIG" convert "$T/b1.onnx" "$T/b2.onnx"
cmp -s "$T/b1.onnx.data" "$T/b2.onnx.data" || fail "the 2 GiB weights changed in a round trip"
$BW check "$T/b/model.onnx" "$T/b2.onnx" >"$T/py" 2>&1 || { cat "$T/py" >&2; fail "2 GiB round trip"; }
echo "ok: 1 GiB of weights converted and migrated under ulimit -v $LIMIT_KB KiB, dry run $faults page faults and $bytes bytes read (convert $faults2, $bytes2), 2.1 GB round trip"
