/* dtype.c: passes "narrow-int64" and "narrow-float64" (RW_DTYPE), run when
 * the target's rules list the dtype among the ones the chip lacks.
 *
 * Main-graph values of the wide dtype are grouped by the type constraints
 * of the nodes that read and write them (Add's A, B and C share T): a
 * group is narrowed as a whole or not at all.  A group stays wide when one
 * of its values cannot be narrowed: a reader or writer whose signature at
 * the model's opset does not admit the narrow type in that place, an
 * unknown op or one with subgraphs, a value captured by a subgraph, an
 * initializer a graph input may override (IR 4 and later), and, for
 * int64, a value not
 * provably within int32: initializers are checked value by value, shape
 * values are bounded by the static dims (Shape, Size, ArgMax, TopK and
 * NonZero indices), and arithmetic on bounded values by interval
 * arithmetic; graph inputs (token ids) are assumed to fit.  A group is
 * narrowed only when some node reads it where the narrow type is taken,
 * or it reaches the graph's interface (constants read only where the
 * signature wants int64, like Reshape's shape, stay).  Places where
 * the signature fixes the wide type (Shape's output, Reshape's shape, ...)
 * keep it through a Cast next to the node (or a wide copy of a constant).
 * A narrowed graph input keeps its wide type behind a Cast when the
 * target's Cast accepts the wide type, else becomes narrow itself; narrowed
 * inputs and outputs are recorded in the name map.  Every wide tensor left
 * is reported with the reason (constants kept for their readers'
 * signatures in one note); float64 constants beyond float32's range are
 * reported too.  The helpers shared with precision.c are in dtype_util.c. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/dtype_int.h"
#include "runtime/runtime.h"

static int has_subgraph(const struct ir_node *n)
{
	for (size_t i = 0; i < n->n_attrs; i++)
		if (n->attrs[i]->g || n->attrs[i]->n_graphs)
			return 1;
	return 0;
}

/* ---- value bounds (int64) -------------------------------------------- */

struct nval {
	struct ir_value *v;
	int dtype;
	int cand;                  /* of the wide dtype */
	int parent;                /* union-find */
	int pinned;                /* cannot be narrowed: why */
	int flex;                  /* read where the narrow type is taken, or an
				    * interface value */
	int known;                 /* bounds */
	double lo, hi;
	char bwhy[200];            /* why the bounds are unknown */
	char why[240];
};

struct vkey {
	const struct ir_value *v;
	size_t i;
};

struct narrow {
	struct rw_ctx *c;
	struct ir_graph *g;
	int from, to;
	size_t n;
	struct nval *v;
	struct vkey *keys;
};

static int key_cmp(const void *a, const void *b)
{
	const struct vkey *x = a, *y = b;

	return x->v < y->v ? -1 : x->v > y->v;
}

static long vindex(const struct narrow *w, const struct ir_value *v)
{
	struct vkey k = { v, 0 }, *r;

	if (!v)
		return -1;
	r = bsearch(&k, w->keys, w->n, sizeof(k), key_cmp);
	return r ? (long)r->i : -1;
}

