/* k_resize_grid.c: the sampling-grid kernels of the resize family (their table
 * lines are in k_resize.c): GridSample (opset 16's 2-D bilinear/nearest/
 * bicubic and opset 20's N-D linear/nearest/cubic, padding zeros, border or
 * reflection, align_corners) and AffineGrid (2-D and 3-D). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_shape_int.h"

enum gs_mode { GS_NEAREST, GS_LINEAR, GS_CUBIC };
enum gs_pad { GS_ZEROS, GS_BORDER, GS_REFLECTION };

/* Reflect x into [lo, hi] (the bounds mirror repeatedly). */
static double reflect(double x, double lo, double hi)
{
	double rng = hi - lo, dx, r;
	int64_t n;

	if (rng <= 0)
		return lo;
	if (x < lo) {
		dx = lo - x;
		n = (int64_t)(dx / rng);
		r = dx - (double)n * rng;
		return n % 2 == 0 ? lo + r : hi - r;
	}
	if (x > hi) {
		dx = x - hi;
		n = (int64_t)(dx / rng);
		r = dx - (double)n * rng;
		return n % 2 == 0 ? hi - r : lo + r;
	}
	return x;
}

static double cubic_w(double d)
{
	const double a = -0.75;

	d = fabs(d);
	if (d < 1)
		return ((a + 2) * d - (a + 3)) * d * d + 1;
	if (d < 2)
		return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
	return 0;
}

/* Index i along a dim of size len after the padding rule; -1: zero. */
static int64_t fetch_index(int64_t i, int64_t len, enum gs_pad pad, double lo,
			   double hi)
{
	if (i >= 0 && i < len)
		return i;
	if (pad == GS_ZEROS)
		return -1;
	if (pad == GS_BORDER)
		return i < 0 ? 0 : len - 1;
	i = (int64_t)reflect((double)i, lo, hi);
	return i < 0 ? 0 : i >= len ? len - 1 : i;
}

struct gs_job {
	const struct rt_value *x, *g;
	struct rt_value *y;
	enum gs_mode mode;
	enum gs_pad pad;
	int align, r;
	int64_t pts, nc, nt, plane, xs[RT_MAX_RANK];
	double lo[RT_MAX_RANK], hi[RT_MAX_RANK];
};

/* The taps of one point whose weight is not 0, in the order below */
#define GS_TAPS 64

/* Float32 X and Y: the point's taps (offset, weight) found once, in the
 * order and with the products of gs_points' loop over the channels, then
 * each channel's sum of its taps in that order: the same double sums, the
 * same results, without a dtype switch and an index walk per tap and
 * channel (an RT-DETR's nine deformable-attention GridSamples took 29 ms,
 * onnxruntime's 4.5) */
static void gs_float_point(const struct gs_job *q, const int64_t ti[][4], const double tw[][4],
			   int64_t combos, int64_t n, int64_t p)
{
	const float *x = q->x->data;
	float *y = q->y->data;
	int64_t off[GS_TAPS], nt = q->nt, taps = 0;
	double wt[GS_TAPS];

	for (int64_t cb = 0; cb < combos; cb++) {
		int64_t rem = cb, o = 0;
		double w = 1;

		for (int i = q->r - 1; i >= 0 && w != 0; i--) {
			int64_t j = rem % nt;

			rem /= nt;
			if (ti[i][j] < 0)
				w = 0;
			else
				o += ti[i][j] * q->xs[i];
			w *= tw[i][j];
		}
		if (w != 0) {
			off[taps] = o;
			wt[taps++] = w;
		}
	}
	for (int64_t c = 0; c < q->nc; c++) {
		const float *xc = x + (n * q->nc + c) * q->plane;
		double sum = 0;

		for (int64_t t = 0; t < taps; t++)
			sum += wt[t] * (double)xc[off[t]];
		y[(n * q->nc + c) * q->pts + p] = (float)sum;
	}
}

