/* graph.c: IR object lifecycle (new/free for model, graph, node, attribute,
 * tensor, type), the per-scope value table (hash map name -> value) with
 * outer-scope lookup, def-use bookkeeping and the graph walker. */
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>

#include "ir/ir.h"

void ir_unknown_release(struct ir_unknown *u)
{
	for (size_t i = 0; i < u->n; i++)
		free(u->fields[i].data);
	free(u->fields);
	u->fields = NULL;
	u->n = 0;
}

void ir_type_free(struct ir_type *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->shape.n_dims; i++) {
		free(t->shape.dims[i].param);
		free(t->shape.dims[i].denotation);
	}
	free(t->shape.dims);
	ir_type_free(t->inner);
	free(t->denotation);
	if (t->unknown) {
		ir_unknown_release(t->unknown);
		free(t->unknown);
	}
	free(t);
}

static void kv_free(struct ir_kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

void ir_extfile_unref(struct ir_extfile *x); /* extdata.c */

void ir_tensor_free(struct ir_tensor *t)
{
	if (!t)
		return;
	if (t->win)
		munmap((void *)t->win, t->win_len);
	ir_extfile_unref(t->ext);
	free(t->name);
	free(t->doc);
	free(t->dims);
	if (t->raw_owner)
		ir_extfile_unref(t->raw_owner);
	else
		free(t->raw);
	free(t->typed);
	for (size_t i = 0; t->strings && i < t->n_typed; i++)
		free(t->strings[i]);
	free(t->strings);
	free(t->string_lens);
	kv_free(t->external, t->n_external);
	free(t->cache);
	ir_tensor_free(t->src);
	if (t->ops && t->ops->drop)
		t->ops->drop(t->arg);
	ir_unknown_release(&t->unknown);
	free(t);
}

void ir_sparse_free(struct ir_sparse *s)
{
	if (!s)
		return;
	ir_tensor_free(s->values);
	ir_tensor_free(s->indices);
	free(s->dims);
	ir_unknown_release(&s->unknown);
	free(s);
}

void ir_attr_free(struct ir_attr *a)
{
	if (!a)
		return;
	free(a->name);
	free(a->ref_attr_name);
	free(a->doc);
	free(a->s);
	ir_tensor_free(a->t);
	ir_graph_free(a->g);
	ir_sparse_free(a->sparse);
	ir_type_free(a->tp);
	free(a->floats);
	free(a->ints);
	for (size_t i = 0; i < a->n_strings; i++)
		free(a->strings[i]);
	free(a->strings);
	free(a->string_lens);
	for (size_t i = 0; i < a->n_tensors; i++)
		ir_tensor_free(a->tensors[i]);
	free(a->tensors);
	for (size_t i = 0; i < a->n_graphs; i++)
		ir_graph_free(a->graphs[i]);
	free(a->graphs);
	for (size_t i = 0; i < a->n_sparses; i++)
		ir_sparse_free(a->sparses[i]);
	free(a->sparses);
	for (size_t i = 0; i < a->n_tps; i++)
		ir_type_free(a->tps[i]);
	free(a->tps);
	ir_unknown_release(&a->unknown);
	free(a);
}

void ir_node_free(struct ir_node *n)
{
	if (!n)
		return;
	free(n->name);
	free(n->op_type);
	free(n->domain);
	free(n->doc);
	free(n->inputs);
	free(n->outputs);
	for (size_t i = 0; i < n->n_attrs; i++)
		ir_attr_free(n->attrs[i]);
	free(n->attrs);
	ir_unknown_release(&n->unknown);
	free(n);
}

static void value_free(struct ir_value *v)
{
	free(v->name);
	free(v->uses);
	free(v);
}

static void vinfo_release(struct ir_vinfo *vi, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		ir_type_free(vi[i].type);
		free(vi[i].doc);
		ir_unknown_release(&vi[i].unknown);
	}
	free(vi);
}

struct ir_graph *ir_graph_new(struct ir_graph *parent)
{
	struct ir_graph *g = calloc(1, sizeof(*g));

