#!/bin/sh
# bench/interp.sh: per-inference time of the reference interpreter (`opmig
# run`) next to onnxruntime on the same machine and thread count (issue 5,
# "Benchmark").  See bench/README.md, "Interpreter speed (issue 5)".
#
# Run from the repository root:  sh bench/interp.sh
#
# Models (bench/gen_nets.py, random weights, regenerated when missing or
# when the generator changed) go to $BENCH_DIR/interp.  For each model and
# each thread count, $INTERP_ROUNDS rounds alternate
#   opmig run MODEL --time --repeat R --threads T     (median of R runs)
#   node bench/ort_time.js MODEL T R                  (onnxruntime-node, same)
# and the table shows the median over the rounds of each tool's median,
# then each tool's fastest run over all rounds and the ratio of those: on
# a shared machine the other tenants only ever add time, and they add it
# in bursts that can move a median by a third (bench/README.md).
# onnxruntime-node comes from .cache/npm (tools/npm_deps.sh, run by make
# deps; $OPMIG_ORT_DIR overrides), installed there when missing.
#
# Environment:
#   OPMIG           opmig binary (default bin/opmig)
#   BENCH_DIR       models (default /tmp/opmig-bench)
#   BENCH_PYTHON    python with onnx and numpy (default /usr/bin/python3)
#   INTERP_MODELS   default "resnet50 mobilenetv2 bert6" and every model in
#                   INTERP_SHARED; a path ending in .onnx is measured as it is
#   INTERP_SHARED   the real architectures measured by default (default
#                   ../shared/models/onnx-light beside the repository, when
#                   present; their weights are ConstantOfShape outputs, which
#                   both tools compute once per session)
#   INTERP_THREADS  default "1 2"
#   INTERP_REPEAT   runs per measurement (default 5)
#   INTERP_ROUNDS   alternating rounds (default 3)
#   INTERP_CLOCK    wall (default): each tool's wall time per run;
#                   cpu: each tool's CPU time per run (user + sys, all
#                   its threads, read in the process around each run:
#                   `opmig run --time`'s cpu line, ort_time.js's), for
#                   machines whose other tenants make wall times noisy: a
#                   process that waits for a CPU spends no CPU time
#                   meanwhile.  Meaningful at 1 thread; with more, the
#                   pools' spinning threads count
#   OPENBLAS_CORETYPE  passed on; when unset, set to SkylakeX on CPUs with
#                   avx512f and Haswell on CPUs with avx2, because
#                   OpenBLAS 0.3.21 does not recognise this VM's CPU model
#                   and falls back to its generic (Prescott) kernels
#
# Exit status: 0 done, 2 setup or a command failed.

set -u

die() { echo "interp.sh: $*" >&2; exit 2; }
note() { echo "interp.sh: $*" >&2; }

here=$(cd "$(dirname "$0")" && pwd) || die "cannot find bench/"
PY=${BENCH_PYTHON:-/usr/bin/python3}
BENCH_DIR=${BENCH_DIR:-/tmp/opmig-bench}
OPMIG=${OPMIG:-bin/opmig}
SHARED=${INTERP_SHARED:-$here/../../shared/models/onnx-light}
MODELS=${INTERP_MODELS:-resnet50 mobilenetv2 bert6 $(ls "$SHARED"/*.onnx 2>/dev/null)}
THREADS=${INTERP_THREADS:-1 2}
REPEAT=${INTERP_REPEAT:-5}
ROUNDS=${INTERP_ROUNDS:-3}
CLOCK=${INTERP_CLOCK:-wall}
case $CLOCK in wall|cpu) ;; *) die "INTERP_CLOCK must be wall or cpu" ;; esac
D=$BENCH_DIR/interp
ORT=${OPMIG_ORT_DIR:-$here/../.cache/npm/node_modules/onnxruntime-node}

case $OPMIG in
/*) ;;
*/*) OPMIG=$(pwd)/$OPMIG ;;
*) OPMIG=$(command -v "$OPMIG") || die "opmig binary '$OPMIG' not found" ;;
esac
[ -x "$OPMIG" ] || die "no opmig binary at $OPMIG"
command -v node >/dev/null || die "needs node (nodejs) for onnxruntime-node"
"$PY" -c 'import onnx, numpy' 2>/dev/null || die "$PY cannot import onnx and numpy"

if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
	if grep -q ' avx512f' /proc/cpuinfo; then
		OPENBLAS_CORETYPE=SkylakeX
	elif grep -q ' avx2' /proc/cpuinfo; then
		OPENBLAS_CORETYPE=Haswell
	fi
	[ -n "${OPENBLAS_CORETYPE:-}" ] && export OPENBLAS_CORETYPE
