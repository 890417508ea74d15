/* k_binary.c: the broadcasting binary engine (numpy rules, and the
 * broadcast/axis attributes of opset < 7) and the two-input elementwise
 * kernels on it: arithmetic, Pow, Mod, bit and logical ops, and the
 * variadic Max, Min, Mean and Sum (comparisons and Where: k_elem_cmp.c). */
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

#include "runtime/kernels/k_elem_int.h"

#define CHUNK 256

/* ---- the engine --------------------------------------------------------- */

struct ejob {
	size_t n;
	int64_t step[RT_BCAST_MAX + 1];
	rt_bcast_fn fn;
	void *ctx;
};

static void elem_range(void *arg, int64_t begin, int64_t end)
{
	const struct ejob *e = arg;
	int64_t off[RT_BCAST_MAX + 1];

	for (size_t i = 0; i <= e->n; i++)
		off[i] = begin * e->step[i];
	e->fn(e->ctx, off, e->step, end - begin);
}

void kel_elementwise(struct rt_kctx *k, struct rt_value *const *ts, size_t n,
		     int rank, const int64_t *dims, rt_bcast_fn fn, void *ctx)
{
	int64_t total = rt_numel(rank, dims);
	struct ejob e;

	for (size_t i = 0; i < n; i++)
		if (ts[i]->numel != total && ts[i]->numel != 1) {
			rt_bcast_run(k, ts, n, rank, dims, fn, ctx);
			return;
		}
	e.n = n;
	e.fn = fn;
	e.ctx = ctx;
	for (size_t i = 0; i < n; i++)
		e.step[i] = ts[i]->numel == total && total > 1;
	e.step[n] = 1;
	rt_parallel_for(k, total, 16384, elem_range, &e);
}

int kel_legacy_bcast(struct rt_kctx *k, const struct rt_value *a,
		     struct rt_value *b, struct rt_value *view,
		     struct rt_value **use)
{
	int64_t axis;
	int at;

	*use = b;
	if (k->version >= 7 || !rt_attr_int(k, "broadcast", 0))
		return 0;
	if (b->rank > a->rank)
		return rt_err(k, "legacy broadcast: B has rank %d above A's %d",
			      b->rank, a->rank);
	axis = rt_attr(k, "axis") ? rt_attr_int(k, "axis", 0) : a->rank - b->rank;
	if (axis < 0)
		axis += a->rank;
	if (axis < 0 || axis + b->rank > a->rank)
		return rt_err(k, "legacy broadcast: axis %lld does not fit B's rank %d in A's %d",
			      (long long)rt_attr_int(k, "axis", 0), b->rank, a->rank);
	at = (int)axis;
	memcpy(view, b, sizeof(*view));
	view->rank = a->rank;
	for (int i = 0; i < a->rank; i++)
		view->dims[i] = i >= at && i < at + b->rank ? b->dims[i - at] : 1;
	*use = view;
	return 0;
}

struct bjob {
	const struct kel_binop *op;
	const struct kel_par *p;
	const void *a, *b;
	void *y;
	int dt;
	int round;   /* float32 results rounded so as written (rt_lowp_round_out) */
};