	if (g)
		g->parent = parent;
	return g;
}

void ir_graph_free(struct ir_graph *g)
{
	if (!g)
		return;
	free(g->name);
	free(g->doc);
	for (size_t i = 0; i < g->n_nodes; i++)
		ir_node_free(g->nodes[i]);
	free(g->nodes);
	vinfo_release(g->inputs, g->n_inputs);
	vinfo_release(g->outputs, g->n_outputs);
	vinfo_release(g->value_info, g->n_value_info);
	for (size_t i = 0; i < g->n_inits; i++)
		ir_tensor_free(g->inits[i]);
	free(g->inits);
	for (size_t i = 0; i < g->n_sparse_inits; i++)
		ir_sparse_free(g->sparse_inits[i]);
	free(g->sparse_inits);
	for (size_t i = 0; i < g->n_values; i++)
		value_free(g->value_list[i]);
	free(g->values);
	free(g->value_list);
	ir_unknown_release(&g->quant);
	ir_unknown_release(&g->unknown);
	free(g);
}

struct ir_model *ir_model_new(void)
{
	return calloc(1, sizeof(struct ir_model));
}

static void function_free(struct ir_function *f)
{
	if (!f)
		return;
	free(f->name);
	free(f->domain);
	free(f->doc);
	for (size_t i = 0; i < f->n_inputs; i++)
		free(f->inputs[i]);
	free(f->inputs);
	for (size_t i = 0; i < f->n_outputs; i++)
		free(f->outputs[i]);
	free(f->outputs);
	for (size_t i = 0; i < f->n_attr_names; i++)
		free(f->attr_names[i]);
	free(f->attr_names);
	for (size_t i = 0; i < f->n_opsets; i++)
		free(f->opsets[i].domain);
	free(f->opsets);
	ir_graph_free(f->body);
	ir_unknown_release(&f->unknown);
	free(f);
}

void ir_function_free(struct ir_function *f)
{
	function_free(f);
}

void ir_model_remove_function(struct ir_model *m, size_t i)
{
	if (i >= m->n_functions)
		return;
	function_free(m->functions[i]);
	memmove(&m->functions[i], &m->functions[i + 1],
		(m->n_functions - i - 1) * sizeof(*m->functions));
	m->n_functions--;
}

void ir_model_free(struct ir_model *m)
{
	if (!m)
		return;
	free(m->producer_name);
	free(m->producer_version);
	free(m->domain);
	free(m->doc);
	for (size_t i = 0; i < m->n_opsets; i++)
		free(m->opsets[i].domain);
	free(m->opsets);
	kv_free(m->metadata, m->n_metadata);
	ir_graph_free(m->graph);
	for (size_t i = 0; i < m->n_functions; i++)
		function_free(m->functions[i]);
	free(m->functions);
	ir_unknown_release(&m->training);
	ir_unknown_release(&m->unknown);
	free(m->dir);
	free(m->path);
	for (size_t i = 0; i < m->n_extfiles; i++)
		ir_extfile_unref(m->extfiles[i]);
	ir_extfile_unref(m->self_map);
	free(m->extfiles);
	free(m);
}

