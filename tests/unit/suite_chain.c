/* suite_chain.c: a Conv's epilogue chain run as one pass (validators/
 * chain.c) against the nodes run one by one and against the chain's
 * arithmetic done here by the spec from the Conv's observed output:
 * BatchNormalization, Mul by a kept constant (an Unsqueeze of an
 * initializer: fused from the second run on), Add with the constant
 * first, Sub with it first, Div both ways, Clip, Relu; one and two threads;
 * no fusing under an observer; a pass that stops before an operand that
 * is not per-channel or not yet at hand, that node then heading the
 * rest; a chain that ends at a graph output, the next
 * node heading the rest; each on a small plane (the pass after the
 * Conv) and on one the direct convolution takes (its tiles do the
 * steps as they store the output), and with the Conv depthwise on that
 * plane (k_conv_dw.c, which does the steps in its registers too); a
 * residual Add or Sum of a tensor computed before the Conv, after it, or
 * broadcast; after a move (a Transpose), on a chain made by hand, only
 * a step the same on every channel; a Gemm's [N, C] result (planes of
 * one value) taken as rows of C channels, with a tensor operand; a
 * chain on a result stored in a view no other value sees (a GroupNorm's
 * Reshapes). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/exec_int.h"
#include "tests/unit/suites.h"
#include "tests/unit/tgen.h"
#include "tests/unit/tmodel.h"

#define C 5
/* the spatial dims (planes[] below) */
static int64_t H = 4, W = 3;
/* 1: the Conv is depthwise (group C) */
static int DW;
#define NX (2 * C * H * W)
#define NXMAX (2 * C * 40 * 33)

/* x [2, C, H, W] -> Conv 3x3 pad 1 -> BN -> Mul(., Unsqueeze(u)) ->
 * Add(a, .) -> Sub(k, .) -> Div(., q) -> Clip(., -1, 0.75) -> Relu ->
 * Div(k, .) -> y.  full: Add's a is
 * [1, C, H, W] (not per-channel); tap: BN's result is a graph output too. */
static struct ir_model *model(int full, int tap)
{
	struct ir_model *m = tm_new(13);
	static double w[C * C * 9], v[C * 40 * 33];
	struct ir_node *conv;
	uint64_t seed = 7;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, C, H, W), 4);
	tg_fill(&seed, w, C * C * 9);
	tm_init(m, "W", IR_DTYPE_FLOAT, TM_DIMS(C, DW ? 1 : C, 3, 3), 4, w);
	tg_fill(&seed, v, C);
	tm_init(m, "B", IR_DTYPE_FLOAT, TM_DIMS(C), 1, v);
	tm_init(m, "scale", IR_DTYPE_FLOAT, TM_DIMS(C), 1, (const double[]){ 1.5, -0.7, 2, 0.3, 1 });
	tm_init(m, "bias", IR_DTYPE_FLOAT, TM_DIMS(C), 1, (const double[]){ 0.1, 0.2, -0.3, 0, 1.1 });
	tm_init(m, "mean", IR_DTYPE_FLOAT, TM_DIMS(C), 1, (const double[]){ 0.5, -1, 0, 2, 0.25 });
	tm_init(m, "var", IR_DTYPE_FLOAT, TM_DIMS(C), 1, (const double[]){ 1, 0.5, 3, 0.1, 2 });
	tm_init(m, "u", IR_DTYPE_FLOAT, TM_DIMS(C), 1, (const double[]){ 0.9, 1.1, -1.3, 0.7, 2.1 });
	tm_init(m, "axes", IR_DTYPE_INT64, TM_DIMS(2), 1, (const double[]){ 1, 2 });
	if (full) {
		tg_fill(&seed, v, C * H * W);
		tm_init(m, "a", IR_DTYPE_FLOAT, TM_DIMS(1, C, H, W), 4, v);
	} else {
		tm_init(m, "a", IR_DTYPE_FLOAT, TM_DIMS(C, 1, 1), 3,
			(const double[]){ 0.3, -0.2, 0.1, 0.7, -1 });
	}
	tm_init(m, "k", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 0.25 });
	tm_init(m, "q", IR_DTYPE_FLOAT, TM_DIMS(1, C, 1, 1), 4,
		(const double[]){ 3, 0.5, -2, 7, 1.25 });
	conv = tm_node(m, "Conv", NULL, TM_NAMES("x", "W", "B"), 3, TM_NAMES("c"), 1);
	ir_node_set_ints(conv, "pads", TM_DIMS(1, 1, 1, 1), 4);
	if (DW)
		ir_node_set_int(conv, "group", C);
	ir_node_set_float(tm_node(m, "BatchNormalization", NULL,
				  TM_NAMES("c", "scale", "bias", "mean", "var"), 5,
				  TM_NAMES("b"), 1), "epsilon", 1e-3f);
	tm_node(m, "Unsqueeze", NULL, TM_NAMES("u", "axes"), 2, TM_NAMES("uu"), 1);
	tm_node(m, "Mul", NULL, TM_NAMES("b", "uu"), 2, TM_NAMES("p"), 1);
	tm_node(m, "Add", NULL, TM_NAMES("a", "p"), 2, TM_NAMES("s"), 1);
	tm_node(m, "Sub", NULL, TM_NAMES("k", "s"), 2, TM_NAMES("t"), 1);
	tm_node(m, "Div", NULL, TM_NAMES("t", "q"), 2, TM_NAMES("r"), 1);
	tm_init(m, "lo", IR_DTYPE_FLOAT, TM_DIMS(0), 0, (const double[]){ -1 });
	tm_init(m, "hi", IR_DTYPE_FLOAT, TM_DIMS(0), 0, (const double[]){ 0.75 });
	tm_node(m, "Clip", NULL, TM_NAMES("r", "lo", "hi"), 3, TM_NAMES("rc"), 1);
	tm_node(m, "Relu", NULL, TM_NAMES("rc"), 1, TM_NAMES("z"), 1);
	tm_node(m, "Div", NULL, TM_NAMES("k", "z"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(2, C, H, W), 4);
	if (tap)
		tm_output(m, "b", IR_DTYPE_FLOAT, TM_DIMS(2, C, H, W), 4);
	tm_verify(m);
	return m;
}

