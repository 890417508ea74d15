/* suite_kreduce.c: unit tests of reduction, softmax, sort and einsum
 * kernels on one-node models whose inputs are initializers, against
 * values derived by hand: dtypes and attributes the backend data does not
 * cover (integer and half inputs, empty axes, empty sets, keepdims=0,
 * select_last_index, old-version semantics, ellipsis and diagonals in
 * Einsum) and error paths. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/suites.h"
#include "tests/unit/tmodel.h"

#define MAX_OUT 4

/* A one-node model under construction. */
struct kt {
	struct ir_model *m;
	struct ir_node *n;
	size_t n_out;
	struct rt_value *out[MAX_OUT];
	char err[512];
};

/* Inputs: name "" for an absent one; values converted to dtype. */
struct kin {
	int dtype;
	size_t rank;
	int64_t dims[4];
	const double *v;
	const int64_t *i64;         /* exact int64 values instead of v */
};

#define KIN(dt, r, d, ...) { dt, r, d, (const double[]){ __VA_ARGS__ }, NULL }
#define D(...) { __VA_ARGS__ }

static void kt_new(struct kt *t, int opset, const char *op, const struct kin *ins,
		   size_t n_in, size_t n_out)
{
	static const char *const outs[MAX_OUT] = { "y0", "y1", "y2", "y3" };
	const char *names[8];
	char buf[8][24];

	memset(t, 0, sizeof(*t));
	t->m = tm_new(opset);
	t->n_out = n_out;
	for (size_t i = 0; i < n_in; i++) {
		if (!ins[i].v) {
			names[i] = "";
			continue;
		}
		snprintf(buf[i], sizeof(buf[i]), "x%zu", i);
		names[i] = buf[i];
		if (ins[i].i64) {
			size_t numel = 1;

			for (size_t j = 0; j < ins[i].rank; j++)
				numel *= (size_t)ins[i].dims[j];
			CU_ASSERT_FATAL(ir_graph_add_initializer(t->m->graph,
				ir_tensor_new_raw(buf[i], IR_DTYPE_INT64, ins[i].dims, ins[i].rank,
						  ins[i].i64, numel * sizeof(int64_t))) != NULL);
		} else {
			tm_init(t->m, buf[i], ins[i].dtype, ins[i].dims, ins[i].rank, ins[i].v);
		}
	}
	t->n = tm_node(t->m, op, NULL, names, n_in, outs, n_out);
}

/* Run; 0 or the error status (message in t->err). */
static int kt_run(struct kt *t)
{
	static const char *const outs[MAX_OUT] = { "y0", "y1", "y2", "y3" };
	struct rt_opts o = { .threads = 1 };
	struct rt_session *s = NULL;
	struct ir_diag d;
	int rc;

	for (size_t i = 0; i < t->n_out; i++)
		tm_output(t->m, outs[i], IR_DTYPE_FLOAT, NULL, 0);
	tm_verify(t->m);
	ir_diag_init(&d);
	if ((rc = rt_session_new(t->m, &o, &s, &d)) == 0)
		rc = rt_session_run(s, NULL, 0, t->out, &d);
	snprintf(t->err, sizeof(t->err), "%s", d.msg);
	rt_session_free(s);
	return rc;
}

static void kt_free(struct kt *t)
{
	for (size_t i = 0; i < MAX_OUT; i++)
		rt_value_unref(t->out[i]);
	ir_model_free(t->m);
}

/* Output i has dtype, shape and values (within tol). */
static void check(const struct kt *t, size_t i, int dtype, int rank,
		  const int64_t *dims, const double *want, double tol)
{
	const struct rt_value *v = t->out[i];

	CU_ASSERT_FATAL(v != NULL);
	CU_ASSERT_EQUAL(v->dtype, dtype);
	CU_ASSERT_EQUAL_FATAL(v->rank, rank);
	for (int j = 0; j < rank; j++)
		CU_ASSERT_EQUAL(v->dims[j], dims[j]);
	for (int64_t j = 0; j < v->numel; j++) {
		double got = rt_value_get_f64(v, j);
		int ok = isnan(want[j]) ? isnan(got) : got == want[j] || fabs(got - want[j]) <= tol;

		if (!ok)
			fprintf(stderr, "\noutput %zu element %lld: got %.9g, want %.9g\n",
				i, (long long)j, got, want[j]);
		CU_ASSERT(ok);
	}
}

#define CHECK(t, i, dt, r, d, tol, ...) \
	check(t, i, dt, r, (const int64_t[])d, (const double[]){ __VA_ARGS__ }, tol)

/* Expect a failure whose message contains `part`. */
static void expect_error(struct kt *t, const char *part)
{
	CU_ASSERT(kt_run(t) < 0);
	if (!strstr(t->err, part))
		fprintf(stderr, "\nerror '%s' lacks '%s'\n", t->err, part);
	CU_ASSERT(strstr(t->err, part) != NULL);
	kt_free(t);
}

/* ---- Reduce* ------------------------------------------------------------ */

static void test_reduce_int_dtypes(void)
{
	struct kin in[] = {
		KIN(IR_DTYPE_INT32, 2, D(2, 3), 1, 2, 3, 4, 5, 6),
		KIN(IR_DTYPE_INT64, 1, D(1), 1),
	};
	struct kt t;

	/* ReduceSum-13: axes input, keepdims=0 */
	kt_new(&t, 13, "ReduceSum", in, 2, 1);
	ir_node_set_int(t.n, "keepdims", 0);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_INT32, 1, D(2), 0, 6, 15);
	kt_free(&t);
	/* ReduceMean-11 over int truncates 2.5 -> 2 and 3.5 -> 3: attribute axes */
	kt_new(&t, 11, "ReduceMean", in, 1, 1);
	ir_node_set_ints(t.n, "axes", (const int64_t[]){ 0 }, 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_INT32, 2, D(1, 3), 0, 2, 3, 4);
	kt_free(&t);
	/* ReduceProd and ReduceSumSquare over every axis (no axes) */
	kt_new(&t, 13, "ReduceProd", in, 1, 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_INT32, 2, D(1, 1), 0, 720);
	kt_free(&t);
	kt_new(&t, 13, "ReduceSumSquare", in, 1, 1);
	ir_node_set_int(t.n, "keepdims", 0);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_INT32, 0, D(0), 0, 91);
	kt_free(&t);
}

static void test_reduce_l2_lse_half(void)
{
	struct kin l2[] = { KIN(IR_DTYPE_INT64, 1, D(2), 3, 4) };
	struct kin lse[] = {
		KIN(IR_DTYPE_FLOAT16, 2, D(2, 2), 0, 1.0986328125 /* ln 3 in half */, 1, 1),
		KIN(IR_DTYPE_INT64, 1, D(1), -1),
	};
	struct kin ls[] = { KIN(IR_DTYPE_DOUBLE, 1, D(2), 1, M_E - 1) };
	struct kt t;

	kt_new(&t, 18, "ReduceL2", l2, 1, 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_INT64, 1, D(1), 0, 5);
	kt_free(&t);
	/* ln(1 + 3) = 1.386; ln(2e) = 1.693 */
	kt_new(&t, 18, "ReduceLogSumExp", lse, 2, 1);
	ir_node_set_int(t.n, "keepdims", 0);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT16, 1, D(2), 2e-3, log(4.0), 1 + log(2.0));
	kt_free(&t);
	kt_new(&t, 1, "ReduceLogSum", ls, 1, 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_DOUBLE, 1, D(1), 1e-12, 1);
	kt_free(&t);
}

static void test_reduce_axes_apart(void)
{
	/* [2,3,2] of 0..11 over axes 0 and 2: j=0: 0+1+6+7, j=1: 2+3+8+9,
	 * j=2: 4+5+10+11 */
	struct kin in[] = {
		KIN(IR_DTYPE_FLOAT, 3, D(2, 3, 2), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11),
		KIN(IR_DTYPE_INT64, 1, D(2), 2, -3),
	};
	struct kt t;

	kt_new(&t, 18, "ReduceSum", in, 2, 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 3, D(1, 3, 1), 0, 14, 22, 30);
	kt_free(&t);
	kt_new(&t, 18, "ReduceMax", in, 2, 1);
	ir_node_set_int(t.n, "keepdims", 0);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 1, D(3), 0, 7, 9, 11);
	kt_free(&t);
	kt_new(&t, 18, "ReduceL1", in, 2, 1);
	ir_node_set_int(t.n, "keepdims", 0);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 1, D(3), 0, 14, 22, 30);
	kt_free(&t);
}

