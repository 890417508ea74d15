/* loss.c: passes "nll-loss" and "sce-loss": NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (log-probabilities lp = LogSoftmax(scores) along
 * axis 1, the NLL of those; log_prob is that LogSoftmax) in three forms:
 *   gather-elements  t' = Where(t == ignore, 0, t); g = lp at t' along
 *       the class axis (GatherElements, the axis reduced away by
 *       ReduceSum); w = Where(t == ignore, 0, Gather(weight or ones, t'));
 *       loss = -g w (exact: only the target's log-probability is read);
 *       targets of rank > 1 are flattened for the Gather (Flatten and
 *       Squeeze: some NPUs take rank-1 indices only, and Reshape of floats
 *       only) and its weights reshaped back, so their shape must be static
 *   onehot-equal  oh = Cast(Equal(Unsqueeze(t), classes)) times the weight
 *       unsqueezed to [C, 1, ...]; loss = -ReduceSum(lp oh) over the class
 *       axis (no GatherElements, which many NPUs lack)
 *   onehot-arith  oh = Relu(1 - (Cast(t) - classes)^2), exact for integers
 *       below 2^24 (2048 in float16), for targets without Equal either
 * where classes is the constant 0..C-1 with the ignored class (ignore_index
 * in [0, C)) replaced by -1, so the ignored targets' rows are zero; any
 * ignore_index outside [0, C) matches no class.  Reductions: none; sum of
 * the loss; mean: that sum over the sum of the applied weights (ReduceSum
 * of w or oh: the weights of the non-ignored targets, their count without
 * weights; 0/0 = NaN when every target is ignored, as onnxruntime gives).
 * The one-hot forms multiply every log-probability by 0 or 1: an infinite
 * or NaN log-probability of a class other than the target makes the loss
 * NaN (approximate variants).  SoftmaxCrossEntropyLoss before opset 13 of
 * rank > 2 (where LogSoftmax flattens from the axis) moves the classes
 * last by a Transpose and back for log_prob. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/rw_int.h"

#define MAX_RANK IR_INFER_MAX_RANK

enum { RED_NONE, RED_SUM, RED_MEAN };

struct loss {
	int rank;              /* of the scores / log-probabilities */
	int64_t classes;       /* C, static */
	int tdt;               /* the targets' dtype */
	int has_ignore;
	int64_t ignore;
	int red;
	int moved;             /* SCE before 13 of rank > 2: classes moved last */
	int64_t tdims[MAX_RANK];   /* the targets' dims, when static */
	int tstatic;
};

static int is_sce(const struct ir_node *n)
{
	return !strcmp(ir_s(n->op_type), "SoftmaxCrossEntropyLoss");
}

static int reduction(const struct ir_node *n)
{
	const char *r = rw_attr_str(n, "reduction", "mean");

	return !strcmp(r, "none") ? RED_NONE : !strcmp(r, "sum") ? RED_SUM :
	       !strcmp(r, "mean") ? RED_MEAN : -1;
}

static int has(const struct ir_node *n, size_t i)
{
	return n->n_inputs > i && n->inputs[i];
}

