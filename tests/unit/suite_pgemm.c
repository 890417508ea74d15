/* suite_pgemm.c: validators/pgemm.c's products with a packed constant
 * operand against a naive loop in double: tile and panel edges (rows not
 * a multiple of 12, columns not a multiple of 32), several row and step
 * blocks (m above RT_PG_MC, k above RT_PG_KC), k = 0 (the bias alone),
 * with and without bias, A column-major (a convolution's input) and
 * row-major (a MatMul's); its transpose for block edges and ranges; and
 * MatMul against a constant B (validators/k_matmul_pk.c) run after run
 * in a session: sgemm first, the packed copy kept from the second run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/suites.h"
#include "tests/unit/tconv.h"
#include "tests/unit/tgen.h"
#include "tests/unit/tmodel.h"
#include "validators/pgemm.h"

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

/* A MatMul of x (dims xd, rank xr) by the constant b (kd x n), run three
 * times on threads th: each run's y against the product in double; the
 * session's memory holds nothing after the first run (sgemm) and the
 * packed B from the second on. */
static void matmul_case(const int64_t *xd, int xr, int64_t n, int th)
{
	int64_t kd = xd[xr - 1], rows = 1, yd[4];
	struct ir_model *m = tm_new(13);
	struct rt_opts o = { .threads = th };
	struct rt_session *s = NULL;
	struct rt_value *in, *out = NULL;
	struct ir_diag d;
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
	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_session_new(m, &o, &s, &d) == 0);
	for (int r = 0; r < 3; r++) {
		if (rt_session_run(s, &in, 1, &out, &d) < 0)
			fprintf(stderr, "\nrun: %s\n", d.msg);
		CU_ASSERT(tc_check_out(out, want, rows * n, "MatMul, constant B"));
		rt_value_unref(out);
		out = NULL;
		CU_ASSERT_EQUAL(rt_session_mem(s)->cur,
				r == 0 ? 0 : rt_pgemm_packed_len(kd, n) * (int64_t)sizeof(float));
	}
	rt_session_free(s);
	rt_value_unref(in);
	ir_model_free(m);
	free(x);
	free(b);
	free(want);
}

static void test_matmul_kept(void)
{
	if (!rt_pgemm_ok())
		return;
	for (int th = 1; th <= 2; th++) {
		/* rows and columns past whole tiles and panels, two step blocks */
		matmul_case(TM_DIMS(2, 37, 300), 3, 70, th);
		/* one batch of few rows, several panels */
		matmul_case(TM_DIMS(5, 600), 2, 400, th);
	}
}

static const struct unit_test tests[] = {
	{ "products", test_products },
	{ "transpose", test_transpose },
	{ "matmul_kept", test_matmul_kept },
	{ NULL, NULL },
};

int suite_pgemm_register(void)
{
	return unit_add_suite("pgemm", tests);
}
