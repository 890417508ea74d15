/* expand_tile.c: pass "expand-tile", both ways on static shapes:
 *   Expand(x, shape)  Tile(x', repeats): x' is x reshaped to the output's
 *                     rank (leading 1s), repeats[i] = out[i] / x'[i]
 *   Tile(x, repeats)  Expand(x, out) when every repeated axis of x has
 *                     size 1 (otherwise Tile is no broadcast). */
#include <stdio.h>
#include <string.h>

#include "rewriters/rw_int.h"

enum { V_TILE, V_EXPAND };

struct plan {
	int rx, ro;
	int64_t x[IR_INFER_MAX_RANK], out[IR_INFER_MAX_RANK];
};

static int make_plan(struct rw_ctx *c, const struct ir_node *n, struct plan *p,
		     char *why, size_t size)
{
	int tile = !strcmp(ir_s(n->op_type), "Tile");

	if (n->n_inputs < 2 || !n->inputs[0] || !n->inputs[1] || !n->n_outputs ||
	    !n->outputs[0]) {
		snprintf(why, size, "an input or the output is absent");
		return 0;
	}
	if (!rw_static_shape(c, n->inputs[0], p->x, &p->rx) ||
	    !rw_static_shape(c, n->outputs[0], p->out, &p->ro) || p->ro < p->rx) {
		snprintf(why, size, "the shapes are not static");
		return 0;
	}
	for (int i = 0; i < p->ro; i++)
		if (p->out[i] == 0) {
			snprintf(why, size, "the output is empty");
			return 0;
		}
	if (tile) {
		int64_t rep[IR_INFER_MAX_RANK];
		size_t k;

		if (!rw_const_ints(c, n->inputs[1], rep, IR_INFER_MAX_RANK, &k) ||
		    (int)k != p->rx) {
			snprintf(why, size, "repeats is not a constant");
			return 0;
		}
		for (int i = 0; i < p->rx; i++)
			if (rep[i] != 1 && p->x[i] != 1) {
				snprintf(why, size, "axis %d of size %lld is repeated: not a broadcast",
					 i, (long long)p->x[i]);
				return 0;
			}
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

static int vcheck(struct rw_ctx *c, const struct ir_node *n, int v)
{
	(void)c;
	return v == (strcmp(ir_s(n->op_type), "Tile") ? V_TILE : V_EXPAND);
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct plan p;
	struct rw_emit e;
	struct ir_value *x = n->inputs[0];
	char why[64];

	make_plan(c, n, &p, why, sizeof(why));
	rw_begin(c, n, &e);
	if (v == V_EXPAND) {
		rw_op_to(&e, "Expand", x, rw_ints(&e, p.out, (size_t)p.ro), n->outputs[0]);
	} else {
		int64_t xs[IR_INFER_MAX_RANK], rep[IR_INFER_MAX_RANK];
		int lead = p.ro - p.rx;

		for (int i = 0; i < p.ro; i++) {
			xs[i] = i < lead ? 1 : p.x[i - lead];
			rep[i] = p.out[i] / xs[i];
		}
		if (lead)
			x = rw_op(&e, "Reshape", x, rw_ints(&e, xs, (size_t)p.ro));
		rw_op_to(&e, "Tile", x, rw_ints(&e, rep, (size_t)p.ro), n->outputs[0]);
	}
	return rw_end(&e, 0);
}

static const char *const matches[] = { "Expand", "Tile", NULL };
static const char *const tile_ops[] = { "Reshape", "Tile", NULL };
static const char *const expand_ops[] = { "Expand", NULL };
static const struct rw_variant variants[] = { { "tile", tile_ops }, { "expand", expand_ops } };
RW_DECOMPOSITION(expand_tile, "expand-tile",
		 "Expand as Reshape+Tile, and Tile of size-1 axes as Expand (static shapes)",
		 matches, variants, check, vcheck, apply);
