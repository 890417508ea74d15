/* k_detect.c: kernels of the detection family: NonMaxSuppression (corner
 * and center box formats), RoiAlign (avg/max, half_pixel and
 * output_half_pixel coordinates) and MaxRoiPool. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_int.h"

/* ---- NonMaxSuppression ---------------------------------------------------- */

struct nms_box {
	double y1, x1, y2, x2, area;
};

struct nms_cand {
	double score;
	int64_t index;
};

/* Does a come before b: the higher score first; equal scores, the lower
 * box index first (a NaN score counts as -inf) */
static int cand_before(const struct nms_cand *a, const struct nms_cand *b)
{
	if (a->score != b->score)
		return a->score > b->score;
	return a->index < b->index;
}

/* The heap of candidates h[0..n) (h[0] first) with the subtree at i made
 * one again. */
static void cand_sift(struct nms_cand *h, int64_t n, int64_t i)
{
	struct nms_cand v = h[i];

	for (;;) {
		int64_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && cand_before(&h[c + 1], &h[c]))
			c++;
		if (!cand_before(&h[c], &v))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = v;
}

/* The candidates in order, taken one at a time from a heap: a detector's
 * thousands of candidates are seldom all needed (max_output_boxes_per_class
 * stops the walk; a full sort of 7000 took 0.9 ms a class), and the order
 * is the same total order a sort gives. */
static void cand_heap(struct nms_cand *h, int64_t n)
{
	for (int64_t i = n / 2 - 1; i >= 0; i--)
		cand_sift(h, n, i);
}

static struct nms_cand cand_pop(struct nms_cand *h, int64_t *n)
{
	struct nms_cand top = h[0];

	h[0] = h[--*n];
	if (*n > 1)
		cand_sift(h, *n, 0);
	return top;
}

static double nms_iou(const struct nms_box *a, const struct nms_box *b)
{
	double ih = fmin(a->y2, b->y2) - fmax(a->y1, b->y1);
	double iw = fmin(a->x2, b->x2) - fmax(a->x1, b->x1);
	double inter, uni;

	if (a->area <= 0 || b->area <= 0 || ih <= 0 || iw <= 0)
		return 0;
	inter = ih * iw;
	uni = a->area + b->area - inter;
	return uni > 0 ? inter / uni : 0;
}

/* Box i of boxes (its first coordinate at 4 i) with its area. */
static void load_box(const struct rt_value *boxes, int center, int64_t i, struct nms_box *bx)
{
	double v[4];

	for (int j = 0; j < 4; j++)
		v[j] = boxes->dtype == IR_DTYPE_FLOAT ? ((const float *)boxes->data)[i * 4 + j] :
		       rt_load_f64(boxes->dtype, boxes->data, i * 4 + j);
	if (center) {   /* [x_center, y_center, width, height] */
		bx->x1 = v[0] - v[2] / 2;
		bx->x2 = v[0] + v[2] / 2;
		bx->y1 = v[1] - v[3] / 2;
		bx->y2 = v[1] + v[3] / 2;
	} else {        /* [y1, x1, y2, x2], either diagonal */
		bx->y1 = fmin(v[0], v[2]);
		bx->y2 = fmax(v[0], v[2]);
		bx->x1 = fmin(v[1], v[3]);
		bx->x2 = fmax(v[1], v[3]);
	}
	bx->area = (bx->y2 - bx->y1) * (bx->x2 - bx->x1);
}

static int given(struct rt_kctx *k, size_t i)
{
	struct rt_value *v = rt_in(k, i);

	return v && !(v->kind == RT_TENSOR && v->numel == 0);
}

