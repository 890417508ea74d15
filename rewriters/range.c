/* range.c: pass "range-const": Range whose start, limit and delta are
 * constants becomes an initializer under its output's name (n =
 * max(ceil((limit - start) / delta), 0) elements start + i * delta, computed
 * in double and stored in the output's dtype), up to 1 << 20 elements. */
#include <math.h>
#include <stdio.h>

#include "rewriters/rw_int.h"
#include "runtime/runtime.h"

#define RANGE_MAX (1 << 20)

static int bounds(struct rw_ctx *c, const struct ir_node *n, double *s, double *l,
		  double *dl, int64_t *count, char *why, size_t size)
{
	double q;

	if (n->n_inputs < 3 || !n->inputs[0] || !n->inputs[1] || !n->inputs[2] ||
	    !n->n_outputs || !n->outputs[0]) {
		snprintf(why, size, "an input or the output is absent");
		return 0;
	}
	if (!rw_const_double(c, n->inputs[0], s) || !rw_const_double(c, n->inputs[1], l) ||
	    !rw_const_double(c, n->inputs[2], dl)) {
		snprintf(why, size, "start, limit or delta is not a constant scalar");
		return 0;
	}
	if (*dl == 0 || !isfinite(*s) || !isfinite(*l) || !isfinite(*dl)) {
		snprintf(why, size, "delta is 0 or a bound is not finite");
		return 0;
	}
	q = ceil((*l - *s) / *dl);
	if (q > RANGE_MAX) {
		snprintf(why, size, "more than %d elements", RANGE_MAX);
		return 0;
	}
	*count = q > 0 ? (int64_t)q : 0;
	return 1;
}

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	double s, l, dl;
	int64_t k;

	if (!bounds(c, n, &s, &l, &dl, &k, why, size))
		return 0;
	if (!rw_node_dtype(c, n)) {
		snprintf(why, size, "the dtype is unknown");
		return 0;
	}
	return 1;
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_emit e;
	struct rt_value *t = NULL;
	struct ir_diag d;
	double s = 0, l = 0, dl = 1;
	int64_t k = 0;
	char why[64];
	int rc;

	(void)v;
	bounds(c, n, &s, &l, &dl, &k, why, sizeof(why));
	ir_diag_init(&d);
	rw_begin(c, n, &e);
	if (rt_tensor_new(NULL, e.dtype, 1, &k, &t, &d) < 0)
		return rw_end(&e, ir_diag_error(c->d, IR_ENOMEM, "out of memory"));
	for (int64_t i = 0; i < k; i++)
		rt_value_set_f64(t, i, s + (double)i * dl);
	rc = rw_const_into(&e, t, n->outputs[0]);
	rt_value_unref(t);
	return rw_end(&e, rc < 0 ? ir_diag_error(c->d, rc, "out of memory") : 0);
}

static const char *const matches[] = { "Range", NULL };
static const char *const none[] = { NULL };
static const struct rw_variant variants[] = { { "initializer", none } };
RW_DECOMPOSITION(range_const, "range-const",
		 "Range with constant start, limit and delta as an initializer",
		 matches, variants, check, NULL, apply);
