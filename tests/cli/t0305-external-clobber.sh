#!/bin/sh
# t0305: what is written never replaces what the input reads.  The external
# data file named by --external-data may not be OUT itself (however it is
# spelled), nor the input model, nor one of the input's external data files
# (also through a symbolic or hard link); OUT may not be one of the input's
# external data files either.  Each is refused before anything is written:
# exit 3, one line naming the file, the input unchanged, nothing new in the
# folder; in convert, migrate and quantize alike.  An unrelated file already
# at the data path is replaced whole by a rename, as OUT is (a hard link to
# it keeps the old bytes).
. "$TOP/tests/cli/lib.sh"
cd "$TOP" || fail "cannot cd to $TOP"
SAMPLE=testdata/sample.onnx
[ -f testdata/ext/model.onnx ] && [ -f "$SAMPLE" ] || fail "testdata missing (run testdata/gen/make_testdata.py)"

W="$T/w"
mkdir "$W" && cp "$SAMPLE" testdata/ext/model.onnx testdata/ext/weights.bin "$W/" ||
	fail "cannot set up $W"
cp -p "$W/weights.bin" "$T/weights.orig" && cp -p "$W/model.onnx" "$T/model.orig" ||
	fail "cannot keep the originals"
ln -s weights.bin "$W/wsym" && ln "$W/weights.bin" "$W/whard" || fail "cannot make links"
listing() { (cd "$W" && ls -A | sort); }
before=$(listing)

# refused RC WANT CMD...: run CMD in $W, want exit RC and one stderr line
# matching WANT; the inputs keep their bytes and no file appears or goes
refused() {
	want_rc=$1 want=$2
	shift 2
	(cd "$W" && timeout 120 "$@") >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" -eq "$want_rc" ] || { cat "$T/err" >&2; fail "'$*' exited $rc, want $want_rc"; }
	[ "$(wc -l <"$T/err")" -eq 1 ] || { cat "$T/err" >&2; fail "'$*': want one stderr line"; }
	grep -q "$want" "$T/err" || { cat "$T/err" >&2; fail "'$*': message lacks '$want'"; }
	cmp -s "$W/weights.bin" "$T/weights.orig" || fail "'$*' changed the input's weights.bin"
	cmp -s "$W/model.onnx" "$T/model.orig" || fail "'$*' changed the input model.onnx"
	cmp -s "$W/sample.onnx" "$SAMPLE" || fail "'$*' changed the input sample.onnx"
	[ "$(listing)" = "$before" ] || fail "'$*' left: $(listing | tr '\n' ' ')"
}

for cmd in "convert" "migrate --target ascend --no-validate -o" "quantize --samples 1 -o"; do
	# "$@": what goes between MODEL and OUT
	set -- $cmd
	c=$1
	shift
	# the external data would be OUT itself: as written, and through ./
	# with OUT given by its absolute path
	refused 3 "^opmig: out.onnx: external data file 'out.onnx' would be the output model itself$" \
		"$OPMIG" $c sample.onnx "$@" out.onnx --external-data out.onnx
	refused 3 "external data file './out.onnx' would be the output model itself" \
		"$OPMIG" $c sample.onnx "$@" "$W/out.onnx" --external-data ./out.onnx
	# the input model's own external data, by name and through links
	for x in weights.bin ./weights.bin wsym whard; do
		refused 3 "^opmig: out.onnx: external data file '$x' would overwrite the input model's external data 'weights.bin'$" \
			"$OPMIG" $c model.onnx "$@" out.onnx --external-data "$x"
	done
	# the input model file
	refused 3 "external data file 'model.onnx' would overwrite the input model 'model.onnx'" \
		"$OPMIG" $c model.onnx "$@" out.onnx --external-data model.onnx
	# OUT over the input's external data
	refused 3 "^opmig: weights.bin: refusing to write over the input model's external data 'weights.bin'$" \
		"$OPMIG" $c model.onnx "$@" weights.bin
	refused 3 "refusing to write over the input model's external data 'weights.bin'" \
		"$OPMIG" $c model.onnx "$@" wsym
done

# a folder at the data path: refused before the run, not when renaming
mkdir "$W/dir" || fail "cannot create $W/dir"
before=$(listing)
refused 3 "external data file 'dir' exists and is not a regular file" \
	"$OPMIG" convert model.onnx out.onnx --external-data dir

# an unrelated file at the data path is replaced by a rename, like OUT:
# its hard link keeps the old bytes; the model written reads the new ones
echo "unrelated bytes" >"$W/other.bin" && ln "$W/other.bin" "$W/other.link" ||
	fail "cannot make other.bin"
run 0 "$OPMIG" convert "$W/sample.onnx" "$W/s.onnx" --external-data other.bin --size-threshold 64
[ "$(cat "$W/other.link")" = "unrelated bytes" ] || fail "other.bin was written in place, not replaced"
[ "$(wc -c <"$W/other.bin")" -gt 1000 ] || fail "other.bin did not get the weights"
run 0 "$OPMIG" run "$W/s.onnx"
run 0 "$OPMIG" convert "$W/model.onnx" "$W/m2.onnx" --external-data w2.bin --size-threshold 16
run 0 "$OPMIG" run "$W/m2.onnx"
cmp -s "$W/weights.bin" "$T/weights.orig" || fail "converting model.onnx changed weights.bin"
echo "ok: external data over OUT, the input or its data refused in convert, migrate and quantize"
