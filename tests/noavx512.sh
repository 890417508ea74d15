#!/bin/sh
# noavx512.sh: the unit suites, the conformance run and a few CLI tests on
# an x86-64 CPU without AVX-512, emulated by QEMU user mode (qemu-x86_64,
# CPU model $QEMU_CPU, by default a Haswell: AVX2 and FMA).  The kernels'
# run-time choices (rt_cpu_avx512f, gcc's target_clones) then take their
# AVX2 and C paths for real, and an AVX-512 instruction reached without
# the check is an illegal instruction (QEMU 7.2 has no AVX-512).  The CLI
# tests reach opmig through a script that runs it under the emulator;
# what opmig itself starts with exec (batch workers, probe's commands)
# runs natively, what it forks stays emulated.
# usage (make test-noavx512): RUNNER=... CONFORMANCE=... OPMIG=... sh tests/noavx512.sh
cd "$(dirname "$0")/.." || exit 4
: "${OPMIG:?set OPMIG}" "${RUNNER:?set RUNNER}" "${CONFORMANCE:?set CONFORMANCE}"
QEMU=${QEMU:-qemu-x86_64}
# Haswell without the features TCG lacks (each would print a warning)
export QEMU_CPU="${QEMU_CPU:-Haswell-v4,-pcid,-x2apic,-tsc-deadline,-invpcid,-spec-ctrl}"
# OpenBLAS's kernels for that CPU, named so that opmig never runs itself
# again to choose them (cli/blas_env.c): an exec would leave the emulator
export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-Haswell}"
command -v "$QEMU" >/dev/null 2>&1 || { echo "noavx512: $QEMU not found (apt-get install qemu-user)" >&2; exit 4; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fail=0
t0=$(date +%s)

# the emulated CPU must lack AVX-512 and have AVX2, or this run shows nothing
cat >"$W/cpu.c" <<'EOF'
#include <stdio.h>
int main(void)
{
	__builtin_cpu_init();
	printf("avx512f %d avx2 %d\n", __builtin_cpu_supports("avx512f") != 0,
	       __builtin_cpu_supports("avx2") != 0);
	return 0;
}
EOF
${CC:-cc} -o "$W/cpu" "$W/cpu.c" || exit 4
isa=$("$QEMU" "$W/cpu") || exit 4
echo "== emulated CPU $QEMU_CPU: $isa"
[ "$isa" = "avx512f 0 avx2 1" ] || { echo "noavx512: the emulated CPU is not AVX2 without AVX-512" >&2; exit 4; }

echo "== unit tests (emulated)"
"$QEMU" "$RUNNER" >"$W/unit.out" 2>&1 || fail=1
grep -E '^kquant:|^ +(suites|tests|asserts) ' "$W/unit.out"
grep -q '^kquant: this CPU runs the avx2 path (avx2 yes, avx512f no)$' "$W/unit.out" ||
	{ echo "noavx512: the unit run did not take the AVX2 path" >&2; fail=1; }
[ $fail -eq 0 ] || grep -B2 -A12 'had failures' "$W/unit.out" | head -80
echo "   ($(($(date +%s) - t0)) s)"

echo "== conformance (emulated)"
# a case's time limit scaled for the emulation
"$QEMU" "$CONFORMANCE" --timeout 600 || fail=1
echo "   ($(($(date +%s) - t0)) s)"

# CLI tests: $OPMIG as a script that runs the binary under the emulator
printf '#!/bin/sh\nexec %s %s "$@"\n' "$QEMU" "$OPMIG" >"$W/opmig"
chmod +x "$W/opmig"
# (t0947: the channels-last pools' C loops; t1242 and t1244: the gather
# family's and Einsum's threaded loops without AVX-512)
for t in ${NOAVX512_CLI:-t0900-run t0940-lowp t0942-int-ops t0944-quant-ref t0950-llm-ops t1000-validate t1213-rnn-kernels t1217-rnn-paths t1214-act-chain t0947-layout-cl t1242-scatter-props t1244-einsum-props}; do
	t1=$(date +%s)
	if OPMIG="$W/opmig" TOP="$(pwd)" sh "tests/cli/$t.sh" >"$W/cli.out" 2>&1; then
		echo "ok   $t (emulated, $(($(date +%s) - t1)) s)"
	else
		fail=1
		echo "FAIL $t (emulated)"; sed 's/^/     | /' "$W/cli.out" | tail -40
	fi
done
echo "== noavx512: $([ $fail -eq 0 ] && echo passed || echo FAILED) in $(($(date +%s) - t0)) s"
exit $fail
