/* spec.c: the seed of an op's cases as a one-node spec: read from an ONNX
 * backend node case (its model and test_data_set_0 inputs), and whether a
 * spec can stand for another version of its op. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/probe_int.h"
#include "runtime/tensor_io.h"

void probe_spec_free(struct probe_spec *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_in; i++)
		rt_value_unref(s->in[i]);
	if (s->model)
		ir_model_free(s->model);
	else
		ir_node_free(s->node);
	free(s->name);
	free(s);
}

static int has_graph_attr(const struct ir_node *n)
{
	for (size_t i = 0; i < n->n_attrs; i++) {
		int t = n->attrs[i]->type;

		if (t == IR_ATTR_GRAPH || t == IR_ATTR_GRAPHS || t == IR_ATTR_SPARSE_TENSOR ||
		    t == IR_ATTR_SPARSE_TENSORS || t == IR_ATTR_TYPE_PROTO ||
		    t == IR_ATTR_TYPE_PROTOS || t == IR_ATTR_TENSORS ||
		    *ir_s(n->attrs[i]->ref_attr_name))
			return 1;
	}
	return 0;
}

static int is_tensor_type(const struct ir_type *t)
{
	return t && t->kind == IR_TYPE_TENSOR;
}

struct probe_spec *probe_spec_from_backend(const char *dir, const char *name,
					   char *why, size_t size)
{
	struct probe_spec *sp = calloc(1, sizeof(*sp));
	char path[4200];
	struct ir_diag d;
	struct ir_graph *g;
	struct ir_node *n;
	size_t k = 0;

	why[0] = 0;
	ir_diag_init(&d);
	if (!sp || !(sp->name = strdup(name))) {
		snprintf(why, size, "out of memory");
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	if (ir_model_load(path, NULL, &sp->model, &d) < 0) {
		snprintf(why, size, "%s", d.msg);
		goto fail;
	}
	g = sp->model->graph;
	if (g->n_nodes != 1 || sp->model->n_functions || g->n_sparse_inits) {
		snprintf(why, size, "not one node");
		goto fail;
	}
	n = sp->node = g->nodes[0];
	if (has_graph_attr(n) || n->n_inputs > PROBE_MAX_IO || n->n_outputs > PROBE_MAX_IO) {
		snprintf(why, size, "subgraph attributes or too many inputs");
		goto fail;
	}
	sp->own = ir_registry_find(ir_s(n->domain), ir_s(n->op_type),
				   ir_model_opset(sp->model, ir_s(n->domain)));
	if (!sp->own) {
		snprintf(why, size, "op unknown at its opset");
		goto fail;
	}
	sp->n_attrs_set = (int)n->n_attrs;
	for (size_t i = 0; i < g->n_outputs; i++)
		if (!is_tensor_type(g->outputs[i].type)) {
			snprintf(why, size, "an output is not a tensor");
			goto fail;
		}
	sp->n_out = n->n_outputs;
	for (size_t i = 0; i < n->n_outputs; i++)
		sp->out_present[i] = n->outputs[i] != NULL;
	/* graph inputs in order: their values from input_K.pb */
	for (size_t i = 0; i < g->n_inputs; i++) {
		struct ir_value *v = g->inputs[i].value;

		if (v->init)
			continue;
		if (!is_tensor_type(g->inputs[i].type)) {
			snprintf(why, size, "an input is not a tensor");
			goto fail;
		}
		k++;
	}
	sp->n_in = n->n_inputs;
	for (size_t i = 0; i < n->n_inputs; i++) {
		struct ir_value *v = n->inputs[i];
		struct rt_value *t = NULL;

		if (!v)
			continue;
		if (v->init) {
			struct rt_value *view;

			if (rt_value_from_ir(NULL, v->init, &view, &d) < 0)
				goto bad;
			if (rt_tensor_clone(NULL, view, &t, &d) < 0) {
				rt_value_unref(view);
				goto bad;
			}
			rt_value_unref(view);
			sp->is_const[i] = 1;
		} else {
			size_t pos = 0;

			for (size_t j = 0; j < g->n_inputs; j++) {
				if (g->inputs[j].value == v)
					break;
				pos += !g->inputs[j].value->init;
			}
			if (pos >= k) {
				snprintf(why, size, "input '%s' is no graph input", ir_s(v->name));
				goto fail;
			}
			snprintf(path, sizeof(path), "%s/test_data_set_0/input_%zu.pb", dir, pos);
			if (rt_tensor_read_file(NULL, path, &t, &d) < 0)
				goto bad;
		}
		if (t->kind != RT_TENSOR) {
			rt_value_unref(t);
			snprintf(why, size, "input %zu is not a tensor", i);
			goto fail;
		}
		sp->in[i] = t;
	}
	return sp;
bad:
	snprintf(why, size, "%s", d.msg);
fail:
	probe_spec_free(sp);
	return NULL;
}

int probe_spec_fits(const struct probe_spec *sp, const struct ir_op_schema *s)
{
	const struct ir_node *n = sp->node;
	size_t n_in = sp->n_in, n_out = sp->n_out;

	/* trailing absent optionals do not count */
	while (n_in && !sp->in[n_in - 1])
		n_in--;
	while (n_out && !sp->out_present[n_out - 1])
		n_out--;
	if ((int)n_in > s->max_inputs || (int)n_out > s->max_outputs ||
	    (int)n_out < s->min_outputs)
		return 0;
	for (size_t i = 0; i < n_in; i++) {
		if (!sp->in[i]) {
			if (i < s->n_inputs && !s->inputs[i].optional)
				return 0;
			continue;
		}
		if (!(probe_type_dtypes(s, probe_formal_type(s, 1, i)) &
		      RULES_DTYPE_BIT(sp->in[i]->dtype)))
			return 0;
	}
	for (size_t i = (size_t)n_in; i < s->n_inputs; i++)
		if (!s->inputs[i].optional && !s->inputs[i].variadic)
			return 0;
	for (size_t i = 0; i < n->n_attrs; i++)
		if (!ir_op_schema_attr(s, ir_s(n->attrs[i]->name)))
			return 0;
	for (size_t i = 0; i < s->n_attrs; i++)
		if (s->attrs[i].required && !ir_node_attr(n, s->attrs[i].name))
			return 0;
	return 1;
}
