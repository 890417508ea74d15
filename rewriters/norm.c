/* norm.c: normalizations as ReduceMean and elementwise ops, and the
 * statistics' pieces the skip norms share (norm_int.h):
 *   LayerNormalization (ai.onnx, com.microsoft)
 *       d = x - mean(x), y = d / sqrt(mean(d^2) + eps) scale + bias
 *       over the axes from `axis` on; when its Mean or InvStdDev output is
 *       read, y = d inv with inv = 1 / sqrt(mean(d^2) + eps), and those
 *       are the ReduceMean keepdims ([d0, .., d(axis-1), 1, .., 1])
 *   RMSNormalization, SimplifiedLayerNormalization
 *       y = x / sqrt(mean(x^2) + eps) scale (inv_std_var likewise)
 *   float16 and bfloat16 data with stash_type 1 (the default) compute the
 *   statistics and y before the scale in float32, between a Cast of x and
 *   one of y back (onnxruntime's kernels accumulate in float; Mean and
 *   InvStdDev are float32 then), the scale and bias in the data's dtype;
 *   another stash_type keeps them in the data's dtype
 *   InstanceNormalization  the above per (n, c) over the spatial axes,
 *       scale and bias unsqueezed to [C, 1, ...]
 *   GroupNormalization  x reshaped to [N, G, -1], normalized over the last
 *       axis, reshaped back (to a constant shape when C and the spatial
 *       dims are static, else to Shape(x)); scale and bias per group
 *       (opset 18) or per channel (21); statistics in float32 as above
 *   LpNormalization  x / sum |x| (p = 1) or x / sqrt(sum x^2) (p = 2), the
 *       sum a ReduceSum or (static axis) ReduceMean times the count
 * The skip norms are skip_norm.c's. */
#include <stdio.h>
#include <string.h>

#include "rewriters/norm_int.h"

#define MAX_RANK RW_NORM_MAX_RANK

int rw_norm_stats_dtype(const struct rw_ctx *c, const struct ir_node *n, int stash)
{
	int dt = rw_node_dtype(c, n);

	if ((dt == IR_DTYPE_FLOAT16 || dt == IR_DTYPE_BFLOAT16) &&
	    (!stash || rw_attr_int(n, "stash_type", 1) == 1))
		return IR_DTYPE_FLOAT;
	return dt;
}

int rw_norm_check_stats(const struct rw_ctx *c, int dt, int st, const char *const *ops,
			char *why, size_t size)
{
	if (st == dt)
		return 1;
	if (dt == IR_DTYPE_BFLOAT16 && c->opset < 13) {
		snprintf(why, size, "bfloat16 data: its statistics in float32 need Cast of "
			 "bfloat16 (opset 13)");
		return 0;
	}
	for (; *ops; ops++)
		if (strcmp(*ops, "Cast") && !rw_target_accepts(c, "", *ops, st)) {
			snprintf(why, size, "%s data: its statistics in %s, and the target does "
				 "not take %s %s", ir_dtype_name(dt), ir_dtype_name(st),
				 ir_dtype_name(st), *ops);
			return 0;
		}
	return 1;
}

struct ir_value *rw_norm_cast(struct rw_emit *e, struct ir_value *x, int to)
{
	struct ir_node *n;

	if (e->dtype == to)
		return x;
	if ((n = rw_node(e, "Cast", NULL, &x, 1, NULL)) && ir_node_set_int(n, "to", to) < 0)
		e->failed = 1;
	e->dtype = to;
	return n ? n->outputs[0] : NULL;
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

struct ir_value *rw_norm_stats(struct rw_emit *e, struct ir_value *x, const int64_t *axes,
			       size_t k, double eps, int rms, struct ir_value *mean,
			       struct ir_value *inv)
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
	return rw_norm_stats(e, x, axes, k, eps, rms, NULL, NULL);
}

int rw_norm_has(const struct ir_node *n, size_t i)
{
	return n->n_inputs > i && n->inputs[i];
}

