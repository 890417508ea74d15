/* k_optional.c: kernels of the optional family: Optional (wrap a value, or
 * make an empty optional of the type attribute), OptionalGetElement and
 * OptionalHasElement; from version 18 the last two also take plain tensors
 * and sequences (and HasElement an absent input). */
#include "runtime/rt_int.h"

static int wrap(struct rt_kctx *k, int dtype, int kind, struct rt_value *content)
{
	struct rt_value *o;
	struct ir_diag sub;
	char w[RT_WHERE_SIZE];
	int rc;

	ir_diag_init(&sub);
	if ((rc = rt_optional_new(dtype, kind, content, &o, &sub)) < 0)
		return ir_diag_error(k->d, rc, "%s: %s", rt_node_where(k->node, w),
				     sub.msg);
	return rt_out_set(k, 0, o);
}

static int k_optional(struct rt_kctx *k)
{
	struct rt_value *v = rt_in(k, 0);
	const struct ir_attr *a = rt_attr(k, "type");
	const struct ir_type *t = a && a->type == IR_ATTR_TYPE_PROTO ? a->tp : NULL;

	if (v) {
		if (v->kind != RT_TENSOR && v->kind != RT_SEQUENCE)
			return rt_err(k, "cannot wrap a %s in an optional",
				      v->kind == RT_OPTIONAL ? "optional" : "map");
		return wrap(k, v->dtype, (int)v->kind, rt_value_ref(v));
	}
	if (!t)
		return rt_err(k, "no input and no 'type' attribute");
	if (t->kind == IR_TYPE_TENSOR)
		return wrap(k, t->elem_type, RT_TENSOR, NULL);
	if (t->kind == IR_TYPE_SEQUENCE && t->inner && t->inner->kind == IR_TYPE_TENSOR)
		return wrap(k, t->inner->elem_type, RT_SEQUENCE, NULL);
	return rt_err(k, "attribute 'type' must be a tensor or a sequence of tensors");
}

static int k_optional_get_element(struct rt_kctx *k)
{
	struct rt_value *v = rt_in(k, 0);

	if (!v)
		return rt_err(k, "input 0 is missing");
	if (v->kind != RT_OPTIONAL) {
		if (k->version < 18)
			return rt_err(k, "input is not an optional (version %d)", k->version);
		return rt_out_set(k, 0, rt_value_ref(v));
	}
	if (!v->n)
		return rt_err(k, "the optional input is empty");
	return rt_out_set(k, 0, rt_value_ref(v->items[0]));
}

static int k_optional_has_element(struct rt_kctx *k)
{
	struct rt_value *v = rt_in(k, 0), *t;
	int has;

	if (!v && k->version < 18)
		return rt_err(k, "input 0 is missing");
	if (v && v->kind != RT_OPTIONAL && k->version < 18)
		return rt_err(k, "input is not an optional (version %d)", k->version);
	has = v && (v->kind != RT_OPTIONAL || v->n > 0);
	if (!(t = rt_out_tensor(k, 0, IR_DTYPE_BOOL, 0, NULL)))
		return IR_ENOMEM;
	*(uint8_t *)t->data = (uint8_t)has;
	return 0;
}

const struct rt_kernel rt_kernels_optional[] = {
	{ "ai.onnx", "Optional", 15, RT_OPEN, k_optional },
	{ "ai.onnx", "OptionalGetElement", 15, RT_OPEN, k_optional_get_element },
	{ "ai.onnx", "OptionalHasElement", 15, RT_OPEN, k_optional_has_element },
};
const size_t rt_n_kernels_optional =
	sizeof(rt_kernels_optional) / sizeof(rt_kernels_optional[0]);