static void test_reduce_empty_axes(void)
{
	struct kin in[] = {
		KIN(IR_DTYPE_FLOAT, 2, D(2, 2), -1, 2, 3, -4),
		{ IR_DTYPE_INT64, 1, D(0), (const double[]){ 0 }, NULL },
	};
	struct kt t;

	/* noop: the op on each element alone (identity for sum) */
	kt_new(&t, 13, "ReduceSum", in, 2, 1);
	ir_node_set_int(t.n, "noop_with_empty_axes", 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 2, D(2, 2), 0, -1, 2, 3, -4);
	kt_free(&t);
	kt_new(&t, 18, "ReduceSumSquare", in, 2, 1);
	ir_node_set_int(t.n, "noop_with_empty_axes", 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 2, D(2, 2), 0, 1, 4, 9, 16);
	kt_free(&t);
	/* empty axes without noop: every axis */
	kt_new(&t, 18, "ReduceMin", in, 2, 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 2, D(1, 1), 0, -4);
	kt_free(&t);
	/* absent axes input with noop: identity too */
	in[1].v = NULL;
	kt_new(&t, 18, "ReduceMean", in, 2, 1);
	ir_node_set_int(t.n, "noop_with_empty_axes", 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 2, D(2, 2), 0, -1, 2, 3, -4);
	kt_free(&t);
}

static void test_reduce_empty_set(void)
{
	struct kin u8[] = {
		{ IR_DTYPE_UINT8, 2, D(2, 0), (const double[]){ 0 }, NULL },
		KIN(IR_DTYPE_INT64, 1, D(1), 1),
	};
	struct kin f[] = {
		{ IR_DTYPE_FLOAT, 2, D(2, 0), (const double[]){ 0 }, NULL },
		KIN(IR_DTYPE_INT64, 1, D(1), 1),
	};
	struct kt t;

	/* min of nothing: the dtype's largest value; max: its smallest */
	kt_new(&t, 18, "ReduceMin", u8, 2, 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_UINT8, 2, D(2, 1), 0, 255, 255);
	kt_free(&t);
	kt_new(&t, 18, "ReduceMax", f, 2, 1);
	ir_node_set_int(t.n, "keepdims", 0);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 1, D(2), 0, -INFINITY, -INFINITY);
	kt_free(&t);
	kt_new(&t, 18, "ReduceLogSum", f, 2, 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 2, D(2, 1), 0, -INFINITY, -INFINITY);
	kt_free(&t);
	kt_new(&t, 18, "ReduceMean", f, 2, 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 2, D(2, 1), 0, NAN, NAN);
	kt_free(&t);
}

static void test_reduce_empty_apart(void)
{
	/* [0,2,3,2] over axes 1 and 3 (a transpose of nothing): [0,1,3,1] */
	struct kin in[] = {
		{ IR_DTYPE_FLOAT, 4, D(0, 2, 3, 2), (const double[]){ 0 }, NULL },
		KIN(IR_DTYPE_INT64, 1, D(2), 1, 3),
	};
	struct kt t;

	kt_new(&t, 18, "ReduceSum", in, 2, 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 4, D(0, 1, 3, 1), 0, 0);
	kt_free(&t);
}

static void test_reduce_bool_max(void)
{
	struct kin in[] = {
		KIN(IR_DTYPE_BOOL, 2, D(2, 2), 0, 1, 0, 0),
		KIN(IR_DTYPE_INT64, 1, D(1), 1),
	};
	struct kt t;

	kt_new(&t, 20, "ReduceMax", in, 2, 1);
	ir_node_set_int(t.n, "keepdims", 0);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_BOOL, 1, D(2), 0, 1, 0);
	kt_free(&t);
}

/* ReduceMax and ReduceMin of float32 in vectors (k_reduce512.c) keep the
 * element loops' values: along a line of 37 (two vectors of 16 and a
 * tail of 5) the extreme in the tail and at the front; a line whose
 * maximum is zero takes its first zero's sign (-0 before +0, and +0
 * before -0); a NaN anywhere gives NaN; over rows (axis 0 of [5, 21])
 * each column alike, its tail columns too. */
static float kr_one(int opset, const char *op, const double *v, int64_t rows, int64_t cols,
		    int64_t axis, int64_t at)
{
	struct kin in[] = {
		{ IR_DTYPE_FLOAT, 2, D(rows, cols), v, NULL },
		KIN(IR_DTYPE_INT64, 1, D(1), (double)axis),
	};
	struct kt t;
	float y = -1;

	kt_new(&t, opset, op, in, 2, 1);
	ir_node_set_int(t.n, "keepdims", 0);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CU_ASSERT_FATAL(t.out[0]->numel == (axis ? rows : cols));
	y = ((const float *)t.out[0]->data)[at];
	kt_free(&t);
	return y;
}

static void test_reduce_maxmin_vectors(void)
{
	double v[5 * 37];
	float y;

	for (int i = 0; i < 37; i++)
		v[i] = i * 0.25 - 4;
	v[35] = 100;
	v[2] = -100;
	CU_ASSERT(kr_one(18, "ReduceMax", v, 1, 37, 1, 0) == 100.0f);
	CU_ASSERT(kr_one(18, "ReduceMin", v, 1, 37, 1, 0) == -100.0f);
	v[35] = 4.5;
	v[2] = -3.5;
	v[0] = 50;
	v[36] = -50;
	CU_ASSERT(kr_one(18, "ReduceMax", v, 1, 37, 1, 0) == 50.0f);
	CU_ASSERT(kr_one(18, "ReduceMin", v, 1, 37, 1, 0) == -50.0f);
	/* zeros: the first one's sign, wherever the two lie */
	for (int k = 0; k < 8; k++) {
		static const int at[8][2] = { { 3, 20 }, { 20, 3 }, { 1, 30 }, { 30, 1 },
					      { 14, 36 }, { 36, 14 }, { 0, 17 }, { 17, 0 } };

		for (int i = 0; i < 37; i++)
			v[i] = -1 - i;
		for (int neg = 0; neg < 2; neg++) {
			v[at[k][0]] = neg ? -0.0 : 0.0;
			v[at[k][1]] = neg ? 0.0 : -0.0;
			y = kr_one(18, "ReduceMax", v, 1, 37, 1, 0);
			/* neg: -0 at at[k][0], so first when that is the lower */
			CU_ASSERT(y == 0 && !signbit(y) == !(neg == (at[k][0] < at[k][1])));
		}
	}
	for (int i = 0; i < 37; i++)
		v[i] = 1 + i;
	v[5] = -0.0;
	v[30] = 0.0;
	y = kr_one(18, "ReduceMin", v, 1, 37, 1, 0);
	CU_ASSERT(y == 0 && signbit(y));
	v[17] = NAN;
	CU_ASSERT(isnan(kr_one(18, "ReduceMin", v, 1, 37, 1, 0)));
	CU_ASSERT(isnan(kr_one(18, "ReduceMax", v, 1, 37, 1, 0)));
	/* rows: [5, 21] over axis 0; column c's values r * 21 + c, but
	 * column 3 peaks in row 2, column 18 (in the tail vector) holds a
	 * NaN, column 20 zeros of both signs */
	for (int i = 0; i < 5 * 21; i++)
		v[i] = i;
	v[2 * 21 + 3] = 1000;
	v[3 * 21 + 18] = NAN;
	v[0 * 21 + 20] = -10;
	v[1 * 21 + 20] = 0.0;
	v[2 * 21 + 20] = -0.0;
	v[3 * 21 + 20] = -3;
	v[4 * 21 + 20] = -0.0;
	CU_ASSERT(kr_one(18, "ReduceMax", v, 5, 21, 0, 3) == 1000.0f);
	CU_ASSERT(kr_one(18, "ReduceMax", v, 5, 21, 0, 4) == 88.0f);
	CU_ASSERT(kr_one(18, "ReduceMin", v, 5, 21, 0, 4) == 4.0f);
	CU_ASSERT(kr_one(18, "ReduceMin", v, 5, 21, 0, 3) == 3.0f);
	CU_ASSERT(isnan(kr_one(18, "ReduceMax", v, 5, 21, 0, 18)));
	CU_ASSERT(isnan(kr_one(18, "ReduceMin", v, 5, 21, 0, 18)));
	y = kr_one(18, "ReduceMax", v, 5, 21, 0, 20);
	CU_ASSERT(y == 0 && !signbit(y));
	CU_ASSERT(kr_one(18, "ReduceMin", v, 5, 21, 0, 20) == -10.0f);
}

