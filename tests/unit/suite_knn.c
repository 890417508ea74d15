/* suite_knn.c: unit tests of conv, pool, matmul and quantized linear
 * kernels and of the gemm module, against values derived by hand (in the
 * comments) or by a naive loop written here, on what the backend test
 * data leaves out: groups with dilations, SAME_LOWER, 3-D, int8 pools,
 * ceil_mode, count_include_pad, threads, error paths. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tests/unit/suites.h"
#include "tests/unit/tmodel.h"
#include "runtime/kernels/gemm.h"

/* One operand: an initializer (dtype 0: an absent optional input). */
struct tin {
	int dtype;
	int rank;
	int64_t dims[6];
	const double *v;
};

#define F IR_DTYPE_FLOAT

/* A model of one node reading initializers i0.. and writing o0.. */
static struct ir_model *mk(int64_t opset, const char *op, const struct tin *ins,
			   size_t n_in, size_t n_out, struct ir_node **node)
{
	struct ir_model *m = tm_new(opset);
	char in_names[12][24], out_names[4][24];
	const char *in[12], *out[4];

	CU_ASSERT_FATAL(n_in <= 12 && n_out <= 4);

	for (size_t i = 0; i < n_in; i++) {
		snprintf(in_names[i], sizeof(in_names[i]), "i%zu", i);
		in[i] = ins[i].dtype ? in_names[i] : "";
		if (ins[i].dtype)
			tm_init(m, in_names[i], ins[i].dtype, ins[i].dims,
				(size_t)ins[i].rank, ins[i].v);
	}
	for (size_t i = 0; i < n_out; i++) {
		snprintf(out_names[i], sizeof(out_names[i]), "o%zu", i);
		out[i] = out_names[i];
		tm_output(m, out_names[i], 0, NULL, 0);
	}
	*node = tm_node(m, op, NULL, in, n_in, out, n_out);
	return m;
}

/* Run with `threads`; on failure msg (if given) gets the error. */
static int run(struct ir_model *m, int threads, struct rt_value **outs,
	       size_t n_out, char *msg)
{
	struct rt_opts o = { .threads = threads };
	struct rt_session *s = NULL;
	struct ir_diag d;
	int rc;

	ir_diag_init(&d);
	for (size_t i = 0; i < n_out; i++)
		outs[i] = NULL;
	if ((rc = rt_session_new(m, &o, &s, &d)) == 0)
		rc = rt_session_run(s, NULL, 0, outs, &d);
	rt_session_free(s);
	if (msg)
		snprintf(msg, 512, "%s", d.msg);
	else if (rc < 0)
		fprintf(stderr, "\nrun: %s\n", d.msg);
	return rc;
}

static void expect(const struct rt_value *v, const double *want, int64_t n,
		   double tol)
{
	CU_ASSERT_FATAL(v != NULL);
	CU_ASSERT_EQUAL_FATAL(v->numel, n);
	for (int64_t i = 0; i < n; i++) {
		double got = rt_value_get_f64(v, i);

		if (!(fabs(got - want[i]) <= tol)) {
			fprintf(stderr, "\nelement %lld: got %.9g, want %.9g\n",
				(long long)i, got, want[i]);
			CU_FAIL("value differs");
			return;
		}
	}
}

static void expect_dims(const struct rt_value *v, int rank, const int64_t *dims)
{
	CU_ASSERT_FATAL(v != NULL);
	CU_ASSERT_EQUAL_FATAL(v->rank, rank);
	for (int i = 0; i < rank; i++)
		CU_ASSERT_EQUAL(v->dims[i], dims[i]);
}

/* Build, run, check output 0 against want (and its dims), free. */
static void check1(struct ir_model *m, int threads, const double *want,
		   int64_t n, int rank, const int64_t *dims)
{
	struct rt_value *out = NULL;

	tm_verify(m);
	CU_ASSERT_EQUAL_FATAL(run(m, threads, &out, 1, NULL), 0);
	expect_dims(out, rank, dims);
	expect(out, want, n, 1e-5);
	rt_value_unref(out);
	ir_model_free(m);
}

/* The run fails with a message containing `part`. */
static void check_fails(struct ir_model *m, const char *part)
{
	struct rt_value *out = NULL;
	char msg[512];

	CU_ASSERT(run(m, 1, &out, 1, msg) < 0);
	if (!strstr(msg, part)) {
		fprintf(stderr, "\nmessage '%s' lacks '%s'\n", msg, part);
		CU_FAIL("wrong error");
	}
	rt_value_unref(out);
	ir_model_free(m);
}

/* ---- gemm module ------------------------------------------------------ */

static void test_gemm_api(void)
{
	/* A = [1 2 3; 4 5 6], B = [7 8; 9 10; 11 12]: AB = [58 64; 139 154] */
	const float a[6] = { 1, 2, 3, 4, 5, 6 }, at[6] = { 1, 4, 2, 5, 3, 6 };
	const float b[6] = { 7, 8, 9, 10, 11, 12 }, bt[6] = { 7, 9, 11, 8, 10, 12 };
	float c[8] = { 1, 1, -9, -9, 1, 1, -9, -9 };
	double ad[6], bd[6], cd[4] = { 0 };

	/* 2 * AB + 1 * C into a 2x2 block of a 2x4 buffer (ldc 4) */
	rt_gemm_f32(0, 0, 2, 2, 3, 2, a, 3, b, 2, 1, c, 4);
	CU_ASSERT_EQUAL(c[0], 117);
	CU_ASSERT_EQUAL(c[1], 129);
	CU_ASSERT_EQUAL(c[2], -9);
	CU_ASSERT_EQUAL(c[4], 279);
	CU_ASSERT_EQUAL(c[5], 309);
	/* transposed storage of both: same product, beta 0 ignores NaN */
	c[0] = c[1] = c[4] = c[5] = NAN;
	rt_gemm_f32(1, 1, 2, 2, 3, 1, at, 2, bt, 3, 0, c, 4);
	CU_ASSERT_EQUAL(c[0], 58);
	CU_ASSERT_EQUAL(c[1], 64);
	CU_ASSERT_EQUAL(c[4], 139);
	CU_ASSERT_EQUAL(c[5], 154);
	/* k == 0: C = beta * C */
	rt_gemm_f32(0, 0, 2, 2, 0, 1, a, 1, b, 2, 0.5f, c, 4);
	CU_ASSERT_EQUAL(c[0], 29);
	CU_ASSERT_EQUAL(c[5], 77);
	for (int i = 0; i < 6; i++) {
		ad[i] = a[i];
		bd[i] = b[i];
	}
	rt_gemm_f64_par(NULL, 0, 0, 2, 2, 3, 1, ad, 3, bd, 2, 0, cd, 2);
	CU_ASSERT_EQUAL(cd[0], 58);
	CU_ASSERT_EQUAL(cd[3], 154);
	/* a suggested kernel set is never the one in use */
	CU_ASSERT(*rt_gemm_coretype() != 0);
	{
		const char *better = rt_gemm_better_coretype();

		CU_ASSERT(!better || strcasecmp(better, rt_gemm_coretype()));
	}
}

/* One row or one column of C (the matrix-vector path) in every storage
 * of A and B, against the naive sum; beta 0 ignores NaN in C, beta 1
 * adds C (f64 too). */
static void test_gemm_vector_shapes(void)
{
	/* A: 3 x 4 (values i - j), B: 4 x 5 (values 2i + j) */
	float a[12], at[12], b[20], bt[20], c[16];
	double ad[12], bd[20], cd[16];

	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 4; j++)
			a[i * 4 + j] = at[j * 3 + i] = (float)(i - j);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 5; j++)
			b[i * 5 + j] = bt[j * 4 + i] = (float)(2 * i + j);
	for (int i = 0; i < 12; i++)
		ad[i] = a[i];
	for (int i = 0; i < 20; i++)
		bd[i] = b[i];
	for (int ta = 0; ta < 2; ta++)
		for (int tb = 0; tb < 2; tb++) {
			const float *ap = ta ? at : a, *bp = tb ? bt : b;
			int64_t lda = ta ? 3 : 4, ldb = tb ? 4 : 5;

			/* m == 1: row 1 of op(A) (offset to start there) times op(B) */
			for (int i = 0; i < 16; i++)
				c[i] = NAN;
			rt_gemm_f32(ta, tb, 1, 5, 4, 1, ap + (ta ? 1 : 4), lda, bp, ldb, 0, c, 5);
			for (int j = 0; j < 5; j++) {
				float want = 0;

				for (int t = 0; t < 4; t++)
					want += (float)(1 - t) * (float)(2 * t + j);
				CU_ASSERT_EQUAL(c[j], want);
			}
			/* n == 1: op(A) times column 2 of op(B), into column 1 of a
			 * 3 x 4 C (ldc 4), plus C = 10 */
			for (int i = 0; i < 16; i++)
				c[i] = 10;
			rt_gemm_f32(ta, tb, 3, 1, 4, 2, ap, lda, bp + (tb ? 8 : 2), ldb, 1, c + 1, 4);
			for (int i = 0; i < 3; i++) {
				float want = 10;

				for (int t = 0; t < 4; t++)
					want += 2 * (float)(i - t) * (float)(2 * t + 2);
				CU_ASSERT_EQUAL(c[i * 4 + 1], want);
				CU_ASSERT_EQUAL(c[i * 4], 10);
			}
		}
	for (int i = 0; i < 16; i++)
		cd[i] = NAN;
	rt_gemm_f64(0, 0, 1, 5, 4, 1, ad + 8, 4, bd, 5, 0, cd, 5);
	CU_ASSERT_EQUAL(cd[0], 2 * 0 + 1 * 2 + 0 * 4 - 1 * 6);
	CU_ASSERT_EQUAL(cd[4], 2 * 4 + 1 * 6 + 0 * 8 - 1 * 10);
}

