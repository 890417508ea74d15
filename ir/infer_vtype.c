/* infer_vtype.c: helpers on inferred value types: copying, constants
 * (integer, float, sequence elements), dims, the vtype of an initializer
 * or a declared ValueInfo type, and text formatting. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/infer_int.h"

/* ---- vtype helpers -------------------------------------------------- */

void infer_vt_unknown(struct ir_vtype *t)
{
	memset(t, 0, sizeof(*t));
	t->rank = -1;
}

void infer_vt_release(struct ir_vtype *t)
{
	free(t->cval);
	free(t->fval);
	for (size_t i = 0; t->elems && i < t->n_elems; i++)
		infer_vt_release(&t->elems[i]);
	free(t->elems);
	infer_vt_unknown(t);
}

/* Set t's known elements to copies of e[0..n) (shapes only). */
int infer_vt_set_elems(struct ir_vtype *t, const struct ir_vtype *e, size_t n)
{
	struct ir_vtype *a = calloc(n + 1, sizeof(*a));

	if (!a)
		return IR_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		infer_vt_unknown(&a[i]);
		a[i].dtype = e[i].dtype;
		a[i].rank = e[i].rank;
		memcpy(a[i].dims, e[i].dims, sizeof(e[i].dims));
	}
	for (size_t i = 0; t->elems && i < t->n_elems; i++)
		infer_vt_release(&t->elems[i]);
	free(t->elems);
	t->elems = a;
	t->n_elems = n;
	t->has_elems = 1;
	return 0;
}

int infer_vt_copy(struct ir_vtype *dst, const struct ir_vtype *src)
{
	*dst = *src;
	dst->cval = NULL;
	dst->has_const = 0;
	dst->n_const = 0;
	dst->fval = NULL;
	dst->has_fconst = 0;
	dst->n_fconst = 0;
	dst->elems = NULL;
	dst->has_elems = 0;
	dst->n_elems = 0;
	if (src->has_elems && infer_vt_set_elems(dst, src->elems, src->n_elems) < 0)
		return IR_ENOMEM;
	if (src->has_fconst && infer_vt_set_fconst(dst, src->fval, src->n_fconst) < 0) {
		infer_vt_release(dst);
		return IR_ENOMEM;
	}
	if (src->has_const && infer_vt_set_const(dst, src->cval, src->n_const) < 0) {
		infer_vt_release(dst);
		return IR_ENOMEM;
	}
	return 0;
}

/* Replace *dst (n_dst, has) with a copy of n elements of esize bytes;
 * constants over IR_INFER_MAX_CONST elements are dropped, not an error. */
static int set_array(void **dst, size_t *n_dst, int *has, const void *v,
		     size_t n, size_t esize)
{
	void *c;

	free(*dst);
	*dst = NULL;
	*has = 0;
	*n_dst = 0;
	if (n > IR_INFER_MAX_CONST)
		return 0;
	if (!(c = malloc((n ? n : 1) * esize)))
		return IR_ENOMEM;
	if (n)
		memcpy(c, v, n * esize);
	*dst = c;
	*n_dst = n;
	*has = 1;
	return 0;
}

int infer_vt_set_fconst(struct ir_vtype *t, const double *v, size_t n)
{
	void *p = t->fval;
	int rc = set_array(&p, &t->n_fconst, &t->has_fconst, v, n, sizeof(*v));

	t->fval = p;
	return rc;
}

int infer_vt_set_const(struct ir_vtype *t, const struct ir_vdim *v, size_t n)
{
	void *p = t->cval;
	int rc = set_array(&p, &t->n_const, &t->has_const, v, n, sizeof(*v));

	t->cval = p;
	return rc;
}

int infer_vt_const_int(const struct ir_vtype *t, size_t i, int64_t *out)
{
	if (!t || !t->has_const || i >= t->n_const ||
	    t->cval[i].kind != IR_VDIM_VALUE)
		return 0;
	*out = t->cval[i].value;
	return 1;
}

/* 1 when every element is a known integer (and fits cap). */
int infer_vt_const_ints(const struct ir_vtype *t, int64_t *out, size_t cap,
			size_t *n)
{
	if (!t || !t->has_const || t->n_const > cap)
		return 0;
	for (size_t i = 0; i < t->n_const; i++) {
		if (t->cval[i].kind != IR_VDIM_VALUE)
			return 0;
		out[i] = t->cval[i].value;
	}
	*n = t->n_const;
	return 1;
}

