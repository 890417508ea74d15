/* k_ml_enc.c: the ai.onnx.ml encoders and map ops: CategoryMapper,
 * LabelEncoder (1, 2, 4), OneHotEncoder, CastMap, DictVectorizer, ZipMap.
 * Maps are RT_MAP values (items[0] keys, items[1] values, both 1-D). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validators/k_ml_int.h"

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

/* ---- CategoryMapper, LabelEncoder, OneHotEncoder ------------------------ */

int ml_k_category_mapper(struct rt_kctx *k)
{
	const struct ir_attr *cs = rt_attr(k, "cats_strings");
	size_t ni = 0, ns = cs && cs->type == IR_ATTR_STRINGS ? cs->n_strings : 0;
	const int64_t *ci = rt_attr_ints(k, "cats_int64s", &ni);
	struct rt_value *x, *y;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (ni != ns)
		return rt_err(k, "cats_strings (%zu) and cats_int64s (%zu) differ in length", ns, ni);
	if (x->dtype == IR_DTYPE_STRING) {
		int64_t dflt = rt_attr_int(k, "default_int64", -1);

		if (!(y = rt_out_tensor(k, 0, IR_DTYPE_INT64, x->rank, x->dims)))
			return IR_ENOMEM;
		for (int64_t i = 0; i < x->numel; i++) {
			int64_t v = dflt;

			for (size_t j = 0; j < ns; j++)
				if (!strcmp(str_at(x, i), (const char *)cs->strings[j])) {
					v = ci[j];
					break;
				}
			((int64_t *)y->data)[i] = v;
		}
		return 0;
	}
	if (x->dtype != IR_DTYPE_INT64)
		return rt_err(k, "input must be string or int64, is %s", ir_dtype_name(x->dtype));
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_STRING, x->rank, x->dims)))
		return IR_ENOMEM;
	for (int64_t i = 0; i < x->numel; i++) {
		const char *v = rt_attr_str(k, "default_string", "_Unused");

		for (size_t j = 0; j < ni; j++)
			if (((int64_t *)x->data)[i] == ci[j]) {
				v = (const char *)cs->strings[j];
				break;
			}
		if (!(((char **)y->data)[i] = dup_str(k, v)))
			return IR_ENOMEM;
	}
	return 0;
}

/* One side of a LabelEncoder mapping: strings, ints or floats (doubles
 * for the tensor forms of version 4). */
struct le_list {
	int kind;            /* 0 none, 1 strings, 2 ints, 3 floats */
	size_t n;
	const struct ir_attr *s;
	const int64_t *i;
	const float *f;
	struct rt_value *t;  /* keys_tensor / values_tensor (owned) */
};

static int le_list_get(struct rt_kctx *k, const char *pre, struct le_list *l)
{
	char name[32];
	const struct ir_attr *a;
	int found = 0;

	memset(l, 0, sizeof(*l));
	snprintf(name, sizeof(name), "%s_strings", pre);
	if ((a = rt_attr(k, name)) && a->type == IR_ATTR_STRINGS) {
		l->kind = 1;
		l->s = a;
		l->n = a->n_strings;
		found++;
	}
	snprintf(name, sizeof(name), "%s_int64s", pre);
	if (rt_attr(k, name)) {
		l->kind = 2;
		l->i = rt_attr_ints(k, name, &l->n);
		found++;
	}
	snprintf(name, sizeof(name), "%s_floats", pre);
	if (rt_attr(k, name)) {
		l->kind = 3;
		l->f = rt_attr_floats(k, name, &l->n);
		found++;
	}
	snprintf(name, sizeof(name), "%s_tensor", pre);
	if (k->version >= 4 && rt_attr(k, name)) {
		int rc = rt_attr_tensor(k, name, &l->t);

		if (rc < 0)
			return rc;
		l->kind = l->t->dtype == IR_DTYPE_STRING ? 1 : rt_dtype_is_float(l->t->dtype) ? 3 : 2;
		l->n = (size_t)l->t->numel;
		found++;
	}
	if (found != 1)
		return rt_err(k, "exactly one of the %s_* attributes must be set (%d are)", pre, found);
	return 0;
}

