/* act.c: decompositions of the activations into elementwise primitives,
 * exact in real arithmetic (differences are float rounding):
 *   HardSigmoid  max(0, min(1, alpha x + beta))        Clip, or Min/Max
 *   HardSwish    x hardsigmoid(x; 1/6, 1/2)            HardSigmoid, Clip, Min/Max
 *   Softplus     relu(x) + log(1 + exp(-|x|))          (stable), or log(exp(x) + 1)
 *   Softsign     x / (1 + |x|)
 *   Mish         x tanh(softplus(x))
 *   Swish        x sigmoid(alpha x)
 *   Elu          relu(x) + alpha (exp(min(x, 0)) - 1)
 *   Selu         gamma (relu(x) + alpha (exp(min(x, 0)) - 1))
 *   Celu         relu(x) + alpha (exp(min(x, 0) / alpha) - 1)
 *   ThresholdedRelu  where(x > alpha, x, 0), or x cast(x > alpha)
 *   LeakyRelu    max(x, alpha x) (0 <= alpha <= 1), relu(x) + alpha min(x, 0), PRelu
 *   PRelu        relu(x) + slope min(x, 0)
 * The exp(min(x, 0)) forms never overflow where the op itself does not. */
#include <stdio.h>
#include <string.h>

#include "rewriters/rw_int.h"

static int check7(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	return rw_check_float_node(c, n, 7, why, size);
}

/* relu(x) + k (exp(min(x, 0) / div) - 1), div 1 skipped */
static struct ir_value *elu_core(struct rw_emit *e, struct ir_value *x, double k,
				 double div, struct ir_value *out)
{
	int dt = e->dtype;
	struct ir_value *neg = rw_op(e, "Min", x, rw_scalar(e, dt, 0));

	if (div != 1)
		neg = rw_op(e, "Div", neg, rw_scalar(e, dt, div));
	neg = rw_op(e, "Sub", rw_op(e, "Exp", neg, NULL), rw_scalar(e, dt, 1));
	neg = rw_op(e, "Mul", neg, rw_scalar(e, dt, k));
	return rw_op_to(e, "Add", rw_op(e, "Relu", x, NULL), neg, out);
}

/* ---- HardSigmoid, HardSwish ------------------------------------------ */

static const char *const clip_ops[] = { "Mul", "Add", "Clip", NULL };
static const char *const minmax_ops[] = { "Mul", "Add", "Min", "Max", NULL };
static const char *const hsig_ops[] = { "HardSigmoid", "Mul", NULL };

static struct ir_value *hard_sigmoid(struct rw_emit *e, int v, struct ir_value *x,
				     double alpha, double beta, struct ir_value *out)
{
	int dt = e->dtype;
	struct ir_value *t = rw_op(e, "Add", rw_op(e, "Mul", x, rw_scalar(e, dt, alpha)),
				   rw_scalar(e, dt, beta));

	if (v == 0)
		return rw_clip(e, t, 0, 1, out);
	return rw_op_to(e, "Max", rw_op(e, "Min", t, rw_scalar(e, dt, 1)),
			rw_scalar(e, dt, 0), out);
}

static int vcheck_minmax(struct rw_ctx *c, const struct ir_node *n, int v)
{
	(void)n;
	return v != 1 || c->opset >= 8;    /* Min/Max broadcast from 8 */
}

