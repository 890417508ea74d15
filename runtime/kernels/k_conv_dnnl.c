/* k_conv_dnnl.c: convolutions on oneDNN's primitives (libdnnl): float32
 * ones where oneDNN is the faster path (dn_fits), and the integer sums of
 * ConvInteger and QLinearConv (u8/s8 x s8 -> s32, exact with VNNI while
 * the sums stay within 2^24: dn_sums_exact), QLinearConv's requantized
 * by oneDNN itself where that is exact (dn_rq_exact), ConvInteger's as
 * float32 (its Cast, and a Mul by a scale with its epilogue: a unit of
 * runtime/qdq.c).  The input and output are NCHW (plain) in opmig's
 * tensors, or channels last where the plan says (layout_cl.c: KNN_CL_SRC,
 * KNN_CL_DST, float32 and 8-bit codes); oneDNN picks its own layout for
 * the product, so a run reorders a plain input in, convolves and reorders
 * the output back (or takes its sums from oneDNN's channels-last buffer:
 * dn_take), through one process-wide buffer each (k_dnnl.c).  The primitive, its reorders and the weights in its layout
 * are made once and kept in the node's cache when W is a model constant.
 * Relu and Clip after a float32 convolution run inside it (post-ops);
 * other epilogue steps on the plain output.  Threads: oneDNN runs on
 * OpenMP, set to the session's thread count on every call. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_conv_int.h"
#include "runtime/kernels/k_dnnl.h"

/* The post-ops a convolution runs inside: Relu and Clip steps only,
 * bounds the same on every channel (kind, lo, hi per step). */
struct dn_post {
	int n;
	int kind[RT_CHAIN_MAX];
	float lo[RT_CHAIN_MAX], hi[RT_CHAIN_MAX];
};

/* The data types of a convolution: float32 throughout, or 8-bit input
 * (u8 or s8, with a zero point given at run time), s8 weights and int32
 * sums. */
struct dn_types {
	dnnl_data_type_t src, wei, dst;
	int zp;
};

struct dn_conv {
	struct knn_wcache h;
	struct knn_geom g;
	struct dn_types t;
	int has_bias;
	struct dn_post post;
	dnnl_stream_t stream;
	dnnl_primitive_t conv, rsrc, rdst, rwei;  /* reorders NULL: plain */
	dnnl_memory_t usrc, src, uwei, wei, bias, dst, udst, zp, pad;
	int wei_ready;            /* wei holds W reordered (W constant) */
	int32_t zp_val;           /* the input's zero point (t.zp) */
	size_t src_bytes, dst_bytes;  /* input and output in oneDNN's layouts
				       * (0: plain), on tensor blocks per run */
	size_t pad_bytes;         /* the primitive's scratchpad, the same way */
	int8_t *w8;               /* integer W minus its zero points, as s8 */
	const void *w_src;        /* the W that w8 was made from */
	int dst_nhwc;             /* the primitive writes channels last */
	int src_cl, dst_cl;       /* x, y in opmig's tensors channels last
				   * (layout_cl.c), else plain */
	float *rq_mult;           /* the output scales of a primitive that
				   * requantizes (dn_rq), else NULL */
	int32_t rq_zp;
	int no_rq;                /* made after oneDNN's requantization was
				   * not taken for this node (dn_rq_run) */
};

/* oneDNN requantizing an integer convolution's sums itself (8-bit dst):
 * output scale mult[o] per channel, an s32 bias, and for a zero point
 * other than 0 the post-ops round (half to even) and linear (+ zp). */
struct dn_rq {
	const float *mult;
	int32_t zp;
};

static void dn_conv_free(void *p)
{
	struct dn_conv *c = p;

	if (!c)
		return;
	dnnl_primitive_destroy(c->conv);
	dnnl_primitive_destroy(c->rsrc);
	dnnl_primitive_destroy(c->rdst);
	dnnl_primitive_destroy(c->rwei);
	dnnl_memory_destroy(c->usrc);
	if (c->src != c->usrc)
		dnnl_memory_destroy(c->src);
	dnnl_memory_destroy(c->uwei);
	if (c->wei != c->uwei)
		dnnl_memory_destroy(c->wei);
	dnnl_memory_destroy(c->bias);
	dnnl_memory_destroy(c->zp);
	dnnl_memory_destroy(c->pad);
	free(c->w8);
	free(c->rq_mult);
	dnnl_memory_destroy(c->udst);
	if (c->dst != c->udst)
		dnnl_memory_destroy(c->dst);
	if (c->stream)
		dnnl_stream_destroy(c->stream);
	free(c);
}

