/* gqa_mask.c: fuse-gqa's proofs that the mask a decoder's attention adds
 * to its scores is the causal mask, with or without attention_mask's
 * padding, by values or by structure (gqa_mask.h lists the forms). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rewriters/gqa_mask.h"
#include "runtime/runtime.h"

#define MASKED_MAX GQA_MASKED_MAX

/* Unsqueeze n's axes are exactly [1, 2] */
static int unsqueeze_12(const struct rw_ctx *c, const struct ir_node *n)
{
	int64_t ax[3];
	const int64_t *a;
	size_t k = 0;

	if (n->n_inputs > 1 && n->inputs[1]) {
		if (!rw_const_ints(c, n->inputs[1], ax, 3, &k))
			return 0;
	} else if ((a = rw_attr_ints(n, "axes", &k)) && k == 2) {
		ax[0] = a[0], ax[1] = a[1];
	}
	return k == 2 && ax[0] == 1 && ax[1] == 2;
}

/* am is attention_mask: a 2-D integer graph input [B, T], B the queries'
 * batch, T the keys' length: known, or both symbolic (the keys' past + S
 * against total_sequence_length; the Add's broadcast makes them equal
 * where the model runs) */
static int amask_input(const struct rw_ctx *c, const struct ir_value *am,
		       const struct ir_vtype *qt, const struct ir_vtype *kt)
{
	const struct ir_vtype *t;

	if (!am->is_input || am->init || am->producer || !(t = rw_type(c, am)) || t->rank != 2 ||
	    (t->dtype != IR_DTYPE_INT64 && t->dtype != IR_DTYPE_INT32) ||
	    !rw_dim_same(&t->dims[0], &qt->dims[0]))
		return 0;
	return rw_dim_same(&t->dims[1], &kt->dims[2]) ||
	       (t->dims[1].kind != IR_VDIM_VALUE && kt->dims[2].kind != IR_VDIM_VALUE);
}

/* v = Unsqueeze(Cast(attention_mask, bool), [1, 2]), attention_mask a 2-D
 * integer graph input [B, T] (amask_input): attention_mask, else NULL */
static struct ir_value *padding(const struct rw_ctx *c, const struct ir_value *v,
				const struct ir_vtype *qt, const struct ir_vtype *kt)
{
	struct ir_node *un = rw_producer(v, "Unsqueeze"), *cast;
	struct ir_value *am;

	if (!un || !unsqueeze_12(c, un) || !(cast = rw_producer(un->inputs[0], "Cast")) ||
	    rw_attr_int(cast, "to", 0) != IR_DTYPE_BOOL)
		return NULL;
	am = cast->inputs[0];
	return amask_input(c, am, qt, kt) ? am : NULL;
}

/* What a constant causal mask holds where key j may be seen by query i
 * (j <= t - s + i) and elsewhere: a bool condition true where seen
 * (CV_KEEP) or where masked (CV_MASKED), or an additive float mask, 0
 * where seen and at most MASKED_MAX elsewhere (CV_ADDITIVE) */
enum { CV_KEEP, CV_MASKED, CV_ADDITIVE };

/* v a constant [.., s, t] (rank 2 to 4, every [s, t] slice the same
 * mask) holding the causal mask as mode says */
static int causal_values(const struct ir_value *v, int64_t s, int64_t t, int mode)
{
	struct rt_value *x = rw_init_value(v);
	int ok;

	if (!x)
		return 0;
	ok = x->rank >= 2 && x->rank <= 4 && x->dims[x->rank - 2] == s &&
	     x->dims[x->rank - 1] == t && s > 0 && t > 0 && x->numel % (s * t) == 0 &&
	     (mode == CV_ADDITIVE ? (x->dtype == IR_DTYPE_FLOAT || x->dtype == IR_DTYPE_FLOAT16 ||
				     x->dtype == IR_DTYPE_BFLOAT16 || x->dtype == IR_DTYPE_DOUBLE)
				  : x->dtype == IR_DTYPE_BOOL);
	for (int64_t k = 0; ok && k < x->numel; k++) {
		int64_t i = k / t % s, j = k % t;
		int seen = j <= t - s + i;
		double y = rt_value_get_f64(x, k);

		ok = mode == CV_KEEP ? (y != 0) == seen : mode == CV_MASKED ? (y != 0) == !seen :
		     seen ? y == 0 : y <= MASKED_MAX;
	}
	rt_value_unref(x);
	return ok;
}

