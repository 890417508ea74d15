/* opset_adapt.c: the adapter table (see opset_int.h), the helpers the
 * adapters share, and the adapters of attributes that became inputs
 * (Slice 10, TopK 10, Clip 11, Pad 11, Squeeze/Unsqueeze/Split/ReduceSum
 * 13, the other reductions 18, Dropout 12 with its other forms) and of
 * Softmax/LogSoftmax/Hardmax's axis semantics (13).  The others are in
 * opset_pool.c, opset_resize.c and opset_values.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/opset_int.h"

#define MAX_K 64

void rw_adapt_emit_at(struct rw_ctx *c, struct ir_node *n, struct rw_emit *e)
{
	memset(e, 0, sizeof(*e));
	e->c = c;
	e->g = n->graph;
	e->pos = n->index;
	e->dtype = rw_node_dtype(c, n);
	snprintf(e->base, sizeof(e->base), "%.120s",
		 n->name && *n->name ? n->name : ir_s(n->op_type));
}

int rw_adapt_set_input(struct ir_node *n, size_t i, struct ir_value *v)
{
	while (n->n_inputs <= i)
		if (ir_node_append_input(n, NULL) < 0)
			return IR_ENOMEM;
	return ir_node_set_input(n, i, v);
}

void rw_adapt_trim_inputs(struct ir_node *n)
{
	while (n->n_inputs && !n->inputs[n->n_inputs - 1])
		n->n_inputs--;
}

int rw_adapt_has_in(const struct ir_node *n, size_t i)
{
	return n->n_inputs > i && n->inputs[i];
}

/* attribute `name` (ints) <-> input i */
static int ints_attr_input(struct rw_ctx *c, struct ir_node *n, const char *name,
			   size_t i, int up, int apply, char *why, size_t size)
{
	if (up) {
		size_t k;
		const int64_t *v = rw_attr_ints(n, name, &k);
		struct rw_emit e;

		if (!apply || !ir_node_attr(n, name))
			return 1;
		rw_adapt_emit_at(c, n, &e);
		if (rw_adapt_set_input(n, i, rw_ints(&e, v, k)) < 0 || e.failed)
			return IR_ENOMEM;
		ir_node_remove_attr(n, name);
		return 1;
	}
	if (rw_adapt_has_in(n, i)) {
		int64_t v[MAX_K];
		size_t k;

		if (!rw_const_ints(c, n->inputs[i], v, MAX_K, &k)) {
			snprintf(why, size, "input %zu (%s) is not constant", i, name);
			return 0;
		}
		if (!apply)
			return 1;
		if (ir_node_set_ints(n, name, v, k) < 0)
			return IR_ENOMEM;
		ir_node_set_input(n, i, NULL);
		rw_adapt_trim_inputs(n);
	}
	return 1;
}

/* A scalar float attribute <-> input i (in the data's dtype). */
static int float_attr_input(struct rw_ctx *c, struct ir_node *n, const char *name,
			    size_t i, int dtype, int up, int apply, char *why, size_t size)
{
	if (up) {
		struct rw_emit e;

		if (!ir_node_attr(n, name))
			return 1;
		if (!dtype) {
			snprintf(why, size, "the data's dtype is unknown");
			return 0;
		}
		if (!apply)
			return 1;
		rw_adapt_emit_at(c, n, &e);
		if (rw_adapt_set_input(n, i, rw_scalar(&e, dtype, rw_attr_float(n, name, 0))) < 0 ||
		    e.failed)
			return IR_ENOMEM;
		ir_node_remove_attr(n, name);
		return 1;
	}
	if (rw_adapt_has_in(n, i)) {
		double v;

		if (!rw_const_double(c, n->inputs[i], &v)) {
			snprintf(why, size, "input %zu (%s) is not a constant scalar", i, name);
			return 0;
		}
		if (!apply)
			return 1;
		if (ir_node_set_float(n, name, (float)v) < 0)
			return IR_ENOMEM;
		ir_node_set_input(n, i, NULL);
		rw_adapt_trim_inputs(n);
	}
	return 1;
}

int rw_adapt_drop_default(struct ir_node *n, const char *name, int64_t dflt, int apply,
			char *why, size_t size)
{
	const struct ir_attr *a = ir_node_attr(n, name);

	if (!a)
		return 1;
	if (a->type == IR_ATTR_INT && a->i != dflt) {
		snprintf(why, size, "attribute %s is %lld, which the older opset lacks",
			 name, (long long)a->i);
		return 0;
	}
	if (a->type != IR_ATTR_INT) {
		snprintf(why, size, "attribute %s has no older form", name);
		return 0;
	}
	if (apply)
		ir_node_remove_attr(n, name);
	return 1;
}

