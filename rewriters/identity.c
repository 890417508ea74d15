/* identity.c: pass "eliminate-identity": Identity nodes, Dropout nodes
 * that are identities at inference (no training_mode, or a constant false
 * one, and no mask read), and Cast or CastLike to the dtype their input
 * already has (inferred; saturate means nothing then) are removed; their
 * readers read the input instead.  When the output is a graph output, the input's producer writes
 * it directly (the output keeps its name); an Identity between a graph
 * input or initializer and a graph output stays. */
#include <string.h>

#include "rewriters/rw_int.h"

static int removable(struct rw_ctx *c, const struct ir_node *n)
{
	const char *op = ir_s(n->op_type);

	if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx"))
		return 0;
	if (!n->n_inputs || !n->inputs[0] || !n->n_outputs || !n->outputs[0])
		return 0;
	if (!strcmp(op, "Identity"))
		return 1;
	if (!strcmp(op, "Cast") || !strcmp(op, "CastLike")) {
		const struct ir_vtype *x = rw_type(c, n->inputs[0]), *like;
		int64_t to;

		if (!x || !x->dtype)
			return 0;
		if (!strcmp(op, "Cast")) {
			to = rw_attr_int(n, "to", 0);
		} else {
			like = n->n_inputs > 1 && n->inputs[1] ? rw_type(c, n->inputs[1]) : NULL;
			to = like ? like->dtype : 0;
		}
		return to == x->dtype;
	}
	if (strcmp(op, "Dropout"))
		return 0;
	if (n->n_outputs > 1 && n->outputs[1] &&
	    (n->outputs[1]->n_uses || ir_graph_is_output(n->graph, n->outputs[1])))
		return 0;            /* the mask is read */
	if (n->n_inputs > 2 && n->inputs[2]) {
		int64_t v[1];
		size_t k;

		if (!rw_const_ints(c, n->inputs[2], v, 1, &k) || k != 1 || v[0])
			return 0;    /* training mode, or unknown */
	}
	return rw_attr_int(n, "is_test", 0) != 0 || c->opset >= 7;
}

static int remove_one(struct ir_graph *g, struct ir_node *n)
{
	struct ir_value *x = n->inputs[0], *y = n->outputs[0];
	struct ir_node *p = x->producer;
	int rc;

	if (!ir_graph_is_output(g, y)) {
		ir_graph_detach_node(g, n);
		rc = ir_value_replace_uses(y, x);
		ir_node_free(n);
		return rc;
	}
	/* y must keep its name: let x's producer write y */
	if (!p || p->graph != g || ir_graph_is_output(g, x) || x->graph != g)
		return 1;
	ir_graph_detach_node(g, n);
	ir_node_free(n);
	if ((rc = ir_value_replace_uses(x, y)) < 0)
		return rc;
	for (size_t i = 0; i < p->n_outputs; i++)
		if (p->outputs[i] == x) {
			p->outputs[i] = y;
			y->producer = p;
			x->producer = NULL;
		}
	ir_graph_drop_value_info(g, x);
	return 0;
}

struct walk {
	struct rw_ctx *c;
	size_t changed;
};

static int visit(struct ir_graph *g, int depth, void *arg)
{
	struct walk *w = arg;

	(void)depth;
	for (size_t i = 0; i < g->n_nodes;) {
		struct ir_node *n = g->nodes[i];
		int rc;

		if (!removable(w->c, n)) {
			i++;
			continue;
		}
		if ((rc = remove_one(g, n)) < 0)
			return ir_diag_error(w->c->d, rc, "out of memory");
		if (rc == 1) {
			i++;
			continue;
		}
		w->changed++;
	}
	return 0;
}

static int run(struct rw_ctx *c, size_t *changed)
{
	struct walk w = { c, 0 };
	int rc = ir_graph_walk(c->m->graph, visit, &w);

	*changed = w.changed;
	return rc;
}

const struct rw_pass rw_pass_eliminate_identity = {
	.name = "eliminate-identity",
	.summary = "remove Identity nodes, inference-time Dropout, and Cast/CastLike to the dtype the input already has",
	.kind = RW_CANON,
	.run = run,
};
