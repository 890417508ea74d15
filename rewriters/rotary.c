/* rotary.c: pass "rotary": RotaryEmbedding (com.microsoft, ai.onnx 23) as
 * standard ops.  The cos/sin rows are gathered by position_ids (Gather; a
 * one-element com.microsoft position_ids is an offset, the rows pos + i
 * gathered), the input brought to 4-D ([B, S, N, D] from 3-D by Reshape,
 * 4-D being [B, N, S, D]), the first rotary_embedding_dim features rotated
 * as halves or interleaved pairs (Slice, Mul, Sub, Add, Concat; pairs as
 * a rank-5 view, or by Gather at rank 4 where the target's rank stops at
 * 4; see attn_build.c), the rest passed through, and the result reshaped back.
 * Head size, rotary dim and (for an offset) the sequence length must be
 * static. */
#include <stdio.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/attn_build.h"

enum { V_HALF, V_PAIRS, V_PAIRS_GATHER };

#define MAX_SEQ 4096    /* the longest sequence an offset's rows are listed for */

static const char *const half_ops[] = {
	"Gather", "Slice", "Mul", "Sub", "Add", "Concat", "Reshape", "Unsqueeze", NULL
};
static const char *const pair_ops[] = {
	"Gather", "Slice", "Mul", "Sub", "Add", "Concat", "Reshape", "Unsqueeze", NULL
};
static const struct rw_variant variants[] = {
	{ "rotate-half", half_ops },
	{ "interleaved", pair_ops },
	{ "interleaved-gather", pair_ops },
};

/* What the node looks like: its inputs in one order and its static sizes. */
struct rope {
	struct ir_value *x, *pos, *cos, *sin;
	int rank, ms, offset;          /* offset: one position id, the first row */
	int64_t dim, rot, seq;         /* head size, rotary dim, sequence (-1 dynamic) */
};

static int64_t dim_of(const struct ir_vtype *t, int i)
{
	if (!t || t->rank <= i || i < 0 || t->dims[i].kind != IR_VDIM_VALUE)
		return -1;
	return t->dims[i].value;
}

static int rope_read(struct rw_ctx *c, const struct ir_node *n, struct rope *r, char *why,
		     size_t size)
{
	const struct ir_vtype *xt, *ct, *pt;
	int64_t nh = rw_attr_int(n, "num_heads", 0), rot = rw_attr_int(n, "rotary_embedding_dim", 0);
	int64_t cw;

	memset(r, 0, sizeof(*r));
	r->ms = !strcmp(ir_s(n->domain), "com.microsoft");
	if (n->n_inputs < (r->ms ? 4u : 3u)) {
		snprintf(why, size, "an input is absent");
		return 0;
	}
	r->x = n->inputs[0];
	r->pos = r->ms ? n->inputs[1] : n->n_inputs > 3 ? n->inputs[3] : NULL;
	r->cos = n->inputs[r->ms ? 2 : 1];
	r->sin = n->inputs[r->ms ? 3 : 2];
	if (!r->x || !r->cos || !r->sin || (r->ms && !r->pos)) {
		snprintf(why, size, "an input is absent");
		return 0;
	}
	if (r->ms && rw_attr_int(n, "is_packed_batching", 0)) {
		snprintf(why, size, "is_packed_batching is set");
		return 0;
	}
	if (r->ms && rw_attr_float(n, "scale", 1.0f) != 1.0f) {
		snprintf(why, size, "scale is not 1");
		return 0;
	}
	xt = rw_type(c, r->x);
	ct = rw_type(c, r->cos);
	pt = r->pos ? rw_type(c, r->pos) : NULL;
	r->rank = xt ? xt->rank : -1;
	cw = ct ? dim_of(ct, ct->rank - 1) : -1;
	if (r->rank == 4) {
		r->dim = dim_of(xt, 3);
		r->seq = dim_of(xt, 2);
	} else if (r->rank == 3) {
		int64_t hidden = dim_of(xt, 2);

		r->seq = dim_of(xt, 1);
		if (nh > 0)
			r->dim = hidden > 0 && hidden % nh == 0 ? hidden / nh : -1;
		else if (r->ms)
			r->dim = rot > 0 ? rot : cw > 0 ? 2 * cw : -1;
		else
			r->dim = -1;
		if (r->dim <= 0) {
			snprintf(why, size, "3-D input without num_heads and a static hidden size");
			return 0;
		}
	} else {
		snprintf(why, size, "input rank %d (3 or 4 known)", r->rank);
		return 0;
	}
	if (r->dim <= 0) {
		snprintf(why, size, "the head size is not static");
		return 0;
	}
	r->rot = rot > 0 ? rot : r->ms && cw > 0 ? 2 * cw : r->dim;
	if (r->rot > r->dim || r->rot % 2 || cw != r->rot / 2) {
		snprintf(why, size, "rotary dim %lld, head size %lld and cache width %lld disagree",
			 (long long)r->rot, (long long)r->dim, (long long)cw);
		return 0;
	}
	if (r->pos) {
		if (!pt || pt->rank < 0 || !ct || ct->rank != 2) {
			snprintf(why, size, "position_ids of unknown rank or a cache not 2-D");
			return 0;
		}
		if (pt->rank == 1 && dim_of(pt, 0) == 1 && r->ms) {
			r->offset = 1;
			if (r->seq < 0 || r->seq > MAX_SEQ) {
				snprintf(why, size, "an offset position_ids with a dynamic or long "
					 "sequence");
				return 0;
			}
		} else if (pt->rank != 2) {
			snprintf(why, size, "position_ids of rank %d", pt->rank);
			return 0;
		}
	} else if (!ct || ct->rank != 3) {
		snprintf(why, size, "caches without position_ids must be 3-D");
		return 0;
	}
	return 1;
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	struct rope r;

	if (!rw_check_float_node(c, n, 13, why, size))
		return 0;
	return rope_read(c, n, &r, why, size);
}

