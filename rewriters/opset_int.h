/* opset_int.h: the opset converter's adapters (opset_adapt.c) for the
 * driver (opset.c).  An adapter handles one op across one boundary
 * version B: it runs when a conversion crosses B (from < B <= to going up,
 * to < B <= from going down).  With apply 0 it only checks (1: can,
 * 0: cannot, the reason in why); with apply 1 it edits the node (1) or
 * replaces it (RW_ADAPT_REPLACED: the node is freed) in the converted
 * model's form.  The context's opset is the
 * new one while adapters run. */
#ifndef OPMIG_OPSET_INT_H
#define OPMIG_OPSET_INT_H

#include "rewriters/rw_int.h"

/* Returned by an adapter that replaced (and freed) the node. */
#define RW_ADAPT_REPLACED 2

typedef int (*rw_adapt_fn)(struct rw_ctx *c, struct ir_node *n, int up, int apply,
			   char *why, size_t size);

struct rw_adapter {
	const char *op;
	int boundary;
	rw_adapt_fn fn;
};

extern const struct rw_adapter rw_adapters[];
extern const size_t rw_n_adapters;

#endif
