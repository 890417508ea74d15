/* suite_krnn.c: LSTM and GRU (linear_before_reset 0 and 1) on oneDNN's
 * RNN primitives (runtime/kernels/k_rnn_dnnl.c) against the cells of the
 * ONNX spec computed here in double: forward, reverse and bidirectional,
 * batch 1 to 4, with and without B and initial states, at one and two
 * threads; the first run on the own cells (k_rnn.c), the primitive from
 * the second (the suite checks which ran), but for a bidirectional node
 * at two threads, whose directions the own cells run side by side, and
 * for one to three rows at one thread (an LSTM, a GRU with
 * linear_before_reset), which the own cells' products run faster.  An
 * LSTM whose W outgrows the L2 share and a GRU with clip stay own, held to
 * the same reference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_conv_int.h"
#include "runtime/kernels/k_dnnl.h"
#include "runtime/kernels/pgemm.h"   /* rt_cpu_avx512f */
#include "tests/unit/suites.h"
#include "tests/unit/tconv.h"
#include "tests/unit/tmodel.h"

struct rcase {
	int lstm, lbr, dir;   /* dir: 0 forward, 1 reverse, 2 bidirectional */
	int64_t seq, batch, in, hid;
	int bias, init, dn;   /* dn: the second run on oneDNN */
	double clip;          /* 0: none */
};

static double sig(double x)
{
	return 1 / (1 + exp(-x));
}

static double clipped(const struct rcase *c, double v)
{
	return c->clip > 0 ? fmin(fmax(v, -c->clip), c->clip) : v;
}

/* Y [seq, nd, batch, hid] by the spec (gates: LSTM i o f c, GRU z r h) */
static void reference(const struct rcase *c, const double *x, const double *w, const double *r,
		      const double *b, const double *h0, const double *c0, double *y)
{
	int64_t g = c->lstm ? 4 : 3, H = c->hid, nd = c->dir == 2 ? 2 : 1;
	double *h = calloc((size_t)(c->batch * H), sizeof(double));
	double *cs = calloc((size_t)(c->batch * H), sizeof(double));
	double *pre = calloc((size_t)(g * H), sizeof(double)), *rh = calloc((size_t)(g * H), sizeof(double));

	for (int64_t d = 0; d < nd; d++) {
		const double *W = w + d * g * H * c->in, *R = r + d * g * H * H;
		const double *Wb = b ? b + d * 2 * g * H : NULL, *Rb = Wb ? Wb + g * H : NULL;
		int rev = c->dir == 1 || d == 1;

		for (int64_t i = 0; i < c->batch * H; i++) {
			h[i] = h0 ? h0[d * c->batch * H + i] : 0;
			cs[i] = c0 ? c0[d * c->batch * H + i] : 0;
		}
		for (int64_t st = 0; st < c->seq; st++) {
			int64_t t = rev ? c->seq - 1 - st : st;

			for (int64_t n = 0; n < c->batch; n++) {
				double *hn = h + n * H, *cn = cs + n * H;
				double z[1024], rr[1024], hnew[1024];

				for (int64_t j = 0; j < g * H; j++) {
					double sx = Wb ? Wb[j] : 0, sr = Rb ? Rb[j] : 0;

					for (int64_t k = 0; k < c->in; k++)
						sx += W[j * c->in + k] * x[(t * c->batch + n) * c->in + k];
					for (int64_t k = 0; k < H; k++)
						sr += R[j * H + k] * hn[k];
					pre[j] = sx;
					rh[j] = sr;
				}
				if (c->lstm) {
					for (int64_t j = 0; j < H; j++) {
						double i_ = sig(clipped(c, pre[j] + rh[j]));
						double o = sig(clipped(c, pre[H + j] + rh[H + j]));
						double f = sig(clipped(c, pre[2 * H + j] + rh[2 * H + j]));
						double cc = tanh(clipped(c, pre[3 * H + j] + rh[3 * H + j]));

						cn[j] = f * cn[j] + i_ * cc;
						z[j] = o * tanh(cn[j]);
					}
					memcpy(hn, z, (size_t)H * sizeof(double));
				} else {
					for (int64_t j = 0; j < H; j++) {
						z[j] = sig(clipped(c, pre[j] + rh[j]));
						rr[j] = sig(clipped(c, pre[H + j] + rh[H + j]));
					}
					for (int64_t j = 0; j < H; j++) {
						double hh;

						if (c->lbr) {
							hh = pre[2 * H + j] + rr[j] * rh[2 * H + j];
						} else {   /* (r . h) Rh^T + Rbh */
							hh = pre[2 * H + j] + (Rb ? Rb[2 * H + j] : 0);
							for (int64_t k = 0; k < H; k++)
								hh += R[(2 * H + j) * H + k] * rr[k] * hn[k];
						}
						hnew[j] = (1 - z[j]) * tanh(clipped(c, hh)) + z[j] * hn[j];
					}
					memcpy(hn, hnew, (size_t)H * sizeof(double));
				}
				memcpy(y + ((t * nd + d) * c->batch + n) * H, hn, (size_t)H * sizeof(double));
			}
		}
	}
	free(h);
	free(cs);
	free(pre);
	free(rh);
}

