/* fuse_attention.c: pass "fuse-attention": scaled dot-product attention
 * over [B, H, S, D] heads as attn_match.h matches it (torch's Llama or
 * Qwen decoder, the attention lowering's output; repeated kv heads, Cast
 * islands, dynamo's scaled Q and K) fused into Attention (opset 23) for
 * targets that declare it for the data's dtype (float16 data with the
 * softmax in float32: softmax_precision float).  K and V keep what made
 * them (a Concat of the past stays: the fused op gets no past inputs,
 * which some targets refuse).  The mask is made 4-D when shorter; a last
 * dim not known to be T (a mask made from attention_mask's
 * total_sequence_length against keys of past + seq) is expanded to T at
 * run time, Expand(mask, [1, 1, 1, T]) with T from Shape(K), which is
 * what the Add's broadcast did where the model runs (there the mask's
 * last dim is T or 1; anything else fails in both).  No node of the
 * pattern but its Casts was made by a pass (the attention lowering's
 * output stays). */
#include <string.h>

#include "rewriters/attn_match.h"

/* Expand(mask, Concat([1, 1, 1], Shape(K, 2, 3))): the mask broadcast to
 * the keys' length T as the Add broadcast it, made 4-D */
static struct ir_value *expand_to_t(struct rw_emit *e, const struct rw_attn_match *m)
{
	static const int64_t ones[3] = { 1, 1, 1 };
	struct ir_value *in[2] = { m->k, NULL };
	struct ir_node *sh, *cat;

	if (!(sh = rw_node(e, "Shape", NULL, in, 1, NULL)) ||
	    ir_node_set_int(sh, "start", 2) < 0 || ir_node_set_int(sh, "end", 3) < 0 ||
	    !(in[0] = rw_ints(e, ones, 3)))
		return NULL;
	in[1] = sh->outputs[0];
	if (!(cat = rw_node(e, "Concat", NULL, in, 2, NULL)) ||
	    ir_node_set_int(cat, "axis", 0) < 0)
		return NULL;
	return rw_op(e, "Expand", m->mask, cat->outputs[0]);
}

static int fuse(struct rw_ctx *c, struct rw_attn_match *m)
{
	const struct ir_vtype *t = rw_type(c, m->q);
	struct ir_value *in[4] = { m->q, m->k, m->v, m->mask };
	int64_t axes[2] = { 0, 1 };
	struct rw_emit e;
	struct ir_node *n;

	if (!t || (t->dtype != IR_DTYPE_FLOAT && t->dtype != IR_DTYPE_FLOAT16 &&
		   t->dtype != IR_DTYPE_BFLOAT16) || c->opset < 23 || rw_attn_made_by_pass(m) ||
	    !rw_target_accepts(c, "", "Attention", t->dtype))
		return 0;
	if (m->mask && m->expand_t &&
	    (!rw_target_accepts(c, "", "Shape", t->dtype) ||
	     !rw_target_accepts(c, "", "Concat", IR_DTYPE_INT64) ||
	     !rw_target_accepts(c, "", "Expand", t->dtype)))
		return 0;
	rw_begin(c, m->last, &e);
	if (m->mask && m->expand_t)   /* 4-D, its last dim T */
		in[3] = expand_to_t(&e, m);
	else if (m->mask && m->mask_rank < 4)   /* 4-D (some targets take no other rank) */
		in[3] = rw_unsqueeze(&e, m->mask, axes, (size_t)(4 - m->mask_rank));
	if (m->mask && !in[3])
		e.failed = 1;
	n = e.failed ? NULL : rw_node(&e, "Attention", NULL, in, m->mask ? 4 : 3,
				      m->last->outputs[0]);
	if (n && (ir_node_set_float(n, "scale", (float)m->scale) < 0 ||
		  (m->f32 && ir_node_set_int(n, "softmax_precision", IR_DTYPE_FLOAT) < 0)))
		e.failed = 1;
	return rw_fuse_finish(c, &e, m->nodes, m->n, m->last);
}

static int fuse_at(struct rw_ctx *c, struct ir_node *n)
{
	struct rw_attn_match m;

	if (strcmp(ir_s(n->op_type), "MatMul") || (n->domain && *n->domain) || !rw_attn_match(c, n, &m))
		return 0;
	return fuse(c, &m);
}

RW_FUSION(fuse_attention, "fuse-attention",
	  "MatMul/Transpose/Mul (or Div)/Add/Softmax/MatMul scaled dot-product attention, "
	  "with repeated kv heads, fused into Attention (opset 23)",
	  fuse_at);
