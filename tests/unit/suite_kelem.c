/* suite_kelem.c: unit tests of elementwise, binary, activation and cast
 * kernels: one-node models over initializers, checked against values
 * derived by hand (dtype wrap-around, broadcasting rules old and new,
 * integer division, Mod signs, rounding, float8 saturation, 4-bit and
 * string casts) where the backend test data says nothing; Sin and Cos on
 * float32 against libm's in double over magnitudes up to 2e6; Exp, Erf
 * and Atan on float32 likewise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/suites.h"
#include "tests/unit/tmodel.h"
#include "runtime/kernels/k_elem_int.h"
#include "runtime/rt_int.h"

/* Run m (no graph inputs) and return its one output, or NULL with the
 * error in err. */
static struct rt_value *run(struct ir_model *m, char *err, size_t size)
{
	struct rt_opts o = { .threads = 2 };
	struct rt_session *s = NULL;
	struct rt_value *out = NULL;
	struct ir_diag d;

	ir_diag_init(&d);
	err[0] = 0;
	if (rt_session_new(m, &o, &s, &d) < 0 ||
	    rt_session_run(s, NULL, 0, &out, &d) < 0) {
		snprintf(err, size, "%s", d.msg);
		out = NULL;
	}
	rt_session_free(s);
	return out;
}

/* One node op(a[, b[, c]]) -> y over initializers a, b, c. */
struct case1 {
	int64_t opset;
	const char *op, *domain;
	int dt[3];
	int n_in;
	int rank[3];
	int64_t dims[3][4];
	const double *vals[3];
	int out_dt;
};

static struct ir_model *build(const struct case1 *c, struct ir_node **node)
{
	static const char *const names[] = { "a", "b", "c" };
	struct ir_model *m = tm_new(c->opset);

	for (int i = 0; i < c->n_in; i++)
		tm_init(m, names[i], c->dt[i], c->dims[i], (size_t)c->rank[i], c->vals[i]);
	*node = tm_node(m, c->op, c->domain, names, (size_t)c->n_in, TM_NAMES("y"), 1);
	tm_output(m, "y", c->out_dt, NULL, 0);
	return m;
}

/* y's elements equal want (exactly for integers, to 1e-6 relative for
 * floats; NaN equals NaN). */
static void expect(const struct rt_value *y, int dtype, const double *want, int64_t n)
{
	CU_ASSERT_FATAL(y != NULL);
	CU_ASSERT_EQUAL(y->dtype, dtype);
	CU_ASSERT_EQUAL_FATAL(y->numel, n);
	for (int64_t i = 0; i < n; i++) {
		double g = rt_value_get_f64(y, i), w = want[i];
		int ok = isnan(w) ? isnan(g) : isinf(w) ? g == w :
			 rt_dtype_is_float(dtype) ? fabs(g - w) <= 1e-6 * fabs(w) + 1e-7 : g == w;

		if (!ok)
			fprintf(stderr, "\nelement %lld: got %.17g, want %.17g\n",
				(long long)i, g, w);
		CU_ASSERT(ok);
	}
}

/* Build c, set attributes through attrs (or none), run: its output (the
 * run's error printed when there is none); *m the model, freed by the
 * caller after the output. */
static struct rt_value *run_case(const struct case1 *c, void (*attrs)(struct ir_node *),
				 struct ir_model **m)
{
	struct ir_node *node;
	struct rt_value *y;
	char err[512];

	*m = build(c, &node);
	if (attrs)
		attrs(node);
	y = run(*m, err, sizeof(err));
	if (!y)
		fprintf(stderr, "\nrun: %s\n", err);
	return y;
}

/* Build, set attributes through fn, run, compare. */
static void check(const struct case1 *c, void (*attrs)(struct ir_node *),
		  const double *want, int64_t n)
{
	struct ir_model *m;
	struct rt_value *y = run_case(c, attrs, &m);

	expect(y, c->out_dt, want, n);
	rt_value_unref(y);
	ir_model_free(m);
}

/* Build c, set attributes through attrs, run; its float32 output of n
 * elements into out (the tests that hold each element to their own
 * bound). */
static void run_floats(const struct case1 *c, void (*attrs)(struct ir_node *), float *out,
		       int64_t n)
{
	struct ir_model *m;
	struct rt_value *y = run_case(c, attrs, &m);

	CU_ASSERT_FATAL(y != NULL && y->dtype == IR_DTYPE_FLOAT && y->numel == n);
	memcpy(out, y->data, (size_t)n * sizeof(float));
	rt_value_unref(y);
	ir_model_free(m);
}

#define V(...) ((const double[]){ __VA_ARGS__ })

/* Sum and Mean write in place into a first or second input that dies
 * with them (a and b graph inputs, so nothing here is a kept constant),
 * never into one still needed: p = Relu(a) dies at s1 =
 * Sum(p, q, c) while q = Relu(b) feeds Neg after it; s1 and Neg(q) die at
 * the final Sum, with Mean(Relu(a), Relu(b)).  a = [1, -2, 3],
 * b = [4, 5, -6], c = [10, 20, 30]: s1 = [15, 25, 33], Neg(q) = [-4, -5,
 * 0], Mean = [2.5, 2.5, 1.5], y = [13.5, 22.5, 34.5]. */