static void pin(struct narrow *w, long i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void pin(struct narrow *w, long i, const char *fmt, ...)
{
	va_list ap;

	if (i < 0 || w->v[i].pinned)
		return;
	w->v[i].pinned = 1;
	va_start(ap, fmt);
	vsnprintf(w->v[i].why, sizeof(w->v[i].why), fmt, ap);
	va_end(ap);
}

static void type_range(int dtype, double *lo, double *hi)
{
	switch (dtype) {
	case IR_DTYPE_BOOL: *lo = 0; *hi = 1; break;
	case IR_DTYPE_UINT8: *lo = 0; *hi = 255; break;
	case IR_DTYPE_INT8: *lo = -128; *hi = 127; break;
	case IR_DTYPE_UINT16: *lo = 0; *hi = 65535; break;
	case IR_DTYPE_INT16: *lo = -32768; *hi = 32767; break;
	case IR_DTYPE_INT32: *lo = -2147483648.0; *hi = 2147483647.0; break;
	case IR_DTYPE_UINT32: *lo = 0; *hi = 4294967295.0; break;
	default: *lo = -INFINITY; *hi = INFINITY; break;
	}
}

/* The range of an int64 payload, a piece at a time. */
struct i64_range {
	double lo, hi;
	int64_t n;
};

static int i64_range_sink(const uint8_t *data, size_t len, void *ctx)
{
	struct i64_range *r = ctx;

	for (size_t k = 0; k + sizeof(int64_t) <= len; k += sizeof(int64_t)) {
		int64_t e;

		memcpy(&e, data + k, sizeof(e));
		r->lo = fmin(r->lo, (double)e);
		r->hi = fmax(r->hi, (double)e);
		r->n++;
	}
	return 0;
}

/* Bounds of a value known before looking at its producer. */
static void bound_leaf(struct narrow *w, struct nval *x)
{
	const struct ir_vtype *t = rw_type(w->c, x->v);
	double lo, hi;

	type_range(x->dtype, &lo, &hi);
	if (isfinite(lo)) {
		x->known = 1;
		x->lo = lo;
		x->hi = hi;
	}
	if (t && t->has_const && t->n_const) {
		lo = INFINITY;
		hi = -INFINITY;
		for (size_t i = 0; i < t->n_const; i++) {
			if (t->cval[i].kind != IR_VDIM_VALUE)
				goto init;
			lo = fmin(lo, (double)t->cval[i].value);
			hi = fmax(hi, (double)t->cval[i].value);
		}
		x->known = 1;
		x->lo = lo;
		x->hi = hi;
		return;
	}
init:
	if (rw_dt_const_init(w->c, x->v) && x->dtype == IR_DTYPE_INT64) {
		/* value by value as the file gives them: a big initializer is
		 * read once in pieces, neither mapped nor held */
		struct ir_tensor *it = x->v->init;
		struct i64_range r = { INFINITY, -INFINITY, 0 };
		int64_t n = ir_tensor_numel(it);
		struct ir_diag d;

		ir_diag_init(&d);
		if (n < 0 || it->dtype != IR_DTYPE_INT64 ||
		    (n > 0 && (ir_tensor_stream(it, i64_range_sink, &r, &d) < 0 || r.n != n)))
			return;
		x->known = 1;
		x->lo = n ? r.lo : 0;
		x->hi = n ? r.hi : 0;
	}
}

enum brule { B_HULL, B_ADD, B_SUB, B_MUL, B_DIV, B_MOD, B_NEG, B_ABS, B_SIGN,
	     B_SHAPE, B_SIZE, B_INDEX, B_SUMLIKE, B_CAST, B_ZERO_HULL, B_FILL };

struct bop {
	const char *op;
	enum brule rule;
	unsigned inputs;           /* B_HULL: inputs hulled (bit i); ~0u all */
};

/* Sorted by op name (bsearch). */
static const struct bop bops[] = {
	{ "Abs", B_ABS, 0 }, { "Add", B_ADD, 0 }, { "ArgMax", B_INDEX, 0 },
	{ "ArgMin", B_INDEX, 0 }, { "Cast", B_CAST, 0 }, { "Clip", B_HULL, ~0u },
	{ "Compress", B_HULL, 1 }, { "Concat", B_HULL, ~0u },
	{ "ConstantOfShape", B_FILL, 0 },
	{ "CumSum", B_SUMLIKE, 0 }, { "DepthToSpace", B_HULL, 1 },
	{ "Div", B_DIV, 0 }, { "Expand", B_HULL, 1 }, { "Flatten", B_HULL, 1 },
	{ "Gather", B_HULL, 1 }, { "GatherElements", B_HULL, 1 },
	{ "GatherND", B_HULL, 1 }, { "Identity", B_HULL, 1 }, { "Max", B_HULL, ~0u },
	{ "Min", B_HULL, ~0u }, { "Mod", B_MOD, 0 }, { "Mul", B_MUL, 0 },
	{ "Neg", B_NEG, 0 }, { "NonZero", B_INDEX, 0 }, { "OneHot", B_HULL, 4 },
	{ "Pad", B_ZERO_HULL, 5 }, { "Range", B_HULL, 3 }, { "ReduceMax", B_HULL, 1 },
	{ "ReduceMin", B_HULL, 1 }, { "ReduceSum", B_SUMLIKE, 0 }, { "Relu", B_ZERO_HULL, 1 },
	{ "Reshape", B_HULL, 1 }, { "ScatterElements", B_HULL, 5 },
	{ "ScatterND", B_HULL, 5 }, { "Shape", B_SHAPE, 0 }, { "Sign", B_SIGN, 0 },
	{ "Size", B_SIZE, 0 }, { "Slice", B_HULL, 1 }, { "SpaceToDepth", B_HULL, 1 },
	{ "Split", B_HULL, 1 }, { "Squeeze", B_HULL, 1 }, { "Sub", B_SUB, 0 },
	{ "Tile", B_HULL, 1 }, { "TopK", B_HULL, 1 }, { "Transpose", B_HULL, 1 },
	{ "Trilu", B_ZERO_HULL, 1 }, { "Unsqueeze", B_HULL, 1 }, { "Where", B_HULL, 6 },
};

static int bop_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct bop *)elem)->op);
}

