/* qdq.c: quantized node units in the main graph.  A static QDQ model
 * (onnxruntime's quantizer, `opmig quantize --format qdq`) writes each
 * quantized Conv or MatMul as DequantizeLinear on its input and weights,
 * the float operation, and QuantizeLinear on its result; computed as
 * written, that is a float32 convolution over dequantized copies with a
 * pass over memory per DequantizeLinear and QuantizeLinear.  Like
 * onnxruntime (its QDQ selectors), the unit runs instead as one
 * QLinearConv or QLinearMatMul: exact integer sums (oneDNN's u8s8 where
 * the CPU has VNNI, k_qlinear.c) requantized once.  The result equals the
 * written graph up to its float rounding: the written float sums round
 * on each addition, the unit's do not, so an output within one rounding
 * of a quantization step's midpoint may land one step away (as it does in
 * onnxruntime).  `opmig run --exact` computes the graph as written.
 *
 * A unit (rt_qdq_mark, when the plan is built) is a Conv or MatMul whose
 *   input is DequantizeLinear(xq, x_scale[, x_zero_point]) per tensor;
 *   weights are DequantizeLinear of a constant 8-bit tensor, per tensor or
 *     per output channel (a Conv's axis 0, a 2-D MatMul B's axis 1);
 *   bias (Conv) is absent or DequantizeLinear of a constant int32 tensor
 *     with zero point 0 and scale x_scale * w_scale (float32, bit for bit:
 *     QLinearConv's bias scale);
 *   result goes, as its only use, into QuantizeLinear to 8 bits per tensor,
 *     through a Relu only when the zero point is the dtype's least value
 *     (the Relu then changes nothing: onnxruntime drops it too);
 * with every scale and zero point an initializer.  qdq_table.c finds the
 * other units (a Concat, an elementwise op, a MaxPool or a move of
 * elements between DequantizeLinear and QuantizeLinear; x * Sigmoid(x),
 * whose Sigmoid unit it then does too: its head is skipped).  The head of a unit then runs a plan of its own (the
 * unit's node made from the unit's inputs, writing the QuantizeLinear's
 * output), the QuantizeLinear and Relu are skipped, and so is a
 * DequantizeLinear all of whose uses are units.  Such a Conv whose
 * result is no QuantizeLinear's is a unit writing its float32 result
 * where oneDNN's integer convolution is exact (dq_conv_unit).  A ConvInteger or
 * MatMulInteger whose only reader is a Cast to float32 (a dynamic
 * quantizer's layer) is a unit too, writing float32 of its sums
 * (cast_unit_at), and so is a
 * Concat whose only reader is DynamicQuantizeLinear (cat_dql_unit_at:
 * the codes of its inputs written at their places).  Units run
 * when nothing may watch the nodes in between: not with an observer
 * (validate --layerwise), a run of chosen nodes, or --exact. */
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_conv_int.h"   /* knn_conv_integer_f32, knn_dq_conv_f32, knn_qconv_dnnl */
#include "runtime/kernels/k_quant_row.h"  /* kq_dynamic_quantize_cat */
#include "runtime/qdq_int.h"

static char qlinear_conv[] = "QLinearConv", qlinear_matmul[] = "QLinearMatMul",
	    default_domain[] = "";

enum { Q_X, Q_XS, Q_XZ, Q_W, Q_WS, Q_WZ, Q_YS, Q_YZ, Q_B, Q_MAX };

int rt_qdq_is_op(const struct ir_node *n, const char *op)
{
	return n && rt_default_domain(n) && !strcmp(ir_s(n->op_type), op);
}

static int64_t attr_int(const struct ir_node *n, const char *name, int64_t dflt)
{
	const struct ir_attr *a = ir_node_attr(n, name);

	return a && a->type == IR_ATTR_INT ? a->i : dflt;
}

/* The producer of v when it is a node of p's graph planned in p. */
static struct rt_nplan *producer(struct rt_gplan *p, const struct ir_value *v)
{
	return v ? rt_plan_node(p, v->producer) : NULL;
}

