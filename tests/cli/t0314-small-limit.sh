#!/bin/sh
# t0314: the computing commands finish under a small address-space limit
# (ulimit -v 160 MB), with no thread of a library left retrying an
# allocation: OpenBLAS's pool workers (whose products opmig never asks
# for: it runs OpenBLAS one product per thread of its own) each reserved
# a 128 MiB buffer when they started, and under such a limit one retried
# it forever, so run, quantize and migrate hung before they began
# (cli/blas_env.c now starts no pool).  OPENBLAS_NUM_THREADS set by the
# user is left as it is.
. "$TOP/tests/cli/lib.sh"
cd "$T" || fail "cannot cd to $T"
# AddressSanitizer's shadow reserves terabytes: no limit applies there
case $OPMIG in */asan/*) echo "notice: under AddressSanitizer, skipped"; exit 0 ;; esac
LIMIT_KB=160000
RUN_LIMIT=30
S="$TOP/testdata/sample.onnx"

limited 0 "$OPMIG" run "$S"
limited 0 "$OPMIG" quantize "$S" -o q.onnx --samples 1
[ -s q.onnx ] || fail "quantize wrote nothing"
limited 0 "$OPMIG" migrate "$S" --target ascend -o m.onnx
limited 0 "$OPMIG" validate "$S" m.onnx
echo "ok: run, quantize, migrate and validate finish under ulimit -v $LIMIT_KB"
