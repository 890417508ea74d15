/* k_ml.c: kernels of the ai.onnx.ml family: the shared helpers
 * (k_ml_int.h), the numeric preprocessing ops, FeatureVectorizer, the
 * linear models and the family table; encoders and maps are in
 * k_ml_enc.c, trees in k_ml_tree.c, SVMs in k_ml_svm.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_ml_int.h"

/* ---- shared helpers ----------------------------------------------------- */

int ml_post_attr(struct rt_kctx *k, enum ml_post *out)
{
	static const char *const names[] = {
		"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"
	};
	const struct ir_attr *a = rt_attr(k, "post_transform");

	*out = ML_POST_NONE;
	if (!a)
		return 0;
	if (a->type == IR_ATTR_INT) {
		if (a->i < 0 || a->i > ML_POST_PROBIT)
			return rt_err(k, "unknown post_transform %lld", (long long)a->i);
		*out = (enum ml_post)a->i;
		return 0;
	}
	for (int i = 0; i <= ML_POST_PROBIT; i++)
		if (a->s && !strcmp((const char *)a->s, names[i])) {
			*out = (enum ml_post)i;
			return 0;
		}
	return rt_err(k, "unknown post_transform '%s'", a->s ? (const char *)a->s : "");
}

double ml_logistic(double x)
{
	return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x));
}

/* sqrt(2) * erfinv(2p - 1) with Winitzki's closed-form erfinv
 * approximation (a = 0.147), as onnxruntime and the ONNX reference
 * compute PROBIT (relative error about 1e-3 against the exact value). */
double ml_probit(double p)
{
	double x = 2 * p - 1, sgn = x < 0 ? -1 : 1, w = (1 - x) * (1 + x), l, a, b;

	if (w == 0)
		return 0;
	l = log(w);
	a = 2 / (M_PI * 0.147) + 0.5 * l;
	b = l / 0.147;
	return 1.41421356 * sgn * sqrt(-a + sqrt(a * a - b));
}

void ml_post_apply(enum ml_post p, double *s, int64_t n)
{
	double mx = -INFINITY, sum = 0;

	switch (p) {
	case ML_POST_NONE:
		return;
	case ML_POST_LOGISTIC:
		for (int64_t i = 0; i < n; i++)
			s[i] = ml_logistic(s[i]);
		return;
	case ML_POST_PROBIT:
		for (int64_t i = 0; i < n; i++)
			s[i] = ml_probit(s[i]);
		return;
	case ML_POST_SOFTMAX:
		for (int64_t i = 0; i < n; i++)
			mx = fmax(mx, s[i]);
		for (int64_t i = 0; i < n; i++)
			sum += (s[i] = exp(s[i] - mx));
		for (int64_t i = 0; i < n; i++)
			s[i] /= sum;
		return;
	case ML_POST_SOFTMAX_ZERO:
		/* softmax where (near-)zero scores stay (near-)zero; all zero
		 * gives 0.5 each, as onnxruntime */
		for (int64_t i = 0; i < n; i++)
			mx = fmax(mx, s[i]);
		for (int64_t i = 0; i < n; i++) {
			s[i] = fabs(s[i]) > 1e-7 ? exp(s[i] - mx) : s[i] * exp(-mx);
			sum += s[i];
		}
		for (int64_t i = 0; i < n; i++)
			s[i] = sum == 0 ? 0.5 : s[i] / sum;
		return;
	}
}

int ml_labels_get(struct rt_kctx *k, struct ml_labels *l)
{
	const struct ir_attr *a = rt_attr(k, "classlabels_strings");

	memset(l, 0, sizeof(*l));
	if (a && a->type == IR_ATTR_STRINGS && a->n_strings) {
		l->strings = 1;
		l->strs = a;
		l->n = a->n_strings;
		return 0;
	}
	l->ints = rt_attr_ints(k, "classlabels_ints", &l->n);
	if (!l->ints)
		l->ints = rt_attr_ints(k, "classlabels_int64s", &l->n);
	if (!l->n)
		return rt_err(k, "no class labels (classlabels_strings or classlabels_ints)");
	return 0;
}

struct rt_value *ml_labels_out(struct rt_kctx *k, const struct ml_labels *l, int64_t n)
{
	return rt_out_tensor(k, 0, l->strings ? IR_DTYPE_STRING : IR_DTYPE_INT64, 1, &n);
}

