/* rms_match.h: RMSNorm as torch exports it (see rms_match.c for the
 * forms), matched for the fusions that share it: fuse-rms-norm (into
 * RMSNormalization-23) and fuse-skip-norm (a residual Add before it into
 * com.microsoft SkipSimplifiedLayerNormalization, with no standalone norm
 * op in between: onnx has none below opset 23).  Only rewriters/
 * includes it. */
#ifndef OPMIG_RMS_MATCH_H
#define OPMIG_RMS_MATCH_H

#include "rewriters/rw_int.h"

struct rw_rms_match {
	struct ir_value *x, *gamma;    /* the norm's input (the original's dtype), gamma */
	double eps;
	int rank;
	struct ir_node *nodes[12];     /* the pattern's nodes, last among them */
	size_t n;
	struct ir_node *last;          /* the Mul by gamma: its output is the norm's */
};

/* The pattern ending in sq's Sqrt (a default-domain Sqrt): 1 and *m, or 0. */
int rw_rms_match(const struct rw_ctx *c, struct ir_node *sq, struct rw_rms_match *m);
/* Was a node of the pattern other than a Cast made by a pass other than
 * expand-simplified-ln?  (Casts are the precision pass's, which
 * decomposes nothing; a lowering's output stays; expand-simplified-ln's
 * is an input's norm in the form the fusions take.) */
int rw_rms_made_by_pass(const struct rw_rms_match *m);

#endif
