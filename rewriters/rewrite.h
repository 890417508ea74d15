/* rewrite.h: the rewrite pass framework.  A pass is one file
 * rewriters/<name>.c with one entry point and one line in the sorted pass
 * table (rewriters/passes.c): name, one-line summary, kind, the ops it
 * matches and, per variant, the ops it emits.  Node passes (decompositions,
 * fusions) rewrite one matched node at a time after checking their
 * preconditions; a variant is chosen only if the target accepts every op it
 * emits (at the model's opset, for the node's data type), the first such
 * variant in table order winning (Gelu via Erf before Gelu via Tanh).
 * Graph passes (canonicalization, opset conversion, layout, batch, dtype,
 * precision) transform the whole model.
 *
 * Provenance: every node a pass creates is named after the node it
 * replaces and carries "opmig: PASS from NODE (OP)" in its doc string; the
 * context's log lists each rewrite.  Values the rewrite does not change keep
 * their names (a replaced node's outputs are produced, under the same
 * names, by the nodes that replace it), so tensors stay comparable across
 * the original and the rewritten model.
 *
 * Ownership: a struct rw_ctx borrows the model (which passes edit in place
 * through ir/ir.h's editing API), the target and the diag; it owns its log
 * and its inference (re-run after each pass), released by rw_ctx_release.
 *
 * Adding a pass: write rewriters/<name>.c with `const struct rw_pass
 * rw_pass_<name>` (or a node pass's check/apply functions), add one line to
 * rw_passes[] in rewriters/passes.c (sorted by name; a unit test checks),
 * a property test in tests/unit/suite_rewrite*.c, and its line in the pass
 * catalogue of man/opmig-migrate.1.
 */
#ifndef OPMIG_REWRITE_H
#define OPMIG_REWRITE_H

#include <stddef.h>
#include <stdint.h>

#include "ir/infer.h"
#include "ir/ir.h"
#include "validators/validate.h"

struct rules_target;

enum rw_kind {
	RW_CANON,        /* folding, dead code, identities: always safe */
	RW_OPSET,        /* opset conversion adapters */
	RW_DECOMPOSE,    /* an op as primitives the target has */
	RW_LAYOUT,
	RW_BATCH,        /* static dims */
	RW_DTYPE,        /* int64 -> int32, float64 -> float32 */
	RW_PRECISION,    /* fp16 */
	RW_FUSE,         /* patterns -> the target's fused op */
};

/* One way a node pass can rewrite: the ops it emits, "Op" or "domain:Op",
 * NULL-terminated. */
struct rw_variant {
	const char *name;              /* "erf", "tanh" */
	const char *const *emits;
};

struct rw_log_entry {
	const char *pass;              /* static */
	const char *variant;           /* static, or NULL */
	char *node;                    /* the rewritten node's label (owned) */
	char *op;                      /* its op type (owned) */
	size_t n_emitted;              /* nodes created */
	long parent;                   /* the entry whose rewrite emitted the
					* node, -1 for a node of the model */
};

struct rw_planner;
struct rw_prov;

/* The dims of a graph input as validation data has them (mg_data.c). */
struct rw_dim_hint {
	const char *name;              /* borrowed from the model */
	int rank;                      /* -1: none */
	int64_t dims[16];
};

struct rw_ctx {
	struct ir_model *m;
	const struct rules_target *target;  /* NULL: every op accepted */
	struct ir_infer inf;           /* types and shapes of the current model */
	int have_inf;
	struct ir_diag *d;
	int64_t opset;                 /* default-domain opset of the model */
	/* the log of rewrites, in order */
	size_t n_log, cap_log;
	struct rw_log_entry *log;
	/* while a node pass runs */
	const char *pass;
	const char *variant;
	/* what passes report: things they could not do (owned strings) */
	size_t n_notes;
	char **notes;
	/* names, layouts and dtypes the rewritten model's interface and
	 * values have relative to the original (for opmig validate --map) */
	struct val_map map;
	/* options of graph passes (set by the migrate pipeline) */
	int64_t batch;                 /* --batch N, 0 none */
	size_t n_dims;
	const struct rt_dim_set *dims; /* --dim NAME=V */
	int fp16_io;                   /* --fp16-io */
	int dry_run;                   /* --dry-run: read no weight values a
					* plan can do without */
	const char *passes;            /* --passes: the passes allowed besides
					* canonicalization (NULL: all) */
	/* the planner (plan.c): memoized plans of ops, owned; prec16: plan
	 * float32 data as float16 (the precision pass will convert it) */
	struct rw_planner *planner;
	int planner_oom;
	int probe_dtype;               /* rw_node_dtype of the planner's probe */
	int prec16;
	/* provenance (prov.c): which log entry emitted each node a node pass
	 * made; the entry of the node being rewritten while one runs */
	struct rw_prov *prov;
	long parent;
	/* the default-domain opset opset-convert brings the model to (0: the
	 * nearest the target accepts) */
	int64_t want_opset;
	/* while opset-convert decomposes a node of the old opset: that opset
	 * (rw_node_opset), else 0 */
	int64_t node_opset;
	/* sizes for the dims static-dims sets by itself (NULL: 1) */
	size_t n_hints;
	const struct rw_dim_hint *hints;
	/* symbolic dims static-dims set by itself ("NAME=V", owned), which
	 * validation must give the original too */
	size_t n_auto_dims;
	char **auto_dims;
	/* the strict schema check (strict.c): the input model's nodes that
	 * fail it (tolerated while passes run), sorted by address; set when
	 * a pass made the model invalid (c->d says how) */
	int strict_ready;
	size_t n_faulty;
	const struct ir_node **faulty;
	int invalid;
	/* why lowerings the planner tried refused main-graph nodes
	 * (rw_refusal_add), for the report's residual blockers */
	size_t n_refusals, cap_refusals;
	struct rw_refusal *refusals;
};

