/* batch.h: `opmig batch`: a zoo of models (files, folders, .zip archives,
 * manifests) turned into a model x target matrix, run in crash-isolated
 * worker processes, resumable by content hash, shardable across a cluster,
 * summarized as summary.json (opmig.batch/1), .csv, .md and index.html.
 *
 * Ownership: a struct batch_src owns its items and everything in them; a
 * struct batch_summary owns its rows.  Targets and rules dbs are borrowed
 * from the caller for the whole run.  Nothing here prints: progress goes
 * to the caller's callback, errors into a struct ir_diag.
 */
#ifndef OPMIG_BATCH_H
#define OPMIG_BATCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ir_diag;
struct ir_model;
struct mg_report;
struct rules_db;
struct rules_target;

#define BATCH_SCHEMA "opmig.batch/1"

enum batch_mode { BATCH_SCAN, BATCH_MIGRATE };

/* Per-model options (from a manifest; else the batch's defaults). */
struct batch_mopts {
	int64_t batch;           /* static batch dim, 0 unchanged */
	char *layout;            /* "nchw", "nhwc" or NULL */
	char *precision;         /* "fp32", "fp16" or NULL */
	size_t n_dims;
	char **dims;             /* "NAME=V" */
	size_t n_targets;
	char **targets;          /* ids; none: the batch's --target list */
	char *verify_with;       /* migrate: a runtime command the migrated
				  * model must pass (see opmig-migrate(1)) */
};

/* One model of the zoo. */
struct batch_item {
	char *name;              /* unique folder name under OUTDIR */
	char *source;            /* as shown: PATH, or ARCHIVE:ENTRY */
	char *path;              /* the model file, or the archive */
	char *entry;             /* the archive entry, NULL for files */
	struct batch_mopts o;
};

struct batch_limits {
	uint64_t max_entry;      /* bytes of one zip entry (uncompressed) */
	double max_ratio;        /* uncompressed / compressed of one entry */
};
#define BATCH_MAX_ENTRY_DEFAULT (1ull << 30)
#define BATCH_MAX_RATIO_DEFAULT 100.0

struct batch_src {
	size_t n_items, cap_items;
	struct batch_item *items;
	struct batch_limits lim;
};

void batch_src_init(struct batch_src *s);
void batch_src_release(struct batch_src *s);
/* Add a model file, a folder (recursive *.onnx), a .zip archive, or a
 * manifest (.json or .csv).  Bad or unsafe input: IR_EINVAL with the
 * message naming the file. */
int batch_src_add(struct batch_src *s, const char *path, struct ir_diag *d);
int batch_manifest_add(struct batch_src *s, const char *path, struct ir_diag *d);
/* Fill the options an item does not set from def (the command line's
 * --batch, --layout, --precision, --dim); targets stay per item. */
int batch_src_defaults(struct batch_src *s, const struct batch_mopts *def);
/* Sort the items and give each a unique name (deterministic: independent
 * of argument order for the same set of files). */
int batch_src_finish(struct batch_src *s, struct ir_diag *d);

/* ---- pure helpers (unit tested) -------------------------------------- */
/* "K/N" with 1 <= K <= N: 0, else -1. */
int batch_shard_parse(const char *s, unsigned *k, unsigned *n);
/* Does item index i (in sorted order) belong to shard k of n? */
int batch_shard_has(size_t i, unsigned k, unsigned n);
/* Is this archive entry name safe to use (relative, no "..", no drive,
 * no backslash tricks)?  1 yes, 0 no. */
int batch_zip_name_safe(const char *name);
/* Would an entry of this size and compressed size pass the limits? */
int batch_zip_entry_ok(const struct batch_limits *l, uint64_t size,
		       uint64_t comp_size, char *why, size_t n);
/* A folder name for a model path: ".onnx" dropped, "/" and unsafe bytes
 * replaced by "_" (malloc'd). */
char *batch_name_from_path(const char *rel);
/* 64-bit FNV-1a, continued from h (start with BATCH_HASH_INIT). */
#define BATCH_HASH_INIT 0xcbf29ce484222325ull
uint64_t batch_hash(uint64_t h, const void *p, size_t n);
/* Hash of a file's bytes: 0 ok, -1 unreadable. */
int batch_hash_file(const char *path, uint64_t *out);

/* ---- running --------------------------------------------------------- */

enum batch_status {
	BATCH_OK_SCANNED, BATCH_OK_MIGRATED, BATCH_NOT_MIGRATED, BATCH_ERROR,
	BATCH_CRASHED, BATCH_TIMEOUT, BATCH_OUT_OF_MEMORY,
};
#define BATCH_N_STATUS 7
const char *batch_status_name(enum batch_status s);
int batch_status_parse(const char *s);
/* Does this status make the batch exit 1? */
int batch_status_failed(enum batch_status s);

