/* layout_cl.c: activations stored channels last between the kernels that
 * can read them so.  oneDNN's convolutions compute channels last (N, H,
 * W, C); with opmig's tensors channels first (N, C, H, W) each one
 * reordered its input in and its output back, two passes over memory per
 * convolution, more than half the time of a U2-Net-style block at
 * 1024x1024 (bench/README.md, "Channels last between convolutions").  As
 * onnxruntime keeps a convolutional graph in its own layout from end to
 * end, a convolution whose every reader can take it now leaves its result
 * channels last, flagged RT_VALUE_CL (dims still N, C, spatial).
 *
 * Who may read such a value is the kernels of the ops cl_ops lists
 * (Conv, MaxPool, AveragePool, GlobalAveragePool, Resize and Upsample, Concat,
 * BatchNormalization, the elementwise activations and Add, Sub, Mul, Div
 * (with one value a channel on the other side): k_conv.c, k_pool.c,
 * k_norm.c, k_resize.c, k_slice.c,
 * kel_unary and kel_binary compute on it as it is or ask rt_cl_plain_in
 * for a plain copy).  Before any other node (or a
 * function call) runs, the
 * engine gives it plain copies (rt_cl_begin), so a wrong guess of the
 * plan costs a reorder, never a wrong result; a graph's outputs leave
 * plain (rt_cl_plain_value).  The plan (rt_cl_mark) lets a Conv of the
 * main graph store channels last when the value its chain ends in is no
 * graph output, is read in the main graph only and every reader is
 * of a listed op (so too a MaxPool's or a Resize's, which keep the layout
 * of their input); not under an observer (validate --layerwise sees every value),
 * a run of chosen nodes, --exact (the graph as written), or with
 * OPMIG_NO_CL set (for comparing the two).  chain.c runs
 * no epilogue over a channels-last value, catbuf.c gives no Concat region
 * to one.
 *
 * Quantized units (qdq.c) take part as the nodes that run: a QLinearConv
 * unit reads its 8-bit input channels last and stores its codes so (no
 * reorder on either side of oneDNN's integer convolution), a table unit
 * (qdq_table.c) maps codes where they are (a Concat of channels position
 * by position; a nearest Resize's unit resizes them so, the other moves'
 * units take plain codes), and DequantizeLinear and QuantizeLinear per tensor keep
 * the layout, so a QDQ graph's MaxPool and Resize between units compute
 * on channels-last floats; the nodes a unit does read nothing. */
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/pgemm.h"   /* the 16 x 16 transposes */
#include "runtime/qdq_int.h"     /* units read their own inputs */

/* ---- the two layouts ---------------------------------------------------- */

struct cl_job {
	const unsigned char *x;
	unsigned char *y;
	int64_t c, sp;
	size_t es;
	int avx512;
};

#define CL_TILE 32

/* Tile [c0, c0 + CL_TILE) x [s0, s0 + CL_TILE) of plane b from (sp, c)
 * to (c, sp), element by element of size es; whole 4-byte tiles as
 * 16 x 16 blocks in AVX-512 registers (rt_pgemm_tr16_k512: 1.1 -> 0.6 ns an
 * element of a 96-channel 112x112 Transpose). */
static void cl_tile(const struct cl_job *j, int64_t b, int64_t c0, int64_t s0)
{
	int64_t c1 = c0 + CL_TILE < j->c ? c0 + CL_TILE : j->c;
	int64_t s1 = s0 + CL_TILE < j->sp ? s0 + CL_TILE : j->sp;
	int64_t base = b * j->c * j->sp;

	if (j->es == 4 && c1 - c0 == CL_TILE && s1 - s0 == CL_TILE && j->avx512) {
		const float *x = (const float *)j->x + base;
		float *y = (float *)j->y + base;

		for (int64_t c = c0; c < c1; c += 16)
			for (int64_t s = s0; s < s1; s += 16)
				rt_pgemm_tr16_k512(x + s * j->c + c, j->c, y + c * j->sp + s, j->sp);
		return;
	}

#define CL_LOOP(T) do { \
		const T *x = (const T *)j->x + base; \
		T *y = (T *)j->y + base; \
		for (int64_t c = c0; c < c1; c++) \
			for (int64_t s = s0; s < s1; s++) \
				y[c * j->sp + s] = x[s * j->c + c]; \
	} while (0)
	switch (j->es) {
	case 1: CL_LOOP(uint8_t); break;
	case 2: CL_LOOP(uint16_t); break;
	case 4: CL_LOOP(uint32_t); break;
	case 8: CL_LOOP(uint64_t); break;
	default:
		for (int64_t c = c0; c < c1; c++)
			for (int64_t s = s0; s < s1; s++)
				memcpy(j->y + (size_t)(base + c * j->sp + s) * j->es,
				       j->x + (size_t)(base + s * j->c + c) * j->es, j->es);
	}
