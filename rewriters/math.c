/* math.c: decompositions of elementwise math ops:
 *   Neg         0 - x, or x * -1 (which keeps the sign of 0)
 *   Reciprocal  1 / x
 *   Abs         max(x, 0 - x), or relu(x) + relu(0 - x) (floats)
 *   Sign        cast(x > 0) - cast(x < 0)  (Sign(NaN) becomes 0, not NaN;
 *               unsigned data too)
 *   Sqrt        pow(x, 0.5)
 *   Pow         with a constant exponent 0.5, -0.5, 1, 2, 3 or -1: Sqrt,
 *               Mul and Div (exact for 2, 3 and -1 in real arithmetic)
 *   Sum, Mean, Max, Min with several inputs: chains of binary Add, Max,
 *               Min (Mean then divides by the count). */
#include <stdio.h>
#include <string.h>

#include "rewriters/rw_int.h"

static int is_signed_num(int dt)
{
	return rw_dtype_is_float(dt) || dt == IR_DTYPE_INT8 || dt == IR_DTYPE_INT16 ||
	       dt == IR_DTYPE_INT32 || dt == IR_DTYPE_INT64;
}

/* Input 0 and output 0 present, opset >= 7 (scalar broadcasting), data
 * of a signed numeric dtype (floats only when float_only). */
static int check_num(struct rw_ctx *c, const struct ir_node *n, int float_only,
		     char *why, size_t size)
{
	int dt = rw_node_dtype(c, n);

	if (!n->n_inputs || !n->inputs[0] || !n->n_outputs || !n->outputs[0]) {
		snprintf(why, size, "input 0 or output 0 is absent");
		return 0;
	}
	if (float_only ? !rw_dtype_is_float(dt) : !is_signed_num(dt)) {
		snprintf(why, size, "not for %s data", dt ? ir_dtype_name(dt) : "unknown");
		return 0;
	}
	if (c->opset < 7) {
		snprintf(why, size, "needs opset >= 7 (broadcasting binary ops)");
		return 0;
	}
	if (c->opset < 14 && (dt == IR_DTYPE_INT8 || dt == IR_DTYPE_INT16)) {
		snprintf(why, size, "Sub and Mul of %s need opset >= 14", ir_dtype_name(dt));
		return 0;
	}
	return 1;
}

static int check_signed(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	return check_num(c, n, 0, why, size);
}

static int check_float(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	return check_num(c, n, 1, why, size);
}

/* ---- Neg, Reciprocal, Abs, Sign ------------------------------------- */

