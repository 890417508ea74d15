#!/bin/sh
# bench/quant.sh: post-training int8 quantization (issue 23, "Benchmark"):
# per generated model and calibration method, the int8 model's cosine, SNR
# and top-1 agreement against the float model on a validation set kept
# apart from the calibration set, the weight bytes before and after, and
# the time `opmig quantize` takes on one thread; then the minmax int8 models
# in onnxruntime-node (all optimizations: its integer kernels) against
# opmig's outputs on the validation samples, and for the CNNs where the
# two first part, layer by layer (bench/quant_layers.py).  See bench/README.md,
# "Quantization (issue 23)".
#
# Run from the repository root:  sh bench/quant.sh
#
# Models and samples (bench/gen_quant.py, seeded; regenerated when missing
# or when the generator changed) go to $BENCH_DIR/quant; the CNNs'
# classifiers are then centred on the calibration data (bench/quant_head.py:
# with random weights every image would win the same class).  Each run is
#   opmig quantize MODEL -o OUT --calibrate calib --validation-data val
#         --method M --threads 1 --no-fallback --force --json
# (no fallback: the numbers are those of the fully quantized model), timed
# by /usr/bin/time (wall and user CPU seconds), for the model as generated
# and, for the CNNs, with its classifier centred; the ResNet-50 timing run
# evaluates on its 100 calibration samples (no --validation-data), the
# whole command as a user runs it.  One more run per model but ResNet-50
# shows the default accuracy loop (cosine >= 0.99) on the centred CNNs.
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

stamp=$(cat "$here/gen_quant.py" "$here/quant_head.py" | cksum)
if [ ! -f "$work/stamp" ] || [ "$(cat "$work/stamp")" != "$stamp" ]; then
	echo "quant.sh: generating models and samples in $work" >&2
	"$PY" "$here/gen_quant.py" "$work" || die "gen_quant.py failed"
	for m in resnet18 resnet50 mobilenetv2; do
		"$PY" "$here/quant_head.py" "$OPMIG" "$work/$m" || die "quant_head.py $m failed"
	done
	echo "$stamp" >"$work/stamp"
fi

# quantize LABEL MODEL FILE ARGS...: one timed run of MODEL/FILE.onnx, its
# report in MODEL/LABEL.json and "wall user" in MODEL/LABEL.time
quantize() {
	label=$1 m=$2 f=$3
	shift 3
	/usr/bin/time -f '%e %U' -o "$work/$m/$label.time" "$OPMIG" quantize "$work/$m/$f.onnx" \
		-o "$work/$m/$label.onnx" --threads 1 --json "$@" >"$work/$m/$label.json" \
		2>"$work/$m/$label.err"
	rc=$?
	[ "$rc" -le 1 ] || { cat "$work/$m/$label.err" >&2; die "quantize $m $label exited $rc"; }
}

for m in $MODELS; do
	heads=model
	[ -f "$work/$m/centred.onnx" ] && heads="model centred"
	for h in $heads; do
		for meth in $METHODS; do
			echo "quant.sh: $m $h $meth" >&2
			quantize "$h.$meth" "$m" "$h" --calibrate "$work/$m/calib" \
				--validation-data "$work/$m/val" --method "$meth" --no-fallback --force
		done
	done
	case $m in
	resnet50) ;;     # a trial per node of 73: see bench/README.md
	*)
		h=centred
		[ -f "$work/$m/centred.onnx" ] || h=model
		echo "quant.sh: $m $h with the accuracy loop" >&2
		quantize "$h.fallback" "$m" "$h" --calibrate "$work/$m/calib" \
			--validation-data "$work/$m/val"
		;;
	esac
	if [ "$m" = resnet50 ]; then
		echo "quant.sh: resnet50 timing (100 calibration samples)" >&2
		quantize model.timing "$m" model --calibrate "$work/$m/calib" --no-fallback --force
	fi
done
"$PY" "$here/quant_report.py" "$OPMIG" "$work" $MODELS || die "quant_report.py failed"
# where opmig and onnxruntime first part, layer by layer, on the CNNs'
# minmax int8 models (the first 8 validation samples)
for m in $MODELS; do
	case $m in bert6) continue ;; esac
	echo
	echo "layer by layer, $m (model.minmax):"
	"$PY" "$here/quant_layers.py" "$OPMIG" "$work/$m/model.minmax.onnx" \
		$(for k in 0 1 2 3 4 5 6 7; do echo "$work/$m/val/test_data_set_$k"; done) ||
		die "quant_layers.py $m failed"
done
