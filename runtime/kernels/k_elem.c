/* k_elem.c: the unary engine every one-input elementwise kernel shares
 * (chunked dtype conversion, threads) and the math kernels on it: Abs,
 * Neg, Sign, rounding, exp/log, trigonometric and hyperbolic functions,
 * Erf, IsInf, IsNaN, Not, BitwiseNot.  Also the attribute and dtype
 * helpers of k_elem_int.h. */
#include <stdlib.h>
#include <tgmath.h>

#include "runtime/kernels/k_elem_int.h"

#define CHUNK 512

/* ---- helpers ---------------------------------------------------------- */

float kel_attr_float(struct rt_kctx *k, const char *name, float dflt)
{
	const struct ir_attr *a = rt_attr(k, name);
	const struct ir_op_attr *sa;

	if (a && (a->type == IR_ATTR_FLOAT || a->type == IR_ATTR_INT))
		return rt_attr_float(k, name, dflt);
	if (k->schema && (sa = ir_op_schema_attr(k->schema, name)) &&
	    sa->default_value)
		return strtof(sa->default_value, NULL);
	return dflt;
}

int kel_is_narrow_float(int dtype)
{
	return rt_dtype_is_float(dtype) && dtype != IR_DTYPE_FLOAT &&
	       dtype != IR_DTYPE_DOUBLE;
}

int kel_bad_dtype(struct rt_kctx *k, int dtype)
{
	return rt_err(k, "inputs of type %s are not supported",
		      ir_dtype_name(dtype));
}

/* ---- the unary engine ------------------------------------------------- */

struct ujob {
	const struct kel_unop *op;
	const struct kel_par *p;
	const struct rt_value *x;
	struct rt_value *y;
	int round;   /* float32 results rounded so as written (rt_lowp_round_out) */
};


static void unary_range(void *arg, int64_t begin, int64_t end)
{
	const struct ujob *j = arg;
	int dt = j->x->dtype;

	if (dt == IR_DTYPE_FLOAT) {
		int64_t run = j->round ? RT_ROUND_RUN : end - begin;

		for (int64_t b = begin; b < end; b += run) {
			int64_t n = end - b < run ? end - b : run;
			float *y = (float *)j->y->data + b;

			j->op->f32((const float *)j->x->data + b, y, n, j->p);
			if (j->round)
				rt_float_round_n(y, n, j->round);
		}
		return;
	}
	if (dt == IR_DTYPE_BOOL && j->op->b8) {
		j->op->b8((const uint8_t *)j->x->data + begin, (uint8_t *)j->y->data + begin,
			  end - begin);
		return;
	}
	if (dt == IR_DTYPE_DOUBLE && j->op->f64) {
		j->op->f64((const double *)j->x->data + begin,
			   (double *)j->y->data + begin, end - begin, j->p);
		return;
	}
	for (int64_t b = begin; b < end; b += CHUNK) {
		int64_t n = end - b < CHUNK ? end - b : CHUNK;

		if (rt_dtype_is_float(dt)) {
			float buf[CHUNK];

			for (int64_t i = 0; i < n; i++)
				buf[i] = (float)rt_load_f64(dt, j->x->data, b + i);
			j->op->f32(buf, buf, n, j->p);
			for (int64_t i = 0; i < n; i++)
				rt_store_f64(dt, j->y->data, b + i, buf[i]);
		} else {
			int64_t buf[CHUNK];

			for (int64_t i = 0; i < n; i++)
				buf[i] = rt_load_i64(dt, j->x->data, b + i);
			j->op->i64(buf, buf, n, j->p);
			for (int64_t i = 0; i < n; i++)
				rt_store_i64(dt, j->y->data, b + i, buf[i]);
		}
	}
}

