/* qdq_table.c: QDQ units computed through a table of codes.  Between
 * DequantizeLinear (per tensor, from 8 bits) and QuantizeLinear (per
 * tensor, to 8 bits), a Concat, an elementwise op of one input (Sigmoid,
 * Tanh, LeakyRelu, ...) or of two (Add, Mul, ...) gives each output code
 * as a function of one input code (256 of them) or of a pair (65536).
 * The unit (onnxruntime's QLinearConcat, QLinearSigmoid, QLinearAdd)
 * makes that table on its first run by running the nodes' own kernels,
 * DequantizeLinear, the op and QuantizeLinear, over every code, then maps
 * the codes: the results are the written graph's bit for bit, without
 * the float tensors in between (four bytes an element each way).  A
 * MaxPool between them takes the largest code of each window and maps it
 * (DequantizeLinear is monotone): on codes stored channels last
 * (layout_cl.c), which all these units read and keep.  An op that moves
 * elements (a nearest Resize, Transpose, Reshape, Slice, ...) runs its
 * own kernel on the codes (a Resize's channels last) and maps them
 * through QuantizeLinear(DequantizeLinear(code)), a copy where that is
 * the identity: each output element is one input element, so the result
 * is the written graph's bit for bit with a quarter of the traffic.
 * x * Sigmoid(x) of one DequantizeLinear (a quantized SiLU: the Sigmoid a
 * unit of its own, its codes read by the Mul alone) is a function of x's
 * code alone: one table of 256 made through the five nodes, the Sigmoid
 * unit not run (derived_at). */
#include <immintrin.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/cpu_feat.h"   /* rt_cpu_avx512vbmi */
#include "runtime/kernels/k_conv_int.h"   /* pool geometry, MaxPool of codes */
#include "runtime/qdq_int.h"

enum { T_CAT, T_UNARY, T_BINARY, T_POOL, T_MOVE };

/* Ops whose every output element is a function of the input element(s)
 * at its place alone (one input / two inputs, numpy broadcasting). */
static const char *const unary_ops[] = {
	"Sigmoid", "Tanh", "Relu", "LeakyRelu", "Elu", "Selu", "Celu", "HardSigmoid",
	"HardSwish", "Softplus", "Softsign", "Gelu", "Mish", "ThresholdedRelu", "Erf",
	"Exp", "Neg", "Abs", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round", "Sin", "Cos",
};
static const char *const binary_ops[] = { "Add", "Sub", "Mul", "Div", "Max", "Min" };

/* Ops whose every output element is one element of their first input,
 * moved (whatever its dtype: their kernels move bytes), sorted; Resize
 * and Upsample only in mode nearest (move_ok); Split of up to
 * RT_QDQ_MAX_OUT outputs, each quantized on its own (a ShuffleNet's
 * channel split, a CSP block's halves). */
static const char *const move_ops[] = {
	"Flatten", "Reshape", "Resize", "Slice", "Split", "Squeeze", "Transpose", "Unsqueeze",
	"Upsample",
};

/* The most inputs of a move op (Slice's five). */
#define MOVE_MAX_IN 5

static int in_list(const char *op, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(op, list[i]))
			return 1;
	return 0;
}

static const char *str_attr(const struct ir_node *n, const char *name, const char *dflt)
{
	const struct ir_attr *a = ir_node_attr(n, name);

	return a && a->type == IR_ATTR_STRING && a->s ? (const char *)a->s : dflt;
}

/* A move op whose every output element is an input element: a Resize
 * or Upsample nearest, but for tf_crop_and_resize (its extrapolated
 * elements are extrapolation_value, not codes). */
static int move_ok(const struct ir_node *n)
{
	const char *op = ir_s(n->op_type);

	if (!in_list(op, move_ops, sizeof(move_ops) / sizeof(*move_ops)) ||
	    n->n_inputs > MOVE_MAX_IN)
		return 0;
	if (strcmp(op, "Resize") && strcmp(op, "Upsample"))
		return 1;
	return !strcmp(str_attr(n, "mode", "nearest"), "nearest") &&
	       strcmp(str_attr(n, "coordinate_transformation_mode", "half_pixel"),
		      "tf_crop_and_resize");
}

static int kind_of(const struct rt_nplan *h)
{
	const struct ir_node *n = h->node;
	const char *op = ir_s(n->op_type);

	if (!rt_default_domain(n) || !n->n_outputs || !n->outputs[0] ||
	    (n->n_outputs != 1 && (strcmp(op, "Split") || n->n_outputs > RT_QDQ_MAX_OUT)))
		return -1;
	if (!strcmp(op, "Concat") && n->n_inputs >= 1)
		return T_CAT;
	if (n->n_inputs == 1 && in_list(op, unary_ops, sizeof(unary_ops) / sizeof(*unary_ops)))
		return T_UNARY;
	if (n->n_inputs == 1 && !strcmp(op, "MaxPool"))
		return T_POOL;
	if (n->n_inputs >= 1 && n->inputs[0] && move_ok(n))
		return T_MOVE;
	/* binary ops before opset 7 broadcast by attributes */
	if (n->n_inputs == 2 && h->schema && h->schema->since_version >= 7 &&
	    in_list(op, binary_ops, sizeof(binary_ops) / sizeof(*binary_ops)))
		return T_BINARY;
	return -1;
}

static int qt_run(struct rt_kctx *k);

/* A unary unit (made before node i: its head precedes it) whose codes
 * are v, v's only use a DequantizeLinear d whose only use is node i,
 * neither a graph output: its unit, or NULL. */
