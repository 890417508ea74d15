/* k_qlinear.c: kernels of the qlinear family: MatMulInteger, ConvInteger,
 * QLinearMatMul and QLinearConv.  Zero points are subtracted in double.
 * The sums of products are exact integers either way: on the float32
 * cores (knn_mm_f32, knn_conv_run_f32) when no partial
 * sum can reach 2^24 -- the largest |a| times the largest row sum of |b|
 * stays below it, whatever the order of the additions -- and the
 * operands whose packed copies a core may keep are constant; else on the
 * double cores (8-bit products summed stay far below 2^53).
 * Requantization multiplies the accumulator, as a float32, by the float32
 * scale ratio, rounds half to even, adds the zero point and saturates
 * (onnxruntime's order). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_conv_int.h"

static int is_q8(int dtype)
{
	return dtype == IR_DTYPE_INT8 || dtype == IR_DTYPE_UINT8;
}

static int is_f8(int dtype)
{
	return dtype == IR_DTYPE_FLOAT8E4M3FN || dtype == IR_DTYPE_FLOAT8E4M3FNUZ ||
	       dtype == IR_DTYPE_FLOAT8E5M2 || dtype == IR_DTYPE_FLOAT8E5M2FNUZ;
}

/* Optional input i as doubles (NULL, *n = 0 when absent); the dtype must
 * be `dtype` when given (0: any). */
static int opt_f64(struct rt_kctx *k, size_t i, int dtype, const char *what,
		   double **out, int64_t *n)
{
	struct rt_value *v = rt_in(k, i);

	*out = NULL;
	*n = 0;
	if (!v)
		return 0;
	if (v->kind != RT_TENSOR)
		return rt_err(k, "%s is not a tensor", what);
	if (dtype && v->dtype != dtype)
		return rt_err(k, "%s has dtype %d, expected %d", what, v->dtype, dtype);
	if (v->numel < 1)
		return rt_err(k, "%s is empty", what);
	if (!(*out = knn_load_f64(k, v)))
		return IR_ENOMEM;
	*n = v->numel;
	return 0;
}

/* a - zp per row (zp of 1 or of rows elements, cycling), in place. */
static void sub_rows(double *a, int64_t numel, int64_t row_len,
		     const double *zp, int64_t n_zp)
{
	if (!zp)
		return;
	for (int64_t i = 0; i < numel; i++)
		a[i] -= zp[n_zp == 1 ? 0 : (i / row_len) % n_zp];
}

/* b - zp per column of kd x n matrices (zp of 1, n, or batch * n). */
static void sub_cols(double *b, int64_t numel, int64_t kd, int64_t n,
		     const double *zp, int64_t n_zp)
{
	if (!zp)
		return;
	for (int64_t i = 0; i < numel; i++)
		b[i] -= zp[n_zp == 1 ? 0 :
			   ((i / (kd * n)) * n + i % n) % n_zp];
}

#define F32_EXACT 16777216.0   /* 2^24: integers below are float32 exact */

static double max_abs(const double *v, int64_t n)
{
	double m = 0;

	for (int64_t i = 0; i < n; i++)
		m = fabs(v[i]) > m ? fabs(v[i]) : m;
	return m;
}

/* The largest sum of |b[i * n + j]| over i < kd, over the columns j. */
static double max_col_sum(const double *b, int64_t kd, int64_t n)
{
	double best = 0;

	for (int64_t j = 0; j < n; j++) {
		double t = 0;

		for (int64_t i = 0; i < kd; i++)
			t += fabs(b[i * n + j]);
		best = t > best ? t : best;
	}
	return best;
}

/* Is the optional input i absent or constant? */
static int const_or_absent(struct rt_kctx *k, size_t i)
{
	return !rt_in(k, i) || rt_in_const(k, i);
}

/* n doubles into a new float32 array (NULL: out of memory). */
static float *to_f32(const double *v, int64_t n)
{
	float *f = malloc((size_t)(n ? n : 1) * sizeof(*f));

	for (int64_t i = 0; f && i < n; i++)
		f[i] = (float)v[i];
	return f;
}

/* y = a @ b on the float32 core: exact (the caller bounds the sums). */
static int mm_exact_f32(struct rt_kctx *k, const struct knn_mm *p, const double *a,
			int64_t na, const double *b, int64_t nb, double *y)
{
	int64_t ny = p->n_batch * p->m * p->n;
	float *af = to_f32(a, na), *bf = to_f32(b, nb), *yf = malloc((size_t)(ny + 1) * sizeof(*yf));
	int rc = 0;

	if (af && bf && yf) {
		knn_mm_f32(k, p, af, bf, yf);
		for (int64_t i = 0; i < ny; i++)
			y[i] = yf[i];
	} else {
		rc = rt_oom(k);
	}
	free(af);
	free(bf);
	free(yf);
	return rc;
}

/* int32 sums of oneDNN's integer primitives: into output 0 (a tensor of
 * dims) when to_out, else into a buffer of as many elements (freed with
 * rt_big_free); NULL when memory ran out (reported). */
static int32_t *i32_out(struct rt_kctx *k, int to_out, int rank, const int64_t *dims)
{
	struct rt_value *y;
	int64_t n = 1;
	int32_t *buf;

	if (to_out)
		return (y = rt_out_tensor(k, 0, IR_DTYPE_INT32, rank, dims)) ? y->data : NULL;
	for (int i = 0; i < rank; i++)
		n *= dims[i];
	if (!(buf = rt_big_alloc((size_t)(n + 1) * sizeof(int32_t))))
		rt_oom(k);
	return buf;
}

/* After a primitive's call (rc) on buf from i32_out: *yi = buf when it
 * ran (1), else the buffer given back (not an output); rc. */
static int i32_done(int rc, int to_out, int32_t *buf, int32_t **yi)
{
	if (rc == 1)
		*yi = buf;
	else if (!to_out)
		rt_big_free(buf);
	return rc;
}

