/* reduce.c: reductions and softmax as ReduceSum/ReduceMax and
 * elementwise ops:
 *   ReduceL1         sum |x|            ReduceL2       sqrt(sum x^2)
 *   ReduceLogSum     log(sum x)         ReduceSumSquare sum x^2
 *   ReduceLogSumExp  m + log(sum exp(x - m)), m = max x (never overflows)
 *   each also with the sum as ReduceMean times N (the count of the reduced
 *   elements, static; LogSumExp adds log N), for targets without ReduceSum
 *   ReduceMean       ReduceSum / N      ReduceSum      ReduceMean * N
 *   Softmax          exp(x - max x) / sum exp(x - max x)
 *   LogSoftmax       (x - max x) - log(sum exp(x - max x))
 *   GlobalAveragePool, GlobalMaxPool  ReduceMean/ReduceMax over 2.. keepdims
 * Reduction axes come from the attribute or a constant axes input; before
 * opset 13 Softmax/LogSoftmax reduce every axis from `axis` on (the spec's
 * coercion to 2-D), from 13 the one axis. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rewriters/rw_int.h"

#define MAX_AXES 16

/* The axes a Reduce* node reduces (all of them when none are given);
 * 0 with the reason when unknown. */
static int reduce_axes(struct rw_ctx *c, const struct ir_node *n, int64_t *axes,
		       size_t *k, char *why, size_t size)
{
	const int64_t *a;
	size_t na = 0;
	int r = rw_rank(c, n->inputs[0]);

	*k = 0;
	if (n->n_inputs >= 2 && n->inputs[1]) {
		if (!rw_const_ints(c, n->inputs[1], axes, MAX_AXES, k)) {
			snprintf(why, size, "the axes input is not constant");
			return 0;
		}
	} else if ((a = rw_attr_ints(n, "axes", &na)) && na) {
		if (na > MAX_AXES)
			return 0;
		memcpy(axes, a, na * sizeof(*a));
		*k = na;
	}
	if (!*k) {
		if (rw_attr_int(n, "noop_with_empty_axes", 0)) {
			snprintf(why, size, "noop_with_empty_axes with no axes");
			return 0;
		}
		if (r < 0 || r > MAX_AXES) {
			snprintf(why, size, "reduces every axis of an input of unknown rank");
			return 0;
		}
		for (int i = 0; i < r; i++)
			axes[i] = i;
		*k = (size_t)r;
	}
	return 1;
}

static int check_reduce(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int64_t axes[MAX_AXES];
	size_t k;

	return rw_check_float_node(c, n, 7, why, size) &&
	       reduce_axes(c, n, axes, &k, why, size);
}

static const char *const reduce_names[] = {
	"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"
};

static int reduce_op(const struct ir_node *n)
{
	for (int i = 0; i < 5; i++)
		if (!strcmp(ir_s(n->op_type), reduce_names[i]))
			return i;
	return -1;
}

/* The number of elements the axes reduce, -1 when a dim is not static */
static double reduced_count(struct rw_ctx *c, const struct ir_node *n, const int64_t *axes,
			    size_t k)
{
	const struct ir_vtype *t = rw_type(c, n->inputs[0]);
	double cnt = 1;

	if (!t || t->rank < 0)
		return -1;
	for (size_t i = 0; i < k; i++) {
		int64_t a = axes[i] < 0 ? axes[i] + t->rank : axes[i];

		if (a < 0 || a >= t->rank || t->dims[a].kind != IR_VDIM_VALUE)
			return -1;
		cnt *= (double)t->dims[a].value;
	}
	return cnt;
}

/* variants 0-4: the op's form with ReduceSum, 5-9 with ReduceMean * N */
static int vcheck_reduce(struct rw_ctx *c, const struct ir_node *n, int v)
{
	int64_t axes[MAX_AXES];
	size_t k;
	char why[8];

	if (reduce_op(n) != v % 5)
		return 0;
	return v < 5 || (reduce_axes(c, n, axes, &k, why, sizeof(why)) &&
			 reduced_count(c, n, axes, k) > 0);
}

/* sum over the axes: ReduceSum, or ReduceMean times the count */
static struct ir_value *sum(struct rw_emit *e, struct ir_value *x, const int64_t *axes,
			    size_t k, int keep, double cnt, struct ir_value *out)
{
	if (cnt <= 0)
		return rw_reduce(e, "ReduceSum", x, axes, k, keep, out);
	return rw_op_to(e, "Mul", rw_reduce(e, "ReduceMean", x, axes, k, keep, NULL),
			rw_scalar(e, e->dtype, cnt), out);
}

