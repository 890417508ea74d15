/* k_pool_s1.c: float32 3x3 max and average pools of stride 1 with a pad of
 * one on every side, on planes 14 to 32 wide (the pool branches of
 * GoogLeNet and Inception at 28x28 and 14x14), a plane at a time in
 * AVX-512 with the positions of a row in one or two vectors, separably:
 * each row's three-column folds (masked loads at -1, 0 and +1 columns,
 * the columns past either end left out), then each output row the fold
 * of three of those, rows past either end left out.  Three rows of folds
 * are kept in registers as the rows go by, so the plane is read once and
 * written once, with no transposes (k_pool_cb.c's sixteen-plane buffers
 * cost it more than the taps on such planes).
 *
 * A max is NaN when any tap is NaN, else the largest tap, as k_pool.c's
 * loops; an average's taps are added row by row, three columns first
 * (another order than the plane loops': it may differ in the last bit,
 * as k_pool_same.c's), then divided by (counted rows) x (counted columns),
 * counting the pads with count_include_pad. */
#include <immintrin.h>
#include <math.h>
#include <stdlib.h>

#include "runtime/kernels/k_conv_int.h"
#include "runtime/kernels/k_pool512.h"
#include "runtime/kernels/pgemm.h"

/* Rows of 14 to 32 positions: on narrower ones most lanes idle and the
 * sixteen-plane kernel (k_pool_cb.c) is faster (1024 planes of 7x7:
 * 44 us here, 37 there) */
#define S1_MIN_WIDTH 14
#define S1_MAX_WIDTH 32

struct s1_job {
	const struct knn_geom *g;
	const float *x;
	float *y;
	const float *cnt;         /* average: each position's count (in_size) */
	int avg;
};

/* Row r's three-column folds, vector v (columns 16 v ..): lanes past the
 * row hold the fold's identity. */
__attribute__((target("avx512f"), always_inline))
static inline __m512 s1_row(const struct s1_job *j, const float *row, int v, __mmask16 in,
			    __mmask16 lm, __mmask16 rm)
{
	__m512 id = j->avg ? _mm512_setzero_ps() : _mm512_set1_ps(-INFINITY);
	const float *p = row + 16 * v;
	__m512 a = _mm512_mask_loadu_ps(id, lm, p - 1);

	a = knn_fold512(a, _mm512_mask_loadu_ps(id, in, p), j->avg);
	return knn_fold512(a, _mm512_mask_loadu_ps(id, rm, p + 1), j->avg);
}

/* Planes [lo, hi): an rt_range_fn. */
__attribute__((target("avx512f")))
static void s1_planes(void *ctx, int64_t lo, int64_t hi)
{
	const struct s1_job *j = ctx;
	int64_t ih = j->g->in[0], iw = j->g->in[1], n = j->g->in_size;
	int nv = iw > 16 ? 2 : 1;
	__mmask16 in[2], lm[2], rm[2];
	__m512 id = j->avg ? _mm512_setzero_ps() : _mm512_set1_ps(-INFINITY);

	for (int v = 0; v < nv; v++) {
		int64_t w = iw - 16 * v < 16 ? iw - 16 * v : 16;

		in[v] = (__mmask16)((1u << w) - 1);
		/* column c - 1 exists unless c is 0; c + 1 unless c is the last */
		lm[v] = v ? in[v] : (__mmask16)(in[v] & ~1u);
		rm[v] = (__mmask16)(16 * v + w == iw ? in[v] >> 1 : in[v]);
	}
	for (int64_t p = lo; p < hi; p++) {
		const float *x = j->x + p * n;
		float *y = j->y + p * n;
		__m512 h[3][2];   /* folds of rows r - 1, r, r + 1 */

		for (int v = 0; v < nv; v++) {
			h[0][v] = id;
			h[1][v] = s1_row(j, x, v, in[v], lm[v], rm[v]);
		}
		for (int64_t r = 0; r < ih; r++) {
			for (int v = 0; v < nv; v++) {
				__m512 s;

				h[2][v] = r + 1 < ih ? s1_row(j, x + (r + 1) * iw, v, in[v], lm[v], rm[v]) :
					  id;
				s = knn_fold512(knn_fold512(h[0][v], h[1][v], j->avg), h[2][v], j->avg);
				if (j->avg)
					s = _mm512_div_ps(s, _mm512_maskz_loadu_ps(in[v], j->cnt + r * iw +
										   16 * v));
				_mm512_mask_storeu_ps(y + r * iw + 16 * v, in[v], s);
				h[0][v] = h[1][v];
				h[1][v] = h[2][v];
			}
		}
	}
}

int knn_pool3_s1_f32(struct rt_kctx *k, const struct knn_geom *g, int avg, int include_pad,
		     const float *x, float *y)
{
	struct s1_job j = { g, x, y, NULL, avg };
	int64_t *t = NULL;
	float *cnt = NULL;

	if (g->nsp != 2 || g->kernel[0] != 3 || g->kernel[1] != 3 || g->stride[0] != 1 ||
	    g->stride[1] != 1 || g->dil[0] != 1 || g->dil[1] != 1 || g->pad[0] != 1 ||
	    g->pad[1] != 1 || g->pad[2] != 1 || g->pad[3] != 1 || g->out[0] != g->in[0] ||
	    g->out[1] != g->in[1] || g->in[1] < S1_MIN_WIDTH || g->in[1] > S1_MAX_WIDTH ||
	    !rt_cpu_avx512f())
		return 0;
	if (avg) {
		/* the counted taps of each output row and column */
		if (!(t = malloc((size_t)(g->in[0] + g->in[1]) * sizeof(int64_t))) ||
		    !(cnt = malloc((size_t)g->in_size * sizeof(float)))) {
			free(t);
			return rt_oom(k);
		}
		knn_window_taps(g, 0, include_pad, NULL, NULL, t);
		knn_window_taps(g, 1, include_pad, NULL, NULL, t + g->in[0]);
		for (int64_t r = 0; r < g->in[0]; r++)
			for (int64_t c = 0; c < g->in[1]; c++)
				cnt[r * g->in[1] + c] = (float)(t[r] * t[g->in[0] + c]);
		j.cnt = cnt;
	}
	rt_parallel_for(k, g->n * g->c, 8, s1_planes, &j);
	free(t);
	free(cnt);
	return 1;
}
