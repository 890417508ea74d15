/* quant_migrate.c: `opmig migrate --precision int8`: the migrate
 * pipeline's quantization stage (after the last canonicalization, on the
 * legalized float model, with the target's rules choosing the dtypes),
 * its summary as notes of the migrate report, and the int8 judgement of
 * the pipeline's validation: each output by the quantization's accuracy
 * criterion (cosine, SNR or largest error on the validation samples)
 * instead of an element-wise tolerance that rounding to 8 bits cannot
 * meet.  `--precision int4` is the weight-only quantizer of `opmig
 * quantize --weight-only int4` (MatMulNBits), kept where the target's
 * rules declare com.microsoft:MatMulNBits, else lowered by matmul-nbits
 * to blocked DequantizeLinear-21 of int4 codes, else (below opset 21) to
 * uint8 codes through Cast, Sub and Mul (cast-codes), else refused: weights
 * dequantized back to float would not be int4; `--weight-only int8` is
 * the same with 8-bit codes.  Without validation (--no-validate) the
 * weight-only quantizer runs nothing either (no accuracy check). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/migrate.h"
#include "rewriters/quantize.h"
#include "rewriters/rw_int.h"

int mg_quantize(struct rw_ctx *c, const struct qz_opts *opts, const char *path,
		const char *unchecked, struct ir_diag *d)
{
	struct qz_opts o = opts ? *opts : (struct qz_opts){ 0 };
	const char *pre = o.format == QZ_WEIGHT_ONLY && o.nbits == 4 ? "int4" : "int8";
	char crit[200];
	struct qz_report r;
	int rc;

	o.target = c->target;
	o.dims = c->dims;
	o.n_dims = c->n_dims;
	o.prepare = 0;          /* the pipeline canonicalized and fused */
	/* int8: its validation judges logits by position; weight-only int4
	 * judges them by position itself, as quantize does, so that the
	 * fallback meets the validation's per-position criterion */
	o.logits_whole = o.format != QZ_WEIGHT_ONLY;
	if ((rc = qz_run(c->m, path, &o, &r, d)) < 0)
		return rc;
	if (r.unchecked)
		snprintf(crit, sizeof(crit), "%s not checked (%s: nothing run, none returned to "
			 "float)", r.criterion, unchecked ? unchecked : "--no-accuracy-check");
	else
		snprintf(crit, sizeof(crit), "%s %s on %zu sample%s", r.criterion,
			 r.met ? "met" : "NOT met", r.n_eval, r.n_eval == 1 ? "" : "s");
	if (o.format == QZ_WEIGHT_ONLY)
		rc = rw_note(c, "%s: %zu MatMul%s quantized weight-only (%s weights in blocks of "
			     "%lld along K, %s), %zu in float; %s", pre,
			     r.n_quantized, r.n_quantized == 1 ? "" : "s",
			     ir_dtype_name(r.weight_dtype), (long long)r.block_size,
			     r.symmetric ? "symmetric" : "asymmetric", r.n_float, crit);
	else
		rc = rw_note(c, "int8: %zu node%s quantized (%s, %s activations, %s weights%s), "
			     "%zu in float; %s %s on %zu sample%s", r.n_quantized,
			     r.n_quantized == 1 ? "" : "s", r.format, ir_dtype_name(r.act_dtype),
			     ir_dtype_name(r.weight_dtype), r.per_channel ? " per channel" : "",
			     r.n_float, r.criterion, r.met ? "met" : "NOT met", r.n_eval,
			     r.n_eval == 1 ? "" : "s");
	for (size_t i = 0; i < r.n_steps && rc == 0; i++)
		rc = rw_note(c, "%s: '%s' (%s) returned to float by the accuracy fallback: %s "
			     "%.6g -> %.6g", pre, r.nodes[r.steps[i].node].name,
			     r.nodes[r.steps[i].node].op, qz_metric_name(r.metric),
			     r.steps[i].worst_before, r.steps[i].worst_after);
	/* the quantizer's own note of the skipped check is said above */
	for (size_t i = r.unchecked ? 1 : 0; i < r.n_notes && rc == 0; i++)
		rc = rw_note(c, "%s: %s", pre, r.notes[i]);
	qz_report_detach(c->m, &r);
	qz_report_release(&r);
	if (rc == 0)
		rc = rw_refresh(c);
	return rc;
}

/* Does a MatMul of g read a float16 initializer as B (the quantizer's
 * codes of float16 weights, which matmul-nbits lowers only to
 * DequantizeLinear-21)? */
static int half_weights(const struct ir_graph *g)
{
	for (size_t i = 0; i < g->n_nodes; i++) {
		const struct ir_node *n = g->nodes[i];

		if (!strcmp(ir_s(n->op_type), "MatMul") && n->n_inputs == 2 && n->inputs[1] &&
		    n->inputs[1]->init && n->inputs[1]->init->dtype == IR_DTYPE_FLOAT16)
			return 1;
	}
	return 0;
}

