/* k_conv_dwc.c: float32 2-D depthwise convolutions (group = input
 * channels = output channels) of stride 1 and 9 taps or more (3x3, 5x5,
 * 7x7) whose input and result are stored channels last (layout_cl.c), in
 * AVX-512, sixteen channels to a vector as they lie.
 *
 * Output rows go in order, image by image: each input row under the
 * window is copied once, zero-bordered, into a ring of as many rows as
 * the window spans, block of sixteen channels by block (a row's channels
 * read in one sweep); then every tap of every output of the row is one
 * aligned load from the ring, and each output row is written in sweeps of
 * four blocks, whole lines of every position.  A block of sixteen
 * channels read position by position straight from the input is one line
 * every C floats (1 KiB apart at 256 channels), which L1's sets do not
 * keep.  Against oneDNN's depthwise kernel on this layout (brdgmm), the
 * path before, each node's fastest of 15 runs alternating in one process
 * at one thread: SVTR's 5x5 on [6, 256, 6, 160] 1.19-1.29 against
 * 1.77-1.87 ms, its 3x3 on [6, 64, 24, 160] 0.97 against 1.43,
 * ConvNeXt's 7x7 layers 0.37 against 0.74 ms in all, MobileNetV3's 5x5
 * 0.22 against 0.40, EfficientNet's 3x3 on 32 channels at 112x112 0.42
 * against 0.54, MobileViT's 3x3 on 192 channels at 48x48 0.34 against
 * 0.41; the one loss seen, MobileNetV3's 3x3 on 72 channels at 56x56,
 * 0.041 against 0.035.  Strided windows stay on oneDNN: half the outputs
 * per copied row, and slower here in a first version.  When a ring of
 * every channel would outgrow L2 the channels go in groups of blocks,
 * each group its own pass.
 *
 * Each output is its bias, then the taps added row by row, left to right
 * (fused multiply-adds), then the node's epilogue steps (no tensor
 * operands) in registers, as k_conv_dw.c does: the same sums. */
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_conv_epi512.h"
#include "runtime/kernels/k_conv_int.h"
#include "runtime/kernels/pgemm.h"

/* Outputs computed side by side */
#define DWC_RUN 8
/* Bytes a ring may take (L2 is 2 MiB a core) */
#define DWC_RING_BYTES (1 << 20)
/* Blocks of sixteen channels computed together along a row, channels
 * last: a position's four lines each sweep */
#define DWC_SWEEP 4
/* Taps a kernel must have (1x3 and 3x1 windows unmeasured: oneDNN's) */
#define DWC_MIN_TAPS 9
/* Taps a kernel may have (a block's weights stay in L1) */
#define DWC_MAX_TAPS 1024

/* Convolutions done here (the tests) */
static _Atomic int64_t dwc_runs;

struct dwc_job {
	const struct knn_geom *g;
	const float *x;
	float *y;
	const struct rt_epilogue *epi;
	const float *wv;          /* block cb's taps: wv + cb * k_size * 16 */
	const float *bv;          /* its bias: bv + cb * 16 */
	const float *ev;          /* its steps' coefficients: ev + cb * steps * 32 */
	int64_t cblk;             /* blocks of sixteen channels */
	int64_t gblk;             /* blocks a group (a pass) */
	int64_t ngrp;             /* groups */
	int64_t pw;               /* a ring row's positions a block */
	int64_t nring;            /* rows in the ring: the window's span */
	int failed;
};

/* W as blocks of sixteen channels, each tap's sixteen weights together
 * (lanes past c zero): kept in the node's cache. */
static void dwc_pack(const struct knn_geom *g, const float *w, int kind, float *dst)
{
	int64_t kk = g->k_size, cblk = (g->c + 15) / 16;

	(void)kind;
	for (int64_t cb = 0; cb < cblk; cb++)
		for (int64_t l = 0; l < 16; l++) {
			int64_t ch = cb * 16 + l;

			for (int64_t t = 0; t < kk; t++)
				dst[(cb * kk + t) * 16 + l] = ch < g->c ? w[ch * kk + t] : 0.0f;
		}
}

