/* topk.c: pass "topk-arg": TopK with k = 1 as ArgMax (largest = 1) or
 * ArgMin (largest = 0) along the axis, keepdims, for the indices, and for
 * the values ReduceMax/ReduceMin over the same axis, or GatherElements of
 * x at those indices.  ArgMax/ArgMin return the first index among equal
 * values (select_last_index 0, the default), as TopK does; `sorted` means
 * nothing for one element.  Both outputs are always produced (an unread
 * one is left to dead-code removal).  NaN: TopK's order of NaN is not
 * specified, the values then may differ. */
#include <stdio.h>
#include <string.h>

#include "rewriters/rw_int.h"

static int k_is_one(struct rw_ctx *c, const struct ir_node *n)
{
	int64_t k[1];
	size_t nk;

	if (rw_node_opset(c) < 10)
		return rw_attr_int(n, "k", 0) == 1;
	return n->n_inputs >= 2 && n->inputs[1] && rw_const_ints(c, n->inputs[1], k, 1, &nk) &&
	       nk == 1 && k[0] == 1;
}

/* ReduceMax/ReduceMin take dtype at the model's opset */
static int reduce_takes(const struct rw_ctx *c, int dt)
{
	if (dt == IR_DTYPE_INT8 || dt == IR_DTYPE_UINT8)
		return c->opset >= 12;
	if (dt == IR_DTYPE_BFLOAT16)
		return c->opset >= 13;
	return dt == IR_DTYPE_FLOAT || dt == IR_DTYPE_DOUBLE || dt == IR_DTYPE_FLOAT16 ||
	       dt == IR_DTYPE_INT32 || dt == IR_DTYPE_INT64 || dt == IR_DTYPE_UINT32 ||
	       dt == IR_DTYPE_UINT64;
}

/* variants: 0 max reduce, 1 min reduce, 2 max gather, 3 min gather */
static int vcheck(struct rw_ctx *c, const struct ir_node *n, int v)
{
	int largest = rw_attr_int(n, "largest", 1) != 0;

	if ((v & 1) == largest)
		return 0;
	return v < 2 ? reduce_takes(c, rw_node_dtype(c, n)) : c->opset >= 11;
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int dt = rw_node_dtype(c, n), r;
	int64_t axis;

	if (!n->n_inputs || !n->inputs[0] || n->n_outputs < 2 || !n->outputs[0] ||
	    !n->outputs[1]) {
		snprintf(why, size, "an input or output is absent");
		return 0;
	}
	if (!k_is_one(c, n)) {
		snprintf(why, size, "k is not a constant 1");
		return 0;
	}
	if (!dt || dt == IR_DTYPE_BOOL || dt == IR_DTYPE_STRING) {
		snprintf(why, size, "not for %s data", dt ? ir_dtype_name(dt) : "unknown");
		return 0;
	}
	if (!vcheck(c, n, 0) && !vcheck(c, n, 1) && !vcheck(c, n, 2) && !vcheck(c, n, 3)) {
		snprintf(why, size, "ReduceMax of %s data needs a newer opset than %lld "
			 "(GatherElements: 11)", ir_dtype_name(dt), (long long)c->opset);
		return 0;
	}
	return rw_node_axis(c, n, -1, 64, &r, &axis, why, size);
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *x = n->inputs[0];
	struct ir_node *arg;
	int r;
	int64_t axis;
	char why[64];

	rw_node_axis(c, n, -1, 64, &r, &axis, why, sizeof(why));
	rw_begin(c, n, &e);
	arg = rw_node(&e, v & 1 ? "ArgMin" : "ArgMax", NULL, &x, 1, n->outputs[1]);
	if (arg && (ir_node_set_int(arg, "axis", axis) < 0 ||
		    ir_node_set_int(arg, "keepdims", 1) < 0))
		e.failed = 1;
	if (v < 2) {
		rw_reduce(&e, v & 1 ? "ReduceMin" : "ReduceMax", x, &axis, 1, 1, n->outputs[0]);
	} else if (arg) {
		struct ir_value *in[2] = { x, n->outputs[1] };
		struct ir_node *g = rw_node(&e, "GatherElements", NULL, in, 2, n->outputs[0]);

		if (g && ir_node_set_int(g, "axis", axis) < 0)
			e.failed = 1;
	}
	return rw_end(&e, 0);
}

static const char *const matches[] = { "TopK", NULL };
static const char *const max_ops[] = { "ArgMax", "ReduceMax", NULL };
static const char *const min_ops[] = { "ArgMin", "ReduceMin", NULL };
static const char *const gmax_ops[] = { "ArgMax", "GatherElements", NULL };
static const char *const gmin_ops[] = { "ArgMin", "GatherElements", NULL };
static const struct rw_variant variants[] = {
	{ "argmax-reducemax", max_ops }, { "argmin-reducemin", min_ops },
	{ "argmax-gather", gmax_ops }, { "argmin-gather", gmin_ops },
};
RW_DECOMPOSITION(topk_arg, "topk-arg",
		 "TopK with k = 1 as ArgMax/ArgMin (first index of ties) and ReduceMax/ReduceMin or GatherElements",
		 matches, variants, check, vcheck, apply);
