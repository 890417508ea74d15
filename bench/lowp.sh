#!/bin/sh
# bench/lowp.sh: float16 models in the interpreter (issue 26, item 2:
# float16 computed in float32, one rounding per op).  Generates
# bench/gen_lowp.py's models (a U2-Net-style RSU block at 1024x1024 and,
# held out, a transformer encoder layer, a U-Net at 512x512 and a
# YOLO-style detector at 640x640; float16 between Casts) and a float32 twin of each (the same weights widened), and the RSU block's
# twin quantized by `opmig quantize` twice: --dynamic
# (DynamicQuantizeLinear + ConvInteger, rsu_dyn) and static QDQ (rsu_qdq);
# then
#   1. bench/interp.sh on the ten models at one thread (opmig against
#      onnxruntime-node, alternating rounds);
#   2. each float16 model once with `opmig run --exact` (every kernel in
#      double: the interpreter's float16 path before item 2) and once as
#      usual, both with --repeat 2 --time (the second run's pages warm).
# See bench/README.md, "Float16 in float32 (issue 26)".
#
# Run from the repository root:  sh bench/lowp.sh
#
# Environment: OPMIG, BENCH_DIR, BENCH_PYTHON as bench/interp.sh;
#   LOWP_ROUNDS  interp.sh's rounds (default 3)
#
# Exit status: 0 done, 2 setup or a command failed.

set -u

here=$(cd "$(dirname "$0")" && pwd) || { echo "lowp.sh: cannot find bench/" >&2; exit 2; }
. "$here/lib.sh"
suite_setup lowp.sh lowp

if suite_stale "$here/gen_lowp.py" enc_f32.onnx; then
	"$PY" "$here/gen_lowp.py" "$D" || suite_die "gen_lowp.py failed"
	"$OPMIG" quantize "$D/rsu_f32.onnx" -o "$D/rsu_dyn.onnx" --dynamic --samples 1 \
		--no-fallback --force --threads 1 >/dev/null 2>&1 || suite_die "quantize --dynamic failed"
	"$OPMIG" quantize "$D/rsu_f32.onnx" -o "$D/rsu_qdq.onnx" --samples 1 \
		--no-fallback --force --threads 1 >/dev/null 2>&1 || suite_die "quantize failed"
	suite_stamp "$here/gen_lowp.py"
fi

models="$D/rsu_f16.onnx $D/rsu_f32.onnx $D/rsu_dyn.onnx $D/rsu_qdq.onnx"
models="$models $D/enc_f16.onnx $D/enc_f32.onnx $D/unet_f16.onnx $D/unet_f32.onnx"
models="$models $D/det_f16.onnx $D/det_f32.onnx"
INTERP_MODELS=$models INTERP_THREADS=1 INTERP_ROUNDS=${LOWP_ROUNDS:-3} INTERP_REPEAT=5 \
	OPMIG=$OPMIG BENCH_DIR=$BENCH_DIR sh "$here/interp.sh" || suite_die "interp.sh failed"

echo
echo "float16 in double (run --exact) against float32 arithmetic, 1 thread:"
for m in rsu_f16 enc_f16; do
	for how in --exact ""; do
		t=$("$OPMIG" run "$D/$m.onnx" --threads 1 --time --repeat 2 $how |
		    sed -n 's/^time: .*min \([0-9.]*\) ms.*/\1/p') || suite_die "opmig run $m failed"
		echo "  $m ${how:-(default)}: $t ms"
	done
done