static void bin_run(void *arg, const int64_t *off, const int64_t *step,
		    int64_t len)
{
	const struct bjob *j = arg;
	int dt = j->dt;

	if (dt == IR_DTYPE_FLOAT) {
		int64_t run = j->round ? RT_ROUND_RUN : len;

		for (int64_t c = 0; c < len; c += run) {
			int64_t n = len - c < run ? len - c : run;
			float *y = (float *)j->y + off[2] + c;

			j->op->f32((const float *)j->a + off[0] + c * step[0], step[0],
				   (const float *)j->b + off[1] + c * step[1], step[1], y, n);
			if (j->round)
				rt_float_round_n(y, n, j->round);
		}
	} else if (dt == IR_DTYPE_BOOL && j->op->b8) {
		j->op->b8((const uint8_t *)j->a + off[0], step[0],
			  (const uint8_t *)j->b + off[1], step[1], (uint8_t *)j->y + off[2], len);
	} else if (dt == IR_DTYPE_DOUBLE) {
		j->op->f64((const double *)j->a + off[0], step[0],
			   (const double *)j->b + off[1], step[1],
			   (double *)j->y + off[2], len);
	} else if (rt_dtype_is_float(dt)) {
		float fa[CHUNK], fb[CHUNK];

		for (int64_t c = 0; c < len; c += CHUNK) {
			int64_t n = len - c < CHUNK ? len - c : CHUNK;

			for (int64_t i = 0; i < n; i++) {
				fa[i] = (float)rt_load_f64(dt, j->a, off[0] + (c + i) * step[0]);
				fb[i] = (float)rt_load_f64(dt, j->b, off[1] + (c + i) * step[1]);
			}
			j->op->f32(fa, 1, fb, 1, fa, n);
			for (int64_t i = 0; i < n; i++)
				rt_store_f64(dt, j->y, off[2] + c + i, fa[i]);
		}
	} else {
		for (int64_t i = 0; i < len; i++) {
			int64_t x0 = rt_load_i64(dt, j->a, off[0] + i * step[0]);
			int64_t x1 = rt_load_i64(dt, j->b, off[1] + i * step[1]);

			rt_store_i64(dt, j->y, off[2] + i, j->op->i64(x0, x1, j->p));
		}
	}
}

/* kel_binary_into, float32 results rounded to dtype round (0: not) */
static int binary_into(struct rt_kctx *k, const struct kel_binop *op,
		       const struct kel_par *p, struct rt_value *a,
		       struct rt_value *b, struct rt_value *y, int round)
{
	struct kel_par par = *p;
	struct bjob j = { op, &par, a->data, b->data, y->data, a->dtype, round };
	struct rt_value *ts[2] = { a, b };
	int dt = a->dtype;

	if (a->dtype != b->dtype)
		return rt_err(k, "input types differ: %s and %s",
			      ir_dtype_name(a->dtype), ir_dtype_name(b->dtype));
	if (rt_dtype_is_float(dt) ? !op->f32 :
	    rt_dtype_is_int(dt) ? !op->i64 :
	    dt == IR_DTYPE_BOOL ? !op->i64 || !op->bool_ok : 1)
		return kel_bad_dtype(k, dt);
	par.uns = rt_dtype_is_int(dt) && !rt_dtype_is_signed(dt);
	if (op->zero_div && rt_dtype_is_int(dt) && y->numel)
		for (int64_t i = 0; i < b->numel; i++)
			if (!rt_load_i64(dt, b->data, i))
				return rt_err(k, "integer division by zero (element %lld of B)",
					      (long long)i);
	kel_elementwise(k, ts, 2, y->rank, y->dims, bin_run, &j);
	return 0;
}

int kel_binary_into(struct rt_kctx *k, const struct kel_binop *op,
		    const struct kel_par *p, struct rt_value *a,
		    struct rt_value *b, struct rt_value *y)
{
	return binary_into(k, op, p, a, b, y, 0);
}

