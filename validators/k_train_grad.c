/* k_train_grad.c: the Gradient operator (ai.onnx.preview.training) by
 * reverse-mode differentiation of the nodes between xs (and zs) and y in
 * the Gradient node's own graph.  The forward pass is recomputed here in
 * double precision from the node's inputs (xs then zs) and the graph's
 * initializers; the output gradient of y is all ones (the gradient of the
 * sum of y).  Differentiable ops: Add, Sub, Mul, Div, Neg, Identity, Relu,
 * Sigmoid, Tanh, Exp, Log, Sqrt, with numpy broadcasting; any other op on
 * the path is a precise error. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "validators/k_train_int.h"

struct gt {
	const struct ir_value *v;
	int rank;
	int64_t dims[RT_MAX_RANK];
	int64_t n;
	double *x;        /* forward value */
	double *g;        /* accumulated gradient, NULL until reached */
};

struct gctx {
	struct rt_kctx *k;
	size_t n, cap;
	struct gt *t;
};

static struct gt *g_find(struct gctx *c, const struct ir_value *v)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->t[i].v == v)
			return &c->t[i];
	return NULL;
}

static struct gt *g_add(struct gctx *c, const struct ir_value *v, int rank,
			const int64_t *dims)
{
	struct gt *t;

	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		struct gt *p = realloc(c->t, cap * sizeof(*p));

		if (!p)
			return NULL;
		c->t = p;
		c->cap = cap;
	}
	t = &c->t[c->n];
	memset(t, 0, sizeof(*t));
	t->v = v;
	t->rank = rank;
	memcpy(t->dims, dims, (size_t)rank * sizeof(*dims));
	t->n = rt_numel(rank, dims);
	if (!(t->x = calloc((size_t)(t->n ? t->n : 1), sizeof(double))))
		return NULL;
	c->n++;
	return t;
}

static int g_from_value(struct gctx *c, const struct ir_value *v, const struct rt_value *rv)
{
	struct gt *t;

	if (rv->kind != RT_TENSOR || !rt_dtype_size(rv->dtype) || rv->dtype == IR_DTYPE_STRING)
		return rt_err(c->k, "value '%s' is not a numeric tensor", ir_s(v->name));
	if (!(t = g_add(c, v, rv->rank, rv->dims)))
		return rt_oom(c->k);
	for (int64_t i = 0; i < t->n; i++)
		t->x[i] = rt_value_get_f64(rv, i);
	return 0;
}

/* Flat index into a tensor of (rank, dims) broadcast to (orank, odims)
 * for output flat index i. */
static int64_t bidx(int64_t i, int orank, const int64_t *odims, int rank,
		    const int64_t *dims)
{
	int64_t idx = 0, mul = 1;

	for (int d = orank - 1; d >= 0; d--) {
		int64_t c = i % odims[d];
		int id = d - (orank - rank);

		i /= odims[d];
		if (id >= 0) {
			if (dims[id] != 1)
				idx += c * mul;
			mul *= dims[id];
		}
	}
	return idx;
}

static int g_grad(struct gctx *c, struct gt *t)
{
	if (!t->g && !(t->g = calloc((size_t)(t->n ? t->n : 1), sizeof(double))))
		return rt_oom(c->k);
	return 0;
}

static int is_binary(const char *op)
{
	return !strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") ||
	       !strcmp(op, "Div");
}

static int is_unary(const char *op)
{
	static const char *const ops[] = {
		"Exp", "Identity", "Log", "Neg", "Relu", "Sigmoid", "Sqrt", "Tanh"
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(op, ops[i]))
			return 1;
	return 0;
}

static double unary_f(const char *op, double x)
{
	switch (op[0]) {
	case 'E': return exp(x);
	case 'I': return x;
	case 'L': return log(x);
	case 'N': return -x;
	case 'R': return x > 0 ? x : 0;
	case 'S': return op[1] == 'i' ? 1 / (1 + exp(-x)) : sqrt(x);
	default: return tanh(x);
	}
}

/* d f(x) / dx given x and y = f(x). */
static double unary_d(const char *op, double x, double y)
{
	switch (op[0]) {
	case 'E': return y;
	case 'I': return 1;
	case 'L': return 1 / x;
	case 'N': return -1;
	case 'R': return x > 0 ? 1 : 0;
	case 'S': return op[1] == 'i' ? y * (1 - y) : 0.5 / y;
	default: return 1 - y * y;
	}
}

