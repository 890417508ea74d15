/* k_conv_direct.c: float32 2-D convolutions computed directly on AVX-512,
 * output positions in the vector lanes, without im2col (the tiles:
 * k_conv_dtile.c).
 *
 * The input is read through its phase-plane copy (k_conv_phase.c): each
 * step (channel, tap) is one offset, and output (oy, ox) is computed at
 * the flattened position q = oy * pw + ox of a plane pw wide, so sixteen
 * consecutive q are one vector load per tap, whatever the rows.  The q
 * whose column lies past the output row (ox >= ow) are computed and
 * dropped: each vector's kept lanes go to the output, where they are
 * consecutive.
 *
 * The weights are packed once per session when W is a model constant
 * (k_conv_wcache.c).
 * Positions are split over the session's threads; each block of
 * positions meets every channel tile, its input staying in L1/L2. */
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_conv_int.h"
#include "runtime/kernels/pgemm.h"

#define DC_L1 (32 << 10)         /* a chunk's input under a block */
#define DC_BIG_1X1 (1 << 18)     /* 1x1 weights of 1 MiB */

/* W packed in tiles of KNN_DC_MR channels (knn_direct_part's cut), each
 * kd steps of KNN_DC_MR floats: the tiles' broadcast operand. */
static void dc_pack(const struct knn_geom *g, const float *w, int kind, float *dst)
{
	int64_t kd = g->c * g->k_size, tiles = (g->m + KNN_DC_MR - 1) / KNN_DC_MR;

	(void)kind;
	for (int64_t t = 0; t < tiles; t++) {
		int64_t mr, i0 = knn_direct_part(g->m, KNN_DC_MR, t, &mr);

		rt_pgemm_pack_panels(w + i0 * kd, 1, kd, kd, mr, KNN_DC_MR,
				     dst + t * KNN_DC_MR * kd);
	}
}

/* Where this path is taken (measured against the others in the models,
 * bench/README.md): OpenBLAS is as fast on 1x1 products whose weights
 * reach 1 MiB, on strided convolutions of 256 channels or more and on
 * grouped ones; pgemm's weights-side products (k_conv_pg.c) faster on 1x1
 * ones whose input reaches 1 MiB (0.6-0.9x the time: PointNet++'s
 * grouped neighbours, 64 to 128 channels on 16384 positions).  (Windows
 * larger than 1x1 of 16 channels or more go to oneDNN first:
 * k_conv_dnnl.c.) */
static int dc_fits(const struct knn_geom *g)
{
	if (g->nsp != 2 || g->group != 1 || g->out_size <= 64 || !rt_pgemm_ok() ||
	    !knn_phase_fits(g) || (knn_conv_pointwise(g) && knn_conv_pg_wide(g)))
		return 0;
	return !((g->k_size == 1 && g->c * g->m >= DC_BIG_1X1) ||
		 ((g->stride[0] > 1 || g->stride[1] > 1) && g->c >= 256));
}

/* Parts to cut the channel tiles into so that the threads have four
 * items each: a small plane has few blocks of positions (17x17: five),
 * which two threads split 3:2 (an Inception block's 1x1 convolutions
 * 1.5x faster at two threads than at one, oneDNN's 1.85x). */
static int64_t dc_tparts(struct rt_kctx *k, int64_t blocks, int64_t m)
{
	int64_t want = 4 * rt_threads(k), tiles = (m + KNN_DC_MR - 1) / KNN_DC_MR, p;

	if (rt_threads(k) < 2 || blocks >= want)
		return 1;
	p = (want + blocks - 1) / blocks;
	return p < tiles ? p : tiles;
}

/* Per vector of q, the lanes kept and the output index of the first. */
static void dc_lanes(const struct knn_phase *l, int64_t nq, uint16_t *vmask, int64_t *yoff)
{
	int64_t ow = l->g->out[1], col = 0, out = 0;   /* q's column, output index */

	for (int64_t v = 0; v < (nq + 15) / 16; v++) {
		uint16_t m = 0;

		yoff[v] = out;
		for (int64_t q = v * 16; q < v * 16 + 16 && q < nq; q++) {
			if (col < ow) {
				m |= (uint16_t)(1u << (q - v * 16));
				out++;
			}
			if (++col == l->pw)
				col = 0;
		}
		vmask[v] = m;
	}
}

int knn_conv_direct_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
			const float *w, const float *b, float *y)
{
	struct knn_phase l;
	const struct rt_epilogue *epi;
	int64_t kd, nq, nv, slack, span, kc;
	const struct knn_wderived *pw;
	struct knn_wderived *tmp = NULL;
	int32_t *off = NULL;
	uint16_t *vmask = NULL;
	int64_t *yoff = NULL;
	float *xp = NULL;
	int rc = 1;

	if (!dc_fits(g))
		return 0;
	/* the steps after the convolution, done on each tile as it is stored */
	epi = rt_kctx_epilogue(k, k->out[0], 1);
	knn_phase_init(g, &l);
	kd = g->c * g->k_size;
	nq = g->out[0] * l.pw;
	nv = (nq + 15) / 16;
	/* the last vector's dropped lanes read up to this far past the copy */
	slack = (g->kernel[1] - 1) * g->dil[1] + 16;
	/* a chunk's channels: the input rows under a block in DC_L1 bytes */
	span = l.phases * (16 * KNN_DC_NV + (g->kernel[0] - 1) * g->dil[0] / l.sy * l.pw +
			   (g->kernel[1] - 1) * g->dil[1] / l.sx);
	kc = DC_L1 / (span * (int64_t)sizeof(float));
	kc = (kc < 1 ? 1 : kc) * g->k_size;
	if (!(pw = knn_wderived_get(k, KNN_WC_DIRECT, g, w, (g->m + KNN_DC_MR - 1) / KNN_DC_MR *
				    KNN_DC_MR * kd, dc_pack, &tmp)) ||
	    !(off = malloc((size_t)kd * sizeof(*off))) ||
	    !(vmask = malloc((size_t)nv * sizeof(*vmask))) ||
	    !(yoff = malloc((size_t)nv * sizeof(*yoff))) ||
	    (!l.in_place && !(xp = rt_big_alloc((size_t)(g->c * l.chan + slack) * sizeof(float))))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	if (xp)
		memset(xp + g->c * l.chan, 0, (size_t)slack * sizeof(float));
	knn_phase_offsets(&l, off);
	dc_lanes(&l, nq, vmask, yoff);
	for (int64_t n = 0; n < g->n; n++) {
		const float *xn = x + n * g->c * g->in_size;
		struct knn_direct jb = { xn, pw->data, b, y + n * g->m * g->out_size, off, vmask,
					 yoff, g->m, kd, nq, kc, g->out_size, epi,
					 n * g->m * g->out_size, l.in_place, l.pw == g->out[1], 0, 1 };

		jb.xp = knn_phase_image(k, &l, xn, xp);
		jb.tparts = dc_tparts(k, (nv + KNN_DC_NV - 1) / KNN_DC_NV, g->m);
		rt_parallel_for(k, (nv + KNN_DC_NV - 1) / KNN_DC_NV * jb.tparts, 1,
				knn_direct_blocks, &jb);
		if (jb.failed) {
			rc = rt_oom(k);
			break;
		}
	}
cleanup:
	knn_wderived_free(tmp);
	free(off);
	free(vmask);
	free(yoff);
	rt_big_free(xp);
	return rc;
}
