/* suite_fold.c: constant nodes computed once per session (validators/
 * fold.c), against hand-derived values: a ConstantOfShape -> Add chain
 * feeding a MatMul run three times (same outputs, the chain ran once, node
 * by node too), random draws and a graph input with an initializer default
 * never kept (but an IR 3 model's initializer inputs are), a kept value
 * never written in place, memory limits with and without room, an
 * observer that replaces a constant's value, a failing constant node, a
 * constant graph output, an output sharing a kept value (accounting, and
 * outliving the session), and packed convolution weights cached from kept weights
 * (also when they are kept only from the second run on). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/exec_int.h"
#include "runtime/kernels/k_conv_int.h"   /* KNN_DC_MR */
#include "runtime/kernels/pgemm.h"   /* rt_pgemm_ok: AVX-512 */
#include "tests/unit/suites.h"
#include "tests/unit/tgen.h"
#include "tests/unit/tmodel.h"

static struct rt_value *ftensor(const float *v, int rank, const int64_t *dims)
{
	struct rt_value *t;
	struct ir_diag d;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_tensor_new(NULL, IR_DTYPE_FLOAT, rank, dims, &t, &d) == 0);
	memcpy(t->data, v, (size_t)t->numel * sizeof(float));
	return t;
}

/* out = ConstantOfShape(shape) filled with the float `value` */
static void fill_node(struct ir_model *m, const char *shape, const char *out,
		      float value)
{
	struct ir_node *n = tm_node(m, "ConstantOfShape", NULL, TM_NAMES(shape), 1,
				    TM_NAMES(out), 1);
	struct rt_value *t = ftensor(&value, 1, TM_DIMS(1));
	struct ir_tensor *it;
	struct ir_diag d;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_value_to_ir(t, "", &it, &d) == 0);
	rt_value_unref(t);
	CU_ASSERT_FATAL(ir_node_set_tensor(n, "value", it) == 0);
}

/* y = MatMul(x, ConstantOfShape([3,2]) of 0.5 + B), B = [[0,1],[2,3],[4,5]]:
 * with x = [[1,2,3],[4,5,6]], y = [[19,25],[41.5,56.5]]. */
static struct ir_model *chain_model(void)
{
	struct ir_model *m = tm_new(13);

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3), 2);
	tm_init(m, "shp", IR_DTYPE_INT64, TM_DIMS(2), 1, (const double[]){ 3, 2 });
	tm_init(m, "B", IR_DTYPE_FLOAT, TM_DIMS(3, 2), 2,
		(const double[]){ 0, 1, 2, 3, 4, 5 });
	fill_node(m, "shp", "c", 0.5f);
	tm_node(m, "Add", NULL, TM_NAMES("c", "B"), 2, TM_NAMES("w"), 1);
	tm_node(m, "MatMul", NULL, TM_NAMES("x", "w"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(2, 2), 2);
	tm_verify(m);
	return m;
}

static const float chain_x[6] = { 1, 2, 3, 4, 5, 6 };
static const float chain_y[4] = { 19, 25, 41.5f, 56.5f };

static struct rt_session *session(struct ir_model *m, struct rt_opts o)
{
	struct rt_session *s = NULL;
	struct ir_diag d;

	ir_diag_init(&d);
	o.threads = o.threads ? o.threads : 1;
	o.collect_stats = 1;
	if (rt_session_new(m, &o, &s, &d) < 0)
		fprintf(stderr, "\nsession: %s\n", d.msg);
	CU_ASSERT_FATAL(s != NULL);
	return s;
}

