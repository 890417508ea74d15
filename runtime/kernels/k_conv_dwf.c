/* k_conv_dwf.c: float32 2-D depthwise convolutions of stride 1 whose
 * output has the input's size (MobileNet's and ShuffleNet's 3x3 with pads
 * of one) in AVX-512, a plane at a time, read and written where they lie.
 *
 * With the output as wide as the input, output q = oy * w + ox reads tap
 * (u, v) at input q + (u * dil - pad_top) * w + (v * dil - pad_left) in
 * the flattened plane: one offset per tap for every position, so sixteen
 * consecutive outputs are one load per tap, whatever the rows (a 14-wide
 * plane's 196 outputs are 13 vectors, none idle but the last's 12
 * lanes).  The lanes whose tap falls in the padding (a row above or
 * below, a column past the row's ends, which the flat offset would wrap
 * into the next row) are masked out of the load and read as zero, as
 * the bordered buffers of k_conv_dw.c and k_conv_dwp.c do: the masks are
 * computed once per call, per vector and tap.  No copy, no transposes,
 * no lanes idle at row ends.
 *
 * Each output is its bias, then the taps added row by row, left to right
 * (fused multiply-adds), then the node's epilogue steps (no tensor
 * operands), as the other depthwise kernels do: the same results. */
#include <immintrin.h>
#include <stdlib.h>

#include "runtime/kernels/k_conv_epi512.h"
#include "runtime/kernels/k_conv_int.h"

/* Vectors computed side by side */
#define DWF_NV 4

struct dwf_job {
	const struct knn_geom *g;
	const float *x, *w, *b;
	float *y;
	const struct rt_epilogue *epi;
	const int64_t *toff;      /* per tap: its flat offset */
	const uint16_t *mask;     /* per vector, per tap: the lanes read */
	int64_t nvec;             /* vectors of a plane */
};

/* Vectors v0 .. v0 + nv - 1 of one plane (x, y: its input and output). */
__attribute__((target("avx512f"), always_inline))
static inline void dwf_run(const struct dwf_job *j, const int nv, const int64_t kk,
			   const float *x, const float *w, float bias, int64_t ch, int64_t v0,
			   float *y)
{
	const uint16_t *mk = j->mask + v0 * kk;
	__m512 acc[DWF_NV];

#pragma GCC unroll 4
	for (int i = 0; i < nv; i++)
		acc[i] = _mm512_set1_ps(bias);
#pragma GCC unroll 9
	for (int64_t t = 0; t < kk; t++) {
		__m512 wv = _mm512_set1_ps(w[t]);
		const float *p = x + v0 * 16 + j->toff[t];

#pragma GCC unroll 4
		for (int i = 0; i < nv; i++)
			acc[i] = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(mk[i * kk + t], p + 16 * i),
						 acc[i]);
	}
	knn_epi512_channel(j->epi, ch, nv, acc);
	/* the last vector's lanes past the plane: its mask of the centre-most
	 * tap would do, but a tap may read none; the plane's end decides */
#pragma GCC unroll 4
	for (int i = 0; i < nv; i++) {
		int64_t left = j->g->out_size - (v0 + i) * 16;

		_mm512_mask_storeu_ps(y + (v0 + i) * 16,
				      left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1),
				      acc[i]);
	}
}

#define DWF_PLANE(kk) \
	do { \
		for (; v + DWF_NV <= j->nvec; v += DWF_NV) \
			dwf_run(j, DWF_NV, kk, x, w, bias, ch, v, y); \
		switch (j->nvec - v) { \
		case 3: dwf_run(j, 3, kk, x, w, bias, ch, v, y); break; \
		case 2: dwf_run(j, 2, kk, x, w, bias, ch, v, y); break; \
		case 1: dwf_run(j, 1, kk, x, w, bias, ch, v, y); break; \
		default: break; \
		} \
	} while (0)

/* Planes [lo, hi). */
__attribute__((target("avx512f")))
static void dwf_planes(void *ctx, int64_t lo, int64_t hi)
{
	const struct dwf_job *j = ctx;
	const struct knn_geom *g = j->g;

	for (int64_t p = lo; p < hi; p++) {
		int64_t ch = p % g->c, v = 0;
		const float *x = j->x + p * g->in_size, *w = j->w + ch * g->k_size;
		float *y = j->y + p * g->out_size;
		float bias = j->b ? j->b[ch] : 0.0f;

		if (g->k_size == 9)
			DWF_PLANE(9);
		else
			DWF_PLANE(g->k_size);
	}
}

