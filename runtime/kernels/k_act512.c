/* k_act512.c: Sigmoid and x * sigmoid(a x) (Swish, SiLU, QuickGelu) of a
 * float32 span in AVX-512, for k_act.c's loops, which call libm's expf
 * element by element (a U2-Net's output Sigmoid over 16 channels at
 * 1024x1024 took 50 ms of that).  The same formulas: with t = a x and
 * e = exp(-|t|) (knn_exp512, within one ulp), sigmoid(t) is 1 / (1 + e)
 * for t >= 0 and e / (1 + e) below, so within a few ulp of the libm
 * loop's result; a NaN stays NaN, +-inf give 1 and 0. */
#include <immintrin.h>
#include <stdint.h>

#include "runtime/kernels/k_elem_int.h"
#include "runtime/kernels/k_exp512.h"
#include "runtime/kernels/pgemm.h"

__attribute__((target("avx512f")))
static void sig512(const float *x, float *y, int64_t n, float alpha, int times_x)
{
	const __m512 one = _mm512_set1_ps(1.0f), a = _mm512_set1_ps(alpha);

	for (int64_t i = 0; i < n; i += 16) {
		__mmask16 m = knn_lanes16(n - i);
		__m512 v = _mm512_maskz_loadu_ps(m, x + i), t = _mm512_mul_ps(v, a);
		__m512 e = knn_exp512(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_abs_ps(t)));
		__m512 d = _mm512_add_ps(one, e);
		__mmask16 neg = _mm512_cmp_ps_mask(t, _mm512_setzero_ps(), _CMP_LT_OQ);
		__m512 s = _mm512_div_ps(_mm512_mask_mov_ps(one, neg, e), d);

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
