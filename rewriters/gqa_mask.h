/* gqa_mask.h: the proofs fuse-gqa makes of the additive mask a decoder's
 * attention adds to its scores [B, hq, S, T] before the fusion into
 * GroupQueryAttention, which masks causally by itself (query i at
 * position T - S + i sees keys j <= T - S + i) and masks the keys after
 * seqlens_k (attention_mask's right padding).  A mask is accepted only
 * where it is proven, by values or by structure (never by names), to be
 * one of (m: a value at most -1e4, the dtype's lowest, -1e9 or -inf, under
 * which the masked keys' weights underflow to 0; perhaps Cast from float32
 * to float16, as the fp16 pass leaves a mask of float32's lowest):
 *   - the causal mask and attention_mask's padding as transformers before
 *     4.38 is exported: Where(And(C, Unsqueeze(Cast(attention_mask, bool),
 *     [1, 2])), 0, m) (And's operands either way), attention_mask a 2-D
 *     integer graph input [B, T], C a constant bool [.., S, T] holding
 *     exactly j <= T - S + i (static dims) or LessOrEqual(Range(0, T, 1),
 *     Unsqueeze(Range(a, T, 1), [1])) (or GreaterOrEqual swapped), T =
 *     Gather(Shape(attention_mask), 1), the second Range known by
 *     inference to have S elements (so a = T - S);
 *   - the same as transformers >= 4.38 builds it from cache_position
 *     (_prepare_4d_causal_attention_mask_with_cache_position) and
 *     torch.onnx exports it (see cache_mask in gqa_mask.c);
 *   - the causal mask alone (no attention_mask): at static dims a
 *     constant [.., S, T] (the mask folded) 0 where j <= T - S + i and at
 *     most -1e4 elsewhere, or Where(C, 0, m) or Where(C', m, 0) of a
 *     constant bool C (seen) or C' (masked); at any dims Where(C, 0, m)
 *     of C the Ranges above with T the keys' length, or Trilu(ones,
 *     lower) with S and T known equal (no past), or Where(C', m, 0) of C'
 *     = Equal(Trilu(ones, lower), 0) (torch's export of
 *     scaled_dot_product_attention with is_causal, which counts from the
 *     first key: the causal mask only without a past) or Trilu(ones,
 *     upper, 1).
 * With symbolic dims attention_mask's T and the keys' T are taken to be
 * equal when both are symbolic (the Add's broadcast makes them so where
 * the model runs).  Only rewriters/ includes it. */
#ifndef OPMIG_GQA_MASK_H
#define OPMIG_GQA_MASK_H

#include "rewriters/rw_int.h"

#define GQA_MASKED_MAX (-1e4)      /* the mask's masked value at most */

/* What the mask is checked against: the queries [B, hq, S, d] and the
 * keys [B, hkv, T, d] (their inferred types), the past key [B, hkv, P, d]
 * the keys are concatenated from (NULL: none, P = 0), and the static S
 * and T (-1 where symbolic). */
struct gqa_mask_in {
	const struct ir_vtype *qt, *kt;
	const struct ir_value *past;
	int64_t s, t;
};

/* The mask is one of the forms above: 1 and *amask (attention_mask, NULL
 * for the causal mask alone), else 0 and why (one line, lower case). */
int rw_gqa_mask_proven(const struct rw_ctx *c, struct ir_value *mask,
		       const struct gqa_mask_in *in, struct ir_value **amask, char *why,
		       size_t size);

#endif
