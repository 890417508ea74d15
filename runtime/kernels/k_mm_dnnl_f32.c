/* k_mm_dnnl_f32.c: float32 MatMul and Gemm on oneDNN's matmul primitive
 * (its brgemm kernels), kept in the node's cache: against a constant B,
 * B reordered once into the layout oneDNN picks, a Gemm's row of bias
 * added by the primitive; and MatMul's batched products of two
 * activations (attention's scores and their values), B as it lies.  A
 * transformer's 500 x 384 by 384 x 1536 projection took 5.1 ms on opmig's
 * packed product (k_matmul_pk.c) and takes 3.9 here; six 500 x 500 by
 * 500 x 64 products 2.2 ms on sgemm, 1.3 here, at one thread
 * (bench/README.md).  From a node's second run on (the first runs sgemm:
 * a primitive, and a copy of B, cost more than one product, and `opmig
 * validate` runs each model once). */
#include <stdlib.h>

#include "runtime/kernels/k_conv_int.h"
#include "runtime/kernels/k_dnnl.h"

struct mmf_dn {
	struct knn_wcache h;      /* KNN_WC_DNNL_MMF; h.w: the B reordered */
	struct knn_mmf g;         /* the product it was made for */
	int has_bias;
	dnnl_stream_t stream;
	dnnl_primitive_t mm;
	dnnl_memory_t a, b, bias, y, pad;
	size_t pad_bytes, b_bytes;
};

static void mmf_free(void *p)
{
	struct mmf_dn *c = p;

	if (!c)
		return;
	dnnl_primitive_destroy(c->mm);
	dnnl_memory_destroy(c->a);
	dnnl_memory_destroy(c->b);
	dnnl_memory_destroy(c->bias);
	dnnl_memory_destroy(c->y);
	dnnl_memory_destroy(c->pad);
	if (c->stream)
		dnnl_stream_destroy(c->stream);
	free(c);
}

static int mmf_same(const struct knn_mmf *x, const struct knn_mmf *y)
{
	return x->rows == y->rows && x->kd == y->kd && x->n == y->n && x->lda == y->lda &&
	       x->a_rows == y->a_rows && x->rs == y->rs && x->cs == y->cs && x->nb == y->nb &&
	       x->b_const == y->b_const;
}

/* The primitive for c->g, B (at b) reordered into its layout: 0, or -1
 * when oneDNN cannot make it. */
static int mmf_make(struct mmf_dn *c, const float *b)
{
	const struct knn_mmf *g = &c->g;
	dnnl_engine_t eng = knn_dnnl_engine();
	dnnl_memory_desc_t amd, bmd, anyb, ymd, zmd;
	const dnnl_memory_desc_t *q;
	dnnl_primitive_attr_t attr = NULL;
	dnnl_primitive_desc_t pd = NULL;
	dnnl_matmul_desc_t md;
	/* batched (rank 3) only with A's rows, B and Y one batch after
	 * another */
	int r = g->nb > 1 ? 3 : 2, o = r - 2;
	dnnl_dims_t ad = { g->nb, g->rows, g->kd }, bd = { g->nb, g->kd, g->n };
	dnnl_dims_t yd = { g->nb, g->rows, g->n }, zd = { 1, 1, g->n };
	dnnl_dims_t as = { g->rows * g->kd, g->a_rows ? g->lda : 1, g->a_rows ? 1 : g->lda };
	dnnl_dims_t bs = { g->kd * g->n, g->rs, g->cs };
	int rc = -1;

	if (dnnl_memory_desc_init_by_strides(&amd, r, ad + 1 - o, dnnl_f32, as + 1 - o) ||
	    dnnl_memory_desc_init_by_strides(&bmd, r, bd + 1 - o, dnnl_f32, bs + 1 - o) ||
	    dnnl_memory_desc_init_by_tag(&anyb, r, bd + 1 - o, dnnl_f32, dnnl_format_tag_any) ||
	    dnnl_memory_desc_init_by_tag(&ymd, r, yd + 1 - o, dnnl_f32, r == 3 ? dnnl_abc : dnnl_ab) ||
	    dnnl_memory_desc_init_by_tag(&zmd, r, zd + 1 - o, dnnl_f32, r == 3 ? dnnl_abc : dnnl_ab) ||
	    dnnl_matmul_desc_init(&md, &amd, g->b_const ? &anyb : &bmd, c->has_bias ? &zmd : NULL,
				  &ymd))
		return -1;
	if (dnnl_primitive_attr_create(&attr) ||
	    dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) ||
	    dnnl_primitive_desc_create(&pd, &md, attr, eng, NULL) ||
	    dnnl_primitive_create(&c->mm, pd) ||
	    dnnl_stream_create(&c->stream, eng, dnnl_stream_default_flags) ||
	    dnnl_memory_create(&c->a, &amd, eng, DNNL_MEMORY_NONE) ||
	    dnnl_memory_create(&c->y, &ymd, eng, DNNL_MEMORY_NONE) ||
	    (c->has_bias && dnnl_memory_create(&c->bias, &zmd, eng, DNNL_MEMORY_NONE)))
		goto done;
	q = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
	if (q && (c->pad_bytes = dnnl_memory_desc_get_size(q)) &&
	    dnnl_memory_create(&c->pad, q, eng, DNNL_MEMORY_NONE))
		goto done;
	if (!g->b_const) {   /* B as it lies, set at each run */
		rc = dnnl_memory_create(&c->b, &bmd, eng, DNNL_MEMORY_NONE) ? -1 : 0;
		goto done;
	}
	q = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
	c->b_bytes = dnnl_memory_desc_get_size(q);
	if (knn_dnnl_reorder_new(c->stream, &bmd, b, q, &c->b))
		goto done;
	c->h.w = b;
	rc = 0;
