/* attn_build.h: node builders the rotary and attention lowerings share
 * (rotary.c, attention.c; a grouped-query attention lowering can use them
 * too): the rotation of head vectors by cos/sin rows, a constant causal
 * mask, and scaled dot-product attention over [B, H, S, D] heads with
 * kv-head sharing, softcap and an additive bias.  Only rewriters/ includes
 * it; the values they return belong to the graph being rewritten. */
#ifndef OPMIG_ATTN_BUILD_H
#define OPMIG_ATTN_BUILD_H

#include "rewriters/rw_int.h"

/* x (rank 4, head vectors of `dim` in its last axis) with its first rot
 * features rotated: pairs (j, j + rot/2) (or (2j, 2j + 1) when
 * interleaved) by cos and sin (of rank cos_rank <= 4), which broadcast to
 * x's shape with the last dim rot / 2; the features from rot on pass
 * through.  Written into out (NULL: a fresh value).  Emits Slice, Mul,
 * Sub, Add, Concat; interleaved 1 views the pairs as [.., rot / 2, 2]
 * (rank 5: Reshape, Unsqueeze), interleaved 2 stays at rank 4, gathering
 * the pairs into halves and back (Gather; rot <= RW_ROPE_MAX_ROT). */
#define RW_ROPE_MAX_ROT 4096
struct ir_value *rw_rope_emit(struct rw_emit *e, struct ir_value *x, struct ir_value *cos,
			      struct ir_value *sin, int cos_rank, int64_t dim, int64_t rot,
			      int interleaved, struct ir_value *out);

/* A constant [s, t] of the data's dtype: keep where key j may be seen by
 * query i (j <= i + past), masked elsewhere. */
struct ir_value *rw_causal_const(struct rw_emit *e, int64_t s, int64_t t, int64_t past,
				 double keep, double masked);

/* The lowest finite value of a float dtype, what onnxruntime adds where
 * attention masks a key (so that masked scores stay finite). */
double rw_attn_lowest(int dtype);

/* Scaled dot-product attention. */
struct rw_sdpa {
	struct ir_value *q, *k, *v;    /* [B, hq, S, d], [B, hkv, T, d], [B, hkv, T, dv] */
	int64_t hq, hkv, d, dv;        /* static; hq a multiple of hkv (query head
					* h reads kv head h / (hq / hkv)) */
	double scale, softcap;         /* softcap 0: none */
	struct ir_value *bias;         /* additive, broadcasting to [B, hq, S, T],
					* or NULL */
	struct ir_value *qk;           /* the scores after stage qk_mode (0 scaled,
					* 1 softcapped, 2 biased, 3 softmax), or NULL;
					* the caller maps a stage that is absent (1
					* without softcap, 2 without bias) to the one
					* before */
	int qk_mode;
	struct ir_value *out;          /* [B, hq, S, dv]; NULL: a fresh value */
};
/* softmax(cap(q k^T scale) + bias) v; returns the output.  Emits
 * Transpose, MatMul, Mul, Softmax; Add with a bias; Div and Tanh with a
 * softcap; Unsqueeze, Expand and Reshape when hq != hkv. */
struct ir_value *rw_sdpa_emit(struct rw_emit *e, const struct rw_sdpa *a);

#endif
