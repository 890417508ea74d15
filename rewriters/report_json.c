/* report_json.c: the migrate report as JSON, schema opmig.migrate/1
 * (documented in man/opmig-migrate.1), for `opmig migrate --format json`
 * and the report.json files of `opmig batch`. */
#include <cjson/cJSON.h>

#include "rewriters/migrate.h"
#include "validators/compare.h"

/* Building: a failed allocation clears *ok (the report is then not
 * written at all, rather than written in part). */
static void need(const cJSON *added, int *ok)
{
	if (!added)
		*ok = 0;
}

/* x into array arr, or into object o as name; deleted when it cannot go */
static void put(cJSON *arr, cJSON *x, int *ok)
{
	if (!x || !arr || !cJSON_AddItemToArray(arr, x)) {
		cJSON_Delete(x);
		*ok = 0;
	}
}

static void put_obj(cJSON *o, const char *name, cJSON *x, int *ok)
{
	if (!x || !o || !cJSON_AddItemToObject(o, name, x)) {
		cJSON_Delete(x);
		*ok = 0;
	}
}

static cJSON *json_counts(const struct scan_counts *c, int *ok)
{
	cJSON *o = cJSON_CreateObject();

	need(cJSON_AddNumberToObject(o, "nodes", (double)c->nodes), ok);
	need(cJSON_AddNumberToObject(o, "supported", (double)c->supported), ok);
	need(cJSON_AddNumberToObject(o, "limited", (double)c->limited), ok);
	need(cJSON_AddNumberToObject(o, "rewritable", (double)c->rewritable), ok);
	need(cJSON_AddNumberToObject(o, "blocked", (double)c->blocked), ok);
	return o;
}

char *mg_report_json(const struct mg_report *r, const char *model, const char *out,
		     int dry_run, int written)
{
	cJSON *o = cJSON_CreateObject(), *arr;
	char *text;
	int ok = o != NULL;

	need(cJSON_AddStringToObject(o, "schema", "opmig.migrate/1"), &ok);
	need(cJSON_AddStringToObject(o, "model", model), &ok);
	need(cJSON_AddStringToObject(o, "target", r->target), &ok);
	if (out)
		need(cJSON_AddStringToObject(o, "output", out), &ok);
	need(cJSON_AddBoolToObject(o, "dry_run", dry_run), &ok);
	need(cJSON_AddBoolToObject(o, "ok", r->ok), &ok);
	need(cJSON_AddBoolToObject(o, "written", written), &ok);
	if (!r->ok)
		need(cJSON_AddStringToObject(o, "why", r->why), &ok);
	put_obj(o, "before", json_counts(&r->before, &ok), &ok);
	put_obj(o, "after", json_counts(&r->after, &ok), &ok);
	arr = cJSON_AddArrayToObject(o, "rewrites");
	need(arr, &ok);
	for (size_t i = 0; i < r->n_rewrites; i++) {
		cJSON *x = cJSON_CreateObject();

		need(cJSON_AddStringToObject(x, "pass", r->rewrites[i].pass), &ok);
		if (r->rewrites[i].variant)
			need(cJSON_AddStringToObject(x, "variant", r->rewrites[i].variant), &ok);
		else
			need(cJSON_AddNullToObject(x, "variant"), &ok);
		if (*r->rewrites[i].op) {
			need(cJSON_AddStringToObject(x, "node", r->rewrites[i].node), &ok);
			need(cJSON_AddStringToObject(x, "op_type", r->rewrites[i].op), &ok);
			need(cJSON_AddNumberToObject(x, "nodes_emitted", (double)r->rewrites[i].n_emitted), &ok);
		} else {     /* a graph pass */
			need(cJSON_AddNullToObject(x, "node"), &ok);
			need(cJSON_AddNullToObject(x, "op_type"), &ok);
			need(cJSON_AddNumberToObject(x, "changes", (double)r->rewrites[i].n_emitted), &ok);
		}
		put(arr, x, &ok);
	}
	arr = cJSON_AddArrayToObject(o, "blockers");
	need(arr, &ok);
	for (size_t i = 0; i < r->n_blockers; i++) {
		cJSON *x = cJSON_CreateObject();

		need(cJSON_AddStringToObject(x, "node", r->blockers[i].node), &ok);
		need(cJSON_AddStringToObject(x, "op_type", r->blockers[i].op), &ok);
		need(cJSON_AddStringToObject(x, "domain", r->blockers[i].domain), &ok);
		need(cJSON_AddStringToObject(x, "reasons", r->blockers[i].why), &ok);
		put(arr, x, &ok);
	}
	arr = cJSON_AddArrayToObject(o, "model_findings");
	need(arr, &ok);
	for (size_t i = 0; i < r->n_findings; i++)
		put(arr, cJSON_CreateString(r->findings[i]), &ok);
	arr = cJSON_AddArrayToObject(o, "notes");
	need(arr, &ok);
	for (size_t i = 0; i < r->n_notes; i++)
		put(arr, cJSON_CreateString(r->notes[i]), &ok);
	if (r->validated) {
		cJSON *v = cJSON_AddObjectToObject(o, "validation");

		need(v, &ok);
		need(cJSON_AddStringToObject(v, "precision", val_precision_name(r->val.precision)), &ok);
		need(cJSON_AddNumberToObject(v, "rtol", r->val.tol.rtol), &ok);
		need(cJSON_AddNumberToObject(v, "atol", r->val.tol.atol), &ok);
		need(cJSON_AddNumberToObject(v, "samples", (double)r->val.n_samples), &ok);
		need(cJSON_AddBoolToObject(v, "equivalent", r->val.equivalent), &ok);
		arr = cJSON_AddArrayToObject(v, "outputs");
		need(arr, &ok);
		for (size_t i = 0; i < r->val.n_outputs; i++) {
			cJSON *x = rt_metrics_json(&r->val.outputs[i].m);

			need(cJSON_AddStringToObject(x, "name", r->val.outputs[i].ref_name), &ok);
			put(arr, x, &ok);
		}
	} else if (r->val_error[0]) {
		cJSON *v = cJSON_AddObjectToObject(o, "validation");

		need(cJSON_AddStringToObject(v, "error", r->val_error), &ok);
	} else {
		need(cJSON_AddNullToObject(o, "validation"), &ok);
	}
	arr = cJSON_AddArrayToObject(o, "name_map");
	need(arr, &ok);
	for (size_t i = 0; i < r->map.n; i++) {
		const struct val_map_entry *e = &r->map.e[i];
		cJSON *x = cJSON_CreateObject();

		need(cJSON_AddStringToObject(x, "kind", e->kind == VAL_MAP_INPUT ? "input" :
					     e->kind == VAL_MAP_OUTPUT ? "output" : "value"), &ok);
		need(cJSON_AddStringToObject(x, "original", e->ref), &ok);
		need(cJSON_AddStringToObject(x, "migrated", e->cand), &ok);
		if (e->rank) {
			cJSON *p = cJSON_AddArrayToObject(x, "perm");

			need(p, &ok);
			for (int k = 0; k < e->rank; k++)
				put(p, cJSON_CreateNumber(e->perm[k]), &ok);
		}
		if (e->dtype)
			need(cJSON_AddStringToObject(x, "dtype", ir_dtype_name(e->dtype)), &ok);
		put(arr, x, &ok);
	}
	text = ok ? cJSON_Print(o) : NULL;
	cJSON_Delete(o);
	return text;
}

