/* suite_decomp6.c: the LLM lowerings by hand: RotaryEmbedding
 * (com.microsoft) as halves and as interleaved pairs (both forms), Attention-23 with
 * and without a boolean mask, on values worked out below; and the forms
 * the rotary and attention passes refuse, with their reasons.  Random
 * shapes are compared with onnxruntime by tests/ort/lowerings_llm.py. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rewriters/rewrite.h"
#include "tests/unit/suites.h"
#include "tests/unit/tgen.h"
#include "tests/unit/tlower.h"
#include "tests/unit/tmodel.h"
#include "runtime/runtime.h"

#define MS "com.microsoft"

/* Apply variant `variant` of pass to m's first node, then run m on vals. */
static void apply_run(struct ir_model *m, const char *pass, const char *variant,
		      const char *gone, const double *const *vals, struct rt_value **y)
{
	const struct rw_pass *p = rw_pass_find(pass);
	struct rw_ctx ctx;
	struct ir_diag d;
	int v = -1;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(p != NULL);
	for (size_t i = 0; i < p->n_variants; i++)
		if (!strcmp(p->variants[i].name, variant))
			v = (int)i;
	CU_ASSERT_FATAL(v >= 0);
	CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, NULL, &d) == 0);
	CU_ASSERT_FATAL(rw_apply(&ctx, p, m->graph->nodes[0], v) == 0);
	CU_ASSERT_FATAL(rw_refresh(&ctx) == 0);
	rw_ctx_release(&ctx);
	CU_ASSERT(tg_find_op(m, gone) == NULL);
	CU_ASSERT_FATAL(tm_run_floats(m, vals, y, 1) == 0);
}

static void expect(struct rt_value *y, const double *want, int n)
{
	CU_ASSERT_FATAL(y->numel == n);
	for (int i = 0; i < n; i++) {
		double got = rt_value_get_f64(y, i);

		if (fabs(got - want[i]) > 1e-6)
			fprintf(stderr, "\nelement %d is %g, want %g\n", i, got, want[i]);
		CU_ASSERT(fabs(got - want[i]) <= 1e-6);
	}
	rt_value_unref(y);
}

/* x = [1, 2, 3, 4] (one head of 4, [1, 1, 1, 4]) at position 1, whose row
 * has cos [0.6, 0], sin [0.8, 1]:
 *   halves (x0, x2), (x1, x3): [1 .6 - 3 .8, 2 0 - 4 1, 1 .8 + 3 .6, 2 1 + 4 0]
 *                            = [-1.8, -4, 2.6, 2]
 *   pairs (x0, x1), (x2, x3): [1 .6 - 2 .8, 1 .8 + 2 .6, 3 0 - 4 1, 3 1 + 4 0]
 *                            = [-1, 2, -4, 3] */
static void test_rotary_values(void)
{
	static const double x[4] = { 1, 2, 3, 4 }, cs[4] = { 1, 1, 0.6, 0 }, sn[4] = { 0, 0, 0.8, 1 };
	static const double half[4] = { -1.8, -4, 2.6, 2 }, pairs[4] = { -1, 2, -4, 3 };
	const double *vals[1] = { x };

	static const char *const forms[3] = { "rotate-half", "interleaved", "interleaved-gather" };

	for (int inter = 0; inter < 3; inter++) {
		struct ir_model *m = tm_new(17);
		struct rt_value *y[1];
		int64_t pos = 1;
		struct ir_node *n;

		tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 1, 4), 4);
		tg_int_init(m, "pos", &pos, TM_DIMS(1, 1), 2);
		tm_init(m, "cos", IR_DTYPE_FLOAT, TM_DIMS(2, 2), 2, cs);
		tm_init(m, "sin", IR_DTYPE_FLOAT, TM_DIMS(2, 2), 2, sn);
		n = tm_node(m, "RotaryEmbedding", MS, TM_NAMES("x", "pos", "cos", "sin"), 4,
			    TM_NAMES("y"), 1);
		CU_ASSERT_FATAL(ir_node_set_int(n, "interleaved", inter != 0) == 0);
		tg_finish(m, IR_DTYPE_FLOAT);
		apply_run(m, "rotary", forms[inter], "RotaryEmbedding", vals, y);
		expect(y[0], inter ? pairs : half, 4);
		ir_model_free(m);
	}
}

/* One head of size 2, q = [1, 0], keys [1, 0] and [0, 1], values [1, 2]
 * and [3, 4]: weights softmax([1 / sqrt 2, 0]) = [p, 1 - p], output
 * [p + 3 (1 - p), 2 p + 4 (1 - p)]; a boolean mask [true, false] leaves
 * key 0 alone: [1, 2]. */
