/* k_conv_dwp.c: float32 2-D depthwise convolutions of stride 1 on large
 * planes (MobileNet's 56 x 56 and 112 x 112) in AVX-512, positions in the
 * vector lanes: each plane is copied into a zero-bordered buffer, so that
 * every tap of sixteen outputs of a row is one load, whatever the pads;
 * each output is its bias, then the taps added row by row, left to right
 * (fused multiply-adds), then the node's epilogue steps
 * (k_conv_epi512.h) in registers.  The plane loops of k_conv_tmpl.h add
 * unfused products in one dependent chain and leave the steps to a pass
 * of their own.  Small or strided planes go sixteen channels at a time
 * instead (k_conv_dw.c). */
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_conv_epi512.h"
#include "runtime/kernels/k_conv_int.h"

/* Vectors of one row computed side by side */
#define DWP_NV 4

struct dwp_job {
	const struct knn_geom *g;
	const float *x, *w, *b;
	float *y;
	const struct rt_epilogue *epi;
	const int64_t *toff;      /* per tap: its offset in the buffer */
	int64_t pw, ph;           /* the bordered plane, its rows */
	int64_t col0;             /* where an input row starts in its row: a
				   * whole vector past the row's start */
	int failed;
};

/* nv vectors of output row yr from j on (the last one's lanes lm only),
 * reading the bordered rows from xr on; channel ch's weights w, bias. */
__attribute__((target("avx512f"), always_inline))
static inline void dwp_run(const struct dwp_job *j, const int nv, const int64_t kk,
			   const float *xr, const float *w, float bias, int64_t ch,
			   int64_t c0, __mmask16 lm, float *yr)
{
	__m512 acc[DWP_NV];

#pragma GCC unroll 4
	for (int i = 0; i < nv; i++)
		acc[i] = _mm512_set1_ps(bias);
#pragma GCC unroll 9
	for (int64_t t = 0; t < kk; t++) {
		__m512 wv = _mm512_set1_ps(w[t]);
		const float *p = xr + j->toff[t] + c0;

#pragma GCC unroll 4
		for (int i = 0; i < nv; i++)
			acc[i] = _mm512_fmadd_ps(wv, i + 1 < nv ? _mm512_loadu_ps(p + 16 * i) :
						 _mm512_maskz_loadu_ps(lm, p + 16 * i), acc[i]);
	}
	knn_epi512_channel(j->epi, ch, nv, acc);
#pragma GCC unroll 4
	for (int i = 0; i < nv; i++)
		_mm512_mask_storeu_ps(yr + c0 + 16 * i, i + 1 < nv ? (__mmask16)0xffff : lm, acc[i]);
}

#define DWP_ROW(kk) \
	do { \
		for (; c0 + 16 * DWP_NV <= ow; c0 += 16 * DWP_NV) \
			dwp_run(j, DWP_NV, kk, xr, w, bias, ch, c0, 0xffff, yr); \
		switch ((ow - c0 + 15) / 16) { \
		case 4: dwp_run(j, 4, kk, xr, w, bias, ch, c0, lm, yr); break; \
		case 3: dwp_run(j, 3, kk, xr, w, bias, ch, c0, lm, yr); break; \
		case 2: dwp_run(j, 2, kk, xr, w, bias, ch, c0, lm, yr); break; \
		case 1: dwp_run(j, 1, kk, xr, w, bias, ch, c0, lm, yr); break; \
		default: break; \
		} \
	} while (0)

/* One plane of channel ch from its bordered copy buf into y. */
__attribute__((target("avx512f")))
static void dwp_plane(const struct dwp_job *j, const float *buf, int64_t ch, float *y)
{
	const struct knn_geom *g = j->g;
	int64_t ow = g->out[1], rem = ow % 16;
	const float *w = j->w + ch * g->k_size;
	float bias = j->b ? j->b[ch] : 0.0f;
	__mmask16 lm = rem ? (__mmask16)((1u << rem) - 1) : (__mmask16)0xffff;

	for (int64_t a = 0; a < g->out[0]; a++) {
		const float *xr = buf + a * j->pw;
		float *yr = y + a * ow;
		int64_t c0 = 0;

		if (g->k_size == 9)
			DWP_ROW(9);
		else
			DWP_ROW(g->k_size);
	}
}

/* Planes [lo, hi). */
static void dwp_planes(void *ctx, int64_t lo, int64_t hi)
{
	struct dwp_job *j = ctx;
	const struct knn_geom *g = j->g;
	int64_t ih = g->in[0], iw = g->in[1], pt = g->pad[0];
	size_t len = (size_t)((j->ph * j->pw + 15) / 16 * 16);
	float *buf = aligned_alloc(64, len * sizeof(float));

	if (!buf) {
		j->failed = 1;
		return;
	}
	/* the border stays zero: every plane writes the same inside */
	memset(buf, 0, len * sizeof(float));
	for (int64_t p = lo; p < hi; p++) {
		const float *xp = j->x + p * g->in_size;

		for (int64_t h = 0; h < ih; h++)
			memcpy(buf + (h + pt) * j->pw + j->col0, xp + h * iw, (size_t)iw * sizeof(float));
		dwp_plane(j, buf, p % g->c, j->y + p * g->out_size);
	}
	free(buf);
}

int knn_conv_dwp_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		     const float *w, const float *b, float *y,
		     const struct rt_epilogue *epi)
{
	struct dwp_job j = { .g = g, .x = x, .w = w, .b = b, .y = y, .epi = epi };
	int64_t *toff;

	/* rows of whole vectors, each input row at a vector's start */
	j.col0 = (g->pad[1] + 15) / 16 * 16;
	j.pw = (j.col0 + g->in[1] + g->pad[3] + 15) / 16 * 16;
	j.ph = g->in[0] + g->pad[0] + g->pad[2];
	if (!(toff = malloc((size_t)g->k_size * sizeof(*toff))))
		return rt_oom(k);
	for (int64_t u = 0; u < g->kernel[0]; u++)
		for (int64_t v = 0; v < g->kernel[1]; v++)
			toff[u * g->kernel[1] + v] = u * g->dil[0] * j.pw + v * g->dil[1] +
						     j.col0 - g->pad[1];
	j.toff = toff;
	rt_parallel_for(k, g->n * g->c, 4, dwp_planes, &j);
	free(toff);
	return j.failed ? rt_oom(k) : 1;
}