static int apply_hard_sigmoid(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;

	rw_begin(c, n, &e);
	hard_sigmoid(&e, v, n->inputs[0], rw_attr_float(n, "alpha", 0.2f),
		     rw_attr_float(n, "beta", 0.5f), n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const m_hard_sigmoid[] = { "HardSigmoid", NULL };
static const struct rw_variant v_hard_sigmoid[] = {
	{ "clip", clip_ops }, { "min-max", minmax_ops },
};
RW_DECOMPOSITION(hard_sigmoid, "hard-sigmoid",
		 "HardSigmoid as max(0, min(1, alpha x + beta)) with Clip or Min/Max",
		 m_hard_sigmoid, v_hard_sigmoid, check7, vcheck_minmax,
		 apply_hard_sigmoid);

static int vcheck_hard_swish(struct rw_ctx *c, const struct ir_node *n, int v)
{
	(void)n;
	return v != 2 || c->opset >= 8;
}

static int apply_hard_swish(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *x = n->inputs[0], *h;

	rw_begin(c, n, &e);
	if (v == 0) {
		struct ir_node *hs = rw_node(&e, "HardSigmoid", NULL, &x, 1, NULL);

		if (hs && (ir_node_set_float(hs, "alpha", 1.0f / 6) < 0 ||
			   ir_node_set_float(hs, "beta", 0.5f) < 0))
			e.failed = 1;
		h = hs ? hs->outputs[0] : NULL;
	} else {
		h = hard_sigmoid(&e, v - 1, x, 1.0 / 6, 0.5, NULL);
	}
	rw_op_to(&e, "Mul", x, h, n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const m_hard_swish[] = { "HardSwish", NULL };
static const struct rw_variant v_hard_swish[] = {
	{ "hard-sigmoid", hsig_ops }, { "clip", clip_ops }, { "min-max", minmax_ops },
};
RW_DECOMPOSITION(hard_swish, "hard-swish",
		 "HardSwish as x hardsigmoid(x) with HardSigmoid, Clip or Min/Max",
		 m_hard_swish, v_hard_swish, check7, vcheck_hard_swish,
		 apply_hard_swish);

/* ---- Softplus, Softsign, Mish, Swish -------------------------------- */

static const char *const stable_ops[] = { "Relu", "Abs", "Neg", "Exp", "Add", "Log", NULL };
static const char *const direct_ops[] = { "Exp", "Add", "Log", NULL };

static struct ir_value *softplus(struct rw_emit *e, int v, struct ir_value *x,
				 struct ir_value *out)
{
	int dt = e->dtype;

	if (v == 1)
		return rw_op_to(e, "Log", rw_op(e, "Add", rw_op(e, "Exp", x, NULL),
						rw_scalar(e, dt, 1)), NULL, out);
	return rw_op_to(e, "Add", rw_op(e, "Relu", x, NULL),
			rw_op(e, "Log", rw_op(e, "Add", rw_op(e, "Exp",
				rw_op(e, "Neg", rw_op(e, "Abs", x, NULL), NULL), NULL),
				rw_scalar(e, dt, 1)), NULL), out);
}

static int apply_softplus(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;

	rw_begin(c, n, &e);
	softplus(&e, v, n->inputs[0], n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const m_softplus[] = { "Softplus", NULL };
static const struct rw_variant v_softplus[] = {
	{ "stable", stable_ops }, { "direct", direct_ops },
};
static const unsigned char a_softplus[] = { 0, 2 };
RW_DECOMPOSITION_A(softplus, "softplus",
		   "Softplus as relu(x) + log(1 + exp(-|x|)), or log(exp(x) + 1) (overflows to inf above x = 88 in float)",
		   m_softplus, v_softplus, a_softplus, check7, NULL, apply_softplus);

static int apply_softsign(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *x = n->inputs[0];

	(void)v;
	rw_begin(c, n, &e);
	rw_op_to(&e, "Div", x, rw_op(&e, "Add", rw_op(&e, "Abs", x, NULL),
				     rw_scalar(&e, e.dtype, 1)), n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const m_softsign[] = { "Softsign", NULL };
static const char *const softsign_ops[] = { "Abs", "Add", "Div", NULL };
static const struct rw_variant v_softsign[] = { { "div", softsign_ops } };
RW_DECOMPOSITION(softsign, "softsign", "Softsign as x / (1 + |x|)",
		 m_softsign, v_softsign, check7, NULL, apply_softsign);

static const char *const mish_sp_ops[] = { "Softplus", "Tanh", "Mul", NULL };
static const char *const mish_stable_ops[] = {
	"Relu", "Abs", "Neg", "Exp", "Add", "Log", "Tanh", "Mul", NULL
};

static int apply_mish(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *x = n->inputs[0], *sp;

	rw_begin(c, n, &e);
	sp = v == 0 ? rw_op(&e, "Softplus", x, NULL) : softplus(&e, 0, x, NULL);
	rw_op_to(&e, "Mul", x, rw_op(&e, "Tanh", sp, NULL), n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const m_mish[] = { "Mish", NULL };
static const struct rw_variant v_mish[] = {
	{ "softplus", mish_sp_ops }, { "stable", mish_stable_ops },
};
RW_DECOMPOSITION(mish, "mish", "Mish as x tanh(softplus(x)), Softplus kept or decomposed",
		 m_mish, v_mish, check7, NULL, apply_mish);

static int apply_swish(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *x = n->inputs[0], *t = x;
	double alpha = rw_attr_float(n, "alpha", 1.0f);

	(void)v;
	rw_begin(c, n, &e);
	if (alpha != 1)
		t = rw_op(&e, "Mul", x, rw_scalar(&e, e.dtype, alpha));
	rw_op_to(&e, "Mul", x, rw_op(&e, "Sigmoid", t, NULL), n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const m_swish[] = { "Swish", NULL };
static const char *const swish_ops[] = { "Mul", "Sigmoid", NULL };
static const struct rw_variant v_swish[] = { { "sigmoid", swish_ops } };
RW_DECOMPOSITION(swish, "swish", "Swish (SiLU) as x sigmoid(alpha x)",
		 m_swish, v_swish, check7, NULL, apply_swish);

/* ---- Elu, Selu, Celu ------------------------------------------------- */

static const char *const elu_ops[] = { "Relu", "Min", "Exp", "Sub", "Mul", "Add", NULL };
static const char *const celu_ops[] = {
	"Relu", "Min", "Div", "Exp", "Sub", "Mul", "Add", NULL
};

static int check8(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	return rw_check_float_node(c, n, 8, why, size);
}

static int apply_elu(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	const char *op = ir_s(n->op_type);
	struct ir_value *x = n->inputs[0], *y = n->outputs[0];

	(void)v;
	rw_begin(c, n, &e);
	if (!strcmp(op, "Elu")) {
		elu_core(&e, x, rw_attr_float(n, "alpha", 1.0f), 1, y);
	} else if (!strcmp(op, "Celu")) {
		double alpha = rw_attr_float(n, "alpha", 1.0f);

		elu_core(&e, x, alpha, alpha, y);
	} else {   /* Selu */
		double alpha = rw_attr_float(n, "alpha", 1.67326319217681884765625f);
		double gamma = rw_attr_float(n, "gamma", 1.05070102214813232421875f);

		rw_op_to(&e, "Mul", elu_core(&e, x, alpha, 1, NULL),
			 rw_scalar(&e, e.dtype, gamma), y);
	}
	return rw_end(&e, 0);
}

static int check_elu(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	if (!check8(c, n, why, size))
		return 0;
	if (!strcmp(ir_s(n->op_type), "Celu") && rw_attr_float(n, "alpha", 1.0f) == 0) {
		snprintf(why, size, "alpha is 0");
		return 0;
	}
	return 1;
}

static int vcheck_elu(struct rw_ctx *c, const struct ir_node *n, int v)
{
	(void)c;
	return (v == 1) == !strcmp(ir_s(n->op_type), "Celu");
}

static const char *const m_elu[] = { "Celu", "Elu", "Selu", NULL };
static const struct rw_variant v_elu[] = { { "exp", elu_ops }, { "exp-div", celu_ops } };
RW_DECOMPOSITION(elu, "elu",
		 "Elu, Selu and Celu as relu(x) + alpha (exp(min(x, 0)) - 1), scaled",
		 m_elu, v_elu, check_elu, vcheck_elu, apply_elu);

/* ---- ThresholdedRelu, LeakyRelu, PRelu ------------------------------ */

static const char *const where_ops[] = { "Greater", "Where", NULL };
static const char *const castmul_ops[] = { "Greater", "Cast", "Mul", NULL };

static int vcheck_thresholded(struct rw_ctx *c, const struct ir_node *n, int v)
{
	(void)n;
	return v != 0 || c->opset >= 9;
}

static int apply_thresholded(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *x = n->inputs[0], *gt;
	double alpha = rw_attr_float(n, "alpha", 1.0f);

	rw_begin(c, n, &e);
	gt = rw_op(&e, "Greater", x, rw_scalar(&e, e.dtype, alpha));
	if (v == 0) {
		struct ir_value *in[3] = { gt, x, rw_scalar(&e, e.dtype, 0) };

		rw_node(&e, "Where", NULL, in, 3, n->outputs[0]);
	} else {
		struct ir_node *cast = rw_node(&e, "Cast", NULL, &gt, 1, NULL);

		if (cast && ir_node_set_int(cast, "to", e.dtype) < 0)
			e.failed = 1;
		rw_op_to(&e, "Mul", x, cast ? cast->outputs[0] : NULL, n->outputs[0]);
	}
	return rw_end(&e, 0);
}

static const char *const m_thresholded[] = { "ThresholdedRelu", NULL };
static const struct rw_variant v_thresholded[] = {
	{ "where", where_ops }, { "cast-mul", castmul_ops },
};
static const unsigned char a_thresholded[] = { 0, 2 };
RW_DECOMPOSITION_A(thresholded_relu, "thresholded-relu",
		   "ThresholdedRelu as where(x > alpha, x, 0) or x cast(x > alpha)",
		   m_thresholded, v_thresholded, a_thresholded, check7, vcheck_thresholded,
		 apply_thresholded);

static const char *const max_ops[] = { "Mul", "Max", NULL };
static const char *const relu_min_ops[] = { "Relu", "Min", "Mul", "Add", NULL };
static const char *const prelu_ops[] = { "PRelu", NULL };

static int vcheck_leaky(struct rw_ctx *c, const struct ir_node *n, int v)
{
	double alpha = rw_attr_float(n, "alpha", 0.01f);

	(void)c;
	return v != 0 || (alpha >= 0 && alpha <= 1);
}

static int apply_leaky(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *x = n->inputs[0], *a;
	double alpha = rw_attr_float(n, "alpha", 0.01f);

	rw_begin(c, n, &e);
	a = rw_scalar(&e, e.dtype, alpha);
	if (v == 0) {
		rw_op_to(&e, "Max", x, rw_op(&e, "Mul", x, a), n->outputs[0]);
	} else if (v == 1) {
		rw_op_to(&e, "Add", rw_op(&e, "Relu", x, NULL),
			 rw_op(&e, "Mul", rw_op(&e, "Min", x, rw_scalar(&e, e.dtype, 0)), a),
			 n->outputs[0]);
	} else {
		rw_op_to(&e, "PRelu", x, a, n->outputs[0]);
	}
	return rw_end(&e, 0);
}

static const char *const m_leaky[] = { "LeakyRelu", NULL };
static const struct rw_variant v_leaky[] = {
	{ "max", max_ops }, { "relu-min", relu_min_ops }, { "prelu", prelu_ops },
};
RW_DECOMPOSITION(leaky_relu, "leaky-relu",
		 "LeakyRelu as max(x, alpha x) (0 <= alpha <= 1), relu(x) + alpha min(x, 0), or PRelu",
		 m_leaky, v_leaky, check8, vcheck_leaky, apply_leaky);

static int check_prelu(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	if (!check8(c, n, why, size))
		return 0;
	if (n->n_inputs < 2 || !n->inputs[1]) {
		snprintf(why, size, "the slope input is absent");
		return 0;
	}
	return 1;
}

static int apply_prelu(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *x = n->inputs[0], *slope = n->inputs[1];

	(void)v;
	rw_begin(c, n, &e);
	rw_op_to(&e, "Add", rw_op(&e, "Relu", x, NULL),
		 rw_op(&e, "Mul", rw_op(&e, "Min", x, rw_scalar(&e, e.dtype, 0)), slope),
		 n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const m_prelu[] = { "PRelu", NULL };
static const struct rw_variant v_prelu[] = { { "relu-min", relu_min_ops } };
RW_DECOMPOSITION(prelu, "prelu", "PRelu as relu(x) + slope min(x, 0)",
		 m_prelu, v_prelu, check_prelu, NULL, apply_prelu);
