/* k_conv_pg.c: float32 convolutions with constant weights over pgemm.h,
 * the weights packed once per session (kept in the node's cache, charged
 * to the session's memory).  Few output positions: each product computes
 * the output transposed, positions by channels (the positions are the
 * product's short side, the channels its packed side), then writes it
 * back channel by channel.  Many positions with a large im2col matrix
 * (stems): weights-side products (pgemm_w.c) whose panels are gathered
 * from the image, the output written in place. */
#include <stdlib.h>

#include "runtime/kernels/k_conv_int.h"
#include "runtime/kernels/pgemm.h"

/* Output positions up to which this path is taken for products that
 * write the output transposed (KNN_PG_MAX_POSITIONS): above it OpenBLAS's
 * copy of the weights is a small part of the product and writing the
 * output twice costs more than it saves (bench/README.md, issue 5).
 * Above it, convolutions whose input matrix (an im2col matrix, or a 1x1
 * one's input read in place) reaches KNN_PG_WIDE_MIN_COL bytes take the
 * weights-side products (knn_conv_pg_wide): the 7x7 stride-2 stems on 3
 * channels (7 MiB: the panels gathered from the image, the matrix would
 * go through memory twice), and 1x1 ones, read in place, 0.6-0.9x the
 * time of k_conv_direct.c's tiles of 32 to 256 channels on 4096 to
 * 16384 positions and 0.93-1.0x OpenBLAS's with weights of 1 MiB or
 * more.  Smaller ones stay with OpenBLAS, as fast there
 * (bench/README.md). */
/* A batch's images in one product up to this many positions in all */
#define PG_BATCH_POSITIONS 256

/* Floats of one group's packed W. */
static int64_t pg_group_len(const struct knn_geom *g, int kind)
{
	int64_t mg = g->m / g->group, kd = g->c / g->group * g->k_size;

	return kind == KNN_WC_PGEMM ? rt_pgemm_packed_len(kd, mg) : rt_pgemm_wpacked_len(mg, kd);
}

/* kind KNN_WC_PGEMM: W as the packed B of products positions by
 * channels; KNN_WC_PGEMMW: as the packed A of channels by positions. */
static void pg_pack_weights(const struct knn_geom *g, const float *w, int kind, float *dst)
{
	int64_t mg = g->m / g->group, kd = g->c / g->group * g->k_size;
	int64_t len = pg_group_len(g, kind);

	for (int64_t gi = 0; gi < g->group; gi++)
		if (kind == KNN_WC_PGEMM)   /* B(kk, j) = W[j][kk] */
			rt_pgemm_pack(w + gi * mg * kd, 1, kd, kd, mg, dst + gi * len);
		else
			rt_pgemm_wpack(w + gi * mg * kd, kd, mg, kd, dst + gi * len);
}

struct pg_tr {
	const float *src;         /* rows x ld (the first mg columns used) */
	float *dst;               /* mg x rows */
	int64_t rows, ld;
};

static void pg_transpose(void *ctx, int64_t lo, int64_t hi)
{
	const struct pg_tr *t = ctx;

	rt_pgemm_transpose(t->src, t->rows, t->ld, lo, hi, t->dst);
}

/* im2col of images [0, imgs) from img (an image's elements apart) side
 * by side: row kk of image i at col + kk * imgs * out_size + i * out_size */
struct pg_cols {
	const struct knn_geom *g;
	const float *img;
	float *col;
	int64_t imgs, img_len;
};

static void pg_im2col(void *ctx, int64_t lo, int64_t hi)
{
	const struct pg_cols *c = ctx;
	int64_t np = c->g->out_size;

	for (int64_t i = 0; i < c->imgs; i++)
		knn_im2col_f32(c->g, c->img + i * c->img_len, lo, hi, c->col + i * np,
			       c->imgs * np);
}

/* B's panels gathered from a 2-D image as im2col would lay them out
 * (row: channel, kernel row, kernel column; column: output position),
 * never storing the whole matrix: a panel's positions split by output
 * row, each tap's run of a row copied at the stride, padding as zeros.
 * What each row reads is worked out once per convolution (pg_taps). */
struct pg_tap {
	int64_t chan;             /* the channel's offset in the image */
	int64_t dy;               /* input row = output row * stride + dy */
	int64_t bx;               /* input column = output column * stride + bx */
	int64_t lo, hi;           /* output columns reading inside the row */
};

struct pg_img {
	const struct knn_geom *g;
	const float *x;           /* the group's first channel */
	const struct pg_tap *taps;
};

static struct pg_tap *pg_taps(const struct knn_geom *g, int64_t kd)
{
	struct pg_tap *t = malloc((size_t)kd * sizeof(*t));

	for (int64_t r = 0; t && r < kd; r++) {
		int64_t kk = r % g->k_size;

		t[r].chan = (r / g->k_size) * g->in_size;
		t[r].dy = (kk / g->kernel[1]) * g->dil[0] - g->pad[0];
		t[r].bx = (kk % g->kernel[1]) * g->dil[1] - g->pad[1];
		knn_tap_cols(g, t[r].bx, &t[r].lo, &t[r].hi);
	}
	return t;
}

