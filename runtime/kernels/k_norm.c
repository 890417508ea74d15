/* k_norm.c: kernels of the norm family: BatchNormalization (inference and
 * training outputs), InstanceNormalization, LayerNormalization (ai.onnx and
 * com.microsoft), GroupNormalization (18 and 21), RMSNormalization, LRN,
 * MeanVarianceNormalization, LpNormalization, and the family table (Dropout
 * lives in k_norm_dropout.c).  Computation is in float32 with double
 * accumulators (k_nq.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_nq.h"

/* ---- row normalization (LayerNorm, RMSNorm and their contrib forms) -- */

struct rows {
	const float *x, *scale, *bias;
	float *y, *mean, *inv;
	int64_t inner;
	float eps;
	int rms;
	int round;   /* y rounded so as written (rt_lowp_round_out) */
};

/* The dtype to round a result of x's dtype and shape to as it is written
 * (a float16 node's, computed in float32), or 0 */
static int lowp_round(const struct rt_kctx *k, const struct rt_value *x)
{
	return x->dtype == IR_DTYPE_FLOAT ? rt_lowp_round_out(k) : 0;
}

static void rows_run(void *ctx, int64_t b, int64_t e)
{
	const struct rows *r = ctx;

	for (int64_t o = b; o < e; o++) {
		nq_norm_row(r->x + o * r->inner, r->y + o * r->inner, r->inner,
			    r->scale, r->bias, r->eps, r->rms,
			    r->mean ? r->mean + o : NULL, r->inv ? r->inv + o : NULL);
		if (r->round)
			rt_float_round_n(r->y + o * r->inner, r->inner, r->round);
	}
}

__attribute__((target_clones("avx512f", "avx2", "default")))
static void row_scale(const float *x, float *y, int64_t n, double mean, float inv,
		      const float *scale, const float *bias)
{
	if (scale && bias)
		for (int64_t i = 0; i < n; i++)
			y[i] = (float)(x[i] - mean) * inv * scale[i] + bias[i];
	else if (scale)
		for (int64_t i = 0; i < n; i++)
			y[i] = (float)(x[i] - mean) * inv * scale[i];
	else if (bias)
		for (int64_t i = 0; i < n; i++)
			y[i] = (float)(x[i] - mean) * inv + bias[i];
	else
		for (int64_t i = 0; i < n; i++)
			y[i] = (float)(x[i] - mean) * inv;
}

/* row_scale's normalized value times s plus sh, one channel's in one
 * pass: the same operations in the same order as normalizing the row and
 * then scaling it (no contraction under -std=c11), the same bits */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void row_affine(const float *x, float *y, int64_t n, double mean, float inv, float s,
		       float sh)
{
	for (int64_t i = 0; i < n; i++) {
		float t = (float)(x[i] - mean) * inv;

		y[i] = t * s + sh;
	}
}

/* The row's mean (0 when rms) and 1 / sqrt(var + eps), in double sums */
static void norm_stats(const float *x, int64_t n, float eps, int rms, double *mean, float *inv)
{
	double sq;

	*mean = !rms && n ? rt_sum_f32(x, n, 0, 0) / (double)n : 0;
	sq = rt_sum_f32(x, n, *mean, 1);
	*inv = (float)(1.0 / sqrt((n ? sq / (double)n : 0) + eps));
}

void nq_norm_row(const float *x, float *y, int64_t n, const float *scale,
		 const float *bias, float eps, int rms, float *mean_out,
		 float *inv_out)
{
	double mean;
	float inv;

	norm_stats(x, n, eps, rms, &mean, &inv);
	row_scale(x, y, n, mean, inv, scale, bias);
	if (mean_out)
		*mean_out = (float)mean;
	if (inv_out)
		*inv_out = inv;
}

/* Stats output i (dims of X up to axis, then 1s), or NULL if unwanted. */
static int stats_out(struct rt_kctx *k, size_t i, int dtype, const struct rt_value *x,
		     int axis, struct rt_value **out)
{
	int64_t dims[RT_MAX_RANK];

	*out = NULL;
	if (!rt_out_wanted(k, i))
		return 0;
	for (int j = 0; j < x->rank; j++)
		dims[j] = j < axis ? x->dims[j] : 1;
	if (!(*out = rt_out_tensor(k, i, dtype, x->rank, dims)))
		return IR_ENOMEM;
	return 0;
}