const struct rt_value *rt_qdq_init_val(const struct rt_session *s,
				       const struct rt_gplan *p, const struct ir_value *v)
{
	int slot;

	if (!v || v->graph != p->g || !v->init || (v->is_input && s->m->ir_version >= 4) ||
	    (slot = rt_plan_slot(p, v)) < 0)
		return NULL;
	for (size_t i = 0; i < p->n_consts; i++)
		if (p->const_slot[i] == slot)
			return p->const_val[i]->kind == RT_TENSOR ? p->const_val[i] : NULL;
	return NULL;
}

static int is_q8(int dtype)
{
	return dtype == IR_DTYPE_UINT8 || dtype == IR_DTYPE_INT8;
}

/* A DequantizeLinear (or QuantizeLinear) of p whose scale is a float32
 * initializer of 1 or n elements and zero point absent or an 8-bit
 * initializer of as many (dtype: the zero point's, or 0 absent); a
 * blocked or retyped one is none. */
static int qparams(const struct rt_session *s, const struct rt_gplan *p,
		   const struct ir_node *n, int64_t count, int *dtype)
{
	const struct rt_value *sc, *zp = NULL;

	if (n->n_inputs < 2 || n->n_outputs != 1 || attr_int(n, "block_size", 0) ||
	    ir_node_attr(n, "output_dtype") ||
	    !(sc = rt_qdq_init_val(s, p, n->inputs[1])) || sc->dtype != IR_DTYPE_FLOAT ||
	    (sc->numel != 1 && sc->numel != count))
		return 0;
	*dtype = 0;
	if (n->n_inputs > 2 && n->inputs[2]) {
		if (!(zp = rt_qdq_init_val(s, p, n->inputs[2])) || zp->numel != sc->numel)
			return 0;
		*dtype = zp->dtype;
	}
	return 1;
}

const struct ir_node *rt_qdq_dq_act(const struct rt_session *s, struct rt_gplan *p,
				    const struct ir_value *v)
{
	struct rt_nplan *d = producer(p, v);
	int zt;

	if (!d || !rt_qdq_is_op(d->node, "DequantizeLinear") || !qparams(s, p, d->node, 1, &zt) ||
	    !is_q8(zt))
		return NULL;
	return d->node;
}

/* The DequantizeLinear producing v from a constant 8-bit tensor, per
 * tensor or along axis `axis` of `count` (rank `rank`). */
static const struct ir_node *dq_weight(const struct rt_session *s, struct rt_gplan *p,
				       const struct ir_value *v, int rank, int axis,
				       int64_t count)
{
	struct rt_nplan *d = producer(p, v);
	const struct rt_value *w;
	int zt;

	if (!d || !rt_qdq_is_op(d->node, "DequantizeLinear") ||
	    !(w = rt_qdq_init_val(s, p, d->node->inputs[0])) || !is_q8(w->dtype) || w->rank != rank ||
	    !qparams(s, p, d->node, count, &zt) || (zt && zt != w->dtype))
		return NULL;
	if (rt_qdq_init_val(s, p, d->node->inputs[1])->numel > 1) {
		int64_t ax = attr_int(d->node, "axis", 1);

		if ((ax < 0 ? ax + rank : ax) != axis || w->dims[axis] != count)
			return NULL;
	}
	return d->node;
}

/* The bias B: DequantizeLinear of an int32 constant of m, zero point 0,
 * scale x_scale * w_scale[c] in float32 for each c. */