/* The Conv's output as the observer saw it. */
struct seen {
	float conv[NXMAX];
	int got;
};

static int observe(void *ctx, const struct ir_node *n, size_t i, struct rt_value **slot)
{
	struct seen *s = ctx;

	if (!strcmp(n->op_type, "Conv") && i == 0 && (*slot)->numel == NX) {
		memcpy(s->conv, (*slot)->data, NX * sizeof(float));
		s->got = 1;
	}
	return 0;
}

/* y from the Conv's output by the spec, in float (per-channel a). */
static void by_hand(const float *conv, float *y)
{
	static const float scale[] = { 1.5f, -0.7f, 2, 0.3f, 1 }, bias[] = { 0.1f, 0.2f, -0.3f, 0, 1.1f };
	static const float mean[] = { 0.5f, -1, 0, 2, 0.25f }, var[] = { 1, 0.5f, 3, 0.1f, 2 };
	static const float u[] = { 0.9f, 1.1f, -1.3f, 0.7f, 2.1f }, a[] = { 0.3f, -0.2f, 0.1f, 0.7f, -1 };
	static const float q[] = { 3, 0.5f, -2, 7, 1.25f };

	for (int64_t e = 0; e < NX; e++) {
		int c = (int)(e / (H * W) % C);
		double g = scale[c] / sqrt((double)var[c] + 1e-3f);
		float mul = (float)g, add = (float)(bias[c] - mean[c] * g);
		float t = conv[e] * mul;

		t = t + add;
		t = t * u[c];
		t = a[c] + t;
		t = 0.25f - t;
		t = t / q[c];
		t = t < -1 ? -1 : t;
		t = t > 0.75f ? 0.75f : t;
		t = t < 0 ? 0 : t;
		y[e] = 0.25f / t;
	}
}

/* The second output (BN's result, model(.., 1)) of run_model's last run */
static float tap_out[NXMAX];

/* runs runs of m on x (threads th, observer or not): y of the last; the
 * times op's node was fused. */