/* Y = normalize(X over axes [axis, rank)) * scale (+ bias).  in_b: index of
 * the bias input or -1; ydtype: Y's dtype; stat_dtype: Mean/InvStdDev's;
 * out_mean/out_inv: output indices or -1. */
int nq_layer_norm(struct rt_kctx *k, struct rt_value *x, int64_t axis_attr,
		  struct rt_value *scale, struct rt_value *bias, float eps, int rms,
		  int ydtype, int stat_dtype, int out_mean, int out_inv)
{
	struct rt_value *y, *m = NULL, *iv = NULL;
	struct rows r = { .eps = eps, .rms = rms };
	float *xf = NULL, *sf = NULL, *bf = NULL, *yf = NULL, *mf = NULL, *ivf = NULL;
	int owned = 0, axis, rc;
	int64_t outer;

	if ((rc = nq_check_float(k, x, 0)) < 0 || (rc = rt_axis(k, axis_attr, x->rank, &axis)) < 0)
		return rc;
	outer = rt_numel(axis, x->dims);
	r.inner = rt_numel(x->rank - axis, x->dims + axis);
	if (!(y = rt_out_tensor(k, 0, ydtype, x->rank, x->dims)))
		return IR_ENOMEM;
	if (out_mean >= 0 && (rc = stats_out(k, (size_t)out_mean, stat_dtype, x, axis, &m)) < 0)
		return rc;
	if (out_inv >= 0 && (rc = stats_out(k, (size_t)out_inv, stat_dtype, x, axis, &iv)) < 0)
		return rc;
	rc = IR_ENOMEM;
	if (!(xf = nq_f32(k, x, &owned)) ||
	    !(sf = nq_expand(k, scale, 1, x->rank - axis, x->dims + axis)) ||
	    (bias && !(bf = nq_expand(k, bias, 2, x->rank - axis, x->dims + axis))) ||
	    !(yf = nq_out_buf(k, y)) || (m && !(mf = nq_out_buf(k, m))) ||
	    (iv && !(ivf = nq_out_buf(k, iv))))
		goto cleanup;
	r.x = xf;
	r.scale = sf;
	r.bias = bf;
	r.y = yf;
	r.mean = mf;
	r.inv = ivf;
	/* a float16 node's result rounded as written */
	r.round = ydtype == IR_DTYPE_FLOAT ? lowp_round(k, x) : 0;
	rt_parallel_for(k, outer, 1 + 4096 / (r.inner + 1), rows_run, &r);
	k->lowp_done = r.round != 0;
	rc = 0;
cleanup:
	nq_out_done(y, yf);
	if (m)
		nq_out_done(m, mf);
	if (iv)
		nq_out_done(iv, ivf);
	nq_f32_release(xf, owned);
	free(sf);
	free(bf);
	return rc;
}

static int stash_dtype(struct rt_kctx *k)
{
	int64_t s = rt_attr_int(k, "stash_type", 1);

	return s == IR_DTYPE_FLOAT || s == IR_DTYPE_DOUBLE || s == IR_DTYPE_FLOAT16 ||
	       s == IR_DTYPE_BFLOAT16 ? (int)s : IR_DTYPE_FLOAT;
}

static int k_layer_norm(struct rt_kctx *k)
{
	struct rt_value *x, *s;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &s)) < 0)
		return rc;
	return nq_layer_norm(k, x, rt_attr_int(k, "axis", -1), s, rt_in(k, 2),
			     rt_attr_float(k, "epsilon", 1e-5f), 0, x->dtype,
			     stash_dtype(k), 1, 2);
}

static int k_rms_norm(struct rt_kctx *k)
{
	struct rt_value *x, *s;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &s)) < 0)
		return rc;
	return nq_layer_norm(k, x, rt_attr_int(k, "axis", -1), s, NULL,
			     rt_attr_float(k, "epsilon", 1e-5f), 1, s->dtype,
			     IR_DTYPE_FLOAT, -1, -1);
}

/* ---- per-channel normalizations -------------------------------------- */

/* One per-channel parameter input of a channel count c (or, when
 * per_elem allows, c * spatial elements) as float32. */
