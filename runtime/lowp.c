/* lowp.c: float16 and bfloat16 nodes computed in float32.  Before a node
 * of an op listed below runs (arithmetic, and the comparisons, roundings,
 * ArgMax/ArgMin and TopK, whose float32 results are the narrow inputs'
 * exactly: element by element in double they were 4-11x onnxruntime),
 * its float16 (or bfloat16) inputs
 * are widened to float32 copies and the kernel runs its float32 paths;
 * each float32 result the graph types as float16 (bfloat16) is then
 * rounded once, to nearest even.  This is what onnxruntime's CPU provider
 * does (it places Casts around the low-precision nodes it has no kernel
 * for), and it is within one rounding of the exact result for the
 * elementwise ops and a float32 sum's error for the reductions.  Without
 * it the kernels compute these dtypes element by element in double: the
 * session option exact (opmig run --exact) keeps that, for
 * investigations.  Data movement ops (Transpose, Concat, Gather, ...)
 * copy bytes and are left alone, as are ops whose output type an
 * attribute sets (Cast).
 *
 * Results kept in float32.  Widening every input and narrowing every
 * output moved each activation through memory twice more (27% of a
 * float16 U2-Net block's time).  So a result whose every reader computes
 * in float32 too stays float32, rounded in place (rt_float_round_n: the
 * same values narrowing and widening give) and flagged RT_VALUE_WIDE with
 * its dtype still float16 (bfloat16).  Who may read one: the arithmetic
 * ops listed, the data movement ops move_ops lists (they run on the
 * float32 data as they are, and keep the flag: their values stay exact)
 * and Cast.  Such a node sees the value as the float32 tensor it holds
 * (flipped to float32 for the kernel's run, back after), so a kernel
 * may reuse its buffer as its result; every other node, a function call
 * and a graph output get narrowed copies, so a wrong guess of the plan
 * costs a conversion, never a wrong result.  The plan (rt_lowp_mark)
 * lets a node of the main graph keep its results so when each is read in
 * the main graph only, by such nodes, and is no graph output; not under
 * an observer, a run of chosen nodes, --exact, or with OPMIG_NO_WIDE set
 * (for comparing the two). */
#include <stdlib.h>
#include <string.h>

#include "runtime/exec_int.h"

/* sorted (strcmp) */
static const char *const onnx_ops[] = {
	"Abs", "Acos", "Acosh", "Add", "ArgMax", "ArgMin", "Asin", "Asinh", "Atan",
	"Atanh", "AveragePool", "BatchNormalization", "Ceil", "Celu", "Clip", "Conv",
	"ConvTranspose", "Cos", "Cosh", "CumSum", "Div", "Einsum", "Elu", "Equal",
	"Erf", "Exp", "Floor", "GRU", "Gelu", "Gemm", "GlobalAveragePool",
	"GlobalLpPool", "GlobalMaxPool", "Greater", "GreaterOrEqual",
	"GroupNormalization", "HardSigmoid", "HardSwish", "InstanceNormalization",
	"IsInf", "IsNaN", "LRN", "LSTM", "LayerNormalization", "LeakyRelu", "Less",
	"LessOrEqual", "Log", "LogSoftmax", "LpNormalization", "LpPool", "MatMul",
	"Max", "MaxPool", "Mean", "MeanVarianceNormalization", "Min", "Mish", "Mul",
	"Neg", "PRelu", "Pow", "RNN", "Reciprocal", "ReduceL1", "ReduceL2",
	"ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin",
	"ReduceProd", "ReduceSum", "ReduceSumSquare", "Relu", "Resize", "Round",
	"Selu", "Shrink", "Sigmoid", "Sign", "SimplifiedLayerNormalization", "Sin",
	"Sinh", "Softmax", "Softplus", "Softsign", "Sqrt", "Sub", "Sum", "Tan", "Tanh",
	"ThresholdedRelu", "TopK",
};

static const char *const ms_ops[] = {
	"BiasGelu", "FastGelu", "Gelu", "MatMulNBits", "QuickGelu", "SimplifiedLayerNormalization",
	"SkipLayerNormalization", "SkipSimplifiedLayerNormalization",
};

/* Data movement: the same values in another arrangement (sorted). */
static const char *const move_ops[] = {
	"Concat", "DepthToSpace", "Expand", "Flatten", "Gather", "Identity", "Pad",
	"Reshape", "Slice", "SpaceToDepth", "Split", "Squeeze", "Tile", "Transpose",
	"Unsqueeze",
};

