/* logic.c: Where and the logical ops as arithmetic, for targets without
 * boolean ops:
 *   Where(c, a, b)  a * cast(c) + b * (1 - cast(c)): exact for finite a
 *                   and b; an inf or NaN in the branch NOT taken still
 *                   leaks (inf * 0 is NaN), so the result is NaN there.
 *                   A constant branch holding inf or NaN (attention
 *                   masks: Where(m, x, -inf)) is therefore refused
 *   Not(x)          cast(1 - cast(x))          (cast to bool: nonzero)
 *   And(a, b)       cast(cast(a) * cast(b))
 *   Or(a, b)        cast(cast(a) + cast(b))
 *   Xor(a, b)       cast(cast(a) - cast(b))
 * The logical ops compute in float (0 and 1, exact).  The variants list
 * only Cast (checked at the node's dtype, bool); vcheck asks the target
 * about Mul, Add and Sub at the dtype they really compute in. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rewriters/rw_int.h"

static struct ir_value *cast(struct rw_emit *e, struct ir_value *x, int to,
			     struct ir_value *out)
{
	struct ir_node *n = rw_node(e, "Cast", NULL, &x, 1, out);

	if (n && ir_node_set_int(n, "to", to) < 0)
		e->failed = 1;
	return n ? n->outputs[0] : NULL;
}

static int all_present(const struct ir_node *n, size_t k)
{
	if (n->n_inputs < k || !n->n_outputs || !n->outputs[0])
		return 0;
	for (size_t i = 0; i < k; i++)
		if (!n->inputs[i])
			return 0;
	return 1;
}

/* ---- Where ------------------------------------------------------------ */

static int where_dtype(const struct rw_ctx *c, const struct ir_node *n)
{
	const struct ir_vtype *t = n->n_inputs > 1 && n->inputs[1] ? rw_type(c, n->inputs[1]) : NULL;

	return t ? t->dtype : 0;
}

static int check_where(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int dt = where_dtype(c, n);

	if (!all_present(n, 3)) {
		snprintf(why, size, "an input or the output is absent");
		return 0;
	}
	if (!rw_dtype_is_float(dt) && dt != IR_DTYPE_INT32 && dt != IR_DTYPE_INT64) {
		snprintf(why, size, "the branches are %s, not float, int32 or int64",
			 dt ? ir_dtype_name(dt) : "of unknown dtype");
		return 0;
	}
	if (c->opset < 9) {
		snprintf(why, size, "needs opset >= 9");
		return 0;
	}
	for (size_t i = 1; i < 3; i++) {
		double v[64];
		size_t k;

		if (!rw_const_doubles(c, n->inputs[i], v, 64, &k))
			continue;
		for (size_t j = 0; j < k; j++)
			if (!isfinite(v[j])) {
				snprintf(why, size, "branch %zu holds %g: inf * 0 would give NaN", i, v[j]);
				return 0;
			}
	}
	return 1;
}

static int vcheck_where(struct rw_ctx *c, const struct ir_node *n, int v)
{
	int dt = where_dtype(c, n);

	(void)v;
	return rw_target_accepts(c, "", "Mul", dt) && rw_target_accepts(c, "", "Add", dt) &&
	       rw_target_accepts(c, "", "Sub", dt) && rw_target_accepts(c, "", "Cast", dt);
}

static int apply_where(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *f;
	int dt = where_dtype(c, n);

	(void)v;
	rw_begin(c, n, &e);
	e.dtype = dt;
	f = cast(&e, n->inputs[0], dt, NULL);
	rw_op_to(&e, "Add", rw_op(&e, "Mul", n->inputs[1], f),
		 rw_op(&e, "Mul", n->inputs[2], rw_op(&e, "Sub", rw_scalar(&e, dt, 1), f)),
		 n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const m_where[] = { "Where", NULL };
static const char *const cast_ops[] = { "Cast", NULL };
static const struct rw_variant v_where[] = { { "arith", cast_ops } };
static const unsigned char a_where[] = { 2 };
RW_DECOMPOSITION_A(where_arith, "where-arith",
		   "Where as a*cast(c) + b*(1-cast(c)) (Cast, Mul, Sub, Add; inf/NaN in the other branch leak)",
		   m_where, v_where, a_where, check_where, vcheck_where, apply_where);

/* ---- Not, And, Or, Xor ------------------------------------------------ */

static int check_logic(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	size_t k = strcmp(ir_s(n->op_type), "Not") ? 2 : 1;

	if (!all_present(n, k)) {
		snprintf(why, size, "an input or the output is absent");
		return 0;
	}
	if (rw_node_dtype(c, n) != IR_DTYPE_BOOL) {
		snprintf(why, size, "the input is not bool");
		return 0;
	}
	if (c->opset < 7) {
		snprintf(why, size, "needs opset >= 7 (broadcasting)");
		return 0;
	}
	return 1;
}

static const char *logic_op(const struct ir_node *n)
{
	const char *op = ir_s(n->op_type);

	return !strcmp(op, "Not") || !strcmp(op, "Xor") ? "Sub" :
	       !strcmp(op, "And") ? "Mul" : "Add";
}

static int vcheck_logic(struct rw_ctx *c, const struct ir_node *n, int v)
{
	(void)v;
	return rw_target_accepts(c, "", logic_op(n), IR_DTYPE_FLOAT) &&
	       rw_target_accepts(c, "", "Cast", IR_DTYPE_FLOAT);
}

static int apply_logic(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *a, *b, *r;

	(void)v;
	rw_begin(c, n, &e);
	e.dtype = IR_DTYPE_FLOAT;
	a = cast(&e, n->inputs[0], IR_DTYPE_FLOAT, NULL);
	if (!strcmp(ir_s(n->op_type), "Not")) {
		b = a;
		a = rw_scalar(&e, IR_DTYPE_FLOAT, 1);
	} else {
		b = cast(&e, n->inputs[1], IR_DTYPE_FLOAT, NULL);
	}
	r = rw_op(&e, logic_op(n), a, b);
	cast(&e, r, IR_DTYPE_BOOL, n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const m_logic[] = { "And", "Not", "Or", "Xor", NULL };
static const struct rw_variant v_logic[] = { { "arith", cast_ops } };
RW_DECOMPOSITION(logic_arith, "logic-arith",
		 "Not, And, Or, Xor as float arithmetic between Casts (1-a, a*b, a+b, a-b)",
		 m_logic, v_logic, check_logic, vcheck_logic, apply_logic);
