/* build.c: the helpers passes emit replacement nodes with (see rw_int.h):
 * naming and placement, provenance, constants, opset-aware builders,
 * attribute and constant readers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/rw_int.h"
#include "runtime/runtime.h"

int rw_begin(struct rw_ctx *c, struct ir_node *n, struct rw_emit *e)
{
	memset(e, 0, sizeof(*e));
	e->c = c;
	e->g = n->graph;
	e->origin = n;
	e->pos = n->index;
	e->dtype = rw_node_dtype(c, n);
	if (n->name && *n->name)
		snprintf(e->base, sizeof(e->base), "%.120s", n->name);
	else
		snprintf(e->base, sizeof(e->base), "%.60s_%zu", ir_s(n->op_type), n->index);
	ir_graph_detach_node(e->g, n);
	return 0;
}

static int log_push(struct rw_ctx *c, const struct ir_node *n, size_t emitted, size_t at)
{
	struct rw_log_entry *e;
	char label[32];

	if (c->n_log == c->cap_log) {
		size_t cap = c->cap_log ? c->cap_log * 2 : 16;
		struct rw_log_entry *q = realloc(c->log, cap * sizeof(*q));

		if (!q)
			return IR_ENOMEM;
		c->log = q;
		c->cap_log = cap;
	}
	e = &c->log[c->n_log];
	memset(e, 0, sizeof(*e));
	e->pass = c->pass;
	e->variant = c->variant;
	e->n_emitted = emitted;
	e->parent = c->pass && *ir_s(n->op_type) ? c->parent : -1;
	/* an unnamed node as the scanner labels it, by its position */
	snprintf(label, sizeof(label), "#%zu", at);
	if (!(e->node = strdup(n->name && *n->name ? n->name : *ir_s(n->op_type) ? label : "")) ||
	    !(e->op = strdup(ir_s(n->op_type)))) {
		free(e->node);
		return IR_ENOMEM;
	}
	c->n_log++;
	return 0;
}

int rw_log_graph(struct rw_ctx *c, size_t changed)
{
	static const struct ir_node none = { .op_type = (char *)"" };

	return log_push(c, &none, changed, 0);
}

int rw_end(struct rw_emit *e, int rc)
{
	if (rc == 0 && e->failed)
		rc = ir_diag_error(e->c->d, IR_ENOMEM, "out of memory while rewriting");
	if (rc == 0 && log_push(e->c, e->origin, e->n_emitted, e->pos - e->n_emitted) < 0)
		rc = ir_diag_error(e->c->d, IR_ENOMEM, "out of memory");
	/* the nodes made were placed one after the other, before e->pos */
	for (size_t i = e->pos - e->n_emitted; rc == 0 && i < e->pos && i < e->g->n_nodes; i++)
		if (rw_prov_add(e->c, e->g->nodes[i]->name, (long)e->c->n_log - 1) < 0)
			rc = ir_diag_error(e->c->d, IR_ENOMEM, "out of memory");
	ir_node_free(e->origin);
	e->origin = NULL;
	return rc;
}

static struct ir_value *fresh(struct rw_emit *e, const char *what)
{
	char hint[256];

	snprintf(hint, sizeof(hint), "%s/%s_%d", e->base, what, e->k++);
	return ir_graph_new_value(e->g, hint);
}

struct ir_node *rw_node(struct rw_emit *e, const char *op, const char *domain,
			struct ir_value *const *in, size_t n_in,
			struct ir_value *out)
{
	char name[256], doc[400];
	struct ir_node *n;

