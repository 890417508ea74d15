#!/bin/sh
# bench/ops.sh: single-operator models (bench/gen_ops.py: a million
# elements through one operator, in float32 and float16) against
# onnxruntime-node with bench/interp.sh, one thread, one round: the
# operators whose kernels lag onnxruntime by a multiple show there, where
# a model's hundreds of nodes hide them.  See bench/README.md, "The
# operator sweep".
#
# Run from the repository root:  sh bench/ops.sh
#
# Environment: OPMIG, BENCH_DIR, BENCH_PYTHON as bench/interp.sh;
#   OPS_MATCH   only the models whose names contain it (e.g. f16_ or
#               Reduce)
#   OPS_ROUNDS  interp.sh's rounds (default 1)
#
# Exit status: 0 done, 2 setup or a command failed.

set -u

here=$(cd "$(dirname "$0")" && pwd) || { echo "ops.sh: cannot find bench/" >&2; exit 2; }
. "$here/lib.sh"
suite_setup ops.sh ops
if suite_stale "$here/gen_ops.py" f16_k_Einsum.onnx; then
	"$PY" "$here/gen_ops.py" "$D" || suite_die "gen_ops.py failed"
	suite_stamp "$here/gen_ops.py"
fi
models=""
for f in "$D"/*.onnx; do
	case $(basename "$f") in *"${OPS_MATCH:-}"*) models="$models $f" ;; esac
done
INTERP_MODELS=$models INTERP_THREADS=1 INTERP_ROUNDS=${OPS_ROUNDS:-1} INTERP_REPEAT=10 \
	OPMIG=$OPMIG BENCH_DIR=$BENCH_DIR sh "$here/interp.sh" || suite_die "interp.sh failed"
