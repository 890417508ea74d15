/* norm.c: normalizations as ReduceMean and elementwise ops (statistics in
 * the data's dtype; float16 inputs with stash_type 1 are refused since
 * computing their statistics in float16 would change the numerics):
 *   LayerNormalization (ai.onnx, com.microsoft)
 *       d = x - mean(x), y = d / sqrt(mean(d^2) + eps) scale + bias
 *       over the axes from `axis` on; when its Mean or InvStdDev output is
 *       read, y = d inv with inv = 1 / sqrt(mean(d^2) + eps), and those
 *       are the ReduceMean keepdims ([d0, .., d(axis-1), 1, .., 1]) in the
 *       data's dtype (refused where stash_type makes theirs another)
 *   SkipLayerNormalization (com.microsoft)  s = x + skip (+ bias), then the
 *       above on the last axis; s is output 3 when it is used;
 *       SkipSimplifiedLayerNormalization likewise with the RMS form below
 *       (its bias is input 3, it has no beta)
 *   RMSNormalization, SimplifiedLayerNormalization
 *       y = x / sqrt(mean(x^2) + eps) scale (inv_std_var likewise)
 *   InstanceNormalization  the above per (n, c) over the spatial axes,
 *       scale and bias unsqueezed to [C, 1, ...]
 *   GroupNormalization  x reshaped to [N, G, -1], normalized over the last
 *       axis, reshaped back (to a constant shape when C and the spatial
 *       dims are static, else to Shape(x)); scale and bias per group
 *       (opset 18) or per channel (21)
 *   LpNormalization  x / sum |x| (p = 1) or x / sqrt(sum x^2) (p = 2), the
 *       sum a ReduceSum or (static axis) ReduceMean times the count */
#include <stdio.h>
#include <string.h>

#include "rewriters/rw_int.h"

#define MAX_RANK 16

static int check_stash(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int dt = rw_node_dtype(c, n);

	if ((dt == IR_DTYPE_FLOAT16 || dt == IR_DTYPE_BFLOAT16) &&
	    rw_attr_int(n, "stash_type", 1) == 1) {
		snprintf(why, size, "%s data with stash_type 1 (statistics in float)",
			 ir_dtype_name(dt));
		return 0;
	}
	return 1;
}

/* Axes from `axis` (default -1) to the last; 0 if the rank is unknown. */
static int trailing_axes(struct rw_ctx *c, const struct ir_node *n, int64_t *axes,
			 size_t *k, char *why, size_t size)
{
	int r;
	int64_t axis;

	if (!rw_node_axis(c, n, -1, MAX_RANK, &r, &axis, why, size))
		return 0;
	*k = 0;
	for (int64_t i = axis; i < r; i++)
		axes[(*k)++] = i;
	return 1;
}

/* (x - mean) / sqrt(var + eps), or x / sqrt(mean(x^2) + eps) (rms); with
 * statistics wanted (mean or inv non-NULL), d * inv where inv = 1 / sqrt(..)
 * is written to inv and the mean (keepdims) to mean */
static struct ir_value *normalize_stats(struct rw_emit *e, struct ir_value *x,
					const int64_t *axes, size_t k, double eps, int rms,
					struct ir_value *mean, struct ir_value *inv)
{
	struct ir_value *d = x, *var, *s;

	if (!rms)
		d = rw_op(e, "Sub", x, rw_reduce(e, "ReduceMean", x, axes, k, 1, mean));
	var = rw_reduce(e, "ReduceMean", rw_op(e, "Mul", d, d), axes, k, 1, NULL);
	s = rw_op(e, "Sqrt", rw_op(e, "Add", var, rw_scalar(e, e->dtype, eps)), NULL);
	if (!mean && !inv)
		return rw_op(e, "Div", d, s);
	return rw_op(e, "Mul", d, rw_op_to(e, "Div", rw_scalar(e, e->dtype, 1), s, inv));
}