/* Interleaved pairs as [.., half, 2] need rank 5; the Gather form stays
 * at rank 4 for targets that stop there. */
static int vcheck(struct rw_ctx *c, const struct ir_node *n, int v)
{
	int max_rank = c->target ? c->target->max_rank : -1;
	struct rope r;
	char why[8];

	if (rw_is_probe(n))
		return 1;
	if (!(rw_attr_int(n, "interleaved", 0) != 0))
		return v == V_HALF;
	if (v == V_PAIRS)
		return max_rank < 0 || max_rank >= 5;
	return v == V_PAIRS_GATHER &&
	       (!rope_read(c, n, &r, why, sizeof(why)) || r.rot <= RW_ROPE_MAX_ROT);
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rope r;
	struct rw_emit e;
	struct ir_value *cs, *sn, *x, *y, *idx;
	char why[160];
	int64_t axis;
	int crank;                       /* the rank of the cos/sin rows */

	if (!rope_read(c, n, &r, why, sizeof(why)))
		return ir_diag_error(c->d, IR_EINVAL, "node '%s' (%s): %s", ir_s(n->name),
				     ir_s(n->op_type), why);
	crank = r.offset ? 2 : 3;
	rw_begin(c, n, &e);
	if (r.offset) {
		/* rows pos + 0 .. pos + S - 1 (a Slice would take bounds that are
		 * not constant) */
		int64_t steps[MAX_SEQ];

		for (int64_t i = 0; i < r.seq; i++)
			steps[i] = i;
		idx = rw_op(&e, "Add", r.pos, rw_ints(&e, steps, (size_t)r.seq));
		cs = rw_op(&e, "Gather", r.cos, idx);
		sn = rw_op(&e, "Gather", r.sin, idx);
	} else if (r.pos) {
		cs = rw_op(&e, "Gather", r.cos, r.pos);
		sn = rw_op(&e, "Gather", r.sin, r.pos);
	} else {
		cs = r.cos;
		sn = r.sin;
	}
	/* [B, S, half] or [S, half] rows, unsqueezed before the sequence's
	 * next axis (3-D input: [.., S, 1, half]) or before S (4-D: [.., 1, S,
	 * half]) */
	axis = crank - (r.rank == 3 ? 1 : 2);
	cs = rw_unsqueeze(&e, cs, &axis, 1);
	sn = rw_unsqueeze(&e, sn, &axis, 1);
	x = r.x;
	if (r.rank == 3) {
		int64_t shape[4] = { 0, 0, -1, r.dim }, back[3] = { 0, 0, -1 };

		x = rw_reshape(&e, x, shape, 4, NULL);
		y = rw_rope_emit(&e, x, cs, sn, crank + 1, r.dim, r.rot, v, NULL);
		rw_reshape(&e, y, back, 3, n->outputs[0]);
	} else {
		rw_rope_emit(&e, x, cs, sn, crank + 1, r.dim, r.rot, v, n->outputs[0]);
	}
	return rw_end(&e, 0);
}

static const char *const matches[] = {
	"RotaryEmbedding", "com.microsoft:RotaryEmbedding", NULL
};
RW_DECOMPOSITION(rotary, "rotary",
		 "RotaryEmbedding (com.microsoft, ai.onnx 23) as Gather of the cos/sin rows, Slice, Mul, Sub, Add and Concat of the rotated halves or pairs",
		 matches, variants, check, vcheck, apply);
