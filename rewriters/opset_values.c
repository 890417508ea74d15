/* opset_values.c: adapters of ops whose attributes, inputs, types or
 * accepted values changed between opsets (see opset_int.h): attributes
 * removed (BatchNormalization spatial/is_test, the pre-7 broadcast
 * attributes) or added later that must hold their defaults to go down
 * (Cast saturate, ArgMax select_last_index, Shape start/end, Split
 * num_outputs, Pad axes and wrap, scatter reductions, Reshape allowzero),
 * negative axes (11), Gemm's optional C (11), broadcasting Max/Min/Sum/Mean
 * (8), Scan's batch axis (9), per-axis quantization (13), Scatter ->
 * ScatterElements (11), Constant's forms and types, RoiAlign's coordinate
 * mode (16), DFT's axis input (20). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/opset_int.h"

#define MAX_K 64

int rw_adapt_bn7(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	(void)c;
	(void)why;
	(void)size;
	if (up && apply) {
		ir_node_remove_attr(n, "is_test");
		ir_node_remove_attr(n, "consumed_inputs");
	}
	return 1;
}

int rw_adapt_bn9(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	(void)c;
	if (!up)
		return 1;
	if (rw_attr_int(n, "spatial", 1) != 1) {
		snprintf(why, size, "spatial 0 has no later form");
		return 0;
	}
	if (apply)
		ir_node_remove_attr(n, "spatial");
	return 1;
}

int rw_adapt_bn14(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	(void)c;
	if (up)
		return 1;
	for (size_t i = 1; i < n->n_outputs; i++)
		if (rw_value_used(n->outputs[i])) {
			snprintf(why, size, "training outputs are used");
			return 0;
		}
	return rw_adapt_drop_default(n, "training_mode", 0, apply, why, size);
}

/* Elementwise ops before 7: broadcast=1 with axis; from 7 numpy rules. */
int rw_adapt_bcast7(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	int ra, rb;

	if (!up)
		return 1;
	if (!ir_node_attr(n, "axis")) {
		if (apply) {
			ir_node_remove_attr(n, "broadcast");
			ir_node_remove_attr(n, "consumed_inputs");
		}
		return 1;
	}
	ra = rw_rank(c, n->inputs[0]);
	rb = n->n_inputs > 1 ? rw_rank(c, n->inputs[1]) : -1;
	if (ra < 0 || rb < 0 || rw_attr_int(n, "axis", 0) != ra - rb) {
		snprintf(why, size, "broadcast along a leading axis needs a reshape");
		return 0;
	}
	if (apply) {
		ir_node_remove_attr(n, "broadcast");
		ir_node_remove_attr(n, "axis");
	}
	return 1;
}

/* Max, Min, Sum and Mean broadcast from 8; going below, every input must
 * have the same (known) shape. */
int rw_adapt_bcast8(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	const struct ir_vtype *t0 = n->n_inputs && n->inputs[0] ? rw_type(c, n->inputs[0]) : NULL;

	(void)apply;
	if (up)
		return 1;
	for (size_t i = 1; i < n->n_inputs; i++) {
		const struct ir_vtype *t = n->inputs[i] ? rw_type(c, n->inputs[i]) : NULL;
		int same = t0 && t && t0->rank >= 0 && t->rank == t0->rank;

		for (int k = 0; same && k < t->rank; k++)
			same = t->dims[k].kind == IR_VDIM_VALUE &&
			       t0->dims[k].kind == IR_VDIM_VALUE &&
			       t->dims[k].value == t0->dims[k].value;
		if (!same) {
			snprintf(why, size, "inputs of other (or unknown) shapes need the broadcasting "
				 "of opset 8");
			return 0;
		}
	}
	return 1;
}

/* Gemm 11 made C optional: going below, a zero C (a scalar of the data's
 * dtype, which broadcasts) takes its place. */
int rw_adapt_gemm11(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	int dt = rw_node_dtype(c, n);
	struct rw_emit e;

	if (up || rw_adapt_has_in(n, 2))
		return 1;
	if (!dt) {
		snprintf(why, size, "C is absent and the data's dtype is unknown");
		return 0;
	}
	if (!apply)
		return 1;
	rw_adapt_emit_at(c, n, &e);
	if (rw_adapt_set_input(n, 2, rw_scalar(&e, dt, 0)) < 0 || e.failed)
		return IR_ENOMEM;
	return 1;
}

