/* k_ml_svm.c: support vector machines of ai.onnx.ml: SVMRegressor
 * (support vectors or a linear model, one-class mode) and SVMClassifier
 * (linear one-vs-rest, or libsvm's one-vs-one voting with Platt-scaled
 * pairwise probabilities coupled by libsvm's iterative method). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_ml_int.h"

enum { K_LINEAR, K_POLY, K_RBF, K_SIGMOID };

struct svm_kernel {
	int type;
	double gamma, coef0, degree;
};

static int kernel_attr(struct rt_kctx *k, struct svm_kernel *kk)
{
	static const char *const names[] = { "LINEAR", "POLY", "RBF", "SIGMOID" };
	const char *t = rt_attr_str(k, "kernel_type", "LINEAR");
	size_t n = 0;
	const float *p = rt_attr_floats(k, "kernel_params", &n);

	kk->type = -1;
	for (int i = 0; i < 4; i++)
		if (!strcmp(t, names[i]))
			kk->type = i;
	if (kk->type < 0)
		return rt_err(k, "unknown kernel_type '%s'", t);
	kk->gamma = n > 0 ? p[0] : 0;
	kk->coef0 = n > 1 ? p[1] : 0;
	kk->degree = n > 2 ? (double)(int64_t)p[2] : 0;   /* an integer power */
	return 0;
}

/* K(x row, v) over f features. */
static double kernel(const struct svm_kernel *kk, const struct rt_value *x, int64_t row,
		     const float *v, int64_t f)
{
	double s = 0;

	if (kk->type == K_RBF) {
		for (int64_t j = 0; j < f; j++) {
			double d = rt_load_f64(x->dtype, x->data, row * f + j) - v[j];

			s += d * d;
		}
		return exp(-kk->gamma * s);
	}
	for (int64_t j = 0; j < f; j++)
		s += rt_load_f64(x->dtype, x->data, row * f + j) * v[j];
	switch (kk->type) {
	case K_POLY: return pow(kk->gamma * s + kk->coef0, kk->degree);
	case K_SIGMOID: return tanh(kk->gamma * s + kk->coef0);
	default: return s;
	}
}

int ml_k_svm_regressor(struct rt_kctx *k)
{
	size_t nsv = 0, nc = 0, nr = 0;
	const float *sv = rt_attr_floats(k, "support_vectors", &nsv);
	const float *coef = rt_attr_floats(k, "coefficients", &nc);
	const float *rho = rt_attr_floats(k, "rho", &nr);
	int64_t ns = rt_attr_int(k, "n_supports", 0), n, f, dims[2];
	int one_class = (int)rt_attr_int(k, "one_class", 0);
	struct svm_kernel kk;
	enum ml_post post;
	struct rt_value *x, *y;
	int rc;

	if ((rc = kernel_attr(k, &kk)) < 0 || (rc = ml_post_attr(k, &post)) < 0 ||
	    (rc = ml_in_rows(k, &x, &n, &f)) < 0)
		return rc;
	if (ns > 0 ? ((int64_t)nsv != ns * f || (int64_t)nc != ns) : (int64_t)nc != f)
		return rt_err(k, "%zu support vector values and %zu coefficients do not fit %lld supports of %lld features",
			      nsv, nc, (long long)ns, (long long)f);
	dims[0] = n;
	dims[1] = 1;
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_FLOAT, 2, dims)))
		return IR_ENOMEM;
	for (int64_t r = 0; r < n; r++) {
		double s = nr ? rho[0] : 0;

		if (ns > 0)
			for (int64_t j = 0; j < ns; j++)
				s += coef[j] * kernel(&kk, x, r, sv + j * f, f);
		else    /* the linear mode ignores kernel_type */
			s += kernel(&(struct svm_kernel){ K_LINEAR, 0, 0, 0 }, x, r, coef, f);
		if (one_class)
			s = s > 0 ? 1 : -1;
		ml_post_apply(post, &s, 1);
		((float *)y->data)[r] = (float)s;
	}
	return 0;
}

/* libsvm's Platt sigmoid of a decision value. */
static double platt(double dec, double a, double b)
{
	double v = dec * a + b, p = v >= 0 ? exp(-v) / (1 + exp(-v)) : 1 / (1 + exp(v));

	return fmin(fmax(p, 1e-7), 1 - 1e-7);
}

