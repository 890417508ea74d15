#!/bin/sh
# t0952-gqa.sh: com.microsoft GroupQueryAttention against onnxruntime-node
# (prompt, decode and chunked prefill, packed and separate QKV, grouped kv
# heads, rotary, windows, softcap, smooth softmax, head_sink, float16), the
# existing attention-family kernels on random inputs and the
# group-query-attention lowering: tests/ort/gqa_ort.py.  Then its inferred shapes, and the refusal of an
# input the kernel does not implement and of a total that fits no cache; the
# lowering refuses rotary caches with too few rows and lowers the same node
# with enough, lowers a constant seqlens_k that pads an entry after a past by
# its run-time path (the new row at seqlens_k, as onnxruntime places it) and
# the unpadded one by its static path.
: "${TOP:?set TOP to the repository root}" "${OPMIG:?set OPMIG to the binary}"
# shellcheck source=tests/cli/lib.sh
. "$TOP/tests/cli/lib.sh"
$PY -c 'import onnx, numpy' 2>/dev/null || { echo "notice: python-onnx absent, skipped"; exit 0; }
cd "$T" || fail "cannot cd to $T"

timeout 300 $PY "$TOP/tests/ort/gqa_ort.py" "$OPMIG" "$T/gqa" >"$T/gqa.out" 2>&1
rc=$?
cat "$T/gqa.out"
if [ $rc -eq 77 ]; then
	echo "notice: onnxruntime-node absent, its comparison skipped"
else
	[ $rc -eq 0 ] || fail "GroupQueryAttention or attention kernels differ from onnxruntime (above)"
	grep -q "^137 cases, 0 failures$" "$T/gqa.out" || fail "gqa_ort.py printed no summary"
fi

# decode: 4 query heads over 2 kv heads of 8, a 6-row past, total 7
$PY - <<'PYEOF' || fail "cannot write the models"
import onnx
from onnx import TensorProto as T, helper

def model(path, name, extra_in, extra_vi, total=7):
    vi = helper.make_tensor_value_info
    node = helper.make_node("GroupQueryAttention", ["q", "", "", "pk", "pv", "sl", "tot"] + extra_in,
                            ["y", "ok", "ov"], domain="com.microsoft", name=name,
                            num_heads=4, kv_num_heads=2)
    tot = helper.make_tensor("tot", T.INT32, [], [total])
    ins = [vi("q", T.FLOAT, [1, 1, 64]), vi("pk", T.FLOAT, [1, 2, 6, 8]),
           vi("pv", T.FLOAT, [1, 2, 6, 8]), vi("sl", T.INT32, [1])] + extra_vi
    outs = [vi(n, T.FLOAT, None) for n in ("y", "ok", "ov")]
    m = helper.make_model(helper.make_graph([node], "g", ins, outs, [tot]),
                          opset_imports=[helper.make_opsetid("", 21),
                                         helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    onnx.save(m, path)

model("gqa.onnx", "gqa0", [], [])
model("gqa_pos.onnx", "gqa_pos", ["", "", "pos"],
      [helper.make_tensor_value_info("pos", T.INT64, [1, 1])])
model("gqa_tot.onnx", "gqa_tot", [], [], total=9)
PYEOF
run 0 "$OPMIG" inspect gqa.onnx --shapes
grep -q "^  y  float\[1,1,32\]" "$T/out" || fail "output not (1, 1, 32)"
grep -q "^  ok  float\[1,2,7,8\]" "$T/out" || fail "present_key not (1, 2, 7, 8)"
grep -q "^  ov  float\[1,2,7,8\]" "$T/out" || fail "present_value not (1, 2, 7, 8)"
grep -q "^not inferred: 0 of 1 nodes" "$T/out" || fail "the node was not inferred"
run 3 "$OPMIG" run gqa_pos.onnx -O "$T/o"
grep -q "gqa_pos.onnx: node 'gqa_pos' (GroupQueryAttention): input position_ids is not supported" \
	"$T/err" || fail "position_ids not refused by name"
# 9 rows fit neither the 6-row past + 1 nor within its 6 rows
run 3 "$OPMIG" run gqa_tot.onnx -O "$T/o"
grep -q "node 'gqa_tot' (GroupQueryAttention): total_sequence_length 9 must be" "$T/err" ||
	fail "a total_sequence_length that fits no cache not refused"
$PY - <<'PYEOF' || fail "cannot write the lowering models"
import onnx
from onnx import TensorProto as T, helper

def model(path, name, sl=None, rows=0):
    vi = helper.make_tensor_value_info
    names = ["q", "", "", "pk", "pv", "sl", "tot"] + (["cs", "sn"] if rows else [])
    inits = [helper.make_tensor("tot", T.INT32, [], [7])]
    inits += [helper.make_tensor(n, T.FLOAT, [rows, 4], [0.5] * (rows * 4))
              for n in names[7:]]
    ins = [vi("q", T.FLOAT, [1, 1, 64]), vi("pk", T.FLOAT, [1, 2, 6, 8]),
           vi("pv", T.FLOAT, [1, 2, 6, 8])]
    if sl is None:
        ins.append(vi("sl", T.INT32, [1]))
    else:
        inits.append(helper.make_tensor("sl", T.INT32, [1], [sl]))
    node = helper.make_node("GroupQueryAttention", names, ["y", "ok", "ov"],
                            domain="com.microsoft", name=name, num_heads=4, kv_num_heads=2,
                            do_rotary=1 if rows else 0)
    outs = [vi(n, T.FLOAT, None) for n in ("y", "ok", "ov")]
    m = helper.make_model(helper.make_graph([node], "g", ins, outs, inits),
                          opset_imports=[helper.make_opsetid("", 17),
                                         helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    onnx.save(m, path)

model("low_pad.onnx", "gqa_pad", sl=3)
model("low_ok.onnx", "gqa_ok", sl=6)
model("low_rows.onnx", "gqa_rows", rows=6)
model("low_rot.onnx", "gqa_rot", rows=7)
PYEOF
run 1 "$OPMIG" migrate low_rows.onnx --target openvino -o "$T/low_rows.out.onnx" --no-validate
! grep -q "group-query-attention.*GroupQueryAttention" "$T/out" || fail "low_rows.onnx lowered"
grep -q "node 'gqa_.*' (GroupQueryAttention): the target has no" "$T/out" ||
	fail "low_rows.onnx: the node is not left blocked"
# the blocker says why the lowering refused it
why="the rotary caches have 6 rows, positions reach 7"
grep -q "(GroupQueryAttention): .*; not lowered by group-query-attention: $why" "$T/out" ||
	{ cat "$T/out"; fail "low_rows.onnx: the blocker does not say why it was not lowered"; }
for m in low_ok:matmul-softmax low_rot:rotary low_pad:dynamic; do
	run 0 "$OPMIG" migrate ${m%%:*}.onnx --target openvino -o "$T/${m%%:*}.out.onnx"
	grep -q "group-query-attention (${m#*:}): .*GroupQueryAttention" "$T/out" ||
		{ cat "$T/out"; fail "${m%%:*}.onnx not lowered by ${m#*:}"; }
	grep -q "^validation .*: equivalent" "$T/out" || fail "${m%%:*}.onnx: not validated"
done
echo "ok: GroupQueryAttention and the attention kernels agree with onnxruntime"
