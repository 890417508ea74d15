"""resize_cases.py: seeded random Resize and Upsample cases covering every
version (Upsample 1, 7, 9; Resize 10, 11, 13, 18, 19) x mode x
coordinate_transformation_mode x nearest_mode x scales-or-sizes, with
random shapes (ranks 1-5), up- and downscales (integer and not), axes,
keep_aspect_ratio_policy, antialias, cubic_coeff_a, exclude_outside, roi
and extrapolation_value, and dtypes; and the one-node model of a case.
"""
import itertools
import random

import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh

import resize_ref as R

ONNX_TYPES = {
    'float32': onnx.TensorProto.FLOAT, 'float64': onnx.TensorProto.DOUBLE,
    'float16': onnx.TensorProto.FLOAT16, 'int8': onnx.TensorProto.INT8,
    'uint8': onnx.TensorProto.UINT8, 'int32': onnx.TensorProto.INT32,
    'int64': onnx.TensorProto.INT64,
}


INT_RANGE = {'int8': (-128, 127), 'uint8': (0, 255), 'int32': (-2 ** 31, 2 ** 31 - 1),
             'int64': (-2 ** 63, 2 ** 63 - 1)}


def combos():
    """Every (op, opset, mode, ctm, nearest_mode, by) the versions allow;
    by is 'scales' or 'sizes'.  The few combinations of Upsample and
    Resize-10 come several times, to draw as many geometries."""
    out = []
    for v in (1, 7, 9):
        for mode in ('nearest', 'linear'):
            out += [('Upsample', v, mode, 'asymmetric', 'simple', 'scales')] * 4
    for v in (10, 11, 13, 18, 19):
        modes = ('nearest', 'linear') + (('cubic',) if v >= 11 else ())
        for mode, ctm in itertools.product(modes, R.ctms_of('Resize', v)):
            nms = R.NEAREST_MODES if mode == 'nearest' and v >= 11 else \
                ('simple',) if v < 11 else (None,)
            for nm, by in itertools.product(nms, ('scales', 'sizes') if v >= 11 else ('scales',)):
                out += [('Resize', v, mode, ctm, nm, by)] * (8 if v == 10 else 1)
    return out


def pick_scale(rng, n):
    """A scale for an axis of length n: integer or not, up or down; the
    output keeps at least one element."""
    kind = rng.random()
    if kind < 0.15:
        s = rng.choice((2.0, 3.0, 4.0))
    elif kind < 0.3:
        s = rng.choice((0.5, 0.25, 0.75, 1.5, 2.5))
    elif kind < 0.4:
        s = 1.0
    elif kind < 0.7:
        s = rng.uniform(0.2, 1.0)
    else:
        s = rng.uniform(1.0, 3.2)
    s = R.f32(round(s, 4))
    while int(np.floor(n * np.float64(s))) < 1:
        s = R.f32(s * 2)
    return s


def ort_friendly(case):
    """Whether onnxruntime's CPU kernel takes this geometry: linear needs
    rank 2, 3, 4 (outer two scales 1) or 5 (outer two 1); cubic rank 2
    or 4 (outer two 1).  Others run against the reference only."""
    return case['mode'] == 'nearest' or case['rank'] in (2, 3, 4, 5)