/* Reshape 14 added allowzero: 1 means what an older Reshape does only
 * when the shape holds no 0. */
int rw_adapt_reshape14(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	int64_t v[MAX_K];
	size_t k;

	if (up)
		return 1;
	if (rw_attr_int(n, "allowzero", 0)) {
		if (!rw_adapt_has_in(n, 1) || !rw_const_ints(c, n->inputs[1], v, MAX_K, &k)) {
			snprintf(why, size, "allowzero 1 with a shape that is not constant");
			return 0;
		}
		for (size_t i = 0; i < k; i++)
			if (v[i] == 0) {
				snprintf(why, size, "allowzero 1 with a 0 in the shape");
				return 0;
			}
	}
	if (apply)
		ir_node_remove_attr(n, "allowzero");
	return 1;
}

/* Scan 9 dropped the batch axis and sequence_lens: neither form expresses
 * the other without a loop over the batch. */
int rw_adapt_scan9(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	(void)c;
	(void)n;
	(void)apply;
	snprintf(why, size, "Scan-%d has %s batch axis", up ? 9 : 8, up ? "no" : "a");
	return 0;
}

/* QuantizeLinear and DequantizeLinear 13 added axis (per-channel scales);
 * before, the scale and zero point are scalars. */
int rw_adapt_quant13(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	if (up)
		return 1;
	for (size_t i = 1; i < 3 && i < n->n_inputs; i++)
		if (n->inputs[i] && rw_static_numel(c, n->inputs[i]) != 1) {
			snprintf(why, size, "per-axis scale or zero point (input %zu)", i);
			return 0;
		}
	if (apply)
		ir_node_remove_attr(n, "axis");
	return 1;
}

/* Negative axes came at 11 to the ops of this adapter: going below, they
 * become non-negative by the rank they count in (the input's; the
 * output's for Unsqueeze and OneHot).  The axes may still be an input
 * here when an adapter of a later boundary moves them. */
int rw_adapt_axes11(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	const char *op = ir_s(n->op_type), *name = ir_node_attr(n, "axis") ? "axis" : "axes";
	const struct ir_attr *a = ir_node_attr(n, name);
	int64_t v[MAX_K];
	size_t k = 0;
	int r, neg = 0;

	if (up)
		return 1;
	if (a && a->type == IR_ATTR_INT) {
		v[k++] = a->i;
	} else if (a && a->type == IR_ATTR_INTS && a->n_ints <= MAX_K) {
		for (; k < a->n_ints; k++)
			v[k] = a->ints[k];
	} else if (!a && strcmp(name, "axis") && rw_adapt_has_in(n, 1) && n->n_inputs == 2 &&
		   (!strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze") ||
		    !strncmp(op, "Reduce", 6))) {
		if (!rw_const_ints(c, n->inputs[1], v, MAX_K, &k))
			return 1;       /* the adapter moving them says why */
	}
	for (size_t i = 0; i < k; i++)
		neg |= v[i] < 0;
	if (!neg)
		return 1;
	r = rw_rank(c, n->inputs[0]);
	if (r >= 0 && !strcmp(op, "Unsqueeze"))
		r += (int)k;
	else if (r >= 0 && !strcmp(op, "OneHot"))
		r += 1;
	if (r < 0) {
		snprintf(why, size, "a negative %s needs the rank, which is unknown", name);
		return 0;
	}
	for (size_t i = 0; i < k; i++)
		if (v[i] < -r || v[i] >= r) {
			snprintf(why, size, "%s %lld is out of range for rank %d", name,
				 (long long)v[i], r);
			return 0;
		} else if (v[i] < 0) {
			v[i] += r;
		}
	if (!apply)
		return 1;
	a = ir_node_attr(n, name);
	if (!a)
		return 1;
	return (a->type == IR_ATTR_INT ? ir_node_set_int(n, name, v[0]) :
		ir_node_set_ints(n, name, v, k)) < 0 ? IR_ENOMEM : 1;
}

int rw_adapt_scatter(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	int rc;

	(void)c;
	if (!up) {
		snprintf(why, size, "no older form");
		return 0;
	}
	/* ScatterElements-11 is Scatter-9 under another name */
	if (apply && (rc = rw_adapt_rename(n, "ScatterElements")) < 0)
		return rc;
	return RW_ADAPT_REPLACED;
}