int kel_binary(struct rt_kctx *k, const struct kel_binop *op,
	       const struct kel_par *p)
{
	struct rt_value *a, *b, *y, view, *ts[2];
	int64_t dims[RT_MAX_RANK];
	int rank, rc, cl = 0, round;

	if ((rc = rt_in_tensor(k, 0, &a)) < 0 || (rc = rt_in_tensor(k, 1, &b)) < 0)
		return rc;
	/* operands stored channels last (layout_cl.c): elementwise as they
	 * are when both are, of one shape, or when the other holds a value
	 * per channel (or one element, as a chain's step by such a constant
	 * keeps it: the same layout with and without chains); else made
	 * plain */
	if ((a->flags | b->flags) & RT_VALUE_CL) {
		int same = (a->flags & b->flags & RT_VALUE_CL) && a->rank == b->rank &&
			   !memcmp(a->dims, b->dims, (size_t)a->rank * sizeof(*a->dims));

		cl = same ? 1 : k->version < 7 ? 0 : rt_cl_per_channel(a, b) ? 2 :
		     rt_cl_per_channel(b, a) ? 3 : 0;
		if (!cl && ((rc = rt_cl_plain_in(k, 0)) < 0 || (rc = rt_cl_plain_in(k, 1)) < 0))
			return rc;
		a = k->in[0];
		b = k->in[1];
	}
	if ((rc = kel_legacy_bcast(k, a, b, &view, &ts[1])) < 0)
		return rc;
	ts[0] = a;
	if ((rc = rt_broadcast_shape(k, ts, 2, &rank, dims)) < 0)
		return rc;
	/* an operand of the output's shape that dies here takes the result
	 * (not B seen through a legacy broadcast view) */
	if (!(y = rt_out_tensor_reuse(k, 0, ts[1] == b ? 3u : 1u, a->dtype,
				      rank, dims)))
		return IR_ENOMEM;
	rt_cl_set(y, cl != 0);
	/* a float16 node's result rounded as written (the op's one result) */
	round = a->dtype == IR_DTYPE_FLOAT ? rt_lowp_round_out(k) : 0;
	if (cl >= 2) {
		struct rt_value v[3];

		rt_cl_views(a, b, y, cl, v);
		rc = binary_into(k, op, p, &v[0], &v[1], &v[2], round);
	} else {
		rc = binary_into(k, op, p, a, ts[1], y, round);
	}
	k->lowp_done = rc == 0 && round;
	return rc;
}

/* ---- arithmetic --------------------------------------------------------- */

static const struct kel_par no_par;

