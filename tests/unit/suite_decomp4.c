/* suite_decomp4.c: property tests of the elementwise lowerings: binary
 * Max/Min, the comparisons (NaN, inf and -0 among the inputs where the
 * lowering is exact for them), TopK with k = 1 (ties), Gather as Slice,
 * Clip, Sigmoid and Tanh, Neg, Sign of unsigned data, Expand/Tile as Mul,
 * and Cast/CastLike identities removed.  The harness (tlower.c) checks
 * values, the exact set of emitted ops and onnx.checker; the relu form of
 * Max/Min is also held to its documented rounding bound. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/rewrite.h"
#include "tests/unit/suites.h"
#include "tests/unit/tgen.h"
#include "tests/unit/tlower.h"
#include "tests/unit/tmodel.h"

static const int dtypes[] = {
	IR_DTYPE_FLOAT, IR_DTYPE_INT32, IR_DTYPE_INT64, IR_DTYPE_INT8, IR_DTYPE_BOOL,
	IR_DTYPE_UINT8, IR_DTYPE_UINT32, IR_DTYPE_FLOAT16,
};
static const int64_t opsets[] = { 13, 14, 9, 11, 12, 18 };

/* ---- binary ops ---------------------------------------------------------- */

static const char *const bin_ops[] = {
	"Max", "Min", "Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Equal",
};

#define BIN(op, dt, bc, os) ((op) | (dt) << 4 | (bc) << 8 | (os) << 10)

/* param: BIN(op, dtype index, broadcast, opset index); broadcast 0 equal
 * shapes, 1 b along the last axis, 2 [d0, 1, d2] against [d1, 1], 3 b a
 * constant scalar */
static struct ir_model *b_binary(uint64_t *s, int param)
{
	const char *op = bin_ops[param & 15];
	int dt = dtypes[(param >> 4) & 15], bc = (param >> 8) & 3;
	struct ir_model *m = tm_new(opsets[(param >> 10) & 7]);
	int64_t d[3] = { tg_rnd(s, 1, 3), tg_rnd(s, 1, 4), tg_rnd(s, 1, 4) };
	double c = (double)tg_rnd(s, -2, 2);

	if (bc == 2) {
		tm_input(m, "a", dt, TM_DIMS(d[0], 1, d[2]), 3);
		tm_input(m, "b", dt, TM_DIMS(d[1], 1), 2);
	} else {
		tm_input(m, "a", dt, d, 3);
		if (bc == 3)
			tm_init(m, "b", dt, NULL, 0, &c);
		else
			tm_input(m, "b", dt, bc ? d + 2 : d, bc ? 1 : 3);
	}
	tm_node(m, op, NULL, TM_NAMES("a", "b"), 2, TM_NAMES("y"), 1);
	tg_finish(m, (param & 15) >= 2 ? IR_DTYPE_BOOL : dt);
	return m;
}

static const struct tl_case minmax_cases[] = {
	{ "max-min", "Max", b_binary, BIN(0, 0, 0, 0), TL_REAL, 6 * 0x1p-23, 0, 6 },
	{ "max-min", "Min", b_binary, BIN(1, 0, 1, 0), TL_REAL, 6 * 0x1p-23, 0, 6 },
	{ "max-min", "Max", b_binary, BIN(0, 0, 2, 1), TL_TIES, 0, 0, 6 },
	{ "max-min", "Min", b_binary, BIN(1, 0, 3, 0), TL_REAL, 6 * 0x1p-23, 0, 6 },
	{ "max-min", "Max", b_binary, BIN(0, 1, 0, 1), TL_REAL, 0, 0, 6 },
	{ "max-min", "Min", b_binary, BIN(1, 2, 2, 1), TL_REAL, 0, 0, 6 },
	{ "max-min", "Max", b_binary, BIN(0, 3, 1, 0), TL_REAL, 0, 0, 4 },
	{ "max-min", "Min", b_binary, BIN(1, 6, 0, 0), TL_REAL, 0, 0, 4 },
	{ "max-min", "Max", b_binary, BIN(0, 2, 3, 0), TL_REAL, 0, 0, 4 },
};

