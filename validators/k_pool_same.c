/* k_pool_same.c: float32 2-D max pooling of stride 1 whose output is as
 * large as its input (GoogLeNet's 3x3 pad-1 pools in every inception
 * module), separably: the maximum along each row over the window's
 * columns, then along each column over its rows.  Each tap is one pass
 * over the whole flattened plane (vectorized, whatever the plane's width);
 * only the row ends, where a flat shift wraps into the next row, are
 * redone tap by tap.  NaN propagates as in the row-by-row kernel. */
#include <math.h>
#include <stdlib.h>

#include "validators/k_conv_int.h"

/* y = the larger of y and x, or x when x is NaN. */
#define MAXIN(y, x) ((x) > (y) || (x) != (x) ? (x) : (y))

__attribute__((target_clones("avx512f", "avx2", "default")))
static void fold_shift(float *restrict y, const float *restrict x, int64_t n)
{
	for (int64_t t = 0; t < n; t++)
		y[t] = MAXIN(y[t], x[t]);
}

/* One plane: h (ih x iw) the rows' maxima, then y. */
static void same_plane(const struct knn_geom *g, const float *x, float *h, float *y)
{
	int64_t ih = g->in[0], iw = g->in[1], n = ih * iw;
	int64_t pt = g->pad[0], pl = g->pad[1], kh = g->kernel[0], kw = g->kernel[1];

	for (int64_t t = 0; t < n; t++)
		h[t] = x[t];   /* tap v = pl: the column itself */
	for (int64_t v = 0; v < kw; v++) {
		int64_t s = v - pl;

		if (s > 0)
			fold_shift(h, x + s, n - s);
		else if (s < 0)
			fold_shift(h - s, x, n + s);
	}
	/* the row ends the flat passes took from a neighbouring row */
	for (int64_t r = 0; r < ih; r++) {
		const float *xr = x + r * iw;
		float *hr = h + r * iw;

		for (int64_t j = 0; j < iw; j++) {
			float m;

			if (j >= pl && j + (kw - 1 - pl) < iw)
				continue;   /* the whole window inside the row */
			m = xr[j];
			for (int64_t v = 0; v < kw; v++) {
				int64_t c = j + v - pl;

				if (c >= 0 && c < iw)
					m = MAXIN(m, xr[c]);
			}
			hr[j] = m;
		}
	}
	for (int64_t t = 0; t < n; t++)
		y[t] = h[t];
	for (int64_t u = 0; u < kh; u++) {
		int64_t s = (u - pt) * iw;

		if (s > 0 && s < n)
			fold_shift(y, h + s, n - s);
		else if (s < 0 && -s < n)
			fold_shift(y - s, h, n + s);
	}
}

struct same_job {
	const struct knn_geom *g;
	const float *x;
	float *y;
	int failed;
};

static void same_planes(void *ctx, int64_t lo, int64_t hi)
{
	struct same_job *j = ctx;
	const struct knn_geom *g = j->g;
	float *h = malloc((size_t)g->in_size * sizeof(float));

	if (!h) {
		j->failed = 1;
		return;
	}
	for (int64_t p = lo; p < hi; p++)
		same_plane(g, j->x + p * g->in_size, h, j->y + p * g->out_size);
	free(h);
}

int knn_max2d_same_f32(struct rt_kctx *k, const struct knn_geom *g,
		       const float *x, float *y)
{
	struct same_job j = { g, x, y, 0 };

	if (g->nsp != 2 || g->stride[0] != 1 || g->stride[1] != 1 || g->dil[0] != 1 ||
	    g->dil[1] != 1 || g->out[0] != g->in[0] || g->out[1] != g->in[1] ||
	    g->pad[0] >= g->kernel[0] || g->pad[1] >= g->kernel[1] || g->in_size == 0)
		return 0;
	rt_parallel_for(k, g->n * g->c, 1, same_planes, &j);
	return j.failed ? rt_oom(k) : 1;
}
