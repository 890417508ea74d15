/* compare.c: binary Max and Min, and the comparisons, in terms of each
 * other (decompositions; variants chosen by the op and the data's dtype):
 *   Max(a, b)   where(a > b, a, b) (exact; a NaN in a gives b), or
 *               a + relu(b - a)
 *   Min(a, b)   where(a < b, a, b), or a - relu(a - b)
 *   Greater(a, b) = Less(b, a), Less(a, b) = Greater(b, a),
 *   GreaterOrEqual(a, b) = LessOrEqual(b, a), and back
 *   GreaterOrEqual  or(a > b, a == b) (exact, NaN included), or not(a < b)
 *               for integer data only: for floats not(NaN < x) is true where
 *               NaN >= x is false, and nothing proves an operand NaN-free
 *   LessOrEqual     likewise with Less and Greater exchanged
 *   Equal       and(a >= b, a <= b) (NaN compares false: exact), or
 *               not(a < b or a > b) (integers), not(a xor b) (bool)
 * The relu forms: for integers exact while b - a does not overflow (int32
 * and int64 only, Relu on integers from opset 14); for floats the rounding
 * of b - a and of the sum is at most 2^-23 (|a| + |b|) (float32), and an
 * infinite a (a = -inf, or a = b = +inf) gives NaN, so a constant operand
 * holding inf or NaN is refused. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rewriters/rw_int.h"

static int both_present(const struct ir_node *n)
{
	return n->n_inputs == 2 && n->inputs[0] && n->inputs[1] && n->n_outputs &&
	       n->outputs[0];
}

/* the operands' dtype (the output's is bool for comparisons) */
static int operand_dtype(const struct rw_ctx *c, const struct ir_node *n)
{
	for (size_t i = 0; i < n->n_inputs && i < 2; i++) {
		const struct ir_vtype *t = n->inputs[i] ? rw_type(c, n->inputs[i]) : NULL;

		if (t && t->dtype)
			return t->dtype;
	}
	return rw_node_dtype(c, n);     /* the planner's probe has no inputs */
}

static int is_int(int dt)
{
	return dt == IR_DTYPE_INT8 || dt == IR_DTYPE_INT16 || dt == IR_DTYPE_INT32 ||
	       dt == IR_DTYPE_INT64 || dt == IR_DTYPE_UINT8 || dt == IR_DTYPE_UINT16 ||
	       dt == IR_DTYPE_UINT32 || dt == IR_DTYPE_UINT64;
}

/* A constant operand holding a value that is not finite */
static int const_not_finite(const struct rw_ctx *c, const struct ir_value *v)
{
	const struct ir_vtype *t = rw_type(c, v);

	if (!t || !t->has_fconst)
		return 0;
	for (size_t i = 0; i < t->n_fconst; i++)
		if (!isfinite(t->fval[i]))
			return 1;
	return 0;
}

/* Greater/Less on integers from opset 9 */
static int ordered_ok(const struct rw_ctx *c, int dt)
{
	return rw_dtype_is_float(dt) ? c->opset >= 7 : is_int(dt) && c->opset >= 9;
}

/* ---- Max, Min of two inputs ------------------------------------------ */

static int check_max_min(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int dt = operand_dtype(c, n);

	if (!both_present(n)) {
		snprintf(why, size, "not two inputs (variadic splits more)");
		return 0;
	}
	if (!rw_dtype_is_float(dt) && !is_int(dt)) {
		snprintf(why, size, "not for %s data", dt ? ir_dtype_name(dt) : "unknown");
		return 0;
	}
	if (c->opset < 9) {
		snprintf(why, size, "needs opset >= 9 (Where, Greater and Less on every dtype)");
		return 0;
	}
	return 1;
}

