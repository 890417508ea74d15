/* suite_pgemm.c: runtime/kernels/pgemm.c's products with a packed constant
 * operand against a naive loop in double: tile and panel edges (rows not
 * a multiple of 12, columns not a multiple of 32), several row and step
 * blocks (m above RT_PG_MC, k above RT_PG_KC), k = 0 (the bias alone),
 * one to three rows against four panels at once,
 * with and without bias, A column-major (a convolution's input) and
 * row-major (a MatMul's); its transpose for block edges and ranges; and
 * MatMul and Gemm against a constant B (runtime/kernels/k_matmul_pk.c) run
 * after run in a session: sgemm first, the packed copy kept from the
 * second run, or never where Gemm's alpha, beta or C rule it out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/suites.h"
#include "tests/unit/tconv.h"
#include "tests/unit/tgen.h"
#include "tests/unit/tmodel.h"
#include "runtime/kernels/k_conv_int.h"   /* knn_dnnl_runs */
#include "runtime/kernels/pgemm.h"

static float *rand_floats(int64_t n, uint64_t seed)
{
	double *d = malloc((size_t)(n + 1) * sizeof(double));
	float *f = malloc((size_t)(n + 1) * sizeof(float));

	CU_ASSERT_FATAL(d != NULL && f != NULL);
	tg_fill(&seed, d, n);
	for (int64_t i = 0; i < n; i++)
		f[i] = (float)d[i];
	free(d);
	return f;
}

/* C = A B + bias with A(i, s) at a[s * m + i] (rows: at a[i * (k + 5) +
 * s]) and B(s, j) at w[j * k + s] (a convolution's weights, row j an
 * output channel). */
static int product_case(int64_t m, int64_t n, int64_t k, int with_bias, int rows)
{
	int64_t lda = rows ? k + 5 : m;
	float *a = rand_floats(rows ? m * lda : m * k, 11), *w = rand_floats(n * k, 12);
	float *bias = with_bias ? rand_floats(n, 13) : NULL;
	float *pb = aligned_alloc(64, (size_t)rt_pgemm_packed_len(k, n) * sizeof(float) + 64);
	int64_t ldc = n + 3;
	float *c = malloc((size_t)(m * ldc + 1) * sizeof(float));
	int ok = 1;

	CU_ASSERT_FATAL(pb != NULL && c != NULL);
	rt_pgemm_pack(w, 1, k, k, n, pb);
	CU_ASSERT_FATAL((rows ? rt_pgemm_run_rows(NULL, m, n, k, a, lda, pb, bias, c, ldc) :
			 rt_pgemm_run(NULL, m, n, k, a, lda, pb, bias, c, ldc)) == 0);
	for (int64_t i = 0; i < m && ok; i++)
		for (int64_t j = 0; j < n && ok; j++) {
			double want = bias ? bias[j] : 0, scale = 1, e;

			for (int64_t s = 0; s < k; s++) {
				double t = (double)a[rows ? i * lda + s : s * m + i] * w[j * k + s];

				want += t;
				scale += t < 0 ? -t : t;
			}
			e = c[i * ldc + j] - want;
			if ((e < 0 ? -e : e) > 1e-6 * scale) {
				fprintf(stderr, "\nm %lld n %lld k %lld: c[%lld][%lld] = %g, want %g\n",
					(long long)m, (long long)n, (long long)k, (long long)i,
					(long long)j, c[i * ldc + j], want);
				ok = 0;
			}
		}
	free(a);
	free(w);
	free(bias);
	free(pb);
	free(c);
	return ok;
}

static void test_products(void)
{
	static const int64_t shapes[][3] = {
		{ 1, 1, 1 }, { 12, 32, 8 }, { 13, 33, 9 }, { 49, 70, 40 }, { 25, 40, 2700 },
		{ 7, 5, 300 }, { 500, 20, 30 }, { 1000, 64, 513 }, { 11, 31, 256 }, { 24, 64, 257 },
		{ 3, 17, 0 },
		/* one to three rows: four panels at once (pg_wide), whole,
		 * with a partial last panel, then single panels after */
		{ 1, 200, 300 }, { 2, 128, 40 }, { 3, 230, 513 }, { 1, 97, 5 }, { 2, 129, 1 },
		{ 3, 256, 0 },
	};

	if (!rt_pgemm_ok())
		return;   /* no AVX-512: the callers take the OpenBLAS paths */
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		for (int b = 0; b <= 1; b++)
			for (int rows = 0; rows <= 1; rows++)
				CU_ASSERT(product_case(shapes[i][0], shapes[i][1], shapes[i][2], b,
						       rows));
}

