/* opset.c: pass "opset-convert": brings the model's default-domain opset
 * into the target's range (up to its lowest accepted version when older,
 * down to its highest when newer).  Every node whose op resolves to a
 * different schema version at the new opset goes through the adapters of
 * the boundaries the conversion crosses (opset_adapt.c); an op with no
 * version at the new opset (Gelu below 20, LayerNormalization below 17)
 * is decomposed, with ops of the new opset, by the first decomposition
 * whose emitted ops the target accepts.  Nothing changes unless every
 * node can be converted: otherwise a note names the node that cannot and
 * why.  Only the main graph and its subgraphs are converted (model-local
 * functions keep their own imports; inline-functions runs first). */
#include <stdio.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/opset_int.h"

struct conv {
	struct rw_ctx *c;
	int from, to, apply;
	char why[300];
	const struct ir_node *bad;
	size_t changed;
	int rc;
};

static int crosses(const struct conv *v, int b)
{
	return v->from < v->to ? v->from < b && b <= v->to : v->to < b && b <= v->from;
}

/* Convert (or check) one node; 1 ok, 0 cannot (v->why), < 0 error. */
static int node(struct conv *v, struct ir_node *n)
{
	const char *op = ir_s(n->op_type);
	const struct ir_op_schema *a = ir_registry_find("", op, v->from);
	const struct ir_op_schema *b = ir_registry_find("", op, v->to);
	int up = v->to > v->from;

	if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx"))
		return 1;
	if (!b || (b->deprecated && strcmp(op, "Upsample"))) {
		const struct rw_pass *p;
		int var;

		if (!(p = rw_choose(v->c, n, RW_DECOMPOSE, &var))) {
			snprintf(v->why, sizeof(v->why), "%s has no version at opset %d and no "
				 "decomposition the target accepts", op, v->to);
			return 0;
		}
		if (!v->apply)
			return 1;
		v->changed++;
		return rw_apply(v->c, p, n, var) < 0 ? -1 : 1;
	}
	if (a && a->since_version == b->since_version && !b->deprecated)
		return 1;
	for (size_t k = 0; k < rw_n_adapters; k++) {
		size_t i = up ? k : rw_n_adapters - 1 - k;
		const struct rw_adapter *ad = &rw_adapters[i];
		int rc;

		if (strcmp(ad->op, op) || !crosses(v, ad->boundary))
			continue;
		rc = ad->fn(v->c, n, up, v->apply, v->why, sizeof(v->why));
		if (rc <= 0)
			return rc;
		v->changed += v->apply;
		if (rc == RW_ADAPT_REPLACED)  /* n is gone: its adapters are done */
			return 1;
	}
	return 1;
}

static int visit(struct ir_graph *g, int depth, void *ctx)
{
	struct conv *v = ctx;

	(void)depth;
	for (size_t i = 0; i < g->n_nodes; i++) {
		struct ir_node *n = g->nodes[i];
		size_t before = g->n_nodes;
		int rc = node(v, n);

		if (rc < 0)
			return v->rc = -1;
		if (rc == 0) {
			v->bad = n;
			return 1;       /* stop the walk */
		}
		/* a replacement may have put several nodes where n was */
		if (v->apply && g->n_nodes != before)
			i += g->n_nodes - before;
	}
	return 0;
}

static int target_opset(const struct rw_ctx *c, int from)
{
	const struct rules_target *t = c->target;

	if (c->want_opset > 0)
		return (int)c->want_opset;    /* chosen by migrate (opset_choice.c) */
	if (!t)
		return from;
	if (t->opset_min > 0 && from < t->opset_min)
		return t->opset_min;
	if (t->opset_max > 0 && from > t->opset_max)
		return t->opset_max;
	return from;
}

/* The IR version ONNX released with each opset (1.12 knows IR 8). */
static int64_t ir_for_opset(int opset)
{
	static const int64_t ir[] = { 3, 3, 3, 3, 3, 3, 3, 3, 3, 4, 5, 6, 7, 7, 7, 8, 8, 8, 8,
				      9, 9, 10, 10, 11 };

	return opset < 0 ? 3 : opset < 24 ? ir[opset] : 11;
}

static void set_import(struct ir_model *m, int64_t to)
{
	for (size_t i = 0; i < m->n_opsets; i++)
		if (!m->opsets[i].domain || !*m->opsets[i].domain ||
		    !strcmp(m->opsets[i].domain, "ai.onnx"))
			m->opsets[i].version = to;
}

int rw_opset_convertible(struct rw_ctx *c, int64_t to, char *why, size_t size)
{
	struct conv v = { .c = c, .from = (int)c->opset, .to = (int)to };
	int64_t keep = c->opset;
	int rc;

	why[0] = 0;
	if (v.to == v.from)
		return 1;
	c->opset = to;
	rc = ir_graph_walk(c->m->graph, visit, &v);
	c->opset = keep;
	if (rc < 0 || v.rc < 0)
		return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	if (v.bad)
		snprintf(why, size, "node '%s' (%s): %s", ir_s(v.bad->name),
			 ir_s(v.bad->op_type), v.why);
	return !v.bad;
}

static int run(struct rw_ctx *c, size_t *changed)
{
	struct conv v = { .c = c, .from = (int)c->opset };
	int64_t keep = c->opset;
	int rc;

	*changed = 0;
	v.to = target_opset(c, v.from);
	if (v.to == v.from || v.from <= 0)
		return 0;
	c->opset = v.to;       /* adapters and decompositions emit new forms */
	rc = ir_graph_walk(c->m->graph, visit, &v);
	if (rc < 0 || v.rc < 0) {
		c->opset = keep;
		return v.rc < 0 ? v.rc : rc;
	}
	if (v.bad) {
		c->opset = keep;
		return rw_note(c, "opset %d -> %d not done: node '%s' (%s): %s", v.from, v.to,
			       ir_s(v.bad->name), ir_s(v.bad->op_type), v.why);
	}
	v.apply = 1;
	rc = ir_graph_walk(c->m->graph, visit, &v);
	if (rc < 0 || v.rc < 0 || v.bad) {
		c->opset = keep;
		return ir_diag_error(c->d, IR_EINVAL, "opset conversion failed at node '%s': %s",
				     v.bad ? ir_s(v.bad->name) : "?", v.why);
	}
	set_import(c->m, v.to);
	if (c->m->ir_version < ir_for_opset(v.to))
		c->m->ir_version = ir_for_opset(v.to);
	*changed = v.changed + 1;
	return 0;
}

const struct rw_pass rw_pass_opset_convert = {
	.name = "opset-convert",
	.summary = "convert the default-domain opset into the target's range, adapting every op whose form changed",
	.kind = RW_OPSET,
	.run = run,
};
