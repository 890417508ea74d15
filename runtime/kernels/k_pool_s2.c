/* k_pool_s2.c: float32 2-D max pooling of column stride 2 with windows 2
 * or 3 columns wide, undilated (the 3x3 stride-2 pools of SqueezeNet,
 * GoogLeNet, Inception, ResNet), in AVX-512, a plane at a time.  Each
 * block of sixteen outputs of a row loads its window rows' columns (two
 * vectors and one more column each), takes their maximum column by
 * column, then the even, odd and next-even columns of that by permutes (a
 * compiler leaves such stride-2 loads scalar): once per output row, not
 * once per window row.  Columns past the row's ends (pads) are masked
 * out of the loads and count as -inf, so the edges take the same path.
 *
 * The result is NaN when any tap is NaN, else the largest tap: the same
 * as the comparison chain of k_pool.c, in any order.  vmaxps drops NaN
 * operands, so the fast path checks its taps (see rows_s2) and a plane
 * with any tap not finite is redone by the exact fold (row_s2), whose
 * compares keep NaN, and whose edges go tap by tap.  Max of 64 112x112
 * planes 0.36 -> 0.23 ms; 320 28x28 planes (a 14-output edge block per
 * row) 107 -> 70 us. */
#include <immintrin.h>
#include <math.h>
#include <stdlib.h>

#include "runtime/kernels/k_conv_int.h"
#include "runtime/kernels/pgemm.h"

/* y = KNN_MAXIN(y, x) lane by lane. */
__attribute__((target("avx512f"), always_inline))
static inline __m512 maxin16(__m512 y, __m512 x)
{
	__mmask16 take = _mm512_cmp_ps_mask(x, y, _CMP_GT_OQ) |
			 _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);

	return _mm512_mask_blend_ps(take, y, x);
}

/* A block of n <= 16 outputs: the lanes of its two vectors of inputs (ml,
 * mh) and of the column past them (me: the third tap of a full block's
 * last output), and of its outputs (mo).  A last short block loads only
 * its outputs' inputs: the masked loads never touch memory past them. */
struct s2_masks {
	__mmask16 ml, mh, me, mo;
};

static inline struct s2_masks s2_block(int64_t n, int kw)
{
	int64_t need = 2 * n + (kw == 3);
	struct s2_masks k;

	k.ml = need >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << need) - 1);
	k.mh = need >= 32 ? (__mmask16)0xffff :
	       need > 16 ? (__mmask16)((1u << (need - 16)) - 1) : 0;
	k.me = need > 32 ? (__mmask16)1 : 0;
	k.mo = n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
	return k;
}

/* The even columns of two vectors lo||hi as one: lane i takes 2i. */
__attribute__((target("avx512f"), always_inline))
static inline __m512i s2_even(void)
{
	return _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
}

/* Outputs [j0, j1) of one input row xr (their windows inside the row):
 * y[j] = KNN_MAXIN over x[2j + b], x[2j + b + 1] (and x[2j + b + 2] when kw
 * is 3), folded into y. */
__attribute__((target("avx512f")))
static void row_s2(const float *xr, int64_t b, int kw, int64_t j0, int64_t j1,
		   float *y)
{
	const __m512i ev = s2_even();
	const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
	const __m512i nx = _mm512_add_epi32(ev, _mm512_set1_epi32(2));

	for (int64_t j = j0; j < j1; j += 16) {
		struct s2_masks k = s2_block(j1 - j < 16 ? j1 - j : 16, kw);
		const float *p = xr + 2 * j + b;
		__m512 lo = _mm512_maskz_loadu_ps(k.ml, p), hi = _mm512_maskz_loadu_ps(k.mh, p + 16);
		__m512 m = maxin16(_mm512_permutex2var_ps(lo, ev, hi),
				   _mm512_permutex2var_ps(lo, od, hi));

		if (kw == 3) {
			/* x[2j + b + 2]: lanes 0..14 from lo||hi, lane 15 is p[32] */
			__m512 e2 = _mm512_permutex2var_ps(lo, nx, hi);

			e2 = _mm512_mask_broadcastss_ps(e2, k.me ? (__mmask16)0x8000 : 0,
							_mm_maskz_load_ss(k.me, p + 32));
			m = maxin16(m, e2);
		}
		_mm512_mask_storeu_ps(y + j, k.mo, maxin16(_mm512_maskz_loadu_ps(k.mo, y + j), m));
	}
}