/* variants: 0 max where, 1 min where, 2 max relu, 3 min relu */
static int vcheck_max_min(struct rw_ctx *c, const struct ir_node *n, int v)
{
	int dt = operand_dtype(c, n), is_max = !strcmp(ir_s(n->op_type), "Max");

	if ((v & 1) == is_max)
		return 0;
	/* onnxruntime (1.31) has no Where kernel for int16, uint16 and
	 * uint64, and Relu only for int8 and int32 among the integers: the
	 * written model must run there */
	if (v < 2)
		return dt != IR_DTYPE_INT16 && dt != IR_DTYPE_UINT16 && dt != IR_DTYPE_UINT64;
	if (rw_dtype_is_float(dt))
		return n->n_inputs < 2 ||
		       (!const_not_finite(c, n->inputs[0]) && !const_not_finite(c, n->inputs[1]));
	return dt == IR_DTYPE_INT32 && c->opset >= 14;
}

static int apply_max_min(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *a = n->inputs[0], *b = n->inputs[1], *y = n->outputs[0];

	rw_begin(c, n, &e);
	if (v < 2) {
		struct ir_value *in[3] = { rw_op(&e, v == 0 ? "Greater" : "Less", a, b), a, b };

		rw_node(&e, "Where", NULL, in, 3, y);
	} else if (v == 2) {
		rw_op_to(&e, "Add", a, rw_op(&e, "Relu", rw_op(&e, "Sub", b, a), NULL), y);
	} else {
		rw_op_to(&e, "Sub", a, rw_op(&e, "Relu", rw_op(&e, "Sub", a, b), NULL), y);
	}
	return rw_end(&e, 0);
}

static const char *const m_max_min[] = { "Max", "Min", NULL };
static const char *const max_where_ops[] = { "Greater", "Where", NULL };
static const char *const min_where_ops[] = { "Less", "Where", NULL };
static const char *const max_relu_ops[] = { "Sub", "Relu", "Add", NULL };
static const char *const min_relu_ops[] = { "Sub", "Relu", NULL };
static const struct rw_variant v_max_min[] = {
	{ "greater-where", max_where_ops }, { "less-where", min_where_ops },
	{ "add-relu", max_relu_ops }, { "sub-relu", min_relu_ops },
};
RW_DECOMPOSITION(max_min, "max-min",
		 "binary Max and Min as where(a > b, a, b) (where(a < b, a, b)), or a + relu(b - a) (a - relu(a - b))",
		 m_max_min, v_max_min, check_max_min, vcheck_max_min, apply_max_min);

/* ---- Greater, Less, GreaterOrEqual, LessOrEqual, Equal --------------- */

enum {
	C_LESS, C_GREATER, C_LE, C_GE, C_GE_OR, C_LE_OR, C_NOT_LESS, C_NOT_GREATER,
	C_EQ_AND, C_EQ_NOT_OR, C_EQ_XOR
};

/* 0 Greater, 1 Less, 2 GreaterOrEqual, 3 LessOrEqual, 4 Equal */
static int cmp_kind(const struct ir_node *n)
{
	static const char *const ops[] = {
		"Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Equal"
	};

	for (int i = 0; i < 5; i++)
		if (!strcmp(ir_s(n->op_type), ops[i]))
			return i;
	return -1;
}

static int vcheck_compare(struct rw_ctx *c, const struct ir_node *n, int v)
{
	int k = cmp_kind(n), dt = operand_dtype(c, n), fl = rw_dtype_is_float(dt);

	switch (v) {
	case C_LESS: return k == 0;
	case C_GREATER: return k == 1;
	case C_LE: return k == 2;
	case C_GE: return k == 3;
	case C_GE_OR: case C_LE_OR:   /* Equal of floats from 11 */
		return k == 2 + (v == C_LE_OR) && (!fl || c->opset >= 11);
	case C_NOT_LESS: case C_NOT_GREATER:
		return k == 2 + (v == C_NOT_GREATER) && is_int(dt);
	case C_EQ_AND:
		return k == 4 && c->opset >= 12 && (fl || is_int(dt));
	case C_EQ_NOT_OR:
		return k == 4 && is_int(dt) && c->opset >= 9;
	case C_EQ_XOR:
		return k == 4 && dt == IR_DTYPE_BOOL;
	}
	return 0;
}

