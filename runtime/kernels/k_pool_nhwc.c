/* k_pool_nhwc.c: float32 2-D MaxPool on a result stored channels last
 * (runtime/layout_cl.c): each output position the maximum of its
 * window's positions, a position's channels contiguous, so the channels
 * are the vector (a U-Net's pools between convolutions then keep the
 * layout instead of a reorder on each side).  Windows, pads, strides,
 * dilations and ceil_mode from the geometry (k_conv_geom.c); taps in
 * the padding are skipped; the maximum as max2d_plane in k_pool.c takes
 * it (KNN_MAXIN, from -inf), so the two layouts give the same values.
 * Also 8-bit codes so (a QDQ MaxPool unit, runtime/qdq_table.c). */
#include <math.h>

#include "runtime/kernels/k_conv_int.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

struct mcl_job {
	const struct knn_geom *g;
	const float *x;
	float *y;
};

/* Output rows [lo, hi) of n * oh. */
static void mcl_rows(void *ctx, int64_t lo, int64_t hi)
{
	const struct mcl_job *j = ctx;
	const struct knn_geom *g = j->g;
	const int64_t c = g->c, ih = g->in[0], iw = g->in[1], oh = g->out[0], ow = g->out[1];

	for (int64_t r = lo; r < hi; r++) {
		int64_t b = r / oh, a = r % oh;
		const float *xb = j->x + b * ih * iw * c;
		float *yr = j->y + r * ow * c;

		for (int64_t o = 0; o < ow; o++) {
			float *yo = yr + o * c;

			for (int64_t q = 0; q < c; q++)
				yo[q] = -INFINITY;
			for (int64_t u = 0; u < g->kernel[0]; u++) {
				int64_t h = a * g->stride[0] - g->pad[0] + u * g->dil[0];

				if (h < 0 || h >= ih)
					continue;
				for (int64_t v = 0; v < g->kernel[1]; v++) {
					int64_t w = o * g->stride[1] - g->pad[1] + v * g->dil[1];
					const float *xp = xb + (h * iw + w) * c;

					if (w < 0 || w >= iw)
						continue;
					for (int64_t q = 0; q < c; q++)
						yo[q] = KNN_MAXIN(yo[q], xp[q]);
				}
			}
		}
	}
}

void knn_maxpool_cl_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x, float *y)
{
	struct mcl_job j = { g, x, y };

	rt_parallel_for(k, g->n * g->out[0], 1, mcl_rows, &j);
}

struct mcl8_job {
	const struct knn_geom *g;
	const uint8_t *x;
	uint8_t *y;
	int sgn;
};

/* The same over 8-bit codes (uint8, or int8 when sgn), every window
 * holding a position of the input (the caller's check): each output the
 * largest code of its window. */
static void mcl8_rows(void *ctx, int64_t lo, int64_t hi)
{
	const struct mcl8_job *j = ctx;
	const struct knn_geom *g = j->g;
	const int64_t c = g->c, ih = g->in[0], iw = g->in[1], oh = g->out[0], ow = g->out[1];
	const uint8_t flip = j->sgn ? 0x80 : 0;   /* int8's order as uint8's */

	for (int64_t r = lo; r < hi; r++) {
		int64_t b = r / oh, a = r % oh;
		const uint8_t *xb = j->x + b * ih * iw * c;
		uint8_t *yr = j->y + r * ow * c;

		for (int64_t o = 0; o < ow; o++) {
			uint8_t *yo = yr + o * c;

			for (int64_t q = 0; q < c; q++)
				yo[q] = 0;
			for (int64_t u = 0; u < g->kernel[0]; u++) {
				int64_t h = a * g->stride[0] - g->pad[0] + u * g->dil[0];

				if (h < 0 || h >= ih)
					continue;
				for (int64_t v = 0; v < g->kernel[1]; v++) {
					int64_t w = o * g->stride[1] - g->pad[1] + v * g->dil[1];
					const uint8_t *xp = xb + (h * iw + w) * c;

					if (w < 0 || w >= iw)
						continue;
					for (int64_t q = 0; q < c; q++) {
						uint8_t t = (uint8_t)(xp[q] ^ flip);

						yo[q] = t > yo[q] ? t : yo[q];
					}
				}
			}
			for (int64_t q = 0; flip && q < c; q++)
				yo[q] ^= flip;
		}
	}
}

void knn_maxpool_cl_q8(struct rt_kctx *k, const struct knn_geom *g, const void *x, void *y,
		       int sgn)
{
	struct mcl8_job j = { g, x, y, sgn };

	rt_parallel_for(k, g->n * g->out[0], 1, mcl8_rows, &j);
}
