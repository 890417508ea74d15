/* k_pool_nd.c: float32 MaxPool and AveragePool of 1 to 3 spatial dims
 * in the plain layout, for what the 2-D kernels (k_pool.c, directly or
 * through pool_as_2d) do not take: a 3-D window over the depth (a video
 * or volume net's 2x2x2 or 3x3x3 pools); and GlobalMaxPool's maximum of
 * a plane.  An output row (a depth and a row of the output) at a time:
 * each tap of the window adds its input row to the row's accumulators,
 * so each output sees its taps in the window's order, as the generic
 * path in double (k_pool.c) takes them: the maximum is KNN_MAXIN's (as
 * every float32 max pool's), the average a sum in double divided by the
 * count of taps inside (or inside the pads, count_include_pad), rounded
 * once: the generic path's values bit for bit, without its copy of the
 * input in double (a 3x3x3 MaxPool on 32 x 8 x 48 x 48: 10.5 -> 0.84 ms,
 * bench/README.md, "Spatial operators in 1, 2 and 3 dims"). */
#include <immintrin.h>
#include <math.h>

#include "runtime/kernels/k_conv_int.h"
#include "runtime/kernels/pgemm.h"   /* rt_pgemm_ok: AVX-512 */

void knn_geom3(const struct knn_geom *g, struct knn_geom3 *t)
{
	int lead = 3 - g->nsp;

	for (int i = 0; i < 3; i++) {
		int d = i - lead;

		t->in[i] = d < 0 ? 1 : g->in[d];
		t->out[i] = d < 0 ? 1 : g->out[d];
		t->k[i] = d < 0 ? 1 : g->kernel[d];
		t->s[i] = d < 0 ? 1 : g->stride[d];
		t->d[i] = d < 0 ? 1 : g->dil[d];
		t->pb[i] = d < 0 ? 0 : g->pad[d];
		t->pe[i] = d < 0 ? 0 : g->pad[g->nsp + d];
	}
}

struct pnd_job {
	struct knn_geom3 t;
	int64_t in_size;              /* a plane's elements */
	const float *x;
	float *y;
	int avg, include_pad;
};

void knn_geom3_taps(const struct knn_geom3 *t, int i, int64_t o, int64_t *inside,
		    int64_t *padded)
{
	*inside = *padded = 0;
	for (int64_t q = 0; q < t->k[i]; q++) {
		int64_t at = o * t->s[i] - t->pb[i] + q * t->d[i];

		*inside += at >= 0 && at < t->in[i];
		*padded += at >= -t->pb[i] && at < t->in[i] + t->pe[i];
	}
}

/* Output columns a block takes (its accumulators on the stack) */
#define PND_COLS 256

static void pnd_rows(void *ctx, int64_t lo, int64_t hi)
{
	const struct pnd_job *j = ctx;
	const struct knn_geom3 *t3 = &j->t;
	const int64_t *in = t3->in, *out = t3->out, *k = t3->k, *s = t3->s, *d = t3->d;
	const int64_t *p = t3->pb;
	double acc[PND_COLS];
	float mx[PND_COLS];

	for (int64_t r = lo; r < hi; r++) {
		int64_t pl = r / (out[0] * out[1]), z = r / out[1] % out[0], a = r % out[1];
		const float *xp = j->x + pl * j->in_size;
		int64_t nz, pz, nh, ph;

		knn_geom3_taps(t3, 0, z, &nz, &pz);
		knn_geom3_taps(t3, 1, a, &nh, &ph);
		for (int64_t b0 = 0; b0 < out[2]; b0 += PND_COLS) {
			int64_t nb = out[2] - b0 < PND_COLS ? out[2] - b0 : PND_COLS;
			float *yr = j->y + r * out[2] + b0;

			for (int64_t b = 0; b < nb; b++) {
				acc[b] = 0;
				mx[b] = -INFINITY;
			}
			for (int64_t t = 0; t < k[0]; t++) {
				int64_t dz = z * s[0] - p[0] + t * d[0];

				if (dz < 0 || dz >= in[0])
					continue;
				for (int64_t u = 0; u < k[1]; u++) {
					int64_t h = a * s[1] - p[1] + u * d[1];
					const float *xr = xp + (dz * in[1] + h) * in[2];

					if (h < 0 || h >= in[1])
						continue;
					for (int64_t v = 0; v < k[2]; v++) {
						/* the block's outputs whose tap v is inside */
						int64_t off = v * d[2] - p[2], blo, bhi;
						const float *xv;

						knn_tap_cols(&(struct knn_geom){ .nsp = 1, .in = { in[2] },
										 .out = { b0 + nb },
										 .stride = { s[2] } },
							     off, &blo, &bhi);
						blo = blo > b0 ? blo - b0 : 0;
						bhi = bhi > b0 ? bhi - b0 : 0;
						xv = xr + b0 * s[2] + off;
						if (j->avg)
							for (int64_t b = blo; b < bhi; b++)
								acc[b] += xv[b * s[2]];
						else
							for (int64_t b = blo; b < bhi; b++)
								mx[b] = KNN_MAXIN(mx[b], xv[b * s[2]]);
					}
				}
			}
			for (int64_t b = 0; b < nb; b++) {
				int64_t nw, pw, cnt;

				if (!j->avg) {
					yr[b] = mx[b];
					continue;
				}
				knn_geom3_taps(t3, 2, b0 + b, &nw, &pw);
				cnt = j->include_pad ? pz * ph * pw : nz * nh * nw;
				yr[b] = (float)(cnt ? acc[b] / (double)cnt : NAN);
			}
		}
	}
}

int knn_pool_nd_f32(struct rt_kctx *k, const struct knn_geom *g, int avg, int include_pad,
		    const float *x, float *y)
{
	struct pnd_job j = { .in_size = g->in_size, .x = x, .y = y, .avg = avg,
			     .include_pad = include_pad };

	if (g->nsp < 1 || g->nsp > 3)
		return 0;
	knn_geom3(g, &j.t);
	rt_parallel_for(k, g->n * g->c * j.t.out[0] * j.t.out[1], 1, pnd_rows, &j);
	return 1;
}

/* The largest of n > 0 float32 values as global_run's loop takes it (a
 * value replaces the maximum so far when greater: a NaN only as the
 * first), sixteen lanes at a time: each lane from x[0] on by the same
 * rule, then the lanes in order.  Two zeros of other signs compare
 * equal, so which one a lane keeps depends on the order: a zero result
 * is redone by the loop. */
__attribute__((target("avx512f")))
static float gmax512(const float *x, int64_t n)
{
	__m512 acc = _mm512_set1_ps(x[0]);
	float m, lane[16];
	int64_t i = 1;

	for (; i + 16 <= n; i += 16) {
		__m512 v = _mm512_loadu_ps(x + i);

		acc = _mm512_mask_mov_ps(acc, _mm512_cmp_ps_mask(v, acc, _CMP_GT_OQ), v);
	}
	_mm512_storeu_ps(lane, acc);
	m = lane[0];
	for (int l = 1; l < 16; l++)
		m = lane[l] > m ? lane[l] : m;
	for (; i < n; i++)
		m = x[i] > m ? x[i] : m;
	return m;
}

float knn_gmax_f32(const float *x, int64_t n)
{
	float m;

	if (n >= 64 && rt_pgemm_ok() && (m = gmax512(x, n)) != 0)
		return m;
	m = x[0];
	for (int64_t i = 1; i < n; i++)
		m = x[i] > m ? x[i] : m;
	return m;
}
