/* k_conv_dtile.c: the AVX-512 tiles of the direct convolutions
 * (k_conv_direct.c; struct knn_direct in k_conv_int.h).  A tile is
 * KNN_DC_MR output channels by up to KNN_DC_NV vectors of sixteen
 * positions, 24 accumulators; each step (one input channel and tap) loads
 * the tile's vectors of input at the step's offset and broadcasts the
 * KNN_DC_MR weights of the step (packed: steps contiguous).  One body,
 * instantiated for every tile shape so its loops unroll into registers;
 * compiled for AVX-512F by function attribute (rt_pgemm_ok() is checked
 * before any call). */
#include <immintrin.h>
#include <stdlib.h>

#include "runtime/kernels/k_conv_epi512.h"
#include "runtime/kernels/k_conv_int.h"

#define K512 __attribute__((target("avx512f"), always_inline)) static inline

/* The node's epilogue steps on channel ch's vectors r (k_conv_epi512.h),
 * an Add of a tensor with its values at the kept lanes' outputs: the
 * tile's first position q0, lanes lm (k_conv_dtile's). */
K512 void dc_epilogue(const int nv, const struct knn_direct *jb, int64_t ch, int64_t q0,
		      const __mmask16 *lm, __m512 *r)
{
	const struct rt_epilogue *e = jb->epi;

	knn_epi512_head(e, nv, r);
	for (size_t s = 0; s < e->n; s++) {
		__m512 m = _mm512_set1_ps(e->coef[2 * e->c * (int64_t)s + ch]);
		__m512 a = _mm512_set1_ps(e->coef[2 * e->c * (int64_t)s + e->c + ch]);
		const float *t = e->t[s] ? e->t[s] + jb->eoff + ch * jb->out_size : NULL;

#pragma GCC unroll 4
		for (int j = 0; j < nv; j++) {
			if (t && jb->dense)
				m = _mm512_maskz_loadu_ps(lm[j], t + q0 + 16 * j);
			else if (t)
				m = _mm512_maskz_expandloadu_ps(lm[j], t + jb->yoff[q0 / 16 + j]);
			r[j] = knn_epi512_rstep(t ? RT_CHAIN_ADD : e->kind[s], r[j], m, a, e->round);
		}
	}
}

/* Steps [k0, k1) of the tile of channels i0.. (tile t) by positions
 * q0..; the sums of earlier chunks are in part (KNN_DC_MR x KNN_DC_NV vectors)
 * when k0 > 0, and go there when k1 is not the last step. */
K512 void dc_tile(const int mr, const int nv, const int masked, const struct knn_direct *jb,
		  int64_t q0, int64_t t, int64_t i0, int64_t k0, int64_t k1, float *part)
{
	__m512 acc[KNN_DC_MR][KNN_DC_NV];
	__mmask16 lm[KNN_DC_NV];
	const float *xq = jb->xp + q0, *w = jb->pw + (t * jb->kd + k0) * KNN_DC_MR;
	const int32_t *off = jb->off + k0, *end = jb->off + k1;
	int64_t v0 = q0 / 16, ohw = jb->out_size;

#pragma GCC unroll 4
	for (int j = 0; j < nv; j++)
		lm[j] = jb->vmask[v0 + j];
#pragma GCC unroll 6
	for (int i = 0; i < mr; i++)
#pragma GCC unroll 4
		for (int j = 0; j < nv; j++)
			acc[i][j] = k0 ? _mm512_load_ps(part + (i * KNN_DC_NV + j) * 16) :
				    _mm512_setzero_ps();
	for (; off < end; off++, w += KNN_DC_MR) {
		const float *p = xq + *off;
		__m512 xv[KNN_DC_NV];

		/* masked: only the kept lanes are loaded, a dropped one's taps
		 * lying past the input's end (the last block read in place) */
#pragma GCC unroll 4
		for (int j = 0; j < nv; j++)
			xv[j] = masked ? _mm512_maskz_loadu_ps(lm[j], p + 16 * j) :
				_mm512_loadu_ps(p + 16 * j);
#pragma GCC unroll 6
		for (int i = 0; i < mr; i++) {
			__m512 wv = _mm512_set1_ps(w[i]);

#pragma GCC unroll 4
			for (int j = 0; j < nv; j++)
				acc[i][j] = _mm512_fmadd_ps(wv, xv[j], acc[i][j]);
		}
	}
	if (k1 < jb->kd) {
#pragma GCC unroll 6
		for (int i = 0; i < mr; i++)
#pragma GCC unroll 4
			for (int j = 0; j < nv; j++)
				_mm512_store_ps(part + (i * KNN_DC_NV + j) * 16, acc[i][j]);
		return;
	}
#pragma GCC unroll 6
	for (int i = 0; i < mr; i++) {
		__m512 bv = _mm512_set1_ps(jb->b ? jb->b[i0 + i] : 0.0f), r[KNN_DC_NV];
		float *yi = jb->y + (i0 + i) * ohw;

#pragma GCC unroll 4
		for (int j = 0; j < nv; j++)
			r[j] = _mm512_add_ps(acc[i][j], bv);
		if (jb->epi)
			dc_epilogue(nv, jb, i0 + i, q0, lm, r);
#pragma GCC unroll 4
		for (int j = 0; j < nv; j++)
			if (jb->dense)   /* q is the output index */
				_mm512_mask_storeu_ps(yi + q0 + 16 * j, lm[j], r[j]);
			else
				_mm512_mask_storeu_ps(yi + jb->yoff[v0 + j],
						      (__mmask16)((1u << __builtin_popcount(lm[j])) - 1),
						      _mm512_maskz_compress_ps(lm[j], r[j]));
	}
}