enum { LP_NONE, LP_ARITH, LP_MOVE, LP_CAST };

static int cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

#define IN_LIST(op, list) \
	(bsearch(&(op), list, sizeof(list) / sizeof(*list), sizeof(*list), cmp) != NULL)

static int op_kind(const struct ir_node *n)
{
	const char *d = ir_s(n->domain), *op = ir_s(n->op_type);

	if (!*d || !strcmp(d, "ai.onnx"))
		return IN_LIST(op, onnx_ops) ? LP_ARITH : IN_LIST(op, move_ops) ? LP_MOVE :
		       !strcmp(op, "Cast") ? LP_CAST : LP_NONE;
	if (!strcmp(d, "com.microsoft"))
		return IN_LIST(op, ms_ops) ? LP_ARITH : LP_NONE;
	return LP_NONE;
}

static int is_low(const struct rt_value *v, int dtype)
{
	return v && v->kind == RT_TENSOR && v->dtype == dtype;
}

static int is_wide(const struct rt_value *v)
{
	return v && v->kind == RT_TENSOR && (v->flags & RT_VALUE_WIDE);
}

/* A new tensor of dtype to (charged to mem) holding t: float32 from
 * float16, bfloat16 or a kept float32 one (RT_VALUE_WIDE), or
 * float16/bfloat16 from float32 data; the layout flag stays. */
static int copy_as(struct rt_mem *mem, const struct rt_value *t, int to, struct rt_value **out,
		   struct ir_diag *d)
{
	int rc;

	if ((rc = rt_tensor_new(mem, to, t->rank, t->dims, out, d)) < 0)
		return rc;
	if (to == IR_DTYPE_FLOAT && (t->flags & RT_VALUE_WIDE)) {
		memcpy((*out)->data, t->data, (size_t)t->numel * sizeof(float));
	} else if (to == IR_DTYPE_FLOAT && t->dtype == IR_DTYPE_FLOAT16) {
		rt_half_to_float_n(t->data, (*out)->data, t->numel);
	} else if (to == IR_DTYPE_FLOAT16) {
		rt_float_to_half_n(t->data, (*out)->data, t->numel);
	} else if (to == IR_DTYPE_FLOAT) {
		for (int64_t i = 0; i < t->numel; i++)
			((float *)(*out)->data)[i] = rt_bf16_to_float(((const uint16_t *)t->data)[i]);
	} else {
		for (int64_t i = 0; i < t->numel; i++)
			((uint16_t *)(*out)->data)[i] = rt_float_to_bf16(((const float *)t->data)[i]);
	}
	rt_cl_set(*out, (t->flags & RT_VALUE_CL) != 0);   /* elementwise: the layout stays */
	return 0;
}

/* copy_as for a kernel: its memory, its error */
static int convert(struct rt_kctx *k, const struct rt_value *t, int to, struct rt_value **out)
{
	struct ir_diag sub;
	int rc;

	ir_diag_init(&sub);
	if ((rc = copy_as(k->mem, t, to, out, &sub)) < 0)
		return rt_err(k, "%s", sub.msg);
	return 0;
}

/* A kept float32 value shown to a kernel as the float32 tensor it holds,
 * and back. */
static void flip(struct rt_value *v)
{
	v->dtype = IR_DTYPE_FLOAT;
	v->flags &= ~RT_VALUE_WIDE;
}

static void unflip(struct rt_value *v, int low)
{
	v->dtype = low;
	v->flags |= RT_VALUE_WIDE;
}

static int flipped(const struct rt_kctx *k, size_t i)
{
	return i < 64 && (k->lowp_flip >> i & 1);
}

/* Release wide[] (k->n_in entries: copies, and flipped inputs borrowed,
 * so that a kernel may take one dying here as its result), putting
 * flipped inputs back. */
static void release(struct rt_kctx *k, struct rt_value **wide, int low)
{
	for (size_t i = 0; i < k->n_in; i++) {
		if (flipped(k, i))
			unflip(wide[i], low);
		else
			rt_value_unref(wide[i]);
		wide[i] = NULL;
	}
	k->lowp_flip = 0;
}

/* Output i, a float32 result, is a flipped input (Cast to float32 passing
 * its input on): a view of it, for the input goes back to float16. */