int ml_label_set(struct rt_kctx *k, const struct ml_labels *l, struct rt_value *y,
		 int64_t i, size_t label)
{
	if (label >= l->n)
		return rt_err(k, "class index %zu beyond the %zu labels", label, l->n);
	if (l->strings) {
		const char *s = (const char *)l->strs->strings[label];

		if (!(((char **)y->data)[i] = strdup(s)))
			return rt_oom(k);
	} else {
		((int64_t *)y->data)[i] = l->ints[label];
	}
	return 0;
}

int ml_in_rows(struct rt_kctx *k, struct rt_value **x, int64_t *n, int64_t *f)
{
	int rc = rt_in_tensor(k, 0, x);

	if (rc < 0)
		return rc;
	if ((*x)->dtype == IR_DTYPE_STRING)
		return rt_err(k, "input must be numeric");
	if ((*x)->rank == 1) {
		*n = 1;
		*f = (*x)->dims[0];
	} else if ((*x)->rank == 2) {
		*n = (*x)->dims[0];
		*f = (*x)->dims[1];
	} else if ((*x)->rank == 0) {
		*n = 1;
		*f = 1;
	} else {
		return rt_err(k, "input must be [N, F] or [F], has rank %d", (*x)->rank);
	}
	return 0;
}

static const char *str_at(const struct rt_value *t, int64_t i)
{
	const char *s = ((char *const *)t->data)[i];

	return s ? s : "";
}

static char *dup_str(struct rt_kctx *k, const char *s)
{
	char *c = strdup(s);

	if (!c)
		rt_oom(k);
	return c;
}

/* ---- ArrayFeatureExtractor, Binarizer, Imputer, Normalizer, Scaler ---- */