/* kel_unary_on, float32 results rounded to dtype round (0: not) */
static int unary_on(struct rt_kctx *k, const struct kel_unop *op, const struct kel_par *p,
		    const struct rt_value *x, struct rt_value *y, int round)
{
	struct kel_par par = *p;
	struct ujob j = { op, &par, x, y, round };
	int dt = x->dtype;

	if (rt_dtype_is_float(dt) ? !op->f32 :
	    rt_dtype_is_int(dt) ? !op->i64 :
	    dt == IR_DTYPE_BOOL ? !op->i64 || !op->bool_ok : 1)
		return kel_bad_dtype(k, dt);
	par.uns = rt_dtype_is_int(dt) && !rt_dtype_is_signed(dt);
	rt_parallel_for(k, x->numel, 16384, unary_range, &j);
	return 0;
}

int kel_unary_on(struct rt_kctx *k, const struct kel_unop *op,
		 const struct kel_par *p, const struct rt_value *x,
		 struct rt_value *y)
{
	return unary_on(k, op, p, x, y, 0);
}

int kel_unary(struct rt_kctx *k, const struct kel_unop *op,
	      const struct kel_par *p)
{
	struct rt_value *x, *y;
	int rc, round;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (!(y = rt_out_tensor_reuse(k, 0, 1u, x->dtype, x->rank, x->dims)))
		return IR_ENOMEM;
	/* elementwise: a channels-last input gives a channels-last result */
	rt_cl_set(y, (x->flags & RT_VALUE_CL) != 0);
	/* a float16 node's result rounded as written (the op's one result) */
	round = x->dtype == IR_DTYPE_FLOAT && y->dtype == IR_DTYPE_FLOAT ? rt_lowp_round_out(k) : 0;
	rc = unary_on(k, op, p, x, y, round);
	k->lowp_done = rc == 0 && round;
	return rc;
}

/* ---- the ops ----------------------------------------------------------- */

static const struct kel_par no_par;

KEL_UNARY_FLOAT(abs, fabs(x))
KEL_UNARY_INT(abs, p->uns || x >= 0 ? x : (int64_t)(0 - (uint64_t)x))
KEL_UNARY_FLOAT(neg, -x)
KEL_UNARY_INT(neg, (int64_t)(0 - (uint64_t)x))
KEL_UNARY_FLOAT(sign, x > 0 ? 1 : x < 0 ? -1 : x == 0 ? 0 : x)
KEL_UNARY_INT(sign, p->uns ? x != 0 : (x > 0) - (x < 0))
KEL_UNARY_FLOAT(ceil, ceil(x))
KEL_UNARY_FLOAT(floor, floor(x))
KEL_UNARY_FLOAT(round, rint(x))
KEL_UNARY_FLOAT(recip, 1 / x)
KEL_UNARY_FLOAT(sqrt, sqrt(x))
KEL_UNARY_FLOAT(exp, exp(x))
KEL_UNARY_FLOAT(log, log(x))
static void sin_f64(const double *xs, double *ys, int64_t n, const struct kel_par *p)
{
	(void)p;
	for (int64_t i = 0; i < n; i++)
		ys[i] = sin(xs[i]);
}
static void cos_f64(const double *xs, double *ys, int64_t n, const struct kel_par *p)
{
	(void)p;
	for (int64_t i = 0; i < n; i++)
		ys[i] = cos(xs[i]);
}
KEL_UNARY_FLOAT(tan, tan(x))
KEL_UNARY_FLOAT(asin, asin(x))
KEL_UNARY_FLOAT(acos, acos(x))
KEL_UNARY_FLOAT(atan, atan(x))
KEL_UNARY_FLOAT(sinh, sinh(x))
KEL_UNARY_FLOAT(cosh, cosh(x))
KEL_UNARY_FLOAT(tanh, tanh(x))
KEL_UNARY_FLOAT(asinh, asinh(x))
KEL_UNARY_FLOAT(acosh, acosh(x))
KEL_UNARY_FLOAT(atanh, atanh(x))
/* Erf on float32 as x * f(x^2) in double, f(t) = erf(sqrt t) / sqrt t
 * on t in [0, 16] by its Chebyshev interpolant of degree 18 (at the 19
 * Chebyshev nodes; relative error below 4e-10, so the result is erff()
 * correctly rounded or one ulp away); |x| >= 4 is clamped to 4, whose erf
 * rounds to 1 in float; NaN stays NaN.  One straight loop the compiler
 * vectorizes, where libm's erff is a call per element; the recurrence in
 * fused multiply-adds (one rounding a step; CPUs without FMA take the
 * default clone, fma() from libm). */
