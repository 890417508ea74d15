/* suite_knorm.c: unit tests of normalization, recurrent, quantization,
 * attention and contrib kernels against values derived by hand from the
 * operators' published definitions (ONNX Operators.md, onnxruntime's
 * ContribOperators.md): what the backend test data does not cover (the
 * com.microsoft ops, bidirectional LSTM with sequence_lens, per-axis int4
 * dequantization, float8 saturation, GroupNormalization 18 vs 21, causal
 * alignment) and the error paths. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/suites.h"
#include "tests/unit/tmodel.h"
#include "runtime/runtime.h"

#define MS "com.microsoft"

/* Run m (every input an initializer); outs gets n references.  On error
 * the message goes to err (may be NULL). */
static int run(struct ir_model *m, struct rt_value **outs, size_t n, char *err, size_t len)
{
	struct rt_opts o = { .threads = 1 };
	struct rt_session *s = NULL;
	struct ir_diag d;
	int rc;

	ir_diag_init(&d);
	tm_verify(m);
	if ((rc = rt_session_new(m, &o, &s, &d)) >= 0) {
		CU_ASSERT_FATAL(rt_session_n_outputs(s) == n);
		rc = rt_session_run(s, NULL, 0, outs, &d);
	}
	if (err)
		snprintf(err, len, "%s", rc < 0 ? d.msg : "");
	else if (rc < 0)
		fprintf(stderr, "\nrun: %s\n", d.msg);
	rt_session_free(s);
	return rc;
}

/* Output v equals want[0..n) within tol (absolute). */
static void expect(const struct rt_value *v, const double *want, int64_t n, double tol)
{
	CU_ASSERT_FATAL(v != NULL);
	CU_ASSERT_EQUAL_FATAL(v->numel, n);
	for (int64_t i = 0; i < n; i++) {
		double got = rt_value_get_f64(v, i);

		if (!(fabs(got - want[i]) <= tol)) {
			fprintf(stderr, "\nelement %lld: got %.8g, want %.8g\n", (long long)i, got,
				want[i]);
			CU_FAIL("value differs");
			return;
		}
	}
}

static void unref_all(struct rt_value **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		rt_value_unref(v[i]);
}

/* Outputs "y0".."y<n-1>" with unknown shapes. */
static void outputs(struct ir_model *m, int dtype, size_t n)
{
	static const char *const names[] = { "y0", "y1", "y2", "y3" };

	for (size_t i = 0; i < n; i++)
		tm_output(m, names[i], dtype, NULL, 0);
}

/* ---- normalization ------------------------------------------------- */

/* X = [[1, 3], [5, 9]] as (N=1, C=2, 1, 2) in one group: mean 4.5,
 * variance (3.5^2 + 1.5^2 + 0.5^2 + 4.5^2) / 4 = 8.75.  Version 21 scales
 * per channel, 18 per group. */
static void test_group_norm_18_21(void)
{
	static const double x[4] = { 1, 3, 5, 9 };
	double n[4], w21[4], w18[4];
	double inv = 1 / sqrt(8.75 + 1e-5);
	struct rt_value *out[1];

	for (int i = 0; i < 4; i++) {
		n[i] = (x[i] - 4.5) * inv;
		w21[i] = i < 2 ? n[i] : 2 * n[i] + 1;   /* scale [1, 2], bias [0, 1] */
		w18[i] = 2 * n[i] + 1;                  /* scale [2], bias [1] */
	}
	for (int v = 0; v < 2; v++) {
		struct ir_model *m = tm_new(v ? 21 : 18);
		struct ir_node *g;

		tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 1, 2), 4, x);
		if (v) {
			tm_init(m, "s", IR_DTYPE_FLOAT, TM_DIMS(2), 1, (const double[]){ 1, 2 });
			tm_init(m, "b", IR_DTYPE_FLOAT, TM_DIMS(2), 1, (const double[]){ 0, 1 });
		} else {
			tm_init(m, "s", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 2 });
			tm_init(m, "b", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 1 });
		}
		g = tm_node(m, "GroupNormalization", NULL, TM_NAMES("x", "s", "b"), 3,
			    TM_NAMES("y0"), 1);
		ir_node_set_int(g, "num_groups", 1);
		outputs(m, IR_DTYPE_FLOAT, 1);
		CU_ASSERT_FATAL(run(m, out, 1, NULL, 0) == 0);
		expect(out[0], v ? w21 : w18, 4, 1e-5);
		unref_all(out, 1);
		ir_model_free(m);
	}
}

/* Training mode: X = [1, 3] (N=2, C=1): batch mean 2, variance 1; running
 * mean 0 * 0.9 + 2 * 0.1 = 0.2, running var 1 * 0.9 + 1 * 0.1 = 1. */
static void test_batch_norm_training(void)
{
	struct ir_model *m = tm_new(15);
	struct rt_value *out[3];
	struct ir_node *n;
	double y = 1 / sqrt(1 + 1e-5);

	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 1), 2, (const double[]){ 1, 3 });
	tm_init(m, "s", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 1 });
	tm_init(m, "b", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 0 });
	tm_init(m, "mean", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 0 });
	tm_init(m, "var", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 1 });
	n = tm_node(m, "BatchNormalization", NULL, TM_NAMES("x", "s", "b", "mean", "var"), 5,
		    TM_NAMES("y0", "y1", "y2"), 3);
	ir_node_set_int(n, "training_mode", 1);
	outputs(m, IR_DTYPE_FLOAT, 3);
	CU_ASSERT_FATAL(run(m, out, 3, NULL, 0) == 0);
	expect(out[0], (const double[]){ -y, y }, 2, 1e-6);
	expect(out[1], (const double[]){ 0.2 }, 1, 1e-6);
	expect(out[2], (const double[]){ 1.0 }, 1, 1e-6);
	unref_all(out, 3);
	ir_model_free(m);
}

/* Seeded training-mode Dropout draws numpy's RandomState(0) uniforms
 * 0.5488135, 0.71518937, 0.60276338, 0.54488318, 0.4236548: with ratio
 * 0.6 only elements 1 and 2 stay, scaled by 1 / 0.4. */
static void test_dropout_seeded(void)
{
	struct ir_model *m = tm_new(13);
	struct rt_value *out[2];
	struct ir_node *n;

	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(5), 1, (const double[]){ 1, 2, 3, 4, 5 });
	tm_init(m, "r", IR_DTYPE_FLOAT, NULL, 0, (const double[]){ 0.6 });
	tm_init(m, "t", IR_DTYPE_BOOL, NULL, 0, (const double[]){ 1 });
	n = tm_node(m, "Dropout", NULL, TM_NAMES("x", "r", "t"), 3, TM_NAMES("y0", "y1"), 2);
	ir_node_set_int(n, "seed", 0);
	tm_output(m, "y0", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "y1", IR_DTYPE_BOOL, NULL, 0);
	CU_ASSERT_FATAL(run(m, out, 2, NULL, 0) == 0);
	expect(out[0], (const double[]){ 0, 5, 7.5, 0, 0 }, 5, 1e-5);
	expect(out[1], (const double[]){ 0, 1, 1, 0, 0 }, 5, 0);
	CU_ASSERT_EQUAL(out[1]->dtype, IR_DTYPE_BOOL);
	unref_all(out, 2);
	ir_model_free(m);
}