done:
	dnnl_primitive_desc_destroy(pd);
	dnnl_primitive_attr_destroy(attr);
	return rc;
}

/* One product into y: 0, IR_ENOMEM when the scratchpad could not be
 * had, or -1 when oneDNN failed. */
static int mmf_run(struct mmf_dn *c, const float *a, const float *b, const float *bias,
		   float *y)
{
	dnnl_exec_arg_t args[5] = {
		{ DNNL_ARG_SRC, c->a }, { DNNL_ARG_WEIGHTS, c->b }, { DNNL_ARG_DST, c->y },
	};
	int n = 3, rc = -1;
	void *pp;

	if (c->pad)
		args[n++] = (dnnl_exec_arg_t){ DNNL_ARG_SCRATCHPAD, c->pad };
	if (c->has_bias)
		args[n++] = (dnnl_exec_arg_t){ DNNL_ARG_BIAS, c->bias };
	if ((!c->g.b_const && dnnl_memory_set_data_handle(c->b, (void *)b)) ||
	    dnnl_memory_set_data_handle(c->a, (void *)a) ||
	    dnnl_memory_set_data_handle(c->y, y) ||
	    (c->has_bias && dnnl_memory_set_data_handle(c->bias, (void *)bias)))
		return -1;
	knn_dnnl_lock();
	if (knn_dnnl_buf(KNN_DN_PAD, c->pad_bytes, &pp))
		rc = IR_ENOMEM;
	else if ((!pp || !dnnl_memory_set_data_handle(c->pad, pp)) &&
		 !dnnl_primitive_execute(c->mm, c->stream, n, args) &&
		 dnnl_stream_wait(c->stream) == dnnl_success)
		rc = 0;
	knn_dnnl_unlock();
	return rc;
}

int knn_mm_dnnl_f32(struct rt_kctx *k, const struct knn_mmf *g, const float *a,
		    const float *b, const float *bias, float *y)
{
	struct mmf_dn *c = rt_node_cache(k), *tmp = NULL;
	struct rt_share_key key = { 0 };
	int rc;

	if (!knn_dnnl_engine())
		return 0;
	if (c && (c->h.kind != KNN_WC_DNNL_MMF || !mmf_same(&c->g, g) ||
		  (g->b_const && c->h.w != b) || c->has_bias != (bias != NULL)))
		c = NULL;
	knn_dnnl_threads(rt_threads(k));
	if (!c && !rt_node_cache(k) && g->b_const) {
		/* another node's of the same constant B (an unrolled decoder) */
		key = (struct rt_share_key){ KNN_WC_DNNL_MMF, { b, NULL, NULL },
					     { g->rows, g->kd, g->n, g->lda, g->rs, g->cs, g->nb,
					       g->a_rows | (bias != NULL) << 1 } };
		c = rt_node_cache_shared(k, &key);
	}
	if (!c) {
		/* a copy of B worth keeping only from the second run on, and
		 * only in the node's cache */
		if (rt_node_cache(k) ||
		    !rt_node_cache_worth(k, g->b_const ? g->kd * g->n * (int64_t)sizeof(float) : 0))
			return 0;
		if (!(tmp = calloc(1, sizeof(*tmp))))
			return rt_oom(k);
		tmp->h.kind = KNN_WC_DNNL_MMF;
		tmp->g = *g;
		tmp->has_bias = bias != NULL;
		if (mmf_make(tmp, g->b_const ? b : NULL) ||
		    (g->b_const ? rt_node_cache_set_shared(k, tmp, mmf_free, (int64_t)tmp->b_bytes, &key) :
		     rt_node_cache_set(k, tmp, mmf_free, (int64_t)tmp->b_bytes)) < 0) {
			mmf_free(tmp);
			return 0;
		}
		c = tmp;
	}
	/* out of memory fails the node: the other products' sums differ in
	 * the last bits, so a run must not change paths for want of memory */
	if ((rc = mmf_run(c, a, b, bias, y)) == IR_ENOMEM)
		return rt_oom(k);
	if (rc)
		return 0;
	knn_dnnl_count();
	return 1;
}

int knn_mm_batched_f32(struct rt_kctx *k, const struct knn_mm *p, const float *a,
		       const float *b, float *y)
{
	struct knn_mmf g = { p->m, p->kd, p->n, p->kd, p->n, 1, p->n_batch, 1, 0 };

	if (p->m < 2 || p->n < 16 || p->kd < 1 ||
	    (double)p->n_batch * (double)p->m * (double)p->n * (double)p->kd < KNN_MM_MIN_WORK)
		return 0;
	for (int64_t i = 0; i < p->n_batch; i++)
		if (p->a_off[i] != i * p->m * p->kd || p->b_off[i] != i * p->kd * p->n)
			return 0;
	return knn_mm_dnnl_f32(k, &g, a, b, NULL, y);
}
