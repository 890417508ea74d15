#!/bin/sh
# t1400: every fuzz seed and every regression input (tests/fuzz/corpus/NAME,
# tests/fuzz/regressions/NAME) through its harness without libFuzzer: the
# replay programs $FUZZ_REPLAY/replay-NAME (built by `make test`, under
# ASan/UBSan with `make check`); a crash, hang or sanitizer report fails.
. "$(dirname "$0")/lib.sh"
[ -n "${FUZZ_REPLAY:-}" ] || { echo "skip: FUZZ_REPLAY not set (run through make test)"; exit 0; }
cd "$TOP" || fail "no source tree"
n=0
for src in tests/fuzz/fuzz_*.c; do
	name=${src#tests/fuzz/fuzz_}; name=${name%.c}
	bin=$FUZZ_REPLAY/replay-$name
	[ -x "$bin" ] || fail "$bin missing"
	run 0 "$bin" tests/fuzz/corpus/$name tests/fuzz/regressions/$name
	echo "$name: $(cat "$T/out")"
	n=$((n + 1))
done
[ "$n" -ge 7 ] || fail "only $n harnesses"
