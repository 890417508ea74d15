/* lowp.c: float16 and bfloat16 nodes computed in float32.  Before a node
 * of an arithmetic op listed below runs, its float16 (or bfloat16) inputs
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
 * attribute sets (Cast). */
#include <stdlib.h>
#include <string.h>

#include "runtime/exec_int.h"

/* sorted (strcmp) */
static const char *const onnx_ops[] = {
	"Acos", "Acosh", "Add", "Asin", "Asinh", "Atan", "Atanh", "AveragePool",
	"BatchNormalization", "Celu", "Clip", "Conv", "ConvTranspose", "Cos", "Cosh",
	"Div", "Einsum", "Elu", "Erf", "Exp", "GRU", "Gelu", "Gemm",
	"GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "GroupNormalization",
	"HardSigmoid", "HardSwish", "InstanceNormalization", "LRN", "LSTM",
	"LayerNormalization", "LeakyRelu", "Log", "LogSoftmax", "LpNormalization",
	"LpPool", "MatMul", "Max", "MaxPool", "Mean", "MeanVarianceNormalization",
	"Min", "Mish", "Mul", "PRelu", "Pow", "RNN", "Reciprocal", "ReduceL1",
	"ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
	"ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", "Relu", "Resize",
	"Selu", "Shrink", "Sigmoid", "SimplifiedLayerNormalization", "Sin", "Sinh",
	"Softmax", "Softplus", "Softsign", "Sqrt", "Sub", "Sum", "Tan", "Tanh",
	"ThresholdedRelu",
};

static const char *const ms_ops[] = {
	"BiasGelu", "FastGelu", "Gelu", "MatMulNBits", "QuickGelu", "SimplifiedLayerNormalization",
	"SkipLayerNormalization", "SkipSimplifiedLayerNormalization",
};

static int cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int listed(const struct ir_node *n)
{
	const char *d = ir_s(n->domain), *op = ir_s(n->op_type);

	if (!*d || !strcmp(d, "ai.onnx"))
		return bsearch(&op, onnx_ops, sizeof(onnx_ops) / sizeof(*onnx_ops),
			       sizeof(*onnx_ops), cmp) != NULL;
	if (!strcmp(d, "com.microsoft"))
		return bsearch(&op, ms_ops, sizeof(ms_ops) / sizeof(*ms_ops),
			       sizeof(*ms_ops), cmp) != NULL;
	return 0;
}

static int is_low(const struct rt_value *v, int dtype)
{
	return v && v->kind == RT_TENSOR && v->dtype == dtype;
}

/* Copy t (dtype) into a new float32 tensor, or into dtype from float32. */
static int convert(struct rt_kctx *k, const struct rt_value *t, int to, struct rt_value **out)
{
	struct ir_diag sub;
	int rc;

	ir_diag_init(&sub);
	if ((rc = rt_tensor_new(k->mem, to, t->rank, t->dims, out, &sub)) < 0)
		return rt_err(k, "%s", sub.msg);
	if (to == IR_DTYPE_FLOAT && t->dtype == IR_DTYPE_FLOAT16) {
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

int rt_lowp_begin(struct rt_kctx *k, struct rt_value **wide)
{
	int low = 0;

	if (k->s->o.exact || !k->np || !k->np->kernel)
		return 0;
	/* the inputs' dtypes first: every node pays this test, and for most
	 * (no 16-bit float input) it is the last */
	for (size_t i = 0; i < k->n_in; i++) {
		const struct rt_value *v = k->in[i];

		if (!v || v->kind != RT_TENSOR ||
		    (v->dtype != IR_DTYPE_FLOAT16 && v->dtype != IR_DTYPE_BFLOAT16))
			continue;
		if (low && v->dtype != low)
			return 0;   /* both kinds: left to the kernel */
		low = v->dtype;
	}
	if (!low || !listed(k->node))
		return 0;
	for (size_t i = 0; i < k->n_in; i++) {
		int rc;

		if (!is_low(k->in[i], low))
			continue;
		if ((rc = convert(k, k->in[i], IR_DTYPE_FLOAT, &wide[i])) < 0)
			return rc;
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

int rt_lowp_end(struct rt_kctx *k, struct rt_value **wide, int rc)
{
	for (size_t i = 0; rc == 0 && i < k->n_out; i++) {
		struct rt_value *v = k->out[i], *n;

		if (!is_low(v, IR_DTYPE_FLOAT) || !narrowed(k, i, wide))
			continue;
		if ((rc = convert(k, v, k->lowp, &n)) < 0)
			break;
		rt_value_unref(v);
		k->out[i] = n;
	}
	for (size_t i = 0; i < k->n_in; i++) {
		rt_value_unref(wide[i]);
		wide[i] = NULL;
	}
	return rc;
}