static const char *le_str(const struct le_list *l, size_t i)
{
	return l->t ? str_at(l->t, (int64_t)i) : (const char *)l->s->strings[i];
}

static int64_t le_int(const struct le_list *l, size_t i)
{
	return l->t ? rt_load_i64(l->t->dtype, l->t->data, (int64_t)i) : l->i[i];
}

static double le_dbl(const struct le_list *l, size_t i)
{
	return l->t ? rt_load_f64(l->t->dtype, l->t->data, (int64_t)i) : l->f[i];
}

/* Version 1: classes_strings maps string <-> its index. */
static int label_encoder_v1(struct rt_kctx *k, struct rt_value *x)
{
	const struct ir_attr *cs = rt_attr(k, "classes_strings");
	size_t n = cs && cs->type == IR_ATTR_STRINGS ? cs->n_strings : 0;
	struct rt_value *y;

	if (x->dtype == IR_DTYPE_STRING) {
		int64_t dflt = rt_attr_int(k, "default_int64", -1);

		if (!(y = rt_out_tensor(k, 0, IR_DTYPE_INT64, x->rank, x->dims)))
			return IR_ENOMEM;
		for (int64_t i = 0; i < x->numel; i++) {
			int64_t v = dflt;

			for (size_t j = 0; j < n; j++)
				if (!strcmp(str_at(x, i), (const char *)cs->strings[j])) {
					v = (int64_t)j;
					break;
				}
			((int64_t *)y->data)[i] = v;
		}
		return 0;
	}
	if (x->dtype != IR_DTYPE_INT64)
		return rt_err(k, "input must be string or int64, is %s", ir_dtype_name(x->dtype));
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_STRING, x->rank, x->dims)))
		return IR_ENOMEM;
	for (int64_t i = 0; i < x->numel; i++) {
		int64_t v = ((int64_t *)x->data)[i];
		const char *s = v >= 0 && (size_t)v < n ? (const char *)cs->strings[v] :
				rt_attr_str(k, "default_string", "_Unused");

		if (!(((char **)y->data)[i] = dup_str(k, s)))
			return IR_ENOMEM;
	}
	return 0;
}

