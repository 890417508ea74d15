/* report_json.c: the migrate report as JSON, schema opmig.migrate/1
 * (documented in man/opmig-migrate.1), for `opmig migrate --format json`
 * and the report.json files of `opmig batch`. */
#include <cjson/cJSON.h>

#include "rewriters/migrate.h"
#include "validators/compare.h"

static cJSON *json_counts(const struct scan_counts *c)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "nodes", (double)c->nodes);
	cJSON_AddNumberToObject(o, "supported", (double)c->supported);
	cJSON_AddNumberToObject(o, "limited", (double)c->limited);
	cJSON_AddNumberToObject(o, "rewritable", (double)c->rewritable);
	cJSON_AddNumberToObject(o, "blocked", (double)c->blocked);
	return o;
}

char *mg_report_json(const struct mg_report *r, const char *model, const char *out,
		     int dry_run, int written)
{
	cJSON *o = cJSON_CreateObject(), *arr;
	char *text;

	cJSON_AddStringToObject(o, "schema", "opmig.migrate/1");
	cJSON_AddStringToObject(o, "model", model);
	cJSON_AddStringToObject(o, "target", r->target);
	if (out)
		cJSON_AddStringToObject(o, "output", out);
	cJSON_AddBoolToObject(o, "dry_run", dry_run);
	cJSON_AddBoolToObject(o, "ok", r->ok);
	cJSON_AddBoolToObject(o, "written", written);
	if (!r->ok)
		cJSON_AddStringToObject(o, "why", r->why);
	cJSON_AddItemToObject(o, "before", json_counts(&r->before));
	cJSON_AddItemToObject(o, "after", json_counts(&r->after));
	arr = cJSON_AddArrayToObject(o, "rewrites");
	for (size_t i = 0; i < r->n_rewrites; i++) {
		cJSON *x = cJSON_CreateObject();

		cJSON_AddStringToObject(x, "pass", r->rewrites[i].pass);
		if (r->rewrites[i].variant)
			cJSON_AddStringToObject(x, "variant", r->rewrites[i].variant);
		else
			cJSON_AddNullToObject(x, "variant");
		if (*r->rewrites[i].op) {
			cJSON_AddStringToObject(x, "node", r->rewrites[i].node);
			cJSON_AddStringToObject(x, "op_type", r->rewrites[i].op);
			cJSON_AddNumberToObject(x, "nodes_emitted", (double)r->rewrites[i].n_emitted);
		} else {     /* a graph pass */
			cJSON_AddNullToObject(x, "node");
			cJSON_AddNullToObject(x, "op_type");
			cJSON_AddNumberToObject(x, "changes", (double)r->rewrites[i].n_emitted);
		}
		cJSON_AddItemToArray(arr, x);
	}
	arr = cJSON_AddArrayToObject(o, "blockers");
	for (size_t i = 0; i < r->n_blockers; i++) {
		cJSON *x = cJSON_CreateObject();

		cJSON_AddStringToObject(x, "node", r->blockers[i].node);
		cJSON_AddStringToObject(x, "op_type", r->blockers[i].op);
		cJSON_AddStringToObject(x, "domain", r->blockers[i].domain);
		cJSON_AddStringToObject(x, "reasons", r->blockers[i].why);
		cJSON_AddItemToArray(arr, x);
	}
	arr = cJSON_AddArrayToObject(o, "model_findings");
	for (size_t i = 0; i < r->n_findings; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(r->findings[i]));
	arr = cJSON_AddArrayToObject(o, "notes");
	for (size_t i = 0; i < r->n_notes; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(r->notes[i]));
	if (r->validated) {
		cJSON *v = cJSON_AddObjectToObject(o, "validation");

		cJSON_AddStringToObject(v, "precision", val_precision_name(r->val.precision));
		cJSON_AddNumberToObject(v, "rtol", r->val.tol.rtol);
		cJSON_AddNumberToObject(v, "atol", r->val.tol.atol);
		cJSON_AddNumberToObject(v, "samples", (double)r->val.n_samples);
		cJSON_AddBoolToObject(v, "equivalent", r->val.equivalent);
		arr = cJSON_AddArrayToObject(v, "outputs");
		for (size_t i = 0; i < r->val.n_outputs; i++) {
			cJSON *x = rt_metrics_json(&r->val.outputs[i].m);

			cJSON_AddStringToObject(x, "name", r->val.outputs[i].ref_name);
			cJSON_AddItemToArray(arr, x);
		}
	} else if (r->val_error[0]) {
		cJSON *v = cJSON_AddObjectToObject(o, "validation");

		cJSON_AddStringToObject(v, "error", r->val_error);
	} else {
		cJSON_AddNullToObject(o, "validation");
	}
	arr = cJSON_AddArrayToObject(o, "name_map");
	for (size_t i = 0; i < r->map.n; i++) {
		const struct val_map_entry *e = &r->map.e[i];
		cJSON *x = cJSON_CreateObject();

		cJSON_AddStringToObject(x, "kind", e->kind == VAL_MAP_INPUT ? "input" :
					e->kind == VAL_MAP_OUTPUT ? "output" : "value");
		cJSON_AddStringToObject(x, "original", e->ref);
		cJSON_AddStringToObject(x, "migrated", e->cand);
		if (e->rank) {
			cJSON *p = cJSON_AddArrayToObject(x, "perm");

			for (int k = 0; k < e->rank; k++)
				cJSON_AddItemToArray(p, cJSON_CreateNumber(e->perm[k]));
		}
		if (e->dtype)
			cJSON_AddStringToObject(x, "dtype", ir_dtype_name(e->dtype));
		cJSON_AddItemToArray(arr, x);
	}
	text = cJSON_Print(o);
	cJSON_Delete(o);
	return text;
}