static size_t run_model(struct ir_model *m, int th, int runs, struct seen *obs, float *y,
			const char *op)
{
	struct rt_opts o = { .threads = th, .collect_stats = 1 };
	struct rt_session *s = NULL;
	struct rt_value *in, *outs[2] = { NULL, NULL };
	const struct rt_stats *st;
	static double xd[NXMAX];
	uint64_t seed = 3;
	size_t fused = 0;
	struct ir_diag d;

	ir_diag_init(&d);
	if (obs) {
		o.observe = observe;
		o.observe_ctx = obs;
	}
	tg_fill(&seed, xd, NX);
	CU_ASSERT_FATAL(rt_tensor_new(NULL, IR_DTYPE_FLOAT, 4, TM_DIMS(2, C, H, W), &in, &d) == 0);
	for (int64_t e = 0; e < NX; e++)
		((float *)in->data)[e] = (float)xd[e];
	CU_ASSERT_FATAL(rt_session_new(m, &o, &s, &d) == 0);
	for (int r = 0; r < runs; r++) {
		if (rt_session_run(s, &in, 1, outs, &d) < 0)
			fprintf(stderr, "\nrun: %s\n", d.msg);
		CU_ASSERT_FATAL(outs[0] != NULL && outs[0]->numel == NX);
		memcpy(y, outs[0]->data, NX * sizeof(float));
		if (outs[1] && outs[1]->numel == NX)
			memcpy(tap_out, outs[1]->data, NX * sizeof(float));
		rt_value_unref(outs[0]);
		rt_value_unref(outs[1]);
		outs[0] = outs[1] = NULL;
	}
	st = rt_session_stats(s);
	for (size_t i = 0; i < st->n_ops; i++)
		if (!strcmp(st->ops[i].op, op))
			fused = st->ops[i].fused;
	rt_session_free(s);
	rt_value_unref(in);
	return fused;
}

static void chain_fused(void)
{
	struct ir_model *m = model(0, 0);
	struct seen obs = { .got = 0 };
	static float plain[NXMAX], want[NXMAX], y[NXMAX];

	/* one by one under the observer, which sees the Conv's output */
	CU_ASSERT_EQUAL(run_model(m, 1, 2, &obs, plain, "BatchNormalization"), 0);
	CU_ASSERT_FATAL(obs.got);
	by_hand(obs.conv, want);
	CU_ASSERT(!memcmp(plain, want, NX * sizeof(float)));
	for (int th = 1; th <= 2; th++) {
		/* run 1: Unsqueeze's result is not kept yet, the Conv's pass
		 * stops before Mul, which runs as a node heading the rest;
		 * runs 2 and 3 do the whole chain */
		CU_ASSERT_EQUAL(run_model(m, th, 3, NULL, y, "Relu"), 3);
		CU_ASSERT_EQUAL(run_model(m, th, 3, NULL, y, "Mul"), 2);
		CU_ASSERT(!memcmp(y, want, NX * sizeof(float)));
		CU_ASSERT_EQUAL(run_model(m, th, 3, NULL, y, "BatchNormalization"), 3);
		CU_ASSERT(!memcmp(y, want, NX * sizeof(float)));
		CU_ASSERT_EQUAL(run_model(m, th, 1, NULL, y, "Mul"), 0);
		CU_ASSERT(!memcmp(y, want, NX * sizeof(float)));
	}
	ir_model_free(m);
}

static void chain_partly(void)
{
	static float plain[NXMAX], y[NXMAX], tap[NXMAX];
	struct ir_model *m;

	/* Add's operand covers every element: the pass does BN and Mul,
	 * Add runs as a node heading the rest; the same values */
	m = model(1, 0);
	CU_ASSERT_EQUAL(run_model(m, 1, 1, &(struct seen){ .got = 0 }, plain, "Mul"), 0);
	CU_ASSERT_EQUAL(run_model(m, 1, 3, NULL, y, "Mul"), 2);
	CU_ASSERT(!memcmp(y, plain, NX * sizeof(float)));
	CU_ASSERT_EQUAL(run_model(m, 1, 3, NULL, y, "Add"), 0);
	CU_ASSERT_EQUAL(run_model(m, 1, 3, NULL, y, "Relu"), 3);
	CU_ASSERT(!memcmp(y, plain, NX * sizeof(float)));
	ir_model_free(m);
	/* BN's result is also an output: the Conv's chain ends with BN,
	 * Mul (run as a node) heads the rest, whose operands are all
	 * initializers: fused from the first run */
	m = model(0, 1);
	CU_ASSERT_EQUAL(run_model(m, 1, 1, &(struct seen){ .got = 0 }, plain, "Relu"), 0);
	memcpy(tap, tap_out, NX * sizeof(float));
	CU_ASSERT_EQUAL(run_model(m, 1, 3, NULL, y, "BatchNormalization"), 3);
	CU_ASSERT(!memcmp(tap_out, tap, NX * sizeof(float)));
	CU_ASSERT_EQUAL(run_model(m, 1, 3, NULL, y, "Mul"), 0);
	CU_ASSERT_EQUAL(run_model(m, 1, 3, NULL, y, "Relu"), 3);
	CU_ASSERT(!memcmp(y, plain, NX * sizeof(float)));
	ir_model_free(m);
}

