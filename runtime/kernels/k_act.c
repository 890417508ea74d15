/* k_act.c: activation kernels on the unary and binary engines of
 * k_elem_int.h: Relu and its variants, sigmoid-like and exponential
 * units, Gelu (ai.onnx and the com.microsoft forms), Clip (attributes
 * before opset 11, inputs after), Shrink, PRelu and SwiGLU. */
#include <float.h>
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

#include "runtime/kernels/k_elem_int.h"

#define SQRT1_2 0.70710678118654752440
#define SQRT2_PI 0.79788456080286535588

/* ---- the formulas (p->a, p->b, p->c: attributes) ------------------- */

KEL_UNARY_FLOAT(relu, x < 0 ? 0 : x)
KEL_UNARY_INT(relu, !p->uns && x < 0 ? 0 : x)
KEL_UNARY_FLOAT(leaky, x < 0 ? p->a * x : x)
KEL_UNARY_FLOAT(sigmoid, x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x)))
/* max(0, min(1, v)) as comparisons, which vectorize (libm's fmin and fmax
 * were called element by element); a NaN v gives 1, as fmin's does */
#define UNIT_CLAMP(v) ((v) < 1 ? ((v) > 0 ? (v) : 0) : 1)
KEL_UNARY_FLOAT(hsigmoid, UNIT_CLAMP((T)p->a * x + (T)p->b))
KEL_UNARY_FLOAT(hswish, x * UNIT_CLAMP(x / 6 + (T)0.5))
KEL_UNARY_FLOAT(elu, x < 0 ? (T)p->a * expm1(x) : x)
/* alpha e^x - alpha as alpha (e^x - 1): in float32 the difference lost
 * digits near 0 (1e-5 relative at -0.008); a zero of either sign gives
 * +0, as the difference does; k_act512.c's vectors the same */
KEL_UNARY_FLOAT(selu, x < 0 ? (T)p->b * ((T)p->a * expm1(x)) : x == 0 ? (T)0 : (T)p->b * x)
KEL_UNARY_FLOAT(celu, fmax((T)0, x) + fmin((T)0, (T)p->a * expm1(x / (T)p->a)))
KEL_UNARY_FLOAT(softplus, x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)))
KEL_UNARY_FLOAT(softsign, x / (1 + fabs(x)))
KEL_UNARY_FLOAT(mish, x * tanh(x > 0 ? x + log1p(exp(-x)) : log1p(exp(x))))
/* GELU in double (float32: gelu_fast_f32 below) */
static void gelu_f64(const double *xs, double *ys, int64_t n, const struct kel_par *p)
{
	(void)p;
	for (int64_t i = 0; i < n; i++)
		ys[i] = 0.5 * xs[i] * (1 + erf(xs[i] * SQRT1_2));
}
KEL_UNARY_FLOAT(gelu_tanh, (T)0.5 * x * (1 + tanh((T)SQRT2_PI * (x + (T)0.044715 * x * x * x))))
KEL_UNARY_FLOAT(swish, x * ((T)p->a * x >= 0 ? 1 / (1 + exp(-(T)p->a * x)) :
			    exp((T)p->a * x) / (1 + exp((T)p->a * x))))
KEL_UNARY_FLOAT(threlu, x > (T)p->a ? x : 0)
KEL_UNARY_FLOAT(shrink, x < -(T)p->b ? x + (T)p->a : x > (T)p->b ? x - (T)p->a : 0)
/* Shrink on integers: computed in double, back with saturation. */
static int64_t shrink_one(int64_t x, const struct kel_par *p)
{
	double v = p->uns ? (double)(uint64_t)x : (double)x;

	v = v < -(double)p->b ? v + p->a : v > (double)p->b ? v - p->a : 0;
	if (p->uns)
		return v <= 0 ? 0 : v >= 1.8446744073709552e19 ? -1 :
		       (int64_t)(uint64_t)v;
	return v >= 9.2233720368547758e18 ? INT64_MAX :
	       v <= -9.2233720368547758e18 ? INT64_MIN : (int64_t)v;
}
KEL_UNARY_INT(shrink, shrink_one(x, p))
/* Clip: max with the lower bound, then min with the upper (numpy's
 * order: min > max gives max everywhere); NaN stays NaN */
