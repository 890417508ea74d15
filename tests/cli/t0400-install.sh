#!/bin/sh
# t0400: `make install PREFIX=...` installs the binary, the man pages, the
# rules folder and the runtime adapters of `opmig probe`; the installed
# binary runs outside the source tree and finds its rules under
# PREFIX/share/opmig, not in the tree it was built from.
. "$TOP/tests/cli/lib.sh"
P="$T/prefix"
make -s -C "$TOP" install PREFIX="$P" >"$T/make.log" 2>&1 || { cat "$T/make.log" >&2; fail "make install failed"; }
[ -x "$P/bin/opmig" ] || fail "no $P/bin/opmig"
for m in opmig opmig-inspect opmig-convert; do
	[ -f "$P/share/man/man1/$m.1" ] || fail "man page $m.1 not installed"
done
[ -d "$P/share/opmig/oprules" ] || fail "rules folder not installed"
[ -f "$P/share/man/man5/opmig-rules.5" ] || fail "opmig-rules.5 not installed"
ls "$P"/share/opmig/oprules/examples/*.json >/dev/null 2>&1 || fail "rules examples not installed"
for r in onnxruntime-node.js opencv-dnn.py; do
	[ -x "$P/share/opmig/runtimes/$r" ] || fail "runtime adapter $r not installed (executable)"
done
[ -f "$P/share/man/man1/opmig-probe.1" ] || fail "opmig-probe.1 not installed"
n_src=$(ls "$TOP"/oprules/*.json 2>/dev/null | wc -l)
n_dst=$(ls "$P"/share/opmig/oprules/*.json 2>/dev/null | wc -l)
[ "$n_src" -eq "$n_dst" ] || fail "installed $n_dst rules files, tree has $n_src"
cp "$TOP/testdata/sample.onnx" "$T/s.onnx"
cd "$T" || fail "cd"
run 0 "$P/bin/opmig" help
grep -q "^Target rules: $P/bin/../share/opmig/oprules\$" "$T/out" ||
	{ cat "$T/out" >&2; fail "installed binary does not use its own rules folder"; }
# A moved installation still finds its data.
mv "$P" "$T/moved"
run 0 "$T/moved/bin/opmig" help
grep -q "^Target rules: $T/moved/bin/../share/opmig/oprules\$" "$T/out" || fail "moved install lost its rules"
run 0 "$T/moved/bin/opmig" inspect s.onnx
grep -q "^model: s.onnx" "$T/out" || fail "installed inspect output"
run 0 "$T/moved/bin/opmig" targets
grep -q "generic-npu" "$T/out" || fail "installed targets do not list generic-npu"
OPMIG_DATADIR="$T/nowhere" "$T/moved/bin/opmig" help >"$T/out"
grep -q "^Target rules: $T/nowhere/oprules (missing)\$" "$T/out" || fail "OPMIG_DATADIR ignored"
exit 0
