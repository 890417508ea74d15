/* rank.c: pass "transpose-rank": a Transpose of rank 5 or more between
 * Reshapes, for targets limited to rank 4: ShuffleNet's channel shuffle
 * ([N,C,H,W] -> [N,g,C/g,H,W] -> swap -> [N,C,H,W]) and attention's head
 * split ([B,T,3C] -> [B,T,3,H,D] -> [3,B,H,T,D] -> Split on axis 0 ->
 * Reshapes).  Axes of size 1 are dropped, and input axes that the
 * permutation keeps adjacent and in order move as one, so they are merged:
 * the first Reshape makes the smaller shape and the Transpose permutes
 * what is left.  The Reshapes after it (or after a Split of its output,
 * whose axis stays an axis of its own) read the same elements in the same
 * order (their shapes must not copy dims with 0). */
#include <stdio.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/rw_int.h"

#define MAXR 8

struct plan {
	int r, nr;                      /* old and new rank */
	int64_t shape[MAXR];            /* merged input shape */
	int64_t perm[MAXR];             /* merged permutation */
	struct ir_node *split;          /* the Split reading the Transpose, or NULL */
	int64_t split_axis;             /* its axis in the merged output */
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

/* A Split as the only reader of v whose outputs only Reshapes read: its
 * axis in [0, r), or -1. */
static int64_t split_reader(const struct rw_ctx *c, const struct ir_value *v, int r,
			    struct ir_node **split)
{
	struct ir_node *u = v->n_uses == 1 ? v->uses[0] : NULL;
	int64_t ax;

	if (!u || rw_value_used(v) > 1 || ir_graph_is_output(v->graph, v) ||
	    strcmp(ir_s(u->op_type), "Split") || u->n_inputs < 1 || u->inputs[0] != v ||
	    u->graph != v->graph)
		return -1;
	ax = rw_attr_int(u, "axis", 0);
	if (ax < 0)
		ax += r;
	if (ax < 0 || ax >= r)
		return -1;
	for (size_t i = 0; i < u->n_outputs; i++)
		if (!u->outputs[i] || !only_reshapes_read(c, u->outputs[i]))
			return -1;
	*split = u;
	return ax;
}

static int make_plan(struct rw_ctx *c, const struct ir_node *n, struct plan *p,
		     char *why, size_t size)
{
	const struct ir_node *r1 = n->inputs[0] ? n->inputs[0]->producer : NULL;
	const struct ir_vtype *t = n->inputs[0] ? rw_type(c, n->inputs[0]) : NULL;
	int start[MAXR], len[MAXR], order[MAXR], rin[MAXR], ng = 0, nk = 0, prev = -1;
	int64_t kdim[MAXR], sax = -1;
	size_t np;
	const int64_t *perm = rw_attr_ints(n, "perm", &np);

	p->split = NULL;
	p->split_axis = -1;
	if (!r1 || strcmp(ir_s(r1->op_type), "Reshape") || r1->graph != n->graph ||
	    n->inputs[0]->n_uses != 1 || !t || t->rank < 2 || t->rank > MAXR ||
	    !perm || (int)np != t->rank || !n->outputs[0] ||
	    (!only_reshapes_read(c, n->outputs[0]) &&
	     (sax = split_reader(c, n->outputs[0], t->rank, &p->split)) < 0)) {
		snprintf(why, size, "not a Reshape -> Transpose -> Reshape (or Split -> Reshapes) "
			 "chain with static shapes");
		return 0;
	}
	p->r = t->rank;
	for (int i = 0; i < p->r; i++) {
		if (t->dims[i].kind != IR_VDIM_VALUE) {
			snprintf(why, size, "the shape is not static");
			return 0;
		}
		if (perm[i] < 0 || perm[i] >= p->r) {
			snprintf(why, size, "perm out of range");
			return 0;
		}
	}
	if (sax >= 0 && t->dims[perm[sax]].value == 1) {
		snprintf(why, size, "the Split's axis has size 1");
		return 0;
	}
	/* input axes of size 1 dropped; rin: an axis's index among the rest */
	for (int a = 0; a < p->r; a++) {
		rin[a] = t->dims[a].value == 1 ? -1 : nk;
		if (rin[a] >= 0)
			kdim[nk++] = t->dims[a].value;
	}
	/* runs of perm that read consecutive input axes (a Split's axis is a
	 * group of its own, so that its sizes stay what they are) */
	for (int j = 0; j < p->r; j++) {
		int a = (int)perm[j];

		if (rin[a] < 0)
			continue;
		if (prev >= 0 && rin[a] == rin[perm[prev]] + 1 && j != sax && prev != sax) {
			len[ng - 1]++;
		} else {
			start[ng] = rin[a];
			len[ng++] = 1;
		}
		if (j == sax)
			p->split_axis = ng - 1;
		prev = j;
	}
	if (ng == p->r || ng == 0) {
		snprintf(why, size, "no axes to merge or drop");
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
			p->shape[i] *= kdim[start[g] + k];
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
	if (t && p.split && ir_node_set_int(p.split, "axis", p.split_axis) < 0)
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
		 "Reshape-Transpose-Reshape (or -Split-Reshapes) of rank above the target's limit with axes of size 1 dropped and the axes the permutation keeps together merged",
		 matches, variants, check, NULL, apply);
