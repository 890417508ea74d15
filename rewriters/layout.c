/* layout.c: layout passes.
 *   nhwc-io (--layout nhwc)  the model's 4-D float inputs and outputs
 *       become NHWC: a Transpose after each such input (to the NCHW the
 *       convolutions need) and before each such output, so every Transpose
 *       sits at the boundary; the name map records each interface change
 *       (perm) so that validate feeds and compares the right layouts.  An
 *       input whose only reader already transposes NHWC to NCHW is left
 *       alone (it is NHWC already).
 *   cancel-transposes  a Transpose of a Transpose read by nothing else
 *       becomes one Transpose of the composed permutation, or nothing when
 *       that is the identity. */
#include <stdio.h>
#include <string.h>

#include "rewriters/rw_int.h"

static const int64_t to_nchw[4] = { 0, 3, 1, 2 };
static const int64_t to_nhwc[4] = { 0, 2, 3, 1 };

static int is_4d_float(const struct ir_type *t)
{
	return t && t->kind == IR_TYPE_TENSOR && t->shape.n_dims == 4 &&
	       rw_dtype_is_float(t->elem_type);
}

static void permute_dims(struct ir_type *t, const int64_t *perm)
{
	struct ir_dim d[4];

	memcpy(d, t->shape.dims, sizeof(d));
	for (int i = 0; i < 4; i++)
		t->shape.dims[i] = d[perm[i]];
}

static int already_nhwc(const struct ir_value *v)
{
	const int64_t *p;
	size_t k;

	if (v->n_uses != 1 || strcmp(ir_s(v->uses[0]->op_type), "Transpose"))
		return 0;
	p = rw_attr_ints(v->uses[0], "perm", &k);
	return p && k == 4 && !memcmp(p, to_nchw, sizeof(to_nchw));
}

static struct ir_node *transpose(struct ir_graph *g, struct ir_value *in,
				 struct ir_value *out, const int64_t *perm, size_t pos,
				 const char *why)
{
	char name[300];
	struct ir_node *n;

	snprintf(name, sizeof(name), "%s/%s", ir_s(out->name), why);
	if (!(n = ir_node_create("Transpose", NULL, name)) ||
	    ir_node_append_input(n, in) < 0 || ir_node_append_output(n, out) < 0 ||
	    ir_node_set_ints(n, "perm", perm, 4) < 0 ||
	    !(n->doc = strdup("opmig: nhwc-io")) || ir_graph_insert_node(g, n, pos) < 0) {
		if (n)
			ir_node_free(n);
		return NULL;
	}
	return n;
}

static int input_nhwc(struct rw_ctx *c, struct ir_vinfo *vi, size_t *changed)
{
	struct ir_graph *g = c->m->graph;
	struct ir_value *v = vi->value, *inner;
	char hint[300];
	int perm[4] = { 0, 2, 3, 1 };

	if (v->init || !is_4d_float(vi->type) || already_nhwc(v))
		return 0;
	snprintf(hint, sizeof(hint), "%s/nchw", ir_s(v->name));
	if (!(inner = ir_graph_new_value(g, hint)) || ir_value_replace_uses(v, inner) < 0 ||
	    !transpose(g, v, inner, to_nchw, 0, "to_nchw"))
		return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	permute_dims(vi->type, to_nhwc);
	if (v->type && v->type != vi->type)
		permute_dims((struct ir_type *)v->type, to_nhwc);
	(*changed)++;
	return val_map_add(&c->map, VAL_MAP_INPUT, ir_s(v->name), ir_s(v->name), perm, 4, 0,
			   c->d);
}

static int output_nhwc(struct rw_ctx *c, struct ir_vinfo *vi, size_t *changed)
{
	struct ir_graph *g = c->m->graph;
	struct ir_value *y = vi->value, *inner;
	struct ir_node *p = y->producer;
	char hint[300];
	int perm[4] = { 0, 2, 3, 1 };

	if (!p || y->is_input || !is_4d_float(vi->type))
		return 0;
	snprintf(hint, sizeof(hint), "%s/nchw", ir_s(y->name));
	if (!(inner = ir_graph_new_value(g, hint)))
		return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	/* the producer writes the NCHW value; readers of y read it too */
	for (size_t i = 0; i < p->n_outputs; i++)
		if (p->outputs[i] == y) {
			p->outputs[i] = inner;
			inner->producer = p;
		}
	y->producer = NULL;
	while (y->n_uses)
		if (ir_node_set_input(y->uses[0], 0, inner) < 0)   /* fixed below */
			return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	if (!transpose(g, inner, y, to_nhwc, p->index + 1, "to_nhwc"))
		return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
	ir_graph_drop_value_info(g, y);
	permute_dims(vi->type, to_nhwc);
	(*changed)++;
	return val_map_add(&c->map, VAL_MAP_OUTPUT, ir_s(y->name), ir_s(y->name), perm, 4, 0,
			   c->d);
}

