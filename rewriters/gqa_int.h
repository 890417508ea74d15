/* gqa_int.h: what the group-query-attention lowering's two files share:
 * gqa.c (the checks, the pass, the static path: constant masks, Concat
 * of the past) and gqa_dyn.c (the run-time path: positions, present and
 * mask built from the dims and seqlens_k where the model runs).  Only
 * rewriters/ includes it; the values it returns belong to the graph
 * being rewritten. */
#ifndef OPMIG_GQA_INT_H
#define OPMIG_GQA_INT_H

#include "rewriters/attn_build.h"

/* Node n's input i is given. */
static inline int gqa_has(const struct ir_node *n, size_t i)
{
	return n->n_inputs > i && n->inputs[i];
}

/* What the lowering reads of a node: the static head counts and head
 * size; the batch, sequence and past rows where static (the static path;
 * -1 elsewhere); the rotary features (do_rotary), else 0; whether the
 * static path assumes seqlens_k unpadded (gqa.c's gqa_seqlens). */
struct gqa_dims {
	int64_t b, s, nh, kvh, d, pm;
	int64_t rot;
	int assumed;                   /* static path: seqlens_k taken as total - 1 */
};

/* The run-time values of gqa_dyn.c's path, int64 unless said:
 * onnxruntime places the S new rows of entry b after pb[b] past rows,
 * pb[b] = seqlens_k[b] + 1 - S, or 0 in the first prompt (S equal to
 * total_sequence_length) and without a past; the present holds P =
 * max(total, past rows) rows (S without a past). */
struct gqa_run {
	struct ir_value *pos;          /* [B, S] ([1, S] without a past): pb + i */
	struct ir_value *keys;         /* [P]: 0 .. P - 1 */
	struct ir_value *sl4;          /* seqlens_k as [B, 1, 1, 1] */
	struct ir_value *idx;          /* [B, kvh, P, d]: the row of Concat(past,
					* new) present row j copies (with a past) */
	struct ir_value *valid;        /* [B, 1, P, 1] bool: row j holds a past or
					* new row, else 0 (with a past) */
	int64_t kvh, d;
};

/* Build r's values for node n (being replaced through e). */
void gqa_run_init(struct rw_ctx *c, struct rw_emit *e, const struct ir_node *n,
		  const struct gqa_dims *g, struct gqa_run *r);
/* The cos or sin rows of the queries' positions, [B, 1, S, rot / 2]. */
struct ir_value *gqa_run_rows(struct rw_emit *e, const struct gqa_run *r,
			      struct ir_value *cache);
/* The present [B, kvh, P, d] of past (NULL: none) and the new rows cur
 * [B, kvh, S, d], written into out (NULL: fresh). */
struct ir_value *gqa_run_present(struct rw_emit *e, const struct gqa_run *r,
				 struct ir_value *past, struct ir_value *cur,
				 struct ir_value *out);
/* The additive mask [B, 1, S, P]: lowest where key j lies after query
 * i's position, after seqlens_k[b], or (window > 0) at or before the
 * position - window; 0 elsewhere. */
struct ir_value *gqa_run_mask(struct rw_emit *e, const struct gqa_run *r, int64_t window,
			      double lowest);

#endif