static float *channel_param(struct rt_kctx *k, size_t i, int64_t c, int64_t per_elem,
			    int *owned)
{
	struct rt_value *t;

	if (rt_in_tensor(k, i, &t) < 0)
		return NULL;
	if (t->numel != c && (per_elem <= 0 || t->numel != per_elem)) {
		rt_err(k, "input %zu has %lld elements, expected %lld", i,
		       (long long)t->numel, (long long)c);
		return NULL;
	}
	return nq_f32(k, t, owned);
}

/* y = x * mul + add over rows (n, c) of sp elements; mul/add hold one
 * value per channel (np == 1) or per element of a channel (np == sp). */
struct affine {
	const float *x;
	float *y;
	const float *mul, *add;
	int64_t c, sp, np;
};

static void affine_run(void *ctx, int64_t b, int64_t e)
{
	const struct affine *a = ctx;

	for (int64_t r = b; r < e; r++) {
		const float *x = a->x + r * a->sp, *m = a->mul + (r % a->c) * a->np;
		const float *ad = a->add + (r % a->c) * a->np;
		float *y = a->y + r * a->sp;

		if (a->np == 1)
			for (int64_t j = 0; j < a->sp; j++)
				y[j] = x[j] * m[0] + ad[0];
		else
			for (int64_t j = 0; j < a->sp; j++)
				y[j] = x[j] * m[j] + ad[j];
	}
}

/* The same of x stored channels last (layout_cl.c): rows [b, e) of the
 * (n, spatial) positions, c channels each, one mul and add a channel;
 * each element's operations those of affine_run (and of a chain's step,
 * chain.c). */
static void affine_cl_run(void *ctx, int64_t b, int64_t e)
{
	const struct affine *a = ctx;

	for (int64_t r = b; r < e; r++) {
		const float *x = a->x + r * a->c;
		float *y = a->y + r * a->c;

		for (int64_t ch = 0; ch < a->c; ch++)
			y[ch] = x[ch] * a->mul[ch] + a->add[ch];
	}
}