	if (e->failed)
		return NULL;
	snprintf(name, sizeof(name), "%s/%s_%d", e->base, op, e->k++);
	snprintf(doc, sizeof(doc), "opmig: %s from %s (%s)", e->c->pass ? e->c->pass : "?",
		 e->origin && e->origin->name && *e->origin->name ? e->origin->name : e->base,
		 e->origin ? ir_s(e->origin->op_type) : "?");
	if (!out)
		out = fresh(e, op);
	if (!out || !(n = ir_node_create(op, domain, name))) {
		e->failed = 1;
		return NULL;
	}
	if (!(n->doc = strdup(doc)))
		goto fail;
	for (size_t i = 0; i < n_in; i++)
		if (ir_node_append_input(n, in[i]) < 0)
			goto fail;
	if (ir_node_append_output(n, out) < 0 || ir_graph_insert_node(e->g, n, e->pos) < 0)
		goto fail;
	e->pos++;
	e->n_emitted++;
	return n;
fail:
	for (size_t i = 0; i < n->n_inputs; i++)
		ir_value_remove_use(n->inputs[i], n);
	if (out->producer == n)
		out->producer = NULL;
	ir_node_free(n);
	e->failed = 1;
	return NULL;
}

struct ir_value *rw_op_to(struct rw_emit *e, const char *op, struct ir_value *a,
			  struct ir_value *b, struct ir_value *out)
{
	struct ir_value *in[2] = { a, b };
	struct ir_node *n = rw_node(e, op, NULL, in, b ? 2 : 1, out);

	return n ? n->outputs[0] : NULL;
}

struct ir_value *rw_op(struct rw_emit *e, const char *op, struct ir_value *a,
		       struct ir_value *b)
{
	return rw_op_to(e, op, a, b, NULL);
}

struct ir_value *rw_const(struct rw_emit *e, int dtype, int rank,
			  const int64_t *dims, const double *v)
{
	struct rt_value *t = NULL;
	struct ir_value *out;
	struct ir_diag d;

	if (e->failed)
		return NULL;
	ir_diag_init(&d);
	if (rt_tensor_new(NULL, dtype ? dtype : IR_DTYPE_FLOAT, rank, dims, &t, &d) < 0) {
		e->failed = 1;
		return NULL;
	}
	for (int64_t i = 0; i < t->numel; i++)
		rt_value_set_f64(t, i, v[i]);
	out = rw_const_value(e, t);   /* named and added there */
	rt_value_unref(t);
	return out;
}

struct ir_value *rw_scalar(struct rw_emit *e, int dtype, double v)
{
	return rw_const(e, dtype, 0, NULL, &v);
}

struct ir_value *rw_ints(struct rw_emit *e, const int64_t *v, size_t n)
{
	int64_t dims[1] = { (int64_t)n };
	char name[256];
	struct ir_tensor *t;
	struct ir_value *out;

	if (e->failed)
		return NULL;
	snprintf(name, sizeof(name), "%s/ints_%d", e->base, e->k++);
	if (!(t = ir_tensor_new_raw(name, IR_DTYPE_INT64, dims, 1, v, n * sizeof(*v))) ||
	    !(out = ir_graph_add_initializer(e->g, t))) {
		e->failed = 1;
		return NULL;
	}
	return out;
}

/* Squeeze/Unsqueeze take axes as an attribute before 13, an input from 13. */
static struct ir_value *axes_op(struct rw_emit *e, const char *op,
				struct ir_value *x, const int64_t *axes, size_t n)
{
	struct ir_node *node;

	if (e->c->opset >= 13) {
		struct ir_value *in[2] = { x, rw_ints(e, axes, n) };

		node = rw_node(e, op, NULL, in, 2, NULL);
	} else {
		node = rw_node(e, op, NULL, &x, 1, NULL);
		if (node && ir_node_set_ints(node, "axes", axes, n) < 0)
			e->failed = 1;
	}
	return node ? node->outputs[0] : NULL;
}

struct ir_value *rw_unsqueeze(struct rw_emit *e, struct ir_value *x,
			      const int64_t *axes, size_t n)
{
	return axes_op(e, "Unsqueeze", x, axes, n);
}

