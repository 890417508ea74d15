/* k_conv.c: kernels of the conv family: Conv, ConvTranspose, DeformConv,
 * Col2Im and CausalConvWithState.  float32 runs on the float cores of
 * k_conv_core.c; every other dtype is converted to double and back. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/gemm.h"
#include "runtime/kernels/k_conv_int.h"

/* X, W and (when present) B of one float dtype; B 1-D of want elements. */
static int check_xwb(struct rt_kctx *k, struct rt_value *x, struct rt_value *w,
		     struct rt_value *b, int64_t want)
{
	if (!rt_dtype_is_float(x->dtype))
		return rt_err(k, "input X has a non-float dtype %d", x->dtype);
	if (w->dtype != x->dtype || (b && b->dtype != x->dtype))
		return rt_err(k, "inputs X, W and B differ in dtype");
	if (b && (b->rank != 1 || b->dims[0] != want))
		return rt_err(k, "bias B must be 1-D of %lld elements",
			      (long long)want);
	return 0;
}

int knn_conv_run_f32(struct rt_kctx *k, const struct knn_geom *g, const float *x,
		     const float *w, const float *b, float *y)
{
	int rc;

	if ((rc = knn_conv_dnnl_f32(k, g, x, w, b, y, 0)) != 0)
		return rc < 0 ? rc : 0;
	if ((rc = knn_conv_dw_f32(k, g, x, w, b, y)) != 0)
		return rc < 0 ? rc : 0;
	if ((rc = knn_conv_cl_f32(k, g, x, w, b, y)) != 0)
		return rc < 0 ? rc : 0;
	if ((rc = knn_conv_direct_f32(k, g, x, w, b, y)) != 0)
		return rc < 0 ? rc : 0;
	if ((rc = knn_conv_pg_f32(k, g, x, w, b, y)) != 0)
		return rc < 0 ? rc : 0;
	return knn_conv_f32(k, g, x, w, b, y);
}

/* Run the float or the double core of a (transposed) convolution. */
static int run_core(struct rt_kctx *k, const struct knn_geom *g,
		    struct rt_value *x, struct rt_value *w, struct rt_value *b,
		    struct rt_value *y, int transposed)
{
	double *xd = NULL, *wd = NULL, *bd = NULL, *yd = NULL;
	int rc = IR_ENOMEM;

	if (x->dtype == IR_DTYPE_FLOAT)
		return transposed ?
		       knn_convt_f32(k, g, x->data, w->data, b ? b->data : NULL, y->data) :
		       knn_conv_run_f32(k, g, x->data, w->data, b ? b->data : NULL, y->data);
	if (!(xd = knn_load_f64(k, x)) || !(wd = knn_load_f64(k, w)) ||
	    (b && !(bd = knn_load_f64(k, b))))
		goto cleanup;
	if (!(yd = malloc((size_t)(y->numel ? y->numel : 1) * sizeof(double)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	rc = transposed ? knn_convt_f64(k, g, xd, wd, bd, yd) :
	     knn_conv_f64(k, g, xd, wd, bd, yd);
	if (rc == 0)
		knn_store_f64(y, yd);
cleanup:
	free(xd);
	free(wd);
	free(bd);
	free(yd);
	return rc;
}

static int k_conv(struct rt_kctx *k)
{
	struct rt_value *x, *w, *b = rt_in(k, 2), *y;
	struct knn_geom g;
	int64_t dims[RT_MAX_RANK];
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &w)) < 0 ||
	    (rc = knn_geom_conv(k, x, w, &g)) < 0 ||
	    (rc = check_xwb(k, x, w, b, g.m)) < 0)
		return rc;
	dims[0] = g.n;
	dims[1] = g.m;
	memcpy(dims + 2, g.out, (size_t)g.nsp * sizeof(int64_t));
	if (!(y = rt_out_tensor(k, 0, x->dtype, x->rank, dims)))
		return IR_ENOMEM;
	/* channels last in or out (layout_cl.c): oneDNN's float32 path */
	if (x->dtype == IR_DTYPE_FLOAT && ((x->flags & RT_VALUE_CL) || rt_cl_may_write(k))) {
		unsigned cl = ((x->flags & RT_VALUE_CL) ? KNN_CL_SRC : 0) |
			      (rt_cl_may_write(k) ? KNN_CL_DST : 0);

		if (cl == KNN_CL_SRC &&
		    knn_conv_cl1_f32(k, &g, x->data, w->data, b ? b->data : NULL, y->data))
			return 0;
		/* depthwise windows of 3x3 and more, stride 1: channels in
		 * the lanes where they lie (k_conv_dwc.c) */
		if ((rc = knn_conv_dw_cl_f32(k, &g, x->data, w->data, b ? b->data : NULL, y->data,
					      cl)) != 0)
			return rc < 0 ? rc : 0;
		if ((rc = knn_conv_dnnl_f32(k, &g, x->data, w->data, b ? b->data : NULL, y->data,
					    cl)) != 0)
			return rc < 0 ? rc : 0;
	}
	if ((rc = rt_cl_plain_in(k, 0)) < 0)
		return rc;
	return run_core(k, &g, k->in[0], w, b, y, 0);
}

