/* gemm.c: pass "gemm": Gemm as MatMul and Add,
 *   Y = alpha op(A) op(B) + beta C
 * op(X) a Transpose when transX is set, alpha and beta a Mul when not 1.
 * A constant B (or C) takes its transpose and alpha (beta) into a new
 * initializer instead.  Variant "matmul" emits no Transpose and applies
 * when A is not transposed and B is constant or not transposed; variant
 * "transpose" covers the rest.  Float data, opset >= 7 (C broadcasts). */
#include <stdio.h>

#include "rewriters/rw_int.h"
#include "runtime/runtime.h"

enum { V_MATMUL, V_TRANSPOSE };

static int has_c(const struct ir_node *n)
{
	return n->n_inputs > 2 && n->inputs[2];
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	if (!rw_check_float_node(c, n, 7, why, size))
		return 0;
	if (n->n_inputs < 2 || !n->inputs[1] || rw_rank(c, n->inputs[0]) != 2 ||
	    rw_rank(c, n->inputs[1]) != 2) {
		snprintf(why, size, "A and B are not known to be 2-D");
		return 0;
	}
	return 1;
}

static int vcheck(struct rw_ctx *c, const struct ir_node *n, int v)
{
	int ta = rw_attr_int(n, "transA", 0) != 0, tb = rw_attr_int(n, "transB", 0) != 0;

	(void)c;
	if (v == V_MATMUL)
		return !ta && (!tb || (n->inputs[1]->init && !n->inputs[1]->is_input));
	return 1;
}

/* x (constant) transposed when t, times k, as a new initializer; NULL when
 * x is no initializer */
static struct ir_value *fold(struct rw_emit *e, struct ir_value *x, int t, double k)
{
	struct rt_value *v = rw_init_value(x), *tv = NULL;
	struct ir_value *out = NULL;
	struct ir_diag d;
	static const int perm[2] = { 1, 0 };

	if (!v)
		return NULL;
	ir_diag_init(&d);
	if (t && v->rank == 2) {
		if (rt_tensor_transpose(NULL, v, perm, &tv, &d) < 0) {
			rt_value_unref(v);
			e->failed = 1;
			return NULL;
		}
		rt_value_unref(v);
		v = tv;
	}
	for (int64_t i = 0; k != 1 && i < v->numel; i++)
		rt_value_set_f64(v, i, rt_value_get_f64(v, i) * k);
	out = rw_const_value(e, v);
	rt_value_unref(v);
	return out;
}

static struct ir_value *transpose(struct rw_emit *e, struct ir_value *x)
{
	static const int64_t perm[2] = { 1, 0 };
	struct ir_node *t = rw_node(e, "Transpose", NULL, &x, 1, NULL);

	if (t && ir_node_set_ints(t, "perm", perm, 2) < 0)
		e->failed = 1;
	return t ? t->outputs[0] : NULL;
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	int ta = rw_attr_int(n, "transA", 0) != 0, tb = rw_attr_int(n, "transB", 0) != 0;
	double alpha = rw_attr_float(n, "alpha", 1.0f), beta = rw_attr_float(n, "beta", 1.0f);
	struct ir_value *a = n->inputs[0], *b, *y, *cc = NULL;
	int bias = has_c(n) && beta != 0;
	struct rw_emit e;

	(void)v;
	rw_begin(c, n, &e);
	if (ta)
		a = transpose(&e, a);
	if ((b = fold(&e, n->inputs[1], tb, alpha)) != NULL) {
		alpha = 1;
	} else {
		b = tb ? transpose(&e, n->inputs[1]) : n->inputs[1];
	}
	if (bias && !(cc = fold(&e, n->inputs[2], 0, beta))) {
		cc = n->inputs[2];
		if (beta != 1)
			cc = rw_op(&e, "Mul", cc, rw_scalar(&e, e.dtype, beta));
	}
	y = rw_op_to(&e, "MatMul", a, b, alpha == 1 && !bias ? n->outputs[0] : NULL);
	if (alpha != 1)
		y = rw_op_to(&e, "Mul", y, rw_scalar(&e, e.dtype, alpha), bias ? NULL : n->outputs[0]);
	if (bias)
		rw_op_to(&e, "Add", y, cc, n->outputs[0]);
	return rw_end(&e, 0);
}

static const char *const matches[] = { "Gemm", NULL };
static const char *const mm_ops[] = { "MatMul", "Mul", "Add", NULL };
static const char *const tr_ops[] = { "Transpose", "MatMul", "Mul", "Add", NULL };
static const struct rw_variant variants[] = { { "matmul", mm_ops }, { "transpose", tr_ops } };
RW_DECOMPOSITION(gemm, "gemm",
		 "Gemm as MatMul (+ Mul by alpha) + Add of beta C, transposes as Transpose or folded into constant B",
		 matches, variants, check, vcheck, apply);
