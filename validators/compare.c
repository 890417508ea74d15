/* compare.c: element-wise comparison of two values with tolerance and
 * error metrics (see compare.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "validators/compare.h"
#include "runtime/rt_int.h"

static void metrics_init(struct rt_metrics *m)
{
	memset(m, 0, sizeof(*m));
	m->ok = 1;
	m->first_bad = -1;
	m->worst = -1;
}

static void fail(struct rt_metrics *m, const char *why)
{
	if (m->ok)
		snprintf(m->why, sizeof(m->why), "%.255s", why);
	m->ok = 0;
}

static void note_bad(struct rt_metrics *m, struct rt_cmp_acc *a, int64_t i,
		     double got, double want, double excess)
{
	if (m->first_bad < 0)
		m->first_bad = i;
	m->n_bad++;
	if (m->worst < 0 || excess > a->worst_excess || isnan(excess)) {
		if (m->worst < 0 || !isnan(a->worst_excess)) {
			a->worst_excess = excess;
			m->worst = i;
			m->worst_got = got;
			m->worst_want = want;
		}
	}
}

static void compare_strings(const struct rt_value *g, const struct rt_value *w,
			    struct rt_metrics *m, struct rt_cmp_acc *a, int64_t base)
{
	for (int64_t i = 0; i < g->numel; i++) {
		const char *x = ((char *const *)g->data)[i];
		const char *y = ((char *const *)w->data)[i];

		if (strcmp(x ? x : "", y ? y : ""))
			note_bad(m, a, base + i, NAN, NAN, 1);
	}
	m->n += g->numel;
}

static void compare_tensors(const struct rt_value *g, const struct rt_value *w,
			    const struct rt_cmp_opts *o, struct rt_metrics *m,
			    struct rt_cmp_acc *a, int64_t base)
{
	int exact = !rt_dtype_is_float(w->dtype) && w->dtype != IR_DTYPE_COMPLEX64 &&
		    w->dtype != IR_DTYPE_COMPLEX128;
	int64_t n = g->numel;

	if (g->dtype == IR_DTYPE_COMPLEX64 || g->dtype == IR_DTYPE_COMPLEX128)
		n *= 2;   /* real and imaginary parts as plain numbers */
	for (int64_t i = 0; i < n; i++) {
		double x, y, diff, tol;
		int dt = g->dtype == IR_DTYPE_COMPLEX64 ? IR_DTYPE_FLOAT :
			 g->dtype == IR_DTYPE_COMPLEX128 ? IR_DTYPE_DOUBLE : g->dtype;

		if (exact && dt != IR_DTYPE_UINT64) {
			int64_t p = rt_load_i64(dt, g->data, i), q = rt_load_i64(dt, w->data, i);

			x = (double)p;
			y = (double)q;
			if (p != q) {
				note_bad(m, a, base + i, x, y, fabs(x - y));
				m->max_ratio = INFINITY;
			}
		} else {
			x = rt_load_f64(dt, g->data, i);
			y = rt_load_f64(dt, w->data, i);
			if (isnan(x)) m->nan_got++;
			if (isnan(y)) m->nan_want++;
			if (isinf(x)) m->inf_got++;
			if (isinf(y)) m->inf_want++;
			if (isnan(x) || isnan(y)) {
				if (!(isnan(x) && isnan(y))) {
					note_bad(m, a, base + i, x, y, INFINITY);
					m->max_ratio = INFINITY;
				}
				continue;
			}
			if (isinf(x) || isinf(y)) {
				if (x != y) {
					note_bad(m, a, base + i, x, y, INFINITY);
					m->max_ratio = INFINITY;
				}
				continue;
			}
			tol = o->atol + o->rtol * fabs(y);
			diff = fabs(x - y);
			if (tol > 0 && diff / tol > m->max_ratio)
				m->max_ratio = diff / tol;
			else if (tol == 0 && diff > 0)
				m->max_ratio = INFINITY;
			if (diff > tol)
				note_bad(m, a, base + i, x, y, diff - tol);
		}
		diff = fabs(x - y);
		if (diff > m->max_abs)
			m->max_abs = diff;
		if (y != 0 && diff / fabs(y) > m->max_rel)
			m->max_rel = diff / fabs(y);
		else if (y == 0 && diff > 0 && diff > m->max_rel)
			m->max_rel = diff;  /* relative to zero: the absolute error */
		a->sum_abs += diff;
		a->sum_sq += diff * diff;
		a->sum_ab += x * y;
		a->sum_aa += x * x;
		a->sum_bb += y * y;
		a->n_float++;
	}
	m->n += g->numel;
}

