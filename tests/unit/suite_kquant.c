/* suite_kquant.c: the vector paths of QuantizeLinear's and
 * DynamicQuantizeLinear's float32 rows (runtime/kernels/k_quant_row.c)
 * against the C path, bit for bit, on every rounding and saturation case,
 * and every path against a float64 reference of the spec written here. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/suites.h"
#include "ir/ir.h"
#include "runtime/kernels/k_quant_row.h"

static const int ytypes[] = { IR_DTYPE_INT8, IR_DTYPE_UINT8, IR_DTYPE_INT16, IR_DTYPE_UINT16 };
/* powers of two (exact quotients), short mantissas (exact ties at
 * (n + 0.5) * s), and scales whose quotients are rounded */
static const float scales[] = { 1.0f, 0.5f, 3.0f, 1.5f, 0.375f, 5.0f, 0.1f, 0.0371f, 1e-3f,
				7.0f / 3.0f, 1e-30f };

static void range_of(int yt, int32_t *lo, int32_t *hi)
{
	*lo = yt == IR_DTYPE_INT8 ? -128 : yt == IR_DTYPE_INT16 ? -32768 : 0;
	*hi = yt == IR_DTYPE_INT8 ? 127 : yt == IR_DTYPE_UINT8 ? 255 :
	      yt == IR_DTYPE_INT16 ? 32767 : 65535;
}

static int64_t elem(int yt, const void *y, int64_t i)
{
	switch (yt) {
	case IR_DTYPE_INT8: return ((const int8_t *)y)[i];
	case IR_DTYPE_UINT8: return ((const uint8_t *)y)[i];
	case IR_DTYPE_INT16: return ((const int16_t *)y)[i];
	default: return ((const uint16_t *)y)[i];
	}
}

/* The spec in float64: the quotient as float32 (x and the scale are
 * float32), rounded half to even by rint, plus z, saturated; NaN is 0. */
static int64_t ref_quant(float x, float s, int32_t z, int32_t lo, int32_t hi)
{
	volatile float q = x / s;
	double r;

	if (isnan(q))
		return 0;
	r = rint((double)q) + z;
	return r < lo ? lo : r > hi ? hi : (int64_t)r;
}

static void push(float *v, int *n, float x)
{
	v[(*n)++] = x;
}

/* Every class of input for scale s: ties (n + 0.5) * s for n of both
 * parities and signs, their float neighbours, the integers, values
 * around each dtype's ends and 2^22 (quant_f32's clamp), and the special
 * values.  v holds at least 8000 floats; returns how many. */
static int special_values(float s, float *v)
{
	static const int ns[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 63, 64, 125, 126, 127,
				  128, 129, 130, 253, 254, 255, 256, 257, 1000, 32765, 32766,
				  32767, 32768, 32769, 65533, 65534, 65535, 65536, 65537,
				  4194302, 4194303, 4194304, 4194305, 8388607 };
	int n = 0;

	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		for (int sign = -1; sign <= 1; sign += 2) {
			float t = (float)sign * ((float)ns[i] + 0.5f) * s;
			float w = (float)sign * (float)ns[i] * s;

			push(v, &n, t);
			push(v, &n, nextafterf(t, INFINITY));
			push(v, &n, nextafterf(t, -INFINITY));
			push(v, &n, w);
			push(v, &n, nextafterf(w, INFINITY));
			push(v, &n, nextafterf(w, -INFINITY));
		}
	for (int i = -300; i <= 300; i++) {           /* every tie of the 8-bit range */
		push(v, &n, ((float)i + 0.5f) * s);
		push(v, &n, (float)i * s * 0.25f);
	}
	push(v, &n, INFINITY);
	push(v, &n, -INFINITY);
	push(v, &n, NAN);
	push(v, &n, -NAN);
	push(v, &n, 0.0f);
	push(v, &n, -0.0f);
	push(v, &n, FLT_MAX);
	push(v, &n, -FLT_MAX);
	push(v, &n, 1e30f);
	push(v, &n, -1e30f);
	push(v, &n, FLT_MIN);
	push(v, &n, -FLT_MIN);
	push(v, &n, FLT_MIN / 4);                    /* denormals */
	push(v, &n, -FLT_MIN / 4);
	push(v, &n, FLT_TRUE_MIN);
	push(v, &n, -FLT_TRUE_MIN);
	push(v, &n, 12582912.0f * s);                /* the rounding constant */
	push(v, &n, -12582912.0f * s);
	return n;
}

static float rnd_float(unsigned *st)
{
	*st = *st * 1103515245u + 12345u;
	return ((float)(*st >> 8) / 16777216.0f - 0.5f) * 700.0f;
}