/* ---- value table ------------------------------------------------------ */

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static struct ir_value **slot_of(struct ir_value **tab, size_t cap,
				 const char *name)
{
	size_t i = name_hash(name) & (cap - 1);

	while (tab[i] && strcmp(tab[i]->name, name) != 0)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

struct ir_value *ir_graph_find(const struct ir_graph *g, const char *name)
{
	if (!g->cap_values)
		return NULL;
	return *slot_of(g->values, g->cap_values, name);
}

struct ir_value *ir_graph_lookup(const struct ir_graph *g, const char *name)
{
	for (; g; g = g->parent) {
		struct ir_value *v = ir_graph_find(g, name);

		if (v)
			return v;
	}
	return NULL;
}

int ir_graph_is_output(const struct ir_graph *g, const struct ir_value *v)
{
	for (size_t i = 0; i < g->n_outputs; i++)
		if (g->outputs[i].value == v)
			return 1;
	return 0;
}

static int table_grow(struct ir_graph *g)
{
	size_t cap = g->cap_values ? g->cap_values * 2 : 16;
	struct ir_value **tab = calloc(cap, sizeof(*tab));
	struct ir_value **list = realloc(g->value_list, cap * sizeof(*list));

	if (!tab || !list) {
		free(tab);
		if (list)
			g->value_list = list;
		return IR_ENOMEM;
	}
	g->value_list = list;
	for (size_t i = 0; i < g->n_values; i++)
		*slot_of(tab, cap, list[i]->name) = list[i];
	free(g->values);
	g->values = tab;
	g->cap_values = cap;
	return 0;
}

struct ir_value *ir_graph_value(struct ir_graph *g, const char *name)
{
	struct ir_value *v = ir_graph_find(g, name);

	if (v)
		return v;
	if ((g->n_values + 1) * 2 > g->cap_values && table_grow(g) < 0)
		return NULL;
	v = calloc(1, sizeof(*v));
	if (!v || !(v->name = strdup(name))) {
		free(v);
		return NULL;
	}
	v->graph = g;
	*slot_of(g->values, g->cap_values, name) = v;
	g->value_list[g->n_values++] = v;
	return v;
}

int ir_value_add_use(struct ir_value *v, struct ir_node *n)
{
	if (v->n_uses == v->cap_uses) {
		size_t cap = v->cap_uses ? v->cap_uses * 2 : 4;
		struct ir_node **u = realloc(v->uses, cap * sizeof(*u));

		if (!u)
			return IR_ENOMEM;
		v->uses = u;
		v->cap_uses = cap;
	}
	v->uses[v->n_uses++] = n;
	return 0;
}

int ir_graph_add_node(struct ir_graph *g, struct ir_node *n)
{
	if (g->n_nodes == g->cap_nodes) {
		size_t cap = g->cap_nodes ? g->cap_nodes * 2 : 16;
		struct ir_node **a = realloc(g->nodes, cap * sizeof(*a));

		if (!a)
			return IR_ENOMEM;
		g->nodes = a;
		g->cap_nodes = cap;
	}
	n->graph = g;
	n->index = g->n_nodes;
	g->nodes[g->n_nodes++] = n;
	return 0;
}

int64_t ir_model_opset(const struct ir_model *m, const char *domain)
{
	const char *want = domain && strcmp(domain, "ai.onnx") ? domain : "";

	for (size_t i = 0; i < m->n_opsets; i++) {
		const char *d = ir_s(m->opsets[i].domain);

		if (!strcmp(d, "ai.onnx"))
			d = "";
		if (!strcmp(d, want))
			return m->opsets[i].version;
	}
	return 0;
}

/* ---- walker ----------------------------------------------------------- */

static int walk_graph(struct ir_graph *g, int depth, ir_graph_visit_fn fn,
		      void *ctx)
{
	int rc = fn(g, depth, ctx);

	for (size_t i = 0; rc == 0 && i < g->n_nodes; i++) {
		struct ir_node *n = g->nodes[i];

		for (size_t j = 0; rc == 0 && j < n->n_attrs; j++) {
			struct ir_attr *a = n->attrs[j];

			if (a->g)
				rc = walk_graph(a->g, depth + 1, fn, ctx);
			for (size_t k = 0; rc == 0 && k < a->n_graphs; k++)
				rc = walk_graph(a->graphs[k], depth + 1, fn,
						ctx);
		}
	}
	return rc;
}

int ir_graph_walk(struct ir_graph *g, ir_graph_visit_fn fn, void *ctx)
{
	return walk_graph(g, 0, fn, ctx);
}

int ir_model_walk(struct ir_model *m, ir_graph_visit_fn fn, void *ctx)
{
	int rc = m->graph ? walk_graph(m->graph, 0, fn, ctx) : 0;

	for (size_t i = 0; rc == 0 && i < m->n_functions; i++)
		if (m->functions[i]->body)
			rc = walk_graph(m->functions[i]->body, 0, fn, ctx);
	return rc;
}
