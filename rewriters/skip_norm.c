/* skip_norm.c: pass "skip-layer-norm": com.microsoft SkipLayerNormalization
 * and SkipSimplifiedLayerNormalization as s = x + skip (+ bias), then
 * norm.c's statistics over the last axis (the RMS form for the simplified
 * one, whose bias is input 3 and which has no beta), times gamma (+ beta).
 * s is output 3 (input_skip_bias_sum) when it is read; mean (output 1,
 * SkipLayerNormalization only: onnxruntime writes zeros for the
 * simplified one) and inv_std_var (output 2) are the float32 ReduceMean
 * and 1 / sqrt(var + eps), keepdims.  float16 and bfloat16 data add in
 * their dtype and compute the statistics and the normalized s in float32
 * between a Cast of s and one back (onnxruntime's kernels accumulate in
 * float), gamma and beta applied in the data's dtype. */
#include <stdio.h>
#include <string.h>

#include "rewriters/norm_int.h"

static int is_skip_rms(const struct ir_node *n)
{
	return !strcmp(ir_s(n->op_type), "SkipSimplifiedLayerNormalization");
}

static const char *const ln_ops[] = { "ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div", NULL };
static const char *const rms_ops[] = { "Mul", "ReduceMean", "Add", "Sqrt", "Div", NULL };
static const char *const ln32_ops[] = {
	"Add", "Cast", "ReduceMean", "Sub", "Mul", "Sqrt", "Div", NULL
};
static const char *const rms32_ops[] = { "Add", "Cast", "Mul", "ReduceMean", "Sqrt", "Div", NULL };

static int check_skip_ln(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int dt = rw_node_dtype(c, n), st = rw_norm_stats_dtype(c, n, 0);

	if (!rw_norm_has(n, 0) || !rw_norm_has(n, 1) || !rw_norm_has(n, 2) || !n->n_outputs) {
		snprintf(why, size, "input, skip or gamma is absent");
		return 0;
	}
	if (!rw_dtype_is_float(dt)) {
		snprintf(why, size, "the data's dtype is unknown or not float");
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
	if (!rw_norm_check_stats(c, dt, st, is_skip_rms(n) ? rms_ops : ln_ops, why, size))
		return 0;
	if (is_skip_rms(n) && rw_norm_used_output(n, 1)) {
		snprintf(why, size, "output 1 (mean, which the simplified norm does not "
			 "compute) is used");
		return 0;
	}
	/* the statistics are float32 by the op's schema (inference may not
	 * say), and computed so for float32, float16 and bfloat16 data */
	for (size_t i = 1; i < 3; i++) {
		const struct ir_vtype *t = rw_type(c, n->outputs[i < n->n_outputs ? i : 0]);

		if (rw_norm_used_output(n, i) && (st != IR_DTYPE_FLOAT ||
						  (t && t->dtype && t->dtype != st))) {
			snprintf(why, size, "output %zu (statistics) is used, and its float32 is "
				 "not the %s the statistics are computed in", i, ir_dtype_name(st));
			return 0;
		}
	}
	for (size_t i = 4; i < n->n_outputs; i++)
		if (rw_norm_used_output(n, i)) {
			snprintf(why, size, "output %zu is used", i);
			return 0;
		}
	return 1;
}

/* variants: bit 0 rms, bit 1 statistics in float32 (float16 data) */
static int vcheck_skip_ln(struct rw_ctx *c, const struct ir_node *n, int v)
{
	int dt = rw_node_dtype(c, n), st = rw_norm_stats_dtype(c, n, 0);
	char why[8];

	return (v & 1) == is_skip_rms(n) && (v >> 1) == (st != dt) &&
	       rw_norm_check_stats(c, dt, st, v & 1 ? rms_ops : ln_ops, why, sizeof(why));
}

static int apply_skip_ln(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *s, *y, *sum = n->n_outputs > 3 ? n->outputs[3] : NULL;
	int64_t axis = rw_rank(c, n->inputs[0]) - 1;
	int rms = v & 1, ib = rms ? 3 : 4, dt = rw_node_dtype(c, n);
	int bias = rw_norm_has(n, (size_t)ib), beta = !rms && rw_norm_has(n, 3);
	struct ir_value *mean = rms ? NULL : rw_norm_used_output(n, 1);

	rw_begin(c, n, &e);
	s = rw_op_to(&e, "Add", n->inputs[0], n->inputs[1], bias ? NULL : sum);
	if (bias)
		s = rw_op_to(&e, "Add", s, n->inputs[ib], sum);
	s = rw_norm_cast(&e, s, rw_norm_stats_dtype(c, n, 0));
	y = rw_norm_stats(&e, s, &axis, 1, rw_attr_float(n, "epsilon", 1e-12f), rms, mean,
			  rw_norm_used_output(n, 2));
	y = rw_norm_cast(&e, y, dt);
	y = rw_op_to(&e, "Mul", y, n->inputs[2], beta ? NULL : n->outputs[0]);
	if (beta)
		rw_op_to(&e, "Add", y, n->inputs[3], n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const m_skip_ln[] = {
	"com.microsoft:SkipLayerNormalization", "com.microsoft:SkipSimplifiedLayerNormalization",
	NULL
};
static const struct rw_variant v_skip_ln[] = {
	{ "mean-var", ln_ops }, { "rms", rms_ops },
	{ "mean-var-f32", ln32_ops }, { "rms-f32", rms32_ops },
};
RW_DECOMPOSITION(skip_layer_norm, "skip-layer-norm",
		 "SkipLayerNormalization and SkipSimplifiedLayerNormalization (their mean, inv_std_var and sum outputs too) as Add then layer-norm's primitives; float16 and bfloat16 statistics in float32 between Casts",
		 m_skip_ln, v_skip_ln, check_skip_ln, vcheck_skip_ln, apply_skip_ln);