/* x -> Conv k x k -> Add(sc, .) (Sum(., sc) with sum) -> Relu -> y, sc = x * 0.5
 * computed before the Conv or, late, after it (valid orders both);
 * wide: sc is [2, C, H, 1], broadcast. */
static struct ir_model *res_model(int late, int sum, int wide, int k)
{
	struct ir_model *m = tm_new(13);
	double w[C * C * 9], v[C];
	uint64_t seed = 11;
	struct ir_node *conv;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, C, H, W), 4);
	tg_fill(&seed, w, C * C * 9);
	tm_init(m, "W", IR_DTYPE_FLOAT, TM_DIMS(C, DW ? 1 : C, k, k), 4, w);
	tg_fill(&seed, v, C);
	tm_init(m, "B", IR_DTYPE_FLOAT, TM_DIMS(C), 1, v);
	tm_init(m, "h", IR_DTYPE_FLOAT, TM_DIMS(1), 1, (const double[]){ 0.5 });
	tm_init(m, "i1", IR_DTYPE_INT64, TM_DIMS(1), 1, (const double[]){ 0 });
	tm_init(m, "i2", IR_DTYPE_INT64, TM_DIMS(1), 1, (const double[]){ 1 });
	tm_init(m, "i3", IR_DTYPE_INT64, TM_DIMS(1), 1, (const double[]){ 3 });
	for (int pass = 0; pass < 2; pass++) {
		if (pass == late) {
			tm_node(m, "Mul", NULL, TM_NAMES("x", "h"), 2, TM_NAMES("sc0"), 1);
			if (wide)   /* the first column of each row */
				tm_node(m, "Slice", NULL, TM_NAMES("sc0", "i1", "i2", "i3"), 4,
					TM_NAMES("sc"), 1);
			else
				tm_node(m, "Identity", NULL, TM_NAMES("sc0"), 1, TM_NAMES("sc"), 1);
		} else {
			conv = tm_node(m, "Conv", NULL, TM_NAMES("x", "W", "B"), 3, TM_NAMES("c"), 1);
			ir_node_set_ints(conv, "pads", TM_DIMS(k / 2, k / 2, k / 2, k / 2), 4);
			if (DW)
				ir_node_set_int(conv, "group", C);
		}
	}
	tm_node(m, sum ? "Sum" : "Add", NULL, sum ? TM_NAMES("c", "sc") : TM_NAMES("sc", "c"), 2,
		TM_NAMES("s"), 1);
	tm_node(m, "Relu", NULL, TM_NAMES("s"), 1, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(2, C, H, W), 4);
	tm_verify(m);
	return m;
}

/* A residual Add (or Sum) of two tensors of one shape joins, with the
 * Relu after it, the chain of whichever input is computed last: the
 * Conv's when the shortcut came first (done in the direct tiles' registers
 * or, after a depthwise Conv, whose kernel takes no tensor operands, in
 * the pass after it), the shortcut's Identity's when it comes after; a
 * broadcast shortcut leaves the Add to run as a node, heading the Relu.
 * The same values as the nodes one by one, bit for bit. */
static void chain_residual(int k)
{
	static float plain[NXMAX], y[NXMAX];

	for (int late = 0; late < 2; late++)
		for (int sum = 0; sum < 2; sum++)
			for (int wide = 0; wide < 2; wide++) {
				struct ir_model *m = res_model(late, sum, wide, k);
				const char *op = sum ? "Sum" : "Add";
				size_t want = wide ? 0 : 3;

				CU_ASSERT_EQUAL(run_model(m, 1, 1, &(struct seen){ .got = 0 }, plain, op), 0);
				for (int th = 1; th <= 2; th++) {
					CU_ASSERT_EQUAL(run_model(m, th, 3, NULL, y, op), want);
					CU_ASSERT(!memcmp(y, plain, NX * sizeof(float)));
					CU_ASSERT_EQUAL(run_model(m, th, 3, NULL, y, "Relu"), 3);
					CU_ASSERT(!memcmp(y, plain, NX * sizeof(float)));
				}
				ir_model_free(m);
			}
}

/* The planes each case runs on: 4x3 (the packed products, then the
 * chain's pass), 9x11 (the direct tiles, or the depthwise kernel's
 * sixteen channels at a time), 40x33 depthwise (a plane at a time,
 * k_conv_dwp.c); each does the steps in its registers where it can. */
