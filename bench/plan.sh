#!/bin/sh
# bench/plan.sh: how long migrate takes to plan a 764-node OCR recognizer
# (bench/gen_ocr.py, PP-OCRv3-shaped) for every shipped target: `opmig
# migrate --dry-run` (canonicalization, the opset and precision choice,
# the legalization rounds, fusions, the scans; no validation, nothing
# written).  Each row is the minimum and median of $BENCH_REPS runs after
# one warm-up: wall time, user+system CPU time, peak RSS.
#
# Run from the repository root:  sh bench/plan.sh
# Environment: OPMIG (default bin/opmig), BENCH_DIR (default
# /tmp/opmig-bench), BENCH_REPS (default 5), BENCH_PYTHON (default
# /usr/bin/python3).
# Exit status: 0 when every target plans in under 1 s of CPU time
# (median), 1 when one does not, 2 on setup failure.
set -u
die() { echo "plan.sh: $*" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd) || die "cannot find bench/"
PY=${BENCH_PYTHON:-/usr/bin/python3}
BENCH_DIR=${BENCH_DIR:-/tmp/opmig-bench}
REPS=${BENCH_REPS:-5}
OPMIG=${OPMIG:-bin/opmig}
case $OPMIG in /*) ;; *) OPMIG=$(pwd)/$OPMIG ;; esac
[ -x "$OPMIG" ] || die "no opmig binary at $OPMIG"
[ -x /usr/bin/time ] || die "needs GNU time (/usr/bin/time)"
mkdir -p "$BENCH_DIR" || die "cannot create $BENCH_DIR"
M=$BENCH_DIR/ocr_rec.onnx
stamp=$(cksum <"$here/gen_ocr.py")
if [ ! -f "$M" ] || [ "$(cat "$M.stamp" 2>/dev/null)" != "$stamp" ]; then
	"$PY" "$here/gen_ocr.py" "$M" >&2 || die "gen_ocr.py failed"
	echo "$stamp" >"$M.stamp"
fi
work=$(mktemp -d "$BENCH_DIR/plan.XXXXXX") || die "mktemp"
trap 'rm -rf "$work"' EXIT
TARGETS=$("$OPMIG" targets --json | "$PY" -c 'import json,sys; print(" ".join(t["id"] for t in json.load(sys.stdin)["targets"]))') ||
	die "cannot list targets"
echo "model: $M ($("$OPMIG" inspect "$M" | sed -n 's/^nodes: \([0-9]*\).*/\1/p') nodes)"
echo "machine: $(nproc) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
printf '%-12s %9s %9s %9s %9s %8s  %s\n' target wall_min wall_med cpu_min cpu_med rss_mb result
fail=0
for t in $TARGETS; do
	"$OPMIG" migrate "$M" --target "$t" --dry-run >"$work/report" 2>&1
	: >"$work/t"
	i=0
	while [ $i -lt "$REPS" ]; do
		/usr/bin/time -f '%e %U %S %M' -o "$work/one" "$OPMIG" migrate "$M" --target "$t" \
			--dry-run >/dev/null 2>&1
		[ $? -le 1 ] || die "migrate --dry-run for $t failed"
		tail -n 1 "$work/one" >>"$work/t"
		i=$((i + 1))
	done
	res=$(sed -n 's/^result: //p' "$work/report" | cut -c1-60)
	line=$(awk -v t="$t" -v res="$res" '{ w[NR] = $1; c[NR] = $2 + $3; if ($4 > r) r = $4 }
		END {
			n = NR
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) {
				if (w[j] < w[i]) { x = w[i]; w[i] = w[j]; w[j] = x }
				if (c[j] < c[i]) { x = c[i]; c[i] = c[j]; c[j] = x }
			}
			m = int((n + 1) / 2)
			printf "%-12s %9.2f %9.2f %9.2f %9.2f %8.1f  %s\n", t, w[1], w[m], c[1], c[m], r / 1024, res
		}' "$work/t")
	echo "$line"
	echo "$line" | awk '{ exit !($5 >= 1.0) }' && fail=1
done
exit $fail