static int unalias(struct rt_kctx *k, size_t i, struct rt_value *const *wide)
{
	struct rt_value *v = k->out[i];

	for (size_t j = 0; j < k->n_in; j++)
		if (flipped(k, j) && wide[j] == v)
			return rt_out_view(k, i, v, v->rank, v->dims);
	return 0;
}

/* For a node that cannot take kept float32 inputs: narrowed copies. */
static int narrow_inputs(struct rt_kctx *k, struct rt_value **wide)
{
	for (size_t i = 0; i < k->n_in; i++) {
		int rc;

		if (!is_wide(k->in[i]))
			continue;
		if ((rc = convert(k, k->in[i], k->in[i]->dtype, &wide[i])) < 0)
			return rc;
		k->in[i] = wide[i];
	}
	return 0;
}

/* Widened constants kept for a session, at most (a float16 LLM's weights
 * in float32 would not fit: they are widened per run as before). */
#define LP_KEEP_MAX ((int64_t)1 << 30)

/* Is input i of the node an initializer (the same data every run)?  And
 * one of the main graph's (const_input)? */
static int model_const(const struct rt_kctx *k, size_t i)
{
	const struct ir_node *n = k->node;

	return i < n->n_inputs && n->inputs[i] && (n->inputs[i]->init || n->inputs[i]->sparse_init);
}

static int const_input(const struct rt_kctx *k, size_t i)
{
	return k->np && k->f && k->f->depth == 0 && !k->f->parent && !k->f->call &&
	       model_const(k, i);
}

/* Keep w, constant input i widened, for the node's later runs (from its
 * first run: the kernels' caches are made then, from this copy; within
 * LP_KEEP_MAX and the memory limit, not where the session keeps no weight
 * caches): the same float32 tensor at the same
 * address each run, flagged kept, so that the kernels' caches of data
 * derived from weights (packed panels, oneDNN's
 * reordered weights) hold; without it a float16 model derived them again
 * every run (37% of a float16 CRNN's time). */
static struct rt_share_key const_key(const struct rt_value *c)
{
	return (struct rt_share_key){ RT_SHARE_LOWP, { c->data, NULL, NULL },
				      { c->numel, c->dtype } };
}

static void unref_shared(void *v)
{
	rt_value_unref(v);
}

/* Constant input i (c) as kept widened for this node, or as another node
 * of the session kept it (the same constant read by an unrolled decoder's
 * steps: one copy, and the kernels' caches made from it shared too), now
 * kept for this node: a new reference, or NULL. */
static struct rt_value *kept_const(struct rt_kctx *k, size_t i, const struct rt_value *c)
{
	struct rt_nplan *np = k->np;
	struct rt_share_key key = const_key(c);
	struct rt_value *w;

	if (np->lowp_const && np->lowp_const[i])
		return rt_value_ref(np->lowp_const[i]);
	if (!(w = rt_shared_take(k->s, &key)) ||
	    (!np->lowp_const && !(np->lowp_const = calloc(np->node->n_inputs, sizeof(w)))))
		return NULL;
	np->lowp_const[i] = rt_value_ref(w);
	return rt_value_ref(w);
}

static void keep_const(struct rt_kctx *k, size_t i, const struct rt_value *c,
		       struct rt_value *w)
{
	struct rt_session *s = k->s;
	struct rt_nplan *np = k->np;
	int64_t bytes = w->numel * (int64_t)sizeof(float);
	struct rt_share_key key = const_key(c);

	if (!const_input(k, i) || s->o.no_weight_cache || s->o.observe ||
	    s->lowp_kept + bytes > LP_KEEP_MAX ||
	    (k->mem && k->mem->limit && k->mem->cur + bytes > k->mem->limit) ||
	    (!np->lowp_const && !(np->lowp_const = calloc(np->node->n_inputs, sizeof(w)))) ||
	    np->lowp_const[i])
		return;
	np->lowp_const[i] = rt_value_ref(w);
	w->flags |= RT_VALUE_READONLY | RT_VALUE_KEPT;
	s->lowp_kept += bytes;
	if (rt_shared_add(s, &key, w, unref_shared, bytes) == 0)   /* the session's reference */
		rt_value_ref(w);
}

void rt_lowp_release(struct rt_nplan *np)
{
	for (size_t i = 0; np->lowp_const && i < np->node->n_inputs; i++)
		rt_value_unref(np->lowp_const[i]);
	free(np->lowp_const);
	np->lowp_const = NULL;
}