static void test_transpose(void)
{
	static const int64_t shapes[][4] = {   /* rows, cols, lo, hi */
		{ 16, 16, 0, 16 }, { 49, 70, 0, 70 }, { 49, 70, 16, 40 }, { 1, 5, 0, 5 },
		{ 33, 48, 3, 47 }, { 64, 1, 0, 1 },
	};

	if (!rt_pgemm_ok())
		return;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		int64_t rows = shapes[i][0], cols = shapes[i][1], lo = shapes[i][2], hi = shapes[i][3];
		int64_t ld = cols + 16;
		float *src = rand_floats(rows * ld, 21), *dst = malloc((size_t)(cols * rows) * sizeof(float));
		int ok = 1;

		CU_ASSERT_FATAL(dst != NULL);
		for (int64_t j = 0; j < cols * rows; j++)
			dst[j] = -7;
		rt_pgemm_transpose(src, rows, ld, lo, hi, dst);
		for (int64_t j = 0; j < cols; j++)
			for (int64_t r = 0; r < rows; r++) {
				float want = j >= lo && j < hi ? src[r * ld + j] : -7;

				if (dst[j * rows + r] != want)
					ok = 0;
			}
		CU_ASSERT(ok);
		free(src);
		free(dst);
	}
}

/* Three runs of m (inputs in[n_in]) on threads th under the memory
 * limit (0: none), with oneDNN off (OPMIG_NO_DNNL) and then as it is:
 * each run's output against want (ny values); the session's memory holds
 * nothing after the first run (sgemm) and from the second on `kept` bytes
 * (the packed B, or 0 where the path is not taken) with oneDNN off, and
 * B in oneDNN's layout (at least b_bytes: B, padded) when kept is not 0
 * and oneDNN runs (k_mm_dnnl_f32.c: from four rows), which then runs
 * dn_runs products. */
static void session_runs(struct ir_model *m, struct rt_value **in, size_t n_in, int th,
			 int64_t limit, const double *want, int64_t ny, int64_t kept,
			 int64_t b_bytes, int64_t dn_runs, const char *what)
{
	struct rt_opts o = { .threads = th, .max_memory = limit };
	struct rt_value *out = NULL;
	struct ir_diag d;

	for (int dn = 0; dn <= 1; dn++) {
		struct rt_session *s = NULL;
		int64_t runs = knn_dnnl_runs();

		if (!dn)
			setenv("OPMIG_NO_DNNL", "1", 1);
		ir_diag_init(&d);
		CU_ASSERT_FATAL(rt_session_new(m, &o, &s, &d) == 0);
		for (int r = 0; r < 3; r++) {
			int64_t cur;

			if (rt_session_run(s, in, n_in, &out, &d) < 0)
				fprintf(stderr, "\nrun: %s\n", d.msg);
			CU_ASSERT(tc_check_out(out, want, ny, what));
			rt_value_unref(out);
			out = NULL;
			cur = rt_session_mem(s)->cur;
			if (r == 0 || !kept) {
				CU_ASSERT_EQUAL(cur, 0);
			} else if (!dn || knn_dnnl_runs() == runs) {
				CU_ASSERT_EQUAL(cur, kept);
			} else {
				CU_ASSERT(cur >= b_bytes && cur < 2 * b_bytes + 65536);
			}
		}
		/* oneDNN took the runs after the first where it ran */
		CU_ASSERT(!dn || !knn_dnnl_ok() || knn_dnnl_runs() == runs + dn_runs);
		rt_session_free(s);
		unsetenv("OPMIG_NO_DNNL");
	}
}

/* A MatMul of x (dims xd, rank xr) by the constant b (kd x n), under
 * the memory limit (0: none; below the packed copy's size, the copy is
 * not made, and oneDNN multiplies by B as it lies). */