static const struct {
	int64_t h, w;
	int dw;
} planes[] = { { 4, 3, 0 }, { 9, 11, 0 }, { 9, 11, 1 }, { 40, 33, 1 } };

static void test_chain_residual(void)
{
	/* and a 1x1 Conv on 9x11: the direct tiles' outputs are dense */
	for (size_t g = 0; g < sizeof(planes) / sizeof(planes[0]); g++) {
		H = planes[g].h;
		W = planes[g].w;
		DW = planes[g].dw;
		chain_residual(3);
	}
	H = 9;
	W = 11;
	DW = 0;
	chain_residual(1);
}

static void test_chain_fused(void)
{
	for (size_t g = 0; g < sizeof(planes) / sizeof(planes[0]); g++) {
		H = planes[g].h;
		W = planes[g].w;
		DW = planes[g].dw;
		chain_fused();
	}
}

static void test_chain_partly(void)
{
	for (size_t g = 0; g < sizeof(planes) / sizeof(planes[0]); g++) {
		H = planes[g].h;
		W = planes[g].w;
		DW = planes[g].dw;
		chain_partly();
	}
}

/* x [2, C, C, 3] -> Conv 3x3 pad 1 -> Transpose (perm 0 2 1 3: a move)
 * -> Mul(., q) -> y, q [C, 1, 1]: along the transposed tensor's axis 1,
 * the Conv's rows; uniform: all of q the same. */
static struct ir_model *move_model(int uniform)
{
	struct ir_model *m = tm_new(13);
	double w[C * C * 9], v[C];
	uint64_t seed = 13;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, C, C, 3), 4);
	tg_fill(&seed, w, C * C * 9);
	tm_init(m, "W", IR_DTYPE_FLOAT, TM_DIMS(C, C, 3, 3), 4, w);
	tg_fill(&seed, v, C);
	tm_init(m, "B", IR_DTYPE_FLOAT, TM_DIMS(C), 1, v);
	tm_init(m, "q", IR_DTYPE_FLOAT, TM_DIMS(C, 1, 1), 3, uniform ?
		(const double[]){ 1.5, 1.5, 1.5, 1.5, 1.5 } : (const double[]){ 3, 0.5, -2, 7, 1.25 });
	ir_node_set_ints(tm_node(m, "Conv", NULL, TM_NAMES("x", "W", "B"), 3, TM_NAMES("c"), 1),
			 "pads", TM_DIMS(1, 1, 1, 1), 4);
	ir_node_set_ints(tm_node(m, "Transpose", NULL, TM_NAMES("c"), 1, TM_NAMES("t"), 1),
			 "perm", TM_DIMS(0, 2, 1, 3), 4);
	tm_node(m, "Mul", NULL, TM_NAMES("t", "q"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(2, C, C, 3), 4);
	tm_verify(m);
	return m;
}

/* The plan of m's node of type op. */
static struct rt_nplan *plan_of(struct rt_session *s, const char *op)
{
	for (size_t i = 0; i < s->main->n_nodes; i++)
		if (!strcmp(ir_s(s->main->nodes[i].node->op_type), op))
			return &s->main->nodes[i];
	return NULL;
}

/* Two runs of m into y (2 * C * C * 3): the times Mul was fused; with
 * inject, the Conv given the chain Transpose (a move) -> Mul by hand,
 * the Transpose's own chain (its Mul) dropped, so that a fused Mul is
 * the Conv's chain's. */