static const struct rt_qdq *unary_unit_of(struct rt_gplan *p, const struct ir_value *v,
					  const struct ir_node *d)
{
	const struct ir_value *o = d->outputs[0];
	const struct rt_nplan *q = v ? rt_plan_node(p, v->producer) : NULL, *h;
	const struct rt_qdq *u;

	if (!q || v->n_uses != 1 || ir_graph_is_output(p->g, v) || !o || o->n_uses != 1 ||
	    ir_graph_is_output(p->g, o) || !rt_qdq_is_op(q->node, "QuantizeLinear") ||
	    !q->node->inputs[0])
		return NULL;
	h = rt_plan_node(p, q->node->inputs[0]->producer);
	if (h && rt_qdq_is_op(h->node, "Relu") && h->node->inputs[0])   /* a no-op Relu */
		h = rt_plan_node(p, h->node->inputs[0]->producer);
	u = h ? h->qdq : NULL;
	return u && u->outs[0] == v && u->head == h && !u->pool && !u->move && !u->inner &&
	       u->n_codes == 1 && h->node->n_inputs == 1 && u->kernel.run == qt_run ? u : NULL;
}

/* A binary unit whose input j is a unary unit's result of input 1 - j's
 * codes (x * Sigmoid(x), a SiLU, as a quantizer writes it: DequantizeLinear
 * of x read by the Sigmoid and the Mul): each output code is a function
 * of one code of x, a table of 256 made through the five nodes (the
 * unary unit's, run on the 256 codes, and the DequantizeLinear of its
 * result), mapped code by code instead of a pair table over the two
 * inputs, and the unary unit not run (its codes are read by nothing
 * else).  Its inputs: x, x's DequantizeLinear scale and zero point,
 * QuantizeLinear's; the unary unit's four (IN_INNER); then input j's
 * DequantizeLinear's (IN_DJ). */
enum { IN_INNER = 5, IN_DJ = 9, N_DERIVED = 11 };

static struct rt_qdq *derived_at(struct rt_session *s, struct rt_gplan *p, size_t i)
{
	struct rt_nplan *h = &p->nodes[i], *relu;
	const struct ir_node *n = h->node, *d[2], *q;
	const struct rt_qdq *in = NULL;
	struct rt_qdq *u;
	size_t j;

	if (!(d[0] = rt_qdq_dq_act(s, p, n->inputs[0])) || !(d[1] = rt_qdq_dq_act(s, p, n->inputs[1])))
		return NULL;
	for (j = 0; j < 2; j++)
		if ((in = unary_unit_of(p, d[j]->inputs[0], d[j])) &&
		    in->ins[0] == d[1 - j]->inputs[0])
			break;
	if (j == 2 || !(q = rt_qdq_q_out(s, p, n->outputs[0], &relu)) ||
	    !(u = rt_qdq_unit_new(n, N_DERIVED)))
		return NULL;
	if (!(u->dq = calloc(2, sizeof(*u->dq))))
		goto fail;
	u->dq[0] = &p->nodes[d[1 - j]->index];
	u->dq[1] = &p->nodes[d[j]->index];
	u->ins[0] = d[1 - j]->inputs[0];
	u->ins[1] = d[1 - j]->inputs[1];
	u->ins[2] = d[1 - j]->inputs[2];
	u->ins[3] = q->inputs[1];
	u->ins[4] = q->inputs[2];
	for (size_t t = 0; t < 4; t++)
		u->ins[IN_INNER + t] = in->ins[1 + t];
	u->ins[IN_DJ] = d[j]->inputs[1];
	u->ins[IN_DJ + 1] = d[j]->inputs[2];
	u->outs[0] = q->outputs[0];
	u->n_codes = 1;
	u->head = h;
	u->inner = in;
	u->derived = j;
	u->q = &p->nodes[q->index];
	u->skip[0] = q->index;
	u->skip[1] = relu ? (size_t)(relu - p->nodes) : (size_t)-1;
	u->skip[2] = (size_t)(in->head - p->nodes);
	snprintf(u->op, sizeof(u->op), "QLinear%s", ir_s(n->op_type));
	u->node.op_type = u->op;
	u->kernel = (struct rt_kernel){ "ai.onnx", u->op, 1, RT_OPEN, qt_run };
	u->np.cl_in = 1;   /* code by code: the layout stays */
	u->keeps_layout = 1;
	if (rt_qdq_unit_plan(p, i, u) == 0)
		return u;
fail:
	rt_qdq_unit_free(u);
	return NULL;
}

struct rt_qdq *rt_qdq_table_at(struct rt_session *s, struct rt_gplan *p, size_t i)
{
	struct rt_nplan *h = &p->nodes[i], *relu;
	const struct ir_node *n = h->node, *q, *dq, *qo[RT_QDQ_MAX_OUT];
	int kind = kind_of(h);
	size_t m = n->n_inputs;
	size_t n_extra = 0;
	struct rt_qdq *u;

