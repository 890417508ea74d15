/* edit.c: editing a loaded graph while keeping it consistent: creating
 * nodes, values, initializers and attributes, wiring inputs and outputs
 * with their def-use lists, detaching nodes, and redirecting every use of
 * one value to another (in nested scopes and graph outputs too).  The
 * rewriters work only through these functions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir_int.h"

struct ir_node *ir_node_create(const char *op_type, const char *domain,
			       const char *name)
{
	struct ir_node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	if (!(n->op_type = strdup(op_type)) ||
	    (domain && *domain && strcmp(domain, "ai.onnx") && !(n->domain = strdup(domain))) ||
	    (name && !(n->name = strdup(name)))) {
		ir_node_free(n);
		return NULL;
	}
	return n;
}

static int grow(void **arr, size_t n, size_t elem)
{
	void *p = realloc(*arr, (n + 2) * elem);

	if (!p)
		return IR_ENOMEM;
	*arr = p;
	return 0;
}

int ir_node_append_input(struct ir_node *n, struct ir_value *v)
{
	if (grow((void **)&n->inputs, n->n_inputs, sizeof(*n->inputs)) < 0)
		return IR_ENOMEM;
	n->inputs[n->n_inputs] = v;
	if (v && ir_value_add_use(v, n) < 0)
		return IR_ENOMEM;
	n->n_inputs++;
	return 0;
}

int ir_node_append_output(struct ir_node *n, struct ir_value *v)
{
	if (grow((void **)&n->outputs, n->n_outputs, sizeof(*n->outputs)) < 0)
		return IR_ENOMEM;
	n->outputs[n->n_outputs++] = v;
	if (v)
		v->producer = n;
	return 0;
}

void ir_value_remove_use(struct ir_value *v, const struct ir_node *n)
{
	for (size_t i = 0; v && i < v->n_uses; i++)
		if (v->uses[i] == n) {
			memmove(&v->uses[i], &v->uses[i + 1],
				(v->n_uses - i - 1) * sizeof(*v->uses));
			v->n_uses--;
			return;
		}
}

int ir_node_set_input(struct ir_node *n, size_t i, struct ir_value *v)
{
	if (i >= n->n_inputs)
		return IR_EUSAGE;
	if (n->inputs[i] == v)
		return 0;
	if (v && ir_value_add_use(v, n) < 0)
		return IR_ENOMEM;
	ir_value_remove_use(n->inputs[i], n);
	n->inputs[i] = v;
	return 0;
}

static void renumber(struct ir_graph *g, size_t from)
{
	for (size_t i = from; i < g->n_nodes; i++)
		g->nodes[i]->index = i;
}

int ir_graph_insert_node(struct ir_graph *g, struct ir_node *n, size_t pos)
{
	int rc;

	if (pos > g->n_nodes)
		pos = g->n_nodes;
	if ((rc = ir_graph_add_node(g, n)) < 0)
		return rc;
	memmove(&g->nodes[pos + 1], &g->nodes[pos],
		(g->n_nodes - 1 - pos) * sizeof(*g->nodes));
	g->nodes[pos] = n;
	renumber(g, pos);
	for (size_t a = 0; a < n->n_attrs; a++) {
		if (n->attrs[a]->g)
			n->attrs[a]->g->owner = n;
		for (size_t k = 0; k < n->attrs[a]->n_graphs; k++)
			n->attrs[a]->graphs[k]->owner = n;
	}
	return 0;
}

/* Drop the uses nodes nested in g make of values of outer scopes. */
static void drop_captures(struct ir_graph *g)
{
	for (size_t i = 0; i < g->n_nodes; i++) {
		struct ir_node *n = g->nodes[i];

		for (size_t j = 0; j < n->n_inputs; j++)
			if (n->inputs[j] && n->inputs[j]->graph != g)
				ir_value_remove_use(n->inputs[j], n);
		for (size_t a = 0; a < n->n_attrs; a++) {
			if (n->attrs[a]->g)
				drop_captures(n->attrs[a]->g);
			for (size_t k = 0; k < n->attrs[a]->n_graphs; k++)
				drop_captures(n->attrs[a]->graphs[k]);
		}
	}
}

