/* synth.c: a seed for an op no backend node case covers, made from its
 * schema alone: the data inputs (the op's data constraint) float32 of
 * shape [2,3,4,5] with seeded values in [-1, 1), other required inputs
 * small tensors of their type (rois of a box, else [1] holding 1),
 * required attributes given plausible values.  The interpreter decides
 * whether the result is a valid model (build.c); when it is not, the op
 * has no seed and is reported as such. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe_int.h"
#include "runtime/inputs.h"

static int pick_dtype(rules_dtypes m)
{
	static const int order[] = {
		IR_DTYPE_FLOAT, IR_DTYPE_INT64, IR_DTYPE_INT32, IR_DTYPE_FLOAT16,
		IR_DTYPE_DOUBLE, IR_DTYPE_UINT8, IR_DTYPE_INT8, IR_DTYPE_BOOL,
	};

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (m & RULES_DTYPE_BIT(order[i]))
			return order[i];
	for (int t = 1; t < IR_DTYPE_COUNT; t++)
		if ((m & RULES_DTYPE_BIT(t)) && t != IR_DTYPE_STRING)
			return t;
	return 0;
}

static struct rt_value *tensor(int dtype, int rank, const int64_t *dims, uint64_t *state)
{
	struct rt_value *t;
	struct ir_diag d;

	ir_diag_init(&d);
	if (rt_tensor_new(NULL, dtype, rank, dims, &t, &d) < 0)
		return NULL;
	for (int64_t i = 0; i < t->numel; i++) {
		double u = rt_rand_unit(state);

		if (dtype == IR_DTYPE_FLOAT || dtype == IR_DTYPE_FLOAT16 ||
		    dtype == IR_DTYPE_DOUBLE || dtype == IR_DTYPE_BFLOAT16)
			rt_value_set_f64(t, i, 2 * u - 1);
		else if (dtype == IR_DTYPE_BOOL)
			rt_value_set_f64(t, i, u < 0.5);
		else
			rt_value_set_f64(t, i, 1 + (int)(u * 6));
	}
	return t;
}

static int set_required(struct ir_node *n, const struct ir_op_attr *a)
{
	static const int64_t two[] = { 2, 2 }, shape[] = { 2, 3 };

	switch (a->type) {
	case IR_ATTR_INT:
		if (!strcmp(a->name, "to") || !strcmp(a->name, "dtype"))
			return ir_node_set_int(n, a->name, IR_DTYPE_FLOAT);
		return ir_node_set_int(n, a->name, 2);
	case IR_ATTR_FLOAT:
		return ir_node_set_float(n, a->name, 1.0f);
	case IR_ATTR_INTS:
		if (!strcmp(a->name, "shape"))
			return ir_node_set_ints(n, a->name, shape, 2);
		return ir_node_set_ints(n, a->name, two, 2);
	case IR_ATTR_STRING:
		return ir_node_set_string(n, a->name, "");
	default:
		return -1;   /* a graph or tensor: no generic value */
	}
}

struct probe_spec *probe_spec_synth(const struct ir_op_schema *s, uint64_t seed)
{
	static const int64_t data_dims[] = { 2, 3, 4, 5 }, one[] = { 1 }, box[] = { 1, 5 };
	static const double box_v[] = { 0, 0, 0, 2, 2 };
	struct probe_spec *sp = calloc(1, sizeof(*sp));
	const char *dc = probe_data_constraint(s);
	int data_dt = 0;
	uint64_t state = seed ^ 0x70726f6265ull;
	size_t n_in = 0;

	if (!sp || !(sp->name = strdup("synthesized")) ||
	    !(sp->node = ir_node_create(s->name, s->domain, "n")))
		goto fail;
	sp->own = s;
	for (size_t i = 0; i < s->n_attrs; i++)
		if (s->attrs[i].required) {
			if (set_required(sp->node, &s->attrs[i]) < 0)
				goto fail;
			sp->n_attrs_set++;
		}
	if (dc)
		data_dt = pick_dtype(probe_type_dtypes(s, dc));
	for (size_t i = 0; i < s->n_inputs; i++) {
		const struct ir_op_formal *f = &s->inputs[i];
		int count = f->variadic ? 2 : 1;

		if (f->optional)
			break;
		for (int k = 0; k < count; k++) {
			struct rt_value *t;

			if (n_in >= PROBE_MAX_IO)
				goto fail;
			if (dc && !strcmp(f->type, dc)) {
				if (!data_dt)
					goto fail;
				t = tensor(data_dt, 4, data_dims, &state);
			} else if (!strcmp(f->name, "rois")) {
				t = tensor(IR_DTYPE_FLOAT, 2, box, &state);
				for (int j = 0; t && j < 5; j++)
					rt_value_set_f64(t, j, box_v[j]);
			} else {
				int dt = pick_dtype(probe_type_dtypes(s, f->type));

				if (!dt)
					goto fail;
				t = tensor(dt, 1, one, &state);
				if (t)
					rt_value_set_f64(t, 0, 1);
			}
			if (!t)
				goto fail;
			sp->in[n_in] = t;
			sp->is_const[n_in] = i > 0;
			n_in++;
		}
	}
	sp->n_in = n_in;
	sp->n_out = (size_t)s->min_outputs ? (size_t)s->min_outputs : 1;
	if (sp->n_out > PROBE_MAX_IO)
		goto fail;
	for (size_t i = 0; i < sp->n_out; i++)
		sp->out_present[i] = 1;
	return sp;
fail:
	probe_spec_free(sp);
	return NULL;
}
