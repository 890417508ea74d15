/* k_pool_cb.c: float32 2-D max and average pools of small planes (the
 * 14x14 and 7x7 stages of Inception, GoogLeNet, DenseNet) sixteen planes
 * at a time, in AVX-512: the planes are transposed into one buffer of
 * sixteen-float vectors per position (16 x 16 block transposes), every
 * output is its window's vectors folded in order, then the outputs go
 * back plane by plane.  A plane's own loops would spend more on their
 * row bounds and edges than on the taps, and the edges' scalar
 * comparisons mispredict on real data.
 *
 * Results equal k_pool.c's plane loops: a max is NaN when any tap is NaN,
 * else the largest tap; an average adds its taps from 0 row by row, left
 * to right, and divides by (counted rows) x (counted columns), counting
 * pads with count_include_pad. */
#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_conv_int.h"
#include "runtime/kernels/k_pool512.h"
#include "runtime/kernels/pgemm.h"

/* Planes up to this many positions: sixteen of them are 256 KiB, in L2 */
#define CB_MAX_POSITIONS 4096
/* Outputs of a row folded side by side */
#define CB_RUN 4

struct cb_job {
	const struct knn_geom *g;
	const float *x;
	float *y;
	int64_t planes;
	int avg, include_pad, failed;
	/* per output row / column: first and end of the taps inside the
	 * input, and the counted taps (average) */
	const int64_t *rlo, *rhi, *clo, *chi, *rn, *cn;
};

void knn_cb_in(const float *src, int64_t ls, int nv, int64_t n, float *buf)
{
	int64_t i0 = 0;

	if (nv == 16 && n >= 16) {
		/* the last block overlaps the one before: same values again */
		for (; i0 < n; i0 += 16)
			rt_pgemm_tr16_k512(src + (i0 + 16 <= n ? i0 : n - 16), ls,
					   buf + (i0 + 16 <= n ? i0 : n - 16) * 16, 16);
		return;
	}
	for (int64_t i = 0; i < n; i++) {
		for (int p = 0; p < nv; p++)
			buf[i * 16 + p] = src[p * ls + i];
		for (int p = nv; p < 16; p++)
			buf[i * 16 + p] = 0;
	}
}

void knn_cb_out(const float *buf, int nv, int64_t n, float *dst, int64_t ld)
{
	int64_t i0 = 0;

	if (nv == 16 && n >= 16) {
		for (; i0 < n; i0 += 16)
			rt_pgemm_tr16_k512(buf + (i0 + 16 <= n ? i0 : n - 16) * 16, 16,
					   dst + (i0 + 16 <= n ? i0 : n - 16), ld);
		return;
	}
	for (int64_t i = 0; i < n; i++)
		for (int p = 0; p < nv; p++)
			dst[p * ld + i] = buf[i * 16 + p];
}

/* Outputs t .. t + n - 1 (n 1 or CB_RUN) of output row a, whose columns
 * have the same taps, into out: n independent folds side by side. */
__attribute__((target("avx512f"), always_inline))
static inline void cb_outs(const struct cb_job *j, const float *in, int64_t a,
			   int64_t t, const int n, float *out)
{
	const struct knn_geom *g = j->g;
	int64_t iw = g->in[1], sw = g->stride[1], dh = g->dil[0], dw = g->dil[1];
	int64_t h0 = a * g->stride[0] - g->pad[0], c0 = t * sw - g->pad[1];
	__m512 acc[CB_RUN];

#pragma GCC unroll 4
	for (int i = 0; i < n; i++)
		acc[i] = j->avg ? _mm512_setzero_ps() : _mm512_set1_ps(-INFINITY);
	for (int64_t u = j->rlo[a]; u < j->rhi[a]; u++) {
		int64_t row = (h0 + u * dh) * iw + c0;

		for (int64_t v = j->clo[t]; v < j->chi[t]; v++) {
			const float *p = in + (row + v * dw) * 16;

#pragma GCC unroll 4
			for (int i = 0; i < n; i++)
				acc[i] = knn_fold512(acc[i], _mm512_load_ps(p + i * sw * 16), j->avg);
		}
	}
#pragma GCC unroll 4
	for (int i = 0; i < n; i++) {
		if (j->avg) {
			int64_t cnt = j->rn[a] * j->cn[t + i];

			acc[i] = cnt ? _mm512_div_ps(acc[i], _mm512_set1_ps((float)cnt)) :
				 _mm512_set1_ps(NAN);
		}
		_mm512_store_ps(out + i * 16, acc[i]);
	}
}

__attribute__((target("avx512f")))
static void cb_fold(const struct cb_job *j, const float *in, float *out)
{
	int64_t ow = j->g->out[1];

	for (int64_t a = 0; a < j->g->out[0]; a++)
		for (int64_t t = 0; t < ow;) {
			int64_t e = t + CB_RUN;

			if (e <= ow && j->clo[t] == j->clo[e - 1] && j->chi[t] == j->chi[e - 1]) {
				cb_outs(j, in, a, t, CB_RUN, out);
				out += CB_RUN * 16;
				t = e;
			} else {
				cb_outs(j, in, a, t, 1, out);
				out += 16;
				t++;
			}
		}
}

/* Groups [lo, hi) of sixteen planes. */
static void cb_groups(void *ctx, int64_t lo, int64_t hi)
{
	struct cb_job *j = ctx;
	const struct knn_geom *g = j->g;
	float *in = aligned_alloc(64, (size_t)g->in_size * 16 * sizeof(float));
	float *out = aligned_alloc(64, (size_t)g->out_size * 16 * sizeof(float));

	if (!in || !out) {
		j->failed = 1;
		goto cleanup;
	}
	for (int64_t gr = lo; gr < hi; gr++) {
		int64_t p0 = gr * 16;
		int nv = (int)(j->planes - p0 < 16 ? j->planes - p0 : 16);

		knn_cb_in(j->x + p0 * g->in_size, g->in_size, nv, g->in_size, in);
		cb_fold(j, in, out);
		knn_cb_out(out, nv, g->out_size, j->y + p0 * g->out_size, g->out_size);
	}
cleanup:
	free(in);
	free(out);
}

int knn_pool2d_cb_f32(struct rt_kctx *k, const struct knn_geom *g, int avg,
		      int include_pad, const float *x, float *y)
{
	struct cb_job j = { .g = g, .x = x, .y = y, .planes = g->n * g->c,
			    .avg = avg, .include_pad = include_pad };
	int64_t *t;

	if (g->nsp != 2 || g->in_size > CB_MAX_POSITIONS || j.planes < 16 ||
	    !rt_cpu_avx512f())
		return 0;
	if (!(t = malloc((size_t)(3 * (g->out[0] + g->out[1])) * sizeof(int64_t))))
		return rt_oom(k);
	j.rlo = t;
	j.rhi = t + g->out[0];
	j.rn = t + 2 * g->out[0];
	j.clo = t + 3 * g->out[0];
	j.chi = j.clo + g->out[1];
	j.cn = j.clo + 2 * g->out[1];
	knn_window_taps(g, 0, include_pad, t, t + g->out[0], t + 2 * g->out[0]);
	knn_window_taps(g, 1, include_pad, t + 3 * g->out[0], t + 3 * g->out[0] + g->out[1],
			t + 3 * g->out[0] + 2 * g->out[1]);
	rt_parallel_for(k, (j.planes + 15) / 16, 1, cb_groups, &j);
	free(t);
	return j.failed ? rt_oom(k) : 1;
}
