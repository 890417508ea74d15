/* k_train_grad.c: the Gradient operator (ai.onnx.preview.training) by
 * reverse-mode differentiation of the nodes between xs (and zs) and y in
 * the Gradient node's own graph.  The forward pass is recomputed here in
 * double precision from the node's inputs (xs then zs) and the graph's
 * initializers; the output gradient of y is all ones (the gradient of the
 * sum of y).  Differentiable ops: the table g_ops (elementwise with numpy
 * broadcasting, and 2-D MatMul); any other op on the path is a precise
 * error. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_train_int.h"

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

/* The differentiable ops, sorted by name: y = f(a[, b]) elementwise
 * with numpy broadcasting, and d(a, b, y) giving dy/da and dy/db; or
 * MatMul of two 2-D operands. */
enum { G_UNARY, G_BINARY, G_MATMUL };

struct g_op {
	const char *name;
	int kind;
	double (*f)(double a, double b);
	void (*d)(double a, double b, double y, double *da, double *db);
};

static double f_abs(double a, double b) { (void)b; return fabs(a); }
static double f_add(double a, double b) { return a + b; }
static double f_cos(double a, double b) { (void)b; return cos(a); }
static double f_div(double a, double b) { return a / b; }
static double f_exp(double a, double b) { (void)b; return exp(a); }
static double f_id(double a, double b) { (void)b; return a; }
static double f_log(double a, double b) { (void)b; return log(a); }
static double f_mul(double a, double b) { return a * b; }
static double f_neg(double a, double b) { (void)b; return -a; }
static double f_pow(double a, double b) { return pow(a, b); }
static double f_relu(double a, double b) { (void)b; return a > 0 ? a : 0; }
static double f_sigmoid(double a, double b) { (void)b; return 1 / (1 + exp(-a)); }
static double f_sin(double a, double b) { (void)b; return sin(a); }
static double f_sqrt(double a, double b) { (void)b; return sqrt(a); }
static double f_sub(double a, double b) { return a - b; }
static double f_tanh(double a, double b) { (void)b; return tanh(a); }

#define D(name) static void name(double a, double b, double y, double *da, double *db)
D(d_abs) { (void)b; (void)y; (void)db; *da = a > 0 ? 1 : a < 0 ? -1 : 0; }
D(d_add) { (void)a; (void)b; (void)y; *da = 1; *db = 1; }
D(d_cos) { (void)b; (void)y; (void)db; *da = -sin(a); }
D(d_div) { (void)y; *da = 1 / b; *db = -a / (b * b); }
D(d_exp) { (void)a; (void)b; (void)db; *da = y; }
D(d_id) { (void)a; (void)b; (void)y; (void)db; *da = 1; }
D(d_log) { (void)b; (void)y; (void)db; *da = 1 / a; }
D(d_mul) { (void)y; *da = b; *db = a; }
D(d_neg) { (void)a; (void)b; (void)y; (void)db; *da = -1; }
D(d_pow) { *da = b * pow(a, b - 1); *db = a > 0 ? y * log(a) : 0; }
D(d_relu) { (void)b; (void)y; (void)db; *da = a > 0 ? 1 : 0; }
D(d_sigmoid) { (void)a; (void)b; (void)db; *da = y * (1 - y); }
D(d_sin) { (void)b; (void)y; (void)db; *da = cos(a); }
D(d_sqrt) { (void)a; (void)b; (void)db; *da = 0.5 / y; }
D(d_sub) { (void)a; (void)b; (void)y; *da = 1; *db = -1; }
D(d_tanh) { (void)a; (void)b; (void)db; *da = 1 - y * y; }
#undef D

static const struct g_op g_ops[] = {
	{ "Abs", G_UNARY, f_abs, d_abs },
	{ "Add", G_BINARY, f_add, d_add },
	{ "Cos", G_UNARY, f_cos, d_cos },
	{ "Div", G_BINARY, f_div, d_div },
	{ "Exp", G_UNARY, f_exp, d_exp },
	{ "Identity", G_UNARY, f_id, d_id },
	{ "Log", G_UNARY, f_log, d_log },
	{ "MatMul", G_MATMUL, NULL, NULL },
	{ "Mul", G_BINARY, f_mul, d_mul },
	{ "Neg", G_UNARY, f_neg, d_neg },
	{ "Pow", G_BINARY, f_pow, d_pow },
	{ "Relu", G_UNARY, f_relu, d_relu },
	{ "Sigmoid", G_UNARY, f_sigmoid, d_sigmoid },
	{ "Sin", G_UNARY, f_sin, d_sin },
	{ "Sqrt", G_UNARY, f_sqrt, d_sqrt },
	{ "Sub", G_BINARY, f_sub, d_sub },
	{ "Tanh", G_UNARY, f_tanh, d_tanh },
};

