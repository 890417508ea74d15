/* migrate.c: the migrate pipeline (see migrate.h): scan, the pass stages in
 * order, decomposition rounds driven by the scanner's verdicts, the residual
 * blockers, and validation against the original. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/migrate.h"
#include "rewriters/quantize.h"
#include "rewriters/rw_int.h"

void mg_report_release(struct mg_report *r)
{
	free(r->target);
	for (size_t i = 0; i < r->n_rewrites; i++) {
		free(r->rewrites[i].node);
		free(r->rewrites[i].op);
	}
	free(r->rewrites);
	for (size_t i = 0; i < r->n_blockers; i++) {
		free(r->blockers[i].node);
		free(r->blockers[i].op);
		free(r->blockers[i].domain);
		free(r->blockers[i].why);
	}
	free(r->blockers);
	for (size_t i = 0; i < r->n_findings; i++)
		free(r->findings[i]);
	free(r->findings);
	for (size_t i = 0; i < r->n_notes; i++)
		free(r->notes[i]);
	free(r->notes);
	for (size_t i = 0; i < r->n_iface; i++) {
		free(r->iface[i].name);
		free(r->iface[i].from);
		free(r->iface[i].to);
	}
	free(r->iface);
	val_report_release(&r->val);
	val_map_release(&r->map);
	free(r->runtime_check);
	memset(r, 0, sizeof(*r));
}

static int allowed(const struct mg_opts *o, const struct rw_pass *p)
{
	return rw_pass_allowed(o->passes, p);
}

/* Run every allowed graph pass of one kind; *changed (may be NULL)
 * counts what they changed. */
static int stage_n(struct rw_ctx *c, const struct mg_opts *o, enum rw_kind kind,
		   size_t *changed)
{
	if (changed)
		*changed = 0;
	for (size_t i = 0; i < rw_n_passes; i++) {
		const struct rw_pass *p = rw_passes[i];
		size_t k;
		int rc;

		if (p->kind != kind || !p->run || !allowed(o, p))
			continue;
		if ((rc = rw_run(c, p, &k)) < 0)
			return rc;
		if (changed)
			*changed += k;
	}
	return 0;
}

static int stage(struct rw_ctx *c, const struct mg_opts *o, enum rw_kind kind)
{
	return stage_n(c, o, kind, NULL);
}

/* A scan of the model as it is now, for t, with the planner's hook (and
 * float32 checked as float16 while the precision pass is due). */
static int scan(struct rw_ctx *c, const char *path, const struct rules_target *t,
		struct scan_result *out, struct ir_diag *d)
{
	struct scan_options so = { .can_rewrite = rw_scan_hook, .ctx = c, .fp16 = c->prec16 };

	return scan_model_inferred(c->m, path, &t, 1, &so, c->have_inf ? &c->inf : NULL, out, d);
}

/* One round: every node the scan calls rewritable is decomposed. */
static int decompose_round(struct rw_ctx *c, const struct mg_opts *o,
			   const char *path, size_t *changed, struct ir_diag *d)
{
	struct scan_result sr;
	struct ir_node **todo = NULL;
	size_t n = 0;
	int rc;

	*changed = 0;
	if ((rc = scan(c, path, o->target, &sr, d)) < 0)
		return rc;
	if (!(todo = calloc(sr.n_nodes + 1, sizeof(*todo)))) {
		scan_result_release(&sr);
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < sr.n_nodes; i++)
		if (sr.targets[0].verdicts[i].status == SCAN_REWRITABLE &&
		    !sr.nodes[i].function)
			todo[n++] = (struct ir_node *)sr.nodes[i].node;
	scan_result_release(&sr);
	for (size_t i = 0; i < n; i++) {
		const struct rw_pass *p;
		int v;

		if (!(p = rw_choose(c, todo[i], RW_DECOMPOSE, &v)))
			continue;
		if (!allowed(o, p))
			continue;
		if ((rc = rw_apply(c, p, todo[i], v)) < 0)
			goto cleanup;
		(*changed)++;
	}
	if (*changed)
		rc = rw_refresh(c);
cleanup:
	free(todo);
	return rc;
}

