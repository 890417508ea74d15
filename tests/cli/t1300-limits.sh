#!/bin/sh
# t1300: resource limits.  Models declaring absurd sizes are refused
# quickly (each command well inside its 60 s limit, at most 1 GB of
# memory) with exit 3 and one clear line: a 10^12-element initializer (in
# the file or in external data), a Constant holding one, a ConstantOfShape
# asking for one (refused by the interpreter, while scan still works), a
# .npy input declaring one, 10^7 nodes, 10^6 attributes on a node, 1,000
# nested If subgraphs, a chain of 20,000 functions and a function calling
# itself.  The models are made here by a small protobuf writer (no onnx
# needed).
. "$TOP/tests/cli/lib.sh"
cd "$TOP" || fail "cannot cd to $TOP"
M=$T/m
mkdir "$M" || fail "mkdir"
$PY - "$M" >"$T/gen" 2>&1 <<'PYEOF' || { cat "$T/gen" >&2; fail "cannot write the models"; }
import sys, struct, os
out = sys.argv[1]
def varint(n):
    if n < 0: n += 1 << 64
    b = bytearray()
    while True:
        x = n & 0x7f; n >>= 7
        if n: b.append(x | 0x80)
        else: b.append(x); return bytes(b)
def key(f, wt): return varint(f << 3 | wt)
def vint(f, n): return key(f, 0) + varint(n)
def ln(f, b):
    if isinstance(b, str): b = b.encode()
    return key(f, 2) + varint(len(b)) + b
# TensorProto: dims=1, data_type=2, name=8, raw_data=9, data_location=14, external_data=13
def tensor(name, dtype, dims, raw=None, ext=None):
    b = b"".join(vint(1, d) for d in dims) + vint(2, dtype) + ln(8, name)
    if raw is not None: b += ln(9, raw)
    if ext: b += b"".join(ln(13, ln(1, k) + ln(2, v)) for k, v in ext) + vint(14, 1)
    return b
# ValueInfo: name=1, type=2; TypeProto tensor_type=1 {elem_type=1, shape=2 {dim=1 {dim_value=1}}}
def vi(name, elem, dims=None):
    t = vint(1, elem)
    if dims is not None: t += ln(2, b"".join(ln(1, vint(1, d)) for d in dims))
    return ln(1, name) + ln(2, ln(1, t))
# AttributeProto: name=1, f=2, i=3, s=4, t=5, g=6, ints=8, type=20
def attr_t(name, t): return ln(1, name) + ln(5, t) + vint(20, 4)
def attr_i(name, i): return ln(1, name) + vint(3, i) + vint(20, 2)
def attr_g(name, g): return ln(1, name) + ln(6, g) + vint(20, 5)
# NodeProto: input=1, output=2, name=3, op_type=4, attribute=5, domain=7
def node(op, ins, outs, name="", attrs=(), domain=None):
    b = b"".join(ln(1, i) for i in ins) + b"".join(ln(2, o) for o in outs) + ln(3, name) + ln(4, op)
    b += b"".join(ln(5, a) for a in attrs)
    if domain: b += ln(7, domain)
    return b
# GraphProto: node=1, name=2, initializer=5, input=11, output=12
def graph(nodes, name="g", inits=(), ins=(), outs=()):
    return (b"".join(ln(1, n) for n in nodes) + ln(2, name) + b"".join(ln(5, t) for t in inits)
            + b"".join(ln(11, i) for i in ins) + b"".join(ln(12, o) for o in outs))
# ModelProto: ir_version=1, opset_import=8 {domain=1, version=2}, graph=7, functions=25
def model(g, opsets=(("", 13),), extra=b""):
    return (vint(1, 8) + b"".join(ln(8, ln(1, d) + vint(2, v)) for d, v in opsets) + ln(7, g) + extra)
FLOAT, INT64, BOOL = 1, 7, 9
BIG = 10**6
w = lambda name, data: open(os.path.join(out, name), "wb").write(data)