static int describe(struct rw_ctx *c, const struct ir_node *n, struct loss *l, char *why,
		    size_t size)
{
	const struct ir_vtype *x, *t;
	int dt = rw_node_dtype(c, n), tr;

	memset(l, 0, sizeof(*l));
	if (!has(n, 0) || !has(n, 1) || !n->n_outputs || !n->outputs[0]) {
		snprintf(why, size, "the scores, the targets or the loss is absent");
		return 0;
	}
	if (dt != IR_DTYPE_FLOAT && dt != IR_DTYPE_DOUBLE) {
		snprintf(why, size, "for float and double data, not %s (the sums would round "
			 "in the data's dtype)", dt ? ir_dtype_name(dt) : "unknown");
		return 0;
	}
	x = rw_type(c, n->inputs[0]);
	t = rw_type(c, n->inputs[1]);
	if (!x || x->rank < 2 || x->rank > MAX_RANK || x->dims[1].kind != IR_VDIM_VALUE ||
	    x->dims[1].value < 1) {
		snprintf(why, size, "the input's rank or its class count C is unknown");
		return 0;
	}
	if (!t || (t->dtype != IR_DTYPE_INT32 && t->dtype != IR_DTYPE_INT64)) {
		snprintf(why, size, "the targets are not int32 or int64");
		return 0;
	}
	if (t->rank >= 0 && t->rank != x->rank - 1) {
		snprintf(why, size, "the targets' rank is not the input's less one");
		return 0;
	}
	if ((l->red = reduction(n)) < 0) {
		snprintf(why, size, "unknown reduction '%s'", rw_attr_str(n, "reduction", ""));
		return 0;
	}
	if (c->opset < 12) {
		snprintf(why, size, "needs opset >= 12");
		return 0;
	}
	l->rank = x->rank;
	l->classes = x->dims[1].value;
	l->tstatic = rw_static_shape(c, n->inputs[1], l->tdims, &tr) && tr == x->rank - 1;
	l->tdt = t->dtype;
	l->has_ignore = ir_node_attr(n, "ignore_index") != NULL;
	l->ignore = rw_attr_int(n, "ignore_index", 0);
	if (l->has_ignore && (t->dtype == IR_DTYPE_INT32 ?
			      l->ignore != (int32_t)l->ignore :
			      (l->ignore > (INT64_C(1) << 53) || l->ignore < -(INT64_C(1) << 53)))) {
		snprintf(why, size, "ignore_index %lld is no value of the targets' dtype (or "
			 "beyond 2^53)", (long long)l->ignore);
		return 0;
	}
	l->moved = is_sce(n) && c->opset < 13 && x->rank > 2;
	return 1;
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	struct loss l;

	if (!describe(c, n, &l, why, size))
		return 0;
	if (!is_sce(n))
		for (size_t i = 1; i < n->n_outputs; i++)
			if (rw_value_used(n->outputs[i])) {
				snprintf(why, size, "output %zu is used", i);
				return 0;
			}
	return 1;
}

/* The forms: GatherElements on targets of rank 1 ([N, C] scores), or on
 * the targets flattened (rank > 1, static), the one-hot by Equal, or by
 * arithmetic */
enum { F_GATHER, F_GATHER_FLAT, F_EQUAL, F_ARITH };

/* What each variant is: its form, for reduction mean, classes moved last */
struct form {
	unsigned char form, mean, moved;
};

static const struct form nll_forms[] = {
	{ F_GATHER, 0, 0 }, { F_GATHER, 1, 0 }, { F_GATHER_FLAT, 0, 0 }, { F_GATHER_FLAT, 1, 0 },
	{ F_EQUAL, 0, 0 }, { F_EQUAL, 1, 0 }, { F_ARITH, 0, 0 }, { F_ARITH, 1, 0 },
};
static const struct form sce_forms[] = {
	{ F_GATHER, 0, 0 }, { F_GATHER, 1, 0 }, { F_GATHER_FLAT, 0, 0 }, { F_GATHER_FLAT, 1, 0 },
	{ F_EQUAL, 0, 0 }, { F_EQUAL, 1, 0 }, { F_ARITH, 0, 0 }, { F_ARITH, 1, 0 },
	{ F_GATHER_FLAT, 0, 1 }, { F_GATHER_FLAT, 1, 1 }, { F_EQUAL, 0, 1 }, { F_EQUAL, 1, 1 },
	{ F_ARITH, 0, 1 }, { F_ARITH, 1, 1 },
};

static const struct form *form_of(const struct ir_node *n, int v)
{
	return is_sce(n) ? &sce_forms[v] : &nll_forms[v];
}

static int vcheck(struct rw_ctx *c, const struct ir_node *n, int v)
{
	const struct form *f = form_of(n, v);
	struct loss l;
	char why[8];
	int plan = rw_plan_dtype(c, rw_node_dtype(c, n));
	int64_t exact = plan == IR_DTYPE_FLOAT16 ? 2048 : plan == IR_DTYPE_BFLOAT16 ? 256 :
			1 << 24;

	if (f->mean != (reduction(n) == RED_MEAN))
		return 0;
	if (rw_is_probe(n))     /* an op of unknown shape: any form */
		return !f->moved;
	if (!describe(c, n, &l, why, sizeof(why)) || f->moved != l.moved)
		return 0;
	/* Gather takes the targets as they are where they are rank 1 (some
	 * NPUs take no other), else flattened, which reshape back to a static
	 * shape; Cast(t) - c is exact while the classes are integers of the
	 * dtype the arithmetic runs in (float16 when the precision pass
	 * converts) */
	if (f->form == F_GATHER)
		return l.rank == 2;
	if (f->form == F_GATHER_FLAT)
		return l.rank > 2 && l.tstatic;
	return f->form != F_ARITH || l.classes <= exact;
}

