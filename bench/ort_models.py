#!/usr/bin/env python3
"""ort_models.py [OPMIG [WORKDIR] [MODEL...]]: the benchmark models' outputs
from `opmig run` against onnxruntime-node's (bench/ort_run.js) on one
seeded random input each.  The timing script (interp.sh) only times;
this checks that what it times computes the right thing: a kernel path
taken only on a model's real shapes (a 56x56 depthwise convolution, say)
is not covered by the small cases of ort_diff.py.  opmig runs each model
three times and writes the last run's outputs: the paths the timed runs
take (weights packed or kept from the first or second run on).

Models: bench/gen_nets.py's in $BENCH_DIR/interp (default
/tmp/opmig-bench) and ../shared/models/onnx-light, or those named.
Each output must satisfy max |opmig - ort| <= 1e-3 * max(1, max |ort|)
(deep nets reorder float sums; a wrong kernel is off by far more).
Exit status: 0 all agree, 1 a model differs, 2 setup failed."""
import json, os, subprocess, sys, tempfile
import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
OPMIG = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "bin", "opmig")
WORK = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="ort_models.")
models = sys.argv[3:]
if not models:
    bd = os.path.join(os.environ.get("BENCH_DIR", "/tmp/opmig-bench"), "interp")
    sd = os.path.join(HERE, "..", "..", "shared", "models", "onnx-light")
    for d in (bd, sd):
        if os.path.isdir(d):
            models += [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith(".onnx")]
if not models:
    sys.exit("ort_models.py: no models (run bench/interp.sh once to generate them)")
NP = {onnx.TensorProto.FLOAT: ("float32", np.float32), onnx.TensorProto.INT64: ("int64", np.int64)}
bad = 0
for mp in models:
    name = os.path.basename(mp)[:-5]
    d = os.path.join(WORK, name)
    os.makedirs(d, exist_ok=True)
    m = onnx.load(mp, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    # a final Softmax of a net with constant weights (the "light" models)
    # gives equal probabilities whatever came before: its input is
    # compared too, as an extra output
    last = m.graph.node[-1]
    if last.op_type == "Softmax" and last.output[0] == m.graph.output[0].name:
        m.graph.output.append(onnx.helper.make_tensor_value_info(last.input[0], onnx.TensorProto.FLOAT, None))
        mp = os.path.join(d, "m.onnx")
        onnx.save(m, mp)
    rng = np.random.default_rng(11)
    spec, args = [], [OPMIG, "run", mp, "-O", os.path.join(d, "out"), "--out-format", "npy", "--threads", "2",
                   "--repeat", "3"]
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        t = vi.type.tensor_type
        dims = [x.dim_value if x.dim_value > 0 else 1 for x in t.shape.dim]
        if t.elem_type not in NP:
            sys.exit(f"ort_models.py: {name}: input {vi.name} of type {t.elem_type}")
        tname, dt = NP[t.elem_type]
        a = (rng.standard_normal(dims) if dt == np.float32 else rng.integers(0, 100, dims)).astype(dt)
        np.save(os.path.join(d, f"{vi.name}.npy".replace("/", "_")), a)
        a.tofile(os.path.join(d, f"{vi.name}.raw".replace("/", "_")))
        spec.append(dict(name=vi.name, type=tname, dims=dims, file=os.path.join(d, f"{vi.name}.raw".replace("/", "_"))))
        args.append(f"{vi.name}={os.path.join(d, vi.name.replace('/', '_') + '.npy')}")
    json.dump(spec, open(os.path.join(d, "spec.json"), "w"))
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"ort_models.py: {name}: opmig: {r.stderr.strip()}")
    r = subprocess.run(["node", os.path.join(HERE, "ort_run.js"), mp, os.path.join(d, "spec.json"), os.path.join(d, "ort.json")], capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"ort_models.py: {name}: onnxruntime: {r.stderr.strip()[:300]}")
    ref = json.load(open(os.path.join(d, "ort.json")))
    for i, o in enumerate(m.graph.output):
        want = np.array(ref[o.name]["data"], dtype=np.float64)
        got = np.load(os.path.join(d, "out", f"output_{i}.npy")).astype(np.float64).ravel()
        scale = max(1.0, float(np.abs(want).max()))
        diff = float(np.abs(got - want).max()) if got.size == want.size else float("inf")
        ok = diff <= 1e-3 * scale
        bad += not ok
        print(f"{'agree ' if ok else 'DIFFER'} {name} {o.name}: max |diff| {diff:.3g}, max |ort| {scale:.3g}")
sys.exit(1 if bad else 0)
