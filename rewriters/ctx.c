/* ctx.c: the rewrite context (model, target, inference kept current), the
 * target-acceptance question passes ask, choosing a node pass and variant,
 * applying passes with refresh and logging, and the scanner's hook. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/registry.h"
#include "oprules/rules.h"
#include "rewriters/rw_int.h"

int rw_ctx_init(struct rw_ctx *c, struct ir_model *m,
		const struct rules_target *target, struct ir_diag *d)
{
	int rc;

	memset(c, 0, sizeof(*c));
	c->m = m;
	c->target = target;
	c->d = d;
	c->opset = ir_model_opset(m, "");
	c->parent = -1;
	ir_infer_init(&c->inf);
	val_map_init(&c->map);
	if ((rc = rw_refresh(c)) < 0)
		rw_ctx_release(c);    /* callers release only what succeeded */
	return rc;
}

void rw_ctx_release(struct rw_ctx *c)
{
	for (size_t i = 0; i < c->n_log; i++) {
		free(c->log[i].node);
		free(c->log[i].op);
	}
	free(c->log);
	for (size_t i = 0; i < c->n_notes; i++)
		free(c->notes[i]);
	free(c->notes);
	c->notes = NULL;
	c->n_notes = 0;
	val_map_release(&c->map);
	ir_infer_release(&c->inf);
	rw_planner_free(c->planner);
	c->planner = NULL;
	rw_prov_free(c->prov);
	c->prov = NULL;
	for (size_t i = 0; i < c->n_auto_dims; i++)
		free(c->auto_dims[i]);
	free(c->auto_dims);
	c->auto_dims = NULL;
	c->n_auto_dims = 0;
	free(c->faulty);
	c->faulty = NULL;
	c->n_faulty = 0;
	for (size_t i = 0; i < c->n_refusals; i++) {
		free(c->refusals[i].name);
		free(c->refusals[i].op);
		free(c->refusals[i].text);
	}
	free(c->refusals);
	c->refusals = NULL;
	c->n_refusals = c->cap_refusals = 0;
	c->log = NULL;
	c->n_log = c->cap_log = 0;
}

int rw_refresh(struct rw_ctx *c)
{
	struct ir_diag vd;
	int rc;

	ir_diag_init(&vd);
	if ((rc = ir_model_verify(c->m, &vd)) < 0) {
		c->invalid = rc == IR_EINVAL;
		return ir_diag_error(c->d, rc, "the rewritten model is invalid%s%s: %s",
				     c->pass ? " after pass " : "", c->pass ? c->pass : "",
				     vd.msg);
	}
	ir_infer_release(&c->inf);
	ir_infer_init(&c->inf);
	c->inf.flags = IR_INFER_NO_MERGE;
	ir_diag_init(&vd);
	rc = ir_infer_model(c->m, &c->inf, &vd);
	if (rc == IR_ENOMEM)   /* not a model passes may work on untyped */
		return ir_diag_error(c->d, rc, "%s", vd.msg);
	c->have_inf = rc == 0;
	return rw_strict_check(c);
}

int64_t rw_node_opset(const struct rw_ctx *c)
{
	return c->node_opset > 0 ? c->node_opset : c->opset;
}

int rw_auto_dim(struct rw_ctx *c, const char *name, int64_t value)
{
	char buf[300], **q;

	snprintf(buf, sizeof(buf), "%.200s=%lld", name, (long long)value);
	if (!(q = realloc(c->auto_dims, (c->n_auto_dims + 1) * sizeof(*q))))
		return IR_ENOMEM;
	c->auto_dims = q;
	if (!(q[c->n_auto_dims] = strdup(buf)))
		return IR_ENOMEM;
	c->n_auto_dims++;
	return 0;
}

int rw_note(struct rw_ctx *c, const char *fmt, ...)
{
	char buf[512], **q;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (!(q = realloc(c->notes, (c->n_notes + 1) * sizeof(*q))))
		return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	c->notes = q;
	if (!(q[c->n_notes] = strdup(buf)))
		return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	c->n_notes++;
	return 0;
}

const struct ir_vtype *rw_type(const struct rw_ctx *c, const struct ir_value *v)
{
	return ir_infer_get(&c->inf, v);
}

int rw_node_dtype(const struct rw_ctx *c, const struct ir_node *n)
{
	if (rw_is_probe(n))
		return c->probe_dtype;     /* the planner's probe (plan.c) */
	for (size_t i = 0; i < n->n_inputs; i++) {
		const struct ir_vtype *t = n->inputs[i] ? rw_type(c, n->inputs[i]) : NULL;

		if (t && t->dtype)
			return t->dtype;
	}
	for (size_t i = 0; i < n->n_outputs; i++) {
		const struct ir_vtype *t = n->outputs[i] ? rw_type(c, n->outputs[i]) : NULL;

		if (t && t->dtype)
			return t->dtype;
	}
	return 0;
}

int rw_target_accepts(const struct rw_ctx *c, const char *domain,
		      const char *op, int dtype)
{
	const struct rules_target *t = c->target;
	const struct ir_op_schema *s;
	const struct rules_op *o;
	const char *dom = domain && *domain ? domain : "ai.onnx";

	if (!t)
		return 1;
	if (!(o = rules_target_find_op(t, dom, op)) || !o->supported)
		return 0;
	s = ir_registry_find(dom, op, !strcmp(dom, "ai.onnx") ? c->opset :
			     ir_model_opset(c->m, dom));
	if (s && (s->since_version < o->version_min || s->since_version > o->version_max))
		return 0;
	if (dtype > 0 && dtype < 32) {
		if (o->dtypes && !(o->dtypes & RULES_DTYPE_BIT(dtype)))
			return 0;
		if (t->has_missing_dtypes && (t->missing_dtypes & RULES_DTYPE_BIT(dtype)))
			return 0;
	}
	return 1;
}