/* Run op (opset 18, axes an input) over axis of a float32 tensor of
 * rank dims, keepdims 0: the output's numel values into y. */
static void red_f32(const char *op, const double *v, size_t rank, const int64_t *dims,
		    int64_t axis, float *y, int64_t numel)
{
	struct kin in[] = {
		{ IR_DTYPE_FLOAT, rank, { 0 }, v, NULL },
		KIN(IR_DTYPE_INT64, 1, D(1), (double)axis),
	};
	struct kt t;

	memcpy(in[0].dims, dims, rank * sizeof(*dims));
	kt_new(&t, 18, op, in, 2, 1);
	ir_node_set_int(t.n, "keepdims", 0);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CU_ASSERT_FATAL(t.out[0]->numel == numel);
	memcpy(y, t.out[0]->data, (size_t)numel * sizeof(float));
	kt_free(&t);
}

static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

/* A quiet NaN whose float32 payload is p (kept through the double). */
static double nan_payload(uint32_t p)
{
	uint64_t b = 0x7ff8000000000000ull | (uint64_t)(p & 0x3fffff) << 29;
	double d;

	memcpy(&d, &b, sizeof(d));
	return d;
}

/* ReduceMax and ReduceMin of float32 along lines (k_reduce512.c's lines
 * sixteen at a time, or one by one past 64) bit for bit against the
 * loop (x > a, or x < a, or x NaN replaces a, in order): 37 lines (two
 * batches of sixteen and five) of each length 1 to 70, each line of one
 * kind (seeded): ordinary values; negatives (positives) and zeros of
 * both signs, so the extreme is the first zero; all zeros; NaNs of
 * distinct payloads anywhere (the last one's is the result); +-inf; all
 * -inf (+inf).  Then 1000 lines of 32. */
static void maxmin_lines_case(uint32_t *seed, int64_t lines, int64_t n)
{
	double *v = malloc((size_t)(lines * n) * sizeof(double));
	float *y = malloc((size_t)lines * sizeof(float));

	CU_ASSERT_FATAL(v && y);
	for (int64_t l = 0; l < lines; l++) {
		int kind = (int)(lcg(seed) % 8);

		for (int64_t i = 0; i < n; i++) {
			double *e = &v[l * n + i];
			uint32_t r = lcg(seed);

			*e = (double)(int)(r % 2001 - 1000) / 8;
			switch (kind) {
			case 1: *e = r % 3 ? -fabs(*e) - 1 : (r & 8 ? -0.0 : 0.0); break;
			case 2: *e = r % 3 ? fabs(*e) + 1 : (r & 8 ? -0.0 : 0.0); break;
			case 3: *e = r & 8 ? -0.0 : 0.0; break;
			case 4: if (r % 5 == 0) *e = nan_payload(r); break;
			case 5: if (r % 7 == 0) *e = r & 8 ? -INFINITY : INFINITY; break;
			case 6: *e = r & 16 ? -INFINITY : INFINITY; break;
			case 7: if (r % 11 == 0) *e = r & 8 ? -0.0 : 0.0; break;
			}
		}
	}
	for (int lt = 0; lt < 2; lt++) {
		red_f32(lt ? "ReduceMin" : "ReduceMax", v, 2, (const int64_t[]){ lines, n }, 1,
			y, lines);
		for (int64_t l = 0; l < lines; l++) {
			float a = lt ? INFINITY : -INFINITY;

			for (int64_t i = 0; i < n; i++) {
				float x = (float)v[l * n + i];

				if ((lt ? x < a : x > a) || x != x)
					a = x;
			}
			if (memcmp(&a, &y[l], sizeof(a))) {
				uint32_t ga, gy;

				memcpy(&ga, &a, 4);
				memcpy(&gy, &y[l], 4);
				fprintf(stderr, "\n%s line %lld of %lld (n %lld): got %08x, want %08x\n",
					lt ? "min" : "max", (long long)l, (long long)lines,
					(long long)n, gy, ga);
			}
			CU_ASSERT(memcmp(&a, &y[l], sizeof(a)) == 0);
		}
	}
	free(v);
	free(y);
}

static void test_reduce_maxmin_lines(void)
{
	uint32_t seed = 7;

	for (int64_t n = 1; n <= 70; n++)
		maxmin_lines_case(&seed, 37, n);
	maxmin_lines_case(&seed, 1000, 32);
	maxmin_lines_case(&seed, 3, 200);
	maxmin_lines_case(&seed, 17, 64);
}

/* ReduceSum and ReduceMean of float32 (double sums in AVX-512 where the
 * CPU has it) against long double sums: lines of 1 to 70 and of 1000 and
 * 4097, and rows ([rows, cols] over axis 0, columns in a vector's tail),
 * seeded values of magnitudes 2^-32 to 2^32 of both signs (wider than a
 * double, so the order of adds shows); within half a
 * float32 ulp of the exact value plus the double sum's bound n 2^-53
 * sum |x|.  Over rows the sums are the loop's, row by row in double:
 * equal to that bit for bit (some +-2^90 among the rows' values make a
 * change of order show). */
static void sum_case(uint32_t *seed, size_t rank, const int64_t *dims, int64_t axis)
{
	int64_t outer = 1, n = dims[axis], inner = 1, total;
	double *v;
	float *y;

	for (int64_t d = 0; d < axis; d++)
		outer *= dims[d];
	for (size_t d = (size_t)axis + 1; d < rank; d++)
		inner *= dims[d];
	total = outer * n * inner;
	v = malloc((size_t)total * sizeof(double));
	y = malloc((size_t)(outer * inner) * sizeof(float));
	CU_ASSERT_FATAL(v && y);
	for (int64_t i = 0; i < total; i++) {
		uint32_t r = lcg(seed);

		v[i] = (double)(float)ldexp((r & 1 ? -1.0 : 1.0) * (1 + (r >> 1 & 0xfff) / 4096.0),
					    (int)(r >> 13 & 0x3f) - 32);
		/* rows: some +-2^90, cancelling, so that the float32 sums
		 * depend on the order of the double adds */
		if (inner > 1 && r % 8 == 0)
			v[i] = r & 0x40000 ? 0x1p90 : -0x1p90;
	}
	for (int mean = 0; mean < 2; mean++) {
		red_f32(mean ? "ReduceMean" : "ReduceSum", v, rank, dims, axis, y, outer * inner);
		for (int64_t o = 0; o < outer; o++)
			for (int64_t c = 0; c < inner; c++) {
				long double s = 0, sa = 0;
				double d = 0, want, tol;
				float got = y[o * inner + c];

				for (int64_t i = 0; i < n; i++) {
					double x = v[(o * n + i) * inner + c];

					s += x;
					sa += fabs(x);
					d += x;
				}
				if (mean) {
					s /= n;
					sa /= n;
					d /= n;
				}
				want = (double)s;
				/* half an ulp of want (ilogb(0) is INT_MIN), the double
				 * sum's bound */
				tol = ((float)want == 0 ? 0x1p-149 : ldexp(1, ilogb((float)want) - 24)) +
				      (double)n * 0x1p-53 * (double)sa;
				if (!(fabs(got - want) <= tol))
					fprintf(stderr, "\n%s of %lld, at %lld/%lld: got %.9g, want %.12g\n",
						mean ? "mean" : "sum", (long long)n, (long long)o,
						(long long)c, got, want);
				CU_ASSERT(fabs(got - want) <= tol);
				if (inner > 1)
					CU_ASSERT(got == (float)d);
			}
	}
	free(v);
	free(y);
}

