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

/* attrs: the attributes the adapter converts or removes, ','-separated
 * (NULL: none); the driver drops the others that the new version lacks
 * when they hold the old version's default, and refuses the node when
 * they do not.  An op with an adapter across the conversion leaves its
 * inputs and outputs to the adapters; the others may only lose trailing
 * "" slots. */
struct rw_adapter {
	const char *op;
	int boundary;
	rw_adapt_fn fn;
	const char *attrs;
};

/* Adapters of the other files (the table is in opset_adapt.c). */
#define RW_ADAPTER(name) int rw_adapt_##name(struct rw_ctx *c, struct ir_node *n, int up, \
					      int apply, char *why, size_t size)
/* opset_pool.c */
RW_ADAPTER(pool10);
RW_ADAPTER(pool_dilations);
/* opset_resize.c */
RW_ADAPTER(upsample);
RW_ADAPTER(upsample9);
RW_ADAPTER(resize10);
RW_ADAPTER(resize11);
RW_ADAPTER(resize13);
RW_ADAPTER(resize18);
RW_ADAPTER(resize19);
RW_ADAPTER(gridsample20);
/* opset_values.c */
RW_ADAPTER(bn7);
RW_ADAPTER(bn9);
RW_ADAPTER(bn14);
RW_ADAPTER(bcast7);
RW_ADAPTER(bcast8);
RW_ADAPTER(gemm11);
RW_ADAPTER(reshape14);
RW_ADAPTER(scan9);
RW_ADAPTER(quant13);
RW_ADAPTER(axes11);
RW_ADAPTER(scatter);
RW_ADAPTER(constant);
RW_ADAPTER(roialign16);
RW_ADAPTER(dft20);
RW_ADAPTER(saturate);
RW_ADAPTER(select_last);
RW_ADAPTER(shape15);
RW_ADAPTER(pad18);
RW_ADAPTER(pad19);
RW_ADAPTER(split18);
RW_ADAPTER(reduction);
RW_ADAPTER(group21);

/* Helpers the adapters share (opset_adapt.c). */
/* An emitter bound to n's graph that does not detach n: new constants
 * and nodes go before n. */
void rw_adapt_emit_at(struct rw_ctx *c, struct ir_node *n, struct rw_emit *e);
/* Set input i of n, appending "" slots up to it. */
int rw_adapt_set_input(struct ir_node *n, size_t i, struct ir_value *v);
/* Drop trailing "" inputs. */
void rw_adapt_trim_inputs(struct ir_node *n);
/* Is input i given? */
int rw_adapt_has_in(const struct ir_node *n, size_t i);
/* An int attribute that must be absent (or hold dflt) to go below its
 * introduction; going down it is dropped. */
int rw_adapt_drop_default(struct ir_node *n, const char *name, int64_t dflt, int apply,
			  char *why, size_t size);
/* Rename n's op: 1, or IR_ENOMEM. */
int rw_adapt_rename(struct ir_node *n, const char *op);

extern const struct rw_adapter rw_adapters[];
extern const size_t rw_n_adapters;

#endif