/* RMSNormalization of [3, 4]: mean square 12.5, scale [1, 2];
 * LpNormalization p=1 of [1, -3]: [1/4, -3/4]. */
static void test_rms_lp_norm(void)
{
	double r = 1 / sqrt(12.5 + 1e-5);
	struct rt_value *out[2];
	struct ir_model *m = tm_new(23);
	struct ir_node *n;

	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 2), 2, (const double[]){ 3, 4 });
	tm_init(m, "s", IR_DTYPE_FLOAT, TM_DIMS(2), 1, (const double[]){ 1, 2 });
	tm_init(m, "l", IR_DTYPE_DOUBLE, TM_DIMS(2), 1, (const double[]){ 1, -3 });
	tm_node(m, "RMSNormalization", NULL, TM_NAMES("x", "s"), 2, TM_NAMES("y0"), 1);
	n = tm_node(m, "LpNormalization", NULL, TM_NAMES("l"), 1, TM_NAMES("y1"), 1);
	ir_node_set_int(n, "p", 1);
	tm_output(m, "y0", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "y1", IR_DTYPE_DOUBLE, NULL, 0);
	CU_ASSERT_FATAL(run(m, out, 2, NULL, 0) == 0);
	expect(out[0], (const double[]){ 3 * r, 8 * r }, 2, 1e-6);
	expect(out[1], (const double[]){ 0.25, -0.75 }, 2, 1e-7);
	CU_ASSERT_EQUAL(out[1]->dtype, IR_DTYPE_DOUBLE);
	unref_all(out, 2);
	ir_model_free(m);
}

/* BatchNormalization writes in place into an input that dies with it
 * (x a graph input, so nothing here is a kept constant): t = Relu(x) dies
 * at the first BN (in place); u = Relu(x) feeds a BN and a Neg after it
 * (not in place: u must survive); a training-mode BN of a dying input
 * takes its statistics before writing.  x = [-1, 2, 4] as (3, 1): Relu
 * gives [0, 2, 4]; inference with scale 4, bias 1, mean 1, var 3 (eps 1)
 * gives 4 (v - 1) / 2 + 1 = 2 v - 1; training: mean 2, variance 8/3,
 * y = 4 (v - 2) / sqrt(8/3 + 1) + 1. */
static void test_batch_norm_in_place(void)
{
	struct ir_model *m = tm_new(15);
	struct rt_value *out[4];
	struct ir_node *n;
	double sd = sqrt(8.0 / 3 + 1);

	tm_input(m, "x0", IR_DTYPE_FLOAT, TM_DIMS(3), 1);
	tm_init(m, "shape", IR_DTYPE_INT64, TM_DIMS(2), 1, (const double[]){ 3, 1 });
	tm_init(m, "s", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 4 });
	tm_init(m, "b", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 1 });
	tm_init(m, "mean", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 1 });
	tm_init(m, "var", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 3 });
	tm_node(m, "Reshape", NULL, TM_NAMES("x0", "shape"), 2, TM_NAMES("x"), 1);
	tm_node(m, "Relu", NULL, TM_NAMES("x"), 1, TM_NAMES("t"), 1);
	n = tm_node(m, "BatchNormalization", NULL, TM_NAMES("t", "s", "b", "mean", "var"), 5,
		    TM_NAMES("y0"), 1);
	ir_node_set_float(n, "epsilon", 1);
	tm_node(m, "Relu", NULL, TM_NAMES("x"), 1, TM_NAMES("u"), 1);
	n = tm_node(m, "BatchNormalization", NULL, TM_NAMES("u", "s", "b", "mean", "var"), 5,
		    TM_NAMES("y1"), 1);
	ir_node_set_float(n, "epsilon", 1);
	tm_node(m, "Neg", NULL, TM_NAMES("u"), 1, TM_NAMES("y2"), 1);
	tm_node(m, "Relu", NULL, TM_NAMES("x"), 1, TM_NAMES("w"), 1);
	n = tm_node(m, "BatchNormalization", NULL, TM_NAMES("w", "s", "b", "mean", "var"), 5,
		    TM_NAMES("y3"), 1);
	ir_node_set_int(n, "training_mode", 1);
	ir_node_set_float(n, "epsilon", 1);
	outputs(m, IR_DTYPE_FLOAT, 4);
	tm_verify(m);
	CU_ASSERT_FATAL(tm_run_floats(m, (const double *const[]){ (const double[]){ -1, 2, 4 } },
				      out, 4) == 0);
	expect(out[0], (const double[]){ -1, 3, 7 }, 3, 1e-6);
	expect(out[1], (const double[]){ -1, 3, 7 }, 3, 1e-6);
	expect(out[2], (const double[]){ 0, -2, -4 }, 3, 1e-6);
	expect(out[3], (const double[]){ 4 * (0 - 2) / sd + 1, 4 * (2 - 2) / sd + 1,
					 4 * (4 - 2) / sd + 1 }, 3, 1e-6);
	unref_all(out, 4);
	ir_model_free(m);
}

/* LRN by its definition: y = x / (bias + alpha / size * sum of x^2 over
 * channels [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)])^beta,
 * for the betas the kernel takes by square roots (0.75, 0.5), by division
 * (1) and by pow (0.6), and an even size (window one channel longer above
 * than below). */
static void test_lrn_betas(void)
{
	static const double x[8] = { 1, -2, 3, 0.5, -1.5, 2.5, 4, -0.25 };   /* (1, 4, 1, 2) */
	static const double betas[] = { 0.75, 0.5, 1, 0.6 };

	for (int64_t size = 2; size <= 3; size++)
		for (size_t bi = 0; bi < sizeof(betas) / sizeof(betas[0]); bi++) {
			struct ir_model *m = tm_new(13);
			struct ir_node *n;
			struct rt_value *out;
			double want[8];
			int64_t lo = (size - 1) / 2, hi = size / 2;

			for (int c = 0; c < 4; c++)
				for (int j = 0; j < 2; j++) {
					double sq = 0;

					for (int64_t q = c - lo; q <= c + hi; q++)
						if (q >= 0 && q < 4)
							sq += x[q * 2 + j] * x[q * 2 + j];
					want[c * 2 + j] = x[c * 2 + j] /
							  pow(1.5 + 0.2 / (double)size * sq, betas[bi]);
				}
			tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 4, 1, 2), 4, x);
			n = tm_node(m, "LRN", NULL, TM_NAMES("x"), 1, TM_NAMES("y0"), 1);
			ir_node_set_int(n, "size", size);
			ir_node_set_float(n, "alpha", 0.2f);
			ir_node_set_float(n, "beta", (float)betas[bi]);
			ir_node_set_float(n, "bias", 1.5f);
			outputs(m, IR_DTYPE_FLOAT, 1);
			CU_ASSERT_FATAL(run(m, &out, 1, NULL, 0) == 0);
			expect(out, want, 8, 1e-6);
			rt_value_unref(out);
			ir_model_free(m);
		}
}

