/* chain.c: per-channel epilogues in the main graph.  A node whose
 * float32 result goes, one consumer after another, through an inference
 * BatchNormalization, Mul/Add/Sub/Div by a per-channel constant, Relu or
 * Clip with constant bounds (Inception's Conv -> BN -> Mul -> Add -> Relu,
 * ResNet's Conv -> BN -> Relu and Add -> Relu, DenseNet's BN -> Mul -> Add
 * -> Relu, MobileNet's Conv -> Clip) has those steps done in one pass over
 * its result, plane by plane while each plane is in cache, instead of a
 * pass each.  The pass does each node's own float operation in the
 * node's order (BatchNormalization's x * mul + add with the coefficients
 * its kernel computes, rt_bn_coeff; Relu's and Clip's comparisons as
 * k_act.c writes them), so the results are bit-identical to running the
 * nodes.
 *
 * A residual Add (or Sum of two: ResNet's Conv -> BN -> Add -> Relu,
 * MobileNetV2's projections) joins the chain too, its other operand a
 * tensor of the result's shape that the run has already computed: the
 * Add then reads it in the pass instead of writing a result of its own.
 * When the run has not (the shortcut computed after the head), the Add
 * runs as a node, heading the steps after it.
 *
 * The analysis (rt_chain_mark, when the plan is built) finds chains by
 * the graph alone: each value in between has one consumer and is no graph
 * output, and each step's other inputs are constants (an Add's may not
 * be).  After the head ran
 * (rt_chain_apply), its result must be a float32 tensor of its own, and a
 * run does the steps up to the first whose operands are not at hand (a
 * bound value, or a kept constant result, fold.c), not float32, or
 * broadcast beyond the channel axis; that step and the rest run as nodes.
 * An observer (validate --layerwise) sees every node: no fusing then.
 * A kernel may instead do the steps itself as it stores its result
 * (rt_kctx_epilogue, in rt_int.h: the direct convolutions), span by span
 * while they are in cache; exec then only moves the result and skips
 * the steps (rt_epilogue_end).  One exception to the nodes' bits: a
 * float32 convolution on oneDNN folds a first BatchNormalization step
 * into its weights and bias (rt_epilogue_bn_fold; not under
 * OPMIG_NO_BNFOLD, the tests' reference, nor --exact). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <immintrin.h>

#include "runtime/kernels/k_conv_epi512.h"   /* the steps in registers */
#include "runtime/kernels/pgemm.h"           /* rt_pgemm_ok: AVX-512 */
#include "runtime/qdq_int.h"   /* units that take a node's chain */

static int since(const struct rt_nplan *np)
{
	return np->schema ? (int)np->schema->since_version : 0;
}

/* Whether np may be a step (or one of a step's nodes, chain_act.c): one
 * output, a kernel of the default domain, computed in each run. */
int rt_chain_steppable(const struct rt_nplan *np)
{
	const struct ir_node *n = np->node;

	return np->kernel && !np->n_subs && n->n_outputs == 1 && n->outputs[0] &&
	       rt_default_domain(n) && np->fold == RT_FOLD_NONE;
}

/* The step np would be on a chain whose value so far is v (0: none):
 * its other inputs must be constants. */
static int step_kind(const struct rt_session *s, const struct rt_gplan *p,
		     const struct rt_nplan *np, const struct ir_value *v, int *operand)
{
	const struct ir_node *n = np->node;
	const char *op = ir_s(n->op_type);
	const struct ir_attr *a;

	*operand = -1;
	if (!rt_chain_steppable(np))
		return 0;
	if (!strcmp(op, "Relu"))
		return n->n_inputs == 1 ? RT_CHAIN_RELU : 0;
	if (!strcmp(op, "HardSwish"))
		return n->n_inputs == 1 ? RT_CHAIN_HSWISH : 0;
	if (!strcmp(op, "HardSigmoid"))
		return n->n_inputs == 1 ? RT_CHAIN_HSIG : 0;
	if (!strcmp(op, "Transpose") || !strcmp(op, "Identity") ||
	    (!strcmp(op, "Reshape") && n->n_inputs == 2 && n->inputs[0] == v &&
	     rt_fold_value_const(s, p, n->inputs[1])))
		return n->inputs[0] == v ? RT_CHAIN_MOVE : 0;
	if (!strcmp(op, "Clip")) {
		/* bounds: attributes before opset 11, constant inputs after */
		if (n->inputs[0] != v)
			return 0;
		for (size_t i = 1; i < n->n_inputs; i++)
			if (n->inputs[i] && !rt_fold_value_const(s, p, n->inputs[i]))
				return 0;
		return RT_CHAIN_CLIP;
	}
	if (!strcmp(op, "BatchNormalization")) {
		if (since(np) < 9 || n->n_inputs != 5 || n->inputs[0] != v ||
		    ((a = ir_node_attr(n, "training_mode")) && a->i != 0))
			return 0;
		for (size_t i = 1; i < 5; i++)
			if (!n->inputs[i] || !rt_fold_value_const(s, p, n->inputs[i]))
				return 0;
		return RT_CHAIN_BN;
	}
	if (n->n_inputs != 2 || since(np) < 7 || !n->inputs[0] || !n->inputs[1])
		return 0;
	*operand = n->inputs[0] == v ? 1 : 0;
	if (!rt_fold_value_const(s, p, n->inputs[*operand]))
		return !strcmp(op, "Add") || (!strcmp(op, "Sum") && since(np) >= 8) ?
		       RT_CHAIN_ADDT : 0;
	if (!strcmp(op, "Mul"))
		return RT_CHAIN_MUL;
	if (!strcmp(op, "Add") || (!strcmp(op, "Sum") && since(np) >= 8))
		return RT_CHAIN_ADD;
	if (!strcmp(op, "Sub"))
		return *operand ? RT_CHAIN_SUB : RT_CHAIN_RSUB;
	if (!strcmp(op, "Div"))
		return *operand ? RT_CHAIN_DIV : RT_CHAIN_RDIV;
	return 0;
}

