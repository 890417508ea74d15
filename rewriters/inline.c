/* inline.c: canonicalization passes that flatten the graph for targets
 * that have no functions or control flow:
 *   inline-functions  a call of a model-local function becomes the
 *       function's body (values renamed under the call's name, attributes
 *       referenced with ref_attr_name taken from the call); functions no
 *       longer called are removed.  Bodies with graph attributes stay.
 *   if-const  an If whose condition is a constant becomes the chosen
 *       branch's nodes and initializers (moved, not copied; renamed where
 *       the outer graph has the names), the branch's outputs written to
 *       the If's outputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/rw_int.h"

/* ---- value maps (body value -> main-graph value) ---------------------- */

struct vmap {
	size_t n;
	const struct ir_value **from;
	struct ir_value **to;
};

static struct ir_value *vmap_get(const struct vmap *m, const struct ir_value *v)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->from[i] == v)
			return m->to[i];
	return NULL;
}

static int vmap_put(struct vmap *m, const struct ir_value *from, struct ir_value *to)
{
	const struct ir_value **f = realloc(m->from, (m->n + 1) * sizeof(*f));
	struct ir_value **t;

	if (!f)
		return IR_ENOMEM;
	m->from = f;
	if (!(t = realloc(m->to, (m->n + 1) * sizeof(*t))))
		return IR_ENOMEM;
	m->to = t;
	m->from[m->n] = from;
	m->to[m->n++] = to;
	return 0;
}

static void vmap_release(struct vmap *m)
{
	free(m->from);
	free(m->to);
}

/* ---- inline-functions ------------------------------------------------- */

static struct ir_function *callee(struct ir_model *m, const struct ir_node *n, size_t *idx)
{
	if (!n->domain || !*n->domain || !strcmp(n->domain, "ai.onnx"))
		return NULL;
	for (size_t i = 0; i < m->n_functions; i++) {
		struct ir_function *f = m->functions[i];

		if (!strcmp(ir_s(f->name), ir_s(n->op_type)) &&
		    !strcmp(ir_s(f->domain), n->domain)) {
			*idx = i;
			return f;
		}
	}
	return NULL;
}

static int inlinable(const struct ir_function *f)
{
	for (size_t i = 0; i < f->body->n_nodes; i++) {
		const struct ir_node *b = f->body->nodes[i];

		for (size_t k = 0; k < b->n_attrs; k++) {
			const struct ir_attr *a = b->attrs[k];

			if (a->ref_attr_name)
				continue;
			if (a->type != IR_ATTR_FLOAT && a->type != IR_ATTR_INT &&
			    a->type != IR_ATTR_STRING && a->type != IR_ATTR_FLOATS &&
			    a->type != IR_ATTR_INTS && a->type != IR_ATTR_STRINGS &&
			    a->type != IR_ATTR_TENSOR)
				return 0;
		}
	}
	return 1;
}

static int copy_attrs(struct ir_node *dst, const struct ir_node *b, const struct ir_node *call)
{
	for (size_t k = 0; k < b->n_attrs; k++) {
		const struct ir_attr *a = b->attrs[k], *src = a;
		int rc;

		if (a->ref_attr_name && !(src = ir_node_attr(call, a->ref_attr_name)))
			continue;     /* not given at the call: the default applies */
		if ((rc = ir_node_copy_attr(dst, ir_s(a->name), src)) < 0)
			return rc;
	}
	return 0;
}

static struct ir_value *body_value(struct rw_emit *e, struct vmap *vm,
				   const struct ir_value *v)
{
	struct ir_value *t = vmap_get(vm, v);
	char hint[320];

	if (t)
		return t;
	snprintf(hint, sizeof(hint), "%s/%s", e->base, ir_s(v->name));
	if (!(t = ir_graph_new_value(e->g, hint)) || vmap_put(vm, v, t) < 0)
		return NULL;
	return t;
}

