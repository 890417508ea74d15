#!/bin/sh
# bench/quant.sh: post-training int8 quantization (issue 23, "Benchmark"):
# per generated model and calibration method, the int8 model's cosine, SNR
# and top-1 agreement against the float model on a validation set kept
# apart from the calibration set, the weight bytes before and after, and
# the time `opmig quantize` takes on one thread; then the minmax int8 models
# in onnxruntime-node (all optimizations: its integer kernels) against
# opmig's outputs on the validation samples.  See bench/README.md,
# "Quantization (issue 23)".
#
# Run from the repository root:  sh bench/quant.sh
#
# Models and samples (bench/gen_quant.py, seeded; regenerated when missing
# or when the generator changed) go to $BENCH_DIR/quant.  Each run is
#   opmig quantize MODEL -o OUT --calibrate calib --validation-data val
#         --method M --threads 1 --no-fallback --force --json
# (no fallback: the numbers are those of the fully quantized model), timed
# by /usr/bin/time (wall and user CPU seconds); the ResNet-50 timing run
# evaluates on its 100 calibration samples (no --validation-data), the
# whole command as a user runs it.  One more run per model shows the
# default accuracy loop (cosine >= 0.99).
#
# Environment:
#   OPMIG         opmig binary (default bin/opmig)
#   BENCH_DIR     models and samples (default /tmp/opmig-bench; 450 MB)
#   BENCH_PYTHON  python with onnx and numpy (default /usr/bin/python3)
#   QUANT_MODELS  default "resnet18 resnet50 mobilenetv2 bert6"
#   QUANT_METHODS default "minmax percentile entropy"
#
# Exit status: 0 done, 2 setup or a command failed.

set -u

die() { echo "quant.sh: $*" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd) || die "cannot find bench/"
PY=${BENCH_PYTHON:-/usr/bin/python3}
BENCH_DIR=${BENCH_DIR:-/tmp/opmig-bench}
OPMIG=${OPMIG:-bin/opmig}
MODELS=${QUANT_MODELS:-resnet18 resnet50 mobilenetv2 bert6}
METHODS=${QUANT_METHODS:-minmax percentile entropy}
case $OPMIG in /*) ;; *) OPMIG=$(pwd)/$OPMIG ;; esac
[ -x "$OPMIG" ] || die "no opmig binary at $OPMIG (make first)"
[ -x /usr/bin/time ] || die "/usr/bin/time is needed"
work=$BENCH_DIR/quant
mkdir -p "$work" || die "cannot create $work"

stamp=$(cksum <"$here/gen_quant.py")
if [ ! -f "$work/stamp" ] || [ "$(cat "$work/stamp")" != "$stamp" ]; then
	echo "quant.sh: generating models and samples in $work" >&2
	"$PY" "$here/gen_quant.py" "$work" || die "gen_quant.py failed"
	echo "$stamp" >"$work/stamp"
fi

# quantize LABEL MODEL ARGS...: one timed run, its report in LABEL.json and
# "wall user" in LABEL.time
quantize() {
	label=$1 m=$2
	shift 2
	/usr/bin/time -f '%e %U' -o "$work/$m/$label.time" "$OPMIG" quantize "$work/$m/model.onnx" \
		-o "$work/$m/$label.onnx" --threads 1 --json "$@" >"$work/$m/$label.json" \
		2>"$work/$m/$label.err"
	rc=$?
	[ "$rc" -le 1 ] || { cat "$work/$m/$label.err" >&2; die "quantize $m $label exited $rc"; }
}

for m in $MODELS; do
	for meth in $METHODS; do
		echo "quant.sh: $m $meth" >&2
		quantize "$meth" "$m" --calibrate "$work/$m/calib" --validation-data "$work/$m/val" \
			--method "$meth" --no-fallback --force
	done
	echo "quant.sh: $m with the accuracy loop" >&2
	quantize fallback "$m" --calibrate "$work/$m/calib" --validation-data "$work/$m/val"
	if [ "$m" = resnet50 ]; then
		echo "quant.sh: resnet50 timing (100 calibration samples)" >&2
		quantize timing "$m" --calibrate "$work/$m/calib" --no-fallback --force
	fi
done
"$PY" "$here/quant_report.py" "$OPMIG" "$work" $MODELS || die "quant_report.py failed"
