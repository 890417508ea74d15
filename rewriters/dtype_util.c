/* dtype_util.c: the helpers of the dtype and precision passes (see
 * dtype_int.h): schema slots and their type constraints at the model's
 * opset, Casts, converted initializers and attribute tensors, declared
 * types. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/dtype_int.h"
#include "runtime/runtime.h"

static int has_subgraph(const struct ir_node *n)
{
	for (size_t i = 0; i < n->n_attrs; i++)
		if (n->attrs[i]->g || n->attrs[i]->n_graphs)
			return 1;
	return 0;
}

const struct ir_op_schema *rw_dt_schema(const struct rw_ctx *c, const struct ir_node *n)
{
	if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx"))
		return NULL;
	if (has_subgraph(n))
		return NULL;
	return ir_registry_find("", ir_s(n->op_type), c->opset);
}

const char *rw_dt_slot(const struct ir_op_schema *s, int input, size_t i)
{
	const struct ir_op_formal *f = input ? s->inputs : s->outputs;
	size_t n = input ? s->n_inputs : s->n_outputs;

	if (i < n)
		return f[i].type;
	if (n && f[n - 1].variadic)
		return f[n - 1].type;
	return NULL;
}

int rw_dt_is_var(const char *type)
{
	return type && !strchr(type, '(');
}

/* Does the list "tensor(a), tensor(b)" hold tensor(<dtype>)? */
static int list_has(const char *list, int dtype)
{
	char want[48];
	size_t k;

	k = (size_t)snprintf(want, sizeof(want), "tensor(%s)", ir_dtype_name(dtype));
	for (const char *p = list; (p = strstr(p, want)); p += k)
		if ((p == list || p[-1] == ' ' || p[-1] == ',') &&
		    (p[k] == 0 || p[k] == ',' || p[k] == ' '))
			return 1;
	return 0;
}

int rw_dt_admits(const struct ir_op_schema *s, const char *type, int dtype)
{
	if (!type)
		return 0;
	if (!rw_dt_is_var(type))
		return list_has(type, dtype);
	for (size_t i = 0; i < s->n_constraints; i++)
		if (!strcmp(s->constraints[i].name, type))
			return list_has(s->constraints[i].types, dtype);
	return 0;
}

int rw_dt_var_bound_by_input(const struct ir_op_schema *s, const struct ir_node *n,
			     const char *type)
{
	for (size_t i = 0; i < n->n_inputs; i++) {
		const char *t = rw_dt_slot(s, 1, i);

		if (n->inputs[i] && t && !strcmp(t, type))
			return 1;
	}
	return 0;
}

int rw_dt_dtype(const struct rw_ctx *c, const struct ir_value *v)
{
	const struct ir_vtype *t = rw_type(c, v);

	if (t && t->dtype && !t->is_seq && !t->map_key)
		return t->dtype;
	if (t && (t->is_seq || t->map_key))
		return 0;
	if (v->type && v->type->kind == IR_TYPE_TENSOR)
		return v->type->elem_type;
	return v->init ? v->init->dtype : 0;
}

int rw_dt_captured(const struct ir_value *v)
{
	for (size_t i = 0; i < v->n_uses; i++)
		if (v->uses[i]->graph != v->graph)
			return 1;
	return 0;
}

struct ir_value *rw_dt_cast(struct rw_ctx *c, struct ir_graph *g, struct ir_value *in,
			    int to, struct ir_value *out, const char *hint)
{
	char name[300], doc[400];
	struct ir_node *n;

	snprintf(name, sizeof(name), "%.200s/Cast_to_%s", ir_s(in->name), ir_dtype_name(to));
	snprintf(doc, sizeof(doc), "opmig: %s, Cast of '%.200s' to %s", c->pass ? c->pass : "?",
		 ir_s(in->name), ir_dtype_name(to));
	if (!out && !(out = ir_graph_new_value(g, hint)))
		goto oom;
	if (!(n = ir_node_create("Cast", NULL, name)))
		goto oom;
	if (!(n->doc = strdup(doc)) || ir_node_set_int(n, "to", to) < 0 ||
	    ir_node_append_input(n, in) < 0 || ir_node_append_output(n, out) < 0) {
		for (size_t i = 0; i < n->n_inputs; i++)
			ir_value_remove_use(n->inputs[i], n);
		if (out->producer == n)
			out->producer = NULL;
		ir_node_free(n);
		goto oom;
	}
	if (ir_graph_add_node(g, n) < 0) {
		ir_value_remove_use(in, n);
		out->producer = NULL;
		ir_node_free(n);
		goto oom;
	}
	return out;
oom:
	ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	return NULL;
}