static const struct tl_case compare_cases[] = {
	{ "compare", "Greater", b_binary, BIN(2, 0, 0, 0), TL_SPECIAL, 0, 0, 4 },
	{ "compare", "Less", b_binary, BIN(3, 0, 2, 0), TL_SPECIAL, 0, 0, 4 },
	{ "compare", "GreaterOrEqual", b_binary, BIN(4, 0, 1, 0), TL_SPECIAL, 0, 0, 4 },
	{ "compare", "LessOrEqual", b_binary, BIN(5, 0, 2, 0), TL_SPECIAL, 0, 0, 4 },
	{ "compare", "Equal", b_binary, BIN(6, 0, 0, 0), TL_SPECIAL, 0, 0, 4 },
	{ "compare", "Equal", b_binary, BIN(6, 7, 1, 0), TL_SPECIAL, 0, 0, 4 },
	{ "compare", "Greater", b_binary, BIN(2, 1, 1, 0), TL_REAL, 0, 0, 4 },
	{ "compare", "GreaterOrEqual", b_binary, BIN(4, 1, 0, 0), TL_REAL, 0, 0, 4 },
	{ "compare", "LessOrEqual", b_binary, BIN(5, 2, 3, 0), TL_REAL, 0, 0, 4 },
	{ "compare", "LessOrEqual", b_binary, BIN(5, 5, 0, 1), TL_REAL, 0, 0, 4 },
	{ "compare", "Equal", b_binary, BIN(6, 1, 2, 0), TL_REAL, 0, 0, 4 },
	{ "compare", "Equal", b_binary, BIN(6, 3, 0, 3), TL_REAL, 0, 0, 4 },
	{ "compare", "Equal", b_binary, BIN(6, 4, 1, 0), TL_REAL, 0, 0, 4 },
	{ "compare", "Less", b_binary, BIN(3, 6, 0, 2), TL_REAL, 0, 0, 4 },
};

static void test_max_min(void)
{
	tl_run_cases(minmax_cases, sizeof(minmax_cases) / sizeof(minmax_cases[0]), 17);
	tl_expect_all_variants("max-min");
	tg_run_checker();
}

static void test_compare(void)
{
	tl_run_cases(compare_cases, sizeof(compare_cases) / sizeof(compare_cases[0]), 29);
	tl_expect_all_variants("compare");
	tg_run_checker();
}

static int variant_index(const struct rw_pass *p, const char *name)
{
	for (size_t v = 0; v < p->n_variants; v++)
		if (!strcmp(p->variants[v].name, name))
			return (int)v;
	CU_FAIL_FATAL("no such variant");
	return -1;
}

/* The forms that are wrong for NaN or inf are not offered where they can
 * meet them: not(<) for float >=, the relu form of Max against an
 * infinite constant. */
static void test_nan_forms_refused(void)
{
	const struct rw_pass *cmp = rw_pass_find("compare"), *mm = rw_pass_find("max-min");
	uint64_t s = 1;
	struct ir_model *m = b_binary(&s, BIN(4, 0, 0, 0));
	struct rw_ctx ctx;
	struct ir_diag d;
	double inf = -INFINITY;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, NULL, &d) == 0);
	CU_ASSERT(!cmp->vcheck(&ctx, m->graph->nodes[0], variant_index(cmp, "not-less")));
	CU_ASSERT(cmp->vcheck(&ctx, m->graph->nodes[0], variant_index(cmp, "or-greater-equal")));
	rw_ctx_release(&ctx);
	ir_model_free(m);
	m = tm_new(13);
	tm_input(m, "a", IR_DTYPE_FLOAT, TM_DIMS(3), 1);
	tm_init(m, "b", IR_DTYPE_FLOAT, NULL, 0, &inf);
	tm_node(m, "Max", NULL, TM_NAMES("a", "b"), 2, TM_NAMES("y"), 1);
	tg_finish(m, IR_DTYPE_FLOAT);
	CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, NULL, &d) == 0);
	CU_ASSERT(!mm->vcheck(&ctx, m->graph->nodes[0], variant_index(mm, "add-relu")));
	CU_ASSERT(mm->vcheck(&ctx, m->graph->nodes[0], variant_index(mm, "greater-where")));
	rw_ctx_release(&ctx);
	ir_model_free(m);
}

/* The relu form's error stays within 2^-23 (|a| + |b|) on operands of
 * very different magnitudes (a float64 reference of max(a, b)). */
