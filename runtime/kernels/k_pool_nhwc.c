/* k_pool_nhwc.c: 2-D MaxPool on a result stored channels last
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

struct mcl_job {
	const struct knn_geom *g;
	const void *x;
	void *y;
};

#define MCL_MAX(y, x) ((x) > (y) ? (x) : (y))
#define MCL_SAME(x) (x)
#define MCL_FLIP(x) ((uint8_t)((x) ^ 0x80))   /* int8's order as uint8's */

/* name(ctx, lo, hi): output rows [lo, hi) of n * oh over elements of
 * type T: each output position's c values set to INIT, then
 * y = MAX(y, KEY(x)) with each tap x of its window inside the input,
 * then y = KEY(y); KEY its own inverse, mapping the elements onto the
 * order MAX takes. */
#define MCL_ROWS(name, T, INIT, MAX, KEY) \
static void name(void *ctx, int64_t lo, int64_t hi) \
{ \
	const struct mcl_job *j = ctx; \
	const struct knn_geom *g = j->g; \
	const int64_t c = g->c, ih = g->in[0], iw = g->in[1], oh = g->out[0], ow = g->out[1]; \
 \
	for (int64_t r = lo; r < hi; r++) { \
		int64_t b = r / oh, a = r % oh; \
		const T *xb = (const T *)j->x + b * ih * iw * c; \
		T *yr = (T *)j->y + r * ow * c; \
 \
		for (int64_t o = 0; o < ow; o++) { \
			T *yo = yr + o * c; \
 \
			for (int64_t q = 0; q < c; q++) \
				yo[q] = INIT; \
			for (int64_t u = 0; u < g->kernel[0]; u++) { \
				int64_t h = a * g->stride[0] - g->pad[0] + u * g->dil[0]; \
 \
				if (h < 0 || h >= ih) \
					continue; \
				for (int64_t v = 0; v < g->kernel[1]; v++) { \
					int64_t w = o * g->stride[1] - g->pad[1] + v * g->dil[1]; \
					const T *xp = xb + (h * iw + w) * c; \
 \
					if (w < 0 || w >= iw) \
						continue; \
					for (int64_t q = 0; q < c; q++) \
						yo[q] = MAX(yo[q], KEY(xp[q])); \
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
	const struct knn_geom *g = j->g;
	const int64_t c = g->c, ih = g->in[0], iw = g->in[1], oh = g->out[0], ow = g->out[1];

	for (int64_t r = lo; r < hi; r++) {
		int64_t b = r / oh, a = r % oh;
		const float *xb = (const float *)j->x + b * ih * iw * c;
		float *yr = (float *)j->y + r * ow * c;

		for (int64_t o = 0; o < ow; o++)
			for (int64_t c0 = 0; c0 < c; c0 += 16) {
				__mmask16 lanes = knn_lanes16(c - c0);
				__m512 acc = _mm512_set1_ps(-INFINITY);

				for (int64_t u = 0; u < g->kernel[0]; u++) {
					int64_t h = a * g->stride[0] - g->pad[0] + u * g->dil[0];

					if (h < 0 || h >= ih)
						continue;
					for (int64_t v = 0; v < g->kernel[1]; v++) {
						int64_t w = o * g->stride[1] - g->pad[1] + v * g->dil[1];
						__m512 t;

						if (w < 0 || w >= iw)
							continue;
						t = _mm512_maskz_loadu_ps(lanes, xb + (h * iw + w) * c + c0);
						acc = knn_fold512(acc, t, 0);
					}
				}
				_mm512_mask_storeu_ps(yr + o * c + c0, lanes, acc);
			}
	}
}

void knn_maxpool_cl_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x, float *y)
{
	struct mcl_job j = { g, x, y };

	rt_parallel_for(k, g->n * g->out[0], 1, rt_pgemm_ok() ? mcl_rows_f32_512 : mcl_rows_f32,
			&j);
}

/* uint8 codes, or int8 when sgn */
void knn_maxpool_cl_q8(struct rt_kctx *k, const struct knn_geom *g, const void *x, void *y,
		       int sgn)
{
	struct mcl_job j = { g, x, y };

	rt_parallel_for(k, g->n * g->out[0], 1, sgn ? mcl_rows_s8 : mcl_rows_u8, &j);
}