static void matmul_case(const int64_t *xd, int xr, int64_t n, int th, int64_t limit)
{
	int64_t kd = xd[xr - 1], rows = 1, yd[4];
	struct ir_model *m = tm_new(13);
	struct rt_value *in;
	double *x, *b, *want;

	for (int i = 0; i < xr - 1; i++)
		rows *= yd[i] = xd[i];
	yd[xr - 1] = n;
	x = tc_fill(rows * kd, 31);
	b = tc_fill(kd * n, 32);
	want = calloc((size_t)(rows * n), sizeof(double));
	CU_ASSERT_FATAL(want != NULL);
	for (int64_t i = 0; i < rows; i++)
		for (int64_t j = 0; j < n; j++)
			for (int64_t t = 0; t < kd; t++)
				want[i * n + j] += x[i * kd + t] * b[t * n + j];
	tm_input(m, "x", IR_DTYPE_FLOAT, xd, (size_t)xr);
	tm_init(m, "b", IR_DTYPE_FLOAT, TM_DIMS(kd, n), 2, b);
	tm_output(m, "y", IR_DTYPE_FLOAT, yd, (size_t)xr);
	tm_node(m, "MatMul", NULL, TM_NAMES("x", "b"), 2, TM_NAMES("y"), 1);
	tm_verify(m);
	in = tc_tensor(x, xr, xd);
	session_runs(m, &in, 1, th, limit, want, rows * n,
		     limit ? 0 : rt_pgemm_packed_len(kd, n) * (int64_t)sizeof(float),
		     kd * n * (int64_t)sizeof(float), 2, "MatMul, constant B");
	rt_value_unref(in);
	ir_model_free(m);
	free(x);
	free(b);
	free(want);
}

/* Gemm of x (m x kd, or kd x m with ta) by the constant b (kd x n, or n
 * x kd with tb), alpha and beta, and C of cd[0] x cd[1] (cr = 0: none,
 * 1: [cd[1]]); kept: whether the packed path is to be taken. */
static void gemm_case(int64_t m, int64_t n, int64_t kd, int ta, int tb, double alpha,
		      double beta, int cr, const int64_t *cd, int kept)
{
	struct ir_model *mo = tm_new(13);
	double *x = tc_fill(m * kd, 41), *b = tc_fill(kd * n, 42), *c = tc_fill(m * n, 43);
	double *want = malloc((size_t)(m * n) * sizeof(double));
	struct rt_value *in;
	struct ir_node *nd;

	CU_ASSERT_FATAL(want != NULL);
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++) {
			double acc = 0;

			for (int64_t t = 0; t < kd; t++)
				acc += x[ta ? t * m + i : i * kd + t] * b[tb ? j * kd + t : t * n + j];
			want[i * n + j] = alpha * acc +
					  (cr ? beta * c[(cd[0] == 1 ? 0 : i) * cd[1] +
							 (cd[1] == 1 ? 0 : j)] : 0);
		}
	tm_input(mo, "x", IR_DTYPE_FLOAT, ta ? TM_DIMS(kd, m) : TM_DIMS(m, kd), 2);
	tm_init(mo, "b", IR_DTYPE_FLOAT, tb ? TM_DIMS(n, kd) : TM_DIMS(kd, n), 2, b);
	if (cr)
		tm_init(mo, "c", IR_DTYPE_FLOAT, cr == 1 ? cd + 1 : cd, (size_t)cr, c);
	tm_output(mo, "y", IR_DTYPE_FLOAT, TM_DIMS(m, n), 2);
	nd = tm_node(mo, "Gemm", NULL, cr ? TM_NAMES("x", "b", "c") : TM_NAMES("x", "b"),
		     cr ? 3 : 2, TM_NAMES("y"), 1);
	ir_node_set_int(nd, "transA", ta);
	ir_node_set_int(nd, "transB", tb);
	ir_node_set_float(nd, "alpha", (float)alpha);
	ir_node_set_float(nd, "beta", (float)beta);
	tm_verify(mo);
	in = tc_tensor(x, 2, ta ? TM_DIMS(kd, m) : TM_DIMS(m, kd));
	for (int th = 1; th <= 2; th++)
		session_runs(mo, &in, 1, th, 0, want, m * n,
			     kept ? rt_pgemm_packed_len(kd, n) * (int64_t)sizeof(float) : 0,
			     kd * n * (int64_t)sizeof(float), kept && m >= 4 ? 2 : 0,
			     "Gemm, constant B");
	rt_value_unref(in);
	ir_model_free(mo);
	free(x);
	free(b);
	free(c);
	free(want);
}

