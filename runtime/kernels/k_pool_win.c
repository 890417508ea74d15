/* k_pool_win.c: float32 2-D max pools of stride 1 with large windows (a
 * keypoint net's 9x9 non-maximum suppression on one 240x320 plane),
 * separably and by doubling: along each row, maxima of spans of 2, 4, ..
 * P (the largest power of two within the window), then the window as the
 * two spans of P that cover it; the same down the columns, over the rows
 * of those, streamed through rings of rows that stay in L1.  log2(k) + 1
 * passes a direction instead of k - 1 over the whole plane
 * (k_pool_same.c: 18 passes of 300 KiB for a 9x9); a plane's outputs are
 * split in bands of rows over the threads when planes are few.
 *
 * A max is NaN when any tap is NaN, else the largest tap, as in every
 * max pool kernel (KNN_MAXIN); the padding is -inf, which no fold keeps
 * over a tap.  Taps are folded in another order than the plane loops',
 * so of a window holding both 0 and -0 as its largest the sign may be
 * the other's (the kernels differ so among themselves), and of NaNs with
 * different payloads another may come out. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_conv_int.h"

/* Windows of fewer taps go to the other kernels (3x3: k_pool_s1.c,
 * k_pool_cb.c, k_pool_same.c), as fast or faster there */
#define WIN_MIN_TAPS 25
/* Bands of output rows no shorter than this when a plane is split over
 * threads: each band redoes the k - 1 rows it shares with the next */
#define WIN_MIN_BAND 32

typedef void (*win_max2_fn)(float *restrict y, const float *a, const float *b, int64_t n);

/* y[j] = the larger of a[j] and b[j], b when NaN: a fold's step */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void win_max2_nan(float *restrict y, const float *a, const float *b, int64_t n)
{
	for (int64_t j = 0; j < n; j++)
		y[j] = KNN_MAXIN(a[j], b[j]);
}

/* The same where neither holds a NaN: one maxps, not four operations
 * (the fold's NaN test doubled a 9x9 pool's time) */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void win_max2_num(float *restrict y, const float *a, const float *b, int64_t n)
{
	for (int64_t j = 0; j < n; j++)
		y[j] = b[j] > a[j] ? b[j] : a[j];
}

/* Does x[0 .. n) hold a NaN? */
__attribute__((target_clones("avx512f", "avx2", "default")))
static int win_any_nan(const float *x, int64_t n)
{
	int any = 0;

	for (int64_t i = 0; i < n; i++)
		any |= x[i] != x[i];
	return any;
}

/* Floats rounded up to whole vectors of sixteen. */
static int64_t win_round(int64_t n)
{
	return (n + 15) & ~(int64_t)15;
}

/* y[j] = the max of x[j .. j + k - 1] for j in [0, n); x holds n + k - 1
 * values and is overwritten, as is t.  The passes run over whole vectors
 * (no scalar ends): x and t hold win_round(n + k) + 16 floats, those
 * past the values defined (from earlier rows), giving only outputs past
 * the ones asked for; y takes win_round(n) unless exact. */
static void win_span(win_max2_fn win_max2, float *y, float *x, float *t, int64_t n,
		     int64_t k, int exact)
{
	int64_t w = n + k - 1, p = 1;

	for (; 2 * p <= k; p *= 2) {
		/* spans of 2p from those of p; the last into y when k is 2p */
		float *dst = 2 * p == k ? y : t;

		win_max2(dst, x, x + p, dst == y && exact ? n : win_round(w - p));
		w -= p;
		t = x;
		x = dst;
	}
	if (p < k)
		win_max2(y, x, x + (k - p), exact ? n : win_round(n));
	else if (x != y)
		memcpy(y, x, (size_t)(exact ? n : win_round(n)) * sizeof(float));
}

struct win_job {
	const struct knn_geom *g;
	const float *x;
	float *y;
	int64_t bands;            /* per plane */
	int failed;
};

/* The scratch of win_band: two rows of win_row_len floats for a row's
 * passes, then the rings' rows of win_round(ow) floats each. */
static int64_t win_row_len(const struct knn_geom *g)
{
	return win_round(g->out[1] + 2 * g->kernel[1]) + 16;
}

static int64_t win_scratch(const struct knn_geom *g)
{
	int64_t kh = g->kernel[0], rows = 0, p = 1;

	for (; 2 * p <= kh; p *= 2)
		rows += p + 1;
	rows += kh - p + 1;
	return 2 * win_row_len(g) + rows * win_round(g->out[1]);
}

/* Output rows [r0, r1) of one plane.  Extended row t (input row t - pad
 * top, -inf outside) has its row maxima in level 0; level l holds the
 * maxima of rows [e, e + 2^l) at slot e % (2^l + 1), the last level q
 * (2^q = p) at e % (k - p + 1); output row r is the max of level q's
 * rows r and r + k - p.  The rings' rows are whole vectors, aligned. */