/* One row through path isa and through C: the same bytes, and the
 * reference of every element. */
static int row_check(int isa, int yt, const float *x, int64_t n, float s, int32_t z,
		     int64_t *bad)
{
	int32_t lo, hi;
	size_t es = yt == IR_DTYPE_INT16 || yt == IR_DTYPE_UINT16 ? 2 : 1;
	unsigned char *a = malloc((size_t)n * es + 1), *c = malloc((size_t)n * es + 1);
	int ok = a && c;

	range_of(yt, &lo, &hi);
	if (ok) {
		memset(a, 0xa5, (size_t)n * es + 1);
		memset(c, 0x5a, (size_t)n * es + 1);
		kq_row_quantize(isa, yt, x, n, s, z, a);
		kq_row_quantize(KQ_ISA_C, yt, x, n, s, z, c);
		ok = memcmp(a, c, (size_t)n * es) == 0 && a[n * es] == 0xa5;
		for (int64_t i = 0; ok && i < n; i++)
			if (elem(yt, a, i) != ref_quant(x[i], s, z, lo, hi)) {
				ok = 0;
				*bad = i;
			}
		if (!ok && *bad < 0)
			for (int64_t i = 0; i < n; i++)
				if (elem(yt, a, i) != elem(yt, c, i)) {
					*bad = i;
					break;
				}
	}
	free(a);
	free(c);
	return ok;
}

static void test_isa_line(void)
{
	int best = kq_isa_best();

	/* which paths this run compares (a CPU without AVX-512: avx2 only) */
	printf("\nkquant: this CPU runs the %s path (avx2 %s, avx512f %s)\n", kq_isa_name(best),
	       kq_isa_ok(KQ_ISA_AVX2) ? "yes" : "no", kq_isa_ok(KQ_ISA_AVX512) ? "yes" : "no");
	CU_ASSERT(kq_isa_ok(best));
	CU_ASSERT(kq_isa_ok(KQ_ISA_C));
}

/* Every path, dtype, scale and zero point at the range's ends and
 * middle, on the special values whole and in rows of 0..70 elements from
 * unaligned starts (the vector loops' tails). */
static void test_rows_match(void)
{
	float *v = malloc(8000 * sizeof(float));

	CU_ASSERT_FATAL(v != NULL);
	for (int isa = KQ_ISA_C; isa <= KQ_ISA_AVX512; isa++) {
		if (!kq_isa_ok(isa))
			continue;
		for (size_t t = 0; t < sizeof(ytypes) / sizeof(ytypes[0]); t++) {
			int32_t lo, hi, zs[3];

			range_of(ytypes[t], &lo, &hi);
			zs[0] = lo;
			zs[1] = (lo + hi) / 2;
			zs[2] = hi;
			for (size_t k = 0; k < sizeof(scales) / sizeof(scales[0]); k++) {
				int n = special_values(scales[k], v);

				for (int zi = 0; zi < 3; zi++) {
					int64_t bad = -1;
					int ok = row_check(isa, ytypes[t], v, n, scales[k], zs[zi], &bad);

					for (int len = 0; ok && len <= 70; len++)
						for (int off = 0; ok && off < 3; off++)
							ok = row_check(isa, ytypes[t], v + 200 + off * 7 + len, len,
								       scales[k], zs[zi], &bad);
					if (!ok)
						printf("\nkquant: %s %s scale %g zero point %d: element %lld\n",
						       kq_isa_name(isa), ir_dtype_name(ytypes[t]),
						       (double)scales[k], (int)zs[zi], (long long)bad);
					CU_ASSERT(ok);
				}
			}
		}
	}
	free(v);
}

/* A large random array (values beyond every 8-bit range) on each path. */
static void test_rows_random(void)
{
	int64_t n = 1 << 20;
	float *x = malloc((size_t)n * sizeof(float));
	unsigned st = 7;

	CU_ASSERT_FATAL(x != NULL);
	for (int64_t i = 0; i < n; i++)
		x[i] = rnd_float(&st);
	for (int isa = KQ_ISA_C; isa <= KQ_ISA_AVX512; isa++) {
		if (!kq_isa_ok(isa))
			continue;
		for (size_t t = 0; t < sizeof(ytypes) / sizeof(ytypes[0]); t++) {
			int64_t bad = -1;

			CU_ASSERT(row_check(isa, ytypes[t], x, n, 0.0371f, 3, &bad));
			CU_ASSERT(row_check(isa, ytypes[t], x + 1, n - 5, 0.7f, 0, &bad));
		}
	}
	free(x);
}

