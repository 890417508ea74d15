/* tensor_io.c: reading and writing TensorProto files (and the backend
 * tests' SequenceProto/OptionalProto values) as runtime values; .npy is
 * in npy.c.  Values read own their data. */
#include <stdlib.h>
#include <string.h>

#include "ir/infer.h"
#include "runtime/rt_int.h"
#include "runtime/tensor_io.h"

/* An IR tensor as a value owning its data (the IR tensor can go). */
static int from_ir_owned(struct rt_mem *mem, struct ir_tensor *t,
			 struct rt_value **out, struct ir_diag *d)
{
	struct rt_value *v;
	int rc;

	if ((rc = rt_value_from_ir(mem, t, &v, d)) < 0)
		return rc;
	if (v->flags & RT_VALUE_OWNS_DATA) {
		*out = v;
		return 0;
	}
	rc = rt_tensor_clone(mem, v, out, d);
	rt_value_unref(v);
	return rc;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

int rt_tensor_read_file(struct rt_mem *mem, const char *path,
			struct rt_value **out, struct ir_diag *d)
{
	struct ir_tensor *t;
	int rc;

	*out = NULL;
	if (ends_with(path, ".npy"))
		return rt_npy_read(mem, path, out, d);
	if ((rc = ir_tensor_read(path, &t, d)) < 0)
		return rc;
	rc = from_ir_owned(mem, t, out, d);
	ir_tensor_free(t);
	return rc;
}

static int from_data(struct rt_mem *mem, const struct ir_data *x,
		     struct rt_value **out, struct ir_diag *d)
{
	struct rt_value *v = NULL, *item;
	int rc;

	*out = NULL;
	switch (x->kind) {
	case IR_DATA_TENSOR:
		if (!x->tensor)
			return diag_error(d, "empty tensor value");
		return from_ir_owned(mem, x->tensor, out, d);
	case IR_DATA_SEQUENCE:
		if ((rc = rt_seq_new(0, &v, d)) < 0)
			return rc;
		for (size_t i = 0; i < x->n; i++) {
			if ((rc = from_data(mem, &x->items[i], &item, d)) < 0 ||
			    (rc = rt_seq_push(v, item, d)) < 0) {
				rt_value_unref(v);
				return rc;
			}
		}
		*out = v;
		return 0;
	case IR_DATA_OPTIONAL:
		if (!x->n)
			return rt_optional_new(0, RT_TENSOR, NULL, out, d);
		if ((rc = from_data(mem, &x->items[0], &item, d)) < 0)
			return rc;
		return rt_optional_new(0, (int)item->kind, item, out, d);
	default:
		return diag_error(d, "maps and sparse tensors cannot be read as inputs");
	}
}

int rt_value_read_file(struct rt_mem *mem, const char *path,
		       const struct ir_type *type, struct rt_value **out,
		       struct ir_diag *d)
{
	enum ir_data_kind kind = IR_DATA_TENSOR;
	struct ir_data x;
	int rc;

	*out = NULL;
	if (type && type->kind == IR_TYPE_SEQUENCE)
		kind = IR_DATA_SEQUENCE;
	else if (type && type->kind == IR_TYPE_OPTIONAL)
		kind = IR_DATA_OPTIONAL;
	if (kind == IR_DATA_TENSOR)
		return rt_tensor_read_file(mem, path, out, d);
	if ((rc = ir_data_read(path, kind, &x, d)) < 0)
		return rc;
	rc = from_data(mem, &x, out, d);
	ir_data_release(&x);
	return rc;
}

/* A value as the backend-test structure (tensors copied into IR tensors). */
static int to_data(const struct rt_value *v, struct ir_data *x, int depth,
		   struct ir_diag *d)
{
	int rc;

	memset(x, 0, sizeof(*x));
	if (depth > 8)
		return diag_error(d, "values nested too deeply to write");
	switch (v->kind) {
	case RT_TENSOR:
		x->kind = IR_DATA_TENSOR;
		return rt_value_to_ir(v, "", &x->tensor, d);
	case RT_SEQUENCE:
	case RT_OPTIONAL:
		x->kind = v->kind == RT_SEQUENCE ? IR_DATA_SEQUENCE : IR_DATA_OPTIONAL;
		if (v->n && !(x->items = calloc(v->n, sizeof(*x->items))))
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		for (size_t i = 0; i < v->n; i++) {
			x->n = i + 1;
			if ((rc = to_data(v->items[i], &x->items[i], depth + 1, d)) < 0)
				return rc;
		}
		return 0;
	default:
		return diag_error(d, "maps cannot be written to a file");
	}
}

int rt_value_write_pb(const struct rt_value *v, const char *name,
		      const char *path, struct ir_diag *d)
{
	struct ir_tensor *t = NULL;
	struct ir_data x = { 0 };
	uint8_t *buf = NULL;
	size_t len;
	int rc;

	if (v->kind == RT_TENSOR) {
		if ((rc = rt_value_to_ir(v, name, &t, d)) == 0)
			rc = ir_tensor_serialize(t, &buf, &len, d);
	} else if ((rc = to_data(v, &x, 0, d)) == 0) {
		rc = ir_data_serialize(&x, name, &buf, &len, d);
	}
	if (rc == 0)
		rc = ir_file_write_atomic(path, buf, len, d);
	free(buf);
	ir_tensor_free(t);
	ir_data_release(&x);
	return rc;
}