	if (kind == T_BINARY && !h->n_subs && h->kernel && h->fold == RT_FOLD_NONE &&
	    (u = derived_at(s, p, i)))
		return u;
	if (kind == T_MOVE) {   /* the codes coded, the op's other inputs as they are */
		n_extra = m - 1;
		m = 1;
	}
	/* a Split's outputs are each read by a QuantizeLinear alone: a Relu
	 * between them only where there is one output */
	if (kind < 0 || !h->kernel || h->fold != RT_FOLD_NONE || h->n_subs ||
	    !(q = rt_qdq_q_out(s, p, n->outputs[0], &relu)) || (relu && n->n_outputs > 1))
		return NULL;
	for (size_t o = 1; o < n->n_outputs; o++)
		if (!n->outputs[o] || !(qo[o] = rt_qdq_q_out(s, p, n->outputs[o], &relu)) || relu)
			return NULL;
	/* inputs: the codes, DequantizeLinear's, QuantizeLinear's, the op's
	 * other inputs, the other outputs' QuantizeLinear's (IN_QMORE) */
	if (!(u = rt_qdq_unit_new(n, 3 * m + 2 + n_extra + 2 * (n->n_outputs - 1))))
		return NULL;
	if (!(u->dq = calloc(m, sizeof(*u->dq))))
		goto fail;
	for (size_t j = 0; j < m; j++) {
		if (!(dq = rt_qdq_dq_act(s, p, n->inputs[j])))
			goto fail;
		u->dq[j] = &p->nodes[dq->index];
		u->ins[j] = dq->inputs[0];
		u->ins[m + 2 * j] = dq->inputs[1];
		u->ins[m + 2 * j + 1] = dq->inputs[2];
	}
	u->ins[3 * m] = q->inputs[1];
	u->ins[3 * m + 1] = q->inputs[2];
	for (size_t j = 0; j < n_extra; j++)
		u->ins[3 * m + 2 + j] = n->inputs[1 + j];
	u->outs[0] = q->outputs[0];
	for (size_t o = 1; o < n->n_outputs; o++) {
		size_t at = 3 * m + 2 + n_extra + 2 * (o - 1);

		u->ins[at] = qo[o]->inputs[1];
		u->ins[at + 1] = qo[o]->inputs[2];
		u->outs[o] = qo[o]->outputs[0];
		u->q_more[o - 1] = &p->nodes[qo[o]->index];
	}
	u->n_more = n->n_outputs - 1;
	u->node.n_outputs = n->n_outputs;
	u->n_codes = m;
	u->head = kind == T_CAT ? NULL : h;
	u->pool = kind == T_POOL;
	u->move = kind == T_MOVE;
	u->q = &p->nodes[q->index];
	u->skip[0] = q->index;
	u->skip[1] = relu ? (size_t)(relu - p->nodes) : (size_t)-1;
	snprintf(u->op, sizeof(u->op), "QLinear%s", ir_s(n->op_type));
	u->node.op_type = u->op;
	u->kernel = (struct rt_kernel){ "ai.onnx", u->op, 1, RT_OPEN, qt_run };
	/* qt_run reads codes stored channels last and keeps them so
	 * (layout_cl.c); of the moves, Resize's kernel does (k_resize.c),
	 * the others take plain codes */
	u->np.cl_in = 1;
	u->keeps_layout = 1;
	if (u->move && strcmp(ir_s(n->op_type), "Resize") && strcmp(ir_s(n->op_type), "Upsample"))
		u->np.cl_in = u->keeps_layout = 0;
	if (rt_qdq_unit_plan(p, i, u) == 0)
		return u;
fail:
	rt_qdq_unit_free(u);
	return NULL;
}

/* Run np's kernel on the tensors in[n_in] into out[0 .. n_out - 1] (new
 * references; n_out at most RT_QDQ_MAX_OUT): np's node, attributes and
 * opset, none of its plan's extras (no Concat region, cache, chain or
 * input that dies); cl: it may store its result channels last
 * (layout_cl.c). */
static int call_cl_n(struct rt_kctx *k, const struct rt_nplan *np, struct rt_value **in,
		     size_t n_in, int cl, struct rt_value **out, size_t n_out)
{
	struct rt_nplan tmp = *np;
	struct rt_value *outs[RT_QDQ_MAX_OUT + 4] = { 0 };
	struct rt_kctx c = *k;
	int rc;

	tmp.cat_dest = 0;
	tmp.cache = NULL;
	tmp.chain = NULL;
	tmp.kept = NULL;
	tmp.qdq = NULL;
	tmp.release = NULL;
	tmp.n_release = 0;
	tmp.cl_out = cl;
	c.np = &tmp;
	c.node = np->node;
	c.schema = np->schema;
	c.version = np->schema ? np->schema->since_version : 0;
	c.opset = np->opset;
	c.n_in = n_in;
	c.in = in;
	c.n_out = sizeof(outs) / sizeof(*outs);
	c.out = outs;
	c.epi = NULL;
	c.lowp = 0;
	rc = np->kernel->run(&c);
	for (size_t i = 0; rc >= 0 && i < n_out; i++)
		if (!outs[i] || outs[i]->kind != RT_TENSOR)
			rc = rt_err(k, "%s gave no tensor", ir_s(np->node->op_type));
	for (size_t i = 0; i < c.n_out; i++)
		if (rc >= 0 && i < n_out)
			out[i] = outs[i];
		else
			rt_value_unref(outs[i]);
	return rc;
}

static int call_cl(struct rt_kctx *k, const struct rt_nplan *np, struct rt_value **in,
		   size_t n_in, int cl, struct rt_value **out)
{
	return call_cl_n(k, np, in, n_in, cl, out, 1);
}

static int call(struct rt_kctx *k, const struct rt_nplan *np, struct rt_value **in,
		size_t n_in, struct rt_value **out)
{
	return call_cl(k, np, in, n_in, 0, out);
}

static int is_q8(const struct rt_value *v)
{
	return v && v->kind == RT_TENSOR &&
	       (v->dtype == IR_DTYPE_UINT8 || v->dtype == IR_DTYPE_INT8);
}

/* Code index (0..255) of element i of an 8-bit tensor: int8 -128 is 0. */
static inline unsigned code_ix(const struct rt_value *v, int64_t i)
{
	uint8_t b = ((const uint8_t *)v->data)[i];

	return v->dtype == IR_DTYPE_INT8 ? (unsigned)(b ^ 0x80) : b;
}