/* Forward of node n (inputs already known); records its output. */
static int g_forward(struct gctx *c, const struct ir_node *n)
{
	const char *op = ir_s(n->op_type);
	struct gt *a, *b = NULL, *y;
	int64_t dims[RT_MAX_RANK];
	int rank;

	if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx"))
		return rt_err(c->k, "cannot differentiate %s:%s (node '%s')", n->domain, op,
			      ir_s(n->name));
	if (!is_binary(op) && !is_unary(op))
		return rt_err(c->k, "cannot differentiate %s (node '%s'): only Add, Sub, Mul, Div, Neg, Identity, Relu, Sigmoid, Tanh, Exp, Log, Sqrt are supported",
			      op, ir_s(n->name));
	if (n->n_outputs < 1 || !n->outputs[0] || n->n_inputs < (is_binary(op) ? 2u : 1u))
		return rt_err(c->k, "node '%s' (%s) lacks inputs or outputs", ir_s(n->name), op);
	a = g_find(c, n->inputs[0]);
	if (is_binary(op))
		b = g_find(c, n->inputs[1]);
	if (!a || (is_binary(op) && !b))
		return rt_err(c->k, "node '%s' (%s): an input is not computable from xs and zs",
			      ir_s(n->name), op);
	rank = a->rank;
	memcpy(dims, a->dims, sizeof(dims));
	if (b) {
		int r = b->rank > rank ? b->rank : rank;

		for (int d = 0; d < r; d++) {
			int ia = d - (r - a->rank), ib = d - (r - b->rank);
			int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;

			if (da != db && da != 1 && db != 1)
				return rt_err(c->k, "node '%s' (%s): shapes do not broadcast",
					      ir_s(n->name), op);
			dims[d] = da == 1 ? db : da;
		}
		rank = r;
	}
	if (!(y = g_add(c, n->outputs[0], rank, dims)))
		return rt_oom(c->k);
	a = g_find(c, n->inputs[0]);   /* g_add may have moved the table */
	b = b ? g_find(c, n->inputs[1]) : NULL;
	for (int64_t i = 0; i < y->n; i++) {
		double u = a->x[bidx(i, rank, dims, a->rank, a->dims)], v;

		if (!b) {
			y->x[i] = unary_f(op, u);
			continue;
		}
		v = b->x[bidx(i, rank, dims, b->rank, b->dims)];
		switch (op[0]) {
		case 'A': y->x[i] = u + v; break;
		case 'S': y->x[i] = u - v; break;
		case 'M': y->x[i] = u * v; break;
		default: y->x[i] = u / v; break;
		}
	}
	return 0;
}

static int g_backward(struct gctx *c, const struct ir_node *n)
{
	const char *op = ir_s(n->op_type);
	struct gt *y = g_find(c, n->outputs[0]), *a, *b = NULL;
	int rc;

	if (!y || !y->g)
		return 0;            /* does not reach y */
	a = g_find(c, n->inputs[0]);
	if ((rc = g_grad(c, a)) < 0)
		return rc;
	if (is_binary(op)) {
		b = g_find(c, n->inputs[1]);
		if ((rc = g_grad(c, b)) < 0)
			return rc;
	}
	for (int64_t i = 0; i < y->n; i++) {
		int64_t ia = bidx(i, y->rank, y->dims, a->rank, a->dims), ib;
		double u = a->x[ia], v, gy = y->g[i];

		if (!b) {
			a->g[ia] += gy * unary_d(op, u, y->x[i]);
			continue;
		}
		ib = bidx(i, y->rank, y->dims, b->rank, b->dims);
		v = b->x[ib];
		switch (op[0]) {
		case 'A': a->g[ia] += gy; b->g[ib] += gy; break;
		case 'S': a->g[ia] += gy; b->g[ib] -= gy; break;
		case 'M': a->g[ia] += gy * v; b->g[ib] += gy * u; break;
		default: a->g[ia] += gy / v; b->g[ib] -= gy * u / (v * v); break;
		}
	}
	return 0;
}

/* Mark the nodes of g needed for `v`, stopping at known values. */
static int g_need(struct gctx *c, const struct ir_value *v, char *need, int depth)
{
	const struct ir_node *p;

	if (g_find(c, v))
		return 0;
	if (depth > 10000)
		return rt_err(c->k, "graph too deep");
	if (!(p = v->producer))
		return rt_err(c->k, "value '%s' on the path to y is neither in xs nor zs", ir_s(v->name));
	if (p->graph != c->k->node->graph)
		return rt_err(c->k, "value '%s' comes from another scope", ir_s(v->name));
	if (need[p->index])
		return 0;
	if (p == c->k->node)
		return rt_err(c->k, "y depends on the Gradient node itself");
	need[p->index] = 1;
	for (size_t i = 0; i < p->n_inputs; i++) {
		int rc;

		if (p->inputs[i] && (rc = g_need(c, p->inputs[i], need, depth + 1)) < 0)
			return rc;
	}
	return 0;
}

