/* quant_plan.c: which nodes of the float model are quantized and how.  A
 * sorted table gives each quantizable op its role (weights and bias, a
 * binary op with constant operands, an op with its own output range, a
 * data-movement op whose output keeps its input's scale, Concat whose
 * inputs and output share one); a target's rules add the ops it runs only
 * quantized and choose the dtypes (the activation dtype most of the
 * model's quantizable ops accept, per op the first weight dtype it
 * accepts).  A Relu, or a Clip from 0, right after a quantized node is
 * fused: with asymmetric ranges the QuantizeLinear of its producer's
 * output does what it does.  The tensors to calibrate are collected, and
 * those that must share a scale are joined into groups. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/quant_int.h"
#include "runtime/runtime.h"

struct qop {
	const char *op;
	enum qz_role role;
	int deflt;                   /* quantized without a target asking */
};

static const struct qop qops[] = {
	{ "Add", QZ_R_BINARY, 1 },
	{ "AveragePool", QZ_R_ACT, 1 },
	{ "Clip", QZ_R_ACT, 1 },
	{ "Concat", QZ_R_CONCAT, 1 },
	{ "Conv", QZ_R_WEIGHTED, 1 },
	{ "ConvTranspose", QZ_R_WEIGHTED, 1 },
	{ "DepthToSpace", QZ_R_SAME, 1 },
	{ "Expand", QZ_R_SAME, 1 },
	{ "Flatten", QZ_R_SAME, 1 },
	{ "Gather", QZ_R_SAME, 1 },
	{ "Gemm", QZ_R_WEIGHTED, 1 },
	{ "GlobalAveragePool", QZ_R_ACT, 1 },
	{ "GlobalMaxPool", QZ_R_SAME, 1 },
	{ "HardSigmoid", QZ_R_ACT, 1 },
	{ "HardSwish", QZ_R_ACT, 1 },
	{ "LeakyRelu", QZ_R_ACT, 1 },
	{ "MatMul", QZ_R_WEIGHTED, 1 },
	{ "MaxPool", QZ_R_SAME, 1 },
	{ "Mul", QZ_R_BINARY, 1 },
	{ "Pad", QZ_R_SAME, 1 },
	{ "Relu", QZ_R_ACT, 1 },
	{ "Reshape", QZ_R_SAME, 1 },
	{ "Resize", QZ_R_SAME, 1 },
	{ "Sigmoid", QZ_R_ACT, 1 },
	{ "Slice", QZ_R_SAME, 1 },
	{ "Softmax", QZ_R_ACT, 0 },
	{ "SpaceToDepth", QZ_R_SAME, 1 },
	{ "Split", QZ_R_SAME, 1 },
	{ "Squeeze", QZ_R_SAME, 1 },
	{ "Sub", QZ_R_BINARY, 1 },
	{ "Tanh", QZ_R_ACT, 1 },
	{ "Tile", QZ_R_SAME, 1 },
	{ "Transpose", QZ_R_SAME, 1 },
	{ "Unsqueeze", QZ_R_SAME, 1 },
};

static int qop_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct qop *)elem)->op);
}

static const struct qop *qop_find(const struct ir_node *n)
{
	const char *dom = ir_s(n->domain);

	if (*dom && strcmp(dom, "ai.onnx"))
		return NULL;
	return bsearch(ir_s(n->op_type), qops, sizeof(qops) / sizeof(qops[0]), sizeof(qops[0]),
		       qop_cmp);
}

/* ---- tensors ------------------------------------------------------------ */

struct named {
	const char *name;
	size_t i;
};

static int named_cmp(const void *a, const void *b)
{
	return strcmp(((const struct named *)a)->name, ((const struct named *)b)->name);
}

