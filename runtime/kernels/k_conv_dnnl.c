/* k_conv_dnnl.c: float32 convolutions on oneDNN's primitives (libdnnl)
 * where oneDNN is the faster path (dn_fits), and the primitives
 * themselves, made, run and freed for this file and k_conv_dnnl_int.c
 * (the integer convolutions: k_conv_dnnl.h).  The input and output are
 * NCHW (plain) in opmig's tensors, or channels last where the plan says
 * (layout_cl.c: KNN_CL_SRC, KNN_CL_DST); oneDNN picks its own layout for
 * the product, so a run reorders a plain input in, convolves and reorders
 * the output back (or hands oneDNN's channels-last output to a function:
 * dn_take), through one process-wide buffer each (k_dnnl.c).  The
 * primitive, its reorders and the weights in its layout are made once
 * and kept in the node's cache when W is a model constant.  Relu and
 * Clip after a float32 convolution run inside it (post-ops); other
 * epilogue steps on the plain output.  Threads: oneDNN runs on OpenMP,
 * set to the session's thread count on every call. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_conv_dnnl.h"

void knn_dn_conv_free(void *p)
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
	free(c->fold_coef);
	free(c->fold_w);
	free(c->fold_b);
	dnnl_memory_destroy(c->udst);
	if (c->dst != c->udst)
		dnnl_memory_destroy(c->dst);
	if (c->stream)
		dnnl_stream_destroy(c->stream);
	free(c);
}

/* The epilogue's steps as post-ops, when all are Relu or Clip with one
 * bound for every channel (or a move between them: nothing to do). */