fi

[ -d "$ORT" ] || sh "$here/../tools/npm_deps.sh"
[ -d "$ORT" ] || die "onnxruntime-node not installed (tools/npm_deps.sh)"
ORT_VERSION=$(node -p "require('$ORT/package.json').version") || die "cannot load onnxruntime-node"

mkdir -p "$D" || die "cannot create $D"
stamp=$(cksum < "$here/gen_nets.py")
if [ ! -f "$D/bert6.onnx" ] || [ "$(cat "$D/stamp" 2>/dev/null)" != "$stamp" ]; then
	note "generating models in $D"
	"$PY" "$here/gen_nets.py" "$D" || die "gen_nets.py failed"
	echo "$stamp" > "$D/stamp"
fi

work=$(mktemp -d "$D/run.XXXXXX") || die "cannot create a scratch folder"
trap 'rm -rf "$work"' EXIT
trap 'exit 2' HUP INT TERM

# median of the numbers on stdin
median() {
	sort -n | awk '{ a[NR] = $1 } END {
		if (NR == 0) print "nan"
		else if (NR % 2) print a[(NR + 1) / 2]
		else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# smallest of the numbers on stdin
least() { sort -n | head -n 1; }

# time_of LINE: the median and the minimum ms of a "... min Y ms, median
# X ms ..." line
time_of() { sed -n 's/.*min \([0-9.]*\) ms, median \([0-9.]*\) ms.*/\2 \1/p'; }

# per_run TOOL MODEL THREADS: one measurement of ms per inference (the
# "time:" line of each tool, or its "cpu:" line with INTERP_CLOCK=cpu)
per_run() {
	if [ "$1" = opmig ]; then
		"$OPMIG" run "$2" --time --repeat "$REPEAT" --threads "$3" \
			> "$work/out" 2>&1 || { cat "$work/out" >&2; die "opmig run $2 failed"; }
	else
		node "$here/ort_time.js" "$2" "$3" "$REPEAT" > "$work/out" 2>&1 ||
			{ cat "$work/out" >&2; die "onnxruntime failed on $2"; }
	fi
	if [ "$CLOCK" = cpu ]; then
		grep 'cpu: ' "$work/out" | time_of
	else
		grep -v 'cpu: ' "$work/out" | time_of
	fi
}

echo "opmig interpreter vs onnxruntime, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "opmig:   $OPMIG (tree $(git -C "$here/.." log -1 --format=%h 2>/dev/null || echo "?"))"
echo "ort:     onnxruntime-node $ORT_VERSION, node $(node --version)"
echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
echo "blas:    OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) at start"
if [ "$CLOCK" = cpu ]; then
	echo "runs:    median of $ROUNDS rounds (tools alternating) of each tool's median CPU time"
	echo "         of $REPEAT runs (read in the process around each run); min: the least"
else
	echo "runs:    median of $ROUNDS rounds (tools alternating) of each tool's median of $REPEAT runs"
	echo "         (ort after one warm-up run; opmig has none, its median discounts the first runs);"
	echo "         min: each tool's fastest run over all rounds (the other tenants only add time)"
fi
echo
printf '%-20s %7s %12s %12s %9s %10s %10s %9s\n' model threads "opmig ms" "ort ms" \
	"opmig/ort" "opmig min" "ort min" "min/min"
[ "$CLOCK" = cpu ] && echo "(CPU ms per inference)"
for m in $MODELS; do
	case $m in
	*.onnx) f=$m; name=$(basename "$m" .onnx) ;;
	*) f=$D/$m.onnx; name=$m ;;
	esac
	[ -f "$f" ] || die "no model $f"
	for t in $THREADS; do
		: > "$work/o"
		: > "$work/r"
		r=0
		while [ $r -lt "$ROUNDS" ]; do
			per_run opmig "$f" "$t" >> "$work/o"
			per_run ort "$f" "$t" >> "$work/r"
			r=$((r + 1))
		done
		o=$(cut -d' ' -f1 "$work/o" | median)
		x=$(cut -d' ' -f1 "$work/r" | median)
		om=$(cut -d' ' -f2 "$work/o" | least)
		xm=$(cut -d' ' -f2 "$work/r" | least)
		printf '%-20s %7s %12.1f %12.1f %8.2fx %10.1f %10.1f %8.2fx\n' "$name" "$t" \
			"$o" "$x" "$(awk -v a="$o" -v b="$x" 'BEGIN { print a / b }')" \
			"$om" "$xm" "$(awk -v a="$om" -v b="$xm" 'BEGIN { print a / b }')"
	done
done
echo
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) at end"
