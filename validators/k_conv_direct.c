/* k_conv_direct.c: float32 2-D convolutions of stride 1 computed directly
 * on AVX-512, output positions in the vector lanes, without im2col or
 * Winograd transforms.
 *
 * The input is read through a padded copy (or in place when there is no
 * padding): channel plane hp x wp.  Output (oy, ox) is computed at the
 * flattened position q = oy * wp + ox, so that kernel tap (ky, kx) of
 * channel ci reads xp[ci * hp * wp + q + ky * dil * wp + kx * dil] for
 * every q: sixteen consecutive q are one vector load per tap, whatever
 * the rows.  The q whose column lies past the output row (ox >= ow, the
 * kernel's overhang) are computed and dropped: each vector's valid lanes
 * are compressed into the output, where they are consecutive.
 *
 * A tile is DC_MR output channels by DC_NV vectors of positions (24
 * accumulators); each step (one channel and tap) loads DC_NV vectors of
 * input and broadcasts DC_MR weights from the packed weights (steps
 * contiguous, DC_MR channels per step, as pgemm's A tiles).  The weights
 * are packed once per session when W is a model constant.  Positions
 * are split over the session's threads; each block of positions meets
 * every channel tile, its input staying in L1/L2. */
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include "validators/k_conv_int.h"
#include "validators/pgemm.h"

#define DC_MR 6
#define DC_NV 4
#define DC_L1 (32 << 10)
#define DC_BIG_1X1 (1 << 18)    /* weights of 1 MiB */

struct dc_weights {
	struct knn_wcache h;      /* KNN_WC_DIRECT, the W data packed */
	int64_t group_len;        /* floats per group */
	float *pw;
};

static void dc_weights_free(void *p)
{
	struct dc_weights *c = p;

	if (c)
		free(c->pw);
	free(c);
}

/* n items cut into parts of at most `most` as even as they come: part
 * p's first item and count. */
static int64_t dc_part(int64_t n, int64_t most, int64_t p, int64_t *count)
{
	int64_t parts = (n + most - 1) / most, base = n / parts, extra = n % parts;

	*count = base + (p < extra);
	return p * base + (p < extra ? p : extra);
}

static struct dc_weights *dc_pack(const struct knn_geom *g, const float *w)
{
	int64_t mg = g->m / g->group, kd = g->c / g->group * g->k_size;
	struct dc_weights *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->h.kind = KNN_WC_DIRECT;
	c->h.w = w;
	c->group_len = (mg + DC_MR - 1) / DC_MR * DC_MR * kd;
	if (!(c->pw = malloc((size_t)(c->group_len * g->group) * sizeof(float)))) {
		free(c);
		return NULL;
	}
	for (int64_t gi = 0; gi < g->group; gi++)
		for (int64_t t = 0; t < (mg + DC_MR - 1) / DC_MR; t++) {
			int64_t mr, i0 = dc_part(mg, DC_MR, t, &mr);

			rt_pgemm_pack_panels(w + (gi * mg + i0) * kd, 1, kd, kd, mr, DC_MR,
					     c->pw + gi * c->group_len + t * DC_MR * kd);
		}
	return c;
}

/* The packed weights: the node's cached ones when W is a model constant
 * (packed and cached on first use), else packed now into *tmp. */
static const struct dc_weights *dc_weights_get(struct rt_kctx *k, const struct knn_geom *g,
					       const float *w, struct dc_weights **tmp)
{
	struct dc_weights *c = knn_wcache_get(k, KNN_WC_DIRECT, w);

	*tmp = NULL;
	if (c)
		return c;
	if (!(c = dc_pack(g, w)))
		return NULL;
	if (rt_in_const(k, 1) && !rt_node_cache(k) &&
	    rt_node_cache_set(k, c, dc_weights_free,
			      c->group_len * g->group * (int64_t)sizeof(float)) == 0)
		return c;
	*tmp = c;
	return c;
}

struct dc_job {
	const struct knn_geom *g;
	const float *xp;          /* the group's padded input */
	const float *pw;          /* the group's packed weights */
	const float *b;           /* the group's bias or NULL */
	float *y;                 /* the group's output */
	const int32_t *off;       /* per step: its channel's and tap's offset */
	const uint16_t *vmask;    /* per vector of q: lanes kept */
	const int64_t *yoff;      /* per vector: output index of its first kept lane */
	int64_t mg, kd, nq, wp;
	int64_t kc;               /* steps per chunk: a block's input of a chunk in L1 */
	int in_place;             /* xp is the input itself (no slack past it) */
	int dense;                /* wp == ow: no lane is dropped */
	int failed;               /* a thread's scratch could not be had */
};

#define K512 __attribute__((target("avx512f"), always_inline)) static inline

/* Steps [k0, k1) of the tile of channels i0.. (tile t) by positions
 * q0..; the sums of earlier chunks are in part (DC_MR x DC_NV vectors)
 * when k0 > 0, and go there when k1 is not the last step. */
