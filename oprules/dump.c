/* dump.c: writing a (resolved) target back as a schema-1 rules file, for
 * `opmig rules show --json` and round-trip tests.  Keys come out in the
 * order man/opmig-rules.5 documents; unset fields are left out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ir/ir.h"
#include "ir/registry.h"
#include "oprules/jbuild.h"
#include "oprules/rules.h"

static cJSON *strv(char *const *v, size_t n, int *ok)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < n; i++)
		jb_put(a, cJSON_CreateString(v[i]), ok);
	return a;
}

static cJSON *dtypes(rules_dtypes m, int *ok)
{
	cJSON *a = cJSON_CreateArray();

	for (int i = 1; a && i < IR_DTYPE_COUNT; i++)
		if ((m & RULES_DTYPE_BIT(i)) && rules_dtype_name(i))
			jb_put(a, cJSON_CreateString(rules_dtype_name(i)), ok);
	return a;
}

static cJSON *range(int min, int max, int *ok)
{
	cJSON *a = cJSON_CreateArray();

	jb_put(a, cJSON_CreateNumber(min), ok);
	jb_put(a, max == RULES_UNBOUNDED ? cJSON_CreateNull() : cJSON_CreateNumber(max), ok);
	return a;
}

static cJSON *value(const struct rules_value *v, int *ok)
{
	cJSON *a;

	switch (v->kind) {
	case RULES_VALUE_STRING:
		return cJSON_CreateString(v->str ? v->str : "");
	case RULES_VALUE_NUMBERS:
		a = cJSON_CreateArray();
		for (size_t i = 0; a && i < v->n_nums; i++)
			jb_put(a, cJSON_CreateNumber(v->nums[i]), ok);
		return a;
	default:
		return cJSON_CreateNumber(v->num);
	}
}

static cJSON *ios(const struct rules_io *io, size_t n, int is_in, int *ok)
{
	cJSON *o = cJSON_CreateObject();

	for (size_t i = 0; o && i < n; i++) {
		cJSON *x = cJSON_CreateObject();
		char key[16];

		if (io[i].dtypes)
			jb_put_obj(x, "dtypes", dtypes(io[i].dtypes, ok), ok);
		if (io[i].min_rank >= 0)
			jb_put_obj(x, "rank", range(io[i].min_rank, io[i].max_rank, ok), ok);
		if (is_in && io[i].is_const)
			jb_need(cJSON_AddBoolToObject(x, "const", 1), ok);
		snprintf(key, sizeof(key), "%d", io[i].index);
		jb_put_obj(o, key, x, ok);
	}
	return o;
}

static cJSON *attr_json(const struct rules_attr *a, int *ok)
{
	cJSON *x = cJSON_CreateObject();

	if (a->n_allowed) {
		cJSON *al = cJSON_AddArrayToObject(x, "allowed");

		jb_need(al, ok);
		for (size_t j = 0; al && j < a->n_allowed; j++)
			jb_put(al, value(&a->allowed[j], ok), ok);
	}
	if (a->has_min)
		jb_need(cJSON_AddNumberToObject(x, "min", a->min), ok);
	if (a->has_max)
		jb_need(cJSON_AddNumberToObject(x, "max", a->max), ok);
	if (a->has_equals)
		jb_put_obj(x, "equals", value(&a->equals, ok), ok);
	return x;
}

static cJSON *op_json(const struct rules_op *op, int *ok)
{
	cJSON *o = cJSON_CreateObject();

	if (!op->supported)
		jb_need(cJSON_AddBoolToObject(o, "supported", 0), ok);
	if (op->version_min > 1 || op->version_max != RULES_UNBOUNDED)
		jb_put_obj(o, "versions", range(op->version_min, op->version_max, ok), ok);
	if (op->dtypes)
		jb_put_obj(o, "dtypes", dtypes(op->dtypes, ok), ok);
	if (op->n_inputs)
		jb_put_obj(o, "inputs", ios(op->inputs, op->n_inputs, 1, ok), ok);
	if (op->n_outputs)
		jb_put_obj(o, "outputs", ios(op->outputs, op->n_outputs, 0, ok), ok);
	if (op->n_attrs) {
		cJSON *as = cJSON_AddObjectToObject(o, "attrs");

		jb_need(as, ok);
		for (size_t i = 0; as && i < op->n_attrs; i++)
			jb_put_obj(as, op->attrs[i].name, attr_json(&op->attrs[i], ok), ok);
	}
	if (op->static_shape)
		jb_need(cJSON_AddBoolToObject(o, "static_shape", 1), ok);
	if (op->max_dim > 0)
		jb_need(cJSON_AddNumberToObject(o, "max_dim", (double)op->max_dim), ok);
	if (op->cost > 0)
		jb_need(cJSON_AddNumberToObject(o, "cost", (double)op->cost), ok);
	if (op->severity != RULES_UNSUPPORTED)
		jb_need(cJSON_AddStringToObject(o, "severity", rules_severity_name(op->severity)), ok);
	if (op->notes && *op->notes)
		jb_need(cJSON_AddStringToObject(o, "notes", op->notes), ok);
	if (op->n_sources)
		jb_put_obj(o, "sources", strv(op->sources, op->n_sources, ok), ok);
	return o;
}

static void add_str(cJSON *o, const char *key, const char *s, int *ok)
{
	if (s)
		jb_need(cJSON_AddStringToObject(o, key, s), ok);
}

static cJSON *fused_json(const struct rules_fused *f, int *ok)
{
	cJSON *x = cJSON_CreateObject();

	add_str(x, "name", f->name, ok);
	jb_put_obj(x, "ops", strv(f->ops, f->n_ops, ok), ok);
	if (f->notes && *f->notes)
		add_str(x, "notes", f->notes, ok);
	return x;
}

/* "ops": the key is the name, "domain:name" outside ai.onnx; stops at
 * the first failure, the document is dropped then anyway */
