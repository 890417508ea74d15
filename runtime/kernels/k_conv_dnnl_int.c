/* k_conv_dnnl_int.c: integer convolutions on oneDNN's primitives (split
 * from k_conv_dnnl.c, whose primitives it shares: k_conv_dnnl.h).
 * ConvInteger's and QLinearConv's sums, u8/s8 x s8 -> s32, exact with
 * VNNI while they stay within 2^24 (dn_parts; past that, W in parts whose
 * sums are added: dn_split_run), taken from oneDNN's channels-last
 * buffer a tile of pixels at a time: corrected for W's zero
 * points (an all-ones channel), requantized into codes (plain or channels
 * last, layout_cl.c) or written as float32 (ConvInteger and its Cast,
 * with the Mul by the layer's scale and its epilogue: runtime/qdq.c);
 * QLinearConv's requantized by oneDNN itself where that is exact
 * (dn_rq_exact). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_conv_dnnl.h"
#include "runtime/kernels/pgemm.h"   /* the 16 x 16 transposes */

struct dn_corr {
	const int32_t *t, *d;     /* sums of m + 1 channels, the factors
				   * (d NULL: m channels, none) */
	int32_t *y;
	float *yf;                /* float32 of each sum instead, or NULL */
	int64_t m, plane;
	const struct knn_dnnl_q8 *qf;   /* yf's bias, scale and epilogue */
};

/* The int32 sum of channel ch plus qf's bias for it (the caller bounds
 * the two below 2^31 in magnitude: the sum is taken in int32). */
static int32_t dn_f32_bias(const struct knn_dnnl_q8 *qf, int64_t ch)
{
	return qf->bias ? qf->bias[ch] : 0;
}

/* float32 sums y (n, at element off) of channel ch times qf's scale for
 * it when given, then qf's epilogue steps when given. */
static void dn_f32_finish(float *y, int64_t n, int64_t ch, int64_t off,
			  const struct knn_dnnl_q8 *qf)
{
	if (qf->mult) {
		float s = qf->mult[qf->mult_pc ? ch : 0];

		for (int64_t i = 0; i < n; i++)
			y[i] = y[i] * s;
	}
	if (qf->epi)
		rt_epilogue_span(qf->epi, ch, off, y, n);
}

/* y[b, o] = t[b, o] + d[o] * t[b, m] for the planes (b, o) in [lo, hi)
 * (with yf: float32 of that plus the bias, finished). */
static void dn_corr_planes(void *ctx, int64_t lo, int64_t hi)
{
	const struct dn_corr *j = ctx;
	int64_t gm = j->m + (j->d != NULL);

	for (int64_t p = lo; p < hi; p++) {
		int64_t b = p / j->m, o = p % j->m;
		const int32_t *t = j->t + (b * gm + o) * j->plane;
		const int32_t *s = j->t + (b * gm + j->m) * j->plane;
		int32_t f = j->d ? j->d[o] : 0;

		if (j->yf) {
			float *y = j->yf + p * j->plane;
			int64_t add = dn_f32_bias(j->qf, o);

			if (j->d)
				for (int64_t i = 0; i < j->plane; i++)
					y[i] = (float)(int32_t)((int64_t)t[i] + (int64_t)f * s[i] +
								add);
			else
				for (int64_t i = 0; i < j->plane; i++)
					y[i] = (float)(int32_t)((int64_t)t[i] + add);
			dn_f32_finish(y, j->plane, o, p * j->plane, j->qf);
		} else {
			int32_t *y = j->y + p * j->plane;

			for (int64_t i = 0; i < j->plane; i++)
				y[i] = (int32_t)((int64_t)t[i] + (int64_t)f * s[i]);
		}
	}
}

