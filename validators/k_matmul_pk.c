/* k_matmul_pk.c: float32 MatMul against a constant B packed once.
 *
 * sgemm (gemm.h) copies both operands into its packed layouts on every
 * call; when B is a layer's weights (a transformer's 768 x 3072
 * projection: 9.4 MB) that copy is redone every run, and it is a tenth
 * of the product's time.  Here B is packed once into the panels of
 * pgemm.h, kept in the node's cache for the session (k_conv_wcache.c),
 * and every run multiplies A, row-major as it lies, against them on the
 * AVX-512 micro-kernel.  The copy is made on the node's second run
 * (rt_node_cache_worth): its fresh memory costs more than one product,
 * and `opmig validate` runs each model once. */
#include "validators/k_conv_int.h"
#include "validators/pgemm.h"

/* Products smaller than this (multiply-adds) stay with sgemm: the kept
 * copy of B is not worth its memory there. */
#define MM_PK_MIN_WORK (1 << 20)

struct mm_pk {
	int64_t kd, n;
};

static void mm_pk_fill(const void *ctx, const float *b, float *dst)
{
	const struct mm_pk *d = ctx;

	rt_pgemm_pack(b, d->n, 1, d->kd, d->n, dst);
}

int knn_mm_packed_f32(struct rt_kctx *k, const struct knn_mm *p, const float *a,
		      const float *b, float *y)
{
	const struct knn_wderived *pb;
	struct knn_wderived *tmp = NULL;
	struct mm_pk d = { p->kd, p->n };
	int64_t rows = p->n_batch * p->m;
	int rc;

	if (!rt_pgemm_ok() || !rt_in_const(k, 1) || p->n < 16 || p->kd < 1 ||
	    (double)rows * (double)p->n * (double)p->kd < MM_PK_MIN_WORK ||
	    !(knn_wcache_get(k, KNN_WC_MATMUL, b) || rt_node_cache_worth(k)))
		return 0;
	/* one B for every batch, and A's batches one after another: a
	 * single product of n_batch * m rows */
	for (int64_t i = 0; i < p->n_batch; i++)
		if (p->b_off[i] != 0 || p->a_off[i] != i * p->m * p->kd)
			return 0;
	if (!(pb = knn_wderived_make(k, KNN_WC_MATMUL, b, rt_pgemm_packed_len(p->kd, p->n),
				     mm_pk_fill, &d, &tmp)))
		return rt_oom(k);
	rc = rt_pgemm_run_rows(k, rows, p->n, p->kd, a, p->kd, pb->data, NULL, y, p->n);
	knn_wderived_free(tmp);
	return rc < 0 ? rt_oom(k) : 1;
}