static const struct nval *in_bound(struct narrow *w, const struct ir_node *n, size_t i)
{
	long k = i < n->n_inputs ? vindex(w, n->inputs[i]) : -1;

	return k >= 0 && w->v[k].known ? &w->v[k] : NULL;
}

/* Largest static dim of a value's inferred shape (the dims in [a, b)),
 * -1 when one is not static (why says which). */
static double max_dim(struct narrow *w, const struct ir_value *v, int a, int b,
		      char *why, size_t size)
{
	const struct ir_vtype *t = v ? rw_type(w->c, v) : NULL;
	double m = 0;

	if (!t || t->rank < 0) {
		snprintf(why, size, "the rank of '%s' is unknown", v ? ir_s(v->name) : "");
		return -1;
	}
	if (b < 0 || b > t->rank)
		b = t->rank;
	for (int k = a < 0 ? 0 : a; k < b; k++) {
		if (t->dims[k].kind != IR_VDIM_VALUE) {
			snprintf(why, size, "dim %d of '%s' is dynamic (%s): make it static with --dim",
				 k, ir_s(v->name), t->dims[k].kind == IR_VDIM_PARAM ?
				 t->dims[k].param : "unknown");
			return -1;
		}
		m = fmax(m, (double)t->dims[k].value);
	}
	return m;
}

static double numel(struct narrow *w, const struct ir_value *v, char *why, size_t size)
{
	if (max_dim(w, v, 0, -1, why, size) < 0)
		return -1;
	return rw_static_numel(w->c, v);
}

/* Bounds of output k of node n from its op and its inputs' bounds. */
static void bound_node_output(struct narrow *w, const struct ir_node *n, size_t k,
			      struct nval *x)
{
	const char *op = ir_s(n->op_type);
	const struct bop *b = NULL;
	const struct nval *a0 = in_bound(w, n, 0), *a1 = in_bound(w, n, 1);
	char why[200] = "";
	double lo = INFINITY, hi = -INFINITY, m;

