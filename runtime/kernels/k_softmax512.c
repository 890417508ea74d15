/* k_softmax512.c: Softmax and LogSoftmax of one contiguous float32 line
 * in AVX-512 (a transformer's attention rows): the maximum, exp(x - max)
 * sixteen at a time, their sum in double.  The line loops of k_softmax.c
 * call libm's expf element by element.
 *
 * exp: knn_exp512 (k_exp512.h).  The maximum is taken
 * as the line loops take it (a NaN counts only as the first element), a
 * NaN element makes its line NaN, as does +inf (inf - inf).
 *
 * Where an exp or a quotient could be subnormal (the line's least
 * element far enough below its maximum), the exps are computed times 2^64
 * (knn_exp512_k), so that every one float32 holds is normal, summed so,
 * and the quotients scaled back by 2^-64 in integer arithmetic where they
 * are subnormal (sm_down64); other lines as before.  Subnormal floats cost a
 * microcode assist per operation that makes or reads one, and attention
 * rows of a wide spread make them by the thousand: 1.5M scores spread
 * +-300 took 9.3 ms against 0.9 for a spread of +-1.  A quotient in the
 * normal range has the bits it had (scaling by 2^64 is exact there); a
 * subnormal one is now rounded once, where the exp was rounded to a
 * subnormal and the quotient rounded again. */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "runtime/kernels/k_exp512.h"
#include "runtime/kernels/k_reduce_int.h"
#include "runtime/kernels/pgemm.h"

/* sum += the sixteen lanes of v (lanes outside m zero), in double */
__attribute__((target("avx512f"), always_inline))
static inline void sm_sum(__m512d *s, __m512 v)
{
	s[0] = _mm512_add_pd(s[0], knn_lo_pd(v));
	s[1] = _mm512_add_pd(s[1], knn_hi_pd(v));
}

/* t * 2^-64 for t >= 0 (or NaN): a float multiply where the result stays
 * normal (exact), else the 24-bit significand shifted into a subnormal,
 * rounded to nearest even as the multiply would round it, without its
 * assist */
__attribute__((target("avx512f"), always_inline))
static inline __m512 sm_down64(__m512 t)
{
	const __m512i one = _mm512_set1_epi32(1);
	/* lanes that stay normal (or NaN): multiplied; the others' lanes
	 * masked off, so that no multiply makes a subnormal */
	__mmask16 big = _mm512_cmp_ps_mask(t, _mm512_set1_ps(0x1p-62f), _CMP_NLT_UQ);
	__m512 fast = _mm512_maskz_mul_ps(big, t, _mm512_set1_ps(0x1p-64f));

	if (big == 0xffff)
		return fast;
	__m512i b = _mm512_castps_si512(t), e = _mm512_srli_epi32(b, 23);
	__m512i mant = _mm512_or_si512(_mm512_and_si512(b, _mm512_set1_epi32(0x7fffff)),
				       _mm512_set1_epi32(0x800000));
	__m512i s = _mm512_min_epi32(_mm512_sub_epi32(_mm512_set1_epi32(65), e),
				     _mm512_set1_epi32(26));
	__m512i q = _mm512_srlv_epi32(mant, s);
	__m512i rem = _mm512_sub_epi32(mant, _mm512_sllv_epi32(q, s));
	__m512i half = _mm512_sllv_epi32(one, _mm512_sub_epi32(s, one));
	__mmask16 up = _mm512_cmpgt_epi32_mask(rem, half) |
		       (_mm512_cmpeq_epi32_mask(rem, half) &
			_mm512_test_epi32_mask(q, one));
	__mmask16 zero = _mm512_cmpeq_epi32_mask(e, _mm512_setzero_si512());

	q = _mm512_mask_add_epi32(q, up, q, one);
	q = _mm512_mask_mov_epi32(q, zero, _mm512_setzero_si512());
	return _mm512_mask_mov_ps(_mm512_castsi512_ps(q), big, fast);
}

/* e^(x - m) * 2^k of the line into y (unless lg) and summed into s (k a
 * constant where this is inlined: no work in the loop for it) */
__attribute__((target("avx512f"), always_inline))
static inline void sm_exps(int lg, const float *x, float *y, int64_t n, __m512 m, __m512d *s,
			   const int k)
{
	for (int64_t i = 0; i < n; i += 16) {
		__mmask16 t = knn_lanes16(n - i);
		__m512 v = knn_exp512_k(_mm512_sub_ps(_mm512_maskz_loadu_ps(t, x + i), m), k);

		v = _mm512_maskz_mov_ps(t, v);
		if (!lg)
			_mm512_mask_storeu_ps(y + i, t, v);
		sm_sum(s, v);
	}
}

