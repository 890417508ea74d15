/* k_pool_nhwc.c: 1-D, 2-D and 3-D MaxPool and AveragePool on a result stored channels last
 * (runtime/layout_cl.c): each output position the maximum of its
 * window's positions, a position's channels contiguous, so the channels
 * are the vector (a U-Net's pools between convolutions then keep the
 * layout instead of a reorder on each side).  Windows, pads, strides,
 * dilations and ceil_mode from the geometry (k_conv_geom.c); taps in
 * the padding are skipped.  float32, where the maximum is max2d_plane's
 * in k_pool.c (KNN_MAXIN, from -inf), so the two layouts give the same
 * values; and 8-bit codes (a QDQ MaxPool unit, runtime/qdq_table.c). */
#include <immintrin.h>
#include <math.h>

#include "runtime/kernels/k_conv_int.h"
#include "runtime/kernels/k_exp512.h"    /* knn_lanes16 */
#include "runtime/kernels/k_pool512.h"   /* knn_fold512 */
#include "runtime/kernels/pgemm.h"       /* rt_pgemm_ok: AVX-512 */

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

#define MCL_MAX(y, x) ((x) > (y) ? (x) : (y))
#define MCL_SAME(x) (x)
#define MCL_FLIP(x) ((uint8_t)((x) ^ 0x80))   /* int8's order as uint8's */

struct mcl_job {
	struct knn_geom3 g;      /* (knn_geom3) */
	int64_t c;
	const void *x;
	void *y;
};

/* Input coordinate of output o's tap t along dim i, or -1 outside. */
static inline int64_t mcl_at(const struct knn_geom3 *g, int i, int64_t o, int64_t t)
{
	int64_t v = o * g->s[i] - g->pb[i] + t * g->d[i];

	return v < 0 || v >= g->in[i] ? -1 : v;
}

/* Output row r of n * od * oh: its depth *z and row *a, and where its
 * image starts in the input (c channels a position). */
static inline int64_t mcl_row(const struct knn_geom3 *g, int64_t c, int64_t r, int64_t *z,
			      int64_t *a)
{
	*z = r / g->out[1] % g->out[0];
	*a = r % g->out[1];
	return r / (g->out[0] * g->out[1]) * g->in[0] * g->in[1] * g->in[2] * c;
}

/* name(ctx, lo, hi): output rows [lo, hi) of n * od * oh over elements
 * of type T: each output position's c values set to INIT, then
 * y = MAX(y, KEY(x)) with each tap x of its window inside the input,
 * then y = KEY(y); KEY its own inverse, mapping the elements onto the
 * order MAX takes. */
#define MCL_ROWS(name, T, INIT, MAX, KEY) \
static void name(void *ctx, int64_t lo, int64_t hi) \
{ \
	const struct mcl_job *j = ctx; \
	const struct knn_geom3 *g = &j->g; \
	const int64_t c = j->c, ow = g->out[2]; \
 \
	for (int64_t r = lo; r < hi; r++) { \
		int64_t z, a, xo = mcl_row(g, c, r, &z, &a); \
		const T *xb = (const T *)j->x + xo; \
		T *yr = (T *)j->y + r * ow * c; \
 \
		for (int64_t o = 0; o < ow; o++) { \
			T *yo = yr + o * c; \
 \
			for (int64_t q = 0; q < c; q++) \
				yo[q] = INIT; \
			for (int64_t t = 0; t < g->k[0]; t++) { \
				int64_t dz = mcl_at(g, 0, z, t); \
 \
				for (int64_t u = 0; dz >= 0 && u < g->k[1]; u++) { \
					int64_t h = mcl_at(g, 1, a, u); \
 \
					for (int64_t v = 0; h >= 0 && v < g->k[2]; v++) { \
						int64_t w = mcl_at(g, 2, o, v); \
						const T *xp = xb + ((dz * g->in[1] + h) * g->in[2] + w) * c; \
 \
						if (w < 0) \
							continue; \
						for (int64_t q = 0; q < c; q++) \
							yo[q] = MAX(yo[q], KEY(xp[q])); \
					} \
				} \
			} \
			for (int64_t q = 0; q < c; q++) \
				yo[q] = KEY(yo[q]); \
		} \
	} \
}

