"""resize_migrate.py OPMIG WORKDIR [-v]: the rewrites that emit Resize
(opset adapters: Upsample -> Resize, Resize 10 <-> 11, 13 -> 11, 18 and 19
down; the NHWC layout) checked against onnxruntime.  Seeded one-node
models of Upsample 7 and 9 and Resize 10, 11, 13, 18 and 19 (every mode,
the coordinate_transformation_modes and nearest_modes, scales and sizes,
antialias, axes, keep_aspect_ratio_policy, half_pixel_symmetric) migrate
with `opmig migrate` to targets whose opset range forces a conversion
(test targets of one opset range each, and generic-npu, ascend and
tensorrt), NCHW and --layout nhwc.  A written model must pass onnx's full
checker (opset <= 17), declare an opset in the target's range, and give in
onnxruntime what the original gives there (through the name map's
permutations).  A model not written must say why: blockers left, or the
validation that found the rewrite wrong (a fault of the rewrite, counted).
Exit 0 when nothing is wrong but the faults listed in KNOWN, 1 otherwise;
without onnxruntime-node only the checker and the refusals are judged (a
notice says so).
"""
import json
import os
import re
import random
import subprocess
import sys

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ortlib  # noqa: E402
import resize_cases as C  # noqa: E402

# test targets: an opset range each, Resize and Upsample accepted as they
# come (and the Transposes of --layout nhwc)
RANGES = {'rs-op10': (10, 10), 'rs-op11': (11, 12), 'rs-op13': (13, 17),
          'rs-op18': (18, 18), 'rs-op19': (19, 19)}
REAL = {'generic-npu': (11, 17), 'ascend': (8, 18), 'tensorrt': (9, 24)}

# Faults of rewriters/opset_adapt.c this test finds today, each with its
# diagnosis: they are printed but do not fail the test; one that no longer
# shows fails it, so that the list only shrinks.
KNOWN = [
]


def rules_file(wd, tid, rng):
    p = os.path.join(wd, tid + '.json')
    with open(p, 'w') as f:
        json.dump({'schema': 1, 'id': tid, 'name': 'Resize test target %s' % tid,
                   'vendor': 'test', 'family': 'test', 'sources': ['resize_migrate.py'],
                   'description': 'opset %d..%d, Resize and Upsample as they come' % rng,
                   'opset': list(rng),
                   'ops': {'Resize': {}, 'Upsample': {}, 'Transpose': {}}}, f)
    return p