static const struct ir_node *dq_bias(const struct rt_session *s, struct rt_gplan *p,
				     const struct ir_value *v, const struct ir_node *dx,
				     const struct ir_node *dw, int64_t m)
{
	struct rt_nplan *d = producer(p, v);
	const struct rt_value *b, *sb, *zb, *sx, *sw;

	if (!d || !rt_qdq_is_op(d->node, "DequantizeLinear") || d->node->n_inputs < 2 ||
	    attr_int(d->node, "block_size", 0) || ir_node_attr(d->node, "output_dtype") ||
	    !(b = rt_qdq_init_val(s, p, d->node->inputs[0])) || b->dtype != IR_DTYPE_INT32 ||
	    b->numel != m || b->rank != 1 || !(sb = rt_qdq_init_val(s, p, d->node->inputs[1])) ||
	    sb->dtype != IR_DTYPE_FLOAT || (sb->numel != 1 && sb->numel != m))
		return NULL;
	if (d->node->n_inputs > 2 && d->node->inputs[2]) {
		if (!(zb = rt_qdq_init_val(s, p, d->node->inputs[2])) || zb->dtype != IR_DTYPE_INT32)
			return NULL;
		for (int64_t i = 0; i < zb->numel; i++)
			if (((const int32_t *)zb->data)[i])
				return NULL;
	}
	sx = rt_qdq_init_val(s, p, dx->inputs[1]);
	sw = rt_qdq_init_val(s, p, dw->inputs[1]);
	for (int64_t c = 0; c < m; c++) {
		float want = ((const float *)sx->data)[0] *
			     ((const float *)sw->data)[sw->numel == 1 ? 0 : c];
		float got = ((const float *)sb->data)[sb->numel == 1 ? 0 : c];

		if (memcmp(&want, &got, sizeof(want)))
			return NULL;
	}
	return d->node;
}

const struct ir_node *rt_qdq_q_out(const struct rt_session *s, struct rt_gplan *p,
				   const struct ir_value *v, struct rt_nplan **relu)
{
	struct rt_nplan *q = rt_plan_sole_use(p, v);
	const struct rt_value *zp;
	int zt;

	*relu = NULL;
	if (q && rt_qdq_is_op(q->node, "Relu") && q->fold == RT_FOLD_NONE && q->node->n_outputs == 1) {
		*relu = q;
		q = rt_plan_sole_use(p, q->node->outputs[0]);
	}
	if (!q || !rt_qdq_is_op(q->node, "QuantizeLinear") || q->fold != RT_FOLD_NONE ||
	    q->node->inputs[0] != (*relu ? (*relu)->node->outputs[0] : v) ||
	    !q->node->outputs[0] || !qparams(s, p, q->node, 1, &zt) || !is_q8(zt) ||
	    attr_int(q->node, "saturate", 1) != 1)
		return NULL;
	zp = rt_qdq_init_val(s, p, q->node->inputs[2]);
	if (*relu && (zt == IR_DTYPE_UINT8 ? ((const uint8_t *)zp->data)[0] != 0 :
		      ((const int8_t *)zp->data)[0] != -128))
		return NULL;
	return q->node;
}

/* Slot s is read by p's node `head` too: a release before it moves there. */
static int extend_life(struct rt_gplan *p, int slot, size_t head)
{
	for (size_t i = 0; i < head; i++) {
		struct rt_nplan *np = &p->nodes[i];

		for (size_t j = 0; j < np->n_release; j++) {
			int *q;

			if (np->release[j] != slot)
				continue;
			q = realloc(p->nodes[head].release,
				    (p->nodes[head].n_release + 1) * sizeof(int));
			if (!q)
				return -1;
			p->nodes[head].release = q;
			q[p->nodes[head].n_release++] = slot;
			np->release[j] = np->release[--np->n_release];
			return 0;
		}
	}
	return 0;
}

struct rt_qdq *rt_qdq_unit_new(const struct ir_node *head, size_t n_in)
{
	struct rt_qdq *u = calloc(1, sizeof(*u));

	if (!u || !(u->ins = calloc(n_in + 1, sizeof(*u->ins)))) {
		free(u);
		return NULL;
	}
	u->node = *head;
	u->node.domain = default_domain;
	u->node.inputs = u->ins;
	u->node.n_inputs = n_in;
	u->node.outputs = u->outs;
	u->node.n_outputs = 1;
	u->skip[0] = u->skip[1] = u->skip[2] = u->chain_from = (size_t)-1;
	return u;
}

