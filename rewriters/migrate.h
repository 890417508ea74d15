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
	const char *precision;         /* "fp32", "fp16" or NULL */
	int fp16_io;                   /* fp16 inputs and outputs too */
	const char *passes;            /* comma-separated pass names allowed
					* besides canonicalization; NULL all */
	int validate;                  /* compare with the original */
	int samples;                   /* validation samples (>= 1) */
	uint64_t seed;
	int threads;
	int max_rounds;                /* decomposition rounds; 0: 8 */
	int fit_memory;                /* choose the batch that fits the
					* target's device memory (fit.c) */
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
	struct mg_blocker *blockers;   /* residual, after */
	size_t n_findings;
	char **findings;               /* model-level findings after (owned) */
	size_t n_notes;
	char **notes;                  /* from the passes (owned) */
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

/* The largest batch that fits t's device memory (see fit.c); how gets a
 * one-line account.  IR_EUSAGE when the rules give no device memory,
 * IR_EINVAL when even batch 1 does not fit or sizes are unknown. */
int mg_fit_batch(struct ir_model *m, const struct rules_target *t, const struct mg_opts *o,
		 int64_t *batch, char *how, size_t size, struct ir_diag *d);

#endif