/* Each block's bias and steps' coefficients, lanes past c zero. */
static float *dwc_coef(const struct knn_geom *g, const float *b, const struct rt_epilogue *epi,
		       int64_t cblk)
{
	int64_t steps = epi ? (int64_t)epi->n : 0;
	float *bv = aligned_alloc(64, (size_t)(cblk * 16 * (1 + 2 * steps)) * sizeof(float));
	float *ev = bv + cblk * 16;

	if (!bv)
		return NULL;
	for (int64_t ch = 0; ch < cblk * 16; ch++) {
		int64_t cb = ch / 16, l = ch % 16, in = ch < g->c;

		bv[ch] = in && b ? b[ch] : 0.0f;
		for (int64_t s = 0; s < steps; s++) {
			const float *co = epi->coef + 2 * epi->c * s;

			ev[((cb * steps + s) * 2) * 16 + l] = in ? co[ch] : 0.0f;
			ev[((cb * steps + s) * 2 + 1) * 16 + l] = in ? co[epi->c + ch] : 0.0f;
		}
	}
	return bv;
}

/* Input row h of image n, blocks cb0 .. cb0 + nb - 1, into ring row dst:
 * block i's position p at dst + (i * pw + p) * 16, the row's pads zero
 * (all of it when the pads cover the window's every column). */
__attribute__((target("avx512f")))
static void dwc_row_in(const struct dwc_job *j, int64_t n, int64_t h, int64_t cb0, int64_t nb,
		       float *dst)
{
	const struct knn_geom *g = j->g;
	int64_t iw = g->in[1], pl = g->pad[1], pw = j->pw, c = g->c;
	int64_t ncopy = pw - pl < iw ? pw - pl : iw;
	const float *src = j->x + ((n * g->in[0] + h) * iw) * c + cb0 * 16;
	int64_t full = c / 16 - cb0 < nb ? c / 16 - cb0 : nb;
	__mmask16 last = (__mmask16)((1u << (c % 16)) - 1);

	if (ncopy <= 0) {
		memset(dst, 0, (size_t)(nb * pw * 16) * sizeof(float));
		return;
	}
	for (int64_t i = 0; i < nb; i++) {
		memset(dst + i * pw * 16, 0, (size_t)(pl * 16) * sizeof(float));
		memset(dst + (i * pw + pl + ncopy) * 16, 0,
		       (size_t)((pw - pl - ncopy) * 16) * sizeof(float));
	}
	for (int64_t p = 0; p < ncopy; p++) {
		const float *s = src + p * c;
		float *d = dst + (pl + p) * 16;
		int64_t i = 0;

		for (; i < full; i++)
			_mm512_store_ps(d + i * pw * 16, _mm512_loadu_ps(s + i * 16));
		if (i < nb)
			_mm512_store_ps(d + i * pw * 16, _mm512_maskz_loadu_ps(last, s + i * 16));
	}
}

/* n (1 .. DWC_RUN) outputs o .. o + n - 1 of a row of block cb, block bi
 * of the ring rows rp[0 .. kh - 1] under the window, into dst + (o + i) *
 * os (lanes mk): each its bias, the taps in order, the epilogue.  kh, kw
 * and dw (the column dilation times 16) may be constants for unrolling;
 * the addresses of a run's outputs are then constant offsets. */
__attribute__((target("avx512f"), always_inline))
static inline void dwc_run(const struct dwc_job *j, float *const *rp, int64_t cb, int64_t bi,
			   int64_t o, const int n, const int64_t kh, const int64_t kw,
			   const int64_t dw, float *dst, int64_t os, __mmask16 mk)
{
	const struct knn_geom *g = j->g;
	int64_t off = (bi * j->pw + o) * 16;
	const float *wv = j->wv + cb * g->k_size * 16;
	__m512 acc[DWC_RUN], bv = _mm512_load_ps(j->bv + cb * 16);

#pragma GCC unroll 8
	for (int i = 0; i < n; i++)
		acc[i] = bv;
#pragma GCC unroll 7
	for (int64_t u = 0; u < kh; u++) {
		const float *r = rp[u] + off;

#pragma GCC unroll 7
		for (int64_t v = 0; v < kw; v++) {
			__m512 w = _mm512_load_ps(wv + (u * kw + v) * 16);
			const float *p = r + v * dw;

#pragma GCC unroll 8
			for (int i = 0; i < n; i++)
				acc[i] = _mm512_fmadd_ps(w, _mm512_load_ps(p + i * 16), acc[i]);
		}
	}
	knn_epi512_head(j->epi, n, acc);
	for (size_t s = 0; j->epi && s < j->epi->n; s++) {
		const float *e = j->ev + ((cb * (int64_t)j->epi->n + (int64_t)s) * 2) * 16;
		__m512 m = _mm512_load_ps(e), a = _mm512_load_ps(e + 16);

#pragma GCC unroll 8
		for (int i = 0; i < n; i++)
			acc[i] = knn_epi512_rstep(j->epi->kind[s], acc[i], m, a, j->epi->round);
	}
#pragma GCC unroll 8
	for (int i = 0; i < n; i++)
		_mm512_mask_storeu_ps(dst + (o + i) * os, mk, acc[i]);
}