static int k_nms(struct rt_kctx *k)
{
	int center = (int)rt_attr_int(k, "center_point_box", 0);
	int64_t max_out = 0, nb, nc, ns, n_sel = 0, cap = 0, *sel = NULL, dims[2];
	double iou_thr = 0, score_thr = -INFINITY;
	int has_score_thr = 0;
	struct rt_value *boxes, *scores, *y;
	struct nms_box *bx = NULL;
	struct nms_cand *cand = NULL;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &boxes)) < 0 || (rc = rt_in_tensor(k, 1, &scores)) < 0)
		return rc;
	/* an empty tensor counts as an absent optional input */
	if (given(k, 2) && (rc = rt_in_int(k, 2, &max_out)) < 0)
		return rc;
	if (given(k, 3) && (rc = rt_in_double(k, 3, &iou_thr)) < 0)
		return rc;
	if (given(k, 4)) {
		if ((rc = rt_in_double(k, 4, &score_thr)) < 0)
			return rc;
		has_score_thr = 1;
	}
	if (boxes->rank != 3 || boxes->dims[2] != 4)
		return rt_err(k, "boxes must be [batches, boxes, 4], has rank %d", boxes->rank);
	if (scores->rank != 3 || scores->dims[0] != boxes->dims[0] ||
	    scores->dims[2] != boxes->dims[1])
		return rt_err(k, "scores must be [%lld, classes, %lld]",
			      (long long)boxes->dims[0], (long long)boxes->dims[1]);
	if (center != 0 && center != 1)
		return rt_err(k, "center_point_box must be 0 or 1, is %d", center);
	if (iou_thr < 0 || iou_thr > 1)
		return rt_err(k, "iou_threshold %g outside [0, 1]", iou_thr);
	nb = boxes->dims[0];
	ns = boxes->dims[1];
	nc = scores->dims[1];
	if (max_out < 0)
		max_out = 0;
	bx = malloc((size_t)(ns ? ns : 1) * sizeof(*bx));
	cand = malloc((size_t)(ns ? ns : 1) * sizeof(*cand));
	if (!bx || !cand) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (int64_t b = 0; b < nb && max_out; b++) {
		for (int64_t c = 0; c < nc; c++) {
			int64_t n = 0, n_picked = 0;

			for (int64_t i = 0; i < ns; i++) {
				double s = scores->dtype == IR_DTYPE_FLOAT ?
					   ((const float *)scores->data)[(b * nc + c) * ns + i] :
					   rt_load_f64(scores->dtype, scores->data,
						       (b * nc + c) * ns + i);

				if (has_score_thr && !(s > score_thr))
					continue;
				cand[n].score = isnan(s) ? -INFINITY : s;
				cand[n++].index = i;
			}
			cand_heap(cand, n);
			while (n > 0 && n_picked < max_out) {
				struct nms_cand ci = cand_pop(cand, &n);
				int keep = 1;

				/* (its box read now: most candidates are never
				 * reached) */
				load_box(boxes, center, b * ns + ci.index, &bx[n_picked]);
				for (int64_t j = 0; j < n_picked && keep; j++)
					if (nms_iou(&bx[n_picked], &bx[j]) > iou_thr)
						keep = 0;
				if (!keep)
					continue;
				n_picked++;
				if (n_sel == cap) {
					int64_t *p;

					cap = cap ? 2 * cap : 64;
					if (!(p = realloc(sel, (size_t)cap * 3 * sizeof(*p)))) {
						rc = rt_oom(k);
						goto cleanup;
					}
					sel = p;
				}
				sel[3 * n_sel] = b;
				sel[3 * n_sel + 1] = c;
				sel[3 * n_sel + 2] = ci.index;
				n_sel++;
			}
		}
	}
	dims[0] = n_sel;
	dims[1] = 3;
	if (!(y = rt_out_tensor(k, 0, IR_DTYPE_INT64, 2, dims))) {
		rc = IR_ENOMEM;
		goto cleanup;
	}
	if (n_sel)
		memcpy(y->data, sel, (size_t)n_sel * 3 * sizeof(int64_t));
	rc = 0;
cleanup:
	free(bx);
	free(cand);
	free(sel);
	return rc;
}

/* ---- RoiAlign ------------------------------------------------------------- */

/* Bilinear sample of plane p (h x w) at (y, x), as the reference: zero
 * outside [-1, h] x [-1, w], clamped to the edge inside.  The four corner
 * terms go to t[] (max mode takes their maximum, as onnxruntime does). */
static void roi_bilinear(const struct rt_value *x, int64_t base, int64_t h,
			 int64_t w, double y, double xx, double t[4])
{
	int64_t y0, x0, y1, x1;
	double ly, lx;

	if (y < -1.0 || y > (double)h || xx < -1.0 || xx > (double)w) {
		t[0] = t[1] = t[2] = t[3] = 0;
		return;
	}
	if (y <= 0)
		y = 0;
	if (xx <= 0)
		xx = 0;
	y0 = (int64_t)y;
	x0 = (int64_t)xx;
	if (y0 >= h - 1) {
		y0 = y1 = h - 1;
		y = (double)y0;
	} else {
		y1 = y0 + 1;
	}
	if (x0 >= w - 1) {
		x0 = x1 = w - 1;
		xx = (double)x0;
	} else {
		x1 = x0 + 1;
	}
	ly = y - (double)y0;
	lx = xx - (double)x0;
	t[0] = (1 - ly) * (1 - lx) * rt_load_f64(x->dtype, x->data, base + y0 * w + x0);
	t[1] = (1 - ly) * lx * rt_load_f64(x->dtype, x->data, base + y0 * w + x1);
	t[2] = ly * (1 - lx) * rt_load_f64(x->dtype, x->data, base + y1 * w + x0);
	t[3] = ly * lx * rt_load_f64(x->dtype, x->data, base + y1 * w + x1);
}

