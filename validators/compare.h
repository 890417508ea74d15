/* compare.h: numerical comparison of two runtime values (an output of the
 * model under test against a reference): the pass/fail rule
 * |a - b| <= atol + rtol * |b| per element (b the reference; NaN equals
 * NaN, equal infinities are equal), with the metrics users judge a
 * migration by.  Integers, bools and strings compare exactly.
 *
 * Ownership: nothing is allocated; values are only read.
 */
#ifndef OPMIG_COMPARE_H
#define OPMIG_COMPARE_H

#include <stdint.h>

#include "runtime/runtime.h"

struct rt_cmp_opts {
	double rtol, atol;
};

/* Defaults of `opmig run --check`: the ONNX backend tests' tolerances. */
#define RT_CMP_RTOL 1e-3
#define RT_CMP_ATOL 1e-7

/* A decoder's logits judged per position (logits.c): each row of the
 * last axis (a position's scores over the vocabulary) compared by cosine
 * and by its top-1 and top-5 tokens. */
struct rt_logits {
	int on;                  /* judged by rows (ok is this verdict) */
	int kv;                  /* a key/value cache: cosine only, no top-1 */
	int tol_ok;              /* the element-wise rtol/atol verdict */
	int64_t positions;       /* rows compared over all samples */
	int64_t top1_agree;      /* rows whose argmax agrees */
	int64_t worst_position;  /* the row of min_cosine, -1 none */
	int64_t first_top1_bad;  /* the first row whose argmax differs, -1 */
	double min_cosine;       /* the worst row's cosine */
	double sum_top5;         /* sum over rows of |top5(a) & top5(b)| / 5 */
	double top5_overlap;     /* its mean (rt_logits_judge) */
	double min_cosine_required;
	int64_t skipped;         /* pairs not comparable (type or shape) */
};

struct rt_metrics {
	int ok;                  /* within tolerance, same type and shape */
	char why[256];           /* when not ok: what differs */
	int64_t n;               /* elements compared */
	int64_t n_bad;           /* outside tolerance */
	int64_t first_bad;       /* flat index of the first, -1 none */
	int64_t worst;           /* flat index of the largest violation */
	double worst_got, worst_want;
	double max_abs, max_rel, mean_abs, rmse;
	double max_ratio;        /* max |a-b| / (atol + rtol*|b|): > 1 fails */
	double cosine;           /* 1 when both are all zeros */
	double snr_db;           /* 10 log10(sum b^2 / sum (a-b)^2); inf exact */
	int64_t nan_got, nan_want, inf_got, inf_want;
	struct rt_logits lg;
};

/* Metrics over several comparisons (the samples of a validation): begin,
 * add each pair, end.  Flat indices continue from one pair to the next. */
struct rt_cmp_acc {
	struct rt_metrics m;
	double sum_abs, sum_sq, sum_ab, sum_aa, sum_bb;
	int64_t n_float;
	double worst_excess;
};
void rt_cmp_begin(struct rt_cmp_acc *a);
void rt_cmp_add(struct rt_cmp_acc *a, const struct rt_value *got,
		const struct rt_value *want, const struct rt_cmp_opts *o);
void rt_cmp_end(struct rt_cmp_acc *a, struct rt_metrics *m);

/* Compare got against want (tensors, or sequences/optionals element by
 * element: metrics then aggregate over all elements). */
void rt_compare(const struct rt_value *got, const struct rt_value *want,
		const struct rt_cmp_opts *o, struct rt_metrics *m);

/* The logits criterion (logits.c): add each sample's pair (float
 * tensors of rank >= 1, rows along the last axis) to m->lg; judge at the
 * end (after rt_cmp_end): m->lg.tol_ok keeps the element-wise verdict and
 * m->ok becomes "every row's cosine >= min_cosine and every row's top-1
 * token agrees" (a pair of another type or shape fails).  kv: a decoder's
 * key/value cache output, judged by the rows' cosine alone. */
void rt_logits_begin(struct rt_metrics *m, int kv);
void rt_logits_add(struct rt_metrics *m, const struct rt_value *got,
		   const struct rt_value *want);
void rt_logits_judge(struct rt_metrics *m, double min_cosine);
/* One line saying the logits criterion's numbers. */
void rt_logits_describe(const struct rt_metrics *m, char *buf, size_t size);

/* Summary of a numeric tensor: min, max and mean over the finite
 * elements, and the NaN and Inf counts.  Strings and empty tensors give
 * n_finite 0. */
struct rt_tensor_summary {
	int64_t n_finite, n_nan, n_inf;
	double min, max, mean;
};
void rt_tensor_summarize(const struct rt_value *t, struct rt_tensor_summary *s);

struct cJSON;
/* The metrics object of opmig.validate/1 (metrics_json.c; NULL when an
 * allocation failed: never a partial object), and a number that is
 * written as null when not finite (the item added, NULL on failure). */
struct cJSON *rt_metrics_json(const struct rt_metrics *m);
struct cJSON *rt_json_num(struct cJSON *o, const char *k, double x);

#endif