static int64_t add_i(int64_t a, int64_t b, const struct kel_par *p)
{
	(void)p;
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

static int64_t sub_i(int64_t a, int64_t b, const struct kel_par *p)
{
	(void)p;
	return (int64_t)((uint64_t)a - (uint64_t)b);
}

static int64_t mul_i(int64_t a, int64_t b, const struct kel_par *p)
{
	(void)p;
	return (int64_t)((uint64_t)a * (uint64_t)b);
}

static int64_t div_i(int64_t a, int64_t b, const struct kel_par *p)
{
	if (p->uns)
		return (int64_t)((uint64_t)a / (uint64_t)b);
	if (b == -1)
		return (int64_t)(0 - (uint64_t)a);
	return a / b;
}

/* mode 0: the result takes the divisor's sign (Python); 1: C's fmod. */
static int64_t mod_i(int64_t a, int64_t b, const struct kel_par *p)
{
	int64_t r;

	if (p->uns)
		return (int64_t)((uint64_t)a % (uint64_t)b);
	if (b == -1)
		return 0;
	r = a % b;
	if (!p->mode && r != 0 && ((r < 0) != (b < 0)))
		r += b;
	return r;
}

static int64_t max_i(int64_t a, int64_t b, const struct kel_par *p)
{
	if (p->uns)
		return (uint64_t)a > (uint64_t)b ? a : b;
	return a > b ? a : b;
}

static int64_t min_i(int64_t a, int64_t b, const struct kel_par *p)
{
	if (p->uns)
		return (uint64_t)a < (uint64_t)b ? a : b;
	return a < b ? a : b;
}

static int64_t and_i(int64_t a, int64_t b, const struct kel_par *p)
{
	(void)p;
	return a & b;
}

static int64_t or_i(int64_t a, int64_t b, const struct kel_par *p)
{
	(void)p;
	return a | b;
}

static int64_t xor_i(int64_t a, int64_t b, const struct kel_par *p)
{
	(void)p;
	return a ^ b;
}

/* the same on bool's bytes, as rt_store_i64 stores a bool */
KEL_BIN_LOOP(and_b8, uint8_t, (x0 & x1) != 0)
KEL_BIN_LOOP(or_b8, uint8_t, (x0 | x1) != 0)
KEL_BIN_LOOP(xor_b8, uint8_t, (x0 ^ x1) != 0)

/* mode 0: left, 1: right; the operands are unsigned. */
static int64_t shift_i(int64_t a, int64_t b, const struct kel_par *p)
{
	if ((uint64_t)b >= 64)
		return 0;
	return (int64_t)(p->mode ? (uint64_t)a >> b : (uint64_t)a << b);
}

KEL_BINARY_FLOAT(add, x0 + x1)
KEL_BINARY_FLOAT(sub, x0 - x1)
KEL_BINARY_FLOAT(mul, x0 * x1)
KEL_BINARY_FLOAT(div, x0 / x1)
KEL_BINARY_FLOAT(max, x0 > x1 || x0 != x0 ? x0 : x1)
KEL_BINARY_FLOAT(min, x0 < x1 || x0 != x0 ? x0 : x1)
KEL_BINARY_FLOAT(pow, pow(x0, x1))
KEL_BINARY_FLOAT(fmod, fmod(x0, x1))
KEL_BINARY_FLOAT(pymod, fmod(x0, x1) != 0 && ((fmod(x0, x1) < 0) != (x1 < 0)) ?
		 fmod(x0, x1) + x1 : fmod(x0, x1))

static const struct kel_binop op_add = { add_f32, add_f64, add_i, 0, 0, NULL };
static const struct kel_binop op_sub = { sub_f32, sub_f64, sub_i, 0, 0, NULL };
static const struct kel_binop op_mul = { mul_f32, mul_f64, mul_i, 0, 0, NULL };
static const struct kel_binop op_div = { div_f32, div_f64, div_i, 0, 1, NULL };
static const struct kel_binop op_max = { max_f32, max_f64, max_i, 0, 0, NULL };
static const struct kel_binop op_min = { min_f32, min_f64, min_i, 0, 0, NULL };
static const struct kel_binop op_fmod = { fmod_f32, fmod_f64, mod_i, 0, 1, NULL };
static const struct kel_binop op_pymod = { pymod_f32, pymod_f64, mod_i, 0, 1, NULL };
static const struct kel_binop op_band = { NULL, NULL, and_i, 0, 0, NULL };
static const struct kel_binop op_bor = { NULL, NULL, or_i, 0, 0, NULL };
static const struct kel_binop op_bxor = { NULL, NULL, xor_i, 0, 0, NULL };

static int k_add(struct rt_kctx *k) { return kel_binary(k, &op_add, &no_par); }
static int k_sub(struct rt_kctx *k) { return kel_binary(k, &op_sub, &no_par); }
static int k_mul(struct rt_kctx *k) { return kel_binary(k, &op_mul, &no_par); }
static int k_div(struct rt_kctx *k) { return kel_binary(k, &op_div, &no_par); }
static int k_band(struct rt_kctx *k) { return kel_binary(k, &op_band, &no_par); }
static int k_bor(struct rt_kctx *k) { return kel_binary(k, &op_bor, &no_par); }
static int k_bxor(struct rt_kctx *k) { return kel_binary(k, &op_bxor, &no_par); }

static int k_mod(struct rt_kctx *k)
{
	struct kel_par p = no_par;

	p.mode = (int)rt_attr_int(k, "fmod", 0);
	return kel_binary(k, p.mode ? &op_fmod : &op_pymod, &p);
}

static int k_bitshift(struct rt_kctx *k)
{
	static const struct kel_binop op = { NULL, NULL, shift_i, 0, 0, NULL };
	const char *dir = rt_attr_str(k, "direction", "");
	struct kel_par p = no_par;
	struct rt_value *a;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &a)) < 0)
		return rc;
	if (!rt_dtype_is_int(a->dtype) || rt_dtype_is_signed(a->dtype))
		return kel_bad_dtype(k, a->dtype);
	if (!strcmp(dir, "RIGHT"))
		p.mode = 1;
	else if (strcmp(dir, "LEFT"))
		return rt_err(k, "direction must be LEFT or RIGHT, not '%s'", dir);
	return kel_binary(k, &op, &p);
}

/* And, Or, Xor: bool only. */
static int logical(struct rt_kctx *k, kel_bi64_fn fn, kel_bb8_fn b8)
{
	const struct kel_binop op = { NULL, NULL, fn, 1, 0, b8 };
	struct rt_value *a;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &a)) < 0)
		return rc;
	if (a->dtype != IR_DTYPE_BOOL)
		return kel_bad_dtype(k, a->dtype);
	return kel_binary(k, &op, &no_par);
}

