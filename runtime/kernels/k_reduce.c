/* k_reduce.c: the Reduce* kernels (axes as attribute or input, keepdims,
 * noop_with_empty_axes, empty-set identities) over one [outer, red, inner]
 * loop after merging dims (a transpose when reduced dims are not adjacent),
 * and the family's table, which also lists ArgMax/ArgMin and the
 * cumulative ops of k_reduce_arg.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_reduce_int.h"

enum red_op {
	R_SUM, R_SUMSQ, R_L1, R_L2, R_MEAN, R_PROD, R_MAX, R_MIN, R_LOGSUM, R_LSE
};

#define RED_COLS 512

struct red_job {
	int op;
	int64_t red, inner;
	int64_t cols, nchunk;       /* inner columns per work item, items per outer */
	const void *x;
	void *y;
	int64_t ilo, ihi;           /* dtype range: max/min of an empty set */
	int sgn;                    /* int64 work holds signed values */
	int oom;
};

static double fin(int op, double a, int64_t n)
{
	switch (op) {
	case R_L2: return sqrt(a);
	case R_MEAN: return a / (double)n;
	case R_LOGSUM: return log(a);
	default: return a;
	}
}

static double start(int op)
{
	switch (op) {
	case R_PROD: return 1;
	case R_MAX: case R_LSE: return -INFINITY;
	case R_MIN: return INFINITY;
	default: return 0;
	}
}

/* Floating kinds: one line (inner == 1) and rows (inner > 1), in double. */
#define RED_FLOAT(T)							\
/* Sum of x, x^2 (kind 1) or |x| (kind 2) in four independent double \
 * accumulators, so the adds pipeline. */				\
static double sum4_##T(const T *x, int64_t n, int kind)			\
{									\
	double a0 = 0, a1 = 0, a2 = 0, a3 = 0;				\
	int64_t i = 0;							\
									\
	if (kind == 0) {						\
		for (; i + 4 <= n; i += 4) {				\
			a0 += x[i];					\
			a1 += x[i + 1];					\
			a2 += x[i + 2];					\
			a3 += x[i + 3];					\
		}							\
		for (; i < n; i++)					\
			a0 += x[i];					\
	} else if (kind == 1) {						\
		for (; i + 4 <= n; i += 4) {				\
			a0 += (double)x[i] * x[i];			\
			a1 += (double)x[i + 1] * x[i + 1];		\
			a2 += (double)x[i + 2] * x[i + 2];		\
			a3 += (double)x[i + 3] * x[i + 3];		\
		}							\
		for (; i < n; i++)					\
			a0 += (double)x[i] * x[i];			\
	} else {							\
		for (; i + 4 <= n; i += 4) {				\
			a0 += fabs((double)x[i]);			\
			a1 += fabs((double)x[i + 1]);			\
			a2 += fabs((double)x[i + 2]);			\
			a3 += fabs((double)x[i + 3]);			\
		}							\
		for (; i < n; i++)					\
			a0 += fabs((double)x[i]);			\
	}								\
	return (a0 + a1) + (a2 + a3);					\
}									\
									\