struct ir_value *rw_squeeze(struct rw_emit *e, struct ir_value *x,
			    const int64_t *axes, size_t n)
{
	return axes_op(e, "Squeeze", x, axes, n);
}

/* ReduceSum takes axes as an input from 13, the other reductions from 18. */
struct ir_value *rw_reduce(struct rw_emit *e, const char *op, struct ir_value *x,
			   const int64_t *axes, size_t n, int keepdims,
			   struct ir_value *out)
{
	int as_input = e->c->opset >= (strcmp(op, "ReduceSum") ? 18 : 13);
	struct ir_node *node;

	if (as_input) {
		struct ir_value *in[2] = { x, rw_ints(e, axes, n) };

		node = rw_node(e, op, NULL, in, 2, out);
	} else {
		node = rw_node(e, op, NULL, &x, 1, out);
		if (node && ir_node_set_ints(node, "axes", axes, n) < 0)
			e->failed = 1;
	}
	if (node && ir_node_set_int(node, "keepdims", keepdims) < 0)
		e->failed = 1;
	return node ? node->outputs[0] : NULL;
}

struct ir_value *rw_clip(struct rw_emit *e, struct ir_value *x, double lo,
			 double hi, struct ir_value *out)
{
	struct ir_node *node;

	if (e->c->opset >= 11) {
		struct ir_value *in[3] = { x, rw_scalar(e, e->dtype, lo),
					   rw_scalar(e, e->dtype, hi) };

		node = rw_node(e, "Clip", NULL, in, 3, out);
	} else {
		node = rw_node(e, "Clip", NULL, &x, 1, out);
		if (node && (ir_node_set_float(node, "min", (float)lo) < 0 ||
			     ir_node_set_float(node, "max", (float)hi) < 0))
			e->failed = 1;
	}
	return node ? node->outputs[0] : NULL;
}

/* Slice takes starts, ends, axes (and steps) as inputs from 10,
 * attributes before (no steps). */
struct ir_value *rw_slice(struct rw_emit *e, struct ir_value *x, const int64_t *starts,
			  const int64_t *ends, const int64_t *axes, const int64_t *steps,
			  size_t n, struct ir_value *out)
{
	struct ir_node *node;

	if (e->c->opset >= 10) {
		struct ir_value *in[5] = { x, rw_ints(e, starts, n), rw_ints(e, ends, n),
					   rw_ints(e, axes, n), steps ? rw_ints(e, steps, n) : NULL };

		node = rw_node(e, "Slice", NULL, in, steps ? 5 : 4, out);
	} else {
		node = rw_node(e, "Slice", NULL, &x, 1, out);
		if (node && (ir_node_set_ints(node, "starts", starts, n) < 0 ||
			     ir_node_set_ints(node, "ends", ends, n) < 0 ||
			     ir_node_set_ints(node, "axes", axes, n) < 0))
			e->failed = 1;
	}
	return node ? node->outputs[0] : NULL;
}

/* Pad takes pads as an input from 11, the attribute "pads" from 2 and
 * "paddings" in 1; the mode is constant (0). */
struct ir_value *rw_pad(struct rw_emit *e, struct ir_value *x, const int64_t *pads,
			size_t rank, struct ir_value *out)
{
	struct ir_node *node;

	if (e->c->opset >= 11) {
		struct ir_value *in[2] = { x, rw_ints(e, pads, 2 * rank) };

		node = rw_node(e, "Pad", NULL, in, 2, out);
	} else {
		node = rw_node(e, "Pad", NULL, &x, 1, out);
		if (node && ir_node_set_ints(node, e->c->opset >= 2 ? "pads" : "paddings", pads,
					     2 * rank) < 0)
			e->failed = 1;
	}
	return node ? node->outputs[0] : NULL;
}

