/* k_shape_util.c: helpers of the shape, gather, slice, resize and layout
 * kernels (see k_shape_int.h): dtype-agnostic element moves (strings
 * duplicated), strided copies, int lists and axis lists. */
#include <stdlib.h>
#include <string.h>

#include "validators/k_shape_int.h"

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

int ks_strided_copy(struct rt_kctx *k, struct rt_value *dst,
		    const struct rt_value *src, int64_t src_off, int rank,
		    const int64_t *dims, const int64_t *sstrides)
{
	int64_t idx[RT_MAX_RANK] = { 0 }, total = rt_numel(rank, dims), o = 0;
	int64_t inner = rank ? dims[rank - 1] : 1;
	int64_t istride = rank ? sstrides[rank - 1] : 0;
	size_t es = rt_dtype_size(dst->dtype);
	int str = dst->dtype == IR_DTYPE_STRING;
	int rc;

	if (total == 0)
		return 0;
	while (o < total) {
		int64_t s = src_off;

		for (int i = 0; i < rank - 1; i++)
			s += idx[i] * sstrides[i];
		if (istride == 1 || str) {
			if (istride == 1) {
				if ((rc = ks_copy(k, dst, o, src, s, inner)) < 0)
					return rc;
			} else {
				for (int64_t j = 0; j < inner; j++)
					if ((rc = ks_copy(k, dst, o + j, src, s + j * istride, 1)) < 0)
						return rc;
			}
		} else {
			char *d = (char *)dst->data + o * (int64_t)es;
			const char *p = (const char *)src->data;

			switch (es) {
			case 1:
				for (int64_t j = 0; j < inner; j++)
					d[j] = p[s + j * istride];
				break;
			case 4:
				for (int64_t j = 0; j < inner; j++)
					memcpy(d + 4 * j, p + 4 * (s + j * istride), 4);
				break;
			default:
				for (int64_t j = 0; j < inner; j++)
					memcpy(d + (int64_t)es * j,
					       p + (int64_t)es * (s + j * istride), es);
			}
		}
		o += inner;
		for (int i = rank - 2; i >= 0; i--) {
			if (++idx[i] < dims[i])
				break;
			idx[i] = 0;
		}
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