/* Outputs o .. o + n - 1 of a row, n (1 .. DWC_RUN) constant, of blocks
 * cb0 .. cb0 + nb - 1 (block cb0 + i is block i of the ring rows) into
 * dst + o * os + i * 16: a run's blocks one after the other. */
#define DWC_BLOCKS(n, kh, kw, dw) \
	do { \
		for (int64_t i = 0; i < nb; i++) \
			dwc_run(j, rp, cb0 + i, i, o, n, kh, kw, dw, dst + i * 16, os, \
				i < nb - 1 ? (__mmask16)0xffff : mk); \
	} while (0)

#define DWC_ROW(kh, kw, dw) \
	do { \
		for (; o + DWC_RUN <= ow; o += DWC_RUN) \
			DWC_BLOCKS(DWC_RUN, kh, kw, dw); \
		switch (ow - o) { \
		case 7: DWC_BLOCKS(7, kh, kw, dw); break; \
		case 6: DWC_BLOCKS(6, kh, kw, dw); break; \
		case 5: DWC_BLOCKS(5, kh, kw, dw); break; \
		case 4: DWC_BLOCKS(4, kh, kw, dw); break; \
		case 3: DWC_BLOCKS(3, kh, kw, dw); break; \
		case 2: DWC_BLOCKS(2, kh, kw, dw); break; \
		case 1: DWC_BLOCKS(1, kh, kw, dw); break; \
		default: break; \
		} \
	} while (0)

/* One output row of blocks cb0 .. cb0 + nb - 1 (the last one's lanes mk)
 * into dst (output o of block cb0 + i at dst + o * os + i * 16). */
__attribute__((target("avx512f")))
static void dwc_row(const struct dwc_job *j, float *const *rp, int64_t cb0, int64_t nb,
		    float *dst, int64_t os, __mmask16 mk)
{
	const struct knn_geom *g = j->g;
	int64_t ow = g->out[1], o = 0, dw = g->dil[1] * 16;

	/* the common windows, undilated, with constant steps: unrolled,
	 * 0.17 against 0.22 ms for SVTR's 5x5 on one image (variable steps
	 * kept each output's address in a register of its own, spilled) */
	if (dw == 16 && g->kernel[0] == 3 && g->kernel[1] == 3)
		DWC_ROW(3, 3, 16);
	else if (dw == 16 && g->kernel[0] == 5 && g->kernel[1] == 5)
		DWC_ROW(5, 5, 16);
	else if (dw == 16 && g->kernel[0] == 7 && g->kernel[1] == 7)
		DWC_ROW(7, 7, 16);
	else
		DWC_ROW(g->kernel[0], g->kernel[1], dw);
}

/* Items [lo, hi): output row it % oh of group it / oh % ngrp of image
 * it / oh / ngrp. */
