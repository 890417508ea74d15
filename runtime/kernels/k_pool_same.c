/* k_pool_same.c: float32 2-D max and average pooling of stride 1 whose
 * output is as large as its input (the 3x3 pad-1 pools in every module of
 * GoogLeNet and Inception-v2), separably: the maximum (sum) along each row
 * over the window's columns, then along each column over its rows.  Each
 * tap is one pass over the whole flattened plane (vectorized, whatever
 * the plane's width); only the row ends, where a flat shift wraps into
 * the next row, are redone tap by tap.  NaN propagates as in the
 * row-by-row kernels of k_pool.c; an average's sum is taken in another
 * order than theirs (rows first), so it may differ in the last bit. */
#include <math.h>
#include <stdlib.h>

#include "runtime/kernels/k_conv_int.h"

/* y = the larger of y and x, or x when x is NaN. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void fold_shift(float *restrict y, const float *restrict x, int64_t n)
{
	for (int64_t t = 0; t < n; t++)
		y[t] = KNN_MAXIN(y[t], x[t]);
}

__attribute__((target_clones("avx512f", "avx2", "default")))
static void add_shift(float *restrict y, const float *restrict x, int64_t n)
{
	for (int64_t t = 0; t < n; t++)
		y[t] += x[t];
}

/* y = the maximum (avg: the sum) of y and x shifted by s, where both are
 * inside [0, n). */
static void fold_at(float *y, const float *x, int64_t n, int64_t s, int avg)
{
	if (s >= n || -s >= n || s == 0)
		return;
	if (s > 0)
		(avg ? add_shift : fold_shift)(y, x + s, n - s);
	else
		(avg ? add_shift : fold_shift)(y - s, x, n + s);
}

/* y[b] /= rows * cols[b] */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void div_counts(float *restrict y, const float *restrict cols, float rows, int64_t n)
{
	for (int64_t b = 0; b < n; b++)
		y[b] = y[b] / (rows * cols[b]);
}

/* One plane: h (ih x iw) the rows' maxima (sums), then y; an average then
 * divides by the window's count: rows by columns (cols: each output
 * column's) of its taps inside the input, or unless include_pad, when
 * every window lies within the padded input, all of them. */
static void same_plane(const struct knn_geom *g, const float *x, float *h, float *y,
		       int avg, int include_pad, const float *cols)
{
	int64_t ih = g->in[0], iw = g->in[1], n = ih * iw;
	int64_t pt = g->pad[0], pl = g->pad[1], kh = g->kernel[0], kw = g->kernel[1];

	for (int64_t t = 0; t < n; t++)
		h[t] = x[t];   /* tap v = pl: the column itself */
	for (int64_t v = 0; v < kw; v++)
		fold_at(h, x, n, v - pl, avg);
	/* the row ends the flat passes took from a neighbouring row: the
	 * columns whose window reaches past either end */
	for (int64_t r = 0; r < ih; r++) {
		const float *xr = x + r * iw;
		float *hr = h + r * iw;
		int64_t left = pl < iw ? pl : iw, right = iw - (kw - 1 - pl);

		if (right < left)
			right = left;
		for (int64_t j = 0; j < iw; j++) {
			float m;

			if (j == left && right > left)
				j = right;   /* the whole window inside the row */
			if (j >= iw)
				break;
			m = xr[j];
			for (int64_t v = 0; v < kw; v++) {
				int64_t c = j + v - pl;

				if (c >= 0 && c < iw && c != j)
					m = avg ? m + xr[c] : KNN_MAXIN(m, xr[c]);
			}
			hr[j] = m;
		}
	}
	for (int64_t t = 0; t < n; t++)
		y[t] = h[t];
	for (int64_t u = 0; u < kh; u++)
		fold_at(y, h, n, (u - pt) * iw, avg);
	if (!avg)
		return;
	for (int64_t a = 0; a < ih; a++) {
		int64_t r0 = a - pt < 0 ? 0 : a - pt;
		int64_t r1 = a - pt + kh > ih ? ih : a - pt + kh;

		div_counts(y + a * iw, cols, include_pad ? (float)kh : (float)(r1 - r0), iw);
	}
}

struct same_job {
	const struct knn_geom *g;
	const float *x;
	float *y;
	int avg, include_pad;
	const float *cols;        /* avg: each output column's count of columns */
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
		same_plane(g, j->x + p * g->in_size, h, j->y + p * g->out_size, j->avg,
			   j->include_pad, j->cols);
	free(h);
}

int knn_pool2d_same_f32(struct rt_kctx *k, const struct knn_geom *g, int avg,
			int include_pad, const float *x, float *y)
{
	struct same_job j = { g, x, y, avg, include_pad, NULL, 0 };
	float *cols;

	if (g->nsp != 2 || g->stride[0] != 1 || g->stride[1] != 1 || g->dil[0] != 1 ||
	    g->dil[1] != 1 || g->out[0] != g->in[0] || g->out[1] != g->in[1] ||
	    g->pad[0] >= g->kernel[0] || g->pad[1] >= g->kernel[1] || g->in_size == 0)
		return 0;
	if (!(cols = malloc((size_t)(g->in[1] + 1) * sizeof(float))))
		return rt_oom(k);
	for (int64_t b = 0; b < g->in[1]; b++) {   /* exact small integers */
		int64_t c0 = b - g->pad[1] < 0 ? 0 : b - g->pad[1];
		int64_t c1 = b - g->pad[1] + g->kernel[1] > g->in[1] ? g->in[1] :
			     b - g->pad[1] + g->kernel[1];

		cols[b] = (float)(include_pad ? g->kernel[1] : c1 - c0);
	}
	j.cols = cols;
	rt_parallel_for(k, g->n * g->c, 1, same_planes, &j);
	free(cols);
	return j.failed ? rt_oom(k) : 1;
}