static int chain_of(const struct rt_session *s, struct rt_gplan *p, size_t head)
{
	struct rt_nplan *np = &p->nodes[head], *c;
	const struct ir_value *v = np->node->outputs[0];
	struct rt_chain_step steps[RT_CHAIN_MAX] = { { 0 } };
	struct rt_chain *ch;
	size_t n = 0;
	int kind, operand;

	/* an Add of two tensors is on the chains of both its inputs: its own
	 * chain is made once */
	if (np->chain)
		return 0;
	while (n < RT_CHAIN_MAX) {
		steps[n].n_aux = 0;
		if ((c = rt_plan_sole_use(p, v)) && (kind = step_kind(s, p, c, v, &operand)) != 0) {
			steps[n].kind = kind;
			steps[n].operand = operand;
		} else if (!(c = rt_chain_act_use(p, v, &steps[n]))) {
			break;
		}
		steps[n].node = (size_t)(c - p->nodes);
		n++;
		v = c->node->outputs[0];
		if (n >= 2 && steps[n - 2].kind == RT_CHAIN_MOVE)
			break;   /* the move's one follower ends the chain */
	}
	/* a move only before a Relu or Clip (see rt_int.h) */
	if (n > 0 && steps[n - 1].kind == RT_CHAIN_MOVE)
		n--;
	else if (n >= 2 && steps[n - 2].kind == RT_CHAIN_MOVE &&
		 steps[n - 1].kind != RT_CHAIN_RELU && steps[n - 1].kind != RT_CHAIN_CLIP)
		n -= 2;
	if (n == 0)
		return 0;
	/* no chain for want of memory would change the layout plan, and so
	 * which kernels run (layout_cl.c): the plan fails instead */
	if (!(ch = calloc(1, sizeof(*ch))))
		return IR_ENOMEM;
	memcpy(ch->steps, steps, n * sizeof(steps[0]));
	ch->n = n;
	np->chain = ch;
	for (size_t i = 0; i < n; i++) {
		/* a move runs as a node: it heads its follower (catbuf.c) */
		p->nodes[steps[i].node].chained = steps[i].kind != RT_CHAIN_MOVE;
		p->nodes[steps[i].node].chain_head = i ? steps[i - 1].node : head;
		for (int j = 0; j < steps[i].n_aux; j++) {
			p->nodes[steps[i].aux[j]].chained = 1;
			p->nodes[steps[i].aux[j]].chain_head = i ? steps[i - 1].node : head;
		}
	}
	p->n_chains++;
	/* a run may stop before a step (an Add's tensor operand not yet
	 * computed when the head runs, a bias along the last axis that is
	 * not per-channel): that step then runs as a node, heading the rest,
	 * so each step heads the chain of those after it */
	return n > 1 ? chain_of(s, p, steps[0].node) : 0;
}

/* A quantized unit whose last node done (u->chain_from: qdq.c, a dynamic
 * layer's Cast or its Mul by the scale) heads a chain, or is a step of
 * one, gets a copy of the steps after that node as its own chain: its
 * kernel does them as it stores its result (rt_kctx_epilogue).  The
 * node keeps its chain for the runs that do the nodes as written
 * (--exact). */
static int unit_chain(struct rt_gplan *p, struct rt_qdq *u)
{
	const struct rt_nplan *from, *h;
	const struct rt_chain *ch;
	size_t at = 0;

	if (u->chain_from >= p->n_nodes)
		return 0;
	from = &p->nodes[u->chain_from];
	if (from->chain) {
		ch = from->chain;
	} else if (from->chained) {
		for (h = from; h->chained; h = &p->nodes[h->chain_head])
			;
		if (!(ch = h->chain))
			return 0;
		while (at < ch->n && ch->steps[at].node != u->chain_from)
			at++;
		at++;
	} else {
		return 0;
	}
	if (at >= ch->n)
		return 0;
	if (!(u->np.chain = calloc(1, sizeof(*u->np.chain))))
		return IR_ENOMEM;
	u->np.chain->n = ch->n - at;
	memcpy(u->np.chain->steps, ch->steps + at, u->np.chain->n * sizeof(ch->steps[0]));
	for (size_t i = 0; i < u->np.chain->n; i++)
		u->np.chain->steps[i].coef = NULL;   /* the copy makes its own */
	return 0;
}

int rt_chain_off(void)
{
	const char *off = getenv("OPMIG_NO_CHAIN");   /* the tests' reference */

	return off && *off && *off != '0';
}

