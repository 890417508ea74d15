/* matmul_batch.c: pass "matmul-batch": MatMul of operands whose batch
 * dims differ (broadcast) or whose rank is above 3, for targets that only
 * take equal batch dims or rank 3: both operands are expanded to the
 * broadcast batch shape (Expand, skipped when already there), reshaped to
 * [B, M, K] and [B, K, N], multiplied, and the product reshaped to the
 * output shape.  Static shapes, operands of rank >= 2 (1-D operands keep
 * their own MatMul rules).  Exact: the same dot products. */
#include <stdio.h>
#include <string.h>

#include "rewriters/rw_int.h"

struct plan {
	int ra, rb, ro;
	int64_t a[IR_INFER_MAX_RANK], b[IR_INFER_MAX_RANK], out[IR_INFER_MAX_RANK];
	int64_t batch;
};

static int make_plan(struct rw_ctx *c, const struct ir_node *n, struct plan *p,
		     char *why, size_t size)
{
	int same = 1;

	if (n->n_inputs < 2 || !n->inputs[0] || !n->inputs[1] || !n->n_outputs || !n->outputs[0] ||
	    !rw_static_shape(c, n->inputs[0], p->a, &p->ra) ||
	    !rw_static_shape(c, n->inputs[1], p->b, &p->rb) ||
	    !rw_static_shape(c, n->outputs[0], p->out, &p->ro)) {
		snprintf(why, size, "the shapes are not static");
		return 0;
	}
	if (p->ra < 2 || p->rb < 2) {
		snprintf(why, size, "a 1-D operand");
		return 0;
	}
	p->batch = 1;
	for (int i = 0; i < p->ro - 2; i++)
		p->batch *= p->out[i];
	for (int i = 0; i < p->ro; i++)
		if (p->out[i] == 0) {
			snprintf(why, size, "the output is empty");
			return 0;
		}
	if (p->ra != p->rb)
		same = 0;
	for (int i = 0; same && i < p->ra - 2; i++)
		same = p->a[i] == p->b[i];
	if (same && p->ro <= 3) {
		snprintf(why, size, "the batch dims are equal and the rank is at most 3");
		return 0;
	}
	return 1;
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	struct plan p;

	if (c->opset < 8) {
		snprintf(why, size, "needs opset >= 8 (Expand)");
		return 0;
	}
	return make_plan(c, n, &p, why, size);
}

/* x [.., R, C] expanded to batch shape out[0..ro-2) and reshaped to [B, R, C] */
static struct ir_value *to3(struct rw_emit *e, const struct plan *p, struct ir_value *x,
			    const int64_t *d, int r)
{
	int64_t full[IR_INFER_MAX_RANK], s3[3] = { p->batch, d[r - 2], d[r - 1] };
	int need = r != p->ro;

	for (int i = 0; i < p->ro - 2; i++) {
		full[i] = p->out[i];
		if (!need && d[i] != p->out[i])
			need = 1;
	}
	full[p->ro - 2] = d[r - 2];
	full[p->ro - 1] = d[r - 1];
	if (need)
		x = rw_op(e, "Expand", x, rw_ints(e, full, (size_t)p->ro));
	return p->ro == 3 ? x : rw_op(e, "Reshape", x, rw_ints(e, s3, 3));
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct plan p;
	struct rw_emit e;
	struct ir_value *a, *b, *y;
	char why[64];

	(void)v;
	make_plan(c, n, &p, why, sizeof(why));
	rw_begin(c, n, &e);
	a = to3(&e, &p, n->inputs[0], p.a, p.ra);
	b = to3(&e, &p, n->inputs[1], p.b, p.rb);
	y = rw_op_to(&e, "MatMul", a, b, p.ro == 3 ? n->outputs[0] : NULL);
	if (p.ro != 3)
		rw_op_to(&e, "Reshape", y, rw_ints(&e, p.out, (size_t)p.ro), n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const matches[] = { "MatMul", NULL };
static const char *const ops[] = { "Expand", "Reshape", "MatMul", NULL };
static const struct rw_variant variants[] = { { "expand-reshape", ops } };
RW_DECOMPOSITION(matmul_batch, "matmul-batch",
		 "MatMul with broadcast batch dims or rank > 3 as Expand and Reshape to a rank-3 MatMul of equal batches",
		 matches, variants, check, NULL, apply);
