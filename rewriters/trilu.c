/* trilu.c: ops that are a product with a constant triangular matrix:
 *   "trilu"   Trilu (upper/lower) as Where(mask, x, 0) with a constant
 *             bool mask [N, M] (exact, any dtype), or x * mask (exact for
 *             int32/int64 data; for floats an inf or NaN outside the kept
 *             triangle becomes NaN, not 0); k a graph input: the mask is
 *             GreaterOrEqual(D, k) (upper) or GreaterOrEqual(k, D) (lower)
 *             of the constant D[i][j] = j - i, then Where, or Cast and Mul;
 *             or, without comparisons, Clip(D + 1 - k, 0, 1) (upper) or
 *             Clip(k + 1 - D, 0, 1) in float (k Cast), then Mul
 *   "cumsum"  CumSum along a constant axis of static length L <= 4096 as
 *             MatMul with a constant [L, L] 0/1 matrix (exclusive and
 *             reverse choose the triangle), the axis moved last by a
 *             Transpose and back; float data (sums in another order:
 *             float rounding). */
#include <stdio.h>
#include <stdlib.h>

#include "rewriters/rw_int.h"
#include "runtime/runtime.h"

#define CUMSUM_MAX 4096

/* ---- Trilu ------------------------------------------------------------ */

/* 1 and *k when k is absent (0) or constant; 0 when it is an input */
static int trilu_k(struct rw_ctx *c, const struct ir_node *n, int64_t *k)
{
	size_t cnt;

	*k = 0;
	if (n->n_inputs < 2 || !n->inputs[1])
		return 1;
	return rw_const_ints(c, n->inputs[1], k, 1, &cnt) && cnt == 1;
}

static int check_trilu(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	const struct ir_vtype *t = n->n_inputs && n->inputs[0] ? rw_type(c, n->inputs[0]) : NULL;
	const struct ir_vtype *tk;
	int64_t k;

	if (!t || !n->n_outputs || !n->outputs[0] || t->rank < 2 || !t->dtype) {
		snprintf(why, size, "needs an input of known dtype and rank >= 2");
		return 0;
	}
	if (t->dims[t->rank - 2].kind != IR_VDIM_VALUE || t->dims[t->rank - 1].kind != IR_VDIM_VALUE ||
	    (double)t->dims[t->rank - 2].value * (double)t->dims[t->rank - 1].value > (1 << 22)) {
		snprintf(why, size, "the last two dims are not static (or too large)");
		return 0;
	}
	if (!trilu_k(c, n, &k) && (!(tk = rw_type(c, n->inputs[1])) || tk->rank > 1 ||
				   (tk->rank == 1 && (tk->dims[0].kind != IR_VDIM_VALUE ||
						      tk->dims[0].value != 1)))) {
		snprintf(why, size, "k is not a constant or a scalar input");
		return 0;
	}
	if (c->opset < 9) {
		snprintf(why, size, "needs opset >= 9");
		return 0;
	}
	return 1;
}

/* The float dtype the clipped mask is computed in */
static int mask_dtype(int dt)
{
	return rw_dtype_is_float(dt) ? dt : IR_DTYPE_FLOAT;
}

/* variants: 0 where, 1 mul (floats), 2 mul (int32, int64); 3-5 the same
 * with k an input; 6 clipped mask (floats), 7 the same (int32, int64) */
static int vcheck_trilu(struct rw_ctx *c, const struct ir_node *n, int v)
{
	int dt = rw_node_dtype(c, n);
	const struct ir_vtype *t;
	int64_t k;

	if ((v >= 3) == trilu_k(c, n, &k))
		return 0;
	if (v >= 3 && v < 6 && c->opset < 12)
		return 0;      /* GreaterOrEqual */
	if (v >= 6) {      /* j - i and k are integers of the mask's dtype */
		if (dt == IR_DTYPE_BFLOAT16 || (v == 6) != rw_dtype_is_float(dt) ||
		    (v == 7 && dt != IR_DTYPE_INT32 && dt != IR_DTYPE_INT64) || c->opset < 7)
			return 0;
		t = rw_is_probe(n) ? NULL : rw_type(c, n->inputs[0]);
		return !t || rw_plan_dtype(c, mask_dtype(dt)) != IR_DTYPE_FLOAT16 ||
		       (t->dims[t->rank - 2].value <= 2048 && t->dims[t->rank - 1].value <= 2048);
	}
	switch (v % 3) {
	case 0:
		return 1;
	case 1:
		return rw_dtype_is_float(dt) && c->opset >= 7;
	default:
		return (dt == IR_DTYPE_INT32 || dt == IR_DTYPE_INT64) && c->opset >= 7;
	}
}

