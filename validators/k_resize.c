/* k_resize.c: kernels of the resize family: Resize (every opset's inputs,
 * modes nearest/linear/cubic, coordinate transformations, antialias,
 * axes, aspect-ratio policies) and Upsample, plus the table lines of
 * GridSample and AffineGrid (k_resize_grid.c).  Nearest moves elements of any
 * dtype; linear and cubic run one separable pass per resized axis in
 * double precision.  See rt_int.h for how to add one. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "validators/k_shape_int.h"

enum rs_mode { RS_NEAREST, RS_LINEAR, RS_CUBIC };
enum rs_coord {
	CT_HALF_PIXEL, CT_HALF_PIXEL_SYM, CT_PYTORCH_HALF_PIXEL, CT_ALIGN_CORNERS,
	CT_ASYMMETRIC, CT_TF_HALF_PIXEL_NN, CT_TF_CROP
};
enum rs_near { NM_ROUND_FLOOR, NM_ROUND_CEIL, NM_FLOOR, NM_CEIL, NM_SIMPLE };

struct rs_params {
	enum rs_mode mode;
	enum rs_coord ct;
	enum rs_near nm;
	double a;               /* cubic_coeff_a */
	int exclude, antialias;
	double extrap;
	int rank;
	int64_t in[RT_MAX_RANK], out[RT_MAX_RANK];
	double scale[RT_MAX_RANK], roi_s[RT_MAX_RANK], roi_e[RT_MAX_RANK];
};

static const struct { const char *name; int v; } coords[] = {
	{ "align_corners", CT_ALIGN_CORNERS },
	{ "asymmetric", CT_ASYMMETRIC },
	{ "half_pixel", CT_HALF_PIXEL },
	{ "half_pixel_symmetric", CT_HALF_PIXEL_SYM },
	{ "pytorch_half_pixel", CT_PYTORCH_HALF_PIXEL },
	{ "tf_crop_and_resize", CT_TF_CROP },
	{ "tf_half_pixel_for_nn", CT_TF_HALF_PIXEL_NN },
}, nearests[] = {
	{ "ceil", NM_CEIL },
	{ "floor", NM_FLOOR },
	{ "round_prefer_ceil", NM_ROUND_CEIL },
	{ "round_prefer_floor", NM_ROUND_FLOOR },
}, modes[] = {
	{ "bilinear", RS_LINEAR },
	{ "cubic", RS_CUBIC },
	{ "linear", RS_LINEAR },
	{ "nearest", RS_NEAREST },
};

#define LOOKUP(tab, s, out) lookup(tab, sizeof(tab) / sizeof(tab[0]), s, out)

static int lookup(const void *tab, size_t n, const char *s, int *out)
{
	const struct { const char *name; int v; } *t = tab;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, s)) {
			*out = t[i].v;
			return 0;
		}
	return -1;
}

/* Input coordinate of output coordinate x along axis d.  As in the ONNX
 * reference, the resized length of align_corners, pytorch_half_pixel and
 * tf_crop_and_resize is scale * input length, not the rounded size. */
static double orig_coord(const struct rs_params *p, int d, int64_t x)
{
	double s = p->scale[d], in = (double)p->in[d], out = s * in;
	double xd = (double)x;

	switch (p->ct) {
	case CT_HALF_PIXEL:
		return (xd + 0.5) / s - 0.5;
	case CT_HALF_PIXEL_SYM: {
		double adj = (double)p->out[d] / out, off = in / 2 * (1 - adj);

		return off + (xd + 0.5) / s - 0.5;
	}
	case CT_PYTORCH_HALF_PIXEL:
		return out == 1 ? -0.5 : (xd + 0.5) / s - 0.5;
	case CT_ALIGN_CORNERS:
		return out == 1 ? 0 : xd * (in - 1) / (out - 1);
	case CT_ASYMMETRIC:
		return xd / s;
	case CT_TF_HALF_PIXEL_NN:
		return (xd + 0.5) / s;
	case CT_TF_CROP:
		return (out == 1 ? (p->roi_e[d] - p->roi_s[d]) * (in - 1) / 2 :
			xd * (p->roi_e[d] - p->roi_s[d]) * (in - 1) / (out - 1)) +
		       p->roi_s[d] * (in - 1);
	}
	return 0;
}

/* A coordinate bounded so that int64 conversions stay defined (NaN goes
 * to the low end). */
static double bounded(double x)
{
	return !(x >= -1e12) ? -1e12 : x > 1e12 ? 1e12 : x;
}