/* Values derived by hand, scale 3 and zero point 0 to int8: 7.5 / 3 =
 * 2.5 -> 2 (even), 10.5 / 3 = 3.5 -> 4, -7.5 -> -2, -10.5 -> -4, 4.5 / 3
 * = 1.5 -> 2, 1.5 / 3 = 0.5 -> 0, -1.5 -> -0 = 0, the float after 7.5
 * -> 3, 400 -> 133.3 -> 127, -400 -> -128, inf -> 127, -inf -> -128,
 * NaN -> 0; to uint8 with zero point 255: 2.5 -> 2 + 255 -> 255, -400 ->
 * -133 + 255 = 122. */
static void test_rows_by_hand(void)
{
	float x[18] = { 7.5f, 10.5f, -7.5f, -10.5f, 4.5f, 1.5f, -1.5f, 0, 400, -400, INFINITY,
			-INFINITY, NAN, 0, 0, 0, 0, 0 };
	int8_t want[18] = { 2, 4, -2, -4, 2, 0, 0, 0, 127, -128, 127, -128, 0, 0, 0, 0, 0, 0 };

	x[7] = nextafterf(7.5f, INFINITY);
	want[7] = 3;
	for (int isa = KQ_ISA_C; isa <= KQ_ISA_AVX512; isa++) {
		int8_t y[18];
		uint8_t u[18];

		if (!kq_isa_ok(isa))
			continue;
		kq_row_quantize(isa, IR_DTYPE_INT8, x, 18, 3.0f, 0, y);
		CU_ASSERT(memcmp(y, want, sizeof(y)) == 0);
		kq_row_quantize(isa, IR_DTYPE_UINT8, x, 18, 3.0f, 255, u);
		CU_ASSERT_EQUAL(u[0], 255);
		CU_ASSERT_EQUAL(u[9], 122);
		CU_ASSERT_EQUAL(u[12], 0);
	}
}

/* min(0, x...) and max(0, x...) with NaN skipped, each path, every
 * length 0..70 and a large array, against a loop written here. */
static void test_minmax(void)
{
	int64_t n = 100003;
	float *x = malloc((size_t)n * sizeof(float));
	unsigned st = 11;

	CU_ASSERT_FATAL(x != NULL);
	for (int64_t i = 0; i < n; i++)
		x[i] = i % 13 == 5 ? NAN : i % 17 == 3 ? -0.0f : rnd_float(&st);
	for (int isa = KQ_ISA_C; isa <= KQ_ISA_AVX512; isa++) {
		if (!kq_isa_ok(isa))
			continue;
		for (int64_t len = 0; len <= 70 || len == n; len = len == 70 ? n : len + 1) {
			for (int sign = 0; sign < 3; sign++) {
				float mn, mx, wmn = 0, wmx = 0;
				float *y = malloc((size_t)(len + 1) * sizeof(float));

				CU_ASSERT_FATAL(y != NULL);
				/* all positive, all negative, mixed */
				for (int64_t i = 0; i < len; i++)
					y[i] = sign == 0 ? fabsf(x[i]) : sign == 1 ? -fabsf(x[i]) : x[i];
				for (int64_t i = 0; i < len; i++) {
					if (!isnan(y[i]) && y[i] < wmn)
						wmn = y[i];
					if (!isnan(y[i]) && y[i] > wmx)
						wmx = y[i];
				}
				kq_row_minmax(isa, y, len, &mn, &mx);
				CU_ASSERT(memcmp(&mn, &wmn, sizeof(mn)) == 0);
				CU_ASSERT(memcmp(&mx, &wmx, sizeof(mx)) == 0);
				free(y);
			}
		}
		{
			/* infinities, and NaN first and in every lane */
			float z[40];
			float mn, mx;

			for (int i = 0; i < 40; i++)
				z[i] = NAN;
			z[3] = -INFINITY;
			z[38] = 5;
			kq_row_minmax(isa, z, 40, &mn, &mx);
			CU_ASSERT(isinf(mn) && mn < 0);
			CU_ASSERT_EQUAL(mx, 5);
			kq_row_minmax(isa, z + 4, 34, &mn, &mx);
			CU_ASSERT(mn == 0 && !signbit(mn));
			CU_ASSERT(mx == 0 && !signbit(mx));
		}
	}
	free(x);
}

static const struct unit_test tests[] = {
	{ "the paths this CPU runs", test_isa_line },
	{ "rows: every path, dtype and tie class agree", test_rows_match },
	{ "rows: a large random array", test_rows_random },
	{ "rows: values derived by hand", test_rows_by_hand },
	{ "min/max: every path agrees", test_minmax },
	{ NULL, NULL },
};

int suite_kquant_register(void)
{
	return unit_add_suite("kquant", tests);
}
