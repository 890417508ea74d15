/* tensor_util.c: whole-tensor conversions the validator and the migrator
 * need outside any kernel: dtype conversion and dim permutation. */
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_int.h"

int rt_cast_raw(int from, const uint8_t *in, int to, uint8_t *out, size_t n,
		struct ir_diag *d)
{
	if (from == IR_DTYPE_STRING || to == IR_DTYPE_STRING || !rt_dtype_size(from) ||
	    !rt_dtype_size(to))
		return diag_error(d, "cannot convert %s to %s", ir_dtype_name(from),
				  ir_dtype_name(to));
	if (from == to) {
		memcpy(out, in, n * rt_dtype_size(from));
	} else if (from == IR_DTYPE_FLOAT && to == IR_DTYPE_FLOAT16) {
		rt_float_to_half_n((const float *)in, (uint16_t *)out, (int64_t)n);
	} else if (from == IR_DTYPE_FLOAT16 && to == IR_DTYPE_FLOAT) {
		rt_half_to_float_n((const uint16_t *)in, (float *)out, (int64_t)n);
	} else if (rt_dtype_is_int(from) || from == IR_DTYPE_BOOL) {
		for (size_t i = 0; i < n; i++)
			rt_store_i64(to, out, (int64_t)i, rt_load_i64(from, in, (int64_t)i));
	} else {
		for (size_t i = 0; i < n; i++)
			rt_store_f64(to, out, (int64_t)i, rt_load_f64(from, in, (int64_t)i));
	}
	return 0;
}

int rt_tensor_cast(struct rt_mem *mem, struct rt_value *t, int dtype,
		   struct rt_value **out, struct ir_diag *d)
{
	struct rt_value *v;
	int rc;

	*out = NULL;
	if (t->kind != RT_TENSOR)
		return diag_error(d, "only tensors can be converted");
	if (t->dtype == dtype) {
		*out = rt_value_ref(t);
		return 0;
	}
	if (t->dtype == IR_DTYPE_STRING || dtype == IR_DTYPE_STRING)
		return diag_error(d, "cannot convert %s to %s", ir_dtype_name(t->dtype),
				  ir_dtype_name(dtype));
	if ((rc = rt_tensor_new(mem, dtype, t->rank, t->dims, &v, d)) < 0)
		return rc;
	if ((rc = rt_cast_raw(t->dtype, t->data, dtype, v->data, (size_t)t->numel, d)) < 0) {
		rt_value_unref(v);
		return rc;
	}
	*out = v;
	return 0;
}

int rt_tensor_transpose(struct rt_mem *mem, const struct rt_value *t,
			const int *perm, struct rt_value **out,
			struct ir_diag *d)
{
	int64_t dims[RT_MAX_RANK], stride[RT_MAX_RANK], idx[RT_MAX_RANK] = { 0 };
	size_t es = rt_dtype_size(t->dtype);
	struct rt_value *v;
	int seen = 0, rc;

	*out = NULL;
	if (t->kind != RT_TENSOR || t->dtype == IR_DTYPE_STRING)
		return diag_error(d, "only numeric tensors can be transposed here");
	for (int i = 0; i < t->rank; i++) {
		if (perm[i] < 0 || perm[i] >= t->rank || (seen & (1 << perm[i])))
			return diag_error(d, "bad permutation for rank %d", t->rank);
		seen |= 1 << perm[i];
		dims[i] = t->dims[perm[i]];
	}
	stride[t->rank ? t->rank - 1 : 0] = 1;
	for (int i = t->rank - 2; i >= 0; i--)
		stride[i] = stride[i + 1] * t->dims[i + 1];
	if ((rc = rt_tensor_new(mem, t->dtype, t->rank, dims, &v, d)) < 0)
		return rc;
	for (int64_t o = 0; o < v->numel; o++) {
		int64_t src = 0;

		for (int i = 0; i < t->rank; i++)
			src += idx[i] * stride[perm[i]];
		memcpy((char *)v->data + o * (int64_t)es,
		       (const char *)t->data + src * (int64_t)es, es);
		for (int i = t->rank - 1; i >= 0; i--) {
			if (++idx[i] < dims[i])
				break;
			idx[i] = 0;
		}
	}
	*out = v;
	return 0;
}

void rt_fill_repeat(void *data, size_t es, int64_t n)
{
	size_t have = es, total = (size_t)(n > 0 ? n : 0) * es;

	while (have < total) {   /* doubling copies of what is filled */
		size_t part = have < total - have ? have : total - have;

		memcpy((char *)data + have, data, part);
		have += part;
	}
}
