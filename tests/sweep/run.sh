#!/bin/sh
# run.sh [--update] [OUTDIR]: the migrate sweep: every node case of the
# ONNX backend suite migrated to every shipped target by `opmig batch`
# (validated in the interpreter as migrate always does), then judged by
# judge.py: onnx.checker, the interface, and onnxruntime-node on the
# case's own inputs against its expected outputs.  Per-target counts of
# migrated-and-equal cases must not fall below tests/sweep/counts.txt.
# Needs $OPMIG; skipped when the test data or onnxruntime-node is absent.
# SWEEP_SAMPLE=N takes every Nth case only (sorted by name), for slow
# builds: the counts are then not compared.
: "${OPMIG:?set OPMIG to the opmig binary}"
here=$(cd "$(dirname "$0")" && pwd)
DATA=${SWEEP_DATA:-/usr/share/libonnx-testdata/data/node}
TARGETS=${SWEEP_TARGETS:-generic-npu,tensorrt,ascend,qnn,coreml,nnapi,openvino,rknpu2,opencv-dnn}
upd=
[ "${1:-}" = --update ] && { upd=--update; shift; }
out=${1:-$(mktemp -d)}
[ -d "$DATA" ] || { echo "notice: $DATA absent, sweep skipped"; exit 0; }
mkdir -p "$out" && rm -rf "$out/batch" "$out/sample"
counts="--counts $here/counts.txt"
if [ "${SWEEP_SAMPLE:-1}" -gt 1 ]; then
	mkdir "$out/sample" || exit 1
	ls "$DATA" | LC_ALL=C sort | awk -v n="$SWEEP_SAMPLE" 'NR % n == 1' |
		while read -r c; do cp -r "$DATA/$c" "$out/sample/$c"; done
	DATA=$out/sample
	counts=
fi
"$OPMIG" batch "$DATA" --target "$TARGETS" --mode migrate -j "${SWEEP_JOBS:-2}" \
	--timeout 120 -o "$out/batch" >"$out/batch.log" 2>&1
rc=$?
[ $rc -le 1 ] || { tail -20 "$out/batch.log"; echo "FAIL: opmig batch exited $rc"; exit 1; }
# shellcheck disable=SC2086
/usr/bin/python3 "$here/judge.py" "$out/batch" "$DATA" $counts $upd \
	--report "$out/judge.json" --work "$out/ort"