int rt_chain_mark(struct rt_session *s, struct rt_gplan *p)
{
	int rc = 0;

	for (size_t i = 0; i < p->n_nodes && rc == 0; i++) {
		struct rt_nplan *np = &p->nodes[i];
		const struct ir_node *n = np->node;

		/* a unit whose result is the node's (chain_from: the node
		 * itself) takes the node's chain */
		if (np->kernel && !np->chained && !np->n_subs && np->fold == RT_FOLD_NONE &&
		    (!np->qdq || np->qdq->chain_from == i) &&
		    n->n_outputs == 1 && n->outputs[0] && np->out[0] >= 0)
			rc = chain_of(s, p, i);
	}
	for (size_t i = 0; i < p->n_nodes && rc == 0; i++)
		if (p->nodes[i].qdq)
			rc = unit_chain(p, p->nodes[i].qdq);
	return rc;
}

void rt_chain_drop(struct rt_gplan *p)
{
	for (size_t i = 0; i < p->n_nodes; i++) {
		rt_chain_release(&p->nodes[i]);
		p->nodes[i].chained = 0;
		p->nodes[i].chain_head = 0;
		if (p->nodes[i].qdq)
			rt_chain_release(&p->nodes[i].qdq->np);
	}
	p->n_chains = 0;
}

void rt_chain_free(struct rt_chain *ch)
{
	for (size_t i = 0; ch && i < ch->n; i++)
		free(ch->steps[i].coef);
	free(ch);
}

void rt_chain_release(struct rt_nplan *np)
{
	rt_chain_free(np->chain);
	np->chain = NULL;
}

/* Input i of node np as this run has it: bound in the frame, or the
 * session's kept result of the (later) node computing it. */
const struct rt_value *rt_chain_operand(struct rt_frame *f, const struct rt_nplan *np, size_t i)
{
	const struct ir_value *v = np->node->inputs[i];
	const struct ir_node *pn = v ? v->producer : NULL;
	const struct rt_nplan *pp;

	if (np->in[i].up != 0 || np->in[i].slot < 0)
		return NULL;
	if (f->vals[np->in[i].slot])
		return f->vals[np->in[i].slot];
	if (!pn || pn->index >= f->p->n_nodes)
		return NULL;
	pp = &f->p->nodes[pn->index];
	if (pp->node != pn || !pp->kept)
		return NULL;
	for (size_t o = 0; o < pn->n_outputs; o++)
		if (pn->outputs[o] == v)
			return pp->kept[o];
	return NULL;
}

/* The c = y->dims[1] per-channel values of t broadcast against y, when
 * t is float32 of no more dims than y, each 1 but the one facing the
 * channel axis (1 or c); else 0. */
static int per_channel(const struct rt_value *t, const struct rt_value *y, float *out)
{
	int64_t c = y->dims[1], step;
	const float *d;
	int at;

	if (!t || t->kind != RT_TENSOR || t->dtype != IR_DTYPE_FLOAT || t->rank > y->rank)
		return 0;
	d = t->data;
	at = t->rank - (y->rank - 1);   /* t's dim facing axis 1, if >= 0 */
	for (int i = 0; i < t->rank; i++)
		if (t->dims[i] != 1 && !(i == at && t->dims[i] == c))
			return 0;
	step = at >= 0 && t->dims[at] == c && c != 1 ? 1 : 0;
	for (int64_t i = 0; i < c; i++)
		out[i] = d[i * step];
	return 1;
}

/* Clip's bounds as its kernel takes them (k_act.c): the min and max
 * attributes before opset 11, else inputs 1 and 2 (one float32 value
 * each, absent: unbounded); lo and hi filled for each of c channels. */
static int clip_bounds(struct rt_session *s, struct rt_frame *f,
		       const struct rt_nplan *np, int64_t c, float *lo, float *hi)
{
	const struct ir_node *n = np->node;
	struct rt_kctx k = { .s = s, .f = f, .node = n };   /* its attributes */
	double b[2] = { -INFINITY, INFINITY };

	for (size_t i = 0; i < 2; i++) {
		const char *name = i ? "max" : "min";

		if (since(np) < 11) {
			if (rt_attr(&k, name))
				b[i] = rt_attr_float(&k, name, 0);
		} else if (i + 1 < n->n_inputs && n->inputs[i + 1]) {
			const struct rt_value *t = rt_chain_operand(f, np, i + 1);

			if (!t || t->kind != RT_TENSOR || t->dtype != IR_DTYPE_FLOAT ||
			    t->numel != 1)
				return 0;
			b[i] = ((const float *)t->data)[0];
		}
	}
	for (int64_t ch = 0; ch < c; ch++) {
		lo[ch] = (float)b[0];
		hi[ch] = (float)b[1];
	}
	return 1;
}

/* c[0] in all c entries of c (1) */
static int fill(float *c, int64_t n)
{
	for (int64_t i = 1; i < n; i++)
		c[i] = c[0];
	return 1;
}