K512 void dc_tile(const int mr, const int nv, const int masked, const struct dc_job *jb,
		  int64_t q0, int64_t t, int64_t i0, int64_t k0, int64_t k1, float *part)
{
	__m512 acc[DC_MR][DC_NV];
	__mmask16 lm[DC_NV];
	const float *xq = jb->xp + q0, *w = jb->pw + (t * jb->kd + k0) * DC_MR;
	const int32_t *off = jb->off + k0, *end = jb->off + k1;
	int64_t v0 = q0 / 16, ohw = jb->g->out_size;

#pragma GCC unroll 4
	for (int j = 0; j < nv; j++)
		lm[j] = jb->vmask[v0 + j];
#pragma GCC unroll 6
	for (int i = 0; i < mr; i++)
#pragma GCC unroll 4
		for (int j = 0; j < nv; j++)
			acc[i][j] = k0 ? _mm512_load_ps(part + (i * DC_NV + j) * 16) :
				    _mm512_setzero_ps();
	for (; off < end; off++, w += DC_MR) {
		const float *p = xq + *off;
		__m512 xv[DC_NV];

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
				_mm512_store_ps(part + (i * DC_NV + j) * 16, acc[i][j]);
		return;
	}
#pragma GCC unroll 6
	for (int i = 0; i < mr; i++) {
		__m512 bv = _mm512_set1_ps(jb->b ? jb->b[i0 + i] : 0.0f);
		float *yi = jb->y + (i0 + i) * ohw;

#pragma GCC unroll 4
		for (int j = 0; j < nv; j++) {
			__m512 r = _mm512_add_ps(acc[i][j], bv);

			if (jb->dense)   /* q is the output index */
				_mm512_mask_storeu_ps(yi + q0 + 16 * j, lm[j], r);
			else
				_mm512_mask_storeu_ps(yi + jb->yoff[v0 + j],
						      (__mmask16)((1u << __builtin_popcount(lm[j])) - 1),
						      _mm512_maskz_compress_ps(lm[j], r));
		}
	}
}

#define DC_NVS(r, mk) \
	switch (nv) { \
	case 1: dc_tile(r, 1, mk, jb, q0, t, i0, k0, k1, part); break; \
	case 2: dc_tile(r, 2, mk, jb, q0, t, i0, k0, k1, part); break; \
	case 3: dc_tile(r, 3, mk, jb, q0, t, i0, k0, k1, part); break; \
	default: dc_tile(r, 4, mk, jb, q0, t, i0, k0, k1, part); break; \
	}
#define DC_MRS(mk) \
	switch (mr) { \
	case 1: DC_NVS(1, mk) break; \
	case 2: DC_NVS(2, mk) break; \
	case 3: DC_NVS(3, mk) break; \
	case 4: DC_NVS(4, mk) break; \
	case 5: DC_NVS(5, mk) break; \
	default: DC_NVS(6, mk) break; \
	}

__attribute__((target("avx512f")))
static void dc_tile_any(int mr, int nv, int masked, const struct dc_job *jb, int64_t q0,
			int64_t t, int64_t i0, int64_t k0, int64_t k1, float *part)
{
	if (masked)
		DC_MRS(1)
	else
		DC_MRS(0)
}

/* Blocks [lo, hi) of positions (up to DC_NV vectors each) against every
 * channel tile. */
static void dc_blocks(void *ctx, int64_t lo, int64_t hi)
{
	struct dc_job *jb = ctx;
	int64_t nvec = (jb->nq + 15) / 16, tiles = (jb->mg + DC_MR - 1) / DC_MR;
	float *part = NULL;

	if (jb->kc < jb->kd &&
	    !(part = aligned_alloc(64, (size_t)(tiles * DC_MR * DC_NV * 16) * sizeof(float)))) {
		jb->failed = 1;
		return;
	}
	for (int64_t qb = lo; qb < hi; qb++) {
		int64_t nv, v0 = dc_part(nvec, DC_NV, qb, &nv);
		int masked = jb->in_place && v0 + nv == nvec;

		for (int64_t k0 = 0; k0 < jb->kd; k0 += jb->kc) {
			int64_t k1 = jb->kd - k0 < jb->kc ? jb->kd : k0 + jb->kc;

			for (int64_t t = 0; t < tiles; t++) {
				int64_t mr, i0 = dc_part(jb->mg, DC_MR, t, &mr);

				dc_tile_any((int)mr, (int)nv, masked, jb, v0 * 16, t, i0, k0, k1,
					    part ? part + t * DC_MR * DC_NV * 16 : NULL);
			}
		}
	}
	free(part);
}

struct dc_padjob {
	const struct knn_geom *g;
	const float *x;
	float *xp;
	int64_t hp, wp;
};

static void dc_pad(void *ctx, int64_t lo, int64_t hi)
{
	const struct dc_padjob *p = ctx;
	const struct knn_geom *g = p->g;
	int64_t ih = g->in[0], iw = g->in[1];

	for (int64_t c = lo; c < hi; c++) {
		float *d = p->xp + c * p->hp * p->wp;
		const float *s = p->x + c * g->in_size;

		memset(d, 0, (size_t)(p->hp * p->wp) * sizeof(float));
		for (int64_t r = 0; r < ih; r++)
			memcpy(d + (r + g->pad[0]) * p->wp + g->pad[1], s + r * iw,
			       (size_t)iw * sizeof(float));
	}
}

