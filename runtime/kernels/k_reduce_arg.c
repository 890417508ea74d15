/* k_reduce_arg.c: reductions along one axis that are not Reduce*: ArgMax
 * and ArgMin (keepdims, select_last_index; NaN wins as numpy's) and the
 * cumulative CumSum and CumProd (exclusive, reverse), all over an
 * [outer, n, inner] view in working precision. */
#include <stdlib.h>

#include "runtime/kernels/k_reduce_int.h"

struct arg_job {
	int max, last;
	int64_t n, inner;
	const void *x;
	int64_t *y;
};

/* The same rule for I > 1 columns at once, a block of them along each
 * row in turn (the column walk read one element a row I apart: ArgMax
 * over a segmenter's classes was 2x onnxruntime): a column's best and
 * its index change where the element beats it, and a NaN best stays. */
#define ARG_COLS 512
#define ARG_ROWS(T, BEATS)						\
	do {								\
		for (int64_t r = 1; r < n; r++) {			\
			const T *xr = x + r * I + c0;			\
									\
			for (int64_t i = 0; i < w; i++) {		\
				T v = xr[i], bb = best[i];		\
				int better = bb == bb && (v != v || (BEATS)); \
									\
				best[i] = better ? v : bb;		\
				bi[i] = better ? r : bi[i];		\
			}						\
		}							\
	} while (0)
#define ARG(T)								\
static void cols_##T(const struct arg_job *j, const T *x, int64_t *y)	\
{									\
	int64_t n = j->n, I = j->inner;					\
	T best[ARG_COLS];						\
									\
	for (int64_t c0 = 0; c0 < I; c0 += ARG_COLS) {			\
		int64_t w = I - c0 < ARG_COLS ? I - c0 : ARG_COLS;	\
		int64_t *bi = y + c0;					\
									\
		for (int64_t i = 0; i < w; i++) {			\
			best[i] = x[c0 + i];				\
			bi[i] = 0;					\
		}							\
		/* the comparison a constant in each loop, which vectorizes */ \
		if (j->max && !j->last)					\
			ARG_ROWS(T, v > bb);				\
		else if (j->max)					\
			ARG_ROWS(T, v >= bb);				\
		else if (!j->last)					\
			ARG_ROWS(T, v < bb);				\
		else							\
			ARG_ROWS(T, v <= bb);				\
	}								\
}									\
									\
static void arg_##T(void *ctx, int64_t b, int64_t e)			\
{									\
	const struct arg_job *j = ctx;					\
	int64_t n = j->n, I = j->inner;					\
									\
	for (int64_t o = b; o < e; o++) {				\
		if (I > 1) {						\
			cols_##T(j, (const T *)j->x + o * n * I, j->y + o * I); \
			continue;					\
		}							\
		if (line_##T(j, (const T *)j->x + o * n, j->y + o))	\
			continue;					\
		for (int64_t i = 0; i < I; i++) {			\
			const T *x = (const T *)j->x + o * n * I + i;	\
			T best = x[0];					\
			int64_t bi = 0;					\
									\
			for (int64_t r = 1; r < n; r++) {		\
				T v = x[r * I];				\
				int better;				\
									\
				if (best != best)			\
					break;				\
				if (v != v)				\
					better = 1;			\
				else if (j->max)			\
					better = j->last ? v >= best : v > best; \
				else					\
					better = j->last ? v <= best : v < best; \
				if (better) {				\
					best = v;			\
					bi = r;				\
				}					\
			}						\
			j->y[o * I + i] = bi;				\
		}							\
	}								\
}

/* A float32 line in AVX-512 where it gives the loop's index: 1 done. */
static int line_float(const struct arg_job *j, const float *x, int64_t *y)
{
	return kr_arg_line512(j->max, j->last, x, j->n, y);
}

#define ARG_NO_LINE(T)							\
static int line_##T(const struct arg_job *j, const T *x, int64_t *y)	\
{									\
	(void)j, (void)x, (void)y;					\
	return 0;							\
}
ARG_NO_LINE(double)
ARG_NO_LINE(int64_t)
ARG_NO_LINE(uint64_t)

ARG(float)
ARG(double)
ARG(int64_t)
ARG(uint64_t)

static int arg_reduce(struct rt_kctx *k, int max)
{
	int64_t dims[RT_MAX_RANK], outer, n, inner;
	struct arg_job j = { 0 };
	struct rt_value *x, *y;
	int axis, rc, owned, rank = 0;
	enum kr_work w;
	void *xb;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (x->dtype == IR_DTYPE_STRING)
		return rt_err(k, "input 0: numeric tensor expected");
	if (x->rank == 0)
		return rt_err(k, "input 0 is a scalar; an axis is needed");
	if ((rc = rt_axis(k, rt_attr_int(k, "axis", 0), x->rank, &axis)) < 0)
		return rc;
	kr_split(x, axis, &outer, &n, &inner);
	if (n == 0)
		return rt_err(k, "axis %d has no elements", axis);
	for (int i = 0; i < x->rank; i++) {
		if (i != axis)
			dims[rank++] = x->dims[i];
		else if (rt_attr_int(k, "keepdims", 1))
			dims[rank++] = 1;
	}
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_INT64, rank, dims)))
		return IR_ENOMEM;
	w = kr_work_of(x->dtype);
	if ((rc = kr_load(k, x, w, &xb, &owned)) < 0)
		return rc;
	j.max = max;
	j.last = (int)rt_attr_int(k, "select_last_index", 0);
	j.n = n;
	j.inner = inner;
	j.x = xb;
	j.y = y->data;
	rt_parallel_for(k, outer, 1 + 32768 / (n * inner + 1), w == KR_F32 ? arg_float :
			w == KR_F64 ? arg_double : w == KR_I64 ? arg_int64_t :
			arg_uint64_t, &j);
	if (owned)
		free(xb);
	return 0;
}