/* The epilogue's steps as post-ops, when all are Relu or Clip with one
 * bound for every channel. */
static int dn_post_from(const struct rt_epilogue *e, struct dn_post *p)
{
	memset(p, 0, sizeof(*p));
	if (!e)
		return 1;
	for (size_t s = 0; s < e->n; s++) {
		const float *m = e->coef + 2 * e->c * s, *a = m + e->c;

		if (e->kind[s] == RT_CHAIN_CLIP) {
			for (int64_t ch = 1; ch < e->c; ch++)
				if (m[ch] != m[0] || a[ch] != a[0])
					return 0;
			p->lo[s] = m[0];
			p->hi[s] = a[0];
		} else if (e->kind[s] != RT_CHAIN_RELU) {
			return 0;
		}
		p->kind[s] = e->kind[s];
	}
	p->n = (int)e->n;
	return 1;
}

static int dn_post_same(const struct dn_post *a, const struct dn_post *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

static int dn_dims_same(const int64_t *a, const int64_t *b, int n)
{
	return memcmp(a, b, (size_t)n * sizeof(*a)) == 0;
}

static int dn_geom_same(const struct knn_geom *a, const struct knn_geom *b)
{
	int n = a->nsp;

	return a->nsp == b->nsp && a->n == b->n && a->c == b->c && a->m == b->m &&
	       a->group == b->group && dn_dims_same(a->in, b->in, n) &&
	       dn_dims_same(a->kernel, b->kernel, n) && dn_dims_same(a->stride, b->stride, n) &&
	       dn_dims_same(a->dil, b->dil, n) && dn_dims_same(a->pad, b->pad, 2 * n);
}

/* A memory of the primitive's layout md, or the plain one (plain) when
 * they are equal; and the reorder between them (NULL when equal).  to:
 * the reorder goes from md to plain.  own: the memory allocates its data
 * (the weights, kept); else it gets a buffer on each run (*bytes). */
static int dn_layout(dnnl_memory_t plain, const dnnl_memory_desc_t *pmd,
		     const dnnl_memory_desc_t *md, int to, int own, dnnl_memory_t *mem,
		     dnnl_primitive_t *reorder, size_t *bytes)
{
	dnnl_primitive_desc_t rpd;
	dnnl_status_t st;

	*reorder = NULL;
	*bytes = 0;
	if (dnnl_memory_desc_equal(pmd, md)) {
		*mem = plain;
		return 0;
	}
	if (dnnl_memory_create(mem, md, knn_dnnl_engine(), own ? DNNL_MEMORY_ALLOCATE : DNNL_MEMORY_NONE) !=
	    dnnl_success) {
		*mem = NULL;
		return -1;
	}
	*bytes = own ? 0 : dnnl_memory_desc_get_size(md);
	st = to ? dnnl_reorder_primitive_desc_create(&rpd, md, knn_dnnl_engine(), pmd, knn_dnnl_engine(), NULL) :
	     dnnl_reorder_primitive_desc_create(&rpd, pmd, knn_dnnl_engine(), md, knn_dnnl_engine(), NULL);
	if (st != dnnl_success)
		return -1;
	st = dnnl_primitive_create(reorder, rpd);
	dnnl_primitive_desc_destroy(rpd);
	return st == dnnl_success ? 0 : -1;
}

static const struct dn_types dn_f32 = { dnnl_f32, dnnl_f32, dnnl_f32, 0 };

static const dnnl_format_tag_t dn_act_tag[] = { dnnl_ncw, dnnl_nchw, dnnl_ncdhw };
static const dnnl_format_tag_t dn_last_tag[] = { dnnl_nwc, dnnl_nhwc, dnnl_ndhwc };
static const dnnl_format_tag_t dn_wei_tag[] = { dnnl_oiw, dnnl_oihw, dnnl_oidhw };
static const dnnl_format_tag_t dn_gwei_tag[] = { dnnl_goiw, dnnl_goihw, dnnl_goidhw };

/* The primitive and memories for geometry g (0), or -1 when oneDNN
 * cannot make them (the caller runs opmig's own kernels). */
static int dn_conv_make(struct dn_conv *c, const struct knn_geom *g,
			const struct dn_types *t, int has_bias, const struct dn_post *post,
			unsigned cl, const struct dn_rq *rq)
{
	dnnl_memory_desc_t smd, wmd, bmd, dmd, zmd, any_s, any_w, any_d;
	const int32_t runtime_zp = DNNL_RUNTIME_S32_VAL;
	const dnnl_memory_desc_t *pmd;
	size_t wbytes;
	dnnl_dims_t sd, wd, bd, dd, strides, dil, pl, pr;
	dnnl_convolution_desc_t cd;
	dnnl_primitive_attr_t attr = NULL;
	dnnl_post_ops_t ops = NULL;
	dnnl_primitive_desc_t pd = NULL;
	int nsp = g->nsp, nd = nsp + 2, grouped = g->group > 1, rc = -1;

	c->g = *g;
	c->t = *t;
	c->has_bias = has_bias;
	c->post = *post;
	c->src_cl = (cl & KNN_CL_SRC) != 0;
	c->dst_cl = (cl & KNN_CL_DST) != 0;
	sd[0] = dd[0] = g->n;
	sd[1] = g->c;
	dd[1] = g->m;
	wd[0] = g->group;
	wd[grouped ? 1 : 0] = g->m / g->group;
	wd[grouped ? 2 : 1] = g->c / g->group;
	bd[0] = g->m;
	for (int d = 0; d < nsp; d++) {
		sd[2 + d] = g->in[d];
		dd[2 + d] = g->out[d];
		wd[(grouped ? 3 : 2) + d] = g->kernel[d];
		strides[d] = g->stride[d];
		dil[d] = g->dil[d] - 1;
		pl[d] = g->pad[d];
		pr[d] = g->pad[nsp + d];
	}
	if (dnnl_memory_desc_init_by_tag(&smd, nd, sd, t->src,
					 c->src_cl ? dn_last_tag[nsp - 1] : dn_act_tag[nsp - 1]) ||
	    dnnl_memory_desc_init_by_tag(&dmd, nd, dd, t->dst,
					 c->dst_cl ? dn_last_tag[nsp - 1] : dn_act_tag[nsp - 1]) ||
	    dnnl_memory_desc_init_by_tag(&wmd, nd + grouped, wd, t->wei,
					 grouped ? dn_gwei_tag[nsp - 1] : dn_wei_tag[nsp - 1]) ||
	    dnnl_memory_desc_init_by_tag(&bmd, 1, bd, rq ? dnnl_s32 : dnnl_f32, dnnl_a) ||
	    dnnl_memory_desc_init_by_tag(&zmd, 1, (dnnl_dims_t){ 1 }, dnnl_s32, dnnl_a) ||
	    dnnl_memory_desc_init_by_tag(&any_s, nd, sd, t->src, dnnl_format_tag_any) ||
	    dnnl_memory_desc_init_by_tag(&any_d, nd, dd, t->dst, dnnl_format_tag_any) ||
	    dnnl_memory_desc_init_by_tag(&any_w, nd + grouped, wd, t->wei,
					 dnnl_format_tag_any))
		return -1;
	if (dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference,
						       dnnl_convolution_direct, &any_s, &any_w,
						       has_bias ? &bmd : NULL, &any_d, strides,
						       dil, pl, pr))
		return -1;
	if (dnnl_primitive_attr_create(&attr) || dnnl_post_ops_create(&ops))
		goto done;
	for (int s = 0; s < post->n; s++)
		if (dnnl_post_ops_append_eltwise(ops, 1.0f, post->kind[s] == RT_CHAIN_RELU ?
						 dnnl_eltwise_relu : dnnl_eltwise_clip,
						 post->kind[s] == RT_CHAIN_RELU ? 0.0f : post->lo[s],
						 post->hi[s]))
			goto done;
	if (t->zp && dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &runtime_zp))
		goto done;
	if (rq) {
		if (!(c->rq_mult = malloc((size_t)g->m * sizeof(float))))
			goto done;
		memcpy(c->rq_mult, rq->mult, (size_t)g->m * sizeof(float));
		c->rq_zp = rq->zp;
		if (dnnl_primitive_attr_set_output_scales(attr, g->m, 1 << 1, rq->mult) ||
		    (rq->zp && (dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_round, 0, 0) ||
				dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_linear, 1.0f,
							     (float)rq->zp))))
			goto done;
	}
	/* the scratchpad is ours (a tensor block per run): oneDNN's own was
	 * allocated afresh by some runs, page faults and all */
	if (dnnl_primitive_attr_set_post_ops(attr, ops) ||
	    dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) ||
	    dnnl_primitive_desc_create(&pd, &cd, attr, knn_dnnl_engine(), NULL) ||
	    dnnl_primitive_create(&c->conv, pd))
		goto done;
	pmd = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
	if (pmd && (c->pad_bytes = dnnl_memory_desc_get_size(pmd)) &&
	    dnnl_memory_create(&c->pad, pmd, knn_dnnl_engine(), DNNL_MEMORY_NONE))
		goto done;
	if (dnnl_stream_create(&c->stream, knn_dnnl_engine(), dnnl_stream_default_flags) ||
	    dnnl_memory_create(&c->usrc, &smd, knn_dnnl_engine(), DNNL_MEMORY_NONE) ||
	    dnnl_memory_create(&c->udst, &dmd, knn_dnnl_engine(), DNNL_MEMORY_NONE) ||
	    dnnl_memory_create(&c->uwei, &wmd, knn_dnnl_engine(), DNNL_MEMORY_NONE) ||
	    (has_bias && dnnl_memory_create(&c->bias, &bmd, knn_dnnl_engine(), DNNL_MEMORY_NONE)) ||
	    (t->zp && dnnl_memory_create(&c->zp, &zmd, knn_dnnl_engine(), &c->zp_val)))
		goto done;
	if (dn_layout(c->usrc, &smd, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), 0, 0,
		      &c->src, &c->rsrc, &c->src_bytes) ||
	    dn_layout(c->udst, &dmd, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), 1, 0,
		      &c->dst, &c->rdst, &c->dst_bytes) ||
	    dn_layout(c->uwei, &wmd,
		      dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), 0, 1,
		      &c->wei, &c->rwei, &wbytes))
		goto done;
	c->dst_nhwc = c->rdst && !dnnl_memory_desc_init_by_tag(&any_d, nd, dd, t->dst,
								dn_last_tag[nsp - 1]) &&
		      dnnl_memory_desc_equal(&any_d, dnnl_primitive_desc_query_md(pd,
							dnnl_query_dst_md, 0));
	rc = 0;