static char *join_reasons(const struct scan_verdict *v)
{
	size_t len = 1;
	char *s;

	for (size_t i = 0; i < v->n_reasons; i++)
		len += strlen(v->reasons[i].message) + 2;
	if (!(s = calloc(1, len)))
		return NULL;
	for (size_t i = 0; i < v->n_reasons; i++) {
		if (i)
			strcat(s, "; ");
		strcat(s, v->reasons[i].message);
	}
	return s;
}

/* Residual blockers and findings of the final scan. */
static int residual(const struct rw_ctx *c, const struct scan_result *sr,
		    struct mg_report *r, struct ir_diag *d)
{
	const struct scan_target_result *t = &sr->targets[0];

	r->after = t->counts;
	if (!(r->blockers = calloc(sr->n_nodes + 1, sizeof(*r->blockers))) ||
	    !(r->findings = calloc(t->n_findings + 1, sizeof(*r->findings))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < sr->n_nodes; i++) {
		const struct scan_verdict *v = &t->verdicts[i];
		struct mg_blocker *b;

		if (v->status < SCAN_REWRITABLE)
			continue;
		b = &r->blockers[r->n_blockers++];
		b->status = (int)v->status;
		r->n_int8_fix += v->fix == SCAN_FIX_INT8;
		if (!(b->node = strdup(sr->nodes[i].label)) ||
		    !(b->op = strdup(ir_s(sr->nodes[i].node->op_type))) ||
		    !(b->domain = strdup(sr->nodes[i].domain)) ||
		    !(b->why = join_reasons(v)) ||
		    rw_refusals_append(c, sr->nodes[i].node, &b->why) < 0)
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < t->n_findings; i++) {
		if (t->findings[i].status < SCAN_REWRITABLE)
			continue;
		if (!(r->findings[r->n_findings] = strdup(t->findings[i].message)))
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		r->n_findings++;
	}
	return 0;
}

/* Move the context's log, notes and map into the report. */
static void take_log(struct rw_ctx *c, struct mg_report *r)
{
	r->rewrites = c->log;
	r->n_rewrites = c->n_log;
	c->log = NULL;
	c->n_log = c->cap_log = 0;
	r->notes = c->notes;
	r->n_notes = c->n_notes;
	c->notes = NULL;
	c->n_notes = 0;
	r->map = c->map;
	val_map_init(&c->map);
}

#define MAX_DIMS 64

/* The --dim settings, the dims static-dims made 1 by itself, plus
 * NAME=batch for the symbolic dim 0 of the original's inputs when the
 * batch was made static (so the original runs at the sizes the migrated
 * model has). */
static size_t validation_dims(const struct ir_model *orig, const struct mg_opts *o,
			      const struct rw_ctx *c, struct rt_dim_set *out, char (*buf)[80])
{
	size_t n = 0;

	for (size_t i = 0; i < o->n_dims && n < MAX_DIMS; i++)
		out[n++] = o->dims[i];
	for (size_t i = 0; i < c->n_auto_dims && n < MAX_DIMS; i++) {
		const char *eq = strchr(c->auto_dims[i], '=');

		out[n].name = c->auto_dims[i];    /* "NAME=V", as --dim keeps it */
		out[n++].value = eq ? strtoll(eq + 1, NULL, 10) : 1;
	}
	for (size_t i = 0; c->batch > 0 && i < orig->graph->n_inputs && n < MAX_DIMS; i++) {
		const struct ir_type *t = orig->graph->inputs[i].type;

		if (!t || t->kind != IR_TYPE_TENSOR || !t->shape.n_dims ||
		    t->shape.dims[0].kind != IR_DIM_PARAM)
			continue;
		snprintf(buf[n], sizeof(buf[n]), "%.60s=%lld", ir_s(t->shape.dims[0].param),
			 (long long)c->batch);
		out[n].name = buf[n];
		out[n++].value = c->batch;
	}
	return n;
}

static int report_note(struct mg_report *r, struct ir_diag *d, const char *msg)
{
	char **q = realloc(r->notes, (r->n_notes + 1) * sizeof(*q));

	if (!q)
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	r->notes = q;
	if (!(q[r->n_notes] = strdup(msg)))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	r->n_notes++;
	return 0;
}

static int is_int_dtype(int dt)
{
	return dt == IR_DTYPE_INT8 || dt == IR_DTYPE_UINT8 || dt == IR_DTYPE_INT16 ||
	       dt == IR_DTYPE_UINT16 || dt == IR_DTYPE_INT32 || dt == IR_DTYPE_UINT32 ||
	       dt == IR_DTYPE_INT64 || dt == IR_DTYPE_UINT64;
}

/* Integer graph inputs of the original, at most MAX_DIMS, each with the
 * range [0, 0] (an index every non-empty axis has). */
static size_t zero_ranges(const struct ir_model *orig, struct rt_value_range *out,
			  char (*buf)[80])
{
	const struct ir_graph *g = orig->graph;
	size_t n = 0;

	for (size_t i = 0; i < g->n_inputs && n < MAX_DIMS; i++) {
		const struct ir_type *t = g->inputs[i].type;

		if (g->inputs[i].value->init || !t || t->kind != IR_TYPE_TENSOR ||
		    !is_int_dtype(t->elem_type))
			continue;
		/* ranges are named as given on the command line, NAME=LO:HI */
		snprintf(buf[n], sizeof(buf[n]), "%.70s=0:0", ir_s(g->inputs[i].value->name));
		out[n].name = buf[n];
		out[n].lo = out[n].hi = 0;
		n++;
	}
	return n;
}

/* Validation on seeded inputs; when the models cannot run on them (an
 * index input out of range for a Gather or a loss whose axis size the
 * generator could not see), once more with every integer input 0. */
static int validate(struct ir_model *orig, struct ir_model *m, const struct rw_ctx *c,
		    const struct mg_opts *o, const struct mg_data *md, struct mg_report *r,
		    struct ir_diag *d)
{
	struct val_opts vo = { 0 };
	struct rt_dim_set dims[MAX_DIMS];
	struct rt_value_range zeros[MAX_DIMS];
	char names[MAX_DIMS][80], znames[MAX_DIMS][80], bad[512];
	int rc;

