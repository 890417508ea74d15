/* load.c: reading one oprules JSON target file into a struct rules_target
 * with strict validation (unknown keys, wrong types, op and attribute names
 * checked against the operator registry, ranges), every error naming the
 * file and the JSON path.  The only cJSON walker of the project. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ir/ir.h"
#include "ir/registry.h"
#include "oprules/rules.h"
#include "oprules/rules_int.h"

#define MAX_FILE_BYTES (16u << 20)

struct ctx {
	const char *file;
	struct ir_diag *d;
};

static int fail(struct ctx *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct ctx *c, const char *path, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ir_diag_error(c->d, IR_EINVAL, "%s: %s: %s", c->file, path, msg);
}

static int nomem(struct ctx *c)
{
	return ir_diag_error(c->d, IR_ENOMEM, "%s: out of memory", c->file);
}

/* path + "." + key into buf (just key at top level). */
static const char *join(char *buf, size_t size, const char *path, const char *key)
{
	int n = snprintf(buf, size, "%s%s%s", path, *path ? "." : "", key);

	if (n < 0 || (size_t)n >= size)
		strcpy(buf + size - 4, "...");   /* long paths are cut, marked */
	return buf;
}

static int check_keys(struct ctx *c, const cJSON *obj, const char *path,
		      const char *const *keys)
{
	const cJSON *it;
	char p[RULES_PATH_MAX];

	cJSON_ArrayForEach(it, obj) {
		size_t i;

		for (i = 0; keys[i] && strcmp(keys[i], it->string); i++)
			;
		if (!keys[i])
			return fail(c, join(p, sizeof(p), path, it->string), "unknown key");
	}
	return 0;
}

static int dup_str(struct ctx *c, const char *s, char **out)
{
	if (!(*out = strdup(s)))
		return nomem(c);
	return 0;
}

/* Optional string member; *out stays as it is when absent. */
static int get_string(struct ctx *c, const cJSON *obj, const char *path,
		      const char *key, char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	char p[RULES_PATH_MAX];

	if (!v)
		return 0;
	if (!cJSON_IsString(v))
		return fail(c, join(p, sizeof(p), path, key), "expected a string");
	free(*out);
	*out = NULL;
	return dup_str(c, v->valuestring, out);
}

static int get_bool(struct ctx *c, const cJSON *obj, const char *path,
		    const char *key, int *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	char p[RULES_PATH_MAX];

	if (!v)
		return 0;
	if (!cJSON_IsBool(v))
		return fail(c, join(p, sizeof(p), path, key), "expected true or false");
	*out = cJSON_IsTrue(v);
	return 0;
}

static int is_integer(const cJSON *v)
{
	return cJSON_IsNumber(v) && isfinite(v->valuedouble) &&
	       v->valuedouble == floor(v->valuedouble) &&
	       fabs(v->valuedouble) <= 9007199254740992.0;
}

static int get_int(struct ctx *c, const cJSON *obj, const char *path,
		   const char *key, int64_t lo, int64_t hi, int64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	char p[RULES_PATH_MAX];

	if (!v)
		return 0;
	join(p, sizeof(p), path, key);
	if (!is_integer(v))
		return fail(c, p, "expected an integer");
	if (v->valuedouble < (double)lo || v->valuedouble > (double)hi)
		return fail(c, p, "%.0f is out of range %lld..%lld", v->valuedouble,
			    (long long)lo, (long long)hi);
	*out = (int64_t)v->valuedouble;
	return 0;
}

/* [min, max] of integers >= lo; max may be null (unbounded) when
 * allow_open. */