MCL_ROWS(mcl_rows_f32, float, -INFINITY, KNN_MAXIN, MCL_SAME)
/* codes: every window holds a position of the input (the caller's
 * check), so each output is the largest code of its window */
MCL_ROWS(mcl_rows_u8, uint8_t, 0, MCL_MAX, MCL_SAME)
MCL_ROWS(mcl_rows_s8, uint8_t, 0, MCL_MAX, MCL_FLIP)

/* The window of output (z, a, o) of image xb: the position of each tap
 * inside the input (its first channel), in the window's order; their
 * count. */
#define MCL_TAPS 64

static int mcl_window(const struct knn_geom3 *g, int64_t c, int64_t z, int64_t a, int64_t o,
		      int64_t *at)
{
	int n = 0;

	for (int64_t t = 0; t < g->k[0]; t++) {
		int64_t dz = mcl_at(g, 0, z, t);

		for (int64_t u = 0; dz >= 0 && u < g->k[1]; u++) {
			int64_t h = mcl_at(g, 1, a, u);

			for (int64_t v = 0; h >= 0 && v < g->k[2]; v++) {
				int64_t w = mcl_at(g, 2, o, v);

				if (w >= 0)
					at[n++] = ((dz * g->in[1] + h) * g->in[2] + w) * c;
			}
		}
	}
	return n;
}

/* Whether a window's taps fit mcl_window's list. */
static int mcl_small(const struct knn_geom3 *g)
{
	return g->k[0] * g->k[1] * g->k[2] <= MCL_TAPS;
}

/* Channels of an output position a block of the AVX-512 kernels takes
 * through all the window's taps: four vectors (eight in double) */
#define MCL_CB 64

/* Vectors NV (a constant where inlined) of channels from xb + at[t] of
 * the n taps, the last one's lanes last, folded into yo: the first tap
 * as it is (KNN_MAXIN(-inf, x) is x), the others by knn_fold512. */
__attribute__((target("avx512f"), always_inline))
static inline void mcl_pos512(const float *xb, const int64_t *at, int n, float *yo, int nv,
			      __mmask16 last)
{
	__m512 acc[MCL_CB / 16];

	for (int q = 0; q < nv; q++)
		acc[q] = n ? _mm512_maskz_loadu_ps(q == nv - 1 ? last : 0xffff, xb + at[0] + 16 * q) :
		     _mm512_set1_ps(-INFINITY);
	for (int t = 1; t < n; t++)
		for (int q = 0; q < nv; q++)
			acc[q] = knn_fold512(acc[q], _mm512_maskz_loadu_ps(q == nv - 1 ? last : 0xffff,
									 xb + at[t] + 16 * q), 0);
	for (int q = 0; q < nv; q++)
		_mm512_mask_storeu_ps(yo + 16 * q, q == nv - 1 ? last : 0xffff, acc[q]);
}

/* mcl_rows_f32 in AVX-512 registers: the channels of an output position
 * in blocks of 64 (four vectors, then one at a time) through all its
 * taps before they are stored, in the window's order (the same values
 * bit for bit).  The window's rows are found once per output row, its
 * columns per position.  (The loop above loads and stores the output at
 * each tap: a ShuffleNet stem's 3x3 stride-2 pool of 24 channels at
 * 112x112 took 0.20 ms against 0.07 for the plain layout's kernel; a
 * block of a variable count of vectors kept them on the stack: 2x2
 * stride 2 of 64 channels at 240x320 1.95 ms against the plain layout's
 * 0.91.) */
