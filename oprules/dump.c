/* dump.c: writing a (resolved) target back as a schema-1 rules file, for
 * `opmig rules show --json` and round-trip tests.  Keys come out in the
 * order man/opmig-rules.5 documents; unset fields are left out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ir/ir.h"
#include "ir/registry.h"
#include "oprules/rules.h"

static cJSON *strv(char *const *v, size_t n)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
	return a;
}

static cJSON *dtypes(rules_dtypes m)
{
	cJSON *a = cJSON_CreateArray();

	for (int i = 1; a && i < IR_DTYPE_COUNT; i++)
		if ((m & RULES_DTYPE_BIT(i)) && rules_dtype_name(i))
			cJSON_AddItemToArray(a, cJSON_CreateString(rules_dtype_name(i)));
	return a;
}

static cJSON *range(int min, int max)
{
	cJSON *a = cJSON_CreateArray();

	cJSON_AddItemToArray(a, cJSON_CreateNumber(min));
	cJSON_AddItemToArray(a, max == RULES_UNBOUNDED ? cJSON_CreateNull() :
			     cJSON_CreateNumber(max));
	return a;
}

static cJSON *value(const struct rules_value *v)
{
	cJSON *a;

	switch (v->kind) {
	case RULES_VALUE_STRING:
		return cJSON_CreateString(v->str ? v->str : "");
	case RULES_VALUE_NUMBERS:
		a = cJSON_CreateArray();
		for (size_t i = 0; a && i < v->n_nums; i++)
			cJSON_AddItemToArray(a, cJSON_CreateNumber(v->nums[i]));
		return a;
	default:
		return cJSON_CreateNumber(v->num);
	}
}

static cJSON *ios(const struct rules_io *io, size_t n, int is_in)
{
	cJSON *o = cJSON_CreateObject();

	for (size_t i = 0; o && i < n; i++) {
		cJSON *x = cJSON_CreateObject();
		char key[16];

		snprintf(key, sizeof(key), "%d", io[i].index);
		cJSON_AddItemToObject(o, key, x);
		if (io[i].dtypes)
			cJSON_AddItemToObject(x, "dtypes", dtypes(io[i].dtypes));
		if (io[i].min_rank >= 0)
			cJSON_AddItemToObject(x, "rank", range(io[i].min_rank, io[i].max_rank));
		if (is_in && io[i].is_const)
			cJSON_AddBoolToObject(x, "const", 1);
	}
	return o;
}

static cJSON *op_json(const struct rules_op *op)
{
	cJSON *o = cJSON_CreateObject();

	if (!op->supported)
		cJSON_AddBoolToObject(o, "supported", 0);
	if (op->version_min > 1 || op->version_max != RULES_UNBOUNDED)
		cJSON_AddItemToObject(o, "versions", range(op->version_min, op->version_max));
	if (op->dtypes)
		cJSON_AddItemToObject(o, "dtypes", dtypes(op->dtypes));
	if (op->n_inputs)
		cJSON_AddItemToObject(o, "inputs", ios(op->inputs, op->n_inputs, 1));
	if (op->n_outputs)
		cJSON_AddItemToObject(o, "outputs", ios(op->outputs, op->n_outputs, 0));
	if (op->n_attrs) {
		cJSON *as = cJSON_AddObjectToObject(o, "attrs");

		for (size_t i = 0; as && i < op->n_attrs; i++) {
			const struct rules_attr *a = &op->attrs[i];
			cJSON *x = cJSON_CreateObject();

			cJSON_AddItemToObject(as, a->name, x);
			if (a->n_allowed) {
				cJSON *al = cJSON_AddArrayToObject(x, "allowed");

				for (size_t j = 0; al && j < a->n_allowed; j++)
					cJSON_AddItemToArray(al, value(&a->allowed[j]));
			}
			if (a->has_min)
				cJSON_AddNumberToObject(x, "min", a->min);
			if (a->has_max)
				cJSON_AddNumberToObject(x, "max", a->max);
			if (a->has_equals)
				cJSON_AddItemToObject(x, "equals", value(&a->equals));
		}
	}
	if (op->static_shape)
		cJSON_AddBoolToObject(o, "static_shape", 1);
	if (op->max_dim > 0)
		cJSON_AddNumberToObject(o, "max_dim", (double)op->max_dim);
	if (op->severity != RULES_UNSUPPORTED)
		cJSON_AddStringToObject(o, "severity", rules_severity_name(op->severity));
	if (op->notes && *op->notes)
		cJSON_AddStringToObject(o, "notes", op->notes);
	if (op->n_sources)
		cJSON_AddItemToObject(o, "sources", strv(op->sources, op->n_sources));
	return o;
}

static void add_str(cJSON *o, const char *key, const char *s)
{
	if (s)
		cJSON_AddStringToObject(o, key, s);
}

char *rules_target_to_json(const struct rules_target *t)
{
	cJSON *o = cJSON_CreateObject(), *ops;
	char *text;

	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "schema", RULES_SCHEMA);
	add_str(o, "id", t->id);
	add_str(o, "name", t->name);
	add_str(o, "vendor", t->vendor);
	add_str(o, "family", t->family);
	add_str(o, "description", t->description);
	if (t->notes && *t->notes)
		add_str(o, "notes", t->notes);
	cJSON_AddItemToObject(o, "sources", strv(t->sources, t->n_sources));
	if (t->opset_min >= 0)
		cJSON_AddItemToObject(o, "opset", range(t->opset_min, t->opset_max));
	if (t->has_missing_dtypes)
		cJSON_AddItemToObject(o, "missing_dtypes", dtypes(t->missing_dtypes));
	if (t->dynamic_shapes >= 0)
		cJSON_AddBoolToObject(o, "dynamic_shapes", t->dynamic_shapes);
	if (t->max_rank >= 0)
		cJSON_AddNumberToObject(o, "max_rank", t->max_rank);
	add_str(o, "preferred_layout", t->preferred_layout);
	if (t->device_memory_bytes >= 0)
		cJSON_AddNumberToObject(o, "device_memory_bytes", (double)t->device_memory_bytes);
	add_str(o, "preferred_precision", t->preferred_precision);
	if (t->has_fused) {
		cJSON *fa = cJSON_AddArrayToObject(o, "fused_ops");

		for (size_t i = 0; fa && i < t->n_fused; i++) {
			cJSON *x = cJSON_CreateObject();

			cJSON_AddItemToArray(fa, x);
			add_str(x, "name", t->fused[i].name);
			cJSON_AddItemToObject(x, "ops", strv(t->fused[i].ops, t->fused[i].n_ops));
			if (t->fused[i].notes && *t->fused[i].notes)
				add_str(x, "notes", t->fused[i].notes);
		}
	}
	ops = cJSON_AddObjectToObject(o, "ops");
	for (size_t i = 0; ops && i < t->n_ops; i++) {
		const struct rules_op *op = &t->ops[i];
		char *key = NULL;

		if (strcmp(op->domain, "ai.onnx")) {
			size_t n = strlen(op->domain) + strlen(op->name) + 2;

			if (!(key = malloc(n)))
				break;
			snprintf(key, n, "%s:%s", op->domain, op->name);
		}
		cJSON_AddItemToObject(ops, key ? key : op->name, op_json(op));
		free(key);
	}
	text = cJSON_Print(o);
	cJSON_Delete(o);
	return text;
}
