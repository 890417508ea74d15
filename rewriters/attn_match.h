/* attn_match.h: scaled dot-product attention over [B, H, S, D] heads, as
 * torch exports a Llama or Qwen decoder and as the attention lowering
 * emits it, matched for the fusions that share it (fuse-attention,
 * fuse-gqa):
 *   y = MatMul(Softmax(MatMul(Q, Transpose(K', [0, 1, 3, 2])) * scale
 *                      (+ mask), last axis), V'),
 * the scale a Mul by a constant (either order) or a Div by one (or
 * absent; or Q and K^T each a Mul by a constant, as torch's dynamo export
 * scales both by sqrt(scale)), Softmax perhaps inside Cast(to float32)
 * ... Cast(back) (float16 data: softmax in float32), K' and V' either K
 * and V or their kv heads repeated for grouped-query attention
 * (Reshape(Expand(Unsqueeze(kv, [2])))).  Every intermediate is read
 * inside the pattern only (the repeated K' perhaps by Shapes too, as
 * transformers reads key_states.shape[-2]); the shapes must be known to agree (batch,
 * heads, lengths, head size); the mask is of the data's dtype, rank 2 to
 * 4, [.., S, T] (broadcast only along batch and heads).  Its S must be
 * known to be the queries' (symbolic dims may be sums, "(past + seq)",
 * see ir/infer_sym.c); a last dim not known to be T sets expand_t.  Only
 * rewriters/ includes it. */
#ifndef OPMIG_ATTN_MATCH_H
#define OPMIG_ATTN_MATCH_H

#include "rewriters/rw_int.h"

struct rw_attn_match {
	struct ir_value *q, *k, *v, *mask; /* Q [B, hq, S, d], K and V [B, hkv, T, d] */
	double scale;
	int f32;                       /* softmax in float32 (a Cast island) */
	int mm32;                      /* the MatMuls too (rw_attn_match_mm32) */
	int mask32;                    /* a float32 mask added inside the Cast
					* island (rw_attn_match_mask32) */
	int mask_rank;
	int expand_t;                  /* the mask's last dim not known to be T */
	struct ir_node *nodes[24];     /* the pattern's nodes, last among them */
	size_t n;
	struct ir_node *last;          /* the MatMul by V' */
	struct ir_value *out;          /* y: last's output, or its Cast back (mm32) */
};

/* The pattern ending at MatMul mm: 1 and m filled, else 0. */
int rw_attn_match(const struct rw_ctx *c, struct ir_node *mm, struct rw_attn_match *m);
/* The same, float16 (bfloat16) data whose MatMuls may also run in float32
 * (as the precision pass leaves them for a target that takes MatMul in
 * float16 not): y = Cast(MatMul(Softmax(Cast(s, float32)), Cast(V',
 * float32)), back), s the scaled scores of Cast(MatMul(Cast(Q, float32),
 * Cast(Transpose(K'), float32)), back) plus the mask; m->mm32 set and
 * m->out the Cast back's output. */
int rw_attn_match_mm32(const struct rw_ctx *c, struct ir_node *mm, struct rw_attn_match *m);
/* rw_attn_match_mm32's forms, and besides, with the Softmax in float32,
 * the mask added there in float32: Softmax(Add(Cast(s, float32), mask)),
 * the mask float32 (what the fp16 pass leaves where the mask holds
 * float32's lowest, which float16 cannot: a folded causal mask); m->mask32
 * set.  Only for fusions that read the mask's values, not its dtype. */
int rw_attn_match_mask32(const struct rw_ctx *c, struct ir_node *mm, struct rw_attn_match *m);
/* Was a node of the pattern other than a Cast made by a pass?  (Casts
 * are the precision pass's, which decomposes nothing.) */
int rw_attn_made_by_pass(const struct rw_attn_match *m);

#endif
