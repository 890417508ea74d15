/* onehot.c: pass "onehot": OneHot(indices, depth, values) with a constant
 * depth and constant [off, on] values as
 *   i' = Where(i < 0, i + depth, i)          (negative indices count back)
 *   y  = Where(Equal(Unsqueeze(i', axis), arange), on, off)
 * where arange is the constant 0..depth-1 shaped [1, .., depth, .., 1]
 * along the output's axis.  Indices out of [-depth, depth) match nothing
 * (all off), as the spec says.  Integer indices only. */
#include <stdio.h>
#include <stdlib.h>

#include "rewriters/rw_int.h"
#include "runtime/runtime.h"

#define DEPTH_MAX (1 << 20)

struct plan {
	int64_t depth, axis;
	int rank;                       /* of the indices */
	double off, on;
	int idt, vdt;                   /* indices' and values' dtypes */
};

static int is_int(int dt)
{
	return dt == IR_DTYPE_INT8 || dt == IR_DTYPE_INT16 || dt == IR_DTYPE_INT32 ||
	       dt == IR_DTYPE_INT64;
}

static int make_plan(struct rw_ctx *c, const struct ir_node *n, struct plan *p,
		     char *why, size_t size)
{
	const struct ir_vtype *ti, *tv;
	double d, vals[2];
	size_t k;

	if (n->n_inputs < 3 || !n->inputs[0] || !n->inputs[1] || !n->inputs[2] ||
	    !n->n_outputs || !n->outputs[0]) {
		snprintf(why, size, "an input or the output is absent");
		return 0;
	}
	ti = rw_type(c, n->inputs[0]);
	tv = rw_type(c, n->inputs[2]);
	if (!ti || !tv || ti->rank < 0 || ti->rank >= IR_INFER_MAX_RANK || !is_int(ti->dtype) ||
	    !tv->dtype) {
		snprintf(why, size, "the indices are not integers of known rank");
		return 0;
	}
	if (!rw_const_double(c, n->inputs[1], &d) || d < 1 || d > DEPTH_MAX || d != (int64_t)d) {
		snprintf(why, size, "depth is not a constant integer in [1, %d]", DEPTH_MAX);
		return 0;
	}
	if (!rw_const_doubles(c, n->inputs[2], vals, 2, &k) || k != 2) {
		snprintf(why, size, "values is not a constant [off, on]");
		return 0;
	}
	p->depth = (int64_t)d;
	p->rank = ti->rank;
	p->axis = rw_attr_int(n, "axis", -1);
	if (p->axis < 0)
		p->axis += ti->rank + 1;
	if (p->axis < 0 || p->axis > ti->rank) {
		snprintf(why, size, "axis out of range");
		return 0;
	}
	p->off = vals[0];
	p->on = vals[1];
	p->idt = ti->dtype;
	p->vdt = tv->dtype;
	return 1;
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	struct plan p;

	if (!make_plan(c, n, &p, why, size))
		return 0;
	if (c->opset < 11) {
		snprintf(why, size, "needs opset >= 11");
		return 0;
	}
	return 1;
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct plan p;
	struct rw_emit e;
	struct ir_value *i, *neg, *in[3], *eq;
	struct ir_node *w;
	int64_t dims[IR_INFER_MAX_RANK];
	double *ar;
	char why[64];

	(void)v;
	make_plan(c, n, &p, why, sizeof(why));
	rw_begin(c, n, &e);
	if (!(ar = malloc((size_t)p.depth * sizeof(*ar))))
		return rw_end(&e, ir_diag_error(c->d, IR_ENOMEM, "out of memory"));
	for (int64_t k = 0; k < p.depth; k++)
		ar[k] = (double)k;
	for (int k = 0; k <= p.rank; k++)
		dims[k] = k == p.axis ? p.depth : 1;
	i = n->inputs[0];
	neg = rw_op(&e, "Less", i, rw_scalar(&e, p.idt, 0));
	in[0] = neg;
	in[1] = rw_op(&e, "Add", i, rw_scalar(&e, p.idt, (double)p.depth));
	in[2] = i;
	w = rw_node(&e, "Where", NULL, in, 3, NULL);
	i = w ? w->outputs[0] : NULL;
	eq = rw_op(&e, "Equal", rw_unsqueeze(&e, i, &p.axis, 1),
		   rw_const(&e, p.idt, p.rank + 1, dims, ar));
	in[0] = eq;
	in[1] = rw_scalar(&e, p.vdt, p.on);
	in[2] = rw_scalar(&e, p.vdt, p.off);
	rw_node(&e, "Where", NULL, in, 3, n->outputs[0]);
	free(ar);
	return rw_end(&e, 0);
}

static const char *const matches[] = { "OneHot", NULL };
static const char *const ops[] = { "Less", "Add", "Where", "Unsqueeze", "Equal", NULL };
static const struct rw_variant variants[] = { { "equal-where", ops } };
RW_DECOMPOSITION(onehot, "onehot",
		 "OneHot with constant depth and values as Equal against a constant arange and Where",
		 matches, variants, check, NULL, apply);