static double line_##T(int op, const T *x, int64_t n)			\
{									\
	double a = start(op), m;					\
									\
	switch (op) {							\
	case R_SUM: case R_MEAN: case R_LOGSUM:				\
		return fin(op, sum4_##T(x, n, 0), n);			\
	case R_SUMSQ: case R_L2:					\
		return fin(op, sum4_##T(x, n, 1), n);			\
	case R_L1:							\
		return fin(op, sum4_##T(x, n, 2), n);			\
	case R_PROD:							\
		for (int64_t i = 0; i < n; i++)				\
			a *= x[i];					\
		break;							\
	case R_MAX:							\
		for (int64_t i = 0; i < n; i++)				\
			if (x[i] > a || x[i] != x[i])			\
				a = x[i];				\
		break;							\
	case R_MIN:							\
		for (int64_t i = 0; i < n; i++)				\
			if (x[i] < a || x[i] != x[i])			\
				a = x[i];				\
		break;							\
	case R_LSE:							\
		m = line_##T(R_MAX, x, n);				\
		if (isinf(m) || isnan(m))				\
			return m;					\
		a = 0;							\
		for (int64_t i = 0; i < n; i++)				\
			a += exp(x[i] - m);				\
		return m + log(a);					\
	}								\
	return fin(op, a, n);						\
}									\
									\
static void rows_##T(int op, const T *x, int64_t R, int64_t S,		\
		     int64_t I, double *acc, double *mx, T *y)		\
{									\
	const int64_t n = R;						\
									\
	for (int64_t i = 0; i < I; i++)					\
		acc[i] = start(op);					\
	if ((op == R_SUM || op == R_MEAN || op == R_LOGSUM) &&		\
	    sumrows_##T(x, R, S, I, acc))				\
		R = 0;							\
	for (int64_t r = 0; r < R; r++) {				\
		const T *xr = x + r * S;				\
									\
		switch (op) {						\
		case R_SUM: case R_MEAN: case R_LOGSUM:			\
			for (int64_t i = 0; i < I; i++)			\
				acc[i] += xr[i];			\
			break;						\
		case R_SUMSQ: case R_L2:				\
			for (int64_t i = 0; i < I; i++)			\
				acc[i] += (double)xr[i] * xr[i];	\
			break;						\
		case R_L1:						\
			for (int64_t i = 0; i < I; i++)			\
				acc[i] += fabs((double)xr[i]);		\
			break;						\
		case R_PROD:						\
			for (int64_t i = 0; i < I; i++)			\
				acc[i] *= xr[i];			\
			break;						\
		case R_MAX: case R_LSE:					\
			for (int64_t i = 0; i < I; i++)			\
				if (xr[i] > acc[i] || xr[i] != xr[i])	\
					acc[i] = xr[i];			\
			break;						\
		case R_MIN:						\
			for (int64_t i = 0; i < I; i++)			\
				if (xr[i] < acc[i] || xr[i] != xr[i])	\
					acc[i] = xr[i];			\
			break;						\
		}							\
	}								\
	if (op == R_LSE) {						\
		memcpy(mx, acc, (size_t)I * sizeof(*mx));		\
		for (int64_t i = 0; i < I; i++)				\
			acc[i] = 0;					\
		for (int64_t r = 0; r < R; r++)				\
			for (int64_t i = 0; i < I; i++)			\
				if (!isinf(mx[i]) && !isnan(mx[i]))	\
					acc[i] += exp(x[r * S + i] - mx[i]); \
		for (int64_t i = 0; i < I; i++)				\
			y[i] = (T)(isinf(mx[i]) || isnan(mx[i]) ? mx[i] : \
				   mx[i] + log(acc[i]));		\
		return;							\
	}								\
	for (int64_t i = 0; i < I; i++)					\
		y[i] = (T)fin(op, acc[i], n);				\
}									\
									\
static void run_##T(void *ctx, int64_t b, int64_t e)			\
{									\
	struct red_job *j = ctx;					\
	double *acc = NULL;						\
									\
	if (j->inner == 1) {						\
		const T *x = (const T *)j->x + b * j->red;		\
		T *y = (T *)j->y + b;					\
									\
		if (lines_##T(j->op, x, e - b, j->red, y)) {		\
			/* max, min: NaN the loop redoes */		\
			for (int64_t l = 0; l < e - b; l++)		\
				if ((j->op == R_MAX || j->op == R_MIN) && \
				    y[l] != y[l])			\
					y[l] = (T)line_##T(j->op, x + l * j->red, \
							   j->red);	\
			return;						\
		}							\
	}								\
	if (j->inner > 1 && !(acc = malloc(2 * (size_t)j->cols * sizeof(double)))) { \
		j->oom = 1;						\
		return;							\
	}								\
	for (int64_t s = b; s < e; s++) {				\
		int64_t o = s / j->nchunk, i0 = s % j->nchunk * j->cols; \
		int64_t w = j->inner - i0 < j->cols ? j->inner - i0 : j->cols; \
		const T *x = (const T *)j->x + o * j->red * j->inner + i0; \
		T *y = (T *)j->y + o * j->inner + i0;			\
									\
		if (fast_##T(j->op, x, j->red, j->inner, w, y))	\
			continue;					\
		if (j->inner == 1)					\
			y[0] = (T)line_##T(j->op, x, j->red);		\
		else							\
			rows_##T(j->op, x, j->red, j->inner, w, acc,	\
				 acc + j->cols, y);			\
	}								\
	free(acc);							\
}

/* ReduceMax and ReduceMin of float32 in AVX-512 where it gives the
 * loops' values, ReduceLogSumExp within float32 ulps of them
 * (k_reduce512.c): 1 done. */
static int fast_float(int op, const float *x, int64_t red, int64_t inner, int64_t w,
		      float *y)
{
	if (op == R_LSE)
		return inner == 1 ? kr_lse_line512(x, red, y) : kr_lse_rows512(x, red, inner, w, y);
	if (op != R_MAX && op != R_MIN)
		return 0;
	if (inner == 1)
		return kr_maxmin_line512(op == R_MIN, x, red, y);
	return kr_maxmin_rows512(op == R_MIN, x, red, inner, w, y);
}

/* A work range of lines (inner == 1) at once in AVX-512: ReduceMax and
 * ReduceMin (1 done; a line whose value is NaN the caller's loop
 * redoes), the plain sums in double (their lines' sums 64 at a time,
 * finished as the loop would).  One call a line had cost ~20 ns a line:
 * pointnet2's ReduceMax of 65536 lines of 32 took 1.30 ms against
 * onnxruntime's 0.36. */
static int lines_float(int op, const float *x, int64_t lines, int64_t n, float *y)
{
	double s[64];

	if (op == R_MAX || op == R_MIN)
		return kr_maxmin_lines512(op == R_MIN, x, lines, n, y);
	if ((op != R_SUM && op != R_MEAN && op != R_LOGSUM) || n < 1)
		return 0;
	for (int64_t l = 0; l < lines; l += 64) {
		int64_t c = lines - l < 64 ? lines - l : 64;

		if (!kr_sum_lines512(x + l * n, c, n, s))
			return 0;
		for (int64_t i = 0; i < c; i++)
			y[l + i] = (float)fin(op, s[i], n);
	}
	return 1;
}

static int sumrows_float(const float *x, int64_t R, int64_t S, int64_t I, double *acc)
{
	return kr_sum_rows512(x, R, S, I, acc);
}

static int lines_double(int op, const double *x, int64_t lines, int64_t n, double *y)
{
	(void)op, (void)x, (void)lines, (void)n, (void)y;
	return 0;
}

static int sumrows_double(const double *x, int64_t R, int64_t S, int64_t I, double *acc)
{
	(void)x, (void)R, (void)S, (void)I, (void)acc;
	return 0;
}

static int fast_double(int op, const double *x, int64_t red, int64_t inner, int64_t w,
		       double *y)
{
	(void)op, (void)x, (void)red, (void)inner, (void)w, (void)y;
	return 0;
}

RED_FLOAT(float)
RED_FLOAT(double)

/* Integer kinds (sum, sum of squares, L1, product, max, min): wrapping
 * arithmetic in uint64, comparisons in T. */
#define RED_INT(T)							\
static T iline_##T(const struct red_job *j, const T *x, int64_t n,	\
		   int64_t s)						\
{									\
	uint64_t a = 0;							\
	T m;								\
									\
	switch (j->op) {						\
	case R_SUM:							\
		for (int64_t i = 0; i < n; i++)				\
			a += (uint64_t)x[i * s];			\
		return (T)a;						\
	case R_SUMSQ:							\
		for (int64_t i = 0; i < n; i++)				\
			a += (uint64_t)x[i * s] * (uint64_t)x[i * s];	\
		return (T)a;						\
	case R_L1:							\
		for (int64_t i = 0; i < n; i++)				\
			a += j->sgn && (int64_t)x[i * s] < 0 ?	\
			     0 - (uint64_t)x[i * s] :	\
			     (uint64_t)x[i * s];			\
		return (T)a;						\
	case R_PROD:							\
		a = 1;							\
		for (int64_t i = 0; i < n; i++)				\
			a *= (uint64_t)x[i * s];			\
		return (T)a;						\
	case R_MAX:							\
		m = (T)j->ilo;						\
		for (int64_t i = 0; i < n; i++)				\
			if (x[i * s] > m)				\
				m = x[i * s];				\
		return m;						\
	default:							\
		m = (T)j->ihi;						\
		for (int64_t i = 0; i < n; i++)				\
			if (x[i * s] < m)				\
				m = x[i * s];				\
		return m;						\
	}								\
}									\
									\
static void irun_##T(void *ctx, int64_t b, int64_t e)			\
{									\
	struct red_job *j = ctx;					\
									\
	for (int64_t o = b; o < e; o++) {				\
		const T *x = (const T *)j->x + o * j->red * j->inner;	\
		T *y = (T *)j->y + o * j->inner;			\
									\
		for (int64_t i = 0; i < j->inner; i++)			\
			y[i] = iline_##T(j, x + i, j->red, j->inner);	\
	}								\
}

RED_INT(int64_t)
RED_INT(uint64_t)

/* The range of an integer dtype as int64 bit patterns (uint64: 0, ~0). */
static void int_range(int dtype, int64_t *lo, int64_t *hi)
{
	switch (dtype) {
	case IR_DTYPE_INT8: *lo = INT8_MIN; *hi = INT8_MAX; break;
	case IR_DTYPE_UINT8: *lo = 0; *hi = UINT8_MAX; break;
	case IR_DTYPE_INT16: *lo = INT16_MIN; *hi = INT16_MAX; break;
	case IR_DTYPE_UINT16: *lo = 0; *hi = UINT16_MAX; break;
	case IR_DTYPE_INT32: *lo = INT32_MIN; *hi = INT32_MAX; break;
	case IR_DTYPE_UINT32: *lo = 0; *hi = UINT32_MAX; break;
	case IR_DTYPE_UINT64: *lo = 0; *hi = -1; break;
	case IR_DTYPE_BOOL: *lo = 0; *hi = 1; break;
	default: *lo = INT64_MIN; *hi = INT64_MAX; break;
	}
}

/* The reduced-dims mask from the axes attribute or input; *all when every
 * dim is reduced by default, *noop when nothing is. */
static int red_mask(struct rt_kctx *k, int rank, int axes_input, int *mask)
{
	int64_t *owned = NULL;
	const int64_t *axes;
	size_t n = 0;
	int rc = 0;

	memset(mask, 0, sizeof(int) * RT_MAX_RANK);
	if (axes_input) {
		if (rt_in(k, 1) && (rc = rt_in_ints(k, 1, &owned, &n)) < 0)
			return rc;
		axes = owned;
	} else {
		axes = rt_attr_ints(k, "axes", &n);
	}
	if (n == 0) {
		int noop = axes_input && rt_attr_int(k, "noop_with_empty_axes", 0);

		for (int i = 0; i < rank; i++)
			mask[i] = !noop;
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		int a;

		if ((rc = rt_axis(k, axes[i], rank, &a)) < 0)
			goto cleanup;
		if (mask[a]) {
			rc = rt_err(k, "axis %lld repeated in axes", (long long)axes[i]);
			goto cleanup;
		}
		mask[a] = 1;
	}
cleanup:
	free(owned);
	return rc;
}

static int reduce(struct rt_kctx *k, int op, int axes_input)
{
	int mask[RT_MAX_RANK], perm[RT_MAX_RANK], rank, ng = 0, nk = 0, rc;
	int64_t odims[RT_MAX_RANK], gd[RT_MAX_RANK], outer = 1, red = 1, inner = 1;
	int gr[RT_MAX_RANK];
	struct red_job j = { 0 };
	struct rt_value *x, *y;
	void *xb = NULL, *tb = NULL, *yb = NULL;
	enum kr_work w;
	int owned = 0, orank = 0;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (x->dtype == IR_DTYPE_STRING || rt_dtype_size(x->dtype) == 0)
		return rt_err(k, "input 0: numeric tensor expected");
	rank = x->rank;
	if ((rc = red_mask(k, rank, axes_input, mask)) < 0)
		return rc;
	for (int i = 0; i < rank; i++) {
		if (!mask[i])
			odims[orank++] = x->dims[i];
		else if (rt_attr_int(k, "keepdims", 1))
			odims[orank++] = 1;
	}
	/* merge dims into alternating kept/reduced groups (size-1 dims join
	 * either) */
	for (int i = 0; i < rank; i++) {
		if (x->dims[i] == 1)
			continue;
		if (ng && gr[ng - 1] == mask[i]) {
			gd[ng - 1] *= x->dims[i];
		} else {
			gd[ng] = x->dims[i];
			gr[ng++] = mask[i];
		}
	}
	w = kr_work_of(x->dtype);
	if (w != KR_F32 && (op == R_MEAN || op == R_L2 || op == R_LOGSUM || op == R_LSE))
		w = KR_F64;
	if (!(y = rt_out_tensor(k, 0, x->dtype, orank, odims)))
		return IR_ENOMEM;
	if ((rc = kr_load(k, x, w, &xb, &owned)) < 0)
		return rc;
	if (ng > 3 || (ng == 3 && gr[0])) {
		/* kept groups first, reduced last */
		for (int g = 0; g < ng; g++)
			if (!gr[g])
				perm[nk++] = g;
		for (int g = 0, p = nk; g < ng; g++)
			if (gr[g])
				perm[p++] = g;
		if (!(tb = malloc((size_t)(x->numel ? x->numel : 1) * kr_work_size(w)))) {
			rc = rt_oom(k);
			goto cleanup;
		}
		kr_transpose(xb, tb, kr_work_size(w), ng, gd, perm);
		for (int g = 0; g < ng; g++)
			*(gr[g] ? &red : &outer) *= gd[g];
	} else {
		int g = 0;

		if (g < ng && !gr[g])
			outer = gd[g++];
		if (g < ng)
			red = gd[g++];
		if (g < ng)
			inner = gd[g];
	}
	if (kr_native(y->dtype, w))
		yb = y->data;
	else if (!(yb = malloc((size_t)(y->numel ? y->numel : 1) * kr_work_size(w)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	j.op = op;
	j.red = red;
	j.inner = inner;
	j.x = tb ? tb : xb;
	j.y = yb;
	int_range(x->dtype, &j.ilo, &j.ihi);
	j.sgn = w == KR_I64;
	/* float kinds split wide rows into column blocks, so reducing an
	 * outer axis still spreads over the threads */
	j.cols = inner > RED_COLS && (w == KR_F32 || w == KR_F64) ? RED_COLS : inner;
	j.nchunk = j.cols ? (inner + j.cols - 1) / j.cols : 0;
	if (y->numel) {
		rt_range_fn fn = w == KR_F32 ? run_float : w == KR_F64 ? run_double :
				 w == KR_I64 ? irun_int64_t : irun_uint64_t;

		rt_parallel_for(k, outer * j.nchunk, 1 + 32768 / (red * j.cols + 1), fn, &j);
	}
	if (j.oom) {
		rc = rt_oom(k);
		goto cleanup;
	}
	if (yb != y->data)
		kr_store(y, w, yb);
cleanup:
	if (yb != y->data)
		free(yb);
	free(tb);
	if (owned)
		free(xb);
	return rc;
}

/* axes became an input at ReduceSum-13 and at version 18 for the others */
static int k_reduce_l1(struct rt_kctx *k) { return reduce(k, R_L1, k->version >= 18); }
static int k_reduce_l2(struct rt_kctx *k) { return reduce(k, R_L2, k->version >= 18); }
static int k_reduce_log_sum(struct rt_kctx *k) { return reduce(k, R_LOGSUM, k->version >= 18); }
static int k_reduce_log_sum_exp(struct rt_kctx *k) { return reduce(k, R_LSE, k->version >= 18); }
static int k_reduce_max(struct rt_kctx *k) { return reduce(k, R_MAX, k->version >= 18); }
static int k_reduce_mean(struct rt_kctx *k) { return reduce(k, R_MEAN, k->version >= 18); }
static int k_reduce_min(struct rt_kctx *k) { return reduce(k, R_MIN, k->version >= 18); }
static int k_reduce_prod(struct rt_kctx *k) { return reduce(k, R_PROD, k->version >= 18); }
static int k_reduce_sum(struct rt_kctx *k) { return reduce(k, R_SUM, k->version >= 13); }
static int k_reduce_sum_square(struct rt_kctx *k) { return reduce(k, R_SUMSQ, k->version >= 18); }

const struct rt_kernel rt_kernels_reduce[] = {
	{ "ai.onnx", "ArgMax", 1, RT_OPEN, kr_argmax },
	{ "ai.onnx", "ArgMin", 1, RT_OPEN, kr_argmin },
	{ "ai.onnx", "CumProd", 26, RT_OPEN, kr_cumprod },
	{ "ai.onnx", "CumSum", 11, RT_OPEN, kr_cumsum },
	{ "ai.onnx", "ReduceL1", 1, RT_OPEN, k_reduce_l1 },
	{ "ai.onnx", "ReduceL2", 1, RT_OPEN, k_reduce_l2 },
	{ "ai.onnx", "ReduceLogSum", 1, RT_OPEN, k_reduce_log_sum },
	{ "ai.onnx", "ReduceLogSumExp", 1, RT_OPEN, k_reduce_log_sum_exp },
	{ "ai.onnx", "ReduceMax", 1, RT_OPEN, k_reduce_max },
	{ "ai.onnx", "ReduceMean", 1, RT_OPEN, k_reduce_mean },
	{ "ai.onnx", "ReduceMin", 1, RT_OPEN, k_reduce_min },
	{ "ai.onnx", "ReduceProd", 1, RT_OPEN, k_reduce_prod },
	{ "ai.onnx", "ReduceSum", 1, RT_OPEN, k_reduce_sum },
	{ "ai.onnx", "ReduceSumSquare", 1, RT_OPEN, k_reduce_sum_square },
};
const size_t rt_n_kernels_reduce = sizeof(rt_kernels_reduce) / sizeof(rt_kernels_reduce[0]);
