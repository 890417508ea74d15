/* k_gather_par.c: the element walks of the Elements ops (GatherElements,
 * ScatterElements, Scatter) and ScatterND's reductions, typed and over
 * the session's threads (k_gather.c calls them).  Each index element's
 * offset into data comes from an odometer over the indices' dims (one
 * division per chunk, not one per element and dim); gathers copy by
 * element size; scatters run typed loops (float32, float64, int32,
 * int64: their reductions computed as k_gather.c's double and int64
 * path rounds them, so the same bits) split over a dim other than the
 * axis, where two updates never meet in one element: each element of the
 * result gets its updates in the order of the indices, as written.
 * GCN-style models scatter millions of edge features (bench/README.md,
 * "The twelfth held-out set"). */
#include <string.h>

#include "runtime/kernels/k_gather_int.h"

struct eo_job {
	const int64_t *idx;
	int64_t *offs;
	const int64_t *xs, *is, *idims;
	int64_t d;                /* data's length along the axis */
	int rank, axis;
	int64_t bad;              /* the first index out of range, or -1 */
};

static void eo_bad(struct eo_job *j, int64_t t)
{
	int64_t cur = __atomic_load_n(&j->bad, __ATOMIC_RELAXED);

	while ((cur < 0 || t < cur) &&
	       !__atomic_compare_exchange_n(&j->bad, &cur, t, 0, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

static void eo_range(void *ctx, int64_t lo, int64_t hi)
{
	struct eo_job *j = ctx;
	int64_t c[RT_MAX_RANK], noax = 0, rem = lo, ax = j->xs[j->axis];
	int r = j->rank;

	for (int i = 0; i < r; i++) {
		c[i] = rem / j->is[i];
		rem %= j->is[i];
		if (i != j->axis)
			noax += c[i] * j->xs[i];
	}
	for (int64_t t = lo; t < hi; t++) {
		int64_t v = j->idx[t];

		if (v < -j->d || v >= j->d) {
			eo_bad(j, t);
			return;
		}
		j->offs[t] = noax + (v < 0 ? v + j->d : v) * ax;
		for (int i = r - 1; i >= 0; i--) {
			if (i != j->axis)
				noax += j->xs[i];
			if (++c[i] < j->idims[i])
				break;
			if (i != j->axis)
				noax -= j->idims[i] * j->xs[i];
			c[i] = 0;
		}
	}
}

int kg_elem_offsets(struct rt_kctx *k, const struct rt_value *x, const struct rt_value *ind,
		    int axis, int64_t *idx, int64_t n)
{
	int64_t xs[RT_MAX_RANK], is[RT_MAX_RANK];
	struct eo_job j = { idx, idx, xs, is, ind->dims, x->dims[axis], x->rank, axis, -1 };

	ks_strides(x->rank, x->dims, xs);
	ks_strides(ind->rank, ind->dims, is);
	rt_parallel_for(k, n, 16384, eo_range, &j);
	if (j.bad >= 0) {
		/* (the index itself: the chunk stopped there, unchanged) */
		int64_t v = idx[j.bad], d = x->dims[axis];

		return rt_err(k, "index %lld out of range [%lld, %lld]", (long long)v,
			      (long long)-d, (long long)(d - 1));
	}
	return 0;
}

/* ---- GatherElements ---------------------------------------------------- */

struct ge_job {
	const char *x;
	char *y;
	const int64_t *offs;
	size_t es;
};

static void ge_range(void *ctx, int64_t lo, int64_t hi)
{
	const struct ge_job *j = ctx;

	switch (j->es) {
	case 4:
		for (int64_t t = lo; t < hi; t++)
			((uint32_t *)(void *)j->y)[t] = ((const uint32_t *)(const void *)j->x)[j->offs[t]];
		break;
	case 8:
		for (int64_t t = lo; t < hi; t++)
			((uint64_t *)(void *)j->y)[t] = ((const uint64_t *)(const void *)j->x)[j->offs[t]];
		break;
	default:
		for (int64_t t = lo; t < hi; t++)
			memcpy(j->y + t * j->es, j->x + j->offs[t] * j->es, j->es);
	}
}

void kg_gather_elements(struct rt_kctx *k, const struct rt_value *x, struct rt_value *y,
			const int64_t *offs)
{
	struct ge_job j = { x->data, y->data, offs, rt_dtype_size(x->dtype) };

	rt_parallel_for(k, y->numel, 16384, ge_range, &j);
}

/* ---- scatter ----------------------------------------------------------- */

/* y[o] = y[o] <r> u[t], typed: the float reductions give what
 * k_gather.c's double arithmetic rounded to the dtype gives (a sum,
 * product, max or min of two floats is exact in double, or rounds once
 * the same way); the integer ones wrap as its int64 path does. */
#define KG_RED(T, r, a, b) \
	((r) == KG_ADD ? (T)((a) + (b)) : (r) == KG_MUL ? (T)((a) * (b)) : \
	 (r) == KG_MAX ? ((a) > (b) ? (a) : (b)) : ((a) < (b) ? (a) : (b)))
#define KG_IRED(T, U, r, a, b) \
	((r) == KG_ADD ? (T)((U)(a) + (U)(b)) : (r) == KG_MUL ? (T)((U)(a) * (U)(b)) : \
	 (r) == KG_MAX ? ((a) > (b) ? (a) : (b)) : ((a) < (b) ? (a) : (b)))

int kg_typed(int dtype, int r)
{
	if (r == KG_NONE)
		return dtype != IR_DTYPE_STRING;
	return dtype == IR_DTYPE_FLOAT || dtype == IR_DTYPE_DOUBLE || dtype == IR_DTYPE_INT32 ||
	       dtype == IR_DTYPE_INT64;
}

/* Updates [t0, t0 + n) of u into y at offs[t] (offs NULL: at o0 + t -
 * t0), in order. */
static void apply_run(int dtype, int r, size_t es, void *y, const void *u, const int64_t *offs,
		      int64_t o0, int64_t t0, int64_t n)
{
#define KG_LOOP(T, EXPR) \
	do { \
		T *yt = y; \
		const T *ut = u; \
		for (int64_t i = 0; i < n; i++) { \
			int64_t t = t0 + i, o = offs ? offs[t] : o0 + i; \
			T a = yt[o], b = ut[t]; \
			yt[o] = EXPR; \
		} \
	} while (0)
	if (r == KG_NONE) {
		for (int64_t i = 0; i < n; i++) {
			int64_t t = t0 + i, o = offs ? offs[t] : o0 + i;

			memcpy((char *)y + o * (int64_t)es, (const char *)u + t * (int64_t)es, es);
		}
		return;
	}
	switch (dtype) {
	case IR_DTYPE_FLOAT:
		KG_LOOP(float, KG_RED(float, r, a, b));
		break;
	case IR_DTYPE_DOUBLE:
		KG_LOOP(double, KG_RED(double, r, a, b));
		break;
	case IR_DTYPE_INT32:
		KG_LOOP(int32_t, KG_IRED(int32_t, uint32_t, r, a, b));
		break;
	default:   /* IR_DTYPE_INT64 */
		KG_LOOP(int64_t, KG_IRED(int64_t, uint64_t, r, a, b));
		break;
	}
#undef KG_LOOP
}

struct se_job {
	int dtype, r;
	size_t es;
	void *y;
	const void *u;
	const int64_t *offs;
	int64_t blocks, len, inner;   /* the split dim: len positions of inner
				       * elements, blocks of len * inner */
};

static void se_range(void *ctx, int64_t lo, int64_t hi)
{
	const struct se_job *j = ctx;

	for (int64_t b = 0; b < j->blocks; b++) {
		if (j->inner == 1) {   /* the positions' updates one run */
			apply_run(j->dtype, j->r, j->es, j->y, j->u, j->offs, 0, b * j->len + lo,
				  hi - lo);
			continue;
		}
		for (int64_t c = lo; c < hi; c++)
			apply_run(j->dtype, j->r, j->es, j->y, j->u, j->offs, 0,
				  (b * j->len + c) * j->inner, j->inner);
	}
}

void kg_scatter_elements(struct rt_kctx *k, struct rt_value *y, const struct rt_value *ind,
			 const struct rt_value *u, int axis, const int64_t *offs, int r)
{
	struct se_job j = { y->dtype, r, rt_dtype_size(y->dtype), y->data, u->data, offs, 1, 1,
			    1 };
	int d = -1;

	/* the innermost dim other than the axis with more than one position:
	 * updates at different positions along it write different elements */
	for (int i = ind->rank - 1; i >= 0 && d < 0; i--)
		if (i != axis && ind->dims[i] > 1)
			d = i;
	if (d < 0 || !ind->numel) {
		apply_run(j.dtype, r, j.es, j.y, j.u, offs, 0, 0, ind->numel);
		return;
	}
	for (int i = d + 1; i < ind->rank; i++)
		j.inner *= ind->dims[i];
	j.len = ind->dims[d];
	j.blocks = ind->numel / (j.len * j.inner);
	rt_parallel_for(k, j.len, 1 + 16384 / (j.blocks * j.inner), se_range, &j);
}

struct snd_job {
	int dtype, r;
	size_t es;
	void *y;
	const void *u;
	const int64_t *offs;
	int64_t ns, slice;
};

/* Positions [lo, hi) of each slice, the slices in order. */
static void snd_range(void *ctx, int64_t lo, int64_t hi)
{
	const struct snd_job *j = ctx;

	for (int64_t t = 0; t < j->ns; t++)
		apply_run(j->dtype, j->r, j->es, j->y, j->u, NULL, j->offs[t] + lo,
			  t * j->slice + lo, hi - lo);
}

void kg_scatter_nd(struct rt_kctx *k, struct rt_value *y, const struct rt_value *u,
		   const int64_t *offs, int64_t ns, int64_t slice, int r)
{
	struct snd_job j = { y->dtype, r, rt_dtype_size(y->dtype), y->data, u->data, offs, ns,
			     slice };

	if (slice && ns)
		rt_parallel_for(k, slice, 1 + 16384 / ns, snd_range, &j);
}