int rt_qdq_unit_plan(struct rt_gplan *p, size_t head, struct rt_qdq *u)
{
	const char *op = ir_s(u->node.op_type);
	struct rt_nplan *np = &u->np, *h = &p->nodes[head];
	size_t n_in = u->node.n_inputs;

	np->node = &u->node;
	np->opset = h->opset;
	if (u->kernel.run) {
		np->kernel = &u->kernel;
	} else {
		np->schema = ir_registry_find_flags("ai.onnx", op, h->opset,
						    IR_REGISTRY_ORT_DEFAULT);
		np->kernel = np->schema ? rt_kernel_find("ai.onnx", op,
							 np->schema->since_version) : NULL;
	}
	np->stat = h->stat;
	if (!np->kernel || !(np->in = calloc(n_in + 1, sizeof(*np->in))) ||
	    !(np->out = calloc(u->node.n_outputs, sizeof(int))))
		return -1;
	for (size_t i = 0; i < n_in; i++) {
		np->in[i].slot = u->ins[i] ? rt_plan_slot(p, u->ins[i]) : -1;
		if (u->ins[i] && (np->in[i].slot < 0 || extend_life(p, np->in[i].slot, head) < 0))
			return -1;
	}
	for (size_t o = 0; o < u->node.n_outputs; o++)
		if ((np->out[o] = u->outs[o] ? rt_plan_slot(p, u->outs[o]) : -1) < 0 && u->outs[o])
			return -1;
	return np->out[0] < 0 ? -1 : 0;
}

void rt_qdq_unit_free(struct rt_qdq *u)
{
	if (!u)
		return;
	free(u->np.in);
	free(u->np.out);
	rt_chain_free(u->np.chain);
	rt_nplan_cache_free(&u->np);
	free(u->ins);
	free(u->dq);
	free(u->table);
	free(u->attrs);
	free(u);
}

/* A convolution's products per output element: its weights' elements per
 * output channel.  On oneDNN's exact integer primitives (VNNI) a layer
 * of any window runs as a unit: MobileNetV2's and SSDLite's depthwise
 * and narrow 1x1 layers took half the time so (bench/README.md, "The
 * eighth held-out set").  Without them, below QDQ_MIN_WINDOW, opmig's own
 * integer convolution costs more than the float layer as written
 * (MobileNetV2 QDQ 97 against 36 ms); a full window of 3x3 or more over a
 * few channels (an RGB image's first layer, 27 products) still runs as a
 * unit (the U2-Net block's 3 -> 16 layer, bench/README.md, "int8"). */
#define QDQ_MIN_WINDOW 64
#define QDQ_MIN_FULL_WINDOW 27

static int64_t window(const struct rt_value *w)
{
	int64_t n = 1;

	for (int d = 1; d < w->rank; d++)
		n *= w->dims[d];
	return n;
}

/* Whether a convolution's window is wide enough for a unit. */
static int window_fits(const struct rt_value *w)
{
	int64_t n = window(w);

	return knn_qconv_dnnl() || n >= QDQ_MIN_WINDOW ||
	       (n >= QDQ_MIN_FULL_WINDOW && w->rank > 2 && n / w->dims[1] >= 9 && w->dims[1] >= 3);
}

/* A Conv of DequantizeLinear inputs (dx, dw, and db or NULL, as
 * unit_at found them) whose float32 result goes on as it is (into an
 * InstanceNormalization, a Softmax, a graph output: no QuantizeLinear),
 * headed by p's node i, as one node on oneDNN's exact integer
 * convolution (knn_dq_conv_f32): the sum plus the bias's codes rounded
 * to float32 once, times x_scale * w_scale[o] (the bias's scale, bit for
 * bit), instead of two dequantized copies and a float32 convolution; the
 * written graph's float32 sums round on each addition, the unit's are
 * exact, so the two differ by the written graph's rounding (3-D U-Net's
 * QDQ Convs before InstanceNormalization: bench/README.md).  Only where
 * the integer convolution runs on oneDNN (VNNI): opmig's own integer
 * cores gain nothing on a float32 one here.  The Conv's epilogue chain
 * becomes the unit's. */
static struct rt_qdq *dq_conv_unit(struct rt_gplan *p, size_t i, const struct ir_node *dx,
				   const struct ir_node *dw, const struct ir_node *db)
{
	const struct ir_node *n = p->nodes[i].node;
	struct rt_qdq *u;

	if (!knn_qconv_dnnl() || !(u = rt_qdq_unit_new(n, db ? Q_MAX : Q_YS)))
		return NULL;
	u->ins[Q_X] = dx->inputs[0];
	u->ins[Q_XS] = dx->inputs[1];
	u->ins[Q_XZ] = dx->n_inputs > 2 ? dx->inputs[2] : NULL;
	u->ins[Q_W] = dw->inputs[0];
	u->ins[Q_WS] = dw->inputs[1];
	u->ins[Q_WZ] = dw->n_inputs > 2 ? dw->inputs[2] : NULL;
	if (db)
		u->ins[Q_B] = db->inputs[0];
	u->outs[0] = n->outputs[0];
	u->chain_from = i;
	u->kernel = (struct rt_kernel){ "ai.onnx", "Conv", 11, RT_OPEN, knn_dq_conv_f32 };
	if (rt_qdq_unit_plan(p, i, u) < 0) {
		rt_qdq_unit_free(u);
		return NULL;
	}
	return u;
}