/* HardSigmoid's alpha and beta, on every channel (1) */
static int hsig_coeffs(struct rt_session *s, struct rt_frame *f, const struct rt_nplan *np,
		       int64_t c, float *alpha, float *beta)
{
	struct rt_kctx k = { .s = s, .f = f, .node = np->node };   /* its attributes */

	alpha[0] = rt_attr_float(&k, "alpha", 0.2f);
	beta[0] = rt_attr_float(&k, "beta", 0.5f);
	return fill(alpha, c) && fill(beta, c);
}

/* BatchNormalization's mul and add (its kernel's rt_bn_coeff), from
 * parameters of float32 or, in a 16-bit float model, of its own dtype
 * (widened exactly, as the kernel widens them). */
static int bn_coeffs(struct rt_session *s, struct rt_frame *f, const struct rt_nplan *np,
		     int64_t c, float *mul, float *add)
{
	struct rt_kctx k = { .s = s, .f = f, .node = np->node };   /* its attributes */
	float eps = rt_attr_float(&k, "epsilon", 1e-5f);
	const struct rt_value *p[4];
	double v[4];

	for (size_t i = 0; i < 4; i++) {
		const struct rt_value *t = rt_chain_operand(f, np, i + 1);

		if (!t || t->kind != RT_TENSOR || t->numel != c ||
		    (t->dtype != IR_DTYPE_FLOAT && t->dtype != IR_DTYPE_FLOAT16 &&
		     t->dtype != IR_DTYPE_BFLOAT16))
			return 0;
		p[i] = t;
	}
	for (int64_t ch = 0; ch < c; ch++) {
		for (size_t i = 0; i < 4; i++)
			v[i] = rt_load_f64(p[i]->dtype, p[i]->data, ch);
		rt_bn_coeff(v[0], v[1], v[2], v[3], eps, &mul[ch], &add[ch]);
	}
	return 1;
}

/* One step over n values of one channel (m, a: its two coefficients;
 * t: the operand's values facing them), each node's own float operation
 * (see the top). */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void step_span(int kind, float m, float a, const float *restrict t,
		      float *restrict y, int64_t n, int round)
{
	switch (kind) {
	case RT_CHAIN_ADDT:
		for (int64_t i = 0; i < n; i++)
			y[i] = y[i] + t[i];
		break;
	case RT_CHAIN_BN:
		for (int64_t i = 0; i < n; i++)
			y[i] = y[i] * m + a;
		if (round)
			rt_float_round_n(y, n, round);
		break;
	case RT_CHAIN_MUL:
		for (int64_t i = 0; i < n; i++)
			y[i] = y[i] * m;
		break;
	case RT_CHAIN_ADD:
		for (int64_t i = 0; i < n; i++)
			y[i] = y[i] + m;
		break;
	case RT_CHAIN_SUB:
		for (int64_t i = 0; i < n; i++)
			y[i] = y[i] - m;
		break;
	case RT_CHAIN_RSUB:
		for (int64_t i = 0; i < n; i++)
			y[i] = m - y[i];
		break;
	case RT_CHAIN_DIV:
		for (int64_t i = 0; i < n; i++)
			y[i] = y[i] / m;
		break;
	case RT_CHAIN_RDIV:
		for (int64_t i = 0; i < n; i++)
			y[i] = m / y[i];
		break;
	case RT_CHAIN_CLIP:   /* m, a: the bounds; as k_act.c's */
		for (int64_t i = 0; i < n; i++) {
			float u = y[i] < m ? m : y[i];

			y[i] = u > a ? a : u;
		}
		break;
	case RT_CHAIN_SILU:
		if (round)
			rt_silu_round(y, n, round);
		else
			rt_silu_f32(y, y, n);
		break;
	case RT_CHAIN_GELU_DIV:
	case RT_CHAIN_GELU_MUL:
		rt_gelu_f32(y, n, kind == RT_CHAIN_GELU_DIV, m, a, round);
		break;
	case RT_CHAIN_HSWISH:   /* as k_act.c's */
		for (int64_t i = 0; i < n; i++) {
			float v = y[i] / 6 + 0.5f;

			y[i] = y[i] * (v < 1 ? (v > 0 ? v : 0) : 1);
		}
		if (round)
			rt_float_round_n(y, n, round);
		break;
	case RT_CHAIN_HSIG:
		for (int64_t i = 0; i < n; i++) {
			float v = m * y[i] + a;

			y[i] = v < 1 ? (v > 0 ? v : 0) : 1;
		}
		if (round)
			rt_float_round_n(y, n, round);
		break;
	case RT_CHAIN_MOVE:
		break;
	default:   /* RT_CHAIN_RELU, as k_act.c's */
		for (int64_t i = 0; i < n; i++)
			y[i] = y[i] < 0 ? 0 : y[i];
		break;
	}
}

void rt_epilogue_span(const struct rt_epilogue *e, int64_t ch, int64_t off, float *y,
		      int64_t n)
{
	const float *coef = e->coef;

	if (e->head_round)
		rt_float_round_n(y, n, e->round);
	for (size_t s = 0; s < e->n; s++, coef += 2 * e->c) {
		float m = coef[ch], a = coef[e->c + ch];

		step_span(e->kind[s], m, a, e->t[s] ? e->t[s] + off : NULL, y, n, e->round);
	}
}

