/* opset.c: pass "opset-convert": brings the model's default-domain opset
 * into the target's range (up to its lowest accepted version when older,
 * down to its highest when newer).  Every node whose op resolves to a
 * different schema version at the new opset goes through the adapters of
 * the boundaries the conversion crosses (opset_adapt.c) and the generic
 * rules (dtypes, attributes, inputs and outputs of the new version); when
 * they refuse, or the op has no version at the new opset (Gelu below 20,
 * LayerNormalization below 17), the first decomposition into ops of the
 * new opset whose emitted ops the target accepts does it.  Nothing
 * changes unless every node can be converted: otherwise a note names the
 * node that cannot and why, and the model keeps its opset.  Only the main
 * graph and its subgraphs are converted (model-local functions keep their
 * own imports; inline-functions runs first). */
#include <stdio.h>
#include <stdlib.h>
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

/* Is name one of the ','-separated entries of list (NULL: none)? */
static int listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p;) {
		size_t k = strcspn(p, ",");

		if (k == n && !strncmp(p, name, n))
			return 1;
		p += k + (p[k] == ',');
	}
	return 0;
}

/* Does attribute at hold the default sa documents?  Not when sa documents
 * none. */
static int holds_default(const struct ir_attr *at, const struct ir_op_attr *sa)
{
	const char *d = sa ? sa->default_value : NULL, *p;
	char *end;
	size_t k;

	if (!d || at->ref_attr_name || at->type != (int)sa->type)
		return 0;
	switch (at->type) {
	case IR_ATTR_INT:
		return strtoll(d, &end, 10) == at->i && !*end;
	case IR_ATTR_FLOAT:
		return (float)strtod(d, &end) == at->f && !*end;
	case IR_ATTR_STRING:
		return !strcmp(d, at->s ? (const char *)at->s : "");
	case IR_ATTR_INTS:
	case IR_ATTR_FLOATS:
		for (p = d, k = 0; *p; k++) {
			double x = strtod(p, &end);
			size_t n = at->type == IR_ATTR_INTS ? at->n_ints : at->n_floats;

			if (end == p || k >= n ||
			    (at->type == IR_ATTR_INTS ? (double)at->ints[k] : (double)at->floats[k]) != x)
				return 0;
			p = *end == ',' ? end + 1 : end;
			if (*end && *end != ',')
				return 0;
		}
		return k == (at->type == IR_ATTR_INTS ? at->n_ints : at->n_floats);
	default:
		return 0;
	}
}

/* What every conversion of n from version a (NULL: unknown) to b needs
 * besides its adapters: dtypes b allows; attributes b lacks removed when
 * they hold a's default (refused otherwise, unless an adapter converts
 * them: handled); and, for ops without adapters across the conversion,
 * inputs and outputs b has slots for and the attributes it requires.
 * 1 ok (or done), 0 refused (v->why), < 0 error. */