static int get_range(struct ctx *c, const cJSON *obj, const char *path,
		     const char *key, int lo, int allow_open, int *min, int *max)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key), *a, *b;
	char p[RULES_PATH_MAX];

	if (!v)
		return 0;
	join(p, sizeof(p), path, key);
	if (!cJSON_IsArray(v))
		return fail(c, p, "expected [min, max]");
	if (cJSON_GetArraySize(v) == 0)
		return fail(c, p, "empty range");
	if (cJSON_GetArraySize(v) != 2)
		return fail(c, p, "expected [min, max]");
	a = cJSON_GetArrayItem(v, 0);
	b = cJSON_GetArrayItem(v, 1);
	if (!is_integer(a) || a->valuedouble < lo || a->valuedouble > INT_MAX - 1)
		return fail(c, p, "min must be an integer >= %d", lo);
	if (cJSON_IsNull(b) && allow_open) {
		*max = RULES_UNBOUNDED;
	} else if (!is_integer(b) || b->valuedouble < lo || b->valuedouble > INT_MAX - 1) {
		return fail(c, p, allow_open ? "max must be an integer >= %d or null" :
			    "max must be an integer >= %d", lo);
	} else {
		*max = (int)b->valuedouble;
	}
	*min = (int)a->valuedouble;
	if (*min > *max)
		return fail(c, p, "inverted range [%d, %d]", *min, *max);
	return 0;
}

static int get_strings(struct ctx *c, const cJSON *obj, const char *path,
		       const char *key, char ***out, size_t *n)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key), *it;
	char p[RULES_PATH_MAX];
	size_t k = 0;

	if (!v)
		return 0;
	join(p, sizeof(p), path, key);
	if (!cJSON_IsArray(v))
		return fail(c, p, "expected an array of strings");
	cJSON_ArrayForEach(it, v)
		if (!cJSON_IsString(it))
			return fail(c, p, "expected an array of strings");
	rules_strv_free(*out, *n);
	*out = NULL;
	*n = 0;
	if (!cJSON_GetArraySize(v))
		return 0;
	if (!(*out = calloc((size_t)cJSON_GetArraySize(v), sizeof(char *))))
		return nomem(c);
	cJSON_ArrayForEach(it, v) {
		if (dup_str(c, it->valuestring, &(*out)[k]))
			return c->d->status;
		*n = ++k;
	}
	return 0;
}

static int get_dtypes(struct ctx *c, const cJSON *obj, const char *path,
		      const char *key, rules_dtypes *out, int *present)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key), *it;
	char p[RULES_PATH_MAX];
	rules_dtypes m = 0;

	if (!v)
		return 0;
	join(p, sizeof(p), path, key);
	if (!cJSON_IsArray(v))
		return fail(c, p, "expected an array of dtype names");
	cJSON_ArrayForEach(it, v) {
		rules_dtypes bit;

		if (!cJSON_IsString(it))
			return fail(c, p, "expected an array of dtype names");
		if (!(bit = rules_dtype_parse(it->valuestring)))
			return fail(c, p, "unknown dtype '%s'", it->valuestring);
		m |= bit;
	}
	if (!m && !present)
		return fail(c, p, "empty dtype list");
	*out = m;
	if (present)
		*present = 1;
	return 0;
}

/* "Name" or "domain:Name" into domain ("ai.onnx" default) and name. */
static int split_op_key(struct ctx *c, const char *path, const char *key,
			char **domain, char **name)
{
	const char *colon = strrchr(key, ':');

	if (colon && (colon == key || !colon[1]))
		return fail(c, path, "bad op key '%s' (want Name or domain:Name)", key);
	if (colon) {
		if (!(*domain = strndup(key, (size_t)(colon - key))))
			return nomem(c);
		if (!strcmp(*domain, ""))
			return fail(c, path, "empty domain");
	} else if (dup_str(c, "ai.onnx", domain)) {
		return c->d->status;
	}
	return dup_str(c, colon ? colon + 1 : key, name);
}

static int parse_value(struct ctx *c, const char *path, const cJSON *v,
		       enum ir_attr_type type, struct rules_value *out)
{
	const cJSON *it;
	size_t k = 0;