/* Whether step s of e (its kind set) does the same on every channel. */
static int step_uniform(const struct rt_epilogue *e, size_t s)
{
	const float *coef = e->coef + 2 * e->c * (int64_t)s;

	if (e->kind[s] == RT_CHAIN_ADDT)
		return 0;
	for (int64_t ch = 1; ch < e->c; ch++)
		if (coef[ch] != coef[0] || coef[e->c + ch] != coef[e->c])
			return 0;
	return 1;
}

int rt_epilogue_has_tensor(const struct rt_epilogue *e)
{
	for (size_t s = 0; s < e->n; s++)
		if (e->kind[s] == RT_CHAIN_ADDT)
			return 1;
	return 0;
}

/* One per-channel step over rows of c channels stored channels last:
 * row r's channel ch is y[r * c + ch], its coefficients m[ch], a[ch];
 * each node's own float operation, as step_span's. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void step_rows(int kind, const float *restrict m, const float *restrict a,
		      float *restrict y, int64_t rows, int64_t c)
{
	for (int64_t r = 0; r < rows; r++, y += c)
		switch (kind) {
		case RT_CHAIN_BN:
			for (int64_t i = 0; i < c; i++)
				y[i] = y[i] * m[i] + a[i];
			break;
		case RT_CHAIN_MUL:
			for (int64_t i = 0; i < c; i++)
				y[i] = y[i] * m[i];
			break;
		case RT_CHAIN_ADD:
			for (int64_t i = 0; i < c; i++)
				y[i] = y[i] + m[i];
			break;
		case RT_CHAIN_SUB:
			for (int64_t i = 0; i < c; i++)
				y[i] = y[i] - m[i];
			break;
		case RT_CHAIN_RSUB:
			for (int64_t i = 0; i < c; i++)
				y[i] = m[i] - y[i];
			break;
		case RT_CHAIN_DIV:
			for (int64_t i = 0; i < c; i++)
				y[i] = y[i] / m[i];
			break;
		case RT_CHAIN_RDIV:
			for (int64_t i = 0; i < c; i++)
				y[i] = m[i] / y[i];
			break;
		default:   /* RT_CHAIN_CLIP: m, a the bounds, as k_act.c's */
			for (int64_t i = 0; i < c; i++) {
				float u = y[i] < m[i] ? m[i] : y[i];

				y[i] = u > a[i] ? a[i] : u;
			}
			break;
		}
}

/* A GELU step (its Erf: rt_gelu_f32, never in registers) */
static int is_gelu(int kind)
{
	return kind == RT_CHAIN_GELU_DIV || kind == RT_CHAIN_GELU_MUL;
}

/* Rows of a channels-last result a block takes: about 4096 values, so
 * that each step runs over what the last one left in the cache. */
#define ROWS_BLOCK 4096

struct rows_job {
	const struct rt_epilogue *e;
	float *y;
	int64_t rows, per;   /* per: rows a block takes */
	int regs;            /* rows512 does e's steps */
};

/* Vectors of a channels-last result side by side through each step (a
 * SiLU's sigmoid and roundings are a long chain of latencies) */
#define RV 8

/* Step kind K on the RV vectors v, the lanes of vector j being channels
 * ch[j] to ch[j] + 15 of m's and a's */
#define RV_STEP(K) do { \
		for (int j = 0; j < RV; j++) \
			v[j] = knn_epi512_rstep(K, v[j], _mm512_loadu_ps(m + ch[j]), \
						_mm512_loadu_ps(a + ch[j]), round); \
	} while (0)

/* The same in AVX-512 registers (k_conv_epi512.h: the operations and
 * roundings of step_span and step_rows) for e->round 0 or float16 and
 * no GELU: one
 * pass over y.  With channels a multiple of 16 the rows are one run of
 * vectors, RV of them through each step at once. */
__attribute__((target("avx512f")))
static void rows512(const struct rt_epilogue *e, float *y, int64_t rows)
{
	int64_t nv = e->c % 16 ? 0 : rows * e->c / 16, i = 0, c0 = 0;
	const int round = e->round;

	for (; i + RV <= nv; i += RV) {
		__m512 v[RV];
		int64_t ch[RV];

		for (int j = 0; j < RV; j++) {
			v[j] = _mm512_loadu_ps(y + (i + j) * 16);
			ch[j] = c0;
			c0 = c0 + 16 == e->c ? 0 : c0 + 16;
		}
		knn_epi512_head(e, RV, v);
		for (size_t s = 0; s < e->n; s++) {
			const float *m = e->coef + 2 * e->c * (int64_t)s, *a = m + e->c;

			switch (e->kind[s]) {   /* each kind's own loop */
			case RT_CHAIN_BN:
				RV_STEP(RT_CHAIN_BN);
				break;
			case RT_CHAIN_SILU:
				RV_STEP(RT_CHAIN_SILU);
				break;
			case RT_CHAIN_RELU:
				RV_STEP(RT_CHAIN_RELU);
				break;
			default:
				RV_STEP(e->kind[s]);
				break;
			}
		}
		for (int j = 0; j < RV; j++)
			_mm512_storeu_ps(y + (i + j) * 16, v[j]);
	}
	for (int64_t r = i * 16 / e->c; r < rows; r++, c0 = 0)
		for (; c0 < e->c; c0 += 16) {
			__mmask16 k = knn_lanes16(e->c - c0);
			__m512 v = _mm512_maskz_loadu_ps(k, y + r * e->c + c0);
			const float *coef = e->coef + c0;

			knn_epi512_head(e, 1, &v);
			for (size_t s = 0; s < e->n; s++, coef += 2 * e->c)
				v = knn_epi512_rstep(e->kind[s], v, _mm512_maskz_loadu_ps(k, coef),
						     _mm512_maskz_loadu_ps(k, coef + e->c), round);
			_mm512_mask_storeu_ps(y + r * e->c + c0, k, v);
		}
}

