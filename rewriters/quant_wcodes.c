/* quant_wcodes.c: the codes of a weight the QDQ and dynamic forms quantize
 * (per tensor or per channel): the channels' ranges read from the float
 * weight piece by piece, and the codes as a computed tensor (ir/derived.c)
 * made a piece at a time when the saver streams them into the external
 * data file or something reads them, so that quantizing a model never
 * holds its weights, float or int8, in memory.  Codes of a weight whose
 * bytes opmig owns (made by a pass) are computed at once instead: a
 * computed tensor would keep a copy of its float source. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/quant_int.h"
#include "runtime/runtime.h"

/* Elements of the float weight read at a time (1 MiB). */
#define WC_CHUNK ((int64_t)1 << 18)

struct wc_job {
	int refs;
	int dtype;
	int64_t n_ch, inner, qmin, qmax;
	float *sc;
	int32_t *zp;
};

/* Element e of w is in channel (e / inner) % n_ch. */
struct wc_pos {
	int64_t i, ch;
};

static void wc_pos_at(struct wc_pos *p, int64_t e, int64_t n_ch, int64_t inner)
{
	p->i = e % inner;
	p->ch = e / inner % n_ch;
}

static void wc_pos_next(struct wc_pos *p, int64_t n_ch, int64_t inner)
{
	if (++p->i == inner) {
		p->i = 0;
		if (++p->ch == n_ch)
			p->ch = 0;
	}
}

struct wc_range {
	int64_t n_ch, inner;
	struct wc_pos at;
	double *lo, *hi;
};

static int range_sink(const uint8_t *data, size_t len, void *ctx)
{
	struct wc_range *r = ctx;
	size_t n = len / sizeof(float);

	for (size_t k = 0; k < n; k++) {
		float f;
		double v;

		memcpy(&f, data + k * sizeof(float), sizeof(f));
		v = f;
		if (isfinite(v)) {
			r->lo[r->at.ch] = fmin(r->lo[r->at.ch], v);
			r->hi[r->at.ch] = fmax(r->hi[r->at.ch], v);
		}
		wc_pos_next(&r->at, r->n_ch, r->inner);
	}
	return 0;
}

int qz_wcodes_range(struct ir_tensor *w, int64_t n_ch, int64_t inner, double *lo, double *hi,
		    struct ir_diag *d)
{
	struct wc_range r = { n_ch, inner, { 0, 0 }, lo, hi };

	for (int64_t ch = 0; ch < n_ch; ch++)
		lo[ch] = hi[ch] = 0;
	if (w->dtype != IR_DTYPE_FLOAT)
		return ir_diag_error(d, IR_EINTERNAL, "quantize: the weight '%s' is not float",
				     ir_s(w->name));
	return ir_tensor_stream(w, range_sink, &r, d);
}

/* The codes of k elements from e0 (x: their float values), rounded as
 * they always were: nearest even of x / scale, plus the zero point, NaN
 * the zero point, clamped to the dtype's range. */
static void wc_codes(const struct wc_job *j, const float *x, int64_t e0, int64_t k,
		     int64_t *q)
{
	struct wc_pos p;

	wc_pos_at(&p, e0, j->n_ch, j->inner);
	for (int64_t r = 0; r < k; r++) {
		float s = j->sc[p.ch];
		int32_t z = j->zp[p.ch];
		float qf = nearbyintf(x[r] / s) + (float)z;

		if (qf != qf)
			qf = (float)z;
		q[r] = qf < (float)j->qmin ? j->qmin : qf > (float)j->qmax ? j->qmax : (int64_t)qf;
		wc_pos_next(&p, j->n_ch, j->inner);
	}
}

/* Elements [e0, e1) of src coded: into out (one byte each) or, out NULL,
 * into the tensor y at their index. */