static void compare_rec(const struct rt_value *g, const struct rt_value *w,
			const struct rt_cmp_opts *o, struct rt_metrics *m,
			struct rt_cmp_acc *a)
{
	char x[160], y[160], why[400];

	if (!g || !w || g->kind != w->kind) {
		rt_value_describe(g, x, sizeof(x));
		rt_value_describe(w, y, sizeof(y));
		snprintf(why, sizeof(why), "got %s, expected %s", x, y);
		fail(m, why);
		return;
	}
	if (g->kind != RT_TENSOR) {
		if (g->n != w->n) {
			snprintf(why, sizeof(why), "got %zu elements, expected %zu", g->n, w->n);
			fail(m, why);
			return;
		}
		for (size_t i = 0; i < g->n; i++)
			compare_rec(g->items[i], w->items[i], o, m, a);
		return;
	}
	if (g->dtype != w->dtype || g->rank != w->rank ||
	    (g->rank && memcmp(g->dims, w->dims, (size_t)g->rank * sizeof(g->dims[0])))) {
		rt_value_describe(g, x, sizeof(x));
		rt_value_describe(w, y, sizeof(y));
		snprintf(why, sizeof(why), "got %s, expected %s", x, y);
		fail(m, why);
		return;
	}
	if (g->dtype == IR_DTYPE_STRING)
		compare_strings(g, w, m, a, m->n);
	else
		compare_tensors(g, w, o, m, a, m->n);
}

void rt_cmp_begin(struct rt_cmp_acc *a)
{
	memset(a, 0, sizeof(*a));
	metrics_init(&a->m);
}

void rt_cmp_add(struct rt_cmp_acc *a, const struct rt_value *got,
		const struct rt_value *want, const struct rt_cmp_opts *o)
{
	compare_rec(got, want, o, &a->m, a);
}

void rt_cmp_end(struct rt_cmp_acc *a, struct rt_metrics *out)
{
	struct rt_metrics *m = &a->m;

	if (a->n_float) {
		m->mean_abs = a->sum_abs / (double)a->n_float;
		m->rmse = sqrt(a->sum_sq / (double)a->n_float);
	}
	if (a->sum_aa == 0 && a->sum_bb == 0)
		m->cosine = 1;
	else if (a->sum_aa == 0 || a->sum_bb == 0)
		m->cosine = 0;
	else
		m->cosine = a->sum_ab / (sqrt(a->sum_aa) * sqrt(a->sum_bb));
	m->snr_db = a->sum_sq == 0 ? INFINITY :
		    a->sum_bb == 0 ? -INFINITY : 10 * log10(a->sum_bb / a->sum_sq);
	if (m->ok && m->n_bad) {
		char why[256];

		snprintf(why, sizeof(why),
			 "%lld of %lld elements differ; worst at %lld: got %.9g, expected %.9g",
			 (long long)m->n_bad, (long long)m->n, (long long)m->worst,
			 m->worst_got, m->worst_want);
		fail(m, why);
	}
	*out = *m;
}

void rt_compare(const struct rt_value *got, const struct rt_value *want,
		const struct rt_cmp_opts *o, struct rt_metrics *m)
{
	struct rt_cmp_acc a;

	rt_cmp_begin(&a);
	rt_cmp_add(&a, got, want, o);
	rt_cmp_end(&a, m);
}

void rt_tensor_summarize(const struct rt_value *t, struct rt_tensor_summary *s)
{
	double sum = 0;

	memset(s, 0, sizeof(*s));
	if (t->kind != RT_TENSOR || t->dtype == IR_DTYPE_STRING ||
	    t->dtype == IR_DTYPE_COMPLEX64 || t->dtype == IR_DTYPE_COMPLEX128)
		return;
	for (int64_t i = 0; i < t->numel; i++) {
		double x = rt_load_f64(t->dtype, t->data, i);

		if (isnan(x)) {
			s->n_nan++;
			continue;
		}
		if (isinf(x)) {
			s->n_inf++;
			continue;
		}
		if (!s->n_finite || x < s->min)
			s->min = x;
		if (!s->n_finite || x > s->max)
			s->max = x;
		sum += x;
		s->n_finite++;
	}
	if (s->n_finite)
		s->mean = sum / (double)s->n_finite;
}