/* Weights from 1 MiB up are converted when written or read, not here:
 * a model's whole payload is never held twice. */
#define DEFER_BYTES ((int64_t)1 << 20)

struct ir_tensor *rw_dt_convert_tensor(struct rw_ctx *c, struct ir_tensor *t, int to,
				       const char *name)
{
	struct rt_value *v = NULL, *w = NULL;
	struct ir_tensor *out = NULL;
	const struct ir_dtype_info *fi = ir_dtype_get(t->dtype), *ti = ir_dtype_get(to);
	struct ir_diag d;

	ir_diag_init(&d);
	if (ir_tensor_nbytes(t) >= DEFER_BYTES && fi && ti && fi->bits >= 8 && ti->bits >= 8 &&
	    t->dtype != IR_DTYPE_STRING && to != IR_DTYPE_STRING) {
		out = ir_tensor_new_derived(name, ir_tensor_clone(t, name), to, rt_cast_raw);
		if (!out)
			ir_diag_error(c->d, IR_ENOMEM, "%s: tensor '%s': out of memory",
				      c->pass ? c->pass : "dtype", ir_s(t->name));
		return out;
	}
	if (rt_value_from_ir(NULL, t, &v, &d) == 0 && rt_tensor_cast(NULL, v, to, &w, &d) == 0)
		rt_value_to_ir(w, name, &out, &d);
	rt_value_unref(w);
	rt_value_unref(v);
	if (!out)
		ir_diag_error(c->d, d.status ? d.status : IR_ENOMEM, "%s: tensor '%s': %s",
			      c->pass ? c->pass : "dtype", ir_s(t->name), d.msg);
	return out;
}

int rw_dt_const_init(const struct rw_ctx *c, const struct ir_value *v)
{
	/* before IR 4 every initializer had to be listed as an input too */
	return v->init && (!v->is_input || c->m->ir_version < 4);
}

int rw_dt_convert_init(struct rw_ctx *c, struct ir_graph *g, struct ir_value *v, int to)
{
	struct ir_tensor *t = rw_dt_convert_tensor(c, v->init, to, ir_s(v->name));
	int rc;

	if (!t)
		return c->d->status ? c->d->status : IR_ENOMEM;
	/* in place: the weights keep the input's order */
	if ((rc = ir_value_replace_initializer(g, v, t)) < 0)
		return ir_diag_error(c->d, rc, rc == IR_ENOMEM ? "out of memory" :
				     "tensor '%s' is no initializer of its graph", ir_s(v->name));
	if (v->is_input)
		rw_dt_declare(g, v, to);
	return 0;
}

struct ir_value *rw_dt_copy_init(struct rw_ctx *c, struct ir_graph *g,
				 struct ir_value *v, int to, const char *hint)
{
	struct ir_tensor *t = rw_dt_convert_tensor(c, v->init, to, hint);
	struct ir_value *out;

	if (!t)
		return NULL;
	if (!(out = ir_graph_add_initializer(g, t)))
		ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	else if (c->m->ir_version < 4)
		c->m->ir_version = 4;   /* an initializer that is no input */
	return out;
}

void rw_dt_declare(struct ir_graph *g, const struct ir_value *v, int dtype)
{
	struct ir_vinfo *lists[3] = { g->inputs, g->outputs, g->value_info };
	size_t ns[3] = { g->n_inputs, g->n_outputs, g->n_value_info };

	for (int l = 0; l < 3; l++)
		for (size_t i = 0; i < ns[l]; i++)
			if (lists[l][i].value == v && lists[l][i].type &&
			    lists[l][i].type->kind == IR_TYPE_TENSOR) {
				lists[l][i].type->elem_type = dtype;
				lists[l][i].type->present |= IR_TYPE_HAS_ELEM;
			}
}

struct ir_value *rw_dt_split_output(struct rw_ctx *c, struct ir_graph *g,
				    struct ir_node *n, size_t k, const char *hint)
{
	struct ir_value *f = ir_graph_new_value(g, hint);

	if (!f) {
		ir_diag_error(c->d, IR_ENOMEM, "out of memory");
		return NULL;
	}
	n->outputs[k]->producer = NULL;
	n->outputs[k] = f;
	f->producer = n;
	return f;
}

int rw_dt_finish(struct rw_ctx *c, struct ir_graph *g)
{
	struct ir_diag d;
	int rc;

	ir_diag_init(&d);
	if ((rc = ir_graph_toposort(g, &d)) < 0)
		return ir_diag_error(c->d, rc, "%s: %s", c->pass ? c->pass : "dtype", d.msg);
	return 0;
}

