/* rank.c: pass "transpose-rank": a Transpose of rank 5 or more between
 * two Reshapes (ShuffleNet's channel shuffle: [N,C,H,W] -> [N,g,C/g,H,W]
 * -> swap -> [N,C,H,W]) for targets limited to rank 4.  Input axes that
 * the permutation keeps adjacent and in order move as one, so they are
 * merged: the first Reshape makes the merged shape and the Transpose
 * permutes the merged axes.  The Reshapes after it read the same elements
 * in the same order (their shapes must not copy dims with 0). */
#include <stdio.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/rw_int.h"

#define MAXR 8

struct plan {
	int r, nr;                      /* old and new rank */
	int64_t shape[MAXR];            /* merged input shape */
	int64_t perm[MAXR];             /* merged permutation */
};

static int only_reshapes_read(const struct rw_ctx *c, const struct ir_value *v)
{
	if (!v->n_uses || rw_value_used(v) > 1)
		return 0;
	if (ir_graph_is_output(v->graph, v))
		return 0;
	for (size_t i = 0; i < v->n_uses; i++) {
		const struct ir_node *u = v->uses[i];
		int64_t s[MAXR];
		size_t k;

		if (strcmp(ir_s(u->op_type), "Reshape") || u->inputs[0] != v ||
		    u->n_inputs < 2 || !rw_const_ints(c, u->inputs[1], s, MAXR, &k))
			return 0;
		for (size_t j = 0; j < k; j++)
			if (s[j] == 0)
				return 0;
	}
	return 1;
}

static int make_plan(struct rw_ctx *c, const struct ir_node *n, struct plan *p,
		     char *why, size_t size)
{
	const struct ir_node *r1 = n->inputs[0] ? n->inputs[0]->producer : NULL;
	const struct ir_vtype *t = n->inputs[0] ? rw_type(c, n->inputs[0]) : NULL;
	int start[MAXR], len[MAXR], order[MAXR], ng = 0;
	size_t np;
	const int64_t *perm = rw_attr_ints(n, "perm", &np);

	if (!r1 || strcmp(ir_s(r1->op_type), "Reshape") || r1->graph != n->graph ||
	    n->inputs[0]->n_uses != 1 || !t || t->rank < 2 || t->rank > MAXR ||
	    !perm || (int)np != t->rank || !only_reshapes_read(c, n->outputs[0])) {
		snprintf(why, size, "not a Reshape -> Transpose -> Reshape chain with static shapes");
		return 0;
	}
	p->r = t->rank;
	for (int i = 0; i < p->r; i++)
		if (t->dims[i].kind != IR_VDIM_VALUE) {
			snprintf(why, size, "the shape is not static");
			return 0;
		}
	/* runs of perm that read consecutive input axes */
	for (int j = 0; j < p->r; j++) {
		if (j && perm[j] == perm[j - 1] + 1) {
			len[ng - 1]++;
			continue;
		}
		start[ng] = (int)perm[j];
		len[ng++] = 1;
	}
	if (ng == p->r) {
		snprintf(why, size, "no axes to merge");
		return 0;
	}
	/* groups in input order */
	for (int g = 0; g < ng; g++)
		order[g] = g;
	for (int a = 0; a < ng; a++)
		for (int b = a + 1; b < ng; b++)
			if (start[order[b]] < start[order[a]]) {
				int x = order[a];

				order[a] = order[b];
				order[b] = x;
			}
	for (int i = 0; i < ng; i++) {
		int g = order[i];

		p->shape[i] = 1;
		for (int k = 0; k < len[g]; k++)
			p->shape[i] *= t->dims[start[g] + k].value;
		p->perm[g] = i;     /* output group g reads merged input axis i */
	}
	p->nr = ng;
	return 1;
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	struct plan p;
	int max = c->target && c->target->max_rank > 0 ? c->target->max_rank : 4;

	if (!n->n_inputs || !n->n_outputs || !n->outputs[0] || !make_plan(c, n, &p, why, size))
		return 0;
	if (p.r <= max) {
		snprintf(why, size, "rank %d is within the target's limit", p.r);
		return 0;
	}
	return 1;
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct plan p;
	struct rw_emit e;
	struct ir_value *y = n->outputs[0], *x = n->inputs[0]->producer->inputs[0], *r;
	struct ir_node *t;
	char why[64];

	(void)v;
	make_plan(c, n, &p, why, sizeof(why));
	rw_begin(c, n, &e);
	r = rw_op(&e, "Reshape", x, rw_ints(&e, p.shape, (size_t)p.nr));
	t = rw_node(&e, "Transpose", NULL, &r, 1, NULL);
	if (t && ir_node_set_ints(t, "perm", p.perm, (size_t)p.nr) < 0)
		e.failed = 1;
	while (t && y->n_uses)
		if (ir_node_set_input(y->uses[0], 0, t->outputs[0]) < 0) {
			e.failed = 1;
			break;
		}
	return rw_end(&e, 0);
}

static const char *const matches[] = { "Transpose", NULL };
static const char *const ops[] = { "Reshape", "Transpose", NULL };
static const struct rw_variant variants[] = { { "merge-axes", ops } };
RW_DECOMPOSITION(transpose_rank, "transpose-rank",
		 "Reshape-Transpose-Reshape of rank above the target's limit with the axes the permutation keeps together merged",
		 matches, variants, check, NULL, apply);