done:
	dnnl_primitive_desc_destroy(pd);
	dnnl_post_ops_destroy(ops);
	dnnl_primitive_attr_destroy(attr);
	return rc;
}

/* Bytes of the memories c allocated (weights, input and output in the
 * primitive's layouts), charged to the session while c is kept. */
static int64_t dn_conv_bytes(const struct dn_conv *c)
{
	const dnnl_memory_desc_t *md;
	int64_t n = (int64_t)sizeof(*c);

	if (c->wei != c->uwei && dnnl_memory_get_memory_desc(c->wei, &md) == dnnl_success)
		n += (int64_t)dnnl_memory_desc_get_size(md);
	return n;
}

static int dn_exec(struct dn_conv *c, dnnl_primitive_t p, int n, const dnnl_exec_arg_t *args)
{
	return dnnl_primitive_execute(p, c->stream, n, args) == dnnl_success ? 0 : -1;
}

static int dn_reorder(struct dn_conv *c, dnnl_primitive_t p, dnnl_memory_t from,
		      dnnl_memory_t to)
{
	dnnl_exec_arg_t a[2] = { { DNNL_ARG_FROM, from }, { DNNL_ARG_TO, to } };

	return p ? dn_exec(c, p, 2, a) : 0;
}

/* Called with the sums in oneDNN's buffer, channels last, instead of
 * reordering them into y (dn_conv_run, when the primitive writes so). */
