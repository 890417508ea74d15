/* arg.c: pass "arg-max-min": ArgMax and ArgMin along an axis of static
 * length L as reductions, for targets without them:
 *   m   = ReduceMax(x) (ArgMin: ReduceMin) along the axis, keepdims
 *   hit = Cast(Equal(x, m)) (1 where x is the extreme, else 0), or, for
 *         targets without Equal, 1 - Clip((m - x) S S, 0, 1) with S a
 *         power of two that lifts the smallest positive difference of the
 *         dtype past 1 (x - m for ArgMin)
 *   the first index: L - ReduceMax(hit (L - k)); the last (select_last_index
 *   1): ReduceMax(hit (k + 1)) - 1, k = 0..L-1 a constant along the axis,
 *   Cast to int64.
 * The index arithmetic is in the data's float dtype (float for integer
 * data), exact while L is an integer of it (2^24 in float32, 2048 where
 * the model goes to float16).  NaN data: Equal never holds, the result is
 * L (first) or -1 (last).  The arithmetic hit needs finite extremes: an
 * extreme of +inf (ArgMin: -inf) makes m - x NaN (approximate variants). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/rw_int.h"

#define MAX_RANK IR_INFER_MAX_RANK

static int is_argmin(const struct ir_node *n)
{
	return !strcmp(ir_s(n->op_type), "ArgMin");
}

static int is_int(int dt)
{
	return dt == IR_DTYPE_INT32 || dt == IR_DTYPE_INT64;
}

/* The rank, the axis (non-negative) and its static length L */
static int geometry(struct rw_ctx *c, const struct ir_node *n, int *rank, int64_t *axis,
		    int64_t *len, char *why, size_t size)
{
	const struct ir_vtype *t;
	int dt = rw_node_dtype(c, n);

	if (!n->n_inputs || !n->inputs[0] || !n->n_outputs || !n->outputs[0]) {
		snprintf(why, size, "input 0 or output 0 is absent");
		return 0;
	}
	if (!rw_dtype_is_float(dt) && !is_int(dt)) {
		snprintf(why, size, "not for %s data", dt ? ir_dtype_name(dt) : "unknown");
		return 0;
	}
	if (dt == IR_DTYPE_BFLOAT16) {
		snprintf(why, size, "not for bfloat16 data (indices beyond 256 would round)");
		return 0;
	}
	if (!rw_node_axis(c, n, 0, MAX_RANK, rank, axis, why, size))
		return 0;
	t = rw_type(c, n->inputs[0]);
	if (t->dims[*axis].kind != IR_VDIM_VALUE || t->dims[*axis].value < 1) {
		snprintf(why, size, "the axis's length is not static");
		return 0;
	}
	*len = t->dims[*axis].value;
	return 1;
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	int r;
	int64_t axis, len;

	if (!geometry(c, n, &r, &axis, &len, why, size))
		return 0;
	if (len > (1 << 24)) {
		snprintf(why, size, "the axis is longer than 2^24 (float indices would round)");
		return 0;
	}
	if (c->opset < 7) {
		snprintf(why, size, "needs opset >= 7 (broadcasting)");
		return 0;
	}
	return 1;
}

/* The float dtype the hits and indices are computed in */
static int index_dtype(int dt)
{
	return rw_dtype_is_float(dt) ? dt : IR_DTYPE_FLOAT;
}

/* variants: 0 ArgMax by Equal, 1 ArgMin by Equal, 2 ArgMax arithmetic,
 * 3 ArgMin arithmetic */
static int vcheck(struct rw_ctx *c, const struct ir_node *n, int v)
{
	int dt = rw_node_dtype(c, n), plan = rw_plan_dtype(c, index_dtype(dt)), r;
	int64_t axis, len;
	char why[8];

	if ((v & 1) != is_argmin(n))
		return 0;
	if (v < 2 && rw_dtype_is_float(dt) && c->opset < 11)
		return 0;     /* Equal of floats from 11 */
	if (v >= 2 && !rw_dtype_is_float(dt))
		return 0;
	if (rw_is_probe(n))
		return 1;
	return geometry(c, n, &r, &axis, &len, why, sizeof(why)) &&
	       (plan != IR_DTYPE_FLOAT16 || len <= 2048);
}

