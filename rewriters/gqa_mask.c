/* gqa_mask.c: fuse-gqa's proofs that the mask a decoder's attention adds
 * to its scores is the causal mask, with or without attention_mask's
 * padding, by values or by structure (gqa_mask.h lists the forms): the
 * mask of transformers before 4.38 and of causal-only exports, and
 * transformers' cache_position mask (its own part below). */
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

/* ---- transformers' cache_position mask --------------------------------
 * transformers >= 4.38 (Llama's _update_causal_mask, with
 * _prepare_4d_causal_attention_mask_with_cache_position) builds
 *   causal = full((S, T), lowest); causal = triu(causal, 1) (when S > 1)
 *   causal *= arange(T) > cache_position.reshape(-1, 1)
 *   causal = causal[None, None, :, :].expand(B, 1, -1, -1)
 *   pad = causal[..., :L] + attention_mask[:, None, None, :] == 0
 *   causal[..., :L] = causal[..., :L].masked_fill(pad, lowest)
 * with cache_position = arange(past, past + S) and T = L attention_mask's
 * length; each layer adds causal[..., :keys].  torch.onnx writes the
 * slice assignment as ScatterND(causal, grid, values), the grid the
 * Concat of the four dims' aranges, each Reshaped onto its axis and
 * Expanded to the broadcast shape.  Proven, m any value at most -1e4:
 *   mask: float Casts, and prefix Slices (start 0, step 1) keeping every
 *   dim but the last and there at least the keys' T (a prefix keeps each
 *   column's key; a shorter mask would be broadcast over the keys), of
 *   ScatterND(x, grid, y) whose grid writes every element of x, each from
 *   its own place in y (the mask is y); of Reshape or Expand keeping y's
 *   shape and batch, float Casts and prefix Slices;
 *   of y = Where(Equal(A + P, 0), m, B) (the Add's operands and the
 *   Equal's either way), A and B causal, P attention_mask [B, T] Cast to
 *   float or bool and Unsqueezed to [B, 1, 1, T] (the same columns as A
 *   and B): where B is 0 (key seen) A is too and the Where gives m
 *   exactly where attention_mask is 0; where B is masked both branches
 *   are;
 *   causal: a constant holding the causal mask (static dims, folded), or
 *   prefix Slices, Unsqueezes before the last two dims and Expands
 *   keeping them of Mul(F, Cast(Greater(Range(0, n, 1), Reshape(Range(a,
 *   .., 1), [S, 1])))) (Less swapped, the Mul either way; the Ranges or
 *   their Reshape perhaps folded constants), the second Range of S
 *   elements from a = the past's length (0 without a past), so the Cast
 *   is 1 exactly where key j > past + i, and F = Trilu(X, k) (upper, k at
 *   most 1) or X, X of finite values at most -1e4: where j > past + i,
 *   j >= i + 1 >= i + k and F is X's; elsewhere F * 0 is 0.  A Trilu with
 *   k above 1 (a query sees the key after it), a lower Trilu, Greater
 *   made GreaterOrEqual (no query after a past sees itself) or a
 *   comparison the wrong way round are not the causal mask: refused. */

#define CM_DEPTH 32   /* nodes walked down one chain at most */

struct cm {
	const struct rw_ctx *c;
	const struct gqa_mask_in *in;
	struct ir_value *am;     /* attention_mask, once found */
};

/* The last two dims of a and b (ranks >= 2) are known equal */
static int last2_same(const struct ir_vtype *a, const struct ir_vtype *b)
{
	return a && b && a->rank >= 2 && b->rank >= 2 &&
	       rw_dim_same(&a->dims[a->rank - 2], &b->dims[b->rank - 2]) &&
	       rw_dim_same(&a->dims[a->rank - 1], &b->dims[b->rank - 1]);
}

