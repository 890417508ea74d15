"""resize_ref.py: Resize and Upsample computed in float64 from the ONNX
specification's text (Operators.md / Changelog.md, every version), written
for the tests and sharing nothing with opmig's kernel; plus the random case
generator and the model writer the Resize tests use (resize_ort.py,
resize_migrate.py).

What the text leaves open, and what is taken here:
- `scale` in the coordinate formulas is the scale the node was given (its
  `scales` input), not output/input: the ONNX backend tests
  (resize_downsample_scales_linear: 0.6 on 4 -> 2, expected 2.6666665 =
  (0.5/0.6 - 0.5) rows, not 0.5/0.5 - 0.5) fix that reading.  With `sizes`
  it is sizes/input; with a keep_aspect_ratio_policy the policy's scale.
- `length_resized` is the output's length, an integer (the text says "the
  length of the resized tensor"); only half_pixel_symmetric uses the
  fractional target length (scale * input), which its text names
  output_width.  align_corners on an output of length 1 maps to 0.
- linear and cubic are separable; a tap outside the input takes the edge
  value, or with exclude_outside gets weight 0 and the taps are
  renormalized; antialias stretches the filter by max(1, 1/scale) and
  renormalizes the taps.
- integers: the weighted sum (and extrapolation_value) truncated toward
  zero and saturated to the type's range (the text says nothing;
  onnxruntime truncates).
"""
import math
from fractions import Fraction

import numpy as np

NEAREST_MODES = ('round_prefer_floor', 'round_prefer_ceil', 'floor', 'ceil')
INT_TYPES = (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.int64)


def ctms_of(op, opset):
    """The coordinate_transformation_modes a version accepts."""
    if op == 'Upsample' or opset < 11:
        return ('asymmetric',)
    c = ['half_pixel', 'pytorch_half_pixel', 'align_corners', 'asymmetric',
         'tf_half_pixel_for_nn', 'tf_crop_and_resize']
    if opset >= 19:
        c.append('half_pixel_symmetric')
    return tuple(c)


def f32(v):
    return float(np.float32(v))


# ---- the formulas ------------------------------------------------------

class Axis:
    """One axis: input and output lengths, the scale of the coordinate
    formulas, the fractional target length, the roi."""

    def __init__(self, n_in, n_out, scale, target, roi=(0.0, 1.0)):
        self.n_in, self.n_out, self.scale, self.target = n_in, n_out, scale, target
        self.roi = roi


def plan_axes(case, in_shape):
    """The Axis of every dimension of an input of in_shape."""
    r = len(in_shape)
    axes = [Axis(n, n, 1.0, float(n)) for n in in_shape]
    sel = case.get('axes')
    sel = list(range(r)) if sel is None else [a % r for a in sel]
    tfc = case.get('ctm') == 'tf_crop_and_resize'
    if case.get('roi') is not None and tfc:
        roi = [f32(v) for v in case['roi']]
        for i, d in enumerate(sel):
            axes[d].roi = (roi[i], roi[len(sel) + i])
    if case.get('scales') is not None:
        for i, d in enumerate(sel):
            s = f32(case['scales'][i])
            a = axes[d]
            ext = Fraction(a.roi[1]) - Fraction(a.roi[0]) if tfc else 1
            a.n_out = math.floor(Fraction(a.n_in) * ext * Fraction(s))
            a.scale, a.target = s, s * a.n_in
        return axes
    sizes = [int(v) for v in case['sizes']]
    pol = case.get('policy', 'stretch')
    if pol == 'stretch':
        for i, d in enumerate(sel):
            a = axes[d]
            a.n_out = sizes[i]
            a.scale = sizes[i] / a.n_in
            a.target = float(sizes[i])
        return axes
    ratios = [Fraction(sizes[i], in_shape[d]) for i, d in enumerate(sel)]
    g = min(ratios) if pol == 'not_larger' else max(ratios)
    for d in sel:
        a = axes[d]
        a.n_out = math.floor(g * a.n_in + Fraction(1, 2))
        a.scale, a.target = float(g), float(g * a.n_in)
    return axes


