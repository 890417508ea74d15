/* gqa_dyn.c: the group-query-attention lowering's run-time path, for
 * symbolic dims and a seqlens_k computed where the model runs: the new
 * rows' positions, the present (each entry's past rows up to seqlens_k +
 * 1 - S, its new rows, zeros after) and the causal, padding and window
 * mask, in int64 ops, as onnxruntime's CPU kernel (and k_gqa.c) does. */
#include <string.h>

#include "rewriters/gqa_int.h"

static struct ir_value *i64(struct rw_emit *e, int64_t v)
{
	return rw_scalar(e, IR_DTYPE_INT64, (double)v);
}

/* x as int64 (itself when it is already) */
static struct ir_value *cast64(struct rw_ctx *c, struct rw_emit *e, struct ir_value *x)
{
	const struct ir_vtype *t = rw_type(c, x);
	struct ir_node *n;

	if (t && t->dtype == IR_DTYPE_INT64)
		return x;
	n = rw_node(e, "Cast", NULL, &x, 1, NULL);
	if (n && ir_node_set_int(n, "to", IR_DTYPE_INT64) < 0)
		e->failed = 1;
	return n ? n->outputs[0] : NULL;
}

/* x's dim at axis, an int64 scalar */
static struct ir_value *dim_of(struct rw_emit *e, struct ir_value *x, int64_t axis)
{
	return rw_op(e, "Gather", rw_op(e, "Shape", x, NULL), i64(e, axis));
}

/* 0 .. limit - 1 (limit an int64 scalar) */
static struct ir_value *range0(struct rw_emit *e, struct ir_value *limit)
{
	struct ir_value *in[3] = { i64(e, 0), limit, i64(e, 1) };
	struct ir_node *r = rw_node(e, "Range", NULL, in, 3, NULL);

	return r ? r->outputs[0] : NULL;
}

static struct ir_value *where(struct rw_emit *e, struct ir_value *cond, struct ir_value *a,
			      struct ir_value *b, struct ir_value *out)
{
	struct ir_value *in[3] = { cond, a, b };
	struct ir_node *w = rw_node(e, "Where", NULL, in, 3, out);

	return w ? w->outputs[0] : NULL;
}

static struct ir_value *on_axis2(struct rw_emit *e, const char *op, struct ir_value *a,
				 struct ir_value *b)
{
	struct ir_value *in[2] = { a, b };
	struct ir_node *n = rw_node(e, op, NULL, in, 2, NULL);

	if (n && ir_node_set_int(n, "axis", 2) < 0)
		e->failed = 1;
	return n ? n->outputs[0] : NULL;
}

void gqa_run_init(struct rw_ctx *c, struct rw_emit *e, const struct ir_node *n,
		  const struct gqa_dims *g, struct gqa_run *r)
{
	int64_t ax0[1] = { 0 }, ax1[1] = { 1 }, ax13[2] = { 1, 3 }, col[4] = { -1, 1, 1, 1 };
	int64_t rep[4] = { 1, g->kvh, 1, g->d }, scalar[1] = { 0 };
	struct ir_value *s, *i, *sl, *tot, *pm, *pb, *pbc, *idx, *last;

	memset(r, 0, sizeof(*r));
	r->kvh = g->kvh, r->d = g->d;
	s = dim_of(e, n->inputs[0], 1);
	i = range0(e, s);
	sl = cast64(c, e, n->inputs[5]);
	r->sl4 = rw_reshape(e, sl, col, 4, NULL);
	if (!gqa_has(n, 3)) {
		/* no past: the first prompt, rows at 0 .. S - 1 */
		r->pos = rw_unsqueeze(e, i, ax0, 1);
		r->keys = i;
		return;
	}
	tot = rw_reshape(e, cast64(c, e, n->inputs[6]), scalar, 0, NULL);
	pm = dim_of(e, n->inputs[3], 2);
	pb = where(e, rw_op(e, "Equal", s, tot), i64(e, 0),
		   rw_op(e, "Sub", rw_op(e, "Add", sl, i64(e, 1)), s), NULL);
	pbc = rw_unsqueeze(e, pb, ax1, 1);                         /* [B, 1] */
	r->pos = rw_op(e, "Add", pbc, i);                          /* [B, S] */
	r->keys = range0(e, rw_op(e, "Max", tot, pm));
	/* present row j copies past row j before pb, new row j - pb (row pm
	 * + j - pb of the Concat) until pb + S; the index is clipped to the
	 * Concat's rows and the rows after are zeroed by valid */
	idx = where(e, rw_op(e, "Less", r->keys, pbc), r->keys,
		    rw_op(e, "Add", r->keys, rw_op(e, "Sub", pm, pbc)), NULL);
	last = rw_op(e, "Sub", rw_op(e, "Add", pm, s), i64(e, 1));
	idx = rw_unsqueeze(e, rw_op(e, "Min", idx, last), ax13, 2);
	r->idx = rw_op(e, "Expand", idx, rw_ints(e, rep, 4));
	r->valid = rw_unsqueeze(e, rw_op(e, "Less", r->keys, rw_op(e, "Add", pbc, s)), ax13, 2);
}

struct ir_value *gqa_run_rows(struct rw_emit *e, const struct gqa_run *r,
			      struct ir_value *cache)
{
	int64_t ax1[1] = { 1 };

	return rw_unsqueeze(e, rw_op(e, "Gather", cache, r->pos), ax1, 1);
}

struct ir_value *gqa_run_present(struct rw_emit *e, const struct gqa_run *r,
				 struct ir_value *past, struct ir_value *cur,
				 struct ir_value *out)
{
	struct ir_value *cat;

	if (!past)
		return out ? rw_op_to(e, "Identity", cur, NULL, out) : cur;
	cat = on_axis2(e, "Concat", past, cur);
	return where(e, r->valid, on_axis2(e, "GatherElements", cat, r->idx),
		     rw_scalar(e, e->dtype, 0), out);
}

struct ir_value *gqa_run_mask(struct rw_emit *e, const struct gqa_run *r, int64_t window,
			      double lowest)
{
	int64_t ax13[2] = { 1, 3 };
	struct ir_value *pos = rw_unsqueeze(e, r->pos, ax13, 2);   /* [B, 1, S, 1] */
	struct ir_value *low = rw_scalar(e, e->dtype, lowest), *m;

	m = where(e, rw_op(e, "Less", rw_op(e, "Min", pos, r->sl4), r->keys), low,
		  rw_scalar(e, e->dtype, 0), NULL);
	if (window > 0)
		m = where(e, rw_op(e, "Less", r->keys, rw_op(e, "Add", pos, i64(e, 1 - window))),
			  low, m, NULL);
	return m;
}