/* One run; the first output's floats must equal want[0..n). */
static int run_equals(struct rt_session *s, struct rt_value **ins, size_t n_in,
		      const float *want, int64_t n)
{
	struct rt_value *outs[2] = { NULL, NULL };
	struct ir_diag d;
	int ok;

	ir_diag_init(&d);
	if (rt_session_run(s, ins, n_in, outs, &d) < 0) {
		fprintf(stderr, "\nrun: %s\n", d.msg);
		return 0;
	}
	ok = outs[0] && outs[0]->numel == n &&
	     !memcmp(outs[0]->data, want, (size_t)n * sizeof(float));
	if (!ok && outs[0])
		for (int64_t i = 0; i < n && i < outs[0]->numel; i++)
			fprintf(stderr, "\ny[%lld] = %g, want %g", (long long)i,
				((float *)outs[0]->data)[i], want[i]);
	rt_value_unref(outs[0]);
	rt_value_unref(outs[1]);
	return ok;
}

static const struct rt_op_stat *stat_of(struct rt_session *s, const char *op)
{
	const struct rt_stats *st = rt_session_stats(s);

	for (size_t i = 0; i < st->n_ops; i++)
		if (!strcmp(st->ops[i].op, op))
			return &st->ops[i];
	CU_FAIL_FATAL("op missing from the statistics");
	return NULL;
}

/* ran: run as a node, or done in the pass of the node before it (chain.c) */
#define CHECK_RUNS(s, op, ran, kept) do { \
	CU_ASSERT_EQUAL(stat_of(s, op)->count + stat_of(s, op)->fused, (size_t)(ran)); \
	CU_ASSERT_EQUAL(stat_of(s, op)->reused, (size_t)(kept)); \
} while (0)

static void test_chain_once(void)
{
	struct ir_model *m = chain_model();
	struct rt_session *s = session(m, (struct rt_opts){ 0 });
	struct rt_value *x = ftensor(chain_x, 2, TM_DIMS(2, 3)), *y = NULL;
	struct rt_run *r = NULL;
	struct ir_diag d;
	int steps = 0, rc;

	for (int i = 0; i < 3; i++)
		CU_ASSERT(run_equals(s, &x, 1, chain_y, 4));
	CHECK_RUNS(s, "ConstantOfShape", 1, 2);
	CHECK_RUNS(s, "Add", 1, 2);
	CHECK_RUNS(s, "MatMul", 3, 0);
	CU_ASSERT_EQUAL(rt_session_stats(s)->kept_nodes, 2);
	CU_ASSERT_EQUAL(rt_session_stats(s)->kept_bytes, 2 * 6 * (int64_t)sizeof(float));
	/* node by node: a kept node is a step that binds its results */
	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_run_begin(s, &x, 1, &r, &d) == 0);
	while ((rc = rt_run_step(r, &d)) > 0)
		steps++;
	CU_ASSERT_EQUAL(steps, 3);
	CU_ASSERT_FATAL(rt_run_end(r, rc, &y, &d) == 0);
	CU_ASSERT(y && !memcmp(y->data, chain_y, sizeof(chain_y)));
	CHECK_RUNS(s, "ConstantOfShape", 1, 3);
	rt_value_unref(y);
	rt_session_free(s);
	/* no_weight_cache (validate --layerwise): every run computes all */
	s = session(m, (struct rt_opts){ .no_weight_cache = 1 });
	for (int i = 0; i < 3; i++)
		CU_ASSERT(run_equals(s, &x, 1, chain_y, 4));
	CHECK_RUNS(s, "ConstantOfShape", 3, 0);
	CU_ASSERT_EQUAL(rt_session_stats(s)->kept_nodes, 0);
	rt_session_free(s);
	rt_value_unref(x);
	ir_model_free(m);
}