static void test_sum_in_place(void)
{
	static const double want[] = { 13.5, 22.5, 34.5 };
	struct ir_model *m = tm_new(13);
	struct rt_value *y = NULL;

	tm_input(m, "a", IR_DTYPE_FLOAT, TM_DIMS(3), 1);
	tm_input(m, "b", IR_DTYPE_FLOAT, TM_DIMS(3), 1);
	tm_init(m, "c", IR_DTYPE_FLOAT, TM_DIMS(3), 1, (const double[]){ 10, 20, 30 });
	tm_node(m, "Relu", NULL, TM_NAMES("a"), 1, TM_NAMES("p"), 1);
	tm_node(m, "Relu", NULL, TM_NAMES("b"), 1, TM_NAMES("q"), 1);
	tm_node(m, "Sum", NULL, TM_NAMES("p", "q", "c"), 3, TM_NAMES("s1"), 1);
	tm_node(m, "Neg", NULL, TM_NAMES("q"), 1, TM_NAMES("nq"), 1);
	tm_node(m, "Relu", NULL, TM_NAMES("a"), 1, TM_NAMES("pp"), 1);
	tm_node(m, "Relu", NULL, TM_NAMES("b"), 1, TM_NAMES("qq"), 1);
	tm_node(m, "Mean", NULL, TM_NAMES("pp", "qq"), 2, TM_NAMES("mn"), 1);
	tm_node(m, "Sum", NULL, TM_NAMES("s1", "nq", "mn"), 3, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	tm_verify(m);
	CU_ASSERT_FATAL(tm_run_floats(m, (const double *const[]){ (const double[]){ 1, -2, 3 },
							(const double[]){ 4, 5, -6 } },
				      &y, 1) == 0);
	expect(y, IR_DTYPE_FLOAT, want, 3);
	rt_value_unref(y);
	ir_model_free(m);
}

static void test_add_int8_wraps(void)
{
	struct case1 c = { 14, "Add", NULL, { IR_DTYPE_INT8, IR_DTYPE_INT8 }, 2,
			   { 1, 1 }, { { 3 }, { 3 } },
			   { V(100, -100, 7), V(100, -100, -8) }, IR_DTYPE_INT8 };

	check(&c, NULL, V(-56, 56, -1), 3);
}

static void test_add_uint16_wraps(void)
{
	struct case1 c = { 14, "Add", NULL, { IR_DTYPE_UINT16, IR_DTYPE_UINT16 }, 2,
			   { 1, 1 }, { { 3 }, { 3 } },
			   { V(65535, 1, 300), V(1, 2, 65000) }, IR_DTYPE_UINT16 };

	check(&c, NULL, V(0, 3, 65300), 3);
}

static void test_add_float16_broadcast(void)
{
	/* 0.1 is 0.0999755859375 in float16; 1000.0999... rounds to 1000
	 * (spacing 0.5 in [512, 1024)) */
	struct case1 c = { 14, "Add", NULL, { IR_DTYPE_FLOAT16, IR_DTYPE_FLOAT16 }, 2,
			   { 2, 1 }, { { 2, 2 }, { 2 } },
			   { V(1, 2.5, -3, 0.1), V(0.5, 1000) }, IR_DTYPE_FLOAT16 };

	check(&c, NULL, V(1.5, 1002.5, -2.5, 1000), 4);
}

static void test_sub_bfloat16_scalar(void)
{
	struct case1 c = { 14, "Sub", NULL, { IR_DTYPE_BFLOAT16, IR_DTYPE_BFLOAT16 }, 2,
			   { 1, 0 }, { { 3 }, { 0 } },
			   { V(1, 256, -2), V(0.5) }, IR_DTYPE_BFLOAT16 };

	/* 255.5 needs 9 significant bits: bfloat16 keeps 8, ties to even 256 */
	check(&c, NULL, V(0.5, 256, -2.5), 3);
}

static void test_mul_uint64_large(void)
{
	struct case1 c = { 14, "Mul", NULL, { IR_DTYPE_UINT32, IR_DTYPE_UINT32 }, 2,
			   { 1, 1 }, { { 2 }, { 2 } },
			   { V(4000000000.0, 65536), V(2, 65536) }, IR_DTYPE_UINT32 };

	/* mod 2^32: 8e9 - 4294967296 = 3705032704; 2^32 -> 0 */
	check(&c, NULL, V(3705032704.0, 0), 2);
}

static void test_div_int_truncates(void)
{
	struct case1 c = { 14, "Div", NULL, { IR_DTYPE_INT64, IR_DTYPE_INT64 }, 2,
			   { 1, 1 }, { { 5 }, { 5 } },
			   { V(7, -7, 7, -7, -9223372036854775808.0), V(2, 2, -2, -2, -1) },
			   IR_DTYPE_INT64 };

	/* toward zero; INT64_MIN / -1 wraps to INT64_MIN instead of trapping */
	check(&c, NULL, V(3, -3, -3, 3, -9223372036854775808.0), 5);
}

static void test_div_int_by_zero_fails(void)
{
	struct case1 c = { 14, "Div", NULL, { IR_DTYPE_INT32, IR_DTYPE_INT32 }, 2,
			   { 1, 1 }, { { 3 }, { 3 } },
			   { V(1, 2, 3), V(1, 0, 1) }, IR_DTYPE_INT32 };
	struct ir_node *node;
	struct ir_model *m = build(&c, &node);
	struct rt_value *y;
	char err[512];

	y = run(m, err, sizeof(err));
	CU_ASSERT(y == NULL);
	CU_ASSERT(strstr(err, "division by zero") != NULL);
	CU_ASSERT(strstr(err, "Div") != NULL);
	rt_value_unref(y);
	ir_model_free(m);
}

static void test_mod_int_by_zero_fails(void)
{
	struct case1 c = { 13, "Mod", NULL, { IR_DTYPE_UINT8, IR_DTYPE_UINT8 }, 2,
			   { 1, 0 }, { { 2 }, { 0 } },
			   { V(1, 2), V(0) }, IR_DTYPE_UINT8 };
	struct ir_node *node;
	struct ir_model *m = build(&c, &node);
	char err[512];

	CU_ASSERT(run(m, err, sizeof(err)) == NULL);
	CU_ASSERT(strstr(err, "division by zero") != NULL);
	ir_model_free(m);
}

static void set_fmod(struct ir_node *n)
{
	CU_ASSERT_FATAL(ir_node_set_int(n, "fmod", 1) == 0);
}

static void test_mod_sign_rules(void)
{
	struct case1 c = { 13, "Mod", NULL, { IR_DTYPE_INT32, IR_DTYPE_INT32 }, 2,
			   { 1, 1 }, { { 4 }, { 4 } },
			   { V(5, -5, 5, -5), V(3, 3, -3, -3) }, IR_DTYPE_INT32 };
	struct case1 f = { 13, "Mod", NULL, { IR_DTYPE_FLOAT, IR_DTYPE_FLOAT }, 2,
			   { 1, 1 }, { { 2 }, { 2 } },
			   { V(5.5, -5.5), V(2, 2) }, IR_DTYPE_FLOAT };

	check(&c, NULL, V(2, 1, -1, -2), 4);       /* sign of the divisor */
	check(&c, set_fmod, V(2, -2, 2, -2), 4);   /* sign of the dividend */
	check(&f, set_fmod, V(1.5, -1.5), 2);
}

static void test_round_half_even(void)
{
	struct case1 c = { 11, "Round", NULL, { IR_DTYPE_FLOAT }, 1, { 1 }, { { 8 } },
			   { V(0.5, 1.5, 2.5, -0.5, -1.5, 2.4, 2.6, -2.5) }, IR_DTYPE_FLOAT };
	struct case1 d = c;

	check(&c, NULL, V(0, 2, 2, -0.0, -2, 2, 3, -2), 8);
	d.dt[0] = d.out_dt = IR_DTYPE_DOUBLE;
	check(&d, NULL, V(0, 2, 2, -0.0, -2, 2, 3, -2), 8);
}

static void set_bcast_axis1(struct ir_node *n)
{
	CU_ASSERT_FATAL(ir_node_set_int(n, "broadcast", 1) == 0);
	CU_ASSERT_FATAL(ir_node_set_int(n, "axis", 1) == 0);
}

static void set_bcast_axis0(struct ir_node *n)
{
	CU_ASSERT_FATAL(ir_node_set_int(n, "broadcast", 1) == 0);
	CU_ASSERT_FATAL(ir_node_set_int(n, "axis", 0) == 0);
}

static void set_bcast(struct ir_node *n)
{
	CU_ASSERT_FATAL(ir_node_set_int(n, "broadcast", 1) == 0);
}

static void test_legacy_broadcast_axis(void)
{
	/* A[i][j][k] = 6i + 2j + k; B[j] = 10 (j + 1) at axis 1 */
	struct case1 c = { 6, "Add", NULL, { IR_DTYPE_FLOAT, IR_DTYPE_FLOAT }, 2,
			   { 3, 1 }, { { 2, 3, 2 }, { 3 } },
			   { V(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), V(10, 20, 30) },
			   IR_DTYPE_FLOAT };
	/* no axis: B aligned with A's trailing dims */
	struct case1 t = { 6, "Mul", NULL, { IR_DTYPE_FLOAT, IR_DTYPE_FLOAT }, 2,
			   { 3, 1 }, { { 2, 3, 2 }, { 2 } },
			   { V(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), V(1, -1) },
			   IR_DTYPE_FLOAT };
	/* axis 0 with a 2-D B on a 3-D A: 6i + 2j + k - (3i + j) */
	struct case1 z = { 6, "Sub", NULL, { IR_DTYPE_INT32, IR_DTYPE_INT32 }, 2,
			   { 3, 2 }, { { 2, 3, 2 }, { 2, 3 } },
			   { V(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), V(0, 1, 2, 3, 4, 5) },
			   IR_DTYPE_INT32 };

	check(&c, set_bcast_axis1, V(10, 11, 22, 23, 34, 35, 16, 17, 28, 29, 40, 41), 12);
	check(&t, set_bcast, V(0, -1, 2, -3, 4, -5, 6, -7, 8, -9, 10, -11), 12);
	check(&z, set_bcast_axis0, V(0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6), 12);
}

static void set_right(struct ir_node *n)
{
	CU_ASSERT_FATAL(ir_node_set_string(n, "direction", "RIGHT") == 0);
}

static void set_left(struct ir_node *n)
{
	CU_ASSERT_FATAL(ir_node_set_string(n, "direction", "LEFT") == 0);
}

static void test_bitshift_uint8(void)
{
	struct case1 l = { 11, "BitShift", NULL, { IR_DTYPE_UINT8, IR_DTYPE_UINT8 }, 2,
			   { 1, 1 }, { { 3 }, { 3 } },
			   { V(255, 1, 16), V(1, 7, 4) }, IR_DTYPE_UINT8 };
	struct case1 r = l;

	check(&l, set_left, V(254, 128, 0), 3);
	r.vals[0] = V(255, 128, 16);
	check(&r, set_right, V(127, 1, 1), 3);
}

static void test_pow_mixed_types(void)
{
	struct case1 c = { 15, "Pow", NULL, { IR_DTYPE_INT32, IR_DTYPE_FLOAT }, 2,
			   { 1, 1 }, { { 3 }, { 3 } },
			   { V(2, 3, -2), V(3, 0.5, 2) }, IR_DTYPE_INT32 };
	struct case1 i = { 15, "Pow", NULL, { IR_DTYPE_INT64, IR_DTYPE_INT64 }, 2,
			   { 1, 0 }, { { 3 }, { 0 } },
			   { V(2, -3, 5), V(3) }, IR_DTYPE_INT64 };
	struct case1 f = { 15, "Pow", NULL, { IR_DTYPE_FLOAT, IR_DTYPE_INT64 }, 2,
			   { 1, 1 }, { { 2 }, { 2 } },
			   { V(1.5, 4), V(2, -1) }, IR_DTYPE_FLOAT };

	check(&c, NULL, V(8, 1, 4), 3);   /* sqrt(3) = 1.73 truncated */
	check(&i, NULL, V(8, -27, 125), 3);
	check(&f, NULL, V(2.25, 0.25), 2);
}

/* Pow by a scalar of another float type, the base float16 (computed in
 * float32, one rounding: lowp.c), bfloat16 or float32.  x = 1 + k 2^-10
 * (float16, k < 400): x^2 = 1 + 2k 2^-10 + k^2 2^-20 lies in [1, 2),
 * where float16's spacing is 2^-10, so it rounds to 1 + (2k + rne(k^2 /
 * 2^10)) 2^-10.  Exponents 1 and 0.5 of squares, 3 of bfloat16 powers of
 * two (exact), and a float32 base squared (one rounding). */
static void test_pow_narrow_scalar(void)
{
	static double x[400], want[400], sq[4] = { 0.25, 4, 0, 1e4 };
	struct case1 c = { 15, "Pow", NULL, { IR_DTYPE_FLOAT16, IR_DTYPE_FLOAT }, 2,
			   { 1, 0 }, { { 400 }, { 0 } }, { x, V(2) }, IR_DTYPE_FLOAT16 };
	struct case1 h = { 15, "Pow", NULL, { IR_DTYPE_FLOAT16, IR_DTYPE_DOUBLE }, 2,
			   { 1, 1 }, { { 4 }, { 1 } }, { sq, V(0.5) }, IR_DTYPE_FLOAT16 };
	struct case1 b = { 15, "Pow", NULL, { IR_DTYPE_BFLOAT16, IR_DTYPE_FLOAT16 }, 2,
			   { 1, 0 }, { { 3 }, { 0 } }, { V(2, -0.5, 8), V(3) }, IR_DTYPE_BFLOAT16 };
	struct case1 f = { 15, "Pow", NULL, { IR_DTYPE_FLOAT, IR_DTYPE_FLOAT }, 2,
			   { 1, 0 }, { { 3 }, { 0 } }, { V(1.5, -3, 0.1), V(2) }, IR_DTYPE_FLOAT };
	struct case1 one = h;

	for (int k = 0; k < 400; k++) {
		x[k] = 1 + k / 1024.0;
		want[k] = 1 + (2 * k + nearbyint(k * k / 1024.0)) / 1024.0;
	}
	check(&c, NULL, want, 400);
	check(&h, NULL, V(0.5, 2, 0, 100), 4);
	one.vals[1] = V(1);
	check(&one, NULL, sq, 4);
	check(&b, NULL, V(8, -0.125, 512), 3);
	/* 0.1f squared, rounded once in float32 */
	check(&f, NULL, V(2.25, 9, (double)(0.1f * 0.1f)), 3);
}

/* Pow(x, 3) of float32 is (x * x) * x, as onnxruntime computes it:
 * x = 1 + 2^-12, x * x = 1 + 2^-11 + 2^-24 rounds (a tie, to even) to
 * 1 + 2^-11, times x is 1 + 3 2^-12 + 2^-23 exactly; the cube rounded
 * once would be 1 + 3 2^-12 + 2^-22.  Checked bit for bit. */
static void test_pow_cube(void)
{
	struct case1 c = { 15, "Pow", NULL, { IR_DTYPE_FLOAT, IR_DTYPE_FLOAT }, 2,
			   { 1, 0 }, { { 2 }, { 0 } }, { V(1 + 0x1p-12, -2), V(3) },
			   IR_DTYPE_FLOAT };
	float y[2];

	run_floats(&c, NULL, y, 2);
	CU_ASSERT(y[0] == 1 + 3 * 0x1p-12f + 0x1p-23f);
	CU_ASSERT(y[1] == -8.0f);
}

/* A float16 product of 500 elements, rounded once: a = 1 + k 2^-10, b =
 * 1 + 2^-10, a b = 1 + (k + 1) 2^-10 + k 2^-20, below the half spacing
 * 2^-11 for k < 512: 1 + (k + 1) 2^-10. */
static void test_mul_float16_blocks(void)
{
	static double a[500], want[500];
	struct case1 c = { 14, "Mul", NULL, { IR_DTYPE_FLOAT16, IR_DTYPE_FLOAT16 }, 2,
			   { 1, 1 }, { { 500 }, { 1 } }, { a, V(1 + 1 / 1024.0) }, IR_DTYPE_FLOAT16 };

	for (int k = 0; k < 500; k++) {
		a[k] = 1 + k / 1024.0;
		want[k] = 1 + (k + 1) / 1024.0;
	}
	check(&c, NULL, want, 500);
}

static void set_clip_attrs(struct ir_node *n)
{
	CU_ASSERT_FATAL(ir_node_set_float(n, "min", -1) == 0);
	CU_ASSERT_FATAL(ir_node_set_float(n, "max", 2) == 0);
}

static void test_clip_attrs_and_inputs(void)
{
	struct case1 a = { 6, "Clip", NULL, { IR_DTYPE_FLOAT }, 1, { 1 }, { { 4 } },
			   { V(-5, 0.5, 3, INFINITY) }, IR_DTYPE_FLOAT };
	struct case1 i = { 13, "Clip", NULL, { IR_DTYPE_INT8, IR_DTYPE_INT8, IR_DTYPE_INT8 }, 3,
			   { 1, 0, 0 }, { { 4 }, { 0 }, { 0 } },
			   { V(-128, -3, 5, 127), V(-4), V(4) }, IR_DTYPE_INT8 };
	struct case1 u = { 13, "Clip", NULL, { IR_DTYPE_UINT64, IR_DTYPE_UINT64 }, 2,
			   { 1, 0 }, { { 3 }, { 0 } },
			   { V(1e19, 3, 10), V(5) }, IR_DTYPE_UINT64 };

	check(&a, set_clip_attrs, V(-1, 0.5, 2, 2), 4);
	check(&i, NULL, V(-4, -3, 4, 4), 4);
	check(&u, NULL, V(1e19, 5, 10), 3);   /* min only; 1e19 > 2^63 */
}

static void test_where_broadcast(void)
{
	struct case1 c = { 16, "Where", NULL, { IR_DTYPE_BOOL, IR_DTYPE_INT16, IR_DTYPE_INT16 }, 3,
			   { 2, 1, 0 }, { { 2, 1 }, { 3 }, { 0 } },
			   { V(1, 0), V(1, -2, 3), V(-7) }, IR_DTYPE_INT16 };

	check(&c, NULL, V(1, -2, 3, -7, -7, -7), 6);
}

/* Where over every mix of whole, row, column and single operands (the
 * kernel's loops for strides of 0 and 1, and the general one for a
 * column against rows), elements of 1, 2, 4 and 8 bytes: y[i][j] =
 * c ? x : z at the broadcast places, 3 x 40 of them (vectors and tails). */
static void where_shape(int s, int *rank, int64_t *dims)
{
	static const int64_t d[4][2] = { { 3, 40 }, { 40, 0 }, { 3, 1 }, { 1, 0 } };

	*rank = s == 1 || s == 3 ? 1 : 2;
	dims[0] = d[s][0];
	dims[1] = d[s][1];
}

static double where_at(int s, int i, int j, double base)
{
	if (s == 0)
		return base + i * 40 + j;
	return s == 1 ? base + j : s == 2 ? base + i : base;
}

static void test_where_strides(void)
{
	static const int dts[4] = { IR_DTYPE_INT8, IR_DTYPE_INT16, IR_DTYPE_FLOAT, IR_DTYPE_INT64 };
	static double cv[120], xv[120], zv[120], want[120];
	int bad = 0;

	for (int t = 0; t < 4; t++)
		for (int sc = 0; sc < 4; sc++)
			for (int sx = 0; sx < 4; sx++)
				for (int sz = 0; sz < 4; sz++) {
					struct case1 c = { 16, "Where", NULL,
							   { IR_DTYPE_BOOL, dts[t], dts[t] }, 3,
							   { 0 }, { { 0 } }, { cv, xv, zv }, dts[t] };
					struct ir_node *node;
					struct ir_model *m;
					struct rt_value *y;
					char err[512];
					int rc = 0, rk[3];

					where_shape(sc, &rk[0], c.dims[0]);
					where_shape(sx, &rk[1], c.dims[1]);
					where_shape(sz, &rk[2], c.dims[2]);
					for (int k = 0; k < 3; k++)
						c.rank[k] = rk[k];
					for (int k = 0; k < 120; k++) {
						/* each operand's own elements, in order */
						cv[k] = (k * 7 + k / 40 * 3) % 5 < 2;
						xv[k] = k % 100;
						zv[k] = -1 - k % 100;
					}
					for (int i = 0; i < 3; i++)
						for (int j = 0; j < 40; j++)
							want[i * 40 + j] = cv[(int)where_at(sc, i, j, 0)] ?
								xv[(int)where_at(sx, i, j, 0)] :
								zv[(int)where_at(sz, i, j, 0)];
					m = build(&c, &node);
					y = run(m, err, sizeof(err));
					if (!y || y->numel != (sc == 0 || sx == 0 || sz == 0 ||
							       ((sc == 1 || sx == 1 || sz == 1) &&
								(sc == 2 || sx == 2 || sz == 2)) ? 120 :
							       sc == 1 || sx == 1 || sz == 1 ? 40 :
							       sc == 2 || sx == 2 || sz == 2 ? 3 : 1))
						rc = 1;
					for (int64_t i = 0; !rc && i < y->numel; i++) {
						/* a smaller result: its own places */
						int64_t ii = y->numel == 120 ? i : y->numel == 40 ? i :
							     y->numel == 3 ? i * 40 : 0;

						if (rt_value_get_f64(y, i) != want[ii])
							rc = 1;
					}
					bad += rc;
					rt_value_unref(y);
					ir_model_free(m);
				}
	CU_ASSERT_EQUAL(bad, 0);
}

static void test_variadic_max_unsigned(void)
{
	struct case1 c = { 13, "Max", NULL, { IR_DTYPE_UINT32, IR_DTYPE_UINT32, IR_DTYPE_UINT32 }, 3,
			   { 1, 0, 2 }, { { 2 }, { 0 }, { 2, 1 } },
			   { V(4000000000.0, 1), V(5), V(3, 7) }, IR_DTYPE_UINT32 };
	struct case1 s = { 13, "Mean", NULL, { IR_DTYPE_FLOAT, IR_DTYPE_FLOAT, IR_DTYPE_FLOAT }, 3,
			   { 1, 1, 0 }, { { 2 }, { 2 }, { 0 } },
			   { V(1, 2), V(3, 4), V(5) }, IR_DTYPE_FLOAT };
	struct case1 one = { 8, "Sum", NULL, { IR_DTYPE_FLOAT }, 1, { 1 }, { { 2 } },
			     { V(-3, 4) }, IR_DTYPE_FLOAT };

	check(&c, NULL, V(4000000000.0, 5, 4000000000.0, 7), 4);
	check(&s, NULL, V(3, 11.0 / 3), 2);
	check(&one, NULL, V(-3, 4), 2);
}

static void test_abs_sign_neg_ints(void)
{
	struct case1 a = { 13, "Abs", NULL, { IR_DTYPE_INT8 }, 1, { 1 }, { { 3 } },
			   { V(-128, -5, 6) }, IR_DTYPE_INT8 };
	struct case1 s = { 13, "Sign", NULL, { IR_DTYPE_UINT64 }, 1, { 1 }, { { 3 } },
			   { V(1e19, 0, 1) }, IR_DTYPE_UINT64 };
	struct case1 n = { 13, "Neg", NULL, { IR_DTYPE_INT16 }, 1, { 1 }, { { 2 } },
			   { V(-32768, 7) }, IR_DTYPE_INT16 };

	check(&a, NULL, V(-128, 5, 6), 3);   /* |-128| wraps in int8 as in numpy */
	check(&s, NULL, V(1, 0, 1), 3);
	check(&n, NULL, V(-32768, -7), 2);
}

static void set_to(struct ir_node *n, int64_t to, int saturate)
{
	CU_ASSERT_FATAL(ir_node_set_int(n, "to", to) == 0);
	if (saturate >= 0)
		CU_ASSERT_FATAL(ir_node_set_int(n, "saturate", saturate) == 0);
}

/* Raw output bytes of Cast(a -> to). */
static void cast_bytes(int64_t opset, int from, const double *vals, int64_t n,
		       int to, int saturate, const uint8_t *want)
{
	struct case1 c = { opset, "Cast", NULL, { from }, 1, { 1 }, { { n } },
			   { vals }, to };
	struct ir_node *node;
	struct ir_model *m = build(&c, &node);
	struct rt_value *y;
	char err[512];

	set_to(node, to, saturate);
	y = run(m, err, sizeof(err));
	if (!y)
		fprintf(stderr, "\nrun: %s\n", err);
	CU_ASSERT_FATAL(y != NULL);
	for (int64_t i = 0; i < n; i++) {
		uint8_t got = ((const uint8_t *)y->data)[i];

		if (got != want[i])
			fprintf(stderr, "\nelement %lld: got 0x%02x, want 0x%02x\n",
				(long long)i, got, want[i]);
		CU_ASSERT_EQUAL(got, want[i]);
	}
	rt_value_unref(y);
	ir_model_free(m);
}

static void test_cast_float8_saturate(void)
{
	/* E4M3FN: max 448 = 0 1111 110 (0x7e), NaN 0x7f; 0.3 lies between
	 * 0.28125 (0x29) and 0.3125 (0x2a) and is nearer the latter */
	const double *v = V(1000, -1000, 0.3, INFINITY, NAN, 448);

	cast_bytes(19, IR_DTYPE_FLOAT, v, 6, IR_DTYPE_FLOAT8E4M3FN, 1,
		   (const uint8_t[]){ 0x7e, 0xfe, 0x2a, 0x7e, 0x7f, 0x7e });
	cast_bytes(19, IR_DTYPE_FLOAT, v, 6, IR_DTYPE_FLOAT8E4M3FN, 0,
		   (const uint8_t[]){ 0x7f, 0xff, 0x2a, 0x7f, 0x7f, 0x7e });
	/* E5M2: max 57344 = 0 11110 11 (0x7b), inf 0x7c */
	cast_bytes(19, IR_DTYPE_FLOAT, V(1e6, -1e6, 1), 3, IR_DTYPE_FLOAT8E5M2, 1,
		   (const uint8_t[]){ 0x7b, 0xfb, 0x3c });
	cast_bytes(19, IR_DTYPE_FLOAT, V(1e6, -1e6, 1), 3, IR_DTYPE_FLOAT8E5M2, 0,
		   (const uint8_t[]){ 0x7c, 0xfc, 0x3c });
	/* E4M3FNUZ: no negative zero, NaN 0x80 */
	cast_bytes(19, IR_DTYPE_FLOAT, V(-0.0, NAN, 1e6), 3, IR_DTYPE_FLOAT8E4M3FNUZ, 0,
		   (const uint8_t[]){ 0x00, 0x80, 0x80 });
}

static void test_cast_int4_wraps(void)
{
	/* int4 keeps the low nibble, sign-extended (stored one per byte) */
	cast_bytes(21, IR_DTYPE_INT32, V(7, 8, -9, 15, -8), 5, IR_DTYPE_INT4, -1,
		   (const uint8_t[]){ 7, 0xf8, 7, 0xff, 0xf8 });
	cast_bytes(21, IR_DTYPE_FLOAT, V(16, 17.9, -1), 3, IR_DTYPE_UINT4, -1,
		   (const uint8_t[]){ 0, 1, 15 });
}

static void test_cast_numbers(void)
{
	struct case1 c = { 13, "Cast", NULL, { IR_DTYPE_FLOAT }, 1, { 1 }, { { 4 } },
			   { V(-1.9, 2.9, 300, 0) }, IR_DTYPE_INT8 };
	struct ir_node *node;
	struct ir_model *m = build(&c, &node);
	struct rt_value *y;
	char err[512];

	set_to(node, IR_DTYPE_INT8, -1);
	y = run(m, err, sizeof(err));
	/* truncation toward zero, then the low 8 bits: 300 -> 44 */
	expect(y, IR_DTYPE_INT8, V(-1, 2, 44, 0), 4);
	rt_value_unref(y);
	ir_model_free(m);
	/* uint64 above 2^63 to double, and bool */
	cast_bytes(13, IR_DTYPE_FLOAT, V(0, -0.5, NAN), 3, IR_DTYPE_BOOL, -1,
		   (const uint8_t[]){ 0, 1, 1 });
}

static void test_cast_double_rounds_once(void)
{
	/* 1 + 2^-11 + 2^-40 lies just above the midpoint of the float16
	 * neighbours 1 and 1 + 2^-10: it rounds up.  Through float it would
	 * first become the midpoint itself and then tie to even (1). */
	struct case1 c = { 13, "Cast", NULL, { IR_DTYPE_DOUBLE }, 1, { 1 }, { { 3 } },
			   { V(1.0004882812509095, 1.00048828125, -1.0004882812509095) },
			   IR_DTYPE_FLOAT16 };
	struct ir_node *node;
	struct ir_model *m = build(&c, &node);
	struct rt_value *y;
	char err[512];

	set_to(node, IR_DTYPE_FLOAT16, -1);
	y = run(m, err, sizeof(err));
	expect(y, IR_DTYPE_FLOAT16, V(1.0009765625, 1, -1.0009765625), 3);
	rt_value_unref(y);
	ir_model_free(m);
}

static void test_cast_to_string(void)
{
	static const char *const want[] = {
		"0.1", "1e-05", "1e+16", "123456.0", "-2.5", "3.4028235e+38",
		"0.0001", "inf", "nan"
	};
	struct case1 c = { 13, "Cast", NULL, { IR_DTYPE_FLOAT }, 1, { 1 }, { { 9 } },
			   { V(0.1, 1e-5, 1e16, 123456, -2.5, 3.4028234663852886e38,
			       1e-4, INFINITY, NAN) }, IR_DTYPE_STRING };
	struct ir_node *node;
	struct ir_model *m = build(&c, &node);
	struct rt_value *y;
	char err[512];

	set_to(node, IR_DTYPE_STRING, -1);
	y = run(m, err, sizeof(err));
	CU_ASSERT_FATAL(y != NULL);
	for (int i = 0; i < 9; i++) {
		const char *s = ((char *const *)y->data)[i];

		if (strcmp(s, want[i]))
			fprintf(stderr, "\nelement %d: got '%s', want '%s'\n", i, s, want[i]);
		CU_ASSERT_STRING_EQUAL(s, want[i]);
	}
	rt_value_unref(y);
	ir_model_free(m);
}

static void test_bitcast(void)
{
	struct case1 c = { 26, "BitCast", NULL, { IR_DTYPE_FLOAT }, 1, { 1 }, { { 2 } },
			   { V(1, -2) }, IR_DTYPE_INT32 };
	struct ir_node *node;
	struct ir_model *m = build(&c, &node);
	struct rt_value *y;
	char err[512];

	CU_ASSERT_FATAL(ir_node_set_int(node, "to", IR_DTYPE_INT32) == 0);
	y = run(m, err, sizeof(err));
	/* 1.0f = 0x3f800000, -2.0f = 0xc0000000 */
	expect(y, IR_DTYPE_INT32, V(1065353216, -1073741824), 2);
	rt_value_unref(y);
	ir_model_free(m);
}

static void test_activations(void)
{
	struct case1 q = { 13, "QuickGelu", "com.microsoft", { IR_DTYPE_FLOAT }, 1,
			   { 1 }, { { 2 } }, { V(1, -1) }, IR_DTYPE_FLOAT };
	struct case1 s = { 13, "Selu", NULL, { IR_DTYPE_DOUBLE }, 1,
			   { 1 }, { { 2 } }, { V(1, -1) }, IR_DTYPE_DOUBLE };
	struct case1 g = { 20, "Gelu", NULL, { IR_DTYPE_FLOAT }, 1,
			   { 1 }, { { 1 } }, { V(1) }, IR_DTYPE_FLOAT };
	struct case1 sp = { 13, "Softplus", NULL, { IR_DTYPE_FLOAT }, 1,
			    { 1 }, { { 2 } }, { V(-3, 100) }, IR_DTYPE_FLOAT };
	struct case1 r = { 14, "Relu", NULL, { IR_DTYPE_INT8 }, 1,
			   { 1 }, { { 3 } }, { V(-3, 0, 9) }, IR_DTYPE_INT8 };
	struct case1 bg = { 13, "BiasGelu", "com.microsoft", { IR_DTYPE_FLOAT, IR_DTYPE_FLOAT }, 2,
			    { 2, 1 }, { { 2, 1 }, { 1 } }, { V(0.5, -1.5), V(0.5) }, IR_DTYPE_FLOAT };

	/* x sigmoid(1.702 x) */
	check(&q, NULL, V(0.8457957659328212, -0.1542042340671787), 2);
	/* schema defaults alpha 1.6732632, gamma 1.0507010 */
	check(&s, NULL, V(1.0507010221481323, -1.1113307412864781), 2);
	check(&g, NULL, V(0.8413447460685429), 1);
	check(&sp, NULL, V(0.04858735157374206, 100), 2);
	check(&r, NULL, V(0, 0, 9), 3);
	check(&bg, NULL, V(0.8413447460685429, -0.15865525393145707), 2);
}

/* PRelu over runs long enough for the vector loops (KEL_NO_TRAP: both
 * arms of x < 0 ? x * slope : x computed), signs mixed at random, with
 * signed zeros, infinities and NaN: bit for bit that expression in
 * float32, for a slope per channel (3, 1) and one slope (the Clang and
 * gcc builds alike). */
static void test_prelu_runs(void)
{
	enum { N = 2 * 3 * 50 };
	static const double sl[3] = { 0.25, -1.5, 0 };
	double xv[N];
	float got[N];
	uint32_t r = 12345;

	for (int i = 0; i < N; i++) {
		r = r * 1664525u + 1013904223u;
		xv[i] = ((double)(r >> 8) / (1 << 24) - 0.5) * 8;
	}
	xv[7] = -0.0;
	xv[8] = 0.0;
	xv[60] = -INFINITY;
	xv[61] = INFINITY;
	xv[150] = NAN;
	for (int one = 0; one < 2; one++) {
		struct case1 c = { 16, "PRelu", NULL, { IR_DTYPE_FLOAT, IR_DTYPE_FLOAT }, 2,
				   { 3, one ? 1 : 2 }, { { 2, 3, 50 }, { one ? 1 : 3, 1 } },
				   { xv, one ? V(-0.75) : sl }, IR_DTYPE_FLOAT };

		run_floats(&c, NULL, got, N);
		for (int i = 0; i < N; i++) {
			float x = (float)xv[i], s = one ? -0.75f : (float)sl[(i / 50) % 3];
			float w = x < 0 ? x * s : x;
			int ok = isnan(w) ? isnan(got[i]) : !memcmp(&w, &got[i], sizeof(w));

			if (!ok)
				fprintf(stderr, "\nPRelu element %d: got %g, want %g\n", i, got[i], w);
			CU_ASSERT(ok);
		}
	}
}

/* Gelu-20 of both forms and com.microsoft FastGelu over 600 values in
 * [-8, 8) (three of the kernels' 256-value blocks), against the formulas
 * in double: within 2e-6 of max(1, |x|) (float32's roundings, and
 * 1 + erf's cancellation for x far below 0, as onnxruntime's). */
static void set_tanh(struct ir_node *n)
{
	CU_ASSERT_FATAL(ir_node_set_string(n, "approximate", "tanh") == 0);
}

static void test_gelu_blocks(void)
{
	static double x[600];
	struct case1 g = { 20, "Gelu", NULL, { IR_DTYPE_FLOAT }, 1,
			   { 1 }, { { 600 } }, { x }, IR_DTYPE_FLOAT };
	struct case1 f = { 13, "FastGelu", "com.microsoft", { IR_DTYPE_FLOAT, IR_DTYPE_FLOAT }, 2,
			   { 1, 1 }, { { 600 }, { 1 } }, { x, V(0.25) }, IR_DTYPE_FLOAT };

	for (int i = 0; i < 600; i++)
		x[i] = (float)(-8 + i * (16.0 / 600));
	for (int form = 0; form < 3; form++) {
		float y[600];
		int bad = 0;

		run_floats(form == 2 ? &f : &g, form == 1 ? set_tanh : NULL, y, 600);
		for (int i = 0; i < 600; i++) {
			double v = x[i] + (form == 2 ? 0.25 : 0), w;

			w = form == 0 ? 0.5 * v * (1 + erf(v / sqrt(2))) :
			    0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
			if (fabs(y[i] - w) > 2e-6 * fmax(1, fabs(v)))
				bad++;
		}
		CU_ASSERT_EQUAL(bad, 0);
	}
}

/* Mish over 700 values in [-35, 35) (vectors and a tail) against x
 * tanh(log1p(exp(x))) in double, within 2e-6 relative (float32's few
 * roundings; no cancellation on either side), and its special values:
 * -0 stays -0, +inf, NaN, and -inf gives NaN (-inf times 0). */
static void test_mish_values(void)
{
	static double x[705];
	struct case1 c = { 18, "Mish", NULL, { IR_DTYPE_FLOAT }, 1,
			   { 1 }, { { 705 } }, { x }, IR_DTYPE_FLOAT };
	float f[705];
	int bad = 0;

	for (int i = 0; i < 700; i++)
		x[i] = (float)(-35 + i * 0.1);
	x[700] = -0.0;
	x[701] = INFINITY;
	x[702] = NAN;
	x[703] = -INFINITY;
	x[704] = 1e-30;
	run_floats(&c, NULL, f, 705);
	for (int i = 0; i < 700; i++) {
		double w = x[i] * tanh(log1p(exp(x[i])));

		if (fabs(f[i] - w) > 2e-6 * fabs(w) + 1e-37)
			bad++;
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(f[700] == 0 && signbit(f[700]));
	CU_ASSERT(isinf(f[701]) && f[701] > 0);
	CU_ASSERT(isnan(f[702]));
	CU_ASSERT(isnan(f[703]));
	CU_ASSERT(fabs(f[704] - 1e-30 * tanh(log(2.0))) <= 2e-6 * 1e-30 * tanh(log(2.0)));
}

/* Elu (alpha 0.5) and Selu (its defaults) over 700 values in [-35, 35)
 * and around 0 (where e^x - 1 cancels: Elu's small inputs), against the
 * formulas in double (expm1 for Elu) within 6e-7 relative plus 1e-37; -0
 * (Elu -0, Selu +0), the infinities and NaN as the formulas give them.
 * Run as the CPU allows (AVX-512 or the loops: make test-noavx512). */
static void elu_check(const char *op, int opset, void (*attrs)(struct ir_node *), double alpha,
		      double gamma)
{
	static double x[760];
	struct case1 c = { 0, NULL, NULL, { IR_DTYPE_FLOAT }, 1, { 1 }, { { 760 } }, { x },
			   IR_DTYPE_FLOAT };
	float f[760];
	int bad = 0;

	c.opset = opset;
	c.op = op;
	for (int i = 0; i < 700; i++)
		x[i] = (float)(-35 + i * 0.1);
	for (int i = 0; i < 56; i++)
		x[700 + i] = -ldexp(1.0, -i / 2) * (1 + i % 3 * 0.1);
	x[756] = -0.0;
	x[757] = INFINITY;
	x[758] = -INFINITY;
	x[759] = NAN;
	run_floats(&c, attrs, f, 760);
	for (int i = 0; i < 759; i++) {
		double v = x[i], w = gamma ? (v <= 0 ? gamma * (alpha * exp(v) - alpha) : gamma * v) :
					     (v < 0 ? alpha * expm1(v) : v);

		if (!(isinf(w) ? f[i] == w : fabs(f[i] - w) <= 6e-7 * fabs(w) + 1e-37)) {
			if (bad++ < 3)
				fprintf(stderr, "\n%s(%.9g): %.9g, want %.9g\n", op, v, f[i], w);
		}
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(isnan(f[759]));
	CU_ASSERT(f[756] == 0 && !signbit(f[756]) == !!gamma);
}

static void set_alpha_half(struct ir_node *n);

static void test_elu_selu_values(void)
{
	elu_check("Elu", 6, set_alpha_half, 0.5, 0);
	elu_check("Selu", 6, NULL, 1.67326319217681884765625, 1.05070102214813232421875);
}

static void set_alpha_half(struct ir_node *n)
{
	CU_ASSERT_FATAL(ir_node_set_float(n, "alpha", 0.5f) == 0);
}

static void set_alpha_two(struct ir_node *n)
{
	CU_ASSERT_FATAL(ir_node_set_float(n, "alpha", 2) == 0);
}

static void test_more_activations(void)
{
	struct case1 sw = { 28, "SwiGLU", NULL, { IR_DTYPE_FLOAT, IR_DTYPE_FLOAT }, 2,
			    { 1, 1 }, { { 2 }, { 2 } }, { V(1, -1), V(2, 3) }, IR_DTYPE_FLOAT };
	struct case1 fg = { 13, "FastGelu", "com.microsoft", { IR_DTYPE_FLOAT, IR_DTYPE_FLOAT }, 2,
			    { 1, 1 }, { { 2 }, { 1 } }, { V(1, -1), V(0.5) }, IR_DTYPE_FLOAT };
	struct case1 mi = { 18, "Mish", NULL, { IR_DTYPE_FLOAT }, 1,
			    { 1 }, { { 2 } }, { V(1, -2) }, IR_DTYPE_FLOAT };
	struct case1 sh = { 24, "Swish", NULL, { IR_DTYPE_DOUBLE }, 1,
			    { 1 }, { { 2 } }, { V(2, -1) }, IR_DTYPE_DOUBLE };
	struct case1 hs = { 14, "HardSwish", NULL, { IR_DTYPE_FLOAT }, 1,
			    { 1 }, { { 3 } }, { V(1, -4, 2) }, IR_DTYPE_FLOAT };
	struct case1 hg = { 6, "HardSigmoid", NULL, { IR_DTYPE_FLOAT }, 1,
			    { 1 }, { { 2 } }, { V(1, -3) }, IR_DTYPE_FLOAT };
	struct case1 el = { 6, "Elu", NULL, { IR_DTYPE_FLOAT }, 1,
			    { 1 }, { { 2 } }, { V(-1, 3) }, IR_DTYPE_FLOAT };
	struct case1 ce = { 12, "Celu", NULL, { IR_DTYPE_FLOAT }, 1,
			    { 1 }, { { 2 } }, { V(-1, 3) }, IR_DTYPE_FLOAT };

	/* A sigmoid(alpha A) B */
	check(&sw, NULL, V(1.4621171572600098, -0.8068242641099853), 2);
	/* tanh form of x + bias */
	check(&fg, NULL, V(1.3995715769802328, -0.15428599017485606), 2);
	check(&mi, NULL, V(0.8650983882673103, -0.2525014826957089), 2);
	check(&sh, set_alpha_half, V(1.4621171572600098, -0.3775406687981454), 2);
	check(&hs, NULL, V(0.6666666666666666, 0, 1.6666666666666665), 3);
	check(&hg, NULL, V(0.7, 0), 2);
	check(&el, set_alpha_half, V(-0.31606027941427883, 3), 2);
	check(&ce, set_alpha_two, V(-0.7869386805747332, 3), 2);
}

static void test_isinf_flags(void)
{
	struct case1 c = { 20, "IsInf", NULL, { IR_DTYPE_FLOAT16 }, 1, { 1 }, { { 4 } },
			   { V(INFINITY, -INFINITY, 1, NAN) }, IR_DTYPE_BOOL };
	struct ir_node *node;
	struct ir_model *m = build(&c, &node);
	struct rt_value *y;
	char err[512];

	CU_ASSERT_FATAL(ir_node_set_int(node, "detect_negative", 0) == 0);
	y = run(m, err, sizeof(err));
	expect(y, IR_DTYPE_BOOL, V(1, 0, 0, 0), 4);
	rt_value_unref(y);
	ir_model_free(m);
}

/* A 1-D string initializer. */
static void init_strings(struct ir_model *m, const char *name,
			 const char *const *s, int64_t n)
{
	struct rt_value *t;
	struct ir_tensor *it;
	struct ir_diag d;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_tensor_new(NULL, IR_DTYPE_STRING, 1, &n, &t, &d) == 0);
	for (int64_t i = 0; i < n; i++)
		CU_ASSERT_FATAL((((char **)t->data)[i] = strdup(s[i])) != NULL);
	CU_ASSERT_FATAL(rt_value_to_ir(t, name, &it, &d) == 0);
	rt_value_unref(t);
	CU_ASSERT_FATAL(ir_graph_add_initializer(m->graph, it) != NULL);
}

static void test_equal_strings(void)
{
	static const char *const a[] = { "abc", "", "x" }, *const b[] = { "abc", "", "y" };
	struct ir_model *m = tm_new(19);
	struct rt_value *y;
	char err[512];

	init_strings(m, "a", a, 3);
	init_strings(m, "b", b, 3);
	init_strings(m, "c", (const char *const[]){ "x" }, 1);
	tm_node(m, "Equal", NULL, TM_NAMES("a", "b"), 2, TM_NAMES("e"), 1);
	tm_node(m, "Equal", NULL, TM_NAMES("a", "c"), 2, TM_NAMES("f"), 1);
	tm_node(m, "Or", NULL, TM_NAMES("e", "f"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_BOOL, NULL, 0);
	y = run(m, err, sizeof(err));
	/* e = [1, 1, 0], f = [0, 0, 1] */
	expect(y, IR_DTYPE_BOOL, V(1, 1, 1), 3);
	rt_value_unref(y);
	ir_model_free(m);
}

static void test_where_strings(void)
{
	struct ir_model *m = tm_new(16);
	struct rt_value *y;
	char err[512];

	tm_init(m, "c", IR_DTYPE_BOOL, TM_DIMS(2), 1, V(1, 0));
	init_strings(m, "x", (const char *const[]){ "a", "b" }, 2);
	init_strings(m, "z", (const char *const[]){ "long string" }, 1);
	tm_node(m, "Where", NULL, TM_NAMES("c", "x", "z"), 3, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_STRING, NULL, 0);
	y = run(m, err, sizeof(err));
	CU_ASSERT_FATAL(y != NULL);
	CU_ASSERT_EQUAL_FATAL(y->numel, 2);
	CU_ASSERT_STRING_EQUAL(((char **)y->data)[0], "a");
	CU_ASSERT_STRING_EQUAL(((char **)y->data)[1], "long string");
	rt_value_unref(y);
	ir_model_free(m);
}

static void test_cast_from_string(void)
{
	static const char *const f[] = { "3.5", "-INF", "nan", "1e3", "+Inf", " 2" };
	static const char *const i[] = { "12345678901234567", "-5", "7.9" };
	struct ir_model *m = tm_new(13);
	struct ir_node *n;
	struct rt_value *y;
	char err[512];

	init_strings(m, "a", f, 6);
	n = tm_node(m, "Cast", NULL, TM_NAMES("a"), 1, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "to", IR_DTYPE_FLOAT) == 0);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	y = run(m, err, sizeof(err));
	expect(y, IR_DTYPE_FLOAT, V(3.5, -INFINITY, NAN, 1000, INFINITY, 2), 6);
	rt_value_unref(y);
	ir_model_free(m);

	m = tm_new(13);
	init_strings(m, "a", i, 3);
	n = tm_node(m, "Cast", NULL, TM_NAMES("a"), 1, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "to", IR_DTYPE_INT64) == 0);
	tm_output(m, "y", IR_DTYPE_INT64, NULL, 0);
	y = run(m, err, sizeof(err));
	CU_ASSERT_FATAL(y != NULL);
	/* integers exactly (not through double), "7.9" truncated */
	CU_ASSERT_EQUAL(((int64_t *)y->data)[0], 12345678901234567LL);
	CU_ASSERT_EQUAL(((int64_t *)y->data)[1], -5);
	CU_ASSERT_EQUAL(((int64_t *)y->data)[2], 7);
	rt_value_unref(y);
	ir_model_free(m);
}

static void test_clip_min_above_max(void)
{
	struct case1 c = { 13, "Clip", NULL, { IR_DTYPE_FLOAT, IR_DTYPE_FLOAT, IR_DTYPE_FLOAT }, 3,
			   { 1, 0, 0 }, { { 3 }, { 0 }, { 0 } },
			   { V(-5, 0, NAN), V(2), V(1) }, IR_DTYPE_FLOAT };
	struct case1 i = { 13, "Clip", NULL, { IR_DTYPE_INT32, IR_DTYPE_INT32, IR_DTYPE_INT32 }, 3,
			   { 1, 0, 0 }, { { 3 }, { 0 }, { 0 } },
			   { V(-5, 0, 9), V(2), V(1) }, IR_DTYPE_INT32 };

	/* min(max(x, 2), 1) = 1; NaN stays */
	check(&c, NULL, V(1, 1, NAN), 3);
	check(&i, NULL, V(1, 1, 1), 3);
}

/* Tensors big enough for the threaded paths (run() uses 2 threads): the
 * contiguous binary path, the broadcast rows, the unary chunks, Cast. */
static void test_big_tensors_threads(void)
{
	enum { R = 300, C = 400 };
	double *a = malloc(sizeof(double) * R * C), *b = malloc(sizeof(double) * C);
	double *want = malloc(sizeof(double) * R * C);
	struct ir_model *m = tm_new(17);
	struct ir_node *n;
	struct rt_value *y;
	char err[512];

	CU_ASSERT_FATAL(a && b && want);
	for (int i = 0; i < R * C; i++)
		a[i] = (i % 7) - 3;
	for (int j = 0; j < C; j++)
		b[j] = j % 5;
	/* y = float16(relu(a + b) * a - (a + b)) */
	for (int i = 0; i < R * C; i++) {
		double sum = a[i] + b[i % C];

		want[i] = (sum > 0 ? sum : 0) * a[i] - sum;
	}
	tm_init(m, "a", IR_DTYPE_FLOAT, TM_DIMS(R, C), 2, a);
	tm_init(m, "b", IR_DTYPE_FLOAT, TM_DIMS(C), 1, b);
	tm_node(m, "Add", NULL, TM_NAMES("a", "b"), 2, TM_NAMES("s"), 1);
	tm_node(m, "Relu", NULL, TM_NAMES("s"), 1, TM_NAMES("r"), 1);
	tm_node(m, "Mul", NULL, TM_NAMES("r", "a"), 2, TM_NAMES("p"), 1);
	tm_node(m, "Sub", NULL, TM_NAMES("p", "s"), 2, TM_NAMES("d"), 1);
	n = tm_node(m, "Cast", NULL, TM_NAMES("d"), 1, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "to", IR_DTYPE_FLOAT16) == 0);
	tm_output(m, "y", IR_DTYPE_FLOAT16, NULL, 0);
	y = run(m, err, sizeof(err));
	expect(y, IR_DTYPE_FLOAT16, want, R * C);
	rt_value_unref(y);
	ir_model_free(m);
	free(a);
	free(b);
	free(want);
}