/* Where this path is taken (measured against the others in the models,
 * bench/README.md): Winograd's F(2x2, 3x3) does fewer products and is
 * faster above 64 input channels; OpenBLAS is as fast on 1x1 products
 * whose weights reach 1 MiB, and on grouped ones. */
static int dc_fits(const struct knn_geom *g)
{
	int wino = g->k_size == 9 && g->kernel[0] == 3 && g->dil[0] == 1 && g->dil[1] == 1 &&
		   g->m >= 16 && g->out_size >= 100;

	return !(wino && g->c > 64) && !(g->k_size == 1 && g->c * g->m >= DC_BIG_1X1) &&
	       g->group == 1 && g->nsp == 2 && g->stride[0] == 1 && g->stride[1] == 1 &&
	       g->out_size > 64 &&
	       g->c / g->group * (g->in[0] + g->pad[0] + g->pad[2]) *
	       (g->in[1] + g->pad[1] + g->pad[3]) < INT32_MAX && rt_pgemm_ok();
}

int knn_conv_direct_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
			const float *w, const float *b, float *y)
{
	int64_t cg = g->c / g->group, mg = g->m / g->group, kd = cg * g->k_size;
	int64_t hp = g->in[0] + g->pad[0] + g->pad[2], wp = g->in[1] + g->pad[1] + g->pad[3];
	int64_t oh = g->out[0], ow = g->out[1], nq = oh * wp, nv = (nq + 15) / 16;
	int inplace = hp == g->in[0] && wp == g->in[1];
	/* the last vector's dropped lanes read up to this far past the copy */
	int64_t slack = (g->kernel[1] - 1) * g->dil[1] + 16;
	/* a chunk's channels: their input rows under a block in DC_L1 bytes */
	int64_t span = 16 * DC_NV + (g->kernel[0] - 1) * g->dil[0] * wp +
		       (g->kernel[1] - 1) * g->dil[1];
	int64_t kc = DC_L1 / (span * (int64_t)sizeof(float));

	kc = (kc < 1 ? 1 : kc) * g->k_size;
	const struct dc_weights *pw;
	struct dc_weights *tmp = NULL;
	int32_t *off = NULL;
	uint16_t *vmask = NULL;
	int64_t *yoff = NULL;
	float *xp = NULL;
	int rc = 1;

	if (!dc_fits(g))
		return 0;
	if (!(pw = dc_weights_get(k, g, w, &tmp)) ||
	    !(off = malloc((size_t)kd * sizeof(*off))) ||
	    !(vmask = malloc((size_t)nv * sizeof(*vmask))) ||
	    !(yoff = malloc((size_t)nv * sizeof(*yoff))) ||
	    (!inplace && !(xp = malloc((size_t)(cg * hp * wp + slack) * sizeof(float))))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	if (xp)
		memset(xp + cg * hp * wp, 0, (size_t)slack * sizeof(float));
	for (int64_t s = 0; s < kd; s++) {
		int64_t kk = s % g->k_size;

		off[s] = (int32_t)((s / g->k_size) * (inplace ? g->in_size : hp * wp) +
				   (kk / g->kernel[1]) * g->dil[0] * wp +
				   (kk % g->kernel[1]) * g->dil[1]);
	}
	for (int64_t v = 0; v < nv; v++) {
		uint16_t m = 0;
		int64_t first = -1;

		for (int64_t q = v * 16; q < v * 16 + 16 && q < nq; q++)
			if (q % wp < ow) {
				m |= (uint16_t)(1u << (q - v * 16));
				if (first < 0)
					first = q;
			}
		vmask[v] = m;
		yoff[v] = first < 0 ? 0 : first / wp * ow + first % wp;
	}
	for (int64_t item = 0; item < g->n * g->group; item++) {
		int64_t n = item / g->group, gi = item % g->group;
		const float *xg = x + (n * g->c + gi * cg) * g->in_size;
		struct dc_job jb = { g, xg, pw->pw + gi * pw->group_len, b ? b + gi * mg : NULL,
				     y + (n * g->m + gi * mg) * g->out_size, off, vmask, yoff,
				     mg, kd, nq, wp, kc, inplace, wp == ow, 0 };

		if (!inplace) {
			struct dc_padjob pj = { g, xg, xp, hp, wp };

			rt_parallel_for(k, cg, 4, dc_pad, &pj);
			jb.xp = xp;
		}
		rt_parallel_for(k, (nv + DC_NV - 1) / DC_NV, 1, dc_blocks, &jb);
		if (jb.failed) {
			rc = rt_oom(k);
			break;
		}
	}
cleanup:
	dc_weights_free(tmp);
	free(off);
	free(vmask);
	free(yoff);
	free(xp);
	return rc;
}