KEL_UNARY_FLOAT(clip, (x < (T)p->lo ? (T)p->lo : x) > (T)p->hi ? (T)p->hi :
		      (x < (T)p->lo ? (T)p->lo : x))
static int64_t clip_one(int64_t x, const struct kel_par *p)
{
	if (p->uns) {
		if ((p->mode & 1) && (uint64_t)x < (uint64_t)p->ilo)
			x = p->ilo;
		if ((p->mode & 2) && (uint64_t)x > (uint64_t)p->ihi)
			x = p->ihi;
	} else {
		if ((p->mode & 1) && x < p->ilo)
			x = p->ilo;
		if ((p->mode & 2) && x > p->ihi)
			x = p->ihi;
	}
	return x;
}
KEL_UNARY_INT(clip, clip_one(x, p))

#define FLOAT_OP(name) static const struct kel_unop op_##name = \
	{ name##_f32, name##_f64, NULL, 0, NULL }
FLOAT_OP(leaky);
FLOAT_OP(hsigmoid);
FLOAT_OP(hswish);
/* Elu and Selu sixteen at a time where the CPU has AVX-512 (k_act512.c),
 * else the loops above; NaN stays NaN either way */
static void elu_fast_f32(const float *x, float *y, int64_t n, const struct kel_par *p)
{
	if (!p || !kel_elu512(x, y, n, (float)p->a, 0.0f, 0))
		elu_f32(x, y, n, p);
}

static void selu_fast_f32(const float *x, float *y, int64_t n, const struct kel_par *p)
{
	if (!p || !kel_elu512(x, y, n, (float)p->a, (float)p->b, 1))
		selu_f32(x, y, n, p);
}
static const struct kel_unop op_elu = { elu_fast_f32, elu_f64, NULL, 0, NULL };
static const struct kel_unop op_selu = { selu_fast_f32, selu_f64, NULL, 0, NULL };
FLOAT_OP(celu);
FLOAT_OP(softplus);
FLOAT_OP(softsign);
/* Mish sixteen at a time where the CPU has AVX-512 (k_act512.c), else
 * the loop above */
static void mish_fast_f32(const float *x, float *y, int64_t n, const struct kel_par *p)
{
	if (!kel_mish512(x, y, n))
		mish_f32(x, y, n, p);
}
static const struct kel_unop op_mish = { mish_fast_f32, mish_f64, NULL, 0, NULL };
/* GELU in float32 a block at a time: the inner argument as the loops
 * above compute it, then the Erf kernel's erf (kel_erf_f32, as a GELU
 * written as nodes gets) or tanh in AVX-512 (kel_tanh512, as the Tanh
 * kernel's), then the product; libm's erff and tanhf element by element
 * were 6.7x onnxruntime for the tanh form (Gelu-20, FastGelu). */
static void gelu_fast_f32(const float *x, float *y, int64_t n, const struct kel_par *p)
{
	float t[256];

	for (int64_t i = 0; i < n; i += 256) {
		int64_t m = n - i < 256 ? n - i : 256;

		for (int64_t j = 0; j < m; j++)
			t[j] = x[i + j] * (float)SQRT1_2;
		kel_erf_f32(t, t, m);
		for (int64_t j = 0; j < m; j++)
			y[i + j] = 0.5f * x[i + j] * (1 + t[j]);
	}
	(void)p;
}

static void gelu_tanh_fast_f32(const float *x, float *y, int64_t n, const struct kel_par *p)
{
	float t[256];

	for (int64_t i = 0; i < n; i += 256) {
		int64_t m = n - i < 256 ? n - i : 256;

		for (int64_t j = 0; j < m; j++) {
			float v = x[i + j];

			t[j] = (float)SQRT2_PI * (v + 0.044715f * v * v * v);
		}
		/* without AVX-512: the loop above, libm's tanhf */
		if (!kel_tanh512(t, t, m)) {
			gelu_tanh_f32(x + i, y + i, m, p);
			continue;
		}
		for (int64_t j = 0; j < m; j++)
			y[i + j] = 0.5f * x[i + j] * (1 + t[j]);
	}
}

static const struct kel_unop op_gelu = { gelu_fast_f32, gelu_f64, NULL, 0, NULL };
static const struct kel_unop op_gelu_tanh = { gelu_tanh_fast_f32, gelu_tanh_f64, NULL, 0, NULL };
FLOAT_OP(threlu);

/* Sigmoid and Swish: sixteen at a time where the CPU has AVX-512
 * (k_act512.c), else the loops above */
static void sigmoid_fast_f32(const float *x, float *y, int64_t n, const struct kel_par *p)
{
	if (!kel_sigmoid512(x, y, n, 1.0f, 0))
		sigmoid_f32(x, y, n, p);
}

static void swish_fast_f32(const float *x, float *y, int64_t n, const struct kel_par *p)
{
	if (!kel_sigmoid512(x, y, n, (float)p->a, 1))
		swish_f32(x, y, n, p);
}

void rt_silu_f32(const float *x, float *y, int64_t n)
{
	float s[256];

	if (kel_sigmoid512(x, y, n, 1.0f, 1))
		return;
	for (int64_t i = 0; i < n; i += 256) {
		int64_t m = n - i < 256 ? n - i : 256;

		sigmoid_f32(x + i, s, m, NULL);
		for (int64_t j = 0; j < m; j++)
			y[i + j] = x[i + j] * s[j];
	}
}

void rt_silu_round(float *y, int64_t n, int dtype)
{
	float s[256];

	for (int64_t i = 0; i < n; i += 256) {
		int64_t m = n - i < 256 ? n - i : 256;

		sigmoid_fast_f32(y + i, s, m, NULL);
		rt_float_round_n(s, m, dtype);
		for (int64_t j = 0; j < m; j++)
			y[i + j] *= s[j];
		rt_float_round_n(y + i, m, dtype);
	}
}

static const struct kel_unop op_sigmoid = { sigmoid_fast_f32, sigmoid_f64, NULL, 0, NULL };
static const struct kel_unop op_swish = { swish_fast_f32, swish_f64, NULL, 0, NULL };
static const struct kel_unop op_relu = { relu_f32, relu_f64, relu_i64, 0, NULL };
static const struct kel_unop op_shrink = { shrink_f32, shrink_f64, shrink_i64, 0, NULL };
static const struct kel_unop op_clip = { clip_f32, clip_f64, clip_i64, 0, NULL };

/* One float attribute (schema default) in p.a, an optional second in p.b. */
static int unary1(struct rt_kctx *k, const struct kel_unop *op,
		  const char *a, float da, const char *b, float db)
{
	struct kel_par p;

	memset(&p, 0, sizeof(p));
	if (a)
		p.a = kel_attr_float(k, a, da);
	if (b)
		p.b = kel_attr_float(k, b, db);
	return kel_unary(k, op, &p);
}

static int k_relu(struct rt_kctx *k) { return unary1(k, &op_relu, NULL, 0, NULL, 0); }
static int k_leaky(struct rt_kctx *k) { return unary1(k, &op_leaky, "alpha", 0.01f, NULL, 0); }
static int k_sigmoid(struct rt_kctx *k) { return unary1(k, &op_sigmoid, NULL, 0, NULL, 0); }
static int k_hsigmoid(struct rt_kctx *k)
{
	return unary1(k, &op_hsigmoid, "alpha", 0.2f, "beta", 0.5f);
}
static int k_hswish(struct rt_kctx *k) { return unary1(k, &op_hswish, NULL, 0, NULL, 0); }
static int k_elu(struct rt_kctx *k) { return unary1(k, &op_elu, "alpha", 1.0f, NULL, 0); }
static int k_selu(struct rt_kctx *k)
{
	/* the schema's text defaults are rounded ("1.67326"); opset 1's
	 * defaults were float(1.6732) and float(1.0507) */
	struct kel_par p;

	memset(&p, 0, sizeof(p));
	p.a = rt_attr_float(k, "alpha", k->version < 6 ? 1.6732f :
			    1.67326319217681884765625f);
	p.b = rt_attr_float(k, "gamma", k->version < 6 ? 1.0507f :
			    1.05070102214813232421875f);
	return kel_unary(k, &op_selu, &p);
}
static int k_celu(struct rt_kctx *k) { return unary1(k, &op_celu, "alpha", 1.0f, NULL, 0); }
static int k_softplus(struct rt_kctx *k) { return unary1(k, &op_softplus, NULL, 0, NULL, 0); }
static int k_softsign(struct rt_kctx *k) { return unary1(k, &op_softsign, NULL, 0, NULL, 0); }
static int k_mish(struct rt_kctx *k) { return unary1(k, &op_mish, NULL, 0, NULL, 0); }
static int k_swish(struct rt_kctx *k) { return unary1(k, &op_swish, "alpha", 1.0f, NULL, 0); }
static int k_threlu(struct rt_kctx *k) { return unary1(k, &op_threlu, "alpha", 1.0f, NULL, 0); }
static int k_shrink(struct rt_kctx *k)
{
	return unary1(k, &op_shrink, "bias", 0.0f, "lambd", 0.5f);
}
static int k_ms_gelu(struct rt_kctx *k) { return unary1(k, &op_gelu, NULL, 0, NULL, 0); }
static int k_quick_gelu(struct rt_kctx *k)
{
	return unary1(k, &op_swish, "alpha", 1.702f, NULL, 0);
}

static int k_gelu(struct rt_kctx *k)
{
	const char *mode = rt_attr_str(k, "approximate", "none");

	if (!strcmp(mode, "tanh"))
		return unary1(k, &op_gelu_tanh, NULL, 0, NULL, 0);
	if (strcmp(mode, "none"))
		return rt_err(k, "approximate must be 'none' or 'tanh', not '%s'", mode);
	return unary1(k, &op_gelu, NULL, 0, NULL, 0);
}

/* ---- Clip ---------------------------------------------------------------- */

/* Bound i (1: min, 2: max) from an input (opset >= 11) into p. */
static int clip_bound(struct rt_kctx *k, size_t i, const struct rt_value *x,
		      struct kel_par *p)
{
	struct rt_value *b = rt_in(k, i);

	if (!b)
		return 0;
	if (b->kind != RT_TENSOR || b->dtype != x->dtype || b->numel != 1)
		return rt_err(k, "input %zu must be one %s", i, ir_dtype_name(x->dtype));
	if (rt_dtype_is_float(x->dtype)) {
		double v = rt_load_f64(x->dtype, b->data, 0);

		if (i == 1)
			p->lo = v;
		else
			p->hi = v;
	} else {
		int64_t v = rt_load_i64(x->dtype, b->data, 0);

		if (i == 1)
			p->ilo = v;
		else
			p->ihi = v;
	}
	p->mode |= (int)i;
	return 0;
}

static int k_clip(struct rt_kctx *k)
{
	struct kel_par p;
	struct rt_value *x;
	int rc;

	memset(&p, 0, sizeof(p));
	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	/* an absent bound is the attribute's default (before 11) or the
	 * dtype's lowest/max (from 11): infinities are clamped to it */
	p.lo = -FLT_MAX;
	p.hi = FLT_MAX;
	if (k->version >= 11 && x->dtype == IR_DTYPE_DOUBLE) {
		p.lo = -DBL_MAX;
		p.hi = DBL_MAX;
	} else if (k->version >= 11 && x->dtype == IR_DTYPE_FLOAT16) {
		p.lo = -65504.0;
		p.hi = 65504.0;
	} else if (k->version >= 11 && x->dtype == IR_DTYPE_BFLOAT16) {
		p.lo = -0x1.fep127;
		p.hi = 0x1.fep127;
	}
	if (k->version < 11) {
		if (rt_attr(k, "min"))
			p.lo = rt_attr_float(k, "min", 0);
		if (rt_attr(k, "max"))
			p.hi = rt_attr_float(k, "max", 0);
	} else if ((rc = clip_bound(k, 1, x, &p)) < 0 ||
		   (rc = clip_bound(k, 2, x, &p)) < 0) {
		return rc;
	}
	return kel_unary(k, &op_clip, &p);
}

/* ---- PRelu, bias forms, SwiGLU --------------------------------------- */

static int64_t prelu_i(int64_t a, int64_t b, const struct kel_par *p)
{
	return !p->uns && a < 0 ? (int64_t)((uint64_t)a * (uint64_t)b) : a;
}

KEL_BINARY_FLOAT(prelu, x0 < 0 ? x0 * x1 : x0)
KEL_BINARY_FLOAT(mul, x0 * x1)
KEL_BINARY_FLOAT(add, x0 + x1)

static const struct kel_par no_par;

static int k_prelu(struct rt_kctx *k)
{
	static const struct kel_binop op = { prelu_f32, prelu_f64, prelu_i, 0, 0, NULL };
	struct rt_value *x, *s, view, *ts[2], *y;
	int64_t dims[RT_MAX_RANK];
	int rank, rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &s)) < 0)
		return rc;
	ts[0] = x;
	ts[1] = s;
	/* opset < 7: a 1-D slope of C values applies along axis 1 */
	if (k->version < 7 && s->rank == 1 && x->rank >= 2 && s->numel > 1 &&
	    s->dims[0] == x->dims[1]) {
		memcpy(&view, s, sizeof(view));
		view.rank = x->rank - 1;
		for (int i = 0; i < view.rank; i++)
			view.dims[i] = i == 0 ? s->dims[0] : 1;
		ts[1] = &view;
	}
	if ((rc = rt_broadcast_shape(k, ts, 2, &rank, dims)) < 0)
		return rc;
	if (rank != x->rank || rt_numel(rank, dims) != x->numel)
		return rt_err(k, "slope does not broadcast to the input's shape");
	if (!(y = rt_out_tensor(k, 0, x->dtype, rank, dims)))
		return IR_ENOMEM;
	return kel_binary_into(k, &op, &no_par, x, ts[1], y);
}