/* The codes of coded input j (dtype dt) at table index 0..n-1: for a
 * pair table (n 65536) input 0 is the index's high byte, input 1 its
 * low byte. */
static int grid(struct rt_kctx *k, int dt, size_t j, int64_t n, struct rt_value **out)
{
	int64_t dims[1] = { n };
	uint8_t *g;

	if (rt_tensor_new(k->mem, dt, 1, dims, out, k->d) < 0)
		return k->d->status;
	g = (*out)->data;
	for (int64_t i = 0; i < n; i++) {
		unsigned ix = (unsigned)(n == 256 ? i : j == 0 ? i >> 8 : i & 255);

		g[i] = (uint8_t)(dt == IR_DTYPE_INT8 ? ix ^ 0x80 : ix);
	}
	return 0;
}

/* The table: for each coded input (Concat) or once (the op), the output
 * code of every input code or pair, by the nodes' kernels. */
/* A derived unit's table (derived_at): for each code c of x, the
 * QuantizeLinear of the head of DequantizeLinear(c) and of the unary
 * unit's code of c dequantized, each node's kernel run on the 256 codes. */
static int derived_table(struct rt_kctx *k, struct rt_qdq *u)
{
	const struct rt_qdq *in = u->inner;
	struct rt_value *g = NULL, *fx = NULL, *fi = NULL, *ri = NULL, *ci = NULL, *fj = NULL;
	struct rt_value *r = NULL, *y = NULL, *a[2];
	int rc;

	if ((rc = grid(k, k->in[2]->dtype, 0, 256, &g)) < 0)
		return rc;
	if ((rc = call(k, u->dq[0], (struct rt_value *[]){ g, k->in[1], k->in[2] }, 3, &fx)) < 0 ||
	    (rc = call(k, in->dq[0], (struct rt_value *[]){ g, k->in[IN_INNER],
							    k->in[IN_INNER + 1] }, 3, &fi)) < 0 ||
	    (rc = call(k, in->head, &fi, 1, &ri)) < 0 ||
	    (rc = call(k, in->q, (struct rt_value *[]){ ri, k->in[IN_INNER + 2],
							k->in[IN_INNER + 3] }, 3, &ci)) < 0 ||
	    (rc = call(k, u->dq[1], (struct rt_value *[]){ ci, k->in[IN_DJ], k->in[IN_DJ + 1] },
		       3, &fj)) < 0)
		goto cleanup;
	a[u->derived] = fj;
	a[1 - u->derived] = fx;
	if ((rc = call(k, u->head, a, 2, &r)) < 0 ||
	    (rc = call(k, u->q, (struct rt_value *[]){ r, k->in[3], k->in[4] }, 3, &y)) < 0)
		goto cleanup;
	if (y->numel != 256 || !is_q8(y))
		rc = rt_err(k, "the table's QuantizeLinear gave %lld values", (long long)y->numel);
	else if (!(u->table = malloc(256)))
		rc = rt_oom(k);
	else
		memcpy(u->table, y->data, 256);
cleanup:
	rt_value_unref(g);
	rt_value_unref(fx);
	rt_value_unref(fi);
	rt_value_unref(ri);
	rt_value_unref(ci);
	rt_value_unref(fj);
	rt_value_unref(r);
	rt_value_unref(y);
	return rc < 0 ? rc : 0;
}

/* Where a move unit's output o's QuantizeLinear scale is among its
 * inputs (its zero point next): the first's after the codes' and their
 * DequantizeLinear's, a Split's others after the op's other inputs. */
static size_t q_at(const struct rt_qdq *u, size_t o)
{
	return o ? 3 + 2 + (u->head->node->n_inputs - 1) + 2 * (o - 1) : 3;
}

static int make_table(struct rt_kctx *k, struct rt_qdq *u)
{
	/* a MaxPool's or a move's: QuantizeLinear(DequantizeLinear(code))
	 * (run_pool, run_move) */
	const struct rt_nplan *head = u->pool || u->move ? NULL : u->head;
	/* one table for the op, one per coded input of a Concat, one per
	 * output of a move (a Split's each) */
	size_t m = u->n_codes, n_tab = head ? 1 : u->move ? 1 + u->n_more : m;
	int64_t n = head && m == 2 ? 65536 : 256;
	struct rt_value *g = NULL, *f[2] = { 0 }, *r = NULL, *y = NULL, *qin[3];
	uint8_t *tab = malloc((size_t)(n * (int64_t)n_tab));
	int rc = 0;

	if (u->inner) {
		free(tab);
		return derived_table(k, u);
	}
	if (!tab)
		return rt_oom(k);
	for (size_t t = 0; rc >= 0 && t < n_tab; t++) {
		for (size_t j = 0; rc >= 0 && j < (head ? m : 1); j++) {
			size_t in = head ? j : u->move ? 0 : t;
			struct rt_value *dqin[3] = { g, k->in[m + 2 * in], k->in[m + 2 * in + 1] };

			if ((rc = grid(k, k->in[m + 2 * in + 1]->dtype, j, n, &g)) < 0)
				break;
			dqin[0] = g;
			rc = call(k, u->dq[in], dqin, 3, &f[j]);
			rt_value_unref(g);
			g = NULL;
		}
		if (rc >= 0 && head)
			rc = call(k, head, f, m, &r);
		else if (rc >= 0)
			r = rt_value_ref(f[0]);
		qin[0] = r;
		qin[1] = k->in[u->move ? q_at(u, t) : 3 * m];
		qin[2] = k->in[(u->move ? q_at(u, t) : 3 * m) + 1];
		if (rc >= 0 && (rc = call(k, u->move && t ? u->q_more[t - 1] : u->q, qin, 3, &y)) >= 0) {
			if (y->numel != n || !is_q8(y))
				rc = rt_err(k, "the table's QuantizeLinear gave %lld values",
					    (long long)y->numel);
			else
				memcpy(tab + t * (size_t)n, y->data, (size_t)n);
		}
		for (int j = 0; j < 2; j++) {
			rt_value_unref(f[j]);
			f[j] = NULL;
		}
		rt_value_unref(r);
		rt_value_unref(y);
		r = y = NULL;
	}
	if (rc < 0) {
		free(tab);
		return rc;
	}
	u->table = tab;
	return 0;
}