/* An output size from a real number; -1 when out of range. */
static int64_t out_size(double v)
{
	return v >= 0 && v < 1e13 ? (int64_t)v : -1;
}

static int outside(const struct rs_params *p, int d, double x)
{
	return p->ct == CT_TF_CROP && (x < 0 || x > (double)(p->in[d] - 1));
}

/* ---- nearest ---------------------------------------------------------- */

static int64_t nearest_index(const struct rs_params *p, int d, double x)
{
	double f, r;
	int64_t i;

	x = bounded(x);
	f = floor(x);
	r = x - f;

	if (r == 0) {
		i = (int64_t)f;
	} else {
		switch (p->nm) {
		case NM_ROUND_FLOOR: i = (int64_t)f + (r > 0.5); break;
		case NM_ROUND_CEIL: i = (int64_t)f + (r >= 0.5); break;
		case NM_FLOOR: i = (int64_t)f; break;
		case NM_CEIL: i = (int64_t)f + 1; break;
		default: i = (int64_t)f + (p->scale[d] < 1); break;
		}
	}
	return i < 0 ? 0 : i >= p->in[d] ? p->in[d] - 1 : i;
}

static int run_nearest(struct rt_kctx *k, const struct rs_params *p,
		       struct rt_value *x, struct rt_value *y)
{
	int64_t *map[RT_MAX_RANK] = { 0 }, xs[RT_MAX_RANK], idx[RT_MAX_RANK] = { 0 };
	int r = p->rank, rc = 0;

	ks_strides(r, x->dims, xs);
	for (int d = 0; d < r; d++) {
		if (!(map[d] = malloc((size_t)(p->out[d] ? p->out[d] : 1) * sizeof(int64_t)))) {
			rc = rt_oom(k);
			goto cleanup;
		}
		for (int64_t o = 0; o < p->out[d]; o++) {
			double c = orig_coord(p, d, o);

			map[d][o] = outside(p, d, c) ? -1 : nearest_index(p, d, c) * xs[d];
		}
	}
	for (int64_t o = 0; o < y->numel; o++) {
		int64_t s = 0;
		int ext = 0;

		for (int d = 0; d < r; d++) {
			int64_t m = map[d][idx[d]];

			if (m < 0)
				ext = 1;
			s += m;
		}
		if (!ext)
			rc = ks_copy(k, y, o, x, s, 1);
		else if (y->dtype == IR_DTYPE_STRING)
			rc = ks_zero(k, y, o);
		else
			rt_store_f64(y->dtype, y->data, o, p->extrap);
		if (rc < 0)
			goto cleanup;
		for (int d = r - 1; d >= 0; d--) {
			if (++idx[d] < p->out[d])
				break;
			idx[d] = 0;
		}
	}
cleanup:
	for (int d = 0; d < r; d++)
		free(map[d]);
	return rc;
}

/* ---- linear and cubic: one pass per axis ------------------------------ */

static double kernel(const struct rs_params *p, double d)
{
	double a = p->a;

	if (p->mode == RS_LINEAR)
		return d < 1 ? 1 - d : 0;
	if (d < 1)
		return ((a + 2) * d - (a + 3)) * d * d + 1;
	if (d < 2)
		return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
	return 0;
}

struct pass {
	const double *src;
	double *dst;
	int64_t in_len, out_len, inner, n_taps;
	const int64_t *tap_idx;   /* out_len * n_taps, -1: extrapolate */
	const double *tap_w;
	double extrap;
};

static void pass_rows(void *arg, int64_t begin, int64_t end)
{
	const struct pass *q = arg;

	for (int64_t row = begin; row < end; row++) {
		int64_t o = row / q->out_len, l = row % q->out_len;
		double *dst = q->dst + row * q->inner;
		const int64_t *ti = q->tap_idx + l * q->n_taps;
		const double *tw = q->tap_w + l * q->n_taps;

		if (ti[0] < 0) {
			for (int64_t i = 0; i < q->inner; i++)
				dst[i] = q->extrap;
			continue;
		}
		for (int64_t i = 0; i < q->inner; i++)
			dst[i] = 0;
		for (int64_t t = 0; t < q->n_taps; t++) {
			const double *src = q->src + (o * q->in_len + ti[t]) * q->inner;
			double w = tw[t];

			if (w == 0)
				continue;
			for (int64_t i = 0; i < q->inner; i++)
				dst[i] += w * src[i];
		}
	}
}