struct dn_take {
	void (*fn)(void *ctx, const int32_t *nhwc);
	void *ctx;
};

/* One run of c on x, w, b into y (or, when take is given and c writes
 * channels last, into take's function). */
static int dn_conv_run(struct dn_conv *c, const void *x, const void *w, const float *b,
		       void *y, int w_const, const struct dn_take *take)
{
	void *sp, *dp, *pp;
	dnnl_exec_arg_t a[6];
	int n = 0, rc = -1;

	if (dnnl_memory_set_data_handle(c->usrc, (void *)x) ||
	    dnnl_memory_set_data_handle(c->udst, y) ||
	    (c->bias && dnnl_memory_set_data_handle(c->bias, (void *)b)))
		return -1;
	/* W in the primitive's layout is kept while it is the same constant
	 * (a float16 node's widened W is a new buffer on every run) */
	if (!c->wei_ready || !w_const || c->h.w != w) {
		if (dnnl_memory_set_data_handle(c->uwei, (void *)w) ||
		    dn_reorder(c, c->rwei, c->uwei, c->wei))
			return -1;
		c->h.w = w;
		c->wei_ready = c->rwei != NULL && w_const;
	}
	knn_dnnl_lock();
	if (knn_dnnl_buf(KNN_DN_SRC, c->src_bytes, &sp) || knn_dnnl_buf(KNN_DN_DST, c->dst_bytes, &dp) ||
	    knn_dnnl_buf(KNN_DN_PAD, c->pad_bytes, &pp) ||
	    (sp && dnnl_memory_set_data_handle(c->src, sp)) ||
	    (dp && dnnl_memory_set_data_handle(c->dst, dp)) ||
	    (pp && dnnl_memory_set_data_handle(c->pad, pp)))
		goto done;
	if (dn_reorder(c, c->rsrc, c->usrc, c->src))
		goto done;
	a[n++] = (dnnl_exec_arg_t){ DNNL_ARG_SRC, c->src };
	a[n++] = (dnnl_exec_arg_t){ DNNL_ARG_WEIGHTS, c->wei };
	if (c->bias)
		a[n++] = (dnnl_exec_arg_t){ DNNL_ARG_BIAS, c->bias };
	if (c->zp)
		a[n++] = (dnnl_exec_arg_t){ DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, c->zp };
	if (c->pad)
		a[n++] = (dnnl_exec_arg_t){ DNNL_ARG_SCRATCHPAD, c->pad };
	a[n++] = (dnnl_exec_arg_t){ DNNL_ARG_DST, c->dst };
	if (take && c->dst_nhwc) {
		if (dn_exec(c, c->conv, n, a) || dnnl_stream_wait(c->stream) != dnnl_success)
			goto done;
		take->fn(take->ctx, dp);
	} else if (dn_exec(c, c->conv, n, a) || dn_reorder(c, c->rdst, c->dst, c->udst) ||
		   dnnl_stream_wait(c->stream) != dnnl_success) {
		goto done;
	}
	rc = 0;
done:
	knn_dnnl_unlock();
	return rc;
}