static int inline_call(struct rw_ctx *c, struct ir_node *call, const struct ir_function *f)
{
	struct vmap vm = { 0 };
	struct rw_emit e;
	int rc = 0;

	/* formal parameters by name */
	for (size_t i = 0; i < f->n_inputs && rc >= 0; i++) {
		const struct ir_value *v = ir_graph_find(f->body, f->inputs[i]);

		if (v)
			rc = vmap_put(&vm, v, i < call->n_inputs ? call->inputs[i] : NULL);
	}
	for (size_t i = 0; i < f->n_outputs && rc >= 0; i++) {
		const struct ir_value *v = ir_graph_find(f->body, f->outputs[i]);

		if (v && i < call->n_outputs && call->outputs[i])
			rc = vmap_put(&vm, v, call->outputs[i]);
	}
	if (rc < 0) {
		vmap_release(&vm);
		return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	}
	rw_begin(c, call, &e);
	for (size_t i = 0; i < f->body->n_nodes && !e.failed; i++) {
		const struct ir_node *b = f->body->nodes[i];
		struct ir_value **in = calloc(b->n_inputs + 1, sizeof(*in));
		struct ir_value *out = NULL;
		struct ir_node *n;

		/* body_value NULL is out of memory, never an absent output */
		if (!in || (b->n_outputs && b->outputs[0] &&
			    !(out = body_value(&e, &vm, b->outputs[0])))) {
			free(in);
			e.failed = 1;
			break;
		}
		for (size_t k = 0; k < b->n_inputs; k++)
			in[k] = b->inputs[k] ? vmap_get(&vm, b->inputs[k]) : NULL;
		n = rw_node(&e, ir_s(b->op_type), b->domain, in, b->n_inputs, out);
		free(in);
		if (!n)
			break;
		for (size_t k = 1; k < b->n_outputs && !e.failed; k++) {
			out = b->outputs[k] ? body_value(&e, &vm, b->outputs[k]) : NULL;
			if ((b->outputs[k] && !out) || ir_node_append_output(n, out) < 0)
				e.failed = 1;
		}
		if ((rc = copy_attrs(n, b, call)) < 0)
			e.failed = 1;
	}
	vmap_release(&vm);
	return rw_end(&e, 0);
}

static int run_inline(struct rw_ctx *c, size_t *changed)
{
	struct ir_model *m = c->m;
	struct ir_graph *g = m->graph;
	int rc = 0;

	*changed = 0;
	for (int round = 0; round < 16; round++) {
		size_t before = *changed;

		for (size_t i = 0; i < g->n_nodes && rc >= 0; i++) {
			struct ir_node *n = g->nodes[i];
			struct ir_function *f;
			size_t idx;

			if (!(f = callee(m, n, &idx)))
				continue;
			if (!inlinable(f)) {
				rc = rw_note(c, "function %s:%s not inlined: its body has graph, "
					     "sparse or type attributes", ir_s(f->domain), ir_s(f->name));
				continue;
			}
			if ((rc = inline_call(c, n, f)) < 0)
				break;
			(*changed)++;
			i = 0;    /* the node list changed under us */
			i--;
		}
		if (rc < 0 || *changed == before)
			break;
	}
	/* functions nobody calls any more go */
	for (size_t i = m->n_functions; rc >= 0 && *changed && i-- > 0;) {
		int used = 0;

		for (size_t k = 0; k < g->n_nodes && !used; k++) {
			size_t idx;

			used = callee(m, g->nodes[k], &idx) && idx == i;
		}
		for (size_t j = 0; j < m->n_functions && !used; j++)
			for (size_t k = 0; k < m->functions[j]->body->n_nodes && !used; k++) {
				size_t idx;

				used = j != i && callee(m, m->functions[j]->body->nodes[k], &idx) &&
				       idx == i;
			}
		if (!used)
			ir_model_remove_function(m, i);
	}
	return rc;
}

const struct rw_pass rw_pass_inline_functions = {
	.name = "inline-functions",
	.summary = "replace calls of model-local functions by the function bodies",
	.kind = RW_CANON,
	.run = run_inline,
};

/* ---- if-const --------------------------------------------------------- */

