/* gather_elements.c: pass "gather-elements": GatherElements(data, idx,
 * axis) along a static axis of length L <= 1024 as a one-hot sum: with
 * idx unsqueezed after the axis ([.., P, 1, ..]) and data before it
 * ([.., 1, L, ..]),
 *   hit[.., p, c, ..] = 1 where idx = c or idx = c - L (negative indices)
 *   y = ReduceSum(hit data) over the new axis
 * hit by Equal (Cast, Add), or for targets without Equal in float
 * arithmetic relu(1 - (idx - c)^2) + relu(1 - (idx - c + L)^2) (exact for
 * integer indices).  Data and indices must have equal dims off the axis
 * (the spec allows larger data).  Integer data (int32, int64) is exact;
 * for float data every other element along the axis is multiplied by 0,
 * so an inf or NaN there makes the result NaN (approximate variants). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/rw_int.h"

#define MAX_RANK IR_INFER_MAX_RANK
#define MAX_LEN 1024

struct geo {
	int rank;
	int64_t axis, len;
	int idt;                    /* the indices' dtype */
};

static int is_int(int dt)
{
	return dt == IR_DTYPE_INT32 || dt == IR_DTYPE_INT64;
}

static int geometry(struct rw_ctx *c, const struct ir_node *n, struct geo *g, char *why,
		    size_t size)
{
	const struct ir_vtype *d, *i;
	int dt = rw_node_dtype(c, n);

	if (n->n_inputs < 2 || !n->inputs[0] || !n->inputs[1] || !n->n_outputs || !n->outputs[0]) {
		snprintf(why, size, "an input or the output is absent");
		return 0;
	}
	if (!rw_dtype_is_float(dt) && !is_int(dt)) {
		snprintf(why, size, "not for %s data", dt ? ir_dtype_name(dt) : "unknown");
		return 0;
	}
	d = rw_type(c, n->inputs[0]);
	i = rw_type(c, n->inputs[1]);
	if (!d || !i || d->rank < 1 || d->rank != i->rank || d->rank >= MAX_RANK ||
	    !is_int(i->dtype)) {
		snprintf(why, size, "data and integer indices of one known rank needed");
		return 0;
	}
	g->rank = d->rank;
	g->idt = i->dtype;
	g->axis = rw_attr_int(n, "axis", 0);
	if (g->axis < 0)
		g->axis += g->rank;
	if (g->axis < 0 || g->axis >= g->rank) {
		snprintf(why, size, "axis out of range");
		return 0;
	}
	if (d->dims[g->axis].kind != IR_VDIM_VALUE || d->dims[g->axis].value < 1 ||
	    d->dims[g->axis].value > MAX_LEN) {
		snprintf(why, size, "the axis's length is not static in [1, %d]", MAX_LEN);
		return 0;
	}
	g->len = d->dims[g->axis].value;
	for (int k = 0; k < g->rank; k++) {
		if (k == g->axis)
			continue;
		if (d->dims[k].kind != i->dims[k].kind || d->dims[k].kind == IR_VDIM_UNKNOWN ||
		    (d->dims[k].kind == IR_VDIM_VALUE && d->dims[k].value != i->dims[k].value) ||
		    (d->dims[k].kind == IR_VDIM_PARAM && strcmp(d->dims[k].param, i->dims[k].param))) {
			snprintf(why, size, "data and indices differ off the axis (dim %d)", k);
			return 0;
		}
	}
	return 1;
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	struct geo g;

	if (!geometry(c, n, &g, why, size))
		return 0;
	if (c->opset < 11) {
		snprintf(why, size, "needs opset >= 11");
		return 0;
	}
	return 1;
}

/* The float dtype the arithmetic hit is computed in */
static int hit_dtype(int dt)
{
	return rw_dtype_is_float(dt) ? dt : IR_DTYPE_FLOAT;
}

/* variants: 0 Equal (float data), 1 Equal (integer data), 2 arithmetic
 * (float data), 3 arithmetic (integer data) */
static int vcheck(struct rw_ctx *c, const struct ir_node *n, int v)
{
	int dt = rw_node_dtype(c, n);
	struct geo g;
	char why[8];

	if ((v & 1) != is_int(dt) || (!(v & 1) && !rw_dtype_is_float(dt)))
		return 0;
	if (v < 2 || rw_is_probe(n))
		return 1;
	/* c and c - L are integers of the dtype the arithmetic runs in */
	return geometry(c, n, &g, why, sizeof(why)) &&
	       (rw_plan_dtype(c, hit_dtype(dt)) != IR_DTYPE_FLOAT16 || g.len <= 1024) &&
	       dt != IR_DTYPE_BFLOAT16;
}