/* The constant classes 0..C-1 (the ignored one -1) shaped [C, 1, ...] to
 * broadcast along the class axis cax of a rank-r tensor. */
static struct ir_value *classes(struct rw_emit *e, const struct loss *l, int cax, int dtype)
{
	int64_t dims[MAX_RANK];
	double *v = malloc((size_t)l->classes * sizeof(*v));
	struct ir_value *out;
	int r = l->rank - cax;

	if (!v) {
		e->failed = 1;
		return NULL;
	}
	for (int64_t k = 0; k < l->classes; k++)
		v[k] = l->has_ignore && k == l->ignore ? -1 : (double)k;
	dims[0] = l->classes;
	for (int i = 1; i < r; i++)
		dims[i] = 1;
	out = rw_const(e, dtype, r, dims, v);
	free(v);
	return out;
}

static struct ir_value *cast(struct rw_emit *e, struct ir_value *x, int to)
{
	struct ir_node *n = rw_node(e, "Cast", NULL, &x, 1, NULL);

	if (n && ir_node_set_int(n, "to", to) < 0)
		e->failed = 1;
	return n ? n->outputs[0] : NULL;
}

/* sum over every axis of a rank-r value to a scalar */
static struct ir_value *sum_all(struct rw_emit *e, struct ir_value *x, int r,
				struct ir_value *out)
{
	int64_t axes[MAX_RANK] = { 0 };

	for (int i = 0; i < r; i++)
		axes[i] = i;
	return rw_reduce(e, "ReduceSum", x, axes, (size_t)r, 0, out);
}

/* -sum / weights (mean), -sum (sum), or the per-element loss (none) of
 * per-element products p of rank r (the class axis cax still there when
 * keep, summed away first); wsum: the applied weights, of rank r */
static void reduce_loss(struct rw_emit *e, const struct loss *l, struct ir_value *p, int r,
			int cax, int keep, struct ir_value *w, struct ir_value *out)
{
	int64_t ax = cax;

	if (l->red == RED_NONE) {
		rw_op_to(e, "Neg", keep ? rw_reduce(e, "ReduceSum", p, &ax, 1, 0, NULL) : p,
			 NULL, out);
	} else if (l->red == RED_SUM) {
		rw_op_to(e, "Neg", sum_all(e, p, r, NULL), NULL, out);
	} else {
		rw_op_to(e, "Neg", rw_op(e, "Div", sum_all(e, p, r, NULL), sum_all(e, w, r, NULL)),
			 NULL, out);
	}
}

/* The NLL of log-probabilities lp (rank l->rank, classes along cax) */
static void nll(struct rw_emit *e, const struct ir_node *n, const struct loss *l, int form,
		struct ir_value *lp, int cax, struct ir_value *out)
{
	struct ir_value *t = n->inputs[1], *w = has(n, 2) ? n->inputs[2] : NULL, *oh;
	int64_t ax = cax, waxes[MAX_RANK];
	int r = l->rank;