struct pair {
	const struct rt_value *a, *b;
	uint8_t *y;
	const uint8_t *tab;
	const struct rt_qpair *q;           /* NULL: the table */
};

static void pair_run(void *ctx, const int64_t *off, const int64_t *step, int64_t len)
{
	const struct pair *c = ctx;

	/* in vectors (qdq_pair.c), each operand contiguous or one code */
	if (c->q) {
		rt_qpair_run(c->q, (const uint8_t *)c->a->data + off[0], step[0],
			     (const uint8_t *)c->b->data + off[1], step[1], c->y + off[2], len);
		return;
	}
	/* both inputs contiguous (no broadcast in this span): the codes'
	 * bytes straight, int8's flipped by a mask */
	if (step[0] == 1 && step[1] == 1) {
		const uint8_t *a = (const uint8_t *)c->a->data + off[0];
		const uint8_t *b = (const uint8_t *)c->b->data + off[1];
		unsigned ma = c->a->dtype == IR_DTYPE_INT8 ? 0x80u : 0u;
		unsigned mb = c->b->dtype == IR_DTYPE_INT8 ? 0x80u : 0u;
		uint8_t *y = c->y + off[2];

		for (int64_t i = 0; i < len; i++)
			y[i] = c->tab[(a[i] ^ ma) << 8 | (b[i] ^ mb)];
		return;
	}
	for (int64_t i = 0; i < len; i++)
		c->y[off[2] + i] = c->tab[code_ix(c->a, off[0] + i * step[0]) << 8 |
					  code_ix(c->b, off[1] + i * step[1])];
}

/* y[i] = tab[x[i]] for i < n, 64 bytes at a time in four 64-byte
 * permutes of the table's quarters (AVX-512 VBMI: 0.1 ns a byte against
 * 0.6 for the scalar loop); returns how many it did. */
__attribute__((target("avx512f,avx512bw,avx512vbmi")))
static int64_t map_vbmi(const uint8_t *x, int64_t n, const uint8_t *tab, uint8_t *y)
{
	__m512i t0 = _mm512_loadu_si512(tab), t1 = _mm512_loadu_si512(tab + 64);
	__m512i t2 = _mm512_loadu_si512(tab + 128), t3 = _mm512_loadu_si512(tab + 192);
	int64_t i = 0;

	for (; i + 64 <= n; i += 64) {
		__m512i b = _mm512_loadu_si512(x + i);
		__m512i lo = _mm512_permutex2var_epi8(t0, b, t1);
		__m512i hi = _mm512_permutex2var_epi8(t2, b, t3);

		_mm512_storeu_si512(y + i, _mm512_mask_blend_epi8(_mm512_movepi8_mask(b), lo, hi));
	}
	return i;
}

/* y = table[x] elementwise, n elements from `from`: a copy where the
 * table maps each code to itself. */
static void map_codes(const struct rt_value *x, int64_t from, int64_t n, const uint8_t *tab,
		      uint8_t *y)
{
	const uint8_t *b = (const uint8_t *)x->data + from;
	uint8_t rot[256];

	if (x->dtype == IR_DTYPE_INT8) {   /* indexed by the byte */
		for (int c = 0; c < 256; c++)
			rot[c] = tab[c ^ 0x80];
		tab = rot;
	}
	for (int c = 0; c < 256; c++)
		if (tab[c] != (uint8_t)c)
			break;
		else if (c == 255) {
			memcpy(y, b, (size_t)n);
			return;
		}
	for (int64_t i = rt_cpu_avx512vbmi() ? map_vbmi(b, n, tab, y) : 0; i < n; i++)
		y[i] = tab[b[i]];
}

/* Coded inputs 0..m-1 plain (copies of those stored channels last). */
static int plain_codes(struct rt_kctx *k, size_t m)
{
	int rc;

	for (size_t j = 0; j < m; j++)
		if ((rc = rt_cl_plain_in(k, j)) < 0)
			return rc;
	return 0;
}

struct cat_cl {
	struct rt_kctx *k;
	const uint8_t *tabs;      /* per input, indexed by the byte */
	const uint8_t *ident;     /* per input: its table maps each code to
				   * itself */
	uint8_t *y;
	int64_t c;                /* the output's channels */
};

/* w bytes from x to y: the common widths as whole moves. */
static inline void copy_codes(uint8_t *y, const uint8_t *x, int64_t w)
{
	switch (w) {
	case 8: memcpy(y, x, 8); break;
	case 16: memcpy(y, x, 16); break;
	case 32: memcpy(y, x, 32); break;
	case 64: memcpy(y, x, 64); break;
	default: memcpy(y, x, (size_t)w);
	}
}

/* Positions [lo, hi): each input's channels at the position, mapped (an
 * output position written whole at once: its cache lines are not read
 * back for a second input). */