static void test_matmul_kept(void)
{
	if (!rt_pgemm_ok())
		return;
	for (int th = 1; th <= 2; th++) {
		/* rows and columns past whole tiles and panels, two step blocks */
		matmul_case(TM_DIMS(2, 37, 300), 3, 70, th, 0);
		/* one batch of few rows, several panels */
		matmul_case(TM_DIMS(9, 600), 2, 400, th, 0);
		/* a memory limit with room for the run, not for the copy
		 * (998,400 bytes) */
		matmul_case(TM_DIMS(9, 600), 2, 400, th, 500000);
	}
}

static void test_gemm_kept(void)
{
	if (!rt_pgemm_ok())
		return;
	/* every transpose, a bias C of [n] and of [1, n], none */
	for (int ta = 0; ta <= 1; ta++)
		for (int tb = 0; tb <= 1; tb++) {
			gemm_case(74, 70, 300, ta, tb, 1, 1, 1, TM_DIMS(1, 70), 1);
			gemm_case(74, 70, 300, ta, tb, 1, 1, 2, TM_DIMS(1, 70), 1);
			gemm_case(2, 1000, 600, ta, tb, 1, 0.5, 0, NULL, 1);
		}
	/* left to sgemm: one row; alpha, beta and a C per row or per
	 * element */
	gemm_case(1, 1000, 2048, 0, 1, 1, 1, 1, TM_DIMS(1, 1000), 0);
	gemm_case(74, 70, 300, 0, 1, 2, 1, 1, TM_DIMS(1, 70), 0);
	gemm_case(74, 70, 300, 0, 1, 1, 0.5, 1, TM_DIMS(1, 70), 0);
	gemm_case(74, 70, 300, 0, 1, 1, 1, 2, TM_DIMS(74, 1), 0);
	gemm_case(74, 70, 300, 1, 0, 1, 1, 2, TM_DIMS(74, 70), 0);
}

/* MatMul of two inputs, a [2, 3, 64, 80] by b [2, 3, 80, 64] (attention's
 * batched products): three runs against the double sums, oneDNN taking
 * the two after the first where it runs (k_mm_dnnl_f32.c), and with it
 * off, sgemm; no memory kept either way. */
static void test_matmul_batched(void)
{
	const int64_t ad[4] = { 2, 3, 64, 80 }, bd[4] = { 2, 3, 80, 64 }, yd[4] = { 2, 3, 64, 64 };
	const int64_t nb = 6, m = 64, kd = 80, n = 64;
	double *x = tc_fill(nb * m * kd, 51), *w = tc_fill(nb * kd * n, 52);
	double *want = calloc((size_t)(nb * m * n), sizeof(double));
	struct ir_model *mo = tm_new(13);
	struct rt_value *in[2];

	CU_ASSERT_FATAL(want != NULL);
	for (int64_t q = 0; q < nb; q++)
		for (int64_t i = 0; i < m; i++)
			for (int64_t j = 0; j < n; j++)
				for (int64_t t = 0; t < kd; t++)
					want[(q * m + i) * n + j] += x[(q * m + i) * kd + t] *
								     w[(q * kd + t) * n + j];
	tm_input(mo, "a", IR_DTYPE_FLOAT, ad, 4);
	tm_input(mo, "b", IR_DTYPE_FLOAT, bd, 4);
	tm_output(mo, "y", IR_DTYPE_FLOAT, yd, 4);
	tm_node(mo, "MatMul", NULL, TM_NAMES("a", "b"), 2, TM_NAMES("y"), 1);
	tm_verify(mo);
	in[0] = tc_tensor(x, 4, ad);
	in[1] = tc_tensor(w, 4, bd);
	for (int th = 1; th <= 2; th++)
		session_runs(mo, in, 2, th, 0, want, nb * m * n, 0, 0, 2, "batched MatMul");
	rt_value_unref(in[0]);
	rt_value_unref(in[1]);
	ir_model_free(mo);
	free(x);
	free(w);
	free(want);
}

static const struct unit_test tests[] = {
	{ "products", test_products },
	{ "transpose", test_transpose },
	{ "matmul_kept", test_matmul_kept },
	{ "gemm_kept", test_gemm_kept },
	{ "matmul_batched", test_matmul_batched },
	{ NULL, NULL },
};

int suite_pgemm_register(void)
{
	return unit_add_suite("pgemm", tests);
}