static void test_max_relu_bound(void)
{
	const struct rw_pass *p = rw_pass_find("max-min");
	double a[64], b[64];
	const double *vals[2] = { a, b };
	uint64_t s = 99;

	for (int i = 0; i < 64; i++) {
		a[i] = (float)((tg_next(&s) & 1 ? -1 : 1) * pow(10, (double)(tg_next(&s) % 9000) / 1000 - 3));
		b[i] = (float)((tg_next(&s) & 1 ? -1 : 1) * pow(10, (double)(tg_next(&s) % 9000) / 1000 - 3));
	}
	for (int op = 0; op < 2; op++) {
		struct ir_model *m = tm_new(13);
		struct rt_value *y = NULL;
		struct rw_ctx ctx;
		struct ir_diag d;
		double worst = 0;

		tm_input(m, "a", IR_DTYPE_FLOAT, TM_DIMS(64), 1);
		tm_input(m, "b", IR_DTYPE_FLOAT, TM_DIMS(64), 1);
		tm_node(m, op ? "Min" : "Max", NULL, TM_NAMES("a", "b"), 2, TM_NAMES("y"), 1);
		tg_finish(m, IR_DTYPE_FLOAT);
		ir_diag_init(&d);
		CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, NULL, &d) == 0);
		CU_ASSERT_FATAL(rw_apply(&ctx, p, m->graph->nodes[0],
					 variant_index(p, op ? "sub-relu" : "add-relu")) == 0);
		CU_ASSERT_FATAL(rw_refresh(&ctx) == 0);
		CU_ASSERT_FATAL(tm_run_floats(m, vals, &y, 1) == 0);
		for (int i = 0; i < 64; i++) {
			double want = op ? fmin(a[i], b[i]) : fmax(a[i], b[i]);
			double err = fabs(rt_value_get_f64(y, i) - want);
			double bound = 0x1p-23 * (fabs(a[i]) + fabs(b[i]));

			if (err > bound)
				fprintf(stderr, "\n%s(%g, %g): error %g > %g\n", op ? "Min" : "Max",
					a[i], b[i], err, bound);
			CU_ASSERT(err <= bound);
			worst = fmax(worst, err / (fabs(a[i]) + fabs(b[i])));
		}
		if (getenv("TL_VERBOSE"))
			fprintf(stderr, "\n%s relu form: worst error / (|a| + |b|) = %g\n",
				op ? "Min" : "Max", worst);
		rt_value_unref(y);
		rw_ctx_release(&ctx);
		ir_model_free(m);
	}
}

/* ---- TopK ------------------------------------------------------------------ */

/* param: | 1 smallest | 2 int32 data | 4 opset 9 (k an attribute) | 8 sorted 0 */
static struct ir_model *b_topk(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(param & 4 ? 9 : 13);
	int r = (int)tg_rnd(s, 1, 3), dt = param & 2 ? IR_DTYPE_INT32 : IR_DTYPE_FLOAT;
	int64_t d[3], one = 1;
	struct ir_node *n;

	for (int i = 0; i < r; i++)
		d[i] = tg_rnd(s, 1, 5);
	tm_input(m, "x", dt, d, (size_t)r);
	if (!(param & 4))
		tg_int_init(m, "k", &one, TM_DIMS(1), 1);
	n = tm_node(m, "TopK", NULL, TM_NAMES("x", "k"), param & 4 ? 1 : 2, TM_NAMES("y", "i"), 2);
	if (param & 4) {
		CU_ASSERT_FATAL(ir_node_set_int(n, "k", 1) == 0);
	} else {
		CU_ASSERT_FATAL(ir_node_set_int(n, "largest", !(param & 1)) == 0);
	}
	if (tg_rnd(s, 0, 1))
		CU_ASSERT_FATAL(ir_node_set_int(n, "axis", tg_rnd(s, -r, r - 1)) == 0);
	if (param & 8)
		CU_ASSERT_FATAL(ir_node_set_int(n, "sorted", 0) == 0);
	tm_output(m, "y", dt, NULL, 0);
	tm_output(m, "i", IR_DTYPE_INT64, NULL, 0);
	tm_verify(m);
	return m;
}

