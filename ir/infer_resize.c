/* infer_resize.c: shape inference of Resize (opset 10: X, scales; 11+: X,
 * roi, scales, sizes; 18+: axes and keep_aspect_ratio_policy) and Upsample
 * (height_scale/width_scale in opset 1, the scales attribute in 7, an input
 * from 9), and the output-length arithmetic that the interpreter's Resize
 * kernel shares (declared in infer.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/infer_int.h"

#define MAXR IR_INFER_MAX_RANK

int64_t ir_resize_len_scaled(int64_t n, double extent, double scale)
{
	/* three factors (the roi's extent too): long double's wider
	 * significand, where it has one, keeps a product just under an
	 * integer from rounding up to it */
	long double f = floorl((long double)n * (long double)extent * (long double)scale);

	return f >= 0 && f < 9.2e18L ? (int64_t)f : -1;
}

int ir_resize_policy_axis(const int64_t *sizes, const int64_t *in, size_t n,
			  int larger)
{
	int best = -1;

	for (size_t i = 0; i < n; i++) {
		int64_t a, b;

		if (sizes[i] < 0 || in[i] < 0)
			return -1;
		if (in[i] == 0)
			continue;
		if (best < 0) {
			best = (int)i;
			continue;
		}
		/* sizes[i] / in[i] against sizes[best] / in[best] */
		if (__builtin_mul_overflow(sizes[i], in[best], &a) ||
		    __builtin_mul_overflow(sizes[best], in[i], &b)) {
			long double r = (long double)sizes[i] / (long double)in[i];
			long double q = (long double)sizes[best] / (long double)in[best];

			if (larger ? r > q : r < q)
				best = (int)i;
		} else if (larger ? a > b : a < b) {
			best = (int)i;
		}
	}
	return best;
}

int64_t ir_resize_len_policy(int64_t n, int64_t size_k, int64_t in_k)
{
	int64_t num, den;
	long double f;

	if (n < 0 || size_k < 0 || in_k <= 0)
		return -1;
	/* floor(n * size_k / in_k + 1/2) = floor((2 n size_k + in_k) / (2 in_k)) */
	if (!__builtin_mul_overflow(n, size_k, &num) && !__builtin_mul_overflow(num, 2, &num) &&
	    !__builtin_add_overflow(num, in_k, &num) && !__builtin_mul_overflow(in_k, 2, &den))
		return num / den;
	f = floorl((long double)n * (long double)size_k / (long double)in_k + 0.5L);
	return f < 9.2e18L ? (int64_t)f : -1;
}

static void dims_unknown(struct ir_vtype *o, const int *ax, size_t na)
{
	for (size_t i = 0; i < na; i++)
		o->dims[ax[i]] = infer_dim_unknown();
}

/* The axes the scales, sizes and roi refer to: the axes attribute (18+),
 * else every axis. */
static int resize_axes(struct infer_ctx *c, int rank, int *ax, size_t *na)
{
	int64_t v[MAXR];
	int seen[MAXR] = { 0 };
	int rc;

	*na = (size_t)rank;
	for (int i = 0; i < rank; i++)
		ax[i] = i;
	if (strcmp(c->n->op_type, "Resize") || c->opset < 18 || !infer_attr(c, "axes"))
		return 0;
	if ((rc = infer_attr_ints(c, "axes", v, MAXR, na)) < 0)
		return rc;
	for (size_t i = 0; i < *na; i++) {
		int64_t a;

		if ((rc = infer_norm_axis(c, v[i], rank, &a)) < 0)
			return rc;
		if (seen[a]++)
			return infer_err(c, "axis %lld is repeated", (long long)v[i]);
		ax[i] = (int)a;
	}
	return 0;
}

/* Output dims from constant sizes (after keep_aspect_ratio_policy). */
static int from_sizes(struct infer_ctx *c, const struct ir_vtype *x, struct ir_vtype *o,
		      const int *ax, size_t na, const int64_t *sizes, size_t n)
{
	char pol[32] = "stretch";
	int64_t in[MAXR];
	int larger, k, rc;

	if (n != na)
		return infer_err(c, "sizes has %zu values for %zu axes", n, na);
	for (size_t i = 0; i < na; i++)
		if (sizes[i] < 0)
			return infer_err(c, "sizes[%zu] is negative (%lld)", i,
					 (long long)sizes[i]);
	if (c->opset >= 18 && (rc = infer_attr_str(c, "keep_aspect_ratio_policy", pol,
						   sizeof(pol))) < 0)
		return rc;
	if (!strcmp(pol, "stretch")) {
		for (size_t i = 0; i < na; i++)
			o->dims[ax[i]] = infer_dim_val(sizes[i]);
		return 0;
	}
	if (strcmp(pol, "not_larger") && strcmp(pol, "not_smaller"))
		return infer_err(c, "unknown keep_aspect_ratio_policy '%s'", pol);
	larger = !strcmp(pol, "not_smaller");
	for (size_t i = 0; i < na; i++) {
		if (x->dims[ax[i]].kind != IR_VDIM_VALUE) {
			/* the ratio depends on every resized input length */
			dims_unknown(o, ax, na);
			return 0;
		}
		in[i] = x->dims[ax[i]].value;
	}
	k = ir_resize_policy_axis(sizes, in, na, larger);
	for (size_t i = 0; i < na; i++) {
		int64_t v = k < 0 ? 0 : ir_resize_len_policy(in[i], sizes[k], in[k]);

		if (v < 0)
			return infer_err(c, "axis %d: sizes give no valid length", ax[i]);
		o->dims[ax[i]] = infer_dim_val(v);
	}
	return 0;
}

