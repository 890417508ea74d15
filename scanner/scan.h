/* scan.h: the scanner: a verdict per node and target (supported, limited,
 * rewritable, blocked, with reason codes and messages) for every node of
 * the main graph, of nested subgraphs (If/Loop/Scan bodies) and of
 * model-local functions, plus model-level findings per target.  Report
 * writers are in scanner/report.h.
 *
 * Ownership: a struct scan_result borrows the model and the targets it was
 * made from (node pointers, op types, domains, target pointers): release it
 * (scan_result_release) before freeing either.  It owns its arrays, node
 * labels and graph paths, the reasons and findings with their messages.
 * Reason and finding codes and rewrite pass names are static strings.
 * scan_result_release on a zeroed or released result is a no-op.
 */
#ifndef OPMIG_SCAN_H
#define OPMIG_SCAN_H

#include <stddef.h>

struct ir_model;
struct ir_node;
struct ir_infer;
struct ir_diag;
struct rules_target;

/* Ordered: a node's verdict is the worst of its reasons. */
enum scan_status { SCAN_SUPPORTED, SCAN_LIMITED, SCAN_REWRITABLE, SCAN_BLOCKED };
#define SCAN_N_STATUS 4

/* Reason codes of node verdicts (struct scan_reason.code). */
#define SCAN_REASON_OP_NOT_SUPPORTED "op_not_supported"
#define SCAN_REASON_VERSION "version_out_of_range"
#define SCAN_REASON_DTYPE "dtype"
#define SCAN_REASON_ATTRIBUTE "attribute"
#define SCAN_REASON_RANK "rank"
#define SCAN_REASON_INPUT_NOT_CONSTANT "input_not_constant"
#define SCAN_REASON_DYNAMIC_SHAPE "dynamic_shape"
#define SCAN_REASON_DOMAIN "domain"

/* Codes of model-level findings (struct scan_finding.code). */
#define SCAN_FINDING_OPSET "opset_out_of_range"
#define SCAN_FINDING_DYNAMIC_INPUT "dynamic_input"
#define SCAN_FINDING_INT64 "int64"
#define SCAN_FINDING_FLOAT64 "float64"
#define SCAN_FINDING_EXTERNAL_DATA "external_data"
#define SCAN_FINDING_DEVICE_MEMORY "device_memory"

/* "supported", "limited", "rewritable", "blocked". */
const char *scan_status_name(enum scan_status s);
/* Parse a status name; -1 if unknown. */
int scan_status_parse(const char *name);

struct scan_node {
	const struct ir_node *node;
	const char *label;      /* node name, or "#index" (index in result.nodes) */
	const char *domain;     /* "ai.onnx" for the default domain */
	int version;            /* since_version of the schema it resolves to; 0 unknown */
	const char *function;   /* NULL unless inside a model-local function */
	const char *op_type;
	const char *graph;      /* "main", "main/If_0.then_branch", "fn:domain:Name" */
	int depth;              /* 0 main graph or function body, +1 per subgraph */
	int is_call;            /* calls a model-local function (judged by its body) */
	int constant;           /* deterministic, every input constant: its outputs
				 * can be computed once (constant folding) */
};

struct scan_reason {
	const char *code;       /* SCAN_REASON_* */
	char *message;
};

/* A precision that would make a node of data-type reasons only legal. */
enum scan_fix { SCAN_FIX_NONE, SCAN_FIX_FP16, SCAN_FIX_INT8 };

struct scan_verdict {
	enum scan_status status;
	size_t n_reasons;
	struct scan_reason *reasons;
	enum scan_fix fix;      /* its float32 data as float16 (or int8) would
				 * make it legal */
	const char *rewrite;    /* pass name (or, for a blocked node, the fix
				 * to name) or NULL */
};

struct scan_counts {
	size_t nodes, supported, limited, rewritable, blocked;
};

struct scan_finding {
	enum scan_status status;
	const char *code;       /* SCAN_FINDING_* */
	char *message;
};

struct scan_target_result {
	const struct rules_target *target;
	struct scan_counts counts;
	struct scan_verdict *verdicts;  /* one per node, same order as result.nodes */
	size_t n_findings;
	struct scan_finding *findings;
	size_t blocked_op_types;        /* distinct op types with a blocked node */
};

struct scan_result {
	size_t n_nodes;
	struct scan_node *nodes;
	size_t n_targets;
	struct scan_target_result *targets;
	/* the model, for reports */
	const char *path;
	long long ir_version;
	const char *producer;           /* "" when absent */
	const char *producer_version;
	long long opset;                /* default-domain opset import */
	size_t n_main_nodes, n_sub_nodes, n_function_nodes;
	int inferred;                   /* inference ran through */
	void *priv_strings;             /* owned labels and graph paths */
};

/* The migrate pipeline asks its rewriter registry whether a node that
 * would be limited or blocked can be rewritten for target t: nonzero with
 * *pass set to the pass name (a static string) makes it rewritable; zero
 * with *pass set leaves the verdict and names the fix (the verdict's
 * rewrite field, "--precision int8").  fp16: float32 data is checked as
 * float16 (migrate converts it). */
struct scan_options {
	int (*can_rewrite)(void *ctx, const struct rules_target *t,
			   const struct scan_node *sn, const struct scan_verdict *v,
			   const char **pass);
	void *ctx;
	int fp16;
};

/* Scan m (loaded and verified) against targets (resolved; n_targets >= 1)
 * and fill out.  path names the model in messages and reports (NULL: the
 * model's own).  so may be NULL.  Returns 0, or a negative status with the
 * error in d (out is then empty). */
int scan_model(struct ir_model *m, const char *path,
	       const struct rules_target *const *targets, size_t n_targets,
	       const struct scan_options *so, struct scan_result *out,
	       struct ir_diag *d);
void scan_result_release(struct scan_result *r);

/* scan_model with the model's types and shapes already inferred: inf (a
 * complete ir_infer_model of m as it is now; borrowed, only read) is used
 * instead of inferring again.  inf NULL is scan_model. */
int scan_model_inferred(struct ir_model *m, const char *path,
			const struct rules_target *const *targets, size_t n_targets,
			const struct scan_options *so, const struct ir_infer *inf,
			struct scan_result *out, struct ir_diag *d);

/* Does anything of target result tr (a node or a finding) have a status
 * at or above min? */
int scan_target_has(const struct scan_target_result *tr, enum scan_status min);

#endif