# 10^12-element initializer, 4 bytes of data
w("init-huge.onnx", model(graph([node("Relu", ["w"], ["y"])], inits=[tensor("w", FLOAT, [BIG, BIG], b"\0" * 4)], outs=[vi("y", FLOAT)])))
# the same with external data (the file is 16 bytes)
w("w.bin", b"\0" * 16)
w("ext-huge.onnx", model(graph([node("Relu", ["w"], ["y"])], inits=[tensor("w", FLOAT, [BIG, BIG], ext=[("location", "w.bin")])], outs=[vi("y", FLOAT)])))
# a Constant whose value tensor declares 10^12 elements
w("const-huge.onnx", model(graph([node("Constant", [], ["y"], "c", [attr_t("value", tensor("v", FLOAT, [BIG, BIG], b"\0" * 4))])], outs=[vi("y", FLOAT)])))
# ConstantOfShape fed a small shape tensor asking for 10^12 elements
shape = struct.pack("<qq", BIG, BIG)
w("cos-huge.onnx", model(graph([node("ConstantOfShape", ["s"], ["y"], "cos"), node("Relu", ["y"], ["z"], "r")],
                               inits=[tensor("s", INT64, [2], shape)], outs=[vi("z", FLOAT)])))
# ... and the same fed by a graph input holding the shape at run time
w("cos-input.onnx", model(graph([node("ConstantOfShape", ["s"], ["y"], "cos")],
                                ins=[vi("s", INT64, [2])], outs=[vi("y", FLOAT)])))
# 10^7 nodes (empty NodeProtos: 2 bytes each)
w("nodes.onnx", model(ln(1, b"") * 10**7 + ln(2, "g")))
# 10^6 attributes on one node
attrs = b"".join(ln(5, attr_i("a%d" % i, i)) for i in range(10**6))
w("attrs.onnx", model(graph([], outs=[vi("y", FLOAT)])[:0] + ln(1, ln(1, "x") + ln(2, "y") + ln(4, "Relu") + attrs) + ln(2, "g") + ln(11, vi("x", FLOAT, [1])) + ln(12, vi("y", FLOAT, [1]))))
# 1,000 nested If subgraphs
leaf = graph([node("Identity", ["x"], ["e"], "e")], "leaf", outs=[vi("e", FLOAT)])
g = graph([node("Identity", ["x"], ["o0"], "id")], "b0", outs=[vi("o0", FLOAT)])
for k in range(1, 1000):
    g = graph([node("If", ["c"], ["o%d" % k], "if%d" % k, [attr_g("then_branch", g), attr_g("else_branch", leaf)])], "b%d" % k, outs=[vi("o%d" % k, FLOAT)])
w("deep-if.onnx", model(graph([node("If", ["c"], ["y"], "top", [attr_g("then_branch", g), attr_g("else_branch", leaf)])], "main",
                              ins=[vi("c", BOOL, []), vi("x", FLOAT, [1])], outs=[vi("y", FLOAT)])))
# a chain of 20,000 model-local functions, each calling the next
def function(name, node_bytes):
    return ln(1, name) + ln(4, "x") + ln(5, "y") + ln(7, node_bytes) + ln(9, ln(1, "") + vint(2, 13)) + ln(9, ln(1, "local") + vint(2, 1)) + ln(10, "local")
N = 20000
fns = b"".join(ln(25, function("f%d" % i, node("f%d" % (i + 1), ["x"], ["y"], "n%d" % i, domain="local") if i + 1 < N else node("Relu", ["x"], ["y"], "relu"))) for i in range(N))
w("fn-chain.onnx", model(graph([node("f0", ["x"], ["y"], "call", domain="local")], "main", ins=[vi("x", FLOAT, [2])], outs=[vi("y", FLOAT, [2])]),
                         opsets=(("", 13), ("local", 1)), extra=fns))
w("fn-self.onnx", model(graph([node("f0", ["x"], ["y"], "call", domain="local")], "main", ins=[vi("x", FLOAT, [2])], outs=[vi("y", FLOAT, [2])]),
                         opsets=(("", 13), ("local", 1)), extra=ln(25, function("f0", node("f0", ["x"], ["y"], "me", domain="local")))))
PYEOF

