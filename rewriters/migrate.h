/* migrate.h: the migrate pipeline: scan the model for a target, then
 * canonicalize, convert the opset into the target's range, make shapes
 * static, decompose what the target cannot run (round after round, since a
 * decomposition may emit ops that need one in turn), narrow dtypes the
 * chip lacks, convert precision and layout, fuse, clean up, scan again and
 * validate the result against the original numerically.
 *
 * Ownership: mg_run edits the model it is given in place (load the model
 * twice: one copy is rewritten, the other is the validation's reference;
 * both are borrowed).  A struct mg_report owns everything in it; release
 * it with mg_report_release.  Options are borrowed.
 */
#ifndef OPMIG_MIGRATE_H
#define OPMIG_MIGRATE_H

#include "rewriters/rewrite.h"
#include "scanner/scan.h"
#include "validators/validate.h"

struct mg_opts {
	const struct rules_target *target;
	const char *layout;            /* "nchw", "nhwc" or NULL: unchanged */
	int64_t batch;                 /* static batch dim; 0: unchanged */
	size_t n_dims;
	const struct rt_dim_set *dims; /* NAME=V static dims */
	const char *precision;         /* "fp32", "fp16", "int8", "int4" or NULL */
	const struct qz_opts *quant;   /* int8, int4: the quantization's options
					* (int4 sets format QZ_WEIGHT_ONLY, nbits
					* 4; int8 with format QZ_WEIGHT_ONLY is
					* weight-only int8, nbits 8) (NULL: the
					* defaults) */
	int fp16_io;                   /* fp16 inputs and outputs too */
	int dry_run;                   /* nothing will be written: read no
					* weight values the plan can do without */
	const char *passes;            /* comma-separated pass names allowed
					* besides canonicalization; NULL all */
	int validate;                  /* compare with the original; 0 also
					* skips weight-only quantization's
					* accuracy check (nothing is run) */
	int samples;                   /* validation samples (>= 1) */
	int time;                      /* report the validation's time per run */
	uint64_t seed;
	int threads;
	int max_rounds;                /* decomposition rounds; 0: 8 */
	int fit_memory;                /* choose the batch that fits the
					* target's device memory (fit.c) */
	size_t n_bindings;             /* --input-value NAME=VALUE|FILE */
	const struct mg_binding *bindings;
	int keep_interface;            /* refuse interface changes */
	const char *data;              /* --data: validation input sets (NULL:
					* the test_data_set_* next to the model) */
	int64_t opset;                 /* --opset: convert to this; 0 choose */
};

/* Validation input sets from files (mg_data.c): their folders and the
 * first set's dims per input. */
struct mg_data {
	size_t n_dirs;
	char **dirs;                   /* owned */
	size_t n_hints;
	struct rw_dim_hint *hints;     /* owned; names borrow from the model */
	int given;                     /* by --data, not found by itself */
};
/* The sets --data names (a folder of test_data_set_N/, or one set), or
 * without it those next to the model at model_path; md is empty when
 * there are none.  IR_EUSAGE when --data is no folder. */
int mg_data_find(const struct ir_model *m, const char *model_path, const char *data,
		 struct mg_data *md, struct ir_diag *d);
void mg_data_release(struct mg_data *md);

struct qz_opts;

/* --precision int8 (quant_migrate.c): quantize c's model for c's target
 * (notes in c say how; unchecked names the option that skipped a
 * weight-only quantization's accuracy check, when o->no_check), and judge a validation of the result by the
 * quantization's accuracy criterion (v->equivalent, returned); a decoder's
 * logits and key/value cache keep the per-position verdict of val_run. */
int mg_quantize(struct rw_ctx *c, const struct qz_opts *o, const char *path,
		const char *unchecked, struct ir_diag *d);
int mg_quantize_judge(struct val_report *v, const struct qz_opts *o);
struct mg_report;
/* Name a weight-only validation in r (val_label, val_criterion): "int4
 * weight-only" judged by the criterion, not int8's tolerances. */
void mg_quantize_label(struct mg_report *r, const struct qz_opts *o);
/* --precision int4 (or weight-only int8): how c's target takes weight-only
 * MatMulNBits at c's opset: 1 kept (the target declares it), 0 lowered to
 * DequantizeLinear-21 of int4 (int8) codes (o->symmetric set, with a note, where the target takes
 * only zero point 0), or IR_EUSAGE with the one-line reason in d. */
int mg_nbits_form(struct rw_ctx *c, struct qz_opts *o, struct ir_diag *d);

/* A graph input bound to a constant (bind.c). */
struct mg_binding {
	const char *name;
	const char *value;             /* numbers "16000" / "1,2,3", or a
					* .npy / .pb file */
};