static int k_batch_norm(struct rt_kctx *k)
{
	struct rt_value *x, *y, *o[4] = { 0 };
	float *p[4] = { 0 }, *xf = NULL, *yf = NULL;
	int own[4] = { 0 }, xown = 0, rc;
	float eps = rt_attr_float(k, "epsilon", 1e-5f);
	float mom = rt_attr_float(k, "momentum", 0.9f);
	int64_t n, c, sp, per_elem;
	double *bm = NULL, *bv = NULL;
	float *mul = NULL, *add = NULL;
	int64_t np_;
	int training;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = nq_check_float(k, x, 0)) < 0)
		return rc;
	if (x->rank < 1)
		return rt_err(k, "input 0 must have rank >= 1");
	n = x->dims[0];
	c = x->rank > 1 ? x->dims[1] : 1;
	sp = x->rank > 2 ? rt_numel(x->rank - 2, x->dims + 2) : 1;
	per_elem = k->version < 9 ? c * sp : -1;
	if (k->version >= 14)
		training = rt_attr_int(k, "training_mode", 0) != 0;
	else
		training = !rt_attr_int(k, "is_test", 0) && k->n_out > 1 &&
			   (rt_out_wanted(k, 1) || rt_out_wanted(k, 2) ||
			    rt_out_wanted(k, 3) || rt_out_wanted(k, 4));
	/* stored channels last: computed so in inference with one value a
	 * channel, else on a plain copy */
	if (x->flags & RT_VALUE_CL) {
		int cl = !training && x->rank >= 3;

		for (size_t i = 1; cl && i < 5; i++)
			cl = i < k->n_in && k->in[i] && k->in[i]->numel == c;
		if (!cl && (rc = rt_cl_plain_in(k, 0)) < 0)
			return rc;
		x = k->in[0];
	}
	rc = IR_ENOMEM;
	for (size_t i = 0; i < 4; i++)
		if (!(p[i] = channel_param(k, i + 1, c, training ? -1 : per_elem, &own[i])))
			goto cleanup;
	/* in place when x dies here: the affine pass reads each element
	 * before writing it (and training's statistics are taken first) */
	if (!(y = rt_out_tensor_reuse(k, 0, 1u, x->dtype, x->rank, x->dims)) ||
	    !(xf = nq_f32(k, x, &xown)) || !(yf = nq_out_buf(k, y)))
		goto cleanup;
	if (training) {
		if (!(bm = calloc((size_t)c + 1, sizeof(double))) ||
		    !(bv = calloc((size_t)c + 1, sizeof(double)))) {
			rc = rt_oom(k);
			goto cleanup;
		}
		for (int64_t ch = 0; ch < c; ch++) {
			double s = 0, q = 0, cnt = (double)(n * sp);

			for (int64_t b = 0; b < n; b++)
				for (int64_t j = 0; j < sp; j++)
					s += xf[(b * c + ch) * sp + j];
			bm[ch] = cnt > 0 ? s / cnt : 0;
			for (int64_t b = 0; b < n; b++)
				for (int64_t j = 0; j < sp; j++) {
					double d = xf[(b * c + ch) * sp + j] - bm[ch];

					q += d * d;
				}
			bv[ch] = cnt > 0 ? q / cnt : 0;
		}
	}
	/* y = x * mul + add, per channel (or per element: spatial=0 before 9) */
	np_ = 1;
	for (size_t i = 0; i < 4; i++)
		if (k->in[i + 1]->numel != c)
			np_ = sp;
	if (!(mul = malloc((size_t)(c * np_ + 1) * sizeof(float))) ||
	    !(add = malloc((size_t)(c * np_ + 1) * sizeof(float)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (int64_t ch = 0; ch < c; ch++)
		for (int64_t j = 0; j < np_; j++) {
			int64_t q[4];

			for (size_t i = 0; i < 4; i++)
				q[i] = k->in[i + 1]->numel == c ? ch : ch * sp + j;
			rt_bn_coeff(p[0][q[0]], p[1][q[1]], training ? bm[ch] : p[2][q[2]],
				    training ? bv[ch] : p[3][q[3]], eps, &mul[ch * np_ + j],
				    &add[ch * np_ + j]);
		}
	{
		struct affine af = { xf, yf, mul, add, c, sp, np_ };

		if (x->flags & RT_VALUE_CL) {
			rt_parallel_for(k, n * sp, 1 + 16384 / (c + 1), affine_cl_run, &af);
			rt_cl_set(y, 1);
		} else {
			rt_parallel_for(k, n * c, 1 + 16384 / (sp + 1), affine_run, &af);
		}
	}
	if (training) {
		/* outputs 1, 2: running mean and variance; 3, 4 (before 14):
		 * the batch's mean and variance */
		for (size_t i = 0; i < 4; i++) {
			if (!rt_out_wanted(k, i + 1))
				continue;
			if (!(o[i] = rt_out_tensor(k, i + 1, x->dtype, 1, &c)))
				goto cleanup;
			for (int64_t ch = 0; ch < c; ch++) {
				double v = i == 0 ? p[2][ch] * mom + bm[ch] * (1 - mom) :
					   i == 1 ? p[3][ch] * mom + bv[ch] * (1 - mom) :
					   i == 2 ? bm[ch] : bv[ch];

				rt_store_f64(o[i]->dtype, o[i]->data, ch, v);
			}
		}
	} else {
		/* inference: statistics outputs of old versions pass through */
		for (size_t i = 0; i < 2; i++)
			if (rt_out_wanted(k, i + 1) &&
			    (rc = rt_out_set(k, i + 1, rt_value_ref(k->in[i + 3]))) < 0)
				goto cleanup;
	}
	rc = 0;
cleanup:
	if (yf)
		nq_out_done(y, yf);
	nq_f32_release(xf, xown);
	for (size_t i = 0; i < 4; i++)
		nq_f32_release(p[i], own[i]);
	free(bm);
	free(bv);
	free(mul);
	free(add);
	return rc;
}

/* Rows of `per` channels of sp elements (one group; g groups a sample)
 * normalized, then scaled and shifted per channel (per_channel) or per
 * group: GroupNormalization, and InstanceNormalization as g = C. */
struct groups {
	const float *x;
	float *y;
	const float *scale, *bias;
	int64_t g, per, sp;
	int per_channel;
	float eps;
	int round;   /* y rounded so as written (rt_lowp_round_out) */
};

static void groups_run(void *ctx, int64_t b, int64_t e)
{
	const struct groups *gr = ctx;
	int64_t len = gr->per * gr->sp;

	for (int64_t i = b; i < e; i++) {
		int64_t gi = i % gr->g;
		const float *x = gr->x + i * len;
		float *y = gr->y + i * len, inv;
		double mean;

		norm_stats(x, len, gr->eps, 0, &mean, &inv);
		for (int64_t ch = 0; ch < gr->per; ch++) {
			int64_t pi = gr->per_channel ? gi * gr->per + ch : gi;

			row_affine(x + ch * gr->sp, y + ch * gr->sp, gr->sp, mean, inv,
				   gr->scale[pi], gr->bias[pi]);
			if (gr->round)
				rt_float_round_n(y + ch * gr->sp, gr->sp, gr->round);
		}
	}
}

static int k_instance_norm(struct rt_kctx *k)
{
	struct rt_value *x, *y;
	float *xf = NULL, *yf = NULL, *sc = NULL, *bi = NULL;
	int xo = 0, so = 0, bo = 0, rc;
	float eps = rt_attr_float(k, "epsilon", 1e-5f);
	int64_t c, sp, nc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = nq_check_float(k, x, 0)) < 0)
		return rc;
	if (x->rank < 2)
		return rt_err(k, "input 0 must have rank >= 2");
	c = x->dims[1];
	sp = rt_numel(x->rank - 2, x->dims + 2);
	nc = x->dims[0] * c;
	rc = IR_ENOMEM;
	if (!(sc = channel_param(k, 1, c, -1, &so)) || !(bi = channel_param(k, 2, c, -1, &bo)) ||
	    !(y = rt_out_tensor(k, 0, x->dtype, x->rank, x->dims)) ||
	    !(xf = nq_f32(k, x, &xo)) || !(yf = nq_out_buf(k, y)))
		goto cleanup;
	{
		struct groups gr = { xf, yf, sc, bi, c, 1, sp, 1, eps, lowp_round(k, x) };

		rt_parallel_for(k, nc, 1 + 16384 / (sp + 1), groups_run, &gr);
		k->lowp_done = gr.round != 0;
	}
	rc = 0;
cleanup:
	if (yf)
		nq_out_done(y, yf);
	nq_f32_release(xf, xo);
	nq_f32_release(sc, so);
	nq_f32_release(bi, bo);
	return rc;
}

