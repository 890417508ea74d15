#!/bin/sh
# bench/run.sh: opmig against python-onnx on big models (issue 2).
#
# Run from the repository root (`make bench` does):  sh bench/run.sh
#
# Generates the models under $BENCH_DIR/models with bench/gen_model.py when
# they are missing or the generator changed, then measures wall time and peak
# RSS of `opmig inspect MODEL` (load + verify) and of python-onnx's
# `onnx.load(MODEL)`, interleaved in the same run, $BENCH_REPS times each
# after one discarded warm-up run (so the page cache is hot for both), and
# reports medians.  It also times `opmig convert` of the inline model, inline
# and to external data, for information.  See bench/README.md.
#
# Environment:
#   OPMIG         opmig binary (default bin/opmig)
#   BENCH_DIR     where models and scratch files go (default /tmp/opmig-bench)
#   BENCH_REPS    measured runs per command (default 5)
#   BENCH_PYTHON  python with onnx (default /usr/bin/python3)
#   BENCH_TIMER   gnu (/usr/bin/time) or python (resource.getrusage wrapper);
#                 default: gnu when /usr/bin/time works, else python
#
# Exit status: 0 all targets met, 1 a target missed, 2 setup or run failure.
# The report goes to stdout and to $BENCH_DIR/last-report.txt; progress to
# stderr.

set -u

die() {
	echo "run.sh: $*" >&2
	exit 2
}

note() {
	echo "run.sh: $*" >&2
}

here=$(cd "$(dirname "$0")" && pwd) || die "cannot find bench/"
root=$(cd "$here/.." && pwd)
PY=${BENCH_PYTHON:-/usr/bin/python3}
BENCH_DIR=${BENCH_DIR:-/tmp/opmig-bench}
REPS=${BENCH_REPS:-5}
OPMIG=${OPMIG:-bin/opmig}
TIMER=${BENCH_TIMER:-auto}
M=$BENCH_DIR/models

case $REPS in
''|*[!0-9]*|0) die "BENCH_REPS must be a positive integer, not '$REPS'" ;;
esac
case $OPMIG in
/*) ;;
*/*) OPMIG=$(pwd)/$OPMIG ;;
*) OPMIG=$(command -v "$OPMIG") || die "opmig binary '$OPMIG' not found" ;;
esac
[ -x "$OPMIG" ] || die "no opmig binary at $OPMIG (run make, or set OPMIG)"
"$PY" -c 'import onnx, numpy' 2>/dev/null ||
	die "$PY cannot import onnx and numpy (set BENCH_PYTHON)"

mkdir -p "$BENCH_DIR" || die "cannot create $BENCH_DIR"
work=$(mktemp -d "$BENCH_DIR/run.XXXXXX") || die "cannot create a scratch folder"
trap 'rm -rf "$work"' EXIT
trap 'exit 2' HUP INT TERM

# --- models ---------------------------------------------------------------

FILES="inline.onnx external/model.onnx external/weights.bin
external-q/model.onnx external-q/weights.bin big1g.onnx"
stamp=$(cksum < "$here/gen_model.py")
need=0
for f in $FILES; do
	[ -f "$M/$f" ] || need=1
done
[ "$(cat "$M/.stamp" 2>/dev/null)" = "$stamp" ] || need=1
if [ $need = 1 ]; then
	note "generating models in $M (about 2 GB, half a minute)"
	rm -f "$M/.stamp"
	"$PY" "$here/gen_model.py" "$M" || die "gen_model.py failed"
	echo "$stamp" > "$M/.stamp"
fi

# --- timer ----------------------------------------------------------------

# Python fallback: wall time by perf_counter, peak RSS of the one child by
# getrusage(RUSAGE_CHILDREN), both in the "%e %M" format of GNU time.
cat > "$work/timer.py" <<'EOF'
import os, resource, subprocess, sys, time
with open(os.devnull, "wb") as null:
    t = time.perf_counter()
    rc = subprocess.call(sys.argv[2:], stdout=null)
    e = time.perf_counter() - t