static int64_t floor_div2(int64_t v)
{
	return v >= 0 ? v / 2 : -((-v + 1) / 2);
}

/* ConvTranspose's output size and pads per spatial dim into g (as the
 * forward convolution from y to x). */
static int convt_geom(struct rt_kctx *k, struct rt_value *x, struct rt_value *w,
		      struct knn_geom *g)
{
	const char *ap = rt_attr_str(k, "auto_pad", "NOTSET");
	int64_t group = rt_attr_int(k, "group", 1);
	const int64_t *v;
	size_t n;
	int nsp = x->rank - 2;

	if (x->rank < 3 || w->rank != x->rank)
		return rt_err(k, "X rank %d and W rank %d: expected equal ranks of 3 or more",
			      x->rank, w->rank);
	if (group < 1 || x->dims[1] % group || w->dims[0] != x->dims[1])
		return rt_err(k, "channel mismatch: X has %lld channels, W %lld, group %lld",
			      (long long)x->dims[1], (long long)w->dims[0],
			      (long long)group);
	memset(g, 0, sizeof(*g));
	g->nsp = nsp;
	g->n = x->dims[0];
	g->c = x->dims[1];
	g->m = w->dims[1] * group;
	g->group = group;
	for (int d = 0; d < nsp; d++) {
		g->kernel[d] = w->dims[2 + d];
		g->out[d] = x->dims[2 + d];
		g->stride[d] = g->dil[d] = 1;
	}
	if ((v = rt_attr_ints(k, "kernel_shape", &n)))
		for (int d = 0; d < nsp && d < (int)n; d++)
			if (v[d] != g->kernel[d])
				return rt_err(k, "kernel_shape[%d] = %lld but W has %lld",
					      d, (long long)v[d], (long long)g->kernel[d]);
	if ((v = rt_attr_ints(k, "strides", &n)) && (int)n == nsp)
		memcpy(g->stride, v, n * sizeof(*v));
	if ((v = rt_attr_ints(k, "dilations", &n)) && (int)n == nsp)
		memcpy(g->dil, v, n * sizeof(*v));
	if ((v = rt_attr_ints(k, "pads", &n)) && (int)n == 2 * nsp && strcmp(ap, "VALID"))
		memcpy(g->pad, v, n * sizeof(*v));
	for (int d = 0; d < nsp; d++)
		if (g->stride[d] < 1 || g->dil[d] < 1)
			return rt_err(k, "strides and dilations must be positive");
	{
		const int64_t *op = rt_attr_ints(k, "output_padding", &n);
		size_t nos;
		const int64_t *os = rt_attr_ints(k, "output_shape", &nos);
		int same = !strncmp(ap, "SAME_", 5);

		if (op && (int)n != nsp)
			return rt_err(k, "attribute 'output_padding' has %zu values, expected %d",
				      n, nsp);
		if (os && (int)nos != nsp && (int)nos != nsp + 2)
			return rt_err(k, "attribute 'output_shape' has %zu values, expected %d",
				      nos, nsp);
		if (os && (int)nos == nsp + 2)
			os += 2;
		for (int d = 0; d < nsp; d++) {
			int64_t full = g->stride[d] * (g->out[d] - 1) + (op ? op[d] : 0) +
				       (g->kernel[d] - 1) * g->dil[d] + 1;

			if (os || same) {
				int64_t o = os ? os[d] : g->out[d] * g->stride[d];
				int64_t t = full - o;

				/* SAME never pads negatively (as onnxruntime):
				 * a window narrower than the stride gives less
				 * than in * stride; an explicit output_shape
				 * extends the output instead */
				if (!os && t < 0) {
					t = 0;
					o = full;
				}

				if (!strcmp(ap, "SAME_UPPER")) {
					g->pad[d] = floor_div2(t);
					g->pad[nsp + d] = t - floor_div2(t);
				} else {
					g->pad[d] = t - floor_div2(t);
					g->pad[nsp + d] = floor_div2(t);
				}
				g->in[d] = o;
			} else {
				g->in[d] = full - g->pad[d] - g->pad[nsp + d];
			}
			if (g->in[d] < 0)
				return rt_err(k, "spatial dim %d: output size %lld is negative",
					      d, (long long)g->in[d]);
		}
	}
	knn_geom_sizes(g);
	return 0;
}

