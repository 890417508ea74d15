/* k_ml_enc.c: the ai.onnx.ml encoders and map ops: CategoryMapper,
 * LabelEncoder (1, 2, 4), OneHotEncoder, CastMap, DictVectorizer, ZipMap.
 * Maps are RT_MAP values (items[0] keys, items[1] values, both 1-D). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_ml_int.h"

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

/* A sorted index of the keys for lookups in log time: one entry per key
 * with its position j, ordered by value then j (so the first of equal
 * keys is found).  NaN sorts last and equals NaN (the spec's bitwise
 * match). */
enum { LE_STR, LE_INT, LE_DBL };

struct le_ent {
	const char *s;
	int64_t i;
	double d;
	size_t j;
};

static int cmp_dbl(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) - isnan(b);
	return (a > b) - (a < b);
}

static int le_cmp(int mode, const struct le_ent *a, const struct le_ent *b)
{
	switch (mode) {
	case LE_STR: return strcmp(a->s, b->s);
	case LE_INT: return (a->i > b->i) - (a->i < b->i);
	default: return cmp_dbl(a->d, b->d);
	}
}

#define LE_SORT(name, mode) \
	static int name(const void *a, const void *b) \
	{ \
		const struct le_ent *x = a, *y = b; \
		int c = le_cmp(mode, x, y); \
		return c ? c : (x->j > y->j) - (x->j < y->j); \
	}
LE_SORT(le_sort_str, LE_STR)
LE_SORT(le_sort_int, LE_INT)
LE_SORT(le_sort_dbl, LE_DBL)
#undef LE_SORT

/* Position of the first key equal to e, or n when none. */
static size_t le_lookup(int mode, const struct le_ent *idx, size_t n, const struct le_ent *e)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (le_cmp(mode, &idx[mid], e) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && !le_cmp(mode, &idx[lo], e) ? idx[lo].j : n;
}

/* ---- CategoryMapper, LabelEncoder, OneHotEncoder ------------------------ */

