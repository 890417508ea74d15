/* report.c: the probe's reports: a text summary for people (counts,
 * ops with no passing case and why, wrong answers, crashes and hangs),
 * and JSON (opmig.probe/1, documented in opmig-probe(1)): every case with
 * what it varies, its verdict and the runtime's message.  Both are a
 * function of the verdicts only (no times), so the same probe gives the
 * same bytes. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe_int.h"

static void counts(const struct probe_run *r, size_t *n)
{
	memset(n, 0, PROBE_N_VERDICTS * sizeof(*n));
	for (size_t i = 0; i < r->n_cases; i++)
		n[r->cases[i].verdict]++;
}

/* Op versions: how many had a passing case. */
static void op_counts(const struct probe_run *r, size_t *pass, size_t *fail)
{
	*pass = *fail = 0;
	for (size_t i = 0; i < r->n_cases;) {
		const struct ir_op_schema *s = r->cases[i].schema;
		int any_ok = 0, any_ran = 0;
		size_t j = i;

		while (j < r->n_cases && r->cases[j].schema == s && r->cases[j].kind != PROBE_OPSET &&
		       r->cases[j].kind != PROBE_DYNAMIC) {
			any_ok |= probe_verdict_ok(r->cases[j].verdict);
			any_ran |= r->cases[j].verdict >= PROBE_EQUAL;
			j++;
		}
		if (j == i) {
			i++;
			continue;
		}
		*pass += any_ok;
		*fail += any_ran && !any_ok;
		i = j;
	}
}