/* ---- recurrent ----------------------------------------------------- */

/* LSTM, hidden 1, input 1, W = [0, 0, 0, 1] (only the cell gate sees x),
 * R = 0, B = 0: i = o = f = sigmoid(0) = 1/2, so C_t = C/2 + tanh(x_t)/2
 * and H_t = tanh(C_t)/2.  Batch 0 = [1, 2, 3] (length 3), batch 1 =
 * [0.5, -1, pad] (length 2).  The reverse direction runs each sequence
 * from its own last valid step; steps past a length give zeros. */
static double cell(double c, double x)
{
	return c / 2 + tanh(x) / 2;
}

static void test_lstm_bidir_seqlens(void)
{
	struct ir_model *m = tm_new(14);
	struct rt_value *out[3];
	struct ir_node *n;
	double y[3 * 2 * 2], yh[4], yc[4];
	double cf0[3], cf1[2], cr0[3], cr1[2];
	const double x0[3] = { 1, 2, 3 }, x1[2] = { 0.5, -1 };

	cf0[0] = cell(0, x0[0]), cf0[1] = cell(cf0[0], x0[1]), cf0[2] = cell(cf0[1], x0[2]);
	cf1[0] = cell(0, x1[0]), cf1[1] = cell(cf1[0], x1[1]);
	cr0[2] = cell(0, x0[2]), cr0[1] = cell(cr0[2], x0[1]), cr0[0] = cell(cr0[1], x0[0]);
	cr1[1] = cell(0, x1[1]), cr1[0] = cell(cr1[1], x1[0]);
	/* Y [seq, dir, batch, 1] */
	for (int t = 0; t < 3; t++) {
		y[(t * 2 + 0) * 2 + 0] = tanh(cf0[t]) / 2;
		y[(t * 2 + 1) * 2 + 0] = tanh(cr0[t]) / 2;
		y[(t * 2 + 0) * 2 + 1] = t < 2 ? tanh(cf1[t]) / 2 : 0;
		y[(t * 2 + 1) * 2 + 1] = t < 2 ? tanh(cr1[t]) / 2 : 0;
	}
	yc[0] = cf0[2], yc[1] = cf1[1], yc[2] = cr0[0], yc[3] = cr1[0];
	for (int i = 0; i < 4; i++)
		yh[i] = tanh(yc[i]) / 2;
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(3, 2, 1), 3,
		(const double[]){ 1, 0.5, 2, -1, 3, 99 });
	tm_init(m, "w", IR_DTYPE_FLOAT, TM_DIMS(2, 4, 1), 3,
		(const double[]){ 0, 0, 0, 1, 0, 0, 0, 1 });
	tm_init(m, "r", IR_DTYPE_FLOAT, TM_DIMS(2, 4, 1), 3,
		(const double[]){ 0, 0, 0, 0, 0, 0, 0, 0 });
	tm_init(m, "len", IR_DTYPE_INT32, TM_DIMS(2), 1, (const double[]){ 3, 2 });
	n = tm_node(m, "LSTM", NULL, TM_NAMES("x", "w", "r", "", "len"), 5,
		    TM_NAMES("y0", "y1", "y2"), 3);
	ir_node_set_int(n, "hidden_size", 1);
	ir_node_set_string(n, "direction", "bidirectional");
	outputs(m, IR_DTYPE_FLOAT, 3);
	CU_ASSERT_FATAL(run(m, out, 3, NULL, 0) == 0);
	CU_ASSERT_EQUAL(out[0]->rank, 4);
	CU_ASSERT_EQUAL(out[0]->dims[1], 2);
	expect(out[0], y, 12, 1e-6);
	expect(out[1], yh, 4, 1e-6);
	expect(out[2], yc, 4, 1e-6);
	unref_all(out, 3);
	ir_model_free(m);
}

/* GRU with linear_before_reset, hidden 1: W = [0, 0, 1] (z, r, h), R =
 * [0, 0, 1], B = 0 except Rbh = 1: z = r = 1/2, h~ = tanh(x + r * (H + 1)),
 * H' = h~ / 2 + H / 2. */
static void test_gru_linear_before_reset(void)
{
	struct ir_model *m = tm_new(14);
	struct rt_value *out[1];
	struct ir_node *n;
	double h1 = tanh(1 + 0.5 * (0 + 1)) / 2;
	double h2 = tanh(-2 + 0.5 * (h1 + 1)) / 2 + h1 / 2;

	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 1, 1), 3, (const double[]){ 1, -2 });
	tm_init(m, "w", IR_DTYPE_FLOAT, TM_DIMS(1, 3, 1), 3, (const double[]){ 0, 0, 1 });
	tm_init(m, "r", IR_DTYPE_FLOAT, TM_DIMS(1, 3, 1), 3, (const double[]){ 0, 0, 1 });
	tm_init(m, "b", IR_DTYPE_FLOAT, TM_DIMS(1, 6), 2, (const double[]){ 0, 0, 0, 0, 0, 1 });
	n = tm_node(m, "GRU", NULL, TM_NAMES("x", "w", "r", "b"), 4, TM_NAMES("y0"), 1);
	ir_node_set_int(n, "hidden_size", 1);
	ir_node_set_int(n, "linear_before_reset", 1);
	outputs(m, IR_DTYPE_FLOAT, 1);
	CU_ASSERT_FATAL(run(m, out, 1, NULL, 0) == 0);
	expect(out[0], (const double[]){ h1, h2 }, 2, 1e-6);
	unref_all(out, 1);
	ir_model_free(m);
}