def coord(ctm, a, o):
    """x_original of output coordinate o on axis a."""
    s, n, m = a.scale, a.n_in, a.n_out
    if ctm == 'half_pixel':
        return (o + 0.5) / s - 0.5
    if ctm == 'half_pixel_symmetric':
        adj = m / a.target
        return n / 2 * (1 - adj) + (o + 0.5) / s - 0.5
    if ctm == 'pytorch_half_pixel':
        return (o + 0.5) / s - 0.5 if m > 1 else 0.0
    if ctm == 'align_corners':
        return o * (n - 1) / (m - 1) if m > 1 else 0.0
    if ctm == 'asymmetric':
        return o / s
    if ctm == 'tf_half_pixel_for_nn':
        return (o + 0.5) / s
    if ctm == 'tf_crop_and_resize':
        st, en = a.roi
        if m > 1:
            return st * (n - 1) + o * (en - st) * (n - 1) / (m - 1)
        return 0.5 * (st + en) * (n - 1)
    raise ValueError(ctm)


def nearest_index(mode, x, scale):
    if mode == 'simple':                        # Resize-10, Upsample
        return math.ceil(x) if scale < 1 else math.floor(x)
    fl = math.floor(x)
    if mode == 'floor':
        return fl
    if mode == 'ceil':
        return math.ceil(x)
    if x - fl == 0.5:
        return fl if mode == 'round_prefer_floor' else fl + 1
    return math.floor(x + 0.5)


def kernel(mode, t, a):
    t = abs(t)
    if mode == 'linear':
        return max(0.0, 1.0 - t)
    if t < 1:
        return ((a + 2) * t - (a + 3)) * t * t + 1
    if t < 2:
        return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return 0.0


def weights(case, a, x):
    """Row of input weights (length n_in) for coordinate x."""
    mode = case['mode']
    se = min(a.scale, 1.0) if case.get('antialias') else 1.0
    reach = (1 if mode == 'linear' else 2) / se
    w = np.zeros(a.n_in)
    taps = []
    for i in range(math.floor(x - reach), math.ceil(x + reach) + 1):
        k = kernel(mode, (x - i) * se, case.get('cubic_a', -0.75))
        if case.get('exclude') and not 0 <= i < a.n_in:
            k = 0.0
        taps.append((min(max(i, 0), a.n_in - 1), k))
    tot = sum(k for _, k in taps)
    norm = (case.get('antialias') or case.get('exclude')) and tot != 0
    for i, k in taps:
        w[i] += k / tot if norm else k
    return w


class Expect:
    """What the output must be: its shape, and per element either the
    float64 value (linear, cubic) or the candidate input indices (nearest);
    positions within eps of a rounding or an extrapolation boundary accept
    either side."""

    def __init__(self, case, x, eps):
        self.case, self.x, self.eps = case, x, eps
        self.axes = plan_axes(case, x.shape)
        self.shape = tuple(a.n_out for a in self.axes)
        self.extrap = f32(case.get('extrap', 0.0))

    def _coords(self, d):
        a = self.axes[d]
        ctm = self.case.get('ctm', 'asymmetric')
        same = a.n_out == a.n_in and a.scale == 1 and ctm != 'tf_crop_and_resize'
        return [float(o) if same else coord(ctm, a, o) for o in range(a.n_out)]

    def _outside(self, d, x):
        """0 inside, 1 outside, 2 within eps of the border."""
        if self.case.get('ctm') != 'tf_crop_and_resize':
            return 0
        hi = self.axes[d].n_in - 1
        if -self.eps <= x <= self.eps or hi - self.eps <= x <= hi + self.eps:
            return 2
        return int(x < 0 or x > hi)

    def _flags(self):
        """Per output element: 0 in, 1 extrapolated, 2 either."""
        fl = np.zeros(self.shape, np.int8)
        for d in range(len(self.shape)):
            f = np.array([self._outside(d, c) for c in self._coords(d)], np.int8)
            sh = [1] * len(self.shape)
            sh[d] = len(f)
            f = f.reshape(sh)
            fl = np.where((fl == 1) | (f == 1), 1, np.maximum(fl, f))
        return fl

    def values(self):
        """float64 values of linear or cubic, and the extrapolation flags."""
        y = self.x.astype(np.float64)
        for d, a in enumerate(self.axes):
            if not a.n_out or not a.n_in:
                sh = list(y.shape)
                sh[d] = a.n_out
                y = np.zeros(sh)
                continue
            W = np.array([weights(self.case, a, c) for c in self._coords(d)])
            y = np.moveaxis(np.tensordot(W, y, axes=([1], [d])), 0, d)
        return y, self._flags()

    def candidates(self):
        """Per axis: per output coordinate the set of input indices."""
        nm = self.case.get('nearest_mode', 'round_prefer_floor')
        out = []
        for d, a in enumerate(self.axes):
            cs = []
            for c in self._coords(d):
                s = set()
                for x in (c - self.eps, c, c + self.eps):
                    i = nearest_index(nm, x, a.scale)
                    s.add(min(max(i, 0), a.n_in - 1))
                cs.append(sorted(s))
            out.append(cs)
        return out