/* v = Gather(Shape(am), 1): attention_mask's length T */
static int mask_length(const struct rw_ctx *c, const struct ir_value *v, const struct ir_value *am)
{
	struct ir_node *g = rw_producer(v, "Gather"), *sh;
	int64_t i[2];
	size_t k;

	return g && g->n_inputs == 2 && rw_attr_int(g, "axis", 0) == 0 &&
	       rw_const_ints(c, g->inputs[1], i, 2, &k) && k == 1 && i[0] == 1 &&
	       (sh = rw_producer(g->inputs[0], "Shape")) && sh->inputs[0] == am &&
	       rw_attr_int(sh, "start", 0) == 0 && !ir_node_attr(sh, "end");
}

/* v = Range(start, limit, 1) (limit attention_mask's length T when am is
 * given: mask_length): its start and limit in *start and *limit */
static int range_to_t(const struct rw_ctx *c, const struct ir_value *v, const struct ir_value *am,
		      struct ir_value **start, struct ir_value **limit)
{
	struct ir_node *r = rw_producer(v, "Range");
	int64_t d[2];
	size_t k;

	if (!r || r->n_inputs != 3 || (am && !mask_length(c, r->inputs[1], am)) ||
	    !rw_const_ints(c, r->inputs[2], d, 2, &k) || k != 1 || d[0] != 1)
		return 0;
	*start = r->inputs[0];
	*limit = r->inputs[1];
	return 1;
}

/* a and b hold the same scalar: one value, or both inferred to hold the
 * same (symbolic) element */
static int same_scalar(const struct rw_ctx *c, const struct ir_value *a, const struct ir_value *b)
{
	const struct ir_vtype *x = rw_type(c, a), *y = rw_type(c, b);

	return a == b || (x && y && x->has_const && y->has_const && x->n_const == 1 &&
			  y->n_const == 1 && rw_dim_same(&x->cval[0], &y->cval[0]));
}

/* v = LessOrEqual(Range(0, T, 1), Unsqueeze(Range(a, T, 1), [1])) (or
 * GreaterOrEqual with the operands swapped), the second Range known by
 * inference to have S elements (so a = T - S): key j <= T - S + query i,
 * whatever the dims are.  T is attention_mask's length (am given: its
 * keys' length by the Add's broadcast), else one limit of both Ranges,
 * the first known by inference to have the keys' T elements. */
static int causal_ranges(const struct rw_ctx *c, const struct ir_value *v,
			 const struct ir_value *am, const struct ir_vtype *qt,
			 const struct ir_vtype *kt)
{
	struct ir_node *cmp = rw_producer(v, "LessOrEqual"), *un;
	struct ir_value *keys, *rows, *a, *lk, *lr;
	const struct ir_vtype *rt, *kr;
	int64_t z[2], ax[2];
	size_t k = 0;
	const int64_t *axa;

	if (cmp && cmp->n_inputs == 2) {
		keys = cmp->inputs[0], rows = cmp->inputs[1];
	} else if ((cmp = rw_producer(v, "GreaterOrEqual")) && cmp->n_inputs == 2) {
		keys = cmp->inputs[1], rows = cmp->inputs[0];
	} else {
		return 0;
	}
	if (!range_to_t(c, keys, am, &a, &lk) || !rw_const_ints(c, a, z, 2, &k) || k != 1 ||
	    z[0] || !(un = rw_producer(rows, "Unsqueeze")))
		return 0;
	if (!am && (!(kr = rw_type(c, keys)) || kr->rank != 1 ||
		    !rw_dim_same(&kr->dims[0], &kt->dims[2])))
		return 0;
	k = 0;
	if (un->n_inputs > 1 && un->inputs[1]) {
		if (!rw_const_ints(c, un->inputs[1], ax, 2, &k))
			return 0;
	} else if ((axa = rw_attr_ints(un, "axes", &k)) && k == 1) {
		ax[0] = axa[0];
	}
	return k == 1 && ax[0] == 1 && range_to_t(c, un->inputs[0], am, &a, &lr) &&
	       (am || same_scalar(c, lk, lr)) && (rt = rw_type(c, un->inputs[0])) &&
	       rt->rank == 1 && rw_dim_same(&rt->dims[0], &qt->dims[2]);
}