static int apply_trilu(struct rw_ctx *c, struct ir_node *n, int v)
{
	const struct ir_vtype *t = rw_type(c, n->inputs[0]);
	int64_t rows = t->dims[t->rank - 2].value, cols = t->dims[t->rank - 1].value, k;
	int64_t dims[2] = { rows, cols };
	int upper = rw_attr_int(n, "upper", 1) != 0;
	struct rw_emit e;
	double *mask;
	struct ir_value *m, *in[3];

	trilu_k(c, n, &k);
	rw_begin(c, n, &e);
	if (!(mask = malloc((size_t)(rows * cols + 1) * sizeof(*mask))))
		return rw_end(&e, ir_diag_error(c->d, IR_ENOMEM, "out of memory"));
	for (int64_t i = 0; i < rows; i++)
		for (int64_t j = 0; j < cols; j++)
			mask[i * cols + j] = v >= 6 ? (double)(upper ? j - i + 1 : j - i - 1) :
					     v >= 3 ? (double)(j - i) :
					     upper ? j - i >= k : j - i <= k;
	if (v >= 6) {      /* Clip(j - i + 1 - k, 0, 1), Clip(k - (j - i - 1), 0, 1) */
		int dt = e.dtype, fdt = mask_dtype(dt);
		struct ir_value *d = rw_const(&e, fdt, 2, dims, mask);
		struct ir_node *cast = rw_node(&e, "Cast", NULL, &n->inputs[1], 1, NULL);
		struct ir_value *kf = cast ? cast->outputs[0] : NULL;

		if (cast && ir_node_set_int(cast, "to", fdt) < 0)
			e.failed = 1;
		e.dtype = fdt;          /* rw_clip's bounds */
		m = rw_clip(&e, upper ? rw_op(&e, "Sub", d, kf) : rw_op(&e, "Sub", kf, d), 0, 1,
			    NULL);
		e.dtype = dt;
		if (fdt != dt) {
			cast = rw_node(&e, "Cast", NULL, &m, 1, NULL);
			if (cast && ir_node_set_int(cast, "to", e.dtype) < 0)
				e.failed = 1;
			m = cast ? cast->outputs[0] : NULL;
		}
	} else if (v >= 3) {      /* keep where j - i >= k (upper) or k >= j - i */
		struct ir_value *d = rw_const(&e, IR_DTYPE_INT64, 2, dims, mask);
		struct ir_value *kv = n->inputs[1];

		m = upper ? rw_op(&e, "GreaterOrEqual", d, kv) : rw_op(&e, "GreaterOrEqual", kv, d);
		if (v % 3) {
			struct ir_node *cast = rw_node(&e, "Cast", NULL, &m, 1, NULL);

			if (cast && ir_node_set_int(cast, "to", e.dtype) < 0)
				e.failed = 1;
			m = cast ? cast->outputs[0] : NULL;
		}
	} else {
		m = rw_const(&e, v % 3 ? e.dtype : IR_DTYPE_BOOL, 2, dims, mask);
	}
	if (v == 0 || v == 3) {
		in[0] = m;
		in[1] = n->inputs[0];
		in[2] = rw_scalar(&e, e.dtype, 0);
		rw_node(&e, "Where", NULL, in, 3, n->outputs[0]);
	} else {
		rw_op_to(&e, "Mul", n->inputs[0], m, n->outputs[0]);
	}
	free(mask);
	return rw_end(&e, 0);
}

static const char *const m_trilu[] = { "Trilu", NULL };
static const char *const where_ops[] = { "Where", NULL };
static const char *const mul_ops[] = { "Mul", NULL };
static const char *const where_k_ops[] = { "GreaterOrEqual", "Where", NULL };
static const char *const mul_k_ops[] = { "GreaterOrEqual", "Cast", "Mul", NULL };
static const char *const clip_k_ops[] = { "Cast", "Sub", "Clip", "Mul", NULL };
static const struct rw_variant v_trilu[] = {
	{ "where", where_ops }, { "mul", mul_ops }, { "mul-int", mul_ops },
	{ "where-k", where_k_ops }, { "mul-k", mul_k_ops }, { "mul-k-int", mul_k_ops },
	{ "clip-k", clip_k_ops }, { "clip-k-int", clip_k_ops },
};
static const unsigned char a_trilu[] = { 0, 2, 0, 0, 2, 0, 2, 0 };
RW_DECOMPOSITION_A(trilu, "trilu",
		   "Trilu as Where with a constant triangular mask, or Mul by it (exact for integers; inf/NaN outside become NaN); where k is an input the mask is GreaterOrEqual of the constant j - i and k, or Clip(j - i + 1 - k, 0, 1)",
		   m_trilu, v_trilu, a_trilu, check_trilu, vcheck_trilu, apply_trilu);