static void one(const struct rcase *c, uint64_t seed)
{
	int64_t g = c->lstm ? 4 : 3, nd = c->dir == 2 ? 2 : 1, H = c->hid;
	int64_t ny = c->seq * nd * c->batch * H, nx = c->seq * c->batch * c->in;
	static const char *const dirs[] = { "forward", "reverse", "bidirectional" };
	struct ir_model *m = tm_new(14);
	double *x = tc_fill(nx, seed), *w = tc_fill(nd * g * H * c->in, seed + 1);
	double *r = tc_fill(nd * g * H * H, seed + 2), *b = tc_fill(nd * 2 * g * H, seed + 3);
	double *h0 = tc_fill(nd * c->batch * H, seed + 4), *c0 = tc_fill(nd * c->batch * H, seed + 5);
	double *want = malloc((size_t)ny * sizeof(double));
	float *y = malloc((size_t)ny * sizeof(float));
	struct rt_value *in;
	struct ir_node *n;
	char what[160];
	/* (OPMIG_NO_DNNL: none; linear_before_reset only on AVX-512 CPUs) */
	int64_t before, dn = c->dn && knn_dnnl_engine() && (!c->lbr || rt_cpu_avx512f());

	CU_ASSERT_FATAL(want && y);
	for (int64_t i = 0; i < nd * g * H * H; i++)   /* a recurrence that stays lively */
		r[i] *= 0.3;
	reference(c, x, w, r, c->bias ? b : NULL, c->init ? h0 : NULL,
		  c->init && c->lstm ? c0 : NULL, want);
	tm_input(m, "X", IR_DTYPE_FLOAT, TM_DIMS(c->seq, c->batch, c->in), 3);
	tm_init(m, "W", IR_DTYPE_FLOAT, TM_DIMS(nd, g * H, c->in), 3, w);
	tm_init(m, "R", IR_DTYPE_FLOAT, TM_DIMS(nd, g * H, H), 3, r);
	tm_init(m, "B", IR_DTYPE_FLOAT, TM_DIMS(nd, 2 * g * H), 2, b);
	tm_init(m, "H0", IR_DTYPE_FLOAT, TM_DIMS(nd, c->batch, H), 3, h0);
	tm_init(m, "C0", IR_DTYPE_FLOAT, TM_DIMS(nd, c->batch, H), 3, c0);
	n = tm_node(m, c->lstm ? "LSTM" : "GRU", NULL,
		    c->init ? (c->lstm ? TM_NAMES("X", "W", "R", c->bias ? "B" : "", "", "H0", "C0") :
					 TM_NAMES("X", "W", "R", c->bias ? "B" : "", "", "H0")) :
			      TM_NAMES("X", "W", "R", c->bias ? "B" : ""),
		    c->init ? (c->lstm ? 7 : 6) : 4, TM_NAMES("Y"), 1);
	ir_node_set_int(n, "hidden_size", H);
	ir_node_set_string(n, "direction", dirs[c->dir]);
	if (!c->lstm)
		ir_node_set_int(n, "linear_before_reset", c->lbr);
	if (c->clip > 0)
		ir_node_set_float(n, "clip", (float)c->clip);
	tm_output(m, "Y", IR_DTYPE_FLOAT, TM_DIMS(c->seq, nd, c->batch, H), 4);
	tm_verify(m);
	in = tc_tensor(x, 3, TM_DIMS(c->seq, c->batch, c->in));
	snprintf(what, sizeof(what), "%s lbr %d dir %d seq %lld batch %lld in %lld hid %lld "
		 "bias %d init %d clip %g", c->lstm ? "LSTM" : "GRU", c->lbr, c->dir,
		 (long long)c->seq, (long long)c->batch, (long long)c->in, (long long)H, c->bias,
		 c->init, c->clip);
	for (int th = 1; th <= 2; th++) {
		/* at two threads a bidirectional node's directions run side
		 * by side on the own cells (k_rnn.c run_dirs); at one, one to
		 * three rows of an LSTM or a GRU with linear_before_reset run
		 * there too (k_rnn.c dnnl_cell) */
		int64_t dn_th = dn && !(c->dir == 2 && th == 2) &&
				!(th == 1 && rt_pgemm_ok() && c->batch <= 3 && (c->lstm || c->lbr));

		before = knn_dnnl_runs();
		tc_run(m, &in, 1, th, 0, 1, y, ny);   /* a first run: the own cells */
		CU_ASSERT(knn_dnnl_runs() == before);
		CU_ASSERT(tc_check_floats(y, want, ny, what));
		before = knn_dnnl_runs();
		tc_run(m, &in, 1, th, 0, 3, y, ny);
		if (knn_dnnl_runs() != before + 2 * dn_th)
			fprintf(stderr, "\n%s, %d thread(s): %lld oneDNN runs of 3\n", what, th,
				(long long)(knn_dnnl_runs() - before));
		CU_ASSERT(knn_dnnl_runs() == before + 2 * dn_th);
		CU_ASSERT(tc_check_floats(y, want, ny, what));
	}
	rt_value_unref(in);
	ir_model_free(m);
	free(x);
	free(w);
	free(r);
	free(b);
	free(h0);
	free(c0);
	free(want);
	free(y);
}

