/* k_shape_util.c: helpers of the shape, gather, slice, resize and layout
 * kernels (see k_shape_int.h): dtype-agnostic element moves (strings
 * duplicated), strided copies, int lists and axis lists. */
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_shape_int.h"

void ks_strides(int rank, const int64_t *dims, int64_t *strides)
{
	int64_t s = 1;

	for (int i = rank - 1; i >= 0; i--) {
		strides[i] = s;
		s *= dims[i];
	}
}

int ks_copy(struct rt_kctx *k, struct rt_value *dst, int64_t di,
	    const struct rt_value *src, int64_t si, int64_t n)
{
	size_t es = rt_dtype_size(dst->dtype);

	if (n <= 0)
		return 0;
	if (dst->dtype != IR_DTYPE_STRING) {
		memmove((char *)dst->data + di * (int64_t)es,
			(const char *)src->data + si * (int64_t)es, (size_t)n * es);
		return 0;
	}
	for (int64_t j = 0; j < n; j++) {
		char **d = (char **)dst->data + di + j;
		const char *s = ((char *const *)src->data)[si + j];
		char *c = strdup(s ? s : "");

		if (!c)
			return rt_oom(k);
		free(*d);
		*d = c;
	}
	return 0;
}

int ks_zero(struct rt_kctx *k, struct rt_value *dst, int64_t i)
{
	size_t es = rt_dtype_size(dst->dtype);

	if (dst->dtype == IR_DTYPE_STRING) {
		char **d = (char **)dst->data + i;
		char *c = strdup("");

		if (!c)
			return rt_oom(k);
		free(*d);
		*d = c;
		return 0;
	}
	memset((char *)dst->data + i * (int64_t)es, 0, es);
	return 0;
}

struct strided {
	char *dst;
	const char *src;
	int64_t off, inner, istride;
	int rank;                 /* dims before the innermost one */
	const int64_t *dims, *st;
	size_t es;
};

/* Output rows [begin, end) of a numeric strided copy (threads split rows). */
static void strided_rows(void *arg, int64_t begin, int64_t end)
{
	const struct strided *c = arg;
	size_t es = c->es;

	for (int64_t row = begin; row < end; row++) {
		int64_t rem = row, s = c->off;
		char *d = c->dst + row * c->inner * (int64_t)es;

		for (int i = c->rank - 1; i >= 0; i--) {
			s += rem % c->dims[i] * c->st[i];
			rem /= c->dims[i];
		}
		if (c->istride == 1) {
			memcpy(d, c->src + s * (int64_t)es, (size_t)c->inner * es);
		} else if (c->istride == 0 && (es == 4 || es == 8)) {
			/* a broadcast along the row (Expand of [n, 1]): one value */
			char v[8];

			memcpy(v, c->src + s * (int64_t)es, es);
			for (int64_t j = 0; j < c->inner; j++)
				memcpy(d + (int64_t)es * j, v, es == 4 ? 4 : 8);
		} else if (es == 8) {
			for (int64_t j = 0; j < c->inner; j++)
				memcpy(d + 8 * j, c->src + 8 * (s + j * c->istride), 8);
		} else if (es == 4) {
			for (int64_t j = 0; j < c->inner; j++)
				memcpy(d + 4 * j, c->src + 4 * (s + j * c->istride), 4);
		} else {
			for (int64_t j = 0; j < c->inner; j++)
				memcpy(d + (int64_t)es * j,
				       c->src + (int64_t)es * (s + j * c->istride), es);
		}
	}
}

int ks_strided_copy(struct rt_kctx *k, struct rt_value *dst,
		    const struct rt_value *src, int64_t src_off, int rank,
		    const int64_t *dims_in, const int64_t *strides_in)
{
	int64_t md[RT_MAX_RANK + 1], ms[RT_MAX_RANK + 1];
	const int64_t *dims = md, *sstrides = ms;
	int64_t total, inner, rows;
	struct strided c;
	int mr = 0;

	if (rt_numel(rank, dims_in) == 0)
		return 0;
	/* dims whose source elements follow one another merged into one (a
	 * channel shuffle's Transpose [0, 2, 1, 3, 4] copies rows of H x W,
	 * not of W: a row's index arithmetic and memcpy call per 28 floats
	 * made it 4x onnxruntime) */
	for (int i = 0; i < rank; i++) {
		if (dims_in[i] == 1)
			continue;
		if (mr > 0 && ms[mr - 1] == strides_in[i] * dims_in[i]) {
			md[mr - 1] *= dims_in[i];
			ms[mr - 1] = strides_in[i];
			continue;
		}
		md[mr] = dims_in[i];
		ms[mr++] = strides_in[i];
	}
	if (mr == 0 && rank > 0) {   /* every dim 1: one element */
		md[0] = 1;
		ms[0] = 1;
		mr = 1;
	}
	rank = mr;
	total = rt_numel(rank, dims);
	inner = rank ? dims[rank - 1] : 1;
	c = (struct strided){ dst->data, src->data, src_off, inner, rank ? sstrides[rank - 1] : 0,
			      rank ? rank - 1 : 0, dims, sstrides, rt_dtype_size(dst->dtype) };
	rows = total / inner;
	if (dst->dtype != IR_DTYPE_STRING) {
		if (total >= 65536 && rows > 1)
			rt_parallel_for(k, rows, 1 + 16384 / inner, strided_rows, &c);
		else
			strided_rows(&c, 0, rows);
		return 0;
	}
	for (int64_t row = 0; row < rows; row++) {
		int64_t rem = row, s = src_off;
		int rc;

		for (int i = c.rank - 1; i >= 0; i--) {
			s += rem % dims[i] * sstrides[i];
			rem /= dims[i];
		}
		for (int64_t j = 0; j < inner; j++)
			if ((rc = ks_copy(k, dst, row * inner + j, src, s + j * c.istride, 1)) < 0)
				return rc;
	}
	return 0;
}

int ks_ints(struct rt_kctx *k, size_t i, const char *attr, int64_t **vals,
	    size_t *n, int *present)
{
	const int64_t *a;

	*vals = NULL;
	*n = 0;
	*present = 0;
	if (rt_in(k, i)) {
		*present = 1;
		return rt_in_ints(k, i, vals, n);
	}
	if (attr && (a = rt_attr_ints(k, attr, n)) != NULL) {
		*present = 1;
		if (!(*vals = malloc((*n ? *n : 1) * sizeof(int64_t))))
			return rt_oom(k);
		if (*n)
			memcpy(*vals, a, *n * sizeof(int64_t));
	}
	return 0;
}

int ks_axes(struct rt_kctx *k, const int64_t *axes, size_t n, int rank,
	    int *out)
{
	if (n > RT_MAX_RANK)
		return rt_err(k, "%zu axes (at most %d supported)", n, RT_MAX_RANK);
	for (size_t i = 0; i < n; i++) {
		if (axes[i] < -rank || axes[i] >= rank)
			return rt_err(k, "axis %lld out of range for rank %d",
				      (long long)axes[i], rank);
		out[i] = (int)(axes[i] < 0 ? axes[i] + rank : axes[i]);
		for (size_t j = 0; j < i; j++)
			if (out[j] == out[i])
				return rt_err(k, "axis %lld repeated", (long long)axes[i]);
	}
	return 0;
}
