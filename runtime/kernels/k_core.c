/* k_core.c: kernels every graph leans on: Identity (tensors, sequences,
 * optionals) and Constant in all its attribute forms. */
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_int.h"

static int k_identity(struct rt_kctx *k)
{
	struct rt_value *v = rt_in(k, 0);

	if (!v)
		return rt_err(k, "input 0 is missing");
	return rt_out_set(k, 0, rt_value_ref(v));
}

/* value_float(s) / value_int(s) / value_string(s) forms of Constant. */
static int constant_scalars(struct rt_kctx *k, const struct ir_attr *a)
{
	int64_t n = 1;
	int list = a->type == IR_ATTR_FLOATS || a->type == IR_ATTR_INTS ||
		   a->type == IR_ATTR_STRINGS;
	int dtype = a->type == IR_ATTR_FLOAT || a->type == IR_ATTR_FLOATS ?
		    IR_DTYPE_FLOAT : a->type == IR_ATTR_INT || a->type == IR_ATTR_INTS ?
		    IR_DTYPE_INT64 : IR_DTYPE_STRING;
	struct rt_value *t;

	if (list)
		n = (int64_t)(a->type == IR_ATTR_FLOATS ? a->n_floats :
			      a->type == IR_ATTR_INTS ? a->n_ints : a->n_strings);
	if (!(t = rt_out_tensor(k, 0, dtype, list, &n)))
		return IR_ENOMEM;
	for (int64_t i = 0; i < n; i++) {
		switch (a->type) {
		case IR_ATTR_FLOAT: ((float *)t->data)[i] = a->f; break;
		case IR_ATTR_FLOATS: ((float *)t->data)[i] = a->floats[i]; break;
		case IR_ATTR_INT: ((int64_t *)t->data)[i] = a->i; break;
		case IR_ATTR_INTS: ((int64_t *)t->data)[i] = a->ints[i]; break;
		default: {
			const uint8_t *s = a->type == IR_ATTR_STRING ? a->s : a->strings[i];
			size_t len = a->type == IR_ATTR_STRING ? a->s_len : a->string_lens[i];
			char *c = malloc(len + 1);

			if (!c)
				return rt_oom(k);
			memcpy(c, s, len);
			c[len] = 0;
			((char **)t->data)[i] = c;
		}
		}
	}
	return 0;
}

static int k_constant(struct rt_kctx *k)
{
	static const char *const forms[] = {
		"value_float", "value_floats", "value_int", "value_ints",
		"value_string", "value_strings"
	};
	const struct ir_attr *a;
	struct rt_value *v;
	int rc;

	if (rt_attr(k, "value")) {
		if ((rc = rt_attr_tensor(k, "value", &v)) < 0)
			return rc;
		return rt_out_set(k, 0, v);
	}
	if ((a = rt_attr(k, "sparse_value")) && a->sparse)
		return rt_err(k, "sparse_value constants are not supported yet");
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++)
		if ((a = rt_attr(k, forms[i])))
			return constant_scalars(k, a);
	return rt_err(k, "no value attribute");
}

const struct rt_kernel rt_kernels_core[] = {
	{ "ai.onnx", "Constant", 1, RT_OPEN, k_constant },
	{ "ai.onnx", "Identity", 1, RT_OPEN, k_identity },
};
const size_t rt_n_kernels_core = sizeof(rt_kernels_core) / sizeof(rt_kernels_core[0]);