int probe_report_text(const struct probe_run *r, FILE *f)
{
	size_t n[PROBE_N_VERDICTS], pass, fail, shown = 0;

	counts(r, n);
	op_counts(r, &pass, &fail);
	fprintf(f, "probe: %zu cases, %zu op versions (opset %d to %d)\n", r->n_cases - n[PROBE_INVALID],
		pass + fail, r->opset_min, r->opset_max);
	fprintf(f, "runtime: %s\n", r->runtime ? r->runtime : "(it printed no version)");
	if (r->accept_only)
		fprintf(f, "verdicts: %zu accepted", n[PROBE_ACCEPTED]);
	else
		fprintf(f, "verdicts: %zu equal, %zu wrong", n[PROBE_EQUAL], n[PROBE_WRONG]);
	fprintf(f, ", %zu rejected, %zu crashed, %zu timed out; %zu variants made no valid model\n",
		n[PROBE_REJECTED], n[PROBE_CRASHED], n[PROBE_TIMEOUT], n[PROBE_INVALID]);
	fprintf(f, "op versions: %zu with a passing case, %zu without, %zu without a case\n", pass,
		fail, r->n_no_case);
	for (size_t i = 0; i < r->n_cases;) {
		const struct ir_op_schema *s = r->cases[i].schema;
		const struct probe_case *why = NULL;
		int any_ok = 0;
		size_t j = i;

		while (j < r->n_cases && r->cases[j].schema == s && r->cases[j].kind != PROBE_OPSET &&
		       r->cases[j].kind != PROBE_DYNAMIC) {
			any_ok |= probe_verdict_ok(r->cases[j].verdict);
			if (r->cases[j].verdict >= PROBE_WRONG && (!why || (r->cases[j].ref && !why->ref)))
				why = &r->cases[j];
			j++;
		}
		if (j == i) {
			i++;
			continue;
		}
		if (!any_ok && why) {
			if (!shown++)
				fprintf(f, "without a passing case:\n");
			fprintf(f, "  %s-%d: %s: %s\n", s->name, s->since_version,
				probe_verdict_name(why->verdict), why->message ? why->message : "");
		}
		i = j;
	}
	shown = 0;
	for (size_t i = 0; i < r->n_cases; i++) {
		const struct probe_case *c = &r->cases[i];

		if (c->verdict != PROBE_WRONG && c->verdict != PROBE_CRASHED &&
		    c->verdict != PROBE_TIMEOUT)
			continue;
		if (!shown++)
			fprintf(f, "wrong, crashed or timed out:\n");
		fprintf(f, "  %s: %s: %s\n", c->id, probe_verdict_name(c->verdict),
			c->message ? c->message : "");
	}
	if (r->n_no_case) {
		fprintf(f, "no valid case:");
		for (size_t i = 0; i < r->n_no_case; i++)
			fprintf(f, " %s", r->no_case[i]);
		fputc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}

static cJSON *case_json(const struct probe_case *c, int *ok)
{
	cJSON *o = cJSON_CreateObject();
	char v[512];

	if (!o || !cJSON_AddStringToObject(o, "id", c->id) ||
	    !cJSON_AddStringToObject(o, "op", c->schema->name) ||
	    !cJSON_AddStringToObject(o, "domain", c->schema->domain) ||
	    !cJSON_AddNumberToObject(o, "version", c->schema->since_version) ||
	    !cJSON_AddNumberToObject(o, "opset", c->opset) ||
	    !cJSON_AddStringToObject(o, "kind", probe_kind_name(c->kind)) ||
	    !(c->dtype ? cJSON_AddStringToObject(o, "dtype", rules_dtype_name(c->dtype)) :
	      cJSON_AddNullToObject(o, "dtype")))
		goto oom;
	if (c->kind == PROBE_ATTR) {
		probe_aval_json(&c->value, v, sizeof(v));
		if (!cJSON_AddStringToObject(o, "attr", c->attr) || !cJSON_AddRawToObject(o, "value", v))
			goto oom;
	}
	if ((c->kind == PROBE_GRAPH || c->kind == PROBE_CONST) &&
	    !cJSON_AddNumberToObject(o, "input", c->input))
		goto oom;
	if (c->kind == PROBE_RANK && !cJSON_AddNumberToObject(o, "rank", c->rank))
		goto oom;
	if (c->backend && !cJSON_AddStringToObject(o, "backend", c->backend))
		goto oom;
	if (!cJSON_AddStringToObject(o, "verdict", probe_verdict_name(c->verdict)) ||
	    !(c->message ? cJSON_AddStringToObject(o, "message", c->message) :
	      cJSON_AddNullToObject(o, "message")))
		goto oom;
	if (c->verdict == PROBE_WRONG && c->max_abs >= 0 &&
	    !rt_json_num(o, "max_abs", c->max_abs))
		goto oom;
	return o;
oom:
	*ok = 0;
	cJSON_Delete(o);
	return NULL;
}

int probe_report_json(const struct probe_run *r, FILE *f)
{
	cJSON *o = cJSON_CreateObject(), *a, *cs, *nc;
	size_t n[PROBE_N_VERDICTS];
	char *text;
	int ok = 1;

	counts(r, n);
	if (!o || !cJSON_AddStringToObject(o, "schema", PROBE_SCHEMA) ||
	    !cJSON_AddStringToObject(o, "command", r->command ? r->command : "") ||
	    !(r->runtime ? cJSON_AddStringToObject(o, "runtime", r->runtime) :
	      cJSON_AddNullToObject(o, "runtime")) ||
	    !cJSON_AddBoolToObject(o, "accept_only", r->accept_only) ||
	    !(a = cJSON_AddArrayToObject(o, "opset")) ||
	    !cJSON_AddItemToArray(a, cJSON_CreateNumber(r->opset_min)) ||
	    !cJSON_AddItemToArray(a, cJSON_CreateNumber(r->opset_max)) ||
	    !(cs = cJSON_AddObjectToObject(o, "counts")))
		goto oom;
	for (int v = PROBE_INVALID; v < PROBE_N_VERDICTS; v++)
		if (!cJSON_AddNumberToObject(cs, probe_verdict_name(v), (double)n[v]))
			goto oom;
	if (!(nc = cJSON_AddArrayToObject(o, "no_case")))
		goto oom;
	for (size_t i = 0; i < r->n_no_case; i++)
		if (!cJSON_AddItemToArray(nc, cJSON_CreateString(r->no_case[i])))
			goto oom;
	if (!(a = cJSON_AddArrayToObject(o, "cases")))
		goto oom;
	for (size_t i = 0; i < r->n_cases && ok; i++) {
		cJSON *c = case_json(&r->cases[i], &ok);

		if (c && !cJSON_AddItemToArray(a, c))
			ok = 0;
	}
	if (!ok || !(text = cJSON_Print(o)))
		goto oom;
	cJSON_Delete(o);
	fprintf(f, "%s\n", text);
	free(text);
	return ferror(f) ? -1 : 0;
oom:
	cJSON_Delete(o);
	return -1;
}
