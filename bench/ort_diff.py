#!/usr/bin/python3
"""ort_diff.py [OPMIG [SEED [WORKDIR]]]: differential check of the conv,
pool, matmul and quantized kernels against onnxruntime-node: random
single-node models (Conv with groups/dilations/strides/pads/auto_pad,
with constant weights on the paths that pack them, depthwise, ConvTranspose with pads/output_padding/output_shape/SAME,
Max/Average/LpPool with ceil_mode/dilations/count_include_pad/indices,
int8/uint8 MaxPool, MatMul broadcasting, Gemm (and both against constant
weights large enough for the packed path), MatMulInteger, ConvInteger,
QLinearMatMul, QLinearConv, global pools, DeformConv, Col2Im) run by
`opmig run -O` (2 threads, three runs, the last one's outputs) and by
bench/ort_run.js, compared with
rtol = atol = 1e-4.  Cases onnxruntime refuses are skipped.  Needs
.cache/npm/node_modules/onnxruntime-node (make deps installs it).
Prints one line per skipped or differing case, then a summary; exit 1
when a case differs."""
import json
import os
import random
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPMIG = sys.argv[1] if len(sys.argv) > 1 else "bin/opmig"
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 7
WORK = sys.argv[3] if len(sys.argv) > 3 else "/tmp/opmig-ort-diff"
rng = np.random.default_rng(SEED)
random.seed(SEED)
NP2T = {np.float32: TensorProto.FLOAT, np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8, np.int64: TensorProto.INT64, np.int32: TensorProto.INT32, np.float64: TensorProto.DOUBLE}
NP2S = {np.float32: "float32", np.int8: "int8", np.uint8: "uint8", np.int64: "int64", np.int32: "int32", np.float64: "float64"}
fails = 0; total = 0
def run(name, op, inputs, attrs, n_out=1, opset=19, inits=()):
    global fails, total
    total += 1
    d = f"{WORK}/{name}"; os.makedirs(d, exist_ok=True)
    vis = [helper.make_tensor_value_info(k, NP2T[v.dtype.type], v.shape) for k, v in inputs if k not in inits]
    init = [numpy_helper.from_array(v, k) for k, v in inputs if k in inits]
    outs = [f"y{i}" for i in range(n_out)]
    node = helper.make_node(op, [k for k, _ in inputs], outs, **attrs)
    g = helper.make_graph([node], "g", vis, [helper.make_empty_tensor_value_info(o) for o in outs], init)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]); m.ir_version = 8
    onnx.save(m, f"{d}/m.onnx")
    spec = []; args = []
    for i, (k, v) in enumerate([(k, v) for k, v in inputs if k not in inits]):
        open(f"{d}/{k}.bin", "wb").write(v.tobytes())
        spec.append({"name": k, "type": NP2S[v.dtype.type], "dims": list(v.shape), "file": f"{d}/{k}.bin"})
        onnx.save_tensor(numpy_helper.from_array(v, k), f"{d}/in_{k}.pb"); args.append(f"{k}={d}/in_{k}.pb")
    json.dump(spec, open(f"{d}/spec.json", "w"))
    r = subprocess.run(["node", os.path.join(HERE, "ort_run.js"), f"{d}/m.onnx", f"{d}/spec.json", f"{d}/ort.json"], capture_output=True, text=True)
    if r.returncode:
        print(f"SKIP {name}: ort: {r.stderr.strip()[:200]}"); total -= 1; return
    # the third run's outputs: the paths kept weights take (a MatMul
    # packs its constant B on its second run)
    r2 = subprocess.run([OPMIG, "run", f"{d}/m.onnx", *args, "-O", f"{d}/out", "--threads", "2", "--repeat", "3"], capture_output=True, text=True)
    if r2.returncode:
        print(f"FAIL {name}: opmig: {r2.stderr.strip()[:300]}"); fails += 1; return
    ort = json.load(open(f"{d}/ort.json"))
    for i, o in enumerate(outs):
        t = onnx.load_tensor(f"{d}/out/output_{i}.pb"); a = numpy_helper.to_array(t)
        b = np.array(ort[o]["data"]).reshape(ort[o]["dims"])
        if list(a.shape) != list(b.shape):
            print(f"FAIL {name}: output {i} shape {a.shape} vs ort {b.shape}"); fails += 1; return
        a = a.astype(np.float64); b = b.astype(np.float64)
        bad = ~(np.isclose(a, b, rtol=1e-4, atol=1e-4) | (np.isnan(a) & np.isnan(b)))
        if bad.any():
            idx = np.argwhere(bad)[0]
            print(f"FAIL {name}: output {i} {bad.sum()} differ, at {tuple(idx)} {a[tuple(idx)]} vs ort {b[tuple(idx)]} attrs={attrs}"); fails += 1; return
