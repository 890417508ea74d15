/* k_nq.h: private helpers of the norm, rnn, quant, attn and contrib kernel
 * families: float32 working copies of tensors of any float dtype, writing
 * float32 results into outputs of any float dtype, the one sgemm call (to
 * switch to runtime/kernels/gemm.h later), row normalization, the attention
 * core and the rotary embedding.  These families compute in float32 (with
 * double accumulators in reductions) whatever the float dtype: float64
 * tensors come out to float32 precision.
 * Buffers returned by nq_f32() are owned by the caller when *owned is set. */
#ifndef OPMIG_K_NQ_H
#define OPMIG_K_NQ_H

#include <stdint.h>

#include "runtime/kernels/gemm.h"   /* rt_gemm_f32 for the products */
#include "runtime/rt_int.h"

/* The elements of tensor t as float32: t's own data when it is float32
 * (*owned = 0), else a malloc'd converted copy (*owned = 1).  NULL on
 * allocation failure (diag set). */
float *nq_f32(struct rt_kctx *k, const struct rt_value *t, int *owned);
void nq_f32_release(float *p, int owned);

/* A float32 buffer to compute output t into: t's data when it is float32,
 * else a scratch buffer; nq_out_done() converts and frees it. */
float *nq_out_buf(struct rt_kctx *k, struct rt_value *t);
void nq_out_done(struct rt_value *t, float *buf);
/* Output i, when wanted, made (rank, dims) of dtype from the float32
 * array src (one rounding per element); IR_ENOMEM when it cannot be. */
int nq_out_floats(struct rt_kctx *k, size_t i, int dtype, int rank, const int64_t *dims,
		  const float *src);

/* Input t (input i) broadcast to shape (rank, dims) as a malloc'd float32
 * array; NULL and an error naming both shapes when it does not broadcast. */
float *nq_expand(struct rt_kctx *k, const struct rt_value *t, size_t i,
		 int rank, const int64_t *dims);


/* In-place softmax of n floats (a row of -inf only gives zeros). */
void nq_softmax(float *x, int64_t n);
/* The same with one more logit, sink, in the denominator only (a smooth
 * softmax when sink is 0: the row may sum to less than 1). */
void nq_softmax_sink(float *x, int64_t n, float sink);

/* Normalize one row of n floats: (x - mean) * inv (mean 0 when rms), then
 * * scale[i] and + bias[i] when given; the row's mean and inv (1/sqrt(var +
 * eps), var the mean square for rms) are stored when asked. */
void nq_norm_row(const float *x, float *y, int64_t n, const float *scale,
		 const float *bias, float eps, int rms, float *mean_out,
		 float *inv_out);
/* Output 0 = X normalized over axes [axis, rank) times scale plus bias
 * (NULL: none), both broadcast to those axes; Mean and InvStdDev into
 * outputs out_mean / out_inv (-1: none) of stat_dtype. */
int nq_layer_norm(struct rt_kctx *k, struct rt_value *x, int64_t axis,
		  struct rt_value *scale, struct rt_value *bias, float eps, int rms,
		  int ydtype, int stat_dtype, int out_mean, int out_inv);

/* Scaled dot-product attention over float [B, H, S, D] tensors: for each
 * batch b and query head h (key/value head h / (hq / hkv)), scores =
 * scale * Q K^T, softcap (when > 0), bias(ctx, b, h, i, row) adds a mask to
 * each row of t scores (after softcap, so masked scores stay -inf),
 * softmax, Y = P V.  qk (may be NULL) gets the
 * [B, hq, sq, t] scores at qk_mode 0 (after the scaled matmul), 1 (after
 * softcap), 2 (after the mask) or 3 (after softmax).  The (batch, head)
 * pairs run on the session's threads; bias must be safe to call from
 * several at once.  Returns 0 or IR_ENOMEM (diag set). */
struct nq_sdpa_args {
	const float *q, *k, *v;      /* [B,hq,sq,d], [B,hkv,t,d], [B,hkv,t,dv] */
	float *y, *qk;               /* [B,hq,sq,dv], [B,hq,sq,t] */
	int64_t batch, hq, hkv, sq, t, d, dv;
	float scale, softcap;
	int qk_mode;
	void (*bias)(void *ctx, int64_t b, int64_t h, int64_t i, float *row);
	void *bias_ctx;
	const float *sink;           /* [hq] extra softmax logits, or NULL */
};
int nq_sdpa(struct rt_kctx *k, const struct nq_sdpa_args *a);
/* [B, S, H, D] -> [B, H, S, D], or back when back is set. */
void nq_bshd_to_bhsd(const float *src, float *dst, int64_t b, int64_t s, int64_t h,
		     int64_t d, int back);

/* Rotary embedding of head vectors at x + b*sb + s*ss + h*sh (dim floats,
 * the first rot rotated), cos/sin rows of cache_w = rot/2 floats chosen by
 * pos[b*seq + s] (pos_n == batch*seq), pos[0] + s (pos_n == 1: an offset)
 * or b*seq + s (pos NULL). */
struct nq_rope {
	int64_t batch, seq, heads, dim, rot, sb, ss, sh, cache_w, pos_n;
	const int64_t *pos;
	const float *cos, *sin;
	int interleaved;
};
void nq_rotary(const struct nq_rope *r, const float *x, float *y);
int nq_rope_check(struct rt_kctx *k, const struct nq_rope *r, int64_t rows);
/* The tail both RotaryEmbedding kernels share, once r's shape and
 * positions are checked: output 0 (x's dtype and shape) = x rotated with
 * the cos/sin caches cv/sv (r->cos and r->sin are set to float32 copies
 * valid during the call only).  0, or IR_ENOMEM (diag set). */
int nq_rotary_run(struct rt_kctx *k, struct nq_rope *r, const struct rt_value *x,
		  const struct rt_value *cv, const struct rt_value *sv);

/* The Dropout kernel (k_norm_dropout.c), in the norm family table, and
 * LinearAttention (k_attn_linear.c), in the attn family table. */
int nq_dropout(struct rt_kctx *k);
int nq_linear_attention(struct rt_kctx *k);

/* The com.microsoft Attention and MultiHeadAttention kernels
 * (k_contrib_attn.c), listed in the contrib family table. */
int nq_ms_attention(struct rt_kctx *k);
int nq_ms_mha(struct rt_kctx *k);
/* com.microsoft GroupQueryAttention (k_gqa.c), in the contrib table. */
int nq_ms_gqa(struct rt_kctx *k);

/* Is dtype one of float16/float/double/bfloat16?  Error naming input i
 * otherwise. */
int nq_check_float(struct rt_kctx *k, const struct rt_value *t, size_t i);

#endif