static void dwc_rows(void *ctx, int64_t lo, int64_t hi)
{
	struct dwc_job *j = ctx;
	const struct knn_geom *g = j->g;
	int64_t oh = g->out[0], ow = g->out[1], kh = g->kernel[0], c = g->c;
	size_t slot = (size_t)(j->gblk * j->pw * 16);
	float *ring = aligned_alloc(64, (j->nring + 1) * slot * sizeof(float));
	float *zero = ring + j->nring * slot;
	float **rp = malloc((size_t)(2 * kh) * sizeof(*rp));
	int64_t *tag = malloc((size_t)j->nring * 2 * sizeof(*tag));

	if (!ring || !rp || !tag) {
		j->failed = 1;
		goto cleanup;
	}
	for (int64_t s = 0; s < 2 * j->nring; s++)
		tag[s] = -1;
	/* the rows above and below the input */
	memset(zero, 0, slot * sizeof(float));
	for (int64_t it = lo; it < hi; it++) {
		int64_t a = it % oh, grp = it / oh % j->ngrp, n = it / oh / j->ngrp;
		int64_t cb0 = grp * j->gblk, nb = j->cblk - cb0 < j->gblk ? j->cblk - cb0 : j->gblk;
		/* image and group: one key per ring row's contents */
		int64_t key = n * j->ngrp + grp;

		for (int64_t u = 0; u < kh; u++) {
			int64_t h = a * g->stride[0] - g->pad[0] + u * g->dil[0];
			int64_t s = ((h % j->nring) + j->nring) % j->nring;

			if (h < 0 || h >= g->in[0]) {
				rp[u] = zero;
				continue;
			}
			if (tag[2 * s] != key || tag[2 * s + 1] != h) {
				dwc_row_in(j, n, h, cb0, nb, ring + s * slot);
				tag[2 * s] = key;
				tag[2 * s + 1] = h;
			}
			rp[u] = ring + s * slot;
		}
		/* DWC_SWEEP blocks at a time, each sweep of the row's outputs
		 * writing whole lines of each position (block by block, one line
		 * a position had each store wait for its line; all blocks at a
		 * time, their inputs left L1) */
		for (int64_t s0 = 0; s0 < nb; s0 += DWC_SWEEP) {
			int64_t ns = nb - s0 < DWC_SWEEP ? nb - s0 : DWC_SWEEP;
			int64_t nv = c - (cb0 + s0 + ns - 1) * 16;
			float **sub = rp + kh;

			for (int64_t u = 0; u < kh; u++)
				sub[u] = rp[u] + s0 * j->pw * 16;
			dwc_row(j, sub, cb0 + s0, ns,
				j->y + ((n * oh + a) * ow) * c + (cb0 + s0) * 16, c,
				(__mmask16)((1u << (nv < 16 ? nv : 16)) - 1));
		}
	}
cleanup:
	free(ring);
	free(rp);
	free(tag);
}

int knn_conv_dw_cl_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		       const float *w, const float *b, float *y, unsigned cl)
{
	struct dwc_job j = { .g = g, .x = x, .y = y };
	const struct knn_wderived *pw;
	struct knn_wderived *tmp = NULL;
	float *coef;
	int64_t row_bytes;

	if (cl != (KNN_CL_SRC | KNN_CL_DST) || g->nsp != 2 || g->group != g->c || g->m != g->c ||
	    g->stride[0] != 1 || g->stride[1] != 1 || g->k_size < DWC_MIN_TAPS ||
	    g->k_size > DWC_MAX_TAPS || g->n * g->out_size < 1 || !rt_pgemm_ok())
		return 0;
	j.cblk = (g->c + 15) / 16;
	j.pw = (g->out[1] - 1) * g->stride[1] + (g->kernel[1] - 1) * g->dil[1] + 1;
	j.nring = (g->kernel[0] - 1) * g->dil[0] + 1;
	row_bytes = j.nring * j.pw * 16 * (int64_t)sizeof(float);
	j.gblk = DWC_RING_BYTES / row_bytes;
	if (j.gblk < 1)
		j.gblk = 1;
	if (j.gblk > j.cblk)
		j.gblk = j.cblk;
	j.ngrp = (j.cblk + j.gblk - 1) / j.gblk;
	/* the steps after the convolution, done on each output as it is made
	 * (up to a residual Add: its operand is stored plain) */
	j.epi = rt_kctx_epilogue(k, k->out[0], 0);
	if (!(pw = knn_wderived_get(k, KNN_WC_DWC, g, w, j.cblk * g->k_size * 16, dwc_pack,
				    &tmp)) ||
	    !(coef = dwc_coef(g, b, j.epi, j.cblk))) {
		knn_wderived_free(tmp);
		return rt_oom(k);
	}
	j.wv = pw->data;
	j.bv = coef;
	j.ev = coef + j.cblk * 16;
	rt_parallel_for(k, g->n * j.ngrp * g->out[0], 1, dwc_rows, &j);
	free(coef);
	knn_wderived_free(tmp);
	if (j.failed)
		return rt_oom(k);
	rt_cl_set(k->out[0], 1);
	dwc_runs++;
	return 1;
}

int64_t knn_conv_dwc_runs(void)
{
	return dwc_runs;
}