int ml_k_category_mapper(struct rt_kctx *k)
{
	const struct ir_attr *cs = rt_attr(k, "cats_strings");
	size_t ni = 0, ns = cs && cs->type == IR_ATTR_STRINGS ? cs->n_strings : 0;
	const int64_t *ci = rt_attr_ints(k, "cats_int64s", &ni);
	struct rt_value *x, *y;
	struct le_ent *idx = NULL;
	int str_in, rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (ni != ns)
		return rt_err(k, "cats_strings (%zu) and cats_int64s (%zu) differ in length", ns, ni);
	str_in = x->dtype == IR_DTYPE_STRING;
	if (!str_in && x->dtype != IR_DTYPE_INT64)
		return rt_err(k, "input must be string or int64, is %s", ir_dtype_name(x->dtype));
	if (!(y = rt_out_tensor(k, 0, str_in ? IR_DTYPE_INT64 : IR_DTYPE_STRING, x->rank,
				x->dims)))
		return IR_ENOMEM;
	if (!(idx = malloc((ns + 1) * sizeof(*idx))))
		return rt_oom(k);
	for (size_t j = 0; j < ns; j++) {
		idx[j].j = j;
		idx[j].s = (const char *)cs->strings[j];
		idx[j].i = ci[j];
	}
	qsort(idx, ns, sizeof(*idx), str_in ? le_sort_str : le_sort_int);
	for (int64_t i = 0; i < x->numel; i++) {
		struct le_ent e = { NULL, 0, 0, 0 };
		size_t j;

		if (str_in) {
			e.s = str_at(x, i);
			j = le_lookup(LE_STR, idx, ns, &e);
			((int64_t *)y->data)[i] = j < ns ? ci[j] : rt_attr_int(k, "default_int64", -1);
		} else {
			e.i = ((int64_t *)x->data)[i];
			j = le_lookup(LE_INT, idx, ns, &e);
			if (!(((char **)y->data)[i] = dup_str(k, j < ns ? (const char *)cs->strings[j] :
					rt_attr_str(k, "default_string", "_Unused")))) {
				rc = IR_ENOMEM;
				break;
			}
		}
	}
	free(idx);
	return rc < 0 ? rc : 0;
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
	/* the spec's name, or the *_as_tensor spelling some ONNX tests use */
	snprintf(name, sizeof(name), "%s_tensor", pre);
	if (!rt_attr(k, name))
		snprintf(name, sizeof(name), "%s_as_tensor", pre);
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
	struct le_ent *idx = NULL;
	int out_dtype, mode, rc;

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
	if (k->version >= 4) {
		const char *dn = rt_attr(k, "default_tensor") ? "default_tensor" :
				 "default_as_tensor";

		if (rt_attr(k, dn) && (rc = rt_attr_tensor(k, dn, &dt)) < 0)
			goto cleanup;
	}
	if (!(y = rt_out_tensor(k, 0, out_dtype, x->rank, x->dims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	mode = keys.kind == 1 ? LE_STR : keys.kind == 2 && !rt_dtype_is_float(x->dtype) ?
	       LE_INT : LE_DBL;
	if (!(idx = malloc((keys.n + 1) * sizeof(*idx)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (size_t j = 0; j < keys.n; j++) {
		idx[j].j = j;
		if (mode == LE_STR)
			idx[j].s = le_str(&keys, j);
		else if (mode == LE_INT)
			idx[j].i = le_int(&keys, j);
		else
			idx[j].d = keys.kind == 3 ? le_dbl(&keys, j) : (double)le_int(&keys, j);
	}
	qsort(idx, keys.n, sizeof(*idx), mode == LE_STR ? le_sort_str :
	      mode == LE_INT ? le_sort_int : le_sort_dbl);
	for (int64_t i = 0; i < x->numel; i++) {
		struct le_ent e = { NULL, 0, 0, 0 };
		size_t j;

		if (mode == LE_STR)
			e.s = str_at(x, i);
		else if (mode == LE_INT)
			e.i = rt_load_i64(x->dtype, x->data, i);
		else
			e.d = rt_load_f64(x->dtype, x->data, i);
		j = le_lookup(mode, idx, keys.n, &e);
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
	free(idx);
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
			    rt_load_f64(x->dtype, x->data, i) == (double)ci[j])
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
		char buf[400];   /* fits "%f" of any double */

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
				snprintf(buf, sizeof(buf), "%f", rt_load_f64(vals->dtype, vals->data, s));
			if (!(((char **)y->data)[d] = dup_str(k, v)))
				rc = IR_ENOMEM;
		} else if (vals->dtype == IR_DTYPE_STRING) {
			/* numbers written as strings, as onnxruntime's stof/stoll */
			const char *v = str_at(vals, s);
			char *end;
			double f = strtod(v, &end);

			if (end == v || *end) {
				rc = rt_err(k, "map value '%s' is not a number", v);
				break;
			}
			if (dtype == IR_DTYPE_INT64)
				rt_store_i64(dtype, y->data, d, strtoll(v, NULL, 10));
			else
				rt_store_f64(dtype, y->data, d, f);
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

/* One map into row `row` of y (width entries, zero-filled first). */
static int dict_row(struct rt_kctx *k, const struct rt_value *m, struct rt_value *y,
		    int64_t row, const struct ir_attr *sv, const int64_t *iv, int64_t width)
{
	const struct rt_value *keys = m->items[0], *vals = m->items[1];
	int skeys = keys->dtype == IR_DTYPE_STRING;

	if (vals->dtype != y->dtype)
		return rt_err(k, "maps of a sequence differ in value type");
	for (int64_t i = 0; i < width; i++)
		if (y->dtype != IR_DTYPE_STRING)
			rt_store_f64(y->dtype, y->data, row * width + i, 0);
	for (int64_t j = 0; j < keys->numel; j++) {
		int64_t i;

		for (i = 0; i < width; i++)
			if (skeys ? !strcmp(str_at(keys, j), (const char *)sv->strings[i]) :
			    rt_load_i64(keys->dtype, keys->data, j) == iv[i])
				break;
		if (i == width) {
			char kb[32];

			if (!skeys)
				snprintf(kb, sizeof(kb), "%lld",
					 (long long)rt_load_i64(keys->dtype, keys->data, j));
			return rt_err(k, "map key '%s' is not in the vocabulary",
				      skeys ? str_at(keys, j) : kb);
		}
		if (y->dtype == IR_DTYPE_STRING) {
			char **d = (char **)y->data + row * width + i;

			free(*d);
			if (!(*d = dup_str(k, str_at(vals, j))))
				return IR_ENOMEM;
		} else {
			rt_store_f64(y->dtype, y->data, row * width + i,
				     rt_load_f64(vals->dtype, vals->data, j));
		}
	}
	for (int64_t i = 0; i < width && y->dtype == IR_DTYPE_STRING; i++) {
		char **d = (char **)y->data + row * width + i;

		if (!*d && !(*d = dup_str(k, "")))
			return IR_ENOMEM;
	}
	return 0;
}

/* A map gives [1, C]; a sequence of N maps (the ONNX reference's form)
 * gives [N, C].  Every key must be in the vocabulary (the spec says so). */
int ml_k_dict_vectorizer(struct rt_kctx *k)
{
	const struct ir_attr *sv = rt_attr(k, "string_vocabulary");
	size_t ni = 0, ns = sv && sv->type == IR_ATTR_STRINGS ? sv->n_strings : 0;
	const int64_t *iv = rt_attr_ints(k, "int64_vocabulary", &ni);
	struct rt_value *in = rt_in(k, 0), *const *maps, *y;
	int64_t dims[2];
	size_t nm;
	int rc, skeys;

	if (in && in->kind == RT_SEQUENCE) {
		maps = in->items;
		nm = in->n;
	} else {
		if ((rc = in_map(k, &in)) < 0)
			return rc;
		maps = &in;
		nm = 1;
	}
	for (size_t i = 0; i < nm; i++)
		if (!maps[i] || maps[i]->kind != RT_MAP || maps[i]->n != 2 ||
		    maps[i]->items[0]->numel != maps[i]->items[1]->numel)
			return rt_err(k, "input must be a map or a sequence of maps");
	if (!nm)
		return rt_err(k, "empty sequence of maps");
	skeys = maps[0]->items[0]->dtype == IR_DTYPE_STRING;
	if (skeys ? !ns : !ni)
		return rt_err(k, "the %s vocabulary is needed for %s keys",
			      skeys ? "string" : "int64", ir_dtype_name(maps[0]->items[0]->dtype));
	dims[0] = (int64_t)nm;
	dims[1] = (int64_t)(skeys ? ns : ni);
	if (!(y = rt_out_tensor(k, 0, maps[0]->items[1]->dtype, 2, dims)))
		return IR_ENOMEM;
	for (size_t i = 0; i < nm; i++)
		if ((rc = dict_row(k, maps[i], y, (int64_t)i, sv, iv, dims[1])) < 0)
			return rc;
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