	vo.precision = c->prec16 ? VAL_FP16 : -1;
	vo.samples = o->samples > 0 ? o->samples : 1;
	vo.gen.seed = o->seed;
	vo.gen.n_dims = validation_dims(orig, o, c, dims, names);
	vo.gen.dims = dims;
	vo.map = &r->map;
	vo.threads = o->threads;
	vo.time = o->time;
	vo.data_dirs = md->dirs;
	vo.n_data_dirs = md->n_dirs;
	r->validated = 1;
	rc = val_run(orig, m, &vo, &r->val, bad, sizeof(bad), d);
	if (rc == IR_EINVAL && md->n_dirs) {
		/* the files do not bind (a sequence, a name the model lost):
		 * seeded inputs then, and the report says why */
		char msg[600];

		snprintf(msg, sizeof(msg), "validation on seeded inputs: the input sets did not "
			 "bind (%.200s%s%.300s)", bad, bad[0] ? ": " : "", d->msg);
		val_report_release(&r->val);
		memset(&r->val, 0, sizeof(r->val));
		ir_diag_init(d);
		vo.data_dirs = NULL;
		vo.n_data_dirs = 0;
		if ((rc = report_note(r, d, msg)) < 0)
			return rc;
		rc = val_run(orig, m, &vo, &r->val, bad, sizeof(bad), d);
	}
	if (rc != IR_EINVAL)
		return rc;
	if (!(vo.gen.n_ranges = zero_ranges(orig, zeros, znames)))
		return rc;
	val_report_release(&r->val);
	memset(&r->val, 0, sizeof(r->val));
	ir_diag_init(d);
	vo.gen.ranges = zeros;
	if ((rc = val_run(orig, m, &vo, &r->val, bad, sizeof(bad), d)) == 0)
		rc = report_note(r, d, "validation ran with every integer input 0: the seeded "
				 "values were out of range for the model (give real inputs to "
				 "opmig validate for a stronger check)");
	return rc;
}

/* Does any pass of this kind exist? */
static int have_kind(enum rw_kind kind)
{
	for (size_t i = 0; i < rw_n_passes; i++)
		if (rw_passes[i]->kind == kind)
			return 1;
	return 0;
}

/* An output of the candidate holds NaN or inf where the reference's
 * elements are finite. */
static int overflowed(const struct val_report *v)
{
	for (size_t i = 0; i < v->n_outputs; i++) {
		const struct rt_metrics *m = &v->outputs[i].m;

		if (m->nan_got > m->nan_want || m->inf_got > m->inf_want)
			return 1;
	}
	return 0;
}

/* How many nodes the target runs, or migrate can make it run, in a scan
 * (rewrites to float16 not counted: they are what is being decided). */
static size_t reachable(const struct scan_result *sr)
{
	const struct scan_target_result *t = &sr->targets[0];
	size_t n = 0;

	for (size_t i = 0; i < sr->n_nodes; i++)
		n += t->verdicts[i].status < SCAN_REWRITABLE ||
		     (t->verdicts[i].status == SCAN_REWRITABLE &&
		      strcmp(t->verdicts[i].rewrite, "fp16"));
	return n;
}

/* The precision: --precision's, else float16 when the target prefers it
 * (or states no preference) and more nodes are legal or planned with
 * float32 data taken as float16 than without. */
static int choose_precision(struct rw_ctx *c, const struct mg_opts *o, const char *path,
			    struct ir_diag *d)
{
	const char *pref = o->target->preferred_precision;
	struct scan_result a, b;
	size_t n32, n16, total;
	int rc;