void ir_graph_detach_node(struct ir_graph *g, struct ir_node *n)
{
	size_t i = n->index;

	if (i >= g->n_nodes || g->nodes[i] != n)
		for (i = 0; i < g->n_nodes && g->nodes[i] != n; i++)
			;
	if (i >= g->n_nodes)
		return;
	for (size_t j = 0; j < n->n_inputs; j++)
		ir_value_remove_use(n->inputs[j], n);
	for (size_t j = 0; j < n->n_outputs; j++)
		if (n->outputs[j] && n->outputs[j]->producer == n)
			n->outputs[j]->producer = NULL;
	for (size_t a = 0; a < n->n_attrs; a++) {
		if (n->attrs[a]->g)
			drop_captures(n->attrs[a]->g);
		for (size_t k = 0; k < n->attrs[a]->n_graphs; k++)
			drop_captures(n->attrs[a]->graphs[k]);
	}
	memmove(&g->nodes[i], &g->nodes[i + 1], (g->n_nodes - i - 1) * sizeof(*g->nodes));
	g->n_nodes--;
	renumber(g, i);
	n->graph = NULL;
}

void ir_graph_remove_node(struct ir_graph *g, struct ir_node *n)
{
	ir_graph_detach_node(g, n);
	ir_node_free(n);
}

int ir_value_replace_uses(struct ir_value *from, struct ir_value *to)
{
	struct ir_graph *g = from->graph;

	while (from->n_uses) {
		struct ir_node *n = from->uses[0];
		size_t before = from->n_uses;

		for (size_t j = 0; j < n->n_inputs; j++)
			if (n->inputs[j] == from && ir_node_set_input(n, j, to) < 0)
				return IR_ENOMEM;
		if (from->n_uses == before)   /* stale use entry */
			ir_value_remove_use(from, n);
	}
	for (size_t i = 0; g && i < g->n_outputs; i++)
		if (g->outputs[i].value == from)
			g->outputs[i].value = to;
	return 0;
}

struct ir_value *ir_graph_new_value(struct ir_graph *g, const char *hint)
{
	char name[256];
	unsigned long k = 0;

	snprintf(name, sizeof(name), "%s", hint && *hint ? hint : "v");
	while (ir_graph_lookup(g, name))
		snprintf(name, sizeof(name), "%.200s_%lu", hint && *hint ? hint : "v", ++k);
	return ir_graph_value(g, name);
}

struct ir_tensor *ir_tensor_new_raw(const char *name, int dtype,
				    const int64_t *dims, size_t n_dims,
				    const void *data, size_t len)
{
	struct ir_tensor *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->present = IR_TENSOR_HAS_DTYPE | IR_TENSOR_HAS_RAW;
	t->dtype = dtype;
	t->n_dims = n_dims;
	t->storage = IR_STORE_RAW;
	t->raw_len = len;
	if (!(t->name = strdup(name ? name : "")) ||
	    !(t->dims = malloc((n_dims + 1) * sizeof(*dims))) ||
	    !(t->raw = malloc(len + 1))) {
		ir_tensor_free(t);
		return NULL;
	}
	if (n_dims)
		memcpy(t->dims, dims, n_dims * sizeof(*dims));
	if (len)
		memcpy(t->raw, data, len);
	return t;
}

struct ir_value *ir_graph_add_initializer(struct ir_graph *g, struct ir_tensor *t)
{
	struct ir_tensor **p;
	struct ir_value *v;
	char *name;

	if (!(v = ir_graph_new_value(g, ir_s(t->name))) ||
	    !(name = strdup(v->name)) ||
	    !(p = realloc(g->inits, (g->n_inits + 1) * sizeof(*p)))) {
		ir_tensor_free(t);
		return NULL;
	}
	free(t->name);
	t->name = name;
	g->inits = p;
	g->inits[g->n_inits++] = t;
	v->init = t;
	return v;
}

int ir_value_attach_initializer(struct ir_graph *g, struct ir_value *v,
				struct ir_tensor *t)
{
	struct ir_tensor **p;
	char *name;

	if (v->producer || v->init || v->is_input || v->graph != g ||
	    !(name = strdup(v->name))) {
		ir_tensor_free(t);
		return v->producer || v->init || v->is_input || v->graph != g ?
		       IR_EINVAL : IR_ENOMEM;
	}
	if (!(p = realloc(g->inits, (g->n_inits + 1) * sizeof(*p)))) {
		free(name);
		ir_tensor_free(t);
		return IR_ENOMEM;
	}
	free(t->name);
	t->name = name;
	g->inits = p;
	g->inits[g->n_inits++] = t;
	v->init = t;
	return 0;
}

int ir_value_replace_initializer(struct ir_graph *g, struct ir_value *v,
				 struct ir_tensor *t)
{
	char *name;