/* A QLinearConv or QLinearMatMul unit headed by p's node i, or NULL. */
static struct rt_qdq *unit_at(struct rt_session *s, struct rt_gplan *p, size_t i)
{
	struct rt_nplan *h = &p->nodes[i], *relu;
	const struct ir_node *n = h->node, *dx, *dw, *db = NULL, *q;
	const struct rt_value *w;
	int conv = rt_qdq_is_op(n, "Conv");
	struct rt_qdq *u;
	size_t n_in = Q_B;

	if ((!conv && !rt_qdq_is_op(n, "MatMul")) || !h->kernel || h->fold != RT_FOLD_NONE ||
	    n->n_inputs < 2 || n->n_outputs != 1 || !n->outputs[0] ||
	    !(dx = rt_qdq_dq_act(s, p, n->inputs[0])) || !producer(p, n->inputs[1]) ||
	    !(w = rt_qdq_init_val(s, p, producer(p, n->inputs[1])->node->inputs[0])))
		return NULL;
	if (!(dw = conv ? dq_weight(s, p, n->inputs[1], w->rank, 0, w->dims[0]) :
		   dq_weight(s, p, n->inputs[1], 2, 1, w->rank == 2 ? w->dims[1] : -1)) ||
	    (conv && !window_fits(w)))
		return NULL;
	if (conv && n->n_inputs > 2 && n->inputs[2]) {
		if (!(db = dq_bias(s, p, n->inputs[2], dx, dw, w->dims[0])))
			return NULL;
		n_in = Q_MAX;
	}
	if (!(q = rt_qdq_q_out(s, p, n->outputs[0], &relu)))
		return conv ? dq_conv_unit(p, i, dx, dw, db) : NULL;
	if (!(u = rt_qdq_unit_new(n, n_in)))
		return NULL;
	u->node.op_type = conv ? qlinear_conv : qlinear_matmul;
	u->ins[Q_X] = dx->inputs[0];
	u->ins[Q_XS] = dx->inputs[1];
	u->ins[Q_XZ] = dx->n_inputs > 2 ? dx->inputs[2] : NULL;
	u->ins[Q_W] = dw->inputs[0];
	u->ins[Q_WS] = dw->inputs[1];
	u->ins[Q_WZ] = dw->n_inputs > 2 ? dw->inputs[2] : NULL;
	u->ins[Q_YS] = q->inputs[1];
	u->ins[Q_YZ] = q->inputs[2];
	if (db)
		u->ins[Q_B] = db->inputs[0];
	u->outs[0] = q->outputs[0];
	u->skip[0] = q->index;
	u->skip[1] = relu ? (size_t)(relu - p->nodes) : (size_t)-1;
	if (rt_qdq_unit_plan(p, i, u) < 0) {
		rt_qdq_unit_free(u);
		return NULL;
	}
	/* QLinearConv reads x stored channels last (k_qlinear.c) */
	u->np.cl_in = conv;
	return u;
}

/* Is v one float32 of rank 3 or less on every run: an initializer so,
 * DynamicQuantizeLinear's y_scale, or a Mul of two such (a dynamic
 * quantizer's layer scale, x_scale * w_scale)? */