int mg_nbits_form(struct rw_ctx *c, struct qz_opts *o, struct ir_diag *d)
{
	const struct rules_op *op = rules_target_find_op(c->target, "com.microsoft",
							 "MatMulNBits");
	int bits = o->nbits, rc;
	const char *pre = bits == 4 ? "--precision int4" : "--weight-only int8";

	if (op && op->supported)
		return (rc = rw_note(c, "int%d: %s declares com.microsoft:MatMulNBits: the "
				     "quantized MatMuls stay MatMulNBits", bits, c->target->id)) < 0 ?
		       rc : 1;
	if (!o->symmetric && rw_nbits_codes(c, bits, 1) != 0)
		return 0;
	if (rw_nbits_codes(c, bits, 0) != 0) {
		if (o->symmetric)
			return 0;
		o->symmetric = 1;
		return (rc = rw_note(c, "int%d: %s takes DequantizeLinear of int%d codes only "
				     "with zero point 0: the weights are quantized symmetric", bits,
				     c->target->id, bits)) < 0 ? rc : 0;
	}
	/* below opset 21: uint8 codes (a byte each) through Cast, Sub and Mul
	 * (matmul-nbits' cast-codes) where the target takes those, for
	 * float32 weights */
	if (!half_weights(c->m->graph) && rw_nbits_cast_form(c, IR_DTYPE_FLOAT))
		return (rc = rw_note(c, "int%d: %s takes no DequantizeLinear-21 of int%d codes at "
				     "opset %lld: the codes are kept one a byte (uint8) through "
				     "Cast, Sub and Mul (matmul-nbits cast-codes)", bits,
				     c->target->id, bits, (long long)c->opset)) < 0 ? rc : 0;
	if (c->opset < 21 && rules_target_find_op(c->target, "ai.onnx", "DequantizeLinear"))
		return ir_diag_error(d, IR_EUSAGE, "%s: %s has no "
				     "com.microsoft:MatMulNBits, and blocked int%d DequantizeLinear "
				     "needs opset 21 (the model is converted to %lld: give --opset 21 "
				     "if the target's rules allow it)", pre, c->target->id, bits,
				     (long long)c->opset);
	return ir_diag_error(d, IR_EUSAGE, "%s: %s takes neither "
			     "com.microsoft:MatMulNBits nor DequantizeLinear-21 of int%d codes "
			     "nor Cast of uint8 codes (the weights would be float again)", pre,
			     c->target->id, bits);
}

int mg_quantize_judge(struct val_report *v, const struct qz_opts *opts)
{
	enum qz_metric m = opts && opts->have_accuracy ? opts->metric : QZ_COSINE;
	double want = opts && opts->have_accuracy ? opts->threshold : 0.99;

	v->equivalent = 1;
	for (size_t i = 0; i < v->n_outputs; i++) {
		struct rt_metrics *x = &v->outputs[i].m;
		double got = m == QZ_SNR ? x->snr_db : m == QZ_MAX_ABS ? x->max_abs : x->cosine;
		int ok = m == QZ_MAX_ABS ? got <= want : got >= want;

		/* a decoder's logits must also keep every position's cosine
		 * and top-1 token (validate.h): that verdict stands */
		if (x->lg.on && !x->ok) {
			v->equivalent = 0;
			continue;
		}

		/* top1 is judged by the quantization itself; here by cosine */
		if (m == QZ_TOP1)
			ok = x->cosine >= 0.99;
		if (x->n && !ok) {
			x->ok = 0;
			snprintf(x->why, sizeof(x->why), "%s %.6g, the %s criterion wants %s%s%g",
				 m == QZ_TOP1 ? "cosine" : qz_metric_name(m), m == QZ_TOP1 ? x->cosine : got,
				 opts && opts->format == QZ_WEIGHT_ONLY && opts->nbits == 4 ?
				 "int4" : "int8",
				 m == QZ_TOP1 ? "cosine" : qz_metric_name(m),
				 m == QZ_MAX_ABS ? "<=" : ">=", m == QZ_TOP1 ? 0.99 : want);
		} else if (x->n) {
			x->ok = 1;
			x->why[0] = 0;
		}
		v->equivalent &= x->ok;
	}
	return v->equivalent;
}

void mg_quantize_label(struct mg_report *r, const struct qz_opts *opts)
{
	enum qz_metric m = opts && opts->have_accuracy ? opts->metric : QZ_COSINE;
	double want = opts && opts->have_accuracy ? opts->threshold : 0.99;

	if (!opts || opts->format != QZ_WEIGHT_ONLY)
		return;         /* int8: its tolerances, as before */
	snprintf(r->val_label, sizeof(r->val_label), "int%d weight-only", opts->nbits);
	if (m == QZ_TOP1)
		snprintf(r->val_criterion, sizeof(r->val_criterion), "cosine>=0.99");
	else
		snprintf(r->val_criterion, sizeof(r->val_criterion), "%s%s%g", qz_metric_name(m),
			 m == QZ_MAX_ABS ? "<=" : ">=", want);
}