static int apply_neg(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;

	rw_begin(c, n, &e);
	if (v == 0)
		rw_op_to(&e, "Sub", rw_scalar(&e, e.dtype, 0), n->inputs[0], n->outputs[0]);
	else
		rw_op_to(&e, "Mul", n->inputs[0], rw_scalar(&e, e.dtype, -1), n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const m_neg[] = { "Neg", NULL };
static const char *const sub_ops[] = { "Sub", NULL };
static const char *const neg_mul_ops[] = { "Mul", NULL };
static const struct rw_variant v_neg[] = { { "sub", sub_ops }, { "mul", neg_mul_ops } };
RW_DECOMPOSITION(neg, "neg", "Neg as 0 - x, or x * -1", m_neg, v_neg, check_signed,
		 NULL, apply_neg);

static int apply_reciprocal(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;

	(void)v;
	rw_begin(c, n, &e);
	rw_op_to(&e, "Div", rw_scalar(&e, e.dtype, 1), n->inputs[0], n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const m_reciprocal[] = { "Reciprocal", NULL };
static const char *const div_ops[] = { "Div", NULL };
static const struct rw_variant v_reciprocal[] = { { "div", div_ops } };
RW_DECOMPOSITION(reciprocal, "reciprocal", "Reciprocal as 1 / x", m_reciprocal,
		 v_reciprocal, check_float, NULL, apply_reciprocal);

static int vcheck_abs(struct rw_ctx *c, const struct ir_node *n, int v)
{
	int dt = rw_node_dtype(c, n);

	if (v == 0)   /* Max of integers from opset 12 */
		return c->opset >= (rw_dtype_is_float(dt) ? 8 : 12);
	/* onnxruntime (1.31) has integer Relu kernels for int8 and int32 only */
	return rw_dtype_is_float(dt) ||
	       (c->opset >= 14 && (dt == IR_DTYPE_INT8 || dt == IR_DTYPE_INT32));
}

static int apply_abs(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *x = n->inputs[0], *neg;

	rw_begin(c, n, &e);
	neg = rw_op(&e, "Sub", rw_scalar(&e, e.dtype, 0), x);
	if (v == 0)
		rw_op_to(&e, "Max", x, neg, n->outputs[0]);
	else
		rw_op_to(&e, "Add", rw_op(&e, "Relu", x, NULL), rw_op(&e, "Relu", neg, NULL),
			 n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const m_abs[] = { "Abs", NULL };
static const char *const abs_max_ops[] = { "Sub", "Max", NULL };
static const char *const abs_relu_ops[] = { "Sub", "Relu", "Add", NULL };
static const struct rw_variant v_abs[] = {
	{ "max", abs_max_ops }, { "relu", abs_relu_ops },
};
RW_DECOMPOSITION(abs, "abs", "Abs as max(x, 0 - x) or relu(x) + relu(0 - x)",
		 m_abs, v_abs, check_signed, vcheck_abs, apply_abs);

static int apply_sign(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *x = n->inputs[0], *pos, *neg;
	struct ir_node *a, *b;

	rw_begin(c, n, &e);
	pos = rw_op(&e, "Greater", x, rw_scalar(&e, e.dtype, 0));
	neg = rw_op(&e, "Less", x, rw_scalar(&e, e.dtype, 0));
	if (v == 1) {     /* where(x > 0, 1, where(x < 0, -1, 0)): no Cast */
		struct ir_value *in[3] = { neg, rw_scalar(&e, e.dtype, -1), rw_scalar(&e, e.dtype, 0) };
		struct ir_node *w = rw_node(&e, "Where", NULL, in, 3, NULL);
		struct ir_value *out[3] = { pos, rw_scalar(&e, e.dtype, 1), w ? w->outputs[0] : NULL };

		if (w)
			rw_node(&e, "Where", NULL, out, 3, n->outputs[0]);
		return rw_end(&e, 0);
	}
	a = rw_node(&e, "Cast", NULL, &pos, 1, NULL);
	b = rw_node(&e, "Cast", NULL, &neg, 1, NULL);
	if (!a || !b || ir_node_set_int(a, "to", e.dtype) < 0 ||
	    ir_node_set_int(b, "to", e.dtype) < 0)
		e.failed = 1;
	else
		rw_op_to(&e, "Sub", a->outputs[0], b->outputs[0], n->outputs[0]);
	return rw_end(&e, 0);
}

static int check_sign(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int dt = rw_node_dtype(c, n);

	if (dt == IR_DTYPE_UINT8 || dt == IR_DTYPE_UINT16 || dt == IR_DTYPE_UINT32 ||
	    dt == IR_DTYPE_UINT64) {
		if (!n->n_inputs || !n->inputs[0] || !n->n_outputs || !n->outputs[0]) {
			snprintf(why, size, "input 0 or output 0 is absent");
			return 0;
		}
		if (c->opset >= ((dt == IR_DTYPE_UINT8 || dt == IR_DTYPE_UINT16) ? 14 : 9))
			return 1;
		snprintf(why, size, "Greater, Less and Sub of %s need opset >= %d",
			 ir_dtype_name(dt), dt == IR_DTYPE_UINT8 || dt == IR_DTYPE_UINT16 ? 14 : 9);
		return 0;
	}
	if (!check_signed(c, n, why, size))
		return 0;
	if (c->opset < 9 && !rw_dtype_is_float(rw_node_dtype(c, n))) {
		snprintf(why, size, "Greater/Less on integers need opset >= 9");
		return 0;
	}
	return 1;
}

static const char *const m_sign[] = { "Sign", NULL };
static const char *const sign_ops[] = { "Greater", "Less", "Cast", "Sub", NULL };
static const char *const sign_where_ops[] = { "Greater", "Less", "Where", NULL };
static const struct rw_variant v_sign[] = { { "compare", sign_ops }, { "where", sign_where_ops } };

/* Where from opset 9; onnxruntime (1.31) has no Where kernel for int16,
 * uint16 and uint64 */
static int vcheck_sign(struct rw_ctx *c, const struct ir_node *n, int v)
{
	int dt = rw_node_dtype(c, n);

	return v == 0 || (c->opset >= 9 && dt != IR_DTYPE_INT16 && dt != IR_DTYPE_UINT16 &&
			  dt != IR_DTYPE_UINT64);
}

RW_DECOMPOSITION(sign, "sign",
		 "Sign as cast(x > 0) - cast(x < 0), or where(x > 0, 1, where(x < 0, -1, 0)) (NaN gives 0)",
		 m_sign, v_sign, check_sign, vcheck_sign, apply_sign);

/* ---- Sqrt <-> Pow ---------------------------------------------------- */

static int apply_sqrt(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;

	(void)v;
	rw_begin(c, n, &e);
	rw_op_to(&e, "Pow", n->inputs[0], rw_scalar(&e, e.dtype, 0.5), n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const m_sqrt[] = { "Sqrt", NULL };
static const char *const pow_ops[] = { "Pow", NULL };
static const struct rw_variant v_sqrt[] = { { "pow", pow_ops } };
RW_DECOMPOSITION(sqrt_pow, "sqrt-pow", "Sqrt as pow(x, 0.5)", m_sqrt, v_sqrt,
		 check_float, NULL, apply_sqrt);

static int pow_exponent(struct rw_ctx *c, const struct ir_node *n, double *p)
{
	return n->n_inputs >= 2 && rw_const_double(c, n->inputs[1], p) &&
	       (*p == 0.5 || *p == -0.5 || *p == 1 || *p == 2 || *p == 3 || *p == -1);
}

static int check_pow(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	double p;

	if (!check_float(c, n, why, size))
		return 0;
	if (!pow_exponent(c, n, &p)) {
		snprintf(why, size, "the exponent is not a constant 0.5, -0.5, 1, 2, 3 or -1");
		return 0;
	}
	return 1;
}

/* variants: 0 sqrt (0.5), 1 mul (1, 2, 3), 2 div (-1), 3 sqrt-div (-0.5) */
static int pow_variant(double p)
{
	return p == 0.5 ? 0 : p == -1 ? 2 : p == -0.5 ? 3 : 1;
}

static int vcheck_pow(struct rw_ctx *c, const struct ir_node *n, int v)
{
	double p;

	return pow_exponent(c, n, &p) && pow_variant(p) == v;
}

static int apply_pow(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *x = n->inputs[0], *y = n->outputs[0];
	double p = 1;

	pow_exponent(c, n, &p);
	rw_begin(c, n, &e);
	if (v == 0)
		rw_op_to(&e, "Sqrt", x, NULL, y);
	else if (v == 2)
		rw_op_to(&e, "Div", rw_scalar(&e, e.dtype, 1), x, y);
	else if (v == 3)
		rw_op_to(&e, "Div", rw_scalar(&e, e.dtype, 1), rw_op(&e, "Sqrt", x, NULL), y);
	else if (p == 1)
		rw_op_to(&e, "Mul", x, rw_scalar(&e, e.dtype, 1), y);
	else if (p == 2)
		rw_op_to(&e, "Mul", x, x, y);
	else
		rw_op_to(&e, "Mul", rw_op(&e, "Mul", x, x), x, y);
	return rw_end(&e, 0);
}

static const char *const m_pow[] = { "Pow", NULL };
static const char *const sqrt_ops[] = { "Sqrt", NULL };
static const char *const mul_ops[] = { "Mul", NULL };
static const char *const sqrt_div_ops[] = { "Sqrt", "Div", NULL };
static const struct rw_variant v_pow[] = {
	{ "sqrt", sqrt_ops }, { "mul", mul_ops }, { "div", div_ops },
	{ "sqrt-div", sqrt_div_ops },
};
RW_DECOMPOSITION(pow_const, "pow-const",
		 "Pow with a constant exponent in {0.5, -0.5, 1, 2, 3, -1} as Sqrt, Mul or Div",
		 m_pow, v_pow, check_pow, vcheck_pow, apply_pow);

/* ---- variadic Sum, Mean, Max, Min ------------------------------------ */

static int check_variadic(struct rw_ctx *c, const struct ir_node *n, char *why,
			  size_t size)
{
	const char *op = ir_s(n->op_type);
	int dt = rw_node_dtype(c, n);
	size_t k = 0;

	for (size_t i = 0; i < n->n_inputs; i++)
		k += n->inputs[i] != NULL;
	if (k != n->n_inputs || !n->n_outputs || !n->outputs[0]) {
		snprintf(why, size, "an input or the output is absent");
		return 0;
	}
	if (c->opset < 8) {
		snprintf(why, size, "needs opset >= 8 (broadcasting Max/Min/Add)");
		return 0;
	}
	if ((!strcmp(op, "Max") || !strcmp(op, "Min")) && k <= 2) {
		snprintf(why, size, "already binary");
		return 0;
	}
	if (k < 2 || (!strcmp(op, "Mean") && !rw_dtype_is_float(dt))) {
		snprintf(why, size, "needs two inputs or more (Mean: of float data)");
		return 0;
	}
	return 1;
}

static int variadic_variant(const struct ir_node *n)
{
	const char *op = ir_s(n->op_type);

	return !strcmp(op, "Sum") ? 0 : !strcmp(op, "Mean") ? 1 : !strcmp(op, "Max") ? 2 : 3;
}

static int vcheck_variadic(struct rw_ctx *c, const struct ir_node *n, int v)
{
	(void)c;
	return variadic_variant(n) == v;
}

static int apply_variadic(struct rw_ctx *c, struct ir_node *n, int v)
{
	static const char *const bin[] = { "Add", "Add", "Max", "Min" };
	struct rw_emit e;
	struct ir_value *acc = n->inputs[0], *y = n->outputs[0];
	size_t k = n->n_inputs;

	rw_begin(c, n, &e);
	for (size_t i = 1; i < k; i++)
		acc = rw_op_to(&e, bin[v], acc, n->inputs[i], i + 1 == k && v != 1 ? y : NULL);
	if (v == 1)
		rw_op_to(&e, "Div", acc, rw_scalar(&e, e.dtype, (double)k), y);
	return rw_end(&e, 0);
}

static const char *const m_variadic[] = { "Max", "Mean", "Min", "Sum", NULL };
static const char *const add_ops[] = { "Add", NULL };
static const char *const add_div_ops[] = { "Add", "Div", NULL };
static const char *const bmax_ops[] = { "Max", NULL };
static const char *const bmin_ops[] = { "Min", NULL };
static const struct rw_variant v_variadic[] = {
	{ "add", add_ops }, { "add-div", add_div_ops }, { "max", bmax_ops },
	{ "min", bmin_ops },
};
RW_DECOMPOSITION(variadic, "variadic",
		 "Sum and Mean as chains of Add (Mean / count); Max and Min of 3+ inputs as binary chains",
		 m_variadic, v_variadic, check_variadic, vcheck_variadic, apply_variadic);
