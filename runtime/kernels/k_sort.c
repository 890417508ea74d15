/* k_sort.c: kernels of the sort family: TopK (k as attribute or input,
 * largest or smallest, ties broken by the lower index) and Unique (whole
 * tensor or slices along an axis, sorted or in order of appearance, with
 * first indices, inverse indices and counts), both over one stable merge
 * sort of index arrays. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_reduce_int.h"

/* <0 when item a goes before item b. */
typedef int (*sort_cmp_fn)(const void *ctx, int64_t a, int64_t b);

/* Stable sort of idx[0..n) (tmp: n scratch slots): insertion sort of
 * runs of 16, then bottom-up merges. */
static void stable_sort(int64_t *idx, int64_t *tmp, int64_t n, sort_cmp_fn cmp,
			const void *ctx)
{
	const int64_t run = 16;
	int64_t *src = idx, *dst = tmp;

	for (int64_t b = 0; b < n; b += run) {
		int64_t e = b + run < n ? b + run : n;

		for (int64_t i = b + 1; i < e; i++) {
			int64_t v = idx[i], j = i;

			for (; j > b && cmp(ctx, v, idx[j - 1]) < 0; j--)
				idx[j] = idx[j - 1];
			idx[j] = v;
		}
	}
	for (int64_t w = run; w < n; w *= 2) {
		for (int64_t b = 0; b < n; b += 2 * w) {
			int64_t m = b + w < n ? b + w : n;
			int64_t e = b + 2 * w < n ? b + 2 * w : n;
			int64_t i = b, j = m, o = b;

			while (i < m && j < e)
				dst[o++] = cmp(ctx, src[j], src[i]) < 0 ? src[j++] : src[i++];
			while (i < m)
				dst[o++] = src[i++];
			while (j < e)
				dst[o++] = src[j++];
		}
		{
			int64_t *t = src;

			src = dst;
			dst = t;
		}
	}
	if (src != idx)
		memcpy(idx, src, (size_t)n * sizeof(*idx));
}

/* ---- TopK ------------------------------------------------------------- */

struct topk_job {
	enum kr_work w;
	int largest;
	int64_t n, inner, k;
	const void *x;
	void *vals;                 /* k per slice, working type */
	int64_t *ind;
	int oom;
};

/* One slice: keys at base + r * stride. */
struct topk_key {
	const struct topk_job *j;
	int64_t base;
};

static int topk_cmp(const void *ctx, int64_t a, int64_t b)
{
	const struct topk_key *c = ctx;
	const struct topk_job *j = c->j;
	int64_t ia = c->base + a * j->inner, ib = c->base + b * j->inner;
	int r;

	switch (j->w) {
	case KR_F32: case KR_F64: {
		double x = j->w == KR_F32 ? ((const float *)j->x)[ia] : ((const double *)j->x)[ia];
		double y = j->w == KR_F32 ? ((const float *)j->x)[ib] : ((const double *)j->x)[ib];

		/* NaN above everything */
		r = isnan(x) ? (isnan(y) ? 0 : 1) : isnan(y) ? -1 : (x > y) - (x < y);
		break;
	}
	case KR_I64: {
		int64_t x = ((const int64_t *)j->x)[ia], y = ((const int64_t *)j->x)[ib];

		r = (x > y) - (x < y);
		break;
	}
	default: {
		uint64_t x = ((const uint64_t *)j->x)[ia], y = ((const uint64_t *)j->x)[ib];

		r = (x > y) - (x < y);
		break;
	}
	}
	return j->largest ? -r : r;
}

/* The k best of n in order into idx[0..k): one pass keeping them sorted;
 * an item equal to the k-th comes later, so it never displaces it. */
static void topk_select(int64_t *idx, int64_t n, int64_t k, const struct topk_key *key)
{
	int64_t have = 0;

	for (int64_t r = 0; r < n; r++) {
		int64_t p;

		if (have == k && topk_cmp(key, r, idx[k - 1]) >= 0)
			continue;
		p = have < k ? have++ : k - 1;
		for (; p > 0 && topk_cmp(key, r, idx[p - 1]) < 0; p--)
			idx[p] = idx[p - 1];
		idx[p] = r;
	}
}