static void test_rnn_errors(void)
{
	struct ir_model *m = tm_new(14);
	struct rt_value *out[1] = { 0 };
	struct ir_node *n;
	char err[512];

	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 1, 3), 3, (const double[]){ 1, 2, 3, 4, 5, 6 });
	tm_init(m, "w", IR_DTYPE_FLOAT, TM_DIMS(1, 4, 2), 3, (const double[]){ 0, 0, 0, 0, 0, 0, 0, 0 });
	tm_init(m, "r", IR_DTYPE_FLOAT, TM_DIMS(1, 4, 1), 3, (const double[]){ 0, 0, 0, 0 });
	n = tm_node(m, "LSTM", NULL, TM_NAMES("x", "w", "r"), 3, TM_NAMES("y0"), 1);
	ir_node_set_int(n, "hidden_size", 1);
	outputs(m, IR_DTYPE_FLOAT, 1);
	CU_ASSERT(run(m, out, 1, err, sizeof(err)) < 0);
	CU_ASSERT(strstr(err, "LSTM") != NULL);
	CU_ASSERT(strstr(err, "input size 3") != NULL);
	ir_model_free(m);

	/* sequence_lens beyond the sequence */
	m = tm_new(14);
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 1), 3, (const double[]){ 1 });
	tm_init(m, "w", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 1), 3, (const double[]){ 1 });
	tm_init(m, "r", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 1), 3, (const double[]){ 1 });
	tm_init(m, "len", IR_DTYPE_INT32, TM_DIMS(1), 1, (const double[]){ 5 });
	n = tm_node(m, "RNN", NULL, TM_NAMES("x", "w", "r", "", "len"), 5, TM_NAMES("y0"), 1);
	ir_node_set_int(n, "hidden_size", 1);
	outputs(m, IR_DTYPE_FLOAT, 1);
	CU_ASSERT(run(m, out, 1, err, sizeof(err)) < 0);
	CU_ASSERT(strstr(err, "sequence_lens[0] = 5") != NULL);
	ir_model_free(m);
}

/* ---- quantization -------------------------------------------------- */

/* int4 x [2, 3], axis 1, scale [0.5, 2, 0.25], zero point [1, -2, 0]:
 * y = (x - zp) * scale. */
static void test_dequantize_int4_axis(void)
{
	struct ir_model *m = tm_new(21);
	struct rt_value *out[1];

	tm_init(m, "x", IR_DTYPE_INT4, TM_DIMS(2, 3), 2, (const double[]){ -8, 7, 3, 0, -1, 5 });
	tm_init(m, "s", IR_DTYPE_FLOAT, TM_DIMS(3), 1, (const double[]){ 0.5, 2, 0.25 });
	tm_init(m, "z", IR_DTYPE_INT4, TM_DIMS(3), 1, (const double[]){ 1, -2, 0 });
	tm_node(m, "DequantizeLinear", NULL, TM_NAMES("x", "s", "z"), 3, TM_NAMES("y0"), 1);
	outputs(m, IR_DTYPE_FLOAT, 1);
	CU_ASSERT_FATAL(run(m, out, 1, NULL, 0) == 0);
	expect(out[0], (const double[]){ -4.5, 18, 0.75, -0.5, 2, 1.25 }, 6, 0);
	unref_all(out, 1);
	ir_model_free(m);
}

/* Rounding half to even and saturation to int4 [-8, 7]; float8 e4m3fn
 * with saturate 1 clamps to 448 (0x7e), with 0 gives NaN (0x7f). */
static void test_quantize_int4_float8(void)
{
	static const double x[5] = { 2.5, 3.5, -2.5, 100, -100 };
	struct rt_value *out[1];

	for (int k = 0; k < 3; k++) {
		struct ir_model *m = tm_new(21);
		struct ir_node *n;

		tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(5), 1, x);
		tm_init(m, "s", IR_DTYPE_FLOAT, NULL, 0, (const double[]){ k ? 0.5 : 1 });
		n = tm_node(m, "QuantizeLinear", NULL, TM_NAMES("x", "s"), 2, TM_NAMES("y0"), 1);
		ir_node_set_int(n, "output_dtype", k ? IR_DTYPE_FLOAT8E4M3FN : IR_DTYPE_INT4);
		if (k == 2)
			ir_node_set_int(n, "saturate", 0);
		outputs(m, k ? IR_DTYPE_FLOAT8E4M3FN : IR_DTYPE_INT4, 1);
		CU_ASSERT_FATAL(run(m, out, 1, NULL, 0) == 0);
		if (!k) {
			CU_ASSERT_EQUAL(out[0]->dtype, IR_DTYPE_INT4);
			expect(out[0], (const double[]){ 2, 4, -2, 7, -8 }, 5, 0);
		} else {
			const uint8_t *b = out[0]->data;

			/* x / 0.5 = [5, 7, -5, 200, -200]; bias 7: 5 = 1.25 * 2^2
			 * is 0 1001 010; 200 = 1.5625 * 2^7 lies half way between
			 * 192 (0 1110 100) and 208 (0 1110 101): ties to even */
			CU_ASSERT_EQUAL(b[0], 0x4a);
			CU_ASSERT_EQUAL(b[3], 0x74);
			CU_ASSERT_EQUAL(b[1], 0x4e);     /* 7 = 1.75 * 2^2 */
			CU_ASSERT_EQUAL(b[2], 0xca);     /* -5 */
			CU_ASSERT_EQUAL(b[4], 0xf4);     /* -200 */
		}
		unref_all(out, 1);
		ir_model_free(m);
	}
	/* saturate: 1e6 / 1 to e4m3fn */
	for (int sat = 0; sat < 2; sat++) {
		struct ir_model *m = tm_new(21);
		struct ir_node *n;

		tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2), 1, (const double[]){ 1e6, -1e6 });
		tm_init(m, "s", IR_DTYPE_FLOAT, NULL, 0, (const double[]){ 1 });
		n = tm_node(m, "QuantizeLinear", NULL, TM_NAMES("x", "s"), 2, TM_NAMES("y0"), 1);
		ir_node_set_int(n, "output_dtype", IR_DTYPE_FLOAT8E4M3FN);
		ir_node_set_int(n, "saturate", sat);
		outputs(m, IR_DTYPE_FLOAT8E4M3FN, 1);
		CU_ASSERT_FATAL(run(m, out, 1, NULL, 0) == 0);
		CU_ASSERT_EQUAL(((uint8_t *)out[0]->data)[0], sat ? 0x7e : 0x7f);
		CU_ASSERT_EQUAL(((uint8_t *)out[0]->data)[1], sat ? 0xfe : 0xff);
		unref_all(out, 1);
		ir_model_free(m);
	}
}

