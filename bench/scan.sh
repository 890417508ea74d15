#!/bin/sh
# bench/scan.sh: time `opmig scan` of a generated 100,000-node model
# (bench/gen_scan_model.py) against every shipped target, per format.
#
# Run from the repository root:  sh bench/scan.sh
#
# For text and json: each target alone and all targets in one run; for md,
# html and dot: all targets in one run.  Each row is the median of
# $BENCH_REPS runs after one warm-up (wall time, user CPU, peak RSS), plus
# the baseline `opmig inspect` (load and verify only).  "per target" is the
# all-targets time divided by the number of targets.  See bench/README.md.
#
# Environment: OPMIG (default bin/opmig), BENCH_DIR (default
# /tmp/opmig-bench), BENCH_REPS (default 3), BENCH_PYTHON (default
# /usr/bin/python3), SCAN_NODES (default 100000).
# Exit status: 0 when every target is met (all-targets text and json under
# 1 s per target), 1 when one is missed, 2 on setup failure.
set -u
die() { echo "scan.sh: $*" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd) || die "cannot find bench/"
PY=${BENCH_PYTHON:-/usr/bin/python3}
BENCH_DIR=${BENCH_DIR:-/tmp/opmig-bench}
REPS=${BENCH_REPS:-3}
NODES=${SCAN_NODES:-100000}
OPMIG=${OPMIG:-bin/opmig}
case $OPMIG in /*) ;; *) OPMIG=$(pwd)/$OPMIG ;; esac
[ -x "$OPMIG" ] || die "no opmig binary at $OPMIG"
[ -x /usr/bin/time ] || die "needs GNU time (/usr/bin/time)"
mkdir -p "$BENCH_DIR" || die "cannot create $BENCH_DIR"
M=$BENCH_DIR/scan$NODES.onnx
stamp="$(cksum <"$here/gen_scan_model.py") $NODES"
if [ ! -f "$M" ] || [ "$(cat "$M.stamp" 2>/dev/null)" != "$stamp" ]; then
	echo "scan.sh: generating $M" >&2
	"$PY" "$here/gen_scan_model.py" "$M" "$NODES" || die "gen_scan_model.py failed"
	echo "$stamp" >"$M.stamp"
fi
work=$(mktemp -d "$BENCH_DIR/scan.XXXXXX") || die "mktemp"
trap 'rm -rf "$work"' EXIT
TARGETS=$("$OPMIG" targets --json | "$PY" -c 'import json,sys; print(",".join(t["id"] for t in json.load(sys.stdin)["targets"]))') ||
	die "cannot list targets"
NT=$(echo "$TARGETS" | tr ',' '\n' | wc -l)

# measure LABEL CMD...: median wall s, user s, max RSS MB of REPS runs
measure() {
	label=$1; shift
	"$@" >/dev/null 2>&1
	: >"$work/t"
	i=0
	while [ $i -lt "$REPS" ]; do
		/usr/bin/time -f '%e %U %M' -o "$work/one" "$@" >/dev/null 2>"$work/err"
		rc=$?
		[ $rc -le 1 ] || die "'$*' exited $rc: $(cat "$work/err")"
		tail -1 "$work/one" >>"$work/t"
		i=$((i + 1))
	done
	sort -n "$work/t" | awk -v n="$REPS" -v l="$label" '
		{ w[NR] = $1; u[NR] = $2; r[NR] = $3 }
		END { m = int((n + 1) / 2); printf "%-34s %7.2f %7.2f %8.1f\n", l, w[m], u[m], r[m] / 1000 }'
}
echo "model: $M ($NODES nodes), $REPS runs each, median"
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-34s %7s %7s %8s\n' "run" "wall s" "user s" "RSS MB"
measure "inspect (load + verify)" "$OPMIG" inspect "$M" | tee -a "$work/report"
for f in text json; do
	for t in $(echo "$TARGETS" | tr ',' ' '); do
		measure "scan $f $t" "$OPMIG" scan "$M" --target "$t" --format "$f" -o "$work/out" |
			tee -a "$work/report"
	done
done
for f in text json md html dot; do
	measure "scan $f all $NT targets" "$OPMIG" scan "$M" --target "$TARGETS" --format "$f" \
		-o "$work/out" | tee -a "$work/report"
	ls -l "$work/out" | awk -v f="$f" '{ printf "  (%s report: %.2f MB)\n", f, $5 / 1e6 }'
done
fail=0
for f in text json; do
	w=$(awk -v l="scan $f all $NT targets" 'index($0, l) == 1 { print $(NF - 2) }' "$work/report")
	per=$(echo "$w $NT" | awk '{ printf "%.3f", $1 / $2 }')
	if awk -v p="$per" 'BEGIN { exit !(p < 1.0) }'; then
		echo "PASS  $f: $per s per target (all $NT targets in $w s)"
	else
		echo "FAIL  $f: $per s per target (all $NT targets in $w s), target < 1 s"
		fail=1
	fi
done
exit $fail