/* One line of the summary: a model on a target. */
struct batch_row {
	char *model, *target, *source;
	enum batch_status status;
	long nodes;              /* -1 unknown */
	double native_pct;       /* supported / nodes, -1 unknown */
	double after_pct;        /* after rewrites (scan: + rewritable) */
	long blockers;           /* -1 unknown */
	double max_error;        /* validation max abs error, -1 none */
	double seconds;          /* -1: not recorded (no --times) */
	char *message;           /* "" when none */
};

struct batch_summary {
	enum batch_mode mode;
	size_t n_rows, cap_rows;
	struct batch_row *rows;
	size_t n_kept;           /* jobs a --resume kept (not written out) */
};

void batch_summary_init(struct batch_summary *s);
void batch_summary_release(struct batch_summary *s);
void batch_row_release(struct batch_row *r);
/* Sort rows by (model, target); IR_EINVAL if a pair repeats. */
int batch_summary_sort(struct batch_summary *s, struct ir_diag *d);
/* summary.json, summary.csv, summary.md and index.html into dir (made
 * if missing). */
int batch_summary_write(const struct batch_summary *s, const char *dir,
			struct ir_diag *d);
/* Append the rows of DIR/summary.json (checking schema and mode). */
int batch_summary_read(struct batch_summary *s, const char *dir, int first,
		       struct ir_diag *d);
/* `opmig batch merge`: the rows of the summaries of dirs[0..n) (shards of
 * one run), sorted; a job in two of them is IR_EINVAL. */
int batch_summary_merge(struct batch_summary *s, char *const *dirs, size_t n,
			struct ir_diag *d);
/* One format into a stream (for tests and the writers). */
int batch_summary_json(const struct batch_summary *s, FILE *f);

struct batch_progress {
	size_t done, total, failed, skipped;
	double elapsed;          /* seconds since the start */
	const struct batch_row *row;  /* the job just finished; NULL on the
				       * ticks sent every 0.5 s meanwhile */
};

struct batch_opts {
	enum batch_mode mode;
	const char *outdir;
	unsigned jobs;           /* worker processes, >= 1 */
	unsigned shard_k, shard_n;    /* 1/1: everything */
	int resume;
	int times;               /* record seconds in the summaries */
	int no_validate;         /* migrate without the interpreter's check */
	double timeout;          /* seconds per job, 0 none */
	uint64_t max_memory;     /* RLIMIT_AS of a worker, 0 none */
	const struct rules_target *const *targets;  /* default targets */
	size_t n_targets;
	const struct rules_db *const *dbs;  /* to find manifest targets, and
					     * whose files are hashed */
	size_t n_dbs;
	void (*progress)(void *ctx, const struct batch_progress *p);
	void *ctx;
	/* Run a migrated model on a real runtime (a model's verify_with):
	 * records the result in r (its runtime_check, and ok cleared with
	 * why on a failure).  Set by the caller (cmd_batch), since the check
	 * lives in probe/; NULL makes verify_with an error of the job. */
	int (*verify)(struct ir_model *m, const char *command, struct mg_report *r,
		      struct ir_diag *d);
};

/* Run every job (item x target) of this shard and fill sum.  Only errors
 * of the batch itself (unknown target, OUTDIR not writable, interrupted:
 * IR_EIO with "interrupted") are returned; a model that fails is a row. */
int batch_run(const struct batch_src *src, const struct batch_opts *o,
	      struct batch_summary *sum, struct ir_diag *d);

/* ---- the worker pool (pool.c), shared with `opmig probe` ---------------- */

/* Tasks 0..n-1, each run in a forked process of its own. */
struct batch_pool {
	unsigned jobs;           /* processes at a time, >= 1 */
	double timeout;          /* seconds per task, 0 none: then SIGKILL */
	uint64_t max_memory;     /* RLIMIT_AS of a task, 0 none */
	int own_group;           /* each task leads a process group of its
				  * own: a timeout kills what it started too */
	/* In the parent, before task i is forked: 0 run it, 1 skip it (no
	 * done call), negative: stop the run with that error. */
	int (*before)(void *ctx, size_t i, struct ir_diag *d);
	/* In the child: do task i; returns the exit status (0..255). */
	int (*child)(void *ctx, size_t i);
	/* In the parent, when task i ended: status as waitpid() gives it,
	 * whether the timeout killed it, and its seconds.  Negative stops
	 * the run with that error. */
	int (*done)(void *ctx, size_t i, int status, int timed_out, double secs,
		    struct ir_diag *d);
	/* In the parent, about every 0.5 s while tasks run (may be NULL). */
	void (*tick)(void *ctx);
	void *ctx;
};

/* Run every task.  Returns 0, the first negative status of a callback, or
 * IR_EIO "interrupted by signal N" when SIGINT or SIGTERM stopped it
 * (running tasks are killed).  The caller's signal handlers are restored. */
int batch_pool_run(const struct batch_pool *p, size_t n, struct ir_diag *d);
/* Monotonic seconds. */
double batch_now(void);

/* Pack the files under dir into the archive out (libzip). */
int batch_zip_dir(const char *dir, const char *out, struct ir_diag *d);

#endif
