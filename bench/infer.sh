#!/bin/sh
# bench/infer.sh: scaling of opmig's shape inference with graph size (issue 3).
#
# Run from the repository root:  sh bench/infer.sh
#
# Generates transformer-like models of $INFER_SIZES nodes under
# $BENCH_DIR/infer with bench/gen_transformer.py (when missing or the
# generator changed), then for each model measures wall time and peak RSS of
#   opmig inspect MODEL              load + verify + summary
#   opmig inspect MODEL --shapes     the same + inference + print every value
#   python onnx.load(MODEL)          reference: load only
#   python onnx.load + onnx.shape_inference.infer_shapes(m, data_prop=True)
#                                    reference: load + inference with
#                                    symbolic shape-data propagation
# one discarded warm-up each, then $BENCH_REPS rounds of the four commands
# (rotating which goes first), and reports medians, time per node and the
# largest/smallest ratios.  stdout of every command goes to /dev/null.
# See bench/README.md, "Inference scaling (issue 3)".
#
# Environment:
#   OPMIG         opmig binary (default bin/opmig)
#   BENCH_DIR     models and scratch (default /tmp/opmig-bench)
#   BENCH_REPS    measured rounds (default 5)
#   BENCH_PYTHON  python with onnx and numpy (default /usr/bin/python3)
#   INFER_SIZES   node counts (default "10000 30000 100000"); ratios are
#                 between the last and the first
#
# Exit status: 0 done, 2 setup or a command failed.  The report goes to
# stdout and to $BENCH_DIR/infer/last-report.txt.

set -u

die() { echo "infer.sh: $*" >&2; exit 2; }
note() { echo "infer.sh: $*" >&2; }

here=$(cd "$(dirname "$0")" && pwd) || die "cannot find bench/"
PY=${BENCH_PYTHON:-/usr/bin/python3}
BENCH_DIR=${BENCH_DIR:-/tmp/opmig-bench}
REPS=${BENCH_REPS:-5}
OPMIG=${OPMIG:-bin/opmig}
SIZES=${INFER_SIZES:-10000 30000 100000}
D=$BENCH_DIR/infer

case $REPS in ''|*[!0-9]*|0) die "BENCH_REPS must be a positive integer" ;; esac
case $OPMIG in
/*) ;;
*/*) OPMIG=$(pwd)/$OPMIG ;;
*) OPMIG=$(command -v "$OPMIG") || die "opmig binary '$OPMIG' not found" ;;
esac
[ -x "$OPMIG" ] || die "no opmig binary at $OPMIG"
[ -x /usr/bin/time ] || die "needs GNU time at /usr/bin/time"
"$PY" -c 'import onnx, numpy' 2>/dev/null || die "$PY cannot import onnx and numpy"
SHAPES=1
"$OPMIG" inspect --help 2>&1 | grep -q -- --shapes || {
	SHAPES=0
	note "this opmig has no 'inspect --shapes': inference rows are skipped"
}

mkdir -p "$D" || die "cannot create $D"
work=$(mktemp -d "$D/run.XXXXXX") || die "cannot create a scratch folder"
trap 'rm -rf "$work"' EXIT
trap 'exit 2' HUP INT TERM

stamp=$(cksum < "$here/gen_transformer.py")
for n in $SIZES; do
	f=$D/transformer-$n.onnx
	if [ ! -f "$f" ] || [ "$(cat "$f.stamp" 2>/dev/null)" != "$stamp" ]; then
		note "generating $f"
		"$PY" "$here/gen_transformer.py" "$D" "$n" || die "gen_transformer.py failed"
		echo "$stamp" > "$f.stamp"
	fi
done

LOAD='import sys, onnx; onnx.load(sys.argv[1])'
INFER='import sys, onnx; onnx.shape_inference.infer_shapes(onnx.load(sys.argv[1]), data_prop=True)'

BENCH_NAME=infer.sh
. "$(dirname "$0")/lib.sh"