static size_t move_run(struct ir_model *m, int inject, float *y)
{
	struct rt_opts o = { .threads = 1, .collect_stats = 1 };
	struct rt_session *s = NULL;
	struct rt_value *in, *out = NULL;
	const struct rt_stats *st;
	struct rt_nplan *conv, *tr, *mul;
	struct rt_chain *ch;
	static double xd[2 * C * C * 3];
	uint64_t seed = 5;
	size_t fused = 0;
	struct ir_diag d;

	ir_diag_init(&d);
	tg_fill(&seed, xd, 2 * C * C * 3);
	CU_ASSERT_FATAL(rt_tensor_new(NULL, IR_DTYPE_FLOAT, 4, TM_DIMS(2, C, C, 3), &in, &d) == 0);
	for (int64_t e = 0; e < 2 * C * C * 3; e++)
		((float *)in->data)[e] = (float)xd[e];
	CU_ASSERT_FATAL(rt_session_new(m, &o, &s, &d) == 0);
	conv = plan_of(s, "Conv");
	tr = plan_of(s, "Transpose");
	mul = plan_of(s, "Mul");
	CU_ASSERT_FATAL(conv && tr && mul);
	/* chain_of ends a chain before a move followed by anything but a
	 * Relu or Clip */
	CU_ASSERT(!conv->chain);
	if (inject) {
		if (tr->chain) {
			rt_chain_release(tr);
			s->main->n_chains--;
		}
		CU_ASSERT_FATAL((ch = calloc(1, sizeof(*ch))) != NULL);
		ch->n = 2;
		ch->steps[0] = (struct rt_chain_step){ .kind = RT_CHAIN_MOVE, .operand = -1,
						       .node = (size_t)(tr - s->main->nodes) };
		ch->steps[1] = (struct rt_chain_step){ .kind = RT_CHAIN_MUL, .operand = 1,
						       .node = (size_t)(mul - s->main->nodes) };
		conv->chain = ch;
		s->main->n_chains++;
		tr->chain_head = (size_t)(conv - s->main->nodes);
		mul->chained = 1;
		mul->chain_head = ch->steps[0].node;
	}
	for (int r = 0; r < 2; r++) {
		if (rt_session_run(s, &in, 1, &out, &d) < 0)
			fprintf(stderr, "\nrun: %s\n", d.msg);
		CU_ASSERT_FATAL(out != NULL && out->numel == 2 * C * C * 3);
		memcpy(y, out->data, 2 * C * C * 3 * sizeof(float));
		rt_value_unref(out);
		out = NULL;
	}
	st = rt_session_stats(s);
	for (size_t i = 0; i < st->n_ops; i++)
		if (!strcmp(st->ops[i].op, "Mul"))
			fused = st->ops[i].fused;
	rt_session_free(s);
	rt_value_unref(in);
	return fused;
}

/* After a move, a chain's pass does only steps that are the same on
 * every channel (the channels it sees are the head's, not the moved
 * tensor's axis 1): on a chain made by hand (chain_of makes none such),
 * a per-channel Mul after a Transpose runs as a node, a uniform one in
 * the Conv's pass; the values those of the session as planned. */
static void test_chain_move(void)
{
	static float plain[2 * C * C * 3], y[2 * C * C * 3];

	for (int uniform = 0; uniform < 2; uniform++) {
		struct ir_model *m = move_model(uniform);

		move_run(m, 0, plain);
		CU_ASSERT_EQUAL(move_run(m, 1, y), uniform ? 2 : 0);
		CU_ASSERT(!memcmp(y, plain, sizeof(y)));
		ir_model_free(m);
	}
}

/* Two runs of m on ins (options o) into y (ny floats, the last run's
 * output): the times the nodes of ops op1 and op2 (NULL: none) were fused. */
static size_t two_runs(struct ir_model *m, const struct rt_opts *o, struct rt_value **ins,
		       size_t n_in, float *y, int64_t ny, const char *op1, const char *op2)
{
	struct rt_session *s = NULL;
	struct rt_value *out = NULL;
	const struct rt_stats *st;
	size_t fused = 0;
	struct ir_diag d;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_session_new(m, o, &s, &d) == 0);
	for (int r = 0; r < 2; r++) {
		if (rt_session_run(s, ins, n_in, &out, &d) < 0)
			fprintf(stderr, "\nrun: %s\n", d.msg);
		CU_ASSERT_FATAL(out != NULL && out->numel == ny);
		memcpy(y, out->data, (size_t)ny * sizeof(float));
		rt_value_unref(out);
		out = NULL;
	}
	st = rt_session_stats(s);
	for (size_t i = 0; i < st->n_ops; i++)
		if (!strcmp(st->ops[i].op, op1) || (op2 && !strcmp(st->ops[i].op, op2)))
			fused += st->ops[i].fused;
	rt_session_free(s);
	return fused;
}

/* x [R, 7] -> Gemm (transB, bias) -> Mul(., u) -> Add(sc, .) -> Relu -> y
 * [R, c], sc a graph input [R, c]: the result's planes are single values,
 * its rows of c channels the chain's pass takes as a channels-last
 * result's (more rows than one block of the pass: the tensor operand
 * read at each block's own rows). */
