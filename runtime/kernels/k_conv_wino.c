/* k_conv_wino.c: float32 3x3 convolutions of stride 1 by Winograd's
 * minimal filtering F(2x2, 3x3) (Lavin and Gray, "Fast Algorithms for
 * Convolutional Neural Networks", 2015): each 2x2 output tile costs 16
 * multiplications per channel pair instead of 36.  The output is cut into
 * tiles; each 4x4 input tile d becomes V = B^T d B, each 3x3 filter g
 * becomes U = G g G^T (once per session when W is a model constant, kept
 * in the node's cache), the 16 positions of the tiles are 16 independent
 * matrix products M = U V over the channels, and each tile's output is
 * A^T M A.  Tiles are processed in blocks that keep V and M near 8 MiB.
 * The transforms add and halve only: the result differs from the direct
 * sum by a few float32 roundings. */
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/gemm.h"
#include "runtime/kernels/k_conv_int.h"

/* U = G g G^T for every (output, input) channel pair, G = [1 0 0; .5 .5 .5;
 * .5 -.5 .5; 0 0 1], into u [16][m][c]. */
static void wg_transform_weights(const struct knn_geom *g, const float *w, int kind,
				 float *u)
{
	int64_t mc = g->m * g->c;

	(void)kind;
	for (int64_t i = 0; i < mc; i++) {
		const float *f = w + i * 9;
		float t[4][3];

		for (int j = 0; j < 3; j++) {
			t[0][j] = f[j];
			t[1][j] = 0.5f * (f[j] + f[3 + j] + f[6 + j]);
			t[2][j] = 0.5f * (f[j] - f[3 + j] + f[6 + j]);
			t[3][j] = f[6 + j];
		}
		for (int r = 0; r < 4; r++) {
			u[(r * 4 + 0) * mc + i] = t[r][0];
			u[(r * 4 + 1) * mc + i] = 0.5f * (t[r][0] + t[r][1] + t[r][2]);
			u[(r * 4 + 2) * mc + i] = 0.5f * (t[r][0] - t[r][1] + t[r][2]);
			u[(r * 4 + 3) * mc + i] = t[r][2];
		}
	}
}

struct wg_job {
	const struct knn_geom *g;
	const float *x, *u, *b;   /* x: one image */
	float *y, *v, *mo;        /* y: one image; v [16][c][pb]; mo [16][m][pb] */
	int64_t tw, p0, pb;       /* tiles per row; this block's first, count */
	int failed;               /* a chunk's scratch could not be had */
};