#undef CL_LOOP
}

/* Work item i: one row of spatial tiles of one plane and channel tile. */
static void cl_rows(void *ctx, int64_t lo, int64_t hi)
{
	const struct cl_job *j = ctx;
	int64_t ct = (j->c + CL_TILE - 1) / CL_TILE, st = (j->sp + CL_TILE - 1) / CL_TILE;

	for (int64_t i = lo; i < hi; i++) {
		int64_t b = i / (ct * st), r = i % (ct * st);

		cl_tile(j, b, (r / st) * CL_TILE, (r % st) * CL_TILE);
	}
}

/* n planes of c channels of sp elements of es bytes, x channels last,
 * into y channels first: over k's threads, or on the caller's thread
 * without k. */
void rt_cl_to_first(struct rt_kctx *k, const void *x, void *y, int64_t n, int64_t c,
		    int64_t sp, size_t es)
{
	struct cl_job j = { x, y, c, sp, es, rt_cpu_avx512f() };
	int64_t tiles = n * ((c + CL_TILE - 1) / CL_TILE) * ((sp + CL_TILE - 1) / CL_TILE);

	if (n * c * sp <= 0)
		return;
	if (k)
		rt_parallel_for(k, tiles, 64, cl_rows, &j);
	else
		cl_rows(&j, 0, tiles);
}

void rt_cl_set(struct rt_value *y, int cl)
{
	if (y)
		y->flags = cl ? y->flags | RT_VALUE_CL : y->flags & ~RT_VALUE_CL;
}

/* A plain copy of channels-last v (a new reference in *out), made with k
 * (its threads) or, without one, on the caller's thread. */
static int plain_copy(struct rt_kctx *k, struct rt_mem *mem, const struct rt_value *v,
		      struct rt_value **out, struct ir_diag *d)
{
	int wide = (v->flags & RT_VALUE_WIDE) != 0;   /* float32 data (lowp.c) */
	size_t es = wide ? sizeof(float) : rt_dtype_size(v->dtype);
	int64_t sp = 1;
	int rc;

	if ((rc = rt_tensor_new(mem, wide ? IR_DTYPE_FLOAT : v->dtype, v->rank, v->dims,
				out, d)) < 0)
		return rc;
	if (wide) {
		(*out)->dtype = v->dtype;
		(*out)->flags |= RT_VALUE_WIDE;
	}
	for (int i = 2; i < v->rank; i++)
		sp *= v->dims[i];
	rt_cl_to_first(k, v->data, (*out)->data, v->dims[0], v->dims[1], sp, es);
	return 0;
}

int rt_cl_plain_value(struct rt_mem *mem, struct rt_value **v, struct ir_diag *d)
{
	struct rt_value *c;
	int rc;

	if (!*v || (*v)->kind != RT_TENSOR || !((*v)->flags & RT_VALUE_CL))
		return 0;
	if ((rc = plain_copy(NULL, mem, *v, &c, d)) < 0)
		return rc;
	rt_value_unref(*v);
	*v = c;
	return 0;
}

/* Is x stored channels last (N, C, spatial) and o, stored plain, of no
 * higher rank, one value for each channel or each image at most: ones
 * on x's spatial axes, N or 1 and C or 1 on its first two?  (A squeeze
 * and excitation's scale, a per-channel bias; one element is one such.)
 * o stored channels last with no extent in space lies as it would plain
 * (a convolution's result on a pooled plane). */
int rt_cl_per_channel(const struct rt_value *x, const struct rt_value *o)
{
	int lead = x->rank - o->rank;

	if (!(x->flags & RT_VALUE_CL) || lead < 0 ||
	    ((o->flags & RT_VALUE_CL) && (o->rank < 3 || rt_numel(o->rank - 2, o->dims + 2) != 1)))
		return 0;
	if (rt_numel(o->rank, o->dims) == 1)
		return 1;
	if (x->rank < 3)
		return 0;
	for (int i = lead; i < x->rank; i++)
		if (o->dims[i - lead] != 1 && (i > 1 || o->dims[i - lead] != x->dims[i]))
			return 0;
	return 1;
}