int rw_adapt_rename(struct ir_node *n, const char *op)
{
	char *s = strdup(op);

	if (!s)
		return IR_ENOMEM;
	free(n->op_type);
	n->op_type = s;
	return 1;
}

/* ---- attribute <-> input moves ---------------------------------------- */

static int a_axes1(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	int reduce = !strncmp(ir_s(n->op_type), "Reduce", 6), rc;

	if (!up && reduce && rw_attr_int(n, "noop_with_empty_axes", 0)) {
		int64_t v[MAX_K];
		size_t k = 0;

		if (!rw_adapt_has_in(n, 1) || (rw_const_ints(c, n->inputs[1], v, MAX_K, &k) && !k)) {
			snprintf(why, size, "noop_with_empty_axes without axes");
			return 0;
		}
	}
	rc = ints_attr_input(c, n, "axes", 1, up, apply, why, size);
	/* with axes given, noop_with_empty_axes says nothing */
	if (rc > 0 && !up && apply && reduce)
		ir_node_remove_attr(n, "noop_with_empty_axes");
	return rc;
}

static int a_split13(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	return ints_attr_input(c, n, "split", 1, up, apply, why, size);
}

static int a_topk(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	if (up) {
		int64_t k = rw_attr_int(n, "k", -1);
		struct rw_emit e;

		if (k < 0) {
			snprintf(why, size, "attribute k is absent");
			return 0;
		}
		if (!apply)
			return 1;
		rw_adapt_emit_at(c, n, &e);
		if (rw_adapt_set_input(n, 1, rw_ints(&e, &k, 1)) < 0 || e.failed)
			return IR_ENOMEM;
		ir_node_remove_attr(n, "k");
		return 1;
	} else {
		int64_t k[1];
		size_t cnt;

		if (!rw_adapt_has_in(n, 1) || !rw_const_ints(c, n->inputs[1], k, 1, &cnt) || cnt != 1) {
			snprintf(why, size, "input k is not constant");
			return 0;
		}
		if (!apply)
			return 1;
		if (ir_node_set_int(n, "k", k[0]) < 0)
			return IR_ENOMEM;
		ir_node_set_input(n, 1, NULL);
		rw_adapt_trim_inputs(n);
		return 1;
	}
}

static int a_slice(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	static const char *const names[] = { "starts", "ends", "axes" };

	if (up) {
		for (size_t i = 0; i < 3; i++) {
			int rc = ints_attr_input(c, n, names[i], i + 1, 1, apply, why, size);

			if (rc <= 0)
				return rc;
		}
		return 1;
	}
	if (rw_adapt_has_in(n, 4)) {
		int64_t v[MAX_K];
		size_t k;

		if (!rw_const_ints(c, n->inputs[4], v, MAX_K, &k)) {
			snprintf(why, size, "input steps is not constant");
			return 0;
		}
		for (size_t i = 0; i < k; i++)
			if (v[i] != 1) {
				snprintf(why, size, "steps other than 1 need opset 10");
				return 0;
			}
	}
	for (size_t i = 0; i < 3; i++)
		if (rw_adapt_has_in(n, i + 1)) {
			int64_t v[MAX_K];
			size_t k;

			if (!rw_const_ints(c, n->inputs[i + 1], v, MAX_K, &k)) {
				snprintf(why, size, "input %s is not constant", names[i]);
				return 0;
			}
		}
	if (!apply)
		return 1;
	if (rw_adapt_has_in(n, 4))
		ir_node_set_input(n, 4, NULL);
	for (size_t i = 3; i-- > 0;) {
		int rc = ints_attr_input(c, n, names[i], i + 1, 0, 1, why, size);

		if (rc <= 0)
			return rc;
	}
	return 1;
}