struct dn_epi {
	const struct rt_epilogue *e;
	float *y;
	int64_t m, plane;
};

static void dn_epi_planes(void *ctx, int64_t lo, int64_t hi)
{
	const struct dn_epi *j = ctx;

	for (int64_t p = lo; p < hi; p++)
		rt_epilogue_span(j->e, p % j->m, p * j->plane, j->y + p * j->plane, j->plane);
}

/* The epilogue's steps over y's planes, split over the session's
 * threads. */
static void dn_epi_apply(struct rt_kctx *k, const struct rt_epilogue *e,
			 const struct knn_geom *g, float *y)
{
	struct dn_epi j = { e, y, g->m, g->out_size };

	rt_parallel_for(k, g->n * g->m, 1, dn_epi_planes, &j);
}

/* Where oneDNN is the faster path inside a model, with the reorders in
 * and out of its layout (bench/README.md, "oneDNN convolutions"): 2-D
 * convolutions of at least 16 input and output channels per group, a
 * window larger than 1x1 and planes of 128x128 outputs or more (there the
 * product outweighs the reorders: 1.6-2.7x faster than opmig's own
 * kernels; on smaller planes the own kernels were faster in resnet50 and
 * MobileNetV2).  OPMIG_DNNL_ALL takes every convolution oneDNN can make
 * (the tests' way to reach it on small shapes). */
#define DN_MIN_POSITIONS (128 * 128)

static int dn_fits(const struct knn_geom *g, unsigned cl)
{
	const char *all = getenv("OPMIG_DNNL_ALL");

	if (g->nsp < 1 || g->nsp > 3 || g->n * g->c == 0 || g->out_size == 0)
		return 0;
	if (all && *all && *all != '0')
		return 1;
	/* an ungrouped stem of few input channels (an RGB image's first
	 * layer) too when its result stays channels last: no reorder back,
	 * and none into the next convolution (a YOLO-style det 9% faster) */
	return g->nsp == 2 && g->m / g->group >= 16 && g->k_size > 1 &&
	       (g->c / g->group >= 16 || ((cl & KNN_CL_DST) && g->group == 1)) &&
	       g->out_size >= DN_MIN_POSITIONS;
}

/* An input already stored channels last (layout_cl.c) needs no reorder
 * into oneDNN's layout, which cost more than the product saved on small
 * planes: ungrouped and depthwise convolutions of 8 channels or more then
 * take oneDNN whatever their size (a tf2onnx-style NHWC MobileNet stack:
 * 5.0 -> 3.6 ms with its depthwise ones; at two threads too, since the
 * pool's watching workers yield their CPU to OpenMP's thread, threads.c:
 * det 17.1 -> 14.5 ms, the NHWC net 3.3 -> 2.5). */
static int dn_cl_fits(const struct knn_geom *g)
{
	return g->nsp >= 1 && g->nsp <= 3 && g->c >= 8 && g->m >= 8 &&
	       (g->group == 1 || (g->group == g->c && g->m == g->c)) && g->n * g->out_size > 0;
}

