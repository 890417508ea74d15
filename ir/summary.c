/* summary.c: the facts `opmig inspect` reports about a model: node counts
 * (subgraphs included and marked), the op histogram per domain, parameter
 * totals, external data files and the dynamic dims of the interface. */
#include <stdlib.h>
#include <string.h>

#include "ir/ir_int.h"

static int op_cmp(const void *a, const void *b)
{
	const struct ir_op_count *x = a, *y = b;
	int c = strcmp(x->domain, y->domain);

	return c ? c : strcmp(x->op_type, y->op_type);
}

static int add_op(struct ir_summary *s, const struct ir_node *n, int depth)
{
	const char *dom = *ir_s(n->domain) ? n->domain : "ai.onnx";
	struct ir_op_count *o;

	for (size_t i = 0; i < s->n_ops; i++) {
		o = &s->ops[i];
		if (!strcmp(o->domain, dom) && !strcmp(o->op_type, ir_s(n->op_type)))
			goto found;
	}
	o = realloc(s->ops, (s->n_ops + 1) * sizeof(*o));
	if (!o)
		return IR_ENOMEM;
	s->ops = o;
	o = &s->ops[s->n_ops++];
	memset(o, 0, sizeof(*o));
	o->domain = dom;
	o->op_type = ir_s(n->op_type);
found:
	o->count++;
	if (depth > 0)
		o->in_subgraphs++;
	return 0;
}

static int add_ext(struct ir_summary *s, const struct ir_tensor *t)
{
	struct ir_ext_count *e;

	for (size_t i = 0; i < s->n_ext; i++)
		if (!strcmp(s->ext[i].location, t->ext->location)) {
			e = &s->ext[i];
			goto found;
		}
	e = realloc(s->ext, (s->n_ext + 1) * sizeof(*e));
	if (!e)
		return IR_ENOMEM;
	s->ext = e;
	e = &s->ext[s->n_ext++];
	memset(e, 0, sizeof(*e));
	e->location = t->ext->location;
found:
	e->tensors++;
	e->bytes += t->ext_length;
	return 0;
}

static int visit(struct ir_graph *g, int depth, void *ctx)
{
	struct ir_summary *s = ctx;
	int rc;

	s->n_nodes += g->n_nodes;
	if (depth > 0)
		s->n_sub_nodes += g->n_nodes;
	for (size_t i = 0; i < g->n_nodes; i++)
		if ((rc = add_op(s, g->nodes[i], depth)) < 0)
			return rc;
	for (size_t i = 0; i < g->n_inits; i++) {
		const struct ir_tensor *t = g->inits[i];
		int64_t n = ir_tensor_numel(t), b = ir_tensor_nbytes(t);

		s->n_inits++;
		s->n_params += n > 0 ? n : 0;
		s->param_bytes += b > 0 ? b : 0;
		if (t->ext && (rc = add_ext(s, t)) < 0)
			return rc;
	}
	return 0;
}

static int add_dim(struct ir_summary *s, const char *name)
{
	char **v;

	for (size_t i = 0; i < s->n_dyn; i++)
		if (!strcmp(s->dyn[i], name))
			return 0;
	if (!(v = realloc(s->dyn, (s->n_dyn + 1) * sizeof(*v))))
		return IR_ENOMEM;
	s->dyn = v;
	s->dyn[s->n_dyn++] = (char *)name;
	return 0;
}

static int dims_of(struct ir_summary *s, const struct ir_vinfo *vi, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct ir_type *t = vi[i].type;

		while (t && t->kind != IR_TYPE_TENSOR &&
		       t->kind != IR_TYPE_SPARSE_TENSOR)
			t = t->inner;
		for (size_t k = 0; t && k < t->shape.n_dims; k++) {
			if (t->shape.dims[k].kind == IR_DIM_PARAM &&
			    add_dim(s, t->shape.dims[k].param) < 0)
				return IR_ENOMEM;
			if (t->shape.dims[k].kind == IR_DIM_UNKNOWN)
				s->n_unknown_dims++;
		}
	}
	return 0;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ir_model_summarize(struct ir_model *m, struct ir_summary *s,
		       struct ir_diag *d)
{
	memset(s, 0, sizeof(*s));
	if (ir_graph_walk(m->graph, visit, s) < 0 ||
	    dims_of(s, m->graph->inputs, m->graph->n_inputs) < 0 ||
	    dims_of(s, m->graph->outputs, m->graph->n_outputs) < 0) {
		ir_summary_release(s);
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	if (s->n_ops > 1)
		qsort(s->ops, s->n_ops, sizeof(*s->ops), op_cmp);
	if (s->n_dyn > 1)
		qsort(s->dyn, s->n_dyn, sizeof(*s->dyn), str_cmp);
	return 0;
}

void ir_summary_release(struct ir_summary *s)
{
	free(s->ops);
	free(s->ext);
	free(s->dyn);
	memset(s, 0, sizeof(*s));
}