static void cat_cl_rows(void *ctx, int64_t lo, int64_t hi)
{
	const struct cat_cl *j = ctx;
	struct rt_kctx *k = j->k;
	size_t m = (k->n_in - 2) / 3;

	for (int64_t p = lo; p < hi; p++) {
		uint8_t *y = j->y + p * j->c;

		for (size_t i = 0; i < m; i++) {
			int64_t ci = k->in[i]->dims[1];
			const uint8_t *x = (const uint8_t *)k->in[i]->data + p * ci;
			const uint8_t *t = j->tabs + 256 * i;

			if (j->ident[i])
				copy_codes(y, x, ci);
			else
				for (int64_t q = 0; q < ci; q++)
					y[q] = t[x[q]];
			y += ci;
		}
	}
}

/* A Concat of channels whose inputs are all stored channels last: the
 * result so too, position by position (1 done, 0 not taken). */
static int concat_cl(struct rt_kctx *k, struct rt_qdq *u, int dt, int axis,
		     const int64_t *dims)
{
	size_t m = u->n_codes;
	struct cat_cl j = { k, NULL, NULL, NULL, dims[1] };
	uint8_t *tabs, *ident;
	struct rt_value *y;

	for (size_t i = 0; i < m; i++)
		if (!(k->in[i]->flags & RT_VALUE_CL))
			return 0;
	if (axis != 1)
		return 0;
	if (!(tabs = malloc(257 * m)))
		return rt_oom(k);
	ident = tabs + 256 * m;
	for (size_t i = 0; i < m; i++) {   /* by the byte: int8's codes flipped */
		ident[i] = 1;
		for (int c = 0; c < 256; c++) {
			tabs[256 * i + c] = u->table[256 * i + (k->in[i]->dtype == IR_DTYPE_INT8 ?
							      c ^ 0x80 : c)];
			ident[i] &= tabs[256 * i + c] == (uint8_t)c;
		}
	}
	if (!(y = rt_out_tensor(k, 0, dt, k->in[0]->rank, dims))) {
		free(tabs);
		return IR_ENOMEM;
	}
	j.tabs = tabs;
	j.ident = ident;
	j.y = y->data;
	rt_parallel_for(k, y->numel / (dims[1] ? dims[1] : 1), 4096, cat_cl_rows, &j);
	free(tabs);
	rt_cl_set(y, 1);
	return 1;
}

/* y[i] = table[code of y[i]] in place, the codes int8 when sgn. */
static void map_bytes(uint8_t *y, int64_t n, const uint8_t *tab, int sgn)
{
	uint8_t rot[256];
	int same = 1;

	for (int c = 0; c < 256; c++) {
		rot[c] = tab[sgn ? c ^ 0x80 : c];
		same &= rot[c] == (uint8_t)c;
	}
	for (int64_t i = 0; !same && i < n; i++)
		y[i] = rot[y[i]];
}

static int run_concat(struct rt_kctx *k, struct rt_qdq *u, int dt)
{
	size_t m = u->n_codes;
	const struct rt_value *x0 = k->in[0];
	int64_t axis = rt_attr_int(k, "axis", 1), dims[RT_MAX_RANK], outer = 1, tail = 1, off = 0;
	struct rt_value *y;
	int rc;

	if (axis < 0)
		axis += x0->rank;
	if (axis < 0 || axis >= x0->rank)
		return rt_err(k, "axis %lld is out of range for rank %d",
			      (long long)rt_attr_int(k, "axis", 1), x0->rank);
	memcpy(dims, x0->dims, (size_t)x0->rank * sizeof(*dims));
	dims[axis] = 0;
	for (size_t j = 0; j < m; j++) {
		const struct rt_value *x = k->in[j];

		for (int d = 0; d < x0->rank; d++)
			if (x->rank != x0->rank || (d != axis && x->dims[d] != x0->dims[d]))
				return rt_err(k, "input %zu's shape does not match input 0's", j);
		dims[axis] += x->dims[axis];
	}
	if ((rc = concat_cl(k, u, dt, (int)axis, dims)) != 0)
		return rc < 0 ? rc : 0;
	if ((rc = plain_codes(k, m)) < 0)
		return rc;
	for (int64_t d = 0; d < axis; d++)
		outer *= dims[d];
	for (int d = (int)axis + 1; d < x0->rank; d++)
		tail *= dims[d];
	if (!(y = rt_out_tensor(k, 0, dt, x0->rank, dims)))
		return IR_ENOMEM;
	for (int64_t o = 0; o < outer; o++)
		for (size_t j = 0; j < m; j++) {
			int64_t len = k->in[j]->dims[axis] * tail;

			map_codes(k->in[j], o * len, len, u->table + 256 * j, (uint8_t *)y->data + off);
			off += len;
		}
	return 0;
}