/* V of channels [lo, hi) for the block's tiles: B^T d B with B^T =
 * [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].  A run of tiles in one tile
 * row reads four input rows: they are copied with their padding into
 * `pad`, combined down the columns (t = B^T d) for the whole width, and
 * then across, each of the 16 positions in one contiguous store run. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void wg_input(void *ctx, int64_t lo, int64_t hi)
{
	const struct wg_job *jb = ctx;
	const struct knn_geom *g = jb->g;
	int64_t h = g->in[0], w = g->in[1], cp = g->c * jb->pb, wp = 2 * jb->tw + 2;
	float *pad = malloc((size_t)(8 * wp) * sizeof(float)), *t = pad + 4 * wp;

	if (!pad) {
		((struct wg_job *)ctx)->failed = 1;
		return;
	}
	for (int64_t ch = lo; ch < hi; ch++) {
		const float *xc = jb->x + ch * g->in_size;

		for (int64_t q0 = 0; q0 < jb->pb;) {
			int64_t p = jb->p0 + q0, th = p / jb->tw, tw0 = p % jb->tw;
			int64_t n = jb->tw - tw0 < jb->pb - q0 ? jb->tw - tw0 : jb->pb - q0;
			float *vo = jb->v + ch * jb->pb + q0;

			for (int r = 0; r < 4; r++) {
				int64_t yy = 2 * th - g->pad[0] + r;
				float *pr = pad + r * wp;

				/* columns j - pad[1] of row yy: zeros, the row, zeros */
				int64_t a = g->pad[1] < wp ? g->pad[1] : wp;
				int64_t e = g->pad[1] + w < wp ? g->pad[1] + w : wp;

				if (yy < 0 || yy >= h || e <= a) {
					memset(pr, 0, (size_t)wp * sizeof(float));
					continue;
				}
				memset(pr, 0, (size_t)a * sizeof(float));
				memcpy(pr + a, xc + yy * w + (a - g->pad[1]), (size_t)(e - a) * sizeof(float));
				memset(pr + e, 0, (size_t)(wp - e) * sizeof(float));
			}
			for (int64_t j = 0; j < wp; j++) {
				t[j] = pad[j] - pad[2 * wp + j];
				t[wp + j] = pad[wp + j] + pad[2 * wp + j];
				t[2 * wp + j] = pad[2 * wp + j] - pad[wp + j];
				t[3 * wp + j] = pad[wp + j] - pad[3 * wp + j];
			}
			for (int r = 0; r < 4; r++) {
				const float *tr = t + r * wp + 2 * tw0;
				float *v0 = vo + (r * 4) * cp, *v1 = v0 + cp, *v2 = v1 + cp, *v3 = v2 + cp;

				for (int64_t i = 0; i < n; i++) {
					v0[i] = tr[2 * i] - tr[2 * i + 2];
					v1[i] = tr[2 * i + 1] + tr[2 * i + 2];
					v2[i] = tr[2 * i + 2] - tr[2 * i + 1];
					v3[i] = tr[2 * i + 1] - tr[2 * i + 3];
				}
			}
			q0 += n;
		}
	}
	free(pad);
}

/* Positions [lo, hi) of the 16: M = U V over the channels. */
static void wg_products(void *ctx, int64_t lo, int64_t hi)
{
	const struct wg_job *jb = ctx;
	int64_t m = jb->g->m, c = jb->g->c;

	for (int64_t i = lo; i < hi; i++)
		rt_gemm_f32(0, 0, m, jb->pb, c, 1, jb->u + i * m * c, c,
			    jb->v + i * c * jb->pb, jb->pb, 0, jb->mo + i * m * jb->pb, jb->pb);
}

/* Output channels [lo, hi) of the block's tiles: A^T M A + bias with A^T =
 * [1 1 1 0; 0 1 -1 -1], a run of tiles in one tile row at a time into two
 * output rows (`row`), then copied up to the output's edges. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void wg_output(void *ctx, int64_t lo, int64_t hi)
{
	const struct wg_job *jb = ctx;
	const struct knn_geom *g = jb->g;
	int64_t oh = g->out[0], ow = g->out[1], mp = g->m * jb->pb;
	float *row = malloc((size_t)(4 * jb->tw + 4) * sizeof(float));

	if (!row) {
		((struct wg_job *)ctx)->failed = 1;
		return;
	}
	for (int64_t k = lo; k < hi; k++) {
		float bias = jb->b ? jb->b[k] : 0, *yk = jb->y + k * g->out_size;

		for (int64_t q0 = 0; q0 < jb->pb;) {
			int64_t p = jb->p0 + q0, th = p / jb->tw, tw0 = p % jb->tw;
			int64_t n = jb->tw - tw0 < jb->pb - q0 ? jb->tw - tw0 : jb->pb - q0;
			const float *restrict mi = jb->mo + k * jb->pb + q0;
			float *restrict r0 = row, *restrict r1 = row + 2 * n;
			int64_t c0 = 2 * tw0, wd = ow - c0 < 2 * n ? ow - c0 : 2 * n;

			/* one vector of tiles at a time: the 16 positions of
			 * consecutive tiles are contiguous in M */
			for (int64_t i = 0; i < n; i++) {
				float m0 = mi[i], m1 = mi[mp + i], m2 = mi[2 * mp + i], m3 = mi[3 * mp + i];
				float m4 = mi[4 * mp + i], m5 = mi[5 * mp + i], m6 = mi[6 * mp + i];
				float m7 = mi[7 * mp + i], m8 = mi[8 * mp + i], m9 = mi[9 * mp + i];
				float m10 = mi[10 * mp + i], m11 = mi[11 * mp + i], m12 = mi[12 * mp + i];
				float m13 = mi[13 * mp + i], m14 = mi[14 * mp + i], m15 = mi[15 * mp + i];
				float a0 = m0 + m4 + m8, a1 = m1 + m5 + m9, a2 = m2 + m6 + m10;
				float a3 = m3 + m7 + m11;
				float b0 = m4 - m8 - m12, b1 = m5 - m9 - m13, b2 = m6 - m10 - m14;
				float b3 = m7 - m11 - m15;

				r0[2 * i] = a0 + a1 + a2 + bias;
				r0[2 * i + 1] = a1 - a2 - a3 + bias;
				r1[2 * i] = b0 + b1 + b2 + bias;
				r1[2 * i + 1] = b1 - b2 - b3 + bias;
			}
			memcpy(yk + 2 * th * ow + c0, r0, (size_t)wd * sizeof(float));
			if (2 * th + 1 < oh)
				memcpy(yk + (2 * th + 1) * ow + c0, r1, (size_t)wd * sizeof(float));
			q0 += n;
		}
	}
	free(row);
}

