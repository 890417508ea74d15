/* k_pool_nhwc.c: 1-D, 2-D and 3-D MaxPool on a result stored channels last
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
		int64_t b = r / (g->out[0] * g->out[1]), z = r / g->out[1] % g->out[0]; \
		int64_t a = r % g->out[1]; \
		const T *xb = (const T *)j->x + b * g->in[0] * g->in[1] * g->in[2] * c; \
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

/* mcl_rows_f32 in AVX-512 registers: sixteen channels of an output
 * position through all its taps before they are stored (the loop above
 * loads and stores the output at each tap: a ShuffleNet stem's 3x3
 * stride-2 pool of 24 channels at 112x112 took 0.20 ms against 0.07 for
 * the plain layout's kernel).  KNN_MAXIN lane by lane (knn_fold512). */
__attribute__((target("avx512f")))
static void mcl_rows_f32_512(void *ctx, int64_t lo, int64_t hi)
{
	const struct mcl_job *j = ctx;
	const struct knn_geom3 *g = &j->g;
	const int64_t c = j->c, ow = g->out[2];

	for (int64_t r = lo; r < hi; r++) {
		int64_t b = r / (g->out[0] * g->out[1]), z = r / g->out[1] % g->out[0];
		int64_t a = r % g->out[1];
		const float *xb = (const float *)j->x + b * g->in[0] * g->in[1] * g->in[2] * c;
		float *yr = (float *)j->y + r * ow * c;

		for (int64_t o = 0; o < ow; o++)
			for (int64_t c0 = 0; c0 < c; c0 += 16) {
				__mmask16 lanes = knn_lanes16(c - c0);
				__m512 acc = _mm512_set1_ps(-INFINITY);

				for (int64_t t = 0; t < g->k[0]; t++) {
					int64_t dz = mcl_at(g, 0, z, t);

					for (int64_t u = 0; dz >= 0 && u < g->k[1]; u++) {
						int64_t h = mcl_at(g, 1, a, u);

						for (int64_t v = 0; h >= 0 && v < g->k[2]; v++) {
							int64_t w = mcl_at(g, 2, o, v);

							if (w < 0)
								continue;
							acc = knn_fold512(acc, _mm512_maskz_loadu_ps(lanes,
								xb + ((dz * g->in[1] + h) * g->in[2] + w) * c + c0), 0);
						}
					}
				}
				_mm512_mask_storeu_ps(yr + o * c + c0, lanes, acc);
			}
	}
}

void knn_maxpool_cl_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x, float *y)
{
	struct mcl_job j = { .c = g->c, .x = x, .y = y };

	knn_geom3(g, &j.g);
	rt_parallel_for(k, g->n * j.g.out[0] * j.g.out[1], 1,
			rt_pgemm_ok() ? mcl_rows_f32_512 : mcl_rows_f32, &j);
}

/* uint8 codes, or int8 when sgn */
void knn_maxpool_cl_q8(struct rt_kctx *k, const struct knn_geom *g, const void *x, void *y,
		       int sgn)
{
	struct mcl_job j = { .c = g->c, .x = x, .y = y };

	knn_geom3(g, &j.g);
	rt_parallel_for(k, g->n * j.g.out[0] * j.g.out[1], 1, sgn ? mcl_rows_s8 : mcl_rows_u8, &j);
}
