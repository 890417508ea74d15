/* logits.c: a decoder's logits compared position by position: the cosine
 * of each position's scores over the vocabulary, and whether its top-1
 * token and top-5 tokens agree (see compare.h); a key/value cache output
 * row by row (a position's vector per head) by cosine.  Low precision moves
 * logits by more than an element-wise tolerance while keeping the tokens
 * a decoder would pick. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "validators/compare.h"
#include "runtime/rt_int.h"

#define TOPK 5

void rt_logits_begin(struct rt_metrics *m, int kv)
{
	memset(&m->lg, 0, sizeof(m->lg));
	m->lg.on = 1;
	m->lg.kv = kv;
	m->lg.min_cosine = 1;
	m->lg.worst_position = -1;
	m->lg.first_top1_bad = -1;
}

/* The indices of the k largest of row[0..n) (NaN never chosen), largest
 * first, the lower index first among equals; returns how many. */
static int top_k(const struct rt_value *t, int64_t base, int64_t n, int64_t *idx)
{
	int k = 0;

	for (int64_t j = 0; j < n; j++) {
		double x = rt_load_f64(t->dtype, t->data, base + j);
		int at;

		if (isnan(x))
			continue;
		for (at = k; at > 0 &&
		     x > rt_load_f64(t->dtype, t->data, base + idx[at - 1]); at--)
			if (at < TOPK)
				idx[at] = idx[at - 1];
		if (at < TOPK) {
			idx[at] = j;
			if (k < TOPK)
				k++;
		}
	}
	return k;
}

void rt_logits_add(struct rt_metrics *m, const struct rt_value *got,
		   const struct rt_value *want)
{
	struct rt_logits *lg = &m->lg;
	int64_t n, rows;

	if (!got || !want || got->kind != RT_TENSOR || want->kind != RT_TENSOR ||
	    !rt_dtype_is_float(got->dtype) || got->dtype != want->dtype ||
	    got->rank < 1 || got->rank != want->rank ||
	    memcmp(got->dims, want->dims, (size_t)got->rank * sizeof(got->dims[0])) ||
	    !(n = got->dims[got->rank - 1])) {
		lg->skipped++;
		return;
	}
	rows = got->numel / n;
	for (int64_t r = 0; r < rows; r++) {
		double ab = 0, aa = 0, bb = 0, cs;
		int64_t ta[TOPK], tb[TOPK], pos = lg->positions;
		int ka = top_k(got, r * n, n, ta), kb = top_k(want, r * n, n, tb), common = 0;

		for (int64_t j = 0; j < n; j++) {
			double x = rt_load_f64(got->dtype, got->data, r * n + j);
			double y = rt_load_f64(want->dtype, want->data, r * n + j);

			ab += x * y;
			aa += x * x;
			bb += y * y;
		}
		cs = aa == 0 && bb == 0 ? 1 : aa == 0 || bb == 0 ? 0 :
		     ab / (sqrt(aa) * sqrt(bb));
		if (!(cs >= lg->min_cosine) && !isnan(lg->min_cosine)) {
			lg->min_cosine = cs;      /* NaN sticks: it fails */
			lg->worst_position = pos;
		}
		if (ka && kb && ta[0] == tb[0])
			lg->top1_agree++;
		else if (lg->first_top1_bad < 0)
			lg->first_top1_bad = pos;
		for (int i = 0; i < ka; i++)
			for (int j = 0; j < kb; j++)
				common += ta[i] == tb[j];
		lg->sum_top5 += (double)common / TOPK;
		lg->positions++;
	}
}

void rt_logits_judge(struct rt_metrics *m, double min_cosine)
{
	struct rt_logits *lg = &m->lg;

	lg->tol_ok = m->ok;
	lg->min_cosine_required = min_cosine;
	lg->top5_overlap = lg->positions ? lg->sum_top5 / (double)lg->positions : 0;
	if (lg->skipped || !lg->positions) {
		if (m->ok)
			snprintf(m->why, sizeof(m->why), "logits: %lld pairs of another type or shape",
				 (long long)lg->skipped);
		m->ok = 0;
		return;
	}
	m->ok = lg->min_cosine >= min_cosine && (lg->kv || lg->top1_agree == lg->positions);
	if (!m->ok && !(lg->min_cosine >= min_cosine))
		snprintf(m->why, sizeof(m->why), "%s: cosine %.6f at %s %lld is below %g",
			 lg->kv ? "key/value cache" : "logits", lg->min_cosine,
			 lg->kv ? "row" : "position", (long long)lg->worst_position, min_cosine);
	else if (!m->ok)
		snprintf(m->why, sizeof(m->why),
			 "logits: the top-1 token differs at %lld of %lld positions (first at %lld)",
			 (long long)(lg->positions - lg->top1_agree), (long long)lg->positions,
			 (long long)lg->first_top1_bad);
}

void rt_logits_describe(const struct rt_metrics *m, char *buf, size_t size)
{
	const struct rt_logits *lg = &m->lg;

	if (lg->kv) {
		snprintf(buf, size, "key/value cache by row: min cosine %.6f (>= %g required); "
			 "element-wise rtol/atol: %s", lg->min_cosine, lg->min_cosine_required,
			 lg->tol_ok ? "within" : "outside");
		return;
	}
	snprintf(buf, size, "logits by position: min cosine %.6f (>= %g required), top-1 %lld/%lld, "
		 "top-5 overlap %.3f; element-wise rtol/atol: %s",
		 lg->min_cosine, lg->min_cosine_required, (long long)lg->top1_agree,
		 (long long)lg->positions, lg->top5_overlap, lg->tol_ok ? "within" : "outside");
}
