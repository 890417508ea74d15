/* fuse_util.c: what the fusion passes share (see rw_int.h): walking a
 * pattern backwards (the producer of a value, if it is a given op of the
 * default domain in the same graph) and forwards (a value's only reader),
 * binary operands in either order, constants compared with a relative
 * tolerance, one-element constants of any float dtype, dims known to be
 * equal, removing the pattern's nodes once nothing reads them,
 * telling patterns a decomposition made (fusing them would undo it), the
 * opset import a fused op of another domain needs, and the passes' walk
 * over the graph. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/rw_int.h"
#include "runtime/runtime.h"

static int is_op(const struct ir_node *n, const char *op)
{
	return n && !strcmp(ir_s(n->op_type), op) &&
	       (!n->domain || !*n->domain || !strcmp(n->domain, "ai.onnx"));
}

struct ir_node *rw_producer(const struct ir_value *v, const char *op)
{
	struct ir_node *p = v ? v->producer : NULL;

	return p && p->graph == v->graph && is_op(p, op) ? p : NULL;
}

struct ir_node *rw_sole_user(const struct ir_value *v, const char *op)
{
	if (!rw_single_use(v))
		return NULL;
	return is_op(v->uses[0], op) && v->uses[0]->graph == v->graph ? v->uses[0] : NULL;
}

struct ir_value *rw_other_input(const struct ir_node *n, const struct ir_value *v)
{
	if (!n || n->n_inputs != 2)
		return NULL;
	if (n->inputs[0] == v)
		return n->inputs[1];
	return n->inputs[1] == v ? n->inputs[0] : NULL;
}

int rw_is_scalar_near(const struct rw_ctx *c, const struct ir_value *v, double want)
{
	double x;

	return v && rw_const_double(c, v, &x) && fabs(x - want) <= 1e-4 * fabs(want) + 1e-7;
}

int rw_const_scalar(const struct rw_ctx *c, const struct ir_value *v, double *out)
{
	struct rt_value *t;
	int ok;

	if (rw_const_double(c, v, out))
		return 1;
	/* inference keeps float and double values only */
	if (!v || !v->init || v->is_input || (v->init->dtype != IR_DTYPE_FLOAT16 &&
					       v->init->dtype != IR_DTYPE_BFLOAT16) ||
	    !(t = rw_init_value(v)))
		return 0;
	if ((ok = t->numel == 1))
		*out = rt_value_get_f64(t, 0);
	rt_value_unref(t);
	return ok;
}

int rw_dim_same(const struct ir_vdim *a, const struct ir_vdim *b)
{
	if (a->kind != b->kind)
		return 0;
	if (a->kind == IR_VDIM_VALUE)
		return a->value == b->value;
	return a->kind == IR_VDIM_PARAM && a->param && b->param && !strcmp(a->param, b->param);
}

void rw_remove_unread(struct ir_graph *g, struct ir_node *const *nodes, size_t k)
{
	int again = 1;
	char done[32] = { 0 };

	while (again) {
		again = 0;
		for (size_t i = 0; i < k && i < sizeof(done); i++) {
			struct ir_node *n = nodes[i];
			int used = 0;

			if (done[i] || !n)
				continue;
			for (size_t j = 0; j < n->n_outputs; j++)
				used |= rw_value_used(n->outputs[j]);
			if (used)
				continue;
			ir_graph_remove_node(g, n);
			done[i] = 1;
			again = 1;
		}
	}
}

int rw_fuse_each(struct rw_ctx *c, int (*fuse)(struct rw_ctx *c, struct ir_node *n),
		 size_t *changed)
{
	struct ir_graph *g = c->m->graph;
	size_t sweep;
	int rc;

	*changed = 0;
	/* sweeps over the graph, inference refreshed after each one that
	 * fused anything (once per fusion made a 764-node model's fusion
	 * stage quadratic): within a sweep the walk goes on after each fusion
	 * (it removed nodes at or before the one matched), and what a fusion
	 * made has no inferred type yet, which fusions read as "cannot" until
	 * the next sweep */
	do {
		sweep = 0;
		for (size_t i = 0; i < g->n_nodes; i++) {
			size_t before = g->n_nodes;

			if ((rc = fuse(c, g->nodes[i])) < 0)
				return rc;
			if (rc == 0)
				continue;
			sweep++;
			/* back by as many nodes as the fusion removed (they may
			 * have been before this one) */
			if (g->n_nodes < before)
				i = i + 1 >= before - g->n_nodes ? i - (before - g->n_nodes) :
				    (size_t)-1;
		}
		*changed += sweep;
		if (sweep && (rc = rw_refresh(c)) < 0)
			return rc;
	} while (sweep);
	return 0;
}

int rw_fuse_finish(struct rw_ctx *c, struct rw_emit *e, struct ir_node **nodes, size_t k,
		   const struct ir_node *last)
{
	int rc;

	if ((rc = rw_end(e, 0)) < 0)
		return rc;
	for (size_t i = 0; i < k; i++)
		if (nodes[i] == last)
			nodes[i] = NULL;
	rw_remove_unread(c->m->graph, nodes, k);
	return 1;
}

int rw_made_by_pass(struct ir_node *const *nodes, size_t k)
{
	for (size_t i = 0; i < k; i++)
		if (nodes[i] && nodes[i]->doc && !strncmp(nodes[i]->doc, "opmig: ", 7))
			return 1;
	return 0;
}

int rw_domain_ensure(struct ir_model *md, const char *dom)
{
	struct ir_opset *q;

	if (ir_model_opset(md, dom) > 0)
		return 0;
	if (!(q = realloc(md->opsets, (md->n_opsets + 1) * sizeof(*q))))
		return IR_ENOMEM;
	md->opsets = q;
	memset(&q[md->n_opsets], 0, sizeof(*q));
	if (!(q[md->n_opsets].domain = strdup(dom)))
		return IR_ENOMEM;
	q[md->n_opsets].version = 1;
	q[md->n_opsets].present = 1;
	md->n_opsets++;
	return 0;
}
