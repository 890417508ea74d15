#!/bin/sh
# bench/llm_scale.sh: a 7B-parameter decoder through opmig in memory that
# follows the graph, not the weights (issue 25, items 1 and 2).  Generates
# testdata/gen/make_decoder.py's 7B preset (decomposed, 27 GB of float32
# weights in a sparse external file), writes a distinct value at the start
# of each weight (the generator's zeros would make every weight of a shape
# equal, and dedup-constants rightly merges equal weights into one), then
# measures with /usr/bin/time, each command ROUNDS times:
#   scan --target ascend
#   migrate --target ascend --precision fp16 --dry-run
#   migrate --target ascend --precision fp16 --no-validate -o OUT
#   convert IN OUT              (external data kept: OUT.data)
#   quantize --weight-only int4 --no-accuracy-check -o OUT
#   migrate --target tensorrt --opset 21 --precision int4 --no-validate -o OUT
#                               (no accuracy check either: blocked
#                                DequantizeLinear-21 of int4 codes computed
#                                while written)
#   cp --sparse=never WEIGHTS   (the issue's reference; on this sparse file
#                                it reads nothing: it finds the holes with
#                                SEEK_DATA and writes their zeros unread)
#   dd bs=4M WEIGHTS            (a copy that reads every byte, as cp does on
#                                a real, dense weights file: the same bytes
#                                read as opmig reads, all of them written)
# fp16, convert, int4, int4trt, cp and dd alternate within each round; then once
#   quantize --weight-only int4 --samples 1 (the accuracy check: the float
#   and the quantized decoder run once on 8 new tokens)
# outputs are removed
# after each command (the disk needs ~30 GB free).  Prints seconds and peak
# resident KiB per run and the median ratios to cp.
# See bench/README.md, "A 7B-shaped decoder (issue 25)".
#
# Run from the repository root:  sh bench/llm_scale.sh
#
# `sh bench/llm_scale.sh validate` (opt-in, not part of make test) instead
# runs once, on the same model, the checked and validated weight-only
# migration (bench/README.md, "Validating a 7B int4 migration"):
#   migrate --target tensorrt --opset 21 --precision int4 --force
#     --dim batch_size=1 --dim sequence_length=8 ... -o OUT
# (the accuracy check on 8 seeded samples, the fallback if it fails, the
# validation on 1 sample) under /usr/bin/time -v, sampling the process's
# RssAnon (heap, anonymous mappings) and RssFile (mapped file pages: the
# weights' page cache) every 0.5 s; prints the peaks, the time and the
# validation's verdict, and removes the output.
#
# Environment: OPMIG (default bin/opmig), BENCH_DIR (default
#   /tmp/opmig-bench), BENCH_PYTHON (default /usr/bin/python3),
#   LLM_ROUNDS (default 2), LLM_LAYERS (default: the preset's 32)
#
# Exit status: 0 done, 2 setup or a command failed.

set -u