#define GR 300
#define GK 7
static struct ir_model *gemm_model(int64_t c)
{
	struct ir_model *m = tm_new(13);
	static double w[64 * GK], v[64];
	uint64_t seed = 17;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(GR, GK), 2);
	tm_input(m, "sc", IR_DTYPE_FLOAT, TM_DIMS(GR, c), 2);
	tg_fill(&seed, w, c * GK);
	tm_init(m, "W", IR_DTYPE_FLOAT, TM_DIMS(c, GK), 2, w);
	tg_fill(&seed, v, c);
	tm_init(m, "B", IR_DTYPE_FLOAT, TM_DIMS(c), 1, v);
	tg_fill(&seed, v, c);
	tm_init(m, "u", IR_DTYPE_FLOAT, TM_DIMS(c), 1, v);
	ir_node_set_int(tm_node(m, "Gemm", NULL, TM_NAMES("x", "W", "B"), 3, TM_NAMES("g"), 1),
			"transB", 1);
	tm_node(m, "Mul", NULL, TM_NAMES("g", "u"), 2, TM_NAMES("p"), 1);
	tm_node(m, "Add", NULL, TM_NAMES("sc", "p"), 2, TM_NAMES("s"), 1);
	tm_node(m, "Relu", NULL, TM_NAMES("s"), 1, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(GR, c), 2);
	tm_verify(m);
	return m;
}

struct gseen {
	float g[GR * 64];
};

static int gemm_observe(void *ctx, const struct ir_node *n, size_t i, struct rt_value **slot)
{
	if (!strcmp(n->op_type, "Gemm") && i == 0)
		memcpy(((struct gseen *)ctx)->g, (*slot)->data, (size_t)(*slot)->numel * sizeof(float));
	return 0;
}

/* Two runs of m (threads th; obs: under an observer, which sees the
 * Gemm's result): y of the last, the times Add was fused. */
static size_t gemm_run(struct ir_model *m, int64_t c, int th, struct gseen *obs, float *y,
		       float *sc)
{
	struct rt_opts o = { .threads = th, .collect_stats = 1 };
	struct rt_value *in[2];
	static double xd[GR * 64];
	uint64_t seed = 19;
	size_t fused;
	struct ir_diag d;

	ir_diag_init(&d);
	if (obs) {
		o.observe = gemm_observe;
		o.observe_ctx = obs;
	}
	CU_ASSERT_FATAL(rt_tensor_new(NULL, IR_DTYPE_FLOAT, 2, TM_DIMS(GR, GK), &in[0], &d) == 0);
	CU_ASSERT_FATAL(rt_tensor_new(NULL, IR_DTYPE_FLOAT, 2, TM_DIMS(GR, c), &in[1], &d) == 0);
	tg_fill(&seed, xd, GR * GK);
	for (int64_t e = 0; e < GR * GK; e++)
		((float *)in[0]->data)[e] = (float)xd[e];
	tg_fill(&seed, xd, GR * c);
	for (int64_t e = 0; e < GR * c; e++)
		sc[e] = ((float *)in[1]->data)[e] = (float)xd[e];
	fused = two_runs(m, &o, in, 2, y, GR * c, "Add", NULL);
	rt_value_unref(in[0]);
	rt_value_unref(in[1]);
	return fused;
}

/* A Gemm's chain (Mul, the residual Add, Relu) in the pass over its rows,
 * 20 channels (partial vectors) and 32, one and two threads: the nodes'
 * values bit for bit, and the spec's from the Gemm's observed result. */
static void test_chain_gemm_rows(void)
{
	static const int64_t cs[] = { 20, 32 };
	static float plain[GR * 64], y[GR * 64], want[GR * 64], sc[GR * 64];
	static struct gseen obs;

	for (size_t ci = 0; ci < 2; ci++) {
		int64_t c = cs[ci];
		struct ir_model *m = gemm_model(c);
		double u[64], w[64 * GK];
		uint64_t seed = 17;

		CU_ASSERT_EQUAL(gemm_run(m, c, 1, &obs, plain, sc), 0);
		tg_fill(&seed, w, c * GK);   /* the model's draws: W, B, then u */
		tg_fill(&seed, u, c);
		tg_fill(&seed, u, c);
		for (int64_t e = 0; e < GR * c; e++) {
			float t = obs.g[e] * (float)u[e % c];

			t = sc[e] + t;
			want[e] = t < 0 ? 0 : t;
		}
		CU_ASSERT(!memcmp(plain, want, (size_t)(GR * c) * sizeof(float)));
		for (int th = 1; th <= 2; th++) {
			memset(y, 0, sizeof(y));
			CU_ASSERT_EQUAL(gemm_run(m, c, th, NULL, y, sc), 2);
			CU_ASSERT(!memcmp(y, plain, (size_t)(GR * c) * sizeof(float)));
		}
		ir_model_free(m);
	}
}

