/* k_pool.c: kernels of the pool family: MaxPool (indices, storage_order,
 * ceil_mode, dilations, int8/uint8), AveragePool (count_include_pad),
 * LpPool, their Global forms and MaxUnpool.  Windows follow the geometry
 * of k_conv_geom.c; values go through double (exact for every allowed
 * dtype), with float32 fast paths for 2-D MaxPool without indices, 2-D
 * AveragePool and GlobalAveragePool. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_conv_int.h"

/* the window loops below vectorize at O3 only (see k_conv_core.c) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

enum pool_kind { POOL_MAX, POOL_AVG, POOL_LP };

struct pool_job {
	const struct knn_geom *g;
	enum pool_kind kind;
	int include_pad, col_major;
	double p;
	const double *x;
	double *y;
	int64_t *idx;                /* MaxPool Indices or NULL */
};

/* |v|^p of a float widened to double: for p 1 and 2 (LpPool's default)
 * |v| and v * v, which pow gives exactly (v * v of a float is exact in
 * double), without pow's call per element. */
static inline double lp_term(double v, double p)
{
	return p == 2 ? v * v : p == 1 ? fabs(v) : pow(fabs(v), p);
}

/* Channel planes [lo, hi) of n * c. */
static void pool_planes(void *ctx, int64_t lo, int64_t hi)
{
	const struct pool_job *j = ctx;
	const struct knn_geom *g = j->g;
	int nsp = g->nsp;

	for (int64_t pl = lo; pl < hi; pl++) {
		const double *xc = j->x + pl * g->in_size;
		int64_t oc[KNN_MAX_SP] = { 0 };

		for (int64_t o = 0; o < g->out_size; o++) {
			int64_t kc[KNN_MAX_SP] = { 0 }, best = -1, count = 0;
			double acc = j->kind == POOL_MAX ? -INFINITY : 0;

			for (int64_t t = 0; t < g->k_size; t++) {
				int64_t off = 0;
				int valid = 1, inpad = 1;

				for (int d = 0; d < nsp; d++) {
					int64_t i = oc[d] * g->stride[d] - g->pad[d] +
						    kc[d] * g->dil[d];

					if (i < 0 || i >= g->in[d])
						valid = 0;
					if (i < -g->pad[d] || i >= g->in[d] + g->pad[nsp + d])
						inpad = 0;
					off = off * g->in[d] + i;
				}
				if (valid) {
					double v = xc[off];

					if (j->kind == POOL_MAX) {
						if (best < 0 || v > acc) {
							acc = v;
							best = off;
						}
					} else if (j->kind == POOL_AVG) {
						acc += v;
					} else {
						acc += lp_term(v, j->p);
					}
					count++;
				} else if (inpad && j->include_pad) {
					count++;
				}
				/* next kernel position */
				for (int d = nsp - 1; d >= 0; d--) {
					if (++kc[d] < g->kernel[d])
						break;
					kc[d] = 0;
				}
			}
			if (j->kind == POOL_AVG)
				acc = count ? acc / (double)count : NAN;
			else if (j->kind == POOL_LP)
				acc = pow(acc, 1 / j->p);
			j->y[pl * g->out_size + o] = acc;
			if (j->idx) {
				int64_t v = best < 0 ? 0 : best;

				if (j->col_major && best >= 0) {
					int64_t r = best, cmv = 0, stride = 1;
					int64_t co[KNN_MAX_SP];

					for (int d = nsp - 1; d >= 0; d--) {
						co[d] = r % g->in[d];
						r /= g->in[d];
					}
					for (int d = 0; d < nsp; d++) {
						cmv += co[d] * stride;
						stride *= g->in[d];
					}
					v = cmv;
				}
				j->idx[pl * g->out_size + o] = pl * g->in_size + v;
			}
			for (int d = nsp - 1; d >= 0; d--) {
				if (++oc[d] < g->out[d])
					break;
				oc[d] = 0;
			}
		}
	}
}