static void test_random_runs(void)
{
	struct ir_model *m = tm_new(13);
	struct rt_session *s;
	struct rt_value *x, *outs[1] = { NULL }, *first = NULL;
	struct ir_node *n;
	struct ir_diag d;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 2), 2);
	tm_init(m, "two", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 2 });
	n = tm_node(m, "RandomNormal", NULL, NULL, 0, TM_NAMES("r"), 1);
	ir_node_set_ints(n, "shape", TM_DIMS(2, 2), 2);
	tm_node(m, "Mul", NULL, TM_NAMES("r", "two"), 2, TM_NAMES("t"), 1);
	tm_node(m, "Add", NULL, TM_NAMES("t", "x"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(2, 2), 2);
	tm_verify(m);
	x = ftensor((const float[]){ 0, 0, 0, 0 }, 2, TM_DIMS(2, 2));
	s = session(m, (struct rt_opts){ 0 });
	ir_diag_init(&d);
	for (int i = 0; i < 3; i++) {
		CU_ASSERT_FATAL(rt_session_run(s, &x, 1, outs, &d) == 0);
		if (!first)
			first = outs[0];
		else   /* seeded from the node's name: the same draws */
			rt_value_unref(outs[0]);
	}
	CU_ASSERT(first && first->numel == 4);
	CHECK_RUNS(s, "RandomNormal", 3, 0);
	CHECK_RUNS(s, "Mul", 3, 0);
	CHECK_RUNS(s, "Add", 3, 0);
	CU_ASSERT_EQUAL(rt_session_stats(s)->kept_nodes, 0);
	rt_session_free(s);
	for (const char *const *op = (const char *const[]){ "Bernoulli", "Dropout",
	     "Gradient", "Multinomial", "RandomNormal", "RandomNormalLike",
	     "RandomUniform", "RandomUniformLike", NULL }; *op; op++)
		CU_ASSERT(!rt_fold_deterministic(*op));
	CU_ASSERT(rt_fold_deterministic("ConstantOfShape"));
	CU_ASSERT(rt_fold_deterministic("Add"));
	rt_value_unref(first);
	rt_value_unref(x);
	ir_model_free(m);
}

/* y = (b + 1) * x with b a graph input whose initializer default is
 * [1, 2]: b may be overridden from IR 4 on, never before. */
static void test_input_default(void)
{
	static const float want[2] = { 6, 12 };
	struct ir_model *m = tm_new(13);
	struct rt_value *x = ftensor((const float[]){ 3, 4 }, 1, TM_DIMS(2));
	struct rt_session *s;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2), 1);
	tm_init(m, "b", IR_DTYPE_FLOAT, TM_DIMS(2), 1, (const double[]){ 1, 2 });
	tm_input(m, "b", IR_DTYPE_FLOAT, TM_DIMS(2), 1);
	tm_init(m, "one", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 1 });
	tm_node(m, "Add", NULL, TM_NAMES("b", "one"), 2, TM_NAMES("t"), 1);
	tm_node(m, "Mul", NULL, TM_NAMES("t", "x"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(2), 1);
	tm_verify(m);
	s = session(m, (struct rt_opts){ 0 });
	CU_ASSERT_EQUAL(rt_session_n_inputs(s), 1);
	for (int i = 0; i < 3; i++)
		CU_ASSERT(run_equals(s, &x, 1, want, 2));
	CHECK_RUNS(s, "Add", 3, 0);
	CU_ASSERT_EQUAL(rt_session_stats(s)->kept_nodes, 0);
	rt_session_free(s);
	/* IR 3: every initializer is listed as an input, all constants */
	m->ir_version = 3;
	s = session(m, (struct rt_opts){ 0 });
	for (int i = 0; i < 3; i++)
		CU_ASSERT(run_equals(s, &x, 1, want, 2));
	CHECK_RUNS(s, "Add", 1, 2);
	CHECK_RUNS(s, "Mul", 3, 0);
	rt_session_free(s);
	rt_value_unref(x);
	ir_model_free(m);
}

/* k = ConstantOfShape([2,3]) of 2 + 1 is kept; y = k + x has k's shape
 * and is k's last use, where an intermediate would be written in place:
 * a kept k must stay 3 (else run 2 gives 3 + x1 + x2). */