/* The products' int32 sums on oneDNN (knn_mm_dnnl_s32) into *yi:
 * MatMulInteger's output tensor itself when to_out, else a buffer the
 * caller frees with rt_big_free; 1 done, 0 not taken, or an error. */
static int mm_dnnl(struct rt_kctx *k, const struct knn_mm *p, const struct rt_value *a,
		   const struct rt_value *b, int b_const, const double *az, int64_t naz,
		   const double *bz, int64_t nbz, int to_out, int32_t **yi)
{
	int32_t *buf;

	if (!(buf = i32_out(k, to_out, p->rank, p->dims)))
		return IR_ENOMEM;
	return i32_done(knn_mm_dnnl_s32(k, a, b, az, naz, bz, nbz, b_const, buf), to_out, buf,
			yi);
}

/* Shared MatMul body: y (doubles) = (a - azp)(b - bzp); or, when yi is
 * given and oneDNN takes it, the int32 sums in *yi (*yd NULL):
 * MatMulInteger's output tensor itself when to_out. */
static int int_matmul(struct rt_kctx *k, size_t ia, size_t iazp, size_t ib,
		      size_t ibzp, struct knn_mm *p, double **yd, int32_t **yi, int to_out)
{
	struct rt_value *a, *b;
	double *ad = NULL, *bd = NULL, *az = NULL, *bz = NULL;
	int64_t naz, nbz;
	int rc;

	*yd = NULL;
	if ((rc = rt_in_tensor(k, ia, &a)) < 0 || (rc = rt_in_tensor(k, ib, &b)) < 0)
		return rc;
	if ((!is_q8(a->dtype) && !is_f8(a->dtype)) ||
	    (!is_q8(b->dtype) && !is_f8(b->dtype)))
		return rt_err(k, "A and B must be 8-bit (dtypes %d, %d)", a->dtype,
			      b->dtype);
	if ((rc = knn_mm_init(k, a, b, p)) < 0)
		return rc;
	if ((rc = opt_f64(k, iazp, a->dtype, "A's zero point", &az, &naz)) < 0 ||
	    (rc = opt_f64(k, ibzp, b->dtype, "B's zero point", &bz, &nbz)) < 0)
		goto cleanup;
	if (yi && p->kd && (rc = mm_dnnl(k, p, a, b, rt_in_const(k, ib) && const_or_absent(k, ibzp),
					 az, naz, bz, nbz, to_out, yi)) != 0) {
		rc = rc < 0 ? rc : 0;
		goto cleanup;
	}
	rc = IR_ENOMEM;
	if (!(ad = knn_load_f64(k, a)) || !(bd = knn_load_f64(k, b)))
		goto cleanup;
	if (!(*yd = malloc((size_t)(p->n_batch * p->m * p->n + 1) * sizeof(double)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	sub_rows(ad, a->numel, p->kd, az, naz);
	sub_cols(bd, b->numel, p->kd, p->n, bz, nbz);
	rc = 0;
	if (p->kd == 0)
		memset(*yd, 0, (size_t)(p->n_batch * p->m * p->n) * sizeof(double));
	else if (max_abs(ad, a->numel) * (b->numel == p->kd * p->n ?
					   max_col_sum(bd, p->kd, p->n) :
					   (double)p->kd * max_abs(bd, b->numel)) < F32_EXACT)
		rc = mm_exact_f32(k, p, ad, a->numel, bd, b->numel, *yd);
	else
		knn_mm_f64(k, p, ad, bd, *yd);
cleanup:
	if (rc < 0)
		knn_mm_release(p);
	free(ad);
	free(bd);
	free(az);
	free(bz);
	return rc;
}

static int k_matmul_integer(struct rt_kctx *k)
{
	struct knn_mm p;
	struct rt_value *y;
	double *yd;
	int rc;

	int32_t *yi = NULL;

	if ((rc = int_matmul(k, 0, 2, 1, 3, &p, &yd, &yi, 1)) < 0)
		return rc;
	if (yi) {   /* written into the output by oneDNN */
		knn_mm_release(&p);
		return 0;
	}
	if ((y = rt_out_tensor(k, 0, IR_DTYPE_INT32, p.rank, p.dims)))
		for (int64_t i = 0; i < y->numel; i++)
			((int32_t *)y->data)[i] = (int32_t)(int64_t)yd[i];
	else
		rc = IR_ENOMEM;
	knn_mm_release(&p);
	free(yd);
	return rc;
}

/* A scale input: opt_f64's, but required. */
static int scale_in(struct rt_kctx *k, size_t i, const char *what, double **v, int64_t *n)
{
	return rt_in(k, i) ? opt_f64(k, i, 0, what, v, n) : rt_err(k, "%s is missing", what);
}

/* QLinearMatMul's scales and output zero point, read once: by
 * qmm_blocks when it gets that far, else by the general path after the
 * products (so errors come in the same order either way). */
struct qmm_scales {
	double *as, *bs, *ys, *yzp;
	int64_t nas, nbs, nys, nyz;
	int read;
};

static int qmm_scales_read(struct rt_kctx *k, struct qmm_scales *q)
{
	int rc = 0;

	if (!q->read && ((rc = scale_in(k, 1, "a_scale", &q->as, &q->nas)) < 0 ||
			 (rc = scale_in(k, 4, "b_scale", &q->bs, &q->nbs)) < 0 ||
			 (rc = scale_in(k, 6, "y_scale", &q->ys, &q->nys)) < 0 ||
			 (rc = opt_f64(k, 7, 0, "y_zero_point", &q->yzp, &q->nyz)) < 0))
		return rc;
	q->read = 1;
	return 0;
}

/* The float32 multipliers a_scale * b_scale[c] / y_scale, one per
 * b_scale value (a_scale and y_scale per tensor), into a new *mult: 1
 * made, 0 not (one is not finite: knn_store_q's path), or IR_ENOMEM. */
static int qmm_mults(struct rt_kctx *k, const struct qmm_scales *q, float **mult)
{
	if (!(*mult = malloc((size_t)q->nbs * sizeof(**mult))))
		return rt_oom(k);
	for (int64_t c = 0; c < q->nbs; c++)
		if (!isfinite((*mult)[c] = (float)q->as[0] * (float)q->bs[c] / (float)q->ys[0]))
			return 0;
	return 1;
}

/* QLinearMatMul's codes made a block of rows at a time from oneDNN's
 * sums while they are in cache (knn_mm_dnnl_s32_rows), requantized by
 * knn_requant_block; the output made with the first block. */
struct qmm_sink {
	struct rt_kctx *k;
	const struct knn_mm *p;
	const float *mult;
	int64_t nmult;
	float zp;
	int dtype, oom;
	uint8_t *y;
};

static void qmm_rows(void *ctx, int64_t r0, int64_t rows, const int32_t *sums)
{
	struct qmm_sink *s = ctx;
	struct rt_value *y;

	if (!s->y && !s->oom) {
		if ((y = rt_out_tensor(s->k, 0, s->dtype, s->p->rank, s->p->dims)))
			s->y = y->data;
		else
			s->oom = 1;
	}
	if (s->y)
		knn_requant_block(sums, rows, s->p->n, s->mult, s->nmult, s->zp, s->dtype,
				  s->y + r0 * s->p->n);
}

/* k_qlinear_matmul on oneDNN a block of rows at a time: per-tensor A,
 * B per tensor or per column, 8-bit codes out; 1 done, 0 not taken, or
 * an error.  The scales read go into q. */
static int qmm_blocks(struct rt_kctx *k, const struct rt_value *yz, struct qmm_scales *q)
{
	struct rt_value *a, *b;
	struct knn_mm p;
	double *az = NULL, *bz = NULL;
	int64_t naz, nbz;
	float *mult = NULL;
	struct qmm_sink s;
	int rc;

	if (!is_q8(yz->dtype) || !knn_dnnl_int_ok() || rt_in_tensor(k, 0, &a) < 0 ||
	    rt_in_tensor(k, 3, &b) < 0 || !is_q8(a->dtype) || !is_q8(b->dtype) || b->rank != 2)
		return 0;   /* the general path tells what is wrong */
	if ((rc = knn_mm_init(k, a, b, &p)) < 0)
		return rc;
	if ((rc = opt_f64(k, 2, a->dtype, "A's zero point", &az, &naz)) < 0 ||
	    (rc = opt_f64(k, 5, b->dtype, "B's zero point", &bz, &nbz)) < 0 ||
	    (rc = qmm_scales_read(k, q)) < 0)
		goto done;
	if (!p.kd || q->nas != 1 || (q->nbs != 1 && q->nbs != p.n) || q->nys != 1 || q->nyz != 1 ||
	    (rc = qmm_mults(k, q, &mult)) <= 0)
		goto done;
	s = (struct qmm_sink){ k, &p, mult, q->nbs, (float)q->yzp[0], yz->dtype, 0, NULL };
	rc = knn_mm_dnnl_s32_rows(k, a, b, az, naz, bz, nbz,
				  rt_in_const(k, 3) && const_or_absent(k, 5), qmm_rows, &s);
	if (rc == 1 && s.oom)
		rc = IR_ENOMEM;
done:
	knn_mm_release(&p);
	free(mult);
	free(az);
	free(bz);
	return rc;
}

static int k_qlinear_matmul(struct rt_kctx *k)
{
	struct knn_mm p = { 0 };   /* knn_mm_release: safe before knn_mm_init */
	struct rt_value *y, *yz;
	struct qmm_scales q = { 0 };
	double *yd = NULL;
	int32_t *yi = NULL;
	float *mult = NULL;
	int rc;

	if ((rc = rt_in_tensor(k, 7, &yz)) < 0)
		return rc;
	if ((rc = qmm_blocks(k, yz, &q)) != 0 ||
	    (rc = int_matmul(k, 0, 2, 3, 5, &p, &yd, &yi, 0)) < 0 ||
	    (rc = qmm_scales_read(k, &q)) < 0)
		goto cleanup;
	if (!(y = rt_out_tensor(k, 0, yz->dtype, p.rank, p.dims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	if (yi && q.nas == 1 && (q.nbs == 1 || q.nbs == p.n) && is_q8(y->dtype) &&
	    (rc = qmm_mults(k, &q, &mult)) != 0) {
		if (rc > 0)
			knn_requant_block(yi, y->numel / p.n, p.n, mult, q.nbs, (float)q.yzp[0],
					  y->dtype, y->data);
		goto cleanup;
	}
	for (int64_t i = 0; i < y->numel; i++) {
		int64_t c = i % p.n, r = (i / p.n) % p.m, bt = i / (p.m * p.n);
		float sa = (float)q.as[q.nas == 1 ? 0 : (bt * p.m + r) % q.nas];
		float sb = (float)q.bs[q.nbs == 1 ? 0 : (bt * p.n + c) % q.nbs];

		knn_store_q(y->dtype, y->data, i, yd ? yd[i] : (double)yi[i], sa * sb / (float)q.ys[0],
			    q.yzp[0]);
	}
cleanup:
	knn_mm_release(&p);
	free(yd);
	rt_big_free(yi);
	free(mult);
	free(q.as);
	free(q.bs);
	free(q.ys);
	free(q.yzp);
	return rc < 0 ? rc : 0;
}

/* n 8-bit values (int8 or uint8) minus zp into f (float32); returns the
 * largest |value - zp|. */
static double widen_q8(int dtype, const void *v, int64_t n, double zp, float *f)
{
	float z = (float)zp, m = 0;

	if (dtype == IR_DTYPE_INT8)
		for (int64_t i = 0; i < n; i++) {
			f[i] = (float)((const int8_t *)v)[i] - z;
			m = fabsf(f[i]) > m ? fabsf(f[i]) : m;
		}
	else
		for (int64_t i = 0; i < n; i++) {
			f[i] = (float)((const uint8_t *)v)[i] - z;
			m = fabsf(f[i]) > m ? fabsf(f[i]) : m;
		}
	return m;
}

/* y = conv(x - xz, w - wz[m]) + b on the float32 cores,
 * when that is exact: w and its zero point constant (the cores may keep
 * packed copies of the weights) and no partial sum able to reach 2^24.
 * 1 done (*yd the sums as doubles), 0 not taken, or an error. */
static int conv_fast(struct rt_kctx *k, const struct knn_geom *g, const struct rt_value *x,
		     const struct rt_value *w, int w_const, const double *xz,
		     const double *wz, int64_t nwz, const double *b, double **yd)
{
	int64_t kl = w->numel / g->m, ny = g->n * g->m * g->out_size;
	float *xf = NULL, *wf = NULL, *yf = NULL;
	double wsum = 0, xmax;
	int rc = 0;

	if (!w_const || !(wf = malloc((size_t)(w->numel + 1) * sizeof(*wf))) ||
	    !(xf = rt_big_alloc((size_t)(x->numel + 1) * sizeof(*xf))))
		goto done;
	for (int64_t m = 0; m < g->m; m++) {
		const char *wm = (const char *)w->data + m * kl;
		double s = 0;

		widen_q8(w->dtype, wm, kl, wz ? wz[nwz == 1 ? 0 : m] : 0, wf + m * kl);
		for (int64_t i = 0; i < kl; i++)
			s += fabsf(wf[m * kl + i]);
		wsum = s > wsum ? s : wsum;
	}
	xmax = widen_q8(x->dtype, x->data, x->numel, xz ? xz[0] : 0, xf);
	if (xmax * wsum >= F32_EXACT)
		goto done;
	if (!(yf = rt_big_alloc((size_t)(ny + 1) * sizeof(*yf))) ||
	    !(*yd = rt_big_alloc((size_t)(ny + 1) * sizeof(double)))) {
		rc = rt_oom(k);
		goto done;
	}
	if ((rc = knn_conv_run_f32(k, g, xf, wf, NULL, yf)) == 0) {
		for (int64_t pl = 0; pl < g->n * g->m; pl++) {
			const float *src = yf + pl * g->out_size;
			double *dst = *yd + pl * g->out_size, bias = b ? b[pl % g->m] : 0;

			for (int64_t i = 0; i < g->out_size; i++)
				dst[i] = (double)src[i] + bias;
		}
		rc = 1;
	}
done:
	if (rc != 1) {
		rt_big_free(*yd);
		*yd = NULL;
	}
	free(wf);
	rt_big_free(xf);
	rt_big_free(yf);
	return rc;
}

static int conv_out_dims(const struct knn_geom *g, int64_t *dims);

/* The sums conv(x - xz, w - wz[m]) as int32 on oneDNN's integer
 * convolution (exact) into *yi (ConvInteger's output tensor, or a buffer
 * of the caller's to free with rt_big_free): 1 done, 0 not taken. */
static int conv_dnnl(struct rt_kctx *k, const struct knn_geom *g, const struct rt_value *x,
		     const struct rt_value *w, int w_const, const double *xz,
		     const double *wz, int64_t nwz, int to_out, int32_t **yi)
{
	int64_t dims[RT_MAX_RANK];
	int32_t *buf;

	if (!(buf = i32_out(k, to_out, conv_out_dims(g, dims), dims)))
		return IR_ENOMEM;
	return i32_done(knn_conv_dnnl_s32(k, g, x->data, x->dtype, xz ? (int32_t)xz[0] : 0,
					  w->data, w->dtype, wz, nwz, w_const, buf, NULL),
			to_out, buf, yi);
}

/* The unit of ConvInteger and its Cast (knn_conv_integer_f32): its
 * input 4, when given, the scale of the Mul it does too (runtime/qdq.c:
 * one float32 by the graph), in *s (else NULL). */
#define CI_SCALE 4

static int ci_scale(struct rt_kctx *k, const float **s)
{
	const struct rt_value *v = k->n_in > CI_SCALE ? k->in[CI_SCALE] : NULL;

	*s = NULL;
	if (!v)
		return 0;
	if (v->kind != RT_TENSOR || v->dtype != IR_DTYPE_FLOAT || v->numel != 1 || v->rank > 3)
		return rt_err(k, "the Mul's scale is not one float32");
	*s = v->data;
	return 0;
}

/* MatMulInteger's unit: its scale, one float32 (*s) or one per column of
 * its cols columns (*sv, a vector of cols). */
static int ci_scale_cols(struct rt_kctx *k, int64_t cols, const float **s, const float **sv)
{
	const struct rt_value *v = k->n_in > CI_SCALE ? k->in[CI_SCALE] : NULL;

	*sv = NULL;
	if (v && v->kind == RT_TENSOR && v->dtype == IR_DTYPE_FLOAT && v->rank == 1 &&
	    v->numel == cols && cols > 1) {
		*s = NULL;
		*sv = v->data;
		return 0;
	}
	return ci_scale(k, s);
}

/* ConvInteger's sums as float32 (the unit of ConvInteger and its Cast,
 * knn_conv_integer_f32), times the scale and with the Mul's epilogue
 * when the unit does those, into output 0 on oneDNN, from its
 * channels-last sums where it writes so: 1 done, 0 not taken, or an
 * error. */
static int fconv_dnnl(struct rt_kctx *k, const struct knn_geom *g, const struct rt_value *x,
		      const struct rt_value *w, int w_const, const double *xz,
		      const double *wz, int64_t nwz)
{
	int64_t dims[RT_MAX_RANK];
	struct rt_value *y;
	struct knn_dnnl_q8 q;
	const float *s;
	int rc;

	if (!knn_dnnl_int_ok())
		return 0;
	if ((rc = ci_scale(k, &s)) < 0)
		return rc;
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_FLOAT, conv_out_dims(g, dims), dims)))
		return IR_ENOMEM;
	/* (taken, the steps are this call's or the fallback's to do) */
	q = (struct knn_dnnl_q8){ s, NULL, 0, IR_DTYPE_FLOAT, y->data, 0,
				  rt_kctx_epilogue(k, y, 1), 0 };
	return knn_conv_dnnl_s32(k, g, x->data, x->dtype, xz ? (int32_t)xz[0] : 0, w->data,
				 w->dtype, wz, nwz, w_const, NULL, &q);
}

/* A DequantizeLinear Conv unit's scale per output channel (runtime/qdq.c,
 * knn_dq_conv_f32): float32 x_scale (input 1, one value) times w_scale[o]
 * (input 4, 1 or m values), its bias's scale bit for bit (qdq.c checks
 * the bias's); malloc'd into *mult (free it). */
static int dq_mults(struct rt_kctx *k, int64_t m, float **mult)
{
	double *xs = NULL, *ws = NULL;
	int64_t nxs, nws;
	int rc;

	*mult = NULL;
	if ((rc = scale_in(k, 1, "x_scale", &xs, &nxs)) < 0 ||
	    (rc = scale_in(k, 4, "w_scale", &ws, &nws)) < 0)
		goto done;
	if (nxs != 1 || (nws != 1 && nws != m)) {
		rc = rt_err(k, "x_scale must be one value and w_scale 1 or %lld", (long long)m);
		goto done;
	}
	if (!(*mult = malloc((size_t)m * sizeof(**mult) + 1))) {
		rc = rt_oom(k);
		goto done;
	}
	for (int64_t o = 0; o < m; o++)
		(*mult)[o] = (float)xs[0] * (float)ws[nws == 1 ? 0 : o];
done:
	free(xs);
	free(ws);
	return rc;
}

/* A DequantizeLinear Conv unit's float32 result on oneDNN's integer
 * convolution: float32(sum + bias[o]) * mult[o], then the node's
 * epilogue, into output 0: 1 done, 0 not taken (a sum and bias that
 * could pass 2^31), or an error. */
static int dqconv_dnnl(struct rt_kctx *k, const struct knn_geom *g, const struct rt_value *x,
		       const struct rt_value *w, int w_const, const double *xz,
		       const double *wz, int64_t nwz, const double *b)
{
	double kl = (double)(g->c / g->group * g->k_size);
	int32_t *bias = NULL;
	int64_t dims[RT_MAX_RANK];
	struct rt_value *y;
	struct knn_dnnl_q8 q;
	float *mult = NULL;
	int rc = 0;

	if (!knn_dnnl_int_ok())
		return 0;
	if (b && !(bias = malloc((size_t)g->m * sizeof(*bias))))
		return rt_oom(k);
	for (int64_t m = 0; b && m < g->m; m++) {
		if (65025.0 * kl + fabs(b[m]) >= 2147483647.0)
			goto done;   /* the double sums' path */
		bias[m] = (int32_t)b[m];
	}
	if ((rc = dq_mults(k, g->m, &mult)) < 0)
		goto done;
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_FLOAT, conv_out_dims(g, dims), dims))) {
		rc = IR_ENOMEM;
		goto done;
	}
	/* (taken, the steps are this call's or the fallback's to do) */
	q = (struct knn_dnnl_q8){ mult, bias, 0, IR_DTYPE_FLOAT, y->data, 0,
				  rt_kctx_epilogue(k, y, 1), 1 };
	rc = knn_conv_dnnl_s32(k, g, x->data, x->dtype, xz ? (int32_t)xz[0] : 0, w->data,
			       w->dtype, wz, nwz, w_const, NULL, &q);
done:
	free(mult);
	free(bias);
	return rc;
}