static int k_roi_align(struct rt_kctx *k)
{
	const char *mode = rt_attr_str(k, "mode", "avg");
	const char *ctm = rt_attr_str(k, "coordinate_transformation_mode",
				      k->version >= 16 ? "half_pixel" : "output_half_pixel");
	int64_t oh = rt_attr_int(k, "output_height", 1), ow = rt_attr_int(k, "output_width", 1);
	int64_t ratio = rt_attr_int(k, "sampling_ratio", 0), nr, nch, h, w, dims[4];
	double scale = rt_attr_float(k, "spatial_scale", 1.0f), off;
	struct rt_value *x, *rois, *bi, *y;
	int is_max, half, rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &rois)) < 0 ||
	    (rc = rt_in_tensor(k, 2, &bi)) < 0)
		return rc;
	if (!strcmp(mode, "avg"))
		is_max = 0;
	else if (!strcmp(mode, "max"))
		is_max = 1;
	else
		return rt_err(k, "unknown mode '%s'", mode);
	if (!strcmp(ctm, "half_pixel"))
		half = 1;
	else if (!strcmp(ctm, "output_half_pixel"))
		half = 0;
	else
		return rt_err(k, "unknown coordinate_transformation_mode '%s'", ctm);
	if (x->rank != 4)
		return rt_err(k, "X must be [N, C, H, W], has rank %d", x->rank);
	if (rois->rank != 2 || rois->dims[1] != 4)
		return rt_err(k, "rois must be [num_rois, 4], has rank %d", rois->rank);
	nr = rois->dims[0];
	if (bi->numel != nr)
		return rt_err(k, "batch_indices has %lld elements for %lld rois",
			      (long long)bi->numel, (long long)nr);
	if (oh < 1 || ow < 1 || ratio < 0)
		return rt_err(k, "output size %lldx%lld or sampling_ratio %lld invalid",
			      (long long)oh, (long long)ow, (long long)ratio);
	nch = x->dims[1];
	h = x->dims[2];
	w = x->dims[3];
	dims[0] = nr;
	dims[1] = nch;
	dims[2] = oh;
	dims[3] = ow;
	if (!(y = rt_out_tensor(k, 0, x->dtype, 4, dims)))
		return IR_ENOMEM;
	off = half ? 0.5 : 0;
	for (int64_t r = 0; r < nr; r++) {
		int64_t b = rt_load_i64(bi->dtype, bi->data, r), gh, gw;
		double x1 = rt_load_f64(rois->dtype, rois->data, r * 4) * scale - off;
		double y1 = rt_load_f64(rois->dtype, rois->data, r * 4 + 1) * scale - off;
		double x2 = rt_load_f64(rois->dtype, rois->data, r * 4 + 2) * scale - off;
		double y2 = rt_load_f64(rois->dtype, rois->data, r * 4 + 3) * scale - off;
		double rw = x2 - x1, rh = y2 - y1, bh, bw, count;

		if (b < 0 || b >= x->dims[0])
			return rt_err(k, "batch index %lld of roi %lld out of range",
				      (long long)b, (long long)r);
		if (!half) {
			rw = fmax(rw, 1);
			rh = fmax(rh, 1);
		}
		bh = rh / (double)oh;
		bw = rw / (double)ow;
		gh = ratio > 0 ? ratio : (int64_t)ceil(rh / (double)oh);
		gw = ratio > 0 ? ratio : (int64_t)ceil(rw / (double)ow);
		count = (double)(gh * gw > 1 ? gh * gw : 1);
		for (int64_t c = 0; c < nch; c++) {
			int64_t base = (b * nch + c) * h * w;

			for (int64_t py = 0; py < oh; py++)
				for (int64_t px = 0; px < ow; px++) {
					double acc = 0, t[4];
					int first = 1;

					for (int64_t iy = 0; iy < gh; iy++) {
						double sy = y1 + (double)py * bh +
							    ((double)iy + 0.5) * bh / (double)gh;

						for (int64_t ix = 0; ix < gw; ix++) {
							double sx = x1 + (double)px * bw +
								    ((double)ix + 0.5) * bw / (double)gw;

							roi_bilinear(x, base, h, w, sy, sx, t);
							if (is_max) {
								double m = fmax(fmax(t[0], t[1]), fmax(t[2], t[3]));

								acc = first ? m : fmax(acc, m);
								first = 0;
							} else {
								acc += t[0] + t[1] + t[2] + t[3];
							}
						}
					}
					rt_store_f64(y->dtype, y->data,
						     ((r * nch + c) * oh + py) * ow + px,
						     is_max ? acc : acc / count);
				}
		}
	}
	return 0;
}