/* ---- Conv ------------------------------------------------------------- */

static void test_conv_depthwise_dilated(void)
{
	/* ch0 [1..5] * [1,-1] dil 2: x[i] - x[i+2] = -2; ch1 [10..50] *
	 * [2,1]: 2x[i] + x[i+2] = 50, 80, 110; bias 0.5, -1 */
	static const double x[] = { 1, 2, 3, 4, 5, 10, 20, 30, 40, 50 };
	static const double w[] = { 1, -1, 2, 1 }, b[] = { 0.5, -1 };
	static const double want[] = { -1.5, -1.5, -1.5, 49, 79, 109 };
	struct tin in[] = { { F, 3, { 1, 2, 5 }, x }, { F, 3, { 2, 1, 2 }, w },
			    { F, 1, { 2 }, b } };

	for (int t = 1; t <= 2; t++) {
		struct ir_node *n;
		struct ir_model *m = mk(13, "Conv", in, 3, 1, &n);

		ir_node_set_int(n, "group", 2);
		ir_node_set_ints(n, "dilations", TM_DIMS(2), 1);
		check1(m, t, want, 6, 3, TM_DIMS(1, 2, 3));
	}
}

static void test_conv_groups_dilations(void)
{
	/* 4 channels, 2 groups of 2, kernel 2 with dilation 2 over length 3:
	 * y0 = 1*1 + 2*3 + 3*0 + 4*0 = 7, y1 = 1*1 - 1*1 + 2*2 + 1*2 = 6 */
	static const double x[] = { 1, 2, 3, 0, 1, 0, 1, 1, 1, 2, 0, 2 };
	static const double w[] = { 1, 2, 3, 4, 1, -1, 2, 1 };
	static const double want[] = { 7, 6 };
	struct tin in[] = { { F, 3, { 1, 4, 3 }, x }, { F, 3, { 2, 2, 2 }, w } };
	struct ir_node *n;
	struct ir_model *m = mk(11, "Conv", in, 2, 1, &n);

	ir_node_set_int(n, "group", 2);
	ir_node_set_ints(n, "dilations", TM_DIMS(2), 1);
	check1(m, 1, want, 2, 3, TM_DIMS(1, 2, 1));
}

static void test_conv_same_lower_upper(void)
{
	/* x = [1 2 3 4], w = [1 10]: one pad; SAME_UPPER pads the end:
	 * x[i] + 10 x[i+1] = 21 32 43 4; SAME_LOWER the start:
	 * x[i-1] + 10 x[i] = 10 21 32 43 */
	static const double x[] = { 1, 2, 3, 4 }, w[] = { 1, 10 };
	static const double up[] = { 21, 32, 43, 4 }, low[] = { 10, 21, 32, 43 };
	static const double up_s2[] = { 21, 43 };
	struct tin in[] = { { F, 3, { 1, 1, 4 }, x }, { F, 3, { 1, 1, 2 }, w } };
	struct ir_node *n;
	struct ir_model *m;

	m = mk(13, "Conv", in, 2, 1, &n);
	ir_node_set_string(n, "auto_pad", "SAME_UPPER");
	check1(m, 1, up, 4, 3, TM_DIMS(1, 1, 4));
	m = mk(13, "Conv", in, 2, 1, &n);
	ir_node_set_string(n, "auto_pad", "SAME_LOWER");
	check1(m, 1, low, 4, 3, TM_DIMS(1, 1, 4));
	/* stride 2: out 2, total pad (2-1)*2 + 2 - 4 = 0 */
	m = mk(13, "Conv", in, 2, 1, &n);
	ir_node_set_string(n, "auto_pad", "SAME_UPPER");
	ir_node_set_ints(n, "strides", TM_DIMS(2), 1);
	check1(m, 1, up_s2, 2, 3, TM_DIMS(1, 1, 2));
}

/* The generic (double) path: float16, bfloat16 and double tensors give
 * the float32 answer of test_conv_same_lower_upper, in their dtype. */
static void test_conv_other_dtypes(void)
{
	static const double x[] = { 1, 2, 3, 4 }, w[] = { 1, 10 };
	static const double up[] = { 21, 32, 43, 4 };
	static const int dts[] = { IR_DTYPE_FLOAT16, IR_DTYPE_BFLOAT16, IR_DTYPE_DOUBLE };

	for (size_t t = 0; t < 3; t++) {
		struct tin in[] = { { dts[t], 3, { 1, 1, 4 }, x }, { dts[t], 3, { 1, 1, 2 }, w } };
		struct rt_value *out;
		struct ir_node *n;
		struct ir_model *m = mk(22, "Conv", in, 2, 1, &n);

		ir_node_set_string(n, "auto_pad", "SAME_UPPER");
		tm_verify(m);
		CU_ASSERT_EQUAL_FATAL(run(m, 2, &out, 1, NULL), 0);
		CU_ASSERT_EQUAL(out->dtype, dts[t]);
		expect(out, up, 4, 0);
		rt_value_unref(out);
		ir_model_free(m);
	}
	/* bfloat16 MatMul: [1 2; 3 4] @ [1; 10] = [21; 43] */
	{
		static const double a[] = { 1, 2, 3, 4 }, b[] = { 1, 10 }, want[] = { 21, 43 };
		struct tin in[] = { { IR_DTYPE_BFLOAT16, 2, { 2, 2 }, a },
				    { IR_DTYPE_BFLOAT16, 2, { 2, 1 }, b } };
		struct ir_node *n;

		check1(mk(13, "MatMul", in, 2, 1, &n), 1, want, 2, 2, TM_DIMS(2, 1));
	}
}