/* QLinearConv's output requantized by oneDNN's integer convolution in
 * one pass (knn_conv_dnnl_s32 with q): 1 done, 0 not taken, or an
 * error.  Its scales: inputs 1, 4, 6 and the zero point 7. */
static int qconv_dnnl(struct rt_kctx *k, const struct knn_geom *g, const struct rt_value *x,
		      const struct rt_value *w, int w_const, const double *xz,
		      const double *wz, int64_t nwz, const double *b)
{
	double *xs = NULL, *ws = NULL, *ys = NULL, *yzp = NULL;
	int64_t nxs, nws, nys, nyz, dims[RT_MAX_RANK];
	float *mult = malloc((size_t)g->m * sizeof(*mult) + 1);
	int32_t *bias = b ? malloc((size_t)g->m * sizeof(*bias)) : NULL;
	struct rt_value *y, *yz = rt_in(k, 7);
	struct knn_dnnl_q8 q;
	int rc = 0;

	if (!knn_dnnl_int_ok() || !yz || yz->kind != RT_TENSOR || !is_q8(yz->dtype))
		goto done;
	rc = IR_ENOMEM;
	if (!mult || (b && !bias))
		goto done;
	if ((rc = scale_in(k, 1, "x_scale", &xs, &nxs)) < 0 ||
	    (rc = scale_in(k, 4, "w_scale", &ws, &nws)) < 0 ||
	    (rc = scale_in(k, 6, "y_scale", &ys, &nys)) < 0 ||
	    (rc = opt_f64(k, 7, 0, "y_zero_point", &yzp, &nyz)) < 0 ||
	    (nws != 1 && nws != g->m))
		goto done;    /* (errors from k_qlinear_conv's own checks) */
	for (int64_t m = 0; m < g->m; m++) {
		/* the sums plus the bias must fit int32 (knn_requant_px) */
		double kl = (double)(g->c / g->group * g->k_size);

		mult[m] = (float)xs[0] * (float)ws[nws == 1 ? 0 : m] / (float)ys[0];
		if (!isfinite(mult[m]) || 65025.0 * kl + (b ? fabs(b[m]) : 0) >= 2147483647.0)
			goto done;    /* knn_store_q's path */
		if (bias)
			bias[m] = (int32_t)b[m];
	}
	if (!(y = rt_out_tensor(k, 0, yz->dtype, conv_out_dims(g, dims), dims))) {
		rc = IR_ENOMEM;
		goto done;
	}
	/* channels last in and out where the input is and the readers take
	 * it (layout_cl.c); the kernel flags y when it wrote so */
	q = (struct knn_dnnl_q8){ mult, bias, (float)yzp[0], y->dtype, y->data,
				  ((x->flags & RT_VALUE_CL) ? KNN_CL_SRC : 0) |
				  (rt_cl_may_write(k) ? KNN_CL_DST : 0), NULL, 0 };
	rc = knn_conv_dnnl_s32(k, g, x->data, x->dtype, xz ? (int32_t)xz[0] : 0, w->data,
			       w->dtype, wz, nwz, w_const, NULL, &q);
done:
	free(mult);
	free(bias);
	free(xs);
	free(ws);
	free(ys);
	free(yzp);
	return rc;
}

