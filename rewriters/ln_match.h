/* ln_match.h: LayerNorm as PyTorch and TensorFlow export it (see
 * fuse_layer_norm.c for the form), matched for the passes that share it:
 * fuse-layer-norm (into LayerNormalization-17) and fp16 (which keeps the
 * statistics in float32).  Only rewriters/ includes it. */
#ifndef OPMIG_LN_MATCH_H
#define OPMIG_LN_MATCH_H

#include "rewriters/rw_int.h"

struct rw_ln_match {
	struct ir_value *x, *gamma, *beta;   /* beta NULL when absent */
	int64_t axis;                        /* the first normalized axis */
	double eps;
	/* ReduceMean, Sub, Pow or Mul, ReduceMean, Add, Sqrt, Div (the
	 * statistics and the normalized result), then the Mul by gamma */
	struct ir_node *nodes[12];
	size_t n;
	struct ir_node *last;                /* the Mul by gamma or Add of beta */
};

/* The pattern whose Div is div: 1 and *m, or 0. */
int rw_ln_match(const struct rw_ctx *c, struct ir_node *div, struct rw_ln_match *m);

#endif