/* 18: scale and bias per group; 21: per channel. */
static int k_group_norm(struct rt_kctx *k)
{
	struct rt_value *x, *y;
	float *xf = NULL, *yf = NULL, *sc = NULL, *bi = NULL;
	int xo = 0, so = 0, bo = 0, rc;
	float eps = rt_attr_float(k, "epsilon", 1e-5f);
	int64_t g = rt_attr_int(k, "num_groups", 0), c, sp, per, np;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = nq_check_float(k, x, 0)) < 0)
		return rc;
	if (x->rank < 2)
		return rt_err(k, "input 0 must have rank >= 2");
	c = x->dims[1];
	if (g <= 0 || c % g)
		return rt_err(k, "num_groups %lld does not divide the %lld channels",
			      (long long)g, (long long)c);
	sp = rt_numel(x->rank - 2, x->dims + 2);
	per = c / g;
	np = k->version >= 21 ? c : g;
	rc = IR_ENOMEM;
	if (!(sc = channel_param(k, 1, np, -1, &so)) || !(bi = channel_param(k, 2, np, -1, &bo)) ||
	    !(y = rt_out_tensor(k, 0, x->dtype, x->rank, x->dims)) ||
	    !(xf = nq_f32(k, x, &xo)) || !(yf = nq_out_buf(k, y)))
		goto cleanup;
	{
		struct groups gr = { xf, yf, sc, bi, g, per, sp, np == c, eps, lowp_round(k, x) };

		rt_parallel_for(k, x->dims[0] * g, 1 + 16384 / (per * sp + 1), groups_run, &gr);
		k->lowp_done = gr.round != 0;
	}
	rc = 0;
cleanup:
	if (yf)
		nq_out_done(y, yf);
	nq_f32_release(xf, xo);
	nq_f32_release(sc, so);
	nq_f32_release(bi, bo);
	return rc;
}

struct lrn_job {
	const float *x;
	float *y;
	int64_t c, sp, lo, hi;
	double bias, scale, beta;    /* scale: alpha / size */
	int failed;
};

/* Planes [p0, p1) of (batch, channel): the window's sum of squares for a
 * whole plane in one vectorized pass per neighbouring channel, then
 * x / (bias + scale * sum)^beta, with the usual betas (0.75, 0.5, 1) by
 * square roots and division instead of a pow() call per element. */