int rt_k_gradient(struct rt_kctx *k)
{
	const struct ir_attr *xs = rt_attr(k, "xs"), *zs = rt_attr(k, "zs");
	const char *yname = rt_attr_str(k, "y", NULL);
	const struct ir_graph *g = k->node->graph;
	size_t nx, nz;
	struct gctx c = { k, 0, 0, NULL };
	const struct ir_value *yv;
	struct gt *yt;
	char *need = NULL;
	int rc;

	if (!xs || xs->type != IR_ATTR_STRINGS || !yname)
		return rt_err(k, "attributes 'xs' and 'y' are required");
	nx = xs->n_strings;
	nz = zs && zs->type == IR_ATTR_STRINGS ? zs->n_strings : 0;
	if (k->n_in != nx + nz)
		return rt_err(k, "expected %zu inputs (xs then zs), got %zu", nx + nz, k->n_in);
	if (k->node->n_outputs != nx)
		return rt_err(k, "expected %zu outputs (one per xs), got %zu", nx, k->node->n_outputs);
	if (!g || !(yv = ir_graph_lookup(g, yname)))
		return rt_err(k, "y '%s' is not a value of the graph", yname);
	for (size_t i = 0; i < nx + nz; i++) {
		const char *nm = (const char *)(i < nx ? xs->strings[i] : zs->strings[i - nx]);
		const struct ir_value *v = ir_graph_lookup(g, nm);

		if (!v) {
			rc = rt_err(k, "'%s' is not a value of the graph", nm);
			goto cleanup;
		}
		if (!rt_in(k, i)) {
			rc = rt_err(k, "input %zu ('%s') is missing", i, nm);
			goto cleanup;
		}
		if ((rc = g_from_value(&c, v, k->in[i])) < 0)
			goto cleanup;
	}
	for (size_t i = 0; i < g->n_nodes; i++)
		for (size_t j = 0; j < g->nodes[i]->n_inputs; j++) {
			const struct ir_value *v = g->nodes[i]->inputs[j];
			struct rt_value *rv;
			struct ir_diag sub;

			if (!v || !v->init || g_find(&c, v))
				continue;
			ir_diag_init(&sub);
			if ((rc = rt_value_from_ir(NULL, v->init, &rv, &sub)) < 0) {
				rc = rt_err(k, "initializer '%s': %s", ir_s(v->name), sub.msg);
				goto cleanup;
			}
			rc = g_from_value(&c, v, rv);
			rt_value_unref(rv);
			if (rc < 0)
				goto cleanup;
		}
	if (!(need = calloc(g->n_nodes + 1, 1))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	if ((rc = g_need(&c, yv, need, 0)) < 0)
		goto cleanup;
	for (size_t i = 0; i < g->n_nodes; i++)
		if (need[i] && (rc = g_forward(&c, g->nodes[i])) < 0)
			goto cleanup;
	yt = g_find(&c, yv);
	if ((rc = g_grad(&c, yt)) < 0)
		goto cleanup;
	for (int64_t i = 0; i < yt->n; i++)
		yt->g[i] = 1;
	for (size_t i = g->n_nodes; i-- > 0;)
		if (need[i] && (rc = g_backward(&c, g->nodes[i])) < 0)
			goto cleanup;
	for (size_t i = 0; i < nx; i++) {
		struct rt_value *x = k->in[i], *o;
		struct gt *t = &c.t[i];

		if (!rt_dtype_is_float(x->dtype)) {
			rc = rt_err(k, "xs '%s' must be a float tensor", ir_s(t->v->name));
			goto cleanup;
		}
		if (!(o = rt_out_tensor(k, i, x->dtype, x->rank, x->dims))) {
			rc = IR_ENOMEM;
			goto cleanup;
		}
		for (int64_t j = 0; j < t->n; j++)
			rt_store_f64(o->dtype, o->data, j, t->g ? t->g[j] : 0);
	}
	rc = 0;
cleanup:
	for (size_t i = 0; i < c.n; i++) {
		free(c.t[i].x);
		free(c.t[i].g);
	}
	free(c.t);
	free(need);
	return rc;
}