/* One change of the model's interface (interface.c). */
struct mg_iface_change {
	int input;                     /* 1 input, 0 output */
	char *name;                    /* owned */
	const char *what;              /* "dtype", "rank", "removed", "added" */
	char *from, *to;               /* owned: "int64", "int32"; "3", "4" */
};

/* The interface of a model as it was (interface.c). */
struct mg_iface {
	size_t n;
	struct mg_iface_item {
		int input;
		char *name;
		int dtype, rank;       /* 0, -1 unknown */
	} *items;
};

struct mg_blocker {
	char *node, *op, *domain;      /* owned */
	char *why;                     /* reasons, "; "-joined (owned) */
	int status;                    /* enum scan_status */
};

struct mg_report {
	char *target;                  /* id (owned) */
	struct scan_counts before, after;
	size_t n_rewrites;
	struct rw_log_entry *rewrites; /* owned (strings too) */
	size_t n_blockers;
	size_t n_int8_fix;             /* of them lifted by --precision int8 */
	struct mg_blocker *blockers;   /* residual, after */
	size_t n_findings;
	char **findings;               /* model-level findings after (owned) */
	size_t n_notes;
	char **notes;                  /* from the passes (owned) */
	size_t n_iface;
	struct mg_iface_change *iface; /* what of the interface changed */
	const char *precision;         /* "fp16" when float16 was used, by
					* --precision or chosen (see notes) */
	int weight_only;               /* int4, int8: the weights only (the
					* activations stay float) */
	char val_label[48];            /* the validation's precision as the
					* report names it ("int4 weight-only";
					* empty: val.precision's name) */
	char val_criterion[48];        /* what judged it when not the
					* tolerances ("cosine>=0.99") */
	int64_t opset;                 /* the default-domain opset written */
	int validated;
	char val_error[300];           /* validation could not run (then
					* validated is 0 and ok is 0) */
	struct val_report val;         /* names borrow from both models */
	struct val_map map;
	int ok;                        /* no blocker and validation passed */
	int invalid;                   /* the model fails the strict schema
					* check (a pass broke it, or the
					* input's faults remain): never
					* written, --force or not */
	char why[256];                 /* when not ok */
	char *runtime_check;           /* --verify-with: the report's
					* "runtime_check" object as JSON text
					* (owned; NULL when not run) */
};

void mg_report_release(struct mg_report *r);

/* Migrate m (edited in place) for o->target; orig is an untouched copy
 * for validation (NULL when o->validate is 0).  path names the model in
 * scan messages.  Errors: bad input (IR_EINVAL), IR_ENOMEM; blockers,
 * failed validation and a model that fails the strict schema check are
 * not errors: r->ok (and r->invalid) say. */
int mg_run(struct ir_model *m, struct ir_model *orig, const char *path,
	   const struct mg_opts *o, struct mg_report *r, struct ir_diag *d);

/* The report as JSON (opmig.migrate/1), malloc'd; model and out (NULL
 * for none) as the report names them.  NULL when out of memory. */
char *mg_report_json(const struct mg_report *r, const char *model, const char *out,
		     int dry_run, int written);

/* Bind graph inputs to constants (bind.c): each named input becomes an
 * initializer of its value and leaves the interface.  IR_EUSAGE for an
 * unknown input or a value that does not fit it, IR_EINVAL for a bad
 * tensor file (the message names it). */
int mg_bind_inputs(struct ir_model *m, const struct mg_binding *b, size_t n,
		   struct ir_diag *d);

/* The interface of m, and what of it differs in m2 (appended to
 * r->iface). */
int mg_iface_snapshot(const struct ir_model *m, struct mg_iface *f, struct ir_diag *d);
void mg_iface_release(struct mg_iface *f);
int mg_iface_diff(const struct mg_iface *before, const struct ir_model *m2,
		  struct mg_report *r, struct ir_diag *d);

/* The opset to convert to (opset_choice.c): *best 0 when there is no
 * choice to make (one opset, none stated, or none reachable); how gets a
 * note when the choice differs from the model's opset.  sr is a scan of
 * the model for c's target. */
int mg_choose_opset(struct rw_ctx *c, const struct scan_result *sr, int64_t *best,
		    char *how, size_t size);

/* The largest batch that fits t's device memory (see fit.c); how gets a
 * one-line account.  IR_EUSAGE when the rules give no device memory,
 * IR_EINVAL when even batch 1 does not fit or sizes are unknown. */
int mg_fit_batch(struct ir_model *m, const struct rules_target *t, const struct mg_opts *o,
		 int64_t *batch, char *how, size_t size, struct ir_diag *d);

#endif