def source_cases(seed):
    """The models to migrate (resize_cases dicts), NCHW 4-D float32."""
    rng = random.Random(seed)
    out = []

    def add(op, v, mode, ctm='asymmetric', **kw):
        shape = [rng.randint(1, 2), rng.randint(1, 3), rng.randint(2, 7), rng.randint(2, 7)]
        c = {'id': len(out), 'op': op, 'opset': v, 'mode': mode, 'ctm': ctm, 'rank': 4,
             'shape': shape, 'dtype': 'float32'}
        c.update(kw)
        if 'scales' in kw:   # long enough that every scale moves something
            c['shape'][2:] = [rng.randint(5, 8), rng.randint(5, 8)]
        if 'scales' not in c and 'sizes' not in c:
            c['scales'] = [1.0, 1.0, R32(rng.choice((2.0, 0.5, 1.5, 0.6, 3.0))),
                           R32(rng.choice((2.0, 0.5, 2.5, 0.75, 1.0)))]
        if op == 'Upsample':
            c['scales'] = [1.0, 1.0] + [max(s, 1.0) for s in c['scales'][2:]]
        out.append(c)

    for v in (7, 9):
        for mode in ('nearest', 'linear'):
            for _ in range(2):
                add('Upsample', v, mode, nearest_mode='simple')
    for mode in ('nearest', 'linear'):
        add('Resize', 10, mode, scales=[1.0, 1.0, 2.0, 3.0])
        add('Resize', 10, mode, scales=[1.0, 1.0, 0.6, 0.5])
        add('Resize', 10, mode, scales=[1.0, 1.0, 0.5, 2.0])
        add('Resize', 10, mode)
    for v in (11, 13):
        for ctm in ('half_pixel', 'pytorch_half_pixel', 'align_corners', 'asymmetric',
                    'tf_half_pixel_for_nn'):
            for nm in ('round_prefer_floor', 'floor', 'ceil', 'round_prefer_ceil'):
                add('Resize', v, 'nearest', ctm, nearest_mode=nm)
        for ctm in ('half_pixel', 'pytorch_half_pixel', 'align_corners', 'asymmetric'):
            add('Resize', v, 'linear', ctm)
            add('Resize', v, 'cubic', ctm, cubic_a=-0.5, exclude=rng.randint(0, 1))
        add('Resize', v, 'linear', 'half_pixel', by='sizes', sizes=[1, 1, 9, 4])
        add('Resize', v, 'linear', 'tf_crop_and_resize', roi=[0, 0, 0.2, 0.1, 1, 1, 0.9, 1.1],
            extrap=R32(-1.5))
    for v in (11, 13):
        # what Resize-10 can say: asymmetric, by scales, up and down
        for nm in ('floor', 'ceil'):
            add('Resize', v, 'nearest', 'asymmetric', nearest_mode=nm, scales=[1.0, 1.0, 0.6, 0.5])
            add('Resize', v, 'nearest', 'asymmetric', nearest_mode=nm, scales=[1.0, 1.0, 1.5, 2.5])
        add('Resize', v, 'linear', 'asymmetric', nearest_mode='floor', scales=[1.0, 1.0, 0.6, 2.5])
    for v in (18, 19):
        add('Resize', v, 'linear', 'half_pixel')
        add('Resize', v, 'nearest', 'asymmetric', nearest_mode='floor')
        add('Resize', v, 'linear', 'half_pixel', antialias=1, scales=[1.0, 1.0, 0.5, 0.6])
        add('Resize', v, 'cubic', 'half_pixel', antialias=1, scales=[1.0, 1.0, 0.4, 0.8])
        add('Resize', v, 'linear', 'align_corners', axes=[2, 3], scales=[1.5, 0.7])
        add('Resize', v, 'nearest', 'half_pixel', axes=[2, 3], sizes=[9, 9],
            policy='not_larger', by='sizes')
    add('Resize', 19, 'linear', 'half_pixel_symmetric', scales=[1.0, 1.0, 0.6, 1.7])
    add('Resize', 19, 'nearest', 'half_pixel_symmetric', scales=[1.0, 1.0, 2.5, 1.3])
    return out


def describe(c):
    keys = ('shape', 'scales', 'sizes', 'axes', 'nearest_mode', 'antialias', 'policy')
    return ' '.join('%s=%s' % (k, c[k]) for k in keys if k in c)


def R32(v):
    return float(np.float32(v))


def migrate(opmig, wd, src, tid, rules, layout, k):
    out = os.path.join(wd, 'm%d.onnx' % k)
    cmd = [opmig, 'migrate', src, '--target', tid, '-o', out, '--format', 'json',
           '--threads', '1']
    if rules:
        cmd += ['--rules', rules]
    if layout == 'nhwc':
        cmd += ['--layout', 'nhwc']
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        rep = None
    return r.returncode, rep, out, r.stderr.strip()


def opset_of(m):
    return max(o.version for o in m.opset_import if o.domain in ('', 'ai.onnx'))