static void test_conv_3d(void)
{
	/* x = 1..8 in 2x2x2, a 2x2x2 kernel of ones, pads 1: out 3x3x3 with
	 * y[0,0,0] = x[0,0,0] = 1, y[2,2,2] = 8, centre = 36, y[0,1,1] =
	 * sum of the first plane 1+2+3+4 = 10 */
	static const double x[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	static const double w[] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	struct tin in[] = { { F, 5, { 1, 1, 2, 2, 2 }, x },
			    { F, 5, { 1, 1, 2, 2, 2 }, w } };
	struct rt_value *out;
	struct ir_node *n;
	struct ir_model *m = mk(13, "Conv", in, 2, 1, &n);

	ir_node_set_ints(n, "pads", TM_DIMS(1, 1, 1, 1, 1, 1), 6);
	tm_verify(m);
	CU_ASSERT_EQUAL_FATAL(run(m, 2, &out, 1, NULL), 0);
	expect_dims(out, 5, TM_DIMS(1, 1, 3, 3, 3));
	CU_ASSERT_EQUAL(rt_value_get_f64(out, 0), 1);
	CU_ASSERT_EQUAL(rt_value_get_f64(out, 26), 8);
	CU_ASSERT_EQUAL(rt_value_get_f64(out, 13), 36);
	CU_ASSERT_EQUAL(rt_value_get_f64(out, 4), 10);
	rt_value_unref(out);
	ir_model_free(m);
}

/* A naive 2-D convolution written out loop by loop. */
static void naive_conv2d(const double *x, const double *w, int64_t n, int64_t c,
			 int64_t h, int64_t wd, int64_t m, int64_t kh, int64_t kw,
			 int64_t group, int64_t s, int64_t p, int64_t dl,
			 int64_t oh, int64_t ow, double *y)
{
	int64_t cg = c / group, mg = m / group;

	for (int64_t b = 0; b < n; b++)
		for (int64_t o = 0; o < m; o++)
			for (int64_t i = 0; i < oh; i++)
				for (int64_t j = 0; j < ow; j++) {
					double acc = 0;

					for (int64_t ci = 0; ci < cg; ci++)
						for (int64_t u = 0; u < kh; u++)
							for (int64_t v = 0; v < kw; v++) {
								int64_t yy = i * s - p + u * dl, xx = j * s - p + v * dl;
								int64_t ch = (o / mg) * cg + ci;

								if (yy < 0 || yy >= h || xx < 0 || xx >= wd)
									continue;
								acc += x[((b * c + ch) * h + yy) * wd + xx] *
								       w[((o * cg + ci) * kh + u) * kw + v];
							}
					y[((b * m + o) * oh + i) * ow + j] = acc;
				}
}

static double *lcg_fill(int64_t n, uint64_t seed)
{
	double *v = malloc((size_t)n * sizeof(double));

	CU_ASSERT_FATAL(v != NULL);
	for (int64_t i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		v[i] = (double)((seed >> 40) % 2001) / 1000.0 - 1.0;
	}
	return v;
}

/* Threaded paths (items over threads; im2col + split product) against the
 * naive loop. */
static void test_conv_threads_vs_naive(void)
{
	static const struct { int64_t n, c, h, m, k, group, s, p, dl; } cs[] = {
		{ 2, 4, 9, 6, 3, 2, 1, 1, 2 },
		{ 1, 16, 32, 32, 3, 1, 2, 1, 1 },
		{ 1, 8, 12, 8, 1, 1, 1, 0, 1 },
		{ 1, 6, 10, 12, 3, 6, 1, 1, 1 },
	};

	for (size_t t = 0; t < sizeof(cs) / sizeof(cs[0]); t++) {
		int64_t ek = (cs[t].k - 1) * cs[t].dl + 1;
		int64_t oh = (cs[t].h + 2 * cs[t].p - ek) / cs[t].s + 1;
		int64_t nx = cs[t].n * cs[t].c * cs[t].h * cs[t].h;
		int64_t nw = cs[t].m * (cs[t].c / cs[t].group) * cs[t].k * cs[t].k;
		int64_t ny = cs[t].n * cs[t].m * oh * oh;
		double *x = lcg_fill(nx, 1 + t), *w = lcg_fill(nw, 7 + t);
		double *want = malloc((size_t)ny * sizeof(double));
		struct tin in[] = {
			{ F, 4, { cs[t].n, cs[t].c, cs[t].h, cs[t].h }, x },
			{ F, 4, { cs[t].m, cs[t].c / cs[t].group, cs[t].k, cs[t].k }, w },
		};

		CU_ASSERT_FATAL(want != NULL);
		naive_conv2d(x, w, cs[t].n, cs[t].c, cs[t].h, cs[t].h, cs[t].m,
			     cs[t].k, cs[t].k, cs[t].group, cs[t].s, cs[t].p,
			     cs[t].dl, oh, oh, want);
		for (int th = 1; th <= 2; th++) {
			struct ir_node *n;
			struct ir_model *m = mk(13, "Conv", in, 2, 1, &n);
			struct rt_value *out;

			ir_node_set_int(n, "group", cs[t].group);
			ir_node_set_ints(n, "strides", TM_DIMS(cs[t].s, cs[t].s), 2);
			ir_node_set_ints(n, "dilations", TM_DIMS(cs[t].dl, cs[t].dl), 2);
			ir_node_set_ints(n, "pads", TM_DIMS(cs[t].p, cs[t].p, cs[t].p, cs[t].p), 4);
			tm_verify(m);
			CU_ASSERT_EQUAL_FATAL(run(m, th, &out, 1, NULL), 0);
			expect(out, want, ny, 1e-4);
			rt_value_unref(out);
			ir_model_free(m);
		}
		free(x);
		free(w);
		free(want);
	}
}

static void test_conv_errors(void)
{
	static const double z[4 * 3 * 3 * 3] = { 0 };
	struct tin in[] = { { F, 4, { 1, 3, 3, 3 }, z }, { F, 4, { 2, 2, 1, 1 }, z } };
	struct tin in2[] = { { F, 4, { 1, 3, 3, 3 }, z }, { F, 4, { 2, 3, 1, 1 }, z } };
	struct ir_node *n;

	check_fails(mk(13, "Conv", in, 2, 1, &n), "channel mismatch");
	check_fails(mk(13, "ConvTranspose", in, 2, 1, &n), "channel mismatch");
	n = NULL;
	{
		struct ir_model *m = mk(13, "Conv", in2, 2, 1, &n);

		ir_node_set_string(n, "auto_pad", "SAME");
		check_fails(m, "unsupported auto_pad 'SAME'");
	}
	{
		struct ir_model *m = mk(13, "Conv", in2, 2, 1, &n);

		ir_node_set_int(n, "group", 2);
		check_fails(m, "group 2 does not divide");
	}
}

/* ---- ConvTranspose, DeformConv, Col2Im, CausalConvWithState ----------- */

static void test_conv_transpose(void)
{
	/* x = [1 2], w = [1 1 1], stride 2: [1 1 1+2 2 2]; output_padding 1
	 * adds a trailing 0 */
	static const double x[] = { 1, 2 }, w[] = { 1, 1, 1 };
	static const double want[] = { 1, 1, 3, 2, 2, 0 };
	/* groups: ch0 [1 2] * [1 2] -> [1 4 4]; ch1 [3 4] * [1 -1] -> [3 1 -4] */
	static const double x2[] = { 1, 2, 3, 4 }, w2[] = { 1, 2, 1, -1 };
	static const double want2[] = { 1, 4, 4, 3, 1, -4 };
	struct tin in[] = { { F, 3, { 1, 1, 2 }, x }, { F, 3, { 1, 1, 3 }, w } };
	struct tin in2[] = { { F, 3, { 1, 2, 2 }, x2 }, { F, 3, { 2, 1, 2 }, w2 } };
	struct ir_node *n;
	struct ir_model *m;

	m = mk(11, "ConvTranspose", in, 2, 1, &n);
	ir_node_set_ints(n, "strides", TM_DIMS(2), 1);
	ir_node_set_ints(n, "output_padding", TM_DIMS(1), 1);
	check1(m, 1, want, 6, 3, TM_DIMS(1, 1, 6));
	m = mk(11, "ConvTranspose", in2, 2, 1, &n);
	ir_node_set_int(n, "group", 2);
	check1(m, 2, want2, 6, 3, TM_DIMS(1, 2, 3));
	/* SAME_UPPER with a 1-wide kernel and stride 2 over [1 2 3]: in *
	 * stride = 6 would need negative padding; the full 5 is kept:
	 * [1 0 2 0 3] */
	{
		static const double x3[] = { 1, 2, 3 }, w3[] = { 1 };
		static const double want4[] = { 1, 0, 2, 0, 3 };
		struct tin in3[] = { { F, 3, { 1, 1, 3 }, x3 }, { F, 3, { 1, 1, 1 }, w3 } };

		m = mk(11, "ConvTranspose", in3, 2, 1, &n);
		ir_node_set_ints(n, "strides", TM_DIMS(2), 1);
		ir_node_set_string(n, "auto_pad", "SAME_UPPER");
		check1(m, 1, want4, 5, 3, TM_DIMS(1, 1, 5));
	}
	/* output_shape 7 > 5: total padding -2 split as -1, -1 */
	m = mk(11, "ConvTranspose", in, 2, 1, &n);
	ir_node_set_ints(n, "strides", TM_DIMS(2), 1);
	ir_node_set_ints(n, "output_shape", TM_DIMS(7), 1);
	{
		static const double want3[] = { 0, 1, 1, 3, 2, 2, 0 };

		check1(m, 1, want3, 7, 3, TM_DIMS(1, 1, 7));
	}
}

static void test_deform_conv(void)
{
	/* x = 0..8 in 3x3, 1x1 kernel of 1, every offset (0, 0.5): samples
	 * halfway right, (x[i][j] + x[i][j+1]) / 2, with the outside 0:
	 * row 0: 0.5 1.5 1; a mask of 2 doubles it */
	static const double x[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8 }, w[] = { 1 };
	static double off[18], mask[9];
	static const double want[] = { 1, 3, 2, 7, 9, 5, 13, 15, 8 };
	struct tin in[] = { { F, 4, { 1, 1, 3, 3 }, x }, { F, 4, { 1, 1, 1, 1 }, w },
			    { F, 4, { 1, 2, 3, 3 }, off }, { 0, 0, { 0 }, NULL },
			    { F, 4, { 1, 1, 3, 3 }, mask } };
	struct ir_node *n;

	for (int i = 0; i < 9; i++) {
		off[i] = 0;
		off[9 + i] = 0.5;
		mask[i] = 2;
	}
	check1(mk(19, "DeformConv", in, 5, 1, &n), 1, want, 9, 4,
	       TM_DIMS(1, 1, 3, 3));
}

static void test_col2im(void)
{
	/* image 2x3, block 1x2: 4 blocks; row 0 of each block adds at its
	 * corner, row 1 one to the right: [[1 12 20] [3 34 40]] */
	static const double x[] = { 1, 2, 3, 4, 10, 20, 30, 40 };
	static const double img[] = { 2, 3 }, blk[] = { 1, 2 };
	static const double want[] = { 1, 12, 20, 3, 34, 40 };
	struct tin in[] = { { F, 3, { 1, 2, 4 }, x },
			    { IR_DTYPE_INT64, 1, { 2 }, img },
			    { IR_DTYPE_INT64, 1, { 2 }, blk } };
	struct ir_node *n;

	check1(mk(18, "Col2Im", in, 3, 1, &n), 1, want, 6, 4, TM_DIMS(1, 1, 2, 3));
}

static void test_causal_conv_state(void)
{
	/* seq = past [5 6] ++ x [1 2 3], taps [1 2 3]: 5+12+3 = 20,
	 * 6+2+6 = 14, 1+4+9 = 14, bias 1; present = [2 3] */
	static const double x[] = { 1, 2, 3 }, w[] = { 1, 2, 3 }, b[] = { 1 };
	static const double past[] = { 5, 6 };
	static const double want[] = { 21, 15, 15 }, st[] = { 2, 3 };
	struct tin in[] = { { F, 3, { 1, 1, 3 }, x }, { F, 3, { 1, 1, 3 }, w },
			    { F, 1, { 1 }, b }, { F, 3, { 1, 1, 2 }, past } };
	struct rt_value *out[2];
	struct ir_node *n;
	struct ir_model *m = mk(27, "CausalConvWithState", in, 4, 2, &n);

	tm_verify(m);
	CU_ASSERT_EQUAL_FATAL(run(m, 1, out, 2, NULL), 0);
	expect(out[0], want, 3, 1e-6);
	expect(out[1], st, 2, 1e-6);
	rt_value_unref(out[0]);
	rt_value_unref(out[1]);
	ir_model_free(m);
	/* no past: zeros in front: 3, 2+6, 1+4+9; silu(v) = v / (1 + e^-v) */
	{
		static const double want2[] = { 3 / (1 + 0.049787068367863944),
						8 / (1 + 0.00033546262790251185),
						14 / (1 + 8.315287191035679e-07) };

		m = mk(27, "CausalConvWithState", in, 2, 2, &n);
		ir_node_set_string(n, "activation", "silu");
		tm_verify(m);
		CU_ASSERT_EQUAL_FATAL(run(m, 1, out, 2, NULL), 0);
		expect(out[0], want2, 3, 1e-5);
		rt_value_unref(out[0]);
		rt_value_unref(out[1]);
		ir_model_free(m);
	}
}

/* ---- pools ------------------------------------------------------------ */

static void test_maxpool_int8_indices(void)
{
	/* 3x3 int8, 2x2 windows: maxima 7 (index 3), 3 (1), 127 (7), 127
	 * (7); column-major indices h + 3w: 1, 3, 5, 5 */
	static const double x[] = { -5, 3, -128, 7, -1, 2, 0, 127, -3 };
	static const double want[] = { 7, 3, 127, 127 };
	static const double idx[] = { 3, 1, 7, 7 }, idx_cm[] = { 1, 3, 5, 5 };
	struct tin in[] = { { IR_DTYPE_INT8, 4, { 1, 1, 3, 3 }, x } };

	for (int order = 0; order < 2; order++) {
		struct rt_value *out[2];
		struct ir_node *n;
		struct ir_model *m = mk(12, "MaxPool", in, 1, 2, &n);

		ir_node_set_ints(n, "kernel_shape", TM_DIMS(2, 2), 2);
		ir_node_set_int(n, "storage_order", order);
		tm_verify(m);
		CU_ASSERT_EQUAL_FATAL(run(m, 1, out, 2, NULL), 0);
		CU_ASSERT_EQUAL(out[0]->dtype, IR_DTYPE_INT8);
		expect(out[0], want, 4, 0);
		expect(out[1], order ? idx_cm : idx, 4, 0);
		rt_value_unref(out[0]);
		rt_value_unref(out[1]);
		ir_model_free(m);
	}
}

static void test_maxpool_ceil(void)
{
	/* 4x4 = 1..16, kernel 3, stride 2: floor gives one window (max 11);
	 * ceil two per dim, the second clipped: 11 12 15 16 */
	static double x[16];
	static const double want[] = { 11, 12, 15, 16 }, want_floor[] = { 11 };
	struct tin in[] = { { F, 4, { 1, 1, 4, 4 }, x } };
	struct ir_node *n;
	struct ir_model *m;

	for (int i = 0; i < 16; i++)
		x[i] = i + 1;
	m = mk(12, "MaxPool", in, 1, 1, &n);
	ir_node_set_ints(n, "kernel_shape", TM_DIMS(3, 3), 2);
	ir_node_set_ints(n, "strides", TM_DIMS(2, 2), 2);
	ir_node_set_int(n, "ceil_mode", 1);
	check1(m, 1, want, 4, 4, TM_DIMS(1, 1, 2, 2));
	m = mk(12, "MaxPool", in, 1, 1, &n);
	ir_node_set_ints(n, "kernel_shape", TM_DIMS(3, 3), 2);
	ir_node_set_ints(n, "strides", TM_DIMS(2, 2), 2);
	check1(m, 1, want_floor, 1, 4, TM_DIMS(1, 1, 1, 1));
	/* 1-D length 4, kernel 2, stride 2, end pad 1, ceil: 3 windows by
	 * the formula but the third starts in the padding: dropped */
	{
		static const double x1[] = { 1, 5, 2, 4 }, want1[] = { 5, 4 };
		struct tin in1[] = { { F, 3, { 1, 1, 4 }, x1 } };

		m = mk(12, "MaxPool", in1, 1, 1, &n);
		ir_node_set_ints(n, "kernel_shape", TM_DIMS(2), 1);
		ir_node_set_ints(n, "strides", TM_DIMS(2), 1);
		ir_node_set_ints(n, "pads", TM_DIMS(0, 1), 2);
		ir_node_set_int(n, "ceil_mode", 1);
		check1(m, 1, want1, 2, 3, TM_DIMS(1, 1, 2));
		/* kernel 3 with dilation 2 spans 5 > 4: ceil keeps one window
		 * starting in the input (taps 0 and 2 inside: max(1, 2) = 2);
		 * floor leaves an empty output, as onnxruntime does */
		{
			static const double want2[] = { 2 };

			m = mk(12, "MaxPool", in1, 1, 1, &n);
			ir_node_set_ints(n, "kernel_shape", TM_DIMS(3), 1);
			ir_node_set_ints(n, "dilations", TM_DIMS(2), 1);
			ir_node_set_ints(n, "strides", TM_DIMS(3), 1);
			ir_node_set_int(n, "ceil_mode", 1);
			check1(m, 1, want2, 1, 3, TM_DIMS(1, 1, 1));
			m = mk(12, "MaxPool", in1, 1, 1, &n);
			ir_node_set_ints(n, "kernel_shape", TM_DIMS(3), 1);
			ir_node_set_ints(n, "dilations", TM_DIMS(2), 1);
			check1(m, 1, want2, 0, 3, TM_DIMS(1, 1, 0));
		}
	}
}

/* Stride-1 max and average pools whose output is as large as the input
 * (the separable path, k_pool_same.c) against the definition: symmetric
 * and lopsided pads, windows as wide as the plane, a one-column plane, a
 * NaN (it wins every max window and spoils every average it is in),
 * averages over the taps inside and (count_include_pad) over all, one and
 * two threads. */
static double same_pool_at(const double *x, int64_t h, int64_t w, int64_t c, int64_t a,
			   int64_t b, int64_t kh, int64_t kw, const int64_t *pads, int kind)
{
	double mx = -INFINITY, sum = 0;
	int64_t cnt = 0;

	for (int64_t u = 0; u < kh; u++)
		for (int64_t v = 0; v < kw; v++) {
			int64_t r = a + u - pads[0], q = b + v - pads[1];
			double e;

			if (r < 0 || r >= h || q < 0 || q >= w)
				continue;
			e = x[(c * h + r) * w + q];
			mx = e != e || mx != mx ? NAN : (e > mx ? e : mx);
			sum += e;
			cnt++;
		}
	return kind == 0 ? mx : sum / (double)(kind == 2 ? kh * kw : cnt);
}

static void test_pool_same(void)
{
	static const struct {
		int64_t h, w, kh, kw, pads[4];
	} cases[] = {
		{ 5, 7, 3, 3, { 1, 1, 1, 1 } }, { 6, 7, 5, 5, { 2, 2, 2, 2 } },
		{ 5, 6, 2, 2, { 0, 0, 1, 1 } }, { 5, 7, 3, 2, { 1, 0, 1, 1 } },
		{ 4, 1, 3, 3, { 1, 1, 1, 1 } }, { 3, 4, 3, 7, { 1, 3, 1, 3 } },
	};

	for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++)
		for (int kind = 0; kind < 3; kind++)   /* max, average, average with pads */
			for (int nan = 0; nan <= 1; nan++) {
				int64_t h = cases[ci].h, w = cases[ci].w, np = 3 * h * w;
				double x[3 * 6 * 7], want[3 * 6 * 7];
				struct tin in[] = { { F, 4, { 1, 3, h, w }, x } };

				for (int64_t i = 0; i < np; i++)
					x[i] = (double)((i * 37 + 11) % 23) - 11;
				if (nan)
					x[np / 2] = NAN;
				for (int64_t c = 0; c < 3; c++)
					for (int64_t a = 0; a < h; a++)
						for (int64_t b = 0; b < w; b++)
							want[(c * h + a) * w + b] =
								same_pool_at(x, h, w, c, a, b, cases[ci].kh,
									     cases[ci].kw, cases[ci].pads, kind);
				for (int th = 1; th <= 2; th++) {
					struct ir_node *n;
					struct ir_model *m = mk(12, kind ? "AveragePool" : "MaxPool", in, 1, 1, &n);
					struct rt_value *out = NULL;

					ir_node_set_ints(n, "kernel_shape",
							 TM_DIMS(cases[ci].kh, cases[ci].kw), 2);
					ir_node_set_ints(n, "pads", cases[ci].pads, 4);
					if (kind == 2)
						ir_node_set_int(n, "count_include_pad", 1);
					tm_verify(m);
					CU_ASSERT_EQUAL_FATAL(run(m, th, &out, 1, NULL), 0);
					expect_dims(out, 4, TM_DIMS(1, 3, h, w));
					for (int64_t i = 0; i < np; i++) {
						double got = rt_value_get_f64(out, i);

						if (!(fabs(got - want[i]) <= 1e-5 * (1 + fabs(want[i])) ||
						      (got != got && want[i] != want[i]))) {
							fprintf(stderr, "\ncase %zu kind %d nan %d: y[%lld] = %g, want %g\n",
								ci, kind, nan, (long long)i, got, want[i]);
							CU_FAIL("pool differs");
							break;
						}
					}
					rt_value_unref(out);
					ir_model_free(m);
				}
			}
}