struct rw_pass;

/* Node passes: check says whether the node meets the preconditions (1) or
 * not (0, with the reason in why); apply rewrites it with variant v. */
typedef int (*rw_check_fn)(struct rw_ctx *c, const struct ir_node *n,
			   char *why, size_t size);
typedef int (*rw_apply_fn)(struct rw_ctx *c, struct ir_node *n, int v);
/* Whether variant v suits this node (NULL: every variant does).  The
 * planner also asks it with a probe node (rw_probe_node) that is only an
 * op type and domain, to learn which variants apply to an op another pass
 * emits: 16 inputs and outputs whose types inference does not know, no
 * attributes, no graph; rw_node_dtype gives the dtype being planned. */
typedef int (*rw_vcheck_fn)(struct rw_ctx *c, const struct ir_node *n, int v);
/* Graph passes: transform the model; *changed counts what changed. */
typedef int (*rw_run_fn)(struct rw_ctx *c, size_t *changed);

struct rw_pass {
	const char *name;
	const char *summary;
	enum rw_kind kind;
	const char *const *matches;    /* op types (default domain unless
					* "domain:Op"), NULL-terminated; NULL
					* for graph passes */
	const struct rw_variant *variants;
	size_t n_variants;
	/* per variant, how exact it is (NULL: every one is exact): 0 exact
	 * in real arithmetic and safe in floating point, 1 within about 1e-6
	 * (a polynomial for erf), 2 an approximation or numerically weaker
	 * (Gelu by tanh, Softplus as log(1 + exp(x)), which overflows).  The
	 * planner prefers exact plans. */
	const unsigned char *approx;
	rw_check_fn check;
	rw_vcheck_fn vcheck;
	rw_apply_fn apply;
	rw_run_fn run;
};

/* Does a comma-separated list of pass names (NULL: every pass) allow p?
 * Canonicalization always is. */
int rw_pass_allowed(const char *passes, const struct rw_pass *p);

/* The pass table, sorted by name. */
extern const struct rw_pass *const rw_passes[];
extern const size_t rw_n_passes;
const struct rw_pass *rw_pass_find(const char *name);
const char *rw_kind_name(enum rw_kind k);

/* ---- context ---------------------------------------------------------- */

int rw_ctx_init(struct rw_ctx *c, struct ir_model *m,
		const struct rules_target *target, struct ir_diag *d);
void rw_ctx_release(struct rw_ctx *c);
/* Verify the model and infer types and shapes again (after a change). */
int rw_refresh(struct rw_ctx *c);
/* The opset the node being rewritten is in the form of (its attributes
 * and inputs): the model's, except while opset-convert decomposes a node
 * of the opset it converts from.  Emitted nodes take c->opset's form. */