	for (size_t i = 0; i < g->n_inits; i++)
		if (v->init && g->inits[i] == v->init) {
			if (!(name = strdup(v->name))) {
				ir_tensor_free(t);
				return IR_ENOMEM;
			}
			free(t->name);
			t->name = name;
			ir_tensor_free(g->inits[i]);
			g->inits[i] = v->init = t;
			return 0;
		}
	ir_tensor_free(t);
	return IR_EINVAL;
}

void ir_graph_remove_initializer(struct ir_graph *g, struct ir_value *v)
{
	for (size_t i = 0; i < g->n_inits; i++)
		if (g->inits[i] == v->init) {
			ir_tensor_free(g->inits[i]);
			memmove(&g->inits[i], &g->inits[i + 1],
				(g->n_inits - i - 1) * sizeof(*g->inits));
			g->n_inits--;
			break;
		}
	v->init = NULL;
	/* an initializer also listed as a graph input stays an input */
}

void ir_graph_remove_input(struct ir_graph *g, struct ir_value *v)
{
	for (size_t i = 0; i < g->n_inputs; i++)
		if (g->inputs[i].value == v) {
			if (v->type == g->inputs[i].type)
				v->type = NULL;
			ir_type_free(g->inputs[i].type);
			free(g->inputs[i].doc);
			ir_unknown_release(&g->inputs[i].unknown);
			memmove(&g->inputs[i], &g->inputs[i + 1],
				(g->n_inputs - i - 1) * sizeof(*g->inputs));
			g->n_inputs--;
			i--;
		}
	v->is_input = 0;
	for (size_t i = 0; i < g->n_value_info && !v->type; i++)
		if (g->value_info[i].value == v)
			v->type = g->value_info[i].type;
	for (size_t i = 0; i < g->n_outputs && !v->type; i++)
		if (g->outputs[i].value == v)
			v->type = g->outputs[i].type;
}

void ir_graph_drop_value_info(struct ir_graph *g, const struct ir_value *v)
{
	for (size_t i = 0; i < g->n_value_info; i++)
		if (g->value_info[i].value == v) {
			ir_type_free(g->value_info[i].type);
			free(g->value_info[i].doc);
			ir_unknown_release(&g->value_info[i].unknown);
			memmove(&g->value_info[i], &g->value_info[i + 1],
				(g->n_value_info - i - 1) * sizeof(*g->value_info));
			g->n_value_info--;
			i--;
		}
	if (v->type) {
		/* the value's borrowed declaration may have been that entry */
		((struct ir_value *)v)->type = NULL;
		for (size_t i = 0; i < g->n_inputs; i++)
			if (g->inputs[i].value == v)
				((struct ir_value *)v)->type = g->inputs[i].type;
		for (size_t i = 0; i < g->n_outputs && !v->type; i++)
			if (g->outputs[i].value == v)
				((struct ir_value *)v)->type = g->outputs[i].type;
	}
}

/* ---- attributes ------------------------------------------------------- */

static struct ir_attr *attr_slot(struct ir_node *n, const char *name, int type)
{
	struct ir_attr *a;

	for (size_t i = 0; i < n->n_attrs; i++)
		if (!strcmp(ir_s(n->attrs[i]->name), name)) {
			ir_attr_free(n->attrs[i]);
			memmove(&n->attrs[i], &n->attrs[i + 1],
				(n->n_attrs - i - 1) * sizeof(*n->attrs));
			n->n_attrs--;
			break;
		}
	if (grow((void **)&n->attrs, n->n_attrs, sizeof(*n->attrs)) < 0 ||
	    !(a = calloc(1, sizeof(*a))))
		return NULL;
	if (!(a->name = strdup(name))) {
		free(a);
		return NULL;
	}
	a->type = type;
	a->present = IR_ATTR_HAS_TYPE;
	n->attrs[n->n_attrs++] = a;
	return a;
}

int ir_node_remove_attr(struct ir_node *n, const char *name)
{
	for (size_t i = 0; i < n->n_attrs; i++)
		if (!strcmp(ir_s(n->attrs[i]->name), name)) {
			ir_attr_free(n->attrs[i]);
			memmove(&n->attrs[i], &n->attrs[i + 1],
				(n->n_attrs - i - 1) * sizeof(*n->attrs));
			n->n_attrs--;
			return 1;
		}
	return 0;
}

int ir_node_set_int(struct ir_node *n, const char *name, int64_t v)
{
	struct ir_attr *a = attr_slot(n, name, IR_ATTR_INT);

	if (!a)
		return IR_ENOMEM;
	a->present |= IR_ATTR_HAS_I;
	a->i = v;
	return 0;
}