def f32(*s): return rng.standard_normal(s).astype(np.float32)
# Conv
for t in range(25):
    nsp = random.choice([1, 2, 2, 3]); g = random.choice([1, 1, 2, 3]); cg = random.randint(1, 3); mg = random.randint(1, 3)
    ks = [random.randint(1, 3) for _ in range(nsp)]; st = [random.randint(1, 3) for _ in range(nsp)]; dl = [random.randint(1, 2) for _ in range(nsp)]
    ins = [random.randint(5, 9) for _ in range(nsp)]
    attrs = dict(group=g, kernel_shape=ks, strides=st, dilations=dl)
    ap = random.choice(["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"])
    if ap == "NOTSET": attrs["pads"] = [random.randint(0, 2) for _ in range(2 * nsp)]
    else: attrs["auto_pad"] = ap
    inp = [("x", f32(2, g * cg, *ins)), ("w", f32(g * mg, cg, *ks))]
    if random.random() < 0.5: inp.append(("b", f32(g * mg)))
    run(f"conv{t}", "Conv", inp, attrs)
# Conv with weights as initializers, wide enough for the paths that keep
# derived weights per session: packed products (at most 64 output
# positions) and Winograd (3x3 stride 1, 16+ channels, 100+ outputs)
for t in range(12):
    g = random.choice([1, 1, 2]); cg = random.randint(8, 24); mg = random.randint(8, 40)
    k = random.choice([1, 3, 3]); s = random.choice([1, 1, 2]); hw = random.randint(5, 14)
    attrs = dict(group=g, kernel_shape=[k, k], strides=[s, s], pads=[random.randint(0, k // 2 + 1) for _ in range(4)])
    inp = [("x", f32(random.choice([1, 2]), g * cg, hw, hw + random.randint(0, 3))), ("w", f32(g * mg, cg, k, k)), ("b", f32(g * mg))]
    run(f"convc{t}", "Conv", inp, attrs, inits=("w", "b"))
# ... and on the channels-in-lanes path (rows of at most 14 outputs, 24+
# output channels, 256+ steps): 1x1 and 3x3, strides 1 and 2, pads,
# panels of 32 and 64 channels
for t in range(10):
    k = random.choice([1, 3, 3]); s = random.choice([1, 1, 2]); m = random.randint(24, 100)
    c = random.randint(256, 300) if k == 1 else random.randint(29, 72)
    h = random.randint(3, 14) * s; w = random.randint(3, 14) * s
    attrs = dict(kernel_shape=[k, k], strides=[s, s], pads=[random.randint(0, k // 2) for _ in range(4)])
    inp = [("x", f32(random.choice([1, 2]), c, h, w)), ("w", f32(m, c, k, k)), ("b", f32(m))]
    run(f"convl{t}", "Conv", inp, attrs, inits=("w", "b"))
# depthwise 2D
for t in range(6):
    c = random.randint(2, 5); mult = random.choice([1, 2]); k = random.choice([3, 5]); s = random.choice([1, 2])
    run(f"dw{t}", "Conv", [("x", f32(1, c, 11, 9)), ("w", f32(c * mult, 1, k, k)), ("b", f32(c * mult))], dict(group=c, strides=[s, s], pads=[k // 2] * 4, dilations=[random.choice([1, 2])] * 2))
# ConvTranspose
for t in range(20):
    nsp = random.choice([1, 2, 2, 3]); g = random.choice([1, 1, 2]); cg = random.randint(1, 3); mg = random.randint(1, 3)
    ks = [random.randint(1, 3) for _ in range(nsp)]; st = [random.randint(1, 3) for _ in range(nsp)]; dl = [random.randint(1, 2) for _ in range(nsp)]
    ins = [random.randint(2, 5) for _ in range(nsp)]
    attrs = dict(group=g, kernel_shape=ks, strides=st, dilations=dl)
    mode = random.choice(["pads", "pads", "op", "shape", "same"])
    if mode == "pads": attrs["pads"] = [random.randint(0, 1) for _ in range(2 * nsp)]
    if mode == "op": attrs["output_padding"] = [random.randint(0, s - 1) if s > 1 else 0 for s in st]
    if mode == "shape": attrs["output_shape"] = [st[i] * (ins[i] - 1) + (ks[i] - 1) * dl[i] + 1 + random.randint(-1, 1) for i in range(nsp)]
    if mode == "same": attrs["auto_pad"] = random.choice(["SAME_UPPER", "SAME_LOWER"])
    inp = [("x", f32(1, g * cg, *ins)), ("w", f32(g * cg, mg, *ks))]
    if random.random() < 0.5: inp.append(("b", f32(g * mg)))
    run(f"convt{t}_{mode}", "ConvTranspose", inp, attrs)
# pools
for t in range(30):
    nsp = random.choice([1, 2, 2, 3]); ks = [random.randint(1, 3) for _ in range(nsp)]; st = [random.randint(1, 3) for _ in range(nsp)]
    # windows no wider than the input: there onnxruntime's integer
    # division (floor mode) gives one output where the spec's floor gives
    # none
    ins = [random.randint(5, 9) for _ in range(nsp)]
    op = random.choice(["MaxPool", "AveragePool", "LpPool"])
    attrs = dict(kernel_shape=ks, strides=st)
    if random.random() < 0.7: attrs["pads"] = [random.randint(0, k - 1) for k in ks] * 2
    if random.random() < 0.5: attrs["ceil_mode"] = 1
    if op != "LpPool" and random.random() < 0.5: attrs["dilations"] = [random.randint(1, 2) for _ in range(nsp)]
    if op == "AveragePool": attrs["count_include_pad"] = random.randint(0, 1)
    if op == "LpPool": attrs["p"] = random.choice([1, 2, 3])
    nout = 2 if op == "MaxPool" and random.random() < 0.5 else 1
    if nout == 2: attrs["storage_order"] = random.randint(0, 1) if nsp == 2 else 0
    run(f"pool{t}_{op}", op, [("x", f32(2, 3, *ins))], attrs, n_out=nout, opset=19 if op != "LpPool" else 18)
# column-stride-2 max pools on rows of 24 to 60 and 20 planes (k_pool_s2.c's
# fast path, taken before the sixteen-plane kernel on such rows)
for t in range(6):
    h, w = random.randint(20, 60), random.randint(24, 60)
    kh, kw = random.choice([2, 3]), random.choice([2, 3])
    attrs = dict(kernel_shape=[kh, kw], strides=[random.randint(1, 2), 2])
    if random.random() < 0.7: attrs["pads"] = [random.randint(0, kh - 1), random.randint(0, kw - 1), random.randint(0, kh - 1), random.randint(0, kw - 1)]
    if random.random() < 0.5: attrs["ceil_mode"] = 1
    run(f"maxpool_s2_{t}", "MaxPool", [("x", f32(1, 20, h, w))], attrs)
for dt in [np.int8, np.uint8]:
    run(f"maxpool_{dt.__name__}", "MaxPool", [("x", rng.integers(-128 if dt == np.int8 else 0, 128 if dt == np.int8 else 256, (1, 2, 7, 6)).astype(dt))], dict(kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 1]))
# MatMul / Gemm
for t, (sa, sb) in enumerate([((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 1, 4, 3), (5, 3, 2)), ((1, 4, 3), (2, 3, 5)), ((7, 64), (64, 33)), ((3, 2, 8), (8, 1))]):
    run(f"matmul{t}", "MatMul", [("a", f32(*sa)), ("b", f32(*sb))], {})
for t in range(8):
    ta, tb = random.randint(0, 1), random.randint(0, 1); M, N, K = random.randint(1, 6), random.randint(1, 6), random.randint(1, 6)
    a = f32(K, M) if ta else f32(M, K); b = f32(N, K) if tb else f32(K, N)
    cs = random.choice([None, (N,), (1, N), (M, 1), (M, N), ()])
    inp = [("a", a), ("b", b)] + ([("c", f32(*cs))] if cs is not None else [])
    run(f"gemm{t}", "Gemm", inp, dict(transA=ta, transB=tb, alpha=random.choice([1.0, 0.5]), beta=random.choice([1.0, 2.0, 0.0])), opset=13)
# MatMul / Gemm against constant weights large enough for the packed path
# (two rows or more, 16 columns or more, 2^20 multiply-adds)
for t, (sa, sb) in enumerate([((2, 40, 300), (300, 90)), ((5, 700), (700, 320)), ((1, 3, 9, 512), (512, 250))]):
    run(f"matmul_k{t}", "MatMul", [("a", f32(*sa)), ("b", f32(*sb))], {}, inits=("b",))
for t in range(6):
    ta, tb = random.randint(0, 1), random.randint(0, 1); M, N, K = random.randint(2, 40), random.randint(20, 200), random.randint(300, 600)
    while M * N * K < (1 << 20): M *= 2
    a = f32(K, M) if ta else f32(M, K); b = f32(N, K) if tb else f32(K, N)
    cs = random.choice([None, (N,), (1, N), (M, N)])
    inp = [("a", a), ("b", b)] + ([("c", f32(*cs))] if cs is not None else [])
    run(f"gemm_k{t}", "Gemm", inp, dict(transA=ta, transB=tb, alpha=random.choice([1.0, 1.0, 0.5]), beta=random.choice([1.0, 1.0, 2.0])), opset=13, inits=("b", "c"))
# quantized
def q(dt, *s): return rng.integers(-128 if dt == np.int8 else 0, 128 if dt == np.int8 else 256, s).astype(dt)
for t in range(6):
    da, db = random.choice([np.uint8, np.int8]), random.choice([np.uint8, np.int8])
    run(f"mmint{t}", "MatMulInteger", [("a", q(da, 2, 4, 5)), ("b", q(db, 5, 3)), ("az", np.array(random.randint(0, 20), da)), ("bz", np.array(random.randint(0, 20), db))], {}, opset=10)
    run(f"convint{t}", "ConvInteger", [("x", q(np.uint8, 1, 2, 6, 5)), ("w", q(np.uint8, 3, 2, 3, 3)), ("xz", np.array(random.randint(0, 20), np.uint8))], dict(pads=[1, 1, 0, 1], strides=[1, 2]), opset=10)
    dy = random.choice([np.uint8, np.int8])
    run(f"qmm{t}", "QLinearMatMul", [("a", q(np.uint8, 3, 4)), ("as", np.array(0.02, np.float32)), ("az", np.array(3, np.uint8)), ("b", q(np.uint8, 4, 2)), ("bs", np.array(0.03, np.float32)), ("bz", np.array(7, np.uint8)), ("ys", np.array(0.05, np.float32)), ("yz", np.array(2, np.uint8))], {}, opset=10)
    run(f"qconv{t}", "QLinearConv", [("x", q(np.uint8, 1, 2, 5, 5)), ("xs", np.array(0.02, np.float32)), ("xz", np.array(3, np.uint8)), ("w", q(np.int8, 4, 2, 3, 3)), ("ws", (rng.random(4) * 0.05 + 0.01).astype(np.float32)), ("wz", np.zeros(4, np.int8)), ("ys", np.array(0.1, np.float32)), ("yz", np.array(5, np.uint8)), ("b", rng.integers(-100, 100, 4).astype(np.int32))], dict(pads=[1, 1, 1, 1]), opset=10)
# others
run("gap", "GlobalAveragePool", [("x", f32(2, 3, 4, 5))], {}); run("gmp", "GlobalMaxPool", [("x", f32(2, 3, 4, 5, 2))], {}); run("glp", "GlobalLpPool", [("x", f32(2, 3, 4))], dict(p=3))
run("deform", "DeformConv", [("x", f32(1, 4, 6, 5)), ("w", f32(6, 2, 3, 3)), ("off", f32(1, 2 * 2 * 9, 6, 5)), ("b", f32(6)), ("mask", rng.random((1, 2 * 9, 6, 5)).astype(np.float32))], dict(group=2, offset_group=2, pads=[1, 1, 1, 1]), opset=19)
run("col2im", "Col2Im", [("x", f32(1, 2 * 6, 12)), ("img", np.array([5, 6], np.int64)), ("blk", np.array([2, 3], np.int64))], dict(strides=[1, 1], pads=[0, 0, 0, 0], dilations=[1, 1]), opset=18, inits=("img", "blk"))
print(f"{total - fails} agree, {fails} differ, of {total}")
sys.exit(1 if fails else 0)