/* ConvInteger's sums corrected for W's zero points straight from
 * oneDNN's buffer (channels last, gm = m + 1 channels, the last the
 * window sums): y[b, o, p] = t[b, p, o] + d[o] * t[b, p, m], a tile of
 * pixels at a time (the tile's sums stay in cache while each channel's
 * row is written), instead of reordering all sums into a plain buffer
 * and correcting them in a second pass. */
#define DN_TILE 64

struct dn_cfin {
	struct rt_kctx *k;
	const int32_t *t, *d;     /* d NULL: no correction (gm == m) */
	int32_t *y;
	float *yf;                /* float32 of each sum instead, or NULL */
	int64_t n, m, gm, plane;
	const struct knn_dnnl_q8 *qf;   /* as struct dn_corr's */
	int avx512;               /* 16 x 16 transposes (rt_pgemm_tr16_k512) */
};

#define DN_CB 64   /* channels of a block of dn_cfin_tiles */

static void store_block(const struct dn_cfin *j, const int32_t *acc, int64_t b, int64_t p0,
			int64_t len, int64_t c0, int64_t mc);

/* A whole tile's channels [c0, c0 + mc) (mc a multiple of 16) from the
 * pixel rows at px into acc's channel rows, corrected, and stored. */
static void tr_block(const struct dn_cfin *j, const int32_t *px, int64_t c0, int64_t mc,
		     int32_t *acc)
{
	for (int64_t o = 0; o < mc; o += 16)
		for (int64_t i = 0; i < DN_TILE; i += 16)
			rt_pgemm_tr16_k512((const float *)(const void *)(px + i * j->gm + c0 + o),
					   j->gm, (float *)(void *)(acc + o * DN_TILE + i), DN_TILE);
	if (j->d) {
		uint32_t ones[DN_TILE];

		for (int64_t i = 0; i < DN_TILE; i++)
			ones[i] = (uint32_t)px[i * j->gm + j->m];
		/* wrapping in uint32: the true sum is in range */
		for (int64_t o = 0; o < mc; o++) {
			uint32_t f = (uint32_t)j->d[c0 + o];
			int32_t *r = acc + o * DN_TILE;

			for (int64_t i = 0; i < DN_TILE; i++)
				r[i] = (int32_t)((uint32_t)r[i] + f * ones[i]);
		}
	}
}

static void dn_cfin_tiles(void *ctx, int64_t lo, int64_t hi)
{
	const struct dn_cfin *j = ctx;
	int64_t tiles = (j->plane + DN_TILE - 1) / DN_TILE;
	int32_t acc[DN_CB * DN_TILE];

	for (int64_t t = lo; t < hi; t++) {
		int64_t b = t / tiles, p0 = t % tiles * DN_TILE;
		int64_t len = j->plane - p0 < DN_TILE ? j->plane - p0 : DN_TILE;
		const int32_t *px = j->t + (b * j->plane + p0) * j->gm;

		for (int64_t c0 = 0; c0 < j->m; c0 += DN_CB) {
			int64_t mc = j->m - c0 < DN_CB ? j->m - c0 : DN_CB;

			/* the block's sums corrected, pixel rows read in
			 * order into channel rows (in L1): whole 16 x 16
			 * blocks by AVX-512 transposes (moves of the 32-bit
			 * patterns), then the correction by channel rows */
			if (j->avx512 && mc % 16 == 0 && len == DN_TILE) {
				tr_block(j, px, c0, mc, acc);
				store_block(j, acc, b, p0, len, c0, mc);
				continue;
			}
			for (int64_t i = 0; i < len; i++) {
				const int32_t *r = px + i * j->gm + c0;

				/* wrapping in uint32: the true sum is in range */
				if (j->d) {
					uint32_t ones = (uint32_t)px[i * j->gm + j->m];

					for (int64_t o = 0; o < mc; o++)
						acc[o * DN_TILE + i] = (int32_t)((uint32_t)r[o] +
							(uint32_t)j->d[c0 + o] * ones);
				} else {
					for (int64_t o = 0; o < mc; o++)
						acc[o * DN_TILE + i] = r[o];
				}
			}
			store_block(j, acc, b, p0, len, c0, mc);
		}
	}
}

