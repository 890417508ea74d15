/* fuse_layer_norm.c: pass "fuse-layer-norm": LayerNorm as PyTorch and
 * TensorFlow export it,
 *   mean = ReduceMean(x), d = x - mean, var = ReduceMean(d^2 or d * d),
 *   y = d / Sqrt(var + eps) * gamma (+ beta)
 * with both reductions over the same trailing axes (keepdims 1), fused
 * into LayerNormalization(x, gamma, beta, axis, epsilon) for targets that
 * accept it (opset >= 17).  gamma and beta must not broadcast into the
 * leading axes (rank at most the normalized rank); every intermediate is
 * read only inside the pattern and no node of it was made by a pass (the
 * layer-norm decomposition's output stays).  Float and double data.  The
 * matcher (ln_match.h) is the fp16 pass's too. */
#include <stdio.h>
#include <string.h>

#include "rewriters/ln_match.h"

/* The first normalized axis of a ReduceMean over trailing axes; -1 else */
static int64_t trailing(const struct rw_ctx *c, const struct ir_node *r, int rank)
{
	int64_t axes[IR_INFER_MAX_RANK];
	size_t k = 0;
	int seen[IR_INFER_MAX_RANK] = { 0 };
	int64_t lo = rank;

	if (rw_attr_int(r, "keepdims", 1) != 1 || rank < 1)
		return -1;
	if (r->n_inputs > 1 && r->inputs[1]) {
		if (!rw_const_ints(c, r->inputs[1], axes, IR_INFER_MAX_RANK, &k))
			return -1;
	} else {
		const int64_t *a = rw_attr_ints(r, "axes", &k);

		if (!a || k > IR_INFER_MAX_RANK)
			return -1;
		memcpy(axes, a, k * sizeof(*a));
	}
	if (!k)
		return -1;
	for (size_t i = 0; i < k; i++) {
		int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];

		if (a < 0 || a >= rank || seen[a])
			return -1;
		seen[a] = 1;
		if (a < lo)
			lo = a;
	}
	return (int64_t)k == rank - lo ? lo : -1;
}

/* gamma/beta of known rank at most the normalized rank */
static int affine_ok(const struct rw_ctx *c, const struct ir_value *v, int rank, int64_t axis)
{
	int r = rw_rank(c, v);

	return r >= 0 && r <= rank - axis;
}

int rw_ln_match(const struct rw_ctx *c, struct ir_node *div, struct rw_ln_match *m)
{
	struct ir_value *d = div->inputs[0], *s = div->inputs[1], *p, *var;
	struct ir_node *sq, *add, *rv, *pw, *sub, *rm, *mul, *bias;
	int rank;
	double two;

	memset(m, 0, sizeof(*m));
	if (div->n_inputs != 2 || !rw_single_use(s) || !(sq = rw_producer(s, "Sqrt")) ||
	    !rw_single_use(sq->inputs[0]) || !(add = rw_producer(sq->inputs[0], "Add")) ||
	    add->n_inputs != 2)
		return 0;
	if (rw_const_double(c, add->inputs[1], &m->eps))
		var = add->inputs[0];
	else if (rw_const_double(c, add->inputs[0], &m->eps))
		var = add->inputs[1];
	else
		return 0;
	if (!rw_single_use(var) || !(rv = rw_producer(var, "ReduceMean")))
		return 0;
	p = rv->inputs[0];
	if (!rw_single_use(p))
		return 0;
	if ((pw = rw_producer(p, "Pow"))) {
		if (pw->inputs[0] != d || pw->n_inputs < 2 || !rw_const_double(c, pw->inputs[1], &two) ||
		    two != 2)
			return 0;
	} else if (!(pw = rw_producer(p, "Mul")) || pw->inputs[0] != d || pw->inputs[1] != d) {
		return 0;
	}
	for (size_t i = 0; i < d->n_uses; i++)
		if (d->uses[i] != pw && d->uses[i] != div)
			return 0;
	if (!rw_value_used(d) || !(sub = rw_producer(d, "Sub")) || sub->n_inputs != 2 ||
	    !rw_single_use(sub->inputs[1]) || !(rm = rw_producer(sub->inputs[1], "ReduceMean")) ||
	    rm->inputs[0] != sub->inputs[0])
		return 0;
	for (size_t i = 0; i < d->graph->n_outputs; i++)
		if (d->graph->outputs[i].value == d)
			return 0;
	m->x = sub->inputs[0];
	rank = rw_rank(c, m->x);
	m->axis = trailing(c, rm, rank);
	if (m->axis < 0 || trailing(c, rv, rank) != m->axis)
		return 0;
	/* gamma (required here), then beta */
	if (!(mul = rw_sole_user(div->outputs[0], "Mul")) ||
	    !(m->gamma = rw_other_input(mul, div->outputs[0])) ||
	    !affine_ok(c, m->gamma, rank, m->axis))
		return 0;
	m->last = mul;
	if ((bias = rw_sole_user(mul->outputs[0], "Add")) &&
	    (m->beta = rw_other_input(bias, mul->outputs[0])) &&
	    affine_ok(c, m->beta, rank, m->axis))
		m->last = bias;
	else
		m->beta = NULL;
	{
		struct ir_node *all[] = { rm, sub, pw, rv, add, sq, div, mul };

		memcpy(m->nodes, all, sizeof(all));
		m->n = 8;
	}
	return 1;
}

static int fuse(struct rw_ctx *c, struct rw_ln_match *m)
{
	const struct ir_vtype *t = rw_type(c, m->x);
	struct ir_value *in[3] = { m->x, m->gamma, m->beta };
	struct rw_emit e;
	struct ir_node *ln;

	if (!t || (t->dtype != IR_DTYPE_FLOAT && t->dtype != IR_DTYPE_DOUBLE) || c->opset < 17 ||
	    rw_made_by_pass(m->nodes, m->n) || rw_made_by_pass(&m->last, 1) ||
	    !rw_target_accepts(c, "", "LayerNormalization", t->dtype))
		return 0;
	rw_begin(c, m->last, &e);
	ln = rw_node(&e, "LayerNormalization", NULL, in, m->beta ? 3 : 2, m->last->outputs[0]);
	if (ln && (ir_node_set_int(ln, "axis", m->axis) < 0 ||
		   ir_node_set_float(ln, "epsilon", (float)m->eps) < 0))
		e.failed = 1;
	return rw_fuse_finish(c, &e, m->nodes, m->n, m->last);
}

static int fuse_at(struct rw_ctx *c, struct ir_node *n)
{
	struct rw_ln_match m;

	if (strcmp(ir_s(n->op_type), "Div") || (n->domain && *n->domain) || !rw_ln_match(c, n, &m))
		return 0;
	return fuse(c, &m);
}

RW_FUSION(fuse_layer_norm, "fuse-layer-norm",
	  "ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add fused into LayerNormalization (opset 17)",
	  fuse_at);