/* Is g a 3x3, stride 1, undilated, ungrouped 2-D convolution with enough
 * channels and outputs for the products to pay for the transforms?  (A
 * 7x7 output of 512 channels was 6% slower: 16 tiles waste a quarter of
 * their 8x8 outputs and the products over 16 columns run below speed.) */
int knn_wino_fits(const struct knn_geom *g)
{
	return g->nsp == 2 && g->kernel[0] == 3 && g->kernel[1] == 3 &&
	       g->stride[0] == 1 && g->stride[1] == 1 && g->dil[0] == 1 &&
	       g->dil[1] == 1 && g->group == 1 && g->c >= 16 && g->m >= 16 &&
	       g->out_size >= 100;
}

int knn_conv_wino_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		      const float *w, const float *b, float *y)
{
	int64_t th = (g->out[0] + 1) / 2, tw = (g->out[1] + 1) / 2, tiles = th * tw;
	int64_t pb = 131072 / (g->c > g->m ? g->c : g->m);
	const struct knn_wderived *u;
	struct knn_wderived *tmp = NULL;
	float *v = NULL, *mo = NULL;
	int rc = 1;

	if (!knn_wino_fits(g))
		return 0;
	if (pb < 16)
		pb = 16;
	if (pb > tiles)
		pb = tiles;
	if (!(u = knn_wderived_get(k, KNN_WC_WINO, g, w, 16 * g->m * g->c,
				   wg_transform_weights, &tmp)) ||
	    !(v = malloc((size_t)(16 * g->c * pb) * sizeof(float))) ||
	    !(mo = malloc((size_t)(16 * g->m * pb) * sizeof(float)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (int64_t n = 0; n < g->n; n++)
		for (int64_t p0 = 0; p0 < tiles; p0 += pb) {
			struct wg_job jb = { g, x + n * g->c * g->in_size, u->data, b,
					     y + n * g->m * g->out_size, v, mo, tw, p0,
					     tiles - p0 < pb ? tiles - p0 : pb, 0 };

			rt_parallel_for(k, g->c, 1, wg_input, &jb);
			rt_parallel_for(k, 16, 1, wg_products, &jb);
			rt_parallel_for(k, g->m, 1, wg_output, &jb);
			if (jb.failed) {
				rc = rt_oom(k);
				goto cleanup;
			}
		}
cleanup:
	knn_wderived_free(tmp);
	free(v);
	free(mo);
	return rc;
}