static int check_compare(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int dt = operand_dtype(c, n);

	if (!both_present(n)) {
		snprintf(why, size, "an input or the output is absent");
		return 0;
	}
	if (!dt) {
		snprintf(why, size, "the operands' dtype is unknown");
		return 0;
	}
	if (c->opset < 7) {
		snprintf(why, size, "needs opset >= 7 (broadcasting)");
		return 0;
	}
	if (cmp_kind(n) < 4 && !ordered_ok(c, dt)) {
		snprintf(why, size, "Greater and Less do not take %s data at opset %lld",
			 ir_dtype_name(dt), (long long)c->opset);
		return 0;
	}
	for (int v = 0; v <= C_EQ_XOR; v++)
		if (vcheck_compare(c, n, v))
			return 1;
	if (cmp_kind(n) == 4)
		snprintf(why, size, "Equal of %s data needs opset >= 12 (GreaterOrEqual, LessOrEqual)",
			 ir_dtype_name(dt));
	else
		snprintf(why, size, "for %s data at opset %lld no form applies", ir_dtype_name(dt),
			 (long long)c->opset);
	return 0;
}

static int apply_compare(struct rw_ctx *c, struct ir_node *n, int v)
{
	static const char *const swapped[] = { "Less", "Greater", "LessOrEqual", "GreaterOrEqual" };
	struct rw_emit e;
	struct ir_value *a = n->inputs[0], *b = n->inputs[1], *y = n->outputs[0];

	rw_begin(c, n, &e);
	switch (v) {
	case C_LESS: case C_GREATER: case C_LE: case C_GE:
		rw_op_to(&e, swapped[v], b, a, y);
		break;
	case C_GE_OR: case C_LE_OR:
		rw_op_to(&e, "Or", rw_op(&e, v == C_GE_OR ? "Greater" : "Less", a, b),
			 rw_op(&e, "Equal", a, b), y);
		break;
	case C_NOT_LESS: case C_NOT_GREATER:
		rw_op_to(&e, "Not", rw_op(&e, v == C_NOT_LESS ? "Less" : "Greater", a, b), NULL, y);
		break;
	case C_EQ_AND:
		rw_op_to(&e, "And", rw_op(&e, "GreaterOrEqual", a, b),
			 rw_op(&e, "LessOrEqual", a, b), y);
		break;
	case C_EQ_NOT_OR:
		rw_op_to(&e, "Not", rw_op(&e, "Or", rw_op(&e, "Less", a, b),
					  rw_op(&e, "Greater", a, b)), NULL, y);
		break;
	default:
		rw_op_to(&e, "Not", rw_op(&e, "Xor", a, b), NULL, y);
	}
	return rw_end(&e, 0);
}

static const char *const m_compare[] = {
	"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", NULL
};
static const char *const less_ops[] = { "Less", NULL };
static const char *const greater_ops[] = { "Greater", NULL };
static const char *const le_ops[] = { "LessOrEqual", NULL };
static const char *const ge_ops[] = { "GreaterOrEqual", NULL };
static const char *const ge_or_ops[] = { "Greater", "Equal", "Or", NULL };
static const char *const le_or_ops[] = { "Less", "Equal", "Or", NULL };
static const char *const not_less_ops[] = { "Less", "Not", NULL };
static const char *const not_greater_ops[] = { "Greater", "Not", NULL };
static const char *const eq_and_ops[] = { "GreaterOrEqual", "LessOrEqual", "And", NULL };
static const char *const eq_not_or_ops[] = { "Less", "Greater", "Or", "Not", NULL };
static const char *const eq_xor_ops[] = { "Xor", "Not", NULL };
static const struct rw_variant v_compare[] = {
	{ "less", less_ops }, { "greater", greater_ops },
	{ "less-or-equal", le_ops }, { "greater-or-equal", ge_ops },
	{ "or-greater-equal", ge_or_ops }, { "or-less-equal", le_or_ops },
	{ "not-less", not_less_ops }, { "not-greater", not_greater_ops },
	{ "and-ge-le", eq_and_ops }, { "not-or-less-greater", eq_not_or_ops },
	{ "not-xor", eq_xor_ops },
};
RW_DECOMPOSITION(compare, "compare",
		 "Greater, Less, GreaterOrEqual, LessOrEqual with operands swapped; >= and <= as or(>, ==) or (integers) not(<); Equal as and(>=, <=), not(< or >) or not(xor)",
		 m_compare, v_compare, check_compare, vcheck_compare, apply_compare);