/* Blocked: x [1, 4], block 2 along axis 1, scale [1, 2] = [[2, 4]]. */
static void test_quant_blocked_and_errors(void)
{
	struct ir_model *m = tm_new(21);
	struct rt_value *out[1];
	struct ir_node *n;
	char err[512];

	tm_init(m, "x", IR_DTYPE_INT8, TM_DIMS(1, 4), 2, (const double[]){ 1, 2, 3, 4 });
	tm_init(m, "s", IR_DTYPE_FLOAT, TM_DIMS(1, 2), 2, (const double[]){ 2, 4 });
	n = tm_node(m, "DequantizeLinear", NULL, TM_NAMES("x", "s"), 2, TM_NAMES("y0"), 1);
	ir_node_set_int(n, "block_size", 2);
	outputs(m, IR_DTYPE_FLOAT, 1);
	CU_ASSERT_FATAL(run(m, out, 1, NULL, 0) == 0);
	expect(out[0], (const double[]){ 2, 4, 12, 16 }, 4, 0);
	unref_all(out, 1);
	ir_model_free(m);

	/* a blocked scale of the wrong extent */
	m = tm_new(21);
	tm_init(m, "x", IR_DTYPE_INT8, TM_DIMS(1, 4), 2, (const double[]){ 1, 2, 3, 4 });
	tm_init(m, "s", IR_DTYPE_FLOAT, TM_DIMS(1, 3), 2, (const double[]){ 2, 4, 8 });
	n = tm_node(m, "DequantizeLinear", NULL, TM_NAMES("x", "s"), 2, TM_NAMES("y0"), 1);
	ir_node_set_int(n, "block_size", 2);
	outputs(m, IR_DTYPE_FLOAT, 1);
	CU_ASSERT(run(m, out, 1, err, sizeof(err)) < 0);
	CU_ASSERT(strstr(err, "block_size 2") != NULL);
	ir_model_free(m);

	/* per-axis scale of the wrong length */
	m = tm_new(13);
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3), 2, (const double[]){ 1, 2, 3, 4, 5, 6 });
	tm_init(m, "s", IR_DTYPE_FLOAT, TM_DIMS(2), 1, (const double[]){ 1, 1 });
	tm_node(m, "QuantizeLinear", NULL, TM_NAMES("x", "s"), 2, TM_NAMES("y0"), 1);
	outputs(m, IR_DTYPE_UINT8, 1);
	CU_ASSERT(run(m, out, 1, err, sizeof(err)) < 0);
	CU_ASSERT(strstr(err, "QuantizeLinear") != NULL);
	ir_model_free(m);
}

/* ---- attention ------------------------------------------------------ */

/* q = [1, 0], keys [1, 0] and [0, 1], values [1, 2] and [3, 4], scale
 * 1/sqrt(2): weights softmax([0.7071, 0]) = [p, 1 - p] with p = e^s /
 * (e^s + 1).  With is_causal and no past, query 0 sees key 0 only. */
static void test_attention_causal(void)
{
	double s = 1 / sqrt(2.0), p = exp(s) / (exp(s) + 1);
	struct rt_value *out[1];

	for (int causal = 0; causal < 2; causal++) {
		struct ir_model *m = tm_new(23);
		struct ir_node *n;

		tm_init(m, "q", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 1, 2), 4, (const double[]){ 1, 0 });
		tm_init(m, "k", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 2, 2), 4, (const double[]){ 1, 0, 0, 1 });
		tm_init(m, "v", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 2, 2), 4, (const double[]){ 1, 2, 3, 4 });
		n = tm_node(m, "Attention", NULL, TM_NAMES("q", "k", "v"), 3, TM_NAMES("y0"), 1);
		ir_node_set_int(n, "is_causal", causal);
		outputs(m, IR_DTYPE_FLOAT, 1);
		CU_ASSERT_FATAL(run(m, out, 1, NULL, 0) == 0);
		if (causal)
			expect(out[0], (const double[]){ 1, 2 }, 2, 1e-6);
		else
			expect(out[0], (const double[]){ p + 3 * (1 - p), 2 * p + 4 * (1 - p) }, 2, 1e-6);
		unref_all(out, 1);
		ir_model_free(m);
	}
}

/* Grouped query heads over 3-D inputs: two query heads of size 1 (q = 1
 * and -1) share one key/value head, keys [1, 2], values [10, 20], scale 1:
 * head 0 weights softmax([1, 2]), head 1 softmax([-1, -2]).  A float mask
 * of one column is padded with -inf to the two keys: both heads see only
 * key 0. */
static void test_attention_gqa_3d(void)
{
	double e = exp(1.0), y0 = (10 + 20 * e) / (1 + e), y1 = (10 * e + 20) / (1 + e);
	struct rt_value *out[1];

	for (int masked = 0; masked < 2; masked++) {
		struct ir_model *m = tm_new(23);
		struct ir_node *n;

		tm_init(m, "q", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 2), 3, (const double[]){ 1, -1 });
		tm_init(m, "k", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 1), 3, (const double[]){ 1, 2 });
		tm_init(m, "v", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 1), 3, (const double[]){ 10, 20 });
		tm_init(m, "m", IR_DTYPE_FLOAT, TM_DIMS(1, 1), 2, (const double[]){ 0 });
		n = tm_node(m, "Attention", NULL,
			    masked ? TM_NAMES("q", "k", "v", "m") : TM_NAMES("q", "k", "v"),
			    masked ? 4 : 3, TM_NAMES("y0"), 1);
		ir_node_set_int(n, "q_num_heads", 2);
		ir_node_set_int(n, "kv_num_heads", 1);
		outputs(m, IR_DTYPE_FLOAT, 1);
		CU_ASSERT_FATAL(run(m, out, 1, NULL, 0) == 0);
		CU_ASSERT_EQUAL(out[0]->rank, 3);
		if (masked)
			expect(out[0], (const double[]){ 10, 10 }, 2, 1e-5);
		else
			expect(out[0], (const double[]){ y0, y1 }, 2, 1e-5);
		unref_all(out, 1);
		ir_model_free(m);
	}
}

/* RotaryEmbedding 23, X (1, 1, 1, 4) = [1, 2, 3, 4] at position 1 of the
 * caches: full rotation with cos [0, 1], sin [1, 0] gives [-3, 2, 1, 4];
 * rotary_embedding_dim 2 with cos [0], sin [1] turns (x0, x1) only:
 * [-2, 1, 3, 4]. */