static int a_clip(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	int dt = rw_node_dtype(c, n), rc;

	if (up && apply && !ir_node_attr(n, "min") && ir_node_attr(n, "max") &&
	    rw_adapt_set_input(n, 1, NULL) < 0)
		return IR_ENOMEM;
	if (up) {
		/* max goes to input 2 first, so min's slot exists */
		if ((rc = float_attr_input(c, n, "max", 2, dt, 1, apply, why, size)) <= 0)
			return rc;
		return float_attr_input(c, n, "min", 1, dt, 1, apply, why, size);
	}
	if ((rc = float_attr_input(c, n, "max", 2, dt, 0, 0, why, size)) <= 0 ||
	    (rc = float_attr_input(c, n, "min", 1, dt, 0, 0, why, size)) <= 0 || !apply)
		return rc;
	if ((rc = float_attr_input(c, n, "max", 2, dt, 0, 1, why, size)) <= 0 ||
	    (rc = float_attr_input(c, n, "min", 1, dt, 0, 1, why, size)) <= 0)
		return rc;
	rw_adapt_trim_inputs(n);         /* Clip(x, "", "") has no older form but Clip(x) */
	return 1;
}

static int a_pad(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	int dt = rw_node_dtype(c, n), rc;

	if (up) {
		if (apply && ir_node_attr(n, "paddings") && !ir_node_attr(n, "pads")) {
			size_t k;
			const int64_t *v = rw_attr_ints(n, "paddings", &k);

			if (ir_node_set_ints(n, "pads", v, k) < 0)
				return IR_ENOMEM;
			ir_node_remove_attr(n, "paddings");
		}
		if ((rc = ints_attr_input(c, n, "pads", 1, 1, apply, why, size)) <= 0)
			return rc;
		if (ir_node_attr(n, "value") && rw_attr_float(n, "value", 0) == 0) {
			if (apply)
				ir_node_remove_attr(n, "value");
			return 1;
		}
		return float_attr_input(c, n, "value", 2, dt, 1, apply, why, size);
	}
	if ((rc = float_attr_input(c, n, "value", 2, dt, 0, 0, why, size)) <= 0 ||
	    (rc = ints_attr_input(c, n, "pads", 1, 0, 0, why, size)) <= 0 || !apply)
		return rc;
	if ((rc = float_attr_input(c, n, "value", 2, dt, 0, 1, why, size)) <= 0)
		return rc;
	return ints_attr_input(c, n, "pads", 1, 0, 1, why, size);
}

/* Dropout 12: ratio and training_mode became inputs, seed came.  Going
 * down, only inference remains expressible (training_mode absent or a
 * constant false; seed, which only training draws use, goes). */
static int a_dropout12(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	if (up && !ir_node_attr(n, "ratio"))
		return 1;
	if (!up && rw_adapt_has_in(n, 2)) {
		double t;

		if (!rw_const_double(c, n->inputs[2], &t) || t != 0) {
			snprintf(why, size, "training_mode is not a constant false");
			return 0;
		}
		if (apply) {
			ir_node_set_input(n, 2, NULL);
			rw_adapt_trim_inputs(n);
		}
	}
	if (!up && apply)
		ir_node_remove_attr(n, "seed");
	return float_attr_input(c, n, "ratio", 1, IR_DTYPE_FLOAT, up, apply, why, size);
}

/* Dropout 10: the mask became bool; Dropout-7's is of the data's type. */
static int a_dropout10(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	(void)c;
	(void)apply;
	if (!up && n->n_outputs > 1 && n->outputs[1] && rw_value_used(n->outputs[1])) {
		snprintf(why, size, "the mask is used, and Dropout-7's mask has another type");
		return 0;
	}
	return 1;
}

/* Dropout 7 dropped is_test: from 7 the op is an inference identity. */
static int a_dropout7(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	(void)c;
	(void)why;
	(void)size;
	if (up && apply)
		ir_node_remove_attr(n, "is_test");
	return 1;
}

/* ---- semantics ---------------------------------------------------------- */

/* Softmax, LogSoftmax, Hardmax at 13: before, the input is coerced to 2-D
 * at `axis` (default 1); from 13 the op runs along the one `axis`
 * (default -1).  Over the last axis both agree; otherwise a Flatten and a
 * Reshape (going up) or two Transposes (going down) keep the meaning. */