static int one_float(const struct rt_session *s, struct rt_gplan *p, const struct ir_value *v,
		     int depth)
{
	const struct rt_value *c = rt_qdq_init_val(s, p, v);
	const struct rt_nplan *d = v ? rt_plan_node(p, v->producer) : NULL;

	if (c)
		return c->dtype == IR_DTYPE_FLOAT && c->numel == 1 && c->rank <= 3;
	if (!d)
		return 0;
	if (rt_qdq_is_op(d->node, "DynamicQuantizeLinear"))
		return d->node->n_outputs > 1 && d->node->outputs[1] == v;
	return depth < 2 && rt_qdq_is_op(d->node, "Mul") && d->schema &&
	       d->schema->since_version >= 7 && d->node->n_inputs == 2 &&
	       one_float(s, p, d->node->inputs[0], depth + 1) &&
	       one_float(s, p, d->node->inputs[1], depth + 1);
}

static int col_vector(const struct rt_value *c, int64_t n)
{
	return c && c->dtype == IR_DTYPE_FLOAT && c->rank == 1 && c->dims[0] == n;
}

/* Is v a float32 vector of n > 1, as a dynamic quantizer with weights
 * quantized per column writes a MatMulInteger layer's scale: a Mul of
 * one_float and a constant float32 [n] (or such a constant, folded)?
 * (scale_mul checks that it is computed before the unit's head.) */
static int col_scale(const struct rt_session *s, struct rt_gplan *p, const struct ir_value *v,
		     int64_t n)
{
	const struct rt_nplan *d = v ? rt_plan_node(p, v->producer) : NULL;

	if (n < 2)
		return 0;
	if (col_vector(rt_qdq_init_val(s, p, v), n))
		return 1;
	if (!d || !rt_qdq_is_op(d->node, "Mul") || !d->schema || d->schema->since_version < 7 ||
	    d->node->n_inputs != 2)
		return 0;
	for (int k = 0; k < 2; k++) {
		if (col_vector(rt_qdq_init_val(s, p, d->node->inputs[k]), n) &&
		    one_float(s, p, d->node->inputs[1 - k], 0))
			return 1;
	}
	return 0;
}

/* The Mul by a scale after a ConvInteger's Cast (c), as a dynamic
 * quantizer writes it: its only use, of two inputs, the other one
 * float32 (one_float) computed before the head (node i) runs, or for a
 * MatMulInteger of constant B with cols columns one per column
 * (col_scale; cols 0 otherwise); *other: that input.  NULL when there is
 * none such. */
static struct rt_nplan *scale_mul(const struct rt_session *s, struct rt_gplan *p,
				  const struct rt_nplan *c, size_t i, int64_t cols,
				  struct ir_value **other)
{
	struct rt_nplan *mu = rt_plan_sole_use(p, c->node->outputs[0]);
	const struct ir_node *n = mu ? mu->node : NULL;

	if (!mu || !rt_qdq_is_op(n, "Mul") || mu->fold != RT_FOLD_NONE || !mu->kernel ||
	    !mu->schema || mu->schema->since_version < 7 || n->n_inputs != 2 ||
	    n->n_outputs != 1 || !n->outputs[0] || !n->inputs[0] || !n->inputs[1])
		return NULL;
	*other = n->inputs[n->inputs[0] == c->node->outputs[0] ? 1 : 0];
	if (*other == c->node->outputs[0] ||
	    !(one_float(s, p, *other, 0) || col_scale(s, p, *other, cols)) ||
	    ((*other)->producer && (*other)->producer->index >= i))
		return NULL;
	return mu;
}

/* ConvInteger or MatMulInteger whose result's only use is a Cast to
 * float32 (a dynamic quantizer's layer: DynamicQuantizeLinear,
 * ConvInteger or MatMulInteger, Cast, Mul) as one node writing float32 of
 * the sums (knn_conv_integer_f32, knn_matmul_integer_f32: onnxruntime's
 * MatMulIntegerToFloat is the same fusion): the int32
 * tensor and the Cast's pass gone, bit for bit (int32 to float32 rounds
 * once either way).  The Mul by the layer's scale after it, when it is
 * one float32 (input CI_SCALE), too: float32(sum) * scale, the Mul's
 * one rounding; for a MatMulInteger of constant B, also a scale per
 * column (col_scale: the scales of weights quantized per column, times
 * the input's), which a Mul node computes before: the same product.  The
 * epilogue chain (chain.c) of the last node done (the bias Add and Relu
 * after the Mul; a Mul per channel, Add and Relu after the Cast) becomes
 * the unit's, done as it stores its result. */