/* a and b are known to have the same shape */
static int shape_same(const struct ir_vtype *a, const struct ir_vtype *b)
{
	if (!a || !b || a->rank < 0 || a->rank != b->rank)
		return 0;
	for (int i = 0; i < a->rank; i++)
		if (!rw_dim_same(&a->dims[i], &b->dims[i]))
			return 0;
	return 1;
}

/* The constant axes of Unsqueeze n (input or attribute), at most cap, each
 * in [0, rank) of its output's rank: their count, else -1 */
static int unsqueeze_axes(const struct rw_ctx *c, const struct ir_node *n, int rank,
			  int64_t *ax, size_t cap)
{
	const int64_t *a;
	size_t k = 0;

	if (n->n_inputs > 1 && n->inputs[1]) {
		if (!rw_const_ints(c, n->inputs[1], ax, cap, &k))
			return -1;
	} else if ((a = rw_attr_ints(n, "axes", &k)) && k <= cap) {
		memcpy(ax, a, k * sizeof(*a));
	} else {
		return -1;
	}
	for (size_t i = 0; i < k; i++) {
		ax[i] += ax[i] < 0 ? rank : 0;
		if (ax[i] < 0 || ax[i] >= rank)
			return -1;
	}
	return (int)k;
}

/* v = Slice(x, starts 0, ends, axes, steps 1) (opset 10's inputs, axes
 * and steps constant) keeping every dim of x, but the last where cols is
 * set (a prefix of the keys): x, else NULL */
static struct ir_value *prefix_slice(const struct rw_ctx *c, const struct ir_value *v, int cols)
{
	struct ir_node *n = rw_producer(v, "Slice");
	const struct ir_vtype *xt, *vt;
	int64_t st[8], ax[8], sp[8];
	size_t ns, na = 0, np = 0;

	if (!n || n->n_inputs < 3 || !(xt = rw_type(c, n->inputs[0])) || !(vt = rw_type(c, v)) ||
	    xt->rank < 1 || vt->rank != xt->rank || !rw_const_ints(c, n->inputs[1], st, 8, &ns) ||
	    (n->n_inputs > 3 && n->inputs[3] &&
	     (!rw_const_ints(c, n->inputs[3], ax, 8, &na) || na != ns)) ||
	    (n->n_inputs > 4 && n->inputs[4] &&
	     (!rw_const_ints(c, n->inputs[4], sp, 8, &np) || np != ns)))
		return NULL;
	for (size_t i = 0; i < ns; i++) {
		int64_t a = na ? ax[i] : (int64_t)i;

		a += a < 0 ? xt->rank : 0;
		if (a < 0 || a >= xt->rank || st[i] != 0 || (np && sp[i] != 1))
			return NULL;
	}
	for (int i = 0; i < xt->rank; i++)
		if (!(cols && i == xt->rank - 1) && !rw_dim_same(&xt->dims[i], &vt->dims[i]))
			return NULL;
	return n->inputs[0];
}

static int is_float(int dtype)
{
	return dtype == IR_DTYPE_FLOAT || dtype == IR_DTYPE_FLOAT16 ||
	       dtype == IR_DTYPE_BFLOAT16 || dtype == IR_DTYPE_DOUBLE;
}

/* v = Cast(x) from one float type to another (0 stays 0, a value at most
 * MASKED_MAX stays at most MASKED_MAX, -inf perhaps: as the fp16 pass
 * casts a mask it keeps in float32): x, else NULL */
static struct ir_value *float_cast(const struct rw_ctx *c, const struct ir_value *v)
{
	struct ir_node *n = rw_producer(v, "Cast");
	const struct ir_vtype *t;

	return n && is_float((int)rw_attr_int(n, "to", 0)) && (t = rw_type(c, n->inputs[0])) &&
	       is_float(t->dtype) ? n->inputs[0] : NULL;
}

static int low_value(double y)
{
	return isfinite(y) && y <= MASKED_MAX;
}