static int k_array_feature_extractor(struct rt_kctx *k)
{
	struct rt_value *x, *y, *o;
	int64_t dims[RT_MAX_RANK], last, outer;
	int64_t *idx = NULL;
	size_t n_idx;
	int rank, rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &y)) < 0)
		return rc;
	if (x->rank < 1)
		return rt_err(k, "X must have rank >= 1");
	if ((rc = rt_in_ints(k, 1, &idx, &n_idx)) < 0)
		return rc;
	last = x->dims[x->rank - 1];
	outer = x->numel / (last ? last : 1);
	if (!last)
		outer = rt_numel(x->rank - 1, x->dims);
	for (size_t i = 0; i < n_idx; i++)
		if (idx[i] < 0 || idx[i] >= last) {
			rc = rt_err(k, "index %lld out of range [0, %lld)", (long long)idx[i],
				    (long long)last);
			goto cleanup;
		}
	/* X.shape[:-1] + [number of indices]; a 1-D X gives [1, n] (as
	 * onnxruntime and the ONNX reference) */
	rank = x->rank - 1;
	memcpy(dims, x->dims, (size_t)rank * sizeof(*dims));
	if (!rank)
		dims[rank++] = 1;
	dims[rank++] = (int64_t)n_idx;
	if (!(o = rt_out_tensor(k, 0, x->dtype, rank, dims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	rc = 0;
	for (int64_t r = 0; r < outer && !rc; r++)
		for (size_t i = 0; i < n_idx; i++) {
			int64_t s = r * last + idx[i], d = r * (int64_t)n_idx + (int64_t)i;

			if (x->dtype == IR_DTYPE_STRING) {
				if (!(((char **)o->data)[d] = dup_str(k, str_at(x, s)))) {
					rc = IR_ENOMEM;
					break;
				}
			} else {
				size_t es = rt_dtype_size(x->dtype);

				memcpy((char *)o->data + d * (int64_t)es,
				       (const char *)x->data + s * (int64_t)es, es);
			}
		}
cleanup:
	free(idx);
	return rc;
}

static int k_binarizer(struct rt_kctx *k)
{
	double th = rt_attr_float(k, "threshold", 0);
	struct rt_value *x, *y;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (x->dtype == IR_DTYPE_STRING)
		return rt_err(k, "input must be numeric");
	if (!(y = rt_out_tensor(k, 0, x->dtype, x->rank, x->dims)))
		return IR_ENOMEM;
	for (int64_t i = 0; i < x->numel; i++)
		rt_store_f64(y->dtype, y->data, i,
			     rt_load_f64(x->dtype, x->data, i) > th ? 1 : 0);
	return 0;
}

static int k_imputer(struct rt_kctx *k)
{
	size_t nf = 0, ni = 0;
	const float *fv = rt_attr_floats(k, "imputed_value_floats", &nf);
	const int64_t *iv = rt_attr_ints(k, "imputed_value_int64s", &ni);
	struct rt_value *x, *y;
	int64_t c;
	int isf, rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	/* the defined imputed_value_* attribute chooses the pair used */
	isf = nf > 0;
	if (x->dtype == IR_DTYPE_STRING || x->rank < 1)
		return rt_err(k, "input must be a numeric [N, C] or [C] tensor");
	if (!nf && !ni)
		return rt_err(k, "imputed_value_floats or imputed_value_int64s is required");
	c = x->dims[x->rank - 1];
	if ((isf ? nf : ni) != 1 && (int64_t)(isf ? nf : ni) != c)
		return rt_err(k, "imputed values have %zu entries for %lld features",
			      isf ? nf : ni, (long long)c);
	if (!(y = rt_out_tensor(k, 0, x->dtype, x->rank, x->dims)))
		return IR_ENOMEM;
	if (isf) {
		double rep = rt_attr_float(k, "replaced_value_float", 0);

		for (int64_t i = 0; i < x->numel; i++) {
			double v = rt_load_f64(x->dtype, x->data, i);

			if (v == rep || (isnan(rep) && isnan(v)))
				v = fv[nf == 1 ? 0 : i % c];
			rt_store_f64(y->dtype, y->data, i, v);
		}
	} else {
		int64_t rep = rt_attr_int(k, "replaced_value_int64", 0);

		for (int64_t i = 0; i < x->numel; i++) {
			int64_t v = rt_load_i64(x->dtype, x->data, i);
			int hit = rt_dtype_is_float(x->dtype) ?
				  rt_load_f64(x->dtype, x->data, i) == (double)rep : v == rep;

			if (hit)
				rt_store_i64(y->dtype, y->data, i, iv[ni == 1 ? 0 : i % c]);
			else if (rt_dtype_is_float(x->dtype))
				rt_store_f64(y->dtype, y->data, i, rt_load_f64(x->dtype, x->data, i));
			else
				rt_store_i64(y->dtype, y->data, i, v);
		}
	}
	return 0;
}

static int k_normalizer(struct rt_kctx *k)
{
	const char *norm = rt_attr_str(k, "norm", "MAX");
	struct rt_value *x, *y;
	int64_t n, f;
	int mode, rc;

	if ((rc = ml_in_rows(k, &x, &n, &f)) < 0)
		return rc;
	if (!strcmp(norm, "MAX"))
		mode = 0;
	else if (!strcmp(norm, "L1"))
		mode = 1;
	else if (!strcmp(norm, "L2"))
		mode = 2;
	else
		return rt_err(k, "unknown norm '%s'", norm);
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_FLOAT, x->rank, x->dims)))
		return IR_ENOMEM;
	for (int64_t r = 0; r < n; r++) {
		double d = mode == 0 ? -INFINITY : 0;

		for (int64_t j = 0; j < f; j++) {
			double v = rt_load_f64(x->dtype, x->data, r * f + j);

			d = mode == 0 ? fmax(d, v) : mode == 1 ? d + fabs(v) : d + v * v;
		}
		if (mode == 2)
			d = sqrt(d);
		for (int64_t j = 0; j < f; j++) {
			double v = rt_load_f64(x->dtype, x->data, r * f + j);

			((float *)y->data)[r * f + j] = (float)(d != 0 ? v / d : v);
		}
	}
	return 0;
}

static int k_scaler(struct rt_kctx *k)
{
	size_t no = 0, ns = 0;
	const float *off = rt_attr_floats(k, "offset", &no);
	const float *sc = rt_attr_floats(k, "scale", &ns);
	struct rt_value *x, *y;
	int64_t c;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (x->dtype == IR_DTYPE_STRING)
		return rt_err(k, "input must be numeric");
	c = x->rank ? x->dims[x->rank - 1] : 1;
	if ((no > 1 && (int64_t)no != c) || (ns > 1 && (int64_t)ns != c))
		return rt_err(k, "offset (%zu) and scale (%zu) must have 1 or %lld entries",
			      no, ns, (long long)c);
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_FLOAT, x->rank, x->dims)))
		return IR_ENOMEM;
	for (int64_t i = 0; i < x->numel; i++) {
		double v = rt_load_f64(x->dtype, x->data, i);
		double o = no ? off[no == 1 ? 0 : i % c] : 0, s = ns ? sc[ns == 1 ? 0 : i % c] : 1;

		((float *)y->data)[i] = (float)((v - o) * s);
	}
	return 0;
}