/* float32 2-D max pool without indices, one output row at a time: every
 * tap folds its shifted input row into the row (kept in cache), with the
 * column bounds of each tap computed once; the loops vectorize (NaN
 * propagates as in a plain comparison chain). */

__attribute__((target_clones("avx512f", "avx2", "default")))
static void max2d_plane(const struct knn_geom *g, const float *restrict x,
			float *restrict y)
{
	int64_t ih = g->in[0], iw = g->in[1], oh = g->out[0], ow = g->out[1];
	int64_t kw = g->kernel[1], sw = g->stride[1];

	for (int64_t a = 0; a < oh; a++) {
		float *yr = y + a * ow;

		for (int64_t j = 0; j < ow; j++)
			yr[j] = -INFINITY;
		for (int64_t u = 0; u < g->kernel[0]; u++) {
			int64_t h = a * g->stride[0] - g->pad[0] + u * g->dil[0];

			if (h < 0 || h >= ih)
				continue;
			for (int64_t v = 0; v < kw; v++) {
				int64_t b = v * g->dil[1] - g->pad[1], lo, hi;
				const float *xr;
				float *yo;

				knn_tap_cols(g, b, &lo, &hi);
				if (lo >= hi)
					continue;
				xr = x + h * iw + (b + lo * sw);
				yo = yr + lo;
				if (sw == 1)
					for (int64_t j = 0; j < hi - lo; j++)
						yo[j] = KNN_MAXIN(yo[j], xr[j]);
				else
					for (int64_t j = 0; j < hi - lo; j++)
						yo[j] = KNN_MAXIN(yo[j], xr[j * sw]);
			}
		}
	}
}

/* float32 2-D AveragePool, the same way: each tap adds its shifted row,
 * then each output divides by (counted rows) x (counted columns), the
 * column counts computed once per call (cols). */
struct avg2d {
	const struct knn_geom *g;
	const float *x;
	float *y;
	const int64_t *cols;
	int include_pad;
};

__attribute__((target_clones("avx512f", "avx2", "default")))
static void avg2d_plane(const struct avg2d *j, const float *restrict x,
			float *restrict y)
{
	const struct knn_geom *g = j->g;
	int64_t ih = g->in[0], iw = g->in[1], oh = g->out[0], ow = g->out[1];
	int64_t kw = g->kernel[1], sw = g->stride[1];

	for (int64_t a = 0; a < oh; a++) {
		float *yr = y + a * ow;
		int64_t rows = 0;

		for (int64_t t = 0; t < ow; t++)
			yr[t] = 0;
		for (int64_t u = 0; u < g->kernel[0]; u++) {
			int64_t h = a * g->stride[0] - g->pad[0] + u * g->dil[0];

			if (h >= 0 && h < ih)
				rows++;
			else if (j->include_pad && h >= -g->pad[0] && h < ih + g->pad[2])
				rows++;
			if (h < 0 || h >= ih)
				continue;
			for (int64_t v = 0; v < kw; v++) {
				int64_t b = v * g->dil[1] - g->pad[1], lo, hi;
				const float *xr;
				float *yo;

				knn_tap_cols(g, b, &lo, &hi);
				if (lo >= hi)
					continue;
				xr = x + h * iw + (b + lo * sw);
				yo = yr + lo;
				if (sw == 1)
					for (int64_t t = 0; t < hi - lo; t++)
						yo[t] += xr[t];
				else
					for (int64_t t = 0; t < hi - lo; t++)
						yo[t] += xr[t * sw];
			}
		}
		for (int64_t t = 0; t < ow; t++) {
			int64_t n = rows * j->cols[t];

			yr[t] = n ? yr[t] / (float)n : NAN;
		}
	}
}

static void avg2d_planes(void *ctx, int64_t lo, int64_t hi)
{
	const struct avg2d *j = ctx;

	for (int64_t pl = lo; pl < hi; pl++)
		avg2d_plane(j, j->x + pl * j->g->in_size, j->y + pl * j->g->out_size);
}