int rw_adapt_saturate(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	(void)c;
	return up ? 1 : rw_adapt_drop_default(n, "saturate", 1, apply, why, size);
}

int rw_adapt_select_last(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	(void)c;
	return up ? 1 : rw_adapt_drop_default(n, "select_last_index", 0, apply, why, size);
}

int rw_adapt_shape15(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	int rc;

	(void)c;
	if (up)
		return 1;
	if ((rc = rw_adapt_drop_default(n, "start", 0, 0, why, size)) <= 0 ||
	    (ir_node_attr(n, "end") && (snprintf(why, size, "attribute end"), 1)))
		return 0;
	return rw_adapt_drop_default(n, "start", 0, apply, why, size);
}

int rw_adapt_pad18(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	(void)c;
	(void)apply;
	if (!up && rw_adapt_has_in(n, 3)) {
		snprintf(why, size, "the axes input has no older form");
		return 0;
	}
	return 1;
}

int rw_adapt_pad19(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	(void)c;
	(void)apply;
	if (!up && !strcmp(rw_attr_str(n, "mode", "constant"), "wrap")) {
		snprintf(why, size, "mode wrap has no older form");
		return 0;
	}
	return 1;
}

int rw_adapt_split18(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	(void)c;
	/* from 18 a Split without split says num_outputs: equal parts */
	if (up && !rw_adapt_has_in(n, 1) && !ir_node_attr(n, "split") && !ir_node_attr(n, "num_outputs"))
		return !apply || ir_node_set_int(n, "num_outputs", (int64_t)n->n_outputs) == 0 ?
		       1 : IR_ENOMEM;
	if (up || !ir_node_attr(n, "num_outputs"))
		return 1;
	if (rw_adapt_has_in(n, 1)) {
		if (apply)
			ir_node_remove_attr(n, "num_outputs");
		return 1;
	}
	/* without split, older Splits cut into equal parts: only exact */
	{
		const struct ir_vtype *t = rw_type(c, n->inputs[0]);
		int64_t axis = rw_attr_int(n, "axis", 0), k = rw_attr_int(n, "num_outputs", 1);

		if (!t || t->rank < 0 || (axis < 0 && (axis += t->rank) < 0) || axis >= t->rank ||
		    t->dims[axis].kind != IR_VDIM_VALUE || k < 1 || t->dims[axis].value % k) {
			snprintf(why, size, "num_outputs with an uneven or unknown split");
			return 0;
		}
	}
	if (apply)
		ir_node_remove_attr(n, "num_outputs");
	return 1;
}

int rw_adapt_reduction(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	const char *r = rw_attr_str(n, "reduction", "none");
	int to = (int)c->opset;

	if (up)
		return 1;
	if (strcmp(r, "none") && (to < 16 || (strcmp(r, "add") && strcmp(r, "mul")))) {
		snprintf(why, size, "reduction %s has no form at opset %d", r, to);
		return 0;
	}
	if (apply && !strcmp(r, "none"))
		ir_node_remove_attr(n, "reduction");
	return 1;
}

int rw_adapt_group21(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	(void)c;
	(void)n;
	(void)apply;
	snprintf(why, size, "scale and bias per %s", up ? "group become per channel" :
		 "channel have no per-group form");
	return 0;
}

/* A Constant the older version cannot express (a value_* attribute, a
 * dtype its T lacks) becomes an initializer of the same value; a sparse
 * one is refused. */
