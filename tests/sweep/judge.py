#!/usr/bin/python3
"""judge.py OUT DATA [--counts FILE] [--update] [--report FILE] [--refusals] [--gaps FILE]:
judge a migrate sweep of the ONNX backend node cases.

OUT is what `opmig batch DATA --mode migrate --target T,... -o OUT` wrote
(OUT/<case>_model/<target>/{result.json,model.onnx}); DATA the backend
suite's folder of cases (DATA/<case>/model.onnx, test_data_set_N/).  Every
written model is checked by onnx.checker (full_check, opset <= 17) and run
by onnxruntime-node (one process for everything) on each of its case's
input sets; its outputs are compared with the case's expected outputs
(rtol 1e-3, atol 1e-5 for floats, or validate's fp16 tolerances rtol
1e-2, atol 1e-3 for a model the report says was migrated in float16; NaN
equal to NaN; exact otherwise), after the interface check: the migrated
model has the original's inputs and outputs, in order, with their names
and element types, but for the element types its report lists among the
interface changes (inputs are then cast to the new type).

A model is "equal" when all of that holds.  It is "invalid" when the
checker rejects it or onnxruntime refuses it although it runs the
original, and "differing" when its outputs (or interface) differ.  Cases
whose outputs are random draws (checked, and run, but not compared) and
models onnxruntime cannot run in their original form either are counted
apart.  Exit 1 on any invalid or
differing model, or when a target's count of equal models falls below the
one recorded in --counts (a file that may only grow; --update rewrites it
when counts grew).

With --gaps FILE, a written model onnxruntime refuses for want of a kernel
although onnx.checker accepts it (a gap of the runtime, not an invalid
model) counts apart when FILE lists its case and target with the reason.

With --refusals, the models opmig did not write are judged too: one its
own strict schema check caught ("is invalid" in the result's message: a
pass produced an invalid node) counts as invalid; a worker error as an
error (both fail the run); the others as refused, with the reason (the
report's "not done" note of the opset conversion, else the message)."""
import argparse
import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ort'))
import ortlib  # noqa: E402

RANDOM = ('bernoulli', 'random', 'dropout_default_mask', 'training_dropout')


def load_sets(case_dir):
    """[(inputs [ndarray], outputs [ndarray])] of the case, or None when a
    set holds sequences or optionals (not tensors)."""
    sets = []
    for d in sorted(os.listdir(case_dir)):
        p = os.path.join(case_dir, d)
        if not d.startswith('test_data_set_') or not os.path.isdir(p):
            continue
        ins, outs = [], []
        for kind, lst in (('input', ins), ('output', outs)):
            k = 0
            while os.path.exists(os.path.join(p, '%s_%d.pb' % (kind, k))):
                with open(os.path.join(p, '%s_%d.pb' % (kind, k)), 'rb') as f:
                    b = f.read()
                t = onnx.TensorProto()
                try:
                    t.ParseFromString(b)
                except Exception:
                    return None
                if not t.dims and not t.raw_data and t.data_type == 0:
                    return None
                try:
                    lst.append(numpy_helper.to_array(t))
                except Exception:
                    return None
                k += 1
        sets.append((ins, outs))
    return sets


def real_inputs(g):
    inits = {i.name for i in g.initializer}
    return [i for i in g.input if i.name not in inits]


def elem_type(vi):
    t = vi.type
    return t.tensor_type.elem_type if t.HasField('tensor_type') else -1


def close(got, want, ref=None, fp16=False):
    """None when got equals want within tolerance; the tolerance grows by
    onnxruntime's own distance from want on the original (ref), so a case
    where the reference runtime itself sits off the expected values (DFT's
    zeros at 1e-5) judges the migrated model no stricter than it."""
    if got.shape != want.shape:
        return 'shape %s, want %s' % (got.shape, want.shape)
    if want.dtype.kind in 'fc':
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        both_nan = np.isnan(g) & np.isnan(w)
        same_inf = np.isinf(w) & (g == w)
        err = np.abs(g - w)
        tol = (1e-3 + 1e-2 * np.abs(w)) if fp16 else (1e-5 + 1e-3 * np.abs(w))
        if ref is not None and ref.shape == want.shape:
            d = np.abs(ref.astype(np.float64) - w)
            tol = tol + np.where(np.isfinite(d), d, 0)
        bad = ~(both_nan | same_inf | (err <= tol))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            return 'element %d: %r, want %r' % (i, g.flat[i], w.flat[i])
        return None
    if got.dtype != want.dtype and not (got.dtype.kind in 'iub' and want.dtype.kind in 'iub'):
        return 'dtype %s, want %s' % (got.dtype, want.dtype)
    if not np.array_equal(got.astype(want.dtype), want):
        i = int(np.flatnonzero(got.astype(want.dtype) != want)[0])
        return 'element %d: %r, want %r' % (i, got.flat[i], want.flat[i])
    return None