int ml_k_label_encoder(struct rt_kctx *k)
{
	struct le_list keys, vals;
	struct rt_value *x, *y, *dt = NULL;
	int out_dtype, rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (k->version < 2)
		return label_encoder_v1(k, x);
	memset(&vals, 0, sizeof(vals));
	if ((rc = le_list_get(k, "keys", &keys)) < 0)
		return rc;
	if ((rc = le_list_get(k, "values", &vals)) < 0)
		goto cleanup;
	if (keys.n != vals.n) {
		rc = rt_err(k, "%zu keys for %zu values", keys.n, vals.n);
		goto cleanup;
	}
	if ((keys.kind == 1) != (x->dtype == IR_DTYPE_STRING)) {
		rc = rt_err(k, "input of type %s does not match the keys", ir_dtype_name(x->dtype));
		goto cleanup;
	}
	out_dtype = vals.t ? vals.t->dtype : vals.kind == 1 ? IR_DTYPE_STRING :
		    vals.kind == 2 ? IR_DTYPE_INT64 : IR_DTYPE_FLOAT;
	if (k->version >= 4 && rt_attr(k, "default_tensor") &&
	    (rc = rt_attr_tensor(k, "default_tensor", &dt)) < 0)
		goto cleanup;
	if (!(y = rt_out_tensor(k, 0, out_dtype, x->rank, x->dims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	for (int64_t i = 0; i < x->numel; i++) {
		size_t j;

		for (j = 0; j < keys.n; j++) {
			if (keys.kind == 1) {
				if (!strcmp(str_at(x, i), le_str(&keys, j)))
					break;
			} else if (keys.kind == 2 && !rt_dtype_is_float(x->dtype)) {
				if (rt_load_i64(x->dtype, x->data, i) == le_int(&keys, j))
					break;
			} else {
				double a = rt_load_f64(x->dtype, x->data, i), b = keys.kind == 3 ?
					   le_dbl(&keys, j) : (double)le_int(&keys, j);

				if (a == b || (isnan(a) && isnan(b)))
					break;
			}
		}
		if (out_dtype == IR_DTYPE_STRING) {
			const char *s = j < keys.n ? le_str(&vals, j) : dt && dt->numel ?
					str_at(dt, 0) : rt_attr_str(k, "default_string", "_Unused");

			if (!(((char **)y->data)[i] = dup_str(k, s))) {
				rc = IR_ENOMEM;
				goto cleanup;
			}
		} else if (vals.kind == 2) {
			rt_store_i64(out_dtype, y->data, i, j < keys.n ? le_int(&vals, j) :
				     dt && dt->numel ? rt_load_i64(dt->dtype, dt->data, 0) :
				     rt_attr_int(k, "default_int64", -1));
		} else {
			rt_store_f64(out_dtype, y->data, i, j < keys.n ? le_dbl(&vals, j) :
				     dt && dt->numel ? rt_load_f64(dt->dtype, dt->data, 0) :
				     rt_attr_float(k, "default_float", -0.0f));
		}
	}
	rc = 0;
cleanup:
	rt_value_unref(keys.t);
	rt_value_unref(vals.t);
	rt_value_unref(dt);
	return rc;
}

int ml_k_one_hot_encoder(struct rt_kctx *k)
{
	const struct ir_attr *cs = rt_attr(k, "cats_strings");
	size_t ni = 0, ns = cs && cs->type == IR_ATTR_STRINGS ? cs->n_strings : 0;
	const int64_t *ci = rt_attr_ints(k, "cats_int64s", &ni);
	int zeros = (int)rt_attr_int(k, "zeros", 1);
	struct rt_value *x, *y;
	int64_t dims[RT_MAX_RANK], nc;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (x->dtype == IR_DTYPE_STRING ? !ns : !ni)
		return rt_err(k, "attribute cats_%s is required for %s input",
			      x->dtype == IR_DTYPE_STRING ? "strings" : "int64s",
			      ir_dtype_name(x->dtype));
	if (x->rank >= RT_MAX_RANK)
		return rt_err(k, "input rank too large");
	nc = (int64_t)(x->dtype == IR_DTYPE_STRING ? ns : ni);
	memcpy(dims, x->dims, (size_t)x->rank * sizeof(*dims));
	dims[x->rank] = nc;
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_FLOAT, x->rank + 1, dims)))
		return IR_ENOMEM;
	memset(y->data, 0, (size_t)y->numel * sizeof(float));
	for (int64_t i = 0; i < x->numel; i++) {
		int64_t j;

		for (j = 0; j < nc; j++)
			if (x->dtype == IR_DTYPE_STRING ?
			    !strcmp(str_at(x, i), (const char *)cs->strings[j]) :
			    (int64_t)rt_load_f64(x->dtype, x->data, i) == ci[j])
				break;
		if (j < nc)
			((float *)y->data)[i * nc + j] = 1;
		else if (!zeros)
			return rt_err(k, "element %lld is not a known category (zeros=0)",
				      (long long)i);
	}
	return 0;
}

/* ---- maps: CastMap, DictVectorizer, ZipMap ---------------------------- */

static int in_map(struct rt_kctx *k, struct rt_value **m)
{
	*m = rt_in(k, 0);
	if (!*m || (*m)->kind != RT_MAP || (*m)->n != 2 || !(*m)->items[0] || !(*m)->items[1])
		return rt_err(k, "input 0 must be a map");
	if ((*m)->items[0]->numel != (*m)->items[1]->numel)
		return rt_err(k, "map with %lld keys and %lld values",
			      (long long)(*m)->items[0]->numel, (long long)(*m)->items[1]->numel);
	return 0;
}

