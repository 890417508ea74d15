/* pgemm_k512.c: the AVX-512 micro-kernel of pgemm.h.  A tile of up to 12
 * rows by 32 columns of C lives in 24 registers; each step loads the two
 * vectors of the packed B panel once and multiplies them by each row's
 * element of A, broadcast.  One body, instantiated for every row count so
 * the row loops unroll into registers.  Compiled for AVX-512F through a
 * function attribute (the rest of opmig keeps the base instruction set;
 * rt_pgemm_ok() checks the CPU before any call). */
#include <immintrin.h>

#include "runtime/kernels/pgemm.h"

#define K512 __attribute__((target("avx512f"), always_inline)) static inline

K512 void pg_tile(const int mr, int nr, int64_t kc, const float *a,
		  const float *pb, float *c, int64_t ldc, int first,
		  const float *bias, const int bias_rows)
{
	__m512 c0[RT_PG_MR], c1[RT_PG_MR];
	__mmask16 m0 = nr >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << nr) - 1);
	__mmask16 m1 = nr >= 32 ? (__mmask16)0xffff :
		       nr > 16 ? (__mmask16)((1u << (nr - 16)) - 1) : 0;

#pragma GCC unroll 12
	for (int i = 0; i < mr; i++)
		c0[i] = c1[i] = _mm512_setzero_ps();
	for (int64_t s = 0; s < kc; s++) {
		__m512 b0 = _mm512_load_ps(pb), b1 = _mm512_load_ps(pb + 16);

#pragma GCC unroll 12
		for (int i = 0; i < mr; i++) {
			__m512 av = _mm512_set1_ps(a[i]);

			c0[i] = _mm512_fmadd_ps(av, b0, c0[i]);
			c1[i] = _mm512_fmadd_ps(av, b1, c1[i]);
		}
		pb += RT_PG_NR;
		a += RT_PG_MR;
	}
	if (first && bias_rows) {
#pragma GCC unroll 12
		for (int i = 0; i < mr; i++) {
			__m512 v = _mm512_set1_ps(bias ? bias[i] : 0.0f);

			_mm512_mask_storeu_ps(c + i * ldc, m0, _mm512_add_ps(c0[i], v));
			_mm512_mask_storeu_ps(c + i * ldc + 16, m1, _mm512_add_ps(c1[i], v));
		}
		return;
	}
	if (first) {
		__m512 v0 = bias ? _mm512_maskz_loadu_ps(m0, bias) : _mm512_setzero_ps();
		__m512 v1 = bias ? _mm512_maskz_loadu_ps(m1, bias + 16) : _mm512_setzero_ps();

#pragma GCC unroll 12
		for (int i = 0; i < mr; i++) {
			_mm512_mask_storeu_ps(c + i * ldc, m0, _mm512_add_ps(c0[i], v0));
			_mm512_mask_storeu_ps(c + i * ldc + 16, m1, _mm512_add_ps(c1[i], v1));
		}
		return;
	}
#pragma GCC unroll 12
	for (int i = 0; i < mr; i++) {
		float *ci = c + i * ldc;

		_mm512_mask_storeu_ps(ci, m0, _mm512_add_ps(c0[i], _mm512_maskz_loadu_ps(m0, ci)));
		_mm512_mask_storeu_ps(ci + 16, m1,
				      _mm512_add_ps(c1[i], _mm512_maskz_loadu_ps(m1, ci + 16)));
	}
}

#define PG_CASE(r) case r: \
	if (bias_rows) \
		pg_tile(r, nr, kc, a, pb, c, ldc, first, bias, 1); \
	else \
		pg_tile(r, nr, kc, a, pb, c, ldc, first, bias, 0); \
	break;

__attribute__((target("avx512f")))
void rt_pgemm_k512(int mr, int nr, int64_t kc, const float *a,
		   const float *pb, float *c, int64_t ldc, int first,
		   const float *bias, int bias_rows)
{
	switch (mr) {
	PG_CASE(1) PG_CASE(2) PG_CASE(3) PG_CASE(4) PG_CASE(5) PG_CASE(6)
	PG_CASE(7) PG_CASE(8) PG_CASE(9) PG_CASE(10) PG_CASE(11) PG_CASE(12)
	default:
		break;
	}
}

/* Tiles of mr <= 3 rows against RT_PG_WIDE panels at once (the panels
 * pstride floats apart, the last nr_last columns wide): a row of A's
 * product against one panel is two chains of kc dependent fused
 * multiply-adds, which a recurrent cell's or a decoder's one row waits
 * out at every step; four panels give eight or more chains.  Each column
 * sums its steps in the same order as pg_tile's, so the same bits. */
