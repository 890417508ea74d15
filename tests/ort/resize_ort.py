"""resize_ort.py OPMIG WORKDIR [--seed S] [--reps N] [-v]: run seeded random
one-node Resize/Upsample models (resize_cases.py) in `opmig run` and, where
installed, in onnxruntime-node (all in one node process), and compare both
with the float64 reference written from the specification (resize_ref.py).
Exit 0 when opmig agrees with the reference everywhere and onnxruntime
agrees with it wherever it is not known to deviate; 1 otherwise.

Where onnxruntime deviates from the specification (each seen with this
suite and in its CPU kernel, core/providers/cpu/tensor/upsamplebase.h and
upsample.cc), the case is compared with the reference only:
- output size from scales: float32 product (scales[i] * input_dims[i],
  ComputeOutputShape) where the text's floor(input * scale) is exact: 0.7f
  on 10 gives 7 in float32, 6 exactly (6.99999988); and it leaves roi out
  of the size of tf_crop_and_resize (floor(input * (end - start) * scale)).
- an axis of scale exactly 1 is copied, never transformed ("scale == 1 ?
  y : get_original_coordinate(...)"), which tf_crop_and_resize with a roi
  other than [0, 1] on such an axis does not allow.
- linear and cubic, and Upsample: an output of the input's shape is the
  input, whatever the scales (scale 1.2 on 4 gives 4 elements, at 0, 0.83, 1.67, 2.5 by
  the text); with antialias, so is each axis of unchanged length.
- antialias on integers: it rounds (a fixed-point path on 8 bits, which
  also reads int8 as uint8: -128 comes out 0); the plain linear path
  truncates.
- keep_aspect_ratio_policy with negative axes: the policy's scale goes to
  none of them (AdjustOutputSizeAsPolicy looks the raw axes up).
- an extrapolation_value outside an integer output type's range:
  static_cast of the float (undefined).
- cubic on integers, rank-1 linear, and linear/cubic beyond its supported
  geometries: refused (counted, not compared).
"""
import os
import subprocess
import sys

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ortlib  # noqa: E402
import resize_cases as C  # noqa: E402
import resize_ref as R  # noqa: E402

# (atol relative to max|x|, rtol) per output dtype, for opmig (double
# arithmetic, one rounding to the output type) and onnxruntime (float32)
TOL_OPMIG = {'float64': (1e-12, 1e-12), 'float32': (1e-6, 1e-6), 'float16': (2e-3, 1e-3)}
TOL_ORT = {'float64': (2e-5, 2e-5), 'float32': (2e-5, 2e-5), 'float16': (4e-3, 2e-3)}
INT_TOL_OPMIG, INT_TOL_ORT = (1e-9, 0), (1e-4, 1e-5)


def tol_of(table, inttol, dt):
    return table.get(dt, inttol)


def write_case(case, seed, wd):
    m = C.build(case)
    if case['opset'] <= 17 and not (case['op'] == 'Upsample' and case['opset'] == 1):
        onnx.checker.check_model(m, full_check=True)
    p = os.path.join(wd, 'c%d.onnx' % case['id'])
    onnx.save(m, p)
    x = C.input_of(case, seed)
    np.save(os.path.join(wd, 'c%d_x.npy' % case['id']), x)
    return p, x


def run_opmig(opmig, case, wd):
    out = os.path.join(wd, 'o%d' % case['id'])
    r = subprocess.run([opmig, 'run', os.path.join(wd, 'c%d.onnx' % case['id']),
                        os.path.join(wd, 'c%d_x.npy' % case['id']), '-O', out,
                        '--out-format', 'npy'], capture_output=True, text=True, timeout=60)
    if r.returncode:
        return 'exit %d: %s' % (r.returncode, r.stderr.strip().splitlines()[-1:])
    return np.load(os.path.join(out, 'output_0.npy'))


