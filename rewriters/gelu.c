/* gelu.c: pass "gelu": Gelu (ai.onnx 20, com.microsoft Gelu, BiasGelu,
 * FastGelu) as primitives.  Exact Gelu is 0.5 x (1 + erf(x / sqrt 2)): with
 * Erf, else with the erf polynomial of erf.c (error <= 1e-7 x), else with
 * the tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),
 * which differs from exact Gelu by at most 5e-4 (tests/unit measure it).
 * The tanh form (approximate="tanh", FastGelu) is emitted with Tanh or,
 * as x sigmoid(2 sqrt(2/pi)(x + 0.044715 x^3)), with Sigmoid.  BiasGelu
 * and FastGelu with a bias add it first. */
#include <math.h>
#include <string.h>

#include "rewriters/rw_int.h"

enum { V_ERF, V_ERF_POLY, V_TANH, V_SIGMOID };

static const char *const erf_ops[] = { "Div", "Erf", "Add", "Mul", NULL };
static const char *const tanh_ops[] = { "Mul", "Add", "Tanh", NULL };
static const char *const sigmoid_ops[] = { "Mul", "Add", "Sigmoid", NULL };

static const struct rw_variant variants[] = {
	{ "erf", erf_ops },
	{ "erf-poly", rw_erf_poly_ops },
	{ "tanh", tanh_ops },
	{ "sigmoid", sigmoid_ops },
};

static int is_tanh_form(const struct ir_node *n)
{
	if (!strcmp(ir_s(n->op_type), "FastGelu"))
		return 1;
	return !strcmp(rw_attr_str(n, "approximate", "none"), "tanh");
}

static int vcheck(struct rw_ctx *c, const struct ir_node *n, int v)
{
	if (v == V_ERF_POLY && c->opset < 8)    /* its Max broadcasts */
		return 0;
	return is_tanh_form(n) ? v == V_TANH || v == V_SIGMOID : 1;
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	const char *op = ir_s(n->op_type);

	(void)c;
	(void)size;
	why[0] = 0;
	if (!n->n_inputs || !n->inputs[0] || !n->n_outputs || !n->outputs[0])
		return 0;
	if (!strcmp(op, "BiasGelu") && (n->n_inputs < 2 || !n->inputs[1]))
		return 0;
	return strcmp(rw_attr_str(n, "approximate", "none"), "none") == 0 ||
	       is_tanh_form(n);
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct ir_value *x = n->inputs[0], *y = n->outputs[0], *h;
	struct rw_emit e;
	int dt;

	rw_begin(c, n, &e);
	dt = e.dtype;
	if (n->n_inputs > 1 && n->inputs[1])   /* BiasGelu, FastGelu bias */
		x = rw_op(&e, "Add", x, n->inputs[1]);
	if (v == V_ERF || v == V_ERF_POLY) {
		struct ir_value *z = rw_op(&e, "Div", x, rw_scalar(&e, dt, sqrt(2.0)));
		struct ir_value *erf = v == V_ERF ? rw_op(&e, "Erf", z, NULL) :
						    rw_emit_erf_poly(&e, z, NULL);

		h = rw_op(&e, "Mul", rw_op(&e, "Add", erf, rw_scalar(&e, dt, 1.0)),
			  rw_scalar(&e, dt, 0.5));
		rw_op_to(&e, "Mul", x, h, y);
	} else {
		struct ir_value *x3 = rw_op(&e, "Mul", rw_op(&e, "Mul", x, x), x);
		struct ir_value *in = rw_op(&e, "Add", x,
					    rw_op(&e, "Mul", x3, rw_scalar(&e, dt, 0.044715)));
		double k = sqrt(2.0 / M_PI);

		if (v == V_TANH) {
			struct ir_value *th = rw_op(&e, "Tanh",
						    rw_op(&e, "Mul", in, rw_scalar(&e, dt, k)), NULL);

			h = rw_op(&e, "Mul", rw_op(&e, "Add", th, rw_scalar(&e, dt, 1.0)),
				  rw_scalar(&e, dt, 0.5));
		} else {
			h = rw_op(&e, "Sigmoid", rw_op(&e, "Mul", in, rw_scalar(&e, dt, 2 * k)),
				  NULL);
		}
		rw_op_to(&e, "Mul", x, h, y);
	}
	return rw_end(&e, 0);
}

static const char *const matches[] = {
	"Gelu", "com.microsoft:Gelu", "com.microsoft:BiasGelu", "com.microsoft:FastGelu", NULL
};

const struct rw_pass rw_pass_gelu = {
	.name = "gelu",
	.summary = "Gelu (exact or tanh form, with bias) as Erf or its polynomial, Tanh or Sigmoid",
	.kind = RW_DECOMPOSE,
	.matches = matches,
	.variants = variants,
	.n_variants = 4,
	/* the tanh form takes only tanh or sigmoid, both exact for it */
	.approx = (const unsigned char[]){ 0, 1, 2, 2 },
	.check = check,
	.vcheck = vcheck,
	.apply = apply,
};
