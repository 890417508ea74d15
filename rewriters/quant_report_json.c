/* quant_report_json.c: the quantization report as JSON, schema
 * opmig.quantize/1 (documented in man/opmig-quantize.1), built all or
 * nothing. */
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "oprules/jbuild.h"
#include "rewriters/quantize.h"

static void num(cJSON *o, const char *k, double x, int *ok)
{
	jb_need(rt_json_num(o, k, x), ok);
}

static const char *state_name(enum qz_state s)
{
	return s == QZ_NODE_QUANTIZED ? "quantized" : s == QZ_NODE_FUSED ? "fused" : "float";
}

static cJSON *json_output(const struct qz_output *x, int *ok)
{
	cJSON *o = cJSON_CreateObject();

	jb_need(o, ok);
	jb_need(cJSON_AddStringToObject(o, "name", x->name), ok);
	jb_need(cJSON_AddBoolToObject(o, "ok", x->ok), ok);
	num(o, "cosine", x->m.cosine, ok);
	num(o, "snr_db", x->m.snr_db, ok);
	num(o, "max_abs", x->m.max_abs, ok);
	num(o, "mean_abs", x->m.mean_abs, ok);
	num(o, "top1", x->top1, ok);
	jb_need(cJSON_AddNumberToObject(o, "elements", (double)x->m.n), ok);
	if (x->m.lg.on) {
		cJSON *l = cJSON_AddObjectToObject(o, "by_position");

		jb_need(l, ok);
		jb_need(cJSON_AddStringToObject(l, "kind", x->m.lg.kv ? "kv_cache" : "logits"), ok);
		num(l, "min_cosine", x->m.lg.min_cosine, ok);
		num(l, "min_cosine_required", x->m.lg.min_cosine_required, ok);
		jb_need(cJSON_AddNumberToObject(l, "worst_position",
						(double)x->m.lg.worst_position), ok);
		jb_need(cJSON_AddNumberToObject(l, "positions", (double)x->m.lg.positions), ok);
		if (x->m.lg.kv) {
			jb_need(cJSON_AddNullToObject(l, "top1_agree"), ok);
			jb_need(cJSON_AddNullToObject(l, "top5_overlap"), ok);
		} else {
			jb_need(cJSON_AddNumberToObject(l, "top1_agree", (double)x->m.lg.top1_agree),
				ok);
			num(l, "top5_overlap", x->m.lg.top5_overlap, ok);
		}
		jb_need(cJSON_AddBoolToObject(l, "ok", x->m.ok), ok);
	} else {
		jb_need(cJSON_AddNullToObject(o, "by_position"), ok);
	}
	return o;
}

static cJSON *json_tensor(const struct qz_tensor *t, int *ok)
{
	cJSON *o = cJSON_CreateObject();

	jb_need(o, ok);
	jb_need(cJSON_AddStringToObject(o, "name", t->name), ok);
	jb_need(cJSON_AddStringToObject(o, "kind", t->kind), ok);
	jb_need(cJSON_AddStringToObject(o, "dtype", ir_dtype_name(t->dtype)), ok);
	if (t->axis >= 0)
		jb_need(cJSON_AddNumberToObject(o, "axis", t->axis), ok);
	else
		jb_need(cJSON_AddNullToObject(o, "axis"), ok);
	jb_need(cJSON_AddNumberToObject(o, "channels", (double)t->n), ok);
	num(o, "scale", t->scale, ok);
	num(o, "zero_point", t->zero_point, ok);
	num(o, "scale_min", t->scale_min, ok);
	num(o, "scale_max", t->scale_max, ok);
	num(o, "min", t->min, ok);
	num(o, "max", t->max, ok);
	num(o, "range_lo", t->lo, ok);
	num(o, "range_hi", t->hi, ok);
	if (!strcmp(t->kind, "activation") || !strcmp(t->kind, "constant"))
		jb_need(cJSON_AddNumberToObject(o, "group", (double)t->group), ok);
	else
		jb_need(cJSON_AddNullToObject(o, "group"), ok);
	return o;
}