int64_t infer_vt_numel(const struct ir_vtype *t)
{
	int64_t n = 1;

	if (!t || t->rank < 0)
		return -1;
	for (int i = 0; i < t->rank; i++) {
		if (t->dims[i].kind != IR_VDIM_VALUE || t->dims[i].value < 0)
			return -1;
		if (t->dims[i].value && n > INT64_MAX / t->dims[i].value)
			return -1;
		n *= t->dims[i].value;
	}
	return n;
}

struct ir_vdim infer_dim_val(int64_t v)
{
	struct ir_vdim d = { IR_VDIM_VALUE, v, NULL };

	return d;
}

struct ir_vdim infer_dim_unknown(void)
{
	struct ir_vdim d = { IR_VDIM_UNKNOWN, 0, NULL };

	return d;
}

int infer_dim_eq(const struct ir_vdim *a, const struct ir_vdim *b)
{
	if (a->kind != b->kind || a->kind == IR_VDIM_UNKNOWN)
		return 0;
	if (a->kind == IR_VDIM_VALUE)
		return a->value == b->value;
	return !strcmp(a->param, b->param);
}

int infer_is_int_dtype(int dtype)
{
	switch (dtype) {
	case IR_DTYPE_INT64: case IR_DTYPE_INT32: case IR_DTYPE_INT16:
	case IR_DTYPE_INT8: case IR_DTYPE_UINT8: case IR_DTYPE_UINT16:
	case IR_DTYPE_UINT32: case IR_DTYPE_UINT64: case IR_DTYPE_BOOL:
		return 1;
	default:
		return 0;
	}
}

static int64_t load_int(int dtype, const uint8_t *p)
{
	switch (dtype) {
	case IR_DTYPE_INT64: { int64_t v; memcpy(&v, p, 8); return v; }
	case IR_DTYPE_UINT64: { uint64_t v; memcpy(&v, p, 8); return (int64_t)v; }
	case IR_DTYPE_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
	case IR_DTYPE_UINT32: { uint32_t v; memcpy(&v, p, 4); return v; }
	case IR_DTYPE_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
	case IR_DTYPE_UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
	case IR_DTYPE_INT8: return (int8_t)p[0];
	default: return p[0];
	}
}

/* The values of a float or double tensor of n elements as out->fval. */
static int tensor_floats(struct ir_tensor *t, int64_t n, struct ir_vtype *out,
			 struct ir_diag *d)
{
	size_t esz = t->dtype == IR_DTYPE_FLOAT ? 4 : 8, len;
	const uint8_t *data;
	double *v;
	int rc;

	if ((rc = ir_tensor_data(t, &data, &len, d)) < 0)
		return rc;
	if (len < (size_t)n * esz)
		return ir_diag_error(d, IR_EINVAL, "tensor '%s': payload has %zu bytes, %lld expected",
				     ir_s(t->name), len, (long long)n * (long long)esz);
	if (!(v = malloc((n ? (size_t)n : 1) * sizeof(*v))))
		return IR_ENOMEM;
	for (int64_t i = 0; i < n; i++) {
		if (esz == 4) {
			float f;

			memcpy(&f, data + (size_t)i * 4, 4);
			v[i] = f;
		} else {
			memcpy(&v[i], data + (size_t)i * 8, 8);
		}
	}
	out->fval = v;
	out->n_fconst = (size_t)n;
	out->has_fconst = 1;
	return 0;
}

/* Type of a tensor; integer payloads up to IR_INFER_MAX_CONST elements
 * become a constant. */
int infer_tensor_vtype(struct ir_tensor *t, struct ir_vtype *out,
		       struct ir_diag *d)
{
	int64_t n;
	const uint8_t *data;
	size_t len, esz;
	struct ir_vdim *v;
	int rc;