static const double erf_cheb[19] = {
	0.48591295690286285, -0.34540785500494986, 0.16182910121364563,
	-0.076482756105509142, 0.03466993680050711, -0.014811864147815164,
	0.0059229379562316872, -0.0022118406588106524, 0.00077141542783988105,
	-0.00025159658780995119, 7.6886582210519618e-05, -2.2065495938790306e-05,
	5.9612740409867873e-06, -1.5197750682400625e-06, 3.6649302512430395e-07,
	-8.3789866853584854e-08, 1.8200721148317989e-08, -3.760100567084873e-09,
	7.1745415521518725e-10,
};

/* no-trapping-math: the clamp's compares become blends (no FP exception
 * flags are observed anywhere); gcc only, clang has no optimize
 * attribute (the fuzz build) */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "arch=haswell", "default"),
	       optimize("no-trapping-math")))
#endif
static void erf_loop(const float *xs, float *ys, int64_t n)
{
	for (int64_t i = 0; i < n; i++) {
		double x = xs[i], u, u2, b1, b2 = 0;

		x = x > 4 ? 4 : x < -4 ? -4 : x;
		u = x * x * 0.125 - 1;     /* t = x^2 mapped to [-1, 1] */
		u2 = 2 * u;
		b1 = erf_cheb[18];
		/* Clenshaw's recurrence, two steps at a time */
#define ERF_STEP2(k) \
		b2 = fma(u2, b1, erf_cheb[k] - b2); \
		b1 = fma(u2, b2, erf_cheb[(k) - 1] - b1)
		ERF_STEP2(17);
		ERF_STEP2(15);
		ERF_STEP2(13);
		ERF_STEP2(11);
		ERF_STEP2(9);
		ERF_STEP2(7);
		ERF_STEP2(5);
		ERF_STEP2(3);
#undef ERF_STEP2
		/* b1 = b_2, b2 = b_3 now */
		b2 = fma(u2, b1, erf_cheb[1] - b2);   /* b_1; b1 is b_2 */
		ys[i] = (float)(x * fma(u, b2, erf_cheb[0] - b1));
	}
}

void kel_erf_f32(const float *xs, float *ys, int64_t n)
{
	if (!kel_erf512(xs, ys, n))   /* k_math512.c: the same bound */
		erf_loop(xs, ys, n);
}

/* (the loops vectorized for the CPU at hand) */
__attribute__((target_clones("avx512f", "avx2", "default")))
void rt_gelu_f32(float *y, int64_t n, int div, float m, float a, int round)
{
	float t[256];

	for (int64_t i = 0; i < n; i += 256) {
		int64_t c = n - i < 256 ? n - i : 256;
		float *restrict yi = y + i;

		if (div)
			for (int64_t j = 0; j < c; j++)
				t[j] = yi[j] / m;
		else
			for (int64_t j = 0; j < c; j++)
				t[j] = yi[j] * m;
		if (round)
			rt_float_round_n(t, c, round);
		kel_erf_f32(t, t, c);
		if (round)
			rt_float_round_n(t, c, round);
		for (int64_t j = 0; j < c; j++)
			t[j] = t[j] + 1.0f;
		if (round)
			rt_float_round_n(t, c, round);
		if (a != 0) {
			for (int64_t j = 0; j < c; j++)
				yi[j] = yi[j] * a;
			if (round)
				rt_float_round_n(yi, c, round);
		}
		for (int64_t j = 0; j < c; j++)
			yi[j] = yi[j] * t[j];
		if (round)
			rt_float_round_n(yi, c, round);
	}
}

static void erf_f32(const float *xs, float *ys, int64_t n,
		    const struct kel_par *p)
{
	(void)p;
	kel_erf_f32(xs, ys, n);
}

