/* k_reduce512.c: ReduceMax and ReduceMin of float32 in AVX-512, the same
 * values as k_reduce.c's loops, which replace the running value a by an
 * element x when x > a (x < a) or x is NaN, in order.  Over rows (the
 * axis not innermost) each lane is one column and does exactly that, so
 * the result is the loops' bit for bit.  Along a line each lane does it
 * for every sixteenth element; the lanes' maximum is then the line's
 * unless it is 0 (-0 and +0: the loop keeps the first of them) or NaN
 * (the loop keeps the last NaN), which the caller's loop redoes.  The
 * loop compared in double and was eight times slower than onnxruntime
 * (a line of 128: 1.97 ms for a million elements against 0.31). */
#include <immintrin.h>
#include <math.h>

#include "runtime/kernels/k_exp512.h"   /* knn_lanes16 */
#include "runtime/kernels/k_reduce_int.h"
#include "runtime/kernels/pgemm.h"

/* acc replaced where v is greater (less: lt) or NaN */
__attribute__((target("avx512f"), always_inline))
static inline __m512 mm_step(int lt, __m512 acc, __m512 v)
{
	__mmask16 k = (lt ? _mm512_cmp_ps_mask(acc, v, _CMP_GT_OQ) :
			    _mm512_cmp_ps_mask(v, acc, _CMP_GT_OQ)) |
		      _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);

	return _mm512_mask_mov_ps(acc, k, v);
}

__attribute__((target("avx512f")))
static int mm_line(int lt, const float *x, int64_t n, float *out)
{
	__m512 a = _mm512_set1_ps(lt ? __builtin_inff() : -__builtin_inff()), b = a;
	int64_t i = 0;
	float r;

	for (; i + 32 <= n; i += 32) {
		a = mm_step(lt, a, _mm512_loadu_ps(x + i));
		b = mm_step(lt, b, _mm512_loadu_ps(x + i + 16));
	}
	for (; i < n; i += 16) {
		__mmask16 t = knn_lanes16(n - i);

		a = _mm512_mask_mov_ps(a, t, mm_step(lt, a, _mm512_maskz_loadu_ps(t, x + i)));
	}
	/* NaN in a lane: the loop's last NaN decides */
	if (_mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q) || _mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q))
		return 0;
	r = lt ? _mm512_reduce_min_ps(_mm512_min_ps(a, b)) :
		 _mm512_reduce_max_ps(_mm512_max_ps(a, b));
	if (r == 0)
		return 0;
	*out = r;
	return 1;
}

__attribute__((target("avx512f")))
static void mm_rows(int lt, const float *x, int64_t rows, int64_t stride, int64_t cols,
		    float *y)
{
	for (int64_t i = 0; i < cols; i += 16) {
		__mmask16 t = knn_lanes16(cols - i);
		__m512 a = _mm512_set1_ps(lt ? __builtin_inff() : -__builtin_inff());

		for (int64_t r = 0; r < rows; r++)
			a = mm_step(lt, a, _mm512_maskz_loadu_ps(t, x + r * stride + i));
		_mm512_mask_storeu_ps(y + i, t, a);
	}
}

int kr_maxmin_line512(int lt, const float *x, int64_t n, float *out)
{
	return n > 0 && rt_pgemm_ok() && mm_line(lt, x, n, out);
}

int kr_maxmin_rows512(int lt, const float *x, int64_t rows, int64_t stride, int64_t cols,
		      float *y)
{
	if (rows < 1 || !rt_pgemm_ok())
		return 0;
	mm_rows(lt, x, rows, stride, cols, y);
	return 1;
}

/* ArgMax (max) or ArgMin of a float32 line: each lane keeps its best and
 * the index of its first (last: the last) occurrence; then among the
 * lanes holding the line's best the least (greatest) index, which is the
 * loop's answer (zeros of both signs compare equal there too).  A NaN
 * (the loop's first NaN wins) leaves it to the loop: 0. */
__attribute__((target("avx512f")))
static int arg_line(int max, int last, const float *x, int64_t n, int64_t *out)
{
	__m512 best = _mm512_set1_ps(max ? -__builtin_inff() : __builtin_inff());
	__m512i bi = _mm512_set1_epi32(-1), idx = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
								     10, 11, 12, 13, 14, 15);
	const __m512i sixteen = _mm512_set1_epi32(16);
	__mmask16 nan = 0, any;
	int32_t li[16];
	float b;
	int64_t r = -1;

	for (int64_t i = 0; i < n; i += 16) {
		__mmask16 t = knn_lanes16(n - i);
		__m512 v = _mm512_maskz_loadu_ps(t, x + i);
		__mmask16 k;

		nan |= _mm512_mask_cmp_ps_mask(t, v, v, _CMP_UNORD_Q);
		/* beats, or the lane's first element (bi -1: -inf/+inf itself) */
		if (max)
			k = last ? _mm512_mask_cmp_ps_mask(t, v, best, _CMP_GE_OQ) :
				   _mm512_mask_cmp_ps_mask(t, v, best, _CMP_GT_OQ);
		else
			k = last ? _mm512_mask_cmp_ps_mask(t, v, best, _CMP_LE_OQ) :
				   _mm512_mask_cmp_ps_mask(t, v, best, _CMP_LT_OQ);
		k |= t & _mm512_cmpeq_epi32_mask(bi, _mm512_set1_epi32(-1));
		best = _mm512_mask_mov_ps(best, k, v);
		bi = _mm512_mask_mov_epi32(bi, k, idx);
		idx = _mm512_add_epi32(idx, sixteen);
	}
	if (nan)
		return 0;
	b = max ? _mm512_reduce_max_ps(best) : _mm512_reduce_min_ps(best);
	any = _mm512_cmp_ps_mask(best, _mm512_set1_ps(b), _CMP_EQ_OQ) &
	      ~_mm512_cmpeq_epi32_mask(bi, _mm512_set1_epi32(-1));
	_mm512_storeu_si512(li, bi);
	for (int l = 0; l < 16; l++)
		if (any >> l & 1 && (r < 0 || (last ? li[l] > r : li[l] < r)))
			r = li[l];
	if (r < 0)
		return 0;
	*out = r;
	return 1;
}

