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
#include <string.h>

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

/* mm_line's outcomes: *out set, a NaN in the line, a zero extreme */
enum { MM_DONE, MM_NAN, MM_ZERO };

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
		return MM_NAN;
	r = lt ? _mm512_reduce_min_ps(_mm512_min_ps(a, b)) :
		 _mm512_reduce_max_ps(_mm512_max_ps(a, b));
	if (r == 0)
		return MM_ZERO;
	*out = r;
	return MM_DONE;
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
	return n > 0 && rt_pgemm_ok() && mm_line(lt, x, n, out) == MM_DONE;
}

__attribute__((target("avx512f"), always_inline))
static inline __m512 mm_join(int lt, __m512 a, __m512 b)
{
	return lt ? _mm512_min_ps(a, b) : _mm512_max_ps(a, b);
}

/* Lane l of the result: the extreme of v[l]'s sixteen lanes, by a
 * transpose that halves the vectors at each step (pairs of lanes, pairs
 * of pairs, then 128-bit quarters twice): 45 instructions for sixteen
 * lines where one line's reduce_max takes about eight. */
__attribute__((target("avx512f"), always_inline))
static inline __m512 mm_fold16(int lt, const __m512 *v)
{
	__m512 w[8], q[4], h[2];

	for (int i = 0; i < 8; i++)
		w[i] = mm_join(lt, _mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]),
			       _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
	for (int i = 0; i < 4; i++) {
		__m512d a = _mm512_castps_pd(w[2 * i]), b = _mm512_castps_pd(w[2 * i + 1]);

		q[i] = mm_join(lt, _mm512_castpd_ps(_mm512_unpacklo_pd(a, b)),
			       _mm512_castpd_ps(_mm512_unpackhi_pd(a, b)));
	}
	for (int i = 0; i < 2; i++)
		h[i] = mm_join(lt, _mm512_shuffle_f32x4(q[2 * i], q[2 * i + 1], 0x88),
			       _mm512_shuffle_f32x4(q[2 * i], q[2 * i + 1], 0xdd));
	return mm_join(lt, _mm512_shuffle_f32x4(h[0], h[1], 0x88),
		       _mm512_shuffle_f32x4(h[0], h[1], 0xdd));
}

/* A line whose extreme is 0 (no NaN): the loop keeps the first element
 * it meets equal to 0, -0 or +0, as no later element is greater (less)
 * than it and every earlier one was less (greater).  ReLU outputs make
 * many such lines (pointnet2's groups of 32: about a third); the loop
 * redoing them took 0.53 ms of its 0.9 of ReduceMax. */
__attribute__((target("avx512f")))
static float mm_first_zero(const float *x, int64_t n)
{
	for (int64_t i = 0;; i += 16) {
		__mmask16 t = knn_lanes16(n - i);
		__mmask16 z = _mm512_mask_cmp_ps_mask(t, _mm512_maskz_loadu_ps(t, x + i),
						      _mm512_setzero_ps(), _CMP_EQ_OQ);

		if (z)
			return x[i + __builtin_ctz(z)];
	}
}

/* Lines of n <= 64 sixteen at a time: each line's vectors joined into
 * one (masked tails hold the start value), the sixteen folded into one
 * vector of results.  A line holding a NaN gets NaN for the caller's
 * loop to redo (its last NaN's payload). */
__attribute__((target("avx512f")))
static void mm_lines16(int lt, const float *x, int64_t lines, int64_t n, float *y)
{
	const __m512 init = _mm512_set1_ps(lt ? __builtin_inff() : -__builtin_inff());
	const __mmask16 tail = knn_lanes16(n % 16 ? n % 16 : 16);
	const int64_t full = (n - 1) / 16;      /* vectors before the last */
	const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);

	for (int64_t l0 = 0; l0 < lines; l0 += 16) {
		int cnt = lines - l0 < 16 ? (int)(lines - l0) : 16;
		__mmask16 bad = 0, zero;
		__m512 v[16], r;

		for (int l = 0; l < 16; l++) {
			const float *xl = x + (l0 + l) * n;
			__mmask16 nan;
			__m512 a, e;

			if (l >= cnt) {
				v[l] = init;
				continue;
			}
			/* two batches ahead: 5-10% off an 8 MB ReduceMax */
			for (int64_t i = 0; i < n; i += 16)
				_mm_prefetch((const char *)(xl + 32 * n + i), _MM_HINT_T0);
			a = _mm512_mask_loadu_ps(init, tail, xl + full * 16);
			nan = _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q);
			for (int64_t i = 0; i < full; i++) {
				e = _mm512_loadu_ps(xl + i * 16);
				nan |= _mm512_cmp_ps_mask(e, e, _CMP_UNORD_Q);
				a = mm_join(lt, a, e);
			}
			v[l] = a;
			bad |= (__mmask16)((nan != 0) << l);
		}
		r = mm_fold16(lt, v);
		zero = _mm512_cmp_ps_mask(r, _mm512_setzero_ps(), _CMP_EQ_OQ) & ~bad &
		       knn_lanes16(cnt);
		if (zero) {
			/* the first elements: a zero there is the line's
			 * first (a ReLU's all-zero group) */
			__m512 f = _mm512_mask_i32gather_ps(r, zero, _mm512_mullo_epi32(lane,
						_mm512_set1_epi32((int)n)), x + l0 * n, 4);
			__mmask16 fz = _mm512_mask_cmp_ps_mask(zero, f, _mm512_setzero_ps(),
							       _CMP_EQ_OQ);

			r = _mm512_mask_mov_ps(r, fz, f);
			zero &= ~fz;
		}
		_mm512_mask_storeu_ps(y + l0, knn_lanes16(cnt),
				      _mm512_mask_mov_ps(r, bad, _mm512_set1_ps(__builtin_nanf(""))));
		for (; zero; zero &= zero - 1) {
			int l = __builtin_ctz(zero);

			y[l0 + l] = mm_first_zero(x + (l0 + l) * n, n);
		}
	}
}