static int k_and(struct rt_kctx *k) { return logical(k, and_i, and_b8); }
static int k_or(struct rt_kctx *k) { return logical(k, or_i, or_b8); }
static int k_xor(struct rt_kctx *k) { return logical(k, xor_i, xor_b8); }

/* ---- Pow: base and exponent of different types --------------------- */

struct pjob {
	const struct rt_value *a, *b;
	void *y;
};

static int64_t ipow(int64_t a, int64_t e)
{
	uint64_t r = 1, base = (uint64_t)a;

	if (e < 0)
		return a == 1 ? 1 : a == -1 ? (e & 1 ? -1 : 1) : 0;
	while (e) {
		if (e & 1)
			r *= base;
		base *= base;
		e >>= 1;
	}
	return (int64_t)r;
}

static void pow_run(void *arg, const int64_t *off, const int64_t *step,
		    int64_t len)
{
	const struct pjob *j = arg;
	int ta = j->a->dtype, tb = j->b->dtype;
	int int_int = !rt_dtype_is_float(ta) && !rt_dtype_is_float(tb);

	for (int64_t i = 0; i < len; i++) {
		int64_t ia = off[0] + i * step[0], ib = off[1] + i * step[1];

		if (int_int)
			rt_store_i64(ta, j->y, off[2] + i,
				     ipow(rt_load_i64(ta, j->a->data, ia),
					  rt_load_i64(tb, j->b->data, ib)));
		else
			rt_store_f64(ta, j->y, off[2] + i,
				     pow(rt_load_f64(ta, j->a->data, ia),
					 rt_load_f64(tb, j->b->data, ib)));
	}
}

/* Pow of a float32 base (float16 and bfloat16 ones arrive widened,
 * lowp.c) by one exponent e that a float32 holds: squares (a variance's
 * Pow(d, 2)) as products, correctly rounded as pow's result is, at a
 * tenth of powf's time; cubes (GPT-2's tanh GELU, x + 0.044715 x^3) as
 * (x * x) * x, onnxruntime's value bit for bit (within a rounding of
 * pow's); other exponents by powf as kel_binary's. */
struct pow1_job {
	const float *a;
	float *y;
	float e;
	int round;   /* results rounded so as written (rt_lowp_round_out) */
};

static void pow1_span(const struct pow1_job *j, int64_t begin, int64_t end)
{
	const float *a = j->a;
	float *y = j->y, e = j->e;

	if (e == 2.0f)
		for (int64_t i = begin; i < end; i++)
			y[i] = a[i] * a[i];
	else if (e == 3.0f)
		for (int64_t i = begin; i < end; i++)
			y[i] = a[i] * a[i] * a[i];
	else
		for (int64_t i = begin; i < end; i++)
			y[i] = powf(a[i], e);
}

static void pow1_range(void *arg, int64_t begin, int64_t end)
{
	const struct pow1_job *j = arg;
	int64_t run = j->round ? RT_ROUND_RUN : end - begin;

	for (int64_t b = begin; b < end; b += run) {
		int64_t e = end - b < run ? end : b + run;

		pow1_span(j, b, e);
		if (j->round)
			rt_float_round_n(j->y + b, e - b, j->round);
	}
}

/* 1 done, 0 not this case, or an error. */
static int pow_scalar(struct rt_kctx *k, struct rt_value *a, struct rt_value *b)
{
	struct pow1_job j;
	struct rt_value *y;
	double e;

	if (a->dtype != IR_DTYPE_FLOAT || !rt_dtype_is_float(b->dtype) || b->numel != 1 ||
	    b->rank > a->rank || (k->version < 7 && rt_attr_int(k, "broadcast", 0)))
		return 0;
	e = rt_load_f64(b->dtype, b->data, 0);
	if ((double)(float)e != e && e == e)
		return 0;
	if (!(y = rt_out_tensor_reuse(k, 0, 1u, a->dtype, a->rank, a->dims)))
		return IR_ENOMEM;
	j = (struct pow1_job){ a->data, y->data, (float)e, rt_lowp_round_out(k) };
	rt_parallel_for(k, a->numel, 16384, pow1_range, &j);
	k->lowp_done = j.round != 0;
	return 1;
}

