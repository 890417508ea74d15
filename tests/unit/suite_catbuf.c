/* suite_catbuf.c: Concats whose producers write into their result
 * (runtime/catbuf.c).  Branches made by a Conv with a Relu chained
 * after it, a MaxPool, a Mul of the graph input and a Conv whose chain
 * ends with a residual Add are joined along the channels; run after run
 * in one session, the output equals, bit for bit, that of the nodes run
 * one by one under an observer (which copies), with one and two threads,
 * and from the second run on the run's peak of tensor memory drops by
 * more than half the Concat's result (no copy).  The input's height changes from
 * run to run (a dynamic dim): a run whose shapes differ from the last
 * copies and is still right; a join with a batch of 2 (inputs not
 * consecutive in the result) copies every time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/suites.h"
#include "tests/unit/tgen.h"
#include "tests/unit/tmodel.h"

#define C 4
#define WD 7
#define YC (C * 5)   /* 8 + 4 + 4 + 4 channels */

/* x [N, C, ?, WD] -> Concat(Relu(Conv1(x)), MaxPool(x), x * 2,
 * Conv2(x) + x * 2 (a residual Add: the shortcut comes first)) */
static struct ir_model *model(int64_t n)
{
	struct ir_model *m = tm_new(13);
	double w[2 * C * C * 9], b[2 * C];
	uint64_t seed = 21;
	struct ir_value *x = tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(n, C, 5, WD), 4);
	struct ir_node *nd;

	/* the height left open */
	((struct ir_type *)x->type)->shape.dims[2].kind = IR_DIM_UNKNOWN;
	tg_fill(&seed, w, 2 * C * C * 9);
	tg_fill(&seed, b, 2 * C);
	tm_init(m, "W1", IR_DTYPE_FLOAT, TM_DIMS(2 * C, C, 3, 3), 4, w);
	tm_init(m, "B1", IR_DTYPE_FLOAT, TM_DIMS(2 * C), 1, b);
	tm_init(m, "W2", IR_DTYPE_FLOAT, TM_DIMS(C, C, 3, 3), 4, w + C * C * 9);
	tm_init(m, "two", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 2 });
	tm_node(m, "Mul", NULL, TM_NAMES("x", "two"), 2, TM_NAMES("d"), 1);
	tm_node(m, "Mul", NULL, TM_NAMES("x", "two"), 2, TM_NAMES("sc"), 1);
	nd = tm_node(m, "Conv", NULL, TM_NAMES("x", "W1", "B1"), 3, TM_NAMES("c1"), 1);
	ir_node_set_ints(nd, "pads", TM_DIMS(1, 1, 1, 1), 4);
	tm_node(m, "Relu", NULL, TM_NAMES("c1"), 1, TM_NAMES("a"), 1);
	nd = tm_node(m, "MaxPool", NULL, TM_NAMES("x"), 1, TM_NAMES("p"), 1);
	ir_node_set_ints(nd, "kernel_shape", TM_DIMS(3, 3), 2);
	ir_node_set_ints(nd, "pads", TM_DIMS(1, 1, 1, 1), 4);
	nd = tm_node(m, "Conv", NULL, TM_NAMES("x", "W2"), 2, TM_NAMES("c2"), 1);
	ir_node_set_ints(nd, "pads", TM_DIMS(1, 1, 1, 1), 4);
	tm_node(m, "Add", NULL, TM_NAMES("c2", "sc"), 2, TM_NAMES("r"), 1);
	ir_node_set_int(tm_node(m, "Concat", NULL, TM_NAMES("a", "p", "d", "r"), 4,
				TM_NAMES("y"), 1), "axis", 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(n, YC, 5, WD), 4);
	((struct ir_type *)m->graph->outputs[0].type)->shape.dims[2].kind = IR_DIM_UNKNOWN;
	tm_verify(m);
	return m;
}

static int observe(void *ctx, const struct ir_node *n, size_t i, struct rt_value **slot)
{
	(void)ctx;
	(void)n;
	(void)i;
	(void)slot;
	return 0;
}