#define CI_SCALE 4

static struct rt_qdq *cast_unit_at(const struct rt_session *s, struct rt_gplan *p, size_t i)
{
	struct rt_nplan *h = &p->nodes[i], *c, *mu;
	const struct ir_node *n = h->node;
	struct ir_value *scale = NULL;
	struct rt_qdq *u;
	int64_t cols = 0;
	int mm = rt_qdq_is_op(n, "MatMulInteger");

	if ((!mm && !rt_qdq_is_op(n, "ConvInteger")) || !h->kernel || h->fold != RT_FOLD_NONE ||
	    n->n_inputs > CI_SCALE ||
	    n->n_outputs != 1 || !n->outputs[0] || !(c = rt_plan_sole_use(p, n->outputs[0])) ||
	    !rt_qdq_is_op(c->node, "Cast") || c->fold != RT_FOLD_NONE || !c->kernel ||
	    c->node->n_outputs != 1 || !c->node->outputs[0] ||
	    attr_int(c->node, "to", 0) != IR_DTYPE_FLOAT)
		return NULL;
	if (mm && n->n_inputs > 1) {
		const struct rt_value *b = rt_qdq_init_val(s, p, n->inputs[1]);

		cols = b && b->rank == 2 ? b->dims[1] : 0;
	}
	mu = scale_mul(s, p, c, i, cols, &scale);
	if (!(u = rt_qdq_unit_new(n, mu ? CI_SCALE + 1 : n->n_inputs)))
		return NULL;
	for (size_t j = 0; j < n->n_inputs; j++)
		u->ins[j] = n->inputs[j];
	u->outs[0] = c->node->outputs[0];
	u->skip[0] = c->node->index;
	u->chain_from = c->node->index;   /* the Cast's steps (chain.c) */
	if (mu) {
		u->ins[CI_SCALE] = scale;
		u->outs[0] = mu->node->outputs[0];
		u->skip[1] = mu->node->index;
		u->chain_from = mu->node->index;
	}
	u->kernel = mm ? (struct rt_kernel){ "ai.onnx", "MatMulInteger", 10, RT_OPEN,
					     knn_matmul_integer_f32 } :
		    (struct rt_kernel){ "ai.onnx", "ConvInteger", 1, RT_OPEN, knn_conv_integer_f32 };
	if (rt_qdq_unit_plan(p, i, u) < 0) {
		rt_qdq_unit_free(u);
		return NULL;
	}
	return u;
}

/* A Concat whose result's only reader is DynamicQuantizeLinear (a
 * dynamic quantizer's input to a layer after a join) as one node
 * (kq_dynamic_quantize_cat): the range of the Concat's inputs, then
 * their codes written at their places, the Concat's float32 result (a
 * copy of every input) never made; bit for bit the two nodes, whose
 * elements and range are the same. */
static struct rt_qdq *cat_dql_unit_at(struct rt_gplan *p, size_t i)
{
	struct rt_nplan *h = &p->nodes[i], *d;
	const struct ir_node *n = h->node;
	struct rt_qdq *u;

	if (!rt_qdq_is_op(n, "Concat") || !h->kernel || h->fold != RT_FOLD_NONE || h->n_subs ||
	    n->n_inputs < 1 || n->n_outputs != 1 || !n->outputs[0] ||
	    ir_graph_is_output(p->g, n->outputs[0]) ||
	    !(d = rt_plan_sole_use(p, n->outputs[0])) ||
	    !rt_qdq_is_op(d->node, "DynamicQuantizeLinear") || d->fold != RT_FOLD_NONE ||
	    !d->kernel || d->node->n_inputs != 1 || d->node->n_outputs < 1 ||
	    d->node->n_outputs > 3 || !d->node->outputs[0])
		return NULL;
	for (size_t j = 0; j < n->n_inputs; j++)
		if (!n->inputs[j])
			return NULL;
	if (!(u = rt_qdq_unit_new(n, n->n_inputs)))
		return NULL;
	for (size_t j = 0; j < n->n_inputs; j++)
		u->ins[j] = n->inputs[j];
	u->node.n_outputs = d->node->n_outputs;
	for (size_t o = 0; o < d->node->n_outputs; o++)
		u->outs[o] = d->node->outputs[o];
	u->skip[0] = d->node->index;
	u->kernel = (struct rt_kernel){ "ai.onnx", "DynamicQuantizeLinear", 11, RT_OPEN,
					kq_dynamic_quantize_cat };
	if (rt_qdq_unit_plan(p, i, u) < 0) {
		rt_qdq_unit_free(u);
		return NULL;
	}
	return u;
}