static int apply_reduce(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *x = n->inputs[0], *y = n->outputs[0];
	int64_t axes[MAX_AXES];
	size_t k;
	int keep = (int)rw_attr_int(n, "keepdims", 1);
	double cnt;
	char why[8];

	reduce_axes(c, n, axes, &k, why, sizeof(why));
	cnt = v < 5 ? 0 : reduced_count(c, n, axes, k);
	rw_begin(c, n, &e);
	switch (v % 5) {
	case 0:
		sum(&e, rw_op(&e, "Abs", x, NULL), axes, k, keep, cnt, y);
		break;
	case 1:
		rw_op_to(&e, "Sqrt", sum(&e, rw_op(&e, "Mul", x, x), axes, k, keep, cnt, NULL),
			 NULL, y);
		break;
	case 2:
		rw_op_to(&e, "Log", sum(&e, x, axes, k, keep, cnt, NULL), NULL, y);
		break;
	case 3: {
		struct ir_value *m1 = rw_reduce(&e, "ReduceMax", x, axes, k, 1, NULL);
		struct ir_value *m = keep ? m1 : rw_reduce(&e, "ReduceMax", x, axes, k, 0, NULL);
		struct ir_value *ex = rw_op(&e, "Exp", rw_op(&e, "Sub", x, m1), NULL), *s;

		if (v < 5) {
			s = rw_reduce(&e, "ReduceSum", ex, axes, k, keep, NULL);
			rw_op_to(&e, "Add", rw_op(&e, "Log", s, NULL), m, y);
		} else {   /* log(N mean) = log(mean) + log N */
			s = rw_reduce(&e, "ReduceMean", ex, axes, k, keep, NULL);
			s = rw_op(&e, "Add", rw_op(&e, "Log", s, NULL), m);
			rw_op_to(&e, "Add", s, rw_scalar(&e, e.dtype, log(cnt)), y);
		}
		break;
	}
	default:
		sum(&e, rw_op(&e, "Mul", x, x), axes, k, keep, cnt, y);
	}
	return rw_end(&e, 0);
}

static const char *const m_reduce[] = {
	"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", NULL
};
static const char *const l1_ops[] = { "Abs", "ReduceSum", NULL };
static const char *const l2_ops[] = { "Mul", "ReduceSum", "Sqrt", NULL };
static const char *const logsum_ops[] = { "ReduceSum", "Log", NULL };
static const char *const lse_ops[] = { "ReduceMax", "Sub", "Exp", "ReduceSum", "Log", "Add", NULL };
static const char *const sumsq_ops[] = { "Mul", "ReduceSum", NULL };
static const char *const l1m_ops[] = { "Abs", "ReduceMean", "Mul", NULL };
static const char *const l2m_ops[] = { "Mul", "ReduceMean", "Sqrt", NULL };
static const char *const logsumm_ops[] = { "ReduceMean", "Mul", "Log", NULL };
static const char *const lsem_ops[] = { "ReduceMax", "Sub", "Exp", "ReduceMean", "Log", "Add", NULL };
static const char *const sumsqm_ops[] = { "Mul", "ReduceMean", NULL };
static const struct rw_variant v_reduce[] = {
	{ "l1", l1_ops }, { "l2", l2_ops }, { "log-sum", logsum_ops },
	{ "log-sum-exp", lse_ops }, { "sum-square", sumsq_ops },
	{ "l1-mean", l1m_ops }, { "l2-mean", l2m_ops }, { "log-sum-mean", logsumm_ops },
	{ "log-sum-exp-mean", lsem_ops }, { "sum-square-mean", sumsqm_ops },
};
RW_DECOMPOSITION(reduce, "reduce",
		 "ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp (max-shifted) and ReduceSumSquare via ReduceSum, or ReduceMean times the count",
		 m_reduce, v_reduce, check_reduce, vcheck_reduce, apply_reduce);

/* ---- ReduceMean <-> ReduceSum ----------------------------------------- */

static int check_mean_sum(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int64_t axes[MAX_AXES];
	size_t k;

	if (!check_reduce(c, n, why, size))
		return 0;
	reduce_axes(c, n, axes, &k, why, size);
	if (reduced_count(c, n, axes, k) <= 0) {
		snprintf(why, size, "a reduced dim is not static (or is 0)");
		return 0;
	}
	return 1;
}

static int vcheck_mean_sum(struct rw_ctx *c, const struct ir_node *n, int v)
{
	(void)c;
	return v == !strcmp(ir_s(n->op_type), "ReduceSum");
}

