/* k_conv_phase.c: a 2-D convolution's input copied padded and split by
 * the stride into phase planes, and each step's offset in that copy, for
 * the direct kernels that read every tap as one offset (k_conv_direct.c,
 * positions in the lanes; k_conv_cl.c, channels in the lanes).  See
 * k_conv_int.h, struct knn_phase. */
#include <string.h>

#include "validators/k_conv_int.h"

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