def same(a, b, x):
    """Whether two runtimes' outputs agree directly: shapes, and values
    within float32 slack (nearest and integers: one step, for ties)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.size == 0:
        return True
    mx = max(1.0, float(np.abs(x.astype(np.float64)).max()) if x.size else 1.0)
    d = np.abs(a.astype(np.float64) - b.astype(np.float64))
    if a.dtype.kind in 'iu':
        return bool((d <= 1).all())
    return bool((d <= 1e-4 * mx + 1e-3 * np.abs(b.astype(np.float64))).all())


def f32_size(case, x, shape):
    """The output shape onnxruntime computes from scales: the float32
    product, truncated, roi left out."""
    a = R.plan_axes(case, x.shape)
    if case.get('scales') is None:
        return None
    out = []
    sel = case.get('axes')
    sel = list(range(x.ndim)) if sel is None else [d % x.ndim for d in sel]
    full = [1.0] * x.ndim
    for i, d in enumerate(sel):
        full[d] = case['scales'][i]
    for d in range(x.ndim):
        out.append(int(np.float32(full[d]) * np.float32(x.shape[d])))
    return tuple(out) if tuple(out) == tuple(shape) and tuple(out) != tuple(
        b.n_out for b in a) else None


def ort_known(case, x, y):
    """Why onnxruntime's result is not compared (a deviation listed at the
    top), or None."""
    if isinstance(y, list):
        y = y[0]
        if f32_size(case, x, y.shape):
            return 'float32 output size / roi left out'
    if case['ctm'] == 'tf_crop_and_resize':
        for a in R.plan_axes(case, x.shape):
            if np.float32(a.scale) == 1 and a.roi != (0.0, 1.0):
                return 'scale 1 axis not transformed'
    if case.get('antialias') and case['dtype'] in ('int8', 'uint8', 'int32', 'int64'):
        return 'antialias on integers'
    if case.get('policy') and any(a < 0 for a in case.get('axes', ())):
        return 'keep_aspect_ratio_policy with negative axes'
    if case['dtype'] in C.INT_RANGE and 'extrap' in case:
        lo, hi = C.INT_RANGE[case['dtype']]
        if not lo <= case['extrap'] <= hi:
            return 'extrapolation_value outside the integer type'
    if case['mode'] != 'nearest' or case['op'] == 'Upsample':
        axes = R.plan_axes(case, x.shape)
        moved = [a.n_out == a.n_in and a.scale != 1 and a.n_in > 1 for a in axes]
        if any(moved) and (case.get('antialias') or
                           all(a.n_out == a.n_in for a in axes)):
            return 'output length = input length, scale not 1: copied'
    return None


def main():
    args = sys.argv[1:]
    verbose = '-v' in args
    args = [a for a in args if a != '-v']
    seed, reps = 1, 1
    if '--seed' in args:
        i = args.index('--seed')
        seed = int(args[i + 1])
        del args[i:i + 2]
    if '--reps' in args:
        i = args.index('--reps')
        reps = int(args[i + 1])
        del args[i:i + 2]
    opmig, wd = args
    os.makedirs(wd, exist_ok=True)
    cases = C.gen_cases(seed, reps)
    xs = {}
    for c in cases:
        _, xs[c['id']] = write_case(c, seed, wd)

    why_no_ort = ortlib.available()
    ort = {}
    if why_no_ort:
        print('notice: onnxruntime-node not used: %s' % why_no_ort)
    else:
        jobs = [(os.path.join(wd, 'c%d.onnx' % c['id']), {'x': xs[c['id']]}) for c in cases]
        for c, r in zip(cases, ortlib.run_many(jobs, os.path.join(wd, 'ort'), timeout=600)):
            ort[c['id']] = r

    bad_opmig, bad_ort, vs_ort, n_ort, known, refused = [], [], 0, 0, {}, {}
    for c in cases:
        x = xs[c['id']]
        y = run_opmig(opmig, c, wd)
        dt = c['dtype']
        if isinstance(y, str):
            msg = 'opmig failed: ' + y
        else:
            msg = R.check(c, x, y, 1e-9, tol_of(TOL_OPMIG, INT_TOL_OPMIG, dt))
        if msg:
            bad_opmig.append((c, msg))
        r = ort.get(c['id'])
        if r is None:
            continue
        if isinstance(r, str):
            key = ' '.join(r.replace('Status Message:', '|').split('|')[-1].split())[:90]
            refused[key] = refused.get(key, 0) + 1
            continue
        k = ort_known(c, x, r)
        if k:
            known[k] = known.get(k, 0) + 1
            continue
        n_ort += 1
        m2 = R.check(c, x, r[0], 1e-4, tol_of(TOL_ORT, INT_TOL_ORT, dt))
        if m2:
            bad_ort.append((c, m2))
        if isinstance(y, str) or not same(y, r[0], x):
            vs_ort += 1
            if verbose:
                print('DIFF  %s' % describe(c))

    print('%d cases: opmig differs from the float64 reference in %d' % (len(cases), len(bad_opmig)))
    if not why_no_ort:
        print('onnxruntime %s: compared %d, differs from the reference in %d; '
              'opmig and onnxruntime disagree in %d'
              % (ortlib.version(), n_ort, len(bad_ort), vs_ort))
        for k, v in sorted(known.items()):
            print('  not compared with onnxruntime (known deviation): %s: %d' % (k, v))
        for k, v in sorted(refused.items()):
            print('  refused by onnxruntime: %s: %d' % (k, v))
    for c, msg in bad_opmig[:1000 if verbose else 20]:
        print('OPMIG %s: %s' % (describe(c), msg))
    for c, msg in bad_ort[:1000 if verbose else 20]:
        print('ORT   %s: %s' % (describe(c), msg))
    return 1 if bad_opmig or bad_ort else 0


def describe(c):
    keys = ('shape', 'dtype', 'scales', 'sizes', 'axes', 'policy', 'roi', 'extrap',
            'nearest_mode', 'cubic_a', 'exclude', 'antialias')
    extra = ' '.join('%s=%s' % (k, c[k]) for k in keys if k in c)
    return 'c%d %s-%d %s %s %s' % (c['id'], c['op'], c['opset'], c['mode'], c['ctm'], extra)


if __name__ == '__main__':
    sys.exit(main())