/* order[] = 0..n-1 sorted by the int64 keys (insertion sort, stable). */
static void sort_by_key(const struct rt_value *keys, int64_t *order, int64_t n)
{
	for (int64_t i = 0; i < n; i++) {
		int64_t v = order[i] = i, j = i;
		int64_t key = ((const int64_t *)keys->data)[v];

		while (j > 0 && ((const int64_t *)keys->data)[order[j - 1]] > key) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = v;
	}
}

int ml_k_cast_map(struct rt_kctx *k)
{
	const char *to = rt_attr_str(k, "cast_to", "TO_FLOAT");
	const char *form = rt_attr_str(k, "map_form", "DENSE");
	int64_t max_map = rt_attr_int(k, "max_map", 1), n, width, *order = NULL;
	struct rt_value *m, *keys, *vals, *y;
	int dtype, sparse, rc;

	if ((rc = in_map(k, &m)) < 0)
		return rc;
	keys = m->items[0];
	vals = m->items[1];
	if (keys->dtype != IR_DTYPE_INT64)
		return rt_err(k, "map keys must be int64, are %s", ir_dtype_name(keys->dtype));
	if (!strcmp(to, "TO_FLOAT"))
		dtype = IR_DTYPE_FLOAT;
	else if (!strcmp(to, "TO_INT64"))
		dtype = IR_DTYPE_INT64;
	else if (!strcmp(to, "TO_STRING"))
		dtype = IR_DTYPE_STRING;
	else
		return rt_err(k, "unknown cast_to '%s'", to);
	if (!strcmp(form, "DENSE"))
		sparse = 0;
	else if (!strcmp(form, "SPARSE"))
		sparse = 1;
	else
		return rt_err(k, "unknown map_form '%s'", form);
	if (vals->dtype == IR_DTYPE_STRING && dtype != IR_DTYPE_STRING)
		return rt_err(k, "string map values cannot be cast to %s", to);
	n = keys->numel;
	width = sparse ? max_map : n;
	if (width < 0)
		return rt_err(k, "negative max_map");
	if (!(order = malloc((size_t)(n ? n : 1) * sizeof(*order))))
		return rt_oom(k);
	sort_by_key(keys, order, n);
	{
		int64_t dims[2] = { 1, width };

		if (!(y = rt_out_tensor(k, 0, dtype, 2, dims))) {
			rc = IR_ENOMEM;
			goto cleanup;
		}
	}
	if (dtype != IR_DTYPE_STRING)
		for (int64_t i = 0; i < width; i++)
			rt_store_f64(dtype, y->data, i, 0);
	rc = 0;
	for (int64_t i = 0; i < n && !rc; i++) {
		int64_t s = order[i], d = sparse ? ((int64_t *)keys->data)[s] : i;
		char buf[64];

		if (d < 0 || d >= width) {
			rc = rt_err(k, "key %lld outside [0, max_map=%lld)", (long long)d,
				    (long long)width);
			break;
		}
		if (dtype == IR_DTYPE_STRING) {
			const char *v = buf;

			if (vals->dtype == IR_DTYPE_STRING)
				v = str_at(vals, s);
			else
				snprintf(buf, sizeof(buf), "%g", rt_load_f64(vals->dtype, vals->data, s));
			if (!(((char **)y->data)[d] = dup_str(k, v)))
				rc = IR_ENOMEM;
		} else {
			rt_store_f64(dtype, y->data, d, rt_load_f64(vals->dtype, vals->data, s));
		}
	}
	if (!rc && dtype == IR_DTYPE_STRING)
		for (int64_t i = 0; i < width && !rc; i++)
			if (!((char **)y->data)[i] && !(((char **)y->data)[i] = dup_str(k, "")))
				rc = IR_ENOMEM;
cleanup:
	free(order);
	return rc;
}

