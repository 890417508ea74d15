/* k_conv_cl.c: float32 2-D convolutions on small planes computed directly
 * on AVX-512 with the output channels in the vector lanes.
 *
 * On a 14x14 or 7x7 plane the positions-in-lanes tiles (k_conv_direct.c)
 * waste the lanes past each row (7 of 9 kept with a pad of one); im2col
 * and a product (k_conv_pg.c)
 * copy the input twice and the output once more.  Here a tile is up to
 * 14 consecutive output positions of one row (of the whole plane when its
 * rows are contiguous in the phase copy) by 32 output channels, or up to
 * 7 by 64 (rows of 7): each step (input channel, tap) broadcasts the
 * tile's inputs, read at one offset of the phase copy (k_conv_phase.c),
 * against the step's packed weights, two or four vectors.  Every lane
 * does useful work whatever the plane, and the input is read where it
 * lies.  The finished tile is transposed in registers to rows of
 * positions, one per channel, and the bias and the node's epilogue
 * (rt_int.h) are applied there before the store.
 *
 * Weights packed once per session (k_conv_wcache.c) in panels of 32 (64)
 * channels, each kd steps of 32 (64) floats; (panel, tile) pairs are
 * split over the session's threads, panel-major, and a thread takes its
 * run of a panel's tiles through the steps a chunk at a time. */
#include <immintrin.h>
#include <stdlib.h>

#include "runtime/kernels/k_conv_epi512.h"
#include "runtime/kernels/k_conv_int.h"
#include "runtime/kernels/pgemm.h"

#define CL_MAXP 14        /* positions per tile (by 2 vectors: 28 accumulators) */
#define CL_MAXV 4         /* vectors of channels per panel */
#define CL_MAX_OW 14      /* the widest output rows taken (see cl_fits) */
#define CL_MIN_STEPS 256  /* the fewest steps (channels x taps) taken */
/* Steps per chunk: a chunk's weights of one panel (32 or 64 KiB), read
 * by each of its tiles in turn, stay in L1 or close: a whole panel of 512
 * channels x 3x3 is 1.2 MiB, most of L2, and was read from memory again
 * by each tile (6 cold 512 -> 512 3x3 at 7x7: 0.86x of whole panels) */
#define CL_CHUNK_STEPS 256
#define CL_PART (28 * 16) /* a tile's partial sums: 28 vectors */

#define K512 __attribute__((target("avx512f"), always_inline)) static inline

struct cl_job {
	const float *xp;          /* the input as the offsets read it */
	const float *pw;          /* packed weights */
	const float *b;           /* bias or NULL */
	float *y;                 /* this image's output */
	const int32_t *off;
	const struct rt_epilogue *epi;
	int64_t eoff;             /* y's first element in the epilogue's tensors */
	int64_t m, kd, out_size;
	int64_t width;            /* positions per row unit (a row, or the plane) */
	int64_t qw, ow;           /* a row unit's stride in the copy and in y */
	int64_t tpr, tiles;       /* tiles per row unit, per panel */
	int nv, maxp;             /* a panel's vectors (channels / 16); positions per tile */
	int64_t kc;               /* steps per chunk */
	int failed;               /* scratch memory could not be had */
};

/* One tile's work: panel p against the positions from q0 in the copy
 * (pos0 in y), steps [k0, k1), the sums of earlier steps in part (and
 * left there when k1 is not the last step); the weights at pfd floats
 * past the tile's are fetched into L2 meanwhile. */
struct cl_at {
	int64_t p, q0, pos0, k0, k1, pfd;
	float *part;
};

/* Where this path is taken (measured in the models against the others,
 * bench/README.md): output rows of at most CL_MAX_OW positions, so 14x14
 * and 7x7 planes, with at least 24 output channels (a panel is 32) and
 * CL_MIN_STEPS steps (with fewer, storing a tile costs a quarter of its
 * products or more: MobileNetV2's expansions). */
static int cl_fits(const struct knn_geom *g)
{
	return g->nsp == 2 && g->group == 1 && rt_pgemm_ok() && g->m >= 24 &&
	       g->out[1] <= CL_MAX_OW && g->out_size > 0 && g->c * g->k_size >= CL_MIN_STEPS &&
	       knn_phase_fits(g);
}

/* Panels of 16 * CL_NV(kind) channels. */
#define CL_NV(kind) ((kind) == KNN_WC_CL4 ? 4 : 2)

static void cl_pack(const struct knn_geom *g, const float *w, int kind, float *dst)
{
	int64_t kd = g->c * g->k_size;

	rt_pgemm_pack_panels(w, 1, kd, kd, g->m, 16 * CL_NV(kind), dst);
}

/* All of e's steps on r, sixteen positions of channel ch, the first at
 * element off of the epilogue's tensors (lanes lm). */