static int a_softmax(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	int r;
	int64_t axis;
	const char *op = ir_s(n->op_type);
	struct ir_value *x = n->inputs[0], *y = n->outputs[0];
	struct ir_node *s;
	struct rw_emit e;

	if (!rw_node_axis(c, n, up ? 1 : -1, 16, &r, &axis, why, size))
		return 0;
	if (!apply)
		return 1;
	if (axis == r - 1)
		return ir_node_set_int(n, "axis", axis) < 0 ? IR_ENOMEM : 1;
	rw_begin(c, n, &e);
	if (up) {
		struct ir_node *f = rw_node(&e, "Flatten", NULL, &x, 1, NULL);
		struct ir_value *shape = rw_op(&e, "Shape", x, NULL);

		if (f && ir_node_set_int(f, "axis", axis) < 0)
			e.failed = 1;
		s = rw_node(&e, op, NULL, f ? &f->outputs[0] : &x, 1, NULL);
		if (s && ir_node_set_int(s, "axis", 1) < 0)
			e.failed = 1;
		rw_op_to(&e, "Reshape", s ? s->outputs[0] : NULL, shape, y);
	} else {
		int64_t perm[16];
		struct ir_node *t1, *t2;

		for (int i = 0; i < r; i++)
			perm[i] = i;
		perm[axis] = r - 1;
		perm[r - 1] = axis;
		t1 = rw_node(&e, "Transpose", NULL, &x, 1, NULL);
		if (t1 && ir_node_set_ints(t1, "perm", perm, (size_t)r) < 0)
			e.failed = 1;
		s = rw_node(&e, op, NULL, t1 ? &t1->outputs[0] : &x, 1, NULL);
		if (s && ir_node_set_int(s, "axis", r - 1) < 0)
			e.failed = 1;
		t2 = rw_node(&e, "Transpose", NULL, s ? &s->outputs[0] : &x, 1, y);
		if (t2 && ir_node_set_ints(t2, "perm", perm, (size_t)r) < 0)
			e.failed = 1;
	}
	return rw_end(&e, 0) < 0 ? IR_ENOMEM : RW_ADAPT_REPLACED;
}

/* ---- attributes that came or went ------------------------------------- */

