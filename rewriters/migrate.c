/* migrate.c: the migrate pipeline (see migrate.h): scan, the pass stages in
 * order, decomposition rounds driven by the scanner's verdicts, the residual
 * blockers, and validation against the original. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/migrate.h"
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
	val_report_release(&r->val);
	val_map_release(&r->map);
	memset(r, 0, sizeof(*r));
}

/* Is pass `name` allowed by --passes? Canonicalization always is. */
static int allowed(const struct mg_opts *o, const struct rw_pass *p)
{
	const char *s = o->passes;
	size_t n = strlen(p->name);

	if (!s || p->kind == RW_CANON)
		return 1;
	while (*s) {
		size_t k = strcspn(s, ",");

		if (k == n && !strncmp(s, p->name, n))
			return 1;
		s += k;
		if (*s == ',')
			s++;
	}
	return 0;
}

/* Run every allowed graph pass of one kind. */
static int stage(struct rw_ctx *c, const struct mg_opts *o, enum rw_kind kind)
{
	for (size_t i = 0; i < rw_n_passes; i++) {
		const struct rw_pass *p = rw_passes[i];
		size_t changed;
		int rc;

		if (p->kind != kind || !p->run || !allowed(o, p))
			continue;
		if ((rc = rw_run(c, p, &changed)) < 0)
			return rc;
	}
	return 0;
}

/* The scanner's hook: is a blocked node fixable by a decomposition? */
static int can_rewrite(void *ctx, const struct rules_target *t,
		       const struct scan_node *sn, const struct scan_verdict *v,
		       const char **pass)
{
	struct rw_ctx *c = ctx;
	const struct rules_target *keep = c->target;
	int ok;

	(void)v;
	c->target = t;
	ok = rw_can_rewrite(c, sn->node, pass);
	c->target = keep;
	return ok;
}

static int scan(struct rw_ctx *c, const char *path, const struct rules_target *t,
		struct scan_result *out, struct ir_diag *d)
{
	struct scan_options so = { can_rewrite, c };

	return scan_model(c->m, path, &t, 1, &so, out, d);
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