static void pg_img_panel(const void *ctx, int64_t k0, int64_t kc, int64_t j0,
			 int64_t nr, float *dst)
{
	const struct pg_img *p = ctx;
	const struct knn_geom *g = p->g;
	int64_t iw = g->in[1], ow = g->out[1], sw = g->stride[1];
	int64_t oy[RT_PG_NR], ox[RT_PG_NR], len[RT_PG_NR], at[RT_PG_NR];
	int nseg = 0;

	for (int64_t j = 0; j < nr; nseg++) {
		int64_t pos = j0 + j;

		oy[nseg] = pos / ow;
		ox[nseg] = pos % ow;
		len[nseg] = ow - ox[nseg] < nr - j ? ow - ox[nseg] : nr - j;
		at[nseg] = j;
		j += len[nseg];
	}
	for (int64_t s = 0; s < kc; s++, dst += RT_PG_NR) {
		const struct pg_tap *tp = &p->taps[k0 + s];
		const float *xc = p->x + tp->chan;

		for (int t = 0; t < nseg; t++) {
			float *d = dst + at[t] - ox[t];   /* d[o]: output o of the row */
			int64_t iy = oy[t] * g->stride[0] + tp->dy;
			int64_t a = ox[t], e = ox[t] + len[t];
			/* [a, a2) and [e2, e) read padding, [a2, e2) the row */
			int64_t a2 = tp->lo > a ? tp->lo : a, e2 = tp->hi < e ? tp->hi : e;
			int64_t base = iy * iw + tp->bx, o = a;

			if (iy < 0 || iy >= g->in[0] || a2 > e)
				e2 = a2 = a;
			if (e2 < a2)
				e2 = a2;
			for (; o < a2; o++)
				d[o] = 0;
			if (sw == 1)
				for (; o < e2; o++)
					d[o] = xc[base + o];
			else if (sw == 2)
				for (; o < e2; o++)
					d[o] = xc[base + o * 2];
			else
				for (; o < e2; o++)
					d[o] = xc[base + o * sw];
			for (; o < e; o++)
				d[o] = 0;
		}
		for (int64_t j = nr; j < RT_PG_NR; j++)
			dst[j] = 0;
	}
}

int knn_conv_pg_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		    const float *w, const float *b, float *y)
{
	int64_t cg = g->c / g->group, mg = g->m / g->group, kd = cg * g->k_size;
	int64_t np = g->out_size;
	/* yt's row stride: a power-of-two stride would map a tile's rows (and
	 * the transpose's 16 source rows) to one L1 cache set */
	int64_t ldt = (mg + 15) / 16 * 16 + 16;
	const struct knn_wderived *pw;
	struct knn_wderived *tmp = NULL;
	struct pg_tap *taps = NULL;
	float *col = NULL, *yt = NULL;
	int wide = np > KNN_PG_MAX_POSITIONS, direct = knn_conv_pointwise(g), rc = 1;
	int kind = wide ? KNN_WC_PGEMMW : KNN_WC_PGEMM;
	int64_t glen = pg_group_len(g, kind), imgs = 1;

	if (!rt_pgemm_ok() || !rt_in_const(k, 1) ||
	    (g->group == g->c && g->c > 1 && g->m % g->c == 0) ||
	    g->n * g->m == 0 || np == 0 || kd == 0 ||
	    (wide && !knn_conv_pg_wide(g)))
		return 0;
	if (!(pw = knn_wderived_get(k, kind, g, w, glen * g->group, pg_pack_weights, &tmp)))
		return rt_oom(k);
	/* a batch's few positions in one product: each image's product read
	 * all of the packed weights again (capsnet's 9x9/2 convolution of 256
	 * to 256 channels onto 6x6, batch 4: 21 MB of weights a product) */
	if (!wide && !direct && g->group == 1 && g->n > 1 && g->n * np <= PG_BATCH_POSITIONS)
		imgs = g->n;
	/* a col matrix for the narrow products, and for wide ones other
	 * than 2-D (whose panels are gathered from the image) */
	if ((!direct && !(wide && g->nsp == 2) &&
	     !(col = malloc((size_t)(kd * np * imgs) * sizeof(float)))) ||
	    (!direct && wide && g->nsp == 2 && !(taps = pg_taps(g, kd))) ||
	    (!wide && !(yt = malloc((size_t)(ldt * np * imgs) * sizeof(float))))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (int64_t item = 0; item < g->n * g->group; item += imgs) {
		int64_t n = item / g->group, gi = item % g->group;
		const float *xg = x + (n * g->c + gi * cg) * g->in_size, *a = xg;
		struct pg_tr tr = { yt, y + (n * g->m + gi * mg) * np, np, ldt };

		if (col) {
			struct pg_cols pc = { g, xg, col, imgs, g->c * g->in_size };

			rt_parallel_for(k, kd, 1 + 65536 / (np * imgs + 1), pg_im2col, &pc);
			a = col;
		}
		if (imgs > 1) {
			if (rt_pgemm_run(k, np * imgs, mg, kd, a, np * imgs, pw->data,
					 b, yt, ldt) < 0) {
				rc = rt_oom(k);
				break;
			}
			for (int64_t i = 0; i < imgs; i++) {
				struct pg_tr ti = { yt + i * np * ldt, y + i * g->m * np, np, ldt };

				rt_parallel_for(k, mg, 64, pg_transpose, &ti);
			}
			continue;
		}
		if (wide) {
			struct rt_pgemm_rows rows = { a, np };
			struct pg_img img = { g, xg, taps };
			int img_panels = taps != NULL;

			if (rt_pgemm_wrun(k, mg, np, kd, pw->data + gi * glen,
					  img_panels ? pg_img_panel : rt_pgemm_rows_panel,
					  img_panels ? (const void *)&img : &rows,
					  b ? b + gi * mg : NULL, tr.dst, np) < 0) {
				rc = rt_oom(k);
				break;
			}
			continue;
		}
		if (rt_pgemm_run(k, np, mg, kd, a, np, pw->data + gi * glen,
				 b ? b + gi * mg : NULL, yt, ldt) < 0) {
			rc = rt_oom(k);
			break;
		}
		rt_parallel_for(k, mg, 64, pg_transpose, &tr);
	}
cleanup:
	knn_wderived_free(tmp);
	free(taps);
	free(col);
	free(yt);
	return rc;
}