static int inline_if(struct rw_ctx *c, struct ir_node *n, int cond)
{
	const struct ir_attr *a = ir_node_attr(n, cond ? "then_branch" : "else_branch");
	struct ir_graph *b = a ? a->g : NULL, *g = n->graph;
	struct vmap vm = { 0 };
	struct rw_emit e;
	int rc = 0;

	if (!b || b->n_outputs != n->n_outputs || b->n_inputs)
		return 1;
	for (size_t i = 0; i < b->n_outputs; i++) {
		struct ir_value *bo = b->outputs[i].value;

		/* a branch output that is not produced in the branch (an outer
		 * value or a branch initializer) needs an Identity: keep the If */
		if (!bo || !bo->producer || bo->producer->graph != b || !n->outputs[i])
			return 1;
		for (size_t k = 0; k < i; k++)
			if (b->outputs[k].value == bo)
				return 1;
		if ((rc = vmap_put(&vm, bo, n->outputs[i])) < 0) {
			rc = ir_diag_error(c->d, rc, "out of memory");
			goto done;
		}
	}
	if (b->n_sparse_inits) {
		rc = 1;
		goto done;
	}
	for (size_t i = 0; i < b->n_nodes; i++)     /* captures would dangle */
		for (size_t k = 0; k < b->nodes[i]->n_attrs; k++)
			if (b->nodes[i]->attrs[k]->g || b->nodes[i]->attrs[k]->n_graphs) {
				rc = 1;
				goto done;
			}
	rw_begin(c, n, &e);
	/* the branch's initializers move out, renamed where the outer scope
	 * has their names already */
	while (b->n_inits && !e.failed) {
		struct ir_tensor *t = b->inits[--b->n_inits];
		struct ir_value *bv = ir_graph_find(b, ir_s(t->name)), *ov;

		if (bv)
			bv->init = NULL;
		if (!(ov = ir_graph_add_initializer(g, t)) || (bv && vmap_put(&vm, bv, ov) < 0))
			e.failed = 1;
	}
	/* move the branch's nodes: rebind their branch-local values */
	while (b->n_nodes && !e.failed) {
		struct ir_node *x = b->nodes[0];

		ir_graph_detach_node(b, x);
		for (size_t k = 0; k < x->n_inputs; k++) {
			struct ir_value *v = x->inputs[k];

			if (v && v->graph == b)
				v = vmap_get(&vm, v);
			x->inputs[k] = NULL;
			if (v && ir_node_set_input(x, k, v) < 0)
				e.failed = 1;
		}
		for (size_t k = 0; k < x->n_outputs; k++) {
			struct ir_value *v = x->outputs[k], *t;
			char hint[320];

			if (!v)
				continue;
			if (!(t = vmap_get(&vm, v))) {
				snprintf(hint, sizeof(hint), "%s/%s", e.base, ir_s(v->name));
				if (!(t = ir_graph_new_value(g, hint)) || vmap_put(&vm, v, t) < 0) {
					e.failed = 1;
					break;
				}
			}
			v->producer = NULL;
			x->outputs[k] = t;
			t->producer = x;
		}
		if (ir_graph_insert_node(g, x, e.pos) < 0) {
			ir_node_free(x);
			e.failed = 1;
			break;
		}
		e.pos++;
		e.n_emitted++;
	}
	rc = rw_end(&e, 0);
done:
	vmap_release(&vm);
	return rc;
}

static int run_if(struct rw_ctx *c, size_t *changed)
{
	struct ir_graph *g = c->m->graph;
	int rc = 0;

	*changed = 0;
	for (size_t i = 0; i < g->n_nodes && rc >= 0; i++) {
		struct ir_node *n = g->nodes[i];
		int64_t v[1];
		size_t k;

		if (strcmp(ir_s(n->op_type), "If") || (n->domain && *n->domain &&
						       strcmp(n->domain, "ai.onnx")) ||
		    !n->n_inputs || !rw_const_ints(c, n->inputs[0], v, 1, &k) || k != 1)
			continue;
		if ((rc = inline_if(c, n, v[0] != 0)) == 0) {
			(*changed)++;
			i = (size_t)-1;
		} else if (rc > 0) {
			rc = 0;
		}
	}
	return rc;
}

const struct rw_pass rw_pass_if_const = {
	.name = "if-const",
	.summary = "replace an If with a constant condition by the branch it takes",
	.kind = RW_CANON,
	.run = run_if,
};