/* Is DequantizeLinear node d read by units alone, as one of their
 * DequantizeLinear inputs (a unit that reads d's result itself, as a
 * weight-only unit its A, needs d run)? */
static int absorbed(struct rt_gplan *p, const struct rt_nplan *d)
{
	const struct ir_value *v = d->node->outputs[0];

	if (!rt_qdq_is_op(d->node, "DequantizeLinear") || !v || !v->n_uses ||
	    ir_graph_is_output(p->g, v))
		return 0;
	for (size_t i = 0; i < v->n_uses; i++) {
		const struct rt_nplan *c = rt_plan_node(p, v->uses[i]);

		if (!c || !c->qdq)
			return 0;
		for (size_t j = 0; j < c->qdq->node.n_inputs; j++)
			if (c->qdq->ins[j] == v)
				return 0;
	}
	return 1;
}

void rt_qdq_mark(struct rt_session *s, struct rt_gplan *p)
{
	size_t n_skip = 0, *skip;

	for (size_t i = 0; i < p->n_nodes; i++)
		if ((p->nodes[i].qdq = unit_at(s, p, i)) || (p->nodes[i].qdq = cast_unit_at(s, p, i)) ||
		    (p->nodes[i].qdq = rt_qdq_table_at(s, p, i)) ||
		    (p->nodes[i].qdq = cat_dql_unit_at(p, i)) ||
		    (p->nodes[i].qdq = rt_qdq_wo_at(s, p, i)) ||
		    (p->nodes[i].qdq = rt_unit_padconv_at(s, p, i)))
			p->n_qdq++;
	/* each unit's skip[], chain nodes and Split outputs' QuantizeLinear
	 * (qdq_wo.c's, qdq_table.c's), and the absorbed DequantizeLinear */
	if (!p->n_qdq || !(skip = calloc((3 + RT_QDQ_MAX_CHAIN + RT_QDQ_MAX_OUT) * p->n_qdq + p->n_nodes,
					 sizeof(*skip))))
		return;
	for (size_t i = 0; i < p->n_nodes; i++) {
		const struct rt_qdq *u = p->nodes[i].qdq;

		if (u) {
			for (int j = 0; j < 3; j++)
				if (u->skip[j] != (size_t)-1)
					skip[n_skip++] = u->skip[j];
			for (size_t j = 0; j < u->n_chain_nodes; j++)
				skip[n_skip++] = u->chain_nodes[j];
			for (size_t j = 0; j < u->n_more; j++)
				skip[n_skip++] = u->q_more[j]->node->index;
		}
		if (absorbed(p, &p->nodes[i]))
			skip[n_skip++] = i;
	}
	p->qdq_skip = skip;
	p->n_qdq_skip = n_skip;
}

void rt_qdq_begin(struct rt_session *s, struct rt_frame *f)
{
	struct rt_gplan *p = f->p;

	f->qdq = p->n_qdq && p->qdq_skip && f->skip && f->depth == 0 && !f->parent &&
		 !f->call && !s->o.observe && !s->o.only && !s->o.exact;
	for (size_t i = 0; f->qdq && i < p->n_qdq_skip; i++)
		f->skip[p->qdq_skip[i]] = 1;
}

struct rt_nplan *rt_qdq_plan(struct rt_frame *f, struct rt_nplan *np)
{
	return f->qdq && np->qdq ? &np->qdq->np : np;
}

void rt_qdq_release(struct rt_gplan *p)
{
	for (size_t i = 0; p->nodes && i < p->n_nodes; i++) {
		rt_qdq_unit_free(p->nodes[i].qdq);
		p->nodes[i].qdq = NULL;
	}
	free(p->qdq_skip);
	p->qdq_skip = NULL;
	p->n_qdq = p->n_qdq_skip = 0;
}