static void test_reduce_sum_accuracy(void)
{
	uint32_t seed = 11;

	for (int64_t n = 1; n <= 70; n++)
		sum_case(&seed, 2, (const int64_t[]){ 19, n }, 1);
	sum_case(&seed, 2, (const int64_t[]){ 5, 1000 }, 1);
	sum_case(&seed, 2, (const int64_t[]){ 3, 4097 }, 1);
	for (int64_t c = 2; c <= 70; c += 17)
		sum_case(&seed, 2, (const int64_t[]){ 37, c }, 0);
	sum_case(&seed, 3, (const int64_t[]){ 2, 1152, 160 }, 1);
	sum_case(&seed, 2, (const int64_t[]){ 9, 600 }, 0);
}

/* ReduceLogSumExp of float32 (vectors where the CPU has AVX-512,
 * k_reduce512.c) against the definition in long double: lines of 1 to
 * 1000 and rows of [rows, cols] over axis 0 with columns in a vector's
 * tail, seeded values over a span of 60, some -inf (adding nothing);
 * within 1e-6 + 2 float32 ulps.  A line or column of -inf gives -inf, one
 * holding +inf +inf, a NaN NaN. */
static void lse_case(double *v, int64_t rows, int64_t cols, int axis)
{
	struct kin in[] = {
		{ IR_DTYPE_FLOAT, 2, D(rows, cols), v, NULL },
		KIN(IR_DTYPE_INT64, 1, D(1), (double)axis),
	};
	int64_t n = axis ? rows : cols, len = axis ? cols : rows;
	struct kt t;

	kt_new(&t, 18, "ReduceLogSumExp", in, 2, 1);
	ir_node_set_int(t.n, "keepdims", 0);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CU_ASSERT_FATAL(t.out[0]->numel == n);
	for (int64_t o = 0; o < n; o++) {
		long double m = -INFINITY, s = 0, want;
		float got = ((const float *)t.out[0]->data)[o];
		int nan = 0;

		for (int64_t r = 0; r < len; r++) {
			float x = (float)v[axis ? o * cols + r : r * cols + o];

			nan |= isnan(x);
			m = x > m ? x : m;
		}
		for (int64_t r = 0; r < len && !isinf(m); r++)
			s += expl((long double)(float)v[axis ? o * cols + r : r * cols + o] - m);
		want = nan ? NAN : isinf(m) ? m : m + logl(s);
		if (nan || isinf(want)) {
			CU_ASSERT(nan ? isnan(got) : got == (float)want);
			continue;
		}
		if (!(fabsl(got - want) <= 1e-6 + 2 * 1.2e-7 * fabsl(want)))
			fprintf(stderr, "\nlse [%lld, %lld] axis %d at %lld: got %.9g, want %.9Lg\n",
				(long long)rows, (long long)cols, axis, (long long)o, got, want);
		CU_ASSERT(fabsl(got - want) <= 1e-6 + 2 * 1.2e-7 * fabsl(want));
	}
	kt_free(&t);
}

static void test_reduce_lse_vectors(void)
{
	static const int64_t lines[] = { 1, 15, 16, 17, 33, 257, 1000 };
	static const int64_t shapes[][2] = { { 257, 5 }, { 3, 16 }, { 40, 21 }, { 1, 37 }, { 9, 64 } };
	uint64_t seed = 2612;
	double *v = malloc(1000 * 64 * sizeof(double));

	CU_ASSERT_FATAL(v != NULL);
	for (int64_t i = 0; i < 1000 * 64; i++) {
		seed = seed * 6364136223846793005u + 1442695040888963407u;
		v[i] = (double)(seed >> 11) / 9007199254740992.0 * 60 - 40;
		if (seed % 97 == 0)
			v[i] = -INFINITY;
	}
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		lse_case(v, 2, lines[i], 1);
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		lse_case(v, shapes[i][0], shapes[i][1], 0);
	/* specials: row 0 all -inf, row 1 a +inf, row 2 a NaN; columns alike */
	for (int64_t i = 0; i < 3 * 21; i++)
		v[i] = i % 5 - 2.5;
	for (int64_t c = 0; c < 21; c++)
		v[c] = -INFINITY;
	v[21 + 17] = INFINITY;
	v[42 + 3] = NAN;
	lse_case(v, 3, 21, 1);
	lse_case(v, 3, 21, 0);
	free(v);
}

/* ArgMax and ArgMin of float32 v of rank dims over axis (as the node
 * takes it: from the end when negative), both select_last_index values,
 * against the definition: the first (last) index of the extreme, or the
 * first NaN's (as numpy's). */
static void arg_check(const double *v, size_t rank, const int64_t *dims, int axis)
{
	int a = axis < 0 ? axis + (int)rank : axis;
	int64_t outer = 1, n = dims[a], inner = 1;

	for (int d = 0; d < (int)rank; d++) {
		if (d < a)
			outer *= dims[d];
		else if (d > a)
			inner *= dims[d];
	}
	for (int op = 0; op < 2; op++)
		for (int last = 0; last < 2; last++) {
			struct kin in[] = { { IR_DTYPE_FLOAT, rank, { 0 }, v, NULL } };
			struct kt t;
			int bad = 0;

			memcpy(in[0].dims, dims, rank * sizeof(*dims));
			kt_new(&t, 13, op ? "ArgMin" : "ArgMax", in, 1, 1);
			ir_node_set_int(t.n, "axis", axis);
			ir_node_set_int(t.n, "select_last_index", last);
			CU_ASSERT_FATAL(kt_run(&t) == 0);
			CU_ASSERT_FATAL(t.out[0]->numel == outer * inner);
			for (int64_t o = 0; o < outer; o++)
				for (int64_t i = 0; i < inner; i++) {
					int64_t want = -1;
					double best = 0;

					for (int64_t r = 0; r < n; r++) {
						double x = v[(o * n + r) * inner + i];

						if (isnan(x)) {
							want = r;
							break;
						}
						if (want < 0 || (op ? x < best : x > best) ||
						    (last && x == best)) {
							want = r;
							best = x;
						}
					}
					bad += ((const int64_t *)t.out[0]->data)[o * inner + i] != want;
				}
			CU_ASSERT_EQUAL(bad, 0);
			kt_free(&t);
		}
}

/* Over a middle axis of [2, 5, 600] (the columns a block at a time, two
 * blocks): ties among the 5 rows everywhere (values -1..1), a NaN in row
 * 2 of column 100 and in row 0 of column 550. */
static void test_arg_columns(void)
{
	static double v[2 * 5 * 600];

	for (int o = 0; o < 2; o++)
		for (int r = 0; r < 5; r++)
			for (int i = 0; i < 600; i++)
				v[(o * 5 + r) * 600 + i] = (i * 7 + r * 3 + o) % 3 - 1;
	v[(0 * 5 + 2) * 600 + 100] = NAN;
	v[(1 * 5 + 0) * 600 + 550] = NAN;
	arg_check(v, 3, (const int64_t[]){ 2, 5, 600 }, 1);
}

/* Along the last axis of [6, 37] (lines of two vectors and a tail, in
 * vectors): ties across lanes (values -1..1), a line of zeros of both
 * signs (equal: the first or last index), two NaNs in a line, a line
 * whose extreme is in the tail. */
static void test_arg_lines(void)
{
	static double v[6 * 37];

	for (int r = 0; r < 6; r++)
		for (int i = 0; i < 37; i++)
			v[r * 37 + i] = (i * 5 + r) % 3 - 1;
	for (int i = 0; i < 37; i++)
		v[2 * 37 + i] = i % 2 ? 0.0 : -0.0;
	v[3 * 37 + 20] = NAN;
	v[3 * 37 + 30] = NAN;
	v[4 * 37 + 35] = 9;
	v[4 * 37 + 36] = -9;
	arg_check(v, 2, (const int64_t[]){ 6, 37 }, -1);
}

/* TopK of float32 with k well below the axis (the selection kept beside
 * its values), below half of it (the k best selected, then sorted) and
 * not (a sort of the values beside their indices): [3, 100, 2] along
 * axis 1 (strided), k 1, 5, 7, 10, 30, 49, 50 and 100, largest
 * and smallest, ties (values 0..9, each ten times: the lower index
 * first), a NaN (above everything: first for largest, never for
 * smallest), against the definition: a stable sort of each slice's
 * (value, index) pairs taken from the front. */