static void test_cells(void)
{
	static const struct rcase cases[] = {
		/* lstm lbr dir seq batch in hid bias init dn clip */
		{ 1, 0, 0, 7, 1, 12, 40, 1, 1, 1, 0 },
		{ 1, 0, 1, 5, 3, 9, 33, 0, 1, 1, 0 },
		{ 1, 0, 1, 5, 4, 9, 33, 0, 1, 1, 0 },
		{ 1, 0, 2, 6, 4, 16, 24, 1, 0, 1, 0 },
		{ 0, 0, 0, 7, 1, 12, 40, 1, 1, 1, 0 },
		{ 0, 1, 1, 5, 3, 9, 33, 1, 1, 1, 0 },
		{ 0, 1, 1, 5, 4, 9, 33, 1, 1, 1, 0 },
		{ 0, 0, 2, 6, 3, 16, 24, 0, 1, 1, 0 },
		{ 0, 1, 2, 4, 2, 8, 20, 1, 0, 1, 0 },
		{ 0, 1, 2, 4, 4, 8, 20, 1, 0, 1, 0 },
		/* own: W past LSTM_W_MAX at two threads; a clip */
		{ 1, 0, 0, 3, 1, 640, 64, 1, 1, 0, 0 },
		{ 0, 0, 2, 5, 2, 9, 21, 1, 1, 0, 0.5 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		one(&cases[i], 3000 + 10 * i);
}

static const struct unit_test tests[] = {
	{ "cells", test_cells },
	{ NULL, NULL },
};

int suite_krnn_register(void)
{
	return unit_add_suite("krnn", tests);
}