static struct ir_value *cast(struct rw_emit *e, struct ir_value *x, int to)
{
	struct ir_node *n = rw_node(e, "Cast", NULL, &x, 1, NULL);

	if (n && ir_node_set_int(n, "to", to) < 0)
		e->failed = 1;
	return n ? n->outputs[0] : NULL;
}

/* relu(1 - (t - c)^2), 1 at t == c for integers t, c */
static struct ir_value *arith_hit(struct rw_emit *e, struct ir_value *t, struct ir_value *c,
				  int dt)
{
	struct ir_value *d = rw_op(e, "Sub", t, c);

	return rw_op(e, "Relu", rw_op(e, "Sub", rw_scalar(e, dt, 1), rw_op(e, "Mul", d, d)),
		     NULL);
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct geo g;
	char why[64];
	int dt = rw_node_dtype(c, n), hdt = v < 2 ? dt : hit_dtype(dt);
	int64_t after, dims[MAX_RANK];
	double *pos, *neg;
	struct ir_value *idx, *data, *hit, *cp, *cn;

	geometry(c, n, &g, why, sizeof(why));
	after = g.axis + 1;
	rw_begin(c, n, &e);
	pos = malloc((size_t)g.len * sizeof(*pos));
	neg = malloc((size_t)g.len * sizeof(*neg));
	if (!pos || !neg) {
		free(pos);
		free(neg);
		return rw_end(&e, ir_diag_error(c->d, IR_ENOMEM, "out of memory"));
	}
	for (int64_t k = 0; k < g.len; k++) {
		pos[k] = (double)k;
		neg[k] = (double)(k - g.len);
	}
	/* the classes along the new axis (after the gathered one) */
	dims[0] = g.len;
	for (int k = 1; k < g.rank - g.axis; k++)
		dims[k] = 1;
	idx = rw_unsqueeze(&e, n->inputs[1], &after, 1);
	data = rw_unsqueeze(&e, n->inputs[0], &g.axis, 1);
	if (v < 2) {
		cp = rw_const(&e, g.idt, g.rank - (int)g.axis, dims, pos);
		cn = rw_const(&e, g.idt, g.rank - (int)g.axis, dims, neg);
		hit = rw_op(&e, "Add", cast(&e, rw_op(&e, "Equal", idx, cp), hdt),
			    cast(&e, rw_op(&e, "Equal", idx, cn), hdt));
	} else {
		idx = cast(&e, idx, hdt);
		cp = rw_const(&e, hdt, g.rank - (int)g.axis, dims, pos);
		cn = rw_const(&e, hdt, g.rank - (int)g.axis, dims, neg);
		hit = rw_op(&e, "Add", arith_hit(&e, idx, cp, hdt), arith_hit(&e, idx, cn, hdt));
		if (hdt != dt)
			hit = cast(&e, hit, dt);
	}
	rw_reduce(&e, "ReduceSum", rw_op(&e, "Mul", hit, data), &after, 1, 0, n->outputs[0]);
	free(pos);
	free(neg);
	return rw_end(&e, 0);
}

static const char *const matches[] = { "GatherElements", NULL };
static const char *const eq_ops[] = {
	"Unsqueeze", "Equal", "Cast", "Add", "Mul", "ReduceSum", NULL
};
static const char *const ar_ops[] = {
	"Unsqueeze", "Cast", "Sub", "Mul", "Relu", "Add", "ReduceSum", NULL
};
static const struct rw_variant variants[] = {
	{ "onehot-equal", eq_ops }, { "onehot-equal-int", eq_ops },
	{ "onehot-arith", ar_ops }, { "onehot-arith-int", ar_ops },
};
static const unsigned char approx[] = { 2, 0, 2, 0 };
RW_DECOMPOSITION_A(gather_elements, "gather-elements",
		   "GatherElements along a static axis (L <= 1024) as ReduceSum of the data times a one-hot of the indices (Equal, or float arithmetic), negative indices included; exact for integer data, inf/NaN of other elements leak for floats",
		   matches, variants, approx, check, vcheck, apply);
