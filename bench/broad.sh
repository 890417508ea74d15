#!/bin/sh
# bench/broad.sh: the kinds of model issue 26 names beside the
# convolutional and float16 ones (bench/gen_broad.py: a tf2onnx-style NHWC
# conv net, LSTM and GRU speech encoders, a Loop/If model of many tiny
# ops; and two held out: an NHWC MobileNet stack, a batch-4 LSTM+GRU),
# against onnxruntime-node with bench/interp.sh at one thread and at two
# (interp.sh's alternating rounds).  See bench/README.md, "A broader
# suite".
#
# Run from the repository root:  sh bench/broad.sh
#
# Environment: OPMIG, BENCH_DIR, BENCH_PYTHON as bench/interp.sh;
#   BROAD_ROUNDS    interp.sh's rounds (default 3)
#   BROAD_THREADS   thread counts (default "1 2")
#
# Exit status: 0 done, 2 setup or a command failed.

set -u

die() { echo "broad.sh: $*" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd) || die "cannot find bench/"
PY=${BENCH_PYTHON:-/usr/bin/python3}
BENCH_DIR=${BENCH_DIR:-/tmp/opmig-bench}
OPMIG=${OPMIG:-bin/opmig}
case $OPMIG in /*) ;; *) OPMIG=$(pwd)/$OPMIG ;; esac
[ -x "$OPMIG" ] || die "no opmig binary at $OPMIG (make first)"
D=$BENCH_DIR/broad
mkdir -p "$D" || die "cannot create $D"

stamp=$(cksum < "$here/gen_broad.py")
if [ ! -f "$D/tiny.onnx" ] || [ "$(cat "$D/stamp" 2>/dev/null)" != "$stamp" ]; then
	"$PY" "$here/gen_broad.py" "$D" || die "gen_broad.py failed"
	echo "$stamp" > "$D/stamp"
fi

models=""
for m in nhwc lstm gru tiny nhwc_dw lstm_b4; do
	models="$models $D/$m.onnx"
done
for t in ${BROAD_THREADS:-1 2}; do
	INTERP_MODELS=$models INTERP_THREADS=$t INTERP_ROUNDS=${BROAD_ROUNDS:-3} INTERP_REPEAT=5 \
		OPMIG=$OPMIG BENCH_DIR=$BENCH_DIR sh "$here/interp.sh" || die "interp.sh failed"
done
