#!/bin/sh
# bench/batch.sh: models per minute of `opmig batch` (issue 8) over the test
# zoo of tests/cli/t1200-batch.sh (testdata models plus ../shared/models/
# onnx-light when present), for --mode scan and --mode migrate at -j 1 and
# -j 2; and, for scale, the same models through one `opmig scan -o` and one
# `opmig inspect` process
# each (parse + verify + process start-up) and through `opmig --version`
# (process start-up alone); and a --resume that keeps every job: the cost
# of a job's worker (fork, hashing, reading result.json) without the work.  Run from the repository root:
#   sh bench/batch.sh            (OPMIG=bin/opmig, TARGET=ascend)
set -u
OPMIG=${OPMIG:-bin/opmig}
TARGET=${TARGET:-ascend}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/zoo/scan" "$W/zoo/models" "$W/zoo/ext"
cp testdata/sample.onnx "$W/zoo/" && cp testdata/scan/*.onnx "$W/zoo/scan/" &&
	cp testdata/models/*.onnx "$W/zoo/models/" && cp testdata/ext/* "$W/zoo/ext/" || exit 2
for f in ../shared/models/onnx-light/*.onnx; do
	[ -f "$f" ] && mkdir -p "$W/zoo/light" && cp "$f" "$W/zoo/light/"
done
n=$(find "$W/zoo" -name '*.onnx' | wc -l)
now() { date +%s.%N; }
rate() { awk -v n="$n" -v a="$1" -v b="$2" 'BEGIN { t = b - a; printf "%7.2f s  %8.1f models/min\n", t, 60 * n / t }'; }
echo "zoo: $n models, target $TARGET, $(nproc) cores"
for mode in ${MODES:-scan migrate}; do
	for j in 1 2; do
		a=$(now)
		"$OPMIG" batch "$W/zoo" --target "$TARGET" --mode $mode -j $j -o "$W/out-$mode-$j" -q
		b=$(now)
		printf 'batch --mode %-7s -j %s         %s\n' $mode $j "$(rate "$a" "$b")"
	done
done
a=$(now)
"$OPMIG" batch "$W/zoo" --target generic-npu,tensorrt,ascend,rknpu2,qnn,coreml,nnapi,openvino \
	-j 2 -o "$W/out-scan-8" -q
b=$(now)
printf 'batch scan, 8 targets, -j 2      %s (x 8 jobs)\n' "$(rate "$a" "$b")"
a=$(now)
"$OPMIG" batch "$W/zoo" --target "$TARGET" -j 1 -o "$W/out-scan-1" -q --resume
b=$(now)
printf 'batch --resume, all kept, -j 1  %s\n' "$(rate "$a" "$b")"
a=$(now)
i=0
find "$W/zoo" -name '*.onnx' | while read -r f; do
	i=$((i + 1))
	"$OPMIG" scan "$f" --target "$TARGET" --format json -o "$W/scan-$i.json" --fail-on never >/dev/null 2>&1
done
b=$(now)
printf 'scan -o, a process per model    %s\n' "$(rate "$a" "$b")"
a=$(now)
find "$W/zoo" -name '*.onnx' | while read -r f; do "$OPMIG" inspect "$f" >/dev/null 2>&1; done
b=$(now)
printf 'inspect, a process per model    %s\n' "$(rate "$a" "$b")"
a=$(now)
find "$W/zoo" -name '*.onnx' | while read -r f; do "$OPMIG" --version >/dev/null; done
b=$(now)
printf 'opmig --version per model       %s\n' "$(rate "$a" "$b")"
