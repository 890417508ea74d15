/* opset_resize.c: adapters of the resampling ops (see opset_int.h):
 * Upsample (7: scales attribute, 9: input) <-> Resize (10: X, scales; 11:
 * X, roi, scales[, sizes]; 13: roi and scales optional; 18: antialias,
 * axes, keep_aspect_ratio_policy; 19: half_pixel_symmetric), and
 * GridSample's mode names (20). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/opset_int.h"

/* Upsample (7: scales attribute, 9: input) as Resize with asymmetric
 * coordinates and floor rounding, which is what Upsample computes. */
int rw_adapt_upsample(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
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
	if (!rw_adapt_has_in(n, 1) && !ir_node_attr(n, "scales")) {
		snprintf(why, size, "no scales");
		return 0;
	}
	if (!apply)
		return RW_ADAPT_REPLACED;
	rw_begin(c, n, &e);
	if (rw_adapt_has_in(n, 1)) {
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

/* Upsample 9 took its scales as an input instead of an attribute. */
int rw_adapt_upsample9(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	struct rw_emit e;

	if (up) {
		size_t k;
		const float *f = rw_attr_floats(n, "scales", &k);
		double v[16];
		int64_t dims[1] = { (int64_t)k };

		if (!f || k > 16) {
			if (rw_adapt_has_in(n, 1))
				return 1;
			snprintf(why, size, "no scales");
			return 0;
		}
		if (!apply)
			return 1;
		for (size_t i = 0; i < k; i++)
			v[i] = f[i];
		rw_adapt_emit_at(c, n, &e);
		if (rw_adapt_set_input(n, 1, rw_const(&e, IR_DTYPE_FLOAT, 1, dims, v)) < 0 || e.failed)
			return IR_ENOMEM;
		ir_node_remove_attr(n, "scales");
		return 1;
	} else {
		double v[16];
		float f[16];
		size_t k;

		if (!rw_adapt_has_in(n, 1) || !rw_const_doubles(c, n->inputs[1], v, 16, &k) || !k) {
			snprintf(why, size, "the scales are not constant (Upsample-7 takes an attribute)");
			return 0;
		}
		if (!apply)
			return 1;
		for (size_t i = 0; i < k; i++)
			f[i] = (float)v[i];
		if (ir_node_set_floats(n, "scales", f, k) < 0)
			return IR_ENOMEM;
		ir_node_set_input(n, 1, NULL);
		rw_adapt_trim_inputs(n);
		return 1;
	}
}

/* The scales of a Resize in either form: input 1 (Resize-10) or 2. */
static struct ir_value *resize_scales(const struct ir_node *n)
{
	return n->n_inputs >= 3 ? n->inputs[2] : n->n_inputs == 2 ? n->inputs[1] : NULL;
}

/* Below 10 a Resize is an Upsample: 9 takes the scales as an input, 7 and
 * 8 as an attribute (constants then).  Resize-10 computes what Upsample
 * does (nearest or linear, asymmetric, floor rounding); the adapters of
 * 11 and later have checked that a newer Resize is one, and brought it
 * into Resize-10's form before this runs. */
int rw_adapt_resize10(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	const char *mode = rw_attr_str(n, "mode", "nearest");
	struct ir_value *sc = resize_scales(n);
	double v[16];
	size_t k;
	int rc;

	if (up) {
		snprintf(why, size, "Resize has no version before 10");
		return 0;
	}
	if (strcmp(mode, "nearest") && strcmp(mode, "linear")) {
		snprintf(why, size, "mode %s has no Upsample form", mode);
		return 0;
	}
	if (!sc) {
		snprintf(why, size, "Upsample needs scales");
		return 0;
	}
	if (rw_const_doubles(c, sc, v, 16, &k))
		for (size_t j = 0; j < k; j++)
			if (v[j] < 1) {
				snprintf(why, size, "scale %g on axis %zu: Upsample only enlarges",
					 v[j], j);
				return 0;
			}
	if (c->opset < 9 && (!rw_const_doubles(c, sc, v, 16, &k) || !k)) {
		snprintf(why, size, "the scales are not constant (Upsample-7 takes an attribute)");
		return 0;
	}
	if (!apply)
		return RW_ADAPT_REPLACED;
	if ((rc = rw_adapt_rename(n, "Upsample")) < 0)
		return rc;
	if (c->opset < 9) {
		float f[16];

		for (size_t i = 0; i < k; i++)
			f[i] = (float)v[i];
		if (ir_node_set_floats(n, "scales", f, k) < 0)
			return IR_ENOMEM;
		ir_node_set_input(n, 1, NULL);
		rw_adapt_trim_inputs(n);
	}
	return RW_ADAPT_REPLACED;
}

/* How Resize-10's nearest rounds, for the constant scales of input i:
 * down on axes it enlarges, up on those it shrinks (as onnxruntime and
 * opmig's kernel compute it; the spec leaves it open), so "floor" when
 * no axis shrinks, "ceil" when none grows; NULL for a mix or scales that
 * are not constant. */
/* Nearest with half_pixel (or pytorch_half_pixel) coordinates and
 * round_prefer_floor or _ceil, by constant scales that are positive
 * integers, picks the pixels asymmetric floor picks: with x = s q + r,
 * (x + 0.5) / s - 0.5 = q + (r + 0.5) / s - 0.5 is within half a pixel of
 * q, never on the half. */
static int half_pixel_is_floor(struct rw_ctx *c, const struct ir_node *n, const char *ctm,
			       const char *mode, const char *nm)
{
	double v[16];
	size_t k;

	if (strcmp(mode, "nearest") || (strcmp(ctm, "half_pixel") &&
					strcmp(ctm, "pytorch_half_pixel")) ||
	    (strcmp(nm, "round_prefer_floor") && strcmp(nm, "round_prefer_ceil")) ||
	    !rw_adapt_has_in(n, 2) || rw_adapt_has_in(n, 3) ||
	    !rw_const_doubles(c, n->inputs[2], v, 16, &k) || !k)
		return 0;
	for (size_t j = 0; j < k; j++)
		if (v[j] < 1 || v[j] != (double)(int64_t)v[j])
			return 0;
	return 1;
}

static const char *nearest10(struct rw_ctx *c, const struct ir_node *n, size_t i)
{
	double v[16];
	size_t k;
	int down = 0, grow = 0;

	if (!rw_adapt_has_in(n, i) || !rw_const_doubles(c, n->inputs[i], v, 16, &k))
		return NULL;
	for (size_t j = 0; j < k; j++) {
		down |= v[j] < 1;
		grow |= v[j] > 1;
	}
	return down && grow ? NULL : down ? "ceil" : "floor";
}

/* Resize 10 (X, scales), asymmetric, <-> 11 (X, roi, scales[, sizes]). */
int rw_adapt_resize11(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
{
	struct rw_emit e;

	if (up) {
		const char *nm = "floor";

		if (!strcmp(rw_attr_str(n, "mode", "nearest"), "nearest") &&
		    !(nm = nearest10(c, n, 1))) {
			snprintf(why, size, "nearest with scales that shrink some axes and grow "
				 "others, or are not constant (Resize-10 rounds up on the first, "
				 "down on the second; 11 has one nearest_mode)");
			return 0;
		}
		if (!apply)
			return 1;
		rw_adapt_emit_at(c, n, &e);
		if (rw_adapt_set_input(n, 2, n->inputs[1]) < 0 ||
		    ir_node_set_input(n, 1, rw_const(&e, IR_DTYPE_FLOAT, 1, (const int64_t[]){ 0 },
						     NULL)) < 0 || e.failed ||
		    ir_node_set_string(n, "coordinate_transformation_mode", "asymmetric") < 0 ||
		    ir_node_set_string(n, "nearest_mode", nm) < 0)
			return IR_ENOMEM;
		return 1;
	}
	{
		/* Resize-10: asymmetric coordinates, nearest rounding down,
		 * by scales */
		const char *ctm = rw_attr_str(n, "coordinate_transformation_mode", "half_pixel");
		const char *mode = rw_attr_str(n, "mode", "nearest");
		const char *nm = rw_attr_str(n, "nearest_mode", "round_prefer_floor");
		int ok = 0;

		if (half_pixel_is_floor(c, n, ctm, mode, nm)) {
			ctm = "asymmetric";      /* the same pixels: PyTorch's exports */
			nm = "floor";
		}
		if (strcmp(ctm, "asymmetric"))
			snprintf(why, size, "coordinate_transformation_mode %s (before 11 only "
				 "asymmetric)", ctm);
		else if (!strcmp(mode, "cubic"))
			snprintf(why, size, "mode cubic (before 11 only nearest and linear)");
		else if (!strcmp(mode, "nearest") &&
			 (!nearest10(c, n, 2) || strcmp(nm, nearest10(c, n, 2))))
			snprintf(why, size, "nearest_mode %s (Resize-10 rounds down where it "
				 "enlarges, up where it shrinks)", nm);
		else if (rw_adapt_has_in(n, 3) || !rw_adapt_has_in(n, 2))
			snprintf(why, size, "sizes (before 11 only scales)");
		else
			ok = 1;
		if (!ok)
			return 0;
	}
	if (!apply)
		return 1;
	ir_node_set_input(n, 1, n->inputs[2]);
	ir_node_set_input(n, 2, NULL);
	rw_adapt_trim_inputs(n);
	ir_node_remove_attr(n, "coordinate_transformation_mode");
	ir_node_remove_attr(n, "nearest_mode");
	ir_node_remove_attr(n, "cubic_coeff_a");
	ir_node_remove_attr(n, "exclude_outside");
	ir_node_remove_attr(n, "extrapolation_value");
	return 1;
}

int rw_adapt_resize18(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
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
	if ((rc = rw_adapt_drop_default(n, "antialias", 0, apply, why, size)) <= 0)
		return rc;
	if (apply)
		ir_node_remove_attr(n, "keep_aspect_ratio_policy");
	return 1;
}

int rw_adapt_resize19(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why, size_t size)
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

/* Resize 13 made roi and scales optional; Resize-11 takes them always:
 * an empty tensor stands for an absent one (roi only matters for
 * tf_crop_and_resize, scales are empty when sizes are given).  Going up,
 * tf_half_pixel_for_nn (x / scale + 0.5 / scale, which 13 dropped) is
 * half_pixel (the same less 0.5) with the nearest rounding that makes up
 * the half: floor(v) = round_prefer_ceil(v - 0.5) and round_prefer_floor(v)
 * = ceil(v - 0.5). */
int rw_adapt_resize13(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why,
		      size_t size)
{
	struct rw_emit e;

	if (up) {
		const char *nm = rw_attr_str(n, "nearest_mode", "round_prefer_floor"), *to;

		if (strcmp(rw_attr_str(n, "coordinate_transformation_mode", "half_pixel"),
			   "tf_half_pixel_for_nn"))
			return 1;
		to = !strcmp(nm, "floor") ? "round_prefer_ceil" :
		     !strcmp(nm, "round_prefer_floor") ? "ceil" : NULL;
		if (strcmp(rw_attr_str(n, "mode", "nearest"), "nearest") || !to) {
			snprintf(why, size, "tf_half_pixel_for_nn with mode %s, nearest_mode %s has "
				 "no later form", rw_attr_str(n, "mode", "nearest"), nm);
			return 0;
		}
		if (apply && (ir_node_set_string(n, "coordinate_transformation_mode",
						 "half_pixel") < 0 ||
			      ir_node_set_string(n, "nearest_mode", to) < 0))
			return IR_ENOMEM;
		return 1;
	}
	if (!rw_adapt_has_in(n, 2) && !rw_adapt_has_in(n, 3)) {
		snprintf(why, size, "neither scales nor sizes");
		return 0;
	}
	if (!apply)
		return 1;
	rw_adapt_emit_at(c, n, &e);
	for (size_t i = 1; i < 3; i++)
		if (!rw_adapt_has_in(n, i) &&
		    rw_adapt_set_input(n, i, rw_const(&e, IR_DTYPE_FLOAT, 1, (const int64_t[]){ 0 },
						      NULL)) < 0)
			return IR_ENOMEM;
	return e.failed ? IR_ENOMEM : 1;
}

/* GridSample 20 renamed the modes (bilinear -> linear, bicubic -> cubic)
 * and took inputs of any rank; before, they are 4-D. */
int rw_adapt_gridsample20(struct rw_ctx *c, struct ir_node *n, int up, int apply, char *why,
			  size_t size)
{
	static const char *const names[][2] = { { "bilinear", "linear" }, { "bicubic", "cubic" },
						 { "nearest", "nearest" } };
	const char *mode = rw_attr_str(n, "mode", up ? "bilinear" : "linear");

	if (!up && rw_rank(c, n->inputs[0]) != 4) {
		snprintf(why, size, "GridSample-16 samples 4-D inputs only");
		return 0;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (!strcmp(mode, names[i][!up]))
			return !apply || ir_node_set_string(n, "mode", names[i][up]) == 0 ? 1 :
			       IR_ENOMEM;
	snprintf(why, size, "mode %s", mode);
	return 0;
}