/* v (x's shape, or per_channel of x's) seen as it lies beside x stored
 * channels last: (N, positions, C). */
void rt_cl_view(const struct rt_value *v, const struct rt_value *x, struct rt_value *out)
{
	int lead = x->rank - v->rank;

	*out = *v;
	out->rank = 3;
	out->dims[0] = lead > 0 ? 1 : v->dims[0];
	out->dims[2] = lead > 1 ? 1 : v->dims[1 - lead];
	out->dims[1] = rt_numel(v->rank, v->dims) / (out->dims[0] * out->dims[2]);
}

void rt_cl_views(const struct rt_value *a, const struct rt_value *b, const struct rt_value *y,
		 int cl, struct rt_value v[3])
{
	const struct rt_value *x = cl == 2 ? a : b;

	rt_cl_view(a, x, &v[0]);
	rt_cl_view(b, x, &v[1]);
	rt_cl_view(y, x, &v[2]);
}

/* ---- kernels ------------------------------------------------------------- */

int rt_cl_plain_in(struct rt_kctx *k, size_t i)
{
	struct rt_value *v = i < k->n_in ? k->in[i] : NULL;
	struct ir_diag sub;
	int rc;

	if (!v || v->kind != RT_TENSOR || !(v->flags & RT_VALUE_CL))
		return 0;
	if (!k->plain)
		return rt_err(k, "input %zu is stored channels last where no copy can be kept",
			      i);
	ir_diag_init(&sub);
	if ((rc = plain_copy(k, k->mem, v, &k->plain[i], &sub)) < 0)
		return sub.status ? rt_err(k, "%s", sub.msg) : rc;
	k->in[i] = k->plain[i];
	return 0;
}

int rt_cl_may_write(const struct rt_kctx *k)
{
	return k->np && k->np->cl_out && k->f && k->f->depth == 0 && !k->f->parent &&
	       !k->f->call && !k->np->cat_dest && k->n_out >= 1;
}

int rt_cl_begin(struct rt_kctx *k)
{
	int rc;

	if (k->np && k->np->cl_in)
		return 0;
	for (size_t i = 0; i < k->n_in; i++)
		if ((rc = rt_cl_plain_in(k, i)) < 0)
			return rc;
	return 0;
}

void rt_cl_end(struct rt_kctx *k)
{
	for (size_t i = 0; k->plain && i < k->n_in; i++) {
		rt_value_unref(k->plain[i]);
		k->plain[i] = NULL;
	}
}

/* ---- the plan ------------------------------------------------------------- */

/* The default domain's ops whose kernels read channels-last inputs, sorted:
 * Conv (k_conv.c), MaxPool, AveragePool and GlobalAveragePool (k_pool.c), Resize and
 * Upsample (k_resize.c), BatchNormalization in inference (k_norm.c),
 * Concat (k_slice.c), the kernels on kel_unary (k_act.c,
 * k_elem.c) and on kel_binary (k_binary.c), QLinearConv (k_qlinear.c),
 * DequantizeLinear and QuantizeLinear (k_quant.c: per tensor the layout
 * stays). */
static const char *const cl_ops[] = {
	"Abs", "Add", "AveragePool", "BatchNormalization", "Ceil", "Celu", "Clip", "Concat", "Conv",
	"DequantizeLinear", "Div", "Elu",
	"Erf", "Exp", "Floor", "GlobalAveragePool", "HardSigmoid", "HardSwish", "LeakyRelu", "Log",
	"MaxPool", "Mish",
	"Mul", "Neg", "QLinearConv", "QuantizeLinear", "Reciprocal", "Relu", "Resize", "Round",
	"Selu", "Sigmoid", "Softplus", "Softsign", "Sqrt", "Sub", "Swish", "Tanh",
	"ThresholdedRelu", "Transpose", "Upsample"
};