static void rows_range(void *ctx, int64_t lo, int64_t hi)
{
	const struct rows_job *j = ctx;
	const struct rt_epilogue *e = j->e;

	for (int64_t r0 = lo * j->per; r0 < hi * j->per && r0 < j->rows; r0 += j->per) {
		int64_t n = j->rows - r0 < j->per ? j->rows - r0 : j->per;
		float *y = j->y + r0 * e->c;
		const float *coef = e->coef;

		if (j->regs) {
			rows512(e, y, n);
			continue;
		}

		if (e->head_round)
			rt_float_round_n(y, n * e->c, e->round);
		for (size_t s = 0; s < e->n; s++, coef += 2 * e->c) {
			if (e->t[s]) {   /* rows stored plain (rt_epilogue_planes) */
				step_span(e->kind[s], 0, 0, e->t[s] + r0 * e->c, y, n * e->c,
					  e->round);
				continue;
			}
			if (step_uniform(e, s)) {
				step_span(e->kind[s], coef[0], coef[e->c], NULL, y, n * e->c,
					  e->round);
				continue;
			}
			step_rows(e->kind[s], coef, coef + e->c, y, n, e->c);
			if (e->round && e->kind[s] == RT_CHAIN_BN)
				rt_float_round_n(y, n * e->c, e->round);
		}
	}
}

void rt_epilogue_cl(struct rt_kctx *k, const struct rt_epilogue *e, float *y, int64_t rows)
{
	struct rows_job j = { e, y, rows, ROWS_BLOCK / e->c + 1,
			      rt_pgemm_ok() && (!e->round || e->round == IR_DTYPE_FLOAT16) };

	/* registers do no GELU (its Erf: rt_gelu_f32) and add no tensor */
	for (size_t s = 0; s < e->n; s++)
		if (is_gelu(e->kind[s]) || e->t[s])
			j.regs = 0;
	if (rows > 0)
		rt_parallel_for(k, (rows + j.per - 1) / j.per, 1, rows_range, &j);
}

int rt_epilogue_bn_fold(const struct rt_kctx *k, const struct rt_epilogue *e)
{
	const char *off = getenv("OPMIG_NO_BNFOLD");

	return e && e->n && e->kind[0] == RT_CHAIN_BN && !e->round && !e->head_round &&
	       !k->s->o.exact && !(off && *off && *off != '0');
}

void rt_epilogue_rest(const struct rt_epilogue *e, struct rt_epilogue *rest)
{
	*rest = *e;
	rest->n = e->n - 1;
	memmove(rest->kind, e->kind + 1, rest->n * sizeof(e->kind[0]));
	memmove(rest->t, e->t + 1, rest->n * sizeof(e->t[0]));
	rest->coef = e->coef + 2 * e->c;
}

/* t (input i of node np) as an RT_CHAIN_ADDT operand of y: a float32
 * tensor of y's shape, not y's data, stored channels first. */
static const float *same_shape(const struct rt_value *t, const struct rt_value *y)
{
	if (!t || t->kind != RT_TENSOR || t->dtype != IR_DTYPE_FLOAT || t->rank != y->rank ||
	    t->data == y->data || (t->flags & RT_VALUE_CL))
		return NULL;
	for (int i = 0; i < y->rank; i++)
		if (t->dims[i] != y->dims[i])
			return NULL;
	return t->data;
}

/* Whether y's storage is y's alone: no base, a region no other value
 * sees, or a chain of bases each held by the one view above it only (a
 * Reshape's view of a result no one else reads, which the next node
 * overwrote in place: a GroupNorm's InstanceNormalization between
 * Reshapes, then its scale, bias and SiLU). */
static int storage_own(const struct rt_value *y)
{
	if (y->flags & RT_VALUE_REGION)
		return 1;
	for (const struct rt_value *b = y->base; b; b = b->base)
		if (b->refs != 1 || (b->flags & (RT_VALUE_READONLY | RT_VALUE_KEPT)))
			return 0;
	return 1;
}

/* Does step st read nothing but its node's attributes and initializers
 * (the same coefficients every run)? */
static int coef_constant(const struct rt_chain_step *st, const struct rt_frame *f,
			 const struct rt_nplan *cp)
{
	const struct ir_node *n = cp->node;

	if (st->n_aux || st->kind == RT_CHAIN_ADDT || st->kind == RT_CHAIN_RELU ||
	    st->kind == RT_CHAIN_MOVE || st->kind == RT_CHAIN_SILU || st->kind == RT_CHAIN_HSWISH ||
	    f->depth != 0 || f->parent || f->call)
		return 0;
	for (size_t i = 1; i < n->n_inputs; i++)
		if (n->inputs[i] && !n->inputs[i]->init)
			return 0;
	return 1;
}

