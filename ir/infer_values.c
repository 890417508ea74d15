/* infer_values.c: output shapes that depend on element values, computed
 * when those values are known constants (initializers, Constants, bound
 * graph inputs): Compress, NonZero, Unique and NonMaxSuppression.  Unknown values
 * leave the data-dependent dim unknown. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/infer_int.h"

/* All elements of a constant input as doubles (malloc'd), or NULL. */
static double *const_values(const struct ir_vtype *x, size_t *n)
{
	int64_t numel = infer_vt_numel(x);
	double *v;

	if (!x || numel < 0)
		return NULL;
	if (x->has_fconst && x->n_fconst == (size_t)numel) {
		if (!(v = malloc((x->n_fconst + 1) * sizeof(*v))))
			return NULL;
		memcpy(v, x->fval, x->n_fconst * sizeof(*v));
		*n = x->n_fconst;
		return v;
	}
	if (!x->has_const || x->n_const != (size_t)numel)
		return NULL;
	if (!(v = malloc((x->n_const + 1) * sizeof(*v))))
		return NULL;
	for (size_t i = 0; i < x->n_const; i++) {
		if (x->cval[i].kind != IR_VDIM_VALUE) {
			free(v);
			return NULL;
		}
		v[i] = (double)x->cval[i].value;
	}
	*n = x->n_const;
	return v;
}

/* Compress: the selected count is the number of true conditions (within
 * the axis length); no axis flattens. */
int infer_compress(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0), *cond = infer_in(c, 1);
	struct ir_vtype *o = &c->out[0];
	struct ir_vdim cnt = infer_dim_unknown();
	int64_t axis = 0, ax = -1, limit = -1, k = 0;
	int rc, has_axis = infer_attr(c, "axis") != NULL;

	if (!x)
		return 0;
	o->dtype = x->dtype;
	if (has_axis && x->rank >= 0) {
		if ((rc = infer_attr_int(c, "axis", &axis)) < 0 ||
		    (rc = infer_norm_axis(c, axis, x->rank, &ax)) < 0)
			return rc;
		if (x->dims[ax].kind == IR_VDIM_VALUE)
			limit = x->dims[ax].value;
	} else if (!has_axis) {
		limit = infer_vt_numel(x);
	}
	if (cond && cond->has_const && (!has_axis || x->rank >= 0)) {
		size_t i;

		for (i = 0; i < cond->n_const && (limit < 0 || (int64_t)i < limit); i++) {
			if (cond->cval[i].kind != IR_VDIM_VALUE)
				break;
			k += cond->cval[i].value != 0;
		}
		if (i == cond->n_const || (int64_t)i == limit)
			cnt = infer_dim_val(k);
	}
	if (!has_axis) {
		o->rank = 1;
		o->dims[0] = cnt;
		return 0;
	}
	if (x->rank < 0)
		return 0;
	o->rank = x->rank;
	memcpy(o->dims, x->dims, sizeof(x->dims));
	o->dims[ax] = cnt;
	return 0;
}

/* NonZero: [rank, count of nonzero elements]. */
int infer_nonzero(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	size_t n = 0;
	int64_t k = 0;
	double *v;

	c->out[0].dtype = IR_DTYPE_INT64;
	c->out[0].rank = 2;
	c->out[0].dims[0] = x && x->rank >= 0 ? infer_dim_val(x->rank) :
			    infer_dim_unknown();
	c->out[0].dims[1] = infer_dim_unknown();
	if (!x || !(v = const_values(x, &n)))
		return 0;
	for (size_t i = 0; i < n; i++)
		k += v[i] != 0;
	free(v);
	c->out[0].dims[1] = infer_dim_val(k);
	return 0;
}

/* Distinct slices along an axis: v viewed as [outer, d, inner]. */
static int64_t count_distinct(const double *v, size_t outer, size_t d,
			      size_t inner)
{
	int64_t k = 0;

	for (size_t a = 0; a < d; a++) {
		int seen = 0;

		for (size_t b = 0; b < a && !seen; b++) {
			int same = 1;

			for (size_t o = 0; o < outer && same; o++)
				for (size_t i = 0; i < inner && same; i++)
					same = v[(o * d + a) * inner + i] ==
					       v[(o * d + b) * inner + i];
			seen = same;
		}
		k += !seen;
	}
	return k;
}