struct planes_job {
	const struct knn_geom *g;
	const float *x;
	float *y;
	knn_plane_fn plane;
};

static void planes_run(void *ctx, int64_t lo, int64_t hi)
{
	const struct planes_job *j = ctx;

	for (int64_t pl = lo; pl < hi; pl++)
		j->plane(j->g, j->x + pl * j->g->in_size, j->y + pl * j->g->out_size);
}

void knn_for_planes(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		    float *y, knn_plane_fn plane)
{
	struct planes_job j = { g, x, y, plane };

	rt_parallel_for(k, g->n * g->c, 1, planes_run, &j);
}

/* A 1-D pool as the 2-D one over rows of height 1, and a 3-D one whose
 * window, stride and pads leave the depth alone (an R(2+1)D net's 1x3x3
 * pools) as the 2-D one over each depth's plane: the same windows over
 * the same values, so the 2-D float32 kernels take them (the generic
 * path computes in double, element by element).  0: g left as it is. */
static int pool_as_2d(struct knn_geom *g)
{
	struct knn_geom t = *g;

	if (g->nsp == 1) {
		t.in[0] = t.out[0] = t.kernel[0] = t.stride[0] = t.dil[0] = 1;
		t.in[1] = g->in[0];
		t.out[1] = g->out[0];
		t.kernel[1] = g->kernel[0];
		t.stride[1] = g->stride[0];
		t.dil[1] = g->dil[0];
		t.pad[0] = t.pad[2] = 0;
		t.pad[1] = g->pad[0];
		t.pad[3] = g->pad[1];
	} else if (g->nsp == 3 && g->kernel[0] == 1 && g->stride[0] == 1 && g->pad[0] == 0 &&
		   g->pad[3] == 0 && g->out[0] == g->in[0]) {
		t.c = g->c * g->in[0];
		for (int d = 0; d < 2; d++) {
			t.in[d] = g->in[d + 1];
			t.out[d] = g->out[d + 1];
			t.kernel[d] = g->kernel[d + 1];
			t.stride[d] = g->stride[d + 1];
			t.dil[d] = g->dil[d + 1];
			t.pad[d] = g->pad[d + 1];
			t.pad[2 + d] = g->pad[4 + d];
		}
		t.in_size = t.in[0] * t.in[1];
		t.out_size = t.out[0] * t.out[1];
	} else {
		return 0;
	}
	t.nsp = 2;
	*g = t;
	return 1;
}