K512 __m512 cl_epilogue(const struct rt_epilogue *e, int64_t ch, int64_t off, __mmask16 lm,
			__m512 r)
{
	knn_epi512_head(e, 1, &r);
	for (size_t s = 0; s < e->n; s++) {
		const float *coef = e->coef + 2 * e->c * (int64_t)s;

		if (e->t[s])
			r = _mm512_add_ps(r, _mm512_maskz_loadu_ps(lm, e->t[s] + off));
		else
			r = knn_epi512_rstep(e->kind[s], r, _mm512_set1_ps(coef[ch]),
					     _mm512_set1_ps(coef[e->c + ch]), e->round);
	}
	return r;
}

/* The tile's sums (np positions by jb->nv vectors of channels, as buf:
 * position i's channels 16 v.. at buf + 16 * (v * 16 + i)), to rows of y. */
__attribute__((target("avx512f")))
static void cl_store(const struct cl_job *jb, int64_t ch0, int64_t pos0, int np, float *buf)
{
	__mmask16 lm = (__mmask16)((1u << np) - 1);
	float tb[256] __attribute__((aligned(64)));

	for (int v = 0; v < jb->nv; v++) {
		rt_pgemm_tr16_k512(buf + v * 256, 16, tb, 16);
		for (int c = 0; c < 16 && ch0 + v * 16 + c < jb->m; c++) {
			int64_t ch = ch0 + v * 16 + c;
			__m512 r = _mm512_add_ps(_mm512_load_ps(tb + 16 * c),
						 _mm512_set1_ps(jb->b ? jb->b[ch] : 0.0f));

			if (jb->epi)
				r = cl_epilogue(jb->epi, ch, jb->eoff + ch * jb->out_size + pos0,
						lm, r);
			_mm512_mask_storeu_ps(jb->y + ch * jb->out_size + pos0, lm, r);
		}
	}
}

/* A tile of np positions (struct cl_at). */
K512 void cl_tile(const int np, const int nv, const struct cl_job *jb, const struct cl_at *a)
{
	__m512 acc[CL_MAXP][CL_MAXV];
	float buf[16 * 16 * CL_MAXV] __attribute__((aligned(64)));
	const float *w = jb->pw + (a->p * jb->kd + a->k0) * 16 * nv, *xq = jb->xp + a->q0;
	const int32_t *off = jb->off + a->k0, *end = jb->off + a->k1;
	int64_t pfd = a->pfd;

#pragma GCC unroll 14
	for (int i = 0; i < np; i++)
#pragma GCC unroll 4
		for (int v = 0; v < nv; v++)
			acc[i][v] = a->k0 ? _mm512_load_ps(a->part + (i * nv + v) * 16) :
				    _mm512_setzero_ps();
	for (; off < end; off++, w += 16 * nv) {
		const float *x = xq + *off;
		__m512 wv[CL_MAXV];

#pragma GCC unroll 4
		for (int v = 0; v < nv; v++) {
			wv[v] = _mm512_load_ps(w + 16 * v);
			_mm_prefetch((const char *)(w + pfd + 16 * v), _MM_HINT_T1);
		}
#pragma GCC unroll 14
		for (int i = 0; i < np; i++) {
			__m512 xb = _mm512_set1_ps(x[i]);

#pragma GCC unroll 4
			for (int v = 0; v < nv; v++)
				acc[i][v] = _mm512_fmadd_ps(xb, wv[v], acc[i][v]);
		}
	}
	if (a->k1 < jb->kd) {
#pragma GCC unroll 14
		for (int i = 0; i < np; i++)
#pragma GCC unroll 4
			for (int v = 0; v < nv; v++)
				_mm512_store_ps(a->part + (i * nv + v) * 16, acc[i][v]);
		return;
	}
#pragma GCC unroll 16
	for (int i = 0; i < 16; i++)
#pragma GCC unroll 4
		for (int v = 0; v < nv; v++)
			_mm512_store_ps(buf + 256 * v + 16 * i, i < np ? acc[i][v] : _mm512_setzero_ps());
	cl_store(jb, a->p * 16 * nv, a->pos0, np, buf);
}

#define CL_CASE(n) case n: cl_tile(n, 2, jb, a); break;
#define CL_CASE4(n) case n: cl_tile(n, 4, jb, a); break;

__attribute__((target("avx512f")))
static void cl_tile_any(int np, const struct cl_job *jb, const struct cl_at *a)
{
	if (jb->nv == 4)
		switch (np) {
		CL_CASE4(1) CL_CASE4(2) CL_CASE4(3) CL_CASE4(4) CL_CASE4(5) CL_CASE4(6)
		default: cl_tile(7, 4, jb, a); break;
		}
	else
		switch (np) {
		CL_CASE(1) CL_CASE(2) CL_CASE(3) CL_CASE(4) CL_CASE(5) CL_CASE(6) CL_CASE(7)
		CL_CASE(8) CL_CASE(9) CL_CASE(10) CL_CASE(11) CL_CASE(12) CL_CASE(13)
		default: cl_tile(14, 2, jb, a); break;
		}
}