/* Keep step st's coefficients m (2 x c) for the next runs when they are
 * the same every run: the BatchNormalization coefficients of a network's
 * every layer were computed per run, in double (3% of a MobileNetV3's
 * run) */
static void keep_coef(struct rt_chain_step *st, const struct rt_frame *f,
		      const struct rt_nplan *cp, const float *m, int64_t c)
{
	float *k;

	if ((st->coef && st->coef_c == c) || !coef_constant(st, f, cp) ||
	    !(k = malloc((size_t)(2 * c) * sizeof(float))))
		return;
	memcpy(k, m, (size_t)(2 * c) * sizeof(float));
	free(st->coef);
	st->coef = k;
	st->coef_c = c;
}

/* The steps this run can do on y, the result of np: up to the first
 * whose operands are not at hand or not per-channel (that one and the
 * rest run as nodes); for y stored channels last, up to the first that
 * is not the same on every channel.  0, or 1 with *e filled (free
 * e->coef). */
static int prepare(struct rt_session *s, struct rt_frame *f, const struct rt_nplan *np,
		   const struct rt_value *y, int tensors, struct rt_epilogue *e)
{
	struct rt_chain *ch = np->chain;

	if (!ch || !f->skip || s->o.observe || !y || y->kind != RT_TENSOR ||
	    (y->dtype != IR_DTYPE_FLOAT && !(y->flags & RT_VALUE_WIDE)) || y->rank < 2 ||
	    y->refs != 1 || !storage_own(y) ||
	    (y->flags & (RT_VALUE_READONLY | RT_VALUE_KEPT)))
		return 0;
	*e = (struct rt_epilogue){ .c = y->dims[1], .ch = ch,
				   .round = y->dtype != IR_DTYPE_FLOAT ? y->dtype : 0 };
	if (!(e->coef = calloc((size_t)(2 * e->c * (int64_t)ch->n + 1), sizeof(float))))
		return 0;   /* the nodes run one by one */
	for (; e->n < ch->n; e->n++) {
		const struct rt_chain_step *st = &ch->steps[e->n];
		const struct rt_nplan *cp = &f->p->nodes[st->node];
		float *m = e->coef + 2 * e->c * (int64_t)e->n;
		int ok = 1;

		/* on a kept 16-bit float result: the steps whose rounding
		 * is theirs (Relu's result is the rounded value's; the
		 * BatchNormalization step rounds its own) */
		if (e->round && st->kind != RT_CHAIN_RELU && st->kind != RT_CHAIN_MOVE &&
		    st->kind != RT_CHAIN_BN && st->kind != RT_CHAIN_HSWISH &&
		    st->kind != RT_CHAIN_HSIG && !st->n_aux)
			break;
		/* a step another chain's run has done (a move's follower,
		 * whose move heads it too) */
		if (f->skip[st->node])
			break;
		if (st->coef && st->coef_c == e->c)
			memcpy(m, st->coef, (size_t)(2 * e->c) * sizeof(float));
		else if (st->n_aux)
			ok = rt_chain_act_coef(f, st, m, m + e->c) &&
			     fill(m, e->c) && fill(m + e->c, e->c);
		else if (st->kind == RT_CHAIN_ADDT)
			ok = tensors && (e->t[e->n] = same_shape(rt_chain_operand(f, cp, (size_t)st->operand), y));
		else if (st->kind == RT_CHAIN_BN)
			ok = bn_coeffs(s, f, cp, e->c, m, m + e->c);
		else if (st->kind == RT_CHAIN_CLIP)
			ok = clip_bounds(s, f, cp, e->c, m, m + e->c);
		else if (st->kind == RT_CHAIN_HSIG)
			ok = hsig_coeffs(s, f, cp, e->c, m, m + e->c);
		else if (st->kind != RT_CHAIN_RELU && st->kind != RT_CHAIN_MOVE &&
			 st->kind != RT_CHAIN_HSWISH)
			ok = per_channel(rt_chain_operand(f, cp, (size_t)st->operand), y, m);
		for (int j = 0; ok && j < st->n_aux; j++)
			ok = !f->vals[f->p->nodes[st->aux[j]].out[0]];
		if (!ok || f->vals[cp->out[0]])
			break;
		keep_coef(&ch->steps[e->n], f, cp, m, e->c);
		e->kind[e->n] = st->kind;
		/* after a move: what is the same on every channel (chain_of
		 * lets only a Relu or Clip follow a move; the unit suite's
		 * chain_move tests this on a chain made by hand); channels
		 * last (rt_epilogue_cl): no tensor operand, stored plain */
		if ((e->n && e->kind[e->n - 1] == RT_CHAIN_MOVE && !step_uniform(e, e->n)) ||
		    ((y->flags & RT_VALUE_CL) && st->kind == RT_CHAIN_ADDT))
			break;
	}
	/* never a move without its follower */
	if (e->n > 0 && e->kind[e->n - 1] == RT_CHAIN_MOVE)
		e->n--;
	if (e->n > 0)
		return 1;
	free(e->coef);
	return 0;
}

/* The steps done: np's result moves to the last one's slot, and they are
 * marked to be skipped; with a move, to the slot before it, the move runs
 * as a node, and its follower gives the move's result as its own
 * (RT_SKIP_ALIAS). */
