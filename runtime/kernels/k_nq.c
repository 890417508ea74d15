/* k_nq.c: helpers shared by the norm, rnn, quant, attn and contrib kernel
 * families (see k_nq.h): float32 views and scratch outputs, the sgemm
 * wrapper, softmax and the run of a rotary embedding both RotaryEmbedding
 * kernels end with. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_nq.h"

float *nq_f32(struct rt_kctx *k, const struct rt_value *t, int *owned)
{
	float *p;

	*owned = 0;
	if (t->dtype == IR_DTYPE_FLOAT)
		return t->data;
	if (!(p = malloc((size_t)(t->numel ? t->numel : 1) * sizeof(float)))) {
		rt_oom(k);
		return NULL;
	}
	for (int64_t i = 0; i < t->numel; i++)
		p[i] = (float)rt_load_f64(t->dtype, t->data, i);
	*owned = 1;
	return p;
}

void nq_f32_release(float *p, int owned)
{
	if (owned)
		free(p);
}

float *nq_out_buf(struct rt_kctx *k, struct rt_value *t)
{
	float *p;

	if (t->dtype == IR_DTYPE_FLOAT)
		return t->data;
	if (!(p = malloc((size_t)(t->numel ? t->numel : 1) * sizeof(float))))
		rt_oom(k);
	return p;
}

void nq_out_done(struct rt_value *t, float *buf)
{
	if (!buf || buf == t->data)
		return;
	for (int64_t i = 0; i < t->numel; i++)
		rt_store_f64(t->dtype, t->data, i, buf[i]);
	free(buf);
}

int nq_out_floats(struct rt_kctx *k, size_t i, int dtype, int rank, const int64_t *dims,
		  const float *src)
{
	struct rt_value *o;
	float *buf;

	if (!rt_out_wanted(k, i))
		return 0;
	if (!(o = rt_out_tensor(k, i, dtype, rank, dims)) || !(buf = nq_out_buf(k, o)))
		return IR_ENOMEM;
	memcpy(buf, src, (size_t)o->numel * sizeof(float));
	nq_out_done(o, buf);
	return 0;
}

void nq_softmax(float *x, int64_t n)
{
	float mx = -INFINITY;
	double sum = 0;

	for (int64_t i = 0; i < n; i++)
		if (x[i] > mx)
			mx = x[i];
	if (mx == -INFINITY) {
		for (int64_t i = 0; i < n; i++)
			x[i] = 0;
		return;
	}
	for (int64_t i = 0; i < n; i++) {
		x[i] = expf(x[i] - mx);
		sum += x[i];
	}
	for (int64_t i = 0; i < n; i++)
		x[i] = (float)(x[i] / sum);
}

void nq_softmax_sink(float *x, int64_t n, float sink)
{
	float mx = sink;
	double sum;

	for (int64_t i = 0; i < n; i++)
		if (x[i] > mx)
			mx = x[i];
	sum = exp((double)sink - mx);
	for (int64_t i = 0; i < n; i++) {
		x[i] = expf(x[i] - mx);
		sum += x[i];
	}
	for (int64_t i = 0; i < n; i++)
		x[i] = (float)(x[i] / sum);
}

int nq_check_float(struct rt_kctx *k, const struct rt_value *t, size_t i)
{
	switch (t->dtype) {
	case IR_DTYPE_FLOAT: case IR_DTYPE_DOUBLE: case IR_DTYPE_FLOAT16:
	case IR_DTYPE_BFLOAT16:
		return 0;
	default:
		return rt_err(k, "input %zu: %s is not a float type", i,
			      ir_dtype_name(t->dtype));
	}
}

float *nq_expand(struct rt_kctx *k, const struct rt_value *t, size_t i,
		 int rank, const int64_t *dims)
{
	int64_t st[RT_MAX_RANK], idx[RT_MAX_RANK] = { 0 }, n = rt_numel(rank, dims);
	float *p;
	char a[96], b[96];

	for (int j = 0; j < t->rank; j++) {
		int r = j - (t->rank - rank);
		int64_t want = r < 0 ? 1 : dims[r];

		if (t->dims[j] != 1 && t->dims[j] != want) {
			rt_dims_text(t->rank, t->dims, a, sizeof(a));
			rt_dims_text(rank, dims, b, sizeof(b));
			rt_err(k, "input %zu: shape %s does not broadcast to %s", i, a, b);
			return NULL;
		}
	}
	if (!(p = malloc((size_t)(n ? n : 1) * sizeof(float)))) {
		rt_oom(k);
		return NULL;
	}
	rt_broadcast_strides(t, rank, dims, st);
	for (int64_t e = 0; e < n; e++) {
		int64_t off = 0;

		for (int j = 0; j < rank; j++)
			off += idx[j] * st[j];
		p[e] = (float)rt_load_f64(t->dtype, t->data, off);
		for (int j = rank - 1; j >= 0; j--) {
			if (++idx[j] < dims[j])
				break;
			idx[j] = 0;
		}
	}
	return p;
}

int nq_rotary_run(struct rt_kctx *k, struct nq_rope *r, const struct rt_value *x,
		  const struct rt_value *cv, const struct rt_value *sv)
{
	struct rt_value *out;
	float *xf = NULL, *cf = NULL, *sf = NULL, *yf = NULL;
	int xo = 0, co = 0, so = 0, rc = IR_ENOMEM;

	if (!(out = rt_out_tensor(k, 0, x->dtype, x->rank, x->dims)) ||
	    !(xf = nq_f32(k, x, &xo)) || !(cf = nq_f32(k, cv, &co)) ||
	    !(sf = nq_f32(k, sv, &so)) || !(yf = nq_out_buf(k, out)))
		goto cleanup;
	r->cos = cf;
	r->sin = sf;
	nq_rotary(r, xf, yf);
	nq_out_done(out, yf);
	rc = 0;
cleanup:
	nq_f32_release(xf, xo);
	nq_f32_release(cf, co);
	nq_f32_release(sf, so);
	return rc;
}