static int pool_run(struct rt_kctx *k, enum pool_kind kind)
{
	struct rt_value *x, *y, *iv = NULL;
	struct pool_job j = { 0 };
	struct knn_geom g;
	int64_t dims[RT_MAX_RANK];
	double *xd = NULL, *yd = NULL;
	int rc, ceil_mode = (int)rt_attr_int(k, "ceil_mode", 0);

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (!rt_dtype_is_float(x->dtype) && x->dtype != IR_DTYPE_INT8 &&
	    x->dtype != IR_DTYPE_UINT8)
		return rt_err(k, "dtype %d is not supported", x->dtype);
	if ((rc = knn_geom_init(k, x, NULL, KNN_EMPTY_OK | (ceil_mode ? KNN_CEIL : 0),
				&g)) < 0)
		return rc;
	j.g = &g;
	j.kind = kind;
	j.include_pad = (int)rt_attr_int(k, "count_include_pad", 0);
	j.col_major = rt_attr_int(k, "storage_order", 0) == 1;
	if (kind == POOL_LP) {
		j.p = k->version < 2 ? rt_attr_float(k, "p", 2) :
		      (double)rt_attr_int(k, "p", 2);
		if (j.p <= 0)
			return rt_err(k, "p must be positive, got %g", j.p);
	}
	dims[0] = g.n;
	dims[1] = g.c;
	memcpy(dims + 2, g.out, (size_t)g.nsp * sizeof(int64_t));
	if (!(y = rt_out_tensor(k, 0, x->dtype, x->rank, dims)))
		return IR_ENOMEM;
	if (kind == POOL_MAX && k->n_out > 1 && rt_out_wanted(k, 1)) {
		if (!(iv = rt_out_tensor(k, 1, IR_DTYPE_INT64, x->rank, dims)))
			return IR_ENOMEM;
		j.idx = iv->data;
	}
	if (y->numel == 0)
		return 0;
	/* stored channels last (layout_cl.c): kept so where the readers take
	 * it, else made plain */
	if ((x->flags & RT_VALUE_CL) && kind == POOL_MAX && !j.idx && x->dtype == IR_DTYPE_FLOAT &&
	    g.nsp <= 3 && rt_cl_may_write(k)) {
		knn_maxpool_cl_f32(k, &g, x->data, y->data);
		rt_cl_set(y, 1);
		return 0;
	}
	if ((x->flags & RT_VALUE_CL) && kind == POOL_AVG && x->dtype == IR_DTYPE_FLOAT &&
	    knn_avgpool_cl_ok(&g) && rt_cl_may_write(k)) {
		knn_avgpool_cl_f32(k, &g, j.include_pad, x->data, y->data);
		rt_cl_set(y, 1);
		return 0;
	}
	if ((rc = rt_cl_plain_in(k, 0)) < 0)
		return rc;
	x = k->in[0];
	if (x->dtype == IR_DTYPE_FLOAT && kind != POOL_LP && !j.idx)
		pool_as_2d(&g);
	if (kind == POOL_MAX && !j.idx && x->dtype == IR_DTYPE_FLOAT && g.nsp == 2) {
		/* column stride 2 on rows of 24 or more: rows of sixteen-output
		 * blocks beat the transposes of the sixteen-plane kernel (192
		 * 56x56 planes 237 -> 195 us, 256 54x54 157 -> 85 us), which
		 * wins on narrower rows (576 14x14: 46 against 91 us).  So
		 * too of stride 1's large windows, by doubling (32 28x28 9x9:
		 * 51 against 107 us; 256 14x14 5x5: 154 against 67) */
		if ((rc = knn_pool3_s1_f32(k, &g, 0, 0, x->data, y->data)) != 0 ||
		    (g.out[1] >= 24 && (rc = knn_maxpool_win_f32(k, &g, x->data, y->data)) != 0) ||
		    (g.in[1] >= 24 && (rc = knn_max2d_s2_f32(k, &g, x->data, y->data)) != 0) ||
		    (rc = knn_pool2d_cb_f32(k, &g, 0, 0, x->data, y->data)) != 0 ||
		    (rc = knn_maxpool_win_f32(k, &g, x->data, y->data)) != 0 ||
		    (rc = knn_pool2d_same_f32(k, &g, 0, 0, x->data, y->data)) != 0 ||
		    (rc = knn_max2d_s2_f32(k, &g, x->data, y->data)) != 0)
			return rc < 0 ? rc : 0;

		knn_for_planes(k, &g, x->data, y->data, max2d_plane);
		return 0;
	}
	if (kind == POOL_AVG && x->dtype == IR_DTYPE_FLOAT && g.nsp == 2 &&
	    ((rc = knn_pool3_s1_f32(k, &g, 1, j.include_pad, x->data, y->data)) != 0 ||
	     (rc = knn_pool2d_cb_f32(k, &g, 1, j.include_pad, x->data, y->data)) != 0 ||
	     (rc = knn_pool2d_same_f32(k, &g, 1, j.include_pad, x->data, y->data)) != 0))
		return rc < 0 ? rc : 0;
	if (kind == POOL_AVG && x->dtype == IR_DTYPE_FLOAT && g.nsp == 2) {
		int64_t *cols = calloc((size_t)g.out[1] + 1, sizeof(int64_t));
		struct avg2d a = { &g, x->data, y->data, cols, j.include_pad };

		if (!cols)
			return rt_oom(k);
		knn_window_taps(&g, 1, j.include_pad, NULL, NULL, cols);
		rt_parallel_for(k, g.n * g.c, 1, avg2d_planes, &a);
		free(cols);
		return 0;
	}
	/* the rest of float32's max and average pools (a window over a
	 * depth): in float32, an output row at a time */
	if (x->dtype == IR_DTYPE_FLOAT && kind != POOL_LP && !j.idx &&
	    knn_pool_nd_f32(k, &g, kind == POOL_AVG, j.include_pad, x->data, y->data))
		return 0;
	if (!(xd = knn_load_f64(k, x)))
		return IR_ENOMEM;
	if (!(yd = malloc((size_t)y->numel * sizeof(double)))) {
		free(xd);
		return rt_oom(k);
	}
	j.x = xd;
	j.y = yd;
	rt_parallel_for(k, g.n * g.c, 1, pool_planes, &j);
	knn_store_f64(y, yd);
	free(xd);
	free(yd);
	return 0;
}