int ml_k_dict_vectorizer(struct rt_kctx *k)
{
	const struct ir_attr *sv = rt_attr(k, "string_vocabulary");
	size_t ni = 0, ns = sv && sv->type == IR_ATTR_STRINGS ? sv->n_strings : 0;
	const int64_t *iv = rt_attr_ints(k, "int64_vocabulary", &ni);
	struct rt_value *m, *keys, *vals, *y;
	int64_t dims[2];
	int rc, skeys;

	if ((rc = in_map(k, &m)) < 0)
		return rc;
	keys = m->items[0];
	vals = m->items[1];
	skeys = keys->dtype == IR_DTYPE_STRING;
	if (skeys ? !ns : !ni)
		return rt_err(k, "the %s vocabulary is needed for %s keys",
			      skeys ? "string" : "int64", ir_dtype_name(keys->dtype));
	dims[0] = 1;
	dims[1] = (int64_t)(skeys ? ns : ni);
	if (!(y = rt_out_tensor(k, 0, vals->dtype, 2, dims)))
		return IR_ENOMEM;
	for (int64_t i = 0; i < dims[1]; i++) {
		int64_t j;

		for (j = 0; j < keys->numel; j++)
			if (skeys ? !strcmp(str_at(keys, j), (const char *)sv->strings[i]) :
			    rt_load_i64(keys->dtype, keys->data, j) == iv[i])
				break;
		if (vals->dtype == IR_DTYPE_STRING) {
			if (!(((char **)y->data)[i] = dup_str(k, j < keys->numel ? str_at(vals, j) : "")))
				return IR_ENOMEM;
		} else {
			rt_store_f64(vals->dtype, y->data, i,
				     j < keys->numel ? rt_load_f64(vals->dtype, vals->data, j) : 0);
		}
	}
	return 0;
}

int ml_k_zip_map(struct rt_kctx *k)
{
	struct ml_labels l;
	struct rt_value *x, *seq = NULL;
	struct ir_diag sub;
	int64_t n, c;
	int rc;

	if ((rc = ml_labels_get(k, &l)) < 0 || (rc = ml_in_rows(k, &x, &n, &c)) < 0)
		return rc;
	if ((size_t)c != l.n)
		return rt_err(k, "%lld scores per row for %zu labels", (long long)c, l.n);
	ir_diag_init(&sub);
	if (rt_seq_new(l.strings ? IR_DTYPE_STRING : IR_DTYPE_INT64, &seq, &sub) < 0)
		return rt_oom(k);
	for (int64_t r = 0; r < n; r++) {
		struct rt_value *map = NULL, *kt = NULL, *vt = NULL;

		if (rt_seq_new(l.strings ? IR_DTYPE_STRING : IR_DTYPE_INT64, &map, &sub) < 0) {
			rc = rt_oom(k);
			goto fail;
		}
		map->kind = RT_MAP;
		if (rt_seq_push(seq, map, &sub) < 0 ||
		    rt_tensor_new(k->mem, l.strings ? IR_DTYPE_STRING : IR_DTYPE_INT64, 1, &c,
				  &kt, &sub) < 0 || rt_seq_push(map, kt, &sub) < 0 ||
		    rt_tensor_new(k->mem, IR_DTYPE_FLOAT, 1, &c, &vt, &sub) < 0 ||
		    rt_seq_push(map, vt, &sub) < 0) {
			rc = rt_oom(k);
			goto fail;
		}
		for (int64_t j = 0; j < c; j++)
			((float *)vt->data)[j] = (float)rt_load_f64(x->dtype, x->data, r * c + j);
		for (int64_t j = 0; j < c; j++)
			if ((rc = ml_label_set(k, &l, kt, j, (size_t)j)) < 0)
				goto fail;
	}
	seq->dtype = IR_DTYPE_FLOAT;
	return rt_out_set(k, 0, seq);
fail:
	rt_value_unref(seq);
	return rc;
}