/* ---- FeatureVectorizer ------------------------------------------------- */

static int k_feature_vectorizer(struct rt_kctx *k)
{
	size_t nd = 0;
	const int64_t *idims = rt_attr_ints(k, "inputdimensions", &nd);
	int64_t n = -1, width = 0, dims[2], off = 0;
	struct rt_value *y;

	for (size_t i = 0; i < k->n_in; i++) {
		struct rt_value *x;
		int64_t rows;
		int rc;

		if ((rc = rt_in_tensor(k, i, &x)) < 0)
			return rc;
		rows = x->rank <= 1 ? 1 : x->dims[0];
		if (n >= 0 && rows != n)
			return rt_err(k, "input %zu has %lld rows, input 0 %lld", i,
				      (long long)rows, (long long)n);
		n = rows;
		width += i < nd ? idims[i] : (x->rank ? x->numel / (rows ? rows : 1) : 1);
	}
	if (n < 0)
		return rt_err(k, "no inputs");
	dims[0] = n;
	dims[1] = width;
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_FLOAT, 2, dims)))
		return IR_ENOMEM;
	memset(y->data, 0, (size_t)(n * width) * sizeof(float));
	for (size_t i = 0; i < k->n_in; i++) {
		struct rt_value *x = k->in[i];
		int64_t cols = x->rank ? x->numel / (n ? n : 1) : 1;
		int64_t w = i < nd ? idims[i] : cols;

		for (int64_t r = 0; r < n; r++)
			for (int64_t j = 0; j < w && j < cols; j++)
				((float *)y->data)[r * width + off + j] =
					(float)rt_load_f64(x->dtype, x->data, r * cols + j);
		off += w;
	}
	return 0;
}

/* ---- LinearClassifier, LinearRegressor -------------------------------- */

static int k_linear_classifier(struct rt_kctx *k)
{
	size_t nc = 0, ni = 0;
	const float *coef = rt_attr_floats(k, "coefficients", &nc);
	const float *icpt = rt_attr_floats(k, "intercepts", &ni);
	struct ml_labels l;
	enum ml_post post;
	struct rt_value *x, *y, *z;
	int64_t n, f, nclass, zc, dims[2];
	double *s = NULL;
	int binary, rc;

	if ((rc = ml_labels_get(k, &l)) < 0 || (rc = ml_post_attr(k, &post)) < 0 ||
	    (rc = ml_in_rows(k, &x, &n, &f)) < 0)
		return rc;
	if (!coef || !f || nc % (size_t)f)
		return rt_err(k, "%zu coefficients for %lld features", nc, (long long)f);
	nclass = (int64_t)nc / f;
	if (ni && (int64_t)ni != nclass)
		return rt_err(k, "%zu intercepts for %lld classes", ni, (long long)nclass);
	binary = nclass == 1 && l.n == 2;
	if (!binary && (size_t)nclass != l.n)
		return rt_err(k, "%lld coefficient rows for %zu labels", (long long)nclass, l.n);
	zc = binary ? 2 : nclass;
	dims[0] = n;
	dims[1] = zc;
	if (!(y = ml_labels_out(k, &l, n)) || !(z = rt_out_tensor(k, 1, IR_DTYPE_FLOAT, 2, dims)))
		return IR_ENOMEM;
	if (!(s = malloc((size_t)(zc + 1) * sizeof(*s))))
		return rt_oom(k);
	for (int64_t r = 0; r < n; r++) {
		size_t best = 0;

		for (int64_t c = 0; c < nclass; c++) {
			double v = ni ? icpt[c] : 0;

			for (int64_t j = 0; j < f; j++)
				v += coef[c * f + j] * rt_load_f64(x->dtype, x->data, r * f + j);
			s[c] = v;
		}
		if (binary) {
			/* one score for the second class: [-s, s] (NONE), else
			 * the transform of that pair with LOGISTIC as [1-p, p] */
			double v = s[0];

			best = v > 0 ? 1 : 0;
			s[0] = -v;
			s[1] = v;
			if (post == ML_POST_LOGISTIC) {
				s[1] = ml_logistic(v);
				s[0] = 1 - s[1];
			} else {
				ml_post_apply(post, s, 2);
			}
		} else {
			for (int64_t c = 1; c < nclass; c++)
				if (s[c] > s[best])
					best = (size_t)c;
			ml_post_apply(post, s, nclass);
		}
		if ((rc = ml_label_set(k, &l, y, r, best)) < 0)
			goto cleanup;
		for (int64_t c = 0; c < zc; c++)
			((float *)z->data)[r * zc + c] = (float)s[c];
	}
	rc = 0;
cleanup:
	free(s);
	return rc;
}

