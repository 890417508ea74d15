/* k_matmul_pk.c: float32 MatMul and Gemm against a constant B packed
 * once.
 *
 * sgemm (gemm.h) copies both operands into its packed layouts on every
 * call; when B is a layer's weights (a transformer's 768 x 3072
 * projection: 9.4 MB) that copy is redone every run, and it is a tenth
 * of the product's time.  Here B is packed once into the panels of
 * pgemm.h, kept in the node's cache for the session (k_conv_wcache.c),
 * and every run multiplies A, as it lies, against them on the AVX-512
 * micro-kernel.  The copy is made on the node's second run
 * (rt_node_cache_worth): its fresh memory costs more than one product,
 * and `opmig validate` runs each model once. */
#include "runtime/kernels/k_conv_int.h"
#include "runtime/kernels/pgemm.h"

/* Products smaller than KNN_MM_MIN_WORK stay with sgemm, and so do
 * products of one row (sgemm's gemv): as fast alone
 * (0.11-0.12 ms for a classifier's 2048 x 1000 weights), faster in a
 * model, where the weights come from memory (resnet50's: 0.42-0.46 ms
 * against 0.55-0.66).  From two rows on sgemm is ten times slower (1.6-1.8
 * ms at 2 and 4 rows against 0.15-0.17). */
#define MM_PK_MIN_ROWS 2
/* Rows from which oneDNN's matmul takes the product (below: packed) */
#define MM_DNNL_MIN_ROWS 4

/* B (kd x n), element (s, j) at b[s * rs + j * cs]. */
struct mm_pk {
	int64_t kd, n, rs, cs;
};

static void mm_pk_fill(const void *ctx, const float *b, float *dst)
{
	const struct mm_pk *d = ctx;

	rt_pgemm_pack(b, d->rs, d->cs, d->kd, d->n, dst);
}

/* y (rows x n, row-major) = A * B + bias (n values or NULL), B input 1
 * of the node; A(i, s) at a[i * lda + s] when a_rows, else a[s * lda +
 * i].  1 done, 0 not taken, or a negative status. */
static int pk_product(struct rt_kctx *k, int64_t rows, const struct mm_pk *d,
		      const float *a, int a_rows, int64_t lda, const float *b,
		      const float *bias, float *y)
{
	const struct knn_wderived *pb;
	struct knn_wderived *tmp = NULL;
	struct rt_share_key key;
	int64_t len = rt_pgemm_packed_len(d->kd, d->n);
	int rc;

	if (!rt_pgemm_ok() || !rt_in_const(k, 1) || rows < MM_PK_MIN_ROWS || d->n < 16 ||
	    d->kd < 1 ||
	    (double)rows * (double)d->n * (double)d->kd < KNN_MM_MIN_WORK)
		return 0;
	/* oneDNN's matmul where it runs (k_mm_dnnl_f32.c), from four rows:
	 * at two, the packed product is faster (a classifier's 2048 x 1000
	 * weights by 2 rows 0.37 ms against 0.47; by 4, 0.51 against 0.41) */
	if (rows >= MM_DNNL_MIN_ROWS &&
	    (rc = knn_mm_dnnl_f32(k, &(struct knn_mmf){ rows, d->kd, d->n, lda, d->rs, d->cs, 1,
							 a_rows, 1 }, a, b, bias, y)) != 0)
		return rc;
	key = (struct rt_share_key){ KNN_WC_MATMUL, { b, NULL, NULL },
				     { d->kd, d->n, d->rs, d->cs } };
	/* packed B: kept, another node's of the same B (taken now), or made */
	if (!(knn_wcache_get(k, KNN_WC_MATMUL, b) ||
	      (!rt_node_cache(k) && rt_node_cache_shared(k, &key)) ||
	      rt_node_cache_worth(k, len * (int64_t)sizeof(float))))
		return 0;
	if (!(pb = knn_wderived_make(k, KNN_WC_MATMUL, b, len, mm_pk_fill, d, &key, &tmp)))
		return rt_oom(k);
	rc = a_rows ? rt_pgemm_run_rows(k, rows, d->n, d->kd, a, lda, pb->data, bias, y, d->n) :
	     rt_pgemm_run(k, rows, d->n, d->kd, a, lda, pb->data, bias, y, d->n);
	knn_wderived_free(tmp);
	return rc < 0 ? rt_oom(k) : 1;
}

int knn_mm_packed_f32(struct rt_kctx *k, const struct knn_mm *p, const float *a,
		      const float *b, float *y)
{
	struct mm_pk d = { p->kd, p->n, p->n, 1 };

	/* one B for every batch, and A's batches one after another: a
	 * single product of n_batch * m rows */
	for (int64_t i = 0; i < p->n_batch; i++)
		if (p->b_off[i] != 0 || p->a_off[i] != i * p->m * p->kd)
			return 0;
	return pk_product(k, p->n_batch * p->m, &d, a, 1, p->kd, b, NULL, y);
}

int knn_gemm_packed_f32(struct rt_kctx *k, int ta, int tb, int64_t m, int64_t n,
			int64_t kd, const float *a, const float *b, const float *bias,
			float *y)
{
	struct mm_pk d = { kd, n, tb ? 1 : n, tb ? kd : 1 };

	return pk_product(k, m, &d, a, !ta, ta ? m : kd, b, bias, y);
}
