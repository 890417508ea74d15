/* batch_int.h: internals shared by batch/ files only: the zip reader of
 * the worker, one job's work, and the growable string helpers. */
#ifndef OPMIG_BATCH_INT_H
#define OPMIG_BATCH_INT_H

#include "batch/batch.h"

/* List the .onnx entries of an archive into s, each with options o (may
 * be NULL), after the safety checks of every entry: zip-slip names,
 * symlinks, size and ratio limits. */
int batch_zip_add(struct batch_src *s, const char *path, const struct batch_mopts *o,
		  struct ir_diag *d);
/* Read one entry into a malloc'd buffer, within the limits. */
int batch_zip_read(const char *path, const char *entry,
		   const struct batch_limits *l, uint8_t **buf, size_t *len,
		   struct ir_diag *d);
/* Append an item (copies the strings and options). */
int batch_src_push(struct batch_src *s, const char *name, const char *source,
		   const char *path, const char *entry,
		   const struct batch_mopts *o);
/* Add path with per-model options o (NULL: none; manifests not nested). */
int batch_src_add_with(struct batch_src *s, const char *path,
		       const struct batch_mopts *o, struct ir_diag *d);
void batch_mopts_release(struct batch_mopts *o);
int batch_mopts_copy(struct batch_mopts *dst, const struct batch_mopts *src);

/* What a worker is told. */
struct batch_job {
	const struct batch_item *item;
	const struct rules_target *target;
	const struct batch_opts *o;
	const struct batch_limits *lim;
	uint64_t rules_hash;
	char dir[4096];          /* OUTDIR/<model>/<target> */
};
/* The jobs of o's shard, in order (*out is malloc'd).  An unknown
 * per-model target is IR_EINVAL. */
int batch_plan(const struct batch_src *src, const struct batch_opts *o,
	       uint64_t rules_hash, struct batch_job **out, size_t *n_out,
	       struct ir_diag *d);
/* In the worker: do the jobs js[0..n) of one model (in scan mode, one
 * parse and one scan for all its targets), write their outputs and each
 * DIR/result.json last.  Returns 0 when the results were written, 1 when
 * a resume kept every one, -1 when one could not be written. */
int batch_group_run(const struct batch_job *js, size_t n);
/* Write DIR/result.json for a row (retry: a worker failure that a resume
 * runs again); key is the content hash. */
int batch_result_write(const char *dir, const struct batch_row *r,
		       uint64_t key, int retry, const char *inputs_json,
		       struct ir_diag *d);
/* Read DIR/result.json into r: 0 ok, -1 absent or unusable.  With key,
 * fails unless its key matches, it is not marked retry and its inputs
 * still hash the same. */
int batch_result_read(const char *dir, struct batch_row *r, const uint64_t *key);

/* JSON string literal of s to f. */
void batch_json_str(FILE *f, const char *s);
/* Write a row's fields (without braces) as JSON members. */
void batch_row_json(FILE *f, const struct batch_row *r, const char *indent);
struct cJSON;
int batch_row_from_json(const struct cJSON *o, struct batch_row *r);
/* strdup that maps NULL to "". */
char *batch_strdup(const char *s);
/* Distinct strings of one field (the targets when target, else the
 * models) over the rows, sorted, into a malloc'd *out (strings borrowed;
 * *out NULL out of memory); returns how many. */
size_t batch_summary_distinct(const struct batch_summary *s, int target, const char ***out);
size_t batch_summary_n_failed(const struct batch_summary *s);
/* summary.md and index.html (summary_doc.c): 0, or -1 when out of memory
 * or writing failed. */
int batch_summary_md(const struct batch_summary *s, FILE *f);
int batch_summary_html(const struct batch_summary *s, FILE *f);
/* Atomic write of a memstream's text. */
int batch_write_text(const char *path, char *buf, size_t len, int ok,
		     struct ir_diag *d);

#endif