static void test_rotary_23(void)
{
	struct rt_value *out[1];

	for (int partial = 0; partial < 2; partial++) {
		struct ir_model *m = tm_new(23);
		struct ir_node *n;

		tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 1, 4), 4, (const double[]){ 1, 2, 3, 4 });
		if (partial) {
			tm_init(m, "cos", IR_DTYPE_FLOAT, TM_DIMS(2, 1), 2, (const double[]){ 1, 0 });
			tm_init(m, "sin", IR_DTYPE_FLOAT, TM_DIMS(2, 1), 2, (const double[]){ 0, 1 });
		} else {
			tm_init(m, "cos", IR_DTYPE_FLOAT, TM_DIMS(2, 2), 2, (const double[]){ 1, 1, 0, 1 });
			tm_init(m, "sin", IR_DTYPE_FLOAT, TM_DIMS(2, 2), 2, (const double[]){ 0, 0, 1, 0 });
		}
		tm_init(m, "pos", IR_DTYPE_INT64, TM_DIMS(1, 1), 2, (const double[]){ 1 });
		n = tm_node(m, "RotaryEmbedding", NULL, TM_NAMES("x", "cos", "sin", "pos"), 4,
			    TM_NAMES("y0"), 1);
		if (partial)
			ir_node_set_int(n, "rotary_embedding_dim", 2);
		outputs(m, IR_DTYPE_FLOAT, 1);
		CU_ASSERT_FATAL(run(m, out, 1, NULL, 0) == 0);
		if (partial)
			expect(out[0], (const double[]){ -2, 1, 3, 4 }, 4, 1e-6);
		else
			expect(out[0], (const double[]){ -3, 2, 1, 4 }, 4, 1e-6);
		unref_all(out, 1);
		ir_model_free(m);
	}
}

/* qk_matmul_output modes with softcap 3 and a float mask [0, -1]: q = 1,
 * keys 2 and 4, scale 1: 0 = [2, 4]; 1 = 3 tanh([2, 4] / 3); 2 = that
 * plus the mask; 3 = its softmax (softcap comes before the mask). */
static void test_attention_qk_modes(void)
{
	double c1 = 3 * tanh(2.0 / 3), c2 = 3 * tanh(4.0 / 3), m2 = c2 - 1;
	double p1 = exp(c1) / (exp(c1) + exp(m2));
	const double want[4][2] = { { 2, 4 }, { c1, c2 }, { c1, m2 }, { p1, 1 - p1 } };
	struct rt_value *out[2];

	for (int mode = 0; mode < 4; mode++) {
		struct ir_model *m = tm_new(23);
		struct ir_node *n;

		tm_init(m, "q", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 1, 1), 4, (const double[]){ 1 });
		tm_init(m, "k", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 2, 1), 4, (const double[]){ 2, 4 });
		tm_init(m, "v", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 2, 1), 4, (const double[]){ 10, 20 });
		tm_init(m, "m", IR_DTYPE_FLOAT, TM_DIMS(1, 2), 2, (const double[]){ 0, -1 });
		n = tm_node(m, "Attention", NULL, TM_NAMES("q", "k", "v", "m"), 4,
			    TM_NAMES("y0", "pk", "pv", "y1"), 4);
		ir_node_set_float(n, "scale", 1.0f);
		ir_node_set_float(n, "softcap", 3.0f);
		ir_node_set_int(n, "qk_matmul_output_mode", mode);
		outputs(m, IR_DTYPE_FLOAT, 2);
		CU_ASSERT_FATAL(run(m, out, 2, NULL, 0) == 0);
		expect(out[0], (const double[]){ 10 * p1 + 20 * (1 - p1) }, 1, 1e-5);
		expect(out[1], want[mode], 2, 1e-5);
		unref_all(out, 2);
		ir_model_free(m);
	}
}

static void test_attention_errors(void)
{
	struct ir_model *m = tm_new(23);
	struct rt_value *out[1];
	char err[512];

	/* 3 query heads over 2 key/value heads */
	tm_init(m, "q", IR_DTYPE_FLOAT, TM_DIMS(1, 3, 1, 2), 4, (const double[]){ 0, 0, 0, 0, 0, 0 });
	tm_init(m, "k", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 1, 2), 4, (const double[]){ 0, 0, 0, 0 });
	tm_init(m, "v", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 1, 2), 4, (const double[]){ 0, 0, 0, 0 });
	tm_node(m, "Attention", NULL, TM_NAMES("q", "k", "v"), 3, TM_NAMES("y0"), 1);
	outputs(m, IR_DTYPE_FLOAT, 1);
	CU_ASSERT(run(m, out, 1, err, sizeof(err)) < 0);
	CU_ASSERT(strstr(err, "heads 3/2/2") != NULL);
	ir_model_free(m);
}

/* LinearAttention, one head, d_k = d_v = 1, q = [1, 2], k = [1, 1],
 * v = [2, 3].  linear: state 2 then 5, output q * state = [2, 10].
 * gated_delta with decay ln(1/2) and beta [1, 1/2]: t0 state 0 -> v = 2,
 * state 2, out 2; t1 state 2/2 = 1, retrieved 1, v = (3 - 1)/2 = 1, state
 * 2, out 4. */
static void test_linear_attention(void)
{
	struct rt_value *out[2];

	for (int gd = 0; gd < 2; gd++) {
		struct ir_model *m = tm_new(27);
		struct ir_node *n;

		tm_init(m, "q", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 1), 3, (const double[]){ 1, 2 });
		tm_init(m, "k", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 1), 3, (const double[]){ 1, 1 });
		tm_init(m, "v", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 1), 3, (const double[]){ 2, 3 });
		tm_init(m, "g", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 1), 3,
			(const double[]){ log(0.5), log(0.5) });
		tm_init(m, "b", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 1), 3, (const double[]){ 1, 0.5 });
		n = tm_node(m, "LinearAttention", NULL,
			    gd ? TM_NAMES("q", "k", "v", "", "g", "b") : TM_NAMES("q", "k", "v"),
			    gd ? 6 : 3, TM_NAMES("y0", "y1"), 2);
		ir_node_set_int(n, "q_num_heads", 1);
		ir_node_set_int(n, "kv_num_heads", 1);
		if (!gd)
			ir_node_set_string(n, "update_rule", "linear");
		outputs(m, IR_DTYPE_FLOAT, 2);
		CU_ASSERT_FATAL(run(m, out, 2, NULL, 0) == 0);
		expect(out[0], gd ? (const double[]){ 2, 4 } : (const double[]){ 2, 10 }, 2, 1e-5);
		expect(out[1], (const double[]){ gd ? 2 : 5 }, 1, 1e-5);
		unref_all(out, 2);
		ir_model_free(m);
	}
}

/* ---- com.microsoft --------------------------------------------------- */