/* opmig's own core on x stored as cl says (a plain copy when channels
 * last), y plain, then the steps of e. */
static int dn_own(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		  const float *w, const float *b, float *y, unsigned cl,
		  const struct rt_epilogue *e)
{
	float *xp = NULL;
	int rc;

	if (cl & KNN_CL_SRC) {
		if (!(xp = malloc((size_t)(g->n * g->c * g->in_size + 1) * sizeof(float))))
			return rt_oom(k);
		rt_cl_to_first(k, x, xp, g->n, g->c, g->in_size, sizeof(float));
		x = xp;
	}
	rc = knn_conv_f32(k, g, x, w, b, y);
	free(xp);
	if (rc < 0)
		return rc;
	if (e && e->n)
		dn_epi_apply(k, e, g, y);
	return 1;
}

int knn_conv_dnnl_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		      const float *w, const float *b, float *y, unsigned cl)
{
	struct dn_conv *c, *tmp = NULL;
	const struct rt_epilogue *e;
	struct dn_post post;
	int w_const = rt_in_const(k, 1), rc;

	if (!(dn_fits(g, cl) || ((cl & KNN_CL_SRC) && dn_cl_fits(g))) ||
	    !knn_dnnl_engine())
		return 0;
	/* taking the epilogue commits this call to finishing it: when the
	 * primitive cannot be made, the generic core runs instead */
	e = rt_kctx_epilogue(k, k->out[0], 1);
	if (!dn_post_from(e, &post))
		memset(&post, 0, sizeof(post));
	/* steps after the product run on a plain result */
	if (e && e->n && !post.n)
		cl &= ~KNN_CL_DST;
	c = rt_node_cache(k);
	if (c && (c->h.kind != KNN_WC_DNNL || c->t.src != dnnl_f32 || !dn_geom_same(&c->g, g) ||
		  c->has_bias != (b != NULL) || !dn_post_same(&c->post, &post) ||
		  c->src_cl != ((cl & KNN_CL_SRC) != 0) || c->dst_cl != ((cl & KNN_CL_DST) != 0)))
		c = NULL;
	/* oneDNN cuts the work at creation for the threads it will have */
	knn_dnnl_threads(rt_threads(k));
	if (!c) {
		if (!(tmp = calloc(1, sizeof(*tmp))))
			return rt_oom(k);
		tmp->h.kind = KNN_WC_DNNL;
		if (dn_conv_make(tmp, g, &dn_f32, b != NULL, &post, cl, NULL)) {
			dn_conv_free(tmp);
			if (e || (cl & KNN_CL_SRC))
				return dn_own(k, g, x, w, b, y, cl, e);
			return 0;
		}
		c = tmp;
		if (w_const && !rt_node_cache(k) &&
		    rt_node_cache_set(k, c, dn_conv_free, dn_conv_bytes(c)) == 0)
			tmp = NULL;
	}
	rc = dn_conv_run(c, x, w, b, y, w_const && !tmp, NULL);
	dn_conv_free(tmp);
	if (rc)
		return dn_own(k, g, x, w, b, y, cl, e);
	knn_dnnl_count();
	if (e && !post.n && e->n)
		dn_epi_apply(k, e, g, y);
	if (cl & KNN_CL_DST)
		rt_cl_set(k->out[0], 1);
	return 1;
}

struct dn_corr {
	const int32_t *t, *d;     /* sums of m + 1 channels, the factors
				   * (d NULL: m channels, none) */
	int32_t *y;
	float *yf;                /* float32 of each sum instead, or NULL */
	int64_t m, plane;
	const float *mult;        /* yf's values times mult[0], or NULL */
	const struct rt_epilogue *epi;   /* then its steps on yf, or NULL */
};

/* float32 sums y (n, at element off) times *mult when given, then e's
 * steps for channel ch when given. */
static void dn_f32_finish(float *y, int64_t n, int64_t ch, int64_t off, const float *mult,
			  const struct rt_epilogue *e)
{
	if (mult) {
		float s = *mult;

		for (int64_t i = 0; i < n; i++)
			y[i] = y[i] * s;
	}
	if (e)
		rt_epilogue_span(e, ch, off, y, n);
}