	switch (type) {
	case IR_ATTR_STRING:
	case IR_ATTR_STRINGS:
		if (!cJSON_IsString(v))
			return fail(c, path, "expected a string");
		out->kind = RULES_VALUE_STRING;
		return dup_str(c, v->valuestring, &out->str);
	case IR_ATTR_INT:
	case IR_ATTR_FLOAT:
		if (type == IR_ATTR_INT ? !is_integer(v) : !cJSON_IsNumber(v))
			return fail(c, path, type == IR_ATTR_INT ? "expected an integer" :
				    "expected a number");
		out->kind = RULES_VALUE_NUMBER;
		out->num = v->valuedouble;
		return 0;
	case IR_ATTR_INTS:
	case IR_ATTR_FLOATS:
		if (!cJSON_IsArray(v))
			return fail(c, path, "expected an array of numbers");
		cJSON_ArrayForEach(it, v)
			if (type == IR_ATTR_INTS ? !is_integer(it) : !cJSON_IsNumber(it))
				return fail(c, path, "expected an array of %s",
					    type == IR_ATTR_INTS ? "integers" : "numbers");
		out->kind = RULES_VALUE_NUMBERS;
		if (cJSON_GetArraySize(v) &&
		    !(out->nums = calloc((size_t)cJSON_GetArraySize(v), sizeof(double))))
			return nomem(c);
		cJSON_ArrayForEach(it, v)
			out->nums[k++] = it->valuedouble;
		out->n_nums = k;
		return 0;
	default:
		return fail(c, path, "attributes of this type cannot be constrained");
	}
}

static const char *const attr_keys[] = { "allowed", "min", "max", "equals", NULL };

static int parse_attr(struct ctx *c, const char *path, const cJSON *v,
		      const struct ir_op_attr *schema, struct rules_attr *a)
{
	const cJSON *al = cJSON_GetObjectItemCaseSensitive(v, "allowed"), *it;
	const cJSON *mn = cJSON_GetObjectItemCaseSensitive(v, "min");
	const cJSON *mx = cJSON_GetObjectItemCaseSensitive(v, "max");
	const cJSON *eq = cJSON_GetObjectItemCaseSensitive(v, "equals");
	enum ir_attr_type t = schema->type;
	int numeric = t == IR_ATTR_INT || t == IR_ATTR_FLOAT || t == IR_ATTR_INTS ||
		      t == IR_ATTR_FLOATS;
	char p[RULES_PATH_MAX];
	size_t k = 0;

	const char *what = t == IR_ATTR_STRING || t == IR_ATTR_STRINGS ? "strings" :
			   t == IR_ATTR_INTS || t == IR_ATTR_FLOATS ? "arrays" : "numbers";

	if (cJSON_IsArray(v)) {         /* shorthand: the allowed values */
		al = v;
		mn = mx = eq = NULL;
	} else if (!cJSON_IsObject(v)) {
		return fail(c, path, "expected an array of %s or an object", what);
	} else if (check_keys(c, v, path, attr_keys)) {
		return c->d->status;
	}
	if (!al && !mn && !mx && !eq)
		return fail(c, path, "no constraint (want allowed, min, max or equals)");
	if (al) {
		if (al == v)
			snprintf(p, sizeof(p), "%s", path);
		else
			join(p, sizeof(p), path, "allowed");
		if (!cJSON_IsArray(al))
			return fail(c, p, "expected an array of %s", what);
		if (!cJSON_GetArraySize(al))
			return fail(c, p, "empty list");
		cJSON_ArrayForEach(it, al) {
			if ((t == IR_ATTR_STRING || t == IR_ATTR_STRINGS) && !cJSON_IsString(it))
				return fail(c, p, "expected an array of strings");
			if ((t == IR_ATTR_INT || t == IR_ATTR_FLOAT) && !cJSON_IsNumber(it))
				return fail(c, p, "expected an array of numbers");
		}
		if (!(a->allowed = calloc((size_t)cJSON_GetArraySize(al), sizeof(*a->allowed))))
			return nomem(c);
		cJSON_ArrayForEach(it, al) {
			a->n_allowed = k + 1;
			if (parse_value(c, p, it, t, &a->allowed[k++]))
				return c->d->status;
		}
	}
	if ((mn || mx) && !numeric)
		return fail(c, join(p, sizeof(p), path, mn ? "min" : "max"),
			    "min and max need a numeric attribute");
	if (mn) {
		if (!cJSON_IsNumber(mn))
			return fail(c, join(p, sizeof(p), path, "min"), "expected a number");
		a->has_min = 1;
		a->min = mn->valuedouble;
	}
	if (mx) {
		if (!cJSON_IsNumber(mx))
			return fail(c, join(p, sizeof(p), path, "max"), "expected a number");
		a->has_max = 1;
		a->max = mx->valuedouble;
	}
	if (a->has_min && a->has_max && a->min > a->max)
		return fail(c, path, "inverted range [%g, %g]", a->min, a->max);
	if (eq) {
		a->has_equals = 1;
		if (parse_value(c, join(p, sizeof(p), path, "equals"), eq, t, &a->equals))
			return c->d->status;
	}
	return 0;
}