static void win_band(const struct win_job *j, const float *x, float *y, int64_t r0,
		     int64_t r1, float *scratch)
{
	const struct knn_geom *g = j->g;
	int64_t ih = g->in[0], iw = g->in[1], ow = g->out[1], rs = win_round(ow);
	int64_t kh = g->kernel[0], kw = g->kernel[1], pt = g->pad[0], pl = g->pad[1];
	int64_t ew = ow + kw - 1, p = 1, d;
	float *ext = scratch, *tmp = ext + win_row_len(g), *ring[32];
	float *slab = tmp + win_row_len(g);
	int64_t size[32], h0 = r0 - pt < 0 ? 0 : r0 - pt;
	int64_t h1 = r1 + kh - 1 - pt > ih ? ih : r1 + kh - 1 - pt;
	win_max2_fn win_max2 = h1 > h0 && win_any_nan(x + h0 * iw, (h1 - h0) * iw) ?
			       win_max2_nan : win_max2_num;
	int q = 0;

	while (2 * p <= kh) {
		p *= 2;
		q++;
	}
	d = kh - p;
	for (int l = 0; l <= q; l++) {
		size[l] = l < q ? ((int64_t)1 << l) + 1 : d + 1;
		ring[l] = slab;
		slab += size[l] * rs;
	}
	for (int64_t t = r0; t < r1 + kh - 1; t++) {
		int64_t h = t - pt, r = t - kh + 1;
		float *row = ring[0] + (t % size[0]) * rs;
		int to_y = q == 0 && d == 0;   /* a window of one row */

		if (to_y)
			row = y + r * ow;
		if (h >= 0 && h < ih) {
			const float *xr = x + h * iw;
			int64_t c0 = pl < 0 ? 0 : pl, c1 = iw + pl < ew ? iw + pl : ew;

			for (int64_t c = 0; c < c0 && c < ew; c++)
				ext[c] = -INFINITY;
			if (c1 > c0)
				memcpy(ext + c0, xr + (c0 - pl), (size_t)(c1 - c0) * sizeof(float));
			for (int64_t c = c1 > c0 ? c1 : c0; c < ew; c++)
				ext[c] = -INFINITY;
			win_span(win_max2, row, ext, tmp, ow, kw, to_y);
		} else {
			for (int64_t c = 0; c < (to_y ? ow : rs); c++)
				row[c] = -INFINITY;
		}
		for (int l = 1; l <= q; l++) {
			int64_t e = t - ((int64_t)1 << l) + 1, half = (int64_t)1 << (l - 1);
			int last = l == q && d == 0;

			if (e < r0)
				break;
			/* the last level straight into y when the window is p */
			win_max2(last ? y + e * ow : ring[l] + (e % size[l]) * rs,
				 ring[l - 1] + (e % size[l - 1]) * rs,
				 ring[l - 1] + ((e + half) % size[l - 1]) * rs, last ? ow : rs);
		}
		if (d > 0 && r >= r0)
			win_max2(y + r * ow, ring[q] + (r % size[q]) * rs,
				 ring[q] + ((r + d) % size[q]) * rs, ow);
	}
}

/* Items [lo, hi) of planes x bands: an rt_range_fn. */
static void win_items(void *ctx, int64_t lo, int64_t hi)
{
	struct win_job *j = ctx;
	const struct knn_geom *g = j->g;
	int64_t oh = g->out[0], n = win_scratch(g);
	float *s = aligned_alloc(64, (size_t)win_round(n) * sizeof(float));

	if (!s) {
		j->failed = 1;
		return;
	}
	for (int64_t i = 0; i < n; i++)   /* what the passes read past the values */
		s[i] = -INFINITY;
	for (int64_t i = lo; i < hi; i++) {
		int64_t pl = i / j->bands, b = i % j->bands;

		win_band(j, j->x + pl * g->in_size, j->y + pl * g->out_size,
			 oh * b / j->bands, oh * (b + 1) / j->bands, s);
	}
	free(s);
}

int knn_maxpool_win_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
			float *y)
{
	struct win_job j = { g, x, y, 1, 0 };
	int64_t planes = g->n * g->c, threads = rt_threads(k);

	if (g->nsp != 2 || g->stride[0] != 1 || g->stride[1] != 1 || g->dil[0] != 1 ||
	    g->dil[1] != 1 || g->out_size == 0 || g->kernel[0] * g->kernel[1] < WIN_MIN_TAPS)
		return 0;
	/* a few planes: bands of each over the threads */
	if (threads > 1 && planes < 2 * threads) {
		int64_t most = g->out[0] / WIN_MIN_BAND;

		j.bands = (2 * threads + planes - 1) / planes;
		if (j.bands > most)
			j.bands = most > 1 ? most : 1;
	}
	rt_parallel_for(k, planes * j.bands, 1, win_items, &j);
	return j.failed ? rt_oom(k) : 1;
}