static void commit(struct rt_frame *f, const struct rt_nplan *np, const struct rt_epilogue *e)
{
	size_t n = e->n;
	int tail;

	if (n >= 2 && e->kind[n - 2] == RT_CHAIN_MOVE) {
		f->skip[e->ch->steps[n - 1].node] = RT_SKIP_ALIAS;
		n -= 2;
	}
	if (!n)
		return;
	tail = f->p->nodes[e->ch->steps[n - 1].node].out[0];
	f->vals[tail] = f->vals[np->out[0]];
	f->vals[np->out[0]] = NULL;
	for (size_t i = 0; i < n; i++) {
		f->skip[e->ch->steps[i].node] = 1;
		for (int j = 0; j < e->ch->steps[i].n_aux; j++)
			f->skip[e->ch->steps[i].aux[j]] = 1;
	}
}

struct planes_job {
	const struct rt_epilogue *e;
	float *y;
	int64_t sp;
};

static void planes_range(void *ctx, int64_t lo, int64_t hi)
{
	const struct planes_job *j = ctx;

	for (int64_t pl = lo; pl < hi; pl++)
		rt_epilogue_span(j->e, pl % j->e->c, pl * j->sp, j->y + pl * j->sp, j->sp);
}

void rt_epilogue_planes(struct rt_kctx *k, const struct rt_epilogue *e, float *y,
			int64_t planes, int64_t sp)
{
	struct planes_job j = { e, y, sp };

	/* planes of one value (a Gemm's [N, C] result, a 1x1 map) are rows of
	 * e->c channels, stored as channels last stores them: a call a value
	 * took 5 ns each (a 4096 x 256 Gemm's Relu 5.3 ms, the Gemm 2.8) */
	if (sp == 1 && planes % e->c == 0) {
		rt_epilogue_cl(k, e, y, planes / e->c);
		return;
	}
	if (planes > 0)
		rt_parallel_for(k, planes, 1 + 16384 / (sp + 1), planes_range, &j);
}

int rt_chain_apply(struct rt_session *s, struct rt_frame *f, struct rt_nplan *np)
{
	struct rt_value *y = f->vals[np->out[0]];
	struct rt_epilogue e;
	int64_t sp = 1;

	struct rt_kctx k = { .s = s, .f = f };

	if (!prepare(s, f, np, y, 1, &e))
		return 0;
	for (int i = 2; i < y->rank; i++)
		sp *= y->dims[i];
	if (y->flags & RT_VALUE_CL)
		rt_epilogue_cl(&k, &e, y->data, y->numel / e.c);
	else if (y->numel > 0)
		rt_epilogue_planes(&k, &e, y->data, y->numel / sp, sp);
	free(e.coef);
	commit(f, np, &e);
	return 1;
}

const struct rt_epilogue *rt_kctx_epilogue(struct rt_kctx *k, struct rt_value *y,
					   int tensors)
{
	struct rt_epilogue *e;

	if (k->epi || !k->np || k->f->depth != 0 || k->n_out < 1 || k->out[0] != y ||
	    !(e = malloc(sizeof(*e))))
		return NULL;
	/* a kernel does the steps before any rounding of its own: a kept
	 * 16-bit float result's run in the pass after the node */
	if (!prepare(k->s, k->f, k->np, y, tensors, e)) {
		free(e);
		return NULL;
	}
	if (e->round) {
		free(e->coef);
		free(e);
		return NULL;
	}
	/* the kernels' registers do no GELU (its Erf): the pass after the
	 * node does it and what follows */
	for (size_t s = 0; s < e->n; s++)
		if (is_gelu(e->kind[s])) {
			e->n = s;
			break;
		}
	if (!e->n) {
		free(e->coef);
		free(e);
		return NULL;
	}
	/* a float16 node computed in float32 (lowp.c): the kernel rounds
	 * its result, then each step's, as the nodes do (the node's rounding
	 * pass is then skipped: rt_lowp_end), up to the first step whose
	 * rounding it does not do; a bfloat16 one rounds its result once,
	 * after the kernel: only the steps that commute with that rounding
	 * (Relu, and Clip to bounds of the same dtype) may run before it */
	if (k->lowp) {
		size_t n = 0;
		int f16 = k->lowp == IR_DTYPE_FLOAT16;

		while (n < e->n && (e->kind[n] == RT_CHAIN_RELU || e->kind[n] == RT_CHAIN_CLIP ||
				    (f16 && (e->kind[n] == RT_CHAIN_BN || e->kind[n] == RT_CHAIN_SILU ||
					     e->kind[n] == RT_CHAIN_HSWISH || e->kind[n] == RT_CHAIN_HSIG))))
			n++;
		if (!n) {
			free(e->coef);
			free(e);
			return NULL;
		}
		e->n = n;
		if (f16) {
			e->round = IR_DTYPE_FLOAT16;
			e->head_round = 1;
		}
	}
	k->epi = e;
	return e;
}

void rt_epilogue_end(struct rt_frame *f, const struct rt_nplan *np, struct rt_epilogue *e,
		     int done)
{
	if (!e)
		return;
	if (done)
		commit(f, np, e);
	free(e->coef);
	free(e);
}