/* The attribute `name` in any version of the op. */
static const struct ir_op_attr *find_attr(const struct ir_op_schema *first,
					  size_t n, const char *name)
{
	for (size_t i = n; i-- > 0;) {
		const struct ir_op_attr *a = ir_op_schema_attr(&first[i], name);

		if (a)
			return a;
	}
	return NULL;
}

static const char *const in_keys[] = { "dtypes", "rank", "const", NULL };
static const char *const out_keys[] = { "dtypes", "rank", NULL };

static int parse_ios(struct ctx *c, const cJSON *op, const char *path,
		     const char *key, int max_index, struct rules_io **out,
		     size_t *n)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(op, key), *it;
	char p[RULES_PATH_MAX], q[RULES_PATH_MAX];
	int is_in = !strcmp(key, "inputs");
	size_t k = 0;

	if (!v)
		return 0;
	join(p, sizeof(p), path, key);
	if (!cJSON_IsObject(v))
		return fail(c, p, "expected an object keyed by %s index", is_in ? "input" : "output");
	if (!cJSON_GetArraySize(v))
		return 0;
	if (!(*out = calloc((size_t)cJSON_GetArraySize(v), sizeof(**out))))
		return nomem(c);
	cJSON_ArrayForEach(it, v) {
		struct rules_io *io = &(*out)[k];
		char *end;
		long idx;

		join(q, sizeof(q), p, it->string);
		errno = 0;
		idx = strtol(it->string, &end, 10);
		if (!*it->string || *end || errno || idx < 0 || it->string[0] == '+' ||
		    (it->string[0] == '0' && it->string[1]))
			return fail(c, q, "%s index must be a non-negative integer",
				    is_in ? "input" : "output");
		if (idx >= max_index)
			return fail(c, q, "the op has no %s %ld", is_in ? "input" : "output", idx);
		for (size_t j = 0; j < k; j++)
			if ((*out)[j].index == (int)idx)
				return fail(c, q, "duplicate index");
		io->index = (int)idx;
		io->min_rank = io->max_rank = -1;
		*n = ++k;
		if (!cJSON_IsObject(it))
			return fail(c, q, "expected an object");
		if (check_keys(c, it, q, is_in ? in_keys : out_keys) ||
		    get_dtypes(c, it, q, "dtypes", &io->dtypes, NULL) ||
		    get_range(c, it, q, "rank", 0, 0, &io->min_rank, &io->max_rank) ||
		    (is_in && get_bool(c, it, q, "const", &io->is_const)))
			return c->d->status;
	}
	return 0;
}

static const char *const op_keys[] = {
	"supported", "versions", "dtypes", "inputs", "outputs", "attrs",
	"static_shape", "max_dim", "cost", "severity", "notes", "sources", NULL,
};

static int parse_op(struct ctx *c, const cJSON *v, const char *path,
		    struct rules_op *op)
{
	const struct ir_op_schema *first = NULL;
	const cJSON *attrs, *it;
	char *sev = NULL;
	char p[RULES_PATH_MAX], q[RULES_PATH_MAX];
	size_t nv, k = 0;
	int max_in = 0, max_out = 0, found = 0;