#define KNN_DC_NVS(r, mk) \
	switch (nv) { \
	case 1: dc_tile(r, 1, mk, jb, q0, t, i0, k0, k1, part); break; \
	case 2: dc_tile(r, 2, mk, jb, q0, t, i0, k0, k1, part); break; \
	case 3: dc_tile(r, 3, mk, jb, q0, t, i0, k0, k1, part); break; \
	default: dc_tile(r, 4, mk, jb, q0, t, i0, k0, k1, part); break; \
	}
#define KNN_DC_MRS(mk) \
	switch (mr) { \
	case 1: KNN_DC_NVS(1, mk) break; \
	case 2: KNN_DC_NVS(2, mk) break; \
	case 3: KNN_DC_NVS(3, mk) break; \
	case 4: KNN_DC_NVS(4, mk) break; \
	case 5: KNN_DC_NVS(5, mk) break; \
	default: KNN_DC_NVS(6, mk) break; \
	}

__attribute__((target("avx512f")))
static void dc_tile_any(int mr, int nv, int masked, const struct knn_direct *jb, int64_t q0,
			int64_t t, int64_t i0, int64_t k0, int64_t k1, float *part)
{
	if (masked)
		KNN_DC_MRS(1)
	else
		KNN_DC_MRS(0)
}

/* Blocks [lo, hi) of positions (up to KNN_DC_NV vectors each) against every
 * channel tile. */
void knn_direct_blocks(void *ctx, int64_t lo, int64_t hi)
{
	struct knn_direct *jb = ctx;
	int64_t nvec = (jb->nq + 15) / 16, tiles = (jb->mg + KNN_DC_MR - 1) / KNN_DC_MR;
	float *part = NULL;

	if (jb->kc < jb->kd &&
	    !(part = aligned_alloc(64, (size_t)(tiles * KNN_DC_MR * KNN_DC_NV * 16) * sizeof(float)))) {
		jb->failed = 1;
		return;
	}
	for (int64_t it = lo; it < hi; it++) {
		int64_t tp = jb->tparts > 1 ? jb->tparts : 1, qb = it / tp, p = it % tp;
		int64_t nv, v0 = knn_direct_part(nvec, KNN_DC_NV, qb, &nv);
		int64_t t0 = p * tiles / tp, t1 = (p + 1) * tiles / tp;
		int masked = jb->in_place && v0 + nv == nvec;

		for (int64_t k0 = 0; k0 < jb->kd; k0 += jb->kc) {
			int64_t k1 = jb->kd - k0 < jb->kc ? jb->kd : k0 + jb->kc;

			for (int64_t t = t0; t < t1; t++) {
				int64_t mr, i0 = knn_direct_part(jb->mg, KNN_DC_MR, t, &mr);

				dc_tile_any((int)mr, (int)nv, masked, jb, v0 * 16, t, i0, k0, k1,
					    part ? part + t * KNN_DC_MR * KNN_DC_NV * 16 : NULL);
			}
		}
	}
	free(part);
}

int64_t knn_direct_part(int64_t n, int64_t most, int64_t p, int64_t *count)
{
	int64_t parts = (n + most - 1) / most, base = n / parts, extra = n % parts;

	*count = base + (p < extra);
	return p * base + (p < extra ? p : extra);
}