/* The block's corrected sums (acc: mc channel rows of DN_TILE) into y
 * or, as float32 finished, into yf. */
static void store_block(const struct dn_cfin *j, const int32_t *acc, int64_t b, int64_t p0,
			int64_t len, int64_t c0, int64_t mc)
{
	for (int64_t o = 0; o < mc; o++) {
		int64_t at = (b * j->m + c0 + o) * j->plane + p0;

		if (j->yf) {
			float *yf = j->yf + at;
			uint32_t add = (uint32_t)dn_f32_bias(j->qf, c0 + o);

			for (int64_t i = 0; i < len; i++)
				yf[i] = (float)(int32_t)((uint32_t)acc[o * DN_TILE + i] + add);
			dn_f32_finish(yf, len, c0 + o, at, j->qf);
		} else
			memcpy(j->y + at, acc + o * DN_TILE, (size_t)len * sizeof(*acc));
	}
}

static void dn_cfin_take(void *ctx, const int32_t *nhwc)
{
	struct dn_cfin *j = ctx;

	j->t = nhwc;
	rt_parallel_for(j->k, j->n * ((j->plane + DN_TILE - 1) / DN_TILE), 1, dn_cfin_tiles, j);
}

/* Requantizing the sums of n images of gm channels (the last one the
 * correction's window sums when corr) straight from oneDNN's buffer
 * (channels last) or from NCHW sums, a tile of pixels at a time. */
struct dn_fin {
	struct rt_kctx *k;
	const struct knn_dnnl_q8 *q;
	const int32_t *d;         /* the correction's factors, or NULL */
	int64_t n, m, gm, plane;
	int last;                 /* t is channels last */
	const int32_t *t;
	int ycl;                  /* q->y written channels last (with last) */
};

#define DN_FEW 32

/* Channels last: the tile's pixels requantized channels last into
 * codes, a block of up to KNN_PX_MAX channels at a time, then moved to
 * their planes.  (A block after the first reads the correction's sums
 * from a copy of each pixel's block followed by them.) */
static void dn_fin_last(const struct dn_fin *j, const int32_t *img, int64_t b, int64_t p0,
			int64_t len)
{
	uint8_t codes[DN_TILE * KNN_PX_MAX], *y = (uint8_t *)j->q->y + b * j->m * j->plane + p0;
	int32_t rows[DN_TILE * (KNN_PX_MAX + 1)];

	for (int64_t c0 = 0; c0 < j->m; c0 += KNN_PX_MAX) {
		int64_t mc = j->m - c0 < KNN_PX_MAX ? j->m - c0 : KNN_PX_MAX;
		const int32_t *src = img + p0 * j->gm + c0, *d = j->d ? j->d + c0 : NULL;
		int64_t stride = j->gm;

		if (j->d && c0 + mc < j->m) {
			for (int64_t i = 0; i < len; i++) {
				memcpy(rows + i * (mc + 1), src + i * j->gm, (size_t)mc * sizeof(*rows));
				rows[i * (mc + 1) + mc] = img[(p0 + i) * j->gm + j->m];
			}
			src = rows;
			stride = mc + 1;
		}
		if (j->ycl && mc == j->m) {   /* the pixels' codes are the output's */
			knn_requant_px(src, len, stride, mc, d, j->q->bias, j->q->mult, j->q->zp,
				       j->q->dtype, (uint8_t *)j->q->y + (b * j->plane + p0) * j->m);
			continue;
		}
		knn_requant_px(src, len, stride, mc, d, j->q->bias ? j->q->bias + c0 : NULL,
			       j->q->mult + c0, j->q->zp, j->q->dtype, codes);
		if (j->ycl) {
			uint8_t *yc = (uint8_t *)j->q->y + (b * j->plane + p0) * j->m + c0;

			for (int64_t i = 0; i < len; i++)
				memcpy(yc + i * j->m, codes + i * mc, (size_t)mc);
			continue;
		}
		for (int64_t o = 0; o < mc; o++)
			for (int64_t i = 0; i < len; i++)
				y[(c0 + o) * j->plane + i] = codes[i * mc + o];
	}
}

