/* checks.c: preconditions passes share (see rw_int.h): float data of a
 * known dtype, an opset where the emitted ops broadcast, outputs nobody
 * reads. */
#include <stdio.h>
#include <string.h>

#include "rewriters/rw_int.h"

int rw_dtype_is_float(int dt)
{
	return dt == IR_DTYPE_FLOAT || dt == IR_DTYPE_DOUBLE ||
	       dt == IR_DTYPE_FLOAT16 || dt == IR_DTYPE_BFLOAT16;
}

int rw_value_used(const struct ir_value *v)
{
	if (!v)
		return 0;
	if (v->n_uses)
		return 1;
	return v->graph && ir_graph_is_output(v->graph, v);
}

int rw_check_float_node(struct rw_ctx *c, const struct ir_node *n,
			int min_opset, char *why, size_t size)
{
	if (!rw_check_float_input(c, n, min_opset, why, size))
		return 0;
	for (size_t i = 1; i < n->n_outputs; i++)
		if (rw_value_used(n->outputs[i])) {
			snprintf(why, size, "output %zu is used", i);
			return 0;
		}
	return 1;
}

int rw_check_float_input(struct rw_ctx *c, const struct ir_node *n,
			 int min_opset, char *why, size_t size)
{
	int dt = rw_node_dtype(c, n);

	if (!n->n_inputs || !n->inputs[0] || !n->n_outputs || !n->outputs[0]) {
		snprintf(why, size, "input 0 or output 0 is absent");
		return 0;
	}
	if (!dt) {
		snprintf(why, size, "the input's dtype is unknown");
		return 0;
	}
	if (!rw_dtype_is_float(dt)) {
		snprintf(why, size, "the decomposition is for float data, not %s",
			 ir_dtype_name(dt));
		return 0;
	}
	if (c->opset < min_opset) {
		snprintf(why, size, "needs default-domain opset >= %d (broadcasting "
			 "binary ops), the model has %lld", min_opset, (long long)c->opset);
		return 0;
	}
	return 1;
}

int rw_node_axis(struct rw_ctx *c, const struct ir_node *n, int64_t dflt, int max_rank,
		 int *rank, int64_t *axis, char *why, size_t size)
{
	int r = rw_rank(c, n->inputs[0]);
	int64_t a = rw_attr_int(n, "axis", dflt);

	if (r < 1 || r > max_rank) {
		snprintf(why, size, "the input's rank is unknown");
		return 0;
	}
	if (a < 0)
		a += r;
	if (a < 0 || a >= r) {
		snprintf(why, size, "axis out of range");
		return 0;
	}
	*rank = r;
	*axis = a;
	return 1;
}