static struct ir_value *normalize(struct rw_emit *e, struct ir_value *x,
				  const int64_t *axes, size_t k, double eps, int rms)
{
	return normalize_stats(e, x, axes, k, eps, rms, NULL, NULL);
}

static int has(const struct ir_node *n, size_t i)
{
	return n->n_inputs > i && n->inputs[i];
}

/* ---- LayerNormalization, RMS ----------------------------------------- */

static int is_rms(const struct ir_node *n)
{
	return !strcmp(ir_s(n->op_type), "RMSNormalization") ||
	       !strcmp(ir_s(n->op_type), "SimplifiedLayerNormalization");
}

/* The outputs after y that are statistics: Mean and InvStdDev of
 * LayerNormalization, inv_std_var of SimplifiedLayerNormalization */
static size_t n_stats(const struct ir_node *n)
{
	if (!strcmp(ir_s(n->op_type), "LayerNormalization"))
		return 2;
	return !strcmp(ir_s(n->op_type), "SimplifiedLayerNormalization");
}

/* output i if it is read, else NULL */
static struct ir_value *used_output(const struct ir_node *n, size_t i)
{
	return i < n->n_outputs && rw_value_used(n->outputs[i]) ? n->outputs[i] : NULL;
}

static int check_ln(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int64_t axes[MAX_RANK];
	size_t k;
	int dt = rw_node_dtype(c, n);

	if (!rw_check_float_input(c, n, 7, why, size) || !check_stash(c, n, why, size) ||
	    !trailing_axes(c, n, axes, &k, why, size))
		return 0;
	if (!has(n, 1)) {
		snprintf(why, size, "the scale input is absent");
		return 0;
	}
	for (size_t i = 1; i < n->n_outputs; i++) {
		const struct ir_vtype *t;

		if (!used_output(n, i))
			continue;
		if (i > n_stats(n)) {
			snprintf(why, size, "output %zu is used", i);
			return 0;
		}
		if ((t = rw_type(c, n->outputs[i])) && t->dtype && t->dtype != dt) {
			snprintf(why, size, "output %zu is %s, not the data's %s (stash_type)", i,
				 ir_dtype_name(t->dtype), ir_dtype_name(dt));
			return 0;
		}
	}
	return 1;
}

static int vcheck_ln(struct rw_ctx *c, const struct ir_node *n, int v)
{
	(void)c;
	return v == is_rms(n);
}

