/* dtype_int.h: what the dtype passes (rewriters/dtype.c: narrow-int64,
 * narrow-float64) and the precision pass (rewriters/precision.c: fp16)
 * share: the type a node's input or output has in its schema at the
 * model's opset, Casts placed next to a value, initializers and attribute
 * tensors converted to another dtype, declared types updated; cast-like
 * (rewriters/castlike.c) asks it which types Cast takes.  The helpers live
 * in dtype_util.c; the fp16 pass's norm statistics in precision_norm.c. */
#ifndef OPMIG_DTYPE_INT_H
#define OPMIG_DTYPE_INT_H

#include "ir/registry.h"
#include "rewriters/rw_int.h"

/* The schema of a main-graph node at the model's opset: NULL for other
 * domains, unknown ops and nodes with subgraph attributes (whose types
 * depend on their bodies). */
const struct ir_op_schema *rw_dt_schema(const struct rw_ctx *c, const struct ir_node *n);
/* The formal type of input (input = 1) or output i: a constraint name
 * ("T") or a fixed type ("tensor(int64)"); NULL beyond the signature. */
const char *rw_dt_slot(const struct ir_op_schema *s, int input, size_t i);
/* Is the formal type a constraint name (not a fixed type)? */
int rw_dt_is_var(const char *type);
/* Does the formal type (constraint or fixed) admit tensors of dtype? */
int rw_dt_admits(const struct ir_op_schema *s, const char *type, int dtype);
/* Is constraint `type` bound by one of the node's present inputs? */
int rw_dt_var_bound_by_input(const struct ir_op_schema *s, const struct ir_node *n,
			     const char *type);
/* The dtype of a value: inferred, else declared, else its initializer's. */
int rw_dt_dtype(const struct rw_ctx *c, const struct ir_value *v);
/* Read by a node of a nested graph (captured from the outer scope)? */
int rw_dt_captured(const struct ir_value *v);

/* A Cast of `in` to dtype `to` appended to g (the pass sorts the graph
 * afterwards), writing `out`, or a fresh value named after hint when out
 * is NULL; the node records the pass in its doc string.  NULL when out of
 * memory (an error is in c->d). */
struct ir_value *rw_dt_cast(struct rw_ctx *c, struct ir_graph *g, struct ir_value *in,
			    int to, struct ir_value *out, const char *hint);
/* A copy of tensor t converted to dtype `to` (as Cast converts), named
 * `name`; NULL with an error in c->d. */
struct ir_tensor *rw_dt_convert_tensor(struct rw_ctx *c, struct ir_tensor *t, int to,
				       const char *name);
/* Is v a constant initializer: not a graph input, or one before IR 4
 * (when every initializer was listed as an input too)? */
int rw_dt_const_init(const struct rw_ctx *c, const struct ir_value *v);
/* Replace v's initializer by its conversion to `to` (same name). */
int rw_dt_convert_init(struct rw_ctx *c, struct ir_graph *g, struct ir_value *v, int to);
/* A new initializer holding v's initializer converted to `to`, named
 * after hint; NULL with an error in c->d. */
struct ir_value *rw_dt_copy_init(struct rw_ctx *c, struct ir_graph *g,
				 struct ir_value *v, int to, const char *hint);
/* Set the element type of every declaration of v (graph input, output,
 * value_info) to dtype. */
void rw_dt_declare(struct ir_graph *g, const struct ir_value *v, int dtype);
/* Point output k of n at a fresh value (named after hint) and return it;
 * the old output value is left without producer. */
struct ir_value *rw_dt_split_output(struct rw_ctx *c, struct ir_graph *g,
				    struct ir_node *n, size_t k, const char *hint);
/* Verify, sort and re-infer after a pass changed g. */
int rw_dt_finish(struct rw_ctx *c, struct ir_graph *g);

/* The decomposed norms whose statistics the fp16 pass keeps in float32
 * (precision_norm.c): how many of each kind, and the first's Div (layer
 * norm) or Sqrt (RMS norm). */
struct rw_fp16_norms {
	size_t n_ln, n_rms;
	const struct ir_node *first_ln, *first_rms;
};
/* The reasons rw_fp16_norm_stats gives (compared by address). */
extern const char *const rw_fp16_ln_stats;
extern const char *const rw_fp16_rms_stats;
/* Set why[i] (g->n_nodes entries, NULL where unset) to one of the
 * reasons above for each node of g that computes a decomposed layer
 * norm's or RMS norm's statistics, and count the norms in *found; a
 * pattern with a node for which whole() is true is left alone. */
int rw_fp16_norm_stats(const struct rw_ctx *c, struct ir_graph *g, const char **why,
		       int (*whole)(const struct ir_node *), struct rw_fp16_norms *found);

#endif
