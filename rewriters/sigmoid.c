/* sigmoid.c: Sigmoid and Tanh in terms of Exp or of each other, for
 * targets that lack one (float data):
 *   Sigmoid  1 / (1 + exp(0 - x))     (exp overflows to inf below x = -88
 *                                      in float: 1 / inf = 0, the limit)
 *            (tanh(x / 2) + 1) / 2     (absolute error about 2^-24; the
 *                                      relative error grows for x << 0)
 *   Tanh     2 sigmoid(2 x) - 1, or 1 - 2 / (exp(2 x) + 1)
 *                                     (absolute error about 2^-23 in float:
 *                                      for small |x| the relative error is
 *                                      large, tanh(x) ~ x is a difference
 *                                      of numbers near 1) */
#include <stdio.h>
#include <string.h>

#include "rewriters/rw_int.h"

static int check7(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	return rw_check_float_node(c, n, 7, why, size);
}

static int apply_sigmoid(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *x = n->inputs[0], *y = n->outputs[0], *t;
	int dt;

	rw_begin(c, n, &e);
	dt = e.dtype;
	if (v == 0) {
		t = rw_op(&e, "Exp", rw_op(&e, "Sub", rw_scalar(&e, dt, 0), x), NULL);
		rw_op_to(&e, "Div", rw_scalar(&e, dt, 1), rw_op(&e, "Add", t, rw_scalar(&e, dt, 1)),
			 y);
	} else {
		t = rw_op(&e, "Tanh", rw_op(&e, "Mul", x, rw_scalar(&e, dt, 0.5)), NULL);
		rw_op_to(&e, "Mul", rw_op(&e, "Add", t, rw_scalar(&e, dt, 1)),
			 rw_scalar(&e, dt, 0.5), y);
	}
	return rw_end(&e, 0);
}

static const char *const m_sigmoid[] = { "Sigmoid", NULL };
static const char *const sig_exp_ops[] = { "Sub", "Exp", "Add", "Div", NULL };
static const char *const sig_tanh_ops[] = { "Mul", "Tanh", "Add", NULL };
static const struct rw_variant v_sigmoid[] = { { "exp", sig_exp_ops }, { "tanh", sig_tanh_ops } };
RW_DECOMPOSITION(sigmoid, "sigmoid", "Sigmoid as 1 / (1 + exp(-x)), or (tanh(x / 2) + 1) / 2",
		 m_sigmoid, v_sigmoid, check7, NULL, apply_sigmoid);

static int apply_tanh(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *x = n->inputs[0], *y = n->outputs[0], *x2, *t;
	int dt;

	rw_begin(c, n, &e);
	dt = e.dtype;
	x2 = rw_op(&e, "Mul", x, rw_scalar(&e, dt, 2));
	if (v == 0) {
		t = rw_op(&e, "Mul", rw_op(&e, "Sigmoid", x2, NULL), rw_scalar(&e, dt, 2));
		rw_op_to(&e, "Sub", t, rw_scalar(&e, dt, 1), y);
	} else {
		t = rw_op(&e, "Add", rw_op(&e, "Exp", x2, NULL), rw_scalar(&e, dt, 1));
		rw_op_to(&e, "Sub", rw_scalar(&e, dt, 1), rw_op(&e, "Div", rw_scalar(&e, dt, 2), t),
			 y);
	}
	return rw_end(&e, 0);
}

static const char *const m_tanh[] = { "Tanh", NULL };
static const char *const tanh_sig_ops[] = { "Mul", "Sigmoid", "Sub", NULL };
static const char *const tanh_exp_ops[] = { "Mul", "Exp", "Add", "Div", "Sub", NULL };
static const struct rw_variant v_tanh[] = { { "sigmoid", tanh_sig_ops }, { "exp", tanh_exp_ops } };
RW_DECOMPOSITION(tanh, "tanh", "Tanh as 2 sigmoid(2x) - 1, or 1 - 2 / (exp(2x) + 1)",
		 m_tanh, v_tanh, check7, NULL, apply_tanh);