/* ---- MaxRoiPool ------------------------------------------------------------ */

static int k_max_roi_pool(struct rt_kctx *k)
{
	size_t n_ps;
	const int64_t *ps = rt_attr_ints(k, "pooled_shape", &n_ps);
	double scale = rt_attr_float(k, "spatial_scale", 1.0f);
	struct rt_value *x, *rois, *y;
	int64_t nr, nch, h, w, dims[4];
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &rois)) < 0)
		return rc;
	if (!ps || n_ps != 2 || ps[0] < 1 || ps[1] < 1)
		return rt_err(k, "attribute 'pooled_shape' must be two positive ints");
	if (x->rank != 4)
		return rt_err(k, "X must be [N, C, H, W], has rank %d", x->rank);
	if (rois->rank != 2 || rois->dims[1] != 5)
		return rt_err(k, "rois must be [num_rois, 5], has rank %d", rois->rank);
	nr = rois->dims[0];
	nch = x->dims[1];
	h = x->dims[2];
	w = x->dims[3];
	dims[0] = nr;
	dims[1] = nch;
	dims[2] = ps[0];
	dims[3] = ps[1];
	if (!(y = rt_out_tensor(k, 0, x->dtype, 4, dims)))
		return IR_ENOMEM;
	for (int64_t r = 0; r < nr; r++) {
		double v[5];
		int64_t b, sx, sy, ex, ey, rw, rh;
		double bh, bw;

		for (int j = 0; j < 5; j++)
			v[j] = rt_load_f64(rois->dtype, rois->data, r * 5 + j);
		b = (int64_t)v[0];
		if (b < 0 || b >= x->dims[0])
			return rt_err(k, "batch index %lld of roi %lld out of range",
				      (long long)b, (long long)r);
		sx = (int64_t)round(v[1] * scale);
		sy = (int64_t)round(v[2] * scale);
		ex = (int64_t)round(v[3] * scale);
		ey = (int64_t)round(v[4] * scale);
		rw = ex - sx + 1 > 1 ? ex - sx + 1 : 1;
		rh = ey - sy + 1 > 1 ? ey - sy + 1 : 1;
		bh = (double)rh / (double)ps[0];
		bw = (double)rw / (double)ps[1];
		for (int64_t c = 0; c < nch; c++)
			for (int64_t py = 0; py < ps[0]; py++)
				for (int64_t px = 0; px < ps[1]; px++) {
					int64_t hs = (int64_t)floor((double)py * bh) + sy;
					int64_t he = (int64_t)ceil((double)(py + 1) * bh) + sy;
					int64_t ws = (int64_t)floor((double)px * bw) + sx;
					int64_t we = (int64_t)ceil((double)(px + 1) * bw) + sx;
					double m = 0;
					int any = 0;

					hs = hs < 0 ? 0 : hs > h ? h : hs;
					he = he < 0 ? 0 : he > h ? h : he;
					ws = ws < 0 ? 0 : ws > w ? w : ws;
					we = we < 0 ? 0 : we > w ? w : we;
					for (int64_t i = hs; i < he; i++)
						for (int64_t j = ws; j < we; j++) {
							double e = rt_load_f64(x->dtype, x->data,
									       ((b * nch + c) * h + i) * w + j);

							if (!any || e > m)
								m = e;
							any = 1;
						}
					rt_store_f64(y->dtype, y->data,
						     ((r * nch + c) * ps[0] + py) * ps[1] + px, any ? m : 0);
				}
	}
	return 0;
}

const struct rt_kernel rt_kernels_detect[] = {
	{ "ai.onnx", "MaxRoiPool", 1, RT_OPEN, k_max_roi_pool },
	{ "ai.onnx", "NonMaxSuppression", 10, RT_OPEN, k_nms },
	{ "ai.onnx", "RoiAlign", 10, RT_OPEN, k_roi_align },
};
const size_t rt_n_kernels_detect = sizeof(rt_kernels_detect) / sizeof(rt_kernels_detect[0]);