	if (x->known)
		return;          /* a constant inference knows, or a narrow type */
	if (!n->domain || !*n->domain || !strcmp(n->domain, "ai.onnx"))
		b = bsearch(op, bops, sizeof(bops) / sizeof(bops[0]), sizeof(bops[0]), bop_cmp);
	if (!b) {
		snprintf(x->bwhy, sizeof(x->bwhy), "computed by '%s' (%s), whose values opmig cannot bound",
			 ir_s(n->name), op);
		return;
	}
	switch (b->rule) {
	case B_ZERO_HULL:
		lo = hi = 0;
		/* fall through */
	case B_HULL:
		if (!strcmp(op, "TopK") && k == 1)
			goto index;
		for (size_t i = 0; i < n->n_inputs; i++) {
			const struct nval *e;

			if (i >= 32 || !(b->inputs & (1u << i)) || !n->inputs[i])
				continue;
			if (!(e = in_bound(w, n, i)))
				goto unknown;
			lo = fmin(lo, e->lo);
			hi = fmax(hi, e->hi);
		}
		if (lo > hi)
			goto unknown;
		break;
	case B_ADD: case B_SUB: case B_MUL:
		if (!a0 || !a1)
			goto unknown;
		if (b->rule == B_ADD) {
			lo = a0->lo + a1->lo;
			hi = a0->hi + a1->hi;
		} else if (b->rule == B_SUB) {
			lo = a0->lo - a1->hi;
			hi = a0->hi - a1->lo;
		} else {
			double p[4] = { a0->lo * a1->lo, a0->lo * a1->hi, a0->hi * a1->lo,
					a0->hi * a1->hi };

			for (int i = 0; i < 4; i++) {
				lo = fmin(lo, isnan(p[i]) ? 0 : p[i]);
				hi = fmax(hi, isnan(p[i]) ? 0 : p[i]);
			}
		}
		break;
	case B_DIV:
		if (!a0)
			goto unknown;
		m = fmax(fabs(a0->lo), fabs(a0->hi));
		lo = -m;
		hi = m;
		break;
	case B_MOD:
		if (!a1)
			goto unknown;
		m = fmax(fabs(a1->lo), fabs(a1->hi));
		lo = -m;
		hi = m;
		break;
	case B_NEG:
		if (!a0)
			goto unknown;
		lo = -a0->hi;
		hi = -a0->lo;
		break;
	case B_ABS:
		if (!a0)
			goto unknown;
		lo = 0;
		hi = fmax(fabs(a0->lo), fabs(a0->hi));
		break;
	case B_SIGN:
		lo = -1;
		hi = 1;
		break;
	case B_SHAPE:
		if ((hi = max_dim(w, n->inputs[0], (int)rw_attr_int(n, "start", 0),
				  (int)rw_attr_int(n, "end", 1 << 30), why, sizeof(why))) < 0)
			goto explained;
		lo = 0;
		break;
	case B_SIZE:
		if ((hi = numel(w, n->inputs[0], why, sizeof(why))) < 0)
			goto explained;
		lo = 0;
		break;
	case B_INDEX:
	index:
		/* indices into input 0: below its largest dim */
		if ((hi = max_dim(w, n->inputs[0], 0, -1, why, sizeof(why))) < 0)
			goto explained;
		lo = 0;
		break;
	case B_SUMLIKE:
		if (!a0)
			goto unknown;
		if ((m = numel(w, n->inputs[0], why, sizeof(why))) < 0)
			goto explained;
		lo = m * fmin(a0->lo, 0);
		hi = m * fmax(a0->hi, 0);
		break;
	case B_FILL: {
		const struct ir_attr *a = ir_node_attr(n, "value");
		struct rt_value *r = NULL;
		struct ir_diag d;

		lo = hi = 0;
		ir_diag_init(&d);
		if (a && a->t) {
			if (rt_value_from_ir(NULL, a->t, &r, &d) < 0 || r->numel != 1) {
				rt_value_unref(r);
				goto unknown;
			}
			lo = hi = rt_value_get_f64(r, 0);
			rt_value_unref(r);
		}
		break;
	}
	case B_CAST:
		if (!a0) {
			snprintf(x->bwhy, sizeof(x->bwhy), "cast by '%s' from %s values opmig cannot bound",
				 ir_s(n->name), n->inputs[0] ?
				 ir_dtype_name(rw_dt_dtype(w->c, n->inputs[0])) : "?");
			return;
		}
		lo = a0->lo;
		hi = a0->hi;
		break;
	}
	x->known = 1;
	x->lo = lo;
	x->hi = hi;
	return;
explained:
	snprintf(x->bwhy, sizeof(x->bwhy), "computed by '%.60s' (%.30s): %.100s", ir_s(n->name), op, why);
	return;
unknown:
	snprintf(x->bwhy, sizeof(x->bwhy), "computed by '%s' (%s) from values opmig cannot bound",
		 ir_s(n->name), op);
}

/* ---- narrowing --------------------------------------------------------- */

static int root(struct narrow *w, int i)
{
	while (w->v[i].parent != i) {
		w->v[i].parent = w->v[w->v[i].parent].parent;
		i = w->v[i].parent;
	}
	return i;
}

static void unite(struct narrow *w, int a, int b)
{
	a = root(w, a);
	b = root(w, b);
	if (a != b)
		w->v[b].parent = a;
}

/* Ops whose output type an attribute sets. */
static int attr_typed(const struct ir_node *n)
{
	return ir_node_attr(n, "to") || ir_node_attr(n, "dtype") || ir_node_attr(n, "value") ||
	       ir_node_attr(n, "value_int") || ir_node_attr(n, "value_ints") ||
	       !strcmp(ir_s(n->op_type), "EyeLike");
}