/* v = Trilu(X, k) (upper, k a constant at most 1, absent 0) or X itself,
 * X of finite values at most MASKED_MAX (fill_all) */
static int low_triu(const struct rw_ctx *c, const struct ir_value *v)
{
	struct ir_node *n = rw_producer(v, "Trilu");
	int64_t k[2] = { 0, 0 };
	size_t nk = 1;

	if (n) {
		if (n->n_inputs < 1 || rw_attr_int(n, "upper", 1) != 1 ||
		    (n->n_inputs > 1 && n->inputs[1] &&
		     (!rw_const_ints(c, n->inputs[1], k, 2, &nk) || nk != 1)) || k[0] > 1)
			return 0;
		v = n->inputs[0];
	}
	return fill_all(c, v, low_value);
}

/* v holds k at k (0 .. n-1), 1-D: Range(0, .., 1) or a prefix of one, or a
 * constant */
static int arange0(const struct rw_ctx *c, const struct ir_value *v)
{
	const struct ir_vtype *t = rw_type(c, v);
	struct ir_value *x;
	struct ir_node *r;
	struct rt_value *y;
	int64_t a[2];
	size_t k;
	int ok;

	if (!t || t->rank != 1)
		return 0;
	while ((x = prefix_slice(c, v, 1)))
		v = x;
	if ((r = rw_producer(v, "Range")))
		return r->n_inputs == 3 && rw_const_ints(c, r->inputs[0], a, 2, &k) && k == 1 &&
		       a[0] == 0 && rw_const_ints(c, r->inputs[2], a, 2, &k) && k == 1 && a[0] == 1;
	if (!(y = rw_init_value(v)))
		return 0;
	ok = y->rank == 1;
	for (int64_t i = 0; ok && i < y->numel; i++)
		ok = rt_value_get_f64(y, i) == (double)i;
	rt_value_unref(y);
	return ok;
}

/* The past's length P: its dim (0 without a past) */
static struct ir_vdim past_len(const struct cm *m)
{
	const struct ir_vtype *t = m->in->past ? rw_type(m->c, m->in->past) : NULL;
	struct ir_vdim zero = { IR_VDIM_VALUE, 0, NULL }, unknown = { IR_VDIM_UNKNOWN, 0, NULL };

	if (!m->in->past)
		return zero;
	return t && t->rank == 4 ? t->dims[2] : unknown;
}

/* v holds P + i at i for the S queries, 1-D [S] or a column [S, 1]:
 * Reshape or Unsqueeze of the 1-D, a Range(a, .., 1) of S elements from
 * a = P (by inference: the past's dim, or 0), or a constant */
static int positions(const struct cm *m, const struct ir_value *v)
{
	const struct rw_ctx *c = m->c;
	const struct ir_vtype *t = rw_type(c, v), *at;
	const struct ir_vdim *s = &m->in->qt->dims[2];
	struct ir_vdim p = past_len(m);
	struct ir_node *n;
	struct rt_value *y;
	int64_t d[2];
	size_t k;
	int ok;

	if (!t || !(t->rank == 1 || (t->rank == 2 && t->dims[1].kind == IR_VDIM_VALUE &&
				     t->dims[1].value == 1)) || !rw_dim_same(&t->dims[0], s))
		return 0;
	if (v->init) {   /* folded: [S] or [S, 1], row i at i */
		if (p.kind != IR_VDIM_VALUE || !(y = rw_init_value(v)))
			return 0;
		ok = 1;
		for (int64_t i = 0; ok && i < y->numel; i++)
			ok = rt_value_get_f64(y, i) == (double)(p.value + i);
		rt_value_unref(y);
		return ok;
	}
	if (t->rank == 2)
		return ((n = rw_producer(v, "Reshape")) || (n = rw_producer(v, "Unsqueeze"))) ?
		       positions(m, n->inputs[0]) : 0;
	return (n = rw_producer(v, "Range")) && n->n_inputs == 3 &&
	       rw_const_ints(c, n->inputs[2], d, 2, &k) && k == 1 && d[0] == 1 &&
	       (at = rw_type(c, n->inputs[0])) && at->has_const && at->n_const == 1 &&
	       rw_dim_same(&at->cval[0], &p);
}