/* Runs of m (threads th; under an observer or not; no weight caches,
 * whose first allocation would count in the first run) on heights h[r]:
 * run r's output into y[r], the tensor bytes its peak added into
 * peak[r]. */
static void runs(struct ir_model *m, int64_t n, int th, int obs, const int64_t *h, int nr,
		 float **y, int64_t *peak)
{
	struct rt_opts o = { .threads = th, .no_weight_cache = 1 };
	struct rt_session *s = NULL;
	struct ir_diag d;

	ir_diag_init(&d);
	if (obs)
		o.observe = observe;
	CU_ASSERT_FATAL(rt_session_new(m, &o, &s, &d) == 0);
	for (int r = 0; r < nr; r++) {
		int64_t nx = n * C * h[r] * WD, before;
		struct rt_value *in, *out = NULL;
		struct rt_mem *mem = rt_session_mem(s);
		double v[2 * C * 9 * WD];
		uint64_t seed = 5 + (uint64_t)r;

		CU_ASSERT_FATAL(nx <= 2 * C * 9 * WD);
		tg_fill(&seed, v, nx);
		CU_ASSERT_FATAL(rt_tensor_new(NULL, IR_DTYPE_FLOAT, 4, TM_DIMS(n, C, h[r], WD),
					      &in, &d) == 0);
		for (int64_t e = 0; e < nx; e++)
			((float *)in->data)[e] = (float)v[e];
		before = mem->peak = mem->cur;
		if (rt_session_run(s, &in, 1, &out, &d) < 0)
			fprintf(stderr, "\nrun: %s\n", d.msg);
		CU_ASSERT_FATAL(out != NULL && out->numel == n * YC * h[r] * WD);
		peak[r] = mem->peak - before;
		memcpy(y[r], out->data, (size_t)out->numel * sizeof(float));
		rt_value_unref(out);
		rt_value_unref(in);
	}
	rt_session_free(s);
}

#define NR 5

static void check(int64_t n)
{
	static const int64_t h[NR] = { 9, 9, 6, 6, 9 };
	struct ir_model *m = model(n);
	float *plain[NR], *got[NR];
	int64_t pp[NR], pg[NR];

	for (int r = 0; r < NR; r++) {
		CU_ASSERT_FATAL((plain[r] = malloc(2 * YC * 9 * WD * sizeof(float))) != NULL);
		CU_ASSERT_FATAL((got[r] = malloc(2 * YC * 9 * WD * sizeof(float))) != NULL);
	}
	runs(m, n, 1, 1, h, NR, plain, pp);
	for (int th = 1; th <= 2; th++) {
		runs(m, n, th, 0, h, NR, got, pg);
		for (int r = 0; r < NR; r++)
			CU_ASSERT(!memcmp(got[r], plain[r],
					  (size_t)(n * YC * h[r] * WD) * sizeof(float)));
		/* run 0 learns the shapes and copies, run 2 finds them
		 * changed and copies: runs 1 and 3 do not (their peak
		 * drops by more than half the result: 24 channels live at
		 * most, not 40), a batch of 2 never does */
		for (int r = 1; r < NR; r += 2) {
			int64_t bytes = n * YC * h[r] * WD * (int64_t)sizeof(float);

			if (n == 1) {
				CU_ASSERT(pg[r] + bytes / 2 <= pg[r - 1]);
			} else {
				CU_ASSERT(pg[r] == pg[r - 1]);
			}
		}
		/* run 4 finds the shapes changed again */
		CU_ASSERT(pg[4] == pg[0]);
	}
	for (int r = 0; r < NR; r++) {
		free(plain[r]);
		free(got[r]);
	}
	ir_model_free(m);
}

static void test_in_place(void)
{
	check(1);
}

static void test_batch_copies(void)
{
	check(2);
}

static const struct unit_test tests[] = {
	{ "in_place", test_in_place },
	{ "batch_copies", test_batch_copies },
	{ NULL, NULL },
};

int suite_catbuf_register(void)
{
	return unit_add_suite("catbuf", tests);
}
