/* k_signal.c: kernels of the signal family: DFT (axis attribute in 17, axis
 * input from 20), STFT, the Blackman/Hamming/Hann windows and
 * MelWeightMatrix.  Transforms run in double precision over exact twiddle
 * tables: radix-2 FFT for power-of-two lengths, else the direct O(n^2)
 * sum. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_int.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- windows ------------------------------------------------------------ */

enum { WIN_BLACKMAN, WIN_HAMMING, WIN_HANN };

static int window(struct rt_kctx *k, int kind)
{
	int64_t size, dtype = rt_attr_int(k, "output_datatype", IR_DTYPE_FLOAT);
	int periodic = (int)rt_attr_int(k, "periodic", 1);
	struct rt_value *y;
	double n;
	int rc;

	if ((rc = rt_in_int(k, 0, &size)) < 0)
		return rc;
	if (size < 0)
		return rt_err(k, "negative window size %lld", (long long)size);
	if (dtype == IR_DTYPE_STRING || !rt_dtype_size((int)dtype))
		return rt_err(k, "unsupported output_datatype %lld", (long long)dtype);
	if (!(y = rt_out_tensor(k, 0, (int)dtype, 1, &size)))
		return IR_ENOMEM;
	n = (double)(periodic ? size : size - 1);
	for (int64_t i = 0; i < size; i++) {
		double a = n > 0 ? 2 * M_PI * (double)i / n : 0, v;

		switch (kind) {
		case WIN_BLACKMAN: v = 0.42 - 0.5 * cos(a) + 0.08 * cos(2 * a); break;
		case WIN_HAMMING: v = 25.0 / 46 - 21.0 / 46 * cos(a); break;
		default: v = 0.5 - 0.5 * cos(a); break;
		}
		rt_store_f64((int)dtype, y->data, i, v);
	}
	return 0;
}

static int k_blackman(struct rt_kctx *k) { return window(k, WIN_BLACKMAN); }
static int k_hamming(struct rt_kctx *k) { return window(k, WIN_HAMMING); }
static int k_hann(struct rt_kctx *k) { return window(k, WIN_HANN); }

/* ---- the transform -------------------------------------------------------- */

/* y[k] = scale * sum_{j<nx} x[j] e^{sign 2 pi i jk/len}, k < n_out, with
 * x given as (re, im) pairs and len >= nx (zero padding beyond nx). */
struct dft_plan {
	int64_t len;
	double *cs, *sn;      /* cos/sin of 2 pi m / len */
	double *work;         /* 2 len doubles when len is a power of two */
};

static void plan_release(struct dft_plan *p)
{
	free(p->cs);
	free(p->sn);
	free(p->work);
}

static int plan_init(struct rt_kctx *k, struct dft_plan *p, int64_t len)
{
	p->len = len;
	p->cs = malloc((size_t)(len ? len : 1) * sizeof(double));
	p->sn = malloc((size_t)(len ? len : 1) * sizeof(double));
	p->work = len >= 4 && !(len & (len - 1)) ?
		  malloc((size_t)(2 * len) * sizeof(double)) : NULL;
	if (!p->cs || !p->sn || (len >= 4 && !(len & (len - 1)) && !p->work)) {
		plan_release(p);
		return rt_oom(k);
	}
	for (int64_t m = 0; m < len; m++) {
		double a = 2 * M_PI * (double)m / (double)len;

		p->cs[m] = cos(a);
		p->sn[m] = sin(a);
	}
	return 0;
}

/* Iterative radix-2 FFT of x (nx <= len points, zero padded) into
 * p->work, then the first n_out points scaled into y. */
static void fft_line(const struct dft_plan *p, const double *x, int64_t nx,
		     double *y, int64_t n_out, double sign, double scale)
{
	int64_t len = p->len, bits = 0;
	double *w = p->work;

	while (((int64_t)1 << bits) < len)
		bits++;
	for (int64_t i = 0; i < len; i++) {
		int64_t r = 0;

		for (int64_t b = 0; b < bits; b++)
			r |= ((i >> b) & 1) << (bits - 1 - b);
		w[2 * r] = i < nx ? x[2 * i] : 0;
		w[2 * r + 1] = i < nx ? x[2 * i + 1] : 0;
	}
	for (int64_t size = 2; size <= len; size *= 2) {
		int64_t half = size / 2, step = len / size;

		for (int64_t st = 0; st < len; st += size)
			for (int64_t j = 0; j < half; j++) {
				double c = p->cs[j * step], sn = sign * p->sn[j * step];
				double *a = w + 2 * (st + j), *b = w + 2 * (st + j + half);
				double br = b[0] * c - b[1] * sn, bi = b[0] * sn + b[1] * c;

				b[0] = a[0] - br;
				b[1] = a[1] - bi;
				a[0] += br;
				a[1] += bi;
			}
	}
	for (int64_t kk = 0; kk < n_out; kk++) {
		y[2 * kk] = w[2 * kk] * scale;
		y[2 * kk + 1] = w[2 * kk + 1] * scale;
	}
}