static int run_binary(struct rt_kctx *k, struct rt_qdq *u, int dt)
{
	struct rt_value *a = k->in[0], *b = k->in[1], *y;
	int rank = a->rank > b->rank ? a->rank : b->rank;
	int64_t dims[RT_MAX_RANK];
	struct pair c;
	int cl, same, rc, lone_b;

	/* one operand of one element (a bias, a scale): its row (or column)
	 * of the pair table maps the other's codes, as a unary unit does;
	 * the layout stays */
	lone_b = b->numel == 1 && b->rank <= a->rank;
	if (lone_b || (a->numel == 1 && a->rank <= b->rank)) {
		const struct rt_value *x = lone_b ? a : b;
		unsigned fixed = code_ix(lone_b ? b : a, 0);
		uint8_t row[256];

		for (unsigned i = 0; i < 256; i++)
			row[i] = u->table[lone_b ? (i << 8 | fixed) : (fixed << 8 | i)];
		if (!(y = rt_out_tensor(k, 0, dt, x->rank, x->dims)))
			return IR_ENOMEM;
		map_codes(x, 0, y->numel, row, y->data);
		rt_cl_set(y, (x->flags & RT_VALUE_CL) != 0);
		return 0;
	}
	/* both stored channels last in one shape: element by element as
	 * they are; one so and the other one code per channel (a squeeze
	 * and excitation's scale): beside it, as (N, positions, C); else
	 * both plain */
	same = (a->flags & b->flags & RT_VALUE_CL) && a->rank == b->rank &&
	       !memcmp(a->dims, b->dims, (size_t)a->rank * sizeof(*a->dims));
	cl = same ? 1 : rt_cl_per_channel(a, b) ? 2 : rt_cl_per_channel(b, a) ? 3 : 0;
	if (!cl) {
		if ((rc = plain_codes(k, 2)) < 0)
			return rc;
		a = k->in[0];
		b = k->in[1];
	}
	for (int d = 0; d < rank; d++) {
		int64_t da = d < rank - a->rank ? 1 : a->dims[d - (rank - a->rank)];
		int64_t db = d < rank - b->rank ? 1 : b->dims[d - (rank - b->rank)];

		if (da != db && da != 1 && db != 1)
			return rt_err(k, "shapes do not broadcast");
		dims[d] = da == 1 ? db : da;
	}
	if (!(y = rt_out_tensor(k, 0, dt, rank, dims)))
		return IR_ENOMEM;
	c = (struct pair){ a, b, y->data, u->table, u->pair.ok ? &u->pair : NULL };
	if (cl >= 2) {
		struct rt_value v[3];

		rt_cl_views(a, b, y, cl, v);
		c.a = &v[0];
		c.b = &v[1];
		rt_bcast_run(k, (struct rt_value *[]){ &v[0], &v[1] }, 2, 3, v[2].dims, pair_run, &c);
	} else {
		rt_bcast_run(k, (struct rt_value *[]){ a, b }, 2, rank, dims, pair_run, &c);
	}
	rt_cl_set(y, cl != 0);
	return 0;
}

/* Does every window of g hold a position of the input (none all
 * padding: the written MaxPool's -inf)? */
static int windows_hold(const struct knn_geom *g)
{
	for (int d = 0; d < g->nsp; d++)
		for (int64_t o = 0; o < g->out[d]; o++) {
			int64_t at = o * g->stride[d] - g->pad[d], u = 0;

			while (u < g->kernel[d] && (at + u * g->dil[d] < 0 || at + u * g->dil[d] >= g->in[d]))
				u++;
			if (u == g->kernel[d])
				return 0;
		}
	return 1;
}

/* A MaxPool between DequantizeLinear and QuantizeLinear: as
 * DequantizeLinear (x_scale > 0, finite) is monotone, the written
 * graph's output is table[max of the window's codes] when every window
 * holds an input position; so on codes stored channels last (2-D), else
 * the three nodes' kernels as written. */
static int run_pool(struct rt_kctx *k, struct rt_qdq *u, int dt)
{
	struct rt_value *x = k->in[0], *f = NULL, *r = NULL, *y = NULL;
	const struct rt_value *xs = k->in[1];
	struct rt_value *dqin[3] = { x, k->in[1], k->in[2] }, *qin[3];
	int64_t dims[RT_MAX_RANK];
	struct knn_geom g;
	int rc;

	if ((x->flags & RT_VALUE_CL) && x->rank == 4 && xs->dtype == IR_DTYPE_FLOAT &&
	    *(const float *)xs->data > 0 && *(const float *)xs->data <= 3.4e38f &&
	    k->n_out >= 1 && (k->node->n_outputs < 2 || !k->node->outputs[1]) &&
	    knn_geom_init(k, x, NULL, KNN_EMPTY_OK | (rt_attr_int(k, "ceil_mode", 0) ? KNN_CEIL : 0),
			  &g) == 0 && windows_hold(&g)) {
		dims[0] = g.n;
		dims[1] = g.c;
		dims[2] = g.out[0];
		dims[3] = g.out[1];
		if (!(y = rt_out_tensor(k, 0, dt, 4, dims)))
			return IR_ENOMEM;
		knn_maxpool_cl_q8(k, &g, x->data, y->data, x->dtype == IR_DTYPE_INT8);
		map_bytes(y->data, y->numel, u->table, x->dtype == IR_DTYPE_INT8);
		rt_cl_set(y, 1);
		return 0;
	}
	if ((rc = plain_codes(k, 1)) < 0)
		return rc;
	dqin[0] = k->in[0];
	if ((rc = call(k, u->dq[0], dqin, 3, &f)) >= 0 && (rc = call(k, u->head, &f, 1, &r)) >= 0) {
		qin[0] = r;
		qin[1] = k->in[3];
		qin[2] = k->in[4];
		if ((rc = call(k, u->q, qin, 3, &y)) >= 0)
			rc = rt_out_set(k, 0, y);
	}
	rt_value_unref(f);
	rt_value_unref(r);
	return rc < 0 ? rc : 0;
}

/* A move op between DequantizeLinear and QuantizeLinear: its kernel on
 * the codes (stored channels last where it reads them so: a Resize),
 * each then mapped by the table, or taken as it is where the table maps
 * each code to itself and the dtype stays. */
/* A Split's pieces of the codes (in: the codes, plain, and the op's
 * other inputs), each mapped through its output's table, or given as
 * they are where that is the identity. */