int rt_lowp_begin(struct rt_kctx *k, struct rt_value **wide)
{
	int low = 0, kept = 0, kind;

	/* the inputs' dtypes first: every node pays this test, and for most
	 * (no 16-bit float input) it is the last */
	for (size_t i = 0; i < k->n_in; i++) {
		const struct rt_value *v = k->in[i];

		if (!v || v->kind != RT_TENSOR ||
		    (v->dtype != IR_DTYPE_FLOAT16 && v->dtype != IR_DTYPE_BFLOAT16))
			continue;
		kept |= (v->flags & RT_VALUE_WIDE) != 0;
		low = low && v->dtype != low ? -1 : low;   /* both kinds: left to the kernel */
		if (!low)
			low = v->dtype;
	}
	if (!low)
		return 0;
	kind = low < 0 || k->s->o.exact || !k->np || !k->np->kernel ? LP_NONE :
	       op_kind(k->node);
	if (kind == LP_NONE || (kind != LP_ARITH && !kept))
		return kept ? narrow_inputs(k, wide) : 0;
	for (size_t i = 0; i < k->n_in; i++) {
		int rc;

		if (!is_low(k->in[i], low))
			continue;
		if (is_wide(k->in[i]) && i < 64) {
			wide[i] = k->in[i];
			flip(wide[i]);
			k->lowp_flip |= (uint64_t)1 << i;
			continue;
		}
		if (const_input(k, i) && (wide[i] = kept_const(k, i, k->in[i]))) {
			k->in[i] = wide[i];
			continue;
		}
		if ((rc = convert(k, k->in[i], IR_DTYPE_FLOAT, &wide[i])) < 0) {
			release(k, wide, low);
			return rc;
		}
		keep_const(k, i, k->in[i], wide[i]);
		k->lowp_temp |= model_const(k, i) && !(wide[i]->flags & RT_VALUE_KEPT);
		k->in[i] = wide[i];
	}
	k->lowp = low;
	return low;
}

/* Does output i take the low dtype: typed by the same constraint as an
 * input that had it (LayerNormalization's mean and inverse deviation, of
 * constraint U, stay float32), or declared so when the op has no schema? */
static int narrowed(const struct rt_kctx *k, size_t i, struct rt_value *const *wide)
{
	const struct ir_value *o = i < k->node->n_outputs ? k->node->outputs[i] : NULL;
	const struct ir_op_schema *s = k->schema;
	const char *ot;

	if (!s || !s->n_outputs || !s->n_inputs)
		return !(o && o->type && o->type->elem_type) || o->type->elem_type == k->lowp;
	ot = s->outputs[i < s->n_outputs ? i : s->n_outputs - 1].type;
	for (size_t j = 0; j < k->n_in; j++)
		if (wide[j] && !strcmp(ot, s->inputs[j < s->n_inputs ? j : s->n_inputs - 1].type))
			return 1;
	return 0;
}

struct round_job {
	float *f;
	int dtype;
};

static void round_range(void *ctx, int64_t lo, int64_t hi)
{
	const struct round_job *j = ctx;

	rt_float_round_n(j->f + lo, hi - lo, j->dtype);
}

/* rt_float_round_n over the session's threads */
static void round_par(struct rt_kctx *k, float *f, int64_t n, int dtype)
{
	struct round_job j = { f, dtype };

	rt_parallel_for(k, n, 65536, round_range, &j);
}

/* May this run keep its results in float32 (the plan said so, and it runs
 * in the main graph, into no Concat region)? */
static int may_keep(const struct rt_kctx *k)
{
	return k->np && k->np->wide_out && k->f && k->f->depth == 0 && !k->f->parent &&
	       !k->f->call && !k->np->cat_dest;
}

int rt_lowp_end(struct rt_kctx *k, struct rt_value **wide, int rc)
{
	int keep = may_keep(k), arith = op_kind(k->node) == LP_ARITH;

	for (size_t i = 0; rc == 0 && i < k->n_out; i++) {
		struct rt_value *v = k->out[i], *n;

		if (!is_low(v, IR_DTYPE_FLOAT))
			continue;
		if (!narrowed(k, i, wide)) {
			rc = unalias(k, i, wide);
			continue;
		}
		if (keep && !(v->flags & (RT_VALUE_READONLY | RT_VALUE_KEPT))) {
			/* data movement moved exact values; a kernel that took a
			 * rounding epilogue, or rounded as it wrote, rounded
			 * output 0 itself */
			if (arith && !(i == 0 && ((k->epi && k->epi->head_round) || k->lowp_done)))
				round_par(k, v->data, v->numel, k->lowp);
			unflip(v, k->lowp);
			k->s->stats.wide_values++;
			continue;
		}
		if ((rc = convert(k, v, k->lowp, &n)) < 0)
			break;
		rt_value_unref(v);
		k->out[i] = n;
	}
	release(k, wide, k->lowp);
	return rc;
}

