/* k_conv_pg.c: float32 convolutions with constant weights and few output
 * positions over pgemm.h: the weights are packed once per session (kept
 * in the node's cache, charged to the session's memory) and each product
 * computes the output transposed, positions by channels (the positions
 * are the product's short side, the channels its packed side), then
 * writes it back channel by channel. */
#include <stdlib.h>

#include "validators/k_conv_int.h"
#include "validators/pgemm.h"

/* Output positions up to which this path is taken: above it OpenBLAS's
 * copy of the weights is a small part of the product and writing the
 * output twice costs more than it saves (bench/README.md, issue 5). */
#define PG_MAX_POSITIONS 64

struct pg_weights {
	struct knn_wcache h;      /* KNN_WC_PGEMM, the W data packed */
	int64_t group_len;        /* floats per group */
	float *pb;
};

static void pg_weights_free(void *p)
{
	struct pg_weights *c = p;

	if (c)
		free(c->pb);
	free(c);
}

static struct pg_weights *pg_pack_weights(const struct knn_geom *g, const float *w)
{
	int64_t mg = g->m / g->group, kd = g->c / g->group * g->k_size;
	struct pg_weights *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->h.kind = KNN_WC_PGEMM;
	c->h.w = w;
	c->group_len = rt_pgemm_packed_len(kd, mg);
	if (!(c->pb = aligned_alloc(64, (size_t)(c->group_len * g->group) * sizeof(float) + 64))) {
		free(c);
		return NULL;
	}
	/* B(kk, j) = W[j][kk]: the products' columns are output channels */
	for (int64_t gi = 0; gi < g->group; gi++)
		rt_pgemm_pack(w + gi * mg * kd, 1, kd, kd, mg, c->pb + gi * c->group_len);
	return c;
}

/* The node's packed weights, packing and caching them on first use; NULL
 * with *oom clear when the node's cache is taken (by another path). */
static const struct pg_weights *pg_weights_get(struct rt_kctx *k,
					       const struct knn_geom *g,
					       const float *w, int *oom)
{
	struct pg_weights *c = knn_wcache_get(k, KNN_WC_PGEMM, w);

	*oom = 0;
	if (c || rt_node_cache(k))
		return c;
	if (!(c = pg_pack_weights(g, w))) {
		*oom = 1;
		return NULL;
	}
	if (rt_node_cache_set(k, c, pg_weights_free,
			      c->group_len * g->group * (int64_t)sizeof(float)) == 0)
		return c;
	pg_weights_free(c);
	return NULL;
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

struct pg_cols {
	const struct knn_geom *g;
	const float *img;
	float *col;
};

static void pg_im2col(void *ctx, int64_t lo, int64_t hi)
{
	const struct pg_cols *c = ctx;

	knn_im2col_f32(c->g, c->img, lo, hi, c->col);
}

int knn_conv_pg_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		    const float *w, const float *b, float *y)
{
	int64_t cg = g->c / g->group, mg = g->m / g->group, kd = cg * g->k_size;
	int64_t np = g->out_size;
	/* yt's row stride: a power-of-two stride would map a tile's rows (and
	 * the transpose's 16 source rows) to one L1 cache set */
	int64_t ldt = (mg + 15) / 16 * 16 + 16;
	const struct pg_weights *pw;
	float *col = NULL, *yt = NULL;
	int direct = 1, oom, rc = 1;

	if (!rt_pgemm_ok() || !rt_in_const(k, 1) || np > PG_MAX_POSITIONS ||
	    (g->group == g->c && g->c > 1 && g->m % g->c == 0) ||
	    g->n * g->m == 0 || np == 0 || kd == 0)
		return 0;
	if (!(pw = pg_weights_get(k, g, w, &oom)))
		return oom ? rt_oom(k) : 0;
	for (int d = 0; d < g->nsp; d++)
		if (g->kernel[d] != 1 || g->stride[d] != 1 || g->pad[d] || g->pad[g->nsp + d])
			direct = 0;
	if ((!direct && !(col = malloc((size_t)(kd * np) * sizeof(float)))) ||
	    !(yt = malloc((size_t)(ldt * np) * sizeof(float)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (int64_t item = 0; item < g->n * g->group; item++) {
		int64_t n = item / g->group, gi = item % g->group;
		const float *xg = x + (n * g->c + gi * cg) * g->in_size, *a = xg;
		struct pg_tr tr = { yt, y + (n * g->m + gi * mg) * np, np, ldt };

		if (!direct) {
			struct pg_cols pc = { g, xg, col };

			rt_parallel_for(k, kd, 1 + 65536 / (np + 1), pg_im2col, &pc);
			a = col;
		}
		if (rt_pgemm_run(k, np, mg, kd, a, np, pw->pb + gi * pw->group_len,
				 b ? b + gi * mg : NULL, yt, ldt) < 0) {
			rc = rt_oom(k);
			break;
		}
		rt_parallel_for(k, mg, 64, pg_transpose, &tr);
	}
cleanup:
	free(col);
	free(yt);
	return rc;
}