static int nonzero(double y)
{
	return y != 0 && !isnan(y);
}

/* v holds only values ok accepts: Expand(c, shape) or ConstantOfShape(shape)
 * of a constant scalar c (of value c), or a constant */
static int fill_all(const struct rw_ctx *c, const struct ir_value *v, int (*ok_value)(double))
{
	struct ir_node *n = rw_producer(v, "Expand");
	const struct ir_attr *at;
	struct rt_value *x;
	double y;
	int ok;

	if (n && n->n_inputs == 2)
		return rw_const_scalar(c, n->inputs[0], &y) && ok_value(y);
	if ((n = rw_producer(v, "ConstantOfShape"))) {
		struct ir_diag d;

		x = NULL;
		ir_diag_init(&d);
		/* no value: a 0 */
		if (!(at = ir_node_attr(n, "value")) || !at->t || ir_tensor_numel(at->t) != 1 ||
		    rt_value_from_ir(NULL, at->t, &x, &d) < 0 || !x)
			return 0;
		y = rt_value_get_f64(x, 0);
		rt_value_unref(x);
		return ok_value(y);
	}
	if (!(x = rw_init_value(v)))
		return 0;
	ok = 1;
	for (int64_t k = 0; ok && k < x->numel; k++)
		ok = ok_value(rt_value_get_f64(x, k));
	rt_value_unref(x);
	return ok;
}

/* v = Trilu(X, k) with upper as given, X without a zero (fill_all),
 * k a constant (absent: 0) equal to want, its last two dims the queries'
 * S and the keys' T, known equal (no past): the kept part is j <= i + k
 * (lower) or j >= i + k (upper) */
static int trilu_of_ones(const struct rw_ctx *c, const struct ir_value *v, int64_t upper,
			 int64_t want, const struct ir_vtype *qt, const struct ir_vtype *kt)
{
	struct ir_node *n = rw_producer(v, "Trilu");
	const struct ir_vtype *t = rw_type(c, v);
	int64_t k[2] = { 0, 0 };
	size_t nk = 1;

	if (!n || n->n_inputs < 1 || rw_attr_int(n, "upper", 1) != upper || !t || t->rank < 2 ||
	    !rw_dim_same(&t->dims[t->rank - 2], &qt->dims[2]) ||
	    !rw_dim_same(&t->dims[t->rank - 1], &kt->dims[2]) ||
	    !rw_dim_same(&qt->dims[2], &kt->dims[2]))
		return 0;
	if (n->n_inputs > 1 && n->inputs[1] && (!rw_const_ints(c, n->inputs[1], k, 2, &nk) || nk != 1))
		return 0;
	return k[0] == want && fill_all(c, n->inputs[0], nonzero);
}

/* v = Equal(x, 0) (either order): x, else NULL */
static struct ir_value *equal_zero(const struct rw_ctx *c, const struct ir_value *v)
{
	struct ir_node *n = rw_producer(v, "Equal");
	double z;

	if (!n || n->n_inputs != 2)
		return NULL;
	for (int j = 0; j < 2; j++)
		if (rw_const_scalar(c, n->inputs[j], &z) && z == 0)
			return n->inputs[1 - j];
	return NULL;
}

/* The mask m (uncast) is the causal mask alone (no attention_mask):
 * static dims: a constant (CV_ADDITIVE), or Where(C, 0, lowest) of a
 * constant C (CV_KEEP) or Where(C, lowest, 0) (CV_MASKED); any dims:
 * Where(C, 0, lowest) of C the Ranges of causal_ranges or Trilu(ones,
 * lower) without a past, or Where(C, lowest, 0) of C = Equal(Trilu(ones,
 * lower), 0) (torch's export of scaled_dot_product_attention with
 * is_causal) or Trilu(ones, upper, 1), without a past.  1, else 0 (and
 * *lone set when m is a constant or such a Where: why names the causal
 * part) */
