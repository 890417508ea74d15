/* tensor_conv.c: conversion between IR tensors (initializers, Constant
 * attributes, TensorProto files) and runtime tensors: numeric payloads are
 * viewed in place when aligned and byte-sized, else copied (4-bit types
 * unpacked to a byte each); strings are copied. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_int.h"

static int fill_dims(struct rt_value *v, const struct ir_tensor *t,
		     struct ir_diag *d)
{
	if (t->n_dims > RT_MAX_RANK)
		return diag_error(d, "tensor '%s' has rank %zu (at most %d supported)",
				  ir_s(t->name), t->n_dims, RT_MAX_RANK);
	v->rank = (int)t->n_dims;
	v->numel = 1;
	for (size_t i = 0; i < t->n_dims; i++) {
		v->dims[i] = t->dims[i];
		v->numel *= t->dims[i];
	}
	return 0;
}

static int from_strings(struct rt_mem *mem, const struct ir_tensor *t,
			struct rt_value **out, struct ir_diag *d)
{
	int64_t n = ir_tensor_numel(t);
	int64_t dims[RT_MAX_RANK];
	char **s;
	int rc;

	if (n < 0 || t->n_dims > RT_MAX_RANK)
		return diag_error(d, "tensor '%s': bad shape", ir_s(t->name));
	if ((int64_t)t->n_typed != n)
		return diag_error(d, "tensor '%s': %zu strings for %lld elements",
				  ir_s(t->name), t->n_typed, (long long)n);
	for (size_t i = 0; i < t->n_dims; i++)
		dims[i] = t->dims[i];
	if ((rc = rt_tensor_new(mem, IR_DTYPE_STRING, (int)t->n_dims, dims, out, d)) < 0)
		return rc;
	s = (*out)->data;
	for (int64_t i = 0; i < n; i++) {
		size_t len = t->string_lens ? t->string_lens[i] : 0;

		if (!(s[i] = malloc(len + 1))) {
			rt_value_unref(*out);
			*out = NULL;
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		}
		if (len)
			memcpy(s[i], t->strings[i], len);
		s[i][len] = 0;
	}
	return 0;
}

/* Nibble i of packed 4-bit codes as one byte (sign-extended for int4). */
static void unpack4(const uint8_t *raw, int sgn, int64_t n, uint8_t *o)
{
	for (int64_t i = 0; i < n; i++) {
		unsigned nib = (raw[i / 2] >> (4 * (i & 1))) & 15;

		o[i] = (uint8_t)(sgn && nib >= 8 ? nib - 16 : nib);
	}
}

static int from_ir(struct rt_mem *mem, struct ir_tensor *t, int packed,
		   struct rt_value **out, struct ir_diag *d)
{
	const struct ir_dtype_info *di = ir_dtype_get(t->dtype);
	const uint8_t *raw = NULL;
	size_t len = 0, es;
	struct rt_value *v;
	int64_t n;
	int rc;

	*out = NULL;
	if (!di)
		return diag_error(d, "tensor '%s' has unknown dtype %d",
				  ir_s(t->name), t->dtype);
	if (t->dtype == IR_DTYPE_STRING)
		return from_strings(mem, t, out, d);
	if ((n = ir_tensor_numel(t)) < 0)
		return diag_error(d, "tensor '%s': bad shape", ir_s(t->name));
	if (n && (rc = ir_tensor_data(t, &raw, &len, d)) < 0)
		return rc;
	if ((int64_t)len != ir_dtype_raw_size(t->dtype, n))
		return diag_error(d, "tensor '%s': %zu payload bytes for %lld %s elements",
				  ir_s(t->name), len, (long long)n,
				  ir_dtype_name(t->dtype));
	es = rt_dtype_size(t->dtype);
	if ((di->bits >= 8 || (packed && di->bits == 4)) && raw &&
	    ((uintptr_t)raw % es) == 0) {
		if (!(v = rt_value_alloc()))
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		v->refs = 1;
		v->kind = RT_TENSOR;
		v->dtype = t->dtype;
		v->data = (void *)raw;
		v->flags = RT_VALUE_READONLY | (di->bits == 4 ? RT_VALUE_PACKED : 0);
		if ((rc = fill_dims(v, t, d)) < 0) {
			free(v);
			return rc;
		}
		*out = v;
		return 0;
	}
	{
		int64_t dims[RT_MAX_RANK];

		if (t->n_dims > RT_MAX_RANK)
			return diag_error(d, "tensor '%s' has rank %zu (at most %d supported)",
					  ir_s(t->name), t->n_dims, RT_MAX_RANK);
		for (size_t i = 0; i < t->n_dims; i++)
			dims[i] = t->dims[i];
		if ((rc = rt_tensor_new(mem, t->dtype, (int)t->n_dims, dims, &v, d)) < 0)
			return rc;
	}
	if (di->bits == 4) {
		unpack4(raw, t->dtype == IR_DTYPE_INT4, n, v->data);
		/* the value holds its own copy: a computed payload (codes of a
		 * weight-only quantization, ir/derived.c) need not stay
		 * materialized beside it; it is computed again if read */
		if (t->storage == IR_STORE_DERIVED)
			ir_tensor_release_data(t);
	} else if (n) {
		memcpy(v->data, raw, len);
	}
	*out = v;
	return 0;
}