def make_case(rng, combo, k):
    op, v, mode, ctm, nm, by = combo
    c = {'id': k, 'op': op, 'opset': v, 'mode': mode, 'ctm': ctm, 'by': by}
    if nm:
        c['nearest_mode'] = nm
    # geometry
    if op == 'Upsample' and v == 1:
        rank = 4
    elif mode == 'cubic':
        rank = rng.choice((2, 4, 4, 4, 1, 3))
    elif mode == 'linear':
        rank = rng.choice((2, 3, 4, 4, 5, 1))
    else:
        rank = rng.choice((1, 2, 3, 4, 4, 5))
    c['rank'] = rank
    cap = {1: 24, 2: 12, 3: 8, 4: 7, 5: 5}[rank]
    shape = [rng.randint(1, cap) for _ in range(rank)]
    if rank >= 4:
        shape[0], shape[1] = rng.randint(1, 2), rng.randint(1, 3)
    # the interpolated axes should be longer than 1 most of the time
    for d in range(max(0, rank - 2), rank):
        if shape[d] == 1 and rng.random() < 0.8:
            shape[d] = rng.randint(2, cap)
    c['shape'] = shape
    sel = list(range(rank))
    if v >= 18 and rng.random() < 0.4 and rank > 1:
        n = rng.randint(1, rank)
        sel = sorted(rng.sample(range(rank), n))
        if rank >= 4 and mode != 'nearest':
            sel = [d for d in sel if d >= 2] or [rank - 1]
        c['axes'] = [d - rank if rng.random() < 0.3 else d for d in sel]
    # which axes are resized: for the ort-friendly 4-D and 5-D linear and
    # cubic geometries, only the spatial ones
    spatial = [d for d in sel if not (rank >= 4 and mode != 'nearest' and d < 2)]
    if by == 'scales' or op == 'Upsample':
        sc = []
        for d in sel:
            s = pick_scale(rng, shape[d]) if d in spatial else 1.0
            if op == 'Upsample' and s < 1:
                s = R.f32(1.0 / s) if rng.random() < 0.5 else 1.0
            sc.append(s)
        if op == 'Upsample' and v == 1:
            sc[0] = sc[1] = 1.0
        c['scales'] = sc
    else:
        sz = []
        for d in sel:
            n = shape[d]
            sz.append(rng.randint(1, 3 * n + 1) if d in spatial else n)
        c['sizes'] = sz
        if v >= 18 and rng.random() < 0.4:
            c['policy'] = rng.choice(('not_larger', 'not_smaller'))
    if ctm == 'tf_crop_and_resize':
        st = [R.f32(rng.uniform(-0.3, 0.5)) if d in spatial else 0.0 for d in sel]
        en = [R.f32(s + rng.uniform(0.2, 1.0)) if d in spatial else 1.0
              for s, d in zip(st, sel)]
        if rng.random() < 0.2:
            st, en = [0.0] * len(sel), [1.0] * len(sel)
        c['roi'] = st + en
        c['extrap'] = R.f32(rng.choice((0.0, -2.5, 7.0, rng.uniform(-3, 3))))
    if mode == 'cubic':
        c['cubic_a'] = R.f32(rng.choice((-0.75, -0.5, rng.uniform(-1.0, -0.3))))
        c['exclude'] = rng.randint(0, 1)
    if mode != 'nearest' and v >= 18 and rng.random() < 0.45:
        c['antialias'] = 1
        if mode == 'linear' and rng.random() < 0.3:
            c['exclude'] = 1
    # dtype: mostly float32
    r = rng.random()
    if r < 0.75 or (op == 'Upsample' and v == 1):
        c['dtype'] = 'float32'
    else:
        c['dtype'] = rng.choice(('float64', 'float16', 'int8', 'uint8', 'int32', 'int64'))
    if c['dtype'] not in ('float32', 'float64', 'float16') and 'extrap' in c:
        c['extrap'] = float(rng.randint(-3, 7))
    c['ort'] = ort_friendly(c)
    return c


def gen_cases(seed, reps=1):
    """Every combination reps times, each with its own random draws."""
    rng = random.Random(seed)
    out = []
    for _ in range(reps):
        for combo in combos():
            out.append(make_case(rng, combo, len(out)))
    return out


def input_of(case, seed):
    rs = np.random.RandomState(seed * 1000003 + case['id'])
    dt = np.dtype(case['dtype'])
    shape = case['shape']
    if dt.kind == 'f':
        return rs.standard_normal(shape).astype(dt)
    info = np.iinfo(dt)
    lo, hi = max(info.min, -100), min(info.max, 100)
    if dt in (np.int8, np.uint8) and rs.random_sample() < 0.5:
        lo, hi = info.min, info.max
    return rs.randint(lo, hi + 1, size=shape).astype(dt)


def build(case):
    """The one-node model of case (onnx.ModelProto)."""
    op, v, rank = case['op'], case['opset'], case['rank']
    et = ONNX_TYPES[case['dtype']]
    x = h.make_tensor_value_info('x', et, case['shape'])
    y = h.make_tensor_value_info('y', et, [None] * rank)
    inits, attrs = [], {'mode': case['mode']}

    def ftensor(name, vals):
        inits.append(nh.from_array(np.array(vals, np.float32), name))
        return name

    if op == 'Upsample':
        if v == 1:
            attrs['mode'] = 'bilinear' if case['mode'] == 'linear' else 'nearest'
            attrs['height_scale'] = case['scales'][2]
            attrs['width_scale'] = case['scales'][3]
            ins = ['x']
        elif v == 7:
            attrs['scales'] = case['scales']
            ins = ['x']
        else:
            ins = ['x', ftensor('scales', case['scales'])]
    elif v == 10:
        ins = ['x', ftensor('scales', case['scales'])]
    else:
        attrs['coordinate_transformation_mode'] = case['ctm']
        if 'nearest_mode' in case:
            attrs['nearest_mode'] = case['nearest_mode']
        if 'cubic_a' in case:
            attrs['cubic_coeff_a'] = case['cubic_a']
        if case.get('exclude'):
            attrs['exclude_outside'] = 1
        if 'extrap' in case:
            attrs['extrapolation_value'] = case['extrap']
        if case.get('antialias'):
            attrs['antialias'] = 1
        if 'axes' in case:
            attrs['axes'] = case['axes']
        if 'policy' in case:
            attrs['keep_aspect_ratio_policy'] = case['policy']
        roi = ftensor('roi', case['roi']) if 'roi' in case else \
            ftensor('roi', []) if v == 11 else ''
        if 'scales' in case:
            ins = [roi, ftensor('scales', case['scales'])]
        else:
            inits.append(nh.from_array(np.array(case['sizes'], np.int64), 'sizes'))
            ins = [roi, ftensor('scales', []) if v == 11 else '', 'sizes']
        ins = ['x'] + ins
    node = h.make_node(op, ins, ['y'], name='rs', **attrs)
    g = h.make_graph([node], 'resize%d' % case['id'], [x], [y], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid('', v)])
    m.ir_version = 9 if v >= 19 else 8 if v >= 18 else 7
    return m