/* What int_conv's caller is. */
enum { IC_INTEGER, IC_QLINEAR, IC_FLOAT, IC_DQ };

/* Shared Conv body: y (doubles) = conv(x - xzp, w - wzp[m]) (+ b); or,
 * when yi is given and oneDNN takes it, the int32 sums without b in *yi
 * (*yd NULL): ConvInteger's output tensor itself when to_out; or, for
 * QLinearConv (IC_QLINEAR), its requantized output written, for
 * ConvInteger as float32 (IC_FLOAT) its float32 sums, for a
 * DequantizeLinear Conv unit (IC_DQ) its float32 result: 1.  Only
 * QLinearConv on oneDNN reads x stored channels last; else it is made
 * plain. */
static int int_conv(struct rt_kctx *k, size_t ix, size_t ixzp, size_t iw,
		    size_t iwzp, size_t ib, struct knn_geom *g, double **yd,
		    int32_t **yi, int to_out, int mode)
{
	struct rt_value *x, *w;
	double *xd = NULL, *wd = NULL, *xz = NULL, *wz = NULL, *bd = NULL;
	int64_t nxz, nwz, nb;
	int rc;

	*yd = NULL;
	if ((rc = rt_in_tensor(k, ix, &x)) < 0 || (rc = rt_in_tensor(k, iw, &w)) < 0)
		return rc;
	if (!is_q8(x->dtype) || !is_q8(w->dtype))
		return rt_err(k, "x and w must be int8 or uint8 (dtypes %d, %d)",
			      x->dtype, w->dtype);
	if ((rc = knn_geom_conv(k, x, w, g)) < 0)
		return rc;
	if ((rc = opt_f64(k, ixzp, x->dtype, "x's zero point", &xz, &nxz)) < 0 ||
	    (rc = opt_f64(k, iwzp, w->dtype, "w's zero point", &wz, &nwz)) < 0 ||
	    (ib && (rc = opt_f64(k, ib, IR_DTYPE_INT32, "bias B", &bd, &nb)) < 0))
		goto cleanup;
	if (xz && nxz != 1) {
		rc = rt_err(k, "x's zero point must be a scalar");
		goto cleanup;
	}
	if ((wz && nwz != 1 && nwz != g->m) || (bd && nb != g->m)) {
		rc = rt_err(k, "w's zero point and B must have 1 or %lld elements",
			    (long long)g->m);
		goto cleanup;
	}
	if (mode == IC_QLINEAR &&
	    (rc = qconv_dnnl(k, g, x, w, rt_in_const(k, iw) && const_or_absent(k, iwzp), xz, wz,
			     nwz, bd)) != 0)
		goto cleanup;
	if ((x->flags & RT_VALUE_CL) && (rc = rt_cl_plain_in(k, ix)) < 0)
		goto cleanup;
	x = k->in[ix];
	if (mode == IC_FLOAT &&
	    (rc = fconv_dnnl(k, g, x, w, rt_in_const(k, iw) && const_or_absent(k, iwzp), xz, wz,
			     nwz)) != 0)
		goto cleanup;
	if (mode == IC_DQ &&
	    (rc = dqconv_dnnl(k, g, x, w, rt_in_const(k, iw) && const_or_absent(k, iwzp), xz, wz,
			      nwz, bd)) != 0)
		goto cleanup;
	if (yi && (rc = conv_dnnl(k, g, x, w, rt_in_const(k, iw) && const_or_absent(k, iwzp), xz,
				  wz, nwz, to_out, yi)) != 0)
		goto cleanup;
	if ((rc = conv_fast(k, g, x, w, rt_in_const(k, iw) && const_or_absent(k, iwzp), xz, wz,
			    nwz, bd, yd)) != 0) {
		rc = rc < 0 ? rc : 0;
		goto cleanup;
	}
	rc = IR_ENOMEM;
	if (!(xd = knn_load_f64(k, x)) || !(wd = knn_load_f64(k, w)))
		goto cleanup;
	if (!(*yd = malloc((size_t)(g->n * g->m * g->out_size + 1) * sizeof(double)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	sub_rows(xd, x->numel, 1, xz, 1);
	sub_rows(wd, w->numel, w->numel / g->m, wz, nwz);
	rc = knn_conv_f64(k, g, xd, wd, bd, *yd);
cleanup:
	if (rc < 0) {
		free(*yd);
		*yd = NULL;
	}
	free(xd);
	free(wd);
	free(xz);
	free(wz);
	free(bd);
	return rc;
}

static int conv_out_dims(const struct knn_geom *g, int64_t *dims)
{
	dims[0] = g->n;
	dims[1] = g->m;
	memcpy(dims + 2, g->out, (size_t)g->nsp * sizeof(int64_t));
	return g->nsp + 2;
}

static int k_conv_integer(struct rt_kctx *k)
{
	struct knn_geom g;
	struct rt_value *y;
	int64_t dims[RT_MAX_RANK];
	double *yd;
	int rc;

	int32_t *yi = NULL;

	if ((rc = int_conv(k, 0, 2, 1, 3, 0, &g, &yd, &yi, 1, IC_INTEGER)) < 0)
		return rc;
	if (yi)   /* written into the output by oneDNN */
		return 0;
	if ((y = rt_out_tensor(k, 0, IR_DTYPE_INT32, conv_out_dims(&g, dims), dims)))
		for (int64_t i = 0; i < y->numel; i++)
			((int32_t *)y->data)[i] = (int32_t)(int64_t)yd[i];
	else
		rc = IR_ENOMEM;
	rt_big_free(yd);
	return rc;
}

struct sums_f32 {
	const int32_t *yi;
	const double *yd;
	const float *s;
	const struct rt_epilogue *e;
	float *f;
	int64_t sp, c;
	const float *sv;         /* a scale per column (of the last axis's
				  * ncols), or NULL */
	int64_t ncols;
	const float *sc;         /* yd's: a scale per channel, or NULL (the
				  * sums then rounded from double once) */
};

/* Planes [lo, hi) of sp integer sums (yi's, else yd's) into f: as
 * ConvInteger or MatMulInteger, Cast and Mul, the int32 sum rounded
 * once, the product by *s (when s), or by sv[column] (when sv), once;
 * then e's steps as the nodes do them, plane pl being channel pl % c on
 * axis 1. */
/* f[i] = (float)y[i] * s, then * v[i] when v: the int32 sums' Cast and
 * the Muls in one pass (a product by 1 when the node has no scale is
 * exact, so the roundings are the nodes'); vectorized for each ISA
 * (t5_dyn's: 17% of its time as three scalar passes). */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void sums_scale(const int32_t *restrict y, float s, const float *restrict v,
		       float *restrict f, int64_t n)
{
	if (v)
		for (int64_t i = 0; i < n; i++)
			f[i] = (float)y[i] * s * v[i];
	else
		for (int64_t i = 0; i < n; i++)
			f[i] = (float)y[i] * s;
}

static void sums_planes(void *ctx, int64_t lo, int64_t hi)
{
	const struct sums_f32 *j = ctx;
	float *f = j->f + lo * j->sp;
	int64_t n = (hi - lo) * j->sp, o = lo * j->sp;

	if (j->yi) {
		/* column runs of the per-column scale (or one run) */
		for (int64_t i = 0, col = o % j->ncols; i < n; col = 0) {
			int64_t run = !j->sv ? n : j->ncols - col < n - i ? j->ncols - col : n - i;

			sums_scale(j->yi + o + i, j->s ? *j->s : 1.0f, j->sv ? j->sv + col : NULL,
				   f + i, run);
			i += run;
		}
	} else if (j->sc) {
		for (int64_t pl = lo; pl < hi; pl++) {
			float sc = j->sc[pl % j->c], *dst = j->f + pl * j->sp;
			const double *src = j->yd + pl * j->sp;

			for (int64_t i = 0; i < j->sp; i++)
				dst[i] = (float)src[i] * sc;
		}
	} else {
		for (int64_t i = 0; i < n; i++)
			f[i] = (float)(int32_t)(int64_t)j->yd[o + i];
		for (int64_t i = 0; j->s && i < n; i++)
			f[i] = f[i] * *j->s;
		if (j->sv)
			for (int64_t i = 0, col = o % j->ncols; i < n; ) {
				int64_t run = j->ncols - col < n - i ? j->ncols - col : n - i;

				for (int64_t q = 0; q < run; q++)
					f[i + q] = f[i + q] * j->sv[col + q];
				i += run;
				col = 0;
			}
	}
	for (int64_t pl = lo; j->e && pl < hi; pl++)
		rt_epilogue_span(j->e, pl % j->c, pl * j->sp, j->f + pl * j->sp, j->sp);
}

int knn_conv_integer_f32(struct rt_kctx *k)
{
	struct knn_geom g;
	struct rt_value *y;
	int64_t dims[RT_MAX_RANK];
	struct sums_f32 j;
	const float *s;
	double *yd;
	int rc;

	/* (oneDNN's int32 sums, when it takes them, come as float32 from
	 * fconv_dnnl: no int32 buffer asked for) */
	if ((rc = int_conv(k, 0, 2, 1, 3, 0, &g, &yd, NULL, 0, IC_FLOAT)) < 0)
		return rc;
	if (!yd)   /* written by oneDNN */
		return 0;
	if ((rc = ci_scale(k, &s)) < 0 ||
	    !(y = rt_out_tensor(k, 0, IR_DTYPE_FLOAT, conv_out_dims(&g, dims), dims))) {
		rt_big_free(yd);
		return rc < 0 ? rc : IR_ENOMEM;
	}
	/* the epilogue fconv_dnnl took, or now */
	j = (struct sums_f32){ NULL, yd, s, k->epi ? k->epi : rt_kctx_epilogue(k, y, 1), y->data,
			       g.out_size, g.m, NULL, 1, NULL };
	if (y->numel)
		rt_parallel_for(k, g.n * g.m, 1 + 16384 / g.out_size, sums_planes, &j);
	rt_big_free(yd);
	return 0;
}

int knn_dq_conv_f32(struct rt_kctx *k)
{
	struct knn_geom g;
	struct rt_value *y;
	int64_t dims[RT_MAX_RANK];
	struct sums_f32 j;
	float *mult = NULL;
	double *yd;
	int rc;

	if ((rc = int_conv(k, 0, 2, 3, 5, rt_in(k, 8) ? 8 : 0, &g, &yd, NULL, 0, IC_DQ)) < 0)
		return rc;
	if (!yd)   /* written by oneDNN */
		return 0;
	if ((rc = dq_mults(k, g.m, &mult)) < 0 ||
	    !(y = rt_out_tensor(k, 0, IR_DTYPE_FLOAT, conv_out_dims(&g, dims), dims))) {
		rt_big_free(yd);
		return rc < 0 ? rc : IR_ENOMEM;
	}
	/* the sums with the bias, exact in double, rounded once */
	j = (struct sums_f32){ NULL, yd, NULL, k->epi ? k->epi : rt_kctx_epilogue(k, y, 1), y->data,
			       g.out_size, g.m, NULL, 1, mult };
	if (y->numel)
		rt_parallel_for(k, g.n * g.m, 1 + 16384 / g.out_size, sums_planes, &j);
	free(mult);
	rt_big_free(yd);
	return 0;
}

int knn_matmul_integer_f32(struct rt_kctx *k)
{
	struct knn_mm p;
	struct rt_value *y;
	struct sums_f32 j = { 0 };
	double *yd;
	int32_t *yi = NULL;
	int rc;

	if ((rc = int_matmul(k, 0, 2, 1, 3, &p, &yd, &yi, 0)) < 0)
		return rc;
	if ((rc = ci_scale_cols(k, p.rank ? p.dims[p.rank - 1] : 1, &j.s, &j.sv)) < 0 ||
	    !(y = rt_out_tensor(k, 0, IR_DTYPE_FLOAT, p.rank, p.dims))) {
		rc = rc < 0 ? rc : IR_ENOMEM;
		goto done;
	}
	j = (struct sums_f32){ yi, yd, j.s, p.rank >= 2 ? rt_kctx_epilogue(k, y, 1) : NULL, y->data,
			     1, p.rank >= 2 ? p.dims[1] : 1, j.sv, p.rank ? p.dims[p.rank - 1] : 1,
			     NULL };
	for (int i = 2; i < p.rank; i++)
		j.sp *= p.dims[i];
	if (y->numel)
		rt_parallel_for(k, y->numel / j.sp, 1 + 16384 / j.sp, sums_planes, &j);
done:
	knn_mm_release(&p);
	rt_big_free(yi);
	free(yd);
	return rc;
}

int knn_qconv_dnnl(void)
{
	return knn_dnnl_int_ok();
}

static int k_qlinear_conv(struct rt_kctx *k)
{
	struct knn_geom g;
	struct rt_value *y, *yz;
	int64_t dims[RT_MAX_RANK], nxs, nws, nys, nyz, nb;
	double *yd = NULL, *xs = NULL, *ws = NULL, *ys = NULL, *yzp = NULL, *bd = NULL;
	int32_t *yi = NULL;
	int rc;

	if ((rc = rt_in_tensor(k, 7, &yz)) < 0)
		return rc;
	if (!is_q8(yz->dtype))
		return rt_err(k, "y_zero_point must be int8 or uint8");
	if ((rc = int_conv(k, 0, 2, 3, 5, 8, &g, &yd, &yi, 0, IC_QLINEAR)) != 0)
		return rc < 0 ? rc : 0;
	if ((rc = scale_in(k, 1, "x_scale", &xs, &nxs)) < 0 ||
	    (rc = scale_in(k, 4, "w_scale", &ws, &nws)) < 0 ||
	    (rc = scale_in(k, 6, "y_scale", &ys, &nys)) < 0 ||
	    (rc = opt_f64(k, 7, 0, "y_zero_point", &yzp, &nyz)) < 0)
		goto cleanup;
	if (nws != 1 && nws != g.m) {
		rc = rt_err(k, "w_scale must have 1 or %lld elements", (long long)g.m);
		goto cleanup;
	}
	if (!(y = rt_out_tensor(k, 0, yz->dtype, conv_out_dims(&g, dims), dims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	if (yi && (rc = opt_f64(k, 8, IR_DTYPE_INT32, "bias B", &bd, &nb)) < 0)
		goto cleanup;
	if (yi) {
		float *mult = malloc((size_t)g.m * sizeof(*mult));

		if (!mult) {
			rc = rt_oom(k);
			goto cleanup;
		}
		for (int64_t m = 0; m < g.m; m++)
			mult[m] = (float)xs[0] * (float)ws[nws == 1 ? 0 : m] / (float)ys[0];
		knn_requant_planes(yi, g.n * g.m, g.out_size, g.m, mult, bd, yzp[0], y);
		free(mult);
		goto cleanup;
	}
	for (int64_t i = 0; i < y->numel; i++) {
		int64_t m = (i / g.out_size) % g.m;
		float mult = (float)xs[0] * (float)ws[nws == 1 ? 0 : m] / (float)ys[0];

		knn_store_q(y->dtype, y->data, i, yd ? yd[i] : (double)yi[i] + (bd ? bd[m] : 0),
			mult, yzp[0]);
	}
cleanup:
	rt_big_free(yd);
	rt_big_free(yi);
	free(bd);
	free(xs);
	free(ws);
	free(ys);
	free(yzp);
	return rc;
}

const struct rt_kernel rt_kernels_qlinear[] = {
	{ "ai.onnx", "ConvInteger", 10, RT_OPEN, k_conv_integer },
	{ "ai.onnx", "MatMulInteger", 10, RT_OPEN, k_matmul_integer },
	{ "ai.onnx", "QLinearConv", 10, RT_OPEN, k_qlinear_conv },
	{ "ai.onnx", "QLinearMatMul", 10, RT_OPEN, k_qlinear_matmul },
};
const size_t rt_n_kernels_qlinear = sizeof(rt_kernels_qlinear) / sizeof(rt_kernels_qlinear[0]);
