/* suite_pgemm.c: validators/pgemm.c's products with a packed constant
 * operand against a naive loop in double: tile and panel edges (rows not
 * a multiple of 12, columns not a multiple of 32), several row and step
 * blocks (m above RT_PG_MC, k above RT_PG_KC), k = 0 (the bias alone),
 * with and without bias; and its transpose for block edges and ranges. */
#include <stdio.h>
#include <stdlib.h>

#include "tests/unit/suites.h"
#include "tests/unit/tgen.h"
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

/* C = A B + bias with A(i, s) at a[s * m + i] and B(s, j) at
 * w[j * k + s] (a convolution's weights, row j an output channel). */
static int product_case(int64_t m, int64_t n, int64_t k, int with_bias)
{
	float *a = rand_floats(m * k, 11), *w = rand_floats(n * k, 12);
	float *bias = with_bias ? rand_floats(n, 13) : NULL;
	float *pb = aligned_alloc(64, (size_t)rt_pgemm_packed_len(k, n) * sizeof(float) + 64);
	int64_t ldc = n + 3;
	float *c = malloc((size_t)(m * ldc + 1) * sizeof(float));
	int ok = 1;

	CU_ASSERT_FATAL(pb != NULL && c != NULL);
	rt_pgemm_pack(w, 1, k, k, n, pb);
	CU_ASSERT_FATAL(rt_pgemm_run(NULL, m, n, k, a, m, pb, bias, c, ldc) == 0);
	for (int64_t i = 0; i < m && ok; i++)
		for (int64_t j = 0; j < n && ok; j++) {
			double want = bias ? bias[j] : 0, scale = 1, e;

			for (int64_t s = 0; s < k; s++) {
				double t = (double)a[s * m + i] * w[j * k + s];

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
			CU_ASSERT(product_case(shapes[i][0], shapes[i][1], shapes[i][2], b));
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

static const struct unit_test tests[] = {
	{ "products", test_products },
	{ "transpose", test_transpose },
	{ NULL, NULL },
};

int suite_pgemm_register(void)
{
	return unit_add_suite("pgemm", tests);
}