/* Taps of every output coordinate along axis d. */
static int make_taps(struct rt_kctx *k, const struct rs_params *p, int d,
		     int64_t **idx_out, double **w_out, int64_t *n_taps)
{
	double se = p->antialias && p->scale[d] < 1 ? p->scale[d] : 1;
	int64_t start = (int64_t)floor((p->mode == RS_LINEAR ? -1 : -2) / se) + 1;
	int64_t n = 2 - 2 * start, in = p->in[d];
	int64_t *ti;
	double *tw;

	if (n > 1000000 || (uint64_t)n * (uint64_t)(p->out[d] + 1) > (1u << 28))
		return rt_err(k, "scale %g along axis %d needs too many taps", p->scale[d], d);
	ti = malloc((size_t)(n * (p->out[d] + 1)) * sizeof(*ti));
	tw = malloc((size_t)(n * (p->out[d] + 1)) * sizeof(*tw));
	if (!ti || !tw) {
		free(ti);
		free(tw);
		return rt_oom(k);
	}
	for (int64_t o = 0; o < p->out[d]; o++) {
		double x = bounded(orig_coord(p, d, o)), f = floor(x), sum = 0;
		int64_t *ii = ti + o * n;
		double *ww = tw + o * n;

		if (outside(p, d, x)) {
			for (int64_t t = 0; t < n; t++) {
				ii[t] = -1;
				ww[t] = 0;
			}
			continue;
		}
		for (int64_t t = 0; t < n; t++) {
			int64_t id = (int64_t)f + start + t;

			ww[t] = kernel(p, fabs(x - (double)id) * se);
			if (p->exclude && (id < 0 || id >= in))
				ww[t] = 0;
			sum += ww[t];
			ii[t] = id < 0 ? 0 : id >= in ? in - 1 : id;
		}
		if ((p->antialias || p->exclude) && sum != 0)
			for (int64_t t = 0; t < n; t++)
				ww[t] /= sum;
	}
	*idx_out = ti;
	*w_out = tw;
	*n_taps = n;
	return 0;
}

static int run_interp(struct rt_kctx *k, const struct rs_params *p,
		      struct rt_value *x, struct rt_value *y)
{
	int64_t dims[RT_MAX_RANK], total = x->numel;
	double *cur, *next = NULL;
	int rc = 0;

	if (x->dtype == IR_DTYPE_STRING)
		return rt_err(k, "linear and cubic modes need numbers, not strings");
	if (!(cur = malloc((size_t)(total ? total : 1) * sizeof(double))))
		return rt_oom(k);
	for (int64_t i = 0; i < total; i++)
		cur[i] = rt_load_f64(x->dtype, x->data, i);
	memcpy(dims, x->dims, sizeof(dims));
	for (int d = 0; d < p->rank; d++) {
		struct pass q;
		int64_t *ti = NULL, outer = 1;
		double *tw = NULL;

		if (p->out[d] == p->in[d] && p->scale[d] == 1 && p->ct != CT_TF_CROP)
			continue;
		for (int i = 0; i < d; i++)
			outer *= dims[i];
		q.inner = 1;
		for (int i = d + 1; i < p->rank; i++)
			q.inner *= dims[i];
		q.in_len = dims[d];
		q.out_len = p->out[d];
		total = outer * q.out_len * q.inner;
		if (!(next = malloc((size_t)(total ? total : 1) * sizeof(double)))) {
			rc = rt_oom(k);
			goto cleanup;
		}
		if (total && q.in_len == 0) {
			rc = rt_err(k, "cannot resize an empty axis %d to %lld", d,
				    (long long)q.out_len);
			goto cleanup;
		}
		if ((rc = make_taps(k, p, d, &ti, &tw, &q.n_taps)) < 0)
			goto cleanup;
		q.src = cur;
		q.dst = next;
		q.tap_idx = ti;
		q.tap_w = tw;
		q.extrap = p->extrap;
		rt_parallel_for(k, outer * q.out_len, 1 + 4096 / (q.inner * q.n_taps + 1),
				pass_rows, &q);
		free(ti);
		free(tw);
		free(cur);
		cur = next;
		next = NULL;
		dims[d] = p->out[d];
	}
	/* integers truncate, as the reference's astype does */
	for (int64_t i = 0; i < y->numel; i++)
		rt_store_f64(y->dtype, y->data, i, cur[i]);
cleanup:
	free(cur);
	free(next);
	return rc;
}

/* ---- sizes, scales and the kernels ------------------------------------ */

