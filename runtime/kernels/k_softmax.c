/* k_softmax.c: kernels of the softmax family: Softmax, LogSoftmax and
 * Hardmax (before version 13 over the input coerced to 2-D at axis, from
 * 13 along one axis), and the losses built on them,
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (reduction,
 * ignore_index, weights, log_prob output). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_reduce_int.h"

enum sm_kind { SM_SOFT, SM_LOG, SM_HARD };

#define SM_COLS 512

struct sm_job {
	int kind;
	int64_t n, inner;
	int64_t cols, nchunk;       /* inner columns per work item, items per outer */
	const void *x;
	void *y;
	int round;   /* float32 results rounded so as written (rt_lowp_round_out) */
};

/* Rows [0, n) of w columns at stride S, float32, rounded to dtype round
 * (a float16 node's results, while in cache) */
static void sm_round(void *y, int64_t n, int64_t S, int64_t w, int round)
{
	if (w == S)   /* one run (a line along the last axis) */
		rt_float_round_n(y, n * w, round);
	else
		for (int64_t r = 0; r < n; r++)
			rt_float_round_n((float *)y + r * S, w, round);
}

/* Contiguous float32 lines of Softmax and LogSoftmax: AVX-512 when the
 * CPU has it (k_softmax512.c) */
static int sm_fast_float(int kind, const float *x, float *y, int64_t n, int64_t s)
{
	return s == 1 && kind != SM_HARD && kr_softmax_line512(kind == SM_LOG, x, y, n);
}

static int sm_rows_float(int kind, const float *x, float *y, int64_t n, int64_t S, int64_t I)
{
	return kind != SM_HARD && kr_softmax_rows512(kind == SM_LOG, x, y, n, S, I);
}

static int sm_rows_double(int kind, const double *x, double *y, int64_t n, int64_t S,
			  int64_t I)
{
	(void)kind, (void)x, (void)y, (void)n, (void)S, (void)I;
	return 0;
}

static int sm_fast_double(int kind, const double *x, double *y, int64_t n, int64_t s)
{
	(void)kind;
	(void)x;
	(void)y;
	(void)n;
	(void)s;
	return 0;
}