static int k_conv_transpose(struct rt_kctx *k)
{
	struct rt_value *x, *w, *b = rt_in(k, 2), *y;
	struct knn_geom g;
	int64_t dims[RT_MAX_RANK];
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &w)) < 0 ||
	    (rc = convt_geom(k, x, w, &g)) < 0 ||
	    (rc = check_xwb(k, x, w, b, g.m)) < 0)
		return rc;
	dims[0] = g.n;
	dims[1] = g.m;
	memcpy(dims + 2, g.in, (size_t)g.nsp * sizeof(int64_t));
	if (!(y = rt_out_tensor(k, 0, x->dtype, x->rank, dims)))
		return IR_ENOMEM;
	if (y->numel == 0)
		return 0;
	return run_core(k, &g, x, w, b, y, 1);
}

/* x (h, w) sampled at real (py, px) by bilinear interpolation; corners
 * outside the image count as 0. */
static double bilinear(const double *x, int64_t h, int64_t w, double py,
		       double px)
{
	double y0 = floor(py), x0 = floor(px), fy = py - y0, fx = px - x0, s = 0;
	int64_t iy = (int64_t)y0, ix = (int64_t)x0;

	if (py <= -1 || py >= (double)h || px <= -1 || px >= (double)w)
		return 0;
	for (int dy = 0; dy < 2; dy++)
		for (int dx = 0; dx < 2; dx++) {
			int64_t yy = iy + dy, xx = ix + dx;
			double c = (dy ? fy : 1 - fy) * (dx ? fx : 1 - fx);

			if (yy >= 0 && yy < h && xx >= 0 && xx < w && c != 0)
				s += c * x[yy * w + xx];
		}
	return s;
}

static int k_deform_conv(struct rt_kctx *k)
{
	struct rt_value *x, *w, *off, *b = rt_in(k, 3), *mask = rt_in(k, 4), *y;
	struct knn_geom g;
	int64_t dims[4], og = rt_attr_int(k, "offset_group", 1), kk, oh, ow;
	double *xd = NULL, *wd = NULL, *od = NULL, *bd = NULL, *md = NULL;
	double *col = NULL, *yd = NULL;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &w)) < 0 ||
	    (rc = rt_in_tensor(k, 2, &off)) < 0)
		return rc;
	if (x->rank != 4)
		return rt_err(k, "only 2-D DeformConv is supported, X has rank %d",
			      x->rank);
	if ((rc = knn_geom_conv(k, x, w, &g)) < 0 ||
	    (rc = check_xwb(k, x, w, b, g.m)) < 0)
		return rc;
	kk = g.k_size;
	oh = g.out[0];
	ow = g.out[1];
	if (og < 1 || g.c % og)
		return rt_err(k, "offset_group %lld does not divide %lld channels",
			      (long long)og, (long long)g.c);
	if (off->rank != 4 || off->dims[0] != g.n || off->dims[1] != og * 2 * kk ||
	    off->dims[2] != oh || off->dims[3] != ow)
		return rt_err(k, "offset must have shape [%lld,%lld,%lld,%lld]",
			      (long long)g.n, (long long)(og * 2 * kk),
			      (long long)oh, (long long)ow);
	if (mask && (mask->rank != 4 || mask->dims[0] != g.n ||
		     mask->dims[1] != og * kk || mask->dims[2] != oh ||
		     mask->dims[3] != ow))
		return rt_err(k, "mask must have shape [%lld,%lld,%lld,%lld]",
			      (long long)g.n, (long long)(og * kk), (long long)oh,
			      (long long)ow);
	dims[0] = g.n;
	dims[1] = g.m;
	dims[2] = oh;
	dims[3] = ow;
	if (!(y = rt_out_tensor(k, 0, x->dtype, 4, dims)))
		return IR_ENOMEM;
	rc = IR_ENOMEM;
	if (!(xd = knn_load_f64(k, x)) || !(wd = knn_load_f64(k, w)) ||
	    !(od = knn_load_f64(k, off)) || (b && !(bd = knn_load_f64(k, b))) ||
	    (mask && !(md = knn_load_f64(k, mask))))
		goto cleanup;
	{
		int64_t cg = g.c / g.group, mg = g.m / g.group, cpo = g.c / og;
		int64_t osz = oh * ow, h = g.in[0], iw = g.in[1];

		col = malloc((size_t)(cg * kk * osz + 1) * sizeof(double));
		yd = malloc((size_t)(y->numel + 1) * sizeof(double));
		if (!col || !yd) {
			rc = rt_oom(k);
			goto cleanup;
		}
		for (int64_t n = 0; n < g.n; n++)
			for (int64_t gi = 0; gi < g.group; gi++) {
				double *yg = yd + (n * g.m + gi * mg) * osz;

				for (int64_t ci = 0; ci < cg; ci++) {
					int64_t c = gi * cg + ci, o = c / cpo;
					const double *xc = xd + (n * g.c + c) * h * iw;

					for (int64_t t = 0; t < kk; t++) {
						int64_t kh = t / g.kernel[1], kw = t % g.kernel[1];
						const double *dy = od + ((n * og + o) * 2 * kk + 2 * t) * osz;
						const double *dx = dy + osz;
						const double *mk = md ? md + ((n * og + o) * kk + t) * osz : NULL;
						double *cr = col + (ci * kk + t) * osz;

						for (int64_t i = 0; i < oh; i++)
							for (int64_t j = 0; j < ow; j++) {
								int64_t p = i * ow + j;
								double py = (double)(i * g.stride[0] - g.pad[0] + kh * g.dil[0]) + dy[p];
								double px = (double)(j * g.stride[1] - g.pad[1] + kw * g.dil[1]) + dx[p];
								double v = bilinear(xc, h, iw, py, px);

								cr[p] = mk ? v * mk[p] : v;
							}
					}
				}
				rt_gemm_f64_par(k, 0, 0, mg, osz, cg * kk, 1,
						wd + gi * mg * cg * kk, cg * kk, col, osz,
						0, yg, osz);
				if (bd)
					for (int64_t m = 0; m < mg; m++)
						for (int64_t p = 0; p < osz; p++)
							yg[m * osz + p] += bd[gi * mg + m];
			}
		knn_store_f64(y, yd);
		rc = 0;
	}
