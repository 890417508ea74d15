/* scaled_weight.c: a weight whose output channels are multiplied by
 * per-channel factors (a BatchNormalization folded into the Conv or Gemm
 * before it), as a computed tensor (ir/derived.c): made a piece at a time
 * from the weight where it lies (mapped or in the external file) when the
 * saver streams it into the output's external data or something reads it,
 * so that folding a model's batch norms never holds its weights.  The
 * factors are the job's; the rounding is the one the fold always had. */
#include <stdlib.h>
#include <string.h>

#include "rewriters/rw_int.h"

/* Elements of the weight read at a time (1 MiB of float). */
#define SW_CHUNK ((int64_t)1 << 18)

struct sw_job {
	int refs;
	int dtype;                 /* float or double */
	int64_t n_ch, inner;
	double *s;                 /* n_ch */
};

static size_t sw_esize(int dtype)
{
	return dtype == IR_DTYPE_DOUBLE ? sizeof(double) : sizeof(float);
}

/* The k elements at buf, elements e0.. of the weight, scaled in place:
 * element e by s[(e / inner) % n_ch], in double, rounded to the dtype. */
static void sw_scale(const struct sw_job *j, int64_t e0, int64_t k, uint8_t *buf)
{
	int64_t i = e0 % j->inner, o = e0 / j->inner % j->n_ch;
	size_t es = sw_esize(j->dtype);

	for (int64_t r = 0; r < k; r++) {
		uint8_t *p = buf + (size_t)r * es;

		if (j->dtype == IR_DTYPE_DOUBLE) {
			double x;

			memcpy(&x, p, sizeof(x));
			x = x * j->s[o];
			memcpy(p, &x, sizeof(x));
		} else {
			float f;

			memcpy(&f, p, sizeof(f));
			f = (float)((double)f * j->s[o]);
			memcpy(p, &f, sizeof(f));
		}
		if (++i == j->inner) {
			i = 0;
			if (++o == j->n_ch)
				o = 0;
		}
	}
}

static int sw_fill(struct ir_tensor *t, int64_t u0, int64_t u1, uint8_t *out,
		   struct ir_diag *d)
{
	const struct sw_job *j = t->arg;
	size_t es = sw_esize(j->dtype);
	struct ir_tensor_reader rd;
	int rc;

	if ((rc = ir_tensor_reader_open(&rd, t->src, d)) < 0)
		return rc;
	/* straight into out, a bounded read at a time (an unmapped external
	 * weight read past the page cache needs a buffer of each read) */
	for (int64_t e = u0; e < u1 && rc == 0; e += SW_CHUNK) {
		int64_t k = u1 - e < SW_CHUNK ? u1 - e : SW_CHUNK;

		rc = ir_tensor_reader_read(&rd, (uint64_t)e * es, (size_t)k * es,
					   out + (size_t)(e - u0) * es, d);
	}
	ir_tensor_reader_close(&rd);
	if (rc < 0)
		return rc;
	sw_scale(j, u0, u1 - u0, out);
	if (u1 == t->n_units)
		ir_tensor_release_data(t->src);
	return 0;
}

static void sw_hold(void *arg)
{
	((struct sw_job *)arg)->refs++;
}

static void sw_drop(void *arg)
{
	struct sw_job *j = arg;

	if (!j || --j->refs > 0)
		return;
	free(j->s);
	free(j);
}

static int sw_same(const void *a, const void *b)
{
	const struct sw_job *x = a, *y = b;

	return x->dtype == y->dtype && x->n_ch == y->n_ch && x->inner == y->inner &&
	       !memcmp(x->s, y->s, (size_t)x->n_ch * sizeof(*x->s));
}

static const struct ir_derive_ops sw_ops = {
	.fill = sw_fill, .hold = sw_hold, .drop = sw_drop, .same = sw_same,
};

int rw_scaled_weight(struct ir_tensor *w, const char *name, int64_t n_ch, int64_t inner,
		     const double *s, struct ir_tensor **out, struct ir_diag *d)
{
	int64_t numel = ir_tensor_numel(w);
	struct sw_job *j;
	const uint8_t *data = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	if ((w->dtype != IR_DTYPE_FLOAT && w->dtype != IR_DTYPE_DOUBLE) || numel < 0 ||
	    n_ch < 0 || inner < 0 || (numel > 0 && (n_ch == 0 || inner == 0)))
		return ir_diag_error(d, IR_EINTERNAL, "the weight '%s' cannot be scaled per channel",
				     ir_s(w->name));
	if (!(j = calloc(1, sizeof(*j))) || !(j->s = malloc((size_t)n_ch * sizeof(*s) + 1))) {
		free(j);
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	j->refs = 1;
	j->dtype = w->dtype;
	j->n_ch = n_ch;
	j->inner = inner;
	if (n_ch > 0)
		memcpy(j->s, s, (size_t)n_ch * sizeof(*s));
	if (numel > 0 && ir_tensor_shares_payload(w)) {
		/* the job goes with the tensor, or is dropped by it on failure */
		if (!(*out = ir_tensor_new_computed(name, ir_tensor_clone(w, NULL), w->dtype, w->dims,
						    w->n_dims, numel, &sw_ops, j)))
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		return 0;
	}
	/* bytes of opmig's own: a copy scaled at once */
	if (numel > 0 && (rc = ir_tensor_data(w, &data, &len, d)) < 0)
		goto cleanup;
	rc = 0;
	if (!(*out = ir_tensor_new_raw(name, w->dtype, w->dims, w->n_dims, data, len))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	if ((int64_t)(*out)->raw_len != numel * (int64_t)sw_esize(j->dtype)) {
		rc = ir_diag_error(d, IR_EINVAL, "tensor '%s': %zu payload bytes for %lld elements",
				   ir_s(w->name), (*out)->raw_len, (long long)numel);
		ir_tensor_free(*out);
		*out = NULL;
		goto cleanup;
	}
	if (numel > 0)
		sw_scale(j, 0, numel, (*out)->raw);
cleanup:
	sw_drop(j);
	return rc;
}