/* x [1, 8, 6, 5] -> Reshape [1, 2, 24] -> InstanceNormalization ->
 * Reshape [1, 8, 6, 5] -> Mul(., gamma) -> Add(., beta) -> SiLU (Sigmoid,
 * Mul) -> y, gamma and beta per channel: a GroupNorm as exported.  The Mul
 * after the Reshape reuses the view's storage, which no other value
 * sees: its chain (the Add, the SiLU) runs in its pass; the nodes' values
 * bit for bit (one by one under an observer). */
static struct ir_model *gn_model(void)
{
	struct ir_model *m = tm_new(13);
	static double g[8], b[8];
	uint64_t seed = 29;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 8, 6, 5), 4);
	tg_fill(&seed, g, 8);
	tg_fill(&seed, b, 8);
	tm_init(m, "s1", IR_DTYPE_INT64, TM_DIMS(3), 1, (const double[]){ 1, 2, 120 });
	tm_init(m, "s2", IR_DTYPE_INT64, TM_DIMS(4), 1, (const double[]){ 1, 8, 6, 5 });
	tm_init(m, "isc", IR_DTYPE_FLOAT, TM_DIMS(2), 1, (const double[]){ 1, 1 });
	tm_init(m, "ibi", IR_DTYPE_FLOAT, TM_DIMS(2), 1, (const double[]){ 0, 0 });
	tm_init(m, "gamma", IR_DTYPE_FLOAT, TM_DIMS(8, 1, 1), 3, g);
	tm_init(m, "beta", IR_DTYPE_FLOAT, TM_DIMS(8, 1, 1), 3, b);
	tm_node(m, "Reshape", NULL, TM_NAMES("x", "s1"), 2, TM_NAMES("r1"), 1);
	tm_node(m, "InstanceNormalization", NULL, TM_NAMES("r1", "isc", "ibi"), 3, TM_NAMES("n"), 1);
	tm_node(m, "Reshape", NULL, TM_NAMES("n", "s2"), 2, TM_NAMES("r2"), 1);
	tm_node(m, "Mul", NULL, TM_NAMES("r2", "gamma"), 2, TM_NAMES("p"), 1);
	tm_node(m, "Add", NULL, TM_NAMES("p", "beta"), 2, TM_NAMES("a"), 1);
	tm_node(m, "Sigmoid", NULL, TM_NAMES("a"), 1, TM_NAMES("sg"), 1);
	tm_node(m, "Mul", NULL, TM_NAMES("a", "sg"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(1, 8, 6, 5), 4);
	tm_verify(m);
	return m;
}

/* Two runs of the GroupNorm model (observed or not) into y (240): the
 * times Add and Sigmoid were fused. */
static size_t gn_run(struct ir_model *m, int th, int observed, float *y)
{
	struct rt_opts o = { .threads = th, .collect_stats = 1 };
	struct rt_value *in;
	static double xd[240];
	uint64_t seed = 31;
	size_t fused;
	struct seen obs = { .got = 0 };
	struct ir_diag d;

	ir_diag_init(&d);
	if (observed) {
		o.observe = observe;
		o.observe_ctx = &obs;
	}
	tg_fill(&seed, xd, 240);
	CU_ASSERT_FATAL(rt_tensor_new(NULL, IR_DTYPE_FLOAT, 4, TM_DIMS(1, 8, 6, 5), &in, &d) == 0);
	for (int64_t e = 0; e < 240; e++)
		((float *)in->data)[e] = (float)xd[e];
	fused = two_runs(m, &o, &in, 1, y, 240, "Add", "Sigmoid");
	rt_value_unref(in);
	return fused;
}

static void test_chain_view(void)
{
	struct ir_model *m = gn_model();
	float plain[240], y[240];

	CU_ASSERT_EQUAL(gn_run(m, 1, 1, plain), 0);
	for (int th = 1; th <= 2; th++) {
		memset(y, 0, sizeof(y));
		CU_ASSERT_EQUAL(gn_run(m, th, 0, y), 4);
		CU_ASSERT(!memcmp(y, plain, sizeof(y)));
	}
	ir_model_free(m);
}

static const struct unit_test tests[] = {
	{ "chain_fused", test_chain_fused },
	{ "chain_residual", test_chain_residual },
	{ "chain_partly", test_chain_partly },
	{ "chain_move", test_chain_move },
	{ "chain_gemm_rows", test_chain_gemm_rows },
	{ "chain_view", test_chain_view },
	{ NULL, NULL },
};

int suite_chain_register(void)
{
	return unit_add_suite("chain", tests);
}
