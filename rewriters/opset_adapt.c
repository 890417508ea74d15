/* opset_adapt.c: adapters for the ops whose signature or semantics
 * changed between opsets (see opset_int.h): attributes that became inputs
 * (Slice 10, TopK 10, Clip 11, Pad 11, Squeeze/Unsqueeze/Split/ReduceSum
 * 13, the other reductions 18, Dropout 12), Softmax/LogSoftmax/Hardmax's
 * axis semantics (13), Upsample -> Resize (10), Resize 10 -> 11, Scatter
 * -> ScatterElements (11), attributes removed (BatchNormalization
 * spatial/is_test, the pre-7 broadcast attributes) and attributes added
 * later that must hold their defaults to go down (Cast saturate, ArgMax
 * select_last_index, Resize antialias/axes, Shape start/end, Split
 * num_outputs, Pad axes, scatter reductions). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/opset_int.h"

#define MAX_K 64

/* An emitter bound to n's graph that does not detach n: new constants
 * and nodes go before n. */
static void emit_at(struct rw_ctx *c, struct ir_node *n, struct rw_emit *e)
{
	memset(e, 0, sizeof(*e));
	e->c = c;
	e->g = n->graph;
	e->pos = n->index;
	e->dtype = rw_node_dtype(c, n);
	snprintf(e->base, sizeof(e->base), "%.120s",
		 n->name && *n->name ? n->name : ir_s(n->op_type));
}

static int set_input(struct ir_node *n, size_t i, struct ir_value *v)
{
	while (n->n_inputs <= i)
		if (ir_node_append_input(n, NULL) < 0)
			return IR_ENOMEM;
	return ir_node_set_input(n, i, v);
}

static void trim_inputs(struct ir_node *n)
{
	while (n->n_inputs && !n->inputs[n->n_inputs - 1])
		n->n_inputs--;
}

static int has_in(const struct ir_node *n, size_t i)
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
		emit_at(c, n, &e);
		if (set_input(n, i, rw_ints(&e, v, k)) < 0 || e.failed)
			return IR_ENOMEM;
		ir_node_remove_attr(n, name);
		return 1;
	}
	if (has_in(n, i)) {
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
		trim_inputs(n);
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
		emit_at(c, n, &e);
		if (set_input(n, i, rw_scalar(&e, dtype, rw_attr_float(n, name, 0))) < 0 ||
		    e.failed)
			return IR_ENOMEM;
		ir_node_remove_attr(n, name);
		return 1;
	}
	if (has_in(n, i)) {
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
		trim_inputs(n);
	}
	return 1;
}

/* An attribute that must be absent (or hold dflt) to go below its
 * introduction; going down it is dropped. */