static void test_kernel_tables_sorted(void)
{
	const struct rt_kernel *prev = NULL;

	for (size_t i = 0; i < rt_n_families; i++) {
		const char *name = rt_families[i].name;

		if (strcmp(name, "elem") && strcmp(name, "binary") &&
		    strcmp(name, "act") && strcmp(name, "cast"))
			continue;
		prev = NULL;
		for (size_t j = 0; j < *rt_families[i].n; j++) {
			const struct rt_kernel *k = &rt_families[i].kernels[j];

			if (prev) {
				int c = strcmp(prev->domain, k->domain);

				if (!c)
					c = strcmp(prev->op, k->op);
				if (!c)
					c = prev->since_min < k->since_min ? -1 : 1;
				CU_ASSERT(c < 0);
			}
			prev = k;
		}
	}
}

/* Every registry version of the family's ops has a kernel. */
static void test_every_version_covered(void)
{
	static const char *const ops[] = {
		"Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil",
		"Cos", "Cosh", "Erf", "Exp", "Floor", "IsInf", "IsNaN", "Log",
		"Neg", "Not", "Reciprocal", "Round", "Sign", "Sin", "Sinh", "Sqrt",
		"Tan", "Tanh", "BitwiseNot", "Add", "Sub", "Mul", "Div", "Pow",
		"Mod", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "And",
		"Or", "Xor", "Equal", "Greater", "GreaterOrEqual", "Less",
		"LessOrEqual", "Where", "Max", "Min", "Mean", "Sum", "Relu",
		"LeakyRelu", "PRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Elu",
		"Selu", "Celu", "Softplus", "Softsign", "Mish", "Gelu", "Swish",
		"ThresholdedRelu", "Shrink", "Clip", "SwiGLU", "Cast", "CastLike",
		"BitCast"
	};
	static const char *const ms[] = { "Gelu", "BiasGelu", "FastGelu", "QuickGelu" };

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]) + sizeof(ms) / sizeof(ms[0]); i++) {
		int contrib = i >= sizeof(ops) / sizeof(ops[0]);
		const char *dom = contrib ? "com.microsoft" : "ai.onnx";
		const char *op = contrib ? ms[i - sizeof(ops) / sizeof(ops[0])] : ops[i];
		const struct ir_op_schema *first;
		size_t n = ir_registry_versions(dom, op, &first);

		CU_ASSERT(n > 0);
		for (size_t v = 0; v < n; v++) {
			const struct rt_kernel *k = rt_kernel_find(dom, op, first[v].since_version);

			if (!k)
				fprintf(stderr, "\nno kernel for %s %s-%d\n", dom, op,
					first[v].since_version);
			CU_ASSERT(k != NULL);
		}
	}
}