static const struct tl_case topk_cases[] = {
	{ "topk-arg", "TopK", b_topk, 0, TL_TIES, 0, 0, 6 },
	{ "topk-arg", "TopK", b_topk, 1, TL_TIES, 0, 0, 6 },
	{ "topk-arg", "TopK", b_topk, 0 | 8, TL_REAL, 0, 0, 4 },
	{ "topk-arg", "TopK", b_topk, 1 | 2, TL_TIES, 0, 0, 6 },
	{ "topk-arg", "TopK", b_topk, 2, TL_REAL, 0, 0, 4 },
	{ "topk-arg", "TopK", b_topk, 4, TL_TIES, 0, 0, 6 },
};

static void test_topk(void)
{
	tl_run_cases(topk_cases, sizeof(topk_cases) / sizeof(topk_cases[0]), 555);
	tl_expect_all_variants("topk-arg");
	tg_run_checker();
}

/* ---- Gather ------------------------------------------------------------------ */

/* param: bits 0-2: 0 scalar, 1 scalar from the end, 2 run, 3 step 2,
 * 4 step -1, 5 step -2, 6 one 1-D index; | 8 opset 9 | 16 symbolic axis
 * (of 2 when run: modes 0, 1, 2, 6) */
static struct ir_model *b_gather(uint64_t *s, int param)
{
	static const int64_t steps[] = { 0, 0, 1, 2, -1, -2, 1 };
	struct ir_model *m = tm_new(param & 8 ? 9 : 13);
	int r = (int)tg_rnd(s, 1, 3), mode = param & 7;
	int64_t d[3], axis = tg_rnd(s, 0, r - 1), idx[8], k = mode < 2 ? 1 : mode == 6 ? 1 : tg_rnd(s, 2, 3);
	int64_t step = steps[mode], span;
	struct ir_node *n;

	if (param & 16 && k > 2)
		k = 2;
	span = mode < 2 ? 1 : (k - 1) * (step < 0 ? -step : step) + 1;
	for (int i = 0; i < r; i++)
		d[i] = tg_rnd(s, 1, 3);
	d[axis] = param & 16 ? 2 : span + tg_rnd(s, 0, 2);   /* symbolic: run at 2 */
	if (mode == 0) {
		idx[0] = tg_rnd(s, 0, d[axis] - 1);
	} else if (mode == 1) {
		idx[0] = param & 16 ? -1 : tg_rnd(s, -d[axis], -1);
	} else {
		int64_t first = step > 0 ? tg_rnd(s, 0, d[axis] - span) :
			       tg_rnd(s, span - 1, d[axis] - 1);

		for (int64_t i = 0; i < k; i++)
			idx[i] = first + i * step;
		if (tg_rnd(s, 0, 1) && !(param & 16))
			idx[k - 1] -= d[axis];     /* the same index, from the end */
	}
	tm_input(m, "x", IR_DTYPE_FLOAT, d, (size_t)r);
	if (param & 16)
		tl_symbolic(m, "x", (int)axis);
	if (mode < 2)
		tg_int_init(m, "i", idx, NULL, 0);
	else
		tg_int_init(m, "i", idx, TM_DIMS(k), 1);
	n = tm_node(m, "Gather", NULL, TM_NAMES("x", "i"), 2, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "axis", tg_rnd(s, 0, 1) ? axis : axis - r) == 0);
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

#define GA(p) { "gather-slice", "Gather", b_gather, (p), TL_REAL, 0, 0, 6 }
static const struct tl_case gather_cases[] = {
	GA(0), GA(1), GA(2), GA(3), GA(4), GA(5), GA(6), GA(0 | 8), GA(1 | 8), GA(2 | 8),
	GA(0 | 16), GA(1 | 16), GA(2 | 16), GA(6 | 16),
};
#undef GA

static void test_gather(void)
{
	tl_run_cases(gather_cases, sizeof(gather_cases) / sizeof(gather_cases[0]), 808);
	tl_expect_all_variants("gather-slice");
	tg_run_checker();
}

/* ---- Clip ------------------------------------------------------------------ */

/* param: | 1 lo | 2 hi | 4 lo = 0 | 8 opset 9 (attributes) | 16 int32 data
 * (opset 14) | 32 bounds graph inputs */