K512 void pg_wide(const int mr, int nr_last, int64_t kc, const float *a, const float *pb,
		  int64_t pstride, float *c, int64_t ldc, int first, const float *bias)
{
	__m512 acc[3][2 * RT_PG_WIDE];

#pragma GCC unroll 3
	for (int i = 0; i < mr; i++)
#pragma GCC unroll 8
		for (int v = 0; v < 2 * RT_PG_WIDE; v++)
			acc[i][v] = _mm512_setzero_ps();
	for (int64_t s = 0; s < kc; s++) {
		__m512 b[2 * RT_PG_WIDE];

#pragma GCC unroll 4
		for (int q = 0; q < RT_PG_WIDE; q++) {
			b[2 * q] = _mm512_load_ps(pb + q * pstride + s * RT_PG_NR);
			b[2 * q + 1] = _mm512_load_ps(pb + q * pstride + s * RT_PG_NR + 16);
		}
#pragma GCC unroll 3
		for (int i = 0; i < mr; i++) {
			__m512 av = _mm512_set1_ps(a[s * RT_PG_MR + i]);

#pragma GCC unroll 8
			for (int v = 0; v < 2 * RT_PG_WIDE; v++)
				acc[i][v] = _mm512_fmadd_ps(av, b[v], acc[i][v]);
		}
	}
#pragma GCC unroll 8
	for (int v = 0; v < 2 * RT_PG_WIDE; v++) {
		int left = v / 2 == RT_PG_WIDE - 1 ? nr_last - 16 * (v % 2) : 16;
		__mmask16 m = left >= 16 ? (__mmask16)0xffff :
			      left > 0 ? (__mmask16)((1u << left) - 1) : 0;
		__m512 bv = first && bias ? _mm512_maskz_loadu_ps(m, bias + 16 * v) :
				_mm512_setzero_ps();

#pragma GCC unroll 3
		for (int i = 0; i < mr; i++) {
			float *ci = c + i * ldc + 16 * v;

			_mm512_mask_storeu_ps(ci, m, _mm512_add_ps(acc[i][v], first ? bv :
							_mm512_maskz_loadu_ps(m, ci)));
		}
	}
}

__attribute__((target("avx512f")))
void rt_pgemm_k512_wide(int mr, int nr_last, int64_t kc, const float *a, const float *pb,
			int64_t pstride, float *c, int64_t ldc, int first, const float *bias)
{
	switch (mr) {
	case 1: pg_wide(1, nr_last, kc, a, pb, pstride, c, ldc, first, bias); break;
	case 2: pg_wide(2, nr_last, kc, a, pb, pstride, c, ldc, first, bias); break;
	case 3: pg_wide(3, nr_last, kc, a, pb, pstride, c, ldc, first, bias); break;
	default: break;
	}
}

/* The 16 x 16 block at src (row stride ls; its first `rows` rows, the
 * others zero) transposed to dst (row stride ld; `rows` floats of each of
 * its 16 rows stored): pairs of rows interleaved, then groups of four, then
 * the 128-bit lanes of each group of four registers transposed as a 4 x 4
 * matrix. */
K512 void trn(const float *src, int64_t ls, int rows, float *dst, int64_t ld)
{
	__m512 r[16], t[16];
	const __mmask16 m = (__mmask16)((1u << rows) - 1);

#pragma GCC unroll 16
	for (int i = 0; i < 16; i++)
		r[i] = i < rows ? _mm512_loadu_ps(src + i * ls) : _mm512_setzero_ps();
#pragma GCC unroll 8
	for (int i = 0; i < 16; i += 2) {
		t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
		t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
	}
	/* u[4g + c], lane l: column 4l + c of rows 4g..4g+3 */
#pragma GCC unroll 4
	for (int g = 0; g < 16; g += 4) {
		r[g] = _mm512_shuffle_ps(t[g], t[g + 2], 0x44);
		r[g + 1] = _mm512_shuffle_ps(t[g], t[g + 2], 0xee);
		r[g + 2] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0x44);
		r[g + 3] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0xee);
	}
#pragma GCC unroll 4
	for (int c = 0; c < 4; c++) {
		__m512 v0 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x44);
		__m512 v1 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xee);
		__m512 v2 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x44);
		__m512 v3 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xee);

		_mm512_mask_storeu_ps(dst + c * ld, m, _mm512_shuffle_f32x4(v0, v2, 0x88));
		_mm512_mask_storeu_ps(dst + (4 + c) * ld, m, _mm512_shuffle_f32x4(v0, v2, 0xdd));
		_mm512_mask_storeu_ps(dst + (8 + c) * ld, m, _mm512_shuffle_f32x4(v1, v3, 0x88));
		_mm512_mask_storeu_ps(dst + (12 + c) * ld, m, _mm512_shuffle_f32x4(v1, v3, 0xdd));
	}
}

__attribute__((target("avx512f")))
void rt_pgemm_tr16_k512(const float *src, int64_t ls, float *dst, int64_t ld)
{
	trn(src, ls, 16, dst, ld);
}

__attribute__((target("avx512f")))
void rt_pgemm_trn_k512(const float *src, int64_t ls, int rows, float *dst, int64_t ld)
{
	trn(src, ls, rows, dst, ld);
}