static void lrn_planes(void *ctx, int64_t p0, int64_t p1)
{
	struct lrn_job *jb = ctx;
	int64_t sp = jb->sp;
	double *sq = malloc((size_t)(sp + 1) * sizeof(double));

	if (!sq) {
		jb->failed = 1;
		return;
	}
	for (int64_t p = p0; p < p1; p++) {
		int64_t b = p / jb->c, ch = p % jb->c;
		const float *xp = jb->x + p * sp;
		float *yp = jb->y + p * sp;

		for (int64_t j = 0; j < sp; j++)
			sq[j] = 0;
		for (int64_t q = ch - jb->lo; q <= ch + jb->hi; q++) {
			const float *xq = jb->x + (b * jb->c + q) * sp;

			if (q < 0 || q >= jb->c)
				continue;
			for (int64_t j = 0; j < sp; j++)
				sq[j] += (double)xq[j] * xq[j];
		}
		if (jb->beta == 0.75)
			for (int64_t j = 0; j < sp; j++) {
				double v = jb->bias + jb->scale * sq[j], r = sqrt(v);

				yp[j] = (float)(xp[j] / (r * sqrt(r)));
			}
		else if (jb->beta == 0.5)
			for (int64_t j = 0; j < sp; j++)
				yp[j] = (float)(xp[j] / sqrt(jb->bias + jb->scale * sq[j]));
		else if (jb->beta == 1)
			for (int64_t j = 0; j < sp; j++)
				yp[j] = (float)(xp[j] / (jb->bias + jb->scale * sq[j]));
		else
			for (int64_t j = 0; j < sp; j++)
				yp[j] = (float)(xp[j] / pow(jb->bias + jb->scale * sq[j], jb->beta));
	}
	free(sq);
}

static int k_lrn(struct rt_kctx *k)
{
	struct rt_value *x, *y;
	float *xf = NULL, *yf = NULL;
	int xo = 0, rc;
	float alpha = rt_attr_float(k, "alpha", 1e-4f), beta = rt_attr_float(k, "beta", 0.75f);
	float bias = rt_attr_float(k, "bias", 1.0f);
	int64_t size = rt_attr_int(k, "size", 0);
	struct lrn_job jb;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = nq_check_float(k, x, 0)) < 0)
		return rc;
	if (x->rank < 2 || size <= 0)
		return rt_err(k, "needs rank >= 2 and size >= 1");
	rc = IR_ENOMEM;
	if (!(y = rt_out_tensor(k, 0, x->dtype, x->rank, x->dims)) ||
	    !(xf = nq_f32(k, x, &xo)) || !(yf = nq_out_buf(k, y)))
		goto cleanup;
	jb = (struct lrn_job){ xf, yf, x->dims[1], rt_numel(x->rank - 2, x->dims + 2),
			       (size - 1) / 2, size / 2 /* ceil((size - 1) / 2) */,
			       bias, alpha / (double)size, beta, 0 };
	rt_parallel_for(k, x->dims[0] * jb.c, 1 + 16384 / (jb.sp + 1), lrn_planes, &jb);
	rc = jb.failed ? rt_oom(k) : 0;
cleanup:
	if (yf)
		nq_out_done(y, yf);
	nq_f32_release(xf, xo);
	return rc;
}

/* Offset into the reduced (keepdims) shape of the element at idx. */
static int64_t reduced_off(int rank, const int64_t *idx, const int64_t *dims,
			   const int *red)
{
	int64_t off = 0;

	for (int j = 0; j < rank; j++)
		off = off * (red[j] ? 1 : dims[j]) + (red[j] ? 0 : idx[j]);
	return off;
}