static struct ir_model *b_clip(uint64_t *s, int param)
{
	int old = param & 8, dt = param & 16 ? IR_DTYPE_INT32 : IR_DTYPE_FLOAT;
	struct ir_model *m = tm_new(old ? 9 : param & 16 ? 14 : 13);
	int64_t d[2] = { tg_rnd(s, 1, 4), tg_rnd(s, 1, 4) };
	double lo = param & 4 ? 0 : (double)tg_rnd(s, -3, 0) + (dt == IR_DTYPE_FLOAT ? 0.5 : 0);
	double hi = (double)tg_rnd(s, -1, 3);
	const char *in[3] = { "x", param & 1 ? "lo" : "", param & 2 ? "hi" : "" };
	struct ir_node *n;

	tm_input(m, "x", dt, d, 2);
	if (!old && (param & 1)) {
		if (param & 32)
			tm_input(m, "lo", dt, NULL, 0);
		else
			tm_init(m, "lo", dt, NULL, 0, &lo);
	}
	if (!old && (param & 2)) {
		if (param & 32)
			tm_input(m, "hi", dt, NULL, 0);
		else
			tm_init(m, "hi", dt, NULL, 0, &hi);
	}
	n = tm_node(m, "Clip", NULL, in, old ? 1 : 3, TM_NAMES("y"), 1);
	if (old && (param & 1))
		CU_ASSERT_FATAL(ir_node_set_float(n, "min", (float)lo) == 0);
	if (old && (param & 2))
		CU_ASSERT_FATAL(ir_node_set_float(n, "max", (float)hi) == 0);
	tg_finish(m, dt);
	return m;
}

#define CL(p, v) { "clip", "Clip", b_clip, (p), v, 0, 0, 4 }
static const struct tl_case clip_cases[] = {
	CL(1 | 2, TL_SPECIAL), CL(1 | 2 | 4, TL_SPECIAL), CL(1 | 4, TL_SPECIAL), CL(1, TL_SPECIAL),
	CL(2, TL_SPECIAL), CL(0, TL_SPECIAL), CL(1 | 2 | 8, TL_SPECIAL),
	CL(1 | 2 | 4 | 8, TL_REAL), CL(2 | 8, TL_SPECIAL), CL(1 | 2 | 16, TL_REAL),
	CL(1 | 2 | 4 | 16, TL_REAL), CL(1 | 4 | 16, TL_REAL), CL(1 | 16, TL_REAL),
	CL(2 | 16, TL_REAL), CL(1 | 2 | 32, TL_REAL), CL(1 | 32, TL_SPECIAL),
};
#undef CL

/* An absent bound of float data is the dtype's limit: Clip(x, 0) maps inf
 * to FLT_MAX (the spec's numeric_limits max, as onnxruntime does), before
 * and after the rewrite. */
static void test_clip_limits(void)
{
	static const double x[4] = { INFINITY, -INFINITY, 2, NAN };
	static const double want[4] = { FLT_MAX, 0, 2, NAN };
	const double *vals[1] = { x };
	const struct rw_pass *p = rw_pass_find("clip");
	double zero = 0;

	for (int rewritten = 0; rewritten < 2; rewritten++) {
		struct ir_model *m = tm_new(13);
		struct rt_value *y = NULL;
		struct rw_ctx ctx;
		struct ir_diag d;

		tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(4), 1);
		tm_init(m, "lo", IR_DTYPE_FLOAT, NULL, 0, &zero);
		tm_node(m, "Clip", NULL, TM_NAMES("x", "lo"), 2, TM_NAMES("y"), 1);
		tg_finish(m, IR_DTYPE_FLOAT);
		ir_diag_init(&d);
		CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, NULL, &d) == 0);
		if (rewritten) {
			CU_ASSERT_FATAL(rw_apply(&ctx, p, m->graph->nodes[0],
						 variant_index(p, "relu-min")) == 0);
			CU_ASSERT_FATAL(rw_refresh(&ctx) == 0);
			CU_ASSERT(tg_find_op(m, "Clip") == NULL);
		}
		CU_ASSERT_FATAL(tm_run_floats(m, vals, &y, 1) == 0);
		for (int i = 0; i < 4; i++) {
			double v = rt_value_get_f64(y, i);

			CU_ASSERT(isnan(want[i]) ? isnan(v) : v == want[i]);
		}
		rt_value_unref(y);
		rw_ctx_release(&ctx);
		ir_model_free(m);
	}
}

