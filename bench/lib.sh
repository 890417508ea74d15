# lib.sh: measuring helpers shared by bench/run.sh and bench/infer.sh, and
# the model-suite scripts' start (lowp.sh, broad.sh)
# (sourced).  Callers set work (scratch folder), BENCH_NAME (for messages)
# and, for run_once, TIMER (gnu | python, default gnu) and HIRES (1: wall
# time by date +%s%N around the command, 0: the timer's own).

# run_once LABEL CMD...: run CMD once, append "wall_s peak_rss_kb" to
# $work/LABEL.dat; exit 2 if CMD fails.
run_once() {
	label=$1
	shift
	if [ "${TIMER:-gnu}" = gnu ]; then
		[ "${HIRES:-1}" = 1 ] && t0=$(date +%s%N)
		/usr/bin/time -f '%e %M' -o "$work/t" "$@" >/dev/null 2>"$work/err"
		rc=$?
		[ "${HIRES:-1}" = 1 ] && t1=$(date +%s%N)
	else
		"$PY" "$work/timer.py" "$work/t" "$@" >/dev/null 2>"$work/err"
		rc=$?
	fi
	if [ $rc != 0 ]; then
		echo "${BENCH_NAME:-bench}: failed (exit $rc): $*" >&2
		cat "$work/err" >&2
		exit 2
	fi
	set -- $(tail -n 1 "$work/t")
	wall=$1
	[ "${TIMER:-gnu}" = gnu ] && [ "${HIRES:-1}" = 1 ] &&
		wall=$(awk -v ns=$((t1 - t0)) 'BEGIN { printf "%.4f", ns / 1e9 }')
	echo "$wall $2" >> "$work/$label.dat"
}

# agg LABEL COL [FN]: median (default), min or max of column COL
# (1 wall, 2 RSS) of $work/LABEL.dat.
agg() {
	cut -d' ' -f"$2" "$work/$1.dat" | sort -n | awk -v fn="${3:-median}" '
		{ a[NR] = $1 }
		END {
			if (fn == "min") v = a[1]
			else if (fn == "max") v = a[NR]
			else if (NR % 2) v = a[(NR + 1) / 2]
			else v = (a[NR / 2] + a[NR / 2 + 1]) / 2
			print v
		}'
}

# suite_setup NAME DIR: the model-suite scripts' start (lowp.sh, broad.sh;
# NAME for messages): PY, BENCH_DIR, OPMIG (made absolute; exit 2 when it
# is no executable) as bench/interp.sh reads them, and D=$BENCH_DIR/DIR
# made.
suite_setup() {
	BENCH_NAME=$1
	PY=${BENCH_PYTHON:-/usr/bin/python3}
	BENCH_DIR=${BENCH_DIR:-/tmp/opmig-bench}
	OPMIG=${OPMIG:-bin/opmig}
	case $OPMIG in /*) ;; *) OPMIG=$(pwd)/$OPMIG ;; esac
	[ -x "$OPMIG" ] || suite_die "no opmig binary at $OPMIG (make first)"
	D=$BENCH_DIR/$2
	mkdir -p "$D" || suite_die "cannot create $D"
}

suite_die() { echo "${BENCH_NAME:-bench}: $*" >&2; exit 2; }

# suite_stale GEN FILE: true when $D lacks FILE or its models came from
# another version of the generator GEN (its checksum, kept in $D/stamp);
# suite_stamp GEN records it after generating.
suite_stale() {
	[ ! -f "$D/$2" ] || [ "$(cat "$D/stamp" 2>/dev/null)" != "$(cksum < "$1")" ]
}

suite_stamp() { cksum < "$1" > "$D/stamp"; }