# cmd K MODEL: run command K (ins, shp, pyl, pyi) on MODEL.
cmd() {
	case $1 in
	ins) run_once "$3.$1" "$OPMIG" inspect "$2" ;;
	shp) run_once "$3.$1" "$OPMIG" inspect "$2" --shapes ;;
	pyl) run_once "$3.$1" "$PY" -c "$LOAD" "$2" ;;
	pyi) run_once "$3.$1" "$PY" -c "$INFER" "$2" ;;
	esac
}
KINDS="ins pyl pyi"
[ $SHAPES = 1 ] && KINDS="ins shp pyl pyi"

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
note "baselines"
for i in 0 1 2 3 4; do run_once base.true true; done
for i in 0 1 2; do run_once base.import "$PY" -c 'import onnx'; done
for n in $SIZES; do
	f=$D/transformer-$n.onnx
	note "measuring $n nodes ($REPS rounds)"
	# sanity: the --shapes output has one line per value
	if [ $SHAPES = 1 ]; then
		"$OPMIG" inspect "$f" --shapes > "$work/shapes.txt" || die "opmig inspect --shapes failed on $f"
		echo "$n $(sed -n '/^values:/,$p' "$work/shapes.txt" | grep -c '^  ')" >> "$work/values"
	fi
	for k in $KINDS; do cmd $k "$f" warmup; done
	i=0
	while [ $i -lt "$REPS" ]; do
		# rotate the order each round so slow phases hit every command
		set -- $KINDS
		j=0
		while [ $j -lt $((i % $#)) ]; do
			first=$1; shift; set -- "$@" "$first"; j=$((j + 1))
		done
		for k in "$@"; do cmd $k "$f" "n$n"; done
		i=$((i + 1))
	done
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

nodes_of() {
	"$OPMIG" inspect "$1" | sed -n 's/^nodes: \([0-9]*\).*/\1/p'
}

report=$work/report
{
	echo "opmig inference scaling, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "opmig:   $OPMIG, sha256 $(sha256sum "$OPMIG" | cut -c1-16)"
	echo "python:  $PY, onnx $("$PY" -c 'import onnx; print(onnx.__version__)')"
	echo "machine: $(nproc) CPUs, $(grep -m1 '^model name' /proc/cpuinfo | sed 's/.*: //'), $(awk '/^MemTotal/ { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo)"
	echo "load:    $load_start at start, $load_end at end (1/5/15 min)"
	echo "runs:    median of $REPS after 1 warm-up, 4 commands rotated each round"
	echo "timer:   wall by date +%s%N around /usr/bin/time -f '%e %M'; RSS = peak resident set, MB = 10^6 bytes"
	awk -v t="$(agg base.true 1)" -v i="$(agg base.import 1)" -v r="$(agg base.import 2)" 'BEGIN {
		printf "baselines: timer overhead (true) %.3f s; python -c \"import onnx\" %.3f s, %.1f MB\n\n", t, i, r * 1024 / 1e6 }'
	echo "commands: ins = opmig inspect M; shp = opmig inspect M --shapes;"
	echo "          pyl = python onnx.load(M); pyi = python onnx.load + infer_shapes(data_prop=True)"
	echo
	printf '%-7s %8s %4s %9s %9s %8s %10s %9s\n' nodes "file MB" cmd "time s" "us/node" "RSS MB" "min..max s" "vs shp"
	for n in $SIZES; do
		f=$D/transformer-$n.onnx
		nn=$(nodes_of "$f")
		echo "$n $nn" >> "$work/nodes"
		for k in $KINDS; do
			awk -v n="$nn" -v fs="$(wc -c < "$f")" -v k=$k -v t="$(agg n$n.$k 1)" \
			    -v a="$(agg n$n.$k 1 min)" -v b="$(agg n$n.$k 1 max)" -v r="$(agg n$n.$k 2)" \
			    -v s="$( [ $SHAPES = 1 ] && agg n$n.shp 1)" 'BEGIN {
				printf "%-7d %8.1f %4s %9.3f %9.2f %8.1f %s %9s\n", n, fs / 1e6, k, t, t / n * 1e6,
				    r * 1024 / 1e6, sprintf("%.3f..%.3f", a, b), s == "" ? "-" : sprintf("%.2fx", t / s) }'
		done
	done
	echo
	if [ $SHAPES = 1 ]; then
		echo "inference only (median shp - median ins), per node:"
		for n in $SIZES; do
			nn=$(awk -v n=$n '$1 == n { print $2 }' "$work/nodes")
			awk -v n="$nn" -v s="$(agg n$n.shp 1)" -v i="$(agg n$n.ins 1)" \
			    -v sr="$(agg n$n.shp 2)" -v ir="$(agg n$n.ins 2)" \
			    -v v="$(awk -v n=$n '$1 == n { print $2 }' "$work/values")" 'BEGIN {
				printf "  %7d nodes: %.3f s, %.2f us/node; +%.1f MB RSS; %d values printed\n",
				    n, s - i, (s - i) / n * 1e6, (sr - ir) * 1024 / 1e6, v }'
		done
		echo
	fi
	set -- $SIZES
	lo=$1
	eval hi=\${$#}
	nlo=$(awk -v n=$lo '$1 == n { print $2 }' "$work/nodes")
	nhi=$(awk -v n=$hi '$1 == n { print $2 }' "$work/nodes")
	echo "ratios $hi/$lo (nodes ratio $(awk -v a="$nhi" -v b="$nlo" 'BEGIN { printf "%.2f", a / b }')); per-node ratio = time ratio / nodes ratio:"
	for k in $KINDS; do
		awk -v k=$k -v a="$nlo" -v b="$nhi" \
		    -v t0="$(agg n$lo.$k 1)" -v t1="$(agg n$hi.$k 1)" \
		    -v r0="$(agg n$lo.$k 2)" -v r1="$(agg n$hi.$k 2)" 'BEGIN {
			pn = (t1 / t0) / (b / a)
			printf "  %s  time %6.2fx  RSS %6.2fx  per-node time %5.2fx  %s\n", k, t1 / t0, r1 / r0, pn,
			    pn <= 2 ? "roughly linear (within 2x)" : "SUPERLINEAR (per-node time > 2x)" }'
	done
	if [ $SHAPES = 1 ]; then
		awk -v a="$nlo" -v b="$nhi" \
		    -v s0="$(agg n$lo.shp 1)" -v i0="$(agg n$lo.ins 1)" \
		    -v s1="$(agg n$hi.shp 1)" -v i1="$(agg n$hi.ins 1)" 'BEGIN {
			pn = ((s1 - i1) / (s0 - i0)) / (b / a)
			printf "  shp-ins (inference + printing only)  time %6.2fx  per-node time %5.2fx  %s\n",
			    (s1 - i1) / (s0 - i0), pn, pn <= 2 ? "roughly linear (within 2x)" : "SUPERLINEAR" }'
	fi
} > "$report"

cat "$report"
cp "$report" "$D/last-report.txt"
exit 0