/* Grid points [begin, end) of all batches (n * pts + p), every channel. */
static void gs_points(void *arg, int64_t begin, int64_t end)
{
	const struct gs_job *q = arg;
	const struct rt_value *x = q->x, *g = q->g;
	int r = q->r;
	int64_t nt = q->nt;

	for (int64_t np = begin; np < end; np++) {
		int64_t n = np / q->pts, p = np % q->pts, ti[RT_MAX_RANK][4], combos = 1;
		double tw[RT_MAX_RANK][4];

		for (int i = 0; i < r; i++) {
			int64_t len = x->dims[2 + i];
			double v = rt_load_f64(g->dtype, g->data, np * r + (r - 1 - i));
			double c = q->align ? (v + 1) / 2 * (double)(len - 1) :
				   ((v + 1) * (double)len - 1) / 2;

			/* keep int64 conversions defined; NaN samples nothing */
			c = !(c >= -1e12) ? -1e12 : c > 1e12 ? 1e12 : c;
			if (q->mode == GS_NEAREST)
				c = r == 3 ? round(c) : nearbyint(c);
			if (c < q->lo[i] || c > q->hi[i]) {
				if (q->pad == GS_BORDER)
					c = c < 0 ? 0 : c > (double)(len - 1) ? (double)(len - 1) : c;
				else if (q->pad == GS_REFLECTION)
					c = reflect(c, q->lo[i], q->hi[i]);
			}
			if (q->mode == GS_NEAREST) {
				ti[i][0] = fetch_index((int64_t)c, len, q->pad, q->lo[i], q->hi[i]);
				tw[i][0] = 1;
			} else {
				double f = floor(c), t = c - f;

				for (int64_t j = 0; j < nt; j++) {
					int64_t off = q->mode == GS_LINEAR ? j : j - 1;

					ti[i][j] = fetch_index((int64_t)f + off, len, q->pad,
							       q->lo[i], q->hi[i]);
					tw[i][j] = q->mode == GS_LINEAR ? (j ? t : 1 - t) :
						   cubic_w(t - (double)off);
				}
			}
			combos *= nt;
		}
		if (x->dtype == IR_DTYPE_FLOAT && combos <= GS_TAPS) {
			gs_float_point(q, ti, tw, combos, n, p);
			continue;
		}
		for (int64_t c = 0; c < q->nc; c++) {
			int64_t base = (n * q->nc + c) * q->plane;
			double sum = 0;

			for (int64_t cb = 0; cb < combos; cb++) {
				int64_t rem = cb, off = 0;
				double w = 1;

				for (int i = r - 1; i >= 0 && w != 0; i--) {
					int64_t j = rem % nt;

					rem /= nt;
					if (ti[i][j] < 0)
						w = 0;
					else
						off += ti[i][j] * q->xs[i];
					w *= tw[i][j];
				}
				if (w != 0)
					sum += w * rt_load_f64(x->dtype, x->data, base + off);
			}
			rt_store_f64(q->y->dtype, q->y->data, (n * q->nc + c) * q->pts + p, sum);
		}
	}
}