cleanup:
	free(xd);
	free(wd);
	free(od);
	free(bd);
	free(md);
	free(col);
	free(yd);
	return rc;
}

static int k_col2im(struct rt_kctx *k)
{
	struct rt_value *x, *y;
	int64_t *img = NULL, *blk = NULL, dims[RT_MAX_RANK];
	size_t n_img, n_blk;
	struct knn_geom g;
	double *xd = NULL, *yd = NULL;
	int rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 ||
	    (rc = rt_in_ints(k, 1, &img, &n_img)) < 0 ||
	    (rc = rt_in_ints(k, 2, &blk, &n_blk)) < 0)
		goto cleanup;
	if (x->dtype == IR_DTYPE_STRING || x->dtype == IR_DTYPE_COMPLEX64 ||
	    x->dtype == IR_DTYPE_COMPLEX128) {
		rc = rt_err(k, "dtype %d is not supported (numeric tensors only)",
			    x->dtype);
		goto cleanup;
	}
	if (x->rank != 3 || n_img != n_blk || n_img < 1 ||
	    n_img > KNN_MAX_SP) {
		rc = rt_err(k, "input must be (N, C*prod(block_shape), L) with image_shape and block_shape of equal length");
		goto cleanup;
	}
	{
		/* geometry from a fake (N, C, image...) input */
		struct rt_value fake = { 0 };
		int64_t bprod = 1;

		for (size_t i = 0; i < n_blk; i++) {
			if (blk[i] < 1 || img[i] < 0) {
				rc = rt_err(k, "block_shape and image_shape must be positive");
				goto cleanup;
			}
			bprod *= blk[i];
		}
		if (x->dims[1] % bprod) {
			rc = rt_err(k, "dim 1 (%lld) is not a multiple of prod(block_shape) %lld",
				    (long long)x->dims[1], (long long)bprod);
			goto cleanup;
		}
		fake.rank = (int)n_img + 2;
		fake.dims[0] = x->dims[0];
		fake.dims[1] = x->dims[1] / bprod;
		memcpy(fake.dims + 2, img, n_img * sizeof(int64_t));
		if ((rc = knn_geom_init(k, &fake, blk, 0, &g)) < 0)
			goto cleanup;
		if (g.out_size != x->dims[2]) {
			rc = rt_err(k, "input has %lld blocks, the geometry gives %lld",
				    (long long)x->dims[2], (long long)g.out_size);
			goto cleanup;
		}
		memcpy(dims, fake.dims, (size_t)fake.rank * sizeof(int64_t));
		if (!(y = rt_out_tensor(k, 0, x->dtype, fake.rank, dims))) {
			rc = IR_ENOMEM;
			goto cleanup;
		}
	}
	rc = IR_ENOMEM;
	if (!(xd = knn_load_f64(k, x)) ||
	    !(yd = calloc((size_t)(y->numel + 1), sizeof(double)))) {
		if (xd)
			rt_oom(k);
		goto cleanup;
	}
	for (int64_t n = 0; n < g.n; n++)
		knn_col2im_f64(&g, xd + n * x->dims[1] * x->dims[2], g.c,
			       yd + n * g.c * g.in_size);
	knn_store_f64(y, yd);
	rc = 0;