/* v = Cast(Greater(keys, rows), float) (or Less(rows, keys)), keys
 * Range(0, n, 1) [n], rows [S, 1] the queries' positions: 1 exactly where
 * key j > P + query i */
static int after_position(const struct cm *m, const struct ir_value *v)
{
	const struct rw_ctx *c = m->c;
	struct ir_node *cast = rw_producer(v, "Cast"), *cmp;
	const struct ir_value *keys, *rows;
	const struct ir_vtype *rt;

	if (!cast || !is_float((int)rw_attr_int(cast, "to", 0)))
		return 0;
	v = cast->inputs[0];
	if ((cmp = rw_producer(v, "Greater")) && cmp->n_inputs == 2)
		keys = cmp->inputs[0], rows = cmp->inputs[1];
	else if ((cmp = rw_producer(v, "Less")) && cmp->n_inputs == 2)
		keys = cmp->inputs[1], rows = cmp->inputs[0];
	else
		return 0;
	return (rt = rw_type(c, rows)) && rt->rank == 2 && arange0(c, keys) && positions(m, rows);
}

/* Mul(F, after_position) (either way) [S, n], neither operand broadcast:
 * the causal mask (see this part's comment) */
static int causal_product(const struct cm *m, const struct ir_node *mul)
{
	const struct rw_ctx *c = m->c;
	const struct ir_vtype *t = rw_type(c, mul->outputs[0]);

	if (mul->n_inputs != 2 || !t || t->rank != 2 ||
	    !rw_dim_same(&t->dims[0], &m->in->qt->dims[2]))
		return 0;
	for (int j = 0; j < 2; j++)
		if (shape_same(rw_type(c, mul->inputs[j]), t) &&
		    shape_same(rw_type(c, mul->inputs[1 - j]), t) && low_triu(c, mul->inputs[j]) &&
		    after_position(m, mul->inputs[1 - j]))
			return 1;
	return 0;
}

/* v [.., S, n] holds the causal mask additively: 0 where key j <= P +
 * query i, at most MASKED_MAX elsewhere (see this part's comment) */
static int causal(const struct cm *m, const struct ir_value *v, int depth)
{
	const struct rw_ctx *c = m->c;
	const struct ir_vtype *t = rw_type(c, v), *xt;
	struct ir_value *x;
	struct ir_node *n;
	int64_t ax[8];
	int k;

	if (depth > CM_DEPTH || !t || t->rank < 2)
		return 0;
	if (v->init)
		return m->in->s > 0 && m->in->t > 0 &&
		       causal_values(v, m->in->s, m->in->t, CV_ADDITIVE);
	if ((x = prefix_slice(c, v, 1)) || (x = float_cast(c, v)))
		return causal(m, x, depth + 1);
	if ((n = rw_producer(v, "Expand")) && n->n_inputs == 2 &&
	    last2_same(rw_type(c, n->inputs[0]), t))
		return causal(m, n->inputs[0], depth + 1);
	if ((n = rw_producer(v, "Unsqueeze")) && (xt = rw_type(c, n->inputs[0])) &&
	    last2_same(xt, t) && (k = unsqueeze_axes(c, n, t->rank, ax, 8)) > 0) {
		for (int i = 0; i < k; i++)
			if (ax[i] >= t->rank - 2)
				return 0;
		return causal(m, n->inputs[0], depth + 1);
	}
	if ((n = rw_producer(v, "Mul")))
		return causal_product(m, n);
	return 0;
}

/* v (a constant [.., r]) holds at each position of its first r dims
 * those dims' coordinates */