static int k_maxpool(struct rt_kctx *k)
{
	return pool_run(k, POOL_MAX);
}

static int k_avgpool(struct rt_kctx *k)
{
	return pool_run(k, POOL_AVG);
}

static int k_lppool(struct rt_kctx *k)
{
	return pool_run(k, POOL_LP);
}

struct gavg {
	const float *x;
	float *y;
	int64_t plane;
};

/* float32 global averages of planes [lo, hi), each plane's sum in double */
static void gavg_planes(void *ctx, int64_t lo, int64_t hi)
{
	const struct gavg *j = ctx;

	for (int64_t i = lo; i < hi; i++)
		j->y[i] = (float)(rt_sum_f32(j->x + i * j->plane, j->plane, 0, 0) /
				  (double)j->plane);
}

struct gavg_cl {
	const float *x;
	float *y;
	int64_t c, plane;
};

/* Channels a block of gavg_cl_blocks takes: 256 bytes of each position's
 * row, read once (blocks of 8 read each row's cache lines once per block,
 * from L3 on large planes: 112x112 by 32 channels 62 us, and at two
 * threads, each reading half of every line's pair, 102) */
#define GAVG_CW 64

/* Channels [c0, c0 + w), w <= GAVG_CW, of image b of x stored channels
 * last (N, spatial, C): each one's sum as rt_sum_f32 makes it on its
 * plane, eight partial sums of every eighth position and the tail's sum,
 * added in its order, so the averages are those of the plain layout bit
 * for bit.  (Inlined with w = GAVG_CW, the lane loops have no test and
 * vectorize.) */
__attribute__((always_inline))
static inline void gavg_cl_block(const struct gavg_cl *j, int64_t b, int64_t c0, int w)
{
	const float *x = j->x + b * j->plane * j->c + c0;
	double s[8][GAVG_CW] = { { 0 } }, sum[GAVG_CW] = { 0 };
	int64_t t = 0;

	for (; t + 8 <= j->plane; t += 8)
		for (int u = 0; u < 8; u++)
			for (int l = 0; l < w; l++)
				s[u][l] += x[(t + u) * j->c + l];
	for (; t < j->plane; t++)
		for (int l = 0; l < w; l++)
			sum[l] += x[t * j->c + l];
	for (int u = 0; u < 8; u++)
		for (int l = 0; l < w; l++)
			sum[l] += s[u][l];
	for (int l = 0; l < w; l++)
		j->y[b * j->c + c0 + l] = (float)(sum[l] / (double)j->plane);
}

/* Blocks [lo, hi) of GAVG_CW channels of one image */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void gavg_cl_blocks(void *ctx, int64_t lo, int64_t hi)
{
	const struct gavg_cl *j = ctx;
	int64_t blocks = (j->c + GAVG_CW - 1) / GAVG_CW;

	for (int64_t bl = lo; bl < hi; bl++) {
		int64_t b = bl / blocks, c0 = bl % blocks * GAVG_CW;

		if (j->c - c0 >= GAVG_CW)
			gavg_cl_block(j, b, c0, GAVG_CW);
		else
			gavg_cl_block(j, b, c0, (int)(j->c - c0));
	}
}

