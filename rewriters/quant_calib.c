/* quant_calib.c: calibration.  The float model runs on each calibration
 * sample in turn with an observer that folds every value the plan
 * quantizes into its running minimum and maximum and (percentile,
 * entropy) its histogram of |x|; the values themselves are released as
 * the run goes.  Then each tensor's range is chosen by the method, tensors
 * that must share a scale take the union of their ranges, and scales and
 * zero points follow.  The evaluation samples' float outputs are kept from
 * the same runs when they are the calibration samples. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/quant_int.h"
#include "runtime/runtime.h"

void qz_dtype_range(int dtype, int64_t *qmin, int64_t *qmax)
{
	switch (dtype) {
	case IR_DTYPE_INT8: *qmin = -128; *qmax = 127; break;
	case IR_DTYPE_UINT8: *qmin = 0; *qmax = 255; break;
	case IR_DTYPE_INT16: *qmin = -32768; *qmax = 32767; break;
	case IR_DTYPE_UINT16: *qmin = 0; *qmax = 65535; break;
	case IR_DTYPE_INT4: *qmin = -8; *qmax = 7; break;
	case IR_DTYPE_UINT4: *qmin = 0; *qmax = 15; break;
	default: *qmin = INT32_MIN; *qmax = INT32_MAX; break;
	}
}

void qz_params(double lo, double hi, int dtype, int symmetric, float *scale,
	       int32_t *zero_point)
{
	int64_t qmin, qmax;
	double s, z;

	qz_dtype_range(dtype, &qmin, &qmax);
	if (!isfinite(lo) || lo > 0)
		lo = 0;
	if (!isfinite(hi) || hi < 0)
		hi = 0;
	if (symmetric) {
		double a = fmax(-lo, hi);

		if (qmin < 0) {
			/* signed: [-qmax, qmax], zero point 0 */
			s = a / (double)qmax;
			*scale = (float)s;
			*zero_point = 0;
			if (!(*scale >= 1.1754944e-38f) || !isfinite(*scale))
				*scale = 1.0f;
			return;
		}
		lo = -a;
		hi = a;
	}
	s = (hi - lo) / (double)(qmax - qmin);
	*scale = (float)s;
	if (!(*scale >= 1.1754944e-38f) || !isfinite(*scale)) {
		/* all zeros (or a range float32 cannot scale) */
		*scale = 1.0f;
		*zero_point = symmetric ? (int32_t)((qmin + qmax + 1) / 2) : (int32_t)qmin;
		return;
	}
	z = symmetric ? (double)((qmin + qmax + 1) / 2) : nearbyint((double)qmin - lo / (double)*scale);
	*zero_point = (int32_t)(z < (double)qmin ? (double)qmin : z > (double)qmax ? (double)qmax : z);
}

/* ---- histograms -------------------------------------------------------- */

static void hist_double(struct qz_hist *h)
{
	for (size_t i = 0; i < QZ_HIST_BINS / 2; i++) {
		h->pos[i] = h->pos[2 * i] + h->pos[2 * i + 1];
		h->neg[i] = h->neg[2 * i] + h->neg[2 * i + 1];
	}
	for (size_t i = QZ_HIST_BINS / 2; i < QZ_HIST_BINS; i++)
		h->pos[i] = h->neg[i] = 0;
	h->width *= 2;
}

void qz_hist_add(struct qz_hist *h, const float *x, int64_t n)
{
	float amax = 0;
	double inv;

	for (int64_t i = 0; i < n; i++) {
		float a = fabsf(x[i]);

		if (a > amax && isfinite(a))
			amax = a;
	}
	if (amax > 0 && h->width == 0)
		h->width = (double)amax / QZ_HIST_BINS;
	if (h->width == 0) {
		h->pos[0] += (double)n;      /* zeros */
		return;
	}
	while ((double)amax > h->width * QZ_HIST_BINS)
		hist_double(h);
	inv = 1.0 / h->width;
	for (int64_t i = 0; i < n; i++) {
		double v = x[i], a = fabs(v);
		size_t b;

		if (!isfinite(v))
			continue;
		b = (size_t)(a * inv);
		if (b >= QZ_HIST_BINS)
			b = QZ_HIST_BINS - 1;
		if (v < 0)
			h->neg[b] += 1;
		else
			h->pos[b] += 1;
	}
}