/* y[b, o] = t[b, o] + d[o] * t[b, m] for the planes (b, o) in [lo, hi). */
static void dn_corr_planes(void *ctx, int64_t lo, int64_t hi)
{
	const struct dn_corr *j = ctx;
	int64_t gm = j->m + (j->d != NULL);

	for (int64_t p = lo; p < hi; p++) {
		int64_t b = p / j->m, o = p % j->m;
		const int32_t *t = j->t + (b * gm + o) * j->plane;
		const int32_t *s = j->t + (b * gm + j->m) * j->plane;
		int32_t f = j->d ? j->d[o] : 0;

		if (j->yf && !j->d) {
			float *y = j->yf + p * j->plane;

			for (int64_t i = 0; i < j->plane; i++)
				y[i] = (float)t[i];
			dn_f32_finish(y, j->plane, o, p * j->plane, j->mult, j->epi);
		} else if (j->yf) {
			float *y = j->yf + p * j->plane;

			for (int64_t i = 0; i < j->plane; i++)
				y[i] = (float)(int32_t)((int64_t)t[i] + (int64_t)f * s[i]);
			dn_f32_finish(y, j->plane, o, p * j->plane, j->mult, j->epi);
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
	const float *mult;        /* as struct dn_corr's */
	const struct rt_epilogue *epi;
};

#define DN_CB 64   /* channels of a block of dn_cfin_tiles */

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
			 * order into channel rows (in L1) */
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
			for (int64_t o = 0; o < mc; o++) {
				int64_t at = (b * j->m + c0 + o) * j->plane + p0;

				if (j->yf) {
					float *yf = j->yf + at;

					for (int64_t i = 0; i < len; i++)
						yf[i] = (float)acc[o * DN_TILE + i];
					dn_f32_finish(yf, len, c0 + o, at, j->mult, j->epi);
				} else
					memcpy(j->y + at, acc + o * DN_TILE, (size_t)len * sizeof(*acc));
			}
		}
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

/* The node's integer primitive for gg and types t (requantizing as rq
 * says when given), from the node's cache or made (*tmp: made and not
 * kept, for the caller to free), with W as s8 (and the all-ones row when
 * corr) in c->w8: 0, 1 when oneDNN cannot make it, or IR_ENOMEM. */
static int dn_int_get(struct rt_kctx *k, const struct knn_geom *gg, const struct dn_types *t,
		      const struct dn_rq *rq, int has_bias, const void *w, int w_dtype,
		      int64_t nw, int corr, int w_const, unsigned cl, struct dn_conv **cp,
		      struct dn_conv **tmp)
{
	int64_t kl = gg->c / gg->group * gg->k_size;
	struct dn_conv *c = rt_node_cache(k);
	struct dn_post none;
	int8_t *w8;

	*tmp = NULL;
	memset(&none, 0, sizeof(none));
	if (c && (c->h.kind != KNN_WC_DNNL || c->t.src != t->src || c->t.dst != t->dst ||
		  !dn_geom_same(&c->g, gg) || c->has_bias != has_bias ||
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
		if (dn_conv_make(*tmp, gg, t, has_bias, &none, cl, rq))
			return 1;
		c = *tmp;
		if (w_const && !rt_node_cache(k) &&
		    rt_node_cache_set(k, c, dn_conv_free, dn_conv_bytes(c)) == 0)
			*tmp = NULL;
	}
	*cp = c;
	/* W as s8 (and the all-ones row), made again only when W is not the
	 * constant it was made from */
	if (!w_const || c->w_src != w || !c->w8) {
		if (!(w8 = malloc((size_t)(gg->m * kl + 1))))
			return IR_ENOMEM;
		knn_dnnl_to_s8(w_dtype, w, nw, w8);
		if (corr)
			memset(w8 + nw, 1, (size_t)kl);
		free(c->w8);
		c->w8 = w8;
		c->w_src = w;
		c->wei_ready = 0;
	}
	return 0;
}

/* oneDNN's integer convolutions are exact only while every sum stays
 * within 2^24 (KNN_DNNL_F32_EXACT; tests/ort/qconv_props.py).
 * 255 * sum_k |w8[o, k]| bounds channel o's sums
 * (|x - xz| and the raw u8 input, or the s8 input plus 128, are at most
 * 255); the correction's all-ones row, 255 * kl. */
static int dn_sums_exact(const void *w, int w_dtype, int64_t m, int64_t kl, int corr)
{
	if (corr && 255 * kl > KNN_DNNL_F32_EXACT)
		return 0;
	for (int64_t o = 0; o < m; o++) {
		int64_t s = 0;

		for (int64_t i = o * kl; i < (o + 1) * kl; i++) {
			int v = w_dtype == IR_DTYPE_UINT8 ? ((const uint8_t *)w)[i] - 128 :
				((const int8_t *)w)[i];

			s += v < 0 ? -v : v;
		}
		if (255 * s > KNN_DNNL_F32_EXACT)
			return 0;
	}
	return 1;
}

/* Whether oneDNN's requantization (dn_rq) equals QLinearConv's,
 * saturate(rne(float32(acc + bias) * mult) + zp), for sums within 2^24
 * (dn_sums_exact).  oneDNN 2.6 computes saturate(cvt_rne([round](
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
	    (c && c->h.kind == KNN_WC_DNNL && c->no_rq && dn_geom_same(&c->g, g)))
		return 0;
	t.dst = q->dtype == IR_DTYPE_INT8 ? dnnl_s8 : dnnl_u8;
	rc = dn_int_get(k, g, &t, &rq, q->bias != NULL, w, w_dtype, g->m * kl, 0, w_const, q->cl,
			&c, &tmp);
	if (rc == 0) {
		c->zp_val = xz;
		rc = dn_conv_run(c, x, c->w8, (const float *)(const void *)q->bias, q->y,
				 w_const && !tmp, NULL) ? 0 : 1;
		if (rc == 1 && (q->cl & KNN_CL_DST))
			rt_cl_set(k->out[0], 1);
	} else if (rc == 1) {
		rc = 0;
	}
	dn_conv_free(tmp);
	return rc;
}

int knn_conv_dnnl_s32(struct rt_kctx *k, const struct knn_geom *g, const void *x, int x_dtype,
		      int32_t xz, const void *w, int w_dtype, const double *wz, int64_t nwz,
		      int w_const, int32_t *y, const struct knn_dnnl_q8 *q)
{
	struct dn_types t = { x_dtype == IR_DTYPE_UINT8 ? dnnl_u8 : dnnl_s8, dnnl_s8, dnnl_s32, 1 };
	int64_t kl = g->c / g->group * g->k_size;
	struct dn_conv *c = NULL, *tmp = NULL;
	struct knn_geom gg = *g;
	/* the sums as float32 (qf) or requantized (q) */
	const struct knn_dnnl_q8 *qf = q && q->dtype == IR_DTYPE_FLOAT ? q : NULL;
	float *yf = qf ? q->y : NULL;
	unsigned cl = q ? q->cl : 0;
	int32_t *d, *out = y;
	int rc, corr;

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
	if ((corr && g->group != 1) || !dn_sums_exact(w, w_dtype, g->m, kl, corr)) {
		rc = 0;
		goto done;
	}
	/* QLinearConv without the correction: oneDNN requantizes, where
	 * that is exact */
	if (q && !corr && (rc = dn_rq_run(k, g, x, &t, xz, w, w_dtype, w_const, q)) != 0)
		goto done;
	gg.m += corr;
	/* the sums' primitive reads x as it is stored; its output is plain
	 * or taken from oneDNN's channels-last buffer (dn_take) */
	if ((rc = dn_int_get(k, &gg, &t, NULL, 0, w, w_dtype, g->m * kl, corr, w_const,
			     cl & KNN_CL_SRC, &c, &tmp)) != 0) {
		rc = rc == 1 ? 0 : rc;
		goto done;
	}
	/* (not tried again on this node's next runs) */
	c->no_rq = q && !corr;
	c->zp_val = xz;
	if (((corr && !q) || yf) && c->dst_nhwc) {
		struct dn_cfin j = { k, NULL, corr ? d : NULL, y, yf, g->n, g->m, gg.m,
				     g->out_size, qf ? qf->mult : NULL, qf ? qf->epi : NULL };
		struct dn_take take = { dn_cfin_take, &j };

		rc = dn_conv_run(c, x, c->w8, NULL, y, w_const && !tmp, &take) ? 0 : 1;
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
		if (dn_conv_run(c, x, c->w8, NULL, out, w_const && !tmp, &take))
			goto done;
		if (!j.last)
			j.ycl = 0;
		if (!j.last)
			rt_parallel_for(k, g->n * tiles, 1, dn_fin_tiles, &j);
		if (j.ycl)
			rt_cl_set(k->out[0], 1);
	} else if (dn_conv_run(c, x, c->w8, NULL, out, w_const && !tmp, NULL)) {
		goto done;
	}
	if ((corr && !q) || yf) {
		struct dn_corr j = { out, corr ? d : NULL, y, yf, g->m, g->out_size,
				     qf ? qf->mult : NULL, qf ? qf->epi : NULL };

		rt_parallel_for(k, g->n * g->m, 1, dn_corr_planes, &j);
	}
	rc = 1;
done:
	if (rc == 1)
		knn_dnnl_count();
	if (out != y)
		rt_big_free(out);
	dn_conv_free(tmp);
	free(d);
	return rc == IR_ENOMEM ? rt_oom(k) : rc;
}