/* Output 0 = act(input 0 + input 1) (input 1 optional); narrow floats
 * go through float so the sum is not rounded before act. */
static int bias_act(struct rt_kctx *k, const struct kel_unop *op)
{
	static const struct kel_binop add = { add_f32, add_f64, NULL, 0, 0, NULL };
	struct rt_value *x, *b = rt_in(k, 1), *y, *ts[2];
	struct rt_value *x32 = NULL, *b32 = NULL, *y32 = NULL;
	struct ir_diag sub;
	int64_t dims[RT_MAX_RANK];
	int rank, rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (!b)
		return kel_unary(k, op, &no_par);
	ts[0] = x;
	ts[1] = b;
	if ((rc = rt_broadcast_shape(k, ts, 2, &rank, dims)) < 0)
		return rc;
	if (!(y = rt_out_tensor(k, 0, x->dtype, rank, dims)))
		return IR_ENOMEM;
	if (!kel_is_narrow_float(x->dtype) || b->dtype != x->dtype) {
		if ((rc = kel_binary_into(k, &add, &no_par, x, b, y)) < 0)
			return rc;
		return kel_unary_on(k, op, &no_par, y, y);
	}
	ir_diag_init(&sub);
	if (rt_tensor_cast(k->mem, x, IR_DTYPE_FLOAT, &x32, &sub) < 0 ||
	    rt_tensor_cast(k->mem, b, IR_DTYPE_FLOAT, &b32, &sub) < 0 ||
	    rt_tensor_new(k->mem, IR_DTYPE_FLOAT, rank, dims, &y32, &sub) < 0) {
		rc = rt_err(k, "%s", sub.msg);
		goto cleanup;
	}
	if ((rc = kel_binary_into(k, &add, &no_par, x32, b32, y32)) < 0 ||
	    (rc = kel_unary_on(k, op, &no_par, y32, y32)) < 0)
		goto cleanup;
	for (int64_t i = 0; i < y->numel; i++)
		rt_store_f64(y->dtype, y->data, i, ((const float *)y32->data)[i]);
cleanup:
	rt_value_unref(x32);
	rt_value_unref(b32);
	rt_value_unref(y32);
	return rc;
}

