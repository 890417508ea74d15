/* dce.c: pass "dce": dead-code elimination.  Nodes none of whose outputs
 * is read (by any node, in any nested scope) or is a graph output are
 * removed, repeatedly, in every graph; then initializers nothing reads and
 * value_info entries of values that no longer exist. */
#include <string.h>

#include "rewriters/rw_int.h"

static int is_dead(const struct ir_graph *g, const struct ir_node *n)
{
	for (size_t i = 0; i < n->n_outputs; i++) {
		const struct ir_value *v = n->outputs[i];

		if (v && (v->n_uses || ir_graph_is_output(g, v)))
			return 0;
	}
	return 1;
}

static int sweep(struct ir_graph *g, int depth, void *ctx)
{
	size_t *changed = ctx;

	(void)depth;
	for (size_t i = g->n_nodes; i-- > 0;) {
		if (!is_dead(g, g->nodes[i]))
			continue;
		ir_graph_remove_node(g, g->nodes[i]);
		(*changed)++;
	}
	for (size_t i = g->n_value_info; i-- > 0;) {
		const struct ir_value *v = g->value_info[i].value;

		if (v && !v->producer && !v->init && !v->is_input)
			ir_graph_drop_value_info(g, v);
	}
	for (size_t i = g->n_inits; i-- > 0;) {
		struct ir_value *v = ir_graph_find(g, ir_s(g->inits[i]->name));

		if (v && !v->n_uses && !v->is_input && !ir_graph_is_output(g, v)) {
			ir_graph_remove_initializer(g, v);
			(*changed)++;
		}
	}
	return 0;
}

/* A subgraph's sweep can leave an outer node dead: repeat until stable. */
static int run(struct rw_ctx *c, size_t *changed)
{
	size_t before;
	int rc;

	do {
		before = *changed;
		if ((rc = ir_graph_walk(c->m->graph, sweep, changed)) < 0)
			return rc;
	} while (*changed > before);
	return 0;
}

const struct rw_pass rw_pass_dce = {
	.name = "dce",
	.summary = "remove nodes and initializers whose results nothing reads",
	.kind = RW_CANON,
	.run = run,
};