static int drop_default(struct ir_node *n, const char *name, int64_t dflt, int apply,
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

/* ---- attribute <-> input moves ---------------------------------------- */

static int a_axes1(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	if (!up && !strncmp(ir_s(n->op_type), "Reduce", 6) && !has_in(n, 1) &&
	    rw_attr_int(n, "noop_with_empty_axes", 0)) {
		snprintf(why, size, "noop_with_empty_axes without axes");
		return 0;
	}
	return ints_attr_input(c, n, "axes", 1, up, apply, why, size);
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
		emit_at(c, n, &e);
		if (set_input(n, 1, rw_ints(&e, &k, 1)) < 0 || e.failed)
			return IR_ENOMEM;
		ir_node_remove_attr(n, "k");
		return 1;
	} else {
		int64_t k[1];
		size_t cnt;

		if (!has_in(n, 1) || !rw_const_ints(c, n->inputs[1], k, 1, &cnt) || cnt != 1) {
			snprintf(why, size, "input k is not constant");
			return 0;
		}
		if (!apply)
			return 1;
		if (ir_node_set_int(n, "k", k[0]) < 0)
			return IR_ENOMEM;
		ir_node_set_input(n, 1, NULL);
		trim_inputs(n);
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
	if (has_in(n, 4)) {
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
		if (has_in(n, i + 1)) {
			int64_t v[MAX_K];
			size_t k;

			if (!rw_const_ints(c, n->inputs[i + 1], v, MAX_K, &k)) {
				snprintf(why, size, "input %s is not constant", names[i]);
				return 0;
			}
		}
	if (!apply)
		return 1;
	if (has_in(n, 4))
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
	    set_input(n, 1, NULL) < 0)
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
	if ((rc = float_attr_input(c, n, "max", 2, dt, 0, 1, why, size)) <= 0)
		return rc;
	return float_attr_input(c, n, "min", 1, dt, 0, 1, why, size);
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

static int a_dropout12(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	if (up && !ir_node_attr(n, "ratio"))
		return 1;
	return float_attr_input(c, n, "ratio", 1, IR_DTYPE_FLOAT, up, apply, why, size);
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

/* Upsample (7: scales attribute, 9: input) as Resize with asymmetric
 * coordinates and floor rounding, which is what Upsample computes. */
static int a_upsample(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	const char *mode = rw_attr_str(n, "mode", "nearest");
	struct ir_value *in[3], *x = n->inputs[0], *y = n->outputs[0], *scales;
	struct ir_node *r;
	struct rw_emit e;

	if (!up) {
		snprintf(why, size, "no older form");
		return 0;
	}
	if (strcmp(mode, "nearest") && strcmp(mode, "linear") && strcmp(mode, "bilinear")) {
		snprintf(why, size, "mode %s", mode);
		return 0;
	}
	if (!has_in(n, 1) && !ir_node_attr(n, "scales")) {
		snprintf(why, size, "no scales");
		return 0;
	}
	if (!apply)
		return 1;
	rw_begin(c, n, &e);
	if (has_in(n, 1)) {
		scales = n->inputs[1];
	} else {
		size_t k;
		const float *f = rw_attr_floats(n, "scales", &k);
		double v[16];
		int64_t dims[1] = { (int64_t)k };

		for (size_t i = 0; i < k && i < 16; i++)
			v[i] = f[i];
		scales = rw_const(&e, IR_DTYPE_FLOAT, 1, dims, v);
	}
	in[0] = x;
	in[1] = c->opset >= 11 ? rw_const(&e, IR_DTYPE_FLOAT, 1, (const int64_t[]){ 0 }, NULL) :
				 scales;
	in[2] = scales;
	r = rw_node(&e, "Resize", NULL, in, c->opset >= 11 ? 3 : 2, y);
	if (r && (ir_node_set_string(r, "mode", strcmp(mode, "nearest") ? "linear" : "nearest") < 0 ||
		  (c->opset >= 11 &&
		   (ir_node_set_string(r, "coordinate_transformation_mode", "asymmetric") < 0 ||
		    ir_node_set_string(r, "nearest_mode", "floor") < 0))))
		e.failed = 1;
	return rw_end(&e, 0) < 0 ? IR_ENOMEM : RW_ADAPT_REPLACED;
}

/* Resize 10 (X, scales), asymmetric, <-> 11 (X, roi, scales[, sizes]). */
static int a_resize11(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	struct rw_emit e;

	if (up) {
		if (!apply)
			return 1;
		emit_at(c, n, &e);
		if (set_input(n, 2, n->inputs[1]) < 0 ||
		    ir_node_set_input(n, 1, rw_const(&e, IR_DTYPE_FLOAT, 1, (const int64_t[]){ 0 },
						     NULL)) < 0 || e.failed ||
		    ir_node_set_string(n, "coordinate_transformation_mode", "asymmetric") < 0 ||
		    ir_node_set_string(n, "nearest_mode", "floor") < 0)
			return IR_ENOMEM;
		return 1;
	}
	if (strcmp(rw_attr_str(n, "coordinate_transformation_mode", "half_pixel"), "asymmetric") ||
	    strcmp(rw_attr_str(n, "nearest_mode", "round_prefer_floor"), "floor") ||
	    has_in(n, 3) || !has_in(n, 2) || strcmp(rw_attr_str(n, "mode", "nearest"), "cubic") == 0) {
		snprintf(why, size, "only asymmetric, floor-rounded resizes by scales exist before 11");
		return 0;
	}
	if (!apply)
		return 1;
	ir_node_set_input(n, 1, n->inputs[2]);
	ir_node_set_input(n, 2, NULL);
	trim_inputs(n);
	ir_node_remove_attr(n, "coordinate_transformation_mode");
	ir_node_remove_attr(n, "nearest_mode");
	ir_node_remove_attr(n, "cubic_coeff_a");
	ir_node_remove_attr(n, "exclude_outside");
	ir_node_remove_attr(n, "extrapolation_value");
	return 1;
}

static int rename_op(struct ir_node *n, const char *op)
{
	char *s = strdup(op);

	if (!s)
		return IR_ENOMEM;
	free(n->op_type);
	n->op_type = s;
	return 1;
}

static int a_scatter(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	(void)c;
	if (!up) {
		snprintf(why, size, "no older form");
		return 0;
	}
	return apply ? rename_op(n, "ScatterElements") : 1;
}

/* ---- attributes that came or went ------------------------------------- */

static int a_bn9(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
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

static int a_bn7(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
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

static int a_bn14(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	(void)c;
	if (up)
		return 1;
	for (size_t i = 1; i < n->n_outputs; i++)
		if (rw_value_used(n->outputs[i])) {
			snprintf(why, size, "training outputs are used");
			return 0;
		}
	return drop_default(n, "training_mode", 0, apply, why, size);
}

/* Elementwise ops before 7: broadcast=1 with axis; from 7 numpy rules. */
static int a_bcast7(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
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

static int a_saturate(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	(void)c;
	return up ? 1 : drop_default(n, "saturate", 1, apply, why, size);
}

static int a_select_last(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	(void)c;
	return up ? 1 : drop_default(n, "select_last_index", 0, apply, why, size);
}

static int a_shape15(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	int rc;

	(void)c;
	if (up)
		return 1;
	if ((rc = drop_default(n, "start", 0, 0, why, size)) <= 0 ||
	    (ir_node_attr(n, "end") && (snprintf(why, size, "attribute end"), 1)))
		return 0;
	return drop_default(n, "start", 0, apply, why, size);
}

static int a_resize18(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	int rc;

	(void)c;
	if (up)
		return 1;
	if (ir_node_attr(n, "axes") || strcmp(rw_attr_str(n, "keep_aspect_ratio_policy", "stretch"),
					      "stretch")) {
		snprintf(why, size, "axes or keep_aspect_ratio_policy have no older form");
		return 0;
	}
	if ((rc = drop_default(n, "antialias", 0, apply, why, size)) <= 0)
		return rc;
	if (apply)
		ir_node_remove_attr(n, "keep_aspect_ratio_policy");
	return 1;
}

static int a_resize19(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	(void)c;
	(void)apply;
	if (!up && !strcmp(rw_attr_str(n, "coordinate_transformation_mode", ""),
			   "half_pixel_symmetric")) {
		snprintf(why, size, "half_pixel_symmetric has no older form");
		return 0;
	}
	return 1;
}

static int a_pad18(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	(void)c;
	(void)apply;
	if (!up && has_in(n, 3)) {
		snprintf(why, size, "the axes input has no older form");
		return 0;
	}
	return 1;
}

static int a_pad19(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	(void)c;
	(void)apply;
	if (!up && !strcmp(rw_attr_str(n, "mode", "constant"), "wrap")) {
		snprintf(why, size, "mode wrap has no older form");
		return 0;
	}
	return 1;
}

static int a_split18(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	(void)c;
	if (up || !ir_node_attr(n, "num_outputs"))
		return 1;
	if (has_in(n, 1)) {
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

static int a_reduction(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
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

static int a_group21(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	(void)c;
	(void)n;
	(void)apply;
	snprintf(why, size, "scale and bias per %s", up ? "group become per channel" :
		 "channel have no per-group form");
	return 0;
}

#define REDUCE18(op) { op, 18, a_axes1 }
const struct rw_adapter rw_adapters[] = {
	{ "Add", 7, a_bcast7 }, { "And", 7, a_bcast7 }, { "Div", 7, a_bcast7 },
	{ "Equal", 7, a_bcast7 }, { "Gemm", 7, a_bcast7 }, { "Greater", 7, a_bcast7 },
	{ "Less", 7, a_bcast7 }, { "Mul", 7, a_bcast7 }, { "Or", 7, a_bcast7 },
	{ "Pow", 7, a_bcast7 }, { "PRelu", 7, a_bcast7 }, { "Sub", 7, a_bcast7 },
	{ "Xor", 7, a_bcast7 },
	{ "ArgMax", 12, a_select_last }, { "ArgMin", 12, a_select_last },
	{ "BatchNormalization", 7, a_bn7 }, { "BatchNormalization", 9, a_bn9 },
	{ "BatchNormalization", 14, a_bn14 },
	{ "Cast", 19, a_saturate },
	{ "Clip", 11, a_clip },
	{ "Dropout", 12, a_dropout12 },
	{ "GroupNormalization", 21, a_group21 },
	{ "Hardmax", 13, a_softmax }, { "LogSoftmax", 13, a_softmax },
	{ "Pad", 11, a_pad }, { "Pad", 18, a_pad18 }, { "Pad", 19, a_pad19 },
	REDUCE18("ReduceL1"), REDUCE18("ReduceL2"), REDUCE18("ReduceLogSum"),
	REDUCE18("ReduceLogSumExp"), REDUCE18("ReduceMax"), REDUCE18("ReduceMean"),
	REDUCE18("ReduceMin"), REDUCE18("ReduceProd"), REDUCE18("ReduceSumSquare"),
	{ "ReduceSum", 13, a_axes1 },
	{ "Resize", 11, a_resize11 }, { "Resize", 18, a_resize18 }, { "Resize", 19, a_resize19 },
	{ "Scatter", 11, a_scatter },
	{ "ScatterElements", 16, a_reduction }, { "ScatterElements", 18, a_reduction },
	{ "ScatterND", 16, a_reduction }, { "ScatterND", 18, a_reduction },
	{ "Shape", 15, a_shape15 },
	{ "Slice", 10, a_slice },
	{ "Softmax", 13, a_softmax },
	{ "Split", 13, a_split13 }, { "Split", 18, a_split18 },
	{ "Squeeze", 13, a_axes1 },
	{ "TopK", 10, a_topk },
	{ "Unsqueeze", 13, a_axes1 },
	{ "Upsample", 10, a_upsample },
};
const size_t rw_n_adapters = sizeof(rw_adapters) / sizeof(rw_adapters[0]);