/* libsvm's multiclass_probability: p from pairwise r (c x c). */
static void couple(int64_t c, const double *r, double *q, double *qp, double *p)
{
	int64_t iters = c > 100 ? c : 100;
	double eps = 0.005 / (double)c;

	for (int64_t t = 0; t < c; t++) {
		p[t] = 1.0 / (double)c;
		q[t * c + t] = 0;
		for (int64_t j = 0; j < c; j++)
			if (j != t) {
				q[t * c + t] += r[j * c + t] * r[j * c + t];
				q[t * c + j] = -r[j * c + t] * r[t * c + j];
			}
	}
	for (int64_t it = 0; it < iters; it++) {
		double pqp = 0, maxe = 0;

		for (int64_t t = 0; t < c; t++) {
			qp[t] = 0;
			for (int64_t j = 0; j < c; j++)
				qp[t] += q[t * c + j] * p[j];
			pqp += p[t] * qp[t];
		}
		for (int64_t t = 0; t < c; t++)
			maxe = fmax(maxe, fabs(qp[t] - pqp));
		if (maxe < eps)
			break;
		for (int64_t t = 0; t < c; t++) {
			double diff = (-qp[t] + pqp) / q[t * c + t];

			p[t] += diff;
			pqp = (pqp + diff * (diff * q[t * c + t] + 2 * qp[t])) / (1 + diff) / (1 + diff);
			for (int64_t j = 0; j < c; j++) {
				qp[j] = (qp[j] + diff * q[t * c + j]) / (1 + diff);
				p[j] /= 1 + diff;
			}
		}
	}
}

/* Scores: linear mode (no vectors_per_class): one per class, rho[0] +
 * x . coefficients[class]; SVC mode: one decision value per class pair
 * (i < j), voting for i when positive; with prob_a/prob_b the pairwise
 * Platt probabilities are coupled into one probability per class.  The
 * label is the class with most votes (SVC) or the best score (linear),
 * with onnxruntime's binary rule when rho has one entry and there are two
 * labels: all coefficients >= 0 and no probabilities give the second
 * label whenever the winner's weight is >= 0.5.  A single score s comes
 * out as the pair [-s, s] (then transformed) in that binary case. */
