/* clip.c: pass "clip": Clip as Max and Min, y = min(max(x, lo), hi) (hi
 * when lo > hi, as the spec says), or with lo a constant 0 as Relu and
 * Min (ReLU6 on targets without Clip).  The bounds are the inputs (from
 * opset 11; any scalar tensor) or the attributes (before).  An absent bound
 * of float data is the spec's default, the attribute's +-3.402823e38 before
 * opset 11 and the dtype's lowest/max from 11, which infinities are clamped
 * to, so float data always takes both ops; on integers an absent bound is
 * no bound and its op is left out (variants relu, max, min).  Exact; NaN
 * stays NaN.  Integer data from opset 12 (Relu on integers from 14). */
#include <float.h>
#include <stdio.h>
#include <string.h>

#include "rewriters/rw_int.h"

enum { V_RELU_MIN, V_RELU, V_MAX_MIN, V_MAX, V_MIN };

struct bounds {
	int lo, hi;                  /* present */
	int lo_zero;                 /* lo is a constant 0 */
	double vlo, vhi;             /* the attributes' values (before 11) */
};

static void get_bounds(struct rw_ctx *c, const struct ir_node *n, struct bounds *b)
{
	double v;

	memset(b, 0, sizeof(*b));
	if (rw_node_opset(c) >= 11) {
		b->lo = n->n_inputs > 1 && n->inputs[1];
		b->hi = n->n_inputs > 2 && n->inputs[2];
		b->lo_zero = b->lo && rw_const_double(c, n->inputs[1], &v) && v == 0;
	} else {
		b->lo = ir_node_attr(n, "min") != NULL;
		b->hi = ir_node_attr(n, "max") != NULL;
		b->vlo = rw_attr_float(n, "min", 0);
		b->vhi = rw_attr_float(n, "max", 0);
		b->lo_zero = b->lo && b->vlo == 0;
	}
}

/* The default of an absent bound of float data (its max; lowest = -max) */
static double float_limit(const struct rw_ctx *c, int dt)
{
	if (rw_node_opset(c) < 11)
		return FLT_MAX;
	return dt == IR_DTYPE_DOUBLE ? DBL_MAX : dt == IR_DTYPE_FLOAT16 ? 65504.0 :
	       dt == IR_DTYPE_BFLOAT16 ? 0x1.fep127 : FLT_MAX;
}

static int vcheck(struct rw_ctx *c, const struct ir_node *n, int v)
{
	struct bounds b;
	int fl = rw_dtype_is_float(rw_node_dtype(c, n));

	get_bounds(c, n, &b);
	switch (v) {
	case V_RELU_MIN:
		return b.lo_zero && (b.hi || fl) && (fl || c->opset >= 14);
	case V_RELU:
		return b.lo_zero && !b.hi && !fl && c->opset >= 14;
	case V_MAX_MIN:
		return fl || (b.lo && b.hi);
	case V_MAX:
		return !fl && b.lo && !b.hi;
	default:
		return !fl && !b.lo && b.hi;
	}
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int dt = rw_node_dtype(c, n);

	if (!n->n_inputs || !n->inputs[0] || !n->n_outputs || !n->outputs[0]) {
		snprintf(why, size, "input 0 or output 0 is absent");
		return 0;
	}
	if (!rw_dtype_is_float(dt) && !(c->opset >= 12 && dt && dt != IR_DTYPE_BOOL &&
					dt != IR_DTYPE_STRING)) {
		snprintf(why, size, "not for %s data at opset %lld", dt ? ir_dtype_name(dt) : "unknown",
			 (long long)c->opset);
		return 0;
	}
	if (c->opset < 8) {
		snprintf(why, size, "needs opset >= 8 (broadcasting Max and Min)");
		return 0;
	}
	for (int v = V_RELU_MIN; v <= V_MIN; v++)
		if (vcheck(c, n, v))
			return 1;
	snprintf(why, size, "no bound on integer data: an identity");
	return 0;
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct bounds b;
	struct ir_value *x = n->inputs[0], *y = n->outputs[0], *lo = NULL, *hi = NULL;
	int relu = v == V_RELU_MIN || v == V_RELU;
	double lim;

	get_bounds(c, n, &b);
	rw_begin(c, n, &e);
	lim = float_limit(c, e.dtype);
	if (b.lo && !relu)
		lo = rw_node_opset(c) >= 11 ? n->inputs[1] : rw_scalar(&e, e.dtype, b.vlo);
	else if (!relu && v == V_MAX_MIN)
		lo = rw_scalar(&e, e.dtype, -lim);
	if (b.hi)
		hi = rw_node_opset(c) >= 11 ? n->inputs[2] : rw_scalar(&e, e.dtype, b.vhi);
	else if (v == V_RELU_MIN || v == V_MAX_MIN)
		hi = rw_scalar(&e, e.dtype, lim);
	if (relu)
		x = rw_op_to(&e, "Relu", x, NULL, hi ? NULL : y);
	else if (lo)
		x = rw_op_to(&e, "Max", x, lo, hi ? NULL : y);
	if (hi)
		rw_op_to(&e, "Min", x, hi, y);
	return rw_end(&e, 0);
}

static const char *const matches[] = { "Clip", NULL };
static const char *const relu_min_ops[] = { "Relu", "Min", NULL };
static const char *const relu_ops[] = { "Relu", NULL };
static const char *const max_min_ops[] = { "Max", "Min", NULL };
static const char *const max_ops[] = { "Max", NULL };
static const char *const min_ops[] = { "Min", NULL };
static const struct rw_variant variants[] = {
	{ "relu-min", relu_min_ops }, { "relu", relu_ops }, { "max-min", max_min_ops },
	{ "max", max_ops }, { "min", min_ops },
};
RW_DECOMPOSITION(clip, "clip",
		 "Clip as min(max(x, lo), hi), with a lower bound of 0 as Relu and Min (ReLU6); an absent float bound is the dtype's limit",
		 matches, variants, check, vcheck, apply);