/* The outputs of a plane whose window lies inside its row: 2j - pl >= 0
 * and 2j - pl + kw <= iw, j in [*jlo, *jhi). */
static void inner_cols(const struct knn_geom *g, int64_t *jlo, int64_t *jhi)
{
	int64_t iw = g->in[1], ow = g->out[1], kw = g->kernel[1], pl = g->pad[1];

	*jlo = (pl + 1) / 2 < ow ? (pl + 1) / 2 : ow;
	*jhi = iw - kw + pl >= 0 ? (iw - kw + pl) / 2 + 1 : 0;
	if (*jhi > ow)
		*jhi = ow;
	if (*jhi < *jlo)
		*jhi = *jlo;
}

/* Output (a, j) of a column outside [jlo, jhi), tap by tap.  (Compiled
 * for AVX-512 too, as its callers: legacy-SSE scalar code between them
 * stalled on the dirty upper halves, 3x the whole pool's time.) */
__attribute__((target("avx512f")))
static float edge_out(const struct knn_geom *g, const float *x, int64_t a, int64_t j)
{
	int64_t iw = g->in[1];
	int64_t r0 = a * g->stride[0] - g->pad[0], r1 = r0 + g->kernel[0];
	int64_t c0 = 2 * j - g->pad[1], c1 = c0 + g->kernel[1];
	float m = -INFINITY;

	r0 = r0 < 0 ? 0 : r0;
	r1 = r1 > g->in[0] ? g->in[0] : r1;
	c0 = c0 < 0 ? 0 : c0;
	c1 = c1 > iw ? iw : c1;
	for (int64_t r = r0; r < r1; r++)
		for (int64_t c = c0; c < c1; c++)
			m = KNN_MAXIN(m, x[r * iw + c]);
	return m;
}

/* One plane, every tap exact: each output row folds in its window's
 * rows one by one (NaN taps: see the top). */
__attribute__((target("avx512f")))
static void s2_plane_exact(const struct knn_geom *g, const float *x, float *y)
{
	int64_t ih = g->in[0], iw = g->in[1], oh = g->out[0], ow = g->out[1], jlo, jhi;

	inner_cols(g, &jlo, &jhi);
	for (int64_t a = 0; a < oh; a++) {
		float *yr = y + a * ow;

		for (int64_t j = 0; j < ow; j++)
			yr[j] = -INFINITY;
		for (int64_t u = 0; u < g->kernel[0]; u++) {
			int64_t r = a * g->stride[0] - g->pad[0] + u;

			if (r >= 0 && r < ih)
				row_s2(x + r * iw, -g->pad[1], (int)g->kernel[1], jlo, jhi, yr);
		}
		for (int64_t j = 0; j < jlo; j++)
			yr[j] = edge_out(g, x, a, j);
		for (int64_t j = jhi; j < ow; j++)
			yr[j] = edge_out(g, x, a, j);
	}
}

/* The block's loaded lanes (struct s2_masks) cut to the columns inside
 * the row: column c0 + L for lane L of lo (0..15), hi (16..31), ex (32). */
static inline void s2_inside(int64_t c0, int64_t iw, struct s2_masks *k)
{
	int64_t lo = c0 < 0 ? -c0 : 0, hi = iw - c0;   /* lanes [lo, hi) */
	uint64_t in = hi <= lo ? 0 : (hi >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << hi) - 1) &
				       ~(((uint64_t)1 << (lo < 64 ? lo : 63)) - 1);

	k->ml &= (__mmask16)in;
	k->mh &= (__mmask16)(in >> 16);
	k->me &= (__mmask16)((in >> 32) & 1);
}

/* Output row yr (ow outputs) whose window rows are the nr rows from xr,
 * iw apart: the rows' maximum column by column first, then the row window
 * by permutes, once per sixteen outputs.  Columns past the row's ends
 * (pads) are not loaded and count as -inf.  vmaxps drops a NaN operand,
 * so the finite check: the rows' sum, minus itself, is zero unless a tap
 * is infinite or NaN (or the sum overflows), and any such lane is OR-ed
 * into *bad. */