static void test_clip(void)
{
	tl_run_cases(clip_cases, sizeof(clip_cases) / sizeof(clip_cases[0]), 4242);
	tl_expect_all_variants("clip");
	tg_run_checker();
}

/* ---- unary ops ----------------------------------------------------------- */

static const char *const un_ops[] = { "Sigmoid", "Tanh", "Neg", "Sign" };

/* param: op | dtype index << 4 | opset index << 8 */
static struct ir_model *b_unary(uint64_t *s, int param)
{
	int dt = dtypes[(param >> 4) & 15];
	struct ir_model *m = tm_new(opsets[(param >> 8) & 7]);
	int r = (int)tg_rnd(s, 1, 3);
	int64_t d[3];

	for (int i = 0; i < r; i++)
		d[i] = tg_rnd(s, 1, 5);
	tm_input(m, "x", dt, d, (size_t)r);
	tm_node(m, un_ops[param & 15], NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	tg_finish(m, dt);
	return m;
}

#define UN(op, dt, os) ((op) | (dt) << 4 | (os) << 8)
static const struct tl_case unary_cases[] = {
	{ "sigmoid", "Sigmoid", b_unary, UN(0, 0, 0), TL_WIDE, 2e-7, 1e-6, 6 },
	{ "sigmoid", "Sigmoid", b_unary, UN(0, 0, 2), TL_REAL, 2e-7, 1e-6, 4 },
	{ "tanh", "Tanh", b_unary, UN(1, 0, 0), TL_WIDE, 4e-7, 0, 6 },
	{ "tanh", "Tanh", b_unary, UN(1, 0, 2), TL_REAL, 4e-7, 0, 4 },
	{ "neg", "Neg", b_unary, UN(2, 0, 0), TL_SPECIAL, 0, 0, 4 },
	{ "neg", "Neg", b_unary, UN(2, 1, 0), TL_REAL, 0, 0, 4 },
	{ "neg", "Neg", b_unary, UN(2, 3, 1), TL_REAL, 0, 0, 4 },
	{ "sign", "Sign", b_unary, UN(3, 5, 1), TL_REAL, 0, 0, 4 },
	{ "sign", "Sign", b_unary, UN(3, 6, 0), TL_REAL, 0, 0, 4 },
	{ "sign", "Sign", b_unary, UN(3, 3, 1), TL_REAL, 0, 0, 4 },
};
#undef UN

static void test_unary(void)
{
	tl_run_cases(unary_cases, sizeof(unary_cases) / sizeof(unary_cases[0]), 1001);
	tl_expect_all_variants("sigmoid");
	tl_expect_all_variants("tanh");
	tl_expect_all_variants("neg");
	tl_expect_all_variants("sign");
	tg_run_checker();
}

/* ---- Expand, Tile ------------------------------------------------------------ */

/* param: 0 Expand [a, 1] to [2, a, b]; 1 Expand [1, b] to [a, b]; 2 Tile
 * of size-1 axes; | 4 int32 data | 8 bool data */
static struct ir_model *b_expand(uint64_t *s, int param)
{
	struct ir_model *m = tm_new(13);
	int64_t a = tg_rnd(s, 1, 4), b = tg_rnd(s, 2, 4);
	int dt = param & 8 ? IR_DTYPE_BOOL : param & 4 ? IR_DTYPE_INT32 : IR_DTYPE_FLOAT;

