/* k_act512.c: Sigmoid, x * sigmoid(a x) (Swish, SiLU, QuickGelu) and tanh of a
 * float32 span in AVX-512, for k_act.c's loops, which call libm's expf
 * element by element (a U2-Net's output Sigmoid over 16 channels at
 * 1024x1024 took 50 ms of that).  The same formulas: with t = a x and
 * e = exp(-|t|) (knn_exp512, within one ulp), sigmoid(t) is 1 / (1 + e)
 * for t >= 0 and e / (1 + e) below, so within a few ulp of the libm
 * loop's result; a NaN stays NaN, +-inf give 1 and 0. */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "runtime/kernels/k_elem_int.h"
#include "runtime/kernels/k_exp512.h"
#include "runtime/kernels/pgemm.h"

__attribute__((target("avx512f")))
static void sig512(const float *x, float *y, int64_t n, float alpha, int times_x)
{
	const __m512 a = _mm512_set1_ps(alpha);

	for (int64_t i = 0; i < n; i += 16) {
		__mmask16 m = knn_lanes16(n - i);
		__m512 v = _mm512_maskz_loadu_ps(m, x + i);
		__m512 s = knn_sigmoid512(_mm512_mul_ps(v, a));

		_mm512_mask_storeu_ps(y + i, m, times_x ? _mm512_mul_ps(v, s) : s);
	}
}

int kel_sigmoid512(const float *x, float *y, int64_t n, float alpha, int times_x)
{
	if (n < 1 || !rt_cpu_avx512f())
		return 0;
	sig512(x, y, n, alpha, times_x);
	return 1;
}

/* tanh of a span (knn_tanh512, k_exp512.h) */
__attribute__((target("avx512f")))
static void tanh512(const float *x, float *y, int64_t n)
{
	for (int64_t i = 0; i < n; i += 16) {
		__mmask16 m = knn_lanes16(n - i);

		_mm512_mask_storeu_ps(y + i, m, knn_tanh512(_mm512_maskz_loadu_ps(m, x + i)));
	}
}

int kel_tanh512(const float *x, float *y, int64_t n)
{
	if (n < 1 || !rt_cpu_avx512f())
		return 0;
	tanh512(x, y, n);
	return 1;
}

/* Exp: knn_exp512 of x clamped to 89 (past ln FLT_MAX, so +inf; a NaN
 * kept), within one ulp of exp in double rounded (every float of [-87.3,
 * 89] checked); libm's exp in double element by element took 2 ns a value
 * (a Mamba-style model's segment sums 4 ms a run).  Below FLT_MIN's log,
 * whose results are subnormal or zero, 0 at or below -104 and exp in
 * double rounded above it, lane by lane: a vector scaling into the
 * subnormals or past them costs each lane a microcode assist (those
 * segment sums, a causal mask's -inf among them, 4 -> 6.6 ms). */
#define EXP_SUBNORMAL (-87.33654f)   /* ln FLT_MIN, a little below */

__attribute__((target("avx512f")))
static void exp512(const float *x, float *y, int64_t n)
{
	const __m512 hi = _mm512_set1_ps(89.0f), lo = _mm512_set1_ps(EXP_SUBNORMAL);

	for (int64_t i = 0; i < n; i += 16) {
		__mmask16 m = knn_lanes16(n - i);
		__m512 v = _mm512_maskz_loadu_ps(m, x + i);
		__mmask16 low = _mm512_mask_cmp_ps_mask(m, v, lo, _CMP_LT_OQ);
		__mmask16 zero = _mm512_mask_cmp_ps_mask(m, v, _mm512_set1_ps(-104.0f), _CMP_LE_OQ);
		__mmask16 sub = low & (__mmask16)~zero;
		float keep[16];

		if (sub)   /* (y may be x) */
			_mm512_storeu_ps(keep, v);
		/* min(89, v) gives its second operand, v, when v is NaN; the
		 * lanes below lo computed at lo, then 0 (at or below -104: e^x
		 * under half the least subnormal, a masked -inf too) or redone */
		v = _mm512_mask_mov_ps(v, low, lo);
		_mm512_mask_storeu_ps(y + i, m, _mm512_mask_mov_ps(knn_exp512(_mm512_min_ps(hi, v)),
								   zero, _mm512_setzero_ps()));
		for (; sub; sub &= (__mmask16)(sub - 1)) {
			int l = __builtin_ctz(sub);

			y[i + l] = (float)exp((double)keep[l]);
		}
	}
}

int kel_exp512(const float *x, float *y, int64_t n)
{
	if (n < 1 || !rt_cpu_avx512f())
		return 0;
	exp512(x, y, n);
	return 1;
}