static int run_nhwc(struct rw_ctx *c, size_t *changed)
{
	struct ir_graph *g = c->m->graph;
	int rc = 0;

	*changed = 0;
	for (size_t i = 0; i < g->n_inputs && rc >= 0; i++)
		rc = input_nhwc(c, &g->inputs[i], changed);
	for (size_t i = 0; i < g->n_outputs && rc >= 0; i++)
		rc = output_nhwc(c, &g->outputs[i], changed);
	return rc < 0 ? rc : 0;
}

const struct rw_pass rw_pass_nhwc_io = {
	.name = "nhwc-io",
	.summary = "make 4-D float graph inputs and outputs NHWC with Transposes at the boundary",
	.kind = RW_LAYOUT,
	.run = run_nhwc,
};

/* ---- cancel-transposes --------------------------------------------------- */

static int cancel_one(struct rw_ctx *c, struct ir_graph *g, struct ir_node *t2)
{
	struct ir_value *mid = t2->inputs[0], *y = t2->outputs[0], *x;
	struct ir_node *t1 = mid ? mid->producer : NULL;
	const int64_t *p1, *p2;
	int64_t comp[16];
	size_t k1, k2;
	int ident = 1;

	if (!t1 || t1->graph != g || strcmp(ir_s(t1->op_type), "Transpose") ||
	    mid->n_uses != 1 || ir_graph_is_output(g, mid) || !(p1 = rw_attr_ints(t1, "perm", &k1)) ||
	    !(p2 = rw_attr_ints(t2, "perm", &k2)) || k1 != k2 || k1 > 16)
		return 0;
	x = t1->inputs[0];
	for (size_t i = 0; i < k2; i++) {
		if (p2[i] < 0 || (size_t)p2[i] >= k1)
			return 0;
		comp[i] = p1[p2[i]];
		ident &= comp[i] == (int64_t)i;
	}
	if (!ident) {       /* one Transpose: t2 reads x with the composed perm */
		if (ir_node_set_input(t2, 0, x) < 0 || ir_node_set_ints(t2, "perm", comp, k2) < 0)
			return IR_ENOMEM;
		ir_graph_remove_node(g, t1);
		return 1;
	}
	if (ir_graph_is_output(g, y) && (ir_graph_is_output(g, x) || x->is_input || x->init || !x->producer))
		return 0;          /* y must keep its name and be produced */
	ir_graph_remove_node(g, t2);
	if (!ir_graph_is_output(g, y)) {
		ir_graph_remove_node(g, t1);
		return ir_value_replace_uses(y, x) < 0 ? IR_ENOMEM : 1;
	}
	/* y is a graph output: x's producer writes y */
	ir_graph_remove_node(g, t1);
	if (ir_value_replace_uses(x, y) < 0)
		return IR_ENOMEM;
	for (size_t i = 0; i < x->producer->n_outputs; i++)
		if (x->producer->outputs[i] == x) {
			x->producer->outputs[i] = y;
			y->producer = x->producer;
		}
	x->producer = NULL;
	(void)c;
	return 1;
}

static int run_cancel(struct rw_ctx *c, size_t *changed)
{
	struct ir_graph *g = c->m->graph;

	*changed = 0;
	for (size_t i = 0; i < g->n_nodes; i++) {
		int rc;

		if (strcmp(ir_s(g->nodes[i]->op_type), "Transpose") || !g->nodes[i]->n_inputs)
			continue;
		if ((rc = cancel_one(c, g, g->nodes[i])) < 0)
			return ir_diag_error(c->d, IR_ENOMEM, "out of memory");
		if (rc) {
			(*changed)++;
			i = (size_t)-1;
		}
	}
	return 0;
}

const struct rw_pass rw_pass_cancel_transposes = {
	.name = "cancel-transposes",
	.summary = "merge a Transpose of a Transpose into one, or remove both when they cancel",
	.kind = RW_CANON,
	.run = run_cancel,
};