static void test_in_place(void)
{
	struct ir_model *m = tm_new(13);
	struct rt_session *s;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3), 2);
	tm_init(m, "shp", IR_DTYPE_INT64, TM_DIMS(2), 1, (const double[]){ 2, 3 });
	tm_init(m, "one", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 1 });
	fill_node(m, "shp", "c", 2);
	tm_node(m, "Add", NULL, TM_NAMES("c", "one"), 2, TM_NAMES("k"), 1);
	tm_node(m, "Add", NULL, TM_NAMES("k", "x"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(2, 3), 2);
	tm_verify(m);
	s = session(m, (struct rt_opts){ 0 });
	for (int r = 0; r < 3; r++) {
		float xv[6], want[6];
		struct rt_value *x;

		for (int i = 0; i < 6; i++) {
			xv[i] = (float)(10 * r + i);
			want[i] = 3 + xv[i];
		}
		x = ftensor(xv, 2, TM_DIMS(2, 3));
		CU_ASSERT(run_equals(s, &x, 1, want, 6));
		rt_value_unref(x);
	}
	CHECK_RUNS(s, "ConstantOfShape", 1, 2);
	CU_ASSERT_EQUAL(stat_of(s, "Add")->count, 1 + 3);
	CU_ASSERT_EQUAL(rt_session_stats(s)->kept_nodes, 2);
	rt_session_free(s);
	ir_model_free(m);
}

/* The peak of one run that keeps nothing. */
static int64_t plain_peak(struct ir_model *m, struct rt_value **ins, size_t n)
{
	struct rt_session *s = session(m, (struct rt_opts){ .no_weight_cache = 1 });
	struct rt_value *y = NULL;
	struct ir_diag d;
	int64_t peak;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_session_run(s, ins, n, &y, &d) == 0);
	peak = rt_session_stats(s)->peak_bytes;
	rt_value_unref(y);
	rt_session_free(s);
	return peak;
}

static void test_memory_limit(void)
{
	struct ir_model *m = chain_model();
	struct rt_value *x = ftensor(chain_x, 2, TM_DIMS(2, 3));
	int64_t peak = plain_peak(m, &x, 1), kept = 2 * 6 * (int64_t)sizeof(float);
	struct rt_session *s;

	/* the limit is the peak itself: no room, all runs compute all */
	s = session(m, (struct rt_opts){ .max_memory = peak });
	for (int i = 0; i < 3; i++)
		CU_ASSERT(run_equals(s, &x, 1, chain_y, 4));
	CHECK_RUNS(s, "ConstantOfShape", 3, 0);
	CHECK_RUNS(s, "Add", 3, 0);
	CU_ASSERT_EQUAL(rt_session_stats(s)->kept_nodes, 0);
	rt_session_free(s);
	/* room for both results: the first run measures, the second keeps */
	s = session(m, (struct rt_opts){ .max_memory = peak + kept });
	for (int i = 0; i < 4; i++)
		CU_ASSERT(run_equals(s, &x, 1, chain_y, 4));
	CHECK_RUNS(s, "ConstantOfShape", 2, 2);
	CHECK_RUNS(s, "Add", 2, 2);
	CU_ASSERT_EQUAL(rt_session_stats(s)->kept_bytes, kept);
	CU_ASSERT(rt_session_stats(s)->peak_bytes <= peak + kept);
	rt_session_free(s);
	/* room for the first only */
	s = session(m, (struct rt_opts){ .max_memory = peak + kept / 2 });
	for (int i = 0; i < 3; i++)
		CU_ASSERT(run_equals(s, &x, 1, chain_y, 4));
	CHECK_RUNS(s, "ConstantOfShape", 2, 1);
	CHECK_RUNS(s, "Add", 3, 0);
	rt_session_free(s);
	rt_value_unref(x);
	ir_model_free(m);
}

/* Replaces the value of "c" by zeros and counts the outputs seen. */
static int zero_c(void *ctx, const struct ir_node *n, size_t out, struct rt_value **slot)
{
	(void)out;
	++*(int *)ctx;
	if (!strcmp(ir_s(n->outputs[0]->name), "c")) {
		rt_value_unref(*slot);
		*slot = ftensor((const float[]){ 0, 0, 0, 0, 0, 0 }, 2, TM_DIMS(3, 2));
	}
	return 0;
}