	if (form == F_GATHER || form == F_GATHER_FLAT) {
		/* the ignored read class 0, their weight is 0; Gather of the
		 * weights by the targets flattened (Flatten, Squeeze: some NPUs
		 * take rank-1 indices only, and Reshape of floats only) and the
		 * gathered weights reshaped back */
		struct ir_value *eq, *in[3], *g, *wg, *ti;
		struct ir_node *wh;
		double ig = l->has_ignore ? (double)l->ignore : -1;   /* -1: no target */
		int64_t zero = 0;

		eq = rw_op(e, "Equal", t, rw_scalar(e, l->tdt, ig));
		in[0] = eq;
		in[1] = rw_scalar(e, l->tdt, 0);
		in[2] = t;
		wh = rw_node(e, "Where", NULL, in, 3, NULL);
		t = wh ? wh->outputs[0] : NULL;
		ti = t;
		if (form == F_GATHER_FLAT) {
			wh = rw_node(e, "Flatten", NULL, &ti, 1, NULL);
			if (wh && ir_node_set_int(wh, "axis", 0) < 0)
				e->failed = 1;
			ti = rw_squeeze(e, wh ? wh->outputs[0] : NULL, &zero, 1);
		}
		if (!w) {
			double *ones = malloc((size_t)l->classes * sizeof(*ones));

			if (!ones) {
				e->failed = 1;
				return;
			}
			for (int64_t k = 0; k < l->classes; k++)
				ones[k] = 1;
			w = rw_const(e, e->dtype, 1, &l->classes, ones);
			free(ones);
		}
		wg = rw_op(e, "Gather", w, ti);
		if (form == F_GATHER_FLAT)
			wg = rw_reshape(e, wg, l->tdims, (size_t)r - 1, NULL);
		in[1] = rw_scalar(e, e->dtype, 0);
		in[2] = wg;
		wh = rw_node(e, "Where", NULL, in, 3, NULL);
		wg = wh ? wh->outputs[0] : NULL;
		in[0] = lp;
		in[1] = rw_unsqueeze(e, t, &ax, 1);
		wh = rw_node(e, "GatherElements", NULL, in, 2, NULL);
		if (wh && ir_node_set_int(wh, "axis", cax) < 0)
			e->failed = 1;
		g = rw_reduce(e, "ReduceSum", wh ? wh->outputs[0] : NULL, &ax, 1, 0, NULL);
		reduce_loss(e, l, rw_op(e, "Mul", g, wg), r - 1, cax, 0, wg, out);
		return;
	}
	t = rw_unsqueeze(e, t, &ax, 1);
	if (form == F_EQUAL) {
		oh = cast(e, rw_op(e, "Equal", t, classes(e, l, cax, l->tdt)), e->dtype);
	} else {
		struct ir_value *d = rw_op(e, "Sub", cast(e, t, e->dtype),
					   classes(e, l, cax, e->dtype));

		oh = rw_op(e, "Relu", rw_op(e, "Sub", rw_scalar(e, e->dtype, 1),
					    rw_op(e, "Mul", d, d)), NULL);
	}
	if (w) {
		/* [C] to [C, 1, ...] against [N, C, d1, ...] */
		for (int i = cax + 1; i < r; i++)
			waxes[i - cax - 1] = i - cax;
		if (r - cax > 1)
			w = rw_unsqueeze(e, w, waxes, (size_t)(r - cax - 1));
		oh = rw_op(e, "Mul", oh, w);
	}
	reduce_loss(e, l, rw_op(e, "Mul", lp, oh), r, cax, 1, oh, out);
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct loss l;
	char why[256];
	struct ir_value *lp = n->inputs[0];
	struct ir_value *logp = n->n_outputs > 1 ? n->outputs[1] : NULL;
	int cax = 1;

