/* toposort.c: topological order of a graph's nodes.  Dependencies include
 * values captured by nested subgraphs (a node runs after every producer its
 * subgraphs read).  Already-ordered graphs are left untouched; otherwise
 * Kahn's algorithm reorders them, keeping file order among ready nodes. */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

/* The node of graph g that contains use u (u itself, or the node owning the
 * subgraph u lives in); NULL if u is not inside g. */
static struct ir_node *ancestor_in(struct ir_node *u, const struct ir_graph *g)
{
	while (u && u->graph != g)
		u = u->graph->owner;
	return u;
}

int ir_graph_is_sorted(const struct ir_graph *g)
{
	for (size_t i = 0; i < g->n_nodes; i++) {
		struct ir_node *n = g->nodes[i];

		for (size_t j = 0; j < n->n_outputs; j++) {
			struct ir_value *v = n->outputs[j];

			for (size_t k = 0; v && k < v->n_uses; k++) {
				struct ir_node *a = ancestor_in(v->uses[k], g);

				if (a && a->index <= i)
					return 0;
			}
		}
	}
	return 1;
}

int ir_graph_toposort(struct ir_graph *g, struct ir_diag *d)
{
	size_t n = g->n_nodes, head = 0, tail = 0, *indeg = NULL;
	struct ir_node **queue = NULL;
	int rc = 0;

	if (ir_graph_is_sorted(g))
		return 0;
	indeg = calloc(n + 1, sizeof(*indeg));
	queue = calloc(n + 1, sizeof(*queue));
	if (!indeg || !queue) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	/* One edge per (producer, consumer-ancestor) use; a node may count a
	 * producer several times, decremented the same number of times. */
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < g->nodes[i]->n_outputs; j++) {
			struct ir_value *v = g->nodes[i]->outputs[j];

			for (size_t k = 0; v && k < v->n_uses; k++) {
				struct ir_node *a = ancestor_in(v->uses[k], g);

				if (a)
					indeg[a->index]++;
			}
		}
	for (size_t i = 0; i < n; i++)
		if (indeg[i] == 0)
			queue[tail++] = g->nodes[i];
	while (head < tail) {
		struct ir_node *p = queue[head++];

		for (size_t j = 0; j < p->n_outputs; j++) {
			struct ir_value *v = p->outputs[j];

			for (size_t k = 0; v && k < v->n_uses; k++) {
				struct ir_node *a = ancestor_in(v->uses[k], g);

				if (a && --indeg[a->index] == 0)
					queue[tail++] = a;
			}
		}
	}
	if (tail < n) {
		struct ir_node *c = NULL;

		for (size_t i = 0; i < n && !c; i++)
			if (indeg[i])
				c = g->nodes[i];
		rc = diag_error(d, "node '%s' (%s): graph has a cycle through this node",
				ir_s(c->name), ir_s(c->op_type));
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		g->nodes[i] = queue[i];
		g->nodes[i]->index = i;
	}
cleanup:
	free(indeg);
	free(queue);
	return rc;
}
