"""ortlib.py: run many ONNX models in one onnxruntime-node process from
Python (tests and benchmarks; /usr/bin/python3 with numpy).

    import ortlib
    if not ortlib.available(): skip
    res = ortlib.run_many([(model_path, {name: ndarray})], workdir)
    # res[i] is a list of ndarrays (the outputs in graph order), or a str:
    # onnxruntime's message when it refused to load or run the model

onnxruntime-node is found at $OPMIG_ORT_DIR or .cache/npm/node_modules/
onnxruntime-node (tools/npm_deps.sh, run by make deps, installs it).
"""
import json
import os
import shutil
import subprocess

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
TYPES = {
    'float32': np.float32, 'float64': np.float64, 'int8': np.int8, 'uint8': np.uint8,
    'int16': np.int16, 'uint16': np.uint16, 'int32': np.int32, 'uint32': np.uint32,
    'int64': np.int64, 'uint64': np.uint64, 'bool': np.bool_, 'float16': np.float16,
}
NAMES = {np.dtype(v): k for k, v in TYPES.items()}


def ort_dir():
    return os.environ.get('OPMIG_ORT_DIR') or \
        os.path.join(TOP, '.cache', 'npm', 'node_modules', 'onnxruntime-node')


def available():
    """Why onnxruntime-node cannot be used (a message), or None when it can."""
    if not shutil.which('node'):
        return 'node not found'
    if not os.path.isdir(ort_dir()):
        return 'onnxruntime-node not installed in %s (make deps)' % ort_dir()
    return None


def start(argv):
    """A test script's (opmig, work) from its command line, the work folder
    made; None, after a notice, where onnxruntime-node cannot be used (the
    script then exits 77: skipped)."""
    why = available()
    if why:
        print("notice: %s, skipped" % why)
        return None
    os.makedirs(argv[2], exist_ok=True)
    return argv[1], argv[2]


def version():
    with open(os.path.join(ort_dir(), 'package.json')) as f:
        return json.load(f)['version']


def run_many(jobs, workdir, timeout=None, optimize=False):
    """jobs: [(model, {input name: ndarray})]; returns per job the outputs
    (ndarrays in graph order) or onnxruntime's message (a str).  optimize:
    with all of onnxruntime's graph optimizations (default: none, so it
    computes what the graph says)."""
    os.makedirs(workdir, exist_ok=True)
    spec = []
    for k, (model, feeds) in enumerate(jobs):
        d = os.path.join(workdir, 'job%d' % k)
        os.makedirs(d, exist_ok=True)
        ins = []
        for j, (name, a) in enumerate(feeds.items()):
            a = np.ascontiguousarray(a)
            if a.dtype not in NAMES:
                raise ValueError('input %s: dtype %s not supported' % (name, a.dtype))
            f = os.path.join(d, 'in_%d.bin' % j)
            a.tofile(f)
            ins.append({'name': name, 'type': NAMES[a.dtype], 'dims': list(a.shape), 'file': f})
        spec.append({'model': os.path.abspath(model), 'inputs': ins, 'outdir': d,
                     'optimize': bool(optimize)})
    jf = os.path.join(workdir, 'jobs.json')
    with open(jf, 'w') as f:
        json.dump(spec, f)
    subprocess.run(['node', os.path.join(HERE, 'ort_batch.js'), jf], check=True,
                   timeout=timeout)
    out = []
    for s in spec:
        with open(os.path.join(s['outdir'], 'result.json')) as f:
            r = json.load(f)
        if not r['ok']:
            out.append(r['error'] or 'failed')
            continue
        outs = []
        for o in r['outputs']:
            a = np.fromfile(o['file'], dtype=TYPES[o['type']])
            outs.append(a.reshape(o['dims']))
        out.append(outs)
    return out


# ---- the tally of the checks a test script makes ----------------------

_fails = [0]


def check(ok, what):
    """Print "ok: WHAT" or "FAIL: WHAT" and count the failure."""
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        _fails[0] += 1


def failures():
    """Print the failure count the CLI tests look for; the exit status."""
    print("%d failures" % _fails[0])
    return 1 if _fails[0] else 0


def max_diff(a, b):
    """Largest |a - b| in float64; inf when the shapes differ."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        return float("inf")
    return float(np.max(np.abs(a - b))) if a.size else 0.0


def f32_twin(m):
    """A copy of ModelProto m whose float16 initializers, inputs and
    outputs are float32, the same values (onnxruntime's CPU kernels of
    ops without float16, LSTM and GRU, take it); checked in full."""
    import onnx
    from onnx import TensorProto, numpy_helper
    t = onnx.ModelProto()
    t.CopyFrom(m)
    for i in t.graph.initializer:
        if i.data_type == TensorProto.FLOAT16:
            i.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(i).astype(np.float32),
                                               i.name))
    for v in list(t.graph.input) + list(t.graph.output):
        if v.type.tensor_type.elem_type == TensorProto.FLOAT16:
            v.type.tensor_type.elem_type = TensorProto.FLOAT
    onnx.checker.check_model(t, full_check=True)
    return t
