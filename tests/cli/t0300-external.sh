#!/bin/sh
# t0300: external data.  A model with external initializers converts and
# inspects (also from another working folder); --external-data writes big
# initializers to a file next to the output and keeps the model equal;
# convert refuses to write over its input and fails cleanly when the output
# folder does not exist.
. "$TOP/tests/cli/lib.sh"
cd "$TOP" || fail "cannot cd to $TOP"
JUDGE="$PY tests/roundtrip_judge.py"
EXT=testdata/ext/model.onnx
SAMPLE=testdata/sample.onnx
[ -f "$EXT" ] && [ -f "$SAMPLE" ] || fail "testdata missing (run testdata/gen/make_testdata.py)"

judge() {
	$JUDGE "$1" "$2" >"$T/judge" 2>&1 || { cat "$T/judge" >&2; fail "$2 differs from $1"; }
}
# one_line WHAT: $T/err holds exactly one newline-terminated line
one_line() {
	[ "$(wc -l <"$T/err")" -eq 1 ] && [ "$(awk 'END { print NR }' "$T/err")" -eq 1 ] ||
		{ cat "$T/err" >&2; fail "$1: want exactly one stderr line"; }
}

# 1. a model whose initializers live in weights.bin
run 0 "$OPMIG" convert "$EXT" "$T/ext-out.onnx"
judge "$EXT" "$T/ext-out.onnx"
run 0 "$OPMIG" inspect "$EXT"
[ -s "$T/out" ] || fail "inspect $EXT printed nothing"
mkdir "$T/cwd" && cd "$T/cwd" || fail "cannot enter $T/cwd"
run 0 "$OPMIG" inspect "$TOP/$EXT"          # location is relative to the model
run 0 "$OPMIG" convert "$TOP/$EXT" "$T/ext-out2.onnx"
cd "$TOP" || fail "cannot cd to $TOP"
judge "$EXT" "$T/ext-out2.onnx"

# 2. --external-data: initializers of >= 16 bytes go to w.bin next to OUT
mkdir "$T/x" && cd "$T/cwd" || fail "cannot set up $T/x"
run 0 "$OPMIG" convert "$TOP/$SAMPLE" "$T/x/s.onnx" --external-data w.bin --size-threshold 16
cd "$TOP" || fail "cannot cd to $TOP"
[ -z "$(ls -A "$T/cwd")" ] || fail "convert wrote into the working folder: $(ls -A "$T/cwd")"
[ -f "$T/x/w.bin" ] || fail "no w.bin next to the output: $(ls -A "$T/x")"
$PY - "$T/x/s.onnx" w.bin 16 >"$T/py" 2>&1 <<'EOF' || { cat "$T/py" >&2; fail "initializers not external as asked"; }
import os, sys
import onnx
from onnx import TensorProto, mapping
path, loc, threshold = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = onnx.load(path, load_external_data=False)
size = os.path.getsize(os.path.join(os.path.dirname(path), loc))
bad, n_ext = [], 0
for t in m.graph.initializer:
    numel = 1
    for d in t.dims:
        numel *= d
    nbytes = numel * mapping.TENSOR_TYPE_TO_NP_TYPE[t.data_type].itemsize
    ext = t.data_location == TensorProto.EXTERNAL
    kv = {e.key: e.value for e in t.external_data}
    if nbytes >= threshold:
        if not ext or kv.get("location") != loc or t.HasField("raw_data"):
            bad.append("%s (%d bytes) is not external in %s: %s" % (t.name, nbytes, loc, kv))
            continue
        n_ext += 1
        off, length = int(kv.get("offset", "0")), int(kv.get("length", nbytes))
        if length != nbytes or off + length > size:
            bad.append("%s: offset %d length %d, %d bytes wanted, file has %d" % (t.name, off, length, nbytes, size))
    elif ext:
        bad.append("%s (%d bytes) is external, below the threshold" % (t.name, nbytes))
if n_ext == 0:
    bad.append("no initializer is external")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
judge "$SAMPLE" "$T/x/s.onnx"
# external in, external out
mkdir "$T/y" || fail "cannot create $T/y"
run 0 "$OPMIG" convert "$EXT" "$T/y/e.onnx" --external-data data.bin --size-threshold 16
[ -f "$T/y/data.bin" ] || fail "no data.bin next to the output: $(ls -A "$T/y")"
judge "$EXT" "$T/y/e.onnx"

# 3. never write over the input, however it is spelled
mkdir "$T/same" || fail "cannot create $T/same"
cp "$SAMPLE" "$T/same/x.onnx" || fail "cannot copy $SAMPLE"
run 2 "$OPMIG" convert "$T/same/x.onnx" "$T/same/x.onnx"
cmp -s "$SAMPLE" "$T/same/x.onnx" || fail "convert X X changed X"
run 2 "$OPMIG" convert "$T/same/x.onnx" "$T/same/./x.onnx"
cmp -s "$SAMPLE" "$T/same/x.onnx" || fail "convert X ./X changed X"
[ "$(ls -A "$T/same")" = x.onnx ] || fail "left behind: $(ls -A "$T/same")"

# 4. an output folder that does not exist
timeout 60 "$OPMIG" convert "$SAMPLE" "$T/nope/out.onnx" >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" -eq 3 ] || [ "$rc" -eq 4 ] || { cat "$T/err" >&2; fail "convert into a missing folder exited $rc, want 3 or 4"; }
one_line "convert into a missing folder"
[ ! -e "$T/nope" ] || fail "convert created $T/nope"
echo "ok: external data read and written, overwrite and missing folder refused"