/* (panel, tile) pairs [lo, hi), panel-major: an rt_range_fn.  Each
 * panel's run of tiles goes through the steps a chunk at a time, so a
 * chunk's weights serve every tile from L2. */
static void cl_run(void *ctx, int64_t lo, int64_t hi)
{
	struct cl_job *jb = ctx;
	int64_t nr = 16 * jb->nv;
	float *part = NULL;

	if (jb->kc < jb->kd &&
	    !(part = aligned_alloc(64, (size_t)(jb->tiles * CL_PART) * sizeof(float)))) {
		jb->failed = 1;
		return;
	}
	for (int64_t it = lo; it < hi;) {
		int64_t p = it / jb->tiles, t0 = it % jb->tiles;
		int64_t t1 = jb->tiles - t0 < hi - it ? jb->tiles : t0 + hi - it;

		for (int64_t k0 = 0; k0 < jb->kd; k0 += jb->kc) {
			int64_t k1 = jb->kd - k0 < jb->kc ? jb->kd : k0 + jb->kc;

			for (int64_t t = t0; t < t1; t++) {
				int64_t row = t / jb->tpr, np;
				int64_t x0 = knn_direct_part(jb->width, jb->maxp, t % jb->tpr, &np);
				struct cl_at a = { p, row * jb->qw + x0, row * jb->ow + x0, k0, k1, 0,
						   part ? part + (t - t0) * CL_PART : NULL };

				/* the first tile fetches the next chunk's weights
				 * (the next panel's first) as it goes: weights come
				 * cold from memory, each read once per run */
				if (t == t0 && k1 < jb->kd)
					a.pfd = (k1 - k0) * nr;
				else if (t == t0 && (p + 1) * nr < jb->m)
					a.pfd = (jb->kd - k0) * nr;
				cl_tile_any((int)np, jb, &a);
			}
		}
		it += t1 - t0;
	}
	free(part);
}

int knn_conv_cl_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		    const float *w, const float *b, float *y)
{
	struct knn_phase l;
	const struct rt_epilogue *epi;
	const struct knn_wderived *pw;
	struct knn_wderived *tmp = NULL;
	int32_t *off = NULL;
	float *xp = NULL;
	int64_t kd = g->c * g->k_size, panels, rows;
	struct cl_job jb = { .b = b, .m = g->m, .kd = kd, .out_size = g->out_size };
	int rc = 1, kind;

	if (!cl_fits(g))
		return 0;
	knn_phase_init(g, &l);
	/* a row unit: one output row, or the whole plane when its rows lie
	 * one after another in the copy too */
	rows = l.pw == g->out[1] ? 1 : g->out[0];
	jb.width = rows == 1 ? g->out_size : g->out[1];
	/* tiles of 28 accumulators: rows of at most 7 by 64 channels (when
	 * panels of 64 leave no more lanes idle than panels of 32: 224
	 * channels are 7 x 32 but 3.5 x 64), else up to 14 positions by 32 */
	kind = jb.width <= 7 && (g->m + 63) / 64 * 2 == (g->m + 31) / 32 ? KNN_WC_CL4 :
	       KNN_WC_CL;
	jb.nv = CL_NV(kind);
	jb.maxp = 28 / jb.nv;
	panels = (g->m + 16 * jb.nv - 1) / (16 * jb.nv);
	/* the steps after the convolution, done on each tile as it is stored */
	epi = rt_kctx_epilogue(k, k->out[0], 1);
	if (!(pw = knn_wderived_get(k, kind, g, w, panels * 16 * jb.nv * kd, cl_pack, &tmp)) ||
	    !(off = malloc((size_t)kd * sizeof(*off))) ||
	    (!l.in_place && !(xp = malloc((size_t)(g->c * l.chan) * sizeof(float))))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	knn_phase_offsets(&l, off);
	jb.qw = l.pw;
	jb.ow = g->out[1];
	jb.tpr = (jb.width + jb.maxp - 1) / jb.maxp;
	jb.tiles = rows * jb.tpr;
	jb.kc = CL_CHUNK_STEPS;
	jb.pw = pw->data;
	jb.off = off;
	jb.epi = epi;
	for (int64_t n = 0; n < g->n; n++) {
		jb.xp = knn_phase_image(k, &l, x + n * g->c * g->in_size, xp);
		jb.y = y + n * g->m * g->out_size;
		jb.eoff = n * g->m * g->out_size;
		rt_parallel_for(k, panels * jb.tiles, 1, cl_run, &jb);
		if (jb.failed) {
			rc = rt_oom(k);
			break;
		}
	}
cleanup:
	knn_wderived_free(tmp);
	free(off);
	free(xp);
	return rc;
}