static int causal_alone(const struct rw_ctx *c, const struct ir_value *m,
			const struct ir_vtype *qt, const struct ir_vtype *kt, int64_t s, int64_t t,
			int *lone)
{
	struct ir_node *w = rw_producer(m, "Where");
	struct ir_value *cond, *x;
	double a, b;

	*lone = 0;
	if (m->init) {
		*lone = 1;
		return s > 0 && t > 0 && causal_values(m, s, t, CV_ADDITIVE);
	}
	if (!w || w->n_inputs != 3 || !rw_const_scalar(c, w->inputs[1], &a) ||
	    !rw_const_scalar(c, w->inputs[2], &b))
		return 0;
	cond = w->inputs[0];
	if (a == 0 && b <= MASKED_MAX) {   /* seen where cond holds */
		*lone = !rw_producer(cond, "And");
		return (s > 0 && t > 0 && causal_values(cond, s, t, CV_KEEP)) ||
		       causal_ranges(c, cond, NULL, qt, kt) || trilu_of_ones(c, cond, 0, 0, qt, kt);
	}
	if (a <= MASKED_MAX && b == 0) {   /* masked where cond holds */
		*lone = 1;
		return (s > 0 && t > 0 && causal_values(cond, s, t, CV_MASKED)) ||
		       ((x = equal_zero(c, cond)) && trilu_of_ones(c, x, 0, 0, qt, kt)) ||
		       trilu_of_ones(c, cond, 1, 1, qt, kt);
	}
	return 0;
}

/* The mask m itself, or the float mask it is Cast from (float16 data:
 * the precision pass keeps a mask whose masked value float16 cannot hold,
 * float32's lowest, in float32 and casts it; a Cast keeps 0 and takes a
 * value at most MASKED_MAX to one at most MASKED_MAX, -inf included) */
static struct ir_value *uncast_mask(const struct rw_ctx *c, struct ir_value *m)
{
	struct ir_node *cast = rw_producer(m, "Cast");
	const struct ir_vtype *t;

	if (!cast || !(t = rw_type(c, cast->inputs[0])) ||
	    (t->dtype != IR_DTYPE_FLOAT && t->dtype != IR_DTYPE_FLOAT16 &&
	     t->dtype != IR_DTYPE_DOUBLE))
		return m;
	return cast->inputs[0];
}

int rw_gqa_mask_proven(const struct rw_ctx *c, struct ir_value *mask,
		       const struct gqa_mask_in *in, struct ir_value **amask, char *why,
		       size_t size)
{
	const struct ir_vtype *qt = in->qt, *kt = in->kt;
	struct ir_node *w, *and;
	struct ir_value *m;
	double x, y;
	int64_t s = in->s, t = in->t;
	int lone;

	*amask = NULL;
	if (!mask) {
		snprintf(why, size, "no attention mask is added to the scores");
		return 0;
	}
	m = uncast_mask(c, mask);
	if (causal_alone(c, m, qt, kt, s, t, &lone))
		return 1;
	if (lone) {
		snprintf(why, size, "the mask is not the causal mask [S, T] (key j <= T - S + "
			 "query i: by values where S and T are static; Range(0, T) <= "
			 "Range(T - S, T), or a Trilu of ones without a past)");
		return 0;
	}
	if (!(w = rw_producer(m, "Where")) || w->n_inputs != 3 ||
	    !rw_const_scalar(c, w->inputs[1], &x) || x != 0 ||
	    !rw_const_scalar(c, w->inputs[2], &y) || !(y <= MASKED_MAX) ||
	    !(and = rw_producer(w->inputs[0], "And")) || and->n_inputs != 2) {
		snprintf(why, size, "the mask is not Where(And(causal, padding), 0, lowest) "
			 "nor the causal mask alone");
		return 0;
	}
	for (int j = 0; j < 2; j++)
		if ((*amask = padding(c, and->inputs[j], qt, kt))) {
			if ((s > 0 && t > 0 && causal_values(and->inputs[1 - j], s, t, CV_KEEP)) ||
			    causal_ranges(c, and->inputs[1 - j], *amask, qt, kt))
				return 1;
			*amask = NULL;
			snprintf(why, size, "the mask's other part is not the causal mask [S, T] "
				 "(key j <= T - S + query i: a constant, or Range(0, T) <= "
				 "Range(T - S, T) of attention_mask's length T)");
			return 0;
		}
	snprintf(why, size, "no part of the mask is attention_mask's padding "
		 "(Unsqueeze(Cast(attention_mask, bool), [1, 2]) of a 2-D graph input [B, T])");
	return 0;
}