	describe(c, n, &l, why, sizeof(why));
	rw_begin(c, n, &e);
	if (is_sce(n)) {
		int64_t perm[MAX_RANK], back[MAX_RANK];
		struct ir_node *ls;

		if (l.moved) {   /* [N, C, d...] -> [N, d..., C] */
			for (int i = 0; i < l.rank - 1; i++)
				perm[i] = i ? i + 1 : 0;
			perm[l.rank - 1] = 1;
			for (int i = 0; i < l.rank; i++)
				back[perm[i]] = i;
			lp = rw_transpose(&e, lp, perm, (size_t)l.rank, NULL);
			cax = l.rank - 1;
		}
		ls = rw_node(&e, "LogSoftmax", NULL, &lp, 1, l.moved ? NULL : logp);
		if (ls && ir_node_set_int(ls, "axis", cax) < 0)
			e.failed = 1;
		lp = ls ? ls->outputs[0] : NULL;
		if (l.moved && logp)
			rw_transpose(&e, lp, back, (size_t)l.rank, logp);
	}
	nll(&e, n, &l, form_of(n, v)->form, lp, cax, n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const m_nll[] = { "NegativeLogLikelihoodLoss", NULL };
static const char *const m_sce[] = { "SoftmaxCrossEntropyLoss", NULL };

#define GATHER_OPS "Unsqueeze", "Equal", "Where", "Gather", "GatherElements", "ReduceSum", \
		   "Mul", "Neg"
#define FLAT_OPS "Unsqueeze", "Flatten", "Squeeze", "Reshape", "Equal", "Where", "Gather", \
		 "GatherElements", "ReduceSum", "Mul", "Neg"
#define EQUAL_OPS "Unsqueeze", "Equal", "Cast", "Mul", "ReduceSum", "Neg"
#define ARITH_OPS "Unsqueeze", "Cast", "Sub", "Mul", "Relu", "ReduceSum", "Neg"

static const char *const ge_ops[] = { GATHER_OPS, NULL };
static const char *const ge_mean_ops[] = { GATHER_OPS, "Div", NULL };
static const char *const gf_ops[] = { FLAT_OPS, NULL };
static const char *const gf_mean_ops[] = { FLAT_OPS, "Div", NULL };
static const char *const eq_ops[] = { EQUAL_OPS, NULL };
static const char *const eq_mean_ops[] = { EQUAL_OPS, "Div", NULL };
static const char *const ar_ops[] = { ARITH_OPS, NULL };
static const char *const ar_mean_ops[] = { ARITH_OPS, "Div", NULL };
static const struct rw_variant v_nll[] = {
	{ "gather-elements", ge_ops }, { "gather-elements-mean", ge_mean_ops },
	{ "gather-elements-flat", gf_ops }, { "gather-elements-flat-mean", gf_mean_ops },
	{ "onehot-equal", eq_ops }, { "onehot-equal-mean", eq_mean_ops },
	{ "onehot-arith", ar_ops }, { "onehot-arith-mean", ar_mean_ops },
};
static const unsigned char a_nll[] = { 0, 0, 0, 0, 2, 2, 2, 2 };
_Static_assert(sizeof(nll_forms) / sizeof(nll_forms[0]) == sizeof(v_nll) / sizeof(v_nll[0]),
	       "one form per variant");
RW_DECOMPOSITION_A(nll_loss, "nll-loss",
		   "NegativeLogLikelihoodLoss (weights, ignore_index, every reduction) as GatherElements of the targets' log-probabilities (the targets flattened beyond rank 1), or a one-hot mask (Equal, or arithmetic on the Cast targets) times the log-probabilities summed over the classes (inf/NaN of other classes leak)",
		   m_nll, v_nll, a_nll, check, vcheck, apply);

static const char *const sge_ops[] = { "LogSoftmax", GATHER_OPS, NULL };
static const char *const sge_mean_ops[] = { "LogSoftmax", GATHER_OPS, "Div", NULL };
static const char *const sgf_ops[] = { "LogSoftmax", FLAT_OPS, NULL };
static const char *const sgf_mean_ops[] = { "LogSoftmax", FLAT_OPS, "Div", NULL };
static const char *const seq_ops[] = { "LogSoftmax", EQUAL_OPS, NULL };
static const char *const seq_mean_ops[] = { "LogSoftmax", EQUAL_OPS, "Div", NULL };
static const char *const sar_ops[] = { "LogSoftmax", ARITH_OPS, NULL };
static const char *const sar_mean_ops[] = { "LogSoftmax", ARITH_OPS, "Div", NULL };
static const char *const tgf_ops[] = { "Transpose", "LogSoftmax", FLAT_OPS, NULL };
static const char *const tgf_mean_ops[] = { "Transpose", "LogSoftmax", FLAT_OPS, "Div", NULL };
static const char *const teq_ops[] = { "Transpose", "LogSoftmax", EQUAL_OPS, NULL };
static const char *const teq_mean_ops[] = { "Transpose", "LogSoftmax", EQUAL_OPS, "Div", NULL };
static const char *const tar_ops[] = { "Transpose", "LogSoftmax", ARITH_OPS, NULL };
static const char *const tar_mean_ops[] = { "Transpose", "LogSoftmax", ARITH_OPS, "Div", NULL };
static const struct rw_variant v_sce[] = {
	{ "gather-elements", sge_ops }, { "gather-elements-mean", sge_mean_ops },
	{ "gather-elements-flat", sgf_ops }, { "gather-elements-flat-mean", sgf_mean_ops },
	{ "onehot-equal", seq_ops }, { "onehot-equal-mean", seq_mean_ops },
	{ "onehot-arith", sar_ops }, { "onehot-arith-mean", sar_mean_ops },
	{ "last-gather-elements-flat", tgf_ops }, { "last-gather-elements-flat-mean", tgf_mean_ops },
	{ "last-onehot-equal", teq_ops }, { "last-onehot-equal-mean", teq_mean_ops },
	{ "last-onehot-arith", tar_ops }, { "last-onehot-arith-mean", tar_mean_ops },
};
static const unsigned char a_sce[] = { 0, 0, 0, 0, 2, 2, 2, 2, 0, 0, 2, 2, 2, 2 };
_Static_assert(sizeof(sce_forms) / sizeof(sce_forms[0]) == sizeof(v_sce) / sizeof(v_sce[0]),
	       "one form per variant");
RW_DECOMPOSITION_A(sce_loss, "sce-loss",
		   "SoftmaxCrossEntropyLoss as LogSoftmax along the classes (moved last by a Transpose before opset 13 for rank > 2) and nll-loss's forms; log_prob is the LogSoftmax",
		   m_sce, v_sce, a_sce, check, vcheck, apply);