	infer_vt_unknown(out);
	out->dtype = t->dtype;
	if (t->n_dims > IR_INFER_MAX_RANK)
		return 0;
	out->rank = (int)t->n_dims;
	for (size_t i = 0; i < t->n_dims; i++)
		out->dims[i] = infer_dim_val(t->dims[i]);
	n = ir_tensor_numel(t);
	if ((t->dtype == IR_DTYPE_FLOAT || t->dtype == IR_DTYPE_DOUBLE) &&
	    n >= 0 && n <= IR_INFER_MAX_CONST)
		return tensor_floats(t, n, out, d);
	if (!infer_is_int_dtype(t->dtype) || n < 0 || n > IR_INFER_MAX_CONST)
		return 0;
	esz = ir_dtype_get(t->dtype)->bits / 8;
	if ((rc = ir_tensor_data(t, &data, &len, d)) < 0)
		return rc;
	if (len < (size_t)n * esz)
		return ir_diag_error(d, IR_EINVAL, "tensor '%s': payload has %zu bytes, %lld expected",
				     ir_s(t->name), len, (long long)n * (long long)esz);
	if (!(v = malloc((n ? (size_t)n : 1) * sizeof(*v))))
		return IR_ENOMEM;
	for (int64_t i = 0; i < n; i++)
		v[i] = infer_dim_val(load_int(t->dtype, data + (size_t)i * esz));
	out->cval = v;
	out->n_const = (size_t)n;
	out->has_const = 1;
	return 0;
}

void infer_vt_declared(const struct ir_type *ty, struct ir_vtype *t)
{
	infer_vt_unknown(t);
	/* An optional reads as its element; a sequence of tensors as its
	 * element type with is_seq set. */
	while (ty && ty->kind == IR_TYPE_OPTIONAL)
		ty = ty->inner;
	if (ty && ty->kind == IR_TYPE_SEQUENCE) {
		t->is_seq = 1;
		ty = ty->inner;
		if (ty && ty->kind == IR_TYPE_MAP && IR_HAS(ty, IR_TYPE_HAS_ELEM) &&
		    ty->inner && ty->inner->kind == IR_TYPE_TENSOR &&
		    IR_HAS(ty->inner, IR_TYPE_HAS_ELEM)) {
			t->map_key = ty->elem_type;
			t->dtype = ty->inner->elem_type;
			return;
		}
	}
	if (!ty || ty->kind != IR_TYPE_TENSOR)
		return;
	if (IR_HAS(ty, IR_TYPE_HAS_ELEM))
		t->dtype = ty->elem_type;
	if (!IR_HAS(ty, IR_TYPE_HAS_SHAPE) || ty->shape.n_dims > IR_INFER_MAX_RANK)
		return;
	t->rank = (int)ty->shape.n_dims;
	for (size_t i = 0; i < ty->shape.n_dims; i++) {
		const struct ir_dim *dd = &ty->shape.dims[i];

		if (dd->kind == IR_DIM_VALUE)
			t->dims[i] = infer_dim_val(dd->value);
		else if (dd->kind == IR_DIM_PARAM && dd->param && *dd->param &&
			 !infer_sym_is_sum(dd->param)) {   /* a sum's name is ours */
			t->dims[i].kind = IR_VDIM_PARAM;
			t->dims[i].param = dd->param;
		}
	}
}

void infer_fmt_dims(const struct ir_vtype *t, char *buf, size_t size)
{
	size_t o = 0;

	if (!size)
		return;
	buf[0] = 0;
	if (t->rank < 0) {
		snprintf(buf, size, "[*]");
		return;
	}
	o += (size_t)snprintf(buf + o, size - o, "[");
	for (int i = 0; i < t->rank && o < size; i++) {
		const struct ir_vdim *dd = &t->dims[i];

		if (dd->kind == IR_VDIM_VALUE)
			o += (size_t)snprintf(buf + o, size - o, "%s%lld", i ? "," : "",
					      (long long)dd->value);
		else
			o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? "," : "",
					      dd->kind == IR_VDIM_PARAM ? dd->param : "?");
	}
	if (o < size)
		snprintf(buf + o, size - o, "]");
}

void ir_vtype_format(const struct ir_vtype *t, char *buf, size_t size)
{
	char dims[256];

	if (t->is_seq && t->map_key) {
		snprintf(buf, size, "seq(map(%s,%s))", ir_dtype_name(t->map_key),
			 t->dtype ? ir_dtype_name(t->dtype) : "?");
		return;
	}
	infer_fmt_dims(t, dims, sizeof(dims));
	snprintf(buf, size, t->is_seq ? "seq(%s%s)" : "%s%s",
		 t->dtype ? ir_dtype_name(t->dtype) : "?", dims);
}