/* One line of n elements s apart; float32 uses expf, sums in double. */
#define SOFTMAX(T, EXP)							\
static void sm_line_##T(int kind, const T *x, T *y, int64_t n, int64_t s) \
{									\
	T m = x[0];							\
	int64_t mi = 0;							\
	double sum = 0;							\
									\
	if (sm_fast_##T(kind, x, y, n, s))				\
		return;							\
	for (int64_t r = 1; r < n; r++)					\
		if (x[r * s] > m) {					\
			m = x[r * s];					\
			mi = r;						\
		}							\
	if (kind == SM_HARD) {						\
		for (int64_t r = 0; r < n; r++)				\
			y[r * s] = r == mi;				\
		return;							\
	}								\
	if (kind == SM_LOG) {						\
		for (int64_t r = 0; r < n; r++)				\
			sum += EXP(x[r * s] - m);			\
		{							\
			T l = (T)log(sum);				\
									\
			for (int64_t r = 0; r < n; r++)			\
				y[r * s] = x[r * s] - m - l;		\
		}							\
		return;							\
	}								\
	for (int64_t r = 0; r < n; r++) {				\
		T v = EXP(x[r * s] - m);				\
									\
		y[r * s] = v;						\
		sum += v;						\
	}								\
	{								\
		T inv = (T)(1.0 / sum);					\
									\
		if (s == 1)	/* contiguous: vectorizes */		\
			for (int64_t r = 0; r < n; r++)			\
				y[r] *= inv;				\
		else							\
			for (int64_t r = 0; r < n; r++)			\
				y[r * s] *= inv;			\
	}								\
}									\
									\
/* [n, I] block of rows S apart: per-column state in m (max), mi (its \
 * row) and s (sums). */						\
static void sm_block_##T(int kind, const T *x, T *y, int64_t n, int64_t S, \
			 int64_t I, T *m, int64_t *mi, double *s)	\
{									\
	if (sm_rows_##T(kind, x, y, n, S, I))				\
		return;							\
	for (int64_t i = 0; i < I; i++) {				\
		m[i] = x[i];						\
		mi[i] = 0;						\
		s[i] = 0;						\
	}								\
	for (int64_t r = 1; r < n; r++)					\
		for (int64_t i = 0; i < I; i++)				\
			if (x[r * S + i] > m[i]) {			\
				m[i] = x[r * S + i];			\
				mi[i] = r;				\
			}						\
	if (kind == SM_HARD) {						\
		for (int64_t r = 0; r < n; r++)				\
			memset(y + r * S, 0, (size_t)I * sizeof(T));	\
		for (int64_t i = 0; i < I; i++)				\
			y[mi[i] * S + i] = 1;				\
		return;							\
	}								\
	for (int64_t r = 0; r < n; r++)					\
		for (int64_t i = 0; i < I; i++) {			\
			T v = EXP(x[r * S + i] - m[i]);			\
									\
			if (kind == SM_SOFT)				\
				y[r * S + i] = v;			\
			s[i] += v;					\
		}							\
	if (kind == SM_LOG) {	/* (x - m) - l, as a line: m + l would	\
				 * round at m's scale */		\
		for (int64_t i = 0; i < I; i++)				\
			s[i] = (T)log(s[i]);				\
		for (int64_t r = 0; r < n; r++)				\
			for (int64_t i = 0; i < I; i++)			\
				y[r * S + i] = x[r * S + i] - m[i] - (T)s[i]; \
		return;							\
	}								\
	for (int64_t i = 0; i < I; i++)					\
		s[i] = 1.0 / s[i];					\
	for (int64_t r = 0; r < n; r++)					\
		for (int64_t i = 0; i < I; i++)				\
			y[r * S + i] *= (T)s[i];			\
}									\
									\
static void sm_##T(void *ctx, int64_t b, int64_t e)			\
{									\
	const struct sm_job *j = ctx;					\
	int64_t n = j->n, I = j->inner, C = j->cols;			\
	char *tmp = I > 1 ? malloc((size_t)C * (sizeof(T) + 16)) : NULL; \
									\
	for (int64_t s = b; s < e; s++) {				\
		int64_t o = s / j->nchunk, i0 = s % j->nchunk * C;	\
		int64_t w = I - i0 < C ? I - i0 : C;			\
		const T *x = (const T *)j->x + o * n * I + i0;		\
		T *y = (T *)j->y + o * n * I + i0;			\
									\
		if (tmp) {						\
			sm_block_##T(j->kind, x, y, n, I, w, (T *)(tmp + (size_t)C * 16), \
				     (int64_t *)tmp, (double *)(tmp + (size_t)C * 8)); \
		} else {						\
			/* inner 1, or no memory: one strided line each */ \
			for (int64_t i = 0; i < w; i++)			\
				sm_line_##T(j->kind, x + i, y + i, n, I); \
		}							\
		if (j->round)						\
			sm_round(y, n, I, w, j->round);			\
	}								\
	free(tmp);							\
}

SOFTMAX(float, expf)
SOFTMAX(double, exp)

/* Softmax over [outer, n, inner] of a float or double working buffer. */
static void sm_run(struct rt_kctx *k, int kind, int f32, const void *x,
		   void *y, int64_t outer, int64_t n, int64_t inner, int round)
{
	struct sm_job j = { kind, n, inner, inner < SM_COLS ? inner : SM_COLS, 0, x, y, round };

	if (n == 0 || inner == 0)
		return;
	j.nchunk = (inner + j.cols - 1) / j.cols;
	rt_parallel_for(k, outer * j.nchunk, 1 + 32768 / (n * j.cols),
			f32 ? sm_float : sm_double, &j);
}