__attribute__((target("avx512f")))
static void mcl_rows_f32_512(void *ctx, int64_t lo, int64_t hi)
{
	const struct mcl_job *j = ctx;
	const struct knn_geom3 *g = &j->g;
	const int64_t c = j->c, ow = g->out[2];
	int64_t rows[MCL_TAPS], at[MCL_TAPS];

	for (int64_t r = lo; r < hi; r++) {
		int64_t z, a, xo = mcl_row(g, c, r, &z, &a);
		const float *xb = (const float *)j->x + xo;
		float *yr = (float *)j->y + r * ow * c;
		int nr = 0;

		/* the window's rows inside the input, depth by row */
		for (int64_t t = 0; t < g->k[0]; t++) {
			int64_t dz = mcl_at(g, 0, z, t);

			for (int64_t u = 0; dz >= 0 && u < g->k[1]; u++) {
				int64_t h = mcl_at(g, 1, a, u);

				if (h >= 0)
					rows[nr++] = (dz * g->in[1] + h) * g->in[2] * c;
			}
		}
		for (int64_t o = 0; o < ow; o++) {
			int64_t w0 = o * g->s[2] - g->pb[2];
			float *yo = yr + o * c;
			int n = 0, nw = 0;
			int64_t cols[MCL_TAPS];
			int64_t c0 = 0;

			for (int64_t v = 0; v < g->k[2]; v++) {
				int64_t w = w0 + v * g->d[2];

				if (w >= 0 && w < g->in[2])
					cols[nw++] = w * c;
			}
			for (int i = 0; i < nr; i++)
				for (int v = 0; v < nw; v++)
					at[n++] = rows[i] + cols[v];
			for (; c0 + MCL_CB <= c; c0 += MCL_CB)
				mcl_pos512(xb + c0, at, n, yo + c0, MCL_CB / 16, 0xffff);
			for (; c0 < c; c0 += 16)
				mcl_pos512(xb + c0, at, n, yo + c0, 1, knn_lanes16(c - c0));
		}
	}
}

/* ---- average ------------------------------------------------------------ */

struct acl_job {
	struct knn_geom3 g;
	int64_t c;
	const float *x;
	float *y;
	int include_pad;
};

/* The divisor of output (z, a, o): its taps inside, or inside the pads. */
static int64_t acl_count(const struct acl_job *j, int64_t z, int64_t a, int64_t o)
{
	int64_t n[3], p[3];

	knn_geom3_taps(&j->g, 0, z, &n[0], &p[0]);
	knn_geom3_taps(&j->g, 1, a, &n[1], &p[1]);
	knn_geom3_taps(&j->g, 2, o, &n[2], &p[2]);
	return j->include_pad ? p[0] * p[1] * p[2] : n[0] * n[1] * n[2];
}

/* Output rows [lo, hi) of n * od * oh, a position's channels at a time:
 * each channel's taps added in float32 in the window's order from 0,
 * divided by the count (NaN for no taps).  (Another order than the plain
 * layout's kernels, which differ among themselves in the last bit too:
 * k_pool_s1.c, k_pool_same.c; a sum in double as knn_pool_nd_f32's,
 * two conversions a tap, took 2.1 ms for 192 channels at 73x73.) */
static void acl_rows_f32(void *ctx, int64_t lo, int64_t hi)
{
	const struct acl_job *j = ctx;
	const struct knn_geom3 *g = &j->g;
	const int64_t c = j->c, ow = g->out[2];
	int64_t at[MCL_TAPS];
	float acc[MCL_CB];

	for (int64_t r = lo; r < hi; r++) {
		int64_t z, a, xo = mcl_row(g, c, r, &z, &a);
		const float *xb = j->x + xo;
		float *yr = j->y + r * ow * c;

		for (int64_t o = 0; o < ow; o++) {
			int n = mcl_window(g, c, z, a, o, at);
			float cnt = (float)acl_count(j, z, a, o);

			for (int64_t c0 = 0; c0 < c; c0 += MCL_CB) {
				int64_t nc = c - c0 < MCL_CB ? c - c0 : MCL_CB;

				for (int64_t q = 0; q < nc; q++)
					acc[q] = 0;
				for (int t = 0; t < n; t++)
					for (int64_t q = 0; q < nc; q++)
						acc[q] += xb[at[t] + c0 + q];
				for (int64_t q = 0; q < nc; q++)
					yr[o * c + c0 + q] = cnt != 0 ? acc[q] / cnt : NAN;
			}
		}
	}
}