static int grid_values(const struct ir_value *v, int r)
{
	struct rt_value *y = rw_init_value(v);
	int64_t co[4] = { 0, 0, 0, 0 };
	int ok;

	if (!y)
		return 0;
	ok = y->rank == r + 1 && y->dims[r] == r;
	for (int64_t k = 0; ok && k * r < y->numel; k++) {
		for (int d = 0; ok && d < r; d++)
			ok = rt_value_get_f64(y, k * r + d) == (double)co[d];
		for (int d = r - 1; d >= 0 && ++co[d] == y->dims[d]; d--)
			co[d] = 0;
	}
	rt_value_unref(y);
	return ok;
}

/* v [.., n, ..] of dims xt's rank or fewer (right-aligned), n = xt's dim
 * d at d and 1 elsewhere, holds k at k along d: Reshape or Unsqueeze of a
 * 1-D arange (arange0), or a constant */
static int axis_arange(const struct rw_ctx *c, const struct ir_value *v, int d,
		       const struct ir_vtype *xt)
{
	const struct ir_vtype *t = rw_type(c, v);
	struct ir_node *n;
	struct rt_value *y;
	int pos, ok;

	if (!t || t->rank < 1 || t->rank > xt->rank || (pos = d - (xt->rank - t->rank)) < 0 ||
	    !rw_dim_same(&t->dims[pos], &xt->dims[d]))
		return 0;
	for (int i = 0; i < t->rank; i++)
		if (i != pos && !(t->dims[i].kind == IR_VDIM_VALUE && t->dims[i].value == 1))
			return 0;
	if ((n = rw_producer(v, "Reshape")) || (n = rw_producer(v, "Unsqueeze")))
		return (t = rw_type(c, n->inputs[0])) && t->rank == 1 &&
		       rw_dim_same(&t->dims[0], &xt->dims[d]) && arange0(c, n->inputs[0]);
	if (t->rank == 1)
		return arange0(c, v);
	if (!(y = rw_init_value(v)))
		return 0;
	ok = 1;
	for (int64_t i = 0; ok && i < y->numel; i++)
		ok = rt_value_get_f64(y, i) == (double)i;
	rt_value_unref(y);
	return ok;
}

/* grid [x's dims.., r] holds every index of x (rank r) at that index:
 * Concat(on the last axis) of r parts, part d Unsqueeze(Expand(w), [-1])
 * with w an arange along d (axis_arange), or a constant; ScatterND by it
 * replaces every element of x with the update at the same place */
static int grid_covers(const struct rw_ctx *c, const struct ir_value *grid,
		       const struct ir_value *x)
{
	const struct ir_vtype *gt = rw_type(c, grid), *xt = rw_type(c, x), *pt;
	struct ir_node *cat, *un, *ex;
	struct ir_value *w;
	int64_t ax[2];
	int r = xt ? xt->rank : -1;

	if (r < 1 || r > 4 || !gt || gt->rank != r + 1 || gt->dims[r].kind != IR_VDIM_VALUE ||
	    gt->dims[r].value != r)
		return 0;
	for (int i = 0; i < r; i++)
		if (!rw_dim_same(&gt->dims[i], &xt->dims[i]))
			return 0;
	if (grid->init)
		return grid_values(grid, r);
	if (!(cat = rw_producer(grid, "Concat")) || cat->n_inputs != (size_t)r ||
	    (rw_attr_int(cat, "axis", 0) != -1 && rw_attr_int(cat, "axis", 0) != r))
		return 0;
	for (int d = 0; d < r; d++) {
		if (!(un = rw_producer(cat->inputs[d], "Unsqueeze")) ||
		    unsqueeze_axes(c, un, r + 1, ax, 2) != 1 || ax[0] != r ||
		    !shape_same(pt = rw_type(c, un->inputs[0]), xt))
			return 0;
		w = un->inputs[0];
		if ((ex = rw_producer(w, "Expand")) && ex->n_inputs == 2)
			w = ex->inputs[0];
		if (!axis_arange(c, w, d, xt))
			return 0;
	}
	return 1;
}

