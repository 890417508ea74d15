/* gather.c: pass "gather-slice": Gather with constant indices that a Slice
 * can take: a scalar index as Slice of one element and Squeeze of the axis;
 * 1-D indices forming an arithmetic progression (one index, a run, a
 * strided or reversed run; steps other than 1 from opset 10) as one Slice.
 * Negative indices count from the end (made non-negative when the axis is
 * static; a symbolic axis takes non-negative runs, or a scalar).  Exact:
 * the same elements, moved. */
#include <stdio.h>
#include <string.h>

#include "rewriters/rw_int.h"

#define MAX_IDX 1024

struct plan {
	int64_t axis, start, end, step;
	int scalar;
};

static int make_plan(struct rw_ctx *c, const struct ir_node *n, struct plan *p,
		     char *why, size_t size)
{
	int64_t idx[MAX_IDX];
	const struct ir_vtype *t, *it;
	int64_t dim;
	size_t k;
	int r;

	if (n->n_inputs < 2 || !n->inputs[0] || !n->inputs[1] || !n->n_outputs ||
	    !n->outputs[0]) {
		snprintf(why, size, "an input or the output is absent");
		return 0;
	}
	if (!rw_node_axis(c, n, 0, IR_INFER_MAX_RANK, &r, &p->axis, why, size))
		return 0;
	it = rw_type(c, n->inputs[1]);
	if (!it || it->rank < 0 || it->rank > 1 ||
	    !rw_const_ints(c, n->inputs[1], idx, MAX_IDX, &k) || !k) {
		snprintf(why, size, "the indices are not a constant scalar or 1-D list");
		return 0;
	}
	p->scalar = it->rank == 0;
	t = rw_type(c, n->inputs[0]);
	dim = t && t->dims[p->axis].kind == IR_VDIM_VALUE ? t->dims[p->axis].value : -1;
	for (size_t i = 0; i < k; i++) {
		if (dim >= 0 && idx[i] < 0)
			idx[i] += dim;
		if ((dim >= 0 && (idx[i] < 0 || idx[i] >= dim)) ||
		    (dim < 0 && idx[i] < 0 && (k > 1 || !p->scalar))) {
			snprintf(why, size, "index %lld is out of range or from the end of a symbolic axis",
				 (long long)idx[i]);
			return 0;
		}
	}
	p->step = k > 1 ? idx[1] - idx[0] : 1;
	for (size_t i = 1; i < k; i++)
		if (idx[i] - idx[i - 1] != p->step || !p->step) {
			snprintf(why, size, "the indices are no arithmetic progression");
			return 0;
		}
	if (p->step != 1 && c->opset < 10) {
		snprintf(why, size, "a step of %lld needs opset >= 10 (Slice steps)", (long long)p->step);
		return 0;
	}
	p->start = idx[0];
	p->end = idx[k - 1] + (p->step > 0 ? 1 : -1);
	if (p->start == -1 && p->end == 0)    /* the last element of a symbolic axis */
		p->end = INT64_MAX;
	if (p->step < 0 && p->end < 0)
		p->end = INT64_MIN;
	return 1;
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	struct plan p;

	return make_plan(c, n, &p, why, size);
}

static int vcheck(struct rw_ctx *c, const struct ir_node *n, int v)
{
	struct plan p;
	char why[128];

	return make_plan(c, n, &p, why, sizeof(why)) && v == !p.scalar;
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct plan p;
	struct rw_emit e;
	struct ir_value *y;
	char why[128];

	make_plan(c, n, &p, why, sizeof(why));
	rw_begin(c, n, &e);
	y = rw_slice(&e, n->inputs[0], &p.start, &p.end, &p.axis, p.step != 1 ? &p.step : NULL, 1,
		     v ? n->outputs[0] : NULL);
	if (!v) {   /* Squeeze of the axis into the output (axes an input from 13) */
		struct ir_value *in[2] = { y, c->opset >= 13 ? rw_ints(&e, &p.axis, 1) : NULL };
		struct ir_node *sq = rw_node(&e, "Squeeze", NULL, in, in[1] ? 2 : 1, n->outputs[0]);

		if (sq && !in[1] && ir_node_set_ints(sq, "axes", &p.axis, 1) < 0)
			e.failed = 1;
	}
	return rw_end(&e, 0);
}

static const char *const matches[] = { "Gather", NULL };
static const char *const slice_squeeze_ops[] = { "Slice", "Squeeze", NULL };
static const char *const slice_ops[] = { "Slice", NULL };
static const struct rw_variant variants[] = {
	{ "slice-squeeze", slice_squeeze_ops }, { "slice", slice_ops },
};
RW_DECOMPOSITION(gather_slice, "gather-slice",
		 "Gather of a constant scalar index as Slice + Squeeze, of constant 1-D indices in arithmetic progression as one Slice",
		 matches, variants, check, vcheck, apply);