/* s = input + skip + bias = [2, 2, 2, 4]: mean 2.5, variance 0.75. */
static void test_skip_layer_norm(void)
{
	struct ir_model *m = tm_new(17);
	struct rt_value *out[4];
	double inv = 1 / sqrt(0.75 + 1e-12), a = -0.5 * inv;

	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 4), 3, (const double[]){ 1, 2, 3, 4 });
	tm_init(m, "skip", IR_DTYPE_FLOAT, TM_DIMS(1, 4), 2, (const double[]){ 1, 0, -1, 1 });
	tm_init(m, "g", IR_DTYPE_FLOAT, TM_DIMS(4), 1, (const double[]){ 1, 1, 1, 2 });
	tm_init(m, "be", IR_DTYPE_FLOAT, TM_DIMS(4), 1, (const double[]){ 0, 0, 0, 1 });
	tm_init(m, "bi", IR_DTYPE_FLOAT, TM_DIMS(4), 1, (const double[]){ 0, 0, 0, -1 });
	tm_node(m, "SkipLayerNormalization", MS, TM_NAMES("x", "skip", "g", "be", "bi"), 5,
		TM_NAMES("y0", "y1", "y2", "y3"), 4);
	outputs(m, IR_DTYPE_FLOAT, 4);
	CU_ASSERT_FATAL(run(m, out, 4, NULL, 0) == 0);
	expect(out[0], (const double[]){ a, a, a, 2 * 1.5 * inv + 1 }, 4, 1e-5);
	expect(out[1], (const double[]){ 2.5 }, 1, 1e-6);
	expect(out[2], (const double[]){ inv }, 1, 1e-5);
	expect(out[3], (const double[]){ 2, 2, 2, 4 }, 4, 0);
	unref_all(out, 4);
	ir_model_free(m);
}

/* x = [3, 4]: mean square 12.5; y = x / sqrt(12.5) * [1, 2]. */
static void test_simplified_layer_norm(void)
{
	struct ir_model *m = tm_new(17);
	struct rt_value *out[2];
	struct ir_node *n;
	double r = 1 / sqrt(12.5 + 1e-6);

	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 2), 2, (const double[]){ 3, 4 });
	tm_init(m, "s", IR_DTYPE_FLOAT, TM_DIMS(2), 1, (const double[]){ 1, 2 });
	n = tm_node(m, "SimplifiedLayerNormalization", MS, TM_NAMES("x", "s"), 2,
		    TM_NAMES("y0", "y1"), 2);
	ir_node_set_float(n, "epsilon", 1e-6f);
	outputs(m, IR_DTYPE_FLOAT, 2);
	CU_ASSERT_FATAL(run(m, out, 2, NULL, 0) == 0);
	expect(out[0], (const double[]){ 3 * r, 8 * r }, 2, 1e-6);
	expect(out[1], (const double[]){ r }, 1, 1e-6);
	unref_all(out, 2);
	ir_model_free(m);
}

/* 2 * [[1, 2], [3, 4]]^T [[5, 6], [7, 8]] = [[52, 60], [76, 88]].
 * transBatchA reads A (2, 1, 2) = [[[1, 2]], [[3, 4]]] as (1, 2, 2) =
 * [[1, 2], [3, 4]]: times diag(1, 2) gives [[1, 4], [3, 8]]. */
static void test_fused_matmul(void)
{
	struct ir_model *m = tm_new(17);
	struct rt_value *out[1];
	struct ir_node *n;

	tm_init(m, "a", IR_DTYPE_FLOAT, TM_DIMS(2, 2), 2, (const double[]){ 1, 2, 3, 4 });
	tm_init(m, "b", IR_DTYPE_FLOAT, TM_DIMS(2, 2), 2, (const double[]){ 5, 6, 7, 8 });
	n = tm_node(m, "FusedMatMul", MS, TM_NAMES("a", "b"), 2, TM_NAMES("y0"), 1);
	ir_node_set_int(n, "transA", 1);
	ir_node_set_float(n, "alpha", 2.0f);
	outputs(m, IR_DTYPE_FLOAT, 1);
	CU_ASSERT_FATAL(run(m, out, 1, NULL, 0) == 0);
	expect(out[0], (const double[]){ 52, 60, 76, 88 }, 4, 1e-5);
	unref_all(out, 1);
	ir_model_free(m);

	m = tm_new(17);
	tm_init(m, "a", IR_DTYPE_FLOAT, TM_DIMS(2, 1, 2), 3, (const double[]){ 1, 2, 3, 4 });
	tm_init(m, "b", IR_DTYPE_FLOAT, TM_DIMS(2, 2), 2, (const double[]){ 1, 0, 0, 2 });
	n = tm_node(m, "FusedMatMul", MS, TM_NAMES("a", "b"), 2, TM_NAMES("y0"), 1);
	ir_node_set_int(n, "transBatchA", 1);
	outputs(m, IR_DTYPE_FLOAT, 1);
	CU_ASSERT_FATAL(run(m, out, 1, NULL, 0) == 0);
	CU_ASSERT_EQUAL(out[0]->rank, 3);
	CU_ASSERT_EQUAL(out[0]->dims[0], 1);
	expect(out[0], (const double[]){ 1, 4, 3, 8 }, 4, 1e-6);
	unref_all(out, 1);
	ir_model_free(m);
}

/* position offset 1 selects cache row 1: cos [0, 1], sin [1, 0]: the pair
 * (x0, x2) turns by 90 degrees, (x1, x3) stays: [1, 2, 3, 4] ->
 * [-3, 2, 1, 4]; interleaved pairs (x0, x1), (x2, x3): [-2, 1, 3, 4]. */
static void test_ms_rotary(void)
{
	struct rt_value *out[1];

	for (int il = 0; il < 2; il++) {
		struct ir_model *m = tm_new(17);
		struct ir_node *n;

		tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 4), 3, (const double[]){ 1, 2, 3, 4 });
		tm_init(m, "pos", IR_DTYPE_INT64, TM_DIMS(1), 1, (const double[]){ 1 });
		tm_init(m, "cos", IR_DTYPE_FLOAT, TM_DIMS(2, 2), 2, (const double[]){ 1, 1, 0, 1 });
		tm_init(m, "sin", IR_DTYPE_FLOAT, TM_DIMS(2, 2), 2, (const double[]){ 0, 0, 1, 0 });
		n = tm_node(m, "RotaryEmbedding", MS, TM_NAMES("x", "pos", "cos", "sin"), 4,
			    TM_NAMES("y0"), 1);
		ir_node_set_int(n, "interleaved", il);
		outputs(m, IR_DTYPE_FLOAT, 1);
		CU_ASSERT_FATAL(run(m, out, 1, NULL, 0) == 0);
		if (il)
			expect(out[0], (const double[]){ -2, 1, 3, 4 }, 4, 1e-6);
		else
			expect(out[0], (const double[]){ -3, 2, 1, 4 }, 4, 1e-6);
		unref_all(out, 1);
		ir_model_free(m);
	}
}

/* The values of test_attention_causal through MultiHeadAttention (one
 * head); key_padding_mask [1, 0] leaves key 0 alone: output [1, 2]. */