/* Per vector of the plane, per tap: the lanes whose input lies inside
 * (the tap's row shift dr rows, column shift dc columns).  Each lane's
 * row and column are carried from vector to vector (sixteen columns on,
 * less a row's width while they pass it): no divisions. */
__attribute__((target("avx512f")))
static void dwf_masks(const struct knn_geom *g, int64_t nvec, const int64_t *dr,
		      const int64_t *dc, uint16_t *mask)
{
	const __m512i w = _mm512_set1_epi32((int)g->in[1]), h = _mm512_set1_epi32((int)g->in[0]);
	const __m512i one = _mm512_set1_epi32(1), zero = _mm512_setzero_si512();
	const __m512i n = _mm512_set1_epi32((int)g->in_size);
	__m512i q = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
	__m512i col = q, row = zero;
	int64_t kw = g->kernel[1];

	for (int64_t v = 0; v < nvec; v++) {
		__mmask16 in = _mm512_cmplt_epi32_mask(q, n), over;

		/* col = q mod w, row = q / w */
		while ((over = _mm512_cmpge_epi32_mask(col, w))) {
			col = _mm512_mask_sub_epi32(col, over, col, w);
			row = _mm512_mask_add_epi32(row, over, row, one);
		}
		for (int64_t t = 0; t < g->k_size; t++) {
			__m512i r = _mm512_add_epi32(row, _mm512_set1_epi32((int)dr[t / kw]));
			__m512i c = _mm512_add_epi32(col, _mm512_set1_epi32((int)dc[t % kw]));

			mask[v * g->k_size + t] = (uint16_t)(in & _mm512_cmpge_epi32_mask(r, zero) &
							     _mm512_cmplt_epi32_mask(r, h) &
							     _mm512_cmpge_epi32_mask(c, zero) &
							     _mm512_cmplt_epi32_mask(c, w));
		}
		q = _mm512_add_epi32(q, _mm512_set1_epi32(16));
		col = _mm512_add_epi32(col, _mm512_set1_epi32(16));
	}
}

int knn_dwf_fits(const struct knn_geom *g)
{
	return g->nsp == 2 && g->stride[0] == 1 && g->stride[1] == 1 &&
	       g->out[0] == g->in[0] && g->out[1] == g->in[1] && g->in_size >= 1 &&
	       g->in_size <= INT32_MAX / 4 &&
	       (g->kernel[0] - 1) * g->dil[0] + g->pad[0] <= INT32_MAX / 4 &&
	       (g->kernel[1] - 1) * g->dil[1] + g->pad[1] <= INT32_MAX / 4;
}

int knn_conv_dwf_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		     const float *w, const float *b, float *y, const struct rt_epilogue *epi)
{
	struct dwf_job j = { .g = g, .x = x, .w = w, .b = b, .y = y, .epi = epi };
	int64_t *toff = NULL, *dr = NULL, *dc = NULL;
	uint16_t *mask = NULL;

	j.nvec = (g->in_size + 15) / 16;
	if (!(toff = malloc((size_t)g->k_size * sizeof(*toff))) ||
	    !(dr = malloc((size_t)g->kernel[0] * sizeof(*dr))) ||
	    !(dc = malloc((size_t)g->kernel[1] * sizeof(*dc))) ||
	    !(mask = malloc((size_t)(j.nvec * g->k_size) * sizeof(*mask)))) {
		free(toff);
		free(dr);
		free(dc);
		return rt_oom(k);
	}
	for (int64_t u = 0; u < g->kernel[0]; u++)
		dr[u] = u * g->dil[0] - g->pad[0];
	for (int64_t v = 0; v < g->kernel[1]; v++)
		dc[v] = v * g->dil[1] - g->pad[1];
	for (int64_t t = 0; t < g->k_size; t++)
		toff[t] = dr[t / g->kernel[1]] * g->in[1] + dc[t % g->kernel[1]];
	dwf_masks(g, j.nvec, dr, dc, mask);
	j.toff = toff;
	j.mask = mask;
	rt_parallel_for(k, g->n * g->c, 4, dwf_planes, &j);
	free(toff);
	free(dr);
	free(dc);
	free(mask);
	return 1;
}