static void dft_line(const struct dft_plan *p, const double *x, int64_t nx,
		     double *y, int64_t n_out, int inverse)
{
	double sign = inverse ? 1 : -1, scale = inverse ? 1.0 / (double)p->len : 1;

	if (p->work) {
		fft_line(p, x, nx, y, n_out, sign, scale);
		return;
	}
	for (int64_t kk = 0; kk < n_out; kk++) {
		double re = 0, im = 0;
		int64_t m = 0;

		for (int64_t j = 0; j < nx; j++) {
			double c = p->cs[m], s = sign * p->sn[m];

			re += x[2 * j] * c - x[2 * j + 1] * s;
			im += x[2 * j] * s + x[2 * j + 1] * c;
			m += kk;
			if (m >= p->len)
				m %= p->len;
		}
		y[2 * kk] = re * scale;
		y[2 * kk + 1] = im * scale;
	}
}

static int is_float_dtype(int dt)
{
	return dt == IR_DTYPE_FLOAT || dt == IR_DTYPE_DOUBLE ||
	       dt == IR_DTYPE_FLOAT16 || dt == IR_DTYPE_BFLOAT16;
}

static int k_dft(struct rt_kctx *k)
{
	int onesided = (int)rt_attr_int(k, "onesided", 0);
	int inverse = (int)rt_attr_int(k, "inverse", 0);
	int64_t axis, len, n_out, outer = 1, inner = 1, n, dims[RT_MAX_RANK];
	struct rt_value *x, *y;
	struct dft_plan p;
	double *xb = NULL, *yb = NULL;
	int a, c, rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0)
		return rc;
	if (!is_float_dtype(x->dtype))
		return rt_err(k, "input must be a float tensor, is %s", ir_dtype_name(x->dtype));
	if (x->rank < 3)
		return rt_err(k, "input must have rank >= 3 ([batch, signal..., 1 or 2]), has %d",
			      x->rank);
	c = (int)x->dims[x->rank - 1];
	if (c != 1 && c != 2)
		return rt_err(k, "last dimension must be 1 (real) or 2 (complex), is %d", c);
	if (k->version >= 20) {
		axis = -2;
		if (rt_in(k, 2) && (rc = rt_in_int(k, 2, &axis)) < 0)
			return rc;
		if (axis < 0)
			axis += x->rank;
	} else {
		axis = rt_attr_int(k, "axis", 1);
		if (axis < 0)
			axis += x->rank;
	}
	if (axis < (k->version >= 20 ? 0 : 1) || axis > x->rank - 2)
		return rt_err(k, "axis %lld out of range for an input of rank %d",
			      (long long)axis, x->rank);
	a = (int)axis;
	if (onesided && inverse)
		return rt_err(k, "onesided and inverse cannot both be set");
	if (onesided && c == 2)
		return rt_err(k, "onesided output needs a real input (last dimension 1)");
	n = x->dims[a];
	len = n;
	if (rt_in(k, 1)) {
		if ((rc = rt_in_int(k, 1, &len)) < 0)
			return rc;
		if (len < 1)
			return rt_err(k, "dft_length %lld must be positive", (long long)len);
	}
	n_out = onesided ? len / 2 + 1 : len;
	for (int i = 0; i < a; i++)
		outer *= x->dims[i];
	for (int i = a + 1; i < x->rank - 1; i++)
		inner *= x->dims[i];
	memcpy(dims, x->dims, (size_t)x->rank * sizeof(*dims));
	dims[a] = n_out;
	dims[x->rank - 1] = 2;
	if (!(y = rt_out_tensor(k, 0, x->dtype, x->rank, dims)))
		return IR_ENOMEM;
	if ((rc = plan_init(k, &p, len)) < 0)
		return rc;
	xb = calloc((size_t)(2 * len + 2), sizeof(double));
	yb = malloc((size_t)(2 * n_out + 2) * sizeof(double));
	if (!xb || !yb) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			int64_t nx = n < len ? n : len;

			for (int64_t j = 0; j < nx; j++) {
				int64_t e = ((o * n + j) * inner + i) * c;

				xb[2 * j] = rt_load_f64(x->dtype, x->data, e);
				xb[2 * j + 1] = c == 2 ? rt_load_f64(x->dtype, x->data, e + 1) : 0;
			}
			dft_line(&p, xb, nx, yb, n_out, inverse);
			for (int64_t j = 0; j < n_out; j++) {
				int64_t e = ((o * n_out + j) * inner + i) * 2;

				rt_store_f64(y->dtype, y->data, e, yb[2 * j]);
				rt_store_f64(y->dtype, y->data, e + 1, yb[2 * j + 1]);
			}
		}
	rc = 0;