static int generic(struct conv *v, struct ir_node *n, const struct ir_op_schema *a,
		   const struct ir_op_schema *b, const char *handled, int adapted)
{
	char msg[512];

	if (!v->apply && !ir_node_types_fit(v->c->m, n, b, &v->c->inf, msg, sizeof(msg))) {
		snprintf(v->why, sizeof(v->why), "%.290s", msg);
		return 0;
	}
	for (size_t i = 0; i < n->n_attrs; i++) {
		const struct ir_attr *at = n->attrs[i];
		const char *name = ir_s(at->name);
		const struct ir_op_attr *sa = a ? ir_op_schema_attr(a, name) : NULL;

		if (ir_op_schema_attr(b, name) || !strncmp(name, "__", 2))
			continue;
		if (v->apply) {
			if (holds_default(at, sa) && ir_node_remove_attr(n, name) > 0)
				i--;
		} else if (!listed(handled, name) && !holds_default(at, sa)) {
			snprintf(v->why, sizeof(v->why), "attribute %s has no form in %s-%d%s", name,
				 b->name, b->since_version, sa && sa->default_value ?
				 " (only its default could go)" : "");
			return 0;
		}
	}
	/* outputs b lacks must be unused: they go */
	if (v->apply) {
		while (n->n_outputs > (size_t)b->max_outputs) {
			struct ir_value *o = n->outputs[--n->n_outputs];

			if (o)
				o->producer = NULL;
		}
	} else {
		for (size_t i = b->max_outputs; i < n->n_outputs; i++)
			if (n->outputs[i] && rw_value_used(n->outputs[i])) {
				snprintf(v->why, sizeof(v->why), "output %zu is used but %s-%d has "
					 "no such output", i, b->name, b->since_version);
				return 0;
			}
	}
	if (adapted)
		return 1;
	if (v->apply) {
		while (n->n_inputs > (size_t)b->max_inputs && !n->inputs[n->n_inputs - 1])
			n->n_inputs--;
		return 1;
	}
	for (size_t i = 0; i < b->n_attrs; i++)
		if (b->attrs[i].required && !ir_node_attr(n, b->attrs[i].name)) {
			snprintf(v->why, sizeof(v->why), "%s-%d requires attribute %s", b->name,
				 b->since_version, b->attrs[i].name);
			return 0;
		}
	for (size_t i = 0; i < n->n_inputs; i++) {
		const struct ir_op_formal *f = i < b->n_inputs ? &b->inputs[i] :
			b->n_inputs && b->inputs[b->n_inputs - 1].variadic ?
			&b->inputs[b->n_inputs - 1] : NULL;

		if (f ? !n->inputs[i] && !f->optional && !f->variadic : n->inputs[i] != NULL) {
			snprintf(v->why, sizeof(v->why), "input %zu %s in %s-%d", i,
				 f ? "is required" : "has no slot", b->name, b->since_version);
			return 0;
		}
	}
	if (n->n_inputs < (size_t)b->min_inputs || n->n_outputs < (size_t)b->min_outputs) {
		snprintf(v->why, sizeof(v->why), "%s-%d takes at least %d inputs and %d outputs",
			 b->name, b->since_version, b->min_inputs, b->min_outputs);
		return 0;
	}
	return 1;
}

/* Where adapter k comes in a conversion: by boundary in the conversion's
 * direction, and for one boundary in table order going up, the reverse
 * going down (later is larger). */
static long adapter_pos(const struct conv *v, long k)
{
	long p = rw_adapters[k].boundary * (long)(rw_n_adapters + 1) + k;

	return v->to > v->from ? p : -p;
}

/* The next adapter of op across the conversion after adapter *last (-1
 * at the start); NULL when none is left. */
static const struct rw_adapter *next_adapter(const struct conv *v, const char *op, long *last)
{
	long best = -1;

	for (long k = 0; k < (long)rw_n_adapters; k++)
		if (!strcmp(rw_adapters[k].op, op) && crosses(v, rw_adapters[k].boundary) &&
		    (*last < 0 || adapter_pos(v, k) > adapter_pos(v, *last)) &&
		    (best < 0 || adapter_pos(v, k) < adapter_pos(v, best)))
			best = k;
	if (best < 0)
		return NULL;
	*last = best;
	return &rw_adapters[best];
}

/* Run (or check) the adapters of op across the conversion, in its
 * direction: 1 all ran, RW_ADAPT_REPLACED one finished the node (replaced
 * it, or renamed it to its final form), 0 one refused (v->why), < 0 error.
 * handled collects the attributes they convert; *adapted says whether
 * there was any. */
static int run_adapters(struct conv *v, struct ir_node *n, const char *op, char *handled,
			size_t size, int *adapted)
{
	const struct rw_adapter *ad;
	int up = v->to > v->from;
	long last = -1;

	*adapted = 0;
	while ((ad = next_adapter(v, op, &last))) {
		int rc = ad->fn(v->c, n, up, v->apply, v->why, sizeof(v->why));

		if (rc <= 0)
			return rc;
		*adapted = 1;
		if (ad->attrs)
			snprintf(handled + strlen(handled), size - strlen(handled), "%s%s",
				 *handled ? "," : "", ad->attrs);
		v->changed += v->apply;
		if (rc == RW_ADAPT_REPLACED)
			return rc;
	}
	return 1;
}