/* With an observer every node runs, and what it replaces is not kept. */
static void test_observer(void)
{
	static const float zeroed[4] = { 16, 22, 34, 49 };   /* x * B */
	struct ir_model *m = chain_model();
	struct rt_session *s = session(m, (struct rt_opts){ 0 });
	struct rt_value *x = ftensor(chain_x, 2, TM_DIMS(2, 3));
	int seen = 0;

	CU_ASSERT(run_equals(s, &x, 1, chain_y, 4));
	rt_session_set_observer(s, zero_c, &seen);
	CU_ASSERT(run_equals(s, &x, 1, zeroed, 4));
	CU_ASSERT_EQUAL(seen, 3);
	CHECK_RUNS(s, "ConstantOfShape", 2, 0);
	rt_session_set_observer(s, NULL, NULL);
	CU_ASSERT(run_equals(s, &x, 1, chain_y, 4));
	CHECK_RUNS(s, "ConstantOfShape", 2, 1);
	CHECK_RUNS(s, "Add", 2, 1);
	rt_session_free(s);
	/* observed from the first run: nothing is kept */
	s = session(m, (struct rt_opts){ 0 });
	rt_session_set_observer(s, zero_c, &seen);
	CU_ASSERT(run_equals(s, &x, 1, zeroed, 4));
	rt_session_set_observer(s, NULL, NULL);
	CU_ASSERT(run_equals(s, &x, 1, chain_y, 4));
	CU_ASSERT(run_equals(s, &x, 1, chain_y, 4));
	CHECK_RUNS(s, "ConstantOfShape", 2, 1);
	rt_session_free(s);
	rt_value_unref(x);
	ir_model_free(m);
}

/* A constant node that fails fails every run, the same way. */
static void test_failing_constant(void)
{
	struct ir_model *m = tm_new(13);
	struct rt_value *x = ftensor((const float[]){ 1, 2 }, 1, TM_DIMS(2)), *y = NULL;
	struct rt_session *s;
	struct ir_diag d;
	char first[sizeof(d.msg)];

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2), 1);
	tm_init(m, "shp", IR_DTYPE_INT64, TM_DIMS(1), 1, (const double[]){ -2 });
	fill_node(m, "shp", "c", 1);
	tm_node(m, "Add", NULL, TM_NAMES("c", "x"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(2), 1);
	tm_verify(m);
	s = session(m, (struct rt_opts){ 0 });
	ir_diag_init(&d);
	CU_ASSERT(rt_session_run(s, &x, 1, &y, &d) < 0 && !y);
	CU_ASSERT(strstr(d.msg, "ConstantOfShape") != NULL);
	snprintf(first, sizeof(first), "%s", d.msg);
	ir_diag_init(&d);
	CU_ASSERT(rt_session_run(s, &x, 1, &y, &d) < 0 && !y);
	CU_ASSERT_STRING_EQUAL(d.msg, first);
	CU_ASSERT_EQUAL(rt_session_stats(s)->kept_nodes, 0);
	rt_session_free(s);
	rt_value_unref(x);
	ir_model_free(m);
}

/* A constant node whose result is a graph output runs every time: the
 * caller owns what it gets (here it scribbles on it). */
