/* k_pool_s2.c: float32 2-D max pooling of column stride 2 with windows 2
 * or 3 columns wide, undilated (the 3x3 stride-2 pools of SqueezeNet,
 * GoogLeNet, Inception), in AVX-512: sixteen outputs of a row take their
 * even, odd and next-even inputs from two or three loaded vectors by
 * permutes (a compiler leaves such stride-2 loads scalar).  Each output
 * row folds in its window's rows, each computed once per output row; the
 * columns whose window reaches past the row's ends go one at a time.
 * The result is NaN when any tap is NaN, else the largest tap: the same
 * as the comparison chain of k_pool.c, in any order. */
#include <immintrin.h>
#include <math.h>
#include <stdlib.h>

#include "validators/k_conv_int.h"
#include "validators/pgemm.h"

/* y = KNN_MAXIN(y, x) lane by lane. */
__attribute__((target("avx512f"), always_inline))
static inline __m512 maxin16(__m512 y, __m512 x)
{
	__mmask16 take = _mm512_cmp_ps_mask(x, y, _CMP_GT_OQ) |
			 _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);

	return _mm512_mask_blend_ps(take, y, x);
}

/* Outputs [j0, j1) of one input row xr (their windows inside the row):
 * y[j] = KNN_MAXIN over x[2j + b], x[2j + b + 1] (and x[2j + b + 2] when kw
 * is 3), folded into y. */
__attribute__((target("avx512f")))
static void row_s2(const float *xr, int64_t b, int kw, int64_t j0, int64_t j1,
		   float *y)
{
	const __m512i ev = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4,
					    2, 0);
	const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
	const __m512i nx = _mm512_add_epi32(ev, _mm512_set1_epi32(2));
	int64_t j = j0;

	for (; j < j1; j += 16) {
		/* a last short block: only its outputs' inputs are loaded
		 * (the masked loads never touch memory past them) */
		int64_t n = j1 - j < 16 ? j1 - j : 16, need = 2 * n + (kw == 3);
		__mmask16 ml = need >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << need) - 1);
		__mmask16 mh = need >= 32 ? (__mmask16)0xffff :
			       need > 16 ? (__mmask16)((1u << (need - 16)) - 1) : 0;
		__mmask16 mo = n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
		const float *p = xr + 2 * j + b;
		__m512 lo = _mm512_maskz_loadu_ps(ml, p), hi = _mm512_maskz_loadu_ps(mh, p + 16);
		__m512 m = maxin16(_mm512_permutex2var_ps(lo, ev, hi),
				   _mm512_permutex2var_ps(lo, od, hi));

		if (kw == 3) {
			/* x[2j + b + 2]: lanes 0..14 from lo||hi, lane 15 is p[32] */
			__m512 e2 = _mm512_permutex2var_ps(lo, nx, hi);

			if (n == 16)
				e2 = _mm512_mask_broadcastss_ps(e2, (__mmask16)0x8000,
								_mm_load_ss(p + 32));
			m = maxin16(m, e2);
		}
		_mm512_mask_storeu_ps(y + j, mo, maxin16(_mm512_maskz_loadu_ps(mo, y + j), m));
	}
}

/* One plane. */
static void s2_plane(const struct knn_geom *g, const float *x, float *y)
{
	int64_t ih = g->in[0], iw = g->in[1], oh = g->out[0], ow = g->out[1];
	int64_t kh = g->kernel[0], kw = g->kernel[1], sh = g->stride[0];
	int64_t pt = g->pad[0], pl = g->pad[1];
	/* outputs whose window lies inside the row: 2j - pl >= 0 and
	 * 2j - pl + kw <= iw */
	int64_t jlo = (pl + 1) / 2, jhi = iw - kw + pl >= 0 ? (iw - kw + pl) / 2 + 1 : 0;

	if (jlo > ow)
		jlo = ow;
	if (jhi > ow)
		jhi = ow;
	if (jhi < jlo)
		jhi = jlo;
	for (int64_t a = 0; a < oh; a++) {
		float *yr = y + a * ow;

		for (int64_t j = 0; j < ow; j++)
			yr[j] = -INFINITY;
		for (int64_t u = 0; u < kh; u++) {
			int64_t r = a * sh - pt + u;
			const float *xr = x + r * iw;

			if (r < 0 || r >= ih)
				continue;
			row_s2(xr, -pl, (int)kw, jlo, jhi, yr);
			for (int64_t j = 0; j < ow; j++) {
				if (j == jlo && jhi > jlo)
					j = jhi;
				if (j >= ow)
					break;
				for (int64_t v = 0; v < kw; v++) {
					int64_t c = 2 * j - pl + v;

					if (c >= 0 && c < iw)
						yr[j] = KNN_MAXIN(yr[j], xr[c]);
				}
			}
		}
	}
}

int knn_max2d_s2_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		     float *y)
{
	if (g->nsp != 2 || g->stride[1] != 2 || (g->kernel[1] != 2 && g->kernel[1] != 3) ||
	    g->dil[0] != 1 || g->dil[1] != 1 || !rt_cpu_avx512f())
		return 0;
	knn_for_planes(k, g, x, y, s2_plane);
	return 1;
}