/* Mish, x tanh(softplus(x)), with e = e^-|x| (knn_exp512, within an ulp):
 * tanh(ln(1 + n)) = n (n + 2) / (n (n + 2) + 2) for n = e^x, that is
 * (1 + 2e) / (1 + 2e + 2e^2) for x >= 0 and e (e + 2) / (e (e + 2) + 2)
 * below: no cancellation either side; a few ulp of the double result
 * (libm's tanh, log1p and exp in double element by element were 2.7x
 * onnxruntime). */
__attribute__((target("avx512f")))
static void mish512(const float *x, float *y, int64_t n)
{
	const __m512 one = _mm512_set1_ps(1.0f), two = _mm512_set1_ps(2.0f);

	for (int64_t i = 0; i < n; i += 16) {
		__mmask16 m = knn_lanes16(n - i);
		__m512 v = _mm512_maskz_loadu_ps(m, x + i);
		__m512 e = knn_exp512(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_abs_ps(v)));
		__mmask16 pos = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GE_OQ);
		__m512 p = _mm512_fmadd_ps(two, e, one);                   /* 1 + 2e */
		__m512 tp = _mm512_div_ps(p, _mm512_fmadd_ps(_mm512_mul_ps(two, e), e, p));
		__m512 q = _mm512_mul_ps(e, _mm512_add_ps(e, two));       /* e (e + 2) */
		__m512 tn = _mm512_div_ps(q, _mm512_add_ps(q, two));

		_mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(v, _mm512_mask_mov_ps(tn, pos, tp)));
	}
}

int kel_mish512(const float *x, float *y, int64_t n)
{
	if (n < 1 || !rt_cpu_avx512f())
		return 0;
	mish512(x, y, n);
	return 1;
}

/* e^x - 1 for x <= 0: e^x - 1 (knn_exp512) where e^x <= 0.7 (no
 * cancellation: a few ulp), Taylor's polynomial to x^9 / 9! on (-0.36,
 * 0] (the remainder below 1e-9 of the value), in fused multiply-adds */
__attribute__((target("avx512f"), always_inline))
static inline __m512 expm1_neg512(__m512 x)
{
	static const float c[9] = { 1.0f / 362880, 1.0f / 40320, 1.0f / 5040, 1.0f / 720,
				    1.0f / 120, 1.0f / 24, 1.0f / 6, 0.5f, 1.0f };
	__m512 p = _mm512_set1_ps(c[0]);
	__mmask16 small = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-0.36f), _CMP_GT_OQ);

	for (int i = 1; i < 9; i++)
		p = _mm512_fmadd_ps(p, x, _mm512_set1_ps(c[i]));
	p = _mm512_mul_ps(p, x);
	return _mm512_mask_mov_ps(_mm512_sub_ps(knn_exp512(x), _mm512_set1_ps(1.0f)), small, p);
}

/* Elu (selu 0: x < 0 ? alpha (e^x - 1) : x) or Selu (selu 1: x <= 0 ?
 * gamma (alpha e^x - alpha) : gamma x), sixteen at a time; libm's expm1
 * and expf element by element were 1.8x and 1.3x onnxruntime (and Selu's
 * alpha e^x - alpha in float32 lost digits near 0, which alpha (e^x - 1)
 * does not) */
__attribute__((target("avx512f")))
static void elu512(const float *x, float *y, int64_t n, float alpha, float gamma, int selu)
{
	const __m512 a = _mm512_set1_ps(alpha), g = _mm512_set1_ps(gamma);

	for (int64_t i = 0; i < n; i += 16) {
		__mmask16 m = knn_lanes16(n - i);
		__m512 v = _mm512_maskz_loadu_ps(m, x + i), neg = _mm512_min_ps(v, _mm512_setzero_ps());
		__m512 r;

		if (selu) {
			__mmask16 lt = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ);

			/* alpha e^x - alpha as alpha (e^x - 1): no cancellation;
			 * a zero of either sign +0, as the difference gives */
			r = _mm512_mul_ps(g, _mm512_mask_mov_ps(v, lt,
								_mm512_mul_ps(a, expm1_neg512(neg))));
			r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(),
								     _CMP_EQ_OQ),
					       _mm512_setzero_ps());
		} else {
			__mmask16 lt = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ);

			r = _mm512_mask_mov_ps(v, lt, _mm512_mul_ps(a, expm1_neg512(neg)));
		}
		_mm512_mask_storeu_ps(y + i, m, r);
	}
}

int kel_elu512(const float *x, float *y, int64_t n, float alpha, float gamma, int selu)
{
	if (n < 1 || !rt_cpu_avx512f())
		return 0;
	elu512(x, y, n, alpha, gamma, selu);
	return 1;
}
