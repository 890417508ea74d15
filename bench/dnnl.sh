#!/bin/sh
# bench/dnnl.sh: opmig's interpreter with and without oneDNN (issue 26,
# item 3), the same binary, OPMIG_NO_DNNL=1 against unset, alternating
# run by run at one thread.  Models:
#   tuned on (the policy in runtime/kernels/k_conv_dnnl.c was set while
#   running these): bench/gen_lowp.py's RSU block in float32 (rsu_f32) and
#   quantized dynamically (rsu_dyn, ConvInteger), bench/interp.sh's
#   resnet50 and mobilenetv2;
#   held out (never run while the policy was set): VGG-19 and
#   DenseNet-121 (the ONNX light models in ../shared/models; weights
#   ConstantOfShape, fine for timing), and resnet18 of bench/quant.sh
#   quantized by `opmig quantize --dynamic` (resnet18_dyn) beside its
#   float32 original (resnet18), and bench/quant.sh's BERT-6 encoder the
#   same way (bert6_dyn: DynamicQuantizeLinear + MatMulInteger) beside its
#   original (bert6).
# Prints, per model, each side's median of ROUNDS medians of `opmig run
# --time --repeat 5` and their ratio (with/without oneDNN), and the int8
# models against their float32 originals (both with oneDNN).
#
# Run from the repository root after bench/lowp.sh, bench/interp.sh and
# bench/quant.sh have made their models:  sh bench/dnnl.sh
#
# Environment: OPMIG (default bin/opmig), BENCH_DIR (default
#   /tmp/opmig-bench), DNNL_ROUNDS (default 3), MODELS_DIR (default
#   ../shared/models/onnx-light).
#
# Exit status: 0 done, 2 setup or a command failed.

set -u

die() { echo "dnnl.sh: $*" >&2; exit 2; }

BENCH_DIR=${BENCH_DIR:-/tmp/opmig-bench}
OPMIG=${OPMIG:-bin/opmig}
ROUNDS=${DNNL_ROUNDS:-3}
LIGHT=${MODELS_DIR:-../shared/models/onnx-light}
[ -x "$OPMIG" ] || die "no opmig binary at $OPMIG (make first)"
D=$BENCH_DIR/dnnl
mkdir -p "$D" || die "cannot create $D"

need() { [ -f "$1" ] || die "missing $1 (run the bench script that makes it)"; }
need "$BENCH_DIR/lowp/rsu_f32.onnx"
need "$BENCH_DIR/lowp/rsu_dyn.onnx"
need "$BENCH_DIR/interp/resnet50.onnx"
need "$BENCH_DIR/quant/resnet18/model.onnx"
need "$BENCH_DIR/quant/bert6/model.onnx"
for q in resnet18 bert6; do
	[ -f "$D/${q}_dyn.onnx" ] && continue
	"$OPMIG" quantize "$BENCH_DIR/quant/$q/model.onnx" -o "$D/${q}_dyn.onnx" \
		--dynamic --samples 1 --no-fallback --force --threads 1 >/dev/null 2>&1 ||
		die "quantize --dynamic $q failed"
done

# one median (ms) of `opmig run --time --repeat 5`; $1 NO_DNNL value, $2 model
one() {
	OPMIG_NO_DNNL=$1 "$OPMIG" run "$2" --threads 1 --time --repeat 5 |
		sed -n 's/^time: .*median \([0-9.]*\) ms.*/\1/p'
}

median() { tr ' ' '\n' | grep . | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

printf '%-16s %12s %12s %8s\n' model own_ms onednn_ms ratio
for spec in tuned:rsu_f32:$BENCH_DIR/lowp/rsu_f32.onnx tuned:rsu_dyn:$BENCH_DIR/lowp/rsu_dyn.onnx \
	tuned:resnet50:$BENCH_DIR/interp/resnet50.onnx \
	tuned:mobilenetv2:$BENCH_DIR/interp/mobilenetv2.onnx \
	held:vgg19:$LIGHT/light_vgg19.onnx held:densenet121:$LIGHT/light_densenet121.onnx \
	held:resnet18:$BENCH_DIR/quant/resnet18/model.onnx \
	held:resnet18_dyn:$D/resnet18_dyn.onnx \
	held:bert6:$BENCH_DIR/quant/bert6/model.onnx held:bert6_dyn:$D/bert6_dyn.onnx; do
	set=${spec%%:*}; rest=${spec#*:}; name=${rest%%:*}; f=${rest#*:}
	[ -f "$f" ] || { echo "$name: $f missing, skipped"; continue; }
	a=""; b=""
	for r in $(seq "$ROUNDS"); do
		a="$a $(one 1 "$f")" || die "run $name failed"
		b="$b $(one 0 "$f")" || die "run $name failed"
	done
	ma=$(echo "$a" | median); mb=$(echo "$b" | median)
	printf '%-16s %12s %12s %8s  (%s)\n' "$name" "$ma" "$mb" \
		"$(awk -v a="$ma" -v b="$mb" 'BEGIN {printf "%.2f", b / a}')" "$set"
	echo "$name $ma $mb" >> "$D/last.txt"
done