static int collect(struct narrow *w)
{
	struct ir_graph *g = w->g;

	if (!(w->v = calloc(g->n_values + 1, sizeof(*w->v))) ||
	    !(w->keys = calloc(g->n_values + 1, sizeof(*w->keys))))
		return ir_diag_error(w->c->d, IR_ENOMEM, "out of memory");
	w->n = g->n_values;
	for (size_t i = 0; i < w->n; i++) {
		struct nval *x = &w->v[i];

		x->v = g->value_list[i];
		x->parent = (int)i;
		x->dtype = rw_dt_dtype(w->c, x->v);
		x->cand = x->dtype == w->from;
		w->keys[i] = (struct vkey){ x->v, i };
	}
	qsort(w->keys, w->n, sizeof(*w->keys), key_cmp);
	return 0;
}

static void bounds(struct narrow *w)
{
	for (size_t i = 0; i < w->n; i++)
		bound_leaf(w, &w->v[i]);
	for (size_t i = 0; i < w->g->n_nodes; i++) {
		const struct ir_node *n = w->g->nodes[i];

		for (size_t k = 0; k < n->n_outputs; k++) {
			long j = vindex(w, n->outputs[k]);

			if (j >= 0 && w->v[j].cand)
				bound_node_output(w, n, k, &w->v[j]);
		}
	}
}

/* Group the wide values by the nodes' type constraints; pin the ones that
 * cannot change. */
static void group(struct narrow *w)
{
	const char *to = ir_dtype_name(w->to);

	for (size_t i = 0; i < w->g->n_nodes; i++) {
		const struct ir_node *n = w->g->nodes[i];
		const struct ir_op_schema *s = rw_dt_schema(w->c, n);
		const char *var[16];
		long first[16];
		size_t n_var = 0;

		for (size_t slot = 0; slot < n->n_inputs + n->n_outputs; slot++) {
			int input = slot < n->n_inputs;
			size_t k = input ? slot : slot - n->n_inputs;
			long j = vindex(w, input ? n->inputs[k] : n->outputs[k]);
			const char *type;
			size_t q;

			if (j < 0 || !w->v[j].cand)
				continue;
			if (!s) {
				pin(w, j, "%s %zu of '%s' (%s), %s", input ? "input" : "output", k,
				    ir_s(n->name), ir_s(n->op_type), has_subgraph(n) ?
				    "a node with subgraphs" : "an op whose signature opmig does not know");
				continue;
			}
			if (!(type = rw_dt_slot(s, input, k))) {
				pin(w, j, "%s %zu of '%s' (%s) is beyond its signature",
				    input ? "input" : "output", k, ir_s(n->name), ir_s(n->op_type));
				continue;
			}
			if (!rw_dt_admits(s, type, w->to) && rw_dt_admits(s, type, w->from))
				continue;    /* the wide type by signature: a Cast after
					      * the node, a wide copy before it */
			if (!rw_dt_admits(s, type, w->to)) {
				pin(w, j, "%s %zu of '%s' (%s) is %s, which admits no %s at opset %lld",
				    input ? "input" : "output", k, ir_s(n->name), ir_s(n->op_type),
				    type, to, (long long)w->c->opset);
				continue;
			}
			if (!input && !rw_dt_var_bound_by_input(s, n, type) && !attr_typed(n)) {
				pin(w, j, "output %zu of '%s' (%s) gets its type from the node, not from its inputs",
				    k, ir_s(n->name), ir_s(n->op_type));
				continue;
			}
			if (input)
				w->v[j].flex = 1;  /* a reader that takes the narrow type */
			for (q = 0; q < n_var && strcmp(var[q], type); q++)
				;
			if (q == n_var && n_var < 16) {
				var[n_var] = type;
				first[n_var++] = j;
			} else if (q < n_var) {
				unite(w, (int)first[q], (int)j);
			}
		}
	}
	for (size_t i = 0; i < w->n; i++) {
		struct nval *x = &w->v[i];

		if (!x->cand)
			continue;
		if (ir_graph_is_output(w->g, x->v) || (x->v->is_input && !x->v->init))
			x->flex = 1;
		if (rw_dt_captured(x->v))
			pin(w, (long)i, "read inside a subgraph");
		if (x->v->init && !rw_dt_const_init(w->c, x->v))
			pin(w, (long)i, "an initializer a graph input may override");
		if (w->from != IR_DTYPE_INT64 || (x->v->is_input && !x->v->init))
			continue;
		if (!x->known)
			pin(w, (long)i, "%s", x->bwhy[0] ? x->bwhy : "its values are unknown");
		else if (x->lo < -2147483648.0 || x->hi > 2147483647.0)
			pin(w, (long)i, "its values reach %.0f, beyond int32",
			    x->hi > 2147483647.0 ? x->hi : x->lo);
	}
}