	if ((param & 3) == 0) {
		tm_input(m, "x", dt, TM_DIMS(a, 1), 2);
		tg_int_init(m, "shape", TM_DIMS(2, a, b), TM_DIMS(3), 1);
		tm_node(m, "Expand", NULL, TM_NAMES("x", "shape"), 2, TM_NAMES("y"), 1);
	} else if ((param & 3) == 1) {
		tm_input(m, "x", dt, TM_DIMS(1, b), 2);
		tg_int_init(m, "shape", TM_DIMS(a, 1), TM_DIMS(2), 1);
		tm_node(m, "Expand", NULL, TM_NAMES("x", "shape"), 2, TM_NAMES("y"), 1);
	} else {
		tm_input(m, "x", dt, TM_DIMS(1, a, 1), 3);
		tg_int_init(m, "rep", TM_DIMS(2, 1, b), TM_DIMS(3), 1);
		tm_node(m, "Tile", NULL, TM_NAMES("x", "rep"), 2, TM_NAMES("y"), 1);
	}
	tg_finish(m, dt);
	return m;
}

static const struct tl_case expand_cases[] = {
	{ "expand-tile", "Expand", b_expand, 0, TL_SPECIAL, 0, 0, 3 },
	{ "expand-tile", "Expand", b_expand, 1, TL_SPECIAL, 0, 0, 3 },
	{ "expand-tile", "Tile", b_expand, 2, TL_SPECIAL, 0, 0, 3 },
	{ "expand-tile", "Expand", b_expand, 0 | 4, TL_REAL, 0, 0, 3 },
	{ "expand-tile", "Tile", b_expand, 2 | 4, TL_REAL, 0, 0, 3 },
	{ "expand-tile", "Expand", b_expand, 1 | 8, TL_REAL, 0, 0, 3 },
};

static void test_expand(void)
{
	tl_run_cases(expand_cases, sizeof(expand_cases) / sizeof(expand_cases[0]), 64);
	tl_expect_all_variants("expand-tile");
	tg_run_checker();
}

/* ---- Cast identities ----------------------------------------------------------- */

static void test_cast_identity(void)
{
	const struct rw_pass *p = rw_pass_find("eliminate-identity");

	for (int k = 0; k < 4; k++) {
		struct ir_model *m = tm_new(15);
		struct rt_value *before = NULL, *after = NULL;
		struct rw_ctx ctx;
		struct ir_diag d;
		size_t changed = 0;
		struct ir_node *n;
		int dt = k == 2 ? IR_DTYPE_INT32 : IR_DTYPE_FLOAT;

		/* x -> Abs -> Cast(to) or CastLike(like) -> Neg -> y */
		tm_input(m, "x", dt, TM_DIMS(2, 3), 2);
		tm_node(m, "Abs", NULL, TM_NAMES("x"), 1, TM_NAMES("a"), 1);
		if (k == 1) {
			double z = 0;

			tm_init(m, "like", IR_DTYPE_FLOAT, NULL, 0, &z);
			tm_node(m, "CastLike", NULL, TM_NAMES("a", "like"), 2, TM_NAMES("c"), 1);
		} else {
			n = tm_node(m, "Cast", NULL, TM_NAMES("a"), 1, TM_NAMES("c"), 1);
			CU_ASSERT_FATAL(ir_node_set_int(n, "to", k == 3 ? IR_DTYPE_DOUBLE : dt) == 0);
		}
		tm_node(m, "Neg", NULL, TM_NAMES("c"), 1, TM_NAMES("y"), 1);
		tg_finish(m, k == 3 ? IR_DTYPE_DOUBLE : dt);
		ir_diag_init(&d);
		CU_ASSERT_FATAL(tm_run(m, 4, &before, 1) == 0);
		CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, NULL, &d) == 0);
		CU_ASSERT_FATAL(rw_run(&ctx, p, &changed) == 0);
		/* k 3 casts to double: not an identity, kept */
		CU_ASSERT(changed == (k == 3 ? 0u : 1u));
		CU_ASSERT((tg_find_op(m, "Cast") || tg_find_op(m, "CastLike")) == (k == 3));
		CU_ASSERT(m->graph->n_nodes == (k == 3 ? 3u : 2u));
		CU_ASSERT_FATAL(tm_run(m, 4, &after, 1) == 0);
		CU_ASSERT(tg_compare(after, before) == 0);
		rt_value_unref(before);
		rt_value_unref(after);
		rw_ctx_release(&ctx);
		ir_model_free(m);
	}
}

/* ---- refusals ---------------------------------------------------------------- */