int ml_k_svm_classifier(struct rt_kctx *k)
{
	size_t nsv = 0, nc = 0, nr = 0, npc = 0, npa = 0, npb = 0;
	const float *sv = rt_attr_floats(k, "support_vectors", &nsv);
	const float *coef = rt_attr_floats(k, "coefficients", &nc);
	const float *rho = rt_attr_floats(k, "rho", &nr);
	const float *pa = rt_attr_floats(k, "prob_a", &npa);
	const float *pb = rt_attr_floats(k, "prob_b", &npb);
	const int64_t *vpc = rt_attr_ints(k, "vectors_per_class", &npc);
	struct svm_kernel kk;
	struct ml_labels l;
	enum ml_post post;
	struct rt_value *x, *y, *z;
	int64_t n, f, c, nvec = 0, ns, zc, npairs, dims[2], *start = NULL, *votes = NULL;
	double *kv = NULL, *s = NULL, *r = NULL, *q = NULL, *qp = NULL, *p = NULL;
	int linear, proba, allpos = 1, pair, rc;

	if ((rc = kernel_attr(k, &kk)) < 0 || (rc = ml_post_attr(k, &post)) < 0 ||
	    (rc = ml_labels_get(k, &l)) < 0 || (rc = ml_in_rows(k, &x, &n, &f)) < 0)
		return rc;
	c = (int64_t)l.n;
	for (size_t i = 0; i < nc; i++)
		if (coef[i] < 0)
			allpos = 0;
	for (size_t i = 0; i < npc; i++)
		nvec += vpc[i];
	linear = nvec == 0;
	npairs = c * (c - 1) / 2;
	proba = !linear && npa > 0;
	if (!nr)
		return rt_err(k, "attribute 'rho' is required");
	if (linear) {
		if (!f || (int64_t)nc != c * f)
			return rt_err(k, "%zu coefficients for %lld classes of %lld features",
				      nc, (long long)c, (long long)f);
		ns = c;
	} else {
		if ((int64_t)npc != c)
			return rt_err(k, "vectors_per_class has %zu entries for %lld classes",
				      npc, (long long)c);
		if ((int64_t)nsv != nvec * f || (int64_t)nc != (c - 1) * nvec || (int64_t)nr < npairs)
			return rt_err(k, "support vectors (%zu), coefficients (%zu) or rho (%zu) do not fit %lld vectors of %lld features",
				      nsv, nc, nr, (long long)nvec, (long long)f);
		if (proba && ((int64_t)npa < npairs || (int64_t)npb < npairs))
			return rt_err(k, "prob_a and prob_b need %lld entries", (long long)npairs);
		ns = proba ? c : npairs;
	}
	pair = ns == 1 && nr == 1 && c == 2 && post != ML_POST_PROBIT;
	zc = pair ? 2 : ns;
	dims[0] = n;
	dims[1] = zc;
	if (!(y = ml_labels_out(k, &l, n)) || !(z = rt_out_tensor(k, 1, IR_DTYPE_FLOAT, 2, dims)))
		return IR_ENOMEM;
	start = calloc((size_t)c + 1, sizeof(*start));
	votes = calloc((size_t)c + 1, sizeof(*votes));
	kv = calloc((size_t)nvec + 1, sizeof(*kv));
	s = calloc((size_t)(zc + npairs + c) + 2, sizeof(*s));
	r = calloc((size_t)(c * c) + 1, sizeof(*r));
	q = calloc((size_t)(c * c) + 1, sizeof(*q));
	qp = calloc((size_t)c + 1, sizeof(*qp));
	p = calloc((size_t)c + 1, sizeof(*p));
	if (!start || !votes || !kv || !s || !r || !q || !qp || !p) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (int64_t i = 1; i < c && !linear; i++)
		start[i] = start[i - 1] + vpc[i - 1];
	for (int64_t row = 0; row < n; row++) {
		size_t best = 0;
		double wbest;

		if (linear) {
			struct svm_kernel lin = { K_LINEAR, 0, 0, 0 };

			for (int64_t i = 0; i < c; i++)
				s[i] = kernel(&lin, x, row, coef + i * f, f) + rho[0];
			for (int64_t i = 1; i < c; i++)
				if (s[i] > s[best])
					best = (size_t)i;
			wbest = s[best];
		} else {
			int64_t e = 0;

			for (int64_t v = 0; v < nvec; v++)
				kv[v] = kernel(&kk, x, row, sv + v * f, f);
			memset(votes, 0, (size_t)c * sizeof(*votes));
			for (int64_t i = 0; i < c; i++)
				for (int64_t j = i + 1; j < c; j++, e++) {
					double d = rho[e];

					for (int64_t m = 0; m < vpc[i]; m++)
						d += coef[(j - 1) * nvec + start[i] + m] * kv[start[i] + m];
					for (int64_t m = 0; m < vpc[j]; m++)
						d += coef[i * nvec + start[j] + m] * kv[start[j] + m];
					s[e] = d;
					votes[d > 0 ? i : j]++;
					if (proba) {
						double pr = platt(d, pa[e], pb[e]);

						r[i * c + j] = pr;
						r[j * c + i] = 1 - pr;
					}
				}
			if (proba) {
				couple(c, r, q, qp, p);
				for (int64_t i = 0; i < c; i++)
					s[i] = p[i];
			}
			for (int64_t i = 1; i < c; i++)
				if (votes[i] > votes[best])
					best = (size_t)i;
			wbest = (double)votes[best];
		}
		if (nr == 1 && c == 2 && !proba && allpos && wbest >= 0.5)
			best = 1;
		if (pair) {
			s[1] = s[0];
			s[0] = -s[1];
			ml_post_apply(post, s, 2);
		} else if (ns > 1 || post == ML_POST_PROBIT) {
			ml_post_apply(post, s, ns);
		}
		if ((rc = ml_label_set(k, &l, y, row, best)) < 0)
			goto cleanup;
		for (int64_t i = 0; i < zc; i++)
			((float *)z->data)[row * zc + i] = (float)s[i];
	}
	rc = 0;
cleanup:
	free(start);
	free(votes);
	free(kv);
	free(s);
	free(r);
	free(q);
	free(qp);
	free(p);
	return rc;
}