int64_t rw_target_kernel_max(const struct rw_ctx *c, const char *op)
{
	const struct rules_op *o = c->target ? rules_target_find_op(c->target, "ai.onnx", op) : NULL;

	for (size_t i = 0; o && i < o->n_attrs; i++)
		if (!strcmp(o->attrs[i].name, "kernel_shape") && o->attrs[i].has_max)
			return (int64_t)o->attrs[i].max;
	return 0;
}

const struct rw_pass *rw_choose(struct rw_ctx *c, const struct ir_node *n,
				enum rw_kind kind, int *variant)
{
	struct rw_plan p;

	if (kind != RW_DECOMPOSE || rw_plan_node(c, n, &p) < 0 || !p.pass)
		return NULL;
	*variant = p.variant;
	return p.pass;
}

int rw_apply(struct rw_ctx *c, const struct rw_pass *p, struct ir_node *n, int v)
{
	int rc;

	c->pass = p->name;
	c->variant = v >= 0 && (size_t)v < p->n_variants ? p->variants[v].name : NULL;
	c->parent = rw_prov_find(c, n->name);
	rc = p->apply(c, n, v);
	c->pass = NULL;
	c->variant = NULL;
	c->parent = -1;
	return rc;
}

int rw_run(struct rw_ctx *c, const struct rw_pass *p, size_t *changed)
{
	size_t logged = c->n_log;
	int rc;

	*changed = 0;
	c->pass = p->name;
	c->variant = NULL;

	rc = p->run(c, changed);
	/* passes that rewrite node by node have logged each node */
	if (rc == 0 && *changed && c->n_log == logged && (rc = rw_log_graph(c, *changed)) < 0)
		rc = ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	if (rc == 0 && *changed)
		rc = rw_refresh(c);
	c->pass = NULL;
	return rc;
}

int rw_can_rewrite(struct rw_ctx *c, const struct ir_node *n, const char **pass)
{
	int v;
	const struct rw_pass *p = rw_choose(c, n, RW_DECOMPOSE, &v);

	*pass = p ? p->name : NULL;
	return p != NULL;
}

int rw_pass_allowed(const char *passes, const struct rw_pass *p)
{
	size_t n;

	if (!p)
		return 0;
	if (!passes || p->kind == RW_CANON)
		return 1;
	n = strlen(p->name);
	while (*passes) {
		size_t k = strcspn(passes, ",");

		if (k == n && !strncmp(passes, p->name, n))
			return 1;
		passes += k;
		if (*passes == ',')
			passes++;
	}
	return 0;
}

static const char *const kind_names[] = {
	"canonicalize", "opset", "decompose", "layout", "batch", "dtype",
	"precision", "fuse"
};

const char *rw_kind_name(enum rw_kind k)
{
	return kind_names[k];
}

static int cmp_pass(const void *key, const void *elem)
{
	return strcmp(key, (*(const struct rw_pass *const *)elem)->name);
}

const struct rw_pass *rw_pass_find(const char *name)
{
	const struct rw_pass *const *p = bsearch(name, rw_passes, rw_n_passes,
						 sizeof(*rw_passes), cmp_pass);

	return p ? *p : NULL;
}

static int refusal_is(const struct rw_refusal *f, const struct ir_node *n)
{
	return f->node == n && !strcmp(f->name, ir_s(n->name)) && !strcmp(f->op, ir_s(n->op_type));
}

int rw_refusal_add(struct rw_ctx *c, const struct ir_node *n, const char *pass,
		   const char *why)
{
	struct rw_refusal *f;
	size_t len = strlen(pass) + strlen(why) + 3;
	char *text;

	if (!why[0] || !c->m || n->graph != c->m->graph)
		return 0;
	if (!(text = malloc(len)))
		return IR_ENOMEM;
	snprintf(text, len, "%s: %s", pass, why);
	for (size_t i = 0; i < c->n_refusals; i++)
		if (refusal_is(&c->refusals[i], n) && !strcmp(c->refusals[i].text, text)) {
			free(text);
			return 0;
		}
	if (c->n_refusals == c->cap_refusals) {
		size_t cap = c->cap_refusals ? 2 * c->cap_refusals : 16;

		if (!(f = realloc(c->refusals, cap * sizeof(*f)))) {
			free(text);
			return IR_ENOMEM;
		}
		c->refusals = f;
		c->cap_refusals = cap;
	}
	f = &c->refusals[c->n_refusals];
	f->node = n;
	f->text = text;
	f->name = strdup(ir_s(n->name));
	f->op = strdup(ir_s(n->op_type));
	if (!f->name || !f->op) {
		free(f->name);
		free(f->op);
		free(text);
		return IR_ENOMEM;
	}
	c->n_refusals++;
	return 0;
}

int rw_refusals_append(const struct rw_ctx *c, const struct ir_node *n, char **s)
{
	for (size_t i = 0; i < c->n_refusals; i++) {
		const struct rw_refusal *f = &c->refusals[i];
		size_t len = (*s ? strlen(*s) : 0) + strlen(f->text) + 32;
		char *t;

		if (!refusal_is(f, n))
			continue;
		if (!(t = malloc(len)))
			return IR_ENOMEM;
		snprintf(t, len, "%s%snot lowered by %s", *s ? *s : "", *s && **s ? "; " : "",
			 f->text);
		free(*s);
		*s = t;
	}
	return 0;
}