/* The node by its adapters and the generic rules (in v->apply's phase):
 * 1 ok, 0 cannot (v->why), < 0 error. */
static int adapt(struct conv *v, struct ir_node *n, const char *op,
		 const struct ir_op_schema *a, const struct ir_op_schema *b)
{
	char handled[512] = "";
	int adapted, rc = run_adapters(v, n, op, handled, sizeof(handled), &adapted);

	if (rc <= 0 || rc == RW_ADAPT_REPLACED)
		return rc <= 0 ? rc : 1;
	if (!b || b->deprecated) {
		/* no adapter turned it into an op of the new opset */
		snprintf(v->why, sizeof(v->why), "%s has no %sversion at opset %d and no "
			 "decomposition the target accepts", op, b ? "current " : "", v->to);
		return 0;
	}
	return generic(v, n, a, b, handled, adapted);
}

/* Convert (or check) one node: by its adapters, else (they refuse, or
 * the op has no version at the new opset) by the first decomposition
 * into ops of the new opset the target accepts.  Either is checked first,
 * so that nothing is touched unless it finishes.  1 ok, 0 cannot
 * (v->why), < 0 error. */
static int node(struct conv *v, struct ir_node *n)
{
	char op[128];
	const struct ir_op_schema *a, *b;
	const struct rw_pass *p;
	int apply = v->apply, rc, var;

	if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx"))
		return 1;
	/* adapters may rename the op: keep its name at the start */
	snprintf(op, sizeof(op), "%s", ir_s(n->op_type));
	a = ir_registry_find("", op, v->from);
	b = ir_registry_find("", op, v->to);
	if (a && b && a->since_version == b->since_version && !b->deprecated)
		return 1;
	v->apply = 0;
	rc = adapt(v, n, op, a, b);
	v->apply = apply;
	if (rc < 0)
		return rc;
	if (rc > 0) {
		if (!apply)
			return 1;
		if ((rc = adapt(v, n, op, a, b)) != 0)
			return rc;
		return ir_diag_error(v->c->d, IR_EINVAL, "node '%s' (%s): its adapters refused "
				     "what they had accepted: %s", ir_s(n->name), op, v->why);
	}
	/* the node is still in its old form while it is read: passes that
	 * read attributes or inputs by opset ask rw_node_opset */
	v->c->node_opset = v->from;
	p = rw_choose(v->c, n, RW_DECOMPOSE, &var);
	if (p && apply) {
		v->changed++;
		rc = rw_apply(v->c, p, n, var) < 0 ? -1 : 1;
	} else {
		rc = p != NULL;
	}
	v->c->node_opset = 0;
	return rc;
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

/* Converted down: the IR version the older opset's readers know, or what
 * the model's contents need (int4 initializers: 10), never above cap, the
 * input's (an older reader refuses a newer IR even where nothing in the
 * model needs it). */
static void lower_ir(struct rw_ctx *c, int64_t opset, int64_t cap)
{
	int64_t need = ir_model_ir_needed(c->m);

	if (need < ir_for_opset((int)opset))
		need = ir_for_opset((int)opset);
	c->m->ir_version = need < cap ? need : cap;
}

int rw_opset_settle_ir(struct rw_ctx *c, int64_t ir_in, int64_t opset_in)
{
	int64_t now = ir_model_opset(c->m, "");

	if (now <= 0 || now >= opset_in || ir_in <= 0)
		return 0;
	lower_ir(c, now, ir_in);
	if (c->m->ir_version == ir_in)
		return 0;
	return rw_note(c, "ir_version %lld -> %lld", (long long)ir_in,
		       (long long)c->m->ir_version);
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
	if (v.to < v.from)
		lower_ir(c, v.to, c->m->ir_version);
	else if (c->m->ir_version < ir_for_opset(v.to))
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