# limited EXPECTED_RC PATTERN CMD...: run CMD (60 s, 1 GB of address
# space under the release build; ASan needs its own) and want one stderr
# line matching PATTERN (PATTERN "" for no check)
limited() {
	want=$1; pat=$2; shift 2
	case "$OPMIG" in
	*/asan/*) mem=unlimited ;;
	*) mem=1048576 ;;
	esac
	( ulimit -v $mem && export OPENBLAS_NUM_THREADS=1 && exec timeout 60 "$@" ) >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" -eq "$want" ] || { cat "$T/err" >&2; fail "'$*' exited $rc, want $want"; }
	[ -z "$pat" ] && return 0
	[ "$(wc -l <"$T/err")" -eq 1 ] || { cat "$T/err" >&2; fail "'$*': want one stderr line"; }
	grep -q "$pat" "$T/err" || { cat "$T/err" >&2; fail "'$*': message lacks '$pat'"; }
}

# 1. 10^12 elements declared by dims, with 4 bytes of data
limited 3 "init-huge.onnx: tensor 'w': raw_data has 4 bytes, dims x element size is 4000000000000" \
	"$OPMIG" inspect "$M/init-huge.onnx"
limited 3 "too short for offset 0 + length 4000000000000" "$OPMIG" inspect "$M/ext-huge.onnx"
limited 3 "node 'c' (Constant): tensor 'v': raw_data has 4 bytes" "$OPMIG" scan "$M/const-huge.onnx" --target generic-npu

# 2. ConstantOfShape of [10^6, 10^6]: inspecting and scanning need no
# data; running it, or folding it in migrate, is refused before malloc
limited 0 "" "$OPMIG" inspect --shapes "$M/cos-huge.onnx"
grep -q 'float\[1000000,1000000\]' "$T/out" || fail "inspect --shapes did not infer the huge shape"
limited 0 "" "$OPMIG" scan "$M/cos-huge.onnx" --target generic-npu --fail-on never
limited 3 "node 'cos' (ConstantOfShape): tensor of 4000000000000 bytes is larger than this machine's memory" \
	"$OPMIG" run "$M/cos-huge.onnx"
# migrate: folding skips it (a note), and validation cannot run the
# original: exit 1 (not proven, OUT not written), the reason in the report
limited 1 "" "$OPMIG" migrate "$M/cos-huge.onnx" -o "$T/cos.onnx"
grep -q "^validation: could not run: .*tensor of 4000000000000 bytes is larger than this machine's memory" \
	"$T/out" || fail "migrate of cos-huge: the report does not say why: $(cat "$T/out")"
[ ! -e "$T/cos.onnx" ] || fail "migrate wrote a model it could not validate"
# (the shape given at run time: 10^6 x 10^6 from a .npy input)
$PY -c "import sys, struct; h=b\"{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }\"; h += b' ' * (118 - len(h)) + b'\n'; open(sys.argv[1], 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h + struct.pack('<qq', 10**6, 10**6))" "$T/s.npy" ||
	fail "cannot write s.npy"
limited 3 "larger than this machine's memory" "$OPMIG" run "$M/cos-input.onnx" "$T/s.npy"
# (an input file declaring 10^12 elements, holding 8 bytes)
$PY -c "import sys, struct; h=b\"{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }\"; h += b' ' * (118 - len(h)) + b'\n'; open(sys.argv[1], 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h + bytes(8))" "$T/big.npy" ||
	fail "cannot write big.npy"
limited 3 "big.npy: .*4000000000000 bytes\|big.npy: .*truncated" "$OPMIG" run testdata/sample.onnx "$T/big.npy"

# 3. counts checked before anything is unpacked
limited 3 "nodes.onnx: model has more than 2000000 nodes" "$OPMIG" inspect "$M/nodes.onnx"
limited 3 "attrs.onnx: a node has more than 10000 attributes" "$OPMIG" scan "$M/attrs.onnx" --target generic-npu

# 4. nesting: subgraphs by the message depth limit, calls by verify
limited 3 "deep-if.onnx: model nests messages deeper than 64 levels" "$OPMIG" inspect "$M/deep-if.onnx"
limited 3 "fn-chain.onnx: functions call each other more than 32 levels deep" \
	"$OPMIG" scan "$M/fn-chain.onnx" --target generic-npu
limited 3 "fn-self.onnx: function 'f0' calls itself" "$OPMIG" migrate "$M/fn-self.onnx" -o "$T/self.onnx"
limited 3 "calls itself" "$OPMIG" run "$M/fn-self.onnx"
exit 0
