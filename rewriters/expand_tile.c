/* expand_tile.c: pass "expand-tile", both ways on static shapes:
 *   Expand(x, shape)  Tile(x', repeats): x' is x reshaped to the output's
 *                     rank (leading 1s; no Reshape when the ranks agree),
 *                     repeats[i] = out[i] / x'[i]
 *   Tile(x, repeats)  Expand(x, out) when every repeated axis of x has
 *                     size 1 (otherwise Tile is no broadcast)
 *   either            x * ones, the ones a constant sized only along the
 *                     broadcast axes (at most 2^24 elements): exact for every
 *                     value (Mul takes no bool; int8/16 and uint8/16 from
 *                     opset 14). */
#include <stdio.h>
#include <string.h>

#include "rewriters/rw_int.h"
#include "runtime/runtime.h"

enum { V_TILE, V_RESHAPE_TILE, V_EXPAND, V_MUL };

#define MAX_ONES (INT64_C(1) << 24)

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

/* The dims of the ones Mul broadcasts x against, and their count */
static int64_t ones_dims(const struct plan *p, int64_t *dims)
{
	int64_t k = 1;
	int lead = p->ro - p->rx;

	for (int i = 0; i < p->ro; i++) {
		int64_t xd = i < lead ? 1 : p->x[i - lead];

		dims[i] = xd == p->out[i] ? 1 : p->out[i];
		k *= dims[i];
		if (k > MAX_ONES)
			return k;
	}
	return k;
}

static int mul_takes(const struct rw_ctx *c, int dt)
{
	switch (dt) {
	case IR_DTYPE_FLOAT: case IR_DTYPE_DOUBLE: case IR_DTYPE_FLOAT16: case IR_DTYPE_INT32:
	case IR_DTYPE_INT64: case IR_DTYPE_UINT32: case IR_DTYPE_UINT64:
		return 1;
	case IR_DTYPE_BFLOAT16:
		return c->opset >= 13;
	case IR_DTYPE_INT8: case IR_DTYPE_INT16: case IR_DTYPE_UINT8: case IR_DTYPE_UINT16:
		return c->opset >= 14;
	}
	return 0;
}

static int vcheck(struct rw_ctx *c, const struct ir_node *n, int v)
{
	struct plan p;
	int64_t dims[IR_INFER_MAX_RANK];
	char why[64];
	int tile = !strcmp(ir_s(n->op_type), "Tile");

	if (!make_plan(c, n, &p, why, sizeof(why)))
		return 0;
	switch (v) {
	case V_TILE: case V_RESHAPE_TILE:
		return !tile && (p.ro > p.rx) == (v == V_RESHAPE_TILE);
	case V_EXPAND:
		return tile;
	default:
		return mul_takes(c, rw_node_dtype(c, n)) && ones_dims(&p, dims) <= MAX_ONES;
	}
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
	} else if (v == V_MUL) {
		int64_t dims[IR_INFER_MAX_RANK], k = ones_dims(&p, dims);
		struct rt_value *t = NULL;
		struct ir_diag d;

		ir_diag_init(&d);
		if (rt_tensor_new(NULL, e.dtype, p.ro, dims, &t, &d) < 0) {
			e.failed = 1;
		} else {
			for (int64_t i = 0; i < k; i++)
				rt_value_set_f64(t, i, 1);
			rw_op_to(&e, "Mul", x, rw_const_value(&e, t), n->outputs[0]);
			rt_value_unref(t);
		}
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
static const char *const tile_ops[] = { "Tile", NULL };
static const char *const reshape_tile_ops[] = { "Reshape", "Tile", NULL };
static const char *const expand_ops[] = { "Expand", NULL };
static const char *const mul_ops[] = { "Mul", NULL };
static const struct rw_variant variants[] = {
	{ "tile", tile_ops }, { "reshape-tile", reshape_tile_ops }, { "expand", expand_ops },
	{ "mul-ones", mul_ops },
};
RW_DECOMPOSITION(expand_tile, "expand-tile",
		 "Expand as (Reshape+) Tile, Tile of size-1 axes as Expand, either as x * a constant of ones (static shapes)",
		 matches, variants, check, vcheck, apply);