static void test_topk_select_f32(void)
{
	static double v[3 * 100 * 2];

	for (int i = 0; i < 600; i++)
		v[i] = (i * 37) % 10;
	v[(1 * 100 + 40) * 2 + 1] = NAN;
	for (int largest = 0; largest < 2; largest++)
		for (int ki = 0; ki < 8; ki++) {
			int64_t k = (const int64_t[]){ 1, 5, 7, 10, 30, 49, 50, 100 }[ki];
			struct kin in[] = {
				{ IR_DTYPE_FLOAT, 3, D(3, 100, 2), v, NULL },
				KIN(IR_DTYPE_INT64, 1, D(1), (double)k),
			};
			struct kt t;
			int bad = 0;

			kt_new(&t, 11, "TopK", in, 2, 2);
			ir_node_set_int(t.n, "axis", 1);
			ir_node_set_int(t.n, "largest", largest);
			CU_ASSERT_FATAL(kt_run(&t) == 0);
			for (int o = 0; o < 3; o++)
				for (int c = 0; c < 2; c++) {
					int used[100] = { 0 };

					for (int64_t q = 0; q < k; q++) {
						/* the q-th: the best unused, lowest index on ties */
						int bi = -1;

						for (int r = 0; r < 100; r++) {
							double x = v[(o * 100 + r) * 2 + c], b;

							if (used[r])
								continue;
							if (bi < 0) {
								bi = r;
								continue;
							}
							b = v[(o * 100 + bi) * 2 + c];
							if (largest ? (isnan(x) && !isnan(b)) || x > b :
								      !isnan(x) && (isnan(b) || x < b))
								bi = r;
						}
						used[bi] = 1;
						bad += ((const int64_t *)t.out[1]->data)[(o * k + q) * 2 + c] != bi;
						bad += memcmp(&((const float *)t.out[0]->data)[(o * k + q) * 2 + c],
							      &(float){ (float)v[(o * 100 + bi) * 2 + c] },
							      sizeof(float)) != 0;
					}
				}
			CU_ASSERT_EQUAL(bad, 0);
			kt_free(&t);
		}
}

static void test_reduce_errors(void)
{
	struct kin in[] = {
		KIN(IR_DTYPE_FLOAT, 2, D(2, 2), 1, 2, 3, 4),
		KIN(IR_DTYPE_INT64, 1, D(2), 1, -1),
	};
	struct kt t;

	kt_new(&t, 18, "ReduceSum", in, 2, 1);
	expect_error(&t, "repeated");
	in[1].v = (const double[]){ 0, 2 };
	kt_new(&t, 18, "ReduceProd", in, 2, 1);
	expect_error(&t, "axis 2 out of range");
}

/* ---- ArgMax, ArgMin, CumSum, CumProd ---------------------------------- */

static void test_arg(void)
{
	struct kin row[] = { KIN(IR_DTYPE_INT8, 1, D(4), 1, 3, 3, 2) };
	struct kin m[] = { KIN(IR_DTYPE_DOUBLE, 2, D(2, 2), 2, 1, 1, 1) };
	struct kt t;

	kt_new(&t, 13, "ArgMax", row, 1, 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_INT64, 1, D(1), 0, 1);
	kt_free(&t);
	kt_new(&t, 12, "ArgMax", row, 1, 1);
	ir_node_set_int(t.n, "select_last_index", 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_INT64, 1, D(1), 0, 2);
	kt_free(&t);
	kt_new(&t, 11, "ArgMin", m, 1, 1);
	ir_node_set_int(t.n, "keepdims", 0);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_INT64, 1, D(2), 0, 1, 0);
	kt_free(&t);
	kt_new(&t, 13, "ArgMin", m, 1, 1);
	ir_node_set_int(t.n, "keepdims", 0);
	ir_node_set_int(t.n, "select_last_index", 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_INT64, 1, D(2), 0, 1, 1);
	kt_free(&t);
	kt_new(&t, 13, "ArgMin", m, 1, 1);
	ir_node_set_int(t.n, "axis", -1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_INT64, 2, D(2, 1), 0, 1, 0);
	kt_free(&t);
	kt_new(&t, 13, "ArgMax", m, 1, 1);
	ir_node_set_int(t.n, "axis", 2);
	expect_error(&t, "out of range");
}

static void test_cumulative(void)
{
	struct kin f[] = {
		KIN(IR_DTYPE_FLOAT, 1, D(4), 1, 2, 3, 4),
		KIN(IR_DTYPE_INT32, 0, D(0), 0),
	};
	struct kin i2[] = {
		KIN(IR_DTYPE_INT32, 2, D(2, 2), 1, 2, 3, 4),
		KIN(IR_DTYPE_INT64, 0, D(0), 0),
	};
	struct kt t;

	kt_new(&t, 14, "CumSum", f, 2, 1);
	ir_node_set_int(t.n, "exclusive", 1);
	ir_node_set_int(t.n, "reverse", 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 1, D(4), 0, 9, 7, 4, 0);
	kt_free(&t);
	kt_new(&t, 11, "CumSum", f, 2, 1);
	ir_node_set_int(t.n, "reverse", 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 1, D(4), 0, 10, 9, 7, 4);
	kt_free(&t);
	/* down the columns: [1, 2; 3, 8], exclusive [1, 1; 1, 2] */
	kt_new(&t, 26, "CumProd", i2, 2, 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_INT32, 2, D(2, 2), 0, 1, 2, 3, 8);
	kt_free(&t);
	kt_new(&t, 26, "CumProd", i2, 2, 1);
	ir_node_set_int(t.n, "exclusive", 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_INT32, 2, D(2, 2), 0, 1, 1, 1, 2);
	kt_free(&t);
	i2[1].v = (const double[]){ 2 };
	kt_new(&t, 14, "CumSum", i2, 2, 1);
	expect_error(&t, "out of range");
}

/* ---- Softmax, LogSoftmax, Hardmax -------------------------------------- */

static void test_softmax_versions(void)
{
	struct kin in[] = { KIN(IR_DTYPE_FLOAT, 3, D(1, 2, 2), 1, 2, 3, 4) };
	double s = exp(-3.0) + exp(-2.0) + exp(-1.0) + 1, p = 1 / (1 + exp(2.0));
	struct kt t;

	/* before 13: one softmax over the 4 elements after axis 1 */
	kt_new(&t, 11, "Softmax", in, 1, 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 3, D(1, 2, 2), 1e-6, exp(-3.0) / s, exp(-2.0) / s,
	      exp(-1.0) / s, 1 / s);
	kt_free(&t);
	/* from 13: along axis 1 alone, pairs (1, 3) and (2, 4) */
	kt_new(&t, 13, "Softmax", in, 1, 1);
	ir_node_set_int(t.n, "axis", 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 3, D(1, 2, 2), 1e-6, p, p, 1 - p, 1 - p);
	kt_free(&t);
	kt_new(&t, 1, "LogSoftmax", in, 1, 1);
	ir_node_set_int(t.n, "axis", 2);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 3, D(1, 2, 2), 1e-6, -log(1 + exp(1.0)),
	      -log(1 + exp(-1.0)), -log(1 + exp(1.0)), -log(1 + exp(-1.0)));
	kt_free(&t);
}

/* Softmax or LogSoftmax (lg) along the last axis of rows x len floats v
 * (one model run); y gets the result. */
static void softmax_rows(int lg, int64_t rows, int64_t len, const double *v, float *y)
{
	struct ir_model *m = tm_new(13);
	struct rt_value *out = NULL;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(rows, len), 2);
	tm_node(m, lg ? "LogSoftmax" : "Softmax", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(rows, len), 2);
	tm_verify(m);
	CU_ASSERT_FATAL(tm_run_floats(m, (const double *const[]){ v }, &out, 1) == 0);
	CU_ASSERT_FATAL(out->numel == rows * len);
	memcpy(y, out->data, (size_t)(rows * len) * sizeof(float));
	rt_value_unref(out);
	ir_model_free(m);
}