static int run_split(struct rt_kctx *k, struct rt_qdq *u, struct rt_value **in)
{
	const struct ir_node *n = u->head->node;
	struct rt_value *r[RT_QDQ_MAX_OUT] = { 0 }, *y;
	int sgn = k->in[0]->dtype == IR_DTYPE_INT8, rc;

	if ((rc = call_cl_n(k, u->head, in, n->n_inputs, 0, r, n->n_outputs)) < 0)
		return rc;
	for (size_t o = 0; rc >= 0 && o < n->n_outputs; o++) {
		const uint8_t *tab = u->table + 256 * o;
		const struct rt_value *zp = k->in[q_at(u, o) + 1];
		int same = is_q8(zp) && zp->dtype == k->in[0]->dtype;

		if (!is_q8(zp)) {
			rc = rt_err(k, "output %zu's zero point is not 8-bit", o);
			break;
		}
		for (int c = 0; same && c < 256; c++)
			same = tab[sgn ? c ^ 0x80 : c] == (uint8_t)c;
		if (same) {
			rc = rt_out_set(k, o, r[o]);
			r[o] = NULL;
		} else if ((y = rt_out_tensor(k, o, zp->dtype, r[o]->rank, r[o]->dims))) {
			map_codes(r[o], 0, r[o]->numel, tab, y->data);
		} else {
			rc = IR_ENOMEM;
		}
	}
	for (size_t o = 0; o < n->n_outputs; o++)
		rt_value_unref(r[o]);
	return rc;
}

static int run_move(struct rt_kctx *k, struct rt_qdq *u, int dt)
{
	const struct ir_node *n = u->head->node;
	struct rt_value *in[MOVE_MAX_IN] = { 0 }, *r = NULL, *y;
	int cl = u->np.cl_in && (k->in[0]->flags & RT_VALUE_CL), rc;
	const uint8_t *tab = u->table;
	int same = k->in[0]->dtype == dt, sgn = k->in[0]->dtype == IR_DTYPE_INT8;

	if (!cl && (rc = plain_codes(k, 1)) < 0)
		return rc;
	in[0] = k->in[0];
	for (size_t j = 1; j < n->n_inputs; j++)
		in[j] = k->in[4 + j];
	if (u->n_more)
		return run_split(k, u, in);
	if ((rc = call_cl(k, u->head, in, n->n_inputs, cl, &r)) < 0)
		return rc;
	if (!is_q8(r) || r->dtype != k->in[0]->dtype) {
		rt_value_unref(r);
		return rt_err(k, "%s gave no codes", ir_s(n->op_type));
	}
	for (int c = 0; same && c < 256; c++)
		same = tab[sgn ? c ^ 0x80 : c] == (uint8_t)c;
	if (same)
		return rt_out_set(k, 0, r);
	if (!(y = rt_out_tensor(k, 0, dt, r->rank, r->dims))) {
		rt_value_unref(r);
		return IR_ENOMEM;
	}
	map_codes(r, 0, r->numel, tab, y->data);
	rt_cl_set(y, (r->flags & RT_VALUE_CL) != 0);
	rt_value_unref(r);
	return 0;
}

/* A binary unit's vectors (qdq_pair.c) where every scale is one float32
 * and every zero point one code: checked against the table just made. */
static int pair_make(struct rt_kctx *k, struct rt_qdq *u)
{
	const struct rt_value *p[6] = { k->in[2], k->in[3], k->in[4], k->in[5], k->in[6],
					k->in[7] };
	int dt[3];
	float s[3];
	int32_t z[3];

	if (u->n_codes != 2 || !u->head || u->pool || u->move || u->inner)
		return 0;
	for (int j = 0; j < 3; j++) {
		const struct rt_value *sc = p[2 * j], *zp = p[2 * j + 1];

		if (sc->dtype != IR_DTYPE_FLOAT || sc->numel != 1 || zp->numel != 1 || !is_q8(zp))
			return 0;
		dt[j] = zp->dtype;
		s[j] = *(const float *)sc->data;
		z[j] = zp->dtype == IR_DTYPE_INT8 ? *(const int8_t *)zp->data :
						    *(const uint8_t *)zp->data;
	}
	rt_qpair_make(&u->pair, ir_s(u->head->node->op_type), dt, s, z, u->table);
	return 0;
}

static int qt_run(struct rt_kctx *k)
{
	struct rt_qdq *u = (struct rt_qdq *)(void *)((char *)k->np - offsetof(struct rt_qdq, np));
	size_t m = u->n_codes;
	struct rt_value *y;
	int rc;

	for (size_t j = 0; j < m; j++)
		if (!is_q8(k->in[j]) || !is_q8(k->in[m + 2 * j + 1]) ||
		    k->in[j]->dtype != k->in[m + 2 * j + 1]->dtype)
			return rt_err(k, "input %zu is not of its zero point's 8-bit type", j);
	if (!is_q8(k->in[3 * m + 1]))
		return rt_err(k, "y_zero_point is not 8-bit");
	if (!u->table && ((rc = make_table(k, u)) < 0 || (rc = pair_make(k, u)) < 0))
		return rc;
	if (u->pool)
		return run_pool(k, u, k->in[3 * m + 1]->dtype);
	if (u->move)
		return run_move(k, u, k->in[3 * m + 1]->dtype);
	if (!u->head)
		return run_concat(k, u, k->in[3 * m + 1]->dtype);
	if (m == 2)
		return run_binary(k, u, k->in[3 * m + 1]->dtype);
	if (!(y = rt_out_tensor(k, 0, k->in[3 * m + 1]->dtype, k->in[0]->rank, k->in[0]->dims)))
		return IR_ENOMEM;
	map_codes(k->in[0], 0, y->numel, u->table, y->data);
	rt_cl_set(y, (k->in[0]->flags & RT_VALUE_CL) != 0);   /* code by code: the layout stays */
	return 0;
}