static void dn_fin_tiles(void *ctx, int64_t lo, int64_t hi)
{
	const struct dn_fin *j = ctx;
	int64_t tiles = (j->plane + DN_TILE - 1) / DN_TILE;
	int32_t acc[DN_TILE];

	for (int64_t t = lo; t < hi; t++) {
		int64_t b = t / tiles, p0 = t % tiles * DN_TILE;
		int64_t len = j->plane - p0 < DN_TILE ? j->plane - p0 : DN_TILE;
		const int32_t *img = j->t + b * j->gm * j->plane;

		/* the channel's sums (stride cs), the correction's (stride cs) */
		int64_t cs = j->last ? j->gm : 1, ps = j->last ? 1 : j->plane;
		const int32_t *ones = img + (j->last ? p0 * j->gm : p0) + j->m * ps;

		/* a channel's sums gathered, then requantized in a vector pass;
		 * with many channels, by pixel rows instead (measured) */
		if (j->last && (j->m > DN_FEW || j->ycl)) {
			dn_fin_last(j, img, b, p0, len);
			continue;
		}
		for (int64_t o = 0; o < j->m; o++) {
			const int32_t *sums = img + (j->last ? p0 * j->gm : p0) + o * ps;
			const int32_t *src = sums;

			if (j->d) {
				int32_t f = j->d[o];

				for (int64_t i = 0; i < len; i++)
					acc[i] = (int32_t)((int64_t)sums[i * cs] +
							   (int64_t)f * ones[i * cs]);
				src = acc;
			} else if (cs != 1) {
				for (int64_t i = 0; i < len; i++)
					acc[i] = sums[i * cs];
				src = acc;
			}
			knn_requant_i32(src, len, j->q->bias ? j->q->bias[o] : 0, j->q->mult[o],
					j->q->zp, j->q->dtype,
					(char *)j->q->y + (b * j->m + o) * j->plane + p0);
		}
	}
}

static void dn_fin_take(void *ctx, const int32_t *nhwc)
{
	struct dn_fin *j = ctx;
	int64_t tiles = (j->plane + DN_TILE - 1) / DN_TILE;

	j->t = nhwc;
	j->last = 1;
	rt_parallel_for(j->k, j->n * tiles, 1, dn_fin_tiles, j);
}

/* oneDNN's integer convolutions are exact only while every sum stays
 * within 2^24 (KNN_DNNL_F32_EXACT; tests/ort/qconv_props.py: its integer
 * kernels pass the sums through float32).  255 * sum_k |w8[o, k]| bounds
 * channel o's sums (|x - xz| and the raw u8 input, or the s8 input plus
 * 128, are at most 255); the correction's all-ones row, 255 * kl.  A
 * window of real weights passes that from a few thousand taps on (256
 * channels by 3x3); W is then split into parts (knn_dnnl_parts,
 * dn_split_w).  The parts that needs, 1 when none, or 0: not exact so
 * (knn_dnnl_parts's 0, or grouped). */
static int dn_parts(const void *w, int w_dtype, int64_t m, int64_t kl, int corr,
		    int64_t group)
{
	int64_t most = 0;
	int parts;

	for (int64_t o = 0; o < m; o++) {
		int64_t s = 0;

		for (int64_t i = o * kl; i < (o + 1) * kl; i++) {
			int v = w_dtype == IR_DTYPE_UINT8 ? ((const uint8_t *)w)[i] - 128 :
				((const int8_t *)w)[i];

			s += v < 0 ? -v : v;
		}
		most = s > most ? s : most;
	}
	parts = knn_dnnl_parts(most, kl, corr);
	return parts > 1 && group != 1 ? 0 : parts;
}