/* topk_cmp(a, b) < 0 for float32 values a, b: NaN above everything,
 * then the order largest asks for. */
static inline int f32_before(float a, float b, int largest)
{
	if (largest)
		return a != a ? b == b : b == b && a > b;
	return a != a ? 0 : b != b || a < b;
}

/* topk_select for float32 keys, the k best values kept beside their
 * indices: the generic comparison converted both keys to double through
 * a switch for every element (TopK 1.8x onnxruntime). */
static void topk_select_f32(int64_t *idx, int64_t n, int64_t k, const struct topk_key *key)
{
	const float *x = (const float *)key->j->x + key->base;
	int64_t have = 0, st = key->j->inner;
	int largest = key->j->largest;
	float best[64];

	for (int64_t r = 0; r < n; r++) {
		float v = x[r * st];
		int64_t p;

		if (have == k && !f32_before(v, best[k - 1], largest))
			continue;
		p = have < k ? have++ : k - 1;
		for (; p > 0 && f32_before(v, best[p - 1], largest); p--) {
			idx[p] = idx[p - 1];
			best[p] = best[p - 1];
		}
		idx[p] = r;
		best[p] = v;
	}
}

/* A float32 key beside its index */
struct f32_item {
	float v;
	int64_t i;
};

/* a before b: f32_before's order, equal keys by index (a total order:
 * its sort is stable_sort's, whatever order the items come in) */
static inline int item_before(struct f32_item a, struct f32_item b, int largest)
{
	return f32_before(a.v, b.v, largest) || (!f32_before(b.v, a.v, largest) && a.i < b.i);
}

/* a[0..n) sorted by item_before (t: n items of room); the buffer that
 * holds the result.  Runs of 16 by insertion, then merges. */
static struct f32_item *sort_items(struct f32_item *a, struct f32_item *t, int64_t n, int largest)
{
	struct f32_item *src = a, *dst = t;

	for (int64_t b = 0; b < n; b += 16) {
		int64_t e = b + 16 < n ? b + 16 : n;

		for (int64_t i = b + 1; i < e; i++) {
			struct f32_item v = a[i];
			int64_t q = i;

			for (; q > b && item_before(v, a[q - 1], largest); q--)
				a[q] = a[q - 1];
			a[q] = v;
		}
	}
	for (int64_t w = 16; w < n; w *= 2) {
		struct f32_item *sw;

		for (int64_t b = 0; b < n; b += 2 * w) {
			int64_t m = b + w < n ? b + w : n, e = b + 2 * w < n ? b + 2 * w : n;
			int64_t i = b, q = m, o = b;

			while (i < m && q < e)
				dst[o++] = item_before(src[q], src[i], largest) ? src[q++] : src[i++];
			while (i < m)
				dst[o++] = src[i++];
			while (q < e)
				dst[o++] = src[q++];
		}
		sw = src;
		src = dst;
		dst = sw;
	}
	return src;
}

/* The k best of a[0..n) (0 < k < n) moved to a[0..k), in no order:
 * quickselect on item_before, the pivot the median of three. */
static void nth_items(struct f32_item *a, int64_t n, int64_t k, int largest)
{
	int64_t lo = 0, hi = n - 1;

	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
		struct f32_item p, t;

		if (item_before(a[hi], a[lo], largest))
			t = a[hi], a[hi] = a[lo], a[lo] = t;
		if (item_before(a[mid], a[lo], largest))
			t = a[mid], a[mid] = a[lo], a[lo] = t;
		if (item_before(a[hi], a[mid], largest))
			t = a[hi], a[hi] = a[mid], a[mid] = t;
		p = a[mid];
		while (i <= j) {
			while (item_before(a[i], p, largest))
				i++;
			while (item_before(p, a[j], largest))
				j--;
			if (i <= j) {
				t = a[i], a[i] = a[j], a[j] = t;
				i++;
				j--;
			}
		}
		/* [lo, j] before or at p, [i, hi] at or after it */
		if (k - 1 <= j)
			hi = j;
		else if (k - 1 >= i)
			lo = i;
		else
			break;
	}
}