static void test_constant_output(void)
{
	static const float ones[2] = { 1, 1 }, y_want[2] = { 2, 3 };
	struct ir_model *m = tm_new(13);
	struct rt_value *x = ftensor((const float[]){ 1, 2 }, 1, TM_DIMS(2));
	struct rt_session *s;
	struct ir_diag d;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2), 1);
	tm_init(m, "shp", IR_DTYPE_INT64, TM_DIMS(1), 1, (const double[]){ 2 });
	fill_node(m, "shp", "c", 1);
	tm_node(m, "Add", NULL, TM_NAMES("c", "x"), 2, TM_NAMES("y"), 1);
	tm_output(m, "c", IR_DTYPE_FLOAT, TM_DIMS(2), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(2), 1);
	tm_verify(m);
	s = session(m, (struct rt_opts){ 0 });
	ir_diag_init(&d);
	for (int i = 0; i < 3; i++) {
		struct rt_value *outs[2] = { NULL, NULL };

		CU_ASSERT_FATAL(rt_session_run(s, &x, 1, outs, &d) == 0);
		CU_ASSERT(!memcmp(outs[0]->data, ones, sizeof(ones)));
		CU_ASSERT(!memcmp(outs[1]->data, y_want, sizeof(y_want)));
		((float *)outs[0]->data)[0] = 99;
		rt_value_unref(outs[0]);
		rt_value_unref(outs[1]);
	}
	CHECK_RUNS(s, "ConstantOfShape", 3, 0);
	rt_session_free(s);
	rt_value_unref(x);
	ir_model_free(m);
}

/* wo = Identity(w) is a graph output: it runs every time and hands the
 * caller the kept w itself, which stays charged to the session (no drift
 * of its account, run after run) and outlives it. */
static void test_output_views_kept(void)
{
	static const float w_want[6] = { 0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f };
	struct ir_model *m = chain_model();
	struct rt_value *x = ftensor(chain_x, 2, TM_DIMS(2, 3)), *outs[2] = { NULL, NULL };
	struct rt_session *s;
	struct ir_diag d;
	int64_t base, cur = 0;

	tm_node(m, "Identity", NULL, TM_NAMES("w"), 1, TM_NAMES("wo"), 1);
	tm_output(m, "wo", IR_DTYPE_FLOAT, TM_DIMS(3, 2), 2);
	tm_verify(m);
	s = session(m, (struct rt_opts){ .no_weight_cache = 1 });
	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_session_run(s, &x, 1, outs, &d) == 0);
	base = rt_session_mem(s)->cur;
	rt_value_unref(outs[0]);
	rt_value_unref(outs[1]);
	outs[0] = outs[1] = NULL;
	rt_session_free(s);
	s = session(m, (struct rt_opts){ 0 });
	for (int i = 0; i < 3; i++) {
		rt_value_unref(outs[0]);
		rt_value_unref(outs[1]);
		CU_ASSERT_FATAL(rt_session_run(s, &x, 1, outs, &d) == 0);
		CU_ASSERT(!memcmp(outs[0]->data, chain_y, sizeof(chain_y)));
		CU_ASSERT(!memcmp(outs[1]->data, w_want, sizeof(w_want)));
		if (i)
			CU_ASSERT_EQUAL(rt_session_mem(s)->cur, cur);
		cur = rt_session_mem(s)->cur;
	}
	CHECK_RUNS(s, "Identity", 3, 0);
	CHECK_RUNS(s, "Add", 1, 2);
	CU_ASSERT_EQUAL(cur, base + rt_session_stats(s)->kept_bytes);
	rt_session_free(s);
	/* the session is gone, the output still reads (ASan watches) */
	CU_ASSERT(!memcmp(outs[1]->data, w_want, sizeof(w_want)));
	CU_ASSERT(outs[1]->mem == NULL);
	rt_value_unref(outs[0]);
	rt_value_unref(outs[1]);
	rt_value_unref(x);
	ir_model_free(m);
}

/* y = Conv(x, W + 0) with a 12 -> 66 channel 3x3 kernel on 11x17: the
 * direct path (k_conv_direct.c: fewer than 16 input channels keep it off
 * oneDNN), its weights computed by a constant node. */
#define WC 12
#define WM 66
static struct ir_model *conv_model(void)
{
	struct ir_model *m = tm_new(13);
	uint64_t seed = 11;
	struct ir_node *n;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, WC, 11, 17), 4);
	tg_rand_init(m, &seed, "W", TM_DIMS(WM, WC, 3, 3), 4);
	tm_init(m, "zero", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 0 });
	tm_node(m, "Add", NULL, TM_NAMES("W", "zero"), 2, TM_NAMES("w"), 1);
	n = tm_node(m, "Conv", NULL, TM_NAMES("x", "w"), 2, TM_NAMES("y"), 1);
	ir_node_set_ints(n, "pads", TM_DIMS(1, 1, 1, 1), 4);
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(1, WM, 11, 17), 4);
	tm_verify(m);
	return m;
}