int qz_plan_find(const struct qz_plan *p, const char *name)
{
	size_t lo = 0, hi = p->n_tens;

	if (!p->by_name)
		return -1;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(p->tens[p->by_name[mid]].name, name);

		if (!c)
			return (int)p->by_name[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static size_t name_hash(const char *s)
{
	size_t h = 1469598103934665603u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211u;
	return h;
}

/* Index of the tensor named name through the build-time hash, or the
 * free slot where it goes. */
static size_t hash_slot(const struct qz_plan *p, const long *ht, size_t cap, const char *name)
{
	size_t k = name_hash(name) & (cap - 1);

	while (ht[k] >= 0 && strcmp(p->tens[ht[k]].name, name))
		k = (k + 1) & (cap - 1);
	return k;
}

/* The tensor for value v (added when new), or -1 out of memory. */
static long tens_get(struct qz_plan *p, long *ht, size_t cap, const struct ir_value *v,
		     int is_const, int hist)
{
	size_t slot = hash_slot(p, ht, cap, ir_s(v->name));
	struct qz_tens *t;

	if (ht[slot] >= 0)
		return ht[slot];
	if (p->n_tens == p->cap_tens) {
		size_t ncap = p->cap_tens ? 2 * p->cap_tens : 64;
		struct qz_tens *q = realloc(p->tens, ncap * sizeof(*q));

		if (!q)
			return -1;
		p->tens = q;
		p->cap_tens = ncap;
	}
	t = &p->tens[p->n_tens];
	memset(t, 0, sizeof(*t));
	t->group = p->n_tens;
	t->is_const = is_const;
	if (!(t->name = strdup(ir_s(v->name))))
		return -1;
	if (hist && !is_const && !(t->hist = calloc(1, sizeof(*t->hist)))) {
		free(t->name);
		return -1;
	}
	ht[slot] = (long)p->n_tens;
	return (long)p->n_tens++;
}

static size_t find_root(struct qz_plan *p, size_t i)
{
	while (p->tens[i].group != i)
		i = p->tens[i].group;
	return i;
}

static void join(struct qz_plan *p, size_t a, size_t b)
{
	size_t ra = find_root(p, a), rb = find_root(p, b);

	if (ra != rb)
		p->tens[ra > rb ? ra : rb].group = ra < rb ? ra : rb;
}

/* A constant's values into t's range. */
static void const_range(struct qz_tens *t, const struct ir_value *v)
{
	struct rt_value *x = rw_init_value(v);
	struct rt_tensor_summary s;

	if (!x)
		return;
	rt_tensor_summarize(x, &s);
	if (s.n_finite) {
		t->min = s.min;
		t->max = s.max;
		t->seen = 1;
	}
	rt_value_unref(x);
}

void qz_plan_release(struct qz_plan *p)
{
	for (size_t i = 0; i < p->n_tens; i++) {
		free(p->tens[i].name);
		free(p->tens[i].hist);
	}
	free(p->tens);
	free(p->units);
	free(p->pool);
	free(p->by_name);
	if (p->op_names)
		for (size_t i = 0; i < p->n_nodes; i++)
			free(p->op_names[i]);
	free(p->op_names);
	memset(p, 0, sizeof(*p));
}

/* ---- classifying nodes --------------------------------------------------- */

static int is_float(const struct rw_ctx *c, const struct ir_value *v)
{
	const struct ir_vtype *t = v ? rw_type(c, v) : NULL;

	return t && !t->is_seq && t->dtype == IR_DTYPE_FLOAT;
}

static int is_const(const struct rw_ctx *c, const struct ir_value *v)
{
	return v && v->init && (!v->is_input || c->m->ir_version < 4);
}

/* Is the op of n listed in the comma-separated list? */
static int in_list(const char *list, const char *name)
{
	size_t len = strlen(name);

	for (const char *s = list; s && *s;) {
		const char *e = strchr(s, ',');
		size_t k = e ? (size_t)(e - s) : strlen(s);

		if (k == len && !strncmp(s, name, k))
			return 1;
		s = e ? e + 1 : NULL;
	}
	return 0;
}

/* Clip from 0 to a constant (or no) maximum: *max, 1; else 0. */
static int clip_from_zero(const struct rw_ctx *c, const struct ir_node *n, double *max)
{
	double lo = -INFINITY;

	*max = INFINITY;
	if (c->opset < 11) {
		lo = rw_attr_float(n, "min", -3.4028234663852886e38f);
		*max = rw_attr_float(n, "max", 3.4028234663852886e38f);
	} else {
		if (n->n_inputs > 1 && n->inputs[1] && !rw_const_double(c, n->inputs[1], &lo))
			return 0;
		if (n->n_inputs > 2 && n->inputs[2] && !rw_const_double(c, n->inputs[2], max))
			return 0;
	}
	return lo == 0;
}

int qz_clip_max(const struct rw_ctx *c, const struct ir_node *n, double *max)
{
	if (!strcmp(ir_s(n->op_type), "Relu")) {
		*max = INFINITY;
		return 1;
	}
	return !strcmp(ir_s(n->op_type), "Clip") && clip_from_zero(c, n, max);
}

/* The weight dtype of a unit: --weights, else the first of int8 and
 * uint8 the target takes the op in. */
static int weight_dtype(const struct qz_ctx *q, const struct rw_ctx *c, const char *op)
{
	if (q->o->weight_dtype)
		return q->o->weight_dtype;
	if (q->o->target && !rw_target_accepts(c, "", op, IR_DTYPE_INT8) &&
	    rw_target_accepts(c, "", op, IR_DTYPE_UINT8))
		return IR_DTYPE_UINT8;
	return q->weight_dtype;
}

static void set_weighted(const struct qz_ctx *q, const struct rw_ctx *c, const struct ir_node *n,
			 struct qz_unit *u)
{
	const char *op = ir_s(n->op_type);
	int wconst = n->n_inputs > 1 && is_const(c, n->inputs[1]) && is_float(c, n->inputs[1]);
	int rank = wconst ? rw_rank(c, n->inputs[1]) : -1;

	u->w_dtype = weight_dtype(q, c, op);
	u->w_sym = u->w_dtype != IR_DTYPE_UINT8 && u->w_dtype != IR_DTYPE_UINT4;
	u->w_axis = -1;
	if (n->inputs[0] && is_float(c, n->inputs[0]))
		u->in[0] = is_const(c, n->inputs[0]) ? QZ_IN_CONST : QZ_IN_ACT;
	if (n->n_inputs > 1 && n->inputs[1] && is_float(c, n->inputs[1]))
		u->in[1] = wconst ? QZ_IN_WEIGHT : QZ_IN_ACT;
	if (wconst && q->plan.per_channel) {
		if (!strcmp(op, "Conv") && rank >= 3)
			u->w_axis = 0;
		else if (!strcmp(op, "ConvTranspose") && rank >= 3 && rw_attr_int(n, "group", 1) == 1)
			u->w_axis = 1;
		else if (!strcmp(op, "Gemm") && rank == 2)
			u->w_axis = rw_attr_int(n, "transB", 0) ? 0 : 1;
		else if (!strcmp(op, "MatMul") && rank == 2)
			u->w_axis = 1;
	}
	/* the bias: int32 at input scale x weight scale, when the weight is
	 * quantized and the bias is one value per output channel */
	if (wconst && n->n_inputs > 2 && n->inputs[2] && is_const(c, n->inputs[2]) &&
	    is_float(c, n->inputs[2]) && u->in[0] == QZ_IN_ACT) {
		int brank = rw_rank(c, n->inputs[2]);
		double nb = rw_static_numel(c, n->inputs[2]);
		int64_t dims[8];
		int wr;

		if (!strcmp(op, "Gemm")) {
			if (rw_attr_float(n, "alpha", 1) != 1 || rw_attr_float(n, "beta", 1) != 1 ||
			    brank < 1 || brank > 2 || !rw_static_shape(c, n->inputs[1], dims, &wr) ||
			    nb != (double)dims[rw_attr_int(n, "transB", 0) ? 0 : 1] ||
			    (brank == 2 && rw_static_shape(c, n->inputs[2], dims, &wr) && dims[0] != 1))
				return;
		} else if (brank != 1) {
			return;
		}
		u->in[2] = QZ_IN_BIAS;
	}
}

/* The activation dtype: --activations, else the one of uint8 and int8
 * the target takes the model's quantizable ops in most often. */
static int act_dtype(const struct qz_ctx *q, const struct rw_ctx *c)
{
	const struct ir_graph *g = c->m->graph;
	size_t nu = 0, ns = 0;

	if (q->o->act_dtype)
		return q->o->act_dtype;
	if (!q->o->target)
		return IR_DTYPE_UINT8;
	for (size_t i = 0; i < g->n_nodes; i++) {
		const char *op = ir_s(g->nodes[i]->op_type);

		if (!qop_find(g->nodes[i]))
			continue;
		nu += rw_target_accepts(c, "", op, IR_DTYPE_UINT8);
		ns += rw_target_accepts(c, "", op, IR_DTYPE_INT8);
	}
	return ns > nu ? IR_DTYPE_INT8 : IR_DTYPE_UINT8;
}

/* Weight-only: a MatMul whose B is a constant float [K, N] initializer;
 * other MatMuls are reported with the reason, other ops not at all. */
static void classify_nbits(struct qz_ctx *q, struct rw_ctx *c, const struct ir_node *n,
			   struct qz_unit *u)
{
	const struct ir_value *a = n->inputs[0], *w = n->n_inputs > 1 ? n->inputs[1] : NULL;
	const struct ir_vtype *ta = a ? rw_type(c, a) : NULL, *tw = w ? rw_type(c, w) : NULL;

	u->role = QZ_R_NONE;
	u->report = -1;
	if (*ir_s(n->domain) && strcmp(ir_s(n->domain), "ai.onnx"))
		return;
	if (strcmp(ir_s(n->op_type), "MatMul"))
		return;
	u->role = QZ_R_WEIGHTED;
	if (!ta || !tw || ta->is_seq || tw->is_seq || ta->dtype != tw->dtype ||
	    (tw->dtype != IR_DTYPE_FLOAT && tw->dtype != IR_DTYPE_FLOAT16))
		u->why = "A and B are not float32 or float16";
	else if (q->o->exclude_ops && in_list(q->o->exclude_ops, "MatMul"))
		u->why = "excluded by --exclude-ops";
	else if (q->o->exclude && in_list(q->o->exclude, ir_s(n->name)))
		u->why = "excluded by --exclude";
	else if (!is_const(c, w))
		u->why = "B is not a constant initializer";
	else if (rw_rank(c, w) != 2)
		u->why = "B is not 2-D (K x N)";
	if (u->why)
		return;
	u->in[1] = QZ_IN_WEIGHT;
	u->candidate = 1;
}

static void classify(struct qz_ctx *q, struct rw_ctx *c, const struct ir_node *n,
		     struct qz_unit *u)
{
	const struct qop *e = qop_find(n);
	const char *op = ir_s(n->op_type);
	int dt = q->plan.act_dtype, any = 0, nconst = 0, nfloat = 0;
	int must = q->o->target && !rw_target_accepts(c, ir_s(n->domain), op, IR_DTYPE_FLOAT) &&
		   rw_target_accepts(c, ir_s(n->domain), op, dt);

	u->role = QZ_R_NONE;
	u->report = -1;
	for (size_t j = 0; j < n->n_inputs; j++)
		if (n->inputs[j] && is_float(c, n->inputs[j])) {
			nfloat++;
			nconst += is_const(c, n->inputs[j]);
		}
	for (size_t j = 0; j < n->n_outputs; j++)
		any |= n->outputs[j] && is_float(c, n->outputs[j]);
	if ((!nfloat && !any) || nconst == nfloat || !strcmp(op, "Shape") || !strcmp(op, "Size"))
		return;              /* no float data, or none it computes on */
	if (!e && !must) {
		u->why = "not a quantizable op";
		return;
	}
	if (e && !e->deflt && !must) {
		u->role = e->role;
		u->why = "kept in float by default (numerically sensitive)";
		return;
	}
	u->role = e ? e->role : QZ_R_GENERIC;
	if (q->o->exclude_ops && in_list(q->o->exclude_ops, op)) {
		u->why = "excluded by --exclude-ops";
		return;
	}
	if (q->o->exclude && in_list(q->o->exclude, ir_s(n->name))) {
		u->why = "excluded by --exclude";
		return;
	}
	if (q->o->target && rw_target_accepts(c, ir_s(n->domain), op, IR_DTYPE_FLOAT) &&
	    !rw_target_accepts(c, ir_s(n->domain), op, dt)) {
		u->why = "the target takes it in float32 but not quantized";
		return;
	}
	switch (u->role) {
	case QZ_R_WEIGHTED:
		set_weighted(q, c, n, u);
		break;
	case QZ_R_SAME:
		if ((!strcmp(op, "MaxPool") && n->n_outputs > 1 && n->outputs[1]) ||
		    (!strcmp(op, "Pad") && n->n_inputs > 2 && n->inputs[2] &&
		     !rw_is_scalar_near(c, n->inputs[2], 0)) ||
		    (!strcmp(op, "Pad") && c->opset < 11 && rw_attr_float(n, "value", 0) != 0)) {
			u->why = "its output would need another scale (MaxPool indices, Pad value)";
			return;
		}
		if (!n->inputs[0] || !is_float(c, n->inputs[0]) || is_const(c, n->inputs[0])) {
			u->why = "its data is constant or not float";
			return;
		}
		u->in[0] = QZ_IN_ACT;
		break;
	case QZ_R_ACT:
		if (!n->inputs[0] || !is_float(c, n->inputs[0]) || is_const(c, n->inputs[0])) {
			u->why = "its data is constant or not float";
			return;
		}
		u->in[0] = QZ_IN_ACT;
		break;
	case QZ_R_BINARY:
	case QZ_R_CONCAT:
		for (size_t j = 0; j < n->n_inputs; j++)
			if (n->inputs[j] && is_float(c, n->inputs[j]))
				u->in[j] = is_const(c, n->inputs[j]) ? QZ_IN_CONST : QZ_IN_ACT;
		break;
	default:
		for (size_t j = 0; j < n->n_inputs; j++)
			if (n->inputs[j] && is_float(c, n->inputs[j]) && !is_const(c, n->inputs[j]))
				u->in[j] = QZ_IN_ACT;
		break;
	}
	u->candidate = 1;
}

/* A Relu or Clip from 0 whose input only it reads, made by a candidate
 * that computes its output (not one that keeps its input's scale). */
static int fusable(struct qz_ctx *q, struct rw_ctx *c, const struct ir_node *n)
{
	const struct ir_value *x = n->inputs[0];
	const struct ir_node *pr = x ? x->producer : NULL;
	const struct qz_unit *pu;
	double mx;

	if (q->plan.symmetric || !qz_clip_max(c, n, &mx) || !pr || pr->graph != n->graph ||
	    !rw_single_use(x))
		return 0;
	pu = &q->plan.units[pr->index];
	return pu->candidate && !pu->fused && pu->role != QZ_R_SAME;
}

struct tabs {
	long *ht;
	size_t cap;
};

static int add_tens(struct qz_plan *p, struct tabs *h, const struct ir_value *v, int cst,
		    int hist, long *out)
{
	if ((*out = tens_get(p, h->ht, h->cap, v, cst, hist)) < 0)
		return IR_ENOMEM;
	p->tens[*out].is_output = ir_graph_is_output(v->graph, v);
	if (cst && !p->tens[*out].seen)
		const_range(&p->tens[*out], v);
	return 0;
}

/* The tensors of unit i and the groups they share. */
static int unit_tensors(struct qz_plan *p, struct tabs *h, const struct ir_node *n,
			const struct qz_unit *u, int hist)
{
	long first = -1, t;

	for (size_t j = 0; j < n->n_inputs; j++) {
		if (u->in[j] != QZ_IN_ACT && u->in[j] != QZ_IN_CONST)
			continue;
		if (add_tens(p, h, n->inputs[j], u->in[j] == QZ_IN_CONST, hist, &t) < 0)
			return IR_ENOMEM;
		if (u->role == QZ_R_CONCAT && first >= 0)
			join(p, (size_t)first, (size_t)t);
		if (first < 0 && (u->role == QZ_R_CONCAT || j == 0))
			first = t;
	}
	for (size_t j = 0; j < n->n_outputs; j++) {
		if (!n->outputs[j])
			continue;
		if (add_tens(p, h, n->outputs[j], 0, hist, &t) < 0)
			return IR_ENOMEM;
		if ((u->role == QZ_R_SAME || u->role == QZ_R_CONCAT) && first >= 0)
			join(p, (size_t)first, (size_t)t);
	}
	return 0;
}

int qz_plan_make(struct qz_ctx *q, struct rw_ctx *c, struct ir_diag *d)
{
	struct qz_plan *p = &q->plan;
	struct ir_graph *g = c->m->graph;
	size_t n_in = 0, off = 0, n_vals = 0;
	int hist = q->o->method != QZ_MINMAX && q->o->format != QZ_DYNAMIC;
	struct tabs h = { NULL, 64 };
	struct named *nm = NULL;

	memset(p, 0, sizeof(*p));
	p->symmetric = q->o->symmetric;
	p->per_channel = !q->o->per_tensor;
	p->act_dtype = act_dtype(q, c);
	p->n_nodes = g->n_nodes;
	for (size_t i = 0; i < g->n_nodes; i++) {
		n_in += g->nodes[i]->n_inputs;
		n_vals += g->nodes[i]->n_inputs + g->nodes[i]->n_outputs;
	}
	while (h.cap < 2 * n_vals + 2)
		h.cap *= 2;
	if (!(p->units = calloc(g->n_nodes + 1, sizeof(*p->units))) ||
	    !(p->pool = calloc(n_in + 1, 1)) ||
	    !(p->op_names = calloc(g->n_nodes + 1, sizeof(*p->op_names))) ||
	    !(h.ht = malloc(h.cap * sizeof(*h.ht))))
		goto oom;
	for (size_t i = 0; i < h.cap; i++)
		h.ht[i] = -1;
	for (size_t i = 0; i < g->n_nodes; i++) {
		if (!(p->op_names[i] = strdup(ir_s(g->nodes[i]->op_type))))
			goto oom;
		p->units[i].in = p->pool + off;
		off += g->nodes[i]->n_inputs;
		if (q->o->format == QZ_WEIGHT_ONLY)
			classify_nbits(q, c, g->nodes[i], &p->units[i]);
		else
			classify(q, c, g->nodes[i], &p->units[i]);
	}
	for (size_t i = 0; i < g->n_nodes; i++)
		if (p->units[i].candidate && p->units[i].role == QZ_R_ACT &&
		    fusable(q, c, g->nodes[i])) {
			p->units[i].fused = 1;
			p->units[i].candidate = 0;
		}
	for (size_t i = 0; i < g->n_nodes; i++)
		if ((p->units[i].candidate || p->units[i].fused) &&
		    unit_tensors(p, &h, g->nodes[i], &p->units[i], hist) < 0)
			goto oom;
	if (!(p->by_name = malloc((p->n_tens + 1) * sizeof(*p->by_name))) ||
	    !(nm = malloc((p->n_tens + 1) * sizeof(*nm))))
		goto oom;
	for (size_t i = 0; i < p->n_tens; i++)
		nm[i] = (struct named){ p->tens[i].name, i };
	qsort(nm, p->n_tens, sizeof(*nm), named_cmp);
	for (size_t i = 0; i < p->n_tens; i++)
		p->by_name[i] = nm[i].i;
	free(nm);
	free(h.ht);
	return 0;
oom:
	free(nm);
	free(h.ht);
	return ir_diag_error(d, IR_ENOMEM, "out of memory");
}

/* Is v made by a node that is quantized (or fused into one) in on? */
static int made_on(const struct qz_plan *p, const struct ir_graph *g, const unsigned char *on,
		   const struct ir_value *v)
{
	const struct ir_node *pr = v ? v->producer : NULL;

	if (!pr || pr->graph != g || pr->index >= p->n_nodes)
		return 0;
	return on[pr->index] != 0;
}

void qz_units_on(const struct qz_plan *p, const struct ir_graph *g, const unsigned char *fl,
		 unsigned char *on)
{
	for (size_t i = 0; i < p->n_nodes; i++) {
		const struct qz_unit *u = &p->units[i];
		const struct ir_node *n = g->nodes[i];

		if (u->fused)
			/* on when its producer is: the Q of the output is it */
			on[i] = made_on(p, g, on, n->inputs[0]) ? 2 : 0;
		else if (!u->candidate || (fl && fl[i]))
			on[i] = 0;
		else if (u->role == QZ_R_SAME)
			/* moving data keeps a scale it is given */
			on[i] = made_on(p, g, on, n->inputs[0]);
		else
			on[i] = 1;
	}
}
