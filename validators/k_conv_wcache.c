/* k_conv_wcache.c: weights derived once for a float32 convolution's fast
 * path (packed for a product, or Winograd-transformed), kept in the node's
 * cache for the session when W is a model constant (k_conv_int.h). */
#include <stdlib.h>

#include "validators/k_conv_int.h"

void knn_wderived_free(void *p)
{
	struct knn_wderived *c = p;

	if (c)
		free(c->data);
	free(c);
}

const struct knn_wderived *knn_wderived_get(struct rt_kctx *k, int kind,
					    const struct knn_geom *g, const float *w,
					    int64_t len, knn_wfill_fn fill,
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
	fill(g, w, kind, c->data);
	if (rt_in_const(k, 1) && !rt_node_cache(k) &&
	    rt_node_cache_set(k, c, knn_wderived_free, len * (int64_t)sizeof(float)) == 0)
		return c;
	*tmp = c;
	return c;
}