static void test_packed_cache(void)
{
	/* the direct path's packed weights: tiles of KNN_DC_MR channels
	 * (an AVX-512 path: without it the convolution keeps no copy) */
	const int64_t cache = !rt_pgemm_ok() ? 0 :
			      (WM + KNN_DC_MR - 1) / KNN_DC_MR * KNN_DC_MR * WC * 9 *
			      (int64_t)sizeof(float);
	struct ir_model *m = conv_model();
	float *xv = malloc(WC * 11 * 17 * sizeof(float)), *want;
	double *dv = malloc(WC * 11 * 17 * sizeof(double));
	uint64_t seed = 12;
	struct rt_value *x, *y = NULL;
	struct rt_session *s;
	struct ir_diag d;
	int64_t base;

	CU_ASSERT_FATAL(xv && dv);
	tg_fill(&seed, dv, WC * 11 * 17);
	for (int i = 0; i < WC * 11 * 17; i++)
		xv[i] = (float)dv[i];
	x = ftensor(xv, 4, TM_DIMS(1, WC, 11, 17));
	/* the reference: weights computed and transformed on every run */
	s = session(m, (struct rt_opts){ .no_weight_cache = 1 });
	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_session_run(s, &x, 1, &y, &d) == 0);
	base = rt_session_mem(s)->cur;
	want = malloc((size_t)y->numel * sizeof(float));
	CU_ASSERT_FATAL(want != NULL);
	memcpy(want, y->data, (size_t)y->numel * sizeof(float));
	rt_value_unref(y);
	rt_session_free(s);
	/* kept from the first run: the packed weights are cached too */
	s = session(m, (struct rt_opts){ 0 });
	for (int i = 0; i < 3; i++)
		CU_ASSERT(run_equals(s, &x, 1, want, WM * 11 * 17));
	CHECK_RUNS(s, "Add", 1, 2);
	CU_ASSERT_EQUAL(rt_session_mem(s)->cur - base,
			rt_session_stats(s)->kept_bytes + cache);
	rt_session_free(s);
	/* under a limit kept from the second run on: no cache from the first
	 * run's weights, then one from the kept ones */
	s = session(m, (struct rt_opts){ .max_memory = (int64_t)1 << 30 });
	CU_ASSERT(run_equals(s, &x, 1, want, WM * 11 * 17));
	CU_ASSERT_EQUAL(rt_session_mem(s)->cur, base);
	for (int i = 0; i < 3; i++)
		CU_ASSERT(run_equals(s, &x, 1, want, WM * 11 * 17));
	CHECK_RUNS(s, "Add", 2, 2);
	CU_ASSERT_EQUAL(rt_session_mem(s)->cur - base,
			rt_session_stats(s)->kept_bytes + cache);
	rt_session_free(s);
	rt_value_unref(x);
	ir_model_free(m);
	free(xv);
	free(dv);
	free(want);
}

static const struct unit_test tests[] = {
	{ "a constant chain runs once per session", test_chain_once },
	{ "random draws run every time", test_random_runs },
	{ "an input with an initializer default is not constant", test_input_default },
	{ "a kept value is never written in place", test_in_place },
	{ "memory limits with and without room", test_memory_limit },
	{ "an observer sees every node run", test_observer },
	{ "a failing constant node fails every run", test_failing_constant },
	{ "a constant graph output runs every time", test_constant_output },
	{ "an output sharing a kept value outlives the session", test_output_views_kept },
	{ "packed convolution weights cached from kept weights", test_packed_cache },
	{ NULL, NULL },
};

int suite_fold_register(void)
{
	return unit_add_suite("fold", tests);
}