cleanup:
	free(img);
	free(blk);
	free(xd);
	free(yd);
	return rc;
}

static int k_causal_conv_with_state(struct rt_kctx *k)
{
	struct rt_value *x, *w, *b = rt_in(k, 2), *past = rt_in(k, 3), *y, *st;
	const char *act = rt_attr_str(k, "activation", "none");
	int64_t nb, c, l, kw, sdims[3];
	double *xd = NULL, *wd = NULL, *bd = NULL, *pd = NULL, *yd = NULL;
	double *sd = NULL, *seq = NULL;
	int rc, silu;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_tensor(k, 1, &w)) < 0)
		return rc;
	silu = !strcmp(act, "silu") || !strcmp(act, "swish");
	if (!silu && strcmp(act, "none"))
		return rt_err(k, "unsupported activation '%s'", act);
	if (x->rank != 3 || w->rank != 3 || w->dims[0] != x->dims[1] ||
	    w->dims[1] != 1 || w->dims[2] < 1)
		return rt_err(k, "input must be (B, C, L) and weight (C, 1, K)");
	if ((rc = check_xwb(k, x, w, b, x->dims[1])) < 0)
		return rc;
	nb = x->dims[0];
	c = x->dims[1];
	l = x->dims[2];
	kw = w->dims[2];
	sdims[0] = nb;
	sdims[1] = c;
	sdims[2] = kw - 1;
	if (past && (past->rank != 3 || past->dtype != x->dtype ||
		     memcmp(past->dims, sdims, sizeof(sdims))))
		return rt_err(k, "past_state must be (B, C, K-1) of the input's dtype");
	if (!(y = rt_out_tensor(k, 0, x->dtype, 3, x->dims)) ||
	    !(st = rt_out_tensor(k, 1, x->dtype, 3, sdims)))
		return IR_ENOMEM;
	rc = IR_ENOMEM;
	if (!(xd = knn_load_f64(k, x)) || !(wd = knn_load_f64(k, w)) ||
	    (b && !(bd = knn_load_f64(k, b))) || (past && !(pd = knn_load_f64(k, past))))
		goto cleanup;
	yd = malloc((size_t)(y->numel + 1) * sizeof(double));
	sd = malloc((size_t)(st->numel + 1) * sizeof(double));
	seq = malloc((size_t)(kw - 1 + l) * sizeof(double));
	if (!yd || !sd || !seq) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (int64_t i = 0; i < nb * c; i++) {
		const double *wc = wd + (i % c) * kw;
		double *yc = yd + i * l;

		for (int64_t t = 0; t < kw - 1; t++)
			seq[t] = pd ? pd[i * (kw - 1) + t] : 0;
		memcpy(seq + kw - 1, xd + i * l, (size_t)l * sizeof(double));
		for (int64_t t = 0; t < l; t++) {
			double v = bd ? bd[i % c] : 0;

			for (int64_t j = 0; j < kw; j++)
				v += wc[j] * seq[t + j];
			yc[t] = silu ? v / (1 + exp(-v)) : v;
		}
		memcpy(sd + i * (kw - 1), seq + l, (size_t)(kw - 1) * sizeof(double));
	}
	knn_store_f64(y, yd);
	knn_store_f64(st, sd);
	rc = 0;
cleanup:
	free(xd);
	free(wd);
	free(bd);
	free(pd);
	free(yd);
	free(sd);
	free(seq);
	return rc;
}

const struct rt_kernel rt_kernels_conv[] = {
	{ "ai.onnx", "CausalConvWithState", 27, RT_OPEN, k_causal_conv_with_state },
	{ "ai.onnx", "Col2Im", 18, RT_OPEN, k_col2im },
	{ "ai.onnx", "Conv", 1, RT_OPEN, k_conv },
	{ "ai.onnx", "ConvTranspose", 1, RT_OPEN, k_conv_transpose },
	{ "ai.onnx", "DeformConv", 19, RT_OPEN, k_deform_conv },
};
const size_t rt_n_kernels_conv = sizeof(rt_kernels_conv) / sizeof(rt_kernels_conv[0]);