die() { echo "llm_scale.sh: $*" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd) || die "cannot find bench/"
top=$(dirname "$here")
PY=${BENCH_PYTHON:-/usr/bin/python3}
BENCH_DIR=${BENCH_DIR:-/tmp/opmig-bench}
OPMIG=${OPMIG:-bin/opmig}
ROUNDS=${LLM_ROUNDS:-2}
case $OPMIG in /*) ;; *) OPMIG=$(pwd)/$OPMIG ;; esac
[ -x "$OPMIG" ] || die "no opmig binary at $OPMIG (make first)"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (apt-get install time)"
D=$BENCH_DIR/llm
mkdir -p "$D" || die "cannot create $D"
layers=${LLM_LAYERS:+--layers $LLM_LAYERS}

# shellcheck disable=SC2086
"$PY" "$top/testdata/gen/make_decoder.py" --preset 7b --form decomposed --sparse \
	$layers -o "$D/llm.onnx" >/dev/null || die "make_decoder.py failed"
"$PY" - "$D/llm.onnx" <<'EOF' || die "cannot stamp the weights"
import os, struct, sys
import onnx
m = onnx.load(sys.argv[1], load_external_data=False)
files = {}
for k, t in enumerate(m.graph.initializer):
    kv = {e.key: e.value for e in t.external_data}
    if "location" in kv and int(kv["length"]) >= 8:
        path = os.path.join(os.path.dirname(sys.argv[1]), kv["location"])
        f = files.setdefault(path, open(path, "r+b"))
        f.seek(int(kv.get("offset", 0)))
        f.write(struct.pack("<ff", 0.001 * (k + 1), -0.5))
for f in files.values():
    f.close()
EOF
W=$(ls "$D"/llm*.data | head -1)
echo "model: $D/llm.onnx, weights $(wc -c <"$W") bytes in $W ($(du -k "$W" | cut -f1) KiB on disk)"

# validate: the checked, validated int4 migration, memory sampled
if [ "${1:-}" = validate ]; then
	/usr/bin/time -v -o "$D/timev" "$OPMIG" migrate "$D/llm.onnx" --target tensorrt \
		--opset 21 --precision int4 --force --dim batch_size=1 \
		--dim sequence_length=8 --dim past_sequence_length=0 \
		--dim total_sequence_length=8 -o "$D/v4.onnx" >"$D/out" 2>"$D/err" &
	tpid=$!
	sleep 0.2
	pid=$(pgrep -P "$tpid" | head -1)
	: >"$D/rss"
	while kill -0 "$tpid" 2>/dev/null; do
		awk '/^RssAnon/{a=$2} /^RssFile/{f=$2} END{if (a != "") print a, f}' \
			"/proc/$pid/status" >>"$D/rss" 2>/dev/null
		sleep 0.5
	done
	wait "$tpid"
	rc=$?
	rm -f "$D/v4.onnx" "$D/v4.onnx.data"
	[ "$rc" -eq 0 ] || { cat "$D/err" >&2; die "the checked migration exited $rc"; }
	grep -E "^(note: int4|validation)" "$D/out"
	grep -E "Elapsed|User time|System time|Maximum resident" "$D/timev"
	awk '{if ($1 > a) a = $1; if ($2 > f) f = $2} END{printf "peak RssAnon %d KiB, peak RssFile %d KiB\n", a, f}' "$D/rss"
	exit 0
fi

# measure NAME CMD...: one run; appends "NAME seconds KiB" to $D/times
measure() {
	name=$1; shift
	sync
	/usr/bin/time -f "%e %M" -o "$D/t" "$@" >"$D/out" 2>"$D/err" ||
		{ cat "$D/err" >&2; die "$name failed: $*"; }
	read -r s kb <"$D/t"
	echo "$name $s $kb" >>"$D/times"
	printf '%-8s %8.2f s %9d KiB\n' "$name" "$s" "$kb"
}

: >"$D/times"
measure scan "$OPMIG" scan "$D/llm.onnx" --target ascend
measure dry "$OPMIG" migrate "$D/llm.onnx" --target ascend --precision fp16 --dry-run
r=1
while [ "$r" -le "$ROUNDS" ]; do
	measure fp16 "$OPMIG" migrate "$D/llm.onnx" --target ascend --precision fp16 \
		--no-validate -o "$D/f16.onnx"
	rm -f "$D/f16.onnx" "$D/f16.onnx.data"
	measure cp cp --sparse=never "$W" "$D/copy.data"
	rm -f "$D/copy.data"
	measure dd dd if="$W" of="$D/copy.data" bs=4M
	rm -f "$D/copy.data"
	measure convert "$OPMIG" convert "$D/llm.onnx" "$D/c.onnx"
	rm -f "$D/c.onnx" "$D/c.onnx.data"
	measure int4 "$OPMIG" quantize "$D/llm.onnx" --weight-only int4 --no-accuracy-check \
		-o "$D/q4.onnx"
	rm -f "$D/q4.onnx" "$D/q4.onnx.data"
	measure int4trt "$OPMIG" migrate "$D/llm.onnx" --target tensorrt --opset 21 \
		--precision int4 --no-validate -o "$D/t4.onnx"
	rm -f "$D/t4.onnx" "$D/t4.onnx.data"
	r=$((r + 1))
done
# with the check: the criterion on random weights is not the point (--force)
measure int4chk "$OPMIG" quantize "$D/llm.onnx" --weight-only int4 --samples 1 --force \
	--dim batch_size=1 --dim sequence_length=8 --dim past_sequence_length=0 \
	--dim total_sequence_length=8 -o "$D/q4.onnx"
rm -f "$D/q4.onnx" "$D/q4.onnx.data"
"$PY" - "$D/times" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    name, s, kb = line.split()
    runs.setdefault(name, []).append((float(s), int(kb)))
med = {k: statistics.median(s for s, _ in v) for k, v in runs.items()}
for k in ("fp16", "convert", "int4", "int4trt", "int4chk"):
    if k in med and med.get("cp") and med.get("dd"):
        print("%s / cp (median seconds): %.2f, / dd: %.2f; peak %d KiB" %
              (k, med[k] / med["cp"], med[k] / med["dd"], max(kb for _, kb in runs[k])))
EOF