int ks_grid_sample(struct rt_kctx *k)
{
	struct rt_value *x, *g;
	const char *ms = rt_attr_str(k, "mode", k->version >= 20 ? "linear" : "bilinear");
	const char *ps = rt_attr_str(k, "padding_mode", "zeros");
	int64_t dims[RT_MAX_RANK], combos = 1;
	struct gs_job q;
	int rc;

	memset(&q, 0, sizeof(q));
	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &g)) < 0)
		return rc;
	if (!strcmp(ms, "nearest"))
		q.mode = GS_NEAREST;
	else if (!strcmp(ms, "bilinear") || !strcmp(ms, "linear"))
		q.mode = GS_LINEAR;
	else if (!strcmp(ms, "bicubic") || !strcmp(ms, "cubic"))
		q.mode = GS_CUBIC;
	else
		return rt_err(k, "unknown mode '%s'", ms);
	if (!strcmp(ps, "zeros"))
		q.pad = GS_ZEROS;
	else if (!strcmp(ps, "border"))
		q.pad = GS_BORDER;
	else if (!strcmp(ps, "reflection"))
		q.pad = GS_REFLECTION;
	else
		return rt_err(k, "unknown padding_mode '%s'", ps);
	q.r = x->rank - 2;
	if (q.r < 1 || g->rank != x->rank || g->dims[0] != x->dims[0] ||
	    g->dims[g->rank - 1] != q.r)
		return rt_err(k, "X and grid shapes do not fit: grid must be [N, ..., %d]", q.r);
	if (x->dtype == IR_DTYPE_STRING || g->dtype == IR_DTYPE_STRING)
		return rt_err(k, "strings cannot be sampled");
	q.align = (int)rt_attr_int(k, "align_corners", 0);
	q.nt = q.mode == GS_NEAREST ? 1 : q.mode == GS_LINEAR ? 2 : 4;
	q.pts = 1;
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	for (int i = 0; i < q.r; i++) {
		dims[2 + i] = g->dims[1 + i];
		q.pts *= g->dims[1 + i];
		q.lo[i] = q.align ? 0 : -0.5;
		q.hi[i] = q.align ? (double)x->dims[2 + i] - 1 : (double)x->dims[2 + i] - 0.5;
		if ((combos *= q.nt) > 1 << 16)
			return rt_err(k, "%d spatial dims need too many taps per sample", q.r);
	}
	ks_strides(q.r, x->dims + 2, q.xs);
	q.nc = x->dims[1];
	q.plane = rt_numel(q.r, x->dims + 2);
	q.x = x;
	q.g = g;
	if (!(q.y = rt_out_tensor(k, 0, x->dtype, x->rank, dims)))
		return IR_ENOMEM;
	rt_parallel_for(k, x->dims[0] * q.pts, 1 + 4096 / (q.nc * combos + 1), gs_points, &q);
	return 0;
}

int ks_affine_grid(struct rt_kctx *k)
{
	struct rt_value *th, *y;
	int64_t *size = NULL, dims[RT_MAX_RANK], pts = 1;
	int align = (int)rt_attr_int(k, "align_corners", 0), r, rc;
	size_t n;

	if ((rc = rt_in_tensor(k, 0, &th)) < 0 || (rc = rt_in_ints(k, 1, &size, &n)) < 0)
		return rc;
	r = (int)n - 2;
	if ((r != 2 && r != 3) || th->rank != 3 || th->dims[0] != size[0] ||
	    th->dims[1] != r || th->dims[2] != r + 1) {
		rc = rt_err(k, "theta must be [N, %d, %d] for size of %zu entries", r, r + 1, n);
		goto cleanup;
	}
	dims[0] = size[0];
	for (int i = 0; i < r; i++) {
		if (size[2 + i] < 0) {
			rc = rt_err(k, "negative size %lld", (long long)size[2 + i]);
			goto cleanup;
		}
		dims[1 + i] = size[2 + i];
		pts *= size[2 + i];
	}
	dims[1 + r] = r;
	if (!(y = rt_out_tensor(k, 0, th->dtype, r + 2, dims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	for (int64_t b = 0; b < size[0]; b++)
		for (int64_t p = 0; p < pts; p++) {
			double base[4];
			int64_t rem = p;

			/* base[0] is the innermost (W) coordinate */
			for (int i = 0; i < r; i++) {
				int64_t len = size[2 + r - 1 - i], idx = rem % len;

				rem /= len;
				base[i] = align ? (len > 1 ? -1 + 2.0 * (double)idx / (double)(len - 1) : -1) :
					  (2.0 * (double)idx + 1) / (double)len - 1;
			}
			base[r] = 1;
			for (int row = 0; row < r; row++) {
				double s = 0;

				for (int j = 0; j <= r; j++)
					s += rt_load_f64(th->dtype, th->data,
							 (b * r + row) * (r + 1) + j) * base[j];
				rt_store_f64(y->dtype, y->data, (b * pts + p) * r + row, s);
			}
		}
cleanup:
	free(size);
	return rc;
}