int64_t rw_node_opset(const struct rw_ctx *c);
/* Record a symbolic dim a pass made static by itself (name = value). */
int rw_auto_dim(struct rw_ctx *c, const char *name, int64_t value);
/* Record a note for the report ("tensor 'ids' stays int64: ..."). */
int rw_note(struct rw_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Does the target accept op (domain "" = ai.onnx) at the model's opset
 * for data of dtype (0: any)?  NULL target: yes. */
int rw_target_accepts(const struct rw_ctx *c, const char *domain,
		      const char *op, int dtype);
/* The largest kernel_shape the target's rules allow for ai.onnx op (the
 * attribute's max), 0 when they set none (or no target). */
int64_t rw_target_kernel_max(const struct rw_ctx *c, const char *op);
/* The data dtype of a node as the target sees it: its first input's (or
 * output's) inferred dtype; 0 unknown. */
int rw_node_dtype(const struct rw_ctx *c, const struct ir_node *n);
/* Inferred type of a value (NULL unknown). */
const struct ir_vtype *rw_type(const struct rw_ctx *c, const struct ir_value *v);

/* ---- planning, choosing and applying node passes ------------------- */

/* A plan: legal as it is (pass NULL, cost finite), lowered by pass and
 * variant (cost: the planner's, approx: the worst variant along it), or
 * none (cost INFINITY). */
struct rw_plan {
	const struct rw_pass *pass;
	int variant;
	int approx;
	double cost;
};

/* The best fully legal plan for node n on the context's target (see
 * plan.c); out->pass NULL when there is none.  Only out of memory fails. */
int rw_plan_node(struct rw_ctx *c, const struct ir_node *n, struct rw_plan *out);
/* The best plan for an op of data dtype (0 any) as a node pass emits it:
 * legal, lowered, or none. */
int rw_plan_op(struct rw_ctx *c, const char *domain, const char *op, int dtype,
	       struct rw_plan *out);
/* The dtype the planner checks data of dtype as (float32 is float16 when
 * the precision pass will convert it). */
int rw_plan_dtype(const struct rw_ctx *c, int dtype);
/* The planner's probe for an op (see rw_vcheck_fn); is n one? */
void rw_probe_node(struct ir_node *n, const char *domain, const char *op);
int rw_is_probe(const struct ir_node *n);
void rw_planner_free(struct rw_planner *p);

/* The node pass of the given kind and variant of the best fully legal
 * plan for n (rw_plan_node; RW_DECOMPOSE is the only kind with node
 * passes), or NULL. */
const struct rw_pass *rw_choose(struct rw_ctx *c, const struct ir_node *n,
				enum rw_kind kind, int *variant);
/* Apply pass p variant v to n, logging it.  The model is not refreshed:
 * call rw_refresh after a round of rewrites (inference is then current). */
int rw_apply(struct rw_ctx *c, const struct rw_pass *p, struct ir_node *n, int v);
/* Apply a graph pass; refreshes the model when something changed. */
int rw_run(struct rw_ctx *c, const struct rw_pass *p, size_t *changed);

/* Can opset-convert bring the model's default-domain opset to `to` (1),
 * or not (0, why says which node stops it)?  Nothing changes. */
int rw_opset_convertible(struct rw_ctx *c, int64_t to, char *why, size_t size);
/* After the passes of a model whose default-domain opset went down from
 * opset_in: its ir_version set to the smallest its opset and contents
 * need (what later passes folded away or added counts), never above
 * ir_in, the input's; a note when it differs from ir_in. */
int rw_opset_settle_ir(struct rw_ctx *c, int64_t ir_in, int64_t opset_in);

/* Is there a plan for n (rw_choose)?  *pass names its pass. */
int rw_can_rewrite(struct rw_ctx *c, const struct ir_node *n, const char **pass);

/* The scanner's rewrite hook (scan_options.can_rewrite; scan_hook.c):
 * ctx is a struct rw_ctx bound to the model being scanned.  A node is
 * rewritable by a planned lowering, by fold-constants, or by "fp16" (see
 * rw_precision_fix); for a node only int8 would fix, *pass is
 * "--precision int8" while it stays blocked. */
struct scan_node;
struct scan_verdict;
int rw_scan_hook(void *ctx, const struct rules_target *t, const struct scan_node *sn,
		 const struct scan_verdict *v, const char **pass);
/* A node blocked only by its data types, being float32: does float16 fix
 * it (the target takes the op in float16 and prefers fp16 or says
 * nothing), or only int8 (quantization)? */
enum { RW_FIX_NONE, RW_FIX_FP16, RW_FIX_INT8 };
int rw_precision_fix(struct rw_ctx *c, const struct ir_node *n, const struct scan_verdict *v);

/* ---- provenance (prov.c) --------------------------------------------- */

/* The chain of rewrites that log entry i (a node of the model) started,
 * "Erf -> erf-poly -> Max -> max-relu", into buf; "" when no node it
 * emitted was rewritten again. */
void rw_log_chain(const struct rw_log_entry *log, size_t n, size_t i, char *buf,
		  size_t size);
void rw_prov_free(struct rw_prov *p);

#endif
