/* metrics_json.c: comparison metrics as JSON: the metrics object of
 * opmig.validate/1, also used by opmig.migrate/1 and opmig batch, and
 * numbers written as null when not finite; a validation's time per run,
 * as JSON and as a line of text. */
#include <math.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "oprules/jbuild.h"
#include "validators/compare.h"
#include "validators/validate.h"

cJSON *rt_json_num(cJSON *o, const char *k, double x)
{
	return isfinite(x) ? cJSON_AddNumberToObject(o, k, x) : cJSON_AddNullToObject(o, k);
}

static void num(cJSON *o, const char *k, double x, int *ok)
{
	jb_need(rt_json_num(o, k, x), ok);
}

cJSON *rt_metrics_json(const struct rt_metrics *m)
{
	cJSON *o = cJSON_CreateObject();
	int ok = o != NULL;

	jb_need(cJSON_AddBoolToObject(o, "ok", m->ok), &ok);
	jb_need(cJSON_AddNumberToObject(o, "elements", (double)m->n), &ok);
	jb_need(cJSON_AddNumberToObject(o, "outside_tolerance", (double)m->n_bad), &ok);
	if (m->first_bad >= 0)
		jb_need(cJSON_AddNumberToObject(o, "first_outside", (double)m->first_bad), &ok);
	else
		jb_need(cJSON_AddNullToObject(o, "first_outside"), &ok);
	if (m->worst >= 0) {
		jb_need(cJSON_AddNumberToObject(o, "worst_index", (double)m->worst), &ok);
		num(o, "worst_candidate", m->worst_got, &ok);
		num(o, "worst_reference", m->worst_want, &ok);
	}
	num(o, "max_abs_error", m->max_abs, &ok);
	num(o, "max_rel_error", m->max_rel, &ok);
	num(o, "mean_abs_error", m->mean_abs, &ok);
	num(o, "rmse", m->rmse, &ok);
	num(o, "cosine", m->cosine, &ok);
	num(o, "snr_db", m->snr_db, &ok);
	num(o, "max_tolerance_ratio", m->max_ratio, &ok);
	jb_need(cJSON_AddNumberToObject(o, "nan_candidate", (double)m->nan_got), &ok);
	jb_need(cJSON_AddNumberToObject(o, "nan_reference", (double)m->nan_want), &ok);
	jb_need(cJSON_AddNumberToObject(o, "inf_candidate", (double)m->inf_got), &ok);
	jb_need(cJSON_AddNumberToObject(o, "inf_reference", (double)m->inf_want), &ok);
	if (!m->ok)
		jb_need(cJSON_AddStringToObject(o, "why", m->why), &ok);
	if (m->lg.on) {
		/* ok above is this criterion's verdict; within_tolerance the
		 * element-wise one */
		cJSON *l = cJSON_AddObjectToObject(o, "logits");

		jb_need(l, &ok);
		jb_need(cJSON_AddStringToObject(l, "criterion", m->lg.kv ? "cosine" : "cosine_top1"), &ok);
		jb_need(cJSON_AddBoolToObject(l, "within_tolerance", m->lg.tol_ok), &ok);
		jb_need(cJSON_AddNumberToObject(l, "positions", (double)m->lg.positions), &ok);
		num(l, "min_cosine", m->lg.min_cosine, &ok);
		num(l, "min_cosine_required", m->lg.min_cosine_required, &ok);
		if (!m->lg.kv) {
			jb_need(cJSON_AddNumberToObject(l, "top1_agree", (double)m->lg.top1_agree), &ok);
			num(l, "top1_agreement", m->lg.positions ? (double)m->lg.top1_agree /
			    (double)m->lg.positions : 0, &ok);
			num(l, "top5_overlap", m->lg.top5_overlap, &ok);
		}
	}
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}


void val_time_describe(const struct val_report *r, char *buf, size_t size)
{
	buf[0] = 0;
	if (r->n_timed)
		snprintf(buf, size, "time per run: reference %.3g ms, candidate %.3g ms "
			 "(mean of %zu; least %.3g and %.3g)",
			 1e3 * r->ref_s / (double)r->n_timed, 1e3 * r->cand_s / (double)r->n_timed,
			 r->n_timed, 1e3 * r->ref_min_s, 1e3 * r->cand_min_s);
}

int val_time_json(cJSON *o, const struct val_report *r)
{
	cJSON *t;
	int ok = 1;

	if (!r->n_timed)
		return 1;
	t = cJSON_AddObjectToObject(o, "time_per_run_ms");
	jb_need(t, &ok);
	if (!ok)
		return 0;
	jb_need(cJSON_AddNumberToObject(t, "runs", (double)r->n_timed), &ok);
	num(t, "reference_mean", 1e3 * r->ref_s / (double)r->n_timed, &ok);
	num(t, "reference_min", 1e3 * r->ref_min_s, &ok);
	num(t, "candidate_mean", 1e3 * r->cand_s / (double)r->n_timed, &ok);
	num(t, "candidate_min", 1e3 * r->cand_min_s, &ok);
	return ok;
}