/* The scales of an Upsample before opset 9 (attributes). */
static int upsample_attr_scales(struct infer_ctx *c, int rank, double *sc, size_t *n)
{
	const struct ir_attr *a;

	if (c->opset < 7) {
		float hs = 1, ws = 1;
		int rc;

		if (rank != 4)
			return infer_err(c, "input must be 4-D, has rank %d", rank);
		if ((rc = infer_attr_float(c, "height_scale", &hs)) < 0 ||
		    (rc = infer_attr_float(c, "width_scale", &ws)) < 0)
			return rc;
		sc[0] = sc[1] = 1;
		sc[2] = hs;
		sc[3] = ws;
		*n = 4;
		return 0;
	}
	if (!(a = infer_attr(c, "scales")))
		return infer_err(c, "missing required attribute 'scales'");
	for (size_t i = 0; i < a->n_floats && i < MAXR; i++)
		sc[i] = a->floats[i];
	*n = a->n_floats;
	return 0;
}

int infer_resize(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	struct ir_vtype *o = &c->out[0];
	double sc[MAXR], roi[2 * MAXR];
	int64_t sizes[MAXR];
	int ax[MAXR], rc;
	size_t n = 0, na, nr = 0;
	int upsample = !strcmp(c->n->op_type, "Upsample");
	size_t si = upsample || c->opset < 11 ? 1 : 2;
	char ctm[32] = "";

	if (x)
		o->dtype = x->dtype;
	if (!x || x->rank < 0)
		return 0;
	o->rank = x->rank;
	memcpy(o->dims, x->dims, sizeof(x->dims));
	if ((rc = resize_axes(c, x->rank, ax, &na)) < 0)
		return rc;
	if (!upsample && c->opset >= 11 && infer_has_in(c, 3)) {
		if (!infer_vt_const_ints(infer_in(c, 3), sizes, MAXR, &n)) {
			dims_unknown(o, ax, na);
			return 0;
		}
		if (n > 0)
			return from_sizes(c, x, o, ax, na, sizes, n);
	}
	if (upsample && c->opset < 9) {
		if ((rc = upsample_attr_scales(c, x->rank, sc, &n)) < 0)
			return rc;
	} else {
		rc = infer_value_floats(c, si, sc, MAXR, &n);
		if (rc < 0)
			return rc;
		if (rc != 1) {
			dims_unknown(o, ax, na);
			return 0;
		}
	}
	if (n != na)
		return infer_err(c, "scales has %zu values for %zu axes", n, na);
	if (!upsample && c->opset >= 11 &&
	    (rc = infer_attr_str(c, "coordinate_transformation_mode", ctm, sizeof(ctm))) < 0)
		return rc;
	if (!strcmp(ctm, "tf_crop_and_resize") && infer_has_in(c, 1)) {
		/* the output covers the roi: floor(in * (end - start) * scale) */
		rc = infer_value_floats(c, 1, roi, 2 * MAXR, &nr);
		if (rc < 0)
			return rc;
		if (rc != 1) {
			dims_unknown(o, ax, na);
			return 0;
		}
		if (nr && nr != 2 * na)
			return infer_err(c, "roi has %zu values, %zu expected", nr, 2 * na);
	}
	for (size_t i = 0; i < na; i++) {
		int d = ax[i];
		double ext = nr ? roi[na + i] - roi[i] : 1;

		if (!(sc[i] > 0))
			return infer_err(c, "axis %d: scale %g is not positive", d, sc[i]);
		if (x->dims[d].kind == IR_VDIM_VALUE) {
			int64_t v = ir_resize_len_scaled(x->dims[d].value, ext, sc[i]);

			/* NaN, negative or beyond int64 (hostile scales or roi) */
			if (v < 0)
				return infer_err(c, "axis %d: scale %g gives no valid size", d, sc[i]);
			o->dims[d] = infer_dim_val(v);
		} else if (sc[i] != 1.0 || ext != 1) {
			o->dims[d] = infer_dim_unknown();
		}
	}
	return 0;
}
