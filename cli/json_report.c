/* json_report.c: JSON pieces the reports of several commands share:
 * numbers (non-finite ones are null) and comparison metrics (the
 * opmig.validate/1 metrics object, also used by opmig.migrate/1). */
#include <math.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "validators/compare.h"

void cli_json_num(cJSON *o, const char *k, double x)
{
	if (isfinite(x))
		cJSON_AddNumberToObject(o, k, x);
	else
		cJSON_AddNullToObject(o, k);
}

cJSON *cli_json_metrics(const struct rt_metrics *m)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddBoolToObject(o, "ok", m->ok);
	cJSON_AddNumberToObject(o, "elements", (double)m->n);
	cJSON_AddNumberToObject(o, "outside_tolerance", (double)m->n_bad);
	if (m->first_bad >= 0)
		cJSON_AddNumberToObject(o, "first_outside", (double)m->first_bad);
	else
		cJSON_AddNullToObject(o, "first_outside");
	if (m->worst >= 0) {
		cJSON_AddNumberToObject(o, "worst_index", (double)m->worst);
		cli_json_num(o, "worst_candidate", m->worst_got);
		cli_json_num(o, "worst_reference", m->worst_want);
	}
	cli_json_num(o, "max_abs_error", m->max_abs);
	cli_json_num(o, "max_rel_error", m->max_rel);
	cli_json_num(o, "mean_abs_error", m->mean_abs);
	cli_json_num(o, "rmse", m->rmse);
	cli_json_num(o, "cosine", m->cosine);
	cli_json_num(o, "snr_db", m->snr_db);
	cli_json_num(o, "max_tolerance_ratio", m->max_ratio);
	cJSON_AddNumberToObject(o, "nan_candidate", (double)m->nan_got);
	cJSON_AddNumberToObject(o, "nan_reference", (double)m->nan_want);
	cJSON_AddNumberToObject(o, "inf_candidate", (double)m->inf_got);
	cJSON_AddNumberToObject(o, "inf_reference", (double)m->inf_want);
	if (!m->ok)
		cJSON_AddStringToObject(o, "why", m->why);
	return o;
}

