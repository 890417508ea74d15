/* report.h: the scan reports: a sorted table of formats (text, json, md,
 * html, dot), each written by its own file scanner/report_<name>.c, and
 * the views they share: the per-target table grouped by op type and
 * reason, and the compatibility matrix (op types x targets).
 *
 * Ownership: writers only read the result.  scan_groups_build and
 * scan_matrix_build allocate arrays the caller frees with the matching
 * _release; their strings borrow from the result (and so from the model).
 */
#ifndef OPMIG_SCAN_REPORT_H
#define OPMIG_SCAN_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "scanner/scan.h"

/* Schema name of the JSON report (documented in opmig-scan(1)). */
#define SCAN_JSON_SCHEMA "opmig.scan/1"

typedef int (*scan_write_fn)(const struct scan_result *r, FILE *out);

struct scan_format {
	const char *name;        /* "text", "json", "md", "html", "dot" */
	scan_write_fn write;
	const char *summary;
};

/* The format table, sorted by name (a unit test checks). */
extern const struct scan_format scan_formats[];
extern const size_t scan_n_formats;
const struct scan_format *scan_format_find(const char *name);

/* Write r in format f to out: 0, or -1 when writing failed. */
int scan_report_write(const struct scan_result *r, const struct scan_format *f,
		      FILE *out);

int scan_write_text(const struct scan_result *r, FILE *out);
int scan_write_json(const struct scan_result *r, FILE *out);
int scan_write_md(const struct scan_result *r, FILE *out);
int scan_write_html(const struct scan_result *r, FILE *out);
int scan_write_dot(const struct scan_result *r, FILE *out);

/* "ascend: 412/430 nodes supported, 0 limited, 12 rewritable, 6 blocked
 * (2 op types)" (no newline). */
void scan_summary_line(const struct scan_target_result *tr, char *buf, size_t size);

/* Nodes of one target that are not supported, grouped by op type and
 * reason code (a node with reasons of two codes is in two groups; a
 * rewritable node without reasons is in one with code ""). */
#define SCAN_GROUP_FIRST 3
struct scan_group {
	enum scan_status status;     /* worst of its nodes */
	const char *domain, *op_type, *code;
	const char *rewrite;         /* fix: a pass name, or NULL */
	const char *message;         /* the first node's message for the code */
	size_t count;
	size_t n_first;
	size_t first[SCAN_GROUP_FIRST];   /* node indices, in scan order */
};
/* Sorted: blocked first, then rewritable, limited; then op type, code. */
int scan_groups_build(const struct scan_result *r, size_t target,
		      struct scan_group **out, size_t *n);

/* Op types x targets: the worst verdict of the op type's nodes. */
struct scan_matrix_row {
	const char *domain, *op_type;
	size_t count;                /* nodes of this op type */
	enum scan_status *status;    /* n_targets entries */
};
struct scan_matrix {
	size_t n_rows, n_targets;
	struct scan_matrix_row *rows;   /* sorted by domain, op type */
	enum scan_status *cells;        /* storage of the rows' status */
};
int scan_matrix_build(const struct scan_result *r, struct scan_matrix *mx);
void scan_matrix_release(struct scan_matrix *mx);

#endif