cleanup:
	free(xb);
	free(yb);
	plan_release(&p);
	return rc;
}

static int k_stft(struct rt_kctx *k)
{
	int onesided = (int)rt_attr_int(k, "onesided", 1);
	int64_t step, flen = -1, frames, batch, slen, n_out, dims[4];
	struct rt_value *x, *w = rt_in(k, 2), *y;
	struct dft_plan p;
	double *xb = NULL, *yb = NULL;
	int c, rc;

	if ((rc = rt_in_tensor(k, 0, &x)) < 0 || (rc = rt_in_int(k, 1, &step)) < 0)
		return rc;
	if (!is_float_dtype(x->dtype))
		return rt_err(k, "signal must be a float tensor, is %s", ir_dtype_name(x->dtype));
	if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
		return rt_err(k, "signal must be [batch, length, 1 or 2], has rank %d", x->rank);
	c = (int)x->dims[2];
	batch = x->dims[0];
	slen = x->dims[1];
	if (w) {
		if ((rc = rt_in_tensor(k, 2, &w)) < 0)
			return rc;
		if (w->rank != 1)
			return rt_err(k, "window must be 1-D, has rank %d", w->rank);
		flen = w->dims[0];
	}
	if (rt_in(k, 3)) {
		int64_t fl;

		if ((rc = rt_in_int(k, 3, &fl)) < 0)
			return rc;
		if (flen >= 0 && fl != flen)
			return rt_err(k, "frame_length %lld differs from the window length %lld",
				      (long long)fl, (long long)flen);
		flen = fl;
	}
	if (flen < 0)
		return rt_err(k, "neither a window nor frame_length is given");
	if (flen < 1 || step < 1)
		return rt_err(k, "frame_length %lld and frame_step %lld must be positive",
			      (long long)flen, (long long)step);
	if (onesided && c == 2)
		return rt_err(k, "onesided output needs a real signal (last dimension 1)");
	if (flen > slen)
		return rt_err(k, "frame_length %lld longer than the signal (%lld)",
			      (long long)flen, (long long)slen);
	frames = (slen - flen) / step + 1;
	n_out = onesided ? flen / 2 + 1 : flen;
	dims[0] = batch;
	dims[1] = frames;
	dims[2] = n_out;
	dims[3] = 2;
	if (!(y = rt_out_tensor(k, 0, x->dtype, 4, dims)))
		return IR_ENOMEM;
	if ((rc = plan_init(k, &p, flen)) < 0)
		return rc;
	xb = malloc((size_t)(2 * flen) * sizeof(double));
	yb = malloc((size_t)(2 * n_out) * sizeof(double));
	if (!xb || !yb) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (int64_t b = 0; b < batch; b++)
		for (int64_t f = 0; f < frames; f++) {
			for (int64_t j = 0; j < flen; j++) {
				int64_t e = (b * slen + f * step + j) * c;
				double wv = w ? rt_load_f64(w->dtype, w->data, j) : 1;

				xb[2 * j] = wv * rt_load_f64(x->dtype, x->data, e);
				xb[2 * j + 1] = c == 2 ? wv * rt_load_f64(x->dtype, x->data, e + 1) : 0;
			}
			dft_line(&p, xb, flen, yb, n_out, 0);
			for (int64_t j = 0; j < 2 * n_out; j++)
				rt_store_f64(y->dtype, y->data, ((b * frames + f) * n_out) * 2 + j,
					     yb[j]);
		}
	rc = 0;
cleanup:
	free(xb);
	free(yb);
	plan_release(&p);
	return rc;
}