with open(sys.argv[1], "w") as f:
    f.write("%.4f %d\n" % (e, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(rc if rc >= 0 else 128 - rc)
EOF

if [ "$TIMER" = auto ]; then
	TIMER=python
	if [ -x /usr/bin/time ] &&
	   /usr/bin/time -f '%e %M' -o "$work/t" true 2>/dev/null &&
	   grep -Eq '^[0-9]+\.[0-9]+ [0-9]+$' "$work/t"; then
		TIMER=gnu
	fi
fi
# GNU time prints %e to 10 ms; when date has %N, wall time is taken around
# the /usr/bin/time call in nanoseconds instead (this adds the fork and exec
# of /usr/bin/time, a millisecond or two; the 'true' row shows it).
HIRES=0
case $TIMER in
gnu)
	case $(date +%s%N) in
	*[!0-9]*) ;;
	*) HIRES=1 ;;
	esac
	TIMER_DESC="/usr/bin/time -f '%e %M' (peak RSS)"
	if [ $HIRES = 1 ]; then
		TIMER_DESC="$TIMER_DESC, wall time by date +%s%N around it"
	else
		TIMER_DESC="$TIMER_DESC, wall time by its %e (10 ms steps)"
	fi ;;
python)
	TIMER_DESC="python wrapper: perf_counter, getrusage(RUSAGE_CHILDREN)" ;;
*) die "BENCH_TIMER must be gnu or python, not '$TIMER'" ;;
esac

BENCH_NAME=run.sh
. "$(dirname "$0")/lib.sh"

size_of() {
	wc -c < "$1" | tr -d ' '
}

LOAD='import sys, onnx; onnx.load(sys.argv[1])'

# pair NAME MODEL: opmig inspect and python onnx.load of MODEL, one warm-up
# each, then REPS rounds, alternating which of the two goes first.
pair() {
	note "measuring $1 ($REPS rounds)"
	run_once warmup "$OPMIG" inspect "$2"
	run_once warmup "$PY" -c "$LOAD" "$2"
	i=0
	while [ $i -lt "$REPS" ]; do
		if [ $((i % 2)) = 0 ]; then
			run_once "$1.opmig" "$OPMIG" inspect "$2"
			run_once "$1.python" "$PY" -c "$LOAD" "$2"
		else
			run_once "$1.python" "$PY" -c "$LOAD" "$2"
			run_once "$1.opmig" "$OPMIG" inspect "$2"
		fi
		i=$((i + 1))
	done
}

# repeat LABEL CMD...: one warm-up, then REPS runs.
repeat() {
	rlabel=$1
	shift
	run_once warmup "$@"
	i=0
	while [ $i -lt "$REPS" ]; do
		run_once "$rlabel" "$@"
		i=$((i + 1))
	done
}

# --- measurements ---------------------------------------------------------

load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
note "timer: $TIMER_DESC"
note "measuring baselines"
repeat base.true true
repeat base.import "$PY" -c 'import onnx'
[ -f "$root/testdata/sample.onnx" ] &&
	repeat base.sample "$OPMIG" inspect "$root/testdata/sample.onnx"

pair inline "$M/inline.onnx"
pair external "$M/external/model.onnx"
pair externalq "$M/external-q/model.onnx"
pair big1g "$M/big1g.onnx"

# convert: each round writes into an empty folder; the rm is not timed.
note "measuring convert ($REPS rounds each)"
conv() {
	clabel=$1
	shift
	i=-1
	while [ $i -lt "$REPS" ]; do
		rm -rf "$work/conv"
		mkdir "$work/conv"
		if [ $i -lt 0 ]; then
			run_once warmup "$@"
		else
			run_once "$clabel" "$@"
		fi
		i=$((i + 1))
	done
}
params_line() {
	"$OPMIG" inspect "$1" | grep '^parameters:'
}
want=$(params_line "$M/inline.onnx")
conv conv.inline "$OPMIG" convert "$M/inline.onnx" "$work/conv/out.onnx"
[ "$(params_line "$work/conv/out.onnx")" = "$want" ] ||
	die "convert output does not inspect like its input"
conv_inline_size=$(size_of "$work/conv/out.onnx")
conv conv.ext "$OPMIG" convert "$M/inline.onnx" "$work/conv/out.onnx" \
	--external-data w.bin
[ "$(params_line "$work/conv/out.onnx")" = "$want" ] ||
	die "convert --external-data output does not inspect like its input"
conv_ext_size=$(size_of "$work/conv/out.onnx")
conv_ext_wsize=$(size_of "$work/conv/w.bin")
rm -rf "$work/conv"
load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)

# --- report ---------------------------------------------------------------