/* 1-D pools, and 3-D ones whose window leaves the depth alone (k_pool.c
 * runs both on the 2-D float32 kernels, pool_as_2d), and 3-D ones
 * windowed over the depth (k_pool_nd.c; rows of 300 outputs: more than
 * one block of its accumulators), against the
 * definition in double: max, average over the taps inside and over the
 * padded window (count_include_pad), pads at either end, strides,
 * dilations (max), floor and ceil output sizes, an average over no tap
 * (a window in the end pads: NaN); batch 2 of 3 channels,
 * one and two threads.  sp: D, H, W (1-D: L in W). */
static void nd_pool_case(int nsp, const int64_t *in, const int64_t *k, const int64_t *st,
			 const int64_t *dl, const int64_t *pads, int ceil_mode, int kind)
{
	int64_t out[3], n = 2, c = 3, nx = n * c, ny = n * c;
	double *x, *want;
	int lead = 3 - nsp;

	for (int d = 0; d < 3; d++) {
		int64_t pb = d < lead ? 0 : pads[d - lead], pe = d < lead ? 0 : pads[nsp + d - lead];
		int64_t eff = (k[d] - 1) * dl[d] + 1, span = in[d] + pb + pe - eff;

		out[d] = (ceil_mode ? (span + st[d] - 1) / st[d] : span / st[d]) + 1;
		if (ceil_mode && (out[d] - 1) * st[d] >= in[d] + pb)
			out[d]--;
		nx *= in[d];
		ny *= out[d];
	}
	x = malloc((size_t)nx * sizeof(double));
	want = malloc((size_t)ny * sizeof(double));
	CU_ASSERT_FATAL(x != NULL && want != NULL);
	for (int64_t i = 0; i < nx; i++)
		x[i] = (double)((i * 37 + 11) % 29) - 14 + 0.25 * (double)(i % 3);
	for (int64_t pl = 0, o = 0; pl < n * c; pl++)
		for (int64_t z = 0; z < out[0]; z++)
			for (int64_t a = 0; a < out[1]; a++)
				for (int64_t b = 0; b < out[2]; b++, o++) {
					double mx = -INFINITY, sum = 0;
					int64_t cnt = 0, all = 0, at[3] = { z, a, b };

					for (int64_t t = 0; t < k[0] * k[1] * k[2]; t++) {
						int64_t tap[3] = { t / (k[1] * k[2]), t / k[2] % k[1], t % k[2] };
						int64_t off = 0, inside = 1, padded = 1;

						for (int d = 0; d < 3; d++) {
							int64_t pb = d < lead ? 0 : pads[d - lead];
							int64_t pe = d < lead ? 0 : pads[nsp + d - lead];
							int64_t i = at[d] * st[d] - pb + tap[d] * dl[d];

							inside &= i >= 0 && i < in[d];
							padded &= i >= -pb && i < in[d] + pe;
							off = off * in[d] + i;
						}
						all += padded;
						if (!inside)
							continue;
						mx = x[pl * (nx / (n * c)) + off] > mx ? x[pl * (nx / (n * c)) + off] : mx;
						sum += x[pl * (nx / (n * c)) + off];
						cnt++;
					}
					want[o] = kind == 0 ? mx : sum / (double)(kind == 2 ? all : cnt);
				}
	for (int th = 1; th <= 2; th++) {
		struct tin tn[] = { { F, nsp + 2, { n, c, in[lead], nsp > 1 ? in[lead + 1] : 0,
						    nsp > 2 ? in[2] : 0 }, x } };
		struct ir_node *nd;
		struct ir_model *m = mk(19, kind ? "AveragePool" : "MaxPool", tn, 1, 1, &nd);
		struct rt_value *y = NULL;

		ir_node_set_ints(nd, "kernel_shape", k + lead, (size_t)nsp);
		ir_node_set_ints(nd, "strides", st + lead, (size_t)nsp);
		ir_node_set_ints(nd, "dilations", dl + lead, (size_t)nsp);
		ir_node_set_ints(nd, "pads", pads, 2 * (size_t)nsp);
		ir_node_set_int(nd, "ceil_mode", ceil_mode);
		if (kind == 2)
			ir_node_set_int(nd, "count_include_pad", 1);
		tm_verify(m);
		CU_ASSERT_EQUAL_FATAL(run(m, th, &y, 1, NULL), 0);
		CU_ASSERT_EQUAL(y->numel, ny);
		for (int64_t i = 0; i < ny && i < y->numel; i++)
			if (!(fabs(rt_value_get_f64(y, i) - want[i]) <= 1e-6 * (1 + fabs(want[i])) ||
			      (want[i] != want[i] && rt_value_get_f64(y, i) != rt_value_get_f64(y, i)))) {
				fprintf(stderr, "\n%d-D kind %d: y[%lld] = %g, want %g\n", nsp, kind,
					(long long)i, rt_value_get_f64(y, i), want[i]);
				CU_FAIL("pool differs");
				break;
			}
		rt_value_unref(y);
		ir_model_free(m);
	}
	free(x);
	free(want);
}