/* Does the target's Cast take the wide dtype (so an input may keep it)? */
static int cast_takes(const struct rw_ctx *c, int dtype)
{
	const struct rules_op *o;

	if (!c->target)
		return 1;
	if (!(o = rules_target_find_op(c->target, "ai.onnx", "Cast")) || !o->supported)
		return 0;
	for (size_t i = 0; i < o->n_inputs; i++)
		if (o->inputs[i].index == 0 && o->inputs[i].dtypes)
			return (o->inputs[i].dtypes & RULES_DTYPE_BIT(dtype)) != 0;
	return o->dtypes && (o->dtypes & RULES_DTYPE_BIT(dtype));
}

/* Uses of v (node, input index) where the signature fixes the wide type. */
static size_t fixed_uses(struct narrow *w, struct ir_value *v, struct ir_node **un,
			 size_t *uk, size_t cap)
{
	size_t k = 0;

	for (size_t i = 0; i < v->n_uses; i++) {
		struct ir_node *u = v->uses[i];
		const struct ir_op_schema *s = rw_dt_schema(w->c, u);

		if (!s)
			continue;
		for (size_t j = 0; j < u->n_inputs && k < cap; j++) {
			const char *t = rw_dt_slot(s, 1, j);
			int seen = 0;

			for (size_t q = 0; q < k; q++)
				seen |= un[q] == u && uk[q] == j;
			if (!seen && u->inputs[j] == v && t && !rw_dt_admits(s, t, w->to)) {
				un[k] = u;
				uk[k++] = j;
			}
		}
	}
	return k;
}

/* Retype the attribute a node's output type comes from. */
static int retype_attrs(struct narrow *w, struct ir_node *n)
{
	const struct ir_attr *a;
	struct ir_tensor *t;

	if ((a = ir_node_attr(n, "to")) && a->i == w->from)
		return ir_node_set_int(n, "to", w->to);
	if (ir_node_attr(n, "dtype") || !strcmp(ir_s(n->op_type), "EyeLike"))
		return ir_node_set_int(n, "dtype", w->to);
	if ((a = ir_node_attr(n, "value")) && a->t && a->t->dtype == w->from) {
		if (!(t = rw_dt_convert_tensor(w->c, a->t, w->to, ir_s(a->t->name))))
			return w->c->d->status;
		return ir_node_set_tensor(n, "value", t);
	}
	if ((a = ir_node_attr(n, "value_int")) || (a = ir_node_attr(n, "value_ints"))) {
		int32_t buf[4096];
		int64_t dims[1];
		size_t k = a->type == IR_ATTR_INT ? 1 : a->n_ints;
		int list = a->type == IR_ATTR_INTS;

		if (k > 4096)
			return ir_diag_error(w->c->d, IR_EINVAL, "constant '%s' too long", ir_s(n->name));
		for (size_t i = 0; i < k; i++)
			buf[i] = (int32_t)(list ? a->ints[i] : a->i);
		dims[0] = (int64_t)k;
		if (!(t = ir_tensor_new_raw("value", IR_DTYPE_INT32, dims, list ? 1 : 0, buf,
					    k * sizeof(*buf))))
			return ir_diag_error(w->c->d, IR_ENOMEM, "out of memory");
		ir_node_remove_attr(n, list ? "value_ints" : "value_int");
		return ir_node_set_tensor(n, "value", t);
	}
	return 0;
}

static int note_interface(struct narrow *w, struct ir_value *v, enum val_map_kind kind)
{
	return val_map_add(&w->c->map, kind, ir_s(v->name), ir_s(v->name), NULL, 0, w->to,
			   w->c->d);
}

/* float64 constants beyond float32's range become infinities: say so. */
static int check_float_range(struct narrow *w, struct ir_value *v)
{
	struct rt_value *r = NULL;
	struct ir_diag d;
	size_t n = 0;
	int rc = 0;

	ir_diag_init(&d);
	if (rt_value_from_ir(NULL, v->init, &r, &d) < 0)
		return 0;
	for (int64_t i = 0; i < r->numel; i++)
		n += isfinite(rt_value_get_f64(r, i)) && fabs(rt_value_get_f64(r, i)) > FLT_MAX;
	rt_value_unref(r);
	if (n)
		rc = rw_note(w->c, "tensor '%s': %zu value%s beyond float32's range become infinite",
			     ir_s(v->name), n, n == 1 ? "" : "s");
	return rc;
}