def interface(orig, mig, report):
    """None when the interface is the original's but for the changes the
    report lists (interface_changes: a dtype the target lacks); else why.
    The second value maps input names to the numpy dtype they now take."""
    listed = {(c['kind'], c['name']): c for c in report.get('interface_changes', [])}
    casts = {}
    oi, mi = real_inputs(orig.graph), real_inputs(mig.graph)
    for what, a, b in (('input', oi, mi), ('output', orig.graph.output, mig.graph.output)):
        if [x.name for x in a] != [x.name for x in b]:
            return '%ss %s, want %s' % (what, [x.name for x in b], [x.name for x in a]), casts
        for x, y in zip(a, b):
            if elem_type(x) == elem_type(y):
                continue
            c = listed.get((what, x.name))
            if not c or c['change'] != 'dtype':
                return "%s '%s': element type %s, want %s (not in the report)" % (
                    what, x.name, onnx.TensorProto.DataType.Name(elem_type(y)),
                    onnx.TensorProto.DataType.Name(elem_type(x))), casts
            if what == 'input':
                casts[x.name] = onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[elem_type(y)]
    return None, casts


def natural(t):
    """'opset-7' before 'opset-10'."""
    head = t.rstrip('0123456789')
    return (head, int(t[len(head):]) if t[len(head):] else -1)


