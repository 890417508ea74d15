/* k_conv_phase.c: a 2-D convolution's input copied padded and split by
 * the stride into phase planes, and each step's offset in that copy, for
 * the direct kernels that read every tap as one offset (k_conv_direct.c,
 * positions in the lanes; k_conv_cl.c, channels in the lanes).  See
 * k_conv_int.h, struct knn_phase. */
#include <immintrin.h>
#include <string.h>

#include "runtime/kernels/k_conv_int.h"
#include "runtime/kernels/pgemm.h"

void knn_phase_init(const struct knn_geom *g, struct knn_phase *l)
{
	int64_t hp = g->in[0] + g->pad[0] + g->pad[2], wp = g->in[1] + g->pad[1] + g->pad[3];

	memset(l, 0, sizeof(*l));
	l->g = g;
	l->sy = g->stride[0];
	l->sx = g->stride[1];
	l->ph = (hp + l->sy - 1) / l->sy;
	l->pw = (wp + l->sx - 1) / l->sx;
	l->plane = l->ph * l->pw;
	l->in_place = hp == g->in[0] && wp == g->in[1] && l->sy == 1 && l->sx == 1;
	for (int i = 0; i < KNN_PHASE_MAX_STRIDE * KNN_PHASE_MAX_STRIDE; i++)
		l->slot[i] = -1;
	for (int64_t ky = 0; ky < g->kernel[0]; ky++)
		for (int64_t kx = 0; kx < g->kernel[1]; kx++) {
			int ph = (int)((ky * g->dil[0]) % l->sy * l->sx + (kx * g->dil[1]) % l->sx);

			if (l->slot[ph] < 0)
				l->slot[ph] = l->phases++;
		}
	l->chan = l->in_place ? g->in_size : l->phases * l->plane;
}

int knn_phase_fits(const struct knn_geom *g)
{
	return g->stride[0] <= KNN_PHASE_MAX_STRIDE && g->stride[1] <= KNN_PHASE_MAX_STRIDE &&
	       /* offsets are 32-bit */
	       g->c * (g->in[0] + g->pad[0] + g->pad[2] + g->stride[0]) *
	       (g->in[1] + g->pad[1] + g->pad[3] + g->stride[1]) < INT32_MAX;
}

struct phase_copy {
	const struct knn_phase *l;
	const float *x;
	float *xp;
};

/* n input columns from s split by column parity: the even ones to de, the
 * odd ones to dodd (either NULL: not wanted), sixteen pairs a step by
 * permutes (a compiler leaves such stride-2 stores scalar). */
__attribute__((target("avx512f")))
static void deinterleave2(const float *s, int64_t n, float *de, float *dodd)
{
	const __m512i ev = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4,
					    2, 0);
	const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));

	for (int64_t i = 0; i < n; i += 32) {
		int64_t m = n - i < 32 ? n - i : 32, ne = (m + 1) / 2, no = m / 2;
		__mmask16 ml = m >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << m) - 1);
		__mmask16 mh = m >= 32 ? (__mmask16)0xffff :
			       m > 16 ? (__mmask16)((1u << (m - 16)) - 1) : 0;
		__m512 lo = _mm512_maskz_loadu_ps(ml, s + i), hi = _mm512_maskz_loadu_ps(mh, s + i + 16);

		if (de)
			_mm512_mask_storeu_ps(de + i / 2, (__mmask16)((1u << ne) - 1),
					      _mm512_permutex2var_ps(lo, ev, hi));
		if (dodd && no)
			_mm512_mask_storeu_ps(dodd + i / 2, (__mmask16)((1u << no) - 1),
					      _mm512_permutex2var_ps(lo, od, hi));
	}
}

/* Channels [lo, hi) into their phase planes, padding as zeros. */
static void phase_copy_chans(void *ctx, int64_t lo, int64_t hi)
{
	const struct phase_copy *cp = ctx;
	const struct knn_phase *l = cp->l;
	const struct knn_geom *g = l->g;
	int64_t ih = g->in[0], iw = g->in[1], pt = g->pad[0], pl = g->pad[1];

	for (int64_t c = lo; c < hi; c++) {
		float *d = cp->xp + c * l->chan;
		const float *s = cp->x + c * g->in_size;

		memset(d, 0, (size_t)l->chan * sizeof(float));
		for (int64_t r = 0; r < ih; r++) {
			int64_t pr = r + pt, py = pr % l->sy;

			if (l->sx == 2 && rt_cpu_avx512f()) {
				/* input column ix lands in phase (ix + pl) % 2 at
				 * column (ix + pl) / 2 */
				int se = l->slot[py * 2 + pl % 2], so = l->slot[py * 2 + (1 + pl) % 2];
				float *dr = d + pr / l->sy * l->pw;

				deinterleave2(s + r * iw, iw,
					      se < 0 ? NULL : dr + se * l->plane + pl / 2,
					      so < 0 ? NULL : dr + so * l->plane + (1 + pl) / 2);
				continue;
			}
			for (int64_t px = 0; px < l->sx; px++) {
				int sl = l->slot[py * l->sx + px];
				/* first input column of this phase: (ix + pl) % sx == px */
				int64_t ix0 = ((px - pl) % l->sx + l->sx) % l->sx;
				float *dr;

				if (sl < 0)
					continue;
				dr = d + sl * l->plane + pr / l->sy * l->pw;
				if (l->sx == 1) {
					memcpy(dr + pl, s + r * iw, (size_t)iw * sizeof(float));
					continue;
				}
				dr += (ix0 + pl) / l->sx;
				for (int64_t ix = ix0; ix < iw; ix += l->sx)
					*dr++ = s[r * iw + ix];
			}
		}
	}
}

/* Per step (channel, tap) its offset in the copy. */
void knn_phase_offsets(const struct knn_phase *l, int32_t *off)
{
	const struct knn_geom *g = l->g;

	/* the first channel's taps, then each channel's are those plus the
	 * channel's start (divisions per tap only: per step they cost a
	 * 960-channel 1x1 convolution tens of microseconds) */
	for (int64_t kk = 0; kk < g->k_size; kk++) {
		int64_t a = kk / g->kernel[1] * g->dil[0], b = kk % g->kernel[1] * g->dil[1];
		int64_t sl = l->slot[a % l->sy * l->sx + b % l->sx];

		off[kk] = (int32_t)(sl * l->plane + a / l->sy * l->pw + b / l->sx);
	}
	for (int64_t ci = 1; ci < g->c; ci++)
		for (int64_t kk = 0; kk < g->k_size; kk++)
			off[ci * g->k_size + kk] = (int32_t)(ci * l->chan) + off[kk];
}

const float *knn_phase_image(struct rt_kctx *k, const struct knn_phase *l, const float *x,
			     float *xp)
{
	struct phase_copy cp = { l, x, xp };

	if (!xp)
		return x;
	rt_parallel_for(k, l->g->c, 4, phase_copy_chans, &cp);
	return xp;
}