/* The k best in order into idx, the float32 keys beside their indices:
 * the generic comparison's switch and double conversions on each step
 * made TabNet's sparsemax sort (TopK of all 64 features, 1024 rows) 1.3x
 * onnxruntime.  All n sorted where k is half of them or more; else the k
 * best selected first, then sorted (a PointNet++ grouping's 64 nearest
 * of 512: the sort of all took 2.5x onnxruntime's time).  a and t: n
 * items each. */
static void topk_sort_f32(int64_t *idx, struct f32_item *a, struct f32_item *t, int64_t n,
			  int64_t k, const struct topk_key *key)
{
	const float *x = (const float *)key->j->x + key->base;
	int64_t st = key->j->inner;
	int largest = key->j->largest;
	struct f32_item *s;

	for (int64_t r = 0; r < n; r++)
		a[r] = (struct f32_item){ x[r * st], r };
	if (k < n / 2) {
		nth_items(a, n, k, largest);
		n = k;
	}
	s = sort_items(a, t, n, largest);
	for (int64_t r = 0; r < k; r++)
		idx[r] = s[r].i;
}

static void topk_run(void *ctx, int64_t b, int64_t e)
{
	struct topk_job *j = ctx;
	int64_t *idx = malloc(2 * (size_t)(j->n ? j->n : 1) * sizeof(*idx));
	struct f32_item *items = j->w == KR_F32 ?
				 malloc(2 * (size_t)(j->n ? j->n : 1) * sizeof(*items)) : NULL;
	size_t es = kr_work_size(j->w);

	if (!idx || (j->w == KR_F32 && !items)) {
		j->oom = 1;
		free(idx);
		free(items);
		return;
	}
	for (int64_t s = b; s < e; s++) {
		int64_t o = s / j->inner, i = s % j->inner;
		struct topk_key key = { j, o * j->n * j->inner + i };

		if (j->k > 0 && j->k <= 64 && j->k * 16 < j->n && j->w == KR_F32) {
			topk_select_f32(idx, j->n, j->k, &key);
		} else if (j->k > 0 && j->k * 16 < j->n) {
			topk_select(idx, j->n, j->k, &key);
		} else if (j->w == KR_F32) {
			topk_sort_f32(idx, items, items + j->n, j->n, j->k, &key);
		} else {
			for (int64_t r = 0; r < j->n; r++)
				idx[r] = r;
			stable_sort(idx, idx + j->n, j->n, topk_cmp, &key);
		}
		for (int64_t r = 0; r < j->k; r++) {
			int64_t out = (o * j->k + r) * j->inner + i;

			j->ind[out] = idx[r];
			memcpy((char *)j->vals + out * (int64_t)es,
			       (const char *)j->x + (key.base + idx[r] * j->inner) * (int64_t)es, es);
		}
	}
	free(idx);
	free(items);
}