/* ---- MelWeightMatrix ------------------------------------------------------ */

/* Triangular filters between mel-spaced bin edges, as the operator's
 * reference: edges at num_mel_bins + 2 points spaced (high - low) /
 * (num_mel_bins + 2) apart in mel, mapped to integer spectrogram bins by
 * floor((dft_length + 1) * hz / sample_rate). */
static int k_mel(struct rt_kctx *k)
{
	int64_t dtype = rt_attr_int(k, "output_datatype", IR_DTYPE_FLOAT);
	int64_t nmel, dlen, rate, nspec, dims[2], *bins = NULL;
	double lo, hi, mlo, mhi, step;
	struct rt_value *y;
	int rc;

	if ((rc = rt_in_int(k, 0, &nmel)) < 0 || (rc = rt_in_int(k, 1, &dlen)) < 0 ||
	    (rc = rt_in_int(k, 2, &rate)) < 0 || (rc = rt_in_double(k, 3, &lo)) < 0 ||
	    (rc = rt_in_double(k, 4, &hi)) < 0)
		return rc;
	if (nmel < 1 || dlen < 1 || rate < 1)
		return rt_err(k, "num_mel_bins, dft_length and sample_rate must be positive");
	if (lo < 0 || hi < lo || hi > rate / 2.0 + 1e-9)
		return rt_err(k, "edges [%g, %g] outside [0, sample_rate/2]", lo, hi);
	if (dtype == IR_DTYPE_STRING || !rt_dtype_size((int)dtype))
		return rt_err(k, "unsupported output_datatype %lld", (long long)dtype);
	nspec = dlen / 2 + 1;
	dims[0] = nspec;
	dims[1] = nmel;
	if (!(y = rt_out_tensor(k, 0, (int)dtype, 2, dims)))
		return IR_ENOMEM;
	if (!(bins = malloc((size_t)(nmel + 2) * sizeof(*bins))))
		return rt_oom(k);
	mlo = 2595 * log10(1 + lo / 700);
	mhi = 2595 * log10(1 + hi / 700);
	step = (mhi - mlo) / (double)(nmel + 2);
	for (int64_t i = 0; i < nmel + 2; i++) {
		double hz = 700 * (pow(10, ((double)i * step + mlo) / 2595) - 1);

		bins[i] = (int64_t)floor((double)(dlen + 1) * hz / (double)rate);
		if (bins[i] < 0 || bins[i] >= nspec) {
			rc = rt_err(k, "mel edge %lld maps to bin %lld outside [0, %lld)",
				    (long long)i, (long long)bins[i], (long long)nspec);
			goto cleanup;
		}
	}
	for (int64_t i = 0; i < nspec * nmel; i++)
		rt_store_f64((int)dtype, y->data, i, 0);
	for (int64_t m = 0; m < nmel; m++) {
		int64_t l = bins[m], c = bins[m + 1], h = bins[m + 2];

		if (c == l)
			rt_store_f64((int)dtype, y->data, c * nmel + m, 1);
		else
			for (int64_t j = l; j <= c; j++)
				rt_store_f64((int)dtype, y->data, j * nmel + m,
					     (double)(j - l) / (double)(c - l));
		for (int64_t j = c; j < h; j++)
			rt_store_f64((int)dtype, y->data, j * nmel + m,
				     (double)(h - j) / (double)(h - c));
	}
	rc = 0;
cleanup:
	free(bins);
	return rc;
}

const struct rt_kernel rt_kernels_signal[] = {
	{ "ai.onnx", "BlackmanWindow", 17, RT_OPEN, k_blackman },
	{ "ai.onnx", "DFT", 17, RT_OPEN, k_dft },
	{ "ai.onnx", "HammingWindow", 17, RT_OPEN, k_hamming },
	{ "ai.onnx", "HannWindow", 17, RT_OPEN, k_hann },
	{ "ai.onnx", "MelWeightMatrix", 17, RT_OPEN, k_mel },
	{ "ai.onnx", "STFT", 17, RT_OPEN, k_stft },
};
const size_t rt_n_kernels_signal = sizeof(rt_kernels_signal) / sizeof(rt_kernels_signal[0]);