/* Softmax and LogSoftmax of a value that dies with them (Neg(x), the
 * input negated): the result takes its block (k_softmax.c, in place),
 * lines of 2 (a tail) and of 37 (vectors and a tail), against the
 * definition in double: Softmax within 4e-6 relative (x - max rounded
 * in float32 over a spread of 30: 2e-6 of e^(x - max)), LogSoftmax within
 * 1e-6 of 1 + |y|. */
/* Softmax and LogSoftmax over axis 0 of [n, I] (each column a line, in
 * vectors where the CPU has AVX-512: k_softmax512.c) against the
 * definition in double: columns in a vector's tail, a spread of +-150
 * (quotients below the normal range, scaled back exactly), -inf
 * entries; within 4e-6 relative (1e-6 (|w| + 1) for LogSoftmax) plus
 * 2^-149 (a subnormal rounded once).  A NaN in row 0 or later, or a
 * +inf, makes its column NaN. */
static void sm_cols_case(int lg, int64_t n, int64_t I, double spread, int specials)
{
	double *v = malloc((size_t)(n * I) * sizeof(double));
	struct ir_model *m = tm_new(13);
	struct ir_node *node;
	struct rt_value *out = NULL;
	uint64_t seed = (uint64_t)(n * 131 + I * 7 + lg);
	int bad = 0;

	CU_ASSERT_FATAL(v != NULL);
	for (int64_t i = 0; i < n * I; i++) {
		seed = seed * 6364136223846793005u + 1442695040888963407u;
		v[i] = (float)(((double)(seed >> 11) / 9007199254740992.0 * 2 - 1) * spread);
		if (seed % 53 == 0)
			v[i] = -INFINITY;
	}
	if (specials) {
		v[0 * I + 1] = NAN;
		v[(n - 1) * I + I - 1] = NAN;
		v[(n / 2) * I + 2] = INFINITY;
	}
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(n, I), 2);
	node = tm_node(m, lg ? "LogSoftmax" : "Softmax", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	ir_node_set_int(node, "axis", 0);
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(n, I), 2);
	tm_verify(m);
	CU_ASSERT_FATAL(tm_run_floats(m, (const double *const[]){ v }, &out, 1) == 0);
	for (int64_t i = 0; i < I; i++) {
		double mx = -INFINITY, sum = 0;
		int nan = 0;

		for (int64_t r = 0; r < n; r++) {
			nan |= isnan(v[r * I + i]) || v[r * I + i] == INFINITY;
			mx = fmax(mx, v[r * I + i]);
		}
		for (int64_t r = 0; r < n; r++)
			sum += exp(v[r * I + i] - mx);
		for (int64_t r = 0; r < n; r++) {
			double w = lg ? v[r * I + i] - mx - log(sum) : exp(v[r * I + i] - mx) / sum;
			double g = ((const float *)out->data)[r * I + i];

			int off = nan ? !isnan(g) : isinf(w) ? g != w :
				  !(fabs(g - w) <= (lg ? 1e-6 * (fabs(w) + 1) : 4e-6 * fabs(w)) +
						   0x1p-149);

			if (off && !bad)
				fprintf(stderr, "\n%s [%lld, %lld] spread %g: column %lld row %lld "
					"got %.9g want %.9g\n", lg ? "LogSoftmax" : "Softmax",
					(long long)n, (long long)I, spread, (long long)i,
					(long long)r, g, w);
			bad += off;
		}
	}
	CU_ASSERT_EQUAL(bad, 0);
	rt_value_unref(out);
	ir_model_free(m);
	free(v);
}

static void test_softmax_columns(void)
{
	static const int64_t shapes[][2] = { { 1, 5 }, { 3, 16 }, { 257, 21 }, { 64, 40 },
					     { 9, 33 } };

	for (int lg = 0; lg < 2; lg++) {
		for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
			sm_cols_case(lg, shapes[s][0], shapes[s][1], 8, 0);
			sm_cols_case(lg, shapes[s][0], shapes[s][1], 150, 0);
		}
		sm_cols_case(lg, 7, 19, 8, 1);
	}
}

static void test_softmax_in_place(void)
{
	for (int lg = 0; lg < 2; lg++)
		for (int64_t len = 2; len <= 37; len += 35) {
			int64_t rows = 300;
			double *v = malloc((size_t)(rows * len) * sizeof(double));
			struct ir_model *m = tm_new(13);
			struct rt_value *out = NULL;
			int bad = 0;

			CU_ASSERT_FATAL(v != NULL);
			for (int64_t i = 0; i < rows * len; i++)
				v[i] = (float)(((i * 37) % 101) * 0.3 - 15);
			tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(rows, len), 2);
			tm_node(m, "Neg", NULL, TM_NAMES("x"), 1, TM_NAMES("t"), 1);
			tm_node(m, lg ? "LogSoftmax" : "Softmax", NULL, TM_NAMES("t"), 1,
				TM_NAMES("y"), 1);
			tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(rows, len), 2);
			tm_verify(m);
			CU_ASSERT_FATAL(tm_run_floats(m, (const double *const[]){ v }, &out, 1) == 0);
			for (int64_t r = 0; r < rows; r++) {
				double mx = -1e300, sum = 0;

				for (int64_t i = 0; i < len; i++)
					mx = fmax(mx, -v[r * len + i]);
				for (int64_t i = 0; i < len; i++)
					sum += exp(-v[r * len + i] - mx);
				for (int64_t i = 0; i < len; i++) {
					double w = lg ? -v[r * len + i] - mx - log(sum) :
						   exp(-v[r * len + i] - mx) / sum;
					double g = ((const float *)out->data)[r * len + i];

					bad += fabs(g - w) > (lg ? 1e-6 * (fabs(w) + 1) : 4e-6 * fabs(w)) +
							     1e-30;
				}
			}
			CU_ASSERT_EQUAL(bad, 0);
			rt_value_unref(out);
			ir_model_free(m);
			free(v);
		}
}

/* exp as the float32 lines take it (AVX-512: k_softmax512.c): rows [0, d]
 * for d over [-110, 0], whose softmax [1, e^d] / (1 + e^d) tells e^d to
 * within 1e-6 relative, subnormal results to 1e-44; LogSoftmax's d -
 * log(1 + e^d) and -log(1 + e^d) within 4e-7 of their sizes (3 ulps;
 * the latter within 3e-16 more: the sum 1 + e^d in double) */
static void test_softmax_exp(void)
{
	enum { N = 40001 };
	double *v = malloc(2 * N * sizeof(double));
	float *y = malloc(2 * N * sizeof(float));
	int bad = 0, badl = 0;

	CU_ASSERT_FATAL(v && y);
	for (int i = 0; i < N; i++) {
		v[2 * i] = 0;
		v[2 * i + 1] = (float)(-110.0 * i / (N - 1));
	}
	softmax_rows(0, N, 2, v, y);
	for (int i = 0; i < N; i++) {
		double e = exp(v[2 * i + 1]), p1 = e / (1 + e), p0 = 1 / (1 + e);

		if (fabs(y[2 * i + 1] - p1) > 1e-6 * p1 + 1e-44 || fabs(y[2 * i] - p0) > 1e-6 * p0)
			bad++;
	}
	softmax_rows(1, N, 2, v, y);
	for (int i = 0; i < N; i++) {
		double d = v[2 * i + 1], l = log1p(exp(d));

		if (fabs(y[2 * i + 1] - (d - l)) > 4e-7 * (fabs(d) + 1) ||
		    fabs(y[2 * i] + l) > 4e-7 * l + 3e-16)
			badl++;
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(badl, 0);
	free(v);
	free(y);
}

/* Lines of 1, 15, 16, 17 and 40 (whole and partial vectors) against the
 * spec in double; -inf elements give 0; a NaN first or later, or a +inf,
 * makes the line NaN (exp(inf - inf)) */
static void test_softmax_lines(void)
{
	static const int64_t lens[] = { 1, 15, 16, 17, 40 };
	double v[40];
	float y[40];
	uint64_t seed = 17;

	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		int64_t n = lens[li];

		for (int lg = 0; lg < 2; lg++) {
			double mx, sum = 0;
			int ok = 1;

			for (int64_t i = 0; i < n; i++) {
				seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
				v[i] = (double)(float)((double)(seed >> 11) / 9007199254740992.0 * 40 - 20);
			}
			if (n > 2)
				v[n - 2] = -INFINITY;
			mx = v[0];
			for (int64_t i = 1; i < n; i++)
				mx = v[i] > mx ? v[i] : mx;
			for (int64_t i = 0; i < n; i++)
				sum += exp((double)(float)(v[i] - mx));
			softmax_rows(lg, 1, n, v, y);
			for (int64_t i = 0; i < n; i++) {
				double d = (double)(float)(v[i] - mx);
				double want = lg ? d - log(sum) : exp(d) / sum;

				if (isinf(want) ? y[i] != want :
				    fabs(y[i] - want) > 1e-6 * (fabs(want) + (lg ? fabs(d) : 0)) + 1e-38)
					ok = 0;
			}
			CU_ASSERT(ok);
			for (int w = 0; w < 3 && n > 2; w++) {
				double keep = v[w ? n - 1 : 0];

				v[w ? n - 1 : 0] = w == 2 ? INFINITY : NAN;
				softmax_rows(lg, 1, n, v, y);
				for (int64_t i = 0; i < n; i++)
					CU_ASSERT(isnan(y[i]));
				v[w ? n - 1 : 0] = keep;
			}
		}
	}
}

