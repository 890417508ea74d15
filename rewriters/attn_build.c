/* attn_build.c: the builders of attn_build.h: rotary embedding of head
 * vectors, the causal mask constant, scaled dot-product attention with
 * kv-head sharing, as standard ops in the model's opset. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "rewriters/attn_build.h"

/* Axes are given non-negative: some targets' rules refuse negative ones. */
static struct ir_value *concat_last(struct rw_emit *e, struct ir_value *a, struct ir_value *b,
				    int64_t axis, struct ir_value *out)
{
	struct ir_value *in[2] = { a, b };
	struct ir_node *n = rw_node(e, "Concat", NULL, in, 2, out);

	if (n && ir_node_set_int(n, "axis", axis) < 0)
		e->failed = 1;
	return n ? n->outputs[0] : NULL;
}

/* x[..., lo:hi] of a value whose last axis is axis */
static struct ir_value *last_slice(struct rw_emit *e, struct ir_value *x, int64_t axis,
				   int64_t lo, int64_t hi)
{
	return rw_slice(e, x, &lo, &hi, &axis, NULL, 1, NULL);
}

struct ir_value *rw_rope_emit(struct rw_emit *e, struct ir_value *x, struct ir_value *cos,
			      struct ir_value *sin, int cos_rank, int64_t dim, int64_t rot,
			      int interleaved, struct ir_value *out)
{
	int64_t half = rot / 2, last = cos_rank;
	struct ir_value *xr = rot < dim ? last_slice(e, x, 3, 0, rot) : x, *x1, *x2, *y1, *y2, *yr;

	if (interleaved == 2) {
		/* rank 4 throughout: the pairs gathered into halves (even
		 * features, then odd), rotated as halves, gathered back */
		int64_t idx[RW_ROPE_MAX_ROT];
		struct ir_node *g;

		for (int64_t j = 0; j < half; j++)
			idx[j] = 2 * j, idx[half + j] = 2 * j + 1;
		xr = rw_op(e, "Gather", xr, rw_ints(e, idx, (size_t)rot));
		if ((g = xr ? xr->producer : NULL) && ir_node_set_int(g, "axis", 3) < 0)
			e->failed = 1;
		x1 = last_slice(e, xr, 3, 0, half);
		x2 = last_slice(e, xr, 3, half, rot);
		y1 = rw_op(e, "Sub", rw_op(e, "Mul", x1, cos), rw_op(e, "Mul", x2, sin));
		y2 = rw_op(e, "Add", rw_op(e, "Mul", x1, sin), rw_op(e, "Mul", x2, cos));
		for (int64_t j = 0; j < half; j++)
			idx[2 * j] = j, idx[2 * j + 1] = half + j;
		yr = rw_op_to(e, "Gather", concat_last(e, y1, y2, 3, NULL), rw_ints(e, idx, (size_t)rot),
			      rot < dim ? NULL : out);
		if ((g = yr ? yr->producer : NULL) && ir_node_set_int(g, "axis", 3) < 0)
			e->failed = 1;
	} else if (interleaved) {
		/* [.., rot] as [.., half, 2]: x1 the even features, x2 the odd */
		int64_t pairs[5] = { 0, 0, 0, half, 2 }, flat[4] = { 0, 0, 0, rot };

		xr = rw_reshape(e, xr, pairs, 5, NULL);
		cos = rw_unsqueeze(e, cos, &last, 1);
		sin = rw_unsqueeze(e, sin, &last, 1);
		x1 = last_slice(e, xr, 4, 0, 1);
		x2 = last_slice(e, xr, 4, 1, 2);
		y1 = rw_op(e, "Sub", rw_op(e, "Mul", x1, cos), rw_op(e, "Mul", x2, sin));
		y2 = rw_op(e, "Add", rw_op(e, "Mul", x1, sin), rw_op(e, "Mul", x2, cos));
		yr = rw_reshape(e, concat_last(e, y1, y2, 4, NULL), flat, 4, rot < dim ? NULL : out);
	} else {
		x1 = last_slice(e, xr, 3, 0, half);
		x2 = last_slice(e, xr, 3, half, rot);
		y1 = rw_op(e, "Sub", rw_op(e, "Mul", x1, cos), rw_op(e, "Mul", x2, sin));
		y2 = rw_op(e, "Add", rw_op(e, "Mul", x1, sin), rw_op(e, "Mul", x2, cos));
		yr = concat_last(e, y1, y2, 3, rot < dim ? NULL : out);
	}
	if (rot < dim)
		return concat_last(e, yr, last_slice(e, x, 3, rot, dim), 3, out);
	return yr;
}