static int wc_compute(const struct wc_job *j, struct ir_tensor *src, int64_t e0, int64_t e1,
		      uint8_t *out, struct rt_value *y, struct ir_diag *d)
{
	int64_t span = e1 - e0 < WC_CHUNK ? e1 - e0 : WC_CHUNK;
	float *x = malloc((size_t)span * sizeof(*x) + 1);
	int64_t *q = malloc((size_t)span * sizeof(*q) + 1);
	struct ir_tensor_reader rd;
	int rc;

	if (!x || !q) {
		rc = ir_diag_error(d, IR_ENOMEM, "quantize: out of memory");
		goto cleanup;
	}
	if ((rc = ir_tensor_reader_open(&rd, src, d)) < 0)
		goto cleanup;
	for (int64_t e = e0; e < e1 && rc == 0; e += span) {
		int64_t k = e1 - e < span ? e1 - e : span;

		if ((rc = ir_tensor_reader_read(&rd, (uint64_t)e * sizeof(*x),
						(size_t)k * sizeof(*x), (uint8_t *)x, d)) < 0)
			break;
		wc_codes(j, x, e, k, q);
		for (int64_t r = 0; r < k; r++)
			if (out)
				out[e - e0 + r] = j->dtype == IR_DTYPE_INT8 ? (uint8_t)(int8_t)q[r] :
						  (uint8_t)q[r];
			else
				rt_value_set_f64(y, e + r, (double)q[r]);
	}
	ir_tensor_reader_close(&rd);
cleanup:
	free(x);
	free(q);
	return rc;
}

static int wc_fill(struct ir_tensor *t, int64_t u0, int64_t u1, uint8_t *out,
		   struct ir_diag *d)
{
	int rc = wc_compute(t->arg, t->src, u0, u1, out, NULL, d);

	if (rc == 0 && u1 == t->n_units)
		ir_tensor_release_data(t->src);
	return rc;
}

static void wc_hold(void *arg)
{
	((struct wc_job *)arg)->refs++;
}

static void wc_drop(void *arg)
{
	struct wc_job *j = arg;

	if (!j || --j->refs > 0)
		return;
	free(j->sc);
	free(j->zp);
	free(j);
}

static const struct ir_derive_ops wc_ops = {
	wc_fill, NULL, NULL, wc_hold, wc_drop, NULL,
};

int qz_wcodes_make(struct ir_tensor *w, const char *name, int dtype, int64_t n_ch,
		   int64_t inner, const float *sc, const int32_t *zp, struct ir_tensor **out,
		   struct ir_diag *d)
{
	struct wc_job *j = calloc(1, sizeof(*j));
	int64_t numel = ir_tensor_numel(w);
	struct rt_value *y = NULL;
	int rc = 0;

	*out = NULL;
	if (!j || !(j->sc = malloc((size_t)n_ch * sizeof(*sc) + 1)) ||
	    !(j->zp = malloc((size_t)n_ch * sizeof(*zp) + 1))) {
		wc_drop(j);
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	j->refs = 1;
	j->dtype = dtype;
	j->n_ch = n_ch;
	j->inner = inner;
	memcpy(j->sc, sc, (size_t)n_ch * sizeof(*sc));
	memcpy(j->zp, zp, (size_t)n_ch * sizeof(*zp));
	qz_dtype_range(dtype, &j->qmin, &j->qmax);
	if (numel > 0 && ir_tensor_shares_payload(w) &&
	    (dtype == IR_DTYPE_INT8 || dtype == IR_DTYPE_UINT8)) {
		/* the job goes with the tensor, or is dropped by it on failure */
		if (!(*out = ir_tensor_new_computed(name, ir_tensor_clone(w, NULL), dtype, w->dims,
						    w->n_dims, numel, &wc_ops, j)))
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		return 0;
	}
	{
		int64_t dims[RT_MAX_RANK];

		if (w->n_dims > RT_MAX_RANK) {
			rc = ir_diag_error(d, IR_EINVAL, "quantize: the weight '%s' has rank %zu",
					   ir_s(w->name), w->n_dims);
			goto cleanup;
		}
		for (size_t i = 0; i < w->n_dims; i++)
			dims[i] = w->dims[i];
		if ((rc = rt_tensor_new(NULL, dtype, (int)w->n_dims, dims, &y, d)) < 0)
			goto cleanup;
	}
	if (numel > 0 && (rc = wc_compute(j, w, 0, numel, NULL, y, d)) < 0)
		goto cleanup;
	rc = rt_value_to_ir(y, name, out, d);
cleanup:
	rt_value_unref(y);
	wc_drop(j);
	return rc;
}