		if (!(p = rw_choose(c, todo[i], RW_DECOMPOSE, &v)) &&
		    !(p = rw_choose(c, todo[i], RW_OPSET, &v)))
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
static int residual(const struct scan_result *sr, struct mg_report *r,
		    struct ir_diag *d)
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
		if (!(b->node = strdup(sr->nodes[i].label)) ||
		    !(b->op = strdup(ir_s(sr->nodes[i].node->op_type))) ||
		    !(b->domain = strdup(sr->nodes[i].domain)) ||
		    !(b->why = join_reasons(v)))
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

/* The --dim settings, plus NAME=batch for the symbolic dim 0 of the
 * original's inputs when the batch was made static (so the original runs
 * at the batch the migrated model has). */
static size_t validation_dims(const struct ir_model *orig, const struct mg_opts *o,
			      int64_t batch, struct rt_dim_set *out, char (*buf)[80])
{
	size_t n = 0;

	for (size_t i = 0; i < o->n_dims && n < MAX_DIMS; i++)
		out[n++] = o->dims[i];
	for (size_t i = 0; batch > 0 && i < orig->graph->n_inputs && n < MAX_DIMS; i++) {
		const struct ir_type *t = orig->graph->inputs[i].type;

		if (!t || t->kind != IR_TYPE_TENSOR || !t->shape.n_dims ||
		    t->shape.dims[0].kind != IR_DIM_PARAM)
			continue;
		snprintf(buf[n], sizeof(buf[n]), "%.60s=%lld", ir_s(t->shape.dims[0].param),
			 (long long)batch);
		out[n].name = buf[n];
		out[n++].value = batch;
	}
	return n;
}

static int validate(struct ir_model *orig, struct ir_model *m, int64_t batch,
		    const struct mg_opts *o, struct mg_report *r, struct ir_diag *d)
{
	struct val_opts vo = { 0 };
	struct rt_dim_set dims[MAX_DIMS];
	char names[MAX_DIMS][80], bad[512];

	vo.precision = o->precision && !strcmp(o->precision, "fp16") ? VAL_FP16 : -1;
	vo.samples = o->samples > 0 ? o->samples : 1;
	vo.gen.seed = o->seed;
	vo.gen.n_dims = validation_dims(orig, o, batch, dims, names);
	vo.gen.dims = dims;
	vo.map = &r->map;
	vo.threads = o->threads;
	r->validated = 1;
	return val_run(orig, m, &vo, &r->val, bad, sizeof(bad), d);
}

/* Does any pass of this kind exist? */
static int have_kind(enum rw_kind kind)
{
	for (size_t i = 0; i < rw_n_passes; i++)
		if (rw_passes[i]->kind == kind)
			return 1;
	return 0;
}

int mg_run(struct ir_model *m, struct ir_model *orig, const char *path,
	   const struct mg_opts *o, struct mg_report *r, struct ir_diag *d)
{
	struct scan_result sr = { 0 };
	struct rw_ctx c;
	int rc, rounds = o->max_rounds > 0 ? o->max_rounds : 8;

	memset(r, 0, sizeof(*r));
	if (o->layout && !strcmp(o->layout, "nhwc") && !have_kind(RW_LAYOUT))
		return ir_diag_error(d, IR_EUSAGE, "--layout nhwc: no layout pass exists yet");
	if (o->precision && !strcmp(o->precision, "fp16") && !have_kind(RW_PRECISION))
		return ir_diag_error(d, IR_EUSAGE, "--precision fp16: no precision pass exists yet");
	if (!(r->target = strdup(o->target->id)))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	if ((rc = rw_ctx_init(&c, m, o->target, d)) < 0)
		return rc;
	c.batch = o->batch;
	if (o->fit_memory) {
		char how[300];

		if ((rc = mg_fit_batch(m, o->target, o, &c.batch, how, sizeof(how), d)) < 0 ||
		    (rc = rw_note(&c, "%s", how)) < 0)
			goto cleanup;
	}
	c.dims = o->dims;
	c.n_dims = o->n_dims;
	c.fp16_io = o->fp16_io;
	if ((rc = scan(&c, path, o->target, &sr, d)) < 0)
		goto cleanup;
	r->before = sr.targets[0].counts;
	scan_result_release(&sr);
	/* the stages, in order */
	if ((rc = stage(&c, o, RW_CANON)) < 0 || (rc = stage(&c, o, RW_OPSET)) < 0 ||
	    (rc = stage(&c, o, RW_BATCH)) < 0)
		goto cleanup;
	for (int i = 0; i < rounds; i++) {
		size_t changed;

		if ((rc = decompose_round(&c, o, path, &changed, d)) < 0)
			goto cleanup;
		if (!changed)
			break;
	}
	if ((rc = stage(&c, o, RW_DTYPE)) < 0 ||
	    (o->precision && !strcmp(o->precision, "fp16") &&
	     (rc = stage(&c, o, RW_PRECISION)) < 0) ||
	    (o->layout && !strcmp(o->layout, "nhwc") && (rc = stage(&c, o, RW_LAYOUT)) < 0) ||
	    (rc = stage(&c, o, RW_FUSE)) < 0 || (rc = stage(&c, o, RW_CANON)) < 0)
		goto cleanup;
	if ((rc = scan(&c, path, o->target, &sr, d)) < 0 ||
	    (rc = residual(&sr, r, d)) < 0)
		goto cleanup;
	if ((rc = rw_strict_final(&c, r->why, sizeof(r->why))) < 0)
		goto cleanup;
	r->invalid = rc == 0;
	rc = 0;
	take_log(&c, r);
	if (o->validate && orig && (rc = validate(orig, m, c.batch, o, r, d)) < 0) {
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
	r->ok = !r->invalid && !r->n_blockers && !r->n_findings && !r->val_error[0] &&
		(!r->validated || r->val.equivalent);
	if (r->invalid)
		;       /* why says it */
	else if (r->n_blockers)
		snprintf(r->why, sizeof(r->why), "%zu node%s still blocked on %s",
			 r->n_blockers, r->n_blockers == 1 ? "" : "s", o->target->id);
	else if (r->n_findings)
		snprintf(r->why, sizeof(r->why), "%.200s", r->findings[0]);
	else if (r->val_error[0])
		snprintf(r->why, sizeof(r->why), "validation could not run on generated inputs "
			 "(give real ones to opmig validate, or --no-validate)");
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
	return rc;
}