__attribute__((target("avx512f")))
static void rows_s2(const float *xr, int64_t iw, int64_t nr, int64_t pl, int kw, int64_t ow,
		    float *yr, __m512i *bad)
{
	const __m512i ev = s2_even();
	const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
	const __m512i nx = _mm512_add_epi32(ev, _mm512_set1_epi32(2));
	const __m512 ninf = _mm512_set1_ps(-INFINITY);
	__m512i chk = *bad;

	for (int64_t j = 0; j < ow; j += 16) {
		struct s2_masks k = s2_block(ow - j < 16 ? ow - j : 16, kw);
		int64_t c0 = 2 * j - pl;
		/* (lanes before the row are masked: never read) */
		const float *p = xr + c0;
		__m512 lo, hi, ex, sl, sh, se, m;

		if (c0 < 0 || c0 + 33 > iw)
			s2_inside(c0, iw, &k);
		lo = _mm512_maskz_loadu_ps(k.ml, p);
		hi = _mm512_maskz_loadu_ps(k.mh, p + 16);
		ex = _mm512_maskz_loadu_ps(k.me, p + 32);
		sl = lo;
		sh = hi;
		se = ex;
		for (int64_t u = 1; u < nr; u++) {
			const float *q = p + u * iw;
			__m512 l = _mm512_maskz_loadu_ps(k.ml, q);
			__m512 h = _mm512_maskz_loadu_ps(k.mh, q + 16);
			__m512 e = _mm512_maskz_loadu_ps(k.me, q + 32);

			lo = _mm512_max_ps(l, lo);
			hi = _mm512_max_ps(h, hi);
			ex = _mm512_max_ps(e, ex);
			sl = _mm512_add_ps(sl, l);
			sh = _mm512_add_ps(sh, h);
			se = _mm512_add_ps(se, e);
		}
		sl = _mm512_add_ps(_mm512_add_ps(sl, sh), se);
		chk = _mm512_or_si512(chk, _mm512_castps_si512(_mm512_sub_ps(sl, sl)));
		lo = _mm512_mask_mov_ps(ninf, k.ml, lo);
		hi = _mm512_mask_mov_ps(ninf, k.mh, hi);
		m = _mm512_max_ps(_mm512_permutex2var_ps(lo, od, hi),
				  _mm512_permutex2var_ps(lo, ev, hi));
		if (kw == 3) {
			/* lanes 0..14 from lo||hi, lane 15 the column past hi */
			__m512 e2 = _mm512_permutex2var_ps(lo, nx, hi);

			e2 = _mm512_mask_permutexvar_ps(e2, (__mmask16)0x8000, _mm512_setzero_si512(),
							_mm512_mask_mov_ps(ninf, k.me, ex));
			m = _mm512_max_ps(e2, m);
		}
		_mm512_mask_storeu_ps(yr + j, k.mo, m);
	}
	*bad = chk;
}

/* One plane, by rows_s2; again exactly when a tap was not finite. */
__attribute__((target("avx512f")))
static void s2_plane(const struct knn_geom *g, const float *x, float *y)
{
	int64_t ih = g->in[0], iw = g->in[1], oh = g->out[0], ow = g->out[1];
	__m512i bad = _mm512_setzero_si512();

	for (int64_t a = 0; a < oh; a++) {
		int64_t r0 = a * g->stride[0] - g->pad[0], r1 = r0 + g->kernel[0];
		float *yr = y + a * ow;

		r0 = r0 < 0 ? 0 : r0;
		r1 = r1 > ih ? ih : r1;
		if (r1 > r0)
			rows_s2(x + r0 * iw, iw, r1 - r0, g->pad[1], (int)g->kernel[1], ow, yr, &bad);
		else
			for (int64_t j = 0; j < ow; j++)
				yr[j] = -INFINITY;
	}
	if (_mm512_test_epi32_mask(bad, bad))
		s2_plane_exact(g, x, y);
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
