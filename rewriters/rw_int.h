/* rw_int.h: what passes share: emitting replacement nodes (named after the
 * node they replace, placed where it was, with provenance), constants in
 * the data's dtype, opset-aware builders for ops whose form changed
 * (Unsqueeze/Squeeze/Reduce*), attribute readers with defaults,
 * constant-value lookups, the fusion passes' walk and a seeded run of the
 * model.  Only rewriters/ includes it. */
#ifndef OPMIG_RW_INT_H
#define OPMIG_RW_INT_H

#include "rewriters/rewrite.h"

/* A rewrite of one node in progress. */
struct rw_emit {
	struct rw_ctx *c;
	struct ir_graph *g;
	struct ir_node *origin;        /* detached; freed by rw_end */
	size_t pos;                    /* where the next node goes */
	int k;                         /* nodes and values made so far */
	int dtype;                     /* the data dtype (constants use it) */
	size_t n_emitted;
	int failed;                    /* out of memory along the way */
	char base[160];                /* name prefix */
};

/* Detach n and start replacing it. */
int rw_begin(struct rw_ctx *c, struct ir_node *n, struct rw_emit *e);
/* Finish: free the original, log the rewrite; rc is passed through, and
 * an allocation failure on the way becomes IR_ENOMEM. */
int rw_end(struct rw_emit *e, int rc);

/* Log a graph pass's run (node and op ""; n_emitted: what it changed). */
int rw_log_graph(struct rw_ctx *c, size_t changed);

/* Provenance (prov.c): node `name` was emitted by log entry `entry`; the
 * entry that emitted a node (-1: a node of the model). */
int rw_prov_add(struct rw_ctx *c, const char *name, long entry);
long rw_prov_find(const struct rw_ctx *c, const char *name);

/* A node op(in...) of the default domain (domain: another) placed next;
 * out NULL makes a fresh output.  Returns the node (NULL on failure, and
 * e->failed is set); its first output is node->outputs[0]. */
struct ir_node *rw_node(struct rw_emit *e, const char *op, const char *domain,
			struct ir_value *const *in, size_t n_in,
			struct ir_value *out);
/* Shorthand: op(a) or op(a, b) with a fresh output value. */
struct ir_value *rw_op(struct rw_emit *e, const char *op, struct ir_value *a,
		       struct ir_value *b);
/* The same, writing into out (the replaced node's output). */
struct ir_value *rw_op_to(struct rw_emit *e, const char *op, struct ir_value *a,
			  struct ir_value *b, struct ir_value *out);

/* Constants (initializers): a scalar or tensor of dtype from doubles, and
 * a 1-D int64 list. */
struct ir_value *rw_scalar(struct rw_emit *e, int dtype, double v);
struct ir_value *rw_const(struct rw_emit *e, int dtype, int rank,
			  const int64_t *dims, const double *v);
struct ir_value *rw_ints(struct rw_emit *e, const int64_t *v, size_t n);

/* Ops whose signature depends on the opset, in the model's form. */
struct ir_value *rw_unsqueeze(struct rw_emit *e, struct ir_value *x,
			      const int64_t *axes, size_t n);
struct ir_value *rw_squeeze(struct rw_emit *e, struct ir_value *x,
			    const int64_t *axes, size_t n);
struct ir_value *rw_reduce(struct rw_emit *e, const char *op, struct ir_value *x,
			   const int64_t *axes, size_t n, int keepdims,
			   struct ir_value *out);

/* Slice (steps NULL: all 1; before opset 10 they must be), constant
 * Pad (pads of 2 rank values, begins then ends), Reshape and Transpose
 * in the model's form. */
struct ir_value *rw_slice(struct rw_emit *e, struct ir_value *x, const int64_t *starts,
			  const int64_t *ends, const int64_t *axes, const int64_t *steps,
			  size_t n, struct ir_value *out);
struct ir_value *rw_pad(struct rw_emit *e, struct ir_value *x, const int64_t *pads,
			size_t rank, struct ir_value *out);
struct ir_value *rw_reshape(struct rw_emit *e, struct ir_value *x, const int64_t *shape,
			    size_t n, struct ir_value *out);