static void erf_f64(const double *xs, double *ys, int64_t n,
		    const struct kel_par *p)
{
	(void)p;
	for (int64_t i = 0; i < n; i++)
		ys[i] = erf(xs[i]);
}
KEL_UNARY_INT(erf, (int64_t)erf((double)x))
KEL_UNARY_INT(bnot, ~x)
KEL_UNARY_INT(lnot, !x)

/* Not on bool's bytes (the widening path: 2 ns an element) */
static void lnot_b8(const uint8_t *x, uint8_t *y, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = x[i] == 0;
}

#define FLOAT_OP(name) static const struct kel_unop op_##name = \
	{ name##_f32, name##_f64, NULL, 0, NULL }
#define NUM_OP(name) static const struct kel_unop op_##name = \
	{ name##_f32, name##_f64, name##_i64, 0, NULL }
#define KERNEL(name) static int k_##name(struct rt_kctx *k) \
	{ return kel_unary(k, &op_##name, &no_par); }

NUM_OP(abs);
NUM_OP(neg);
NUM_OP(sign);
FLOAT_OP(ceil);
FLOAT_OP(floor);
FLOAT_OP(round);
FLOAT_OP(recip);
FLOAT_OP(sqrt);
/* Exp sixteen at a time where the CPU has AVX-512 (k_act512.c), else exp
 * in double rounded */
static void exp_fast_f32(const float *x, float *y, int64_t n, const struct kel_par *p)
{
	if (!kel_exp512(x, y, n))
		exp_f32(x, y, n, p);
}
static const struct kel_unop op_exp = { exp_fast_f32, exp_f64, NULL, 0, NULL };
FLOAT_OP(log);
/* Sin and Cos in a loop the compiler vectorizes (k_trig.c) */
static void sin_fast_f32(const float *x, float *y, int64_t n, const struct kel_par *p)
{
	(void)p;
	kel_sincos_f32(x, y, n, 0);
}
static void cos_fast_f32(const float *x, float *y, int64_t n, const struct kel_par *p)
{
	(void)p;
	kel_sincos_f32(x, y, n, 1);
}
static const struct kel_unop op_sin = { sin_fast_f32, sin_f64, NULL, 0, NULL };
static const struct kel_unop op_cos = { cos_fast_f32, cos_f64, NULL, 0, NULL };
FLOAT_OP(tan);
FLOAT_OP(asin);
FLOAT_OP(acos);
/* Atan sixteen at a time where the CPU has AVX-512 (k_math512.c), else
 * atan in double rounded */
static void atan_fast_f32(const float *x, float *y, int64_t n, const struct kel_par *p)
{
	if (!kel_atan512(x, y, n))
		atan_f32(x, y, n, p);
}
static const struct kel_unop op_atan = { atan_fast_f32, atan_f64, NULL, 0, NULL };
FLOAT_OP(sinh);
FLOAT_OP(cosh);
/* Tanh: sixteen at a time where the CPU has AVX-512 (k_act512.c, within
 * a few ulp of tanh in double, as the recurrent cells use it), else
 * tanh in double rounded: a transformer's GELU in tanh form spent 10 ms
 * of a ViT-Tiny's 25 in libm's tanh, onnxruntime 0.2. */
static void tanh_fast_f32(const float *x, float *y, int64_t n, const struct kel_par *p)
{
	if (!kel_tanh512(x, y, n))
		tanh_f32(x, y, n, p);
}
static const struct kel_unop op_tanh = { tanh_fast_f32, tanh_f64, NULL, 0, NULL };
FLOAT_OP(asinh);
FLOAT_OP(acosh);
FLOAT_OP(atanh);
NUM_OP(erf);
static const struct kel_unop op_bnot = { NULL, NULL, bnot_i64, 0, NULL };

KERNEL(abs)
KERNEL(neg)
KERNEL(sign)
KERNEL(ceil)
KERNEL(floor)
KERNEL(round)
KERNEL(recip)
KERNEL(sqrt)
KERNEL(exp)
KERNEL(log)
KERNEL(sin)
KERNEL(cos)
KERNEL(tan)
KERNEL(asin)
KERNEL(acos)
KERNEL(atan)
KERNEL(sinh)
KERNEL(cosh)
KERNEL(tanh)
KERNEL(asinh)
KERNEL(acosh)
KERNEL(atanh)
KERNEL(erf)
KERNEL(bnot)

static int k_not(struct rt_kctx *k)
{
	static const struct kel_unop op = { NULL, NULL, lnot_i64, 1, lnot_b8 };
	struct rt_value *x;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (x->dtype != IR_DTYPE_BOOL)
		return kel_bad_dtype(k, x->dtype);
	return kel_unary(k, &op, &no_par);
}

/* IsInf / IsNaN: a float tensor to bool. */
static int classify(struct rt_kctx *k, int nan)
{
	int pos = (int)rt_attr_int(k, "detect_positive", 1);
	int neg = (int)rt_attr_int(k, "detect_negative", 1);
	struct rt_value *x, *y;
	uint8_t *o;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (!rt_dtype_is_float(x->dtype))
		return kel_bad_dtype(k, x->dtype);
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_BOOL, x->rank, x->dims)))
		return IR_ENOMEM;
	o = y->data;
	for (int64_t i = 0; i < x->numel; i++) {
		double v = rt_load_f64(x->dtype, x->data, i);

		o[i] = nan ? isnan(v) != 0 :
		       isinf(v) && (v > 0 ? pos : neg);
	}
	return 0;
}

static int k_isinf(struct rt_kctx *k)
{
	return classify(k, 0);
}

static int k_isnan(struct rt_kctx *k)
{
	return classify(k, 1);
}

const struct rt_kernel rt_kernels_elem[] = {
	{ "ai.onnx", "Abs", 1, RT_OPEN, k_abs },
	{ "ai.onnx", "Acos", 7, RT_OPEN, k_acos },
	{ "ai.onnx", "Acosh", 9, RT_OPEN, k_acosh },
	{ "ai.onnx", "Asin", 7, RT_OPEN, k_asin },
	{ "ai.onnx", "Asinh", 9, RT_OPEN, k_asinh },
	{ "ai.onnx", "Atan", 7, RT_OPEN, k_atan },
	{ "ai.onnx", "Atanh", 9, RT_OPEN, k_atanh },
	{ "ai.onnx", "BitwiseNot", 18, RT_OPEN, k_bnot },
	{ "ai.onnx", "Ceil", 1, RT_OPEN, k_ceil },
	{ "ai.onnx", "Cos", 7, RT_OPEN, k_cos },
	{ "ai.onnx", "Cosh", 9, RT_OPEN, k_cosh },
	{ "ai.onnx", "Erf", 9, RT_OPEN, k_erf },
	{ "ai.onnx", "Exp", 1, RT_OPEN, k_exp },
	{ "ai.onnx", "Floor", 1, RT_OPEN, k_floor },
	{ "ai.onnx", "IsInf", 10, RT_OPEN, k_isinf },
	{ "ai.onnx", "IsNaN", 9, RT_OPEN, k_isnan },
	{ "ai.onnx", "Log", 1, RT_OPEN, k_log },
	{ "ai.onnx", "Neg", 1, RT_OPEN, k_neg },
	{ "ai.onnx", "Not", 1, RT_OPEN, k_not },
	{ "ai.onnx", "Reciprocal", 1, RT_OPEN, k_recip },
	{ "ai.onnx", "Round", 11, RT_OPEN, k_round },
	{ "ai.onnx", "Sign", 9, RT_OPEN, k_sign },
	{ "ai.onnx", "Sin", 7, RT_OPEN, k_sin },
	{ "ai.onnx", "Sinh", 9, RT_OPEN, k_sinh },
	{ "ai.onnx", "Sqrt", 1, RT_OPEN, k_sqrt },
	{ "ai.onnx", "Tan", 7, RT_OPEN, k_tan },
	{ "ai.onnx", "Tanh", 1, RT_OPEN, k_tanh },
};
const size_t rt_n_kernels_elem = sizeof(rt_kernels_elem) / sizeof(rt_kernels_elem[0]);
