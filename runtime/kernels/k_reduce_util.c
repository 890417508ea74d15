/* k_reduce_util.c: helpers private to the reduce, softmax, sort and einsum
 * families: working-precision copies of tensors (float32 in place, other
 * floats as double, integers as int64/uint64), a transpose over runs of
 * contiguous elements, and the [outer, n, inner] split around an axis. */
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_reduce_int.h"

enum kr_work kr_work_of(int dtype)
{
	if (dtype == IR_DTYPE_FLOAT)
		return KR_F32;
	if (dtype == IR_DTYPE_UINT64)
		return KR_U64;
	if (rt_dtype_is_float(dtype))
		return KR_F64;
	return KR_I64;
}

size_t kr_work_size(enum kr_work w)
{
	return w == KR_F32 ? sizeof(float) : 8;
}

int kr_native(int dtype, enum kr_work w)
{
	return (w == KR_F32 && dtype == IR_DTYPE_FLOAT) ||
	       (w == KR_F64 && dtype == IR_DTYPE_DOUBLE) ||
	       (w == KR_I64 && dtype == IR_DTYPE_INT64) ||
	       (w == KR_U64 && dtype == IR_DTYPE_UINT64);
}

int kr_load(struct rt_kctx *k, const struct rt_value *t, enum kr_work w,
	    void **buf, int *owned)
{
	int64_t n = t->numel;

	*owned = 0;
	*buf = NULL;
	if (kr_native(t->dtype, w)) {
		*buf = t->data;
		return 0;
	}
	if (!(*buf = malloc((size_t)(n ? n : 1) * kr_work_size(w))))
		return rt_oom(k);
	*owned = 1;
	for (int64_t i = 0; i < n; i++) {
		switch (w) {
		case KR_F32: ((float *)*buf)[i] = (float)rt_load_f64(t->dtype, t->data, i); break;
		case KR_F64: ((double *)*buf)[i] = rt_load_f64(t->dtype, t->data, i); break;
		case KR_I64: ((int64_t *)*buf)[i] = rt_load_i64(t->dtype, t->data, i); break;
		case KR_U64: ((uint64_t *)*buf)[i] = (uint64_t)rt_load_i64(t->dtype, t->data, i); break;
		}
	}
	return 0;
}

void kr_store(struct rt_value *t, enum kr_work w, const void *src)
{
	if (kr_native(t->dtype, w)) {
		if (t->data != src)
			memcpy(t->data, src, (size_t)t->numel * kr_work_size(w));
		return;
	}
	for (int64_t i = 0; i < t->numel; i++) {
		switch (w) {
		case KR_F32: rt_store_f64(t->dtype, t->data, i, ((const float *)src)[i]); break;
		case KR_F64: rt_store_f64(t->dtype, t->data, i, ((const double *)src)[i]); break;
		case KR_I64: rt_store_i64(t->dtype, t->data, i, ((const int64_t *)src)[i]); break;
		case KR_U64: rt_store_i64(t->dtype, t->data, i, (int64_t)((const uint64_t *)src)[i]); break;
		}
	}
}

void kr_transpose(const void *src, void *dst, size_t es, int rank,
		  const int64_t *dims, const int *perm)
{
	int64_t sstride[RT_MAX_RANK], odims[RT_MAX_RANK], ostr[RT_MAX_RANK];
	int64_t idx[RT_MAX_RANK] = { 0 }, total = rt_numel(rank, dims);
	int64_t run, rstride;
	char *d = dst;
	const char *s = src;
	int r;

	if (total == 0)
		return;
	if (rank == 0) {
		memcpy(dst, src, es);
		return;
	}
	sstride[rank - 1] = 1;
	for (int i = rank - 2; i >= 0; i--)
		sstride[i] = sstride[i + 1] * dims[i + 1];
	for (int i = 0; i < rank; i++) {
		odims[i] = dims[perm[i]];
		ostr[i] = sstride[perm[i]];
	}
	/* the innermost output dim is walked as one run */
	r = rank - 1;
	run = odims[r];
	rstride = ostr[r];
	for (int64_t o = 0; o < total; o += run) {
		int64_t off = 0;

		for (int i = 0; i < r; i++)
			off += idx[i] * ostr[i];
		if (rstride == 1) {
			memcpy(d + o * (int64_t)es, s + off * (int64_t)es, (size_t)run * es);
		} else if (es == 4) {
			const uint32_t *sp = (const uint32_t *)s + off;
			uint32_t *dp = (uint32_t *)d + o;

			for (int64_t j = 0; j < run; j++)
				dp[j] = sp[j * rstride];
		} else if (es == 8) {
			const uint64_t *sp = (const uint64_t *)s + off;
			uint64_t *dp = (uint64_t *)d + o;

			for (int64_t j = 0; j < run; j++)
				dp[j] = sp[j * rstride];
		} else {
			for (int64_t j = 0; j < run; j++)
				memcpy(d + (o + j) * (int64_t)es,
				       s + (off + j * rstride) * (int64_t)es, es);
		}
		for (int i = r - 1; i >= 0; i--) {
			if (++idx[i] < odims[i])
				break;
			idx[i] = 0;
		}
	}
}

void kr_split(const struct rt_value *t, int axis, int64_t *outer, int64_t *n,
	      int64_t *inner)
{
	*outer = rt_numel(axis, t->dims);
	*n = t->rank ? t->dims[axis] : 1;
	*inner = t->rank ? rt_numel(t->rank - axis - 1, t->dims + axis + 1) : 1;
}