static int floats_in(struct rt_kctx *k, size_t i, double **v, size_t *n)
{
	struct rt_value *t = rt_in(k, i);

	*v = NULL;
	*n = 0;
	if (!t || t->kind != RT_TENSOR || t->numel == 0)
		return 0;
	if (!(*v = malloc((size_t)t->numel * sizeof(double))))
		return rt_oom(k);
	for (int64_t j = 0; j < t->numel; j++)
		(*v)[j] = rt_load_f64(t->dtype, t->data, j);
	*n = (size_t)t->numel;
	return 0;
}

static int run(struct rt_kctx *k, struct rs_params *p, struct rt_value *x)
{
	struct rt_value *y;

	for (int d = 0; d < p->rank; d++)
		if (p->out[d] < 0 || !(p->scale[d] > 0))
			return rt_err(k, "invalid scale %g or size %lld on axis %d",
				      p->scale[d], (long long)p->out[d], d);
	if (!(y = rt_out_tensor(k, 0, x->dtype, p->rank, p->out)))
		return IR_ENOMEM;
	if (p->mode == RS_NEAREST)
		return run_nearest(k, p, x, y);
	return run_interp(k, p, x, y);
}

static void params_init(struct rs_params *p, const struct rt_value *x)
{
	memset(p, 0, sizeof(*p));
	p->rank = x->rank;
	for (int d = 0; d < x->rank; d++) {
		p->in[d] = p->out[d] = x->dims[d];
		p->scale[d] = 1;
		p->roi_e[d] = 1;
	}
	p->a = -0.75;
}

static int k_resize(struct rt_kctx *k)
{
	struct rt_value *x;
	struct rs_params p;
	const int64_t *axes_attr;
	double *scales = NULL, *roi = NULL;
	int64_t *sizes = NULL;
	int axes[RT_MAX_RANK], mode, ct = CT_ASYMMETRIC, nm = NM_SIMPLE, rc;
	size_t na, ns = 0, nz = 0, nr = 0;
	const char *s;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	params_init(&p, x);
	s = rt_attr_str(k, "mode", "nearest");
	if (LOOKUP(modes, s, &mode) < 0 || (k->version < 11 && mode == RS_CUBIC) ||
	    !strcmp(s, "bilinear"))
		return rt_err(k, "unknown mode '%s'", s);
	p.mode = mode;
	if (k->version >= 11) {
		s = rt_attr_str(k, "coordinate_transformation_mode", "half_pixel");
		if (LOOKUP(coords, s, &ct) < 0 ||
		    (ct == CT_HALF_PIXEL_SYM && k->version < 19))
			return rt_err(k, "unknown coordinate_transformation_mode '%s'", s);
		s = rt_attr_str(k, "nearest_mode", "round_prefer_floor");
		if (LOOKUP(nearests, s, &nm) < 0)
			return rt_err(k, "unknown nearest_mode '%s'", s);
		p.a = rt_attr_float(k, "cubic_coeff_a", -0.75f);
		p.exclude = (int)rt_attr_int(k, "exclude_outside", 0);
		p.extrap = rt_attr_float(k, "extrapolation_value", 0);
	}
	p.ct = ct;
	p.nm = nm;
	if (k->version >= 18)
		p.antialias = (int)rt_attr_int(k, "antialias", 0);
	axes_attr = k->version >= 18 ? rt_attr_ints(k, "axes", &na) : NULL;
	if (axes_attr) {
		if ((rc = ks_axes(k, axes_attr, na, x->rank, axes)) < 0)
			return rc;
	} else {
		na = (size_t)x->rank;
		for (int i = 0; i < x->rank; i++)
			axes[i] = i;
	}
	if (k->version < 11) {
		if ((rc = floats_in(k, 1, &scales, &ns)) < 0)
			goto cleanup;
	} else {
		if ((rc = floats_in(k, 1, &roi, &nr)) < 0 ||
		    (rc = floats_in(k, 2, &scales, &ns)) < 0)
			goto cleanup;
		if (rt_in(k, 3) && rt_in(k, 3)->numel &&
		    (rc = rt_in_ints(k, 3, &sizes, &nz)) < 0)
			goto cleanup;
	}
	if (ct == CT_TF_CROP && roi) {
		if (nr != 2 * na) {
			rc = rt_err(k, "roi has %zu entries, expected %zu", nr, 2 * na);
			goto cleanup;
		}
		for (size_t i = 0; i < na; i++) {
			p.roi_s[axes[i]] = roi[i];
			p.roi_e[axes[i]] = roi[na + i];
		}
	}
	if (scales && sizes) {
		rc = rt_err(k, "scales and sizes are both given");
		goto cleanup;
	}
	if (scales) {
		if (ns != na) {
			rc = rt_err(k, "scales has %zu entries for %zu axes", ns, na);
			goto cleanup;
		}
		for (size_t i = 0; i < na; i++) {
			int d = axes[i];
			double len = (double)p.in[d];

			if (ct == CT_TF_CROP)
				len *= p.roi_e[d] - p.roi_s[d];
			p.scale[d] = scales[i];
			p.out[d] = out_size(floor(len * scales[i]));
		}
	} else if (sizes) {
		const char *pol = k->version >= 18 ?
				  rt_attr_str(k, "keep_aspect_ratio_policy", "stretch") : "stretch";
		int keep = strcmp(pol, "stretch") != 0, larger = !strcmp(pol, "not_smaller");
		double g = larger ? 0 : INFINITY;

		if (keep && !larger && strcmp(pol, "not_larger")) {
			rc = rt_err(k, "unknown keep_aspect_ratio_policy '%s'", pol);
			goto cleanup;
		}
		if (nz != na) {
			rc = rt_err(k, "sizes has %zu entries for %zu axes", nz, na);
			goto cleanup;
		}
		for (size_t i = 0; i < na; i++) {
			int d = axes[i];
			double r = p.in[d] ? (double)sizes[i] / (double)p.in[d] : 1;

			p.out[d] = sizes[i];
			p.scale[d] = r;
			g = larger ? (r > g ? r : g) : (r < g ? r : g);
		}
		if (keep)
			for (size_t i = 0; i < na; i++) {
				int d = axes[i];

				p.scale[d] = g;
				p.out[d] = out_size(floor(g * (double)p.in[d] + 0.5));
			}
	} else {
		rc = rt_err(k, "neither scales nor sizes is given");
		goto cleanup;
	}
	rc = run(k, &p, x);
cleanup:
	free(scales);
	free(roi);
	free(sizes);
	return rc;
}