/* Unique: Y, indices, inverse_indices, counts. */
int infer_unique(struct infer_ctx *c)
{
	const struct ir_vtype *x = infer_in(c, 0);
	int has_axis = infer_attr(c, "axis") != NULL;
	struct ir_vdim k = infer_dim_unknown(), inv = infer_dim_unknown();
	size_t outer = 1, d = 0, inner = 1, n = 0;
	int64_t axis = 0, ax = -1;
	double *v;
	int rc;

	for (size_t i = 0; i < c->n->n_outputs; i++) {
		c->out[i].dtype = i == 0 && x ? x->dtype : IR_DTYPE_INT64;
		c->out[i].rank = 1;
		c->out[i].dims[0] = infer_dim_unknown();
	}
	if (!x || x->rank < 0)
		return 0;
	if (has_axis) {
		if ((rc = infer_attr_int(c, "axis", &axis)) < 0 ||
		    (rc = infer_norm_axis(c, axis, x->rank, &ax)) < 0)
			return rc;
		c->out[0].rank = x->rank;
		memcpy(c->out[0].dims, x->dims, sizeof(x->dims));
		c->out[0].dims[ax] = k;
		inv = x->dims[ax];
	} else {
		int64_t numel = infer_vt_numel(x);

		if (numel >= 0)
			inv = infer_dim_val(numel);
	}
	if ((v = const_values(x, &n))) {
		if (has_axis) {
			for (int i = 0; i < x->rank; i++)
				if (i < ax)
					outer *= (size_t)x->dims[i].value;
				else if (i > ax)
					inner *= (size_t)x->dims[i].value;
			d = (size_t)x->dims[ax].value;
		} else {
			d = n;
		}
		/* slices of no elements along a dim that may be huge (an
		 * empty constant): not walked, the count stays unknown */
		if ((outer && inner) || !d)
			k = infer_dim_val(count_distinct(v, outer, d, inner));
		free(v);
	}
	if (has_axis)
		c->out[0].dims[ax] = k;
	else
		c->out[0].dims[0] = k;
	if (c->n->n_outputs > 1)
		c->out[1].dims[0] = k;
	if (c->n->n_outputs > 2)
		c->out[2].dims[0] = inv;
	if (c->n->n_outputs > 3)
		c->out[3].dims[0] = k;
	return 0;
}

/* Box i of a batch as (y1, x1, y2, x2) with y1 <= y2, x1 <= x2. */
static void box_corners(const double *b, int center, double *out)
{
	if (center) {
		out[0] = b[1] - b[3] / 2;
		out[1] = b[0] - b[2] / 2;
		out[2] = b[1] + b[3] / 2;
		out[3] = b[0] + b[2] / 2;
	} else {
		out[0] = fmin(b[0], b[2]);
		out[1] = fmin(b[1], b[3]);
		out[2] = fmax(b[0], b[2]);
		out[3] = fmax(b[1], b[3]);
	}
}

static int suppressed(const double *a, const double *b, int center, double thr)
{
	double p[4], q[4], inter, ua, ub, iy, ix;

	box_corners(a, center, p);
	box_corners(b, center, q);
	iy = fmin(p[2], q[2]) - fmax(p[0], q[0]);
	ix = fmin(p[3], q[3]) - fmax(p[1], q[1]);
	if (iy <= 0 || ix <= 0)
		return 0;
	inter = iy * ix;
	ua = (p[2] - p[0]) * (p[3] - p[1]);
	ub = (q[2] - q[0]) * (q[3] - q[1]);
	if (ua <= 0 || ub <= 0 || ua + ub - inter <= 0)
		return 0;
	return inter / (ua + ub - inter) > thr;
}

/* Greedy NMS per batch and class; the number of selected boxes.  state
 * has nbox entries: 0 candidate, 1 selected, 2 suppressed; sel lists the
 * selected boxes of the current class. */