#define REDUCE18(op) { op, 18, a_axes1, "axes,noop_with_empty_axes" }
#define AXES11(op) { op, 11, rw_adapt_axes11, NULL }
const struct rw_adapter rw_adapters[] = {
	{ "Add", 7, rw_adapt_bcast7, "broadcast,axis,consumed_inputs" },
	{ "And", 7, rw_adapt_bcast7, "broadcast,axis" },
	AXES11("ArgMax"), { "ArgMax", 12, rw_adapt_select_last, "select_last_index" },
	AXES11("ArgMin"), { "ArgMin", 12, rw_adapt_select_last, "select_last_index" },
	{ "AveragePool", 10, rw_adapt_pool10, "ceil_mode" },
	{ "AveragePool", 19, rw_adapt_pool_dilations, "dilations" },
	{ "BatchNormalization", 7, rw_adapt_bn7, "is_test,consumed_inputs" },
	{ "BatchNormalization", 9, rw_adapt_bn9, "spatial" },
	{ "BatchNormalization", 14, rw_adapt_bn14, "training_mode" },
	{ "Cast", 19, rw_adapt_saturate, "saturate" },
	{ "Clip", 11, a_clip, "min,max" },
	AXES11("Compress"), AXES11("Concat"),
	{ "Constant", 9, rw_adapt_constant, NULL }, { "Constant", 11, rw_adapt_constant, NULL },
	{ "Constant", 12, rw_adapt_constant, NULL }, { "Constant", 13, rw_adapt_constant, NULL },
	{ "Constant", 19, rw_adapt_constant, NULL }, { "Constant", 21, rw_adapt_constant, NULL },
	{ "DFT", 20, rw_adapt_dft20, "axis" },
	{ "DequantizeLinear", 13, rw_adapt_quant13, "axis" },
	{ "Div", 7, rw_adapt_bcast7, "broadcast,axis,consumed_inputs" },
	{ "Dropout", 7, a_dropout7, "is_test" }, { "Dropout", 10, a_dropout10, NULL },
	{ "Dropout", 12, a_dropout12, "ratio,seed" },
	{ "Equal", 7, rw_adapt_bcast7, "broadcast,axis" },
	AXES11("Flatten"), AXES11("Gather"),
	{ "Gemm", 7, rw_adapt_bcast7, "broadcast" }, { "Gemm", 11, rw_adapt_gemm11, NULL },
	{ "Greater", 7, rw_adapt_bcast7, "broadcast,axis" },
	{ "GridSample", 20, rw_adapt_gridsample20, "mode" },
	{ "GroupNormalization", 21, rw_adapt_group21, NULL },
	AXES11("Hardmax"), { "Hardmax", 13, a_softmax, "axis" },
	{ "Less", 7, rw_adapt_bcast7, "broadcast,axis" },
	AXES11("LogSoftmax"), { "LogSoftmax", 13, a_softmax, "axis" },
	{ "LpPool", 18, rw_adapt_pool_dilations, "dilations" },
	{ "Max", 8, rw_adapt_bcast8, NULL },
	{ "MaxPool", 10, rw_adapt_pool10, "ceil_mode,dilations" },
	{ "Mean", 8, rw_adapt_bcast8, NULL },
	{ "Min", 8, rw_adapt_bcast8, NULL },
	{ "Mul", 7, rw_adapt_bcast7, "broadcast,axis,consumed_inputs" },
	AXES11("OneHot"),
	{ "Or", 7, rw_adapt_bcast7, "broadcast,axis" },
	{ "PRelu", 7, rw_adapt_bcast7, "broadcast,axis,consumed_inputs" },
	{ "Pad", 11, a_pad, "pads,paddings,value" }, { "Pad", 18, rw_adapt_pad18, NULL },
	{ "Pad", 19, rw_adapt_pad19, NULL },
	{ "Pow", 7, rw_adapt_bcast7, "broadcast,axis" },
	{ "QuantizeLinear", 13, rw_adapt_quant13, "axis" },
	AXES11("ReduceL1"), REDUCE18("ReduceL1"), AXES11("ReduceL2"), REDUCE18("ReduceL2"),
	AXES11("ReduceLogSum"), REDUCE18("ReduceLogSum"),
	AXES11("ReduceLogSumExp"), REDUCE18("ReduceLogSumExp"),
	AXES11("ReduceMax"), REDUCE18("ReduceMax"), AXES11("ReduceMean"), REDUCE18("ReduceMean"),
	AXES11("ReduceMin"), REDUCE18("ReduceMin"), AXES11("ReduceProd"), REDUCE18("ReduceProd"),
	AXES11("ReduceSum"), { "ReduceSum", 13, a_axes1, "axes,noop_with_empty_axes" },
	AXES11("ReduceSumSquare"), REDUCE18("ReduceSumSquare"),
	{ "Reshape", 14, rw_adapt_reshape14, "allowzero" },
	{ "Resize", 10, rw_adapt_resize10, NULL },
	{ "Resize", 11, rw_adapt_resize11, "coordinate_transformation_mode,nearest_mode,cubic_coeff_a,"
				    "exclude_outside,extrapolation_value" },
	{ "Resize", 13, rw_adapt_resize13, NULL },
	{ "Resize", 18, rw_adapt_resize18, "antialias,keep_aspect_ratio_policy" },
	{ "Resize", 19, rw_adapt_resize19, NULL },
	{ "RoiAlign", 16, rw_adapt_roialign16, "coordinate_transformation_mode" },
	{ "Scan", 9, rw_adapt_scan9, NULL },
	AXES11("Scatter"), { "Scatter", 11, rw_adapt_scatter, NULL },
	{ "ScatterElements", 16, rw_adapt_reduction, "reduction" },
	{ "ScatterElements", 18, rw_adapt_reduction, "reduction" },
	{ "ScatterND", 16, rw_adapt_reduction, "reduction" }, { "ScatterND", 18, rw_adapt_reduction, "reduction" },
	{ "Shape", 15, rw_adapt_shape15, "start" },
	{ "Slice", 10, a_slice, "starts,ends,axes" },
	AXES11("Softmax"), { "Softmax", 13, a_softmax, "axis" },
	AXES11("Split"), { "Split", 13, a_split13, "split" },
	{ "Split", 18, rw_adapt_split18, "num_outputs" },
	AXES11("Squeeze"), { "Squeeze", 13, a_axes1, "axes" },
	{ "Sub", 7, rw_adapt_bcast7, "broadcast,axis,consumed_inputs" },
	{ "Sum", 8, rw_adapt_bcast8, NULL },
	{ "TopK", 10, a_topk, "k" }, AXES11("TopK"),
	AXES11("Unsqueeze"), { "Unsqueeze", 13, a_axes1, "axes" },
	{ "Upsample", 9, rw_adapt_upsample9, "scales" },
	{ "Upsample", 10, rw_adapt_upsample, NULL },
	{ "Xor", 7, rw_adapt_bcast7, "broadcast,axis" },
};
const size_t rw_n_adapters = sizeof(rw_adapters) / sizeof(rw_adapters[0]);
