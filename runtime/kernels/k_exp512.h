/* k_exp512.h: e^d in AVX-512 for the kernels that need it sixteen at a
 * time (k_softmax512.c, k_act512.c).  x = n ln 2 + r with |r| <= ln 2 / 2
 * (ln 2 split in two parts, fused multiply-adds), e^r by Cephes' expf
 * polynomial, times 2^n by scalef (so results below the normal range come
 * out subnormal or zero as they should): within one ulp of the exact
 * value for d <= 0 (every eighth float of [-87, 0] checked against exp in
 * double); a NaN d gives NaN.  Callers check rt_cpu_avx512f() (or
 * rt_pgemm_ok()) first. */
#ifndef OPMIG_K_EXP512_H
#define OPMIG_K_EXP512_H

#include <immintrin.h>
#include <stdint.h>

/* e^d * 2^k for d <= 0 (NaN kept): with k = 64 every e^d that float32
 * holds comes out normal (k_softmax512.c sums and scales them so, without
 * a subnormal's microcode assists) */
__attribute__((target("avx512f"), always_inline))
static inline __m512 knn_exp512_k(__m512 d, int k)
{
	/* below this e^d is 0 in float; max(lo, d) keeps a NaN d */
	__m512 x = _mm512_max_ps(_mm512_set1_ps(-104.0f), d);
	__m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
					_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
	__m512 z, p;

	r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
	z = _mm512_mul_ps(r, r);
	p = _mm512_set1_ps(1.9875691500e-4f);
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
	p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
	/* 1 + (r + r^2 p): one rounding of the sum near 1 */
	p = _mm512_add_ps(_mm512_fmadd_ps(p, z, r), _mm512_set1_ps(1.0f));
	return _mm512_scalef_ps(p, k ? _mm512_add_ps(n, _mm512_set1_ps((float)k)) : n);
}

/* e^d for d <= 0 (NaN kept) */
__attribute__((target("avx512f"), always_inline))
static inline __m512 knn_exp512(__m512 d)
{
	return knn_exp512_k(d, 0);
}

/* sigmoid(t): 1 / (1 + e) for t >= 0 and e / (1 + e) below, e =
 * e^-|t| (k_act512.c's Sigmoid; the epilogue's SiLU step, which must give
 * the same bits) */
__attribute__((target("avx512f"), always_inline))
static inline __m512 knn_sigmoid512(__m512 t)
{
	const __m512 one = _mm512_set1_ps(1.0f);
	__m512 e = knn_exp512(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_abs_ps(t)));
	__mmask16 neg = _mm512_cmp_ps_mask(t, _mm512_setzero_ps(), _CMP_LT_OQ);

	return _mm512_div_ps(_mm512_mask_mov_ps(one, neg, e), _mm512_add_ps(one, e));
}

/* tanh as Cephes' tanhf: x + x^3 P(x^2) below |x| 0.625, else
 * 1 - 2 / (e^(2|x|) + 1) with e^(2|x|) = 1 / e^(-2|x|) (knn_exp512), the
 * sign put back; within a few ulp of tanh in double (suite kelem checks
 * it); +-inf give +-1, a NaN stays NaN.  (k_act512.c's Tanh, k_rnn.c's
 * cells) */
__attribute__((target("avx512f"), always_inline))
static inline __m512 knn_tanh512(__m512 v)
{
	const __m512 one = _mm512_set1_ps(1.0f), two = _mm512_set1_ps(2.0f);
	__m512 a = _mm512_abs_ps(v);
	__m512 z = _mm512_mul_ps(v, v), p = _mm512_set1_ps(-5.70498872745e-3f);
	__m512 e = knn_exp512(_mm512_mul_ps(a, _mm512_set1_ps(-2.0f)));
	/* 1 - 2 e / (1 + e) = 1 - 2 / (1/e + 1) */
	__m512 big = _mm512_sub_ps(one, _mm512_div_ps(_mm512_mul_ps(two, e),
						      _mm512_add_ps(one, e)));
	__mmask16 small = _mm512_cmp_ps_mask(a, _mm512_set1_ps(0.625f), _CMP_LT_OQ);

	p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(2.06390887954e-2f));
	p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-5.37397155531e-2f));
	p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(1.33314422036e-1f));
	p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-3.33332819422e-1f));
	p = _mm512_fmadd_ps(_mm512_mul_ps(p, z), a, a);
	/* both carry |x|'s result: give it x's sign (-0 stays -0, a NaN
	 * stays NaN) */
	p = _mm512_mask_mov_ps(big, small, p);
	return _mm512_castsi512_ps(_mm512_or_si512(
		_mm512_castps_si512(p),
		_mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(INT32_MIN))));
}

/* v's low and high eight lanes widened to double (sums of float32 lanes
 * kept in double: k_softmax512.c, k_reduce512.c) */
__attribute__((target("avx512f"), always_inline))
static inline __m512d knn_lo_pd(__m512 v)
{
	return _mm512_cvtps_pd(_mm512_castps512_ps256(v));
}

__attribute__((target("avx512f"), always_inline))
static inline __m512d knn_hi_pd(__m512 v)
{
	return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

/* The lanes of a vector holding the next `left` values */
static inline __mmask16 knn_lanes16(int64_t left)
{
	return left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
}

#endif