/* Narrow one value of a narrowed group. */
static int narrow_value(struct narrow *w, struct nval *x, size_t *changed)
{
	struct ir_value *v = x->v, *wide = NULL;
	struct ir_node *un[64];
	size_t uk[64], nf = fixed_uses(w, v, un, uk, 64);
	char hint[300];
	int rc;

	snprintf(hint, sizeof(hint), "%.200s_%s", ir_s(v->name), ir_dtype_name(w->from));
	(*changed)++;
	if (v->init) {
		if (nf && !(wide = rw_dt_copy_init(w->c, w->g, v, w->from, hint)))
			return w->c->d->status;
		if (w->from == IR_DTYPE_DOUBLE && (rc = check_float_range(w, v)) < 0)
			return rc;
		if ((rc = rw_dt_convert_init(w->c, w->g, v, w->to)) < 0)
			return rc;
	} else if (v->is_input) {
		if (cast_takes(w->c, w->from)) {
			/* the interface keeps the wide type; readers get a Cast */
			struct ir_value *nv;
			char h2[300];

			snprintf(h2, sizeof(h2), "%.200s_%s", ir_s(v->name), ir_dtype_name(w->to));
			if (!(nv = ir_graph_new_value(w->g, h2)))
				return ir_diag_error(w->c->d, IR_ENOMEM, "out of memory");
			for (size_t i = v->n_uses; i-- > 0;) {
				struct ir_node *u = v->uses[i];

				for (size_t j = 0; j < u->n_inputs; j++) {
					int fixed = 0;

					for (size_t f = 0; f < nf; f++)
						fixed |= un[f] == u && uk[f] == j;
					if (u->inputs[j] == v && !fixed &&
					    (rc = ir_node_set_input(u, j, nv)) < 0)
						return rc;
				}
			}
			if (!rw_dt_cast(w->c, w->g, v, w->to, nv, NULL))
				return w->c->d->status;
			return rw_note(w->c, "input '%s' stays %s with a Cast to %s after it; its values are assumed to fit",
				       ir_s(v->name), ir_dtype_name(w->from), ir_dtype_name(w->to));
		}
		rw_dt_declare(w->g, v, w->to);
		if ((rc = note_interface(w, v, VAL_MAP_INPUT)) < 0 ||
		    (rc = rw_note(w->c, "input '%s' is now %s (the target takes no %s at all); its values are assumed to fit",
				  ir_s(v->name), ir_dtype_name(w->to), ir_dtype_name(w->from))) < 0)
			return rc;
	} else if (v->producer) {
		struct ir_node *p = v->producer;
		const struct ir_op_schema *s = rw_dt_schema(w->c, p);
		size_t k = 0;
		const char *type;

		while (k < p->n_outputs && p->outputs[k] != v)
			k++;
		type = s ? rw_dt_slot(s, 0, k) : NULL;
		if (type && !rw_dt_admits(s, type, w->to)) {
			/* the op writes the wide type: a Cast after it */
			if (!(wide = rw_dt_split_output(w->c, w->g, p, k, hint)) ||
			    !rw_dt_cast(w->c, w->g, wide, w->to, v, NULL))
				return w->c->d->status ? w->c->d->status : IR_ENOMEM;
		} else if ((rc = retype_attrs(w, p)) < 0) {
			return rc;
		}
	}
	if (!v->is_input || v->init)
		rw_dt_declare(w->g, v, w->to);
	if (ir_graph_is_output(w->g, v) && (rc = note_interface(w, v, VAL_MAP_OUTPUT)) < 0)
		return rc;
	/* readers whose signature fixes the wide type */
	if (nf && !wide && !(v->is_input && !v->init && cast_takes(w->c, w->from)) &&
	    !(wide = rw_dt_cast(w->c, w->g, v, w->from, NULL, hint)))
		return w->c->d->status;
	for (size_t f = 0; f < nf && wide; f++)
		if ((rc = ir_node_set_input(un[f], uk[f], wide)) < 0)
			return ir_diag_error(w->c->d, rc, "out of memory");
	return 0;
}

/* Notes for the wide values of group r (constants kept for their readers'
 * signatures are counted into *n_const, the first named in first). */