static int k_bias_gelu(struct rt_kctx *k) { return bias_act(k, &op_gelu); }
static int k_fast_gelu(struct rt_kctx *k) { return bias_act(k, &op_gelu_tanh); }

static int k_swiglu(struct rt_kctx *k)
{
	static const struct kel_binop mul = { mul_f32, mul_f64, NULL, 0, 0, NULL };
	struct rt_value *a, *b, *y, *a32 = NULL, *b32 = NULL, *y32 = NULL;
	struct ir_diag sub;
	struct kel_par p;
	int rc;

	memset(&p, 0, sizeof(p));
	if ((rc = rt_in_tensor(k, 0, &a)) < 0 || (rc = rt_in_tensor(k, 1, &b)) < 0)
		return rc;
	if (a->rank != b->rank ||
	    memcmp(a->dims, b->dims, (size_t)a->rank * sizeof(a->dims[0])))
		return rt_err(k, "A and B must have the same shape");
	p.a = kel_attr_float(k, "alpha", 1.0f);
	if (!(y = rt_out_tensor(k, 0, a->dtype, a->rank, a->dims)))
		return IR_ENOMEM;
	if (!kel_is_narrow_float(a->dtype) || b->dtype != a->dtype) {
		if ((rc = kel_unary_on(k, &op_swish, &p, a, y)) < 0)
			return rc;
		return kel_binary_into(k, &mul, &no_par, y, b, y);
	}
	/* narrow floats: one rounding at the end */
	ir_diag_init(&sub);
	if (rt_tensor_cast(k->mem, a, IR_DTYPE_FLOAT, &a32, &sub) < 0 ||
	    rt_tensor_cast(k->mem, b, IR_DTYPE_FLOAT, &b32, &sub) < 0 ||
	    rt_tensor_new(k->mem, IR_DTYPE_FLOAT, a->rank, a->dims, &y32, &sub) < 0) {
		rc = rt_err(k, "%s", sub.msg);
		goto cleanup;
	}
	if ((rc = kel_unary_on(k, &op_swish, &p, a32, y32)) < 0 ||
	    (rc = kel_binary_into(k, &mul, &no_par, y32, b32, y32)) < 0)
		goto cleanup;
	for (int64_t i = 0; i < y->numel; i++)
		rt_store_f64(y->dtype, y->data, i, ((const float *)y32->data)[i]);
cleanup:
	rt_value_unref(a32);
	rt_value_unref(b32);
	rt_value_unref(y32);
	return rc;
}