/* The n s8 values at w8 split into parts stacked after them (part p at
 * w8 + p * n, knn_dnnl_part; the first part written last, in place). */
static void dn_split_w(int8_t *w8, int64_t n, int parts)
{
	for (int64_t i = 0; i < n; i++) {
		int v = w8[i];

		for (int p = parts - 1; p >= 0; p--)
			w8[p * n + i] = knn_dnnl_part(v, parts, p);
	}
}

/* The node's integer primitive for gg and types t (requantizing as rq
 * says when given), from the node's cache or made (*tmp: made and not
 * kept, for the caller to free), with W as s8 (split into parts stacked
 * along the output channels, dn_split_w, when parts > 1; and the all-ones
 * row when corr) in c->w8: 0, 1 when oneDNN cannot make it, or
 * IR_ENOMEM. */
static int dn_int_get(struct rt_kctx *k, const struct knn_geom *gg, const struct dn_types *t,
		      const struct dn_rq *rq, int has_bias, const void *w, int w_dtype,
		      int64_t nw, int corr, int parts, int w_const, unsigned cl,
		      struct dn_conv **cp, struct dn_conv **tmp)
{
	int64_t kl = gg->c / gg->group * gg->k_size;
	struct dn_conv *c = rt_node_cache(k);
	struct dn_post none;
	int8_t *w8;

	*tmp = NULL;
	memset(&none, 0, sizeof(none));
	if (c && (c->h.kind != KNN_WC_DNNL || c->t.src != t->src || c->t.dst != t->dst ||
		  !knn_dn_geom_same(&c->g, gg) || c->has_bias != has_bias ||
		  c->src_cl != ((cl & KNN_CL_SRC) != 0) || c->dst_cl != ((cl & KNN_CL_DST) != 0) ||
		  (c->rq_mult != NULL) != (rq != NULL) ||
		  (rq && (c->rq_zp != rq->zp ||
			  memcmp(c->rq_mult, rq->mult, (size_t)gg->m * sizeof(float))))))
		c = NULL;
	knn_dnnl_threads(rt_threads(k));
	if (!c) {
		if (!(*tmp = calloc(1, sizeof(**tmp))))
			return IR_ENOMEM;
		(*tmp)->h.kind = KNN_WC_DNNL;
		if (knn_dn_conv_make(*tmp, gg, t, has_bias, &none, cl, rq))
			return 1;
		c = *tmp;
		if (w_const && !rt_node_cache(k) &&
		    rt_node_cache_set(k, c, knn_dn_conv_free, knn_dn_conv_bytes(c)) == 0)
			*tmp = NULL;
	}
	*cp = c;
	/* W as s8 (and the all-ones row), made again only when W is not the
	 * constant it was made from */
	if (!w_const || c->w_src != w || !c->w8) {
		if (!(w8 = malloc((size_t)(gg->m * kl + 1))))
			return IR_ENOMEM;
		knn_dnnl_to_s8(w_dtype, w, nw, w8);
		if (parts > 1)
			dn_split_w(w8, nw, parts);
		if (corr)
			memset(w8 + parts * nw, 1, (size_t)kl);
		free(c->w8);
		c->w8 = w8;
		c->w_src = w;
		c->parts = parts;
		c->wei_ready = 0;
	}
	return 0;
}

/* Whether oneDNN's requantization (dn_rq) equals QLinearConv's,
 * saturate(rne(float32(acc + bias) * mult) + zp), for sums within 2^24
 * (dn_parts).  oneDNN 2.6 computes saturate(cvt_rne([round](
 * (float32(acc) + float32(bias)) * mult) [+ zp])) (tried on random
 * shapes, ties and saturation: tests/ort/qconv_props.py), the clamp to
 * the dtype's integral bounds before or after the rounding alike: the two
 * agree when float32(acc) + float32(bias) == float32(acc + bias), so when
 * |bias| is at most 2^24 too (both exact in float32, their sum then
 * rounded once).  (oneDNN's own destination zero point adds zp in float32
 * before rounding: a tie lands on the other side for odd zp, and a value
 * just below a midpoint rounds up to it, so it is not used.) */