static int k_pow(struct rt_kctx *k)
{
	static const struct kel_binop op = { pow_f32, pow_f64, NULL, 0, 0, NULL };
	struct rt_value *a, *b, *y, view, *ts[2];
	int64_t dims[RT_MAX_RANK];
	struct pjob j;
	int rank, rc;

	if ((rc = rt_in_tensor(k, 0, &a)) < 0 || (rc = rt_in_tensor(k, 1, &b)) < 0)
		return rc;
	if ((rc = pow_scalar(k, a, b)) != 0)
		return rc < 0 ? rc : 0;
	if (a->dtype == b->dtype && rt_dtype_is_float(a->dtype))
		return kel_binary(k, &op, &no_par);
	if (!rt_dtype_is_float(a->dtype) && !rt_dtype_is_int(a->dtype))
		return kel_bad_dtype(k, a->dtype);
	if (!rt_dtype_is_float(b->dtype) && !rt_dtype_is_int(b->dtype))
		return kel_bad_dtype(k, b->dtype);
	if ((rc = kel_legacy_bcast(k, a, b, &view, &ts[1])) < 0)
		return rc;
	ts[0] = a;
	if ((rc = rt_broadcast_shape(k, ts, 2, &rank, dims)) < 0)
		return rc;
	if (!(y = rt_out_tensor(k, 0, a->dtype, rank, dims)))
		return IR_ENOMEM;
	j.a = a;
	j.b = ts[1];
	j.y = y->data;
	kel_elementwise(k, ts, 2, rank, dims, pow_run, &j);
	return 0;
}

/* ---- variadic Max, Min, Sum, Mean -------------------------------------- */

/* A float copy of t (narrow floats accumulate in float), or a new float
 * tensor when t is NULL. */
static int float_copy(struct rt_kctx *k, struct rt_value *t, int rank,
		      const int64_t *dims, struct rt_value **out)
{
	struct ir_diag sub;
	int rc;

	ir_diag_init(&sub);
	rc = t ? rt_tensor_cast(k->mem, t, IR_DTYPE_FLOAT, out, &sub) :
		 rt_tensor_new(k->mem, IR_DTYPE_FLOAT, rank, dims, out, &sub);
	return rc < 0 ? rt_err(k, "%s", sub.msg) : 0;
}

