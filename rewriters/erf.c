/* erf.c: pass "erf-poly": Erf as a polynomial of primitives every target
 * has.  erf(x) = s(x) g(|x|), g(a) = 1 - t(a1 + t(a2 + t(a3 + t(a4 + t
 * a5)))) exp(-a^2), t = 1 / (1 + p a) (Abramowitz and Stegun 7.1.26: the
 * approximation is within 1.5e-7 of erf), |x| = Max(x, -x) and the sign
 * s(x) = x / Max(|x|, tiny), tiny the dtype's smallest normal-ish value:
 * below it g(|x|) < 1.2 tiny, so the error stays under the bound.  Only
 * Max, Mul, Add, Sub, Div and Exp are emitted. */
#include <stdio.h>
#include "rewriters/rw_int.h"

const char *const rw_erf_poly_ops[] = { "Max", "Mul", "Add", "Sub", "Div", "Exp", NULL };

struct ir_value *rw_emit_erf_poly(struct rw_emit *e, struct ir_value *x,
				  struct ir_value *out)
{
	static const double a[5] = { 0.254829592, -0.284496736, 1.421413741,
				     -1.453152027, 1.061405429 };
	int dt = e->dtype;
	double tiny = dt == IR_DTYPE_FLOAT16 ? 6.1e-5 : dt == IR_DTYPE_DOUBLE ? 1e-300 : 1e-30;
	struct ir_value *neg = rw_op(e, "Mul", x, rw_scalar(e, dt, -1.0));
	struct ir_value *abs = rw_op(e, "Max", x, neg);
	struct ir_value *t = rw_op(e, "Div", rw_scalar(e, dt, 1.0),
				   rw_op(e, "Add", rw_op(e, "Mul", abs, rw_scalar(e, dt, 0.3275911)),
					 rw_scalar(e, dt, 1.0)));
	struct ir_value *poly = rw_op(e, "Mul", t, rw_scalar(e, dt, a[4]));
	struct ir_value *ex, *g, *sign;

	for (int i = 3; i >= 0; i--)
		poly = rw_op(e, "Mul", t, rw_op(e, "Add", poly, rw_scalar(e, dt, a[i])));
	ex = rw_op(e, "Exp", rw_op(e, "Mul", rw_op(e, "Mul", abs, abs), rw_scalar(e, dt, -1.0)),
		   NULL);
	g = rw_op(e, "Sub", rw_scalar(e, dt, 1.0), rw_op(e, "Mul", poly, ex));
	sign = rw_op(e, "Div", x, rw_op(e, "Max", abs, rw_scalar(e, dt, tiny)));
	return rw_op_to(e, "Mul", g, sign, out);
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *x = n->inputs[0], *y = n->outputs[0];

	(void)v;
	rw_begin(c, n, &e);
	rw_emit_erf_poly(&e, x, y);
	return rw_end(&e, 0);
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int dt = rw_node_dtype(c, n);

	if (dt && dt != IR_DTYPE_FLOAT && dt != IR_DTYPE_FLOAT16 && dt != IR_DTYPE_DOUBLE &&
	    dt != IR_DTYPE_BFLOAT16) {
		why[0] = 0;
		return 0;
	}
	if (c->opset < 8) {     /* Max(|x|, tiny) broadcasts */
		snprintf(why, size, "needs default-domain opset >= 8 (Max broadcasting)");
		return 0;
	}
	return n->n_inputs >= 1 && n->inputs[0] && n->n_outputs >= 1 && n->outputs[0];
}

static const char *const matches[] = { "Erf", NULL };
static const struct rw_variant variants[] = { { "poly", rw_erf_poly_ops } };

const struct rw_pass rw_pass_erf_poly = {
	.name = "erf-poly",
	.summary = "Erf as a polynomial of Max, Mul, Add, Sub, Div and Exp (error <= 1.5e-7)",
	.kind = RW_DECOMPOSE,
	.matches = matches,
	.variants = variants,
	.n_variants = 1,
	.approx = (const unsigned char[]){ 1 },
	.check = check,
	.apply = apply,
};