int rt_value_from_ir(struct rt_mem *mem, struct ir_tensor *t,
		     struct rt_value **out, struct ir_diag *d)
{
	return from_ir(mem, t, 0, out, d);
}

int rt_value_from_ir_packed(struct rt_mem *mem, struct ir_tensor *t,
			    struct rt_value **out, struct ir_diag *d)
{
	return from_ir(mem, t, 1, out, d);
}

int rt_value_unpack(struct rt_mem *mem, struct rt_value *v, struct ir_diag *d)
{
	uint8_t *o;

	if (!(v->flags & RT_VALUE_PACKED))
		return 0;
	if (rt_mem_charge(mem, v->numel, d) < 0)
		return IR_ENOMEM;
	if (!(o = rt_big_alloc((size_t)v->numel + 1))) {
		if (mem)
			mem->cur -= v->numel;
		return ir_diag_error(d, IR_ENOMEM, "out of memory allocating %lld bytes",
				     (long long)v->numel);
	}
	unpack4(v->data, v->dtype == IR_DTYPE_INT4, v->numel, o);
	/* the packed bytes were a view (the model's); nothing to free */
	v->data = o;
	v->flags = (v->flags & ~(RT_VALUE_PACKED | RT_VALUE_READONLY)) | RT_VALUE_OWNS_DATA;
	v->nbytes = v->numel;
	v->mem = mem;
	return 0;
}

int rt_value_to_ir(const struct rt_value *v, const char *name,
		   struct ir_tensor **out, struct ir_diag *d)
{
	const struct ir_dtype_info *di = ir_dtype_get(v->dtype);
	struct ir_tensor *t;
	int64_t raw;

	*out = NULL;
	if (v->kind != RT_TENSOR || !di)
		return diag_error(d, "value '%s' is not a tensor", name);
	if (!(t = calloc(1, sizeof(*t))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	t->present = IR_TENSOR_HAS_DTYPE;
	t->dtype = v->dtype;
	t->n_dims = (size_t)v->rank;
	if (!(t->name = strdup(name)) ||
	    !(t->dims = malloc((size_t)(v->rank ? v->rank : 1) * sizeof(*t->dims))))
		goto oom;
	for (int i = 0; i < v->rank; i++)
		t->dims[i] = v->dims[i];
	if (v->dtype == IR_DTYPE_STRING) {
		char *const *s = v->data;

		t->storage = IR_STORE_TYPED;
		t->field = IR_FIELD_STRING;
		t->n_typed = (size_t)v->numel;
		if (!(t->strings = calloc((size_t)v->numel + 1, sizeof(char *))) ||
		    !(t->string_lens = calloc((size_t)v->numel + 1, sizeof(size_t))))
			goto oom;
		for (int64_t i = 0; i < v->numel; i++) {
			if (!(t->strings[i] = strdup(s[i] ? s[i] : "")))
				goto oom;
			t->string_lens[i] = strlen(t->strings[i]);
		}
		*out = t;
		return 0;
	}
	raw = ir_dtype_raw_size(v->dtype, v->numel);
	t->storage = IR_STORE_RAW;
	t->present |= IR_TENSOR_HAS_RAW;
	t->raw_len = (size_t)raw;
	if (!(t->raw = calloc(1, (size_t)raw + 1)))
		goto oom;
	if (di->bits == 4) {
		const uint8_t *s = v->data;

		for (int64_t i = 0; i < v->numel; i++)
			t->raw[i / 2] |= (uint8_t)((s[i] & 15) << (4 * (i & 1)));
	} else if (raw) {
		memcpy(t->raw, v->data, (size_t)raw);
	}
	*out = t;
	return 0;
oom:
	ir_tensor_free(t);
	return ir_diag_error(d, IR_ENOMEM, "out of memory");
}