static int apply_mean_sum(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	int64_t axes[MAX_AXES];
	size_t k;
	int keep = (int)rw_attr_int(n, "keepdims", 1);
	double cnt;
	char why[8];

	reduce_axes(c, n, axes, &k, why, sizeof(why));
	cnt = reduced_count(c, n, axes, k);
	rw_begin(c, n, &e);
	if (v == 0)
		rw_op_to(&e, "Div", rw_reduce(&e, "ReduceSum", n->inputs[0], axes, k, keep, NULL),
			 rw_scalar(&e, e.dtype, cnt), n->outputs[0]);
	else
		sum(&e, n->inputs[0], axes, k, keep, cnt, n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const m_mean_sum[] = { "ReduceMean", "ReduceSum", NULL };
static const char *const sum_div_ops[] = { "ReduceSum", "Div", NULL };
static const char *const mean_mul_ops[] = { "ReduceMean", "Mul", NULL };
static const struct rw_variant v_mean_sum[] = {
	{ "sum-div", sum_div_ops }, { "mean-mul", mean_mul_ops },
};
RW_DECOMPOSITION(reduce_mean_sum, "reduce-mean-sum",
		 "ReduceMean as ReduceSum / N and ReduceSum as ReduceMean * N (N the static count of reduced elements)",
		 m_mean_sum, v_mean_sum, check_mean_sum, vcheck_mean_sum, apply_mean_sum);

/* ---- Softmax, LogSoftmax --------------------------------------------- */

static int softmax_axes(struct rw_ctx *c, const struct ir_node *n, int64_t *axes,
			size_t *k, char *why, size_t size)
{
	int r;
	int64_t axis;

	/* the node's semantics: one axis from 13, the axes from it before */
	if (!rw_node_axis(c, n, rw_node_opset(c) >= 13 ? -1 : 1, MAX_AXES, &r, &axis, why, size))
		return 0;
	*k = 0;
	for (int64_t i = axis; i < (rw_node_opset(c) >= 13 ? axis + 1 : r); i++)
		axes[(*k)++] = i;
	return 1;
}

static int check_softmax(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int64_t axes[MAX_AXES];
	size_t k;

	return rw_check_float_node(c, n, 7, why, size) &&
	       softmax_axes(c, n, axes, &k, why, size);
}

static int vcheck_softmax(struct rw_ctx *c, const struct ir_node *n, int v)
{
	(void)c;
	return v == !strcmp(ir_s(n->op_type), "LogSoftmax");
}

static int apply_softmax(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *x = n->inputs[0], *y = n->outputs[0], *d, *ex, *s;
	int64_t axes[MAX_AXES];
	size_t k;
	char why[8];

	softmax_axes(c, n, axes, &k, why, sizeof(why));
	rw_begin(c, n, &e);
	d = rw_op(&e, "Sub", x, rw_reduce(&e, "ReduceMax", x, axes, k, 1, NULL));
	ex = rw_op(&e, "Exp", d, NULL);
	s = rw_reduce(&e, "ReduceSum", ex, axes, k, 1, NULL);
	if (v == 0)
		rw_op_to(&e, "Div", ex, s, y);
	else
		rw_op_to(&e, "Sub", d, rw_op(&e, "Log", s, NULL), y);
	return rw_end(&e, 0);
}

static const char *const m_softmax[] = { "LogSoftmax", "Softmax", NULL };
static const char *const softmax_ops[] = { "ReduceMax", "Sub", "Exp", "ReduceSum", "Div", NULL };
static const char *const logsoftmax_ops[] = { "ReduceMax", "Sub", "Exp", "ReduceSum", "Log", NULL };
static const struct rw_variant v_softmax[] = {
	{ "exp-div", softmax_ops }, { "exp-log", logsoftmax_ops },
};
RW_DECOMPOSITION(softmax, "softmax",
		 "Softmax and LogSoftmax (both axis semantics) as max-shifted Exp, ReduceSum, Div or Log",
		 m_softmax, v_softmax, check_softmax, vcheck_softmax, apply_softmax);

/* ---- GlobalAveragePool, GlobalMaxPool -------------------------------- */

static int check_global(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int r;

	if (!rw_check_float_node(c, n, 1, why, size))
		return 0;
	r = rw_rank(c, n->inputs[0]);
	if (r < 3 || r > MAX_AXES) {
		snprintf(why, size, "the input's rank is unknown or below 3");
		return 0;
	}
	return 1;
}

static int vcheck_global(struct rw_ctx *c, const struct ir_node *n, int v)
{
	(void)c;
	return v == !strcmp(ir_s(n->op_type), "GlobalMaxPool");
}

static int apply_global(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	int64_t axes[MAX_AXES];
	int r = rw_rank(c, n->inputs[0]);

	for (int i = 2; i < r; i++)
		axes[i - 2] = i;
	rw_begin(c, n, &e);
	rw_reduce(&e, v ? "ReduceMax" : "ReduceMean", n->inputs[0], axes, (size_t)r - 2, 1,
		  n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const m_global[] = { "GlobalAveragePool", "GlobalMaxPool", NULL };
static const char *const mean_ops[] = { "ReduceMean", NULL };
static const char *const max_ops[] = { "ReduceMax", NULL };
static const struct rw_variant v_global[] = { { "mean", mean_ops }, { "max", max_ops } };
RW_DECOMPOSITION(global_pool, "global-pool",
		 "GlobalAveragePool and GlobalMaxPool as ReduceMean/ReduceMax over the spatial axes",
		 m_global, v_global, check_global, vcheck_global, apply_global);