struct ir_value *rw_transpose(struct rw_emit *e, struct ir_value *x, const int64_t *perm,
			      size_t n, struct ir_value *out);

/* erf(x) as a polynomial (Abramowitz and Stegun 7.1.26, |error| <=
 * 1.5e-7 in exact arithmetic) from Max, Mul, Add, Sub, Div and Exp only;
 * written into out (NULL: a fresh value).  The ops it emits: */
extern const char *const rw_erf_poly_ops[];
struct ir_value *rw_emit_erf_poly(struct rw_emit *e, struct ir_value *x,
				  struct ir_value *out);

/* Attributes of a node with the spec's default when absent. */
int64_t rw_attr_int(const struct ir_node *n, const char *name, int64_t dflt);
float rw_attr_float(const struct ir_node *n, const char *name, float dflt);
const char *rw_attr_str(const struct ir_node *n, const char *name,
			const char *dflt);
const int64_t *rw_attr_ints(const struct ir_node *n, const char *name, size_t *k);
const float *rw_attr_floats(const struct ir_node *n, const char *name, size_t *k);

/* The values of a constant integer input (initializer, Constant, or
 * folded by inference), at most cap of them copied to out; 1 when known
 * and they fit, 0 otherwise. */
int rw_const_ints(const struct rw_ctx *c, const struct ir_value *v,
		  int64_t *out, size_t cap, size_t *n);
int rw_is_const(const struct rw_ctx *c, const struct ir_value *v);
/* The rank of a value, -1 unknown. */
int rw_rank(const struct rw_ctx *c, const struct ir_value *v);

/* A scalar float constant input (initializer, Constant or folded by
 * inference): 1 and *out when known, 0 otherwise. */
int rw_const_double(const struct rw_ctx *c, const struct ir_value *v, double *out);

/* Clip(x, lo, hi) in the model's form (attributes before opset 11). */
struct ir_value *rw_clip(struct rw_emit *e, struct ir_value *x, double lo,
			 double hi, struct ir_value *out);

/* ---- the strict schema check (strict.c) ------------------------------ */

/* Run by rw_refresh after inference: the first time, note the input
 * model's faulty nodes; later, a fault on any other node is an IR_EINVAL
 * error naming the pass (c->pass, else the node's provenance) and sets
 * c->invalid. */
int rw_strict_check(struct rw_ctx *c);
/* The final model against the check, every fault counted (the input's
 * too): 1 valid, 0 invalid (why says which node and how), or < 0. */
int rw_strict_final(struct rw_ctx *c, char *why, size_t size);
/* expand_sln.c: a default-domain SimplifiedLayerNormalization left in the
 * main graph (expand-simplified-ln could not expand it; onnx has no such
 * op): 1 with why ("the migrated model is invalid: .."), else 0. */
int rw_sln_left(const struct rw_ctx *c, char *why, size_t size);

/* ---- constant tensors (constval.c) ---------------------------------- */

struct rt_value;
/* An initializer's value as a new runtime tensor (the caller unrefs it);
 * NULL when v is no initializer (or one a graph input may override). */
struct rt_value *rw_init_value(const struct ir_value *v);
/* A new initializer holding a copy of t. */
struct ir_value *rw_const_value(struct rw_emit *e, const struct rt_value *t);
/* The name of the next new initializer (rw_const_value's), for a tensor
 * made otherwise; and t (taken, NULL: failed) added as that initializer. */
void rw_const_name(struct rw_emit *e, char *name, size_t size);
struct ir_value *rw_const_tensor(struct rw_emit *e, struct ir_tensor *t);
/* t (copied) becomes the initializer of v, a value the replaced node
 * produced, keeping its name (the node emits nothing else). */
int rw_const_into(struct rw_emit *e, const struct rt_value *t, struct ir_value *v);
/* The values of a small constant (float or integer), at most cap. */
int rw_const_doubles(const struct rw_ctx *c, const struct ir_value *v,
		     double *out, size_t cap, size_t *n);
/* A value's dims when all are static (rank <= IR_INFER_MAX_RANK). */
int rw_static_shape(const struct rw_ctx *c, const struct ir_value *v, int64_t *dims,
		    int *rank);
