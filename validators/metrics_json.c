/* metrics_json.c: comparison metrics as JSON: the metrics object of
 * opmig.validate/1, also used by opmig.migrate/1 and opmig batch, and
 * numbers written as null when not finite. */
#include <math.h>

#include <cjson/cJSON.h>

#include "validators/compare.h"

void rt_json_num(cJSON *o, const char *k, double x)
{
	if (isfinite(x))
		cJSON_AddNumberToObject(o, k, x);
	else
		cJSON_AddNullToObject(o, k);
}

cJSON *rt_metrics_json(const struct rt_metrics *m)
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
		rt_json_num(o, "worst_candidate", m->worst_got);
		rt_json_num(o, "worst_reference", m->worst_want);
	}
	rt_json_num(o, "max_abs_error", m->max_abs);
	rt_json_num(o, "max_rel_error", m->max_rel);
	rt_json_num(o, "mean_abs_error", m->mean_abs);
	rt_json_num(o, "rmse", m->rmse);
	rt_json_num(o, "cosine", m->cosine);
	rt_json_num(o, "snr_db", m->snr_db);
	rt_json_num(o, "max_tolerance_ratio", m->max_ratio);
	cJSON_AddNumberToObject(o, "nan_candidate", (double)m->nan_got);
	cJSON_AddNumberToObject(o, "nan_reference", (double)m->nan_want);
	cJSON_AddNumberToObject(o, "inf_candidate", (double)m->inf_got);
	cJSON_AddNumberToObject(o, "inf_reference", (double)m->inf_want);
	if (!m->ok)
		cJSON_AddStringToObject(o, "why", m->why);
	return o;
}