	op->supported = 1;
	op->version_min = 1;
	op->version_max = RULES_UNBOUNDED;
	if (split_op_key(c, path, v->string, &op->domain, &op->name))
		return c->d->status;
	nv = ir_registry_versions(op->domain, op->name, &first);
	if (!nv)
		return fail(c, path, "no operator '%s' in domain '%s' in the registry",
			    op->name, op->domain);
	if (!cJSON_IsObject(v))
		return fail(c, path, "expected an object");
	if (check_keys(c, v, path, op_keys) ||
	    get_bool(c, v, path, "supported", &op->supported) ||
	    get_range(c, v, path, "versions", 1, 1, &op->version_min, &op->version_max) ||
	    get_dtypes(c, v, path, "dtypes", &op->dtypes, NULL) ||
	    get_bool(c, v, path, "static_shape", &op->static_shape) ||
	    get_int(c, v, path, "max_dim", 1, INT64_MAX / 2, &op->max_dim) ||
	    get_int(c, v, path, "cost", 1, 1000000, &op->cost) ||
	    get_string(c, v, path, "notes", &op->notes) ||
	    get_strings(c, v, path, "sources", &op->sources, &op->n_sources) ||
	    get_string(c, v, path, "severity", &sev))
		goto cleanup;
	if (sev && !strcmp(sev, "limited")) {
		op->severity = RULES_LIMITED;
	} else if (sev && strcmp(sev, "unsupported")) {
		fail(c, join(p, sizeof(p), path, "severity"),
		     "expected \"unsupported\" or \"limited\", not '%s'", sev);
		goto cleanup;
	}
	for (size_t i = 0; i < nv; i++) {
		int s = first[i].since_version;

		if (s >= op->version_min && s <= op->version_max)
			found = 1;
		if (first[i].max_inputs > max_in)
			max_in = first[i].max_inputs;
		if (first[i].max_outputs > max_out)
			max_out = first[i].max_outputs;
	}
	if (!found) {
		fail(c, join(p, sizeof(p), path, "versions"),
		     "no version of '%s' in the range (newest is %d)", op->name,
		     first[nv - 1].since_version);
		goto cleanup;
	}
	if (parse_ios(c, v, path, "inputs", max_in, &op->inputs, &op->n_inputs) ||
	    parse_ios(c, v, path, "outputs", max_out, &op->outputs, &op->n_outputs))
		goto cleanup;
	attrs = cJSON_GetObjectItemCaseSensitive(v, "attrs");
	if (attrs) {
		join(p, sizeof(p), path, "attrs");
		if (!cJSON_IsObject(attrs)) {
			fail(c, p, "expected an object keyed by attribute name");
			goto cleanup;
		}
		if (cJSON_GetArraySize(attrs) &&
		    !(op->attrs = calloc((size_t)cJSON_GetArraySize(attrs), sizeof(*op->attrs)))) {
			nomem(c);
			goto cleanup;
		}
		cJSON_ArrayForEach(it, attrs) {
			const struct ir_op_attr *sa = find_attr(first, nv, it->string);
			struct rules_attr *a = &op->attrs[k];

			join(q, sizeof(q), p, it->string);
			for (size_t j = 0; j < k; j++)
				if (!strcmp(op->attrs[j].name, it->string)) {
					fail(c, q, "duplicate attribute");
					goto cleanup;
				}
			if (!sa) {
				fail(c, q, "'%s' has no attribute '%s'", op->name, it->string);
				goto cleanup;
			}
			op->n_attrs = ++k;
			if (dup_str(c, it->string, &a->name) || parse_attr(c, q, it, sa, a))
				goto cleanup;
		}
	}
	if (!op->notes)
		dup_str(c, "", &op->notes);
cleanup:
	free(sev);
	return c->d->status;
}

static const char *const fused_keys[] = { "name", "ops", "notes", NULL };

static int parse_fused(struct ctx *c, const cJSON *root, struct rules_target *t)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "fused_ops"), *it;
	char p[RULES_PATH_MAX];
	size_t k = 0;

	if (!v)
		return 0;
	if (!cJSON_IsArray(v))
		return fail(c, "fused_ops", "expected an array of objects");
	t->has_fused = 1;
	if (cJSON_GetArraySize(v) &&
	    !(t->fused = calloc((size_t)cJSON_GetArraySize(v), sizeof(*t->fused))))
		return nomem(c);
	cJSON_ArrayForEach(it, v) {
		struct rules_fused *f = &t->fused[k];

		snprintf(p, sizeof(p), "fused_ops[%zu]", k);
		t->n_fused = ++k;
		if (!cJSON_IsObject(it))
			return fail(c, p, "expected an object");
		if (check_keys(c, it, p, fused_keys) ||
		    get_string(c, it, p, "name", &f->name) ||
		    get_strings(c, it, p, "ops", &f->ops, &f->n_ops) ||
		    get_string(c, it, p, "notes", &f->notes))
			return c->d->status;
		if (!f->name)
			return fail(c, p, "missing key 'name'");
		if (!f->n_ops)
			return fail(c, p, "missing or empty 'ops'");
		for (size_t i = 0; i < f->n_ops; i++) {
			char *dom = NULL, *name = NULL;
			const struct ir_op_schema *s;
			char q[RULES_PATH_MAX];
			size_t n;

			if (snprintf(q, sizeof(q), "%s.ops[%zu]", p, i) >= (int)sizeof(q))
				strcpy(q + sizeof(q) - 4, "...");
			if (split_op_key(c, q, f->ops[i], &dom, &name)) {
				free(dom);
				free(name);
				return c->d->status;
			}
			n = ir_registry_versions(dom, name, &s);
			if (!n)
				fail(c, q, "no operator '%s' in domain '%s' in the registry",
				     name, dom);
			free(dom);
			free(name);
			if (!n)
				return c->d->status;
		}
		if (!f->notes && dup_str(c, "", &f->notes))
			return c->d->status;
	}
	return 0;
}