static int dn_rq_exact(int64_t m, const int32_t *bias)
{
	for (int64_t o = 0; bias && o < m; o++)
		if (bias[o] > KNN_DNNL_F32_EXACT || bias[o] < -KNN_DNNL_F32_EXACT)
			return 0;
	return 1;
}

/* QLinearConv's output requantized by oneDNN itself (dn_rq): 1 done, 0
 * not taken (the caller requantizes the sums), or IR_ENOMEM. */
static int dn_rq_run(struct rt_kctx *k, const struct knn_geom *g, const void *x,
		     const struct dn_types *ts, int32_t xz, const void *w, int w_dtype,
		     int w_const, const struct knn_dnnl_q8 *q)
{
	struct dn_types t = *ts;
	struct dn_rq rq = { q->mult, (int32_t)q->zp };
	struct dn_conv *c = NULL, *tmp = NULL;
	int64_t kl = g->c / g->group * g->k_size;
	int rc;

	c = rt_node_cache(k);
	if (getenv("OPMIG_NO_DNNL_RQ") || !dn_rq_exact(g->m, q->bias) ||
	    (c && c->h.kind == KNN_WC_DNNL && c->no_rq && knn_dn_geom_same(&c->g, g)))
		return 0;
	t.dst = q->dtype == IR_DTYPE_INT8 ? dnnl_s8 : dnnl_u8;
	rc = dn_int_get(k, g, &t, &rq, q->bias != NULL, w, w_dtype, g->m * kl, 0, 1, w_const, q->cl,
			&c, &tmp);
	if (rc == 0) {
		c->zp_val = xz;
		rc = knn_dn_conv_run(c, x, c->w8, (const float *)(const void *)q->bias, q->y,
				 w_const && !tmp, NULL) ? 0 : 1;
		if (rc == 1 && (q->cl & KNN_CL_DST))
			rt_cl_set(k->out[0], 1);
	} else if (rc == 1) {
		rc = 0;
	}
	knn_dn_conv_free(tmp);
	return rc;
}

/* The sums of W's parts (parts of m channels, then the correction's
 * window sums when d) added into s: s[b, o] = sum_p t[b, p * m + o] +
 * d[o] * t[b, parts * m], for the planes (b, o) in [lo, hi). */
struct dn_psum {
	const int32_t *t, *d;
	int32_t *s;
	int64_t m, gm, plane;
	int parts;
};

static void dn_psum_planes(void *ctx, int64_t lo, int64_t hi)
{
	const struct dn_psum *j = ctx;

	for (int64_t q = lo; q < hi; q++) {
		int64_t b = q / j->m, o = q % j->m;
		const int32_t *t = j->t + (b * j->gm + o) * j->plane;
		const int32_t *ones = j->t + (b * j->gm + j->parts * j->m) * j->plane;
		int32_t *s = j->s + q * j->plane;
		int64_t f = j->d ? j->d[o] : 0;

		for (int64_t i = 0; i < j->plane; i++) {
			int64_t v = f ? f * ones[i] : 0;

			for (int p = 0; p < j->parts; p++)
				v += t[p * j->m * j->plane + i];
			s[i] = (int32_t)v;   /* the true sum: within 2^31 */
		}
	}
}

/* knn_conv_dnnl_s32 with W split into parts (dn_parts): one primitive
 * of parts * m (+ 1) output channels, its plain sums added, then as the
 * caller wants them (y: int32; qf: float32 times its scale, with its
 * epilogue; q: requantized codes, plain).  1 done, 0 not taken, or an
 * error. */