int kr_argmax(struct rt_kctx *k)
{
	return arg_reduce(k, 1);
}

int kr_argmin(struct rt_kctx *k)
{
	return arg_reduce(k, 0);
}

/* ---- CumSum, CumProd ------------------------------------------------- */

struct cum_job {
	int prod, excl, rev;
	int64_t n, inner;
	const void *x;
	void *y;
};

/* Row p of the output from the row before it in scan order (q): the
 * output row there plus (times) the input row q (exclusive) or p. */
#define CUM(T, U)							\
static void cum_##T(void *ctx, int64_t b, int64_t e)			\
{									\
	const struct cum_job *j = ctx;					\
	int64_t n = j->n, I = j->inner;					\
									\
	for (int64_t o = b; o < e; o++) {				\
		const T *x = (const T *)j->x + o * n * I;		\
		T *y = (T *)j->y + o * n * I;				\
									\
		for (int64_t s = 0; s < n; s++) {			\
			int64_t p = j->rev ? n - 1 - s : s;		\
			int64_t q = j->rev ? p + 1 : p - 1;		\
			T *yp = y + p * I;				\
			const T *xa = x + (j->excl ? q : p) * I;	\
			const T *yq = y + q * I;			\
									\
			if (s == 0) {					\
				for (int64_t i = 0; i < I; i++)		\
					yp[i] = j->excl ? (T)j->prod : x[p * I + i]; \
			} else if (j->prod) {				\
				for (int64_t i = 0; i < I; i++)		\
					yp[i] = (T)((U)yq[i] * (U)xa[i]); \
			} else {					\
				for (int64_t i = 0; i < I; i++)		\
					yp[i] = (T)((U)yq[i] + (U)xa[i]); \
			}						\
		}							\
	}								\
}

CUM(float, float)
CUM(double, double)
CUM(int64_t, uint64_t)
CUM(uint64_t, uint64_t)

static int cumulate(struct rt_kctx *k, int prod)
{
	struct cum_job j = { 0 };
	struct rt_value *x, *y;
	int64_t a, outer, n, inner;
	void *xb, *yb = NULL;
	int axis, rc, owned;
	enum kr_work w;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_int(k, 1, &a)) < 0)
		return rc;
	if (x->dtype == IR_DTYPE_STRING)
		return rt_err(k, "input 0: numeric tensor expected");
	if (x->rank == 0)
		return rt_err(k, "input 0 is a scalar; an axis is needed");
	if ((rc = rt_axis(k, a, x->rank, &axis)) < 0)
		return rc;
	if (!(y = rt_out_tensor(k, 0, x->dtype, x->rank, x->dims)))
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
	kr_split(x, axis, &outer, &n, &inner);
	j.prod = prod;
	j.excl = (int)rt_attr_int(k, "exclusive", 0);
	j.rev = (int)rt_attr_int(k, "reverse", 0);
	j.n = n;
	j.inner = inner;
	j.x = xb;
	j.y = yb;
	if (x->numel)
		rt_parallel_for(k, outer, 1 + 32768 / (n * inner + 1),
				w == KR_F32 ? cum_float : w == KR_F64 ? cum_double :
				w == KR_I64 ? cum_int64_t : cum_uint64_t, &j);
	if (yb != y->data)
		kr_store(y, w, yb);
cleanup:
	if (yb != y->data)
		free(yb);
	if (owned)
		free(xb);
	return rc;
}

int kr_cumsum(struct rt_kctx *k)
{
	return cumulate(k, 0);
}

int kr_cumprod(struct rt_kctx *k)
{
	return cumulate(k, 1);
}