def main():
    args = [a for a in sys.argv[1:] if a != '-v']
    verbose = '-v' in sys.argv
    opmig, wd = args
    os.makedirs(wd, exist_ok=True)
    rules = {t: rules_file(wd, t, r) for t, r in RANGES.items()}
    cases = source_cases(7)
    srcs, xs = {}, {}
    for c in cases:
        m = C.build(c)
        if c['opset'] <= 17:
            onnx.checker.check_model(m, full_check=True)
        srcs[c['id']] = os.path.join(wd, 's%d.onnx' % c['id'])
        onnx.save(m, srcs[c['id']])
        xs[c['id']] = C.input_of(c, 7)
    runs = []
    for c in cases:
        for tid, rng in list(RANGES.items()) + list(REAL.items()):
            if rng[0] <= c['opset'] <= rng[1]:
                continue   # no conversion forced
            for layout in ('nchw', 'nhwc') if tid in ('generic-npu', 'rs-op13') else ('nchw',):
                runs.append((c, tid, rng, layout))
    # RESIZE_MIGRATE_EVERY=N: every N-th migration only (slow builds);
    # faults are judged, the known list and the counts are not
    every = int(os.environ.get('RESIZE_MIGRATE_EVERY', '1'))
    runs = runs[::every]
    faults, written, refused = [], [], {}
    for k, (c, tid, rng, layout) in enumerate(runs):
        rc, rep, out, err = migrate(opmig, wd, srcs[c['id']], tid, rules.get(tid), layout, k)
        what = '%s-%d %s %s -> %s %s' % (c['op'], c['opset'], c['mode'], c['ctm'], tid, layout)
        if rc not in (0, 1) or rep is None:
            faults.append('%s: exit %d: %s' % (what, rc, err.splitlines()[-1:] if err else ''))
            continue
        val = rep.get('validation') or {}
        if rc == 1:
            if val.get('equivalent') is False:
                o = (val.get('outputs') or [{}])[0]
                faults.append('%s: not written, the rewrite computes something else (%s of %s '
                              'elements differ, max abs error %s) [%s]' % (
                                  what, o.get('outside_tolerance'), o.get('elements'),
                                  o.get('max_abs_error'), describe(c)))
            else:
                notes = [n for n in rep.get('notes', []) if 'not done' in n]
                why = notes[0] if notes else rep.get('why') or json.dumps(rep.get('blockers'))
                key = '%s-%d -> %s: %s' % (c['op'], c['opset'], tid, why[:150])
                refused[key] = refused.get(key, 0) + 1
            continue
        m = onnx.load(out)
        v = opset_of(m)
        if not rng[0] <= v <= rng[1]:
            faults.append('%s: written at opset %d, outside %d..%d' % (what, v, *rng))
            continue
        if v <= 17:
            chk = onnx.ModelProto()
            chk.CopyFrom(m)
            # a source of opset 19 declares IR 9, which onnx 1.12's checker
            # does not know; nothing in these graphs needs more than IR 8
            chk.ir_version = min(chk.ir_version, 8)
            try:
                onnx.checker.check_model(chk, full_check=True)
            except Exception as e:  # noqa: BLE001
                faults.append('%s: onnx.checker: %s' % (what, str(e).splitlines()[0][:200]))
                continue
        perm = {e['kind']: e.get('perm') for e in rep.get('name_map', [])}
        written.append((c, what, out, perm))

    why_no_ort = ortlib.available()
    n_cmp = 0
    if why_no_ort:
        print('notice: onnxruntime-node not used: %s' % why_no_ort)
    else:
        jobs = [(srcs[c['id']], {'x': xs[c['id']]}) for c in cases]
        for c, what, out, perm in written:
            x = xs[c['id']]
            if perm.get('input'):
                x = np.ascontiguousarray(x.transpose(perm['input']))
            jobs.append((out, {'x': x}))
        res = ortlib.run_many(jobs, os.path.join(wd, 'ort'), timeout=600)
        orig = dict(zip([c['id'] for c in cases], res[:len(cases)]))
        for (c, what, out, perm), r in zip(written, res[len(cases):]):
            o = orig[c['id']]
            if isinstance(o, str):
                continue   # onnxruntime cannot run the original
            if isinstance(r, str):
                faults.append('%s: onnxruntime refuses the written model: %s' % (what, r[:200]))
                continue
            y = r[0]
            if perm.get('output'):
                y = y.transpose(np.argsort(perm['output']))
            n_cmp += 1
            if y.shape != o[0].shape:
                faults.append('%s: shape %s, the original gives %s' % (what, y.shape, o[0].shape))
            elif not np.allclose(y, o[0], rtol=1e-5, atol=1e-5):
                i = np.unravel_index(np.argmax(np.abs(y - o[0])), y.shape)
                faults.append('%s: at %s %r, the original gives %r' % (
                    what, list(i), y[i].item(), o[0][i].item()))
    known = [f for f in faults if any(re.search(p, f) for p, _ in KNOWN)]
    unseen = [why for p, why in KNOWN if not any(re.search(p, f) for f in faults)] \
        if every == 1 else []
    print('%d migrations of %d models: %d written, %d refused with blockers; '
          '%d compared in onnxruntime; %d faults (%d known)'
          % (len(runs), len(cases), len(written), sum(refused.values()), n_cmp, len(faults),
             len(known)))
    if verbose:
        for k, n in sorted(refused.items()):
            print('  refused %d: %s' % (n, k))
    for p, why in KNOWN:
        n = sum(1 for f in known if re.search(p, f))
        if n:
            print('known fault (%d migrations): %s' % (n, why))
    for f in faults:
        if f not in known or verbose:
            print(('KNOWN ' if f in known else 'FAULT ') + f)
    for why in unseen:
        print('FIXED? no longer seen, remove it from KNOWN: ' + why)
    return 1 if len(known) < len(faults) or unseen else 0


if __name__ == '__main__':
    sys.exit(main())