inline_size=$(size_of "$M/inline.onnx")
ext_size=$(size_of "$M/external/model.onnx")
ext_wsize=$(size_of "$M/external/weights.bin")
extq_size=$(size_of "$M/external-q/model.onnx")
extq_wsize=$(size_of "$M/external-q/weights.bin")
big_size=$(size_of "$M/big1g.onnx")
imp=$(agg base.import 1 median)

report=$work/report
{
	echo "opmig benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "opmig:   $OPMIG ($("$OPMIG" --version 2>/dev/null | head -n 1))"
	echo "         sha256 $(sha256sum "$OPMIG" 2>/dev/null | cut -d' ' -f1)"
	if git -C "$root" rev-parse --short HEAD >/dev/null 2>&1; then
		dirty=$(git -C "$root" status --porcelain -- ir cli 2>/dev/null | wc -l | tr -d ' ')
		echo "source:  $(git -C "$root" rev-parse --short HEAD), $dirty changed or new files under ir/ cli/"
	fi
	echo "python:  $PY, onnx $("$PY" -c 'import onnx; print(onnx.__version__)')"
	echo "machine: $(nproc) CPUs, $(grep -m1 '^model name' /proc/cpuinfo | sed 's/.*: //'), $(awk '/^MemTotal/ { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo)"
	echo "load:    $load_start at start, $load_end at end (1/5/15 min)"
	echo "timer:   $TIMER_DESC"
	echo "runs:    median of $REPS after 1 warm-up, opmig and python interleaved"
	echo "MB = 10^6 bytes; RSS = peak resident set size"
	echo
	awk -v t="$(agg base.true 1 median)" -v i="$imp" \
	    -v s="$( [ -f "$work/base.sample.dat" ] && agg base.sample 1 median)" \
	    -v sr="$( [ -f "$work/base.sample.dat" ] && agg base.sample 2 median)" \
	    -v ir="$(agg base.import 2 median)" 'BEGIN {
		printf "baselines: timer overhead (true) %.3f s; python -c \"import onnx\" %.3f s, %.1f MB RSS", t, i, ir * 1024 / 1e6
		if (s != "") printf "; opmig inspect testdata/sample.onnx %.3f s, %.1f MB RSS", s, sr * 1024 / 1e6
		printf "\n\n"
	}'
	printf '%-22s %9s %9s %9s %9s %8s %8s %9s %9s %8s\n' \
		model "file MB" "data MB" "opmig s" "python s" speedup \
		"(-import)" "opmig RSS" "py RSS" "RSS/file"
	row() { # label name file-size data-size
		awk -v n="$1" -v f="$3" -v x="$4" -v imp="$imp" \
		    -v ot="$(agg "$2.opmig" 1 median)" -v pt="$(agg "$2.python" 1 median)" \
		    -v orss="$(agg "$2.opmig" 2 median)" -v prss="$(agg "$2.python" 2 median)" 'BEGIN {
			printf "%-22s %9.1f %9s %9.3f %9.3f %7.2fx %7.2fx %6.1f MB %6.1f MB %7.2fx\n",
			    n, f / 1e6, x == 0 ? "-" : sprintf("%.1f", x / 1e6), ot, pt, pt / ot,
			    (pt - imp) / ot, orss * 1024 / 1e6, prss * 1024 / 1e6, orss * 1024 / f
		}'
	}
	row inline.onnx inline "$inline_size" 0
	row external/model.onnx external "$ext_size" "$ext_wsize"
	row external-q/model.onnx externalq "$extq_size" "$extq_wsize"
	row big1g.onnx big1g "$big_size" 0
	echo
	echo "speedup = python s / opmig s; (-import) = (python s - import onnx s) / opmig s"
	echo "RSS/file = opmig peak RSS / size of the .onnx file (weights not included)"
	echo
	echo "spread over the $REPS runs, min..max (time s; RSS MB):"
	for s in inline external externalq big1g; do
		for t in opmig python; do
			awk -v n="$s.$t" -v a="$(agg $s.$t 1 min)" -v b="$(agg $s.$t 1 max)" \
			    -v c="$(agg $s.$t 2 min)" -v d="$(agg $s.$t 2 max)" 'BEGIN {
				printf "  %-17s %7.3f..%-7.3f  %7.1f..%.1f\n", n, a, b, c * 1024 / 1e6, d * 1024 / 1e6
			}'
		done
	done
	echo
	echo "convert of inline.onnx (information; writes $(awk -v s="$inline_size" 'BEGIN { printf "%.0f", s / 1e6 }') MB to $BENCH_DIR, page cache hot):"
	awk -v a="$(agg conv.inline 1 median)" -v b="$(agg conv.inline 2 median)" \
	    -v a0="$(agg conv.inline 1 min)" -v a1="$(agg conv.inline 1 max)" \
	    -v c="$(agg conv.ext 1 median)" -v d="$(agg conv.ext 2 median)" \
	    -v c0="$(agg conv.ext 1 min)" -v c1="$(agg conv.ext 1 max)" \
	    -v s1="$conv_inline_size" -v s2="$conv_ext_size" -v s3="$conv_ext_wsize" \
	    -v f="$inline_size" 'BEGIN {
		printf "  opmig convert IN OUT                       %7.3f s (%.3f..%.3f), %6.1f MB RSS (%.2fx IN), OUT %.1f MB\n",
		    a, a0, a1, b * 1024 / 1e6, b * 1024 / f, s1 / 1e6
		printf "  opmig convert IN OUT --external-data w.bin %7.3f s (%.3f..%.3f), %6.1f MB RSS (%.2fx IN), OUT %.1f MB + w.bin %.1f MB\n",
		    c, c0, c1, d * 1024 / 1e6, d * 1024 / f, s2 / 1e6, s3 / 1e6
	}'
	echo
} > "$report"