/* ulps between two finite floats of the same sign */
static int64_t ulps(float a, float b)
{
	int32_t ia, ib;

	memcpy(&ia, &a, sizeof(ia));
	memcpy(&ib, &b, sizeof(ib));
	return ia > ib ? (int64_t)ia - ib : (int64_t)ib - ia;
}

/* The worst distance in ulp of fn's results from ref's (in double) over
 * every 61st float up to infinity, both signs. */
static int64_t worst_ulps(void (*fn)(const float *, float *, int64_t), double (*ref)(double))
{
	enum { N = 4096 };
	static float x[N], y[N];
	int64_t worst = 0;
	uint32_t bits = 0;

	while (bits < 0x7f800000u) {
		int n = 0;

		for (; n < N && bits < 0x7f800000u; n++, bits += 61) {
			memcpy(&x[n], &bits, sizeof(bits));
			if (n & 1)
				x[n] = -x[n];
		}
		fn(x, y, n);
		for (int i = 0; i < n; i++) {
			int64_t u = ulps(y[i], (float)ref((double)x[i]));

			if (u > worst)
				worst = u;
		}
	}
	return worst;
}

/* fn keeps NaN, +-inf's limits +-1 and -0, and gives ref's value at v
 * within max ulp. */
static void specials(void (*fn)(const float *, float *, int64_t), double (*ref)(double),
		     float v, int64_t max)
{
	float x[5] = { NAN, INFINITY, -INFINITY, -0.0f, v }, y[5];

	fn(x, y, 5);
	CU_ASSERT(isnan(y[0]));
	CU_ASSERT_EQUAL(y[1], 1.0f);
	CU_ASSERT_EQUAL(y[2], -1.0f);
	CU_ASSERT(y[3] == 0 && signbit(y[3]));
	CU_ASSERT(ulps(y[4], (float)ref(v)) <= max);
}