static int cmp_op(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int reads_cl(const struct rt_nplan *np)
{
	const char *op = ir_s(np->node->op_type);

	return np->kernel && !np->n_subs && rt_default_domain(np->node) &&
	       bsearch(&op, cl_ops, sizeof(cl_ops) / sizeof(*cl_ops), sizeof(*cl_ops),
		       cmp_op) != NULL;
}

/* The ops that may store their result channels last: Conv, and those that
 * keep the layout of a channels-last input (the elementwise ones do so
 * whatever the plan says). */
static int keeps_cl(const char *op)
{
	return !strcmp(op, "Conv") || !strcmp(op, "MaxPool") || !strcmp(op, "AveragePool") ||
	       !strcmp(op, "Resize") ||
	       !strcmp(op, "Upsample") || !strcmp(op, "Transpose") || !strcmp(op, "QLinearConv");
}

/* Does every reader of v read it in p's graph with a listed kernel?  The
 * readers are the nodes that run: with quantized units (qdq.c) a unit
 * reads its own inputs (rd: the unit's plan, else the node's) and the
 * nodes it does are none; bad[slot]: a reader that runs takes no
 * channels-last input. */
static int readers_take(struct rt_gplan *p, const struct ir_value *v, const unsigned char *bad)
{
	int slot = rt_plan_slot(p, v);

	if (!v || !v->n_uses || ir_graph_is_output(p->g, v) || slot < 0 || bad[slot])
		return 0;
	for (size_t u = 0; u < v->n_uses; u++)
		if (!rt_plan_node(p, v->uses[u]))
			return 0;
	return 1;
}

/* The plan run at node i: a unit's (qdq.c) or the node's own. */
static struct rt_nplan *run_plan(struct rt_gplan *p, size_t i)
{
	return p->nodes[i].qdq ? &p->nodes[i].qdq->np : &p->nodes[i];
}

/* A node that runs at i and stores its result as its input is stored
 * (DequantizeLinear and QuantizeLinear per tensor, a table unit): its
 * result, 0 when it is none such. */
static const struct ir_value *keeper_out(struct rt_gplan *p, size_t i)
{
	const struct rt_nplan *np = &p->nodes[i];
	const struct ir_node *n = np->node;

	if (np->qdq)
		return np->qdq->keeps_layout ? np->qdq->outs[0] : NULL;
	return n->n_outputs == 1 && (rt_default_domain(n) &&
				     (!strcmp(ir_s(n->op_type), "DequantizeLinear") ||
				      !strcmp(ir_s(n->op_type), "QuantizeLinear"))) ?
	       n->outputs[0] : NULL;
}

/* bad[slot] for each slot some running node reads without taking it
 * channels last (skip: the nodes units do, not run), in reverse order: a
 * node keeping its input's layout whose result some reader would get a
 * plain copy of takes a plain input instead (8-bit codes copied, not
 * the float32 DequantizeLinear of them: a graph's output). */
static void mark_bad(struct rt_gplan *p, const unsigned char *skip, unsigned char *bad)
{
	for (size_t i = p->n_nodes; i-- > 0;) {
		struct rt_nplan *r = run_plan(p, i);
		const struct ir_value *o = keeper_out(p, i);

		if (skip[i])
			continue;
		if (o && r->cl_in && !readers_take(p, o, bad))
			r->cl_in = 0;
		for (size_t j = 0; j < r->node->n_inputs; j++)
			if (r->in[j].slot >= 0 && !r->cl_in)
				bad[r->in[j].slot] = 1;
	}
}

int rt_cl_mark(struct rt_session *s, struct rt_gplan *p)
{
	const char *off = getenv("OPMIG_NO_CL");
	unsigned char *skip, *bad;

	if (s->o.observe || s->o.only || s->o.exact || (off && *off && *off != '0'))
		return 0;
	if (!(skip = calloc(p->n_nodes + 1, 1)) || !(bad = calloc(p->n_slots + 1, 1))) {
		free(skip);
		return IR_ENOMEM;
	}
	for (size_t i = 0; i < p->n_qdq_skip; i++)
		skip[p->qdq_skip[i]] = 1;
	for (size_t i = 0; i < p->n_nodes; i++)
		p->nodes[i].cl_in = reads_cl(&p->nodes[i]);
	mark_bad(p, skip, bad);
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct rt_nplan *np = run_plan(p, i);
		const struct ir_node *n = np->node;
		const struct ir_value *v;

		if (skip[i] || !np->kernel || !rt_default_domain(n) ||
		    p->nodes[i].fold != RT_FOLD_NONE || !keeps_cl(ir_s(n->op_type)) ||
		    n->n_outputs != 1)
			continue;
		/* the value the chain of steps done in the kernel ends in */
		v = np->chain ? p->nodes[np->chain->steps[np->chain->n - 1].node].node->outputs[0] :
		    n->outputs[0];
		np->cl_out = readers_take(p, v, bad);
	}
	free(skip);
	free(bad);
	return 0;
}