# --- targets ----------------------------------------------------------------

fails=0
target() { # verdict text
	if [ "$1" = pass ]; then
		echo "PASS  $2"
	else
		echo "FAIL  $2"
		fails=$((fails + 1))
	fi >> "$report"
}
verdict() { # awk condition over the given -v variables
	cond=$1
	shift
	awk "$@" "BEGIN { exit !($cond) }" && echo pass || echo fail
}

echo "targets:" >> "$report"
for s in inline external; do
	ot=$(agg $s.opmig 1 median)
	pt=$(agg $s.python 1 median)
	r=$(awk -v a="$pt" -v b="$ot" 'BEGIN { printf "%.2f", a / b }')
	target "$(verdict 'p / o >= 3' -v p="$pt" -v o="$ot")" \
		"$s: opmig inspect at least 3x faster than python onnx.load: ${r}x ($ot s vs $pt s)"
done
br=$(agg big1g.opmig 2 median)
target "$(verdict 'r * 1024 < 2.2 * f' -v r="$br" -v f="$big_size")" \
	"big1g: opmig peak RSS below 2.2x file size: $(awk -v r="$br" -v f="$big_size" 'BEGIN { printf "%.1f MB = %.3fx of %.1f MB", r * 1024 / 1e6, r * 1024 / f, f / 1e6 }')"
er=$(agg external.opmig 2 median)
qr=$(agg externalq.opmig 2 median)
target "$(verdict 'e * 1024 < 0.1 * w' -v e="$er" -v w="$ext_wsize")" \
	"external: opmig peak RSS below 10% of the weights: $(awk -v e="$er" -v w="$ext_wsize" -v f="$ext_size" 'BEGIN { printf "%.1f MB = %.2f%% of %.1f MB weights (%.1fx the %.2f MB graph file)", e * 1024 / 1e6, 100 * e * 1024 / w, w / 1e6, e * 1024 / f, f / 1e6 }')"
target "$(verdict 'e <= 1.1 * q && q <= 1.1 * e' -v e="$er" -v q="$qr")" \
	"external: peak RSS follows the graph, not the weights: $(awk -v e="$er" -v q="$qr" -v w="$ext_wsize" -v v="$extq_wsize" 'BEGIN { printf "%.1f MB with %.1f MB weights vs %.1f MB with %.1f MB (same graph); RSS ratio %.3f for weights ratio %.2f, must be within 10%%", e * 1024 / 1e6, w / 1e6, q * 1024 / 1e6, v / 1e6, e / q, w / v }')"
if [ $fails = 0 ]; then
	echo "all targets met" >> "$report"
else
	echo "$fails target(s) missed" >> "$report"
fi

cat "$report"
cp "$report" "$BENCH_DIR/last-report.txt" 2>/dev/null
[ $fails = 0 ] || exit 1
exit 0