/* Global pools: one value per (n, c) plane; a float32 GlobalAveragePool
 * reads x stored channels last as it is (layout_cl.c), the others a
 * plain copy. */
static int global_run(struct rt_kctx *k, enum pool_kind kind)
{
	struct rt_value *x, *y;
	int64_t dims[RT_MAX_RANK], plane = 1, planes;
	double p = 2;

	if (rt_in_tensor(k, 0, &x) < 0)
		return IR_EINVAL;
	if (!rt_dtype_is_float(x->dtype))
		return rt_err(k, "dtype %d is not supported", x->dtype);
	if ((x->flags & RT_VALUE_CL) && (x->dtype != IR_DTYPE_FLOAT || kind != POOL_AVG)) {
		int rc = rt_cl_plain_in(k, 0);

		if (rc < 0)
			return rc;
		x = k->in[0];
	}
	if (x->rank < 2)
		return rt_err(k, "input has rank %d, expected (N, C, ...)", x->rank);
	if (kind == POOL_LP)
		p = k->version < 2 ? rt_attr_float(k, "p", 2) :
		    (double)rt_attr_int(k, "p", 2);
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	for (int d = 2; d < x->rank; d++) {
		dims[d] = 1;
		plane *= x->dims[d];
	}
	planes = x->dims[0] * x->dims[1];
	if (!(y = rt_out_tensor(k, 0, x->dtype, x->rank, dims)))
		return IR_ENOMEM;
	if (x->flags & RT_VALUE_CL) {
		struct gavg_cl j = { x->data, y->data, x->dims[1], plane };

		rt_parallel_for(k, x->dims[0] * ((x->dims[1] + GAVG_CW - 1) / GAVG_CW),
				1 + 8192 / (plane * GAVG_CW / 8 + 1), gavg_cl_blocks, &j);
		return 0;
	}
	if (x->dtype == IR_DTYPE_FLOAT && kind == POOL_AVG) {
		struct gavg j = { x->data, y->data, plane };

		rt_parallel_for(k, planes, 1 + 65536 / (plane + 1), gavg_planes, &j);
		return 0;
	}
	if (x->dtype == IR_DTYPE_FLOAT && kind == POOL_MAX && plane > 0) {
		for (int64_t i = 0; i < planes; i++)
			((float *)y->data)[i] = knn_gmax_f32((const float *)x->data + i * plane, plane);
		return 0;
	}
	for (int64_t i = 0; i < planes; i++) {
		double acc = kind == POOL_MAX ? -INFINITY : 0;

		for (int64_t t = 0; t < plane; t++) {
			double v = rt_load_f64(x->dtype, x->data, i * plane + t);

			if (kind == POOL_MAX)
				acc = v > acc || t == 0 ? v : acc;
			else if (kind == POOL_AVG)
				acc += v;
			else
				acc += lp_term(v, p);
		}
		if (kind == POOL_AVG)
			acc /= (double)plane;
		else if (kind == POOL_LP)
			acc = pow(acc, 1 / p);
		rt_store_f64(y->dtype, y->data, i, acc);
	}
	return 0;
}

static int k_global_avgpool(struct rt_kctx *k)
{
	return global_run(k, POOL_AVG);
}

static int k_global_maxpool(struct rt_kctx *k)
{
	return global_run(k, POOL_MAX);
}

static int k_global_lppool(struct rt_kctx *k)
{
	return global_run(k, POOL_LP);
}