def refusal(case, target, r, jdir):
    """The judgement of a model opmig did not write (see --refusals)."""
    ent = dict(case=case, target=target, path=None, random=False, msg=r.get('message') or '')
    if r['status'] == 'error':
        ent['state'] = 'error'
    elif 'is invalid' in ent['msg']:
        ent['state'] = 'invalid'
        ent['msg'] = 'opmig: ' + ent['msg']
    else:
        ent['state'] = 'refused'
        try:
            with open(os.path.join(jdir, 'report.json')) as f:
                notes = json.load(f).get('notes') or []
            for n in notes:
                if ' not done: ' in n:
                    ent['msg'] = n
                    break
        except (OSError, ValueError):
            pass
    return ent


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('out')
    ap.add_argument('data')
    ap.add_argument('--counts')
    ap.add_argument('--update', action='store_true')
    ap.add_argument('--report')
    ap.add_argument('--work', default=None)
    ap.add_argument('--refusals', action='store_true')
    ap.add_argument('--gaps')
    a = ap.parse_args()
    gaps = {}
    if a.gaps:
        for line in open(a.gaps):
            line = line.split('#')[0].split(None, 2)
            if len(line) == 3:
                gaps[(line[0], line[1])] = line[2].strip()
    why = ortlib.available()
    if why:
        print('notice: onnxruntime-node unavailable (%s): sweep skipped' % why)
        return 0
    work = a.work or os.path.join(a.out, '.judge')
    cases = sorted(d for d in os.listdir(a.data) if os.path.isfile(os.path.join(a.data, d, 'model.onnx')))
    stats = {}
    problems = []
    runs = []          # (case, target or None, model path, set index, feeds)
    pending = {}       # (case, target) -> dict
    origs = {}
    for case in cases:
        cdir = os.path.join(a.out, case + '_model')
        if not os.path.isdir(cdir):
            continue
        for target in sorted(os.listdir(cdir)):
            s = stats.setdefault(target, dict(jobs=0, written=0, equal=0, invalid=0, differing=0,
                                              random=0, unjudged=0, refused=0, error=0, gap=0))
            s['jobs'] += 1
            with open(os.path.join(cdir, target, 'result.json')) as f:
                r = json.load(f)
            path = os.path.join(cdir, target, 'model.onnx')
            if r['status'] != 'migrated' or not os.path.exists(path):
                if a.refusals:
                    pending[(case, target)] = refusal(case, target, r, os.path.join(cdir, target))
                continue
            s['written'] += 1
            if case not in origs:
                origs[case] = (onnx.load(os.path.join(a.data, case, 'model.onnx')),
                               load_sets(os.path.join(a.data, case)))
            orig, sets = origs[case]
            mig = onnx.load(path)
            ent = dict(case=case, target=target, path=path, state=None, msg='',
                       random=any(k in case for k in RANDOM))
            pending[(case, target)] = ent
            opset = max([o.version for o in mig.opset_import if o.domain in ('', 'ai.onnx')] or [0])
            if opset <= 17:
                try:
                    onnx.checker.check_model(mig, full_check=True)
                except Exception as e:
                    ent['state'], ent['msg'] = 'invalid', 'checker: ' + str(e).splitlines()[0][:300]
                    continue
            with open(os.path.join(cdir, target, 'report.json')) as f:
                report = json.load(f)
            msg, casts = interface(orig, mig, report)
            if msg:
                ent['state'], ent['msg'] = 'differing', 'interface: ' + msg
                continue
            # a model migrated in float16 is judged with validate's fp16
            # tolerances (the report says which precision it has)
            ent['fp16'] = report.get('precision') == 'fp16'
            if not sets:
                ent['state'] = 'unjudged'
                ent['msg'] = 'no tensor test data'
                continue
            names = [i.name for i in real_inputs(orig.graph)]
            for k, (ins, _) in enumerate(sets):
                if len(ins) != len(names):
                    ent['state'], ent['msg'] = 'unjudged', 'inputs do not match the test data'
                    break
                if any(np.asarray(x).dtype not in ortlib.NAMES for x in ins):
                    ent['state'], ent['msg'] = 'unjudged', 'inputs of a type the runner lacks'
                    break
                feeds = {n: (x.astype(casts[n]) if n in casts else x) for n, x in zip(names, ins)}
                runs.append((case, target, path, k, feeds))
    # the originals too: a model onnxruntime cannot run as given is not judged by it
    orig_runs = []
    seen = set()
    for (case, target, path, k, feeds) in runs:
        if (case, k) in seen:
            continue
        seen.add((case, k))
        names = [i.name for i in real_inputs(origs[case][0].graph)]
        orig_runs.append((case, None, os.path.join(a.data, case, 'model.onnx'), k,
                          dict(zip(names, origs[case][1][k][0]))))
    allruns = orig_runs + runs
    res = ortlib.run_many([(r[2], r[4]) for r in allruns], work)
    orig_ok = {}
    for r, out in zip(orig_runs, res[:len(orig_runs)]):
        orig_ok[(r[0], r[3])] = None if isinstance(out, str) else out
    for r, out in zip(runs, res[len(orig_runs):]):
        case, target, path, k, _ = r
        ent = pending[(case, target)]
        if ent['state'] is not None:
            continue
        ref = orig_ok.get((case, k))
        if ref is None:
            ent['state'], ent['msg'] = 'unjudged', 'onnxruntime cannot run the original'
            continue
        if isinstance(out, str):
            ent['state'], ent['msg'] = 'invalid', 'onnxruntime: ' + out[:300]
            if (case, target) in gaps:
                ent['state'], ent['msg'] = 'gap', gaps[(case, target)]
            continue
        if ent['random']:      # loaded and ran: its values are draws
            ent['state'] = 'random'
            continue
        want = origs[case][1][k][1]
        if len(out) != len(want):
            ent['state'], ent['msg'] = 'differing', '%d outputs, want %d' % (len(out), len(want))
            continue
        for j, (g, w) in enumerate(zip(out, want)):
            r = ref[j] if j < len(ref) else None
            m = close(g, w, r, ent.get('fp16', False))
            # onnxruntime itself off the expected values on the original
            # (test_range_*_expanded: a Loop's scalar scan output as [n, 1]):
            # the migrated model must then compute what it computes there
            if m and r is not None and close(r, w) and not close(g, r):
                m = None
            if m:
                ent['state'], ent['msg'] = 'differing', 'set %d output %d: %s' % (k, j, m)
                break
    for ent in pending.values():
        s = stats[ent['target']]
        st = ent['state'] or 'equal'
        s[st] += 1
        if st in ('invalid', 'differing', 'error'):
            problems.append('%s on %s: %s: %s' % (ent['case'], ent['target'], st, ent['msg']))
    rc = 0
    for p in sorted(problems):
        print('FAIL ' + p)
        rc = 1
    recorded = {}
    if a.counts and os.path.exists(a.counts):
        for line in open(a.counts):
            line = line.split('#')[0].split()
            if len(line) == 2:
                recorded[line[0]] = int(line[1])
    grew = False
    for t in sorted(stats, key=natural):
        s = stats[t]
        print('%-12s %4d cases: %4d written, %4d equal, %3d invalid, %3d differing, '
              '%3d random, %3d not judged%s (recorded %s)' % (
                  t, s['jobs'], s['written'], s['equal'], s['invalid'], s['differing'],
                  s['random'], s['unjudged'],
                  (', %4d refused, %d errors' % (s['refused'], s['error']) if a.refusals else '') +
                  (', %d onnxruntime gaps' % s['gap'] if s['gap'] else ''),
                  recorded.get(t, '-')))
        if t in recorded and s['equal'] < recorded[t]:
            print('FAIL %s: %d migrated-and-equal cases, fewer than the %d recorded in %s'
                  % (t, s['equal'], recorded[t], a.counts))
            rc = 1
        if s['equal'] > recorded.get(t, 0):
            grew = True
    if a.report:
        with open(a.report, 'w') as f:
            json.dump(dict(stats=stats, problems=sorted(problems),
                           cases=sorted(pending.values(), key=lambda e: (e['case'], e['target']))),
                      f, indent=1)
    if a.counts and a.update and rc == 0 and grew:
        with open(a.counts, 'w') as f:
            f.write('# migrated-and-equal backend node cases per target (tests/sweep/judge.py);\n'
                    '# may only grow\n')
            for t in sorted(stats):
                f.write('%s %d\n' % (t, max(stats[t]['equal'], recorded.get(t, 0))))
    elif grew and a.counts:
        print('notice: counts grew; record them with tests/sweep/run.sh --update')
    return rc


if __name__ == '__main__':
    sys.exit(main())
