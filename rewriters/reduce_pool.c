/* reduce_pool.c: pass "reduce-max-pool": ReduceMax and ReduceMin of float
 * data of static shape as MaxPool (ReduceMin as -MaxPool(-x)) over a 4-D
 * view: reduced axes that are one contiguous block [i, j] take x as
 * [1, A, R, B] (A the product of the dims before, R of the reduced, B of
 * those after) and pool with kernel [R, 1] to [1, A, 1, B]; others
 * Transpose the kept axes first and the reduced last ([1, A, R, 1]).  A
 * Reshape gives the result its shape, with or without the kept 1s.  The
 * axes come from the attribute (before opset 18) or a constant input.
 * Exact for numbers; with NaN in the data MaxPool skips it where ReduceMax
 * may return it (onnxruntime's own ReduceMax does so depending on where
 * the NaN is). */
#include <stdio.h>
#include <string.h>

#include "rewriters/rw_int.h"

#define MAX_RANK IR_INFER_MAX_RANK

struct view {
	int rank, n_red;
	int64_t dims[MAX_RANK];
	int red[MAX_RANK];          /* 1: axis i is reduced */
	int contiguous;             /* the reduced axes are one block */
	int64_t a, r, b;            /* [1, A, R, B] */
	int64_t out[MAX_RANK];      /* the result's shape */
	int out_rank;
};

static int is_min(const struct ir_node *n)
{
	return !strcmp(ir_s(n->op_type), "ReduceMin");
}

static int make_view(struct rw_ctx *c, const struct ir_node *n, struct view *w, char *why,
		     size_t size)
{
	int64_t axes[MAX_RANK];
	size_t k = 0, na = 0;
	const int64_t *a;
	int dt = rw_node_dtype(c, n), first = -1, last = -1, keep;

	memset(w, 0, sizeof(*w));
	if (!n->n_inputs || !n->inputs[0] || !n->n_outputs || !n->outputs[0]) {
		snprintf(why, size, "input 0 or output 0 is absent");
		return 0;
	}
	if (dt != IR_DTYPE_FLOAT && dt != IR_DTYPE_DOUBLE && dt != IR_DTYPE_FLOAT16) {
		snprintf(why, size, "MaxPool takes float data, not %s",
			 dt ? ir_dtype_name(dt) : "unknown");
		return 0;
	}
	if (!rw_static_shape(c, n->inputs[0], w->dims, &w->rank) || w->rank < 1) {
		snprintf(why, size, "the input's shape is not static (or a scalar)");
		return 0;
	}
	if (n->n_inputs >= 2 && n->inputs[1]) {
		if (!rw_const_ints(c, n->inputs[1], axes, MAX_RANK, &k)) {
			snprintf(why, size, "the axes input is not constant");
			return 0;
		}
	} else if ((a = rw_attr_ints(n, "axes", &na)) && na) {
		if (na > MAX_RANK) {
			snprintf(why, size, "too many axes");
			return 0;
		}
		memcpy(axes, a, na * sizeof(*a));
		k = na;
	}
	if (!k && rw_attr_int(n, "noop_with_empty_axes", 0)) {
		snprintf(why, size, "noop_with_empty_axes with no axes (an identity)");
		return 0;
	}
	for (int i = 0; i < w->rank; i++)
		w->red[i] = !k;
	for (size_t i = 0; i < k; i++) {
		int64_t ax = axes[i] < 0 ? axes[i] + w->rank : axes[i];

		if (ax < 0 || ax >= w->rank) {
			snprintf(why, size, "axis %lld out of range", (long long)axes[i]);
			return 0;
		}
		w->red[ax] = 1;
	}
	w->a = w->r = w->b = 1;
	keep = rw_attr_int(n, "keepdims", 1) != 0;
	for (int i = 0; i < w->rank; i++) {
		if (w->dims[i] < 1) {
			snprintf(why, size, "an empty dim");
			return 0;
		}
		if (w->red[i]) {
			w->n_red++;
			w->r *= w->dims[i];
			if (first < 0)
				first = i;
			last = i;
		}
		if (!w->red[i] || keep)
			w->out[w->out_rank++] = w->red[i] ? 1 : w->dims[i];
	}
	w->contiguous = last - first + 1 == w->n_red;
	for (int i = 0; i < w->rank; i++)
		if (!w->red[i]) {
			if (w->contiguous && i > last)
				w->b *= w->dims[i];
			else
				w->a *= w->dims[i];
		}
	if ((double)w->a * (double)w->r * (double)w->b > 9e15) {
		snprintf(why, size, "too large");
		return 0;
	}
	return 1;
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	struct view w;

	return make_view(c, n, &w, why, size);
}

/* variants: 0 max, 1 max transposed, 2 min, 3 min transposed */
static int vcheck(struct rw_ctx *c, const struct ir_node *n, int v)
{
	struct view w;
	char why[8];

	if ((v >> 1) != is_min(n))
		return 0;
	if (rw_is_probe(n))        /* the op of another lowering: any form */
		return 1;
	return make_view(c, n, &w, why, sizeof(why)) && (v & 1) == !w.contiguous;
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct view w;
	char why[64];
	struct ir_value *x = n->inputs[0];
	struct ir_node *pool;
	int64_t shape[4], kernel[2], perm[MAX_RANK];
	int neg = is_min(n), p = 0;

	make_view(c, n, &w, why, sizeof(why));
	rw_begin(c, n, &e);
	if (neg)
		x = rw_op(&e, "Neg", x, NULL);
	if (v & 1) {        /* kept axes first, then the reduced */
		for (int i = 0; i < w.rank; i++)
			if (!w.red[i])
				perm[p++] = i;
		for (int i = 0; i < w.rank; i++)
			if (w.red[i])
				perm[p++] = i;
		x = rw_transpose(&e, x, perm, (size_t)w.rank, NULL);
	}
	shape[0] = 1;
	shape[1] = w.a;
	shape[2] = w.r;
	shape[3] = w.b;
	x = rw_reshape(&e, x, shape, 4, NULL);
	pool = rw_node(&e, "MaxPool", NULL, &x, 1, NULL);
	kernel[0] = w.r;
	kernel[1] = 1;
	if (pool && ir_node_set_ints(pool, "kernel_shape", kernel, 2) < 0)
		e.failed = 1;
	x = pool ? pool->outputs[0] : NULL;
	x = rw_reshape(&e, x, w.out, (size_t)w.out_rank, neg ? NULL : n->outputs[0]);
	if (neg)
		rw_op_to(&e, "Neg", x, NULL, n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const matches[] = { "ReduceMax", "ReduceMin", NULL };
static const char *const max_ops[] = { "Reshape", "MaxPool", NULL };
static const char *const max_t_ops[] = { "Transpose", "Reshape", "MaxPool", NULL };
static const char *const min_ops[] = { "Neg", "Reshape", "MaxPool", NULL };
static const char *const min_t_ops[] = { "Neg", "Transpose", "Reshape", "MaxPool", NULL };
static const struct rw_variant variants[] = {
	{ "max-pool", max_ops }, { "max-pool-transpose", max_t_ops },
	{ "min-neg-pool", min_ops }, { "min-neg-pool-transpose", min_t_ops },
};
RW_DECOMPOSITION(reduce_max_pool, "reduce-max-pool",
		 "ReduceMax and ReduceMin (as -max(-x)) of static shape as MaxPool over a [1, A, R, B] view (kernel [R, 1]), a Transpose first when the reduced axes are not contiguous",
		 matches, variants, check, vcheck, apply);