static int k_upsample(struct rt_kctx *k)
{
	struct rt_value *x;
	struct rs_params p;
	const char *s = rt_attr_str(k, "mode", "nearest");
	double *scales = NULL;
	size_t ns = 0;
	int mode, rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	params_init(&p, x);
	if (LOOKUP(modes, s, &mode) < 0 || mode == RS_CUBIC ||
	    (mode == RS_LINEAR && strcmp(s, k->version < 7 ? "bilinear" : "linear")))
		return rt_err(k, "unknown mode '%s'", s);
	p.mode = mode;
	p.ct = CT_ASYMMETRIC;
	p.nm = NM_SIMPLE;
	if (k->version < 7) {
		if (x->rank != 4)
			return rt_err(k, "input must be 4-D, has rank %d", x->rank);
		p.scale[2] = rt_attr_float(k, "height_scale", 1);
		p.scale[3] = rt_attr_float(k, "width_scale", 1);
	} else if (k->version < 9) {
		const float *f = rt_attr_floats(k, "scales", &ns);

		if (!f || ns != (size_t)x->rank)
			return rt_err(k, "attribute 'scales' must have %d entries", x->rank);
		for (size_t i = 0; i < ns; i++)
			p.scale[i] = f[i];
	} else {
		if ((rc = floats_in(k, 1, &scales, &ns)) < 0)
			return rc;
		if (ns != (size_t)x->rank) {
			free(scales);
			return rt_err(k, "scales has %zu entries for rank %d", ns, x->rank);
		}
		for (size_t i = 0; i < ns; i++)
			p.scale[i] = scales[i];
		free(scales);
	}
	for (int d = 0; d < x->rank; d++)
		p.out[d] = out_size(floor((double)p.in[d] * p.scale[d]));
	return run(k, &p, x);
}

const struct rt_kernel rt_kernels_resize[] = {
	{ "ai.onnx", "AffineGrid", 20, RT_OPEN, ks_affine_grid },
	{ "ai.onnx", "GridSample", 16, RT_OPEN, ks_grid_sample },
	{ "ai.onnx", "Resize", 10, RT_OPEN, k_resize },
	{ "ai.onnx", "Upsample", 1, RT_OPEN, k_upsample },
};
const size_t rt_n_kernels_resize = sizeof(rt_kernels_resize) / sizeof(rt_kernels_resize[0]);
