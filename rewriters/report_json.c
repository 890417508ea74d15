/* report_json.c: the migrate report as JSON, schema opmig.migrate/1
 * (documented in man/opmig-migrate.1), for `opmig migrate --format json`
 * and the report.json files of `opmig batch`. */
#include <cjson/cJSON.h>

#include "oprules/jbuild.h"
#include "rewriters/migrate.h"
#include "validators/compare.h"

static cJSON *json_counts(const struct scan_counts *c, int *ok)
{
	cJSON *o = cJSON_CreateObject();

	jb_need(cJSON_AddNumberToObject(o, "nodes", (double)c->nodes), ok);
	jb_need(cJSON_AddNumberToObject(o, "supported", (double)c->supported), ok);
	jb_need(cJSON_AddNumberToObject(o, "limited", (double)c->limited), ok);
	jb_need(cJSON_AddNumberToObject(o, "rewritable", (double)c->rewritable), ok);
	jb_need(cJSON_AddNumberToObject(o, "blocked", (double)c->blocked), ok);
	return o;
}

char *mg_report_json(const struct mg_report *r, const char *model, const char *out,
		     int dry_run, int written)
{
	cJSON *o = cJSON_CreateObject(), *arr;
	int ok = o != NULL;

	jb_need(cJSON_AddStringToObject(o, "schema", "opmig.migrate/1"), &ok);
	jb_need(cJSON_AddStringToObject(o, "model", model), &ok);
	jb_need(cJSON_AddStringToObject(o, "target", r->target), &ok);
	if (out)
		jb_need(cJSON_AddStringToObject(o, "output", out), &ok);
	jb_need(cJSON_AddBoolToObject(o, "dry_run", dry_run), &ok);
	jb_need(cJSON_AddBoolToObject(o, "ok", r->ok), &ok);
	jb_need(cJSON_AddBoolToObject(o, "written", written), &ok);
	jb_need(cJSON_AddBoolToObject(o, "valid", !r->invalid), &ok);
	if (!r->ok)
		jb_need(cJSON_AddStringToObject(o, "why", r->why), &ok);
	jb_put_obj(o, "before", json_counts(&r->before, &ok), &ok);
	jb_put_obj(o, "after", json_counts(&r->after, &ok), &ok);
	arr = cJSON_AddArrayToObject(o, "rewrites");
	jb_need(arr, &ok);
	for (size_t i = 0; i < r->n_rewrites; i++) {
		cJSON *x = cJSON_CreateObject();

		jb_need(cJSON_AddStringToObject(x, "pass", r->rewrites[i].pass), &ok);
		if (r->rewrites[i].variant)
			jb_need(cJSON_AddStringToObject(x, "variant", r->rewrites[i].variant), &ok);
		else
			jb_need(cJSON_AddNullToObject(x, "variant"), &ok);
		if (*r->rewrites[i].op) {
			char chain[1024];

			jb_need(cJSON_AddStringToObject(x, "node", r->rewrites[i].node), &ok);
			jb_need(cJSON_AddStringToObject(x, "op_type", r->rewrites[i].op), &ok);
			jb_need(cJSON_AddNumberToObject(x, "nodes_emitted", (double)r->rewrites[i].n_emitted), &ok);
			if (r->rewrites[i].parent >= 0)
				jb_need(cJSON_AddNumberToObject(x, "parent",
								(double)r->rewrites[i].parent), &ok);
			else
				jb_need(cJSON_AddNullToObject(x, "parent"), &ok);
			rw_log_chain(r->rewrites, r->n_rewrites, i, chain, sizeof(chain));
			if (*chain)
				jb_need(cJSON_AddStringToObject(x, "chain", chain), &ok);
			else
				jb_need(cJSON_AddNullToObject(x, "chain"), &ok);
		} else {     /* a graph pass */
			jb_need(cJSON_AddNullToObject(x, "node"), &ok);
			jb_need(cJSON_AddNullToObject(x, "op_type"), &ok);
			jb_need(cJSON_AddNumberToObject(x, "changes", (double)r->rewrites[i].n_emitted), &ok);
		}
		jb_put(arr, x, &ok);
	}
	arr = cJSON_AddArrayToObject(o, "blockers");
	jb_need(arr, &ok);
	for (size_t i = 0; i < r->n_blockers; i++) {
		cJSON *x = cJSON_CreateObject();

		jb_need(cJSON_AddStringToObject(x, "node", r->blockers[i].node), &ok);
		jb_need(cJSON_AddStringToObject(x, "op_type", r->blockers[i].op), &ok);
		jb_need(cJSON_AddStringToObject(x, "domain", r->blockers[i].domain), &ok);
		jb_need(cJSON_AddStringToObject(x, "reasons", r->blockers[i].why), &ok);
		jb_put(arr, x, &ok);
	}
	arr = cJSON_AddArrayToObject(o, "interface_changes");
	jb_need(arr, &ok);
	for (size_t i = 0; i < r->n_iface; i++) {
		cJSON *x = cJSON_CreateObject();

		jb_need(cJSON_AddStringToObject(x, "kind", r->iface[i].input ? "input" : "output"), &ok);
		jb_need(cJSON_AddStringToObject(x, "name", r->iface[i].name), &ok);
		jb_need(cJSON_AddStringToObject(x, "change", r->iface[i].what), &ok);
		jb_need(cJSON_AddStringToObject(x, "from", r->iface[i].from), &ok);
		jb_need(cJSON_AddStringToObject(x, "to", r->iface[i].to), &ok);
		jb_put(arr, x, &ok);
	}
	if (r->precision)
		jb_need(cJSON_AddStringToObject(o, "precision", r->precision), &ok);
	else
		jb_need(cJSON_AddNullToObject(o, "precision"), &ok);
	if (r->weight_only)
		jb_need(cJSON_AddTrueToObject(o, "weight_only"), &ok);
	jb_need(cJSON_AddNumberToObject(o, "opset", (double)r->opset), &ok);
	arr = cJSON_AddArrayToObject(o, "model_findings");
	jb_need(arr, &ok);
	for (size_t i = 0; i < r->n_findings; i++)
		jb_put(arr, cJSON_CreateString(r->findings[i]), &ok);
	arr = cJSON_AddArrayToObject(o, "notes");
	jb_need(arr, &ok);
	for (size_t i = 0; i < r->n_notes; i++)
		jb_put(arr, cJSON_CreateString(r->notes[i]), &ok);
	if (r->validated) {
		cJSON *v = cJSON_AddObjectToObject(o, "validation");

		jb_need(v, &ok);
		jb_need(cJSON_AddStringToObject(v, "precision", r->val_label[0] ? r->val_label :
						val_precision_name(r->val.precision)), &ok);
		if (r->val_criterion[0])
			jb_need(cJSON_AddStringToObject(v, "criterion", r->val_criterion), &ok);
		jb_need(cJSON_AddNumberToObject(v, "rtol", r->val.tol.rtol), &ok);
		jb_need(cJSON_AddNumberToObject(v, "atol", r->val.tol.atol), &ok);
		jb_need(cJSON_AddNumberToObject(v, "samples", (double)r->val.n_samples), &ok);
		jb_need(cJSON_AddBoolToObject(v, "equivalent", r->val.equivalent), &ok);
		jb_need(val_time_json(v, &r->val) ? v : NULL, &ok);
		if (r->val.inputs_note[0])
			jb_need(cJSON_AddStringToObject(v, "generated_inputs", r->val.inputs_note), &ok);
		arr = cJSON_AddArrayToObject(v, "outputs");
		jb_need(arr, &ok);
		for (size_t i = 0; i < r->val.n_outputs; i++) {
			cJSON *x = rt_metrics_json(&r->val.outputs[i].m);

			jb_need(cJSON_AddStringToObject(x, "name", r->val.outputs[i].ref_name), &ok);
			jb_put(arr, x, &ok);
		}
	} else if (r->val_error[0]) {
		cJSON *v = cJSON_AddObjectToObject(o, "validation");

		jb_need(cJSON_AddStringToObject(v, "error", r->val_error), &ok);
	} else {
		jb_need(cJSON_AddNullToObject(o, "validation"), &ok);
	}
	if (r->runtime_check)
		jb_put_obj(o, "runtime_check", cJSON_Parse(r->runtime_check), &ok);
	arr = cJSON_AddArrayToObject(o, "name_map");
	jb_need(arr, &ok);
	for (size_t i = 0; i < r->map.n; i++) {
		const struct val_map_entry *e = &r->map.e[i];
		cJSON *x = cJSON_CreateObject();

		jb_need(cJSON_AddStringToObject(x, "kind", e->kind == VAL_MAP_INPUT ? "input" :
					     e->kind == VAL_MAP_OUTPUT ? "output" : "value"), &ok);
		jb_need(cJSON_AddStringToObject(x, "original", e->ref), &ok);
		jb_need(cJSON_AddStringToObject(x, "migrated", e->cand), &ok);
		if (e->rank) {
			cJSON *p = cJSON_AddArrayToObject(x, "perm");

			jb_need(p, &ok);
			for (int k = 0; k < e->rank; k++)
				jb_put(p, cJSON_CreateNumber(e->perm[k]), &ok);
		}
		if (e->dtype)
			jb_need(cJSON_AddStringToObject(x, "dtype", ir_dtype_name(e->dtype)), &ok);
		jb_put(arr, x, &ok);
	}
	return jb_print(o, ok);
}