static int softmax(struct rt_kctx *k, int kind)
{
	struct rt_value *x, *y;
	int64_t outer, n, inner;
	void *xb, *yb = NULL;
	int axis, rc, owned, round;
	enum kr_work w;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (!rt_dtype_is_float(x->dtype))
		return rt_err(k, "input 0: floating-point tensor expected");
	if ((rc = rt_axis(k, rt_attr_int(k, "axis", k->version >= 13 ? -1 : 1),
			  x->rank, &axis)) < 0)
		return rc;
	if (k->version >= 13) {
		kr_split(x, axis, &outer, &n, &inner);
	} else {
		outer = rt_numel(axis, x->dims);
		n = rt_numel(x->rank - axis, x->dims + axis);
		inner = 1;
	}
	/* lines along the last axis write each element after reading it
	 * (the passes go by index): in place where x dies here, so that an
	 * attention's scores need no fresh block for the probabilities */
	if (!(y = kind != SM_HARD && inner == 1 ? rt_out_tensor_reuse(k, 0, 1u, x->dtype, x->rank,
								      x->dims) :
		  rt_out_tensor(k, 0, x->dtype, x->rank, x->dims)))
		return IR_ENOMEM;
	w = kr_work_of(x->dtype);
	if ((rc = kr_load(k, x, w, &xb, &owned)) < 0)
		return rc;
	if (kr_native(y->dtype, w)) {
		yb = y->data;
	} else if (!(yb = malloc((size_t)(x->numel ? x->numel : 1) * kr_work_size(w)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	/* a float16 node's results rounded as written (float32 in place) */
	round = w == KR_F32 && yb == y->data && y->dtype == IR_DTYPE_FLOAT ? rt_lowp_round_out(k) : 0;
	sm_run(k, kind, w == KR_F32, xb, yb, outer, n, inner, round);
	k->lowp_done = round != 0;
	if (yb != y->data)
		kr_store(y, w, yb);
cleanup:
	if (yb != y->data)
		free(yb);
	if (owned)
		free(xb);
	return rc;
}

static int k_softmax(struct rt_kctx *k)
{
	return softmax(k, SM_SOFT);
}

static int k_log_softmax(struct rt_kctx *k)
{
	return softmax(k, SM_LOG);
}

static int k_hardmax(struct rt_kctx *k)
{
	return softmax(k, SM_HARD);
}

/* ---- losses ------------------------------------------------------------ */

/* The negative log likelihood of lp ([N, C, D] log-probabilities, double)
 * at target ([N, D...], input ti), weighted by input wi when present, as
 * output 0 of dtype: per element for reduction "none", else summed or
 * averaged over the applied weights. */
static int nll(struct rt_kctx *k, const double *lp, int64_t N, int64_t C,
	       int64_t D, size_t ti, size_t wi, int dtype)
{
	const char *red = rt_attr_str(k, "reduction", "mean");
	const struct ir_attr *ia = rt_attr(k, "ignore_index");
	int64_t ignore = rt_attr_int(k, "ignore_index", 0);
	struct rt_value *t, *wt = rt_in(k, wi), *y;
	double *wv = NULL, sum = 0, wsum = 0;
	int none = !strcmp(red, "none"), rc;

	if (!none && strcmp(red, "sum") && strcmp(red, "mean"))
		return rt_err(k, "unknown reduction '%s'", red);
	if ((rc = rt_in_tensor(k, ti, &t)) < 0)
		return rc;
	if (!rt_dtype_is_int(t->dtype) || t->numel != N * D || (t->rank && t->dims[0] != N))
		return rt_err(k, "input %zu: integer targets of shape [N, d1, ...] expected", ti);
	if (wt) {
		if (wt->kind != RT_TENSOR || wt->numel != C)
			return rt_err(k, "input %zu: weights of %lld classes expected",
				      wi, (long long)C);
		if (!(wv = malloc((size_t)(C ? C : 1) * sizeof(*wv))))
			return rt_oom(k);
		for (int64_t c = 0; c < C; c++)
			wv[c] = rt_load_f64(wt->dtype, wt->data, c);
	}
	if (!(y = none ? rt_out_tensor(k, 0, dtype, t->rank, t->dims) :
		     rt_out_tensor(k, 0, dtype, 0, NULL))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	for (int64_t n = 0; n < N; n++) {
		for (int64_t d = 0; d < D; d++) {
			int64_t c = rt_load_i64(t->dtype, t->data, n * D + d);
			double l = 0, w = 0;

			if (!(ia && c == ignore)) {
				if (c < 0 || c >= C) {
					rc = rt_err(k, "target %lld out of range [0, %lld)",
						    (long long)c, (long long)C);
					goto cleanup;
				}
				w = wv ? wv[c] : 1;
				l = -lp[(n * C + c) * D + d] * w;
			}
			if (none)
				rt_store_f64(dtype, y->data, n * D + d, l);
			sum += l;
			wsum += w;
		}
	}
	if (!none)
		rt_store_f64(dtype, y->data, 0, !strcmp(red, "sum") ? sum : sum / wsum);
cleanup:
	free(wv);
	return rc;
}

/* N, C and D (product of the dims after C) of a [N, C, d1, ...] input. */
static int ncd(struct rt_kctx *k, const struct rt_value *x, int64_t *N,
	       int64_t *C, int64_t *D)
{
	if (!rt_dtype_is_float(x->dtype) || x->rank < 2)
		return rt_err(k, "input 0: float tensor [N, C, ...] expected");
	*N = x->dims[0];
	*C = x->dims[1];
	*D = rt_numel(x->rank - 2, x->dims + 2);
	return 0;
}

static int k_nll_loss(struct rt_kctx *k)
{
	struct rt_value *x;
	int64_t N = 0, C = 0, D = 0;
	void *xb;
	int rc, owned;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = ncd(k, x, &N, &C, &D)) < 0)
		return rc;
	if ((rc = kr_load(k, x, KR_F64, &xb, &owned)) < 0)
		return rc;
	rc = nll(k, xb, N, C, D, 1, 2, x->dtype);
	if (owned)
		free(xb);
	return rc;
}

static int k_sce_loss(struct rt_kctx *k)
{
	struct rt_value *x, *lpo;
	double *lp = NULL;
	int64_t N = 0, C = 0, D = 0;
	void *xb;
	int rc, owned;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = ncd(k, x, &N, &C, &D)) < 0)
		return rc;
	if ((rc = kr_load(k, x, KR_F64, &xb, &owned)) < 0)
		return rc;
	if (!(lp = malloc((size_t)(x->numel ? x->numel : 1) * sizeof(*lp)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	sm_run(k, SM_LOG, 0, xb, lp, N, C, D, 0);
	if ((rc = nll(k, lp, N, C, D, 1, 2, x->dtype)) < 0)
		goto cleanup;
	if (rt_out_wanted(k, 1)) {
		if (!(lpo = rt_out_tensor(k, 1, x->dtype, x->rank, x->dims))) {
			rc = IR_ENOMEM;
			goto cleanup;
		}
		kr_store(lpo, KR_F64, lp);
	}
cleanup:
	free(lp);
	if (owned)
		free(xb);
	return rc;
}

const struct rt_kernel rt_kernels_softmax[] = {
	{ "ai.onnx", "Hardmax", 1, RT_OPEN, k_hardmax },
	{ "ai.onnx", "LogSoftmax", 1, RT_OPEN, k_log_softmax },
	{ "ai.onnx", "NegativeLogLikelihoodLoss", 12, RT_OPEN, k_nll_loss },
	{ "ai.onnx", "Softmax", 1, RT_OPEN, k_softmax },
	{ "ai.onnx", "SoftmaxCrossEntropyLoss", 12, RT_OPEN, k_sce_loss },
};
const size_t rt_n_kernels_softmax = sizeof(rt_kernels_softmax) / sizeof(rt_kernels_softmax[0]);