/* v = Cast, Unsqueeze and Slices keeping every dim of attention_mask, a
 * 2-D integer graph input [B, T] (amask_input), to [B, 1, 1, T], Cast to
 * float or bool on the way (nonzero stays nonzero): attention_mask, else
 * NULL */
static struct ir_value *padding4(const struct cm *m, const struct ir_value *v)
{
	const struct rw_ctx *c = m->c;
	const struct ir_vtype *t = rw_type(c, v), *at;
	struct ir_node *n;
	struct ir_value *x;
	int to, casts = 0;

	if (!t || t->rank != 4)
		return NULL;
	for (int depth = 0; depth < CM_DEPTH; depth++) {
		if ((x = prefix_slice(c, v, 0))) {
			v = x;
		} else if ((n = rw_producer(v, "Unsqueeze")) && n->n_inputs >= 1) {
			v = n->inputs[0];
		} else if ((n = rw_producer(v, "Cast"))) {
			to = (int)rw_attr_int(n, "to", 0);
			if (!is_float(to) && to != IR_DTYPE_BOOL)
				return NULL;
			v = n->inputs[0];
			casts++;
		} else {
			break;
		}
	}
	if (!casts || !amask_input(c, v, m->in->qt, m->in->kt) || !(at = rw_type(c, v)) ||
	    !rw_dim_same(&t->dims[0], &at->dims[0]) || !rw_dim_same(&t->dims[3], &at->dims[1]) ||
	    t->dims[1].kind != IR_VDIM_VALUE || t->dims[1].value != 1 ||
	    t->dims[2].kind != IR_VDIM_VALUE || t->dims[2].value != 1)
		return NULL;
	return (struct ir_value *)v;
}

/* w = Where(Equal(A + P, 0), m, B) (see this part's comment): the mask with
 * attention_mask's padding, m->am set */
static int padded_where(struct cm *m, const struct ir_node *w)
{
	const struct rw_ctx *c = m->c;
	const struct ir_vtype *pt, *bt = rw_type(c, w->inputs[2]);
	struct ir_value *sum, *am, *x;
	struct ir_node *add;
	double y;

	if (w->n_inputs != 3 || !rw_const_scalar(c, w->inputs[1], &y) || !(y <= MASKED_MAX) ||
	    !(sum = equal_zero(c, w->inputs[0])) || !causal(m, w->inputs[2], 0))
		return 0;
	/* a float Cast keeps the sum's zeros, and makes none: the sum is 0,
	 * an integer or at most MASKED_MAX + an integer */
	while ((x = float_cast(c, sum)))
		sum = x;
	if (!(add = rw_producer(sum, "Add")) || add->n_inputs != 2)
		return 0;
	for (int j = 0; j < 2; j++) {
		if (!(am = padding4(m, add->inputs[j])) || !(pt = rw_type(c, add->inputs[j])) ||
		    !bt || bt->rank < 2 ||
		    !rw_dim_same(&bt->dims[bt->rank - 1], &pt->dims[3]) ||
		    !last2_same(rw_type(c, add->inputs[1 - j]), bt) ||
		    !causal(m, add->inputs[1 - j], 0))
			continue;
		m->am = am;
		return 1;
	}
	return 0;
}

/* v [B, .., S, T] is the causal mask with attention_mask's padding (see
 * this part's comment) */