int rw_adapt_constant(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why,
		      size_t size)
{
	const struct ir_op_schema *b = ir_registry_find("", "Constant", c->opset);
	const struct ir_attr *a = n->n_attrs == 1 ? n->attrs[0] : NULL;
	struct ir_tensor *t = NULL;
	struct ir_value *y = n->n_outputs == 1 ? n->outputs[0] : NULL;
	char msg[300];
	struct rw_emit e;
	int rc;

	if (up || !b || !a || !y)
		return 1;
	if (ir_op_schema_attr(b, ir_s(a->name)) && ir_node_types_fit(c->m, n, b, &c->inf, msg,
								      sizeof(msg)))
		return 1;
	if (a->sparse || a->ref_attr_name || y->init || ir_graph_is_output(n->graph, y)) {
		snprintf(why, size, "a %s Constant has no form at opset %lld",
			 a->sparse ? "sparse" : "graph-output or referenced", (long long)c->opset);
		return 0;
	}
	if (!a->t && strcmp(ir_s(a->name), "value_float") && strcmp(ir_s(a->name), "value_int") &&
	    strcmp(ir_s(a->name), "value_floats") && strcmp(ir_s(a->name), "value_ints")) {
		snprintf(why, size, "attribute %s has no form at opset %lld", ir_s(a->name),
			 (long long)c->opset);
		return 0;
	}
	if (!apply)
		return RW_ADAPT_REPLACED;
	if (a->t) {
		t = a->t;
		n->attrs[0]->t = NULL;      /* the initializer takes it */
	} else if (a->type == IR_ATTR_FLOAT || a->type == IR_ATTR_FLOATS) {
		int64_t k = a->type == IR_ATTR_FLOAT ? 1 : (int64_t)a->n_floats;

		t = ir_tensor_new_raw("", IR_DTYPE_FLOAT, &k, a->type == IR_ATTR_FLOATS,
				      a->type == IR_ATTR_FLOAT ? &a->f : (const void *)a->floats,
				      (size_t)k * sizeof(float));
	} else {
		int64_t k = a->type == IR_ATTR_INT ? 1 : (int64_t)a->n_ints;

		t = ir_tensor_new_raw("", IR_DTYPE_INT64, &k, a->type == IR_ATTR_INTS,
				      a->type == IR_ATTR_INT ? &a->i : (const void *)a->ints,
				      (size_t)k * sizeof(int64_t));
	}
	if (!t)
		return IR_ENOMEM;
	rw_begin(c, n, &e);
	if ((rc = ir_value_attach_initializer(e.g, y, t)) < 0)
		e.failed = 1;
	return rw_end(&e, 0) < 0 ? IR_ENOMEM : RW_ADAPT_REPLACED;
}

/* RoiAlign 16 added coordinate_transformation_mode, half_pixel by
 * default; RoiAlign-10 computes output_half_pixel. */
int rw_adapt_roialign16(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why,
			size_t size)
{
	(void)c;
	if (up)
		return !apply || ir_node_attr(n, "coordinate_transformation_mode") ||
		       ir_node_set_string(n, "coordinate_transformation_mode",
					  "output_half_pixel") == 0 ? 1 : IR_ENOMEM;
	if (strcmp(rw_attr_str(n, "coordinate_transformation_mode", "half_pixel"),
		   "output_half_pixel")) {
		snprintf(why, size, "coordinate_transformation_mode %s has no older form",
			 rw_attr_str(n, "coordinate_transformation_mode", "half_pixel"));
		return 0;
	}
	if (apply)
		ir_node_remove_attr(n, "coordinate_transformation_mode");
	return 1;
}

/* DFT 20 took axis as an input, whose default (-2: the last axis before
 * the real/imaginary one) differs from the attribute's (1). */
int rw_adapt_dft20(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why,
		   size_t size)
{
	int64_t axis[1];
	size_t k;
	int r;
	struct rw_emit e;

	if (up) {
		axis[0] = rw_attr_int(n, "axis", 1);
		if (!apply)
			return 1;
		rw_adapt_emit_at(c, n, &e);
		if (rw_adapt_set_input(n, 2, rw_const(&e, IR_DTYPE_INT64, 0, NULL,
						      (const double[]){ (double)axis[0] })) < 0 ||
		    e.failed)
			return IR_ENOMEM;
		ir_node_remove_attr(n, "axis");
		return 1;
	}
	axis[0] = -2;
	if (rw_adapt_has_in(n, 2) &&
	    (!rw_const_ints(c, n->inputs[2], axis, 1, &k) || k != 1)) {
		snprintf(why, size, "input axis is not a constant scalar");
		return 0;
	}
	if (axis[0] < 0) {
		if ((r = rw_rank(c, n->inputs[0])) < 0 || axis[0] + r < 0) {
			snprintf(why, size, "a negative axis needs the rank, which is unknown");
			return 0;
		}
		axis[0] += r;
	}
	if (!apply)
		return 1;
	if (ir_node_set_int(n, "axis", axis[0]) < 0)
		return IR_ENOMEM;
	if (rw_adapt_has_in(n, 2))
		ir_node_set_input(n, 2, NULL);
	rw_adapt_trim_inputs(n);
	return 1;
}