static int report(struct narrow *w, int r, const char *wide_name, size_t *n_const,
		  char *first, size_t size)
{
	int rc = 0;

	for (size_t i = 0; i < w->n && rc == 0; i++) {
		struct nval *x = &w->v[i];
		const char *name = ir_s(x->v->name);

		if (!x->cand || root(w, (int)i) != r || !rw_value_used(x->v))
			continue;
		if (!w->v[r].flex) {
			/* only readers that need the wide type */
			if (x->v->init || rw_is_const(w->c, x->v)) {
				if (!(*n_const)++)
					snprintf(first, size, "%.150s", name);
				continue;
			}
			rc = rw_note(w->c, "tensor '%s' stays %s: every node reading it needs %s",
				     name, wide_name, wide_name);
		} else if (x->pinned) {
			rc = rw_note(w->c, "tensor '%s' stays %s: %s", name, wide_name, x->why);
		} else {
			for (size_t j = 0; j < w->n; j++)
				if (w->v[j].cand && w->v[j].pinned && root(w, (int)j) == r) {
					rc = rw_note(w->c, "tensor '%s' stays %s: it has the type of '%s' "
						     "(a node's type constraint), which stays %s",
						     name, wide_name, ir_s(w->v[j].v->name), wide_name);
					break;
				}
		}
	}
	return rc;
}

static int narrow_run(struct rw_ctx *c, int from, int to, size_t *changed)
{
	struct narrow w = { .c = c, .g = c->m->graph, .from = from, .to = to };
	const char *wide = ir_dtype_name(from);
	char *okroot = NULL, first[200] = "";
	size_t n_const = 0;
	int rc;

	*changed = 0;
	if (!c->target || !c->target->has_missing_dtypes ||
	    !(c->target->missing_dtypes & RULES_DTYPE_BIT(from)))
		return 0;
	if ((rc = collect(&w)) < 0)
		goto cleanup;
	if (from == IR_DTYPE_INT64)
		bounds(&w);
	group(&w);
	if (!(okroot = calloc(w.n + 1, 1))) {
		rc = ir_diag_error(c->d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	/* a group narrows when it may change somewhere and nothing pins it */
	for (size_t i = 0; i < w.n; i++)
		if (w.v[i].cand && w.v[i].flex)
			w.v[root(&w, (int)i)].flex = 1;
	for (size_t i = 0; i < w.n; i++)
		if (w.v[i].cand)
			okroot[root(&w, (int)i)] = (char)w.v[root(&w, (int)i)].flex;
	for (size_t i = 0; i < w.n; i++)
		if (w.v[i].cand && w.v[i].pinned)
			okroot[root(&w, (int)i)] = 0;
	for (size_t i = 0; i < w.n && rc == 0; i++)
		if (w.v[i].cand && okroot[root(&w, (int)i)])
			rc = narrow_value(&w, &w.v[i], changed);
	for (size_t i = 0; i < w.n && rc == 0; i++)
		if (w.v[i].cand && root(&w, (int)i) == (int)i && !okroot[i])
			rc = report(&w, (int)i, wide, &n_const, first, sizeof(first));
	if (rc == 0 && n_const)
		rc = rw_note(c, "%zu constant%s stay%s %s because the nodes reading %s need %s "
			     "(first '%s')", n_const, n_const == 1 ? "" : "s",
			     n_const == 1 ? "s" : "", wide, n_const == 1 ? "it" : "them",
			     wide, first);
	if (rc == 0 && *changed)
		rc = rw_dt_finish(c, w.g);
cleanup:
	free(okroot);
	free(w.v);
	free(w.keys);
	return rc;
}

static int run_int64(struct rw_ctx *c, size_t *changed)
{
	return narrow_run(c, IR_DTYPE_INT64, IR_DTYPE_INT32, changed);
}

static int run_float64(struct rw_ctx *c, size_t *changed)
{
	return narrow_run(c, IR_DTYPE_DOUBLE, IR_DTYPE_FLOAT, changed);
}

const struct rw_pass rw_pass_narrow_int64 = {
	.name = "narrow-int64",
	.summary = "int64 tensors to int32 where values provably fit, when the target lacks int64",
	.kind = RW_DTYPE,
	.run = run_int64,
};

const struct rw_pass rw_pass_narrow_float64 = {
	.name = "narrow-float64",
	.summary = "float64 tensors to float32, when the target lacks float64",
	.kind = RW_DTYPE,
	.run = run_float64,
};
