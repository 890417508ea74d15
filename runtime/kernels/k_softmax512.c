/* k_softmax512.c: Softmax and LogSoftmax of one contiguous float32 line
 * in AVX-512 (a transformer's attention rows): the maximum, exp(x - max)
 * sixteen at a time, their sum in double.  The line loops of k_softmax.c
 * call libm's expf element by element.
 *
 * exp: knn_exp512 (k_exp512.h).  The maximum is taken
 * as the line loops take it (a NaN counts only as the first element), a
 * NaN element makes its line NaN, as does +inf (inf - inf). */
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
	s[0] = _mm512_add_pd(s[0], _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
	s[1] = _mm512_add_pd(s[1], _mm512_cvtps_pd(_mm256_castpd_ps(
		_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
}

__attribute__((target("avx512f")))
static void sm_line512(int lg, const float *x, float *y, int64_t n)
{
	__m512 m = _mm512_set1_ps(x[0]);
	__m512d s[2] = { _mm512_setzero_pd(), _mm512_setzero_pd() };
	int64_t i;
	float mx;
	double sum;

	for (i = 0; i + 16 <= n; i += 16)
		m = _mm512_max_ps(_mm512_loadu_ps(x + i), m);
	if (i < n) {
		__mmask16 t = knn_lanes16(n - i);

		m = _mm512_mask_max_ps(m, t, _mm512_maskz_loadu_ps(t, x + i), m);
	}
	/* lanes in any order: the same maximum (a NaN is only ever x[0]) */
	mx = _mm512_reduce_max_ps(m);
	if (x[0] != x[0])
		mx = x[0];
	m = _mm512_set1_ps(mx);
	for (i = 0; i < n; i += 16) {
		__mmask16 t = knn_lanes16(n - i);
		__m512 v = knn_exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(t, x + i), m));

		v = _mm512_maskz_mov_ps(t, v);
		if (!lg)
			_mm512_mask_storeu_ps(y + i, t, v);
		sm_sum(s, v);
	}
	sum = _mm512_reduce_add_pd(_mm512_add_pd(s[0], s[1]));
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

		for (i = 0; i < n; i += 16) {
			__mmask16 t = knn_lanes16(n - i);

			_mm512_mask_storeu_ps(y + i, t, _mm512_mul_ps(_mm512_maskz_loadu_ps(t, y + i),
								      inv));
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