static void test_hardmax(void)
{
	struct kin in[] = { KIN(IR_DTYPE_FLOAT16, 2, D(2, 3), 3, 1, 3, -1, -2, -1) };
	struct kt t;

	/* ties: the first maximum */
	kt_new(&t, 13, "Hardmax", in, 1, 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT16, 2, D(2, 3), 0, 1, 0, 0, 1, 0, 0);
	kt_free(&t);
	/* version 1, axis 0: one row of all six */
	kt_new(&t, 1, "Hardmax", in, 1, 1);
	ir_node_set_int(t.n, "axis", 0);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT16, 2, D(2, 3), 0, 1, 0, 0, 0, 0, 0);
	kt_free(&t);
}

/* ---- TopK, Unique ------------------------------------------------------- */

static void test_topk(void)
{
	struct kin in[] = {
		KIN(IR_DTYPE_INT32, 1, D(5), 1, 3, 3, 2, 3),
		KIN(IR_DTYPE_INT64, 1, D(1), 2),
	};
	struct kt t;

	kt_new(&t, 11, "TopK", in, 2, 2);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_INT32, 1, D(2), 0, 3, 3);
	CHECK(&t, 1, IR_DTYPE_INT64, 1, D(2), 0, 1, 2);
	kt_free(&t);
	kt_new(&t, 11, "TopK", in, 2, 2);
	ir_node_set_int(t.n, "largest", 0);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_INT32, 1, D(2), 0, 1, 2);
	CHECK(&t, 1, IR_DTYPE_INT64, 1, D(2), 0, 0, 3);
	kt_free(&t);
	in[1].v = (const double[]){ 6 };
	kt_new(&t, 11, "TopK", in, 2, 2);
	expect_error(&t, "k = 6");
	in[1].rank = 1;
	in[1].dims[0] = 2;
	in[1].v = (const double[]){ 1, 2 };
	kt_new(&t, 10, "TopK", in, 2, 2);
	expect_error(&t, "must be a single number");
}

static void test_topk_columns(void)
{
	/* [3,2] along axis 0, k 2 attribute (version 1) */
	struct kin in[] = { KIN(IR_DTYPE_DOUBLE, 2, D(3, 2), 1, 6, 5, 2, 3, 4) };
	struct kt t;

	kt_new(&t, 1, "TopK", in, 1, 2);
	ir_node_set_int(t.n, "k", 2);
	ir_node_set_int(t.n, "axis", 0);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_DOUBLE, 2, D(2, 2), 0, 5, 6, 3, 4);
	CHECK(&t, 1, IR_DTYPE_INT64, 2, D(2, 2), 0, 1, 0, 2, 2);
	kt_free(&t);
}

static void test_topk_select(void)
{
	/* 40 values cycling 0,1,2,3 (k * 16 < n: the one-pass selection):
	 * the largest are the 3s at 3, 7, 11; the smallest the 0s at 0, 4, 8 */
	double v[40];
	struct kin in[] = {
		{ IR_DTYPE_FLOAT, 1, D(40), v, NULL },
		KIN(IR_DTYPE_INT64, 1, D(1), 2),
	};
	struct kt t;

	for (int i = 0; i < 40; i++)
		v[i] = i % 4;
	kt_new(&t, 24, "TopK", in, 2, 2);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 1, D(2), 0, 3, 3);
	CHECK(&t, 1, IR_DTYPE_INT64, 1, D(2), 0, 3, 7);
	kt_free(&t);
	in[1].v = (const double[]){ 1 };
	kt_new(&t, 11, "TopK", in, 2, 2);
	ir_node_set_int(t.n, "largest", 0);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 1, D(1), 0, 0);
	CHECK(&t, 1, IR_DTYPE_INT64, 1, D(1), 0, 0);
	kt_free(&t);
	/* k = 0: empty outputs */
	in[1].v = (const double[]){ 0 };
	kt_new(&t, 11, "TopK", in, 2, 2);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CU_ASSERT_EQUAL(t.out[0]->numel, 0);
	CU_ASSERT_EQUAL(t.out[1]->dims[0], 0);
	kt_free(&t);
}

static void test_unique(void)
{
	struct kin rows[] = { KIN(IR_DTYPE_INT64, 2, D(3, 2), 1, 0, 0, 1, 1, 0) };
	struct kin flat[] = { KIN(IR_DTYPE_FLOAT, 1, D(5), 2, 1, 2, 3, 1) };
	struct kt t;

	kt_new(&t, 11, "Unique", rows, 1, 4);
	ir_node_set_int(t.n, "axis", 0);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_INT64, 2, D(2, 2), 0, 0, 1, 1, 0);
	CHECK(&t, 1, IR_DTYPE_INT64, 1, D(2), 0, 1, 0);
	CHECK(&t, 2, IR_DTYPE_INT64, 1, D(3), 0, 1, 0, 1);
	CHECK(&t, 3, IR_DTYPE_INT64, 1, D(2), 0, 1, 2);
	kt_free(&t);
	/* in order of appearance */
	kt_new(&t, 11, "Unique", flat, 1, 4);
	ir_node_set_int(t.n, "sorted", 0);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 1, D(3), 0, 2, 1, 3);
	CHECK(&t, 1, IR_DTYPE_INT64, 1, D(3), 0, 0, 1, 3);
	CHECK(&t, 2, IR_DTYPE_INT64, 1, D(5), 0, 0, 1, 0, 2, 1);
	CHECK(&t, 3, IR_DTYPE_INT64, 1, D(3), 0, 2, 2, 1);
	kt_free(&t);
	kt_new(&t, 11, "Unique", flat, 1, 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 1, D(3), 0, 1, 2, 3);
	kt_free(&t);
}

/* ---- Einsum, Det --------------------------------------------------------- */

static void einsum1(const char *eq, const struct kin *in, size_t n, struct kt *t)
{
	kt_new(t, 12, "Einsum", in, n, 1);
	ir_node_set_string(t->n, "equation", eq);
}

static void test_einsum_diagonal(void)
{
	/* [2,2,2] of 0..7: diagonals of each matrix [0,3] and [4,7] */
	struct kin in[] = { KIN(IR_DTYPE_FLOAT, 3, D(2, 2, 2), 0, 1, 2, 3, 4, 5, 6, 7) };
	struct kt t;

	einsum1("...ii->...i", in, 1, &t);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 2, D(2, 2), 0, 0, 3, 4, 7);
	kt_free(&t);
	/* implicit: 'i' repeated is summed, ellipsis kept: traces 3 and 11 */
	einsum1("...ii", in, 1, &t);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 1, D(2), 0, 3, 11);
	kt_free(&t);
	/* transpose of the batch axis to the back, sum over j */
	einsum1("bij->ib", in, 1, &t);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 2, D(2, 2), 0, 1, 9, 5, 13);
	kt_free(&t);
}