int ir_node_set_float(struct ir_node *n, const char *name, float v)
{
	struct ir_attr *a = attr_slot(n, name, IR_ATTR_FLOAT);

	if (!a)
		return IR_ENOMEM;
	a->present |= IR_ATTR_HAS_F;
	a->f = v;
	return 0;
}

int ir_node_set_string(struct ir_node *n, const char *name, const char *v)
{
	struct ir_attr *a = attr_slot(n, name, IR_ATTR_STRING);

	if (!a || !(a->s = (uint8_t *)strdup(v)))
		return IR_ENOMEM;
	a->present |= IR_ATTR_HAS_S;
	a->s_len = strlen(v);
	return 0;
}

int ir_node_set_ints(struct ir_node *n, const char *name, const int64_t *v, size_t k)
{
	struct ir_attr *a = attr_slot(n, name, IR_ATTR_INTS);

	if (!a || !(a->ints = malloc((k + 1) * sizeof(*v))))
		return IR_ENOMEM;
	if (k)
		memcpy(a->ints, v, k * sizeof(*v));
	a->n_ints = k;
	return 0;
}

int ir_node_set_floats(struct ir_node *n, const char *name, const float *v, size_t k)
{
	struct ir_attr *a = attr_slot(n, name, IR_ATTR_FLOATS);

	if (!a || !(a->floats = malloc((k + 1) * sizeof(*v))))
		return IR_ENOMEM;
	if (k)
		memcpy(a->floats, v, k * sizeof(*v));
	a->n_floats = k;
	return 0;
}

int ir_node_set_tensor(struct ir_node *n, const char *name, struct ir_tensor *t)
{
	struct ir_attr *a = attr_slot(n, name, IR_ATTR_TENSOR);

	if (!a) {
		ir_tensor_free(t);
		return IR_ENOMEM;
	}
	a->t = t;
	return 0;
}

const struct ir_attr *ir_node_attr(const struct ir_node *n, const char *name)
{
	for (size_t i = 0; i < n->n_attrs; i++)
		if (!strcmp(ir_s(n->attrs[i]->name), name))
			return n->attrs[i];
	return NULL;
}

/* Copy of a byte string with a NUL after it. */
static uint8_t *bytes_dup(const uint8_t *s, size_t len)
{
	uint8_t *c = malloc(len + 1);

	if (c) {
		if (len)
			memcpy(c, s, len);
		c[len] = 0;
	}
	return c;
}

static struct ir_tensor *tensor_copy(struct ir_tensor *t, struct ir_diag *d)
{
	const uint8_t *data;
	size_t len;

	if (t->dtype == IR_DTYPE_STRING || ir_tensor_data(t, &data, &len, d) < 0)
		return NULL;
	return ir_tensor_new_raw(ir_s(t->name), t->dtype, t->dims, t->n_dims, data, len);
}

int ir_node_copy_attr(struct ir_node *n, const char *name, const struct ir_attr *src)
{
	struct ir_diag d;
	struct ir_tensor *t;
	struct ir_attr *a;

	ir_diag_init(&d);
	switch (src->type) {
	case IR_ATTR_FLOAT: return ir_node_set_float(n, name, src->f);
	case IR_ATTR_INT: return ir_node_set_int(n, name, src->i);
	case IR_ATTR_FLOATS: return ir_node_set_floats(n, name, src->floats, src->n_floats);
	case IR_ATTR_INTS: return ir_node_set_ints(n, name, src->ints, src->n_ints);
	case IR_ATTR_TENSOR:
		if (!src->t || !(t = tensor_copy(src->t, &d)))
			return IR_EINVAL;
		return ir_node_set_tensor(n, name, t);
	case IR_ATTR_STRING:
		if (!(a = attr_slot(n, name, IR_ATTR_STRING)) ||
		    !(a->s = bytes_dup(src->s, src->s_len)))
			return IR_ENOMEM;
		a->s_len = src->s_len;
		a->present |= IR_ATTR_HAS_S;
		return 0;
	case IR_ATTR_STRINGS:
		if (!(a = attr_slot(n, name, IR_ATTR_STRINGS)) ||
		    !(a->strings = calloc(src->n_strings + 1, sizeof(*a->strings))) ||
		    !(a->string_lens = calloc(src->n_strings + 1, sizeof(*a->string_lens))))
			return IR_ENOMEM;
		for (size_t i = 0; i < src->n_strings; i++) {
			if (!(a->strings[i] = bytes_dup(src->strings[i], src->string_lens[i])))
				return IR_ENOMEM;
			a->string_lens[i] = src->string_lens[i];
			a->n_strings = i + 1;
		}
		return 0;
	default:
		return IR_EINVAL;
	}
}