static int64_t nms_count(const double *boxes, const double *scores,
			 size_t nb, size_t nc, size_t nbox, int64_t max_out,
			 double iou, int has_thr, double thr, int center,
			 unsigned char *state, size_t *sel)
{
	int64_t total = 0;

	for (size_t b = 0; b < nb; b++)
		for (size_t k = 0; k < nc; k++) {
			const double *s = scores + (b * nc + k) * nbox;
			const double *bb = boxes + b * nbox * 4;
			size_t n_sel = 0;

			memset(state, 0, nbox);
			while ((int64_t)n_sel < max_out) {
				size_t best = nbox;
				int keep = 1;

				/* highest remaining score, lowest index on ties */
				for (size_t i = 0; i < nbox; i++)
					if (!state[i] && (!has_thr || s[i] > thr) &&
					    (best == nbox || s[i] > s[best]))
						best = i;
				if (best == nbox)
					break;
				for (size_t j = 0; j < n_sel && keep; j++)
					keep = !suppressed(bb + best * 4, bb + sel[j] * 4,
							   center, iou);
				state[best] = keep ? 1 : 2;
				if (keep)
					sel[n_sel++] = best;
			}
			total += (int64_t)n_sel;
		}
	return total;
}

/* NonMaxSuppression: [selected, 3] int64; the count is computed when boxes,
 * scores and the thresholds are constants. */
int infer_nms(struct infer_ctx *c)
{
	const struct ir_vtype *bx = infer_in(c, 0), *sc = infer_in(c, 1);
	struct ir_vtype *o = &c->out[0];
	double *boxes = NULL, *scores = NULL, iou = 0, thr = 0;
	int64_t max_out = 0, center = 0;
	size_t nbv = 0, nsv = 0, n, *sel = NULL;
	unsigned char *state = NULL;
	int has_thr = 0, rc = 0;

	o->dtype = IR_DTYPE_INT64;
	o->rank = 2;
	o->dims[0] = infer_dim_unknown();
	o->dims[1] = infer_dim_val(3);
	if ((rc = infer_attr_int(c, "center_point_box", &center)) < 0)
		return rc;
	if (!bx || !sc || bx->rank != 3 || sc->rank != 3 ||
	    infer_vt_numel(bx) < 0 || infer_vt_numel(sc) < 0)
		return 0;
	if (infer_has_in(c, 2) && !infer_vt_const_int(infer_in(c, 2), 0, &max_out))
		return 0;
	if (infer_has_in(c, 3) && infer_value_floats(c, 3, &iou, 1, &n) != 1)
		return 0;
	if (infer_has_in(c, 4)) {
		if (infer_value_floats(c, 4, &thr, 1, &n) != 1)
			return 0;
		has_thr = 1;
	}
	if (bx->dims[2].value != 4 || bx->dims[0].value != sc->dims[0].value ||
	    bx->dims[1].value != sc->dims[2].value)
		return infer_err(c, "boxes %s and scores do not match",
				 "[batch, boxes, 4]");
	/* no box or no class selects nothing (and an empty constant's other
	 * dims may be huge: no buffers sized by them) */
	if (max_out <= 0 || infer_vt_numel(bx) == 0 || infer_vt_numel(sc) == 0) {
		o->dims[0] = infer_dim_val(0);
		return 0;
	}
	if (!(boxes = const_values(bx, &nbv)) || !(scores = const_values(sc, &nsv)))
		goto cleanup;
	if (!(sel = malloc(((size_t)bx->dims[1].value + 1) * sizeof(*sel))) ||
	    !(state = malloc((size_t)bx->dims[1].value + 1))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	if ((uint64_t)max_out > (uint64_t)bx->dims[1].value)
		max_out = bx->dims[1].value;
	o->dims[0] = infer_dim_val(nms_count(boxes, scores, (size_t)sc->dims[0].value,
					     (size_t)sc->dims[1].value,
					     (size_t)bx->dims[1].value, max_out,
					     iou, has_thr, thr, (int)center, state, sel));
cleanup:
	free(boxes);
	free(scores);
	free(sel);
	free(state);
	return rc;
}