static int variadic(struct rt_kctx *k, const struct kel_binop *op, int mean)
{
	struct rt_value *ts[2], *y = NULL, *acc = NULL, **all = NULL, **conv = NULL;
	struct rt_value **src, shape;
	int64_t dims[RT_MAX_RANK];
	size_t n = k->n_in;
	int rank, rc = 0;

	if (!n)
		return rt_err(k, "needs at least one input");
	if (!(all = calloc(n, sizeof(*all))) || !(conv = calloc(n, sizeof(*conv)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		if ((rc = rt_in_tensor(k, i, &all[i])) < 0)
			goto cleanup;
		if (all[i]->dtype != all[0]->dtype) {
			rc = rt_err(k, "input types differ: %s and %s",
				    ir_dtype_name(all[0]->dtype), ir_dtype_name(all[i]->dtype));
			goto cleanup;
		}
	}
	if (mean && !rt_dtype_is_float(all[0]->dtype)) {
		rc = kel_bad_dtype(k, all[0]->dtype);
		goto cleanup;
	}
	/* the broadcast shape of all, folded pairwise */
	memset(&shape, 0, sizeof(shape));
	shape.rank = all[0]->rank;
	memcpy(shape.dims, all[0]->dims, sizeof(shape.dims));
	rank = shape.rank;
	memcpy(dims, shape.dims, sizeof(dims));
	for (size_t i = 1; i < n; i++) {
		ts[0] = &shape;
		ts[1] = all[i];
		if ((rc = rt_broadcast_shape(k, ts, 2, &rank, dims)) < 0)
			goto cleanup;
		shape.rank = rank;
		memcpy(shape.dims, dims, sizeof(dims));
	}
	/* the first or second input, when of the output's shape and dying
	 * here, takes the result: each element is read before it is written,
	 * and the later inputs are never the output */
	if (!(y = rt_out_tensor_reuse(k, 0, n >= 2 ? 3u : 1u, all[0]->dtype, rank, dims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	if (n == 1) {
		/* y = x: the max of x and itself */
		static const struct kel_binop first = { max_f32, max_f64, max_i, 1, 0, NULL };

		rc = kel_binary_into(k, &first, &no_par, all[0], all[0], y);
		goto cleanup;
	}
	src = all;
	acc = y;
	if (kel_is_narrow_float(y->dtype)) {
		/* float16 and the like: one rounding at the end, not per input */
		acc = NULL;
		for (size_t i = 0; i < n; i++)
			if ((rc = float_copy(k, all[i], 0, NULL, &conv[i])) < 0)
				goto cleanup;
		if ((rc = float_copy(k, NULL, rank, dims, &acc)) < 0)
			goto cleanup;
		src = conv;
	}
	if ((rc = kel_binary_into(k, op, &no_par, src[0], src[1], acc)) < 0)
		goto cleanup;
	for (size_t i = 2; i < n; i++)
		if ((rc = kel_binary_into(k, op, &no_par, acc, src[i], acc)) < 0)
			goto cleanup;
	for (int64_t i = 0; (mean || acc != y) && i < y->numel; i++)
		rt_store_f64(y->dtype, y->data, i,
			     rt_load_f64(acc->dtype, acc->data, i) / (mean ? (double)n : 1.0));
cleanup:
	if (acc != y)
		rt_value_unref(acc);
	for (size_t i = 0; conv && i < n; i++)
		rt_value_unref(conv[i]);
	free(conv);
	free(all);
	return rc;
}

static int k_max(struct rt_kctx *k) { return variadic(k, &op_max, 0); }
static int k_min(struct rt_kctx *k) { return variadic(k, &op_min, 0); }
static int k_sum(struct rt_kctx *k) { return variadic(k, &op_add, 0); }
static int k_mean(struct rt_kctx *k) { return variadic(k, &op_add, 1); }

const struct rt_kernel rt_kernels_binary[] = {
	{ "ai.onnx", "Add", 1, RT_OPEN, k_add },
	{ "ai.onnx", "And", 1, RT_OPEN, k_and },
	{ "ai.onnx", "BitShift", 11, RT_OPEN, k_bitshift },
	{ "ai.onnx", "BitwiseAnd", 18, RT_OPEN, k_band },
	{ "ai.onnx", "BitwiseOr", 18, RT_OPEN, k_bor },
	{ "ai.onnx", "BitwiseXor", 18, RT_OPEN, k_bxor },
	{ "ai.onnx", "Div", 1, RT_OPEN, k_div },
	{ "ai.onnx", "Equal", 1, RT_OPEN, kel_equal },
	{ "ai.onnx", "Greater", 1, RT_OPEN, kel_greater },
	{ "ai.onnx", "GreaterOrEqual", 12, RT_OPEN, kel_greater_eq },
	{ "ai.onnx", "Less", 1, RT_OPEN, kel_less },
	{ "ai.onnx", "LessOrEqual", 12, RT_OPEN, kel_less_eq },
	{ "ai.onnx", "Max", 1, RT_OPEN, k_max },
	{ "ai.onnx", "Mean", 1, RT_OPEN, k_mean },
	{ "ai.onnx", "Min", 1, RT_OPEN, k_min },
	{ "ai.onnx", "Mod", 10, RT_OPEN, k_mod },
	{ "ai.onnx", "Mul", 1, RT_OPEN, k_mul },
	{ "ai.onnx", "Or", 1, RT_OPEN, k_or },
	{ "ai.onnx", "Pow", 1, RT_OPEN, k_pow },
	{ "ai.onnx", "Sub", 1, RT_OPEN, k_sub },
	{ "ai.onnx", "Sum", 1, RT_OPEN, k_sum },
	{ "ai.onnx", "Where", 9, RT_OPEN, kel_where },
	{ "ai.onnx", "Xor", 1, RT_OPEN, k_xor },
};
const size_t rt_n_kernels_binary = sizeof(rt_kernels_binary) / sizeof(rt_kernels_binary[0]);
