#!/usr/bin/python3
"""opencv_e2e.py OPMIG WORKDIR TARGET[,TARGET...] MODEL...: models migrated
for OpenCV DNN, run in OpenCV and compared with onnxruntime
(tests/cli/t1510-opencv.sh).  For each model: seeded inputs; onnxruntime
on the original (the reference); OpenCV on the original; `opmig migrate
--target T` for each target (`--batch 1` where an input's dim 0 is
symbolic), with `--verify-with` the OpenCV adapter (the
migrated model must run in OpenCV and equal opmig's interpreter); OpenCV
on the migrated model, compared with the reference.  Prints one line per
model and target, then per target how many models OpenCV runs as exported
and after migration; E2E_JOBS models (default 2) at a time, the lines in
the order given.  Exits 1 when, for the first target, a model OpenCV
runs right as exported does not after migration, or differs from
onnxruntime.  Needs onnx, numpy, cv2 and onnxruntime-node (ortlib)."""
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, 'tests', 'ort'))
import ortlib  # noqa: E402

ADAPTER = os.path.join(TOP, 'runtimes', 'opencv-dnn.py')
# models at a time (E2E_JOBS): each one's commands run one after the other
JOBS = max(1, int(os.environ.get('E2E_JOBS', '2')))
NP = {1: np.float32, 7: np.int64, 6: np.int32, 9: np.bool_, 10: np.float16, 11: np.float64}


def interface(path):
    m = onnx.load(path, load_external_data=False)
    init = {t.name for t in m.graph.initializer}
    ins = [(i.name, i.type.tensor_type.elem_type,
            [d.dim_value if d.dim_value > 0 else 1 for d in i.type.tensor_type.shape.dim])
           for i in m.graph.input if i.name not in init]
    return ins, [o.name for o in m.graph.output]


def symbolic_batch(path):
    """Whether some graph input's dim 0 is not a number."""
    m = onnx.load(path, load_external_data=False)
    init = {t.name for t in m.graph.initializer}
    return any(i.type.tensor_type.shape.dim and i.type.tensor_type.shape.dim[0].dim_value <= 0
               for i in m.graph.input if i.name not in init)


def opencv(model, feeds, outs, work):
    """OpenCV's outputs (a list of arrays), or its message (a str)."""
    inp = os.path.join(work, 'in')
    out = os.path.join(work, 'out')
    for d in (inp, out):
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            os.unlink(os.path.join(d, f))
    for k, (name, a) in enumerate(feeds):
        np.save(os.path.join(inp, 'input_%d.npy' % k), a)
    with open(os.path.join(inp, 'inputs.txt'), 'w') as f:
        f.write(''.join(n + '\n' for n, _ in feeds))
    with open(os.path.join(inp, 'outputs.txt'), 'w') as f:
        f.write(''.join(n + '\n' for n in outs))
    r = subprocess.run([sys.executable, ADAPTER, model, inp, out], capture_output=True,
                       text=True, timeout=300)
    if r.returncode:
        lines = [ln for ln in r.stderr.splitlines() if ln.strip() and
                 not ln.startswith(('opmig-runtime:', '[ERROR', '[ WARN'))]
        return (lines[-1] if lines else 'exit status %d' % r.returncode)[:200]
    return [np.load(os.path.join(out, 'output_%d.npy' % k)) for k in range(len(outs))]


def close(got, want):
    """Within rtol 1e-3 of the reference's largest value, elementwise."""
    if not isinstance(got, list):
        return False, got
    for g, w in zip(got, want):
        g = np.asarray(g, np.float64).reshape(-1)
        w = np.asarray(w, np.float64).reshape(-1)
        if g.size != w.size:
            return False, 'shape %s vs %s' % (g.size, w.size)
        tol = 1e-4 + 1e-3 * max(1.0, float(np.max(np.abs(w))) if w.size else 1.0)
        err = float(np.max(np.abs(g - w))) if w.size else 0.0
        if not err <= tol:
            return False, 'max abs error %.3g > %.3g' % (err, tol)
    return True, ''


def one_model(opmig, work, targets, m, ref, feeds, outs):
    """One model: its report lines and, per target, (target, runs right as
    exported, runs right after migration, name)."""
    name = os.path.basename(m)[:-5]
    mw = os.path.join(work, name)
    os.makedirs(mw, exist_ok=True)
    if isinstance(ref, str):
        return ['%s: onnxruntime refuses it: %s' % (name, ref)], []
    exp_ok, why = close(opencv(m, feeds, outs, mw), ref)
    # --batch 1 where an input's dim 0 is symbolic (the feeds have 1 there);
    # a static dim 0 is kept: it is not always the batch (lstm_tagger's is
    # the sequence)
    batch = ['--batch', '1'] if symbolic_batch(m) else []
    lines, per = [], []
    for t in targets:
        out = os.path.join(mw, name + '.' + t + '.onnx')
        cmd = [opmig, 'migrate', m, '--target', t, '-o', out] + batch + [
               '--format', 'json', '--verify-with',
               '%s %s {model} {inputs} {outdir}' % (sys.executable, ADAPTER)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        rep = json.loads(r.stdout) if r.stdout.startswith('{') else {}
        if r.returncode == 0:
            _, mouts = interface(out)
            mig_ok, mwhy = close(opencv(out, feeds, mouts, mw), ref)
        else:
            mig_ok = False
            rc = rep.get('runtime_check') or {}
            mwhy = 'migrate exited %d: %s' % (r.returncode, rc.get('message') or rep.get('why') or
                                               r.stderr.strip()[:200])
        per.append((t, exp_ok, mig_ok, name))
        lines.append('%s -> %s: as exported %s; migrated %s' % (
            name, t, 'runs right' if exp_ok else 'fails (%s)' % why,
            'runs right' if mig_ok else 'fails (%s)' % mwhy))
    return lines, per


def main():
    opmig, work, targets = sys.argv[1], sys.argv[2], sys.argv[3].split(',')
    models = sys.argv[4:]
    rng = np.random.default_rng(7)
    feeds, outs = {}, {}
    for m in models:
        ins, outs[m] = interface(m)
        feeds[m] = [(n, (rng.random(s) * 2 - 1).astype(NP.get(t, np.float32)))
                    for n, t, s in ins]
    refs = ortlib.run_many([(m, dict(feeds[m])) for m in models], os.path.join(work, 'ort'))
    counts = {t: [0, 0, 0] for t in targets}    # exported, migrated, both
    bad = []
    with ThreadPoolExecutor(JOBS) as pool:
        done = pool.map(lambda mr: one_model(opmig, work, targets, mr[0], mr[1], feeds[mr[0]], outs[mr[0]]),
                        zip(models, refs))
        for lines, per in done:
            for line in lines:
                print(line)
            for t, exp_ok, mig_ok, name in per:
                counts[t][0] += exp_ok
                counts[t][1] += mig_ok
                counts[t][2] += exp_ok and mig_ok
                if t == targets[0] and exp_ok and not mig_ok:
                    bad.append(name)
    for t in targets:
        print('%s: %d of %d models run right in OpenCV as exported, %d after migration, %d of the %d '
              'both' % (t, counts[t][0], len(models), counts[t][1], counts[t][2], counts[t][0]))
    if bad:
        print('FAIL: OpenCV ran these as exported, not after migration to %s: %s' %
              (targets[0], ' '.join(bad)))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