static void test_pool_nd_as_2d(void)
{
	static const struct {
		int nsp;
		int64_t in[3], k[3], st[3], dl[3], pads[6];
		int ceil_mode;
	} cases[] = {
		{ 1, { 1, 1, 29 }, { 1, 1, 3 }, { 1, 1, 2 }, { 1, 1, 1 }, { 1, 1 }, 1 },
		{ 1, { 1, 1, 23 }, { 1, 1, 4 }, { 1, 1, 1 }, { 1, 1, 2 }, { 0, 2 }, 0 },
		{ 1, { 1, 1, 40 }, { 1, 1, 5 }, { 1, 1, 3 }, { 1, 1, 1 }, { 2, 0 }, 0 },
		{ 3, { 3, 11, 13 }, { 1, 3, 3 }, { 1, 2, 2 }, { 1, 1, 1 }, { 0, 1, 1, 0, 1, 0 }, 1 },
		{ 3, { 2, 12, 10 }, { 1, 2, 2 }, { 1, 2, 2 }, { 1, 1, 1 }, { 0, 0, 0, 0, 0, 0 }, 0 },
		{ 3, { 4, 9, 9 }, { 1, 3, 3 }, { 1, 1, 1 }, { 1, 1, 1 }, { 0, 1, 1, 0, 1, 1 }, 0 },
		/* the depth windowed (k_pool_nd.c), held to the same rule */
		{ 3, { 4, 6, 7 }, { 2, 2, 3 }, { 2, 1, 2 }, { 1, 1, 1 }, { 1, 0, 1, 0, 1, 1 }, 1 },
		{ 3, { 5, 9, 300 }, { 3, 3, 3 }, { 2, 2, 2 }, { 1, 1, 1 }, { 1, 1, 1, 1, 1, 1 }, 1 },
		{ 3, { 6, 7, 8 }, { 2, 2, 2 }, { 1, 2, 1 }, { 2, 1, 2 }, { 0, 1, 0, 1, 0, 2 }, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (int kind = 0; kind < 3; kind++) {
			static const int64_t one[3] = { 1, 1, 1 };

			/* average pools take no dilations here (onnxruntime's
			 * CPU kernel has none before opset 19's) */
			nd_pool_case(cases[i].nsp, cases[i].in, cases[i].k, cases[i].st,
				     kind ? one : cases[i].dl, cases[i].pads, cases[i].ceil_mode, kind);
		}
}

/* Max pools of column stride 2 (the AVX-512 path, k_pool_s2.c) against
 * the definition: windows 2 and 3 wide and 2 to 5 high, rows long enough
 * for whole blocks of 16 outputs and a short last block, floor and ceil
 * output sizes, lopsided pads (also in the last lanes of a block), row
 * strides 1 to 3; six planes: finite (the fast path's), a NaN,
 * infinities of both signs, values whose rows' sum overflows, a NaN only
 * in a window's second row, where the fast path's vmaxps drops it (the
 * four the plane is redone for), and negative values (a pad read as 0
 * would show). */
static int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t pb, int64_t pe, int ceil_mode)
{
	int64_t span = in + pb + pe - k, o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;

	if (ceil_mode && (o - 1) * s >= in + pb)
		o--;   /* a last window starting in the end padding is dropped */
	return o;
}

static void test_maxpool_stride2(void)
{
	static const struct {
		int64_t h, w, kh, kw, sh, pads[4];
		int ceil_mode;
	} cases[] = {
		{ 9, 40, 3, 3, 2, { 0, 0, 0, 0 }, 0 }, { 9, 41, 3, 3, 2, { 0, 0, 0, 0 }, 1 },
		{ 8, 70, 2, 2, 2, { 0, 0, 0, 0 }, 0 }, { 7, 37, 3, 2, 3, { 1, 0, 1, 1 }, 0 },
		{ 6, 33, 3, 3, 1, { 1, 1, 1, 1 }, 1 }, { 5, 66, 2, 3, 2, { 0, 1, 1, 0 }, 1 },
		{ 4, 5, 3, 3, 2, { 0, 0, 0, 0 }, 1 }, { 11, 50, 5, 3, 2, { 2, 1, 2, 1 }, 0 },
		/* pads at lane 32 of a whole block, and at lanes 31 and 32 */
		{ 6, 32, 3, 3, 2, { 0, 0, 0, 1 }, 0 }, { 5, 31, 2, 3, 2, { 0, 0, 1, 2 }, 0 },
	};

	for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++) {
		int64_t h = cases[ci].h, w = cases[ci].w;
		int64_t oh = pool_out(h, cases[ci].kh, cases[ci].sh, cases[ci].pads[0],
				      cases[ci].pads[2], cases[ci].ceil_mode);
		int64_t ow = pool_out(w, cases[ci].kw, 2, cases[ci].pads[1], cases[ci].pads[3],
				      cases[ci].ceil_mode);
		double *x = malloc((size_t)(6 * h * w) * sizeof(double));
		double *want = malloc((size_t)(6 * oh * ow + 1) * sizeof(double));
		struct tin in[] = { { F, 4, { 1, 6, h, w }, x } };

		CU_ASSERT_FATAL(x != NULL && want != NULL);
		for (int64_t i = 0; i < 5 * h * w; i++)
			x[i] = (double)((i * 41 + 7) % 29) - 14;
		x[h * w + (2 * w + 20) % (h * w)] = NAN;   /* in the second plane */
		x[2 * h * w + (w + 3) % (h * w)] = INFINITY;
		x[2 * h * w + (3 * w + 17) % (h * w)] = -INFINITY;
		for (int64_t i = 3 * h * w; i < 4 * h * w; i++)
			x[i] = (float)(3e38 - (double)((i * 13) % 7) * 1e37);
		x[4 * h * w + w + 25 % w] = NAN;   /* a window's second row, past 16 columns */
		for (int64_t i = 5 * h * w; i < 6 * h * w; i++)
			x[i] = -1.0 - (double)((i * 7) % 13);   /* pads must not count as 0 */
		for (int64_t c = 0; c < 6; c++)
			for (int64_t a = 0; a < oh; a++)
				for (int64_t b = 0; b < ow; b++) {
					double mx = -INFINITY;

					for (int64_t u = 0; u < cases[ci].kh; u++)
						for (int64_t v = 0; v < cases[ci].kw; v++) {
							int64_t r = a * cases[ci].sh - cases[ci].pads[0] + u;
							int64_t q = b * 2 - cases[ci].pads[1] + v;
							double e;

							if (r < 0 || r >= h || q < 0 || q >= w)
								continue;
							e = x[(c * h + r) * w + q];
							mx = e != e || mx != mx ? NAN : (e > mx ? e : mx);
						}
					want[(c * oh + a) * ow + b] = mx;
				}
		for (int th = 1; th <= 2; th++) {
			struct ir_node *n;
			struct ir_model *m = mk(12, "MaxPool", in, 1, 1, &n);
			struct rt_value *out = NULL;

			ir_node_set_ints(n, "kernel_shape", TM_DIMS(cases[ci].kh, cases[ci].kw), 2);
			ir_node_set_ints(n, "strides", TM_DIMS(cases[ci].sh, 2), 2);
			ir_node_set_ints(n, "pads", cases[ci].pads, 4);
			ir_node_set_int(n, "ceil_mode", cases[ci].ceil_mode);
			tm_verify(m);
			CU_ASSERT_EQUAL_FATAL(run(m, th, &out, 1, NULL), 0);
			expect_dims(out, 4, TM_DIMS(1, 6, oh, ow));
			for (int64_t i = 0; i < 6 * oh * ow; i++) {
				double got = rt_value_get_f64(out, i);

				if (!(got == want[i] || (got != got && want[i] != want[i]))) {
					fprintf(stderr, "\ncase %zu: y[%lld] = %g, want %g\n", ci,
						(long long)i, got, want[i]);
					CU_FAIL("stride-2 max pool differs");
					break;
				}
			}
			rt_value_unref(out);
			ir_model_free(m);
		}
		free(x);
		free(want);
	}
}