/* The product of a value's dims when its rank is known and all are
 * static (1 for a scalar), -1 otherwise (v may be NULL). */
double rw_static_numel(const struct rw_ctx *c, const struct ir_value *v);
/* Read by exactly one node and no graph output. */
int rw_single_use(const struct ir_value *v);

/* ---- weights scaled per channel (scaled_weight.c) -------------------- */

/* *out: a new tensor named name equal to w (float or double, an
 * initializer's tensor, borrowed) with element e multiplied by
 * s[(e / inner) % n_ch] in double and rounded to w's dtype (s copied).
 * Where w's payload is mapped (ir_tensor_shares_payload) it is computed a
 * piece at a time when the saver writes it or something reads it, never
 * held; a weight whose bytes opmig owns is scaled at once (a computed
 * tensor would keep a copy of it). */
int rw_scaled_weight(struct ir_tensor *w, const char *name, int64_t n_ch, int64_t inner,
		     const double *s, struct ir_tensor **out, struct ir_diag *d);

/* ---- matching patterns (fuse_util.c) -------------------------------- */

/* v's producer when it is op (default domain, same graph), else NULL. */
struct ir_node *rw_producer(const struct ir_value *v, const char *op);
/* v's only reader when it is op (and v no graph output), else NULL. */
struct ir_node *rw_sole_user(const struct ir_value *v, const char *op);
/* The operand of binary n that is not v (NULL if v is not one). */
struct ir_value *rw_other_input(const struct ir_node *n, const struct ir_value *v);
/* v is a constant scalar within 1e-4 (relative) of want. */
int rw_is_scalar_near(const struct rw_ctx *c, const struct ir_value *v, double want);
/* A one-element constant (rw_const_double's, or a float16 or bfloat16
 * initializer, whose values inference does not keep): 1 and *out. */
int rw_const_scalar(const struct rw_ctx *c, const struct ir_value *v, double *out);
/* Are two inferred dims known to be equal (the same static value, or the
 * same symbolic name)?  Unknown dims never are. */
int rw_dim_same(const struct ir_vdim *a, const struct ir_vdim *b);
/* Remove those of the k (<= 32) nodes whose outputs nobody reads, until
 * none is left to remove (pattern nodes a fusion bypassed). */
void rw_remove_unread(struct ir_graph *g, struct ir_node *const *nodes, size_t k);
/* A lowering's refusal of a node: pass p's check said why.  Kept with the
 * node's name and op (a later node at the same address is not it). */
struct rw_refusal {
	const struct ir_node *node;
	char *name, *op, *text;        /* text: "PASS: why" (owned) */
};
/* Record it (once per node and text; main-graph nodes of c's model only):
 * 0, or IR_ENOMEM. */
int rw_refusal_add(struct rw_ctx *c, const struct ir_node *n, const char *pass,
		   const char *why);
/* The refusals of node n, "; "-joined, appended to *s (malloc'd, may be
 * NULL; replaced): 0, or IR_ENOMEM. */
int rw_refusals_append(const struct rw_ctx *c, const struct ir_node *n, char **s);

/* A fusion's end: rw_end(e) (the fused node replacing last), then the k
 * pattern nodes other than last that nobody reads any more removed;
 * 1 done or rw_end's negative status. */
int rw_fuse_finish(struct rw_ctx *c, struct rw_emit *e, struct ir_node **nodes, size_t k,
		   const struct ir_node *last);
/* Was one of the k nodes created by a pass (its doc says "opmig: ...")?
 * Fusions leave those alone: a decomposition ran because the target
 * could not take the fused op for that node, and fusing would undo it. */
int rw_made_by_pass(struct ir_node *const *nodes, size_t k);
/* Import domain dom (version 1) unless the model imports it already
 * (a fused op of another domain); IR_ENOMEM on failure. */
int rw_domain_ensure(struct ir_model *md, const char *dom);
/* The loop of a fusion pass: fuse(c, n) on each main-graph node in order
 * (0: nothing there, 1: fused, negative: stop with that status), in
 * sweeps: the walk goes on after a fusion, inference is refreshed after a
 * sweep that fused anything, and sweeps repeat until one fuses nothing.
 * Values a fusion made have no inferred type until then (fusions must
 * read an unknown type as "cannot").  *changed counts the fusions. */