static void test_refusals(void)
{
	struct ir_model *m;
	struct ir_node *n;
	uint64_t s = 8;
	int64_t two = 2, idx[3] = { 0, 2, 3 };

	/* three inputs: the variadic pass's */
	m = tm_new(13);
	tm_input(m, "a", IR_DTYPE_FLOAT, TM_DIMS(3), 1);
	tm_input(m, "b", IR_DTYPE_FLOAT, TM_DIMS(3), 1);
	tm_input(m, "c", IR_DTYPE_FLOAT, TM_DIMS(3), 1);
	tm_node(m, "Max", NULL, TM_NAMES("a", "b", "c"), 3, TM_NAMES("y"), 1);
	tg_finish(m, IR_DTYPE_FLOAT);
	tl_refuses("max-min", "Max", m, "two inputs");
	/* Equal of floats before GreaterOrEqual exists */
	tl_refuses("compare", "Equal", b_binary(&s, BIN(6, 0, 0, 3)), "opset >= 12");
	/* Less of integers at opset 8 */
	m = tm_new(8);
	tm_input(m, "a", IR_DTYPE_INT32, TM_DIMS(3), 1);
	tm_input(m, "b", IR_DTYPE_INT32, TM_DIMS(3), 1);
	tm_node(m, "Less", NULL, TM_NAMES("a", "b"), 2, TM_NAMES("y"), 1);
	tg_finish(m, IR_DTYPE_BOOL);
	tl_refuses("compare", "Less", m, "do not take");
	/* TopK with k = 2 */
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(4), 1);
	tg_int_init(m, "k", &two, TM_DIMS(1), 1);
	tm_node(m, "TopK", NULL, TM_NAMES("x", "k"), 2, TM_NAMES("y", "i"), 2);
	tg_finish(m, IR_DTYPE_FLOAT);
	tl_refuses("topk-arg", "TopK", m, "k is not a constant 1");
	/* Gather of indices that are no progression, of input indices */
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(5), 1);
	tg_int_init(m, "i", idx, TM_DIMS(3), 1);
	tm_node(m, "Gather", NULL, TM_NAMES("x", "i"), 2, TM_NAMES("y"), 1);
	tg_finish(m, IR_DTYPE_FLOAT);
	tl_refuses("gather-slice", "Gather", m, "arithmetic progression");
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(5), 1);
	tm_input(m, "i", IR_DTYPE_INT64, NULL, 0);
	tm_node(m, "Gather", NULL, TM_NAMES("x", "i"), 2, TM_NAMES("y"), 1);
	tg_finish(m, IR_DTYPE_FLOAT);
	tl_refuses("gather-slice", "Gather", m, "not a constant");
	/* a step of 2 before Slice takes steps */
	tl_refuses("gather-slice", "Gather", b_gather(&s, 3 | 8), "opset >= 10");
	/* Clip without bounds */
	tl_refuses("clip", "Clip", b_clip(&s, 16), "no bound");
	/* Sigmoid of integers: a float decomposition */
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_INT32, TM_DIMS(3), 1);
	n = tm_node(m, "Sigmoid", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	(void)n;
	tg_finish(m, IR_DTYPE_INT32);
	tl_refuses("sigmoid", "Sigmoid", m, "float");
	/* Sub of int8 before opset 14 */
	tl_refuses("sign", "Sign", b_unary(&s, 3 | 3 << 4 | 0 << 8), "opset >= 14");
	tl_refuses("neg", "Neg", b_unary(&s, 2 | 3 << 4 | 0 << 8), "opset >= 14");
	tl_refuses("sign", "Sign", b_unary(&s, 3 | 5 << 4 | 0 << 8), "opset >= 14");
}

static const struct unit_test tests[] = {
	{ "max-min agrees (where forms exact, relu forms within rounding)", test_max_min },
	{ "the relu form of Max/Min stays within 2^-23 (|a| + |b|)", test_max_relu_bound },
	{ "compare agrees with NaN, inf and -0 among the inputs", test_compare },
	{ "forms wrong for NaN or inf are not offered where they can meet them",
	  test_nan_forms_refused },
	{ "topk-arg agrees, ties included", test_topk },
	{ "gather-slice agrees", test_gather },
	{ "clip agrees", test_clip },
	{ "an absent Clip bound clamps infinities to the dtype's limit", test_clip_limits },
	{ "sigmoid, tanh, neg and sign agree", test_unary },
	{ "expand-tile agrees, as Mul by ones too", test_expand },
	{ "eliminate-identity removes Cast and CastLike to the input's dtype", test_cast_identity },
	{ "the elementwise lowerings refuse what they cannot do", test_refusals },
	{ NULL, NULL },
};

int suite_decomp4_register(void)
{
	return unit_add_suite("decomp4", tests);
}