static int k_mvn(struct rt_kctx *k)
{
	static const int64_t dflt[3] = { 0, 2, 3 };
	struct rt_value *x, *y;
	float *xf = NULL, *yf = NULL;
	double *sum = NULL, *sq = NULL;
	int xo = 0, rc, red[RT_MAX_RANK] = { 0 };
	size_t na;
	const int64_t *axes = rt_attr_ints(k, "axes", &na);
	int64_t idx[RT_MAX_RANK] = { 0 }, nred = 1, nout = 1;

	if (!axes) {
		axes = dflt;
		na = 3;
	}
	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = nq_check_float(k, x, 0)) < 0)
		return rc;
	for (size_t i = 0; i < na; i++) {
		int a;

		if ((rc = rt_axis(k, axes[i], x->rank, &a)) < 0)
			return rc;
		red[a] = 1;
	}
	for (int j = 0; j < x->rank; j++) {
		if (red[j])
			nred *= x->dims[j];
		else
			nout *= x->dims[j];
	}
	rc = IR_ENOMEM;
	if (!(y = rt_out_tensor(k, 0, x->dtype, x->rank, x->dims)) ||
	    !(xf = nq_f32(k, x, &xo)) || !(yf = nq_out_buf(k, y)))
		goto cleanup;
	if (!(sum = calloc((size_t)nout + 1, sizeof(double))) ||
	    !(sq = calloc((size_t)nout + 1, sizeof(double)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (int pass = 0; pass < 3; pass++) {
		memset(idx, 0, sizeof(idx));
		for (int64_t e = 0; e < x->numel; e++) {
			int64_t o = reduced_off(x->rank, idx, x->dims, red);

			if (pass == 0) {
				sum[o] += xf[e];
			} else if (pass == 1) {
				double d = xf[e] - sum[o] / (double)nred;

				sq[o] += d * d;
			} else {
				yf[e] = (float)((xf[e] - sum[o] / (double)nred) /
						(sqrt(sq[o] / (double)nred) + 1e-9));
			}
			for (int j = x->rank - 1; j >= 0; j--) {
				if (++idx[j] < x->dims[j])
					break;
				idx[j] = 0;
			}
		}
	}
	rc = 0;
cleanup:
	if (yf)
		nq_out_done(y, yf);
	nq_f32_release(xf, xo);
	free(sum);
	free(sq);
	return rc;
}

static int k_lp_norm(struct rt_kctx *k)
{
	struct rt_value *x, *y;
	float *xf = NULL, *yf = NULL;
	int xo = 0, rc, axis;
	int64_t p = rt_attr_int(k, "p", 2), outer, len, inner;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = nq_check_float(k, x, 0)) < 0 ||
	    (rc = rt_axis(k, rt_attr_int(k, "axis", -1), x->rank, &axis)) < 0)
		return rc;
	if (p != 1 && p != 2)
		return rt_err(k, "p must be 1 or 2, not %lld", (long long)p);
	outer = rt_numel(axis, x->dims);
	len = x->dims[axis];
	inner = rt_numel(x->rank - axis - 1, x->dims + axis + 1);
	rc = IR_ENOMEM;
	if (!(y = rt_out_tensor(k, 0, x->dtype, x->rank, x->dims)) ||
	    !(xf = nq_f32(k, x, &xo)) || !(yf = nq_out_buf(k, y)))
		goto cleanup;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			const float *xs = xf + o * len * inner + i;
			float *ys = yf + o * len * inner + i;
			double nrm = 0;

			for (int64_t j = 0; j < len; j++)
				nrm += p == 1 ? fabs(xs[j * inner]) : (double)xs[j * inner] * xs[j * inner];
			if (p == 2)
				nrm = sqrt(nrm);
			for (int64_t j = 0; j < len; j++)
				ys[j * inner] = nrm > 0 ? (float)(xs[j * inner] / nrm) : 0.0f;
		}
	rc = 0;
cleanup:
	if (yf)
		nq_out_done(y, yf);
	nq_f32_release(xf, xo);
	return rc;
}

const struct rt_kernel rt_kernels_norm[] = {
	{ "ai.onnx", "BatchNormalization", 1, RT_OPEN, k_batch_norm },
	{ "ai.onnx", "Dropout", 1, RT_OPEN, nq_dropout },
	{ "ai.onnx", "GroupNormalization", 18, RT_OPEN, k_group_norm },
	{ "ai.onnx", "InstanceNormalization", 1, RT_OPEN, k_instance_norm },
	{ "ai.onnx", "LRN", 1, RT_OPEN, k_lrn },
	{ "ai.onnx", "LayerNormalization", 17, RT_OPEN, k_layer_norm },
	{ "ai.onnx", "LpNormalization", 1, RT_OPEN, k_lp_norm },
	{ "ai.onnx", "MeanVarianceNormalization", 9, RT_OPEN, k_mvn },
	{ "ai.onnx", "RMSNormalization", 23, RT_OPEN, k_rms_norm },
	{ "com.microsoft", "LayerNormalization", 1, RT_OPEN, k_layer_norm },
};
const size_t rt_n_kernels_norm = sizeof(rt_kernels_norm) / sizeof(rt_kernels_norm[0]);