static void test_avgpool_pads(void)
{
	/* [1 2 3], kernel 2, pads 1 1: windows {1} {1,2} {2,3} {3};
	 * exclude pads: 1 1.5 2.5 3; include: 0.5 1.5 2.5 1.5 */
	static const double x[] = { 1, 2, 3 };
	static const double ex[] = { 1, 1.5, 2.5, 3 }, inc[] = { 0.5, 1.5, 2.5, 1.5 };
	struct tin in[] = { { F, 3, { 1, 1, 3 }, x } };

	for (int ip = 0; ip < 2; ip++) {
		struct ir_node *n;
		struct ir_model *m = mk(11, "AveragePool", in, 1, 1, &n);

		ir_node_set_ints(n, "kernel_shape", TM_DIMS(2), 1);
		ir_node_set_ints(n, "pads", TM_DIMS(1, 1), 2);
		ir_node_set_int(n, "count_include_pad", ip);
		check1(m, 1, ip ? inc : ex, 4, 3, TM_DIMS(1, 1, 4));
	}
	/* ceil_mode: [1 2 3 4], kernel 3, stride 2: second window [3 4 -]
	 * averages the two real values even with count_include_pad */
	{
		static const double x4[] = { 1, 2, 3, 4 }, want[] = { 2, 3.5 };
		struct tin in4[] = { { F, 3, { 1, 1, 4 }, x4 } };
		struct ir_node *n;
		struct ir_model *m = mk(11, "AveragePool", in4, 1, 1, &n);

		ir_node_set_ints(n, "kernel_shape", TM_DIMS(3), 1);
		ir_node_set_ints(n, "strides", TM_DIMS(2), 1);
		ir_node_set_int(n, "ceil_mode", 1);
		ir_node_set_int(n, "count_include_pad", 1);
		check1(m, 1, want, 2, 3, TM_DIMS(1, 1, 2));
	}
	/* dilations (opset 19): [1..5], kernel 2, dilation 2: 2 3 4 */
	{
		static const double x5[] = { 1, 2, 3, 4, 5 }, want[] = { 2, 3, 4 };
		struct tin in5[] = { { F, 3, { 1, 1, 5 }, x5 } };
		struct ir_node *n;
		struct ir_model *m = mk(19, "AveragePool", in5, 1, 1, &n);

		ir_node_set_ints(n, "kernel_shape", TM_DIMS(2), 1);
		ir_node_set_ints(n, "dilations", TM_DIMS(2), 1);
		check1(m, 1, want, 3, 3, TM_DIMS(1, 1, 3));
	}
}

static void test_lp_and_global_pools(void)
{
	/* [3 -4 0 0]: L2 5, L1 7, max 3, mean -0.25 */
	static const double x[] = { 3, -4, 0, 0 };
	static const double l2[] = { 5 }, l1[] = { 7 }, mx[] = { 3 }, avg[] = { -0.25 };
	struct tin in[] = { { F, 4, { 1, 1, 2, 2 }, x } };
	struct ir_node *n;
	struct ir_model *m;

	m = mk(18, "LpPool", in, 1, 1, &n);
	ir_node_set_ints(n, "kernel_shape", TM_DIMS(2, 2), 2);
	check1(m, 1, l2, 1, 4, TM_DIMS(1, 1, 1, 1));
	m = mk(18, "LpPool", in, 1, 1, &n);
	ir_node_set_ints(n, "kernel_shape", TM_DIMS(2, 2), 2);
	ir_node_set_int(n, "p", 1);
	check1(m, 1, l1, 1, 4, TM_DIMS(1, 1, 1, 1));
	check1(mk(2, "GlobalLpPool", in, 1, 1, &n), 1, l2, 1, 4, TM_DIMS(1, 1, 1, 1));
	check1(mk(13, "GlobalMaxPool", in, 1, 1, &n), 1, mx, 1, 4, TM_DIMS(1, 1, 1, 1));
	check1(mk(13, "GlobalAveragePool", in, 1, 1, &n), 1, avg, 1, 4,
	       TM_DIMS(1, 1, 1, 1));
	{
		/* six planes of 19 (two runs of eight partial sums and a
		 * tail of three): plane i holds i + t for t = 0..18, mean i + 9 */
		double big[6 * 19], mean[6];
		struct tin bin[] = { { F, 4, { 2, 3, 19, 1 }, big } };

		for (int i = 0; i < 6; i++) {
			for (int t = 0; t < 19; t++)
				big[i * 19 + t] = i + t;
			mean[i] = i + 9;
		}
		check1(mk(13, "GlobalAveragePool", bin, 1, 1, &n), 1, mean, 6, 4,
		       TM_DIMS(2, 3, 1, 1));
	}
	{
		/* GlobalMaxPool over planes of 203 (whole vectors and a tail,
		 * k_pool_nd.c): the maximum in the tail, in a lane, a NaN
		 * first (NaN) and later (skipped), zeros of both signs where
		 * the loop keeps the first of them (-0 then +0 in other lanes:
		 * -0), -inf everywhere but one value; against the loop here */
		enum { P = 203, NP = 6 };
		static double v[NP * P];
		double want[NP];
		struct tin gin[] = { { F, 3, { 1, NP, P }, v } };
		struct rt_value *out = NULL;
		struct ir_model *gm;

		for (int i = 0; i < NP * P; i++)
			v[i] = -(double)((i * 37 + 5) % 101) - 1;
		v[0 * P + 201] = 7;
		v[1 * P + 38] = 9;
		v[2 * P + 0] = NAN;
		v[2 * P + 5] = 50;
		v[3 * P + 7] = NAN;
		v[3 * P + 9] = 3;
		for (int t = 0; t < P; t++)
			v[4 * P + t] = t == 2 ? -0.0 : t == 17 ? 0.0 : -1;
		for (int t = 0; t < P; t++)
			v[5 * P + t] = t == 100 ? -2 : -INFINITY;
		for (int i = 0; i < NP; i++) {
			double mx1 = v[i * P];

			for (int t = 1; t < P; t++)
				mx1 = v[i * P + t] > mx1 ? v[i * P + t] : mx1;
			want[i] = mx1;
		}
		gm = mk(13, "GlobalMaxPool", gin, 1, 1, &n);
		tm_verify(gm);
		CU_ASSERT_EQUAL_FATAL(run(gm, 1, &out, 1, NULL), 0);
		for (int i = 0; i < NP; i++) {
			double got = rt_value_get_f64(out, i);

			CU_ASSERT(got == want[i] ? signbit(got) == signbit(want[i]) :
				  got != got && want[i] != want[i]);
		}
		CU_ASSERT(signbit(rt_value_get_f64(out, 4)));   /* -0, the first zero */
		rt_value_unref(out);
		ir_model_free(gm);
	}
}