/* ---- CumSum ----------------------------------------------------------- */

static int cumsum_axis(struct rw_ctx *c, const struct ir_node *n, int *axis, int *rank,
		       int64_t *len, char *why, size_t size)
{
	const struct ir_vtype *t = rw_type(c, n->inputs[0]);
	int64_t a;
	size_t cnt;

	if (n->n_inputs < 2 || !n->inputs[1] || !rw_const_ints(c, n->inputs[1], &a, 1, &cnt) ||
	    cnt != 1) {
		snprintf(why, size, "the axis is not a constant");
		return 0;
	}
	if (!t || t->rank < 1 || t->rank > IR_INFER_MAX_RANK) {
		snprintf(why, size, "the rank is unknown");
		return 0;
	}
	if (a < 0)
		a += t->rank;
	if (a < 0 || a >= t->rank) {
		snprintf(why, size, "axis out of range");
		return 0;
	}
	if (t->dims[a].kind != IR_VDIM_VALUE || t->dims[a].value > CUMSUM_MAX ||
	    t->dims[a].value < 1) {
		snprintf(why, size, "the axis's dim is not static in [1, %d]", CUMSUM_MAX);
		return 0;
	}
	*axis = (int)a;
	*rank = t->rank;
	*len = t->dims[a].value;
	return 1;
}

static int check_cumsum(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int axis, rank;
	int64_t len;

	return rw_check_float_node(c, n, 11, why, size) &&
	       cumsum_axis(c, n, &axis, &rank, &len, why, size);
}

static struct ir_value *swap_last(struct rw_emit *e, struct ir_value *x, int axis,
				  int rank, struct ir_value *out)
{
	int64_t perm[IR_INFER_MAX_RANK];
	struct ir_node *t;

	for (int i = 0; i < rank; i++)
		perm[i] = i;
	perm[axis] = rank - 1;
	perm[rank - 1] = axis;
	t = rw_node(e, "Transpose", NULL, &x, 1, out);
	if (t && ir_node_set_ints(t, "perm", perm, (size_t)rank) < 0)
		e->failed = 1;
	return t ? t->outputs[0] : NULL;
}

static int apply_cumsum(struct rw_ctx *c, struct ir_node *n, int v)
{
	int axis = 0, rank = 1, moved;
	int64_t len = 1, dims[2];
	int excl = rw_attr_int(n, "exclusive", 0) != 0, rev = rw_attr_int(n, "reverse", 0) != 0;
	struct ir_value *x = n->inputs[0], *y;
	struct rw_emit e;
	double *tri;
	char why[64];

	(void)v;
	cumsum_axis(c, n, &axis, &rank, &len, why, sizeof(why));
	moved = axis != rank - 1;
	rw_begin(c, n, &e);
	if (!(tri = malloc((size_t)(len * len) * sizeof(*tri))))
		return rw_end(&e, ir_diag_error(c->d, IR_ENOMEM, "out of memory"));
	/* y[i] = sum_j x[j] tri[j][i] */
	for (int64_t j = 0; j < len; j++)
		for (int64_t i = 0; i < len; i++)
			tri[j * len + i] = rev ? (excl ? j > i : j >= i) : (excl ? j < i : j <= i);
	dims[0] = dims[1] = len;
	if (moved)
		x = swap_last(&e, x, axis, rank, NULL);
	y = rw_op_to(&e, "MatMul", x, rw_const(&e, e.dtype, 2, dims, tri),
		     moved ? NULL : n->outputs[0]);
	if (moved)
		swap_last(&e, y, axis, rank, n->outputs[0]);
	free(tri);
	return rw_end(&e, 0);
}

static const char *const m_cumsum[] = { "CumSum", NULL };
static const char *const cumsum_ops[] = { "Transpose", "MatMul", NULL };
static const struct rw_variant v_cumsum[] = { { "matmul", cumsum_ops } };
RW_DECOMPOSITION(cumsum, "cumsum",
		 "CumSum (exclusive, reverse) as MatMul with a constant triangular matrix along a static axis",
		 m_cumsum, v_cumsum, check_cumsum, NULL, apply_cumsum);