static int padded(struct cm *m, const struct ir_value *v, int depth)
{
	const struct rw_ctx *c = m->c;
	const struct ir_vtype *t = rw_type(c, v), *xt;
	const char *red;
	struct ir_value *x;
	struct ir_node *n;

	if (depth > CM_DEPTH || !t || t->rank < 2)
		return 0;
	if ((x = prefix_slice(c, v, 1)) || (x = float_cast(c, v)))
		return padded(m, x, depth + 1);
	if ((n = rw_producer(v, "ScatterND")))
		return n->n_inputs == 3 &&
		       (!(red = rw_attr_str(n, "reduction", NULL)) || !strcmp(red, "none")) &&
		       grid_covers(c, n->inputs[1], n->inputs[0]) &&
		       padded(m, n->inputs[2], depth + 1);
	if ((n = rw_producer(v, "Reshape")))
		return shape_same(rw_type(c, n->inputs[0]), t) && padded(m, n->inputs[0], depth + 1);
	if ((n = rw_producer(v, "Expand")))
		return n->n_inputs == 2 && (xt = rw_type(c, n->inputs[0])) && xt->rank == t->rank &&
		       rw_dim_same(&xt->dims[0], &t->dims[0]) && last2_same(xt, t) &&
		       padded(m, n->inputs[0], depth + 1);
	if ((n = rw_producer(v, "Where")))
		return padded_where(m, n);
	return 0;
}

/* Slice n (a prefix_slice) keeps at least the keys' T columns: its end on
 * the last axis at least T (known), the keys' length itself (inferred,
 * transformers' key_states.shape[-2]) or INT32_MAX and above; other axes
 * free (prefix_slice keeps them) */
static int keeps_keys(const struct rw_ctx *c, const struct ir_node *n,
		      const struct ir_vtype *kt)
{
	const struct ir_vtype *xt = rw_type(c, n->inputs[0]), *et = rw_type(c, n->inputs[2]);
	const struct ir_vdim *t = &kt->dims[2];
	int64_t ax[8];
	size_t na = 0;

	if (!xt || !et || !et->has_const ||
	    (n->n_inputs > 3 && n->inputs[3] &&
	     (!rw_const_ints(c, n->inputs[3], ax, 8, &na) || na != et->n_const)))
		return 0;
	for (size_t i = 0; i < et->n_const; i++) {
		const struct ir_vdim *e = &et->cval[i];
		int64_t a = na ? ax[i] : (int64_t)i;

		if (a != xt->rank - 1 && a != -1)
			continue;
		if (!((e->kind == IR_VDIM_VALUE && e->value >= INT32_MAX) || rw_dim_same(e, t) ||
		      (e->kind == IR_VDIM_VALUE && t->kind == IR_VDIM_VALUE && e->value >= t->value)))
			return 0;
	}
	return 1;
}

/* The mask m (its Cast looked through) is transformers' cache_position
 * mask: 1 and *amask; else 0, *form set where m is that form (prefix
 * Slices of a ScatterND, each keeping the keys' columns: a shorter mask
 * would be broadcast over the keys) */
static int cache_mask(const struct rw_ctx *c, const struct ir_value *mask,
		      const struct gqa_mask_in *in, struct ir_value **amask, int *form)
{
	struct cm m = { c, in, NULL };
	const struct ir_value *x = mask, *y;
	int cut = 0;

	for (;;) {
		if ((y = float_cast(c, x))) {
			x = y;
		} else if ((y = prefix_slice(c, x, 1))) {
			cut |= !keeps_keys(c, x->producer, in->kt);
			x = y;
		} else {
			break;
		}
	}
	*form = rw_producer(x, "ScatterND") != NULL;
	if (!*form || cut || !padded(&m, x, 0) || !m.am)
		return 0;
	*amask = m.am;
	return 1;
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
	int lone, form;

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
	if (cache_mask(c, m, in, amask, &form))
		return 1;
	if (form) {
		snprintf(why, size, "the mask is not transformers' cache_position mask, causal "
			 "with attention_mask's padding (ScatterND of Where(Equal(causal + "
			 "attention_mask, 0), lowest, causal) over all of causal = Trilu(lowest, "
			 "1) * (Range(0, T) > Range(past, past + S)))");
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