static int k_maxunpool(struct rt_kctx *k)
{
	struct rt_value *x, *iv, *y;
	struct knn_geom g;
	int64_t dims[RT_MAX_RANK], base[RT_MAX_RANK], n_base = 1, *os = NULL;
	size_t n_os = 0;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &iv)) < 0)
		return rc;
	if (iv->dtype != IR_DTYPE_INT64 || iv->numel != x->numel)
		return rt_err(k, "indices I must be int64 with the shape of X");
	if (x->rank < 3)
		return rt_err(k, "input has rank %d, expected 3 or more", x->rank);
	/* the pool's geometry with the unpooled size as its input */
	g.nsp = x->rank - 2;
	{
		const int64_t *v;
		size_t n;
		int nsp = g.nsp;

		if (!(v = rt_attr_ints(k, "kernel_shape", &n)) || (int)n != nsp)
			return rt_err(k, "attribute 'kernel_shape' must have %d values", nsp);
		memcpy(g.kernel, v, n * sizeof(*v));
		for (int d = 0; d < nsp; d++) {
			g.stride[d] = 1;
			g.pad[d] = g.pad[nsp + d] = 0;
		}
		if ((v = rt_attr_ints(k, "strides", &n)) && (int)n == nsp)
			memcpy(g.stride, v, n * sizeof(*v));
		if ((v = rt_attr_ints(k, "pads", &n)) && (int)n == 2 * nsp)
			memcpy(g.pad, v, n * sizeof(*v));
		dims[0] = x->dims[0];
		dims[1] = x->dims[1];
		for (int d = 0; d < nsp; d++)
			dims[2 + d] = (x->dims[2 + d] - 1) * g.stride[d] + g.kernel[d] -
				      g.pad[d] - g.pad[nsp + d];
	}
	memcpy(base, dims, (size_t)x->rank * sizeof(int64_t));
	for (int d = 0; d < x->rank; d++)
		n_base *= base[d];
	if (rt_in(k, 2)) {
		if ((rc = rt_in_ints(k, 2, &os, &n_os)) < 0)
			return rc;
		if ((int)n_os != x->rank) {
			free(os);
			return rt_err(k, "output_shape has %zu values, expected %d", n_os,
				      x->rank);
		}
		memcpy(dims, os, n_os * sizeof(int64_t));
		free(os);
	}
	for (int d = 0; d < x->rank; d++)
		if (dims[d] < 0)
			return rt_err(k, "output dim %d is negative", d);
	if (!(y = rt_out_tensor(k, 0, x->dtype, x->rank, dims)))
		return IR_ENOMEM;
	memset(y->data, 0, (size_t)y->numel * rt_dtype_size(y->dtype));
	/* indices address the unpooled shape (base); an explicit larger
	 * output_shape keeps their coordinates */
	for (int64_t i = 0; i < x->numel; i++) {
		int64_t t = ((const int64_t *)iv->data)[i], r = t, mul = 1, o = 0;

		if (t < 0 || t >= n_base)
			return rt_err(k, "index %lld is outside the unpooled tensor of %lld elements",
				      (long long)t, (long long)n_base);
		for (int d = x->rank - 1; d >= 0; d--) {
			int64_t c = r % base[d];

			r /= base[d];
			if (c >= dims[d])
				return rt_err(k, "index %lld falls outside output_shape",
					      (long long)t);
			o += c * mul;
			mul *= dims[d];
		}
		t = o;
		memcpy((char *)y->data + t * (int64_t)rt_dtype_size(y->dtype),
		       (const char *)x->data + i * (int64_t)rt_dtype_size(x->dtype),
		       rt_dtype_size(x->dtype));
	}
	return 0;
}

const struct rt_kernel rt_kernels_pool[] = {
	{ "ai.onnx", "AveragePool", 1, RT_OPEN, k_avgpool },
	{ "ai.onnx", "GlobalAveragePool", 1, RT_OPEN, k_global_avgpool },
	{ "ai.onnx", "GlobalLpPool", 1, RT_OPEN, k_global_lppool },
	{ "ai.onnx", "GlobalMaxPool", 1, RT_OPEN, k_global_maxpool },
	{ "ai.onnx", "LpPool", 1, RT_OPEN, k_lppool },
	{ "ai.onnx", "MaxPool", 1, RT_OPEN, k_maxpool },
	{ "ai.onnx", "MaxUnpool", 9, RT_OPEN, k_maxunpool },
};
const size_t rt_n_kernels_pool = sizeof(rt_kernels_pool) / sizeof(rt_kernels_pool[0]);
