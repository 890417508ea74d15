#!/bin/sh
# bench/broad.sh: the kinds of model issue 26 names beside the
# convolutional and float16 ones (bench/gen_broad.py: a tf2onnx-style NHWC
# conv net, LSTM and GRU speech encoders, a Loop/If model of many tiny
# ops, an NHWC MobileNet stack, a batch-4 LSTM+GRU; and, held out, a
# bidirectional GRU+LSTM and an NHWC encoder-decoder; with BROAD_SET=held
# a third held-out set, bench/gen_held.py: a float16 CRNN recognizer, a
# MobileNetV3-Small, a wav2vec2-style speech encoder),
# against onnxruntime-node with bench/interp.sh at one thread and at two
# (interp.sh's alternating rounds).  See bench/README.md, "A broader
# suite".
#
# Run from the repository root:  sh bench/broad.sh
#
# Environment: OPMIG, BENCH_DIR, BENCH_PYTHON as bench/interp.sh;
#   BROAD_ROUNDS    interp.sh's rounds (default 3)
#   BROAD_THREADS   thread counts (default "1 2")
#   BROAD_SET       held: bench/gen_held.py's models instead
#
# Exit status: 0 done, 2 setup or a command failed.

set -u

here=$(cd "$(dirname "$0")" && pwd) || { echo "broad.sh: cannot find bench/" >&2; exit 2; }
. "$here/lib.sh"
if [ "${BROAD_SET:-}" = held ]; then
	gen=gen_held.py last=w2v.onnx names="crnn_f16 mbv3 w2v"
	suite_setup broad.sh held
else
	gen=gen_broad.py last=nhwc_seg.onnx names="nhwc lstm gru tiny nhwc_dw lstm_b4 gru_bi nhwc_seg"
	suite_setup broad.sh broad
fi

if suite_stale "$here/$gen" $last; then
	"$PY" "$here/$gen" "$D" || suite_die "$gen failed"
	suite_stamp "$here/$gen"
fi

models=""
for m in $names; do
	models="$models $D/$m.onnx"
done
for t in ${BROAD_THREADS:-1 2}; do
	INTERP_MODELS=$models INTERP_THREADS=$t INTERP_ROUNDS=${BROAD_ROUNDS:-3} INTERP_REPEAT=5 \
		OPMIG=$OPMIG BENCH_DIR=$BENCH_DIR sh "$here/interp.sh" || suite_die "interp.sh failed"
done
