/* trilu.c: ops that are a product with a constant triangular matrix:
 *   "trilu"   Trilu (upper/lower, constant k) as Where(mask, x, 0) with a
 *             constant bool mask [N, M] (exact, any dtype), or x * mask
 *             (numeric; an inf or NaN outside the kept triangle becomes
 *             NaN, not 0)
 *   "cumsum"  CumSum along a constant axis of static length L <= 4096 as
 *             MatMul with a constant [L, L] 0/1 matrix (exclusive and
 *             reverse choose the triangle), the axis moved last by a
 *             Transpose and back; float data (sums in another order:
 *             float rounding). */
#include <stdio.h>
#include <stdlib.h>

#include "rewriters/rw_int.h"
#include "validators/runtime.h"

#define CUMSUM_MAX 4096

/* ---- Trilu ------------------------------------------------------------ */

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
	if (!trilu_k(c, n, &k)) {
		snprintf(why, size, "k is not a constant");
		return 0;
	}
	if (c->opset < 9) {
		snprintf(why, size, "needs opset >= 9");
		return 0;
	}
	return 1;
}

static int vcheck_trilu(struct rw_ctx *c, const struct ir_node *n, int v)
{
	int dt = rw_node_dtype(c, n);

	return v == 0 || (dt != IR_DTYPE_BOOL && dt != IR_DTYPE_STRING && c->opset >= 7);
}

static int apply_trilu(struct rw_ctx *c, struct ir_node *n, int v)
{
	const struct ir_vtype *t = rw_type(c, n->inputs[0]);
	int64_t rows = t->dims[t->rank - 2].value, cols = t->dims[t->rank - 1].value, k;
	int64_t dims[2] = { rows, cols };
	int upper = rw_attr_int(n, "upper", 1) != 0;
	struct rw_emit e;
	double *mask;
	struct ir_value *m;

	trilu_k(c, n, &k);
	rw_begin(c, n, &e);
	if (!(mask = malloc((size_t)(rows * cols + 1) * sizeof(*mask))))
		return rw_end(&e, ir_diag_error(c->d, IR_ENOMEM, "out of memory"));
	for (int64_t i = 0; i < rows; i++)
		for (int64_t j = 0; j < cols; j++)
			mask[i * cols + j] = upper ? j - i >= k : j - i <= k;
	if (v == 0) {
		struct ir_value *in[3];

		m = rw_const(&e, IR_DTYPE_BOOL, 2, dims, mask);
		in[0] = m;
		in[1] = n->inputs[0];
		in[2] = rw_scalar(&e, e.dtype, 0);
		rw_node(&e, "Where", NULL, in, 3, n->outputs[0]);
	} else {
		rw_op_to(&e, "Mul", n->inputs[0], rw_const(&e, e.dtype, 2, dims, mask),
			 n->outputs[0]);
	}
	free(mask);
	return rw_end(&e, 0);
}

static const char *const m_trilu[] = { "Trilu", NULL };
static const char *const where_ops[] = { "Where", NULL };
static const char *const mul_ops[] = { "Mul", NULL };
static const struct rw_variant v_trilu[] = { { "where", where_ops }, { "mul", mul_ops } };
static const unsigned char a_trilu[] = { 0, 2 };
RW_DECOMPOSITION_A(trilu, "trilu",
		   "Trilu as Where with a constant triangular mask, or Mul by it (inf/NaN outside become NaN)",
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