int rt_lowp_narrow_value(struct rt_mem *mem, struct rt_value **v, struct ir_diag *d)
{
	struct rt_value *c;
	int rc;

	if (!is_wide(*v))
		return 0;
	if ((rc = copy_as(mem, *v, (*v)->dtype, &c, d)) < 0)
		return rc;
	rt_value_unref(*v);
	*v = c;
	return 0;
}

struct keep_job {
	const float *x;
	float *y;
	int dtype;
};

static void keep_range(void *ctx, int64_t lo, int64_t hi)
{
	const struct keep_job *j = ctx;

	if (j->y != j->x)
		memcpy(j->y + lo, j->x + lo, (size_t)(hi - lo) * sizeof(float));
	rt_float_round_n(j->y + lo, hi - lo, j->dtype);
}

int rt_lowp_cast_keep(struct rt_kctx *k, const struct rt_value *x, int to)
{
	struct keep_job j;
	struct rt_value *y;

	if ((to != IR_DTYPE_FLOAT16 && to != IR_DTYPE_BFLOAT16) || !may_keep(k) ||
	    !is_low(x, IR_DTYPE_FLOAT) || (x->flags & RT_VALUE_WIDE) || k->s->o.exact)
		return 0;
	if (!(y = rt_out_tensor_reuse(k, 0, 1u, IR_DTYPE_FLOAT, x->rank, x->dims)))
		return IR_ENOMEM;
	j = (struct keep_job){ x->data, y->data, to };
	rt_parallel_for(k, x->numel, 65536, keep_range, &j);
	rt_cl_set(y, (x->flags & RT_VALUE_CL) != 0);
	unflip(y, to);
	k->s->stats.wide_values++;
	return 1;
}

/* ---- the plan ------------------------------------------------------------- */

static int reads_wide(const struct rt_nplan *r)
{
	return r && r->kernel && !r->n_subs && !r->qdq && op_kind(r->node) != LP_NONE;
}

/* Is every result of n read in p's graph only, by nodes that take kept
 * float32 values, and none a graph output? */
static int results_take(struct rt_gplan *p, const struct ir_node *n)
{
	for (size_t o = 0; o < n->n_outputs; o++) {
		const struct ir_value *v = n->outputs[o];

		if (!v)
			continue;
		if (ir_graph_is_output(p->g, v))
			return 0;
		for (size_t u = 0; u < v->n_uses; u++)
			if (!reads_wide(rt_plan_node(p, v->uses[u])))
				return 0;
	}
	return 1;
}

/* A Cast from float32 to float16 or bfloat16 (its input typed so) */
static int cast_narrows(const struct ir_node *n)
{
	const struct ir_attr *a = ir_node_attr(n, "to");
	const struct ir_value *x = n->n_inputs ? n->inputs[0] : NULL;

	return a && a->type == IR_ATTR_INT && (a->i == IR_DTYPE_FLOAT16 || a->i == IR_DTYPE_BFLOAT16) &&
	       x && x->type && x->type->elem_type == IR_DTYPE_FLOAT;
}

void rt_lowp_mark(struct rt_session *s, struct rt_gplan *p)
{
	const char *off = getenv("OPMIG_NO_WIDE");

	if (s->o.observe || s->o.only || s->o.exact || (off && *off && *off != '0'))
		return;
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct rt_nplan *np = &p->nodes[i];
		int kind = op_kind(np->node);

		if (!np->kernel || np->n_subs || np->qdq || np->fold != RT_FOLD_NONE ||
		    (kind != LP_ARITH && kind != LP_MOVE &&
		     !(kind == LP_CAST && cast_narrows(np->node))) ||
		    !results_take(p, np->node))
			continue;
		np->wide_out = 1;
		/* a chain's steps run in this node's kernel: their results too */
		for (size_t j = 0; np->chain && j < np->chain->n && np->wide_out; j++)
			np->wide_out = results_take(p, p->nodes[np->chain->steps[j].node].node);
	}
}