static void test_maxunpool(void)
{
	/* [9 8] at indices 1 and 2 of the 1x4 unpooled row */
	static const double x[] = { 9, 8 }, idx[] = { 1, 2 };
	static const double want[] = { 0, 9, 8, 0 };
	struct tin in[] = { { F, 4, { 1, 1, 1, 2 }, x },
			    { IR_DTYPE_INT64, 4, { 1, 1, 1, 2 }, idx } };
	struct ir_node *n;
	struct ir_model *m = mk(11, "MaxUnpool", in, 2, 1, &n);

	ir_node_set_ints(n, "kernel_shape", TM_DIMS(1, 2), 2);
	ir_node_set_ints(n, "strides", TM_DIMS(1, 2), 2);
	check1(m, 1, want, 4, 4, TM_DIMS(1, 1, 1, 4));
}

/* ---- MatMul, Gemm ----------------------------------------------------- */

static void test_matmul_shapes(void)
{
	/* dot of 1-D vectors: 4 + 10 + 18 = 32, rank 0 */
	static const double a[] = { 1, 2, 3 }, b[] = { 4, 5, 6 }, dot[] = { 32 };
	/* [2,1,2] @ [2,1]: [1 2].[1 10] = 21, [3 4].[1 10] = 43 */
	static const double a2[] = { 1, 2, 3, 4 }, b2[] = { 1, 10 };
	static const double want2[] = { 21, 43 };
	struct tin in[] = { { F, 1, { 3 }, a }, { F, 1, { 3 }, b } };
	struct tin in2[] = { { F, 3, { 2, 1, 2 }, a2 }, { F, 2, { 2, 1 }, b2 } };
	struct tin in3[] = { { F, 3, { 2, 1, 2 }, a2 }, { F, 1, { 2 }, b2 } };
	struct tin in4[] = { { IR_DTYPE_DOUBLE, 3, { 2, 1, 2 }, a2 },
			     { IR_DTYPE_DOUBLE, 3, { 1, 2, 1 }, b2 } };
	static const double six[6] = { 0 };
	struct tin bad[] = { { F, 2, { 2, 3 }, six }, { F, 2, { 2, 3 }, six } };
	struct ir_node *n;

	check1(mk(13, "MatMul", in, 2, 1, &n), 1, dot, 1, 0, NULL);
	check1(mk(13, "MatMul", in2, 2, 1, &n), 1, want2, 2, 3, TM_DIMS(2, 1, 1));
	check1(mk(13, "MatMul", in3, 2, 1, &n), 2, want2, 2, 2, TM_DIMS(2, 1));
	check1(mk(13, "MatMul", in4, 2, 1, &n), 1, want2, 2, 3, TM_DIMS(2, 1, 1));
	check_fails(mk(13, "MatMul", bad, 2, 1, &n), "do not match");
}

static void test_matmul_int64_exact(void)
{
	/* 3037000499^2 = 9223372030926249001 needs all 63 bits */
	static const double a[] = { 3037000499.0 };
	struct tin in[] = { { IR_DTYPE_INT64, 2, { 1, 1 }, a },
			    { IR_DTYPE_INT64, 2, { 1, 1 }, a } };
	struct rt_value *out;
	struct ir_node *n;
	struct ir_model *m = mk(13, "MatMul", in, 2, 1, &n);

	tm_verify(m);
	CU_ASSERT_EQUAL_FATAL(run(m, 1, &out, 1, NULL), 0);
	CU_ASSERT_EQUAL(out->dtype, IR_DTYPE_INT64);
	CU_ASSERT(((int64_t *)out->data)[0] == INT64_C(9223372030926249001));
	rt_value_unref(out);
	ir_model_free(m);
}

static void test_gemm_trans_bcast(void)
{
	/* op(A) = [1 2 3; 4 5 6], op(B) = [7 8; 9 10; 11 12] from transposed
	 * storage: AB = [58 64; 139 154]; 0.5 AB + 2 [1 -1] =
	 * [31 30; 71.5 75] */
	static const double at[] = { 1, 4, 2, 5, 3, 6 }, bt[] = { 7, 9, 11, 8, 10, 12 };
	static const double c[] = { 1, -1 }, want[] = { 31, 30, 71.5, 75 };
	static const int dts[] = { IR_DTYPE_FLOAT, IR_DTYPE_DOUBLE, IR_DTYPE_FLOAT16 };

	for (size_t t = 0; t < 3; t++) {
		struct tin in[] = { { dts[t], 2, { 3, 2 }, at }, { dts[t], 2, { 2, 3 }, bt },
				    { dts[t], 1, { 2 }, c } };
		struct ir_node *n;
		struct ir_model *m = mk(13, "Gemm", in, 3, 1, &n);

		ir_node_set_int(n, "transA", 1);
		ir_node_set_int(n, "transB", 1);
		ir_node_set_float(n, "alpha", 0.5f);
		ir_node_set_float(n, "beta", 2);
		check1(m, 1, want, 4, 2, TM_DIMS(2, 2));
	}
	{
		struct tin bad[] = { { F, 2, { 3, 2 }, at }, { F, 2, { 3, 2 }, bt } };
		struct ir_node *n;

		check_fails(mk(13, "Gemm", bad, 2, 1, &n), "inner dims differ");
	}
}

/* ---- quantized -------------------------------------------------------- */

static void test_matmul_integer_zero_points(void)
{
	/* A - [10, 30] per row = [0 10; 0 10], B - 1 = [0; 1]: [10; 10] */
	static const double a[] = { 10, 20, 30, 40 }, azp[] = { 10, 30 };
	static const double b[] = { 1, 2 }, bzp[] = { 1 }, want[] = { 10, 10 };
	struct tin in[] = { { IR_DTYPE_UINT8, 2, { 2, 2 }, a }, { IR_DTYPE_INT8, 2, { 2, 1 }, b },
			    { IR_DTYPE_UINT8, 1, { 2 }, azp }, { IR_DTYPE_INT8, 0, { 0 }, bzp } };
	struct ir_node *n;

	check1(mk(10, "MatMulInteger", in, 4, 1, &n), 1, want, 2, 2, TM_DIMS(2, 1));
}

static void test_qlinear_rounding(void)
{
	/* 3 * 0.5 = 1.5 -> 2 and 5 * 0.5 = 2.5 -> 2 (half to even), + 200;
	 * 255 * 0.5 = 127.5 -> 128, + 200 saturates at 255 */
	static const double a[] = { 3, 5, 255 }, b[] = { 1 };
	static const double one[] = { 1 }, half[] = { 0.5 }, zero[] = { 0 }, zp[] = { 200 };
	static const double want[] = { 202, 202, 255 };
	struct tin in[] = {
		{ IR_DTYPE_UINT8, 2, { 3, 1 }, a }, { F, 0, { 0 }, one },
		{ IR_DTYPE_UINT8, 0, { 0 }, zero }, { IR_DTYPE_UINT8, 2, { 1, 1 }, b },
		{ F, 0, { 0 }, half }, { IR_DTYPE_UINT8, 0, { 0 }, zero },
		{ F, 0, { 0 }, one }, { IR_DTYPE_UINT8, 0, { 0 }, zp },
	};
	struct ir_node *n;

	check1(mk(10, "QLinearMatMul", in, 8, 1, &n), 1, want, 3, 2, TM_DIMS(3, 1));
}

static void test_qlinear_conv_per_channel(void)
{
	/* x' = 4 - 2 = 2, scale 0.5; w = [3, -3] with scales [1, 0.25];
	 * bias [1, 4]: (6 + 1) * 0.5 = 3.5 -> 4; (-6 + 4) * 0.125 = -0.25 -> 0 */
	static const double x[] = { 4 }, xs[] = { 0.5 }, xz[] = { 2 };
	static const double w[] = { 3, -3 }, ws[] = { 1, 0.25 }, wz[] = { 0 };
	static const double ys[] = { 1 }, yz[] = { 0 }, b[] = { 1, 4 };
	static const double want[] = { 4, 0 };
	struct tin in[] = {
		{ IR_DTYPE_UINT8, 4, { 1, 1, 1, 1 }, x }, { F, 0, { 0 }, xs },
		{ IR_DTYPE_UINT8, 0, { 0 }, xz }, { IR_DTYPE_INT8, 4, { 2, 1, 1, 1 }, w },
		{ F, 1, { 2 }, ws }, { IR_DTYPE_INT8, 0, { 0 }, wz },
		{ F, 0, { 0 }, ys }, { IR_DTYPE_INT8, 0, { 0 }, yz },
		{ IR_DTYPE_INT32, 1, { 2 }, b },
	};
	struct ir_node *n;

	check1(mk(10, "QLinearConv", in, 9, 1, &n), 1, want, 2, 4, TM_DIMS(1, 2, 1, 1));
}