int kr_arg_line512(int max, int last, const float *x, int64_t n, int64_t *out)
{
	return n > 0 && n < INT32_MAX && rt_pgemm_ok() && arg_line(max, last, x, n, out);
}

/* ReduceLogSumExp of float32 (the loops: m + log(sum of e^(x - m)) in
 * double, m the maximum, e^ by libm: 4.6 ns an element, LightGlue's
 * Sinkhorn iterations 12 ms against onnxruntime's 10): e^(x - m) in
 * float32 lanes (k_exp512.h, within one ulp), summed in double.  x - m
 * rounds to float32 as onnxruntime's does.  A NaN, or an infinite
 * maximum (all -inf, or +inf), is left to the loops: 0. */
__attribute__((target("avx512f"), always_inline))
static inline __m512d lse_add(__m512d a, __m512 e)
{
	__m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(e));
	__m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1)));

	return _mm512_add_pd(a, _mm512_add_pd(lo, hi));
}

__attribute__((target("avx512f")))
static int lse_line(const float *x, int64_t n, float *out)
{
	__m512 m = _mm512_set1_ps(-__builtin_inff());
	__m512d a = _mm512_setzero_pd();
	__mmask16 nan = 0;
	float mx;

	for (int64_t i = 0; i < n; i += 16) {
		__mmask16 t = knn_lanes16(n - i);
		__m512 v = _mm512_maskz_loadu_ps(t, x + i);

		nan |= _mm512_mask_cmp_ps_mask(t, v, v, _CMP_UNORD_Q);
		m = _mm512_mask_max_ps(m, t, m, v);
	}
	mx = _mm512_reduce_max_ps(m);
	if (nan || __builtin_isinf(mx))
		return 0;
	m = _mm512_set1_ps(mx);
	for (int64_t i = 0; i < n; i += 16) {
		__mmask16 t = knn_lanes16(n - i);

		a = lse_add(a, _mm512_maskz_mov_ps(t, knn_exp512(_mm512_sub_ps(
				       _mm512_maskz_loadu_ps(t, x + i), m))));
	}
	*out = (float)(mx + log(_mm512_reduce_add_pd(a)));
	return 1;
}

__attribute__((target("avx512f")))
static int lse_rows(const float *x, int64_t rows, int64_t stride, int64_t cols, float *y)
{
	for (int64_t i = 0; i < cols; i += 16) {
		__mmask16 t = knn_lanes16(cols - i), nan = 0;
		__m512 m = _mm512_set1_ps(-__builtin_inff());
		__m512d a = _mm512_setzero_pd(), b = a;
		double sa[8], sb[8];
		float mf[16];

		for (int64_t r = 0; r < rows; r++) {
			__m512 v = _mm512_maskz_loadu_ps(t, x + r * stride + i);

			nan |= _mm512_mask_cmp_ps_mask(t, v, v, _CMP_UNORD_Q);
			m = _mm512_max_ps(m, v);
		}
		if (nan || (_mm512_mask_cmp_ps_mask(t, _mm512_abs_ps(m),
						    _mm512_set1_ps(__builtin_inff()), _CMP_EQ_OQ)))
			return 0;
		for (int64_t r = 0; r < rows; r++) {
			__m512 e = knn_exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(t, x + r * stride + i),
							    m));

			a = _mm512_add_pd(a, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
			b = _mm512_add_pd(b, _mm512_cvtps_pd(_mm256_castpd_ps(
						     _mm512_extractf64x4_pd(_mm512_castps_pd(e), 1))));
		}
		_mm512_storeu_pd(sa, a);
		_mm512_storeu_pd(sb, b);
		_mm512_storeu_ps(mf, m);
		for (int64_t c = 0; c < 16 && i + c < cols; c++)
			y[i + c] = (float)(mf[c] + log(c < 8 ? sa[c] : sb[c - 8]));
	}
	return 1;
}

int kr_lse_line512(const float *x, int64_t n, float *out)
{
	return n > 0 && rt_pgemm_ok() && lse_line(x, n, out);
}

int kr_lse_rows512(const float *x, int64_t rows, int64_t stride, int64_t cols, float *y)
{
	return rows > 0 && rt_pgemm_ok() && lse_rows(x, rows, stride, cols, y);
}