static int k_topk(struct rt_kctx *k)
{
	int64_t dims[RT_MAX_RANK], kk, outer, n, inner;
	struct topk_job j = { 0 };
	struct rt_value *x, *v, *ind;
	void *xb, *vb = NULL;
	int axis, rc, owned;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (x->dtype == IR_DTYPE_STRING || x->rank == 0)
		return rt_err(k, "input 0: numeric tensor of rank >= 1 expected");
	if (k->version < 10) {
		if (!rt_attr(k, "k"))
			return rt_err(k, "attribute 'k' is missing");
		kk = rt_attr_int(k, "k", 0);
	} else if ((rc = rt_in_int(k, 1, &kk)) < 0) {
		return rc;
	}
	if ((rc = rt_axis(k, rt_attr_int(k, "axis", -1), x->rank, &axis)) < 0)
		return rc;
	kr_split(x, axis, &outer, &n, &inner);
	if (kk < 0 || kk > n)
		return rt_err(k, "k = %lld outside [0, %lld] (axis %d)", (long long)kk,
			      (long long)n, axis);
	memcpy(dims, x->dims, (size_t)x->rank * sizeof(*dims));
	dims[axis] = kk;
	if (!(v = rt_out_tensor(k, 0, x->dtype, x->rank, dims)) ||
	    !(ind = rt_out_tensor(k, 1, IR_DTYPE_INT64, x->rank, dims)))
		return IR_ENOMEM;
	j.w = kr_work_of(x->dtype);
	if ((rc = kr_load(k, x, j.w, &xb, &owned)) < 0)
		return rc;
	if (kr_native(v->dtype, j.w)) {
		vb = v->data;
	} else if (!(vb = malloc((size_t)(v->numel ? v->numel : 1) * kr_work_size(j.w)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	j.largest = (int)rt_attr_int(k, "largest", 1);
	j.n = n;
	j.inner = inner;
	j.k = kk;
	j.x = xb;
	j.vals = vb;
	j.ind = ind->data;
	if (kk)
		rt_parallel_for(k, outer * inner, 1 + 4096 / (n + 1), topk_run, &j);
	if (j.oom) {
		rc = rt_oom(k);
		goto cleanup;
	}
	if (vb != v->data)
		kr_store(v, j.w, vb);
cleanup:
	if (vb != v->data)
		free(vb);
	if (owned)
		free(xb);
	return rc;
}

/* ---- Unique ------------------------------------------------------------ */

/* Items are slices along the axis (n of them, outer * inner elements). */
struct uq_items {
	const struct rt_value *x;
	int64_t n, outer, inner;
};

static int elem_cmp(const struct rt_value *x, int64_t a, int64_t b)
{
	int t = x->dtype;

	if (t == IR_DTYPE_STRING) {
		int r = strcmp(((char *const *)x->data)[a] ? ((char *const *)x->data)[a] : "",
			       ((char *const *)x->data)[b] ? ((char *const *)x->data)[b] : "");

		return (r > 0) - (r < 0);
	}
	if (t == IR_DTYPE_COMPLEX64 || t == IR_DTYPE_COMPLEX128) {
		for (int p = 0; p < 2; p++) {
			double u = t == IR_DTYPE_COMPLEX64 ? ((const float *)x->data)[2 * a + p] :
				   ((const double *)x->data)[2 * a + p];
			double v = t == IR_DTYPE_COMPLEX64 ? ((const float *)x->data)[2 * b + p] :
				   ((const double *)x->data)[2 * b + p];

			if (u != v)
				return (u > v) - (u < v);
		}
		return 0;
	}
	if (rt_dtype_is_float(t)) {
		double u = rt_load_f64(t, x->data, a), v = rt_load_f64(t, x->data, b);

		return isnan(u) ? !isnan(v) : isnan(v) ? -1 : (u > v) - (u < v);
	}
	if (t == IR_DTYPE_UINT64) {
		uint64_t u = ((const uint64_t *)x->data)[a], v = ((const uint64_t *)x->data)[b];

		return (u > v) - (u < v);
	}
	{
		int64_t u = rt_load_i64(t, x->data, a), v = rt_load_i64(t, x->data, b);

		return (u > v) - (u < v);
	}
}

static int item_cmp(const void *ctx, int64_t a, int64_t b)
{
	const struct uq_items *it = ctx;

	for (int64_t o = 0; o < it->outer; o++)
		for (int64_t i = 0; i < it->inner; i++) {
			int64_t base = o * it->n * it->inner + i;
			int r = elem_cmp(it->x, base + a * it->inner, base + b * it->inner);

			if (r)
				return r;
		}
	return 0;
}

static int first_cmp(const void *ctx, int64_t a, int64_t b)
{
	const int64_t *first = ctx;

	return (first[a] > first[b]) - (first[a] < first[b]);
}

/* Copy element si of x to element di of y (strings duplicated). */
static int copy_elem(struct rt_kctx *k, const struct rt_value *x, int64_t si,
		     struct rt_value *y, int64_t di)
{
	size_t es = rt_dtype_size(x->dtype);

	if (x->dtype == IR_DTYPE_STRING) {
		const char *s = ((char *const *)x->data)[si];

		if (s && !(((char **)y->data)[di] = strdup(s)))
			return rt_oom(k);
		return 0;
	}
	memcpy((char *)y->data + di * (int64_t)es, (const char *)x->data + si * (int64_t)es, es);
	return 0;
}

static int k_unique(struct rt_kctx *k)
{
	struct uq_items it;
	struct rt_value *x, *y, *o1, *o2, *o3;
	int64_t *idx = NULL, *grp = NULL, *first = NULL, *cnt = NULL, *pos = NULL;
	int64_t dims[RT_MAX_RANK], ng = 0, ydims[RT_MAX_RANK];
	int axis = -1, rc, yrank;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	it.x = x;
	if (rt_attr(k, "axis")) {
		if ((rc = rt_axis(k, rt_attr_int(k, "axis", 0), x->rank, &axis)) < 0)
			return rc;
		if (x->rank == 0)
			return rt_err(k, "axis given for a scalar input");
		kr_split(x, axis, &it.outer, &it.n, &it.inner);
	} else {
		it.outer = it.inner = 1;
		it.n = x->numel;
	}
	{
		size_t m = (size_t)(it.n ? it.n : 1);

		idx = malloc(2 * m * sizeof(*idx));
		grp = malloc(m * sizeof(*grp));
		first = malloc(m * sizeof(*first));
		cnt = malloc(m * sizeof(*cnt));
		pos = malloc(m * sizeof(*pos));
		if (!idx || !grp || !first || !cnt || !pos) {
			rc = rt_oom(k);
			goto cleanup;
		}
	}
	for (int64_t r = 0; r < it.n; r++)
		idx[r] = r;
	stable_sort(idx, idx + it.n, it.n, item_cmp, &it);
	/* groups in sorted order: first occurrence and count; grp[item] */
	for (int64_t r = 0; r < it.n; r++) {
		if (r == 0 || item_cmp(&it, idx[r - 1], idx[r]) != 0) {
			first[ng] = idx[r];
			cnt[ng++] = 0;
		}
		cnt[ng - 1]++;
		grp[idx[r]] = ng - 1;
	}
	/* pos: output order of the groups */
	for (int64_t g = 0; g < ng; g++)
		pos[g] = g;
	if (!rt_attr_int(k, "sorted", 1))
		stable_sort(pos, idx, ng, first_cmp, first);
	/* idx now maps a group to its output slot */
	for (int64_t s = 0; s < ng; s++)
		idx[pos[s]] = s;
	if (axis < 0) {
		yrank = 1;
		ydims[0] = ng;
	} else {
		yrank = x->rank;
		memcpy(ydims, x->dims, (size_t)x->rank * sizeof(*ydims));
		ydims[axis] = ng;
	}
	if (!(y = rt_out_tensor(k, 0, x->dtype, yrank, ydims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	for (int64_t s = 0; s < ng; s++)
		for (int64_t o = 0; o < it.outer; o++)
			for (int64_t i = 0; i < it.inner; i++)
				if ((rc = copy_elem(k, x, (o * it.n + first[pos[s]]) * it.inner + i,
						    y, (o * ng + s) * it.inner + i)) < 0)
					goto cleanup;
	dims[0] = ng;
	if (!(o1 = rt_out_tensor(k, 1, IR_DTYPE_INT64, 1, dims)) ||
	    !(o3 = rt_out_tensor(k, 3, IR_DTYPE_INT64, 1, dims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	for (int64_t s = 0; s < ng; s++) {
		((int64_t *)o1->data)[s] = first[pos[s]];
		((int64_t *)o3->data)[s] = cnt[pos[s]];
	}
	dims[0] = it.n;
	if (!(o2 = rt_out_tensor(k, 2, IR_DTYPE_INT64, 1, dims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	for (int64_t r = 0; r < it.n; r++)
		((int64_t *)o2->data)[r] = idx[grp[r]];
cleanup:
	free(idx);
	free(grp);
	free(first);
	free(cnt);
	free(pos);
	return rc;
}

const struct rt_kernel rt_kernels_sort[] = {
	{ "ai.onnx", "TopK", 1, RT_OPEN, k_topk },
	{ "ai.onnx", "Unique", 11, RT_OPEN, k_unique },
};
const size_t rt_n_kernels_sort = sizeof(rt_kernels_sort) / sizeof(rt_kernels_sort[0]);