/* The same in AVX-512 registers: the same sums in the same order */
__attribute__((target("avx512f")))
static void acl_rows_f32_512(void *ctx, int64_t lo, int64_t hi)
{
	const struct acl_job *j = ctx;
	const struct knn_geom3 *g = &j->g;
	const int64_t c = j->c, ow = g->out[2];
	int64_t at[MCL_TAPS];

	for (int64_t r = lo; r < hi; r++) {
		int64_t z, a, xo = mcl_row(g, c, r, &z, &a);
		const float *xb = j->x + xo;
		float *yr = j->y + r * ow * c;

		for (int64_t o = 0; o < ow; o++) {
			int n = mcl_window(g, c, z, a, o, at);
			float cnt = (float)acl_count(j, z, a, o);
			__m512 dc = _mm512_set1_ps(cnt);

			for (int64_t c0 = 0; c0 < c; c0 += MCL_CB) {
				int nv = (int)((c - c0 < MCL_CB ? c - c0 : MCL_CB) + 15) / 16;
				__m512 acc[MCL_CB / 16];
				__mmask16 lanes[MCL_CB / 16];

				for (int q = 0; q < nv; q++) {
					lanes[q] = knn_lanes16(c - c0 - 16 * q);
					acc[q] = _mm512_setzero_ps();
				}
				for (int t = 0; t < n; t++) {
					const float *xp = xb + at[t] + c0;

					for (int q = 0; q < nv; q++)
						acc[q] = _mm512_add_ps(acc[q], _mm512_maskz_loadu_ps(
									       lanes[q], xp + 16 * q));
				}
				for (int q = 0; q < nv; q++)
					_mm512_mask_storeu_ps(yr + o * c + c0 + 16 * q, lanes[q],
							      cnt != 0 ? _mm512_div_ps(acc[q], dc) :
							      _mm512_set1_ps(NAN));
			}
		}
	}
}

void knn_maxpool_cl_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x, float *y)
{
	struct mcl_job j = { .c = g->c, .x = x, .y = y };

	knn_geom3(g, &j.g);
	rt_parallel_for(k, g->n * j.g.out[0] * j.g.out[1], 1,
			rt_pgemm_ok() && mcl_small(&j.g) ? mcl_rows_f32_512 : mcl_rows_f32, &j);
}

int knn_avgpool_cl_ok(const struct knn_geom *g)
{
	int64_t taps = 1;

	for (int d = 0; d < g->nsp; d++)
		taps *= g->kernel[d];
	return g->nsp >= 1 && g->nsp <= 3 && taps <= MCL_TAPS;
}

void knn_avgpool_cl_f32(struct rt_kctx *k, const struct knn_geom *g, int include_pad,
			const float *x, float *y)
{
	struct acl_job j = { .c = g->c, .x = x, .y = y, .include_pad = include_pad };

	knn_geom3(g, &j.g);
	rt_parallel_for(k, g->n * j.g.out[0] * j.g.out[1], 1,
			rt_pgemm_ok() ? acl_rows_f32_512 : acl_rows_f32, &j);
}

/* uint8 codes, or int8 when sgn */
void knn_maxpool_cl_q8(struct rt_kctx *k, const struct knn_geom *g, const void *x, void *y,
		       int sgn)
{
	struct mcl_job j = { .c = g->c, .x = x, .y = y };

	knn_geom3(g, &j.g);
	rt_parallel_for(k, g->n * j.g.out[0] * j.g.out[1], 1, sgn ? mcl_rows_s8 : mcl_rows_u8, &j);
}