/* Pools of sixteen planes at a time (the AVX-512 path of small planes,
 * k_pool_cb.c), and 3x3 stride-1 pools a plane at a time (k_pool_s1.c),
 * against the definition: plane counts that leave a short last group,
 * positions not a multiple of 16, strides, dilations, ceil mode, lopsided
 * pads, rows of one and two vectors, max, average over the taps inside
 * and over the pads too, a NaN (in the second group where there is one),
 * one and two threads. */
static double pool_def(const double *x, int64_t h, int64_t w, int64_t p, int64_t a,
		       int64_t b, const int64_t *k, const int64_t *s, const int64_t *d,
		       const int64_t *pads, int kind)
{
	double mx = -INFINITY, sum = 0;
	int64_t cnt = 0;

	for (int64_t u = 0; u < k[0]; u++)
		for (int64_t v = 0; v < k[1]; v++) {
			int64_t r = a * s[0] - pads[0] + u * d[0], q = b * s[1] - pads[1] + v * d[1];
			double e;

			if (r < 0 || r >= h || q < 0 || q >= w) {
				if (kind == 2 && r >= -pads[0] && r < h + pads[2] &&
				    q >= -pads[1] && q < w + pads[3])
					cnt++;
				continue;
			}
			e = x[(p * h + r) * w + q];
			mx = e != e || mx != mx ? NAN : (e > mx ? e : mx);
			sum += e;
			cnt++;
		}
	return kind == 0 ? mx : cnt ? sum / (double)cnt : NAN;
}

static void test_pool_blocked(void)
{
	static const struct {
		int64_t planes, h, w, k[2], s[2], d[2], pads[4];
		int ceil_mode;
	} cases[] = {
		{ 37, 14, 14, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 0, 0, 1, 1 }, 0 },
		{ 16, 7, 7, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 }, 0 },
		{ 21, 7, 7, { 7, 7 }, { 1, 1 }, { 1, 1 }, { 0, 0, 0, 0 }, 0 },
		{ 33, 13, 13, { 3, 3 }, { 2, 2 }, { 1, 1 }, { 0, 0, 0, 0 }, 1 },
		{ 18, 9, 11, { 2, 3 }, { 3, 2 }, { 2, 1 }, { 1, 0, 2, 1 }, 1 },
		{ 17, 5, 40, { 3, 3 }, { 1, 1 }, { 2, 2 }, { 2, 2, 2, 2 }, 0 },
		/* 3x3 of stride 1 and pads of one on rows of 14 to 32, a
		 * plane at a time (k_pool_s1.c): one vector a row (14, 16),
		 * two (17: one lane in the second; 28; 32), one row only */
		{ 5, 9, 14, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 }, 0 },
		{ 3, 1, 16, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 }, 0 },
		{ 18, 6, 17, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 }, 0 },
		{ 4, 30, 28, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 }, 0 },
		{ 2, 4, 32, { 3, 3 }, { 1, 1 }, { 1, 1 }, { 1, 1, 1, 1 }, 1 },
	};

	for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++)
		for (int kind = 0; kind < 3; kind++) {   /* max, average, average with pads */
			int64_t np = cases[ci].planes, h = cases[ci].h, w = cases[ci].w;
			int64_t oh = pool_out(h, (cases[ci].k[0] - 1) * cases[ci].d[0] + 1,
					      cases[ci].s[0], cases[ci].pads[0], cases[ci].pads[2],
					      cases[ci].ceil_mode);
			int64_t ow = pool_out(w, (cases[ci].k[1] - 1) * cases[ci].d[1] + 1,
					      cases[ci].s[1], cases[ci].pads[1], cases[ci].pads[3],
					      cases[ci].ceil_mode);
			double *x = malloc((size_t)(np * h * w) * sizeof(double));
			double *want = malloc((size_t)(np * oh * ow) * sizeof(double));
			struct tin in[] = { { F, 4, { 1, np, h, w }, x } };

			CU_ASSERT_FATAL(x != NULL && want != NULL);
			for (int64_t i = 0; i < np * h * w; i++)
				x[i] = (double)((i * 37 + 11) % 23) - 11;
			x[(np > 17 ? 17 : np - 1) * h * w + (h / 2) * w + w / 2] = NAN;
			for (int64_t p = 0; p < np; p++)
				for (int64_t a = 0; a < oh; a++)
					for (int64_t b = 0; b < ow; b++)
						want[(p * oh + a) * ow + b] =
							pool_def(x, h, w, p, a, b, cases[ci].k, cases[ci].s,
								 cases[ci].d, cases[ci].pads, kind);
			for (int th = 1; th <= 2; th++) {
				struct ir_node *n;
				/* AveragePool has dilations from opset 19 */
				struct ir_model *m = mk(19, kind ? "AveragePool" : "MaxPool", in, 1, 1, &n);
				struct rt_value *out = NULL;

				ir_node_set_ints(n, "kernel_shape", cases[ci].k, 2);
				ir_node_set_ints(n, "strides", cases[ci].s, 2);
				ir_node_set_ints(n, "dilations", cases[ci].d, 2);
				ir_node_set_ints(n, "pads", cases[ci].pads, 4);
				ir_node_set_int(n, "ceil_mode", cases[ci].ceil_mode);
				if (kind == 2)
					ir_node_set_int(n, "count_include_pad", 1);
				tm_verify(m);
				CU_ASSERT_EQUAL_FATAL(run(m, th, &out, 1, NULL), 0);
				expect_dims(out, 4, TM_DIMS(1, np, oh, ow));
				for (int64_t i = 0; i < np * oh * ow; i++) {
					double got = rt_value_get_f64(out, i);

					if (!(fabs(got - want[i]) <= 1e-6 * (1 + fabs(want[i])) ||
					      (got != got && want[i] != want[i]))) {
						fprintf(stderr, "\ncase %zu kind %d: y[%lld] = %g, want %g\n",
							ci, kind, (long long)i, got, want[i]);
						CU_FAIL("blocked pool differs");
						break;
					}
				}
				rt_value_unref(out);
				ir_model_free(m);
			}
			free(x);
			free(want);
		}
}

static void test_conv_integer_pad(void)
{
	/* x - 5 = [0 1], padded with the zero point (0 after subtracting):
	 * windows [pad 0] and [0 1] with w [1 2]: 0, 2 */
	static const double x[] = { 5, 6 }, xz[] = { 5 }, w[] = { 1, 2 };
	static const double want[] = { 0, 2 };
	struct tin in[] = { { IR_DTYPE_UINT8, 3, { 1, 1, 2 }, x },
			    { IR_DTYPE_UINT8, 3, { 1, 1, 2 }, w },
			    { IR_DTYPE_UINT8, 0, { 0 }, xz } };
	struct ir_node *n;
	struct ir_model *m = mk(10, "ConvInteger", in, 3, 1, &n);

	ir_node_set_ints(n, "pads", TM_DIMS(1, 0), 2);
	check1(m, 1, want, 2, 3, TM_DIMS(1, 1, 2));
}

static const struct unit_test tests[] = {
	{ "gemm_api", test_gemm_api },
	{ "conv_depthwise_dilated", test_conv_depthwise_dilated },
	{ "conv_groups_dilations", test_conv_groups_dilations },
	{ "conv_same_lower_upper", test_conv_same_lower_upper },
	{ "conv_other_dtypes", test_conv_other_dtypes },
	{ "conv_3d", test_conv_3d },
	{ "conv_threads_vs_naive", test_conv_threads_vs_naive },
	{ "conv_errors", test_conv_errors },
	{ "conv_transpose", test_conv_transpose },
	{ "deform_conv", test_deform_conv },
	{ "col2im", test_col2im },
	{ "causal_conv_state", test_causal_conv_state },
	{ "maxpool_int8_indices", test_maxpool_int8_indices },
	{ "maxpool_ceil", test_maxpool_ceil },
	{ "pool_same", test_pool_same },
	{ "pool_nd_as_2d", test_pool_nd_as_2d },
	{ "maxpool_stride2", test_maxpool_stride2 },
	{ "pool_blocked", test_pool_blocked },
	{ "avgpool_pads", test_avgpool_pads },
	{ "lp_and_global_pools", test_lp_and_global_pools },
	{ "maxunpool", test_maxunpool },
	{ "matmul_shapes", test_matmul_shapes },
	{ "matmul_int64_exact", test_matmul_int64_exact },
	{ "gemm_trans_bcast", test_gemm_trans_bcast },
	{ "matmul_integer_zero_points", test_matmul_integer_zero_points },
	{ "qlinear_rounding", test_qlinear_rounding },
	{ "qlinear_conv_per_channel", test_qlinear_conv_per_channel },
	{ "conv_integer_pad", test_conv_integer_pad },
	{ "gemm_vector_shapes", test_gemm_vector_shapes },
	{ NULL, NULL },
};

int suite_knn_register(void)
{
	return unit_add_suite("knn", tests);
}