static int dn_split_run(struct rt_kctx *k, const struct knn_geom *g, const struct dn_types *t,
			const void *x, int32_t xz, const void *w, int w_dtype, int w_const,
			const int32_t *d, int parts, unsigned cl, int32_t *y,
			const struct knn_dnnl_q8 *qf, const struct knn_dnnl_q8 *q)
{
	struct knn_geom gg = *g;
	struct dn_conv *c = NULL, *tmp = NULL;
	int64_t kl = g->c / g->group * g->k_size, plane = g->out_size;
	int32_t *out = NULL, *s = y;
	int rc;

	gg.m = parts * g->m + (d != NULL);
	if ((rc = dn_int_get(k, &gg, t, NULL, 0, w, w_dtype, g->m * kl, d != NULL, parts, w_const,
			     cl & KNN_CL_SRC, &c, &tmp)) != 0) {
		rc = rc == 1 ? 0 : rc;
		goto done;
	}
	c->zp_val = xz;
	rc = IR_ENOMEM;
	if (!(out = rt_big_alloc((size_t)(g->n * gg.m * plane) * sizeof(*out) + 1)) ||
	    (!s && !(s = rt_big_alloc((size_t)(g->n * g->m * plane) * sizeof(*s) + 1))))
		goto done;
	rc = knn_dn_conv_run(c, x, c->w8, NULL, out, w_const && !tmp, NULL);
	if (rc) {
		rc = rc == IR_ENOMEM ? rc : 0;
		goto done;
	}
	{
		struct dn_psum j = { out, d, s, g->m, gg.m, plane, parts };

		rt_parallel_for(k, g->n * g->m, 1, dn_psum_planes, &j);
	}
	if (qf) {
		struct dn_corr j = { s, NULL, NULL, qf->y, g->m, plane, qf };

		rt_parallel_for(k, g->n * g->m, 1, dn_corr_planes, &j);
	} else if (q) {
		struct dn_fin j = { k, q, NULL, g->n, g->m, g->m, plane, 0, s, 0 };

		rt_parallel_for(k, g->n * ((plane + DN_TILE - 1) / DN_TILE), 1, dn_fin_tiles, &j);
	}
	rc = 1;
done:
	rt_big_free(out);
	if (s != y)
		rt_big_free(s);
	knn_dn_conv_free(tmp);
	return rc;
}