void qz_hist_percentile(const struct qz_hist *h, double p, int symmetric, double min,
			double max, double *lo, double *hi)
{
	double total = 0, acc = 0, cut;
	size_t i;

	for (i = 0; i < QZ_HIST_BINS; i++)
		total += h->pos[i] + h->neg[i];
	*lo = min;
	*hi = max;
	if (total <= 0 || h->width == 0 || p >= 100)
		return;
	if (symmetric) {
		/* the smallest T such that P percent of |x| lie below it */
		double want = total * p / 100.0 * (1 - 1e-12), t;

		for (i = 0; i < QZ_HIST_BINS; i++) {
			acc += h->pos[i] + h->neg[i];
			if (acc >= want)
				break;
		}
		t = (double)(i + 1) * h->width;
		*lo = fmax(min, -t);
		*hi = fmin(max, t);
		return;
	}
	/* (a count that is the cut exactly, up to rounding, is cut) */
	cut = total * (100.0 - p) / 200.0 * (1 + 1e-9);
	/* from the bottom: the most negative bins first */
	acc = 0;
	for (i = QZ_HIST_BINS; i-- > 0;) {
		if (acc + h->neg[i] > cut)
			break;
		acc += h->neg[i];
	}
	if (i < QZ_HIST_BINS)
		*lo = fmax(min, -(double)(i + 1) * h->width);
	else
		*lo = fmax(min, 0);
	acc = 0;
	for (i = QZ_HIST_BINS; i-- > 0;) {
		if (acc + h->pos[i] > cut)
			break;
		acc += h->pos[i];
	}
	if (i < QZ_HIST_BINS)
		*hi = fmin(max, (double)(i + 1) * h->width);
	else
		*hi = fmin(max, 0);
}

/* Add eps to the empty bins of a count histogram, taking as much from
 * the others (MXNet's and onnxruntime's smoothing); 0, or -1 when every
 * bin is empty. */
static int smooth(double *h, size_t n)
{
	const double eps = 1e-4;
	size_t zeros = 0;
	double e1;

	for (size_t i = 0; i < n; i++)
		zeros += h[i] == 0;
	if (zeros == n)
		return -1;
	e1 = eps * (double)zeros / (double)(n - zeros);
	for (size_t i = 0; i < n; i++)
		h[i] += h[i] == 0 ? eps : -e1;
	return 0;
}

/* KL(p || q) of two count histograms, each normalized here. */
static double kl_div(const double *p, const double *q, size_t n)
{
	double sp = 0, sq = 0, kl = 0;

	for (size_t i = 0; i < n; i++) {
		sp += p[i];
		sq += q[i];
	}
	for (size_t i = 0; i < n; i++) {
		double a = p[i] / sp, b = q[i] / sq;

		if (a > 0)
			kl += b > 0 ? a * log(a / b) : INFINITY;
	}
	return kl;
}

double qz_entropy_threshold(const double *hist, size_t n_bins, double width, int levels)
{
	double *p, *q, best = INFINITY;
	size_t best_i = n_bins, top = 0;

	for (size_t i = 0; i < n_bins; i++)
		if (hist[i] > 0)
			top = i + 1;
	if (levels < 2 || n_bins <= (size_t)levels || top <= (size_t)levels)
		return (double)(top ? top : n_bins) * width;
	if (!(p = malloc(n_bins * sizeof(*p))) || !(q = malloc(n_bins * sizeof(*q)))) {
		free(p);
		return (double)top * width;
	}
	for (size_t i = (size_t)levels; i <= n_bins; i++) {
		double outliers = 0, kl;
		size_t merged = i / (size_t)levels;

		/* p: the first i bins, what lies beyond clipped into the last */
		memcpy(p, hist, i * sizeof(*p));
		for (size_t k = i; k < n_bins; k++)
			outliers += hist[k];
		p[i - 1] += outliers;
		/* q: the first i bins (unclipped) merged into `levels` levels,
		 * the remainder joining the last level, each level's count
		 * spread evenly over the bins where p is not empty */
		for (size_t j = 0; j < (size_t)levels; j++) {
			size_t start = j * merged, stop = j == (size_t)levels - 1 ? i : start + merged;
			double sum = 0;
			size_t nz = 0;

			for (size_t k = start; k < stop; k++) {
				sum += hist[k];
				nz += p[k] != 0;
			}
			for (size_t k = start; k < stop; k++)
				q[k] = p[k] != 0 ? sum / (double)nz : 0;
		}
		if (smooth(p, i) < 0 || smooth(q, i) < 0)
			continue;
		kl = kl_div(p, q, i);
		if (kl < best) {
			best = kl;
			best_i = i;
		}
	}
	free(p);
	free(q);
	return (double)best_i * width;
}