static void ops_json(cJSON *o, const struct rules_target *t, int *ok)
{
	cJSON *ops = cJSON_AddObjectToObject(o, "ops");

	jb_need(ops, ok);
	for (size_t i = 0; ops && *ok && i < t->n_ops; i++) {
		const struct rules_op *op = &t->ops[i];
		char *key = NULL;

		if (strcmp(op->domain, "ai.onnx")) {
			size_t n = strlen(op->domain) + strlen(op->name) + 2;

			if (!(key = malloc(n))) {
				*ok = 0;
				break;
			}
			snprintf(key, n, "%s:%s", op->domain, op->name);
		}
		jb_put_obj(ops, key ? key : op->name, op_json(op, ok), ok);
		free(key);
	}
}

char *rules_target_to_json(const struct rules_target *t)
{
	cJSON *o = cJSON_CreateObject();
	int ok = o != NULL;

	jb_need(cJSON_AddNumberToObject(o, "schema", RULES_SCHEMA), &ok);
	add_str(o, "id", t->id, &ok);
	add_str(o, "name", t->name, &ok);
	add_str(o, "vendor", t->vendor, &ok);
	add_str(o, "family", t->family, &ok);
	add_str(o, "description", t->description, &ok);
	if (t->notes && *t->notes)
		add_str(o, "notes", t->notes, &ok);
	jb_put_obj(o, "sources", strv(t->sources, t->n_sources, &ok), &ok);
	if (t->opset_min >= 0)
		jb_put_obj(o, "opset", range(t->opset_min, t->opset_max, &ok), &ok);
	if (t->has_missing_dtypes)
		jb_put_obj(o, "missing_dtypes", dtypes(t->missing_dtypes, &ok), &ok);
	if (t->dynamic_shapes >= 0)
		jb_need(cJSON_AddBoolToObject(o, "dynamic_shapes", t->dynamic_shapes), &ok);
	if (t->max_rank >= 0)
		jb_need(cJSON_AddNumberToObject(o, "max_rank", t->max_rank), &ok);
	add_str(o, "preferred_layout", t->preferred_layout, &ok);
	if (t->device_memory_bytes >= 0)
		jb_need(cJSON_AddNumberToObject(o, "device_memory_bytes",
						(double)t->device_memory_bytes), &ok);
	add_str(o, "preferred_precision", t->preferred_precision, &ok);
	if (t->has_fused) {
		cJSON *fa = cJSON_AddArrayToObject(o, "fused_ops");

		jb_need(fa, &ok);
		for (size_t i = 0; fa && i < t->n_fused; i++)
			jb_put(fa, fused_json(&t->fused[i], &ok), &ok);
	}
	ops_json(o, t, &ok);
	return jb_print(o, ok);
}