int kr_maxmin_lines512(int lt, const float *x, int64_t lines, int64_t n, float *y)
{
	if (n < 1 || !rt_pgemm_ok())
		return 0;
	if (n <= 64) {
		mm_lines16(lt, x, lines, n, y);
		return 1;
	}
	for (int64_t l = 0; l < lines; l++) {
		const float *xl = x + l * n;

		switch (mm_line(lt, xl, n, y + l)) {
		case MM_NAN: y[l] = __builtin_nanf(""); break;
		case MM_ZERO: y[l] = mm_first_zero(xl, n); break;
		}
	}
	return 1;
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

		__m512 e = _mm512_maskz_mov_ps(t, knn_exp512(_mm512_sub_ps(
						    _mm512_maskz_loadu_ps(t, x + i), m)));

		a = _mm512_add_pd(a, _mm512_add_pd(knn_lo_pd(e), knn_hi_pd(e)));
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

			a = _mm512_add_pd(a, knn_lo_pd(e));
			b = _mm512_add_pd(b, knn_hi_pd(e));
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

/* ReduceSum, ReduceMean and ReduceLogSum of float32: the loops' double
 * sums with the float32 lanes converted to double and added in AVX-512.
 * Over rows each double lane is one column, added in row order as the
 * loop does: the same sums bit for bit (capsnet's ReduceSum over 1152
 * rows of 160 columns: 144 us in scalar loops against onnxruntime's
 * 103).  Along a line 32 double lanes then a tree add, where the loop
 * had four accumulators: a different order, as accurate or more. */
__attribute__((target("avx512f")))
static void sum_lines(const float *x, int64_t lines, int64_t n, double *s)
{
	for (int64_t l = 0; l < lines; l++, x += n) {
		__m512d a = _mm512_setzero_pd(), b = a, c = a, d = a;
		int64_t i = 0;

		for (; i + 32 <= n; i += 32) {
			__m512 v = _mm512_loadu_ps(x + i), w = _mm512_loadu_ps(x + i + 16);

			a = _mm512_add_pd(a, knn_lo_pd(v));
			b = _mm512_add_pd(b, knn_hi_pd(v));
			c = _mm512_add_pd(c, knn_lo_pd(w));
			d = _mm512_add_pd(d, knn_hi_pd(w));
		}
		for (; i < n; i += 16) {
			__m512 v = _mm512_maskz_loadu_ps(knn_lanes16(n - i), x + i);

			a = _mm512_add_pd(a, knn_lo_pd(v));
			b = _mm512_add_pd(b, knn_hi_pd(v));
		}
		s[l] = _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(a, b), _mm512_add_pd(c, d)));
	}
}

/* Row by row, the sums in acc (in L1: the caller's blocks are at most
 * 512 columns), one pass over x; blocks of 64 columns in registers, all
 * rows each, read capsnet's rows three times: 130-160 us against this
 * one's 100-120. */
__attribute__((target("avx512f")))
static void sum_rows_acc(const float *x, int64_t rows, int64_t stride, int64_t cols, double *acc)
{
	memset(acc, 0, (size_t)cols * sizeof(*acc));
	for (int64_t r = 0; r < rows; r++, x += stride) {
		int64_t c = 0;

		for (; c + 16 <= cols; c += 16) {
			__m512 v = _mm512_loadu_ps(x + c);

			_mm512_storeu_pd(acc + c, _mm512_add_pd(_mm512_loadu_pd(acc + c), knn_lo_pd(v)));
			_mm512_storeu_pd(acc + c + 8, _mm512_add_pd(_mm512_loadu_pd(acc + c + 8),
								    knn_hi_pd(v)));
		}
		if (c < cols) {
			__mmask16 t = knn_lanes16(cols - c);
			__m512 v = _mm512_maskz_loadu_ps(t, x + c);

			_mm512_mask_storeu_pd(acc + c, (__mmask8)t, _mm512_add_pd(
				_mm512_maskz_loadu_pd((__mmask8)t, acc + c), knn_lo_pd(v)));
			_mm512_mask_storeu_pd(acc + c + 8, (__mmask8)(t >> 8), _mm512_add_pd(
				_mm512_maskz_loadu_pd((__mmask8)(t >> 8), acc + c + 8), knn_hi_pd(v)));
		}
	}
}

int kr_sum_rows512(const float *x, int64_t rows, int64_t stride, int64_t cols, double *acc)
{
	if (!rt_pgemm_ok())
		return 0;
	sum_rows_acc(x, rows, stride, cols, acc);
	return 1;
}

int kr_sum_lines512(const float *x, int64_t lines, int64_t n, double *s)
{
	if (!rt_pgemm_ok())
		return 0;
	sum_lines(x, lines, n, s);
	return 1;
}