static int apply_ln(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *y;
	int64_t axes[MAX_RANK];
	size_t k;
	char why[8];
	int bias = !v && has(n, 2);

	struct ir_value *mean = v ? NULL : used_output(n, 1), *inv = used_output(n, v ? 1 : 2);

	trailing_axes(c, n, axes, &k, why, sizeof(why));
	if (!n_stats(n))
		inv = NULL;
	rw_begin(c, n, &e);
	y = normalize_stats(&e, n->inputs[0], axes, k, rw_attr_float(n, "epsilon", 1e-5f), v,
			    mean, inv);
	y = rw_op_to(&e, "Mul", y, n->inputs[1], bias ? NULL : n->outputs[0]);
	if (bias)
		rw_op_to(&e, "Add", y, n->inputs[2], n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const m_ln[] = {
	"LayerNormalization", "RMSNormalization", "com.microsoft:LayerNormalization",
	"com.microsoft:SimplifiedLayerNormalization", "SimplifiedLayerNormalization", NULL
};
static const char *const ln_ops[] = { "ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div", NULL };
static const char *const rms_ops[] = { "Mul", "ReduceMean", "Add", "Sqrt", "Div", NULL };
static const struct rw_variant v_ln[] = { { "mean-var", ln_ops }, { "rms", rms_ops } };
RW_DECOMPOSITION(layer_norm, "layer-norm",
		 "LayerNormalization (its Mean and InvStdDev outputs too) and RMS normalization as ReduceMean, Sub, Mul, Add, Sqrt, Div",
		 m_ln, v_ln, check_ln, vcheck_ln, apply_ln);

static int check_skip_ln(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int dt = rw_node_dtype(c, n);

	if (!has(n, 0) || !has(n, 1) || !has(n, 2) || !n->n_outputs) {
		snprintf(why, size, "input, skip or gamma is absent");
		return 0;
	}
	if (!rw_dtype_is_float(dt) || dt == IR_DTYPE_FLOAT16 || dt == IR_DTYPE_BFLOAT16) {
		snprintf(why, size, "only for float and double data (statistics in float)");
		return 0;
	}
	if (!ir_node_attr(n, "epsilon")) {
		snprintf(why, size, "the epsilon attribute is absent");
		return 0;
	}
	if (c->opset < 7 || rw_rank(c, n->inputs[0]) < 1) {
		snprintf(why, size, "needs opset >= 7 and a known rank");
		return 0;
	}
	for (size_t i = 1; i < 3 && i < n->n_outputs; i++)
		if (rw_value_used(n->outputs[i])) {
			snprintf(why, size, "output %zu (statistics) is used", i);
			return 0;
		}
	return 1;
}

static int is_skip_rms(const struct ir_node *n)
{
	return !strcmp(ir_s(n->op_type), "SkipSimplifiedLayerNormalization");
}

static int vcheck_skip_ln(struct rw_ctx *c, const struct ir_node *n, int v)
{
	(void)c;
	return v == is_skip_rms(n);
}

static int apply_skip_ln(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *s, *y, *sum = n->n_outputs > 3 ? n->outputs[3] : NULL;
	int64_t axis = rw_rank(c, n->inputs[0]) - 1;
	int ib = v ? 3 : 4, bias = has(n, (size_t)ib), beta = !v && has(n, 3);

	rw_begin(c, n, &e);
	s = rw_op_to(&e, "Add", n->inputs[0], n->inputs[1], bias ? NULL : sum);
	if (bias)
		s = rw_op_to(&e, "Add", s, n->inputs[ib], sum);
	y = normalize(&e, s, &axis, 1, rw_attr_float(n, "epsilon", 1e-12f), v);
	y = rw_op_to(&e, "Mul", y, n->inputs[2], beta ? NULL : n->outputs[0]);
	if (beta)
		rw_op_to(&e, "Add", y, n->inputs[3], n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const m_skip_ln[] = {
	"com.microsoft:SkipLayerNormalization", "com.microsoft:SkipSimplifiedLayerNormalization",
	NULL
};
static const struct rw_variant v_skip_ln[] = { { "mean-var", ln_ops }, { "rms", rms_ops } };
RW_DECOMPOSITION(skip_layer_norm, "skip-layer-norm",
		 "SkipLayerNormalization and SkipSimplifiedLayerNormalization as Add then layer-norm's primitives",
		 m_skip_ln, v_skip_ln, check_skip_ln, vcheck_skip_ln, apply_skip_ln);

/* ---- InstanceNormalization, GroupNormalization ----------------------- */

static int check_instance(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int r;

	if (!rw_check_float_node(c, n, 7, why, size))
		return 0;
	r = rw_rank(c, n->inputs[0]);
	if (r < 3 || r > MAX_RANK || !has(n, 1) || !has(n, 2)) {
		snprintf(why, size, "needs a known rank >= 3, scale and bias");
		return 0;
	}
	return 1;
}

/* scale of shape [C] as [C, 1, ...] to broadcast over r-2 spatial axes */
static struct ir_value *per_channel(struct rw_emit *e, struct ir_value *v, int r)
{
	int64_t axes[MAX_RANK];

	for (int i = 1; i < r - 1; i++)
		axes[i - 1] = i;
	return rw_unsqueeze(e, v, axes, (size_t)r - 2);
}

static int apply_instance(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	int r = rw_rank(c, n->inputs[0]);
	int64_t axes[MAX_RANK];
	struct ir_value *y;

	(void)v;
	for (int i = 2; i < r; i++)
		axes[i - 2] = i;
	rw_begin(c, n, &e);
	y = normalize(&e, n->inputs[0], axes, (size_t)r - 2,
		      rw_attr_float(n, "epsilon", 1e-5f), 0);
	y = rw_op(&e, "Mul", y, per_channel(&e, n->inputs[1], r));
	rw_op_to(&e, "Add", y, per_channel(&e, n->inputs[2], r), n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const m_instance[] = { "InstanceNormalization", NULL };
static const char *const inst_ops[] = {
	"ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div", "Unsqueeze", NULL
};
static const struct rw_variant v_instance[] = { { "mean-var", inst_ops } };
RW_DECOMPOSITION(instance_norm, "instance-norm",
		 "InstanceNormalization as ReduceMean over the spatial axes and per-channel scale and bias",
		 m_instance, v_instance, check_instance, NULL, apply_instance);

/* The dims of x after the batch, when all are static (0 otherwise) */
static int static_tail(struct rw_ctx *c, const struct ir_value *x, int64_t *shape, int *r)
{
	const struct ir_vtype *t = rw_type(c, x);

	if (!t || t->rank < 2 || t->rank > MAX_RANK)
		return 0;
	*r = t->rank;
	shape[0] = 0;       /* the batch, copied */
	for (int i = 1; i < t->rank; i++) {
		if (t->dims[i].kind != IR_VDIM_VALUE)
			return 0;
		shape[i] = t->dims[i].value;
	}
	return 1;
}

static int check_group(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	if (!check_instance(c, n, why, size) || !check_stash(c, n, why, size))
		return 0;
	if (rw_attr_int(n, "num_groups", 0) < 1) {
		snprintf(why, size, "num_groups is absent or < 1");
		return 0;
	}
	return 1;
}

/* variant 0: the shape back a constant (static C and spatial dims), 1: Shape */
static int vcheck_group(struct rw_ctx *c, const struct ir_node *n, int v)
{
	int64_t shape[MAX_RANK];
	int r;

	return v == !static_tail(c, n->inputs[0], shape, &r);
}

static int apply_group(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	int r = rw_rank(c, n->inputs[0]);
	int64_t g = rw_attr_int(n, "num_groups", 1), last = 2, shape[3] = { 0, g, -1 };
	int64_t back[MAX_RANK];
	struct ir_value *x = n->inputs[0], *y, *sc = n->inputs[1], *b = n->inputs[2], *to;
	int per_group = rw_node_opset(c) < 21, rr;

	rw_begin(c, n, &e);
	if (v == 0) {
		static_tail(c, x, back, &rr);
		to = rw_ints(&e, back, (size_t)rr);
	} else {
		to = NULL;
	}
	y = rw_op(&e, "Reshape", x, rw_ints(&e, shape, 3));
	y = normalize(&e, y, &last, 1, rw_attr_float(n, "epsilon", 1e-5f), 0);
	if (per_group) {      /* scale and bias [G] against [N, G, -1] */
		int64_t one = 1;

		y = rw_op(&e, "Mul", y, rw_unsqueeze(&e, sc, &one, 1));
		y = rw_op(&e, "Add", y, rw_unsqueeze(&e, b, &one, 1));
		rw_op_to(&e, "Reshape", y, to ? to : rw_op(&e, "Shape", x, NULL), n->outputs[0]);
	} else {
		y = rw_op(&e, "Reshape", y, to ? to : rw_op(&e, "Shape", x, NULL));
		y = rw_op(&e, "Mul", y, per_channel(&e, sc, r));
		rw_op_to(&e, "Add", y, per_channel(&e, b, r), n->outputs[0]);
	}
	return rw_end(&e, 0);
}

static const char *const m_group[] = { "GroupNormalization", NULL };
static const char *const group_ops[] = {
	"Reshape", "ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div", "Unsqueeze", NULL
};
static const char *const group_shape_ops[] = {
	"Reshape", "Shape", "ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div", "Unsqueeze", NULL
};
static const struct rw_variant v_group[] = {
	{ "mean-var", group_ops }, { "mean-var-shape", group_shape_ops },
};
RW_DECOMPOSITION(group_norm, "group-norm",
		 "GroupNormalization as Reshape to [N, G, -1], ReduceMean statistics, Reshape back (Shape only when dims are symbolic), scale and bias",
		 m_group, v_group, check_group, vcheck_group, apply_group);

/* ---- LpNormalization -------------------------------------------------- */

static int check_lp(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int64_t p = rw_attr_int(n, "p", 2), axis;
	int r;

	if (!rw_check_float_node(c, n, 7, why, size) ||
	    !rw_node_axis(c, n, -1, MAX_RANK, &r, &axis, why, size))
		return 0;
	if (p != 1 && p != 2) {
		snprintf(why, size, "p is %lld, not 1 or 2", (long long)p);
		return 0;
	}
	return 1;
}

/* The static size of the normalized axis, 0 when unknown */
static int64_t lp_count(struct rw_ctx *c, const struct ir_node *n, int64_t *axis)
{
	const struct ir_vtype *t = rw_type(c, n->inputs[0]);
	int r;
	char why[8];

	if (!rw_node_axis(c, n, -1, MAX_RANK, &r, axis, why, sizeof(why)) || !t)
		return 0;
	return t->dims[*axis].kind == IR_VDIM_VALUE ? t->dims[*axis].value : 0;
}

/* variants: 0 l1, 1 l2 (ReduceSum); 2 l1, 3 l2 (ReduceMean * N) */
static int vcheck_lp(struct rw_ctx *c, const struct ir_node *n, int v)
{
	int64_t axis;

	if ((v & 1) != (rw_attr_int(n, "p", 2) == 2))
		return 0;
	return v < 2 || lp_count(c, n, &axis) > 0;
}

static int apply_lp(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *x = n->inputs[0], *t, *norm;
	int64_t axis, cnt = lp_count(c, n, &axis);

	rw_begin(c, n, &e);
	t = v & 1 ? rw_op(&e, "Mul", x, x) : rw_op(&e, "Abs", x, NULL);
	if (v < 2)
		norm = rw_reduce(&e, "ReduceSum", t, &axis, 1, 1, NULL);
	else
		norm = rw_op(&e, "Mul", rw_reduce(&e, "ReduceMean", t, &axis, 1, 1, NULL),
			     rw_scalar(&e, e.dtype, (double)cnt));
	if (v & 1)
		norm = rw_op(&e, "Sqrt", norm, NULL);
	rw_op_to(&e, "Div", x, norm, n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const m_lp[] = { "LpNormalization", NULL };
static const char *const lp1_ops[] = { "Abs", "ReduceSum", "Div", NULL };
static const char *const lp2_ops[] = { "Mul", "ReduceSum", "Sqrt", "Div", NULL };
static const char *const lp1m_ops[] = { "Abs", "ReduceMean", "Mul", "Div", NULL };
static const char *const lp2m_ops[] = { "Mul", "ReduceMean", "Sqrt", "Div", NULL };
static const struct rw_variant v_lp[] = {
	{ "l1", lp1_ops }, { "l2", lp2_ops }, { "l1-mean", lp1m_ops }, { "l2-mean", lp2m_ops },
};
RW_DECOMPOSITION(lp_norm, "lp-norm",
		 "LpNormalization (p 1 or 2) as x / ReduceSum of |x| or sqrt of x^2, or with ReduceMean times the count",
		 m_lp, v_lp, check_lp, vcheck_lp, apply_lp);
