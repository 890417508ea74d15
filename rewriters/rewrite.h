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
	/* the strict schema check (strict.c): the input model's nodes that
	 * fail it (tolerated while passes run), sorted by address; set when
	 * a pass made the model invalid (c->d says how) */
	int strict_ready;
	size_t n_faulty;
	const struct ir_node **faulty;
	int invalid;
};

struct rw_pass;

/* Node passes: check says whether the node meets the preconditions (1) or
 * not (0, with the reason in why); apply rewrites it with variant v. */
typedef int (*rw_check_fn)(struct rw_ctx *c, const struct ir_node *n,
			   char *why, size_t size);
typedef int (*rw_apply_fn)(struct rw_ctx *c, struct ir_node *n, int v);
/* Whether variant v suits this node (NULL: every variant does). */
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
	rw_check_fn check;
	rw_vcheck_fn vcheck;
	rw_apply_fn apply;
	rw_run_fn run;
};

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

/* ---- choosing and applying node passes ------------------------------ */

/* The first node pass (of the given kind) matching n whose preconditions
 * hold and one of whose variants the target fully accepts; returns the
 * pass (and *variant) or NULL. */
const struct rw_pass *rw_choose(struct rw_ctx *c, const struct ir_node *n,
				enum rw_kind kind, int *variant);
/* Apply pass p variant v to n, logging it.  The model is not refreshed:
 * call rw_refresh after a round of rewrites (inference is then current). */
int rw_apply(struct rw_ctx *c, const struct rw_pass *p, struct ir_node *n, int v);
/* Apply a graph pass; refreshes the model when something changed. */
int rw_run(struct rw_ctx *c, const struct rw_pass *p, size_t *changed);

/* Shown to the scanner (scan_options.can_rewrite): ctx is a struct
 * rw_ctx bound to the model and target being scanned. */
int rw_can_rewrite(struct rw_ctx *c, const struct ir_node *n, const char **pass);

#endif