static void test_einsum_products(void)
{
	struct kin mm[] = {
		KIN(IR_DTYPE_INT32, 2, D(2, 3), 1, 2, 3, 4, 5, 6),
		KIN(IR_DTYPE_INT32, 2, D(3, 1), 1, 0, -1),
	};
	struct kin bc[] = {
		KIN(IR_DTYPE_DOUBLE, 3, D(2, 1, 2), 1, 2, 3, 4),
		KIN(IR_DTYPE_DOUBLE, 2, D(3, 2), 1, 1, 0, 1, 2, 0),
	};
	struct kin outer[] = {
		KIN(IR_DTYPE_FLOAT, 1, D(2), 1, 2),
		KIN(IR_DTYPE_FLOAT, 1, D(3), 1, 10, 100),
	};
	struct kt t;

	/* implicit output "ik": [1-3, 4-6] */
	einsum1("ij,jk", mm, 2, &t);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_INT32, 2, D(2, 1), 0, -2, -2);
	kt_free(&t);
	/* broadcast ellipsis [2,1] x [3]: row sums of a*b per (b, r) */
	einsum1("...j,...j->...", bc, 2, &t);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_DOUBLE, 2, D(2, 3), 0, 3, 2, 2, 7, 4, 6);
	kt_free(&t);
	einsum1("i,j->ji", outer, 2, &t);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 2, D(3, 2), 0, 1, 2, 10, 20, 100, 200);
	kt_free(&t);
	einsum1("i,i", outer, 2, &t);
	expect_error(&t, "label 'i' has sizes 2 and 3");
	einsum1("...j,...j->j", bc, 2, &t);
	expect_error(&t, "lacks '...'");
	einsum1("ij->i", outer, 1, &t);
	expect_error(&t, "2 labels for an input of rank 1");
	einsum1("i,j->k", outer, 2, &t);
	expect_error(&t, "in no input");
}

static void test_einsum_int64_exact(void)
{
	/* 2^53 + 1 has no double; int64 products and sums stay exact */
	const int64_t big = (1LL << 53) + 1;
	const int64_t vals[2] = { big, 1 };
	struct kin in[] = {
		{ IR_DTYPE_INT64, 1, D(2), (const double[]){ 0 }, vals },
		KIN(IR_DTYPE_INT64, 2, D(2, 1), 3, 4),
	};
	struct rt_value *v;
	struct kt t;

	einsum1("i,ij->j", in, 2, &t);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	v = t.out[0];
	CU_ASSERT_FATAL(v && v->dtype == IR_DTYPE_INT64 && v->numel == 1);
	/* 3 * (2^53 + 1) + 4 */
	CU_ASSERT_EQUAL(((int64_t *)v->data)[0], 3 * big + 4);
	kt_free(&t);
}

static void test_det(void)
{
	struct kin in[] = {
		KIN(IR_DTYPE_DOUBLE, 3, D(2, 2, 2), 1, 2, 3, 4, 0, 1, 1, 0),
	};
	struct kin sing[] = {
		KIN(IR_DTYPE_FLOAT, 2, D(3, 3), 1, 2, 3, 2, 4, 6, 0, 1, 1),
	};
	struct kt t;

	kt_new(&t, 11, "Det", in, 1, 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_DOUBLE, 1, D(2), 1e-12, -2, -1);
	kt_free(&t);
	kt_new(&t, 22, "Det", sing, 1, 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 0, D(0), 1e-6, 0);
	kt_free(&t);
}

/* ---- losses --------------------------------------------------------------- */

static void test_nll(void)
{
	struct kin in[] = {
		KIN(IR_DTYPE_FLOAT, 2, D(2, 2), -1, -2, -3, -4),
		KIN(IR_DTYPE_INT64, 1, D(2), 0, 1),
		KIN(IR_DTYPE_FLOAT, 1, D(2), 1, 2),
	};
	struct kt t;

	/* mean over applied weights: (1*1 + 4*2) / (1 + 2) */
	kt_new(&t, 13, "NegativeLogLikelihoodLoss", in, 3, 1);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 0, D(0), 1e-6, 3);
	kt_free(&t);
	kt_new(&t, 13, "NegativeLogLikelihoodLoss", in, 3, 1);
	ir_node_set_int(t.n, "ignore_index", 1);
	ir_node_set_string(t.n, "reduction", "none");
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 1, D(2), 1e-6, 1, 0);
	kt_free(&t);
	kt_new(&t, 22, "NegativeLogLikelihoodLoss", in, 2, 1);
	ir_node_set_string(t.n, "reduction", "sum");
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_FLOAT, 0, D(0), 1e-6, 5);
	kt_free(&t);
	in[1].v = (const double[]){ 0, 2 };
	kt_new(&t, 13, "NegativeLogLikelihoodLoss", in, 2, 1);
	expect_error(&t, "target 2 out of range");
	kt_new(&t, 13, "NegativeLogLikelihoodLoss", in, 2, 1);
	ir_node_set_string(t.n, "reduction", "max");
	expect_error(&t, "unknown reduction 'max'");
}

static void test_sce(void)
{
	struct kin in[] = {
		KIN(IR_DTYPE_DOUBLE, 2, D(2, 2), 0, 0, 0, M_LN2),
		KIN(IR_DTYPE_INT32, 1, D(2), 1, 0),
	};
	double l3 = log(3.0);
	struct kt t;

	/* row 0: log_prob -ln 2 each; row 1: ln(1/3), ln(2/3) */
	kt_new(&t, 13, "SoftmaxCrossEntropyLoss", in, 2, 2);
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_DOUBLE, 0, D(0), 1e-12, (M_LN2 + l3) / 2);
	CHECK(&t, 1, IR_DTYPE_DOUBLE, 2, D(2, 2), 1e-12, -M_LN2, -M_LN2, -l3, M_LN2 - l3);
	kt_free(&t);
	kt_new(&t, 12, "SoftmaxCrossEntropyLoss", in, 2, 1);
	ir_node_set_int(t.n, "ignore_index", 0);
	ir_node_set_string(t.n, "reduction", "none");
	CU_ASSERT_FATAL(kt_run(&t) == 0);
	CHECK(&t, 0, IR_DTYPE_DOUBLE, 1, D(2), 1e-12, M_LN2, 0);
	kt_free(&t);
}

static const struct unit_test tests[] = {
	{ "reduce integer dtypes", test_reduce_int_dtypes },
	{ "reduce l2, logsumexp, logsum", test_reduce_l2_lse_half },
	{ "reduce over axes apart", test_reduce_axes_apart },
	{ "reduce with empty axes", test_reduce_empty_axes },
	{ "reduce over empty sets", test_reduce_empty_set },
	{ "reduce of an empty tensor over axes apart", test_reduce_empty_apart },
	{ "reducemax of bool", test_reduce_bool_max },
	{ "reducemax and reducemin in vectors", test_reduce_maxmin_vectors },
	{ "reducelogsumexp in vectors", test_reduce_lse_vectors },
	{ "reducemax and reducemin along lines, bit for bit", test_reduce_maxmin_lines },
	{ "reducesum and reducemean within double sums' bound", test_reduce_sum_accuracy },
	{ "argmax and argmin over columns", test_arg_columns },
	{ "argmax and argmin along lines", test_arg_lines },
	{ "softmax in place", test_softmax_in_place },
	{ "softmax over columns", test_softmax_columns },
	{ "topk selection of float32", test_topk_select_f32 },
	{ "reduce errors", test_reduce_errors },
	{ "argmax and argmin", test_arg },
	{ "cumsum and cumprod", test_cumulative },
	{ "softmax versions", test_softmax_versions },
	{ "softmax exp over its range", test_softmax_exp },
	{ "softmax lines and special values", test_softmax_lines },
	{ "hardmax", test_hardmax },
	{ "topk", test_topk },
	{ "topk along columns", test_topk_columns },
	{ "topk one-pass selection", test_topk_select },
	{ "unique", test_unique },
	{ "einsum diagonals and ellipsis", test_einsum_diagonal },
	{ "einsum products", test_einsum_products },
	{ "einsum of int64 exact", test_einsum_int64_exact },
	{ "det", test_det },
	{ "negative log likelihood loss", test_nll },
	{ "softmax cross entropy loss", test_sce },
	{ NULL, NULL },
};

int suite_kreduce_register(void)
{
	return unit_add_suite("kreduce", tests);
}