static int cmp_op(const void *key, const void *e)
{
	return strcmp(key, ((const struct g_op *)e)->name);
}

static const struct g_op *g_op_find(const char *name)
{
	return bsearch(name, g_ops, sizeof(g_ops) / sizeof(g_ops[0]), sizeof(g_ops[0]), cmp_op);
}

/* Forward of node n (inputs already known); records its output. */
static int g_forward(struct gctx *c, const struct ir_node *n)
{
	const char *op = ir_s(n->op_type);
	const struct g_op *o = g_op_find(op);
	struct gt *a, *b = NULL, *y;
	int64_t dims[RT_MAX_RANK];
	int rank;

	if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx"))
		return rt_err(c->k, "cannot differentiate %s:%s (node '%s')", n->domain, op,
			      ir_s(n->name));
	if (!o)
		return rt_err(c->k, "cannot differentiate %s (node '%s'): supported are Abs, Add, Cos, Div, Exp, Identity, Log, MatMul (2-D), Mul, Neg, Pow, Relu, Sigmoid, Sin, Sqrt, Sub, Tanh",
			      op, ir_s(n->name));
	if (n->n_outputs < 1 || !n->outputs[0] || n->n_inputs < (o->kind == G_UNARY ? 1u : 2u))
		return rt_err(c->k, "node '%s' (%s) lacks inputs or outputs", ir_s(n->name), op);
	a = g_find(c, n->inputs[0]);
	if (o->kind != G_UNARY)
		b = g_find(c, n->inputs[1]);
	if (!a || (o->kind != G_UNARY && !b))
		return rt_err(c->k, "node '%s' (%s): an input is not computable from xs and zs",
			      ir_s(n->name), op);
	rank = a->rank;
	memcpy(dims, a->dims, sizeof(dims));
	if (o->kind == G_MATMUL) {
		if (a->rank != 2 || b->rank != 2 || a->dims[1] != b->dims[0])
			return rt_err(c->k, "node '%s' (MatMul): only 2-D [m,k] x [k,n] is differentiated",
				      ir_s(n->name));
		dims[1] = b->dims[1];
	} else if (b) {
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
	if (o->kind == G_MATMUL) {
		int64_t m = a->dims[0], kk = a->dims[1], nn = b->dims[1];

		for (int64_t i = 0; i < m; i++)
			for (int64_t j = 0; j < nn; j++) {
				double acc = 0;

				for (int64_t l = 0; l < kk; l++)
					acc += a->x[i * kk + l] * b->x[l * nn + j];
				y->x[i * nn + j] = acc;
			}
		return 0;
	}
	for (int64_t i = 0; i < y->n; i++) {
		double u = a->x[bidx(i, rank, dims, a->rank, a->dims)];

		y->x[i] = o->f(u, b ? b->x[bidx(i, rank, dims, b->rank, b->dims)] : 0);
	}
	return 0;
}

static int g_backward(struct gctx *c, const struct ir_node *n)
{
	const struct g_op *o = g_op_find(ir_s(n->op_type));
	struct gt *y = g_find(c, n->outputs[0]), *a, *b = NULL;
	int rc;

	if (!y || !y->g)
		return 0;            /* does not reach y */
	a = g_find(c, n->inputs[0]);
	if ((rc = g_grad(c, a)) < 0)
		return rc;
	if (o->kind != G_UNARY) {
		b = g_find(c, n->inputs[1]);
		if ((rc = g_grad(c, b)) < 0)
			return rc;
	}
	if (o->kind == G_MATMUL) {
		/* dA = dY B^T, dB = A^T dY */
		int64_t m = a->dims[0], kk = a->dims[1], nn = b->dims[1];

		for (int64_t i = 0; i < m; i++)
			for (int64_t j = 0; j < nn; j++)
				for (int64_t l = 0; l < kk; l++) {
					a->g[i * kk + l] += y->g[i * nn + j] * b->x[l * nn + j];
					b->g[l * nn + j] += a->x[i * kk + l] * y->g[i * nn + j];
				}
		return 0;
	}
	for (int64_t i = 0; i < y->n; i++) {
		int64_t ia = bidx(i, y->rank, y->dims, a->rank, a->dims);
		int64_t ib = b ? bidx(i, y->rank, y->dims, b->rank, b->dims) : 0;
		double da = 0, db = 0;

		o->d(a->x[ia], b ? b->x[ib] : 0, y->x[i], &da, &db);
		a->g[ia] += y->g[i] * da;
		if (b)
			b->g[ib] += y->g[i] * db;
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