struct ir_value *rw_causal_const(struct rw_emit *e, int64_t s, int64_t t, int64_t past,
				 double keep, double masked)
{
	int64_t dims[2] = { s, t };
	double *v = malloc((size_t)(s * t + 1) * sizeof(double));
	struct ir_value *r;

	if (!v) {
		e->failed = 1;
		return NULL;
	}
	for (int64_t i = 0; i < s; i++)
		for (int64_t j = 0; j < t; j++)
			v[i * t + j] = j <= i + past ? keep : masked;
	r = rw_const(e, e->dtype, 2, dims, v);
	free(v);
	return r;
}

double rw_attn_lowest(int dtype)
{
	switch (dtype) {
	case IR_DTYPE_FLOAT16: return -65504.0;
	case IR_DTYPE_BFLOAT16: return -3.3895313892515355e38;
	case IR_DTYPE_DOUBLE: return -DBL_MAX;
	default: return -FLT_MAX;
	}
}

/* [B, hkv, T, d] as [B, hq, T, d], kv head g read by query heads
 * g * rep .. g * rep + rep - 1 */
static struct ir_value *share_heads(struct rw_emit *e, struct ir_value *x, int64_t hq,
				    int64_t hkv, int64_t d)
{
	int64_t axis = 2, rep[5] = { 1, 1, hq / hkv, 1, 1 }, shape[4] = { 0, hq, -1, d };

	if (hq == hkv)
		return x;
	x = rw_op(e, "Expand", rw_unsqueeze(e, x, &axis, 1), rw_ints(e, rep, 5));
	return rw_reshape(e, x, shape, 4, NULL);
}

struct ir_value *rw_sdpa_emit(struct rw_emit *e, const struct rw_sdpa *a)
{
	int64_t perm[4] = { 0, 1, 3, 2 };
	struct ir_value *k = share_heads(e, a->k, a->hq, a->hkv, a->d);
	struct ir_value *v = share_heads(e, a->v, a->hq, a->hkv, a->dv);
	struct ir_value *s, *p;
	struct ir_node *sm;

	s = rw_op(e, "MatMul", a->q, rw_transpose(e, k, perm, 4, NULL));
	s = rw_op_to(e, "Mul", s, rw_scalar(e, e->dtype, a->scale),
		     a->qk && a->qk_mode == 0 ? a->qk : NULL);
	if (a->softcap > 0) {
		struct ir_value *cap = rw_scalar(e, e->dtype, a->softcap);

		s = rw_op_to(e, "Mul", rw_op(e, "Tanh", rw_op(e, "Div", s, cap), NULL), cap,
			     a->qk && a->qk_mode == 1 ? a->qk : NULL);
	}
	if (a->bias)
		s = rw_op_to(e, "Add", s, a->bias, a->qk && a->qk_mode == 2 ? a->qk : NULL);
	sm = rw_node(e, "Softmax", NULL, &s, 1, a->qk && a->qk_mode == 3 ? a->qk : NULL);
	if (!sm || ir_node_set_int(sm, "axis", 3) < 0) {
		e->failed = 1;
		return NULL;
	}
	p = sm->outputs[0];
	return rw_op_to(e, "MatMul", p, v, a->out);
}
