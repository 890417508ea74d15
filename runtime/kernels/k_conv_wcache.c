/* k_conv_wcache.c: weights derived once for a float32 convolution's fast
 * path (packed for a product) or a MatMul's
 * packed B, kept in the node's cache for the session when they come from
 * a model constant (input 1: W, B; k_conv_int.h). */
#include <stdlib.h>

#include "runtime/kernels/k_conv_int.h"

void knn_wderived_free(void *p)
{
	struct knn_wderived *c = p;

	if (c)
		free(c->data);
	free(c);
}

const struct knn_wderived *knn_wderived_make(struct rt_kctx *k, int kind, const float *w,
					     int64_t len, knn_wmake_fn fill, const void *ctx,
					     const struct rt_share_key *key,
					     struct knn_wderived **tmp)
{
	struct knn_wderived *c = knn_wcache_get(k, kind, w);

	*tmp = NULL;
	if (c)
		return c;
	if (!(c = calloc(1, sizeof(*c))))
		return NULL;
	c->h.kind = kind;
	c->h.w = w;
	c->len = len;
	/* aligned_alloc wants a multiple of the alignment */
	if (!(c->data = aligned_alloc(64, ((size_t)len * sizeof(float) + 127) / 64 * 64))) {
		free(c);
		return NULL;
	}
	fill(ctx, w, c->data);
	if (rt_in_const(k, 1) && !rt_node_cache(k) &&
	    (key ? rt_node_cache_set_shared(k, c, knn_wderived_free, len * (int64_t)sizeof(float), key) :
	     rt_node_cache_set(k, c, knn_wderived_free, len * (int64_t)sizeof(float))) == 0)
		return c;
	*tmp = c;
	return c;
}

/* A convolution's fill function and its arguments, as knn_wderived_make
 * calls them. */
struct wc_conv {
	const struct knn_geom *g;
	knn_wfill_fn fill;
	int kind;
};

static void wc_conv_fill(const void *ctx, const float *w, float *dst)
{
	const struct wc_conv *c = ctx;

	c->fill(c->g, w, c->kind, dst);
}

const struct knn_wderived *knn_wderived_get(struct rt_kctx *k, int kind,
					    const struct knn_geom *g, const float *w,
					    int64_t len, knn_wfill_fn fill,
					    struct knn_wderived **tmp)
{
	struct wc_conv c = { g, fill, kind };

	return knn_wderived_make(k, kind, w, len, wc_conv_fill, &c, NULL, tmp);
}