char *qz_report_json(const struct qz_report *r, const char *model, const char *out,
		     int written)
{
	cJSON *o = cJSON_CreateObject(), *arr, *x;
	int ok = o != NULL;

	jb_need(cJSON_AddStringToObject(o, "schema", "opmig.quantize/1"), &ok);
	jb_need(cJSON_AddStringToObject(o, "model", model), &ok);
	if (out)
		jb_need(cJSON_AddStringToObject(o, "output", out), &ok);
	else
		jb_need(cJSON_AddNullToObject(o, "output"), &ok);
	jb_need(cJSON_AddBoolToObject(o, "written", written), &ok);
	jb_need(cJSON_AddStringToObject(o, "format", r->format), &ok);
	jb_need(cJSON_AddStringToObject(o, "method", r->method), &ok);
	jb_need(cJSON_AddStringToObject(o, "sensitivity", r->sensitivity), &ok);
	if (r->percentile > 0)
		num(o, "percentile", r->percentile, &ok);
	else
		jb_need(cJSON_AddNullToObject(o, "percentile"), &ok);
	jb_need(cJSON_AddStringToObject(o, "activations", ir_dtype_name(r->act_dtype)), &ok);
	jb_need(cJSON_AddStringToObject(o, "weights", ir_dtype_name(r->weight_dtype)), &ok);
	jb_need(cJSON_AddBoolToObject(o, "symmetric", r->symmetric), &ok);
	jb_need(cJSON_AddBoolToObject(o, "per_channel", r->per_channel), &ok);
	if (r->nbits) {
		x = cJSON_AddObjectToObject(o, "weight_only");
		jb_need(x, &ok);
		jb_need(cJSON_AddNumberToObject(x, "bits", r->nbits), &ok);
		jb_need(cJSON_AddNumberToObject(x, "block_size", (double)r->block_size), &ok);
		jb_need(cJSON_AddNumberToObject(x, "accuracy_level", r->accuracy_level), &ok);
	} else {
		jb_need(cJSON_AddNullToObject(o, "weight_only"), &ok);
	}
	jb_need(cJSON_AddNumberToObject(o, "opset", (double)r->opset), &ok);
	x = cJSON_AddObjectToObject(o, "samples");
	jb_need(x, &ok);
	jb_need(cJSON_AddNumberToObject(x, "calibration", (double)r->n_calib), &ok);
	jb_need(cJSON_AddNumberToObject(x, "evaluation", (double)r->n_eval), &ok);
	jb_need(cJSON_AddBoolToObject(x, "random", r->random_calib), &ok);
	x = cJSON_AddObjectToObject(o, "criterion");
	jb_need(x, &ok);
	jb_need(cJSON_AddStringToObject(x, "text", r->criterion), &ok);
	jb_need(cJSON_AddStringToObject(x, "metric", qz_metric_name(r->metric)), &ok);
	num(x, "value", r->threshold, &ok);
	jb_need(cJSON_AddBoolToObject(x, "met", r->met), &ok);
	jb_need(cJSON_AddBoolToObject(x, "checked", !r->unchecked), &ok);
	num(x, "worst_before_fallback", r->worst_first, &ok);
	arr = cJSON_AddArrayToObject(o, "outputs");
	jb_need(arr, &ok);
	for (size_t i = 0; i < r->n_outputs; i++)
		jb_put(arr, json_output(&r->outputs[i], &ok), &ok);
	x = cJSON_AddObjectToObject(o, "size");
	jb_need(x, &ok);
	jb_need(cJSON_AddNumberToObject(x, "weights_before", (double)r->bytes_before), &ok);
	jb_need(cJSON_AddNumberToObject(x, "weights_after", (double)r->bytes_after), &ok);
	jb_need(cJSON_AddNumberToObject(o, "nodes_quantized", (double)r->n_quantized), &ok);
	jb_need(cJSON_AddNumberToObject(o, "nodes_float", (double)r->n_float), &ok);
	arr = cJSON_AddArrayToObject(o, "nodes");
	jb_need(arr, &ok);
	for (size_t i = 0; i < r->n_nodes; i++) {
		const struct qz_node *n = &r->nodes[i];
		cJSON *y = cJSON_CreateObject();

		jb_need(y, &ok);
		jb_need(cJSON_AddStringToObject(y, "name", n->name), &ok);
		jb_need(cJSON_AddStringToObject(y, "op_type", n->op), &ok);
		jb_need(cJSON_AddStringToObject(y, "state", state_name(n->state)), &ok);
		if (n->why)
			jb_need(cJSON_AddStringToObject(y, "why", n->why), &ok);
		else
			jb_need(cJSON_AddNullToObject(y, "why"), &ok);
		num(y, "sensitivity_snr_db", n->sensitivity, &ok);
		num(y, "metric_if_float", n->if_float, &ok);
		num(y, "top1_flips_alone", n->flips_alone, &ok);
		if (n->rank)
			jb_need(cJSON_AddNumberToObject(y, "rank", (double)n->rank), &ok);
		else
			jb_need(cJSON_AddNullToObject(y, "rank"), &ok);
		x = cJSON_AddArrayToObject(y, "inputs");
		jb_need(x, &ok);
		for (size_t j = 0; j < n->n_inputs; j++)
			jb_put(x, cJSON_CreateString(n->inputs[j]), &ok);
		jb_put(arr, y, &ok);
	}
	arr = cJSON_AddArrayToObject(o, "sensitivity");
	jb_need(arr, &ok);
	for (size_t i = 0; i < r->n_ranked; i++)
		jb_put(arr, cJSON_CreateString(r->nodes[r->ranking[i]].name), &ok);
	arr = cJSON_AddArrayToObject(o, "fallback");
	jb_need(arr, &ok);
	for (size_t i = 0; i < r->n_steps; i++) {
		cJSON *y = cJSON_CreateObject();

		jb_need(y, &ok);
		jb_need(cJSON_AddStringToObject(y, "node", r->nodes[r->steps[i].node].name), &ok);
		jb_need(cJSON_AddStringToObject(y, "op_type", r->nodes[r->steps[i].node].op), &ok);
		num(y, "sensitivity_snr_db", r->nodes[r->steps[i].node].sensitivity, &ok);
		num(y, "metric_if_float", r->nodes[r->steps[i].node].if_float, &ok);
		num(y, "worst_before", r->steps[i].worst_before, &ok);
		num(y, "worst_after", r->steps[i].worst_after, &ok);
		jb_put(arr, y, &ok);
	}
	arr = cJSON_AddArrayToObject(o, "tensors");
	jb_need(arr, &ok);
	for (size_t i = 0; i < r->n_tensors; i++)
		jb_put(arr, json_tensor(&r->tensors[i], &ok), &ok);
	arr = cJSON_AddArrayToObject(o, "notes");
	jb_need(arr, &ok);
	for (size_t i = 0; i < r->n_notes; i++)
		jb_put(arr, cJSON_CreateString(r->notes[i]), &ok);
	return jb_print(o, ok);
}