/* ---- the calibration run ----------------------------------------------- */

struct calib {
	struct qz_ctx *q;
	const int *out_tens;           /* per node output slot: tensor or -1 */
	const size_t *first_out;       /* per node: its first slot */
	int failed;
};

static void observe_value(struct qz_tens *t, const struct rt_value *v)
{
	struct rt_tensor_summary s;
	const float *x;

	if (!v || v->kind != RT_TENSOR || v->dtype != IR_DTYPE_FLOAT || !v->numel)
		return;
	rt_tensor_summarize(v, &s);
	if (s.n_finite) {
		if (!t->seen || s.min < t->min)
			t->min = s.min;
		if (!t->seen || s.max > t->max)
			t->max = s.max;
		t->seen = 1;
	}
	x = v->data;
	if (t->hist)
		qz_hist_add(t->hist, x, v->numel);
}

static int observe(void *ctx, const struct ir_node *n, size_t out, struct rt_value **slot)
{
	struct calib *cb = ctx;
	int k;

	if (n->index >= cb->q->plan.n_nodes)
		return 0;
	k = cb->out_tens[cb->first_out[n->index] + out];
	if (k >= 0)
		observe_value(&cb->q->plan.tens[k], *slot);
	return 0;
}

int qz_calibrate(struct qz_ctx *q, struct ir_diag *d)
{
	struct ir_model *m = q->ref;
	struct ir_graph *g = m->graph;
	struct qz_plan *p = &q->plan;
	struct rt_opts ro = { .threads = q->o->threads };
	struct rt_session *s = NULL;
	struct rt_value **in = NULL, **out = NULL;
	size_t *first = NULL, slots = 0, n_in, n_out;
	int *ot = NULL, rc;
	struct calib cb = { .q = q };
	int keep = q->eval == &q->calib;

	if (!(first = calloc(g->n_nodes + 1, sizeof(*first))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < g->n_nodes; i++) {
		first[i] = slots;
		slots += g->nodes[i]->n_outputs;
	}
	if (!(ot = malloc((slots + 1) * sizeof(*ot)))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	for (size_t i = 0; i < g->n_nodes; i++)
		for (size_t j = 0; j < g->nodes[i]->n_outputs; j++) {
			const struct ir_value *v = g->nodes[i]->outputs[j];

			ot[first[i] + j] = v ? qz_plan_find(p, ir_s(v->name)) : -1;
			if (ot[first[i] + j] >= 0 && p->tens[ot[first[i] + j]].is_const)
				ot[first[i] + j] = -1;
		}
	cb.out_tens = ot;
	cb.first_out = first;
	ro.observe = observe;
	ro.observe_ctx = &cb;
	if ((rc = rt_session_new(m, &ro, &s, d)) < 0)
		goto cleanup;
	n_in = rt_session_n_inputs(s);
	n_out = rt_session_n_outputs(s);
	if (!(in = calloc(n_in + 1, sizeof(*in))) || !(out = calloc(n_out + 1, sizeof(*out)))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	for (size_t k = 0; k < q->calib.n; k++) {
		if ((rc = qz_samples_bind(q, &q->calib, k, s, in, d)) < 0)
			goto cleanup;
		for (size_t i = 0; i < n_in; i++) {
			int t = qz_plan_find(p, ir_s(rt_session_input(s, i)->value->name));

			if (t >= 0)
				observe_value(&p->tens[t], in[i]);
		}
		if ((rc = rt_session_run(s, in, n_in, out, d)) < 0) {
			rc = qz_wrap(d, rc, "calibration sample %zu", k);
			goto cleanup;
		}
		rt_inputs_release(in, n_in);
		if (keep) {
			memcpy(q->ref_out + k * n_out, out, n_out * sizeof(*out));
			memset(out, 0, n_out * sizeof(*out));
		} else {
			rt_inputs_release(out, n_out);
		}
	}
	rc = 0;
cleanup:
	if (in)
		rt_inputs_release(in, n_in);
	if (out)
		rt_inputs_release(out, n_out);
	free(in);
	free(out);
	rt_session_free(s);
	free(ot);
	free(first);
	return rc;
}

/* ---- ranges ------------------------------------------------------------- */

/* The number of levels |x| is quantized into for the entropy method: the
 * whole integer range for data that is never negative (an asymmetric
 * range starts at 0), half of it otherwise. */
static int entropy_levels(const struct qz_tens *t, int dtype, int symmetric)
{
	int64_t qmin, qmax;

	qz_dtype_range(dtype, &qmin, &qmax);
	if (qmax - qmin + 1 > (int64_t)1 << 20)
		return 1 << 20;
	if (t->min >= 0 && !symmetric)
		return (int)(qmax - qmin + 1);
	return (int)((qmax - qmin + 1) / 2);
}

static void tens_range(const struct qz_plan *p, enum qz_method m, double pct, struct qz_tens *t)
{
	double a[QZ_HIST_BINS];

	t->lo = t->seen ? t->min : 0;
	t->hi = t->seen ? t->max : 0;
	/* clipping a graph output would change the model's answer: outputs
	 * keep their observed range */
	if (t->is_const || t->is_output || !t->hist || !t->seen)
		return;
	if (m == QZ_PERCENTILE) {
		qz_hist_percentile(t->hist, pct, p->symmetric, t->min, t->max, &t->lo, &t->hi);
	} else if (m == QZ_ENTROPY) {
		double th;

		for (size_t i = 0; i < QZ_HIST_BINS; i++)
			a[i] = t->hist->pos[i] + t->hist->neg[i];
		th = qz_entropy_threshold(a, QZ_HIST_BINS, t->hist->width,
					  entropy_levels(t, p->act_dtype, p->symmetric));
		t->lo = fmax(t->min, -th);
		t->hi = fmin(t->max, th);
	}
}

static size_t root(struct qz_plan *p, size_t i)
{
	while (p->tens[i].group != i)
		i = p->tens[i].group = p->tens[p->tens[i].group].group;
	return i;
}

void qz_ranges(struct qz_ctx *q)
{
	struct qz_plan *p = &q->plan;
	double pct = q->o->percentile > 0 ? q->o->percentile : QZ_DEFAULT_PERCENTILE;

	for (size_t i = 0; i < p->n_tens; i++)
		tens_range(p, q->o->method, pct, &p->tens[i]);
	/* a group's range is the union of its members' */
	for (size_t i = 0; i < p->n_tens; i++) {
		size_t r = root(p, i);

		if (r == i)
			continue;
		p->tens[r].lo = fmin(p->tens[r].lo, p->tens[i].lo);
		p->tens[r].hi = fmax(p->tens[r].hi, p->tens[i].hi);
	}
	for (size_t i = 0; i < p->n_tens; i++)
		p->tens[root(p, i)].members++;
	for (size_t i = 0; i < p->n_tens; i++) {
		struct qz_tens *t = &p->tens[i], *r = &p->tens[root(p, i)];

		t->shared = r->members > 1;
		t->group = root(p, i);
		t->glo = r->lo;
		t->ghi = r->hi;
		qz_params(r->lo, r->hi, p->act_dtype, p->symmetric, &t->scale, &t->zp);
	}
}
