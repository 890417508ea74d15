#!/bin/sh
# opsets.sh [OUTDIR]: the opset sweep: every node case of the ONNX backend
# suite migrated by `opmig batch` to each default-domain opset from 7 to 21
# (one target per opset, written by opset_rules.py: that opset and every
# operator), then judged by judge.py: a written model must pass
# onnx.checker (opset <= 17) and give the case's expected outputs in
# onnxruntime-node; a conversion opmig cannot express is refused (not
# written, the reason in the report's notes).  Fails on any invalid or
# differing model, including one opmig's own strict check caught.
# The batch runs with --no-validate: the judge checks every written model
# on the case's own data, where opmig's check on generated inputs cannot
# run for many cases (index inputs); SWEEP_VALIDATE=1 keeps that check.
# Environment: OPMIG (required); SWEEP_OPSETS (default 7..21), SWEEP_EVERY
# (only every N-th case, sorted by name; default 1), SWEEP_DATA,
# SWEEP_JOBS.  Skipped when the test data or onnxruntime-node is absent.
: "${OPMIG:?set OPMIG to the opmig binary}"
here=$(cd "$(dirname "$0")" && pwd)
DATA=${SWEEP_DATA:-/usr/share/libonnx-testdata/data/node}
OPSETS=${SWEEP_OPSETS:-7 8 9 10 11 12 13 14 15 16 17 18 19 20 21}
EVERY=${SWEEP_EVERY:-1}
out=${1:-$(mktemp -d)}
[ -d "$DATA" ] || { echo "notice: $DATA absent, sweep skipped"; exit 0; }
mkdir -p "$out" && rm -rf "$out/batch" "$out/rules" "$out/cases"
/usr/bin/python3 "$here/opset_rules.py" "$OPMIG" "$out/rules" $OPSETS || exit 1
targets= rules=
for k in $OPSETS; do
	targets=${targets:+$targets,}opset-$k
	rules="$rules --rules $out/rules/opset-$k.json"
done
src=$DATA
if [ "$EVERY" -gt 1 ]; then
	# the sample: links to every EVERY-th case's model, named as in DATA
	src=$out/cases
	for d in "$DATA"/*/; do
		[ -f "$d/model.onnx" ] && basename "$d"
	done | LC_ALL=C sort | awk -v n="$EVERY" 'NR % n == 1' | while read -r c; do
		mkdir -p "$src/$c" && ln -s "$DATA/$c/model.onnx" "$src/$c/model.onnx"
	done
fi
novalidate=--no-validate
[ "${SWEEP_VALIDATE:-0}" = 1 ] && novalidate=
# shellcheck disable=SC2086
"$OPMIG" batch "$src" --target "$targets" $rules --mode migrate $novalidate -j "${SWEEP_JOBS:-2}" \
	--timeout 120 --quiet -o "$out/batch" >"$out/batch.log" 2>&1
rc=$?
[ $rc -le 1 ] || { tail -20 "$out/batch.log"; echo "FAIL: opmig batch exited $rc"; exit 1; }
/usr/bin/python3 "$here/judge.py" "$out/batch" "$DATA" --refusals --gaps "$here/ort_gaps.txt" \
	--report "$out/judge.json" --work "$out/ort"