/* Reshape takes the shape as an input from 5, the attribute before. */
struct ir_value *rw_reshape(struct rw_emit *e, struct ir_value *x, const int64_t *shape,
			    size_t n, struct ir_value *out)
{
	struct ir_node *node;

	if (e->c->opset >= 5)
		return rw_op_to(e, "Reshape", x, rw_ints(e, shape, n), out);
	node = rw_node(e, "Reshape", NULL, &x, 1, out);
	if (node && ir_node_set_ints(node, "shape", shape, n) < 0)
		e->failed = 1;
	return node ? node->outputs[0] : NULL;
}

/* Transpose with perm. */
struct ir_value *rw_transpose(struct rw_emit *e, struct ir_value *x, const int64_t *perm,
			      size_t n, struct ir_value *out)
{
	struct ir_node *node = rw_node(e, "Transpose", NULL, &x, 1, out);

	if (node && ir_node_set_ints(node, "perm", perm, n) < 0)
		e->failed = 1;
	return node ? node->outputs[0] : NULL;
}

/* ---- reading nodes --------------------------------------------------- */

int64_t rw_attr_int(const struct ir_node *n, const char *name, int64_t dflt)
{
	const struct ir_attr *a = ir_node_attr(n, name);

	return a && a->type == IR_ATTR_INT ? a->i : dflt;
}

float rw_attr_float(const struct ir_node *n, const char *name, float dflt)
{
	const struct ir_attr *a = ir_node_attr(n, name);

	return a && a->type == IR_ATTR_FLOAT ? a->f : dflt;
}

const char *rw_attr_str(const struct ir_node *n, const char *name, const char *dflt)
{
	const struct ir_attr *a = ir_node_attr(n, name);

	return a && a->type == IR_ATTR_STRING && a->s ? (const char *)a->s : dflt;
}

const int64_t *rw_attr_ints(const struct ir_node *n, const char *name, size_t *k)
{
	const struct ir_attr *a = ir_node_attr(n, name);

	*k = 0;
	if (!a || a->type != IR_ATTR_INTS)
		return NULL;
	*k = a->n_ints;
	return a->ints;
}

const float *rw_attr_floats(const struct ir_node *n, const char *name, size_t *k)
{
	const struct ir_attr *a = ir_node_attr(n, name);

	*k = a && a->type == IR_ATTR_FLOATS ? a->n_floats : 0;
	return *k ? a->floats : NULL;
}

int rw_const_ints(const struct rw_ctx *c, const struct ir_value *v,
		  int64_t *out, size_t cap, size_t *n)
{
	const struct ir_vtype *t = v ? rw_type(c, v) : NULL;

	*n = 0;
	if (!t || !t->has_const || t->n_const > cap)
		return 0;
	for (size_t i = 0; i < t->n_const; i++) {
		if (t->cval[i].kind != IR_VDIM_VALUE)
			return 0;
		out[i] = t->cval[i].value;
	}
	*n = t->n_const;
	return 1;
}

int rw_const_double(const struct rw_ctx *c, const struct ir_value *v, double *out)
{
	const struct ir_vtype *t = v ? rw_type(c, v) : NULL;

	if (!t)
		return 0;
	if (t->has_fconst && t->n_fconst == 1) {
		*out = t->fval[0];
		return 1;
	}
	if (t->has_const && t->n_const == 1 && t->cval[0].kind == IR_VDIM_VALUE) {
		*out = (double)t->cval[0].value;
		return 1;
	}
	return 0;
}

int rw_is_const(const struct rw_ctx *c, const struct ir_value *v)
{
	const struct ir_vtype *t;

	if (!v)
		return 0;
	if (v->init || (v->producer && !strcmp(ir_s(v->producer->op_type), "Constant")))
		return 1;
	t = rw_type(c, v);
	return t && (t->has_const || t->has_fconst);
}

int rw_rank(const struct rw_ctx *c, const struct ir_value *v)
{
	const struct ir_vtype *t = v ? rw_type(c, v) : NULL;

	return t ? t->rank : -1;
}
