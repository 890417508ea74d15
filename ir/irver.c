/* irver.c: the smallest IR version a model's contents need (ONNX's
 * docs/IR.md history), for passes that write an older opset. */
#include <string.h>

#include "ir/ir.h"

struct need {
	int64_t ir;        /* the largest version a feature asks for */
	int unsure;        /* something opmig does not model: keep the input's */
};

static void at_least(struct need *w, int64_t v)
{
	if (w->ir < v)
		w->ir = v;
}

static void unknown(struct need *w, const struct ir_unknown *u)
{
	/* fields newer than opmig's proto (metadata_props, overload, a
	 * function's value_info: IR 10) */
	if (u && u->n)
		w->unsure = 1;
}

static void dtype(struct need *w, int dt)
{
	switch (dt) {
	case IR_DTYPE_BFLOAT16:
		at_least(w, 4);
		break;
	case IR_DTYPE_FLOAT8E4M3FN: case IR_DTYPE_FLOAT8E4M3FNUZ:
	case IR_DTYPE_FLOAT8E5M2: case IR_DTYPE_FLOAT8E5M2FNUZ:
		at_least(w, 9);
		break;
	case IR_DTYPE_UINT4: case IR_DTYPE_INT4:
		at_least(w, 10);
		break;
	case IR_DTYPE_FLOAT4E2M1:
		at_least(w, 11);
		break;
	default:
		if (dt < 0 || dt >= IR_DTYPE_COUNT)
			w->unsure = 1;
	}
}

static void type(struct need *w, const struct ir_type *t)
{
	for (; t; t = t->inner) {
		if (t->kind == IR_TYPE_SPARSE_TENSOR || t->kind == IR_TYPE_OPTIONAL)
			at_least(w, 8);
		if (IR_HAS(t, IR_TYPE_HAS_ELEM))
			dtype(w, t->elem_type);
		unknown(w, t->unknown);
	}
}

static void tensor(struct need *w, const struct ir_tensor *t)
{
	if (!t)
		return;
	dtype(w, t->dtype);
	unknown(w, &t->unknown);
}

static void sparse(struct need *w, const struct ir_sparse *s)
{
	if (!s)
		return;
	at_least(w, 6);
	tensor(w, s->values);
	tensor(w, s->indices);
	unknown(w, &s->unknown);
}

static void vinfos(struct need *w, const struct ir_vinfo *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		type(w, v[i].type);
		unknown(w, &v[i].unknown);
	}
}

static int default_domain(const char *d)
{
	return !d || !*d || !strcmp(d, "ai.onnx");
}

static void attr(struct need *w, const struct ir_node *n, const struct ir_attr *a)
{
	tensor(w, a->t);
	sparse(w, a->sparse);
	for (size_t k = 0; k < a->n_tensors; k++)
		tensor(w, a->tensors[k]);
	for (size_t k = 0; k < a->n_sparses; k++)
		sparse(w, a->sparses[k]);
	if (a->tp || a->n_tps)
		at_least(w, 8);
	type(w, a->tp);
	for (size_t k = 0; k < a->n_tps; k++)
		type(w, a->tps[k]);
	/* Cast's to, EyeLike's dtype, QuantizeLinear's output_dtype ... */
	if (a->type == IR_ATTR_INT && default_domain(n->domain) && a->name &&
	    (!strcmp(a->name, "to") || !strcmp(a->name, "dtype") ||
	     !strcmp(a->name, "output_dtype")))
		dtype(w, (int)a->i);
	unknown(w, &a->unknown);
}

static int visit(struct ir_graph *g, int depth, void *ctx)
{
	struct need *w = ctx;

	(void)depth;
	vinfos(w, g->inputs, g->n_inputs);
	vinfos(w, g->outputs, g->n_outputs);
	vinfos(w, g->value_info, g->n_value_info);
	for (size_t i = 0; i < g->n_inits; i++) {
		struct ir_value *v = g->inits[i]->name ?
			ir_graph_find(g, g->inits[i]->name) : NULL;

		tensor(w, g->inits[i]);
		/* IR 4 let initializers be other than graph inputs */
		if (v && !v->is_input)
			at_least(w, 4);
	}
	for (size_t i = 0; i < g->n_sparse_inits; i++)
		sparse(w, g->sparse_inits[i]);
	if (g->quant.n)
		at_least(w, 5);
	unknown(w, &g->unknown);
	for (size_t i = 0; i < g->n_nodes; i++) {
		const struct ir_node *n = g->nodes[i];

		for (size_t j = 0; j < n->n_attrs; j++)
			attr(w, n, n->attrs[j]);
		unknown(w, &n->unknown);
	}
	return 0;
}

int64_t ir_model_ir_needed(struct ir_model *m)
{
	struct need w = { .ir = 3 };

	if (m->n_functions)
		at_least(&w, 8);
	for (size_t i = 0; i < m->n_functions; i++)
		unknown(&w, &m->functions[i]->unknown);
	if (m->training.n)
		at_least(&w, 7);
	unknown(&w, &m->unknown);
	ir_model_walk(m, visit, &w);
	if (w.unsure && w.ir < m->ir_version)
		w.ir = m->ir_version;
	return w.ir;
}