static int k_linear_regressor(struct rt_kctx *k)
{
	size_t nc = 0, ni = 0;
	const float *coef = rt_attr_floats(k, "coefficients", &nc);
	const float *icpt = rt_attr_floats(k, "intercepts", &ni);
	int64_t targets = rt_attr_int(k, "targets", 1), n, f, dims[2];
	enum ml_post post;
	struct rt_value *x, *y;
	double *s;
	int rc;

	if ((rc = ml_post_attr(k, &post)) < 0 || (rc = ml_in_rows(k, &x, &n, &f)) < 0)
		return rc;
	if (targets < 1 || (int64_t)nc != targets * f)
		return rt_err(k, "%zu coefficients for %lld targets of %lld features", nc,
			      (long long)targets, (long long)f);
	if (ni && (int64_t)ni != targets)
		return rt_err(k, "%zu intercepts for %lld targets", ni, (long long)targets);
	dims[0] = n;
	dims[1] = targets;
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_FLOAT, 2, dims)))
		return IR_ENOMEM;
	if (!(s = malloc((size_t)targets * sizeof(*s))))
		return rt_oom(k);
	for (int64_t r = 0; r < n; r++) {
		for (int64_t t = 0; t < targets; t++) {
			double v = ni ? icpt[t] : 0;

			for (int64_t j = 0; j < f; j++)
				v += coef[t * f + j] * rt_load_f64(x->dtype, x->data, r * f + j);
			s[t] = v;
		}
		ml_post_apply(post, s, targets);
		for (int64_t t = 0; t < targets; t++)
			((float *)y->data)[r * targets + t] = (float)s[t];
	}
	free(s);
	return 0;
}

#define ML "ai.onnx.ml"

const struct rt_kernel rt_kernels_ml[] = {
	{ ML, "ArrayFeatureExtractor", 1, RT_OPEN, k_array_feature_extractor },
	{ ML, "Binarizer", 1, RT_OPEN, k_binarizer },
	{ ML, "CastMap", 1, RT_OPEN, ml_k_cast_map },
	{ ML, "CategoryMapper", 1, RT_OPEN, ml_k_category_mapper },
	{ ML, "DictVectorizer", 1, RT_OPEN, ml_k_dict_vectorizer },
	{ ML, "FeatureVectorizer", 1, RT_OPEN, k_feature_vectorizer },
	{ ML, "Imputer", 1, RT_OPEN, k_imputer },
	{ ML, "LabelEncoder", 1, RT_OPEN, ml_k_label_encoder },
	{ ML, "LinearClassifier", 1, RT_OPEN, k_linear_classifier },
	{ ML, "LinearRegressor", 1, RT_OPEN, k_linear_regressor },
	{ ML, "Normalizer", 1, RT_OPEN, k_normalizer },
	{ ML, "OneHotEncoder", 1, RT_OPEN, ml_k_one_hot_encoder },
	{ ML, "SVMClassifier", 1, RT_OPEN, ml_k_svm_classifier },
	{ ML, "SVMRegressor", 1, RT_OPEN, ml_k_svm_regressor },
	{ ML, "Scaler", 1, RT_OPEN, k_scaler },
	{ ML, "TreeEnsemble", 5, RT_OPEN, ml_k_tree_ensemble },
	{ ML, "TreeEnsembleClassifier", 1, RT_OPEN, ml_k_tree_classifier },
	{ ML, "TreeEnsembleRegressor", 1, RT_OPEN, ml_k_tree_regressor },
	{ ML, "ZipMap", 1, RT_OPEN, ml_k_zip_map },
};
const size_t rt_n_kernels_ml = sizeof(rt_kernels_ml) / sizeof(rt_kernels_ml[0]);