int rw_fuse_each(struct rw_ctx *c, int (*fuse)(struct rw_ctx *c, struct ir_node *n),
		 size_t *changed);
/* Define a pass of kind RW_FUSE that runs rw_fuse_each with at. */
#define RW_FUSION(id, nm, sum, at) \
	static int run_##id(struct rw_ctx *c, size_t *changed) \
	{ \
		return rw_fuse_each(c, at, changed); \
	} \
	const struct rw_pass rw_pass_##id = { \
		.name = nm, .summary = sum, .kind = RW_FUSE, .run = run_##id }

/* ---- preconditions (checks.c) --------------------------------------- */

int rw_dtype_is_float(int dtype);
/* Read by a node or a graph output of its scope. */
int rw_value_used(const struct ir_value *v);
/* The usual check of a decomposition of float data: input 0 and output 0
 * present, the dtype known and float, the model's default-domain opset at
 * least min_opset (so emitted binary ops broadcast), outputs beyond the
 * first unused.  0 with the reason in why otherwise. */
int rw_check_float_node(struct rw_ctx *c, const struct ir_node *n,
			int min_opset, char *why, size_t size);
/* The same without the outputs' check (a pass that produces them). */
int rw_check_float_input(struct rw_ctx *c, const struct ir_node *n,
			 int min_opset, char *why, size_t size);

/* The rank of input 0 (1 to max_rank) and the node's `axis` attribute
 * (dflt when absent) made non-negative; 0 with the reason otherwise. */
int rw_node_axis(struct rw_ctx *c, const struct ir_node *n, int64_t dflt, int max_rank,
		 int *rank, int64_t *axis, char *why, size_t size);

/* ---- running the model (sample.c) ------------------------------------ */

struct rt_session;
struct rt_opts;
struct rt_dim_set;
/* An interpreter session of m (options o) with one set of seeded random
 * inputs (seed 1; symbolic dims as --dim gives them, n_dims of dims), what
 * fold-constants runs and --fit-memory plans.  rw_sample_release frees
 * both; it is safe after a failed rw_sample_init. */
struct rw_sample {
	struct rt_session *s;
	struct rt_value **ins;        /* n_ins */
	size_t n_ins;
};
int rw_sample_init(struct rw_sample *r, struct ir_model *m, const struct rt_opts *o,
		   const struct rt_dim_set *dims, size_t n_dims, struct ir_diag *d);
void rw_sample_release(struct rw_sample *r);

/* Define a node pass of kind RW_DECOMPOSE with static tables. */
#define RW_DECOMPOSITION(id, nm, sum, m, v, chk, vchk, app) \
	const struct rw_pass rw_pass_##id = { \
		.name = nm, .summary = sum, .kind = RW_DECOMPOSE, .matches = m, \
		.variants = v, .n_variants = sizeof(v) / sizeof(v[0]), \
		.check = chk, .vcheck = vchk, .apply = app }
/* The same with how exact each variant is (rw_pass.approx). */
#define RW_DECOMPOSITION_A(id, nm, sum, m, v, a, chk, vchk, app) \
	_Static_assert(sizeof(a) == sizeof(v) / sizeof(v[0]), "one per variant"); \
	const struct rw_pass rw_pass_##id = { \
		.name = nm, .summary = sum, .kind = RW_DECOMPOSE, .matches = m, \
		.variants = v, .n_variants = sizeof(v) / sizeof(v[0]), .approx = a, \
		.check = chk, .vcheck = vchk, .apply = app }

/* nbits.c: the dtype the target takes a MatMulNBits' codes of `bits` in
 * as DequantizeLinear-21 input at c's opset (uint4 / uint8 with integer
 * zero points; without zero_points, int4 / int8 where the target takes
 * only those), 0 when it takes neither. */
int rw_nbits_codes(const struct rw_ctx *c, int bits, int zero_points);
/* nbits.c: does the target take the cast-codes form (uint8 codes through
 * Cast, Sub and Mul in data of dtype) at c's opset? */
int rw_nbits_cast_form(struct rw_ctx *c, int dtype);

#endif
