/* scan_int.h: what the scanner/ files share and nobody else needs: the
 * scanning context (per-node facts computed once for every target: schema,
 * inferred types, which values are constant), the per-node check, the
 * model-level findings, and the output helpers of the report writers. */
#ifndef OPMIG_SCAN_INT_H
#define OPMIG_SCAN_INT_H

#include <stdarg.h>
#include <stdio.h>

#include "ir/infer.h"
#include "ir/ir.h"
#include "ir/registry.h"
#include "oprules/rules.h"
#include "scanner/scan.h"

/* Target-independent facts about one node. */
struct scan_ninfo {
	const struct ir_op_schema *schema;   /* NULL: op unknown at this opset */
	int64_t opset;                       /* of the node's domain */
	/* inferred types of the inputs, then the outputs (NULL unknown or
	 * absent), and whether each input is constant: looked up once for
	 * all targets (pointers into the scan's pools) */
	const struct ir_vtype **vt;
	unsigned char *in_const;
	size_t n_in;
};

/* A set of values (open addressing on the pointer). */
struct scan_vset {
	size_t n, cap;
	const struct ir_value **slots;
};

/* Model facts behind the model-level findings. */
struct scan_mfacts {
	size_t n_int64, n_int64_rt;          /* values of that dtype; non-constant ones */
	size_t n_float64, n_float64_rt;
	const char *int64_first, *float64_first;   /* a non-constant one if any */
	size_t n_ext;                        /* tensors in external data */
	long long ext_bytes;
	const char *ext_location;
	long long param_bytes;
};

struct scan_ctx {
	struct ir_model *m;
	const char *path;
	const struct ir_infer *inf;          /* own_inf, or the caller's */
	struct ir_infer own_inf;
	struct scan_vset consts;
	struct scan_ninfo *info;             /* one per result node */
	const struct ir_vtype **vt_pool;     /* storage of info[].vt */
	unsigned char *const_pool;           /* storage of info[].in_const */
	struct scan_mfacts facts;
	struct ir_diag *d;
	int f32_as;                          /* float32 checked as this dtype
					      * (0: as float32) */
};

/* check.c: the verdict of node i for target t (reasons, status; no
 * rewrite hook). */
int scan_check_node(const struct scan_ctx *c, const struct scan_node *sn,
		    const struct scan_ninfo *ni, const struct rules_target *t,
		    struct scan_verdict *v);
/* Is the value constant (initializer, Constant, folded, computed from
 * constants only)? */
int scan_value_is_const(const struct scan_ctx *c, const struct ir_value *v);
int scan_vset_add(struct scan_vset *s, const struct ir_value *v);
int scan_vset_has(const struct scan_vset *s, const struct ir_value *v);
void scan_vset_release(struct scan_vset *s);
/* Add a reason (message formatted) and raise v->status to st; -1 out of
 * memory. */
int scan_reason_add(struct scan_verdict *v, enum scan_status st,
		    const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void scan_verdict_release(struct scan_verdict *v);

/* findings.c: model facts once, then the findings for one target. */
int scan_facts_collect(struct scan_ctx *c);
int scan_findings_for(const struct scan_ctx *c, const struct rules_target *t,
		      struct scan_target_result *tr);

/* Output helpers of the writers (report.c).  Writers print with
 * fputs/fprintf and check ferror once at the end. */
void scan_put_json_str(FILE *f, const char *s);
void scan_put_html(FILE *f, const char *s);   /* HTML/XML text escaping */
void scan_put_md(FILE *f, const char *s);     /* Markdown table cell */
void scan_put_dot_str(FILE *f, const char *s); /* inside "..." of DOT */
/* Short status names used in matrices: "ok", "lim", "rw", "BLOCK". */
const char *scan_status_short(enum scan_status s);

/* Shared by the md and html writers (report.c): a as a percentage of b
 * (100 when b is 0). */
double scan_pct(size_t a, size_t b);
/* "domain:op" through put (escaping), the domain left out for ai.onnx. */
void scan_put_op(FILE *f, void (*put)(FILE *f, const char *s),
		 const char *domain, const char *op);
/* The markup of the table of groups (scan_put_groups): head before the
 * rows, tail after them (neither when there are no groups); row, a printf
 * format given the status name twice, opens a row up to the op; counts, a
 * printf format given the reason code and the count, stands between the op
 * and the first nodes; sep between the later cells; end closes the row.
 * Text goes through put. */
struct scan_markup {
	void (*put)(FILE *f, const char *s);
	const char *head, *row, *counts, *sep, *end, *tail;
};
/* The table of the groups of target t (scan_groups_build): status, op,
 * reason, count, first nodes, fix, message; 0 or -1 out of memory. */
int scan_put_groups(const struct scan_result *r, size_t t, FILE *out,
		    const struct scan_markup *mk);

#endif