static int valid_id(const char *s)
{
	if (!*s || !((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '-' || *s == '_' || *s == '.'))
			return 0;
	return 1;
}

static const char *const top_keys[] = {
	"schema", "id", "name", "vendor", "family", "description", "notes",
	"sources", "extends", "opset", "missing_dtypes", "dynamic_shapes",
	"max_rank", "preferred_layout", "device_memory_bytes",
	"preferred_precision", "fused_ops", "ops", NULL,
};

static int parse_target(struct ctx *c, const cJSON *root, struct rules_target *t)
{
	const cJSON *v, *it;
	int64_t x = -1;
	char p[RULES_PATH_MAX];
	size_t k = 0;

	if (!cJSON_IsObject(root))
		return ir_diag_error(c->d, IR_EINVAL, "%s: expected a JSON object", c->file);
	if (check_keys(c, root, "", top_keys))
		return c->d->status;
	v = cJSON_GetObjectItemCaseSensitive(root, "schema");
	if (!v)
		return fail(c, "schema", "missing key (want \"schema\": %d)", RULES_SCHEMA);
	if (!is_integer(v) || v->valuedouble != RULES_SCHEMA)
		return fail(c, "schema", "unsupported schema (this opmig reads %d)", RULES_SCHEMA);
	if (get_string(c, root, "", "id", &t->id))
		return c->d->status;
	if (!t->id)
		return fail(c, "id", "missing key");
	if (!valid_id(t->id))
		return fail(c, "id", "'%s' is not a valid id (lower case letters, digits, '-', '_', '.')",
			    t->id);
	if (get_string(c, root, "", "name", &t->name) ||
	    get_string(c, root, "", "vendor", &t->vendor) ||
	    get_string(c, root, "", "family", &t->family) ||
	    get_string(c, root, "", "description", &t->description) ||
	    get_string(c, root, "", "notes", &t->notes) ||
	    get_string(c, root, "", "extends", &t->extends) ||
	    get_strings(c, root, "", "sources", &t->sources, &t->n_sources) ||
	    get_range(c, root, "", "opset", 1, 0, &t->opset_min, &t->opset_max) ||
	    get_dtypes(c, root, "", "missing_dtypes", &t->missing_dtypes,
		       &t->has_missing_dtypes) ||
	    get_bool(c, root, "", "dynamic_shapes", &t->dynamic_shapes) ||
	    get_int(c, root, "", "max_rank", 0, 64, &x))
		return c->d->status;
	t->max_rank = (int)x;
	x = -1;
	if (get_int(c, root, "", "device_memory_bytes", 1, INT64_MAX / 2, &x) ||
	    get_string(c, root, "", "preferred_layout", &t->preferred_layout) ||
	    get_string(c, root, "", "preferred_precision", &t->preferred_precision))
		return c->d->status;
	t->device_memory_bytes = x;
	if (!t->n_sources)
		return fail(c, "sources", "missing or empty (every file names its sources)");
	if (t->extends && !valid_id(t->extends))
		return fail(c, "extends", "'%s' is not a valid id", t->extends);
	if (t->preferred_layout && strcmp(t->preferred_layout, "nchw") &&
	    strcmp(t->preferred_layout, "nhwc"))
		return fail(c, "preferred_layout", "expected \"nchw\" or \"nhwc\"");
	if (t->preferred_precision && strcmp(t->preferred_precision, "fp32") &&
	    strcmp(t->preferred_precision, "fp16") && strcmp(t->preferred_precision, "bf16") &&
	    strcmp(t->preferred_precision, "int8"))
		return fail(c, "preferred_precision",
			    "expected \"fp32\", \"fp16\", \"bf16\" or \"int8\"");
	if (parse_fused(c, root, t))
		return c->d->status;
	v = cJSON_GetObjectItemCaseSensitive(root, "ops");
	if (!v) {
		if (!t->extends)
			return fail(c, "ops", "missing key (only a file with extends may omit it)");
		return 0;
	}
	if (!cJSON_IsObject(v))
		return fail(c, "ops", "expected an object keyed by op name");
	if (cJSON_GetArraySize(v) &&
	    !(t->ops = calloc((size_t)cJSON_GetArraySize(v), sizeof(*t->ops))))
		return nomem(c);
	cJSON_ArrayForEach(it, v) {
		join(p, sizeof(p), "ops", it->string);
		t->n_ops = ++k;
		if (parse_op(c, it, p, &t->ops[k - 1]))
			return c->d->status;
	}
	rules_ops_sort(t->ops, t->n_ops);
	for (size_t i = 1; i < t->n_ops; i++)
		if (!strcmp(t->ops[i - 1].name, t->ops[i].name) &&
		    !strcmp(t->ops[i - 1].domain, t->ops[i].domain))
			return fail(c, join(p, sizeof(p), "ops", t->ops[i].name),
				    "op listed twice");
	return 0;
}

static int read_text(struct ctx *c, const char *path, char **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0;

	if (!f)
		return ir_diag_error(c->d, IR_EINVAL, "%s: cannot open: %s", path, strerror(errno));
	for (;;) {
		size_t got;

		if (n + 4096 + 1 > cap) {
			char *nb;

			cap = cap ? cap * 2 : 65536;
			if (!(nb = realloc(buf, cap))) {
				free(buf);
				fclose(f);
				return nomem(c);
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (n > MAX_FILE_BYTES) {
			free(buf);
			fclose(f);
			return ir_diag_error(c->d, IR_EINVAL, "%s: larger than %u bytes",
					     path, MAX_FILE_BYTES);
		}
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		fclose(f);
		return ir_diag_error(c->d, IR_EINVAL, "%s: cannot read: %s", path, strerror(errno));
	}
	fclose(f);
	buf[n] = 0;
	*out = buf;
	*len = n;
	return 0;
}

/* cJSON allocates through here while parsing, so that running out of
 * memory is not reported as invalid JSON. */
static int json_oom;

static void *json_malloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		json_oom = 1;
	return p;
}

int rules_load_file(const char *path, struct rules_db *db, struct ir_diag *d)
{
	cJSON_Hooks hooks = { json_malloc, free };
	struct ctx c = { path, d };
	struct rules_target t, *grown;
	const char *end = NULL;
	cJSON *root = NULL;
	char *text = NULL;
	size_t len = 0;
	int rc;

	memset(&t, 0, sizeof(t));
	t.opset_min = t.opset_max = t.dynamic_shapes = t.max_rank = -1;
	t.device_memory_bytes = -1;
	if ((rc = read_text(&c, path, &text, &len)))
		return rc;
	cJSON_InitHooks(&hooks);
	json_oom = 0;
	root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (!root && json_oom) {
		rc = ir_diag_error(d, IR_ENOMEM, "%s: out of memory", path);
		goto cleanup;
	}
	if (!root) {
		int line = 1;

		for (const char *s = text; end && s < end; s++)
			line += *s == '\n';
		rc = ir_diag_error(d, IR_EINVAL, "%s: line %d: invalid JSON", path, line);
		goto cleanup;
	}
	if ((rc = parse_target(&c, root, &t)))
		goto cleanup;
	if ((!t.notes && (rc = dup_str(&c, "", &t.notes))) ||
	    (rc = dup_str(&c, path, &t.file)))
		goto cleanup;
	if (!(grown = realloc(db->targets, (db->n_targets + 1) * sizeof(*grown)))) {
		rc = nomem(&c);
		goto cleanup;
	}
	db->targets = grown;
	db->targets[db->n_targets++] = t;
	memset(&t, 0, sizeof(t));
cleanup:
	rules_target_release(&t);
	cJSON_Delete(root);
	free(text);
	return rc;
}
