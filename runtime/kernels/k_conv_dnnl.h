/* k_conv_dnnl.h: what k_conv_dnnl.c (oneDNN's convolution primitives,
 * the float32 ones) and k_conv_dnnl_int.c (the integer ones: ConvInteger,
 * QLinearConv) share: a primitive with its memories and reorders, made,
 * run and freed.  Internal to the kernels. */
#ifndef OPMIG_K_CONV_DNNL_H
#define OPMIG_K_CONV_DNNL_H

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
	int parts;                /* the parts w8 holds w_src in
				   * (k_conv_dnnl_int.c's dn_parts) */
	float *fold_coef;         /* a BatchNormalization folded into W and
				   * B (k_conv_dnnl.c's dn_fold): its mul and
				   * add (2 m values), else NULL */
	float *fold_w, *fold_b;   /* W and B so folded (fold_w NULL once
				   * reordered into wei and kept) */
	const float *fold_src;    /* the W they were folded from */
};

/* oneDNN requantizing an integer convolution's sums itself (8-bit dst):
 * output scale mult[o] per channel, an s32 bias, and for a zero point
 * other than 0 the post-ops round (half to even) and linear (+ zp). */
struct dn_rq {
	const float *mult;
	int32_t zp;
};

/* Called with the sums in oneDNN's buffer, channels last, instead of
 * reordering them into y (dn_conv_run, when the primitive writes so). */
struct dn_take {
	void (*fn)(void *ctx, const int32_t *nhwc);
	void *ctx;
};

/* c's memories, primitives and buffers (a node cache's free). */
void knn_dn_conv_free(void *p);
/* The primitive and memories for geometry g (0), or -1 when oneDNN
 * cannot make them (the caller runs opmig's own kernels): types t, a
 * bias when has_bias, post-ops, the layouts cl says (KNN_CL_SRC,
 * KNN_CL_DST), oneDNN requantizing when rq. */
int knn_dn_conv_make(struct dn_conv *c, const struct knn_geom *g, const struct dn_types *t,
		     int has_bias, const struct dn_post *post, unsigned cl,
		     const struct dn_rq *rq);
/* Bytes of c's kept memories, charged while c is in a node's cache. */
int64_t knn_dn_conv_bytes(const struct dn_conv *c);
/* One run of c on x, w, b into y (or, when take is given and c writes
 * channels last, into take's function): 0, IR_ENOMEM when a buffer could
 * not be had (a float32 caller fails then: its fallback's sums differ),
 * or -1 when oneDNN failed. */
int knn_dn_conv_run(struct dn_conv *c, const void *x, const void *w, const float *b, void *y,
		    int w_const, const struct dn_take *take);
int knn_dn_geom_same(const struct knn_geom *a, const struct knn_geom *b);

#endif