	c->prec16 = o->precision && !strcmp(o->precision, "fp16");
	if (o->precision || (pref && strcmp(pref, "fp16")) || !have_kind(RW_PRECISION))
		return 0;
	if ((rc = scan(c, path, o->target, &a, d)) < 0)
		return rc;
	n32 = reachable(&a);
	scan_result_release(&a);
	c->prec16 = 1;
	if ((rc = scan(c, path, o->target, &b, d)) < 0)
		return rc;
	n16 = reachable(&b);
	total = b.n_nodes;
	scan_result_release(&b);
	c->prec16 = n16 > n32;
	if (!c->prec16)
		return 0;
	return rw_note(c, "precision: float16 chosen (%s): %zu of %zu nodes legal or planned in "
		       "float16, %zu in float32; give --precision fp32 to keep float32",
		       pref ? "the target's preferred precision" :
		       "the target runs them only in float16", n16, total, n32);
}

/* The opset: --opset's, else the best of the target's range. */
static int choose_opset(struct rw_ctx *c, const struct mg_opts *o, const char *path,
			struct ir_diag *d)
{
	struct scan_result sr;
	char how[300];
	int rc;

	if (o->opset > 0) {
		c->want_opset = o->opset;
		return 0;
	}
	if (!allowed(o, rw_pass_find("opset-convert")))
		return 0;
	if ((rc = scan(c, path, o->target, &sr, d)) < 0)
		return rc;
	rc = mg_choose_opset(c, &sr, &c->want_opset, how, sizeof(how));
	scan_result_release(&sr);
	if (rc == 0 && how[0])
		rc = rw_note(c, "%s", how);
	return rc;
}

/* --precision int4 (weight-only int8 alike): the weight-only quantizer, then (keep 0) its
 * MatMulNBits lowered to DequantizeLinear-21 of the codes; a MatMulNBits
 * left, or lowered to float weights, is opmig's failure. */
static int quantize_weights(struct rw_ctx *c, const struct mg_opts *o, struct qz_opts *q4,
			 int keep, const char *path, const char *unchecked, struct ir_diag *d)
{
	const struct ir_graph *g = c->m->graph;
	size_t changed = 0, n_nbits = 0, left = 0, n_dq = 0;
	int rc;

	if ((rc = mg_quantize(c, q4, path, unchecked, d)) < 0 || keep)
		return rc;
	for (size_t i = 0; i < g->n_nodes; i++)
		n_nbits += !strcmp(ir_s(g->nodes[i]->op_type), "MatMulNBits");
	for (int i = 0; i < 4; i++)
		if ((rc = decompose_round(c, o, path, &changed, d)) < 0 || !changed)
			break;
	/* MatMulNBits' codes, scales and zero points are read by nothing
	 * now: written, they would be computed from the weights once more */
	if (rc < 0 || (rc = rw_run(c, rw_pass_find("dce"), &changed)) < 0)
		return rc;
	for (size_t i = 0; i < g->n_nodes; i++) {
		const struct ir_node *n = g->nodes[i];
		const struct ir_value *x = n->n_inputs ? n->inputs[0] : NULL;

		left += !strcmp(ir_s(n->op_type), "MatMulNBits");
		n_dq += !strcmp(ir_s(n->op_type), "DequantizeLinear") && x && x->init &&
			(q4->nbits == 4 ? x->init->dtype == IR_DTYPE_INT4 ||
					  x->init->dtype == IR_DTYPE_UINT4 :
			 x->init->dtype == IR_DTYPE_INT8 || x->init->dtype == IR_DTYPE_UINT8);
		/* below opset 21: Cast of uint8 codes, a Sub's first input */
		n_dq += !strcmp(ir_s(n->op_type), "Cast") && x && x->init &&
			x->init->dtype == IR_DTYPE_UINT8 && n->n_outputs == 1 && n->outputs[0] &&
			n->outputs[0]->n_uses == 1 &&
			!strcmp(ir_s(n->outputs[0]->uses[0]->op_type), "Sub") &&
			n->outputs[0]->uses[0]->inputs[0] == n->outputs[0];
	}
	if (left || n_dq < n_nbits)
		return ir_diag_error(d, IR_EINTERNAL, "--precision int%d: %zu of %zu MatMulNBits "
				     "not lowered to DequantizeLinear or Cast of int%d codes for %s",
				     q4->nbits, left ? left : n_nbits - n_dq, n_nbits, q4->nbits,
				     c->target->id);
	return 0;
}

int mg_run(struct ir_model *m, struct ir_model *orig, const char *path,
	   const struct mg_opts *o, struct mg_report *r, struct ir_diag *d)
{
	struct scan_result sr = { 0 };
	struct mg_iface iface = { 0 };
	struct mg_data md = { 0 };
	struct rw_ctx c;
	int rc, half, rounds = o->max_rounds > 0 ? o->max_rounds : 8;
	int wo8 = o->precision && !strcmp(o->precision, "int8") && o->quant &&
		  o->quant->format == QZ_WEIGHT_ONLY;
	int int8 = o->precision && !strcmp(o->precision, "int8") && !wo8;
	int wo = (o->precision && !strcmp(o->precision, "int4")) || wo8, keep_nb = 0;
	int64_t ir_in = m->ir_version, opset_in = ir_model_opset(m, "");
	struct qz_opts q4 = o->quant ? *o->quant : (struct qz_opts){ 0 };
	const char *unchecked = q4.no_check ? "--no-accuracy-check" : NULL;
	size_t changed;

	memset(r, 0, sizeof(*r));
	if (wo) {
		/* weight-only: --no-validate runs nothing, the accuracy check
		 * (and its fallback) included: the weights are read once, while
		 * the result is written */
		q4.format = QZ_WEIGHT_ONLY;
		q4.nbits = wo8 ? 8 : 4;
		if (!o->validate && !q4.no_check) {
			q4.no_check = 1;
			unchecked = o->dry_run ? "--dry-run" : "--no-validate";
		}
	}
	if (o->layout && !strcmp(o->layout, "nhwc") && !have_kind(RW_LAYOUT))
		return ir_diag_error(d, IR_EUSAGE, "--layout nhwc: no layout pass exists yet");
	if (o->precision && !strcmp(o->precision, "fp16") && !have_kind(RW_PRECISION))
		return ir_diag_error(d, IR_EUSAGE, "--precision fp16: no precision pass exists yet");
	if (!(r->target = strdup(o->target->id)))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	if ((rc = mg_iface_snapshot(m, &iface, d)) < 0)
		return rc;
	/* bound inputs are constants of both models */
	if ((rc = mg_bind_inputs(m, o->bindings, o->n_bindings, d)) < 0 ||
	    (orig && (rc = mg_bind_inputs(orig, o->bindings, o->n_bindings, d)) < 0)) {
		mg_iface_release(&iface);
		return rc;
	}
	/* validation data: --data, or the sets next to the model (not when
	 * inputs were bound: the files number the model's inputs) */
	if ((o->validate || o->data) && (o->data || !o->n_bindings) &&
	    (rc = mg_data_find(m, path, o->data, &md, d)) < 0) {
		mg_iface_release(&iface);
		mg_data_release(&md);
		return rc;
	}
	if ((rc = rw_ctx_init(&c, m, o->target, d)) < 0) {
		mg_iface_release(&iface);
		mg_data_release(&md);
		return rc;
	}
	c.hints = md.hints;
	c.n_hints = md.n_hints;
	if (md.n_dirs && !md.given &&
	    (rc = rw_note(&c, "validation on the %zu input set%s next to the model (%s)",
			  md.n_dirs, md.n_dirs == 1 ? "" : "s", md.dirs[0])) < 0)
		goto cleanup;
	c.batch = o->batch;
	c.dry_run = o->dry_run;
	for (size_t i = 0; i < o->n_bindings && rc == 0; i++)
		rc = rw_note(&c, "input '%s' bound to %s: no longer an input of the model",
			     o->bindings[i].name, o->bindings[i].value);
	if (rc < 0)
		goto cleanup;
	if (o->fit_memory) {
		char how[300];

		if ((rc = mg_fit_batch(m, o->target, o, &c.batch, how, sizeof(how), d)) < 0 ||
		    (rc = rw_note(&c, "%s", how)) < 0)
			goto cleanup;
	}
	c.dims = o->dims;
	c.n_dims = o->n_dims;
	c.fp16_io = o->fp16_io;
	c.passes = o->passes;
	if ((rc = scan(&c, path, o->target, &sr, d)) < 0)
		goto cleanup;
	r->before = sr.targets[0].counts;
	scan_result_release(&sr);
	/* the stages, in order; folding again once shapes are static */
	if ((rc = stage(&c, o, RW_CANON)) < 0 || (rc = choose_opset(&c, o, path, d)) < 0 ||
	    (rc = stage(&c, o, RW_OPSET)) < 0 ||
	    (wo && (rc = keep_nb = mg_nbits_form(&c, &q4, d)) < 0) ||
	    (rc = stage_n(&c, o, RW_BATCH, &changed)) < 0 ||
	    (changed && (rc = stage(&c, o, RW_CANON)) < 0) ||
	    (rc = choose_precision(&c, o, path, d)) < 0)
		goto cleanup;
	for (int i = 0; i < rounds; i++) {
		if ((rc = decompose_round(&c, o, path, &changed, d)) < 0)
			goto cleanup;
		if (!changed)
			break;
	}
	if ((rc = stage(&c, o, RW_DTYPE)) < 0 ||
	    (c.prec16 && (rc = stage(&c, o, RW_PRECISION)) < 0) ||
	    (o->layout && !strcmp(o->layout, "nhwc") && (rc = stage(&c, o, RW_LAYOUT)) < 0) ||
	    (rc = stage(&c, o, RW_FUSE)) < 0 || (rc = stage(&c, o, RW_CANON)) < 0 ||
	    (int8 && (rc = mg_quantize(&c, o->quant, path, NULL, d)) < 0) ||
	    (wo && (rc = quantize_weights(&c, o, &q4, keep_nb, path, unchecked, d)) < 0) ||
	    (rc = rw_opset_settle_ir(&c, ir_in, opset_in)) < 0)
		goto cleanup;
	r->precision = int8 || wo8 ? "int8" : wo ? "int4" : c.prec16 ? "fp16" : "fp32";
	r->weight_only = wo;
	r->opset = ir_model_opset(m, "");
	half = c.prec16;
	c.prec16 = 0;          /* the types are what they are now */
	if ((rc = scan(&c, path, o->target, &sr, d)) < 0 ||
	    (rc = residual(&c, &sr, r, d)) < 0 || (rc = mg_iface_diff(&iface, m, r, d)) < 0)
		goto cleanup;
	if ((rc = rw_strict_final(&c, r->why, sizeof(r->why))) < 0)
		goto cleanup;
	r->invalid = rc == 0 || rw_sln_left(&c, r->why, sizeof(r->why));
	rc = 0;
	take_log(&c, r);
	c.prec16 = half;       /* validation's tolerance */
	if (o->validate && orig && (rc = validate(orig, m, &c, o, &md, r, d)) < 0) {
		if (rc != IR_EINVAL)
			goto cleanup;
		/* the models do not run on the generated inputs (an axis or an
		 * index input out of range, say): not a bad model, but nothing
		 * is proven either */
		snprintf(r->val_error, sizeof(r->val_error), "%.290s", d->msg);
		val_report_release(&r->val);
		memset(&r->val, 0, sizeof(r->val));
		r->validated = 0;
		ir_diag_init(d);
		rc = 0;
	}
	if (int8 && r->validated)
		mg_quantize_judge(&r->val, o->quant);
	if (wo && r->validated)
		mg_quantize_judge(&r->val, &q4);
	if ((wo || int8) && r->validated)
		mg_quantize_label(r, int8 ? o->quant : &q4);
	r->ok = !r->invalid && !r->n_blockers && !r->n_findings && !r->val_error[0] &&
		(!r->validated || r->val.equivalent) && !(o->keep_interface && r->n_iface);
	if (r->invalid)
		;       /* why says it */
	else if (r->n_blockers && r->n_int8_fix && !int8)
		snprintf(r->why, sizeof(r->why), "%zu node%s still blocked on %s (%zu only by "
			 "their float dtype: give --precision int8 to quantize)", r->n_blockers,
			 r->n_blockers == 1 ? "" : "s", o->target->id, r->n_int8_fix);
	else if (r->n_blockers)
		snprintf(r->why, sizeof(r->why), "%zu node%s still blocked on %s",
			 r->n_blockers, r->n_blockers == 1 ? "" : "s", o->target->id);
	else if (r->n_findings)
		snprintf(r->why, sizeof(r->why), "%.200s", r->findings[0]);
	else if (o->keep_interface && r->n_iface)
		snprintf(r->why, sizeof(r->why), "--keep-interface: %s '%.60s' changed (%s %.20s "
			 "-> %.20s)", r->iface[0].input ? "input" : "output", r->iface[0].name,
			 r->iface[0].what, r->iface[0].from, r->iface[0].to);
	else if (r->val_error[0])
		snprintf(r->why, sizeof(r->why), "validation could not run: %.180s", r->val_error);
	else if (r->validated && !r->val.equivalent && half && overflowed(&r->val))
		snprintf(r->why, sizeof(r->why), "the migrated model's outputs differ from the "
			 "original's: float16 overflows (NaN or inf where the original's are "
			 "finite; float16 ends at 65504)");
	else if (r->validated && !r->val.equivalent)
		snprintf(r->why, sizeof(r->why), "the migrated model's outputs differ from the original's");
cleanup:
	if (rc < 0 && c.invalid) {
		/* a pass made the model invalid: a finding of opmig's own
		 * failure, reported, and the model is not written */
		take_log(&c, r);
		r->invalid = 1;
		r->ok = 0;
		snprintf(r->why, sizeof(r->why), "%.250s", d->msg);
		ir_diag_init(d);
		rc = 0;
	}
	scan_result_release(&sr);
	rw_ctx_release(&c);
	mg_iface_release(&iface);
	mg_data_release(&md);
	return rc;
}
