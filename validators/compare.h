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