struct ir_value *rw_norm_used_output(const struct ir_node *n, size_t i)
{
	return i < n->n_outputs && rw_value_used(n->outputs[i]) ? n->outputs[i] : NULL;
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

static const char *const ln_ops[] = { "ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div", NULL };
static const char *const rms_ops[] = { "Mul", "ReduceMean", "Add", "Sqrt", "Div", NULL };
static const char *const ln32_ops[] = {
	"Cast", "ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div", NULL
};
static const char *const rms32_ops[] = { "Cast", "Mul", "ReduceMean", "Add", "Sqrt", "Div", NULL };

static int check_ln(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int64_t axes[MAX_RANK];
	size_t k;
	int dt = rw_node_dtype(c, n), st = rw_norm_stats_dtype(c, n, 1);

	if (!rw_check_float_input(c, n, 7, why, size) ||
	    !rw_norm_check_stats(c, dt, st, is_rms(n) ? rms_ops : ln_ops, why, size) ||
	    !trailing_axes(c, n, axes, &k, why, size))
		return 0;
	if (!rw_norm_has(n, 1)) {
		snprintf(why, size, "the scale input is absent");
		return 0;
	}
	for (size_t i = 1; i < n->n_outputs; i++) {
		const struct ir_vtype *t;

		if (!rw_norm_used_output(n, i))
			continue;
		if (i > n_stats(n)) {
			snprintf(why, size, "output %zu is used", i);
			return 0;
		}
		if ((t = rw_type(c, n->outputs[i])) && t->dtype && t->dtype != st) {
			snprintf(why, size, "output %zu is %s, not the statistics' %s (stash_type)",
				 i, ir_dtype_name(t->dtype), ir_dtype_name(st));
			return 0;
		}
	}
	return 1;
}

/* variants: bit 0 rms, bit 1 statistics in float32 (float16 data) */
static int vcheck_ln(struct rw_ctx *c, const struct ir_node *n, int v)
{
	int dt = rw_node_dtype(c, n), st = rw_norm_stats_dtype(c, n, 1);
	char why[8];

	return (v & 1) == is_rms(n) && (v >> 1) == (st != dt) &&
	       rw_norm_check_stats(c, dt, st, v & 1 ? rms_ops : ln_ops, why, sizeof(why));
}

static int apply_ln(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *y;
	int64_t axes[MAX_RANK];
	size_t k;
	char why[8];
	int rms = v & 1, bias = !rms && rw_norm_has(n, 2), dt = rw_node_dtype(c, n);
	struct ir_value *mean = rms ? NULL : rw_norm_used_output(n, 1);
	struct ir_value *inv = rw_norm_used_output(n, rms ? 1 : 2);

	trailing_axes(c, n, axes, &k, why, sizeof(why));
	if (!n_stats(n))
		inv = NULL;
	rw_begin(c, n, &e);
	y = rw_norm_cast(&e, n->inputs[0], rw_norm_stats_dtype(c, n, 1));
	y = rw_norm_stats(&e, y, axes, k, rw_attr_float(n, "epsilon", 1e-5f), rms, mean, inv);
	y = rw_norm_cast(&e, y, dt);
	y = rw_op_to(&e, "Mul", y, n->inputs[1], bias ? NULL : n->outputs[0]);
	if (bias)
		rw_op_to(&e, "Add", y, n->inputs[2], n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const m_ln[] = {
	"LayerNormalization", "RMSNormalization", "com.microsoft:LayerNormalization",
	"com.microsoft:SimplifiedLayerNormalization", "SimplifiedLayerNormalization", NULL
};
static const struct rw_variant v_ln[] = {
	{ "mean-var", ln_ops }, { "rms", rms_ops },
	{ "mean-var-f32", ln32_ops }, { "rms-f32", rms32_ops },
};
RW_DECOMPOSITION(layer_norm, "layer-norm",
		 "LayerNormalization (its Mean and InvStdDev outputs too) and RMS normalization as ReduceMean, Sub, Mul, Add, Sqrt, Div; float16 and bfloat16 statistics in float32 between Casts (stash_type 1)",
		 m_ln, v_ln, check_ln, vcheck_ln, apply_ln);

/* ---- InstanceNormalization, GroupNormalization ----------------------- */

static int check_instance(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int r;

	if (!rw_check_float_node(c, n, 7, why, size))
		return 0;
	r = rw_rank(c, n->inputs[0]);
	if (r < 3 || r > MAX_RANK || !rw_norm_has(n, 1) || !rw_norm_has(n, 2)) {
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

/* what the statistics of a group norm compute in float32 */
static const char *const group_stats_ops[] = {
	"Reshape", "ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div", NULL
};

static int check_group(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	if (!check_instance(c, n, why, size) ||
	    !rw_norm_check_stats(c, rw_node_dtype(c, n), rw_norm_stats_dtype(c, n, 1),
				 group_stats_ops, why, size))
		return 0;
	if (rw_attr_int(n, "num_groups", 0) < 1) {
		snprintf(why, size, "num_groups is absent or < 1");
		return 0;
	}
	return 1;
}

/* variants: bit 0 the shape back by Shape (symbolic C or spatial dims),
 * else a constant; bit 1 statistics in float32 (float16 data) */
static int vcheck_group(struct rw_ctx *c, const struct ir_node *n, int v)
{
	int64_t shape[MAX_RANK];
	int r, dt = rw_node_dtype(c, n), st = rw_norm_stats_dtype(c, n, 1);
	char why[8];

	return (v & 1) == !static_tail(c, n->inputs[0], shape, &r) && (v >> 1) == (st != dt) &&
	       rw_norm_check_stats(c, dt, st, group_stats_ops, why, sizeof(why));
}

static int apply_group(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	int r = rw_rank(c, n->inputs[0]);
	int64_t g = rw_attr_int(n, "num_groups", 1), last = 2, shape[3] = { 0, g, -1 };
	int64_t back[MAX_RANK];
	struct ir_value *x = n->inputs[0], *y, *sc = n->inputs[1], *b = n->inputs[2], *to;
	int per_group = rw_node_opset(c) < 21, rr, dt = rw_node_dtype(c, n);

	rw_begin(c, n, &e);
	if (!(v & 1)) {
		static_tail(c, x, back, &rr);
		to = rw_ints(&e, back, (size_t)rr);
	} else {
		to = NULL;
	}
	y = rw_norm_cast(&e, x, rw_norm_stats_dtype(c, n, 1));
	y = rw_op(&e, "Reshape", y, rw_ints(&e, shape, 3));
	y = normalize(&e, y, &last, 1, rw_attr_float(n, "epsilon", 1e-5f), 0);
	y = rw_norm_cast(&e, y, dt);
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
static const char *const group32_ops[] = {
	"Cast", "Reshape", "ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div", "Unsqueeze", NULL
};
static const char *const group32_shape_ops[] = {
	"Cast", "Reshape", "Shape", "ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div", "Unsqueeze",
	NULL
};
static const struct rw_variant v_group[] = {
	{ "mean-var", group_ops }, { "mean-var-shape", group_shape_ops },
	{ "mean-var-f32", group32_ops }, { "mean-var-shape-f32", group32_shape_ops },
};
RW_DECOMPOSITION(group_norm, "group-norm",
		 "GroupNormalization as Reshape to [N, G, -1], ReduceMean statistics, Reshape back (Shape only when dims are symbolic), scale and bias; float16 and bfloat16 statistics in float32 between Casts (stash_type 1)",
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