const struct rt_kernel rt_kernels_act[] = {
	{ "ai.onnx", "Celu", 12, RT_OPEN, k_celu },
	{ "ai.onnx", "Clip", 1, RT_OPEN, k_clip },
	{ "ai.onnx", "Elu", 1, RT_OPEN, k_elu },
	{ "ai.onnx", "Gelu", 20, RT_OPEN, k_gelu },
	{ "ai.onnx", "HardSigmoid", 1, RT_OPEN, k_hsigmoid },
	{ "ai.onnx", "HardSwish", 14, RT_OPEN, k_hswish },
	{ "ai.onnx", "LeakyRelu", 1, RT_OPEN, k_leaky },
	{ "ai.onnx", "Mish", 18, RT_OPEN, k_mish },
	{ "ai.onnx", "PRelu", 1, RT_OPEN, k_prelu },
	{ "ai.onnx", "Relu", 1, RT_OPEN, k_relu },
	{ "ai.onnx", "Selu", 1, RT_OPEN, k_selu },
	{ "ai.onnx", "Shrink", 9, RT_OPEN, k_shrink },
	{ "ai.onnx", "Sigmoid", 1, RT_OPEN, k_sigmoid },
	{ "ai.onnx", "Softplus", 1, RT_OPEN, k_softplus },
	{ "ai.onnx", "Softsign", 1, RT_OPEN, k_softsign },
	{ "ai.onnx", "SwiGLU", 28, RT_OPEN, k_swiglu },
	{ "ai.onnx", "Swish", 24, RT_OPEN, k_swish },
	{ "ai.onnx", "ThresholdedRelu", 10, RT_OPEN, k_threlu },
	{ "com.microsoft", "BiasGelu", 1, RT_OPEN, k_bias_gelu },
	{ "com.microsoft", "FastGelu", 1, RT_OPEN, k_fast_gelu },
	{ "com.microsoft", "Gelu", 1, RT_OPEN, k_ms_gelu },
	{ "com.microsoft", "QuickGelu", 1, RT_OPEN, k_quick_gelu },
};
const size_t rt_n_kernels_act = sizeof(rt_kernels_act) / sizeof(rt_kernels_act[0]);