static void test_mha(void)
{
	double s = 1 / sqrt(2.0), p = exp(s) / (exp(s) + 1);
	struct rt_value *out[1];

	for (int masked = 0; masked < 2; masked++) {
		struct ir_model *m = tm_new(17);
		struct ir_node *n;

		tm_init(m, "q", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 2), 3, (const double[]){ 1, 0 });
		tm_init(m, "k", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 2), 3, (const double[]){ 1, 0, 0, 1 });
		tm_init(m, "v", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 2), 3, (const double[]){ 1, 2, 3, 4 });
		tm_init(m, "kpm", IR_DTYPE_INT32, TM_DIMS(1, 2), 2, (const double[]){ 1, 0 });
		n = tm_node(m, "MultiHeadAttention", MS,
			    masked ? TM_NAMES("q", "k", "v", "", "kpm") : TM_NAMES("q", "k", "v"),
			    masked ? 5 : 3, TM_NAMES("y0"), 1);
		ir_node_set_int(n, "num_heads", 1);
		outputs(m, IR_DTYPE_FLOAT, 1);
		CU_ASSERT_FATAL(run(m, out, 1, NULL, 0) == 0);
		if (masked)
			expect(out[0], (const double[]){ 1, 2 }, 2, 1e-6);
		else
			expect(out[0], (const double[]){ p + 3 * (1 - p), 2 * p + 4 * (1 - p) }, 2, 1e-6);
		unref_all(out, 1);
		ir_model_free(m);
	}
}

/* com.microsoft Attention, one head of size 2, x = [1, 0], Wq = Wk = I,
 * Wv = diag(2, 3), bias 0 except bv = [1, 1]: q = k = [1, 0], v = [3, 1].
 * past key [0, 1], past value [10, 20]: weights softmax([0, 1/sqrt 2]) =
 * [1 - p, p]; present holds both keys and values. */
static void test_ms_attention_past(void)
{
	double s = 1 / sqrt(2.0), p = exp(s) / (exp(s) + 1);
	struct ir_model *m = tm_new(17);
	struct rt_value *out[2];
	struct ir_node *n;

	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 2), 3, (const double[]){ 1, 0 });
	tm_init(m, "w", IR_DTYPE_FLOAT, TM_DIMS(2, 6), 2,
		(const double[]){ 1, 0, 1, 0, 2, 0,
				  0, 1, 0, 1, 0, 3 });
	tm_init(m, "b", IR_DTYPE_FLOAT, TM_DIMS(6), 1, (const double[]){ 0, 0, 0, 0, 1, 1 });
	tm_init(m, "past", IR_DTYPE_FLOAT, TM_DIMS(2, 1, 1, 1, 2), 5,
		(const double[]){ 0, 1, 10, 20 });
	n = tm_node(m, "Attention", MS, TM_NAMES("x", "w", "b", "", "past"), 5,
		    TM_NAMES("y0", "y1"), 2);
	ir_node_set_int(n, "num_heads", 1);
	ir_node_set_int(n, "unidirectional", 1);
	outputs(m, IR_DTYPE_FLOAT, 2);
	CU_ASSERT_FATAL(run(m, out, 2, NULL, 0) == 0);
	expect(out[0], (const double[]){ 10 * (1 - p) + 3 * p, 20 * (1 - p) + p }, 2, 1e-5);
	expect(out[1], (const double[]){ 0, 1, 1, 0, 10, 20, 3, 1 }, 8, 1e-6);
	CU_ASSERT_EQUAL(out[1]->rank, 5);
	unref_all(out, 2);
	ir_model_free(m);

	/* the same through a shared buffer of 3 rows, 1 valid: the new key
	 * and value land in row 1, row 2 keeps what it held */
	m = tm_new(17);
	tm_init(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 2), 3, (const double[]){ 1, 0 });
	tm_init(m, "w", IR_DTYPE_FLOAT, TM_DIMS(2, 6), 2,
		(const double[]){ 1, 0, 1, 0, 2, 0,
				  0, 1, 0, 1, 0, 3 });
	tm_init(m, "b", IR_DTYPE_FLOAT, TM_DIMS(6), 1, (const double[]){ 0, 0, 0, 0, 1, 1 });
	tm_init(m, "past", IR_DTYPE_FLOAT, TM_DIMS(2, 1, 1, 3, 2), 5,
		(const double[]){ 0, 1, 7, 7, 7, 7, 10, 20, 7, 7, 7, 7 });
	tm_init(m, "plen", IR_DTYPE_INT32, NULL, 0, (const double[]){ 1 });
	n = tm_node(m, "Attention", MS, TM_NAMES("x", "w", "b", "", "past", "", "plen"), 7,
		    TM_NAMES("y0", "y1"), 2);
	ir_node_set_int(n, "num_heads", 1);
	ir_node_set_int(n, "past_present_share_buffer", 1);
	outputs(m, IR_DTYPE_FLOAT, 2);
	CU_ASSERT_FATAL(run(m, out, 2, NULL, 0) == 0);
	expect(out[0], (const double[]){ 10 * (1 - p) + 3 * p, 20 * (1 - p) + p }, 2, 1e-5);
	expect(out[1], (const double[]){ 0, 1, 1, 0, 7, 7, 10, 20, 3, 1, 7, 7 }, 12, 1e-6);
	unref_all(out, 2);
	ir_model_free(m);
}

static const struct unit_test tests[] = {
	{ "group_norm_18_21", test_group_norm_18_21 },
	{ "batch_norm_training", test_batch_norm_training },
	{ "dropout_seeded", test_dropout_seeded },
	{ "rms_lp_norm", test_rms_lp_norm },
	{ "lrn_betas", test_lrn_betas },
	{ "batch_norm_in_place", test_batch_norm_in_place },
	{ "lstm_bidir_seqlens", test_lstm_bidir_seqlens },
	{ "gru_linear_before_reset", test_gru_linear_before_reset },
	{ "rnn_errors", test_rnn_errors },
	{ "dequantize_int4_axis", test_dequantize_int4_axis },
	{ "quantize_int4_float8", test_quantize_int4_float8 },
	{ "quant_blocked_and_errors", test_quant_blocked_and_errors },
	{ "attention_causal", test_attention_causal },
	{ "attention_gqa_3d", test_attention_gqa_3d },
	{ "rotary_23", test_rotary_23 },
	{ "attention_qk_modes", test_attention_qk_modes },
	{ "attention_errors", test_attention_errors },
	{ "linear_attention", test_linear_attention },
	{ "skip_layer_norm", test_skip_layer_norm },
	{ "simplified_layer_norm", test_simplified_layer_norm },
	{ "fused_matmul", test_fused_matmul },
	{ "ms_rotary", test_ms_rotary },
	{ "mha", test_mha },
	{ "ms_attention_past", test_ms_attention_past },
	{ NULL, NULL },
};

int suite_knorm_register(void)
{
	return unit_add_suite("knorm", tests);
}
