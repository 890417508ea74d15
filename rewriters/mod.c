/* mod.c: pass "mod-int": Mod of int32/int64 data by Div, which truncates
 * integers toward zero:
 *   r = a - b (a / b)                       fmod 1 (C's %, the dividend's
 *                                           sign)
 *   r - b clip(clip(r, -1, 1) clip(b, -1, 1), -1, 0)
 *                                           fmod 0 (the divisor's sign: b
 *                                           added where r is non-zero and
 *                                           of the other sign)
 * exact in wrapping integer arithmetic (the result always fits); a zero
 * divisor is undefined either way, and INT_MIN / -1 overflows Div (some
 * runtimes trap there where Mod gives 0).  Float Mod (fmod 1) is not
 * lowered: a - b trunc(a / b) rounds the quotient. */
#include <stdio.h>

#include "rewriters/rw_int.h"

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int dt = rw_node_dtype(c, n);

	if (n->n_inputs < 2 || !n->inputs[0] || !n->inputs[1] || !n->n_outputs || !n->outputs[0]) {
		snprintf(why, size, "an input or the output is absent");
		return 0;
	}
	if (dt != IR_DTYPE_INT32 && dt != IR_DTYPE_INT64) {
		snprintf(why, size, "for int32 and int64 data, not %s%s",
			 dt ? ir_dtype_name(dt) : "unknown",
			 rw_dtype_is_float(dt) ? " (a - b trunc(a / b) rounds)" : "");
		return 0;
	}
	if (c->opset < 12) {
		snprintf(why, size, "needs opset >= 12 (Clip of integers)");
		return 0;
	}
	return 1;
}

/* variants: 0 fmod 1, 1 fmod 0 */
static int vcheck(struct rw_ctx *c, const struct ir_node *n, int v)
{
	(void)c;
	return v == (rw_attr_int(n, "fmod", 0) == 0);
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *a = n->inputs[0], *b = n->inputs[1], *r, *s;

	rw_begin(c, n, &e);
	r = rw_op(&e, "Mul", b, rw_op(&e, "Div", a, b));
	r = rw_op_to(&e, "Sub", a, r, v ? NULL : n->outputs[0]);
	if (v) {
		s = rw_op(&e, "Mul", rw_clip(&e, r, -1, 1, NULL), rw_clip(&e, b, -1, 1, NULL));
		s = rw_op(&e, "Mul", b, rw_clip(&e, s, -1, 0, NULL));
		rw_op_to(&e, "Sub", r, s, n->outputs[0]);
	}
	return rw_end(&e, 0);
}

static const char *const matches[] = { "Mod", NULL };
static const char *const trunc_ops[] = { "Div", "Mul", "Sub", NULL };
static const char *const floor_ops[] = { "Div", "Mul", "Sub", "Clip", NULL };
static const struct rw_variant variants[] = { { "trunc", trunc_ops }, { "floor", floor_ops } };
RW_DECOMPOSITION(mod_int, "mod-int",
		 "Mod of int32/int64 data as a - b (a / b) (Div truncates), fmod 0 adding b where the remainder's sign differs from b's (Clip of the signs)",
		 matches, variants, check, vcheck, apply);
