#!/bin/sh
# bench/validate.sh: peak memory of `opmig validate --layerwise` next to a
# plain `opmig run` of the same model (issue 6, "Benchmark"): a 50-layer
# convolutional chain whose activations (4 MiB each at the defaults)
# dominate its memory (bench/gen_deep.py).  Prints, as the median over
# BENCH_REPS runs, the peak RSS of
#   run        opmig run M --seed 1 --threads 1
#   validate   opmig validate M M --seed 1 --threads 1          (both models, outputs only)
#   layerwise  opmig validate M M --seed 1 --threads 1 --layerwise
# and the ratios to run.  See bench/README.md, "Layer-by-layer validation".
#
# Environment: OPMIG (default bin/opmig), BENCH_DIR (default
# /tmp/opmig-bench), BENCH_PYTHON (default /usr/bin/python3), BENCH_REPS
# (default 3), DEEP_LAYERS/DEEP_CHANNELS/DEEP_SIZE (50/64/128).
set -u
here=$(cd "$(dirname "$0")" && pwd) || exit 2
OPMIG=${OPMIG:-bin/opmig}
PY=${BENCH_PYTHON:-/usr/bin/python3}
work=${BENCH_DIR:-/tmp/opmig-bench}/validate
reps=${BENCH_REPS:-3}
mkdir -p "$work" || exit 2
m="$work/deep_${DEEP_LAYERS:-50}_${DEEP_CHANNELS:-64}_${DEEP_SIZE:-128}.onnx"
[ -f "$m" ] || "$PY" "$here/gen_deep.py" "$m" "${DEEP_LAYERS:-50}" "${DEEP_CHANNELS:-64}" \
	"${DEEP_SIZE:-128}" || exit 2
BENCH_NAME=validate
. "$here/lib.sh"
rm -f "$work"/*.dat
for i in $(seq "$reps"); do
	run_once run "$OPMIG" run "$m" --seed 1 --threads 1
	run_once validate "$OPMIG" validate "$m" "$m" --seed 1 --threads 1
	run_once layerwise "$OPMIG" validate "$m" "$m" --seed 1 --threads 1 --layerwise
done
med() { sort -n -k2 "$work/$1.dat" | awk '{ a[NR] = $2; w[NR] = $1 } END { m = int((NR + 1) / 2); printf "%d %.2f", a[m], w[m] }'; }
set -- $(med run); run_kb=$1; run_s=$2
printf "%-10s %10s %8s %7s\n" what peak_MiB wall_s ratio
for w in run validate layerwise; do
	set -- $(med $w)
	awk -v w=$w -v kb=$1 -v s=$2 -v r=$run_kb 'BEGIN { printf "%-10s %10.1f %8.2f %7.2f\n", w, kb / 1024, s, kb / r }'
done
