/* k_conv_cl1.c: a float32 1x1 convolution (any of 1-3 spatial dims,
 * ungrouped, stride 1, no pads) whose input is stored channels last
 * (layout_cl.c) and whose result is not: per image, W (M x C) times the
 * transpose of the input's positions x C rows, a product into the plain
 * (M x positions) result with no reorder of the input.  Such an input
 * otherwise went to oneDNN, whose 1x1 kernels with the reorder of their
 * result back ran large ones at half the own kernels' speed (PointNet's
 * 128 -> 1024 channels over 4096 points after a channels-last view: 13.1
 * ms against 6.7 plain).  Where the result may stay channels last too,
 * oneDNN keeps it (its post-ops do the steps; this product and a pass
 * were slower there: SSDLite +8%).  The bias starts each channel's plane;
 * the node's epilogue steps (chain.c) then run plane by plane. */
#include <string.h>

#include "runtime/kernels/gemm.h"
#include "runtime/kernels/k_conv_int.h"

/* Products from which this path runs instead of oneDNN's (bench/README.md,
 * "A channels-last 1x1 product"). */
#define CL1_MIN_MACS ((int64_t)1 << 25)

static int cl1_geom(const struct knn_geom *g)
{
	if (g->group != 1 || g->k_size != 1 || g->nsp < 1 || g->nsp > 3 || g->c < 1 || g->m < 1)
		return 0;
	for (int d = 0; d < g->nsp; d++)
		if (g->stride[d] != 1 || g->pad[d] || g->pad[g->nsp + d])
			return 0;
	return g->n * g->out_size * g->c * g->m >= CL1_MIN_MACS;
}

int knn_conv_cl1_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		     const float *w, const float *b, float *y)
{
	const int64_t p = g->out_size;
	const struct rt_epilogue *e;

	if (!cl1_geom(g))
		return 0;
	for (int64_t n = 0; n < g->n; n++) {
		float *yn = y + n * g->m * p;

		for (int64_t o = 0; b && o < g->m; o++)
			for (int64_t i = 0; i < p; i++)
				yn[o * p + i] = b[o];
		rt_gemm_f32_par(k, 0, 1, g->m, p, g->c, 1.0f, w, g->c, x + n * p * g->c, g->c,
				b ? 1.0f : 0.0f, yn, p);
	}
	e = rt_kctx_epilogue(k, k->out[0], 1);
	if (e && e->n)
		rt_epilogue_planes(k, e, y, g->n * g->m, p);
	return 1;
}
