/* k_conv_geom.c: sliding-window geometry shared by Conv, ConvTranspose,
 * the pools and the quantized convolutions (attributes, auto_pad, output
 * sizes, ceil_mode), and whole-tensor double conversion. */
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_conv_int.h"

static int64_t knn_floor_div(int64_t a, int64_t b)
{
	return a >= 0 ? a / b : -((-a + b - 1) / b);
}

void knn_geom_sizes(struct knn_geom *g)
{
	g->in_size = g->out_size = g->k_size = 1;
	for (int d = 0; d < g->nsp; d++) {
		g->in_size *= g->in[d];
		g->out_size *= g->out[d];
		g->k_size *= g->kernel[d];
	}
}

/* A list attribute of nsp (or 2 * nsp for pads) values >= lo, or fill. */
static int list_attr(struct rt_kctx *k, const char *name, int want,
		     int64_t fill, int64_t lo, int64_t *dst)
{
	size_t n;
	const int64_t *v = rt_attr_ints(k, name, &n);

	if (!v) {
		for (int i = 0; i < want; i++)
			dst[i] = fill;
		return 0;
	}
	if ((int)n != want)
		return rt_err(k, "attribute '%s' has %zu values, expected %d", name,
			      n, want);
	for (int i = 0; i < want; i++) {
		if (v[i] < lo)
			return rt_err(k, "attribute '%s' value %lld is below %lld",
				      name, (long long)v[i], (long long)lo);
		dst[i] = v[i];
	}
	return 0;
}

int knn_geom_init(struct rt_kctx *k, const struct rt_value *x,
		  const int64_t *kernel, int flags, struct knn_geom *g)
{
	const char *ap = rt_attr_str(k, "auto_pad", "NOTSET");
	int nsp, rc, ceil_mode = flags & KNN_CEIL;

	if (x->rank < 3)
		return rt_err(k, "input has rank %d, expected (N, C, spatial...) of rank 3 or more",
			      x->rank);
	nsp = x->rank - 2;
	g->nsp = nsp;
	g->n = x->dims[0];
	g->c = g->m = x->dims[1];
	g->group = 1;
	for (int d = 0; d < nsp; d++)
		g->in[d] = x->dims[2 + d];
	if (kernel) {
		memcpy(g->kernel, kernel, (size_t)nsp * sizeof(*kernel));
	} else {
		if (!rt_attr(k, "kernel_shape"))
			return rt_err(k, "attribute 'kernel_shape' is missing");
		if ((rc = list_attr(k, "kernel_shape", nsp, 1, 1, g->kernel)) < 0)
			return rc;
	}
	if ((rc = list_attr(k, "strides", nsp, 1, 1, g->stride)) < 0 ||
	    (rc = list_attr(k, "dilations", nsp, 1, 1, g->dil)) < 0 ||
	    (rc = list_attr(k, "pads", 2 * nsp, 0, 0, g->pad)) < 0)
		return rc;
	if (!*ap)
		ap = "NOTSET";
	for (int d = 0; d < nsp; d++) {
		int64_t ek = g->dil[d] * (g->kernel[d] - 1) + 1, s = g->stride[d];
		int64_t in = g->in[d], out;

		if (!strcmp(ap, "NOTSET")) {
			int64_t num = in + g->pad[d] + g->pad[nsp + d] - ek;

			/* floor or ceil of num / s, num may be negative */
			out = ceil_mode ? -knn_floor_div(-num, s) + 1 :
			      knn_floor_div(num, s) + 1;
			if (out < 0)
				out = 0;
			if (ceil_mode && out > 0 && (out - 1) * s >= in + g->pad[d])
				out--;
		} else if (!strcmp(ap, "VALID")) {
			g->pad[d] = g->pad[nsp + d] = 0;
			out = in < ek ? 0 : (in - ek) / s + 1;
		} else if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
			int64_t total;

			out = (in + s - 1) / s;
			total = (out - 1) * s + ek - in;
			if (total < 0)
				total = 0;
			if (ap[5] == 'U') {
				g->pad[d] = total / 2;
				g->pad[nsp + d] = total - total / 2;
			} else {
				g->pad[nsp + d] = total / 2;
				g->pad[d] = total - total / 2;
			}
		} else {
			return rt_err(k, "unsupported auto_pad '%s'", ap);
		}
		if (out < 1 && !(flags & KNN_EMPTY_OK))
			return rt_err(k, "spatial dim %d: input %lld is too small for a window of %lld with pads %lld+%lld",
				      d, (long long)in, (long long)ek,
				      (long long)g->pad[d], (long long)g->pad[nsp + d]);
		g->out[d] = out;
	}
	knn_geom_sizes(g);
	return 0;
}