__attribute__((target("avx512f")))
static void sm_line512(int lg, const float *x, float *y, int64_t n)
{
	__m512 m = _mm512_set1_ps(x[0]), lo = m;
	__m512d s[2] = { _mm512_setzero_pd(), _mm512_setzero_pd() };
	int64_t i;
	float mx;
	double sum;
	int k;

	for (i = 0; i + 16 <= n; i += 16) {
		__m512 v = _mm512_loadu_ps(x + i);

		m = _mm512_max_ps(v, m);
		lo = _mm512_min_ps(v, lo);
	}
	if (i < n) {
		__mmask16 t = knn_lanes16(n - i);
		__m512 v = _mm512_maskz_loadu_ps(t, x + i);

		m = _mm512_mask_max_ps(m, t, v, m);
		lo = _mm512_mask_min_ps(lo, t, v, lo);
	}
	/* lanes in any order: the same maximum (a NaN is only ever x[0]) */
	mx = _mm512_reduce_max_ps(m);
	if (x[0] != x[0])
		mx = x[0];
	m = _mm512_set1_ps(mx);
	/* the exps times 2^64 where one of them or a quotient (at least
	 * e^d / n) could be subnormal: e^d / n >= 2^-126 needs d >= ln n -
	 * 87.33; ln n bounded by ln 2 times n's bit length (no libm call
	 * per line), a margin of one */
	k = !(_mm512_reduce_min_ps(lo) - mx >=
	      0.6931472f * (float)(64 - __builtin_clzll((unsigned long long)n)) - 86.0f) ? 64 : 0;
	if (k)
		sm_exps(lg, x, y, n, m, s, 64);
	else
		sm_exps(lg, x, y, n, m, s, 0);
	sum = _mm512_reduce_add_pd(_mm512_add_pd(s[0], s[1])) * (k ? 0x1p-64 : 1.0);
	if (lg) {
		__m512 l = _mm512_set1_ps((float)log(sum));

		for (i = 0; i < n; i += 16) {
			__mmask16 t = knn_lanes16(n - i);

			_mm512_mask_storeu_ps(y + i, t, _mm512_sub_ps(_mm512_sub_ps(
				_mm512_maskz_loadu_ps(t, x + i), m), l));
		}
		return;
	}
	{
		__m512 inv = _mm512_set1_ps((float)(1.0 / sum));

		/* (two loops: no test of k for each vector) */
		if (!k)
			for (i = 0; i < n; i += 16) {
				__mmask16 t = knn_lanes16(n - i);

				_mm512_mask_storeu_ps(y + i, t, _mm512_mul_ps(
					_mm512_maskz_loadu_ps(t, y + i), inv));
			}
		else
			for (i = 0; i < n; i += 16) {
				__mmask16 t = knn_lanes16(n - i);

				_mm512_mask_storeu_ps(y + i, t, sm_down64(_mm512_mul_ps(
					_mm512_maskz_loadu_ps(t, y + i), inv)));
			}
	}
}

int kr_softmax_line512(int lg, const float *x, float *y, int64_t n)
{
	if (n < 1 || !rt_pgemm_ok())
		return 0;
	sm_line512(lg, x, y, n);
	return 1;
}

/* Softmax (LogSoftmax: lg) over n rows S apart of I columns, each lane a
 * column (attention scores normalized along the queries, LightGlue's
 * dual softmax: k_softmax.c's block loops called expf element by
 * element, 2.2x onnxruntime's time): as a line, the maximum taken as the
 * loops take it (row 0's NaN stays, a later one counts in the sum), the
 * exps always times 2^64 and the quotients scaled back by sm_down64 (the
 * same bits as unscaled where normal), the sums in double. */
/* lo's eight lanes then hi's */
__attribute__((target("avx512f"), always_inline))
static inline __m512 sm_join(__m256 lo, __m256 hi)
{
	return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)),
						   _mm256_castps_pd(hi), 1));
}

__attribute__((target("avx512f")))
static void sm_rows512(int lg, const float *x, float *y, int64_t n, int64_t S, int64_t I)
{
	for (int64_t i = 0; i < I; i += 16) {
		__mmask16 t = knn_lanes16(I - i);
		__m512 m = _mm512_maskz_loadu_ps(t, x + i);
		__m512d s[2] = { _mm512_setzero_pd(), _mm512_setzero_pd() };
		__m512 q;

		for (int64_t r = 1; r < n; r++)
			m = _mm512_max_ps(_mm512_maskz_loadu_ps(t, x + r * S + i), m);
		for (int64_t r = 0; r < n; r++) {
			__m512 v = knn_exp512_k(_mm512_sub_ps(_mm512_maskz_loadu_ps(t, x + r * S + i),
							      m), 64);

			if (!lg)
				_mm512_mask_storeu_ps(y + r * S + i, t, v);
			sm_sum(s, v);
		}
		s[0] = _mm512_mul_pd(s[0], _mm512_set1_pd(0x1p-64));
		s[1] = _mm512_mul_pd(s[1], _mm512_set1_pd(0x1p-64));
		if (lg) {
			double l[16];

			_mm512_storeu_pd(l, s[0]);
			_mm512_storeu_pd(l + 8, s[1]);
			for (int c = 0; c < 16; c++)
				l[c] = (float)log(l[c]);
			q = sm_join(_mm512_cvtpd_ps(_mm512_loadu_pd(l)),
				    _mm512_cvtpd_ps(_mm512_loadu_pd(l + 8)));
			for (int64_t r = 0; r < n; r++)
				_mm512_mask_storeu_ps(y + r * S + i, t, _mm512_sub_ps(_mm512_sub_ps(
					_mm512_maskz_loadu_ps(t, x + r * S + i), m), q));
			continue;
		}
		/* (float)(1.0 / sum) per lane, as the line's */
		q = sm_join(_mm512_cvtpd_ps(_mm512_div_pd(_mm512_set1_pd(1.0), s[0])),
			    _mm512_cvtpd_ps(_mm512_div_pd(_mm512_set1_pd(1.0), s[1])));
		for (int64_t r = 0; r < n; r++)
			_mm512_mask_storeu_ps(y + r * S + i, t, sm_down64(_mm512_mul_ps(
				_mm512_maskz_loadu_ps(t, y + r * S + i), q)));
	}
}

int kr_softmax_rows512(int lg, const float *x, float *y, int64_t n, int64_t S, int64_t I)
{
	if (n < 1 || !rt_pgemm_ok())
		return 0;
	sm_rows512(lg, x, y, n, S, I);
	return 1;
}