/* The vectorized float erf is within one ulp of erf() in double rounded
 * to float, over every 61st positive float and their negatives, and
 * keeps NaN, signed zeros and the infinities' limits. */
static void test_erf_f32_ulp(void)
{
	CU_ASSERT(worst_ulps(kel_erf_f32, erf) <= 1);
	specials(kel_erf_f32, erf, 3.99f, 1);
}

/* kel_tanh512 (the recurrent cells' tanh) against tanh in double: within
 * 2 ulp (1 seen); NaN, the infinities and -0 kept.  (Skipped without
 * AVX-512.) */
static void tanh512(const float *x, float *y, int64_t n)
{
	if (!kel_tanh512(x, y, n))
		CU_FAIL("no AVX-512");
}

static void test_tanh512_ulp(void)
{
	float x = 0.5f, y;

	if (!kel_tanh512(&x, &y, 1))
		return;
	CU_ASSERT(worst_ulps(tanh512, tanh) <= 2);
	specials(tanh512, tanh, 0.625f, 2);
}

/* Elementwise nodes write into an operand that dies with them: a chain
 * over an initializer gives the same result twice (the initializer is
 * never written), and a value read again later is not overwritten. */
static void test_in_place_reuse(void)
{
	struct ir_model *m = tm_new(14);
	struct rt_value *y;
	char err[512];

	tm_init(m, "a", IR_DTYPE_FLOAT, TM_DIMS(4), 1, V(1, -2, 3, -4));
	tm_node(m, "Neg", NULL, TM_NAMES("a"), 1, TM_NAMES("t"), 1);
	tm_node(m, "Relu", NULL, TM_NAMES("t"), 1, TM_NAMES("u"), 1);
	tm_node(m, "Add", NULL, TM_NAMES("t", "u"), 2, TM_NAMES("w"), 1);
	tm_node(m, "Abs", NULL, TM_NAMES("w"), 1, TM_NAMES("v"), 1);
	tm_node(m, "Mul", NULL, TM_NAMES("v", "v"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	for (int r = 0; r < 2; r++) {
		y = run(m, err, sizeof(err));
		if (!y)
			fprintf(stderr, "\nrun: %s\n", err);
		expect(y, IR_DTYPE_FLOAT, V(1, 16, 9, 64), 4);
		rt_value_unref(y);
	}
	ir_model_free(m);
}

/* n float ulps apart (a NaN pair 0; signed zeros apart) */
static int64_t ulps_apart(float a, float b)
{
	int32_t x, y;

	if (isnan(a) && isnan(b))
		return 0;
	memcpy(&x, &a, 4);
	memcpy(&y, &b, 4);
	x = x < 0 ? INT32_MIN - x : x;
	y = y < 0 ? INT32_MIN - y : y;
	return x > y ? (int64_t)x - y : (int64_t)y - x;
}

/* A seeded double in [0, 1) (53 bits of the generator's state) */
static double draw01(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(*s >> 11) / 9007199254740992.0;
}

/* A float32 function under test: n values of x into y (arg: Sin 0, Cos 1) */
typedef void (*f32_fn)(const float *x, float *y, int64_t n, int arg);

/* f on x into y, and in place on a copy in z: each result ref in double
 * rounded, or one ulp away (a value past that printed under name), and
 * the run in place the same bytes. */
static void check_ulp1(const char *name, f32_fn f, int arg, double (*ref)(double),
		       const float *x, float *y, float *z, int64_t n)
{
	int64_t worst = 0;

	f(x, y, n, arg);
	memcpy(z, x, (size_t)n * sizeof(float));
	f(z, z, n, arg);
	for (int64_t i = 0; i < n; i++) {
		float want = (float)ref((double)x[i]);
		int64_t u = ulps_apart(y[i], want);

		worst = u > worst ? u : worst;
		if (u > 1)
			fprintf(stderr, "\n%s(%g) = %.9g, want %.9g\n", name, (double)x[i],
				(double)y[i], (double)want);
	}
	CU_ASSERT(worst <= 1);
	CU_ASSERT(!memcmp(y, z, (size_t)n * sizeof(float)));
}

static void exp_fn(const float *x, float *y, int64_t n, int arg)
{
	(void)arg;
	kel_exp512(x, y, n);
}

static void erf_fn(const float *x, float *y, int64_t n, int arg)
{
	(void)arg;
	kel_erf_f32(x, y, n);
}

static void atan_fn(const float *x, float *y, int64_t n, int arg)
{
	(void)arg;
	kel_atan512(x, y, n);
}

/* Sin and Cos on float32 (k_trig.c): each value sin or cos in double
 * rounded, or one ulp away, on seeded values of magnitude up to 4, 100,
 * 1e5 and 2e6 (past the loop's reduction: libm's) and on zeros of both
 * signs, subnormals, infinities, NaN, 1e6 and near it, 3.4e38; in place
 * too, the values past 1e6 among them. */
static void test_sin_cos_f32(void)
{
	static const float sp[] = { 0, -0.0f, 1e-40f, -1e-40f, 1e-30f, INFINITY, -INFINITY, NAN,
				    1e6f, -1e6f, 999999.9f, 3.4e38f, 1.5707964f, 3.1415927f,
				    -3.1415927f, 6.2831855f };
	enum { N = 20000 };
	static float x[N], y[N], z[N];
	uint64_t seed = 41;

	for (int c = 0; c < 2; c++) {
		for (int64_t i = 0; i < N; i++) {
			double u = draw01(&seed), mag = i < N / 4 ? 4 : i < N / 2 ? 100 :
							   i < 3 * N / 4 ? 1e5 : 2e6;

			x[i] = i < 16 ? sp[i] : (float)((2 * u - 1) * mag);
		}
		check_ulp1(c ? "cos" : "sin", kel_sincos_f32, c, c ? cos : sin, x, y, z, N);
	}
}

/* Exp on float32 (k_act512.c, where the CPU has AVX-512): each value exp
 * in double rounded, or one ulp away, on seeded values over [-110, 95]
 * (subnormal results, overflow to inf) and on zeros, infinities, NaN and
 * the overflow's edge; in place too. */
static void test_exp_f32(void)
{
	static const float sp[] = { 0, -0.0f, INFINITY, -INFINITY, NAN, 88.72f, 88.73f,
				    -87.3f, -103.9f, -110, 1e-30f, 89, 1, -1 };
	enum { N = 40000 };
	static float x[N], y[N], z[N];
	uint64_t seed = 43;

	for (int64_t i = 0; i < N; i++) {
		double u = draw01(&seed);

		x[i] = i < 14 ? sp[i] : (float)(u * 205 - 110);
	}
	if (!kel_exp512(x, y, N)) {   /* the op then takes exp in double, rounded */
		fprintf(stderr, "\nkelem: no AVX-512 here: exp float32 skipped\n");
		return;
	}
	check_ulp1("exp", exp_fn, 0, exp, x, y, z, N);
}

/* Erf on float32 (k_math512.c where the CPU has AVX-512, else the
 * portable loop): each value erf in double rounded, or one ulp away, on
 * seeded values over [-6, 6] (every interval of the AVX-512 path, the
 * clamp at 4) and on zeros, subnormals, infinities, NaN and the
 * intervals' edges; in place too. */
static void test_erf_f32(void)
{
	static const float sp[] = { 0, -0.0f, 1e-40f, -1e-40f, INFINITY, -INFINITY, NAN, 4, -4,
				    3.9999998f, 0.25f, 0.24999999f, 0.5f, 3.75f, 1e-30f };
	enum { N = 40000 };
	static float x[N], y[N], z[N];
	uint64_t seed = 47;

	for (int64_t i = 0; i < N; i++) {
		double u = draw01(&seed);

		x[i] = i < 15 ? sp[i] : (float)(u * 12 - 6);
	}
	check_ulp1("erf", erf_fn, 0, erf, x, y, z, N);
}

/* Atan on float32 (k_math512.c, where the CPU has AVX-512): each value
 * atan in double rounded, or one ulp away, on seeded values of every
 * magnitude from 1e-30 to 1e30, both signs (both branches, every
 * interval), and on zeros, 1, infinities, NaN, subnormals and the
 * largest float; in place too. */
static void test_atan_f32(void)
{
	static const float sp[] = { 0, -0.0f, 1, -1, INFINITY, -INFINITY, NAN, 1e-40f, -1e-40f,
				    3.4e38f, 0.0625f, 0.9999999f, 1.0000001f, 16, 1e-30f };
	enum { N = 40000 };
	static float x[N], y[N], z[N];
	uint64_t seed = 53;

	for (int64_t i = 0; i < N; i++) {
		double u = draw01(&seed);

		x[i] = i < 15 ? sp[i] : (float)((i % 2 ? -1 : 1) * pow(10, u * 60 - 30));
	}
	if (!kel_atan512(x, y, N)) {   /* the op then takes atan in double, rounded */
		fprintf(stderr, "\nkelem: no AVX-512 here: atan float32 skipped\n");
		return;
	}
	check_ulp1("atan", atan_fn, 0, atan, x, y, z, N);
}

static const struct unit_test tests[] = {
	{ "add int8 wraps", test_add_int8_wraps },
	{ "sin and cos float32", test_sin_cos_f32 },
	{ "exp float32", test_exp_f32 },
	{ "erf float32", test_erf_f32 },
	{ "atan float32", test_atan_f32 },
	{ "sum in place", test_sum_in_place },
	{ "add uint16 wraps", test_add_uint16_wraps },
	{ "add float16 broadcast", test_add_float16_broadcast },
	{ "sub bfloat16 scalar", test_sub_bfloat16_scalar },
	{ "mul uint32 wraps", test_mul_uint64_large },
	{ "div int truncates", test_div_int_truncates },
	{ "div int by zero fails", test_div_int_by_zero_fails },
	{ "mod int by zero fails", test_mod_int_by_zero_fails },
	{ "mod sign rules", test_mod_sign_rules },
	{ "round half to even", test_round_half_even },
	{ "legacy broadcast axis", test_legacy_broadcast_axis },
	{ "bitshift uint8", test_bitshift_uint8 },
	{ "pow mixed types", test_pow_mixed_types },
	{ "pow narrow by a scalar", test_pow_narrow_scalar },
	{ "pow cube as onnxruntime", test_pow_cube },
	{ "where over strides", test_where_strides },
	{ "gelu forms over blocks", test_gelu_blocks },
	{ "PRelu over vector runs, signed zeros, NaN", test_prelu_runs },
	{ "mish values", test_mish_values },
	{ "elu and selu values", test_elu_selu_values },
	{ "mul float16 blocks", test_mul_float16_blocks },
	{ "clip attrs and inputs", test_clip_attrs_and_inputs },
	{ "where broadcast", test_where_broadcast },
	{ "variadic max unsigned", test_variadic_max_unsigned },
	{ "abs sign neg ints", test_abs_sign_neg_ints },
	{ "cast float8 saturate", test_cast_float8_saturate },
	{ "cast int4 wraps", test_cast_int4_wraps },
	{ "cast numbers", test_cast_numbers },
	{ "cast double rounds once", test_cast_double_rounds_once },
	{ "cast to string", test_cast_to_string },
	{ "bitcast", test_bitcast },
	{ "activations", test_activations },
	{ "tanh512 within 2 ulp", test_tanh512_ulp },
	{ "more activations", test_more_activations },
	{ "isinf flags", test_isinf_flags },
	{ "equal strings", test_equal_strings },
	{ "where strings", test_where_strings },
	{ "cast from string", test_cast_from_string },
	{ "clip min above max", test_clip_min_above_max },
	{ "big tensors threads", test_big_tensors_threads },
	{ "in place reuse", test_in_place_reuse },
	{ "erf float32 within one ulp", test_erf_f32_ulp },
	{ "kernel tables sorted", test_kernel_tables_sorted },
	{ "every version covered", test_every_version_covered },
	{ NULL, NULL },
};

int suite_kelem_register(void)
{
	return unit_add_suite("kelem", tests);
}