int knn_geom_conv(struct rt_kctx *k, const struct rt_value *x,
		  const struct rt_value *w, struct knn_geom *g)
{
	int64_t group = rt_attr_int(k, "group", 1);
	const int64_t *ks;
	size_t nks;
	int rc;

	if (x->rank < 3)
		return rt_err(k, "input X has rank %d, expected 3 or more", x->rank);
	if (w->rank != x->rank)
		return rt_err(k, "weight W has rank %d, input X rank %d", w->rank,
			      x->rank);
	if (group < 1 || x->dims[1] % group || w->dims[0] % group)
		return rt_err(k, "group %lld does not divide the channels (X %lld, W %lld)",
			      (long long)group, (long long)x->dims[1],
			      (long long)w->dims[0]);
	if (w->dims[1] * group != x->dims[1])
		return rt_err(k, "channel mismatch: X has %lld channels, W expects %lld x group %lld",
			      (long long)x->dims[1], (long long)w->dims[1],
			      (long long)group);
	if ((ks = rt_attr_ints(k, "kernel_shape", &nks))) {
		if ((int)nks != x->rank - 2)
			return rt_err(k, "attribute 'kernel_shape' has %zu values, expected %d",
				      nks, x->rank - 2);
		for (size_t i = 0; i < nks; i++)
			if (ks[i] != w->dims[2 + i])
				return rt_err(k, "kernel_shape[%zu] = %lld but W has %lld",
					      i, (long long)ks[i],
					      (long long)w->dims[2 + i]);
	}
	if ((rc = knn_geom_init(k, x, w->dims + 2, 0, g)) < 0)
		return rc;
	g->m = w->dims[0];
	g->group = group;
	return 0;
}

double *knn_load_f64(struct rt_kctx *k, const struct rt_value *t)
{
	double *v = malloc((size_t)(t->numel ? t->numel : 1) * sizeof(double));

	if (!v) {
		rt_oom(k);
		return NULL;
	}
	if (t->dtype == IR_DTYPE_FLOAT)
		for (int64_t i = 0; i < t->numel; i++)
			v[i] = ((const float *)t->data)[i];
	else if (t->dtype == IR_DTYPE_DOUBLE)
		memcpy(v, t->data, (size_t)t->numel * sizeof(double));
	else
		for (int64_t i = 0; i < t->numel; i++)
			v[i] = rt_load_f64(t->dtype, t->data, i);
	return v;
}

void knn_store_f64(struct rt_value *t, const double *v)
{
	if (t->dtype == IR_DTYPE_FLOAT)
		for (int64_t i = 0; i < t->numel; i++)
			((float *)t->data)[i] = (float)v[i];
	else if (t->dtype == IR_DTYPE_DOUBLE)
		memcpy(t->data, v, (size_t)t->numel * sizeof(double));
	else
		for (int64_t i = 0; i < t->numel; i++)
			rt_store_f64(t->dtype, t->data, i, v[i]);
}

void knn_window_taps(const struct knn_geom *g, int d, int include_pad,
		     int64_t *lo, int64_t *hi, int64_t *n)
{
	int nsp = g->nsp;

	for (int64_t o = 0; o < g->out[d]; o++) {
		int64_t first = -1, end = 0, count = 0;

		for (int64_t u = 0; u < g->kernel[d]; u++) {
			int64_t i = o * g->stride[d] - g->pad[d] + u * g->dil[d];

			if (i >= 0 && i < g->in[d]) {
				if (first < 0)
					first = u;
				end = u + 1;
				count++;
			} else if (include_pad && i >= -g->pad[d] &&
				   i < g->in[d] + g->pad[nsp + d]) {
				count++;
			}
		}
		if (lo) {
			lo[o] = first < 0 ? 0 : first;
			hi[o] = first < 0 ? 0 : end;
		}
		n[o] = count;
	}
}