static int dn_post_from(const struct rt_epilogue *e, struct dn_post *p)
{
	memset(p, 0, sizeof(*p));
	if (!e)
		return 1;
	/* a float16 node's epilogue rounds the result before its steps
	 * (rt_epilogue_span): none inside oneDNN */
	if (e->head_round)
		return 0;
	for (size_t s = 0; s < e->n; s++) {
		const float *m = e->coef + 2 * e->c * s, *a = m + e->c;

		if (e->kind[s] == RT_CHAIN_MOVE)
			continue;
		if (e->kind[s] == RT_CHAIN_CLIP) {
			for (int64_t ch = 1; ch < e->c; ch++)
				if (m[ch] != m[0] || a[ch] != a[0])
					return 0;
			p->lo[p->n] = m[0];
			p->hi[p->n] = a[0];
		} else if (e->kind[s] != RT_CHAIN_RELU) {
			return 0;
		}
		p->kind[p->n++] = e->kind[s];
	}
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

int knn_dn_geom_same(const struct knn_geom *a, const struct knn_geom *b)
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
int knn_dn_conv_make(struct dn_conv *c, const struct knn_geom *g, const struct dn_types *t,
		     int has_bias, const struct dn_post *post, unsigned cl,
		     const struct dn_rq *rq)
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
	    knn_dnnl_pd(&pd, &cd, attr, t->src == dnnl_f32 ||
			knn_dnnl_amx_pays(g->c / g->group * g->k_size,
					  g->n * g->out_size * g->m * (g->c / g->group) * g->k_size,
					  nsp == 3)) ||
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
int64_t knn_dn_conv_bytes(const struct dn_conv *c)
{
	const dnnl_memory_desc_t *md;
	int64_t n = (int64_t)sizeof(*c);

	if (c->wei != c->uwei && dnnl_memory_get_memory_desc(c->wei, &md) == dnnl_success)
		n += (int64_t)dnnl_memory_desc_get_size(md);
	if (c->fold_coef)   /* the folded W until reordered, B and mul, add */
		n += (c->g.m * (c->g.c / c->g.group) * c->g.k_size + 3 * c->g.m) *
		     (int64_t)sizeof(float);
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

/* One run of c on x, w, b into y (or, when take is given and c writes
 * channels last, into take's function): 0, IR_ENOMEM when a buffer could
 * not be had, or -1 when oneDNN failed. */
int knn_dn_conv_run(struct dn_conv *c, const void *x, const void *w, const float *b, void *y,
		    int w_const, const struct dn_take *take)
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
	    knn_dnnl_buf(KNN_DN_PAD, c->pad_bytes, &pp)) {
		rc = IR_ENOMEM;
		goto done;
	}
	if ((sp && dnnl_memory_set_data_handle(c->src, sp)) ||
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

/* a window of more taps than its output plane has positions, at
 * most 64 of them (CapsNet's 9x9/2 onto 6x6): oneDNN's direct kernel
 * walks the wide window for few outputs, where the own products of
 * packed weights (k_conv.c, "at most 64 output positions") are one
 * GEMM: 256 to 256 channels 9x9/2 from 20x20, batch 4, 20.0 against
 * 11.8 ms (onnxruntime 10.8), batch 1 4.8 against 2.9 (2.7); a
 * window of fewer taps stays (5x5 onto 7x7, 7x7 onto 8x8 and 5x5/2
 * onto 8x8 ran 10-37% slower on the own path), and so does a window of
 * fewer than 25 taps (a 3x3 onto a plane of a few positions, unmeasured:
 * its result stays channels last for the layers after it) */
static int dn_wide_window(const struct knn_geom *g)
{
	return g->group == 1 && g->k_size >= 25 && g->out_size <= 64 && g->k_size > g->out_size;
}

/* Where oneDNN is the faster path inside a model, with the reorders in
 * and out of its layout (bench/README.md, "oneDNN on every plane"):
 * convolutions of at least 16 input and output channels per group and
 * a window larger than 1x1, whatever their plane or stride (oneDNN's
 * AVX-512 kernels beat opmig's own on 7x7 to 256x256 planes: a dilated
 * DeepLabV3-style net 51 -> 25.5 ms at one thread, YOLO-style 21 -> 17;
 * no plane size measured slower); 1-D and 3-D ones too (an R(2+1)D
 * video net 25.6 -> 13.7 ms, its 3-D convolutions on im2col before; a
 * wav2vec2-style feature encoder 14.6 -> 12.0).  OPMIG_DNNL_ALL takes every
 * convolution oneDNN can make (the tests' way to reach it on small
 * shapes). */
static int dn_fits(const struct knn_geom *g, unsigned cl)
{
	const char *all = getenv("OPMIG_DNNL_ALL");

	if (g->nsp < 1 || g->nsp > 3 || g->n * g->c == 0 || g->out_size == 0)
		return 0;
	if (all && *all && *all != '0')
		return 1;
	if (g->k_size <= 1)
		return 0;
	/* 3-D ones that are not depthwise, whatever their channels: the
	 * own path's im2col of a 3-D window is k^3 copies of the input (32
	 * to 8 channels 3x3x3 on 8x48x48: 37 ms against oneDNN's 2.7;
	 * a depthwise one ran 4.5x slower there) */
	if (g->nsp == 3 && g->group < g->c)
		return 1;
	/* grouped ones of 8 channels a group (RegNet's), where oneDNN's
	 * blocked kernels beat the own ones by 1.4-2.3x (group widths of 2,
	 * 4 and 12 ran slower there: bench/README.md, "Grouped
	 * convolutions") */
	if (g->group > 1 && g->group < g->c && (g->c / g->group) % 8 == 0 &&
	    (g->m / g->group) % 8 == 0)
		return 1;
	if (g->m / g->group < 16)
		return 0;
	if (dn_wide_window(g))
		return 0;
	/* an ungrouped stem of few input channels (an RGB image's first
	 * layer) too when its result stays channels last: no reorder back,
	 * and none into the next convolution, which then takes oneDNN as
	 * well (ResNet-50's 7x7 stem at 112x112: 88 -> 69 ms) */
	return g->c / g->group >= 16 || ((cl & KNN_CL_DST) && g->group == 1);
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
		rt_epilogue_planes(k, e, y, g->n * g->m, g->out_size);
	return 1;
}

/* c's W and B with the BatchNormalization of coefficients mul (m
 * values) and add (the m after) folded in, each in double and rounded
 * once: W'[o] = W[o] mul[o], B'[o] = B[o] mul[o] + add[o] (B absent: 0).
 * 0, or IR_ENOMEM. */
static int dn_fold(struct dn_conv *c, const float *w, const float *b, const float *coef)
{
	const int64_t m = c->g.m, per = c->g.c / c->g.group * c->g.k_size;

	c->fold_coef = malloc((size_t)(2 * m) * sizeof(float));
	c->fold_w = malloc((size_t)(m * per + 1) * sizeof(float));
	c->fold_b = malloc((size_t)m * sizeof(float));
	if (!c->fold_coef || !c->fold_w || !c->fold_b)
		return IR_ENOMEM;
	memcpy(c->fold_coef, coef, (size_t)(2 * m) * sizeof(float));
	c->fold_src = w;
	for (int64_t o = 0; o < m; o++) {
		double mul = coef[o];

		for (int64_t i = 0; i < per; i++)
			c->fold_w[o * per + i] = (float)(w[o * per + i] * mul);
		c->fold_b[o] = (float)((b ? b[o] * mul : 0) + coef[m + o]);
	}
	return 0;
}

int knn_conv_dnnl_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		      const float *w, const float *b, float *y, unsigned cl)
{
	struct dn_conv *c, *tmp = NULL;
	const struct rt_epilogue *e, *rest;
	struct rt_epilogue after_bn;
	struct dn_post post;
	int w_const = rt_in_const(k, 1), rc, fold;

	if (!(dn_fits(g, cl) || ((cl & KNN_CL_SRC) && dn_cl_fits(g) && !dn_wide_window(g))) ||
	    !knn_dnnl_engine())
		return 0;
	/* taking the epilogue commits this call to finishing it: when the
	 * primitive cannot be made, the generic core runs instead */
	e = rt_kctx_epilogue(k, k->out[0], 1);
	/* a BatchNormalization after the product goes into W and B: the
	 * steps left are then often all post-ops, and no pass over the
	 * result is left (the channels-last pass was 18% of an SSDLite's
	 * time) */
	fold = w_const && (!b || rt_in_const(k, 2)) && rt_epilogue_bn_fold(k, e);
	rest = e;
	if (fold) {
		rt_epilogue_rest(e, &after_bn);
		rest = &after_bn;
	}
	if (!dn_post_from(rest, &post))
		memset(&post, 0, sizeof(post));
	/* steps after the product that add a tensor (stored channels
	 * first) run on a plain result */
	if (rest && rest->n && !post.n && rt_epilogue_has_tensor(rest))
		cl &= ~KNN_CL_DST;
	c = rt_node_cache(k);
	if (c && (c->h.kind != KNN_WC_DNNL || c->t.src != dnnl_f32 || !knn_dn_geom_same(&c->g, g) ||
		  c->has_bias != (b != NULL || fold) || !dn_post_same(&c->post, &post) ||
		  c->src_cl != ((cl & KNN_CL_SRC) != 0) || c->dst_cl != ((cl & KNN_CL_DST) != 0) ||
		  !c->fold_coef != !fold ||
		  (fold && (c->fold_src != w ||
			    memcmp(c->fold_coef, e->coef, (size_t)(2 * g->m) * sizeof(float))))))
		c = NULL;
	/* oneDNN cuts the work at creation for the threads it will have */
	knn_dnnl_threads(rt_threads(k));
	if (!c) {
		if (!(tmp = calloc(1, sizeof(*tmp))))
			return rt_oom(k);
		tmp->h.kind = KNN_WC_DNNL;
		if (knn_dn_conv_make(tmp, g, &dn_f32, b != NULL || fold, &post, cl, NULL)) {
			knn_dn_conv_free(tmp);
			if (e || (cl & KNN_CL_SRC))
				return dn_own(k, g, x, w, b, y, cl, e);
			return 0;
		}
		if (fold && dn_fold(tmp, w, b, e->coef)) {
			knn_dn_conv_free(tmp);
			return rt_oom(k);
		}
		c = tmp;
		if (w_const && !rt_node_cache(k) &&
		    rt_node_cache_set(k, c, knn_dn_conv_free, knn_dn_conv_bytes(c)) == 0)
			tmp = NULL;
	}
	rc = knn_dn_conv_run(c, x, c->fold_w ? c->fold_w : w, c->fold_coef ? c->fold_b : b, y,
			     w_const && !tmp, NULL);
	/* the folded W kept in oneDNN's layout: the next runs pass W
	 * itself, which the reorder is not done again for */
	if (!rc && c->fold_w && c->wei_ready) {
		free(c->fold_w);
		c->fold_w = NULL;
		c->h.w = w;
	}
	knn_dn_conv_free(tmp);
	/* out of memory fails the node: the own kernels' sums differ in the
	 * last bits, so a run must not change paths for want of memory */
	if (rc == IR_ENOMEM)
		return rt_oom(k);
	if (rc)
		return dn_own(k, g, x, w, b, y, cl, e);
	knn_dnnl_count();
	if (fold)
		knn_dnnl_fold_count();
	if (rest && !post.n && rest->n && (cl & KNN_CL_DST))
		rt_epilogue_cl(k, rest, y, g->n * g->out_size);
	else if (rest && !post.n && rest->n)
		rt_epilogue_planes(k, rest, y, g->n * g->m, g->out_size);
	if (cl & KNN_CL_DST)
		rt_cl_set(k->out[0], 1);
	return 1;
}