def saturate_trunc(v, dt):
    info = np.iinfo(dt)
    v = np.trunc(v)
    return np.clip(v, info.min, info.max)


def check(case, x, y, eps, tol):
    """None when y is what the specification gives for input x, else one
    line saying where and by how much it is not.  tol is (atol, rtol) on
    float values; eps the coordinate slack (a float32 runtime needs more)."""
    e = Expect(case, x, eps)
    if tuple(y.shape) != e.shape:
        return 'shape %s, want %s' % (list(y.shape), list(e.shape))
    if y.size == 0:
        return None
    if y.dtype != x.dtype:
        return 'dtype %s, want %s' % (y.dtype, x.dtype)
    fl = e._flags()
    ext = np.array(saturate_trunc(e.extrap, x.dtype) if x.dtype.kind in 'iu'
                   else e.extrap).astype(x.dtype)
    if case['mode'] == 'nearest':
        cands = e.candidates()
        ok = np.zeros(e.shape, bool)
        choice = [np.array([c[0] for c in cs]) for cs in cands]
        alt = [np.array([c[-1] for c in cs]) for cs in cands]
        r = len(e.shape)
        for bits in range(1 << r):
            idx = [alt[d] if bits >> d & 1 else choice[d] for d in range(r)]
            v = x[np.ix_(*idx)]
            ok |= (v == y) | ((v != v) & (y != y))
        ok = np.where(fl == 1, y == ext, np.where(fl == 2, ok | (y == ext), ok))
        if ok.all():
            return None
        i = np.unravel_index(np.argmin(ok), e.shape)
        return 'nearest: at %s got %r, candidates %s' % (
            list(i), y[i].item(), [cands[d][i[d]] for d in range(r)])
    ref, _ = e.values()
    atol, rtol = tol
    scale = max(1.0, float(np.abs(x.astype(np.float64)).max()) if x.size else 1.0)
    slack = atol * scale + rtol * np.abs(ref)
    if np.issubdtype(x.dtype, np.integer):
        lo = saturate_trunc(ref - slack, x.dtype)
        hi = saturate_trunc(ref + slack, x.dtype)
        yv = y.astype(np.float64)
        good = (yv >= lo) & (yv <= hi)
    else:
        yv = y.astype(np.float64)
        good = np.abs(yv - ref) <= slack
    good = np.where(fl == 1, y == ext, np.where(fl == 2, good | (y == ext), good))
    if good.all():
        return None
    bad = ~good
    err = np.where(bad, np.abs(y.astype(np.float64) - ref), -1)
    i = np.unravel_index(np.argmax(err), e.shape)
    return '%s: %d of %d elements off, worst at %s: got %r, want %r%s' % (
        case['mode'], int(bad.sum()), y.size, list(i), y[i].item(), ref[i].item(),
        ' (extrapolated)' if fl[i] == 1 else '')