static struct ir_value *cast(struct rw_emit *e, struct ir_value *x, int to, struct ir_value *out)
{
	struct ir_node *n = rw_node(e, "Cast", NULL, &x, 1, out);

	if (n && ir_node_set_int(n, "to", to) < 0)
		e->failed = 1;
	return n ? n->outputs[0] : NULL;
}

/* 2^k lifting the smallest positive value of dtype past 1 when applied
 * twice (within the dtype's range) */
static double lift(int dtype)
{
	if (dtype == IR_DTYPE_FLOAT16)
		return ldexp(1, 13);
	return dtype == IR_DTYPE_DOUBLE ? ldexp(1, 540) : ldexp(1, 75);
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct ir_value *x = n->inputs[0], *m, *hit, *s;
	int r, keep = rw_attr_int(n, "keepdims", 1) != 0, last;
	int64_t axis, len, dims[MAX_RANK];
	int fdt = index_dtype(rw_node_dtype(c, n));
	double *k;
	char why[64];

	geometry(c, n, &r, &axis, &len, why, sizeof(why));
	last = rw_attr_int(n, "select_last_index", 0) != 0;
	rw_begin(c, n, &e);
	if (!(k = malloc((size_t)len * sizeof(*k))))
		return rw_end(&e, ir_diag_error(c->d, IR_ENOMEM, "out of memory"));
	m = rw_reduce(&e, v & 1 ? "ReduceMin" : "ReduceMax", x, &axis, 1, 1, NULL);
	if (v < 2) {
		hit = cast(&e, rw_op(&e, "Equal", x, m), fdt, NULL);
	} else {
		double sc = lift(rw_plan_dtype(c, fdt));
		struct ir_value *d = v & 1 ? rw_op(&e, "Sub", x, m) : rw_op(&e, "Sub", m, x);

		d = rw_op(&e, "Mul", rw_op(&e, "Mul", d, rw_scalar(&e, fdt, sc)),
			  rw_scalar(&e, fdt, sc));
		hit = rw_op(&e, "Sub", rw_scalar(&e, fdt, 1), rw_clip(&e, d, 0, 1, NULL));
	}
	for (int64_t i = 0; i < len; i++)
		k[i] = last ? (double)(i + 1) : (double)(len - i);
	dims[0] = len;
	for (int i = 1; i < r - axis; i++)
		dims[i] = 1;
	s = rw_reduce(&e, "ReduceMax", rw_op(&e, "Mul", hit, rw_const(&e, fdt, r - (int)axis,
								     dims, k)),
		      &axis, 1, keep, NULL);
	s = last ? rw_op(&e, "Sub", s, rw_scalar(&e, fdt, 1)) :
		   rw_op(&e, "Sub", rw_scalar(&e, fdt, (double)len), s);
	cast(&e, s, IR_DTYPE_INT64, n->outputs[0]);
	free(k);
	return rw_end(&e, 0);
}

static const char *const matches[] = { "ArgMax", "ArgMin", NULL };
static const char *const max_eq_ops[] = { "ReduceMax", "Equal", "Cast", "Mul", "Sub", NULL };
static const char *const min_eq_ops[] = {
	"ReduceMin", "Equal", "Cast", "Mul", "ReduceMax", "Sub", NULL
};
static const char *const max_ar_ops[] = { "ReduceMax", "Sub", "Mul", "Clip", "Cast", NULL };
static const char *const min_ar_ops[] = {
	"ReduceMin", "Sub", "Mul", "Clip", "ReduceMax", "Cast", NULL
};
static const struct rw_variant variants[] = {
	{ "argmax-equal", max_eq_ops }, { "argmin-equal", min_eq_ops },
	{ "argmax-arith", max_ar_ops }, { "argmin-arith", min_ar_ops },
};
static const unsigned char approx[] = { 0, 0, 2, 2 };
RW_DECOMPOSITION_A(arg_max_min, "arg-max-min",
		   "ArgMax and ArgMin (keepdims, select_last_index) as ReduceMax/ReduceMin, a 0/1 hit by Equal (or by clipped arithmetic, exact for finite extremes), and ReduceMax of the hits times a constant index ramp",
		   matches, variants, approx, check, vcheck, apply);