static void test_attention_values(void)
{
	static const double q[2] = { 1, 0 }, k[4] = { 1, 0, 0, 1 }, v[4] = { 1, 2, 3, 4 };
	static const double keep[2] = { 1, 0 };
	const double *vals[3] = { q, k, v };
	double s = 1 / sqrt(2.0), p = exp(s) / (exp(s) + 1);

	for (int masked = 0; masked < 2; masked++) {
		struct ir_model *m = tm_new(23);
		struct rt_value *y[1];
		double plain[2] = { p + 3 * (1 - p), 2 * p + 4 * (1 - p) }, one[2] = { 1, 2 };

		tm_input(m, "q", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 1, 2), 4);
		tm_input(m, "k", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 2, 2), 4);
		tm_input(m, "v", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 2, 2), 4);
		tm_init(m, "mask", IR_DTYPE_BOOL, TM_DIMS(1, 2), 2, keep);
		tm_node(m, "Attention", NULL, TM_NAMES("q", "k", "v", "mask"), masked ? 4 : 3,
			TM_NAMES("y"), 1);
		tg_finish(m, IR_DTYPE_FLOAT);
		apply_run(m, "attention", masked ? "sdpa-where" : "sdpa", "Attention", vals, y);
		expect(y[0], masked ? one : plain, 2);
		ir_model_free(m);
	}
}

static struct ir_model *rope_model(int64_t opset, int rank, const char *domain)
{
	struct ir_model *m = tm_new(opset);
	int ms = domain != NULL;

	if (rank == 3)
		tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 3, 8), 3);
	else
		tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 3, 4), 4);
	tm_input(m, "pos", IR_DTYPE_INT64, TM_DIMS(1, 3), 2);
	tm_input(m, "cos", IR_DTYPE_FLOAT, TM_DIMS(8, 2), 2);
	tm_input(m, "sin", IR_DTYPE_FLOAT, TM_DIMS(8, 2), 2);
	tm_node(m, "RotaryEmbedding", domain,
		ms ? TM_NAMES("x", "pos", "cos", "sin") : TM_NAMES("x", "cos", "sin", "pos"), 4,
		TM_NAMES("y"), 1);
	return m;
}

static struct ir_model *mha_model(const int64_t *qd, size_t qr, int kpm_rank)
{
	struct ir_model *m = tm_new(17);
	struct ir_node *n;

	tm_input(m, "q", IR_DTYPE_FLOAT, qd, qr);
	tm_input(m, "k", IR_DTYPE_FLOAT, TM_DIMS(1, 3, 4), 3);
	tm_input(m, "v", IR_DTYPE_FLOAT, TM_DIMS(1, 3, 4), 3);
	tm_input(m, "kpm", IR_DTYPE_INT32, kpm_rank == 1 ? TM_DIMS(1) : TM_DIMS(1, 3),
		 (size_t)kpm_rank);
	n = tm_node(m, "MultiHeadAttention", MS,
		    qr == 5 ? TM_NAMES("q") : TM_NAMES("q", "k", "v", "", "kpm"),
		    qr == 5 ? 1 : 5, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "num_heads", 2) == 0);
	tg_finish(m, IR_DTYPE_FLOAT);
	return m;
}

static void test_refusals(void)
{
	struct ir_model *m;
	struct ir_node *n;

	m = rope_model(17, 3, MS);
	n = tg_find_op(m, "RotaryEmbedding");
	CU_ASSERT_FATAL(ir_node_set_int(n, "is_packed_batching", 1) == 0);
	tg_finish(m, IR_DTYPE_FLOAT);
	tl_refuses("rotary", "RotaryEmbedding", m, "is_packed_batching");
	/* a rotary dim that is odd and does not fit the cache */
	m = rope_model(17, 4, MS);
	n = tg_find_op(m, "RotaryEmbedding");
	CU_ASSERT_FATAL(ir_node_set_int(n, "rotary_embedding_dim", 3) == 0);
	CU_ASSERT_FATAL(ir_node_set_int(n, "num_heads", 2) == 0);
	tg_finish(m, IR_DTYPE_FLOAT);
	tl_refuses("rotary", "RotaryEmbedding", m, "disagree");
	/* ai.onnx 3-D input without num_heads: the head size is unknown */
	m = rope_model(23, 3, NULL);
	tg_finish(m, IR_DTYPE_FLOAT);
	tl_refuses("rotary", "RotaryEmbedding", m, "num_heads");
	/* packed QKV, a 1-D key_padding_mask (lengths) */
	tl_refuses("attention", "MultiHeadAttention", mha_model(TM_DIMS(1, 3, 2, 3, 2), 5, 2),
		   "separate 3-D");
	tl_refuses("attention", "MultiHeadAttention", mha_model(TM_DIMS(1, 3, 4), 3, 1),
		   "key_padding_mask");
	/* softmax in double for float data */
	m = tm_new(23);
	tm_input(m, "q", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 2, 2), 4);
	tm_input(m, "k", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 2, 2), 4);
	tm_input(m, "v", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 2, 2), 4);
	n = tm_node(m, "Attention", NULL, TM_NAMES("q", "k", "v"), 3, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "softmax_precision", IR_DTYPE_DOUBLE) == 0);
	tg_finish(m, IR_DTYPE_FLOAT);
	tl_refuses("attention", "Attention", m, "softmax_precision");
}

static const struct unit_test tests[] = {
	{ "rotary by hand (halves, interleaved pairs)", test_rotary_values },
	{ "attention by hand (no mask, a boolean mask)", test_attention_values },
	{ "rotary and attention refuse what they cannot do", test_refusals },
	{ NULL, NULL },
};

int suite_decomp6_register(void)
{
	return unit_add_suite("decomp6", tests);
}