int knn_conv_dnnl_s32(struct rt_kctx *k, const struct knn_geom *g, const void *x, int x_dtype,
		      int32_t xz, const void *w, int w_dtype, const double *wz, int64_t nwz,
		      int w_const, int32_t *y, const struct knn_dnnl_q8 *q)
{
	struct dn_types t = { x_dtype == IR_DTYPE_UINT8 ? dnnl_u8 : dnnl_s8, dnnl_s8, dnnl_s32, 1 };
	int64_t kl = g->c / g->group * g->k_size;
	struct dn_conv *c = NULL, *tmp = NULL;
	const struct dn_conv *kept;
	struct knn_geom gg = *g;
	/* the sums as float32 (qf) or requantized (q) */
	const struct knn_dnnl_q8 *qf = q && q->dtype == IR_DTYPE_FLOAT ? q : NULL;
	float *yf = qf ? q->y : NULL;
	unsigned cl = q ? q->cl : 0;
	int32_t *d, *out = y;
	int rc, corr, parts;

	if (yf)
		q = NULL;
	/* the sums stay below 2^31: 255 x 255 x (the window's length) */
	if (g->nsp < 1 || g->nsp > 3 || g->n * g->c == 0 || g->out_size == 0 ||
	    kl > 32000 || !knn_dnnl_int_ok())
		return 0;
	if (!(d = malloc((size_t)g->m * sizeof(*d) + 1)))
		return rt_oom(k);
	/* zero points of W that are not 128 (uint8) or 0 (int8): one more
	 * output channel of all-ones weights gives the window sums they
	 * multiply (ungrouped only) */
	corr = knn_dnnl_zp_shift(w_dtype, wz, nwz, g->m, d);
	if (corr && g->group != 1) {
		rc = 0;
		goto done;
	}
	/* a constant W's parts are counted once (a pass over all of W): the
	 * kept primitive's, made from it (dn_int_get) */
	kept = rt_node_cache(k);
	parts = w_const && kept && kept->h.kind == KNN_WC_DNNL && kept->w_src == w ? kept->parts :
		dn_parts(w, w_dtype, g->m, kl, corr, g->group);
	if (!parts) {
		rc = 0;
		goto done;
	}
	if (parts > 1) {
		rc = dn_split_run(k, g, &t, x, xz, w, w_dtype, w_const, corr ? d : NULL, parts, cl,
				  y, qf, q);
		goto done;
	}
	/* QLinearConv without the correction: oneDNN requantizes, where
	 * that is exact */
	if (q && !corr && (rc = dn_rq_run(k, g, x, &t, xz, w, w_dtype, w_const, q)) != 0)
		goto done;
	gg.m += corr;
	/* the sums' primitive reads x as it is stored; its output is plain
	 * or taken from oneDNN's channels-last buffer (dn_take) */
	if ((rc = dn_int_get(k, &gg, &t, NULL, 0, w, w_dtype, g->m * kl, corr, 1, w_const,
			     cl & KNN_CL_SRC, &c, &tmp)) != 0) {
		rc = rc == 1 ? 0 : rc;
		goto done;
	}
	/* (not tried again on this node's next runs) */
	c->no_rq = q && !corr;
	c->zp_val = xz;
	if (((corr && !q) || yf) && c->dst_nhwc) {
		struct dn_cfin j = { k, NULL, corr ? d : NULL, y, yf, g->n, g->m, gg.m,
				     g->out_size, qf,
				     rt_cpu_avx512f() };
		struct dn_take take = { dn_cfin_take, &j };

		rc = knn_dn_conv_run(c, x, c->w8, NULL, y, w_const && !tmp, &take) ? 0 : 1;
		goto done;
	}
	rc = IR_ENOMEM;
	if ((corr || q || yf) &&
	    !(out = rt_big_alloc((size_t)(g->n * gg.m * g->out_size) * sizeof(*out) + 1)))
		goto done;
	rc = 0;
	if (q) {
		struct dn_fin j = { k, q, corr ? d : NULL, g->n, g->m, gg.m, g->out_size, 0, out,
				    (cl & KNN_CL_DST) != 0 };
		struct dn_take take = { dn_fin_take, &j };
		int64_t tiles = (g->out_size + DN_TILE - 1) / DN_TILE;

		/* channels last: requantized from oneDNN's buffer (into
		 * channels-last codes where the readers take them); else from
		 * the NCHW sums */
		if (knn_dn_conv_run(c, x, c->w8, NULL, out, w_const && !tmp, &take))
			goto done;
		if (!j.last)
			j.ycl = 0;
		if (!j.last)
			rt_parallel_for(k, g->n * tiles, 1, dn_fin_tiles, &j);
		if (j.ycl)
			rt_cl_set(k->out[0], 1);
	} else if (knn_dn_conv_run(c, x, c->w8, NULL, out, w_const && !tmp, NULL)) {
		goto done;
	}
	if ((corr && !q) || yf) {
		struct dn_corr j = { out, corr ? d : NULL, y, yf, g->m, g->out_size, qf };

		rt_parallel_for(k, g->n * g->m, 1, dn_corr_planes, &j);
	}
	rc = 1;
done:
	if (rc == 1)
		knn_dnnl_int_count();
	if (out != y)
		rt_big_free(out);
	knn_dn_conv_free(tmp);
	free(d);
	return rc == IR_ENOMEM ? rt_oom(k) : rc;
}
