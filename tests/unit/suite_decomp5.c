/* suite_decomp5.c: property tests of the loss lowerings
 * (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss: every reduction,
 * weights absent, an input or a constant, ignore_index inside and outside
 * [0, C), ranks 2 to 5, int32 and int64 targets, log_prob, opsets 12, 13
 * and 22), of LayerNormalization's Mean and InvStdDev outputs, of
 * CastLike as Cast, of ReduceMax/ReduceMin as MaxPool, of ArgMax/ArgMin
 * as reductions, of Trilu with k an input, of GatherElements as a one-hot
 * sum and of integer Mod by Div, checked
 * by the harness (tlower.c) against the interpreter's kernels, and by hand
 * (the spec's worked examples, a layer's statistics). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/rewrite.h"
#include "tests/unit/suites.h"
#include "tests/unit/tgen.h"
#include "tests/unit/tlower.h"
#include "tests/unit/tmodel.h"
#include "runtime/runtime.h"

/* ---- NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ------------------ */

enum {
	LS_SCE = 1,
	LS_RED = 3 << 1,        /* 0 none, 1 sum, 2 mean, 3 absent (mean) */
	LS_WEIGHT = 1 << 3,     /* a graph input */
	LS_WCONST = 1 << 4,     /* a constant initializer */
	LS_IGNORE = 3 << 5,     /* 0 none, 1 in [0, C), 2 negative, 3 >= C */
	LS_OPSET = 3 << 7,      /* 0: 13, 1: 12, 2: 22 */
	LS_LOGP = 1 << 9,       /* SCE's log_prob output */
	LS_I32 = 1 << 10,       /* int32 targets */
	LS_F64 = 1 << 11,       /* double data */
	LS_RANK2 = 1 << 12,     /* [N, C] */
	LS_SYMN = 1 << 13,      /* a symbolic batch: no GatherElements form */
};

#define LS_R(r) ((r) << 1)
#define LS_I(i) ((i) << 5)
#define LS_O(o) ((o) << 7)

static struct ir_model *b_loss(uint64_t *s, int param)
{
	static const int64_t opsets[] = { 13, 12, 22 };
	static const char *const reds[] = { "none", "sum", "mean" };
	int sce = param & LS_SCE, red = (param & LS_RED) >> 1, ig = (param & LS_IGNORE) >> 5;
	int dt = param & LS_F64 ? IR_DTYPE_DOUBLE : IR_DTYPE_FLOAT;
	struct ir_model *m = tm_new(opsets[(param & LS_OPSET) >> 7]);
	int r = param & LS_RANK2 ? 2 : (int)tg_rnd(s, 2, 5);
	int64_t x[5], t[4], cls = tg_rnd(s, 2, 5);
	struct ir_node *n;
	const char *in[3] = { "x", "t", "w" };

	x[0] = tg_rnd(s, 1, 3);
	x[1] = cls;
	for (int i = 2; i < r; i++)
		x[i] = tg_rnd(s, 1, 3);
	t[0] = x[0];
	for (int i = 2; i < r; i++)
		t[i - 1] = x[i];
	tm_input(m, "x", dt, x, (size_t)r);
	tm_input(m, "t", param & LS_I32 ? IR_DTYPE_INT32 : IR_DTYPE_INT64, t, (size_t)r - 1);
	if (param & LS_SYMN) {
		tl_symbolic(m, "x", 0);
		tl_symbolic(m, "t", 0);
	}
	if (param & LS_WEIGHT) {
		tm_input(m, "w", dt, &cls, 1);
	} else if (param & LS_WCONST) {
		double w[5];

		for (int64_t k = 0; k < cls; k++)
			w[k] = 0.25 + (double)tg_rnd(s, 0, 12) / 4;
		tm_init(m, "w", dt, &cls, 1, w);
	}
	n = tm_node(m, sce ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss", NULL, in,
		    param & (LS_WEIGHT | LS_WCONST) ? 3 : 2,
		    TM_NAMES("y", "logp"), param & LS_LOGP ? 2 : 1);
	if (red < 3)
		CU_ASSERT_FATAL(ir_node_set_string(n, "reduction", reds[red]) == 0);
	if (ig)
		CU_ASSERT_FATAL(ir_node_set_int(n, "ignore_index",
						ig == 1 ? tg_rnd(s, 0, cls - 1) :
						ig == 2 ? tg_rnd(s, -100, -1) :
						tg_rnd(s, cls, cls + 20)) == 0);
	tm_output(m, "y", dt, NULL, 0);
	if (param & LS_LOGP)
		tm_output(m, "logp", dt, NULL, 0);
	tm_verify(m);
	return m;
}

static int64_t node_int(const struct ir_node *n, const char *name)
{
	const struct ir_attr *a = ir_node_attr(n, name);

	return a ? a->i : 0;
}

/* The inputs drawn by the suite: "t", the targets: classes in [0, C), a
 * quarter of them ignore_index when the node has one (every one ignored
 * can happen: a mean of 0/0); "k", Trilu's diagonal: -4 to 4; "i",
 * GatherElements' indices: -L to L - 1; "ma", "mb", Mod's operands. */
static int fill_inputs(const struct ir_model *m, const char *name, struct rt_value *t,
		       uint64_t *s)
{
	const struct ir_attr *ig = ir_node_attr(m->graph->nodes[0], "ignore_index");
	int64_t cls;

	if (!strcmp(name, "k")) {
		for (int64_t i = 0; i < t->numel; i++)
			rt_value_set_f64(t, i, (double)tg_rnd(s, -4, 4));
		return 1;
	}
	if (!strcmp(name, "ma") || !strcmp(name, "mb")) {
		/* Mod: dividends -9..9 and the dtype's extremes, divisors
		 * non-zero (-9..9, and the extremes but -1 against INT_MIN) */
		double lo = t->dtype == IR_DTYPE_INT32 ? -2147483648.0 : -9223372036854775808.0;
		double hi = t->dtype == IR_DTYPE_INT32 ? 2147483647.0 : 9223372036854775807.0;

		for (int64_t i = 0; i < t->numel; i++) {
			int64_t v = tg_rnd(s, -9, 8);

			if (name[1] == 'b' && v >= 0)
				v++;
			rt_value_set_f64(t, i, tg_rnd(s, 0, 7) ? (double)v :
					 name[1] == 'a' ? (tg_rnd(s, 0, 1) ? lo : hi) :
					 (tg_rnd(s, 0, 1) ? lo : hi));
		}
		return 1;
	}
	if (!strcmp(name, "i")) {       /* GatherElements: -L to L - 1 */
		const struct ir_type *dt = m->graph->inputs[0].type;
		int64_t axis = node_int(m->graph->nodes[0], "axis");
		int64_t len = dt->shape.dims[axis < 0 ? axis + (int64_t)dt->shape.n_dims : axis].value;

		for (int64_t i = 0; i < t->numel; i++)
			rt_value_set_f64(t, i, (double)tg_rnd(s, -len, len - 1));
		return 1;
	}
	if (strcmp(name, "t"))
		return 0;
	cls = m->graph->inputs[0].type->shape.dims[1].value;
	for (int64_t i = 0; i < t->numel; i++)
		rt_value_set_f64(t, i, ig && tg_rnd(s, 0, 3) == 0 ? (double)ig->i :
				 (double)tg_rnd(s, 0, cls - 1));
	return 1;
}

#define NLL(p) { "nll-loss", "NegativeLogLikelihoodLoss", b_loss, (p), TL_REAL, 1e-5, 1e-5, 6 }
#define SCE(p) { "sce-loss", "SoftmaxCrossEntropyLoss", b_loss, (p) | LS_SCE, TL_REAL, 1e-5, \
		 1e-5, 6 }
static const struct tl_case loss_cases[] = {
	NLL(LS_R(0)), NLL(LS_R(1)), NLL(LS_R(2)), NLL(LS_R(3)), NLL(LS_R(0) | LS_WEIGHT),
	NLL(LS_R(1) | LS_WEIGHT | LS_I(1)), NLL(LS_R(2) | LS_WEIGHT | LS_I(2)),
	NLL(LS_R(2) | LS_I(1)), NLL(LS_R(2) | LS_WCONST | LS_I(3)), NLL(LS_R(0) | LS_I(2)),
	NLL(LS_R(1) | LS_I(3) | LS_I32), NLL(LS_R(2) | LS_WEIGHT | LS_O(1)),
	NLL(LS_R(0) | LS_WEIGHT | LS_I(1) | LS_O(2)), NLL(LS_R(2) | LS_F64 | LS_I(2)),
	NLL(LS_R(2) | LS_RANK2 | LS_WEIGHT | LS_I(1)), NLL(LS_R(0) | LS_RANK2 | LS_I32),
	SCE(LS_R(0)), SCE(LS_R(1) | LS_LOGP), SCE(LS_R(2) | LS_WEIGHT | LS_I(2)),
	SCE(LS_R(3) | LS_I(1) | LS_LOGP), SCE(LS_R(2) | LS_WCONST | LS_I(3) | LS_I32),
	SCE(LS_R(0) | LS_WEIGHT | LS_I(1) | LS_LOGP | LS_F64),
	SCE(LS_R(2) | LS_O(1) | LS_LOGP), SCE(LS_R(0) | LS_O(1) | LS_WEIGHT | LS_I(2)),
	SCE(LS_R(1) | LS_O(1) | LS_I(1) | LS_LOGP), SCE(LS_R(2) | LS_O(1) | LS_RANK2 | LS_LOGP),
	SCE(LS_R(2) | LS_RANK2 | LS_WEIGHT | LS_I(2) | LS_LOGP),
	NLL(LS_R(2) | LS_SYMN | LS_I(1)), SCE(LS_R(0) | LS_SYMN | LS_WEIGHT | LS_LOGP),
};
#undef NLL
#undef SCE

static int variant_index(const struct rw_pass *p, const char *name);

static void test_loss(void)
{
	const struct rw_pass *p = rw_pass_find("nll-loss");
	struct ir_model *m = tm_new(13);
	struct rw_ctx ctx;
	struct ir_diag d;

	tl_run_cases_fill(loss_cases, sizeof(loss_cases) / sizeof(loss_cases[0]), 2712,
			  fill_inputs);
	tl_expect_all_variants("nll-loss");
	tl_expect_all_variants("sce-loss");
	tg_run_checker();
	/* a symbolic batch: the flattened targets cannot reshape back */
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3, 2), 3);
	tm_input(m, "t", IR_DTYPE_INT64, TM_DIMS(2, 2), 2);
	tl_symbolic(m, "x", 0);
	tl_symbolic(m, "t", 0);
	tm_node(m, "NegativeLogLikelihoodLoss", NULL, TM_NAMES("x", "t"), 2, TM_NAMES("y"), 1);
	tg_finish(m, IR_DTYPE_FLOAT);
	ir_diag_init(&d);
	CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, NULL, &d) == 0);
	CU_ASSERT(!p->vcheck(&ctx, m->graph->nodes[0],
			     variant_index(p, "gather-elements-flat-mean")));
	CU_ASSERT(!p->vcheck(&ctx, m->graph->nodes[0], variant_index(p, "gather-elements-mean")));
	CU_ASSERT(p->vcheck(&ctx, m->graph->nodes[0], variant_index(p, "onehot-equal-mean")));
	rw_ctx_release(&ctx);
	ir_model_free(m);
}

static int variant_index(const struct rw_pass *p, const char *name)
{
	for (size_t v = 0; v < p->n_variants; v++)
		if (!strcmp(p->variants[v].name, name))
			return (int)v;
	CU_FAIL_FATAL("no such variant");
	return -1;
}

/* Apply pass variant `variant` (NULL: none) to m's first node, run it on
 * float inputs vals (the targets given as doubles too) into y */
static void run_rewritten(struct ir_model *m, const char *pass, const char *variant,
			  struct rt_value **ins, size_t n_in, struct rt_value **y, size_t n_out)
{
	struct rt_opts o = { .threads = 1 };
	struct rt_session *s = NULL;
	struct rw_ctx ctx;
	struct ir_diag d;

	ir_diag_init(&d);
	if (variant) {
		const struct rw_pass *p = rw_pass_find(pass);

		CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, NULL, &d) == 0);
		CU_ASSERT_FATAL(rw_apply(&ctx, p, m->graph->nodes[0], variant_index(p, variant)) == 0);
		CU_ASSERT_FATAL(rw_refresh(&ctx) == 0);
		rw_ctx_release(&ctx);
	}
	CU_ASSERT_FATAL(rt_session_new(m, &o, &s, &d) == 0);
	CU_ASSERT_FATAL(rt_session_run(s, ins, n_in, y, &d) == 0);
	(void)n_out;
	rt_session_free(s);
}

static struct rt_value *tensor(int dtype, const int64_t *dims, int rank, const double *v)
{
	struct rt_value *t = NULL;
	struct ir_diag d;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_tensor_new(NULL, dtype, rank, dims, &t, &d) == 0);
	for (int64_t i = 0; i < t->numel; i++)
		rt_value_set_f64(t, i, v[i]);
	return t;
}

/* The spec's examples (N 2, C 3, d1 2): loss none [[-3, -2], [-0, -2]],
 * weighted sum -1.1, weighted mean -1.57 (= -1.1 / 0.7); with
 * ignore_index 2 and weights, the mean is over the other weights only:
 * -(2 0.3 + 0 0.2) / 0.5 = -1.2.  Every form, hand-derived values. */
static void test_loss_examples(void)
{
	static const double x[12] = { 1, 2, 2, 2, 3, 2, 0, 1, 2, 2, 1, 2 };
	static const double t[4] = { 2, 1, 0, 2 }, w[3] = { 0.2, 0.3, 0.1 };
	static const char *const forms[] = {
		NULL, "gather-elements-flat", "onehot-equal", "onehot-arith"
	};
	static const struct { const char *red; int weight, ignore; double want[4]; } ex[] = {
		{ "none", 0, 0, { -3, -2, -0.0, -2 } },
		{ "sum", 1, 0, { -1.1 } },
		{ "mean", 1, 0, { -1.57142857142857 } },
		{ "mean", 1, 1, { -1.2 } },
	};

	for (size_t k = 0; k < sizeof(ex) / sizeof(ex[0]); k++)
		for (size_t f = 0; f < 4; f++) {
			struct ir_model *m = tm_new(13);
			struct rt_value *ins[3], *y = NULL;
			struct ir_node *n;
			char variant[64];

			tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3, 2), 3);
			tm_input(m, "t", IR_DTYPE_INT64, TM_DIMS(2, 2), 2);
			tm_input(m, "w", IR_DTYPE_FLOAT, TM_DIMS(3), 1);
			n = tm_node(m, "NegativeLogLikelihoodLoss", NULL, TM_NAMES("x", "t", "w"),
				    ex[k].weight ? 3 : 2, TM_NAMES("y"), 1);
			CU_ASSERT_FATAL(ir_node_set_string(n, "reduction", ex[k].red) == 0);
			if (ex[k].ignore)
				CU_ASSERT_FATAL(ir_node_set_int(n, "ignore_index", 2) == 0);
			tg_finish(m, IR_DTYPE_FLOAT);
			ins[0] = tensor(IR_DTYPE_FLOAT, TM_DIMS(2, 3, 2), 3, x);
			ins[1] = tensor(IR_DTYPE_INT64, TM_DIMS(2, 2), 2, t);
			ins[2] = tensor(IR_DTYPE_FLOAT, TM_DIMS(3), 1, w);
			snprintf(variant, sizeof(variant), "%s%s", forms[f] ? forms[f] : "",
				 strcmp(ex[k].red, "mean") ? "" : "-mean");
			run_rewritten(m, "nll-loss", forms[f] ? variant : NULL, ins, 3, &y, 1);
			CU_ASSERT_FATAL(y != NULL);
			CU_ASSERT(y->numel == (strcmp(ex[k].red, "none") ? 1 : 4));
			for (int64_t i = 0; i < y->numel; i++) {
				double got = rt_value_get_f64(y, i);

				if (fabs(got - ex[k].want[i]) > 1e-6)
					fprintf(stderr, "\nexample %zu %s: element %lld is %g, want %g\n",
						k, forms[f] ? variant : "kernel", (long long)i, got,
						ex[k].want[i]);
				CU_ASSERT(fabs(got - ex[k].want[i]) <= 1e-6);
			}
			for (int i = 0; i < 3; i++)
				rt_value_unref(ins[i]);
			rt_value_unref(y);
			ir_model_free(m);
		}
}

/* A log-probability of -inf at a class other than the target: the
 * GatherElements form reads only the target's (exact); the one-hot forms
 * multiply it by 0 and give NaN, which is why they are approximate. */
static void test_loss_inf(void)
{
	static const double x[6] = { -INFINITY, -1, -2, -0.5, -INFINITY, -3 };
	static const double t[2] = { 1, 0 };
	static const char *const forms[] = { "gather-elements", "onehot-equal", "onehot-arith" };
	const struct rw_pass *p = rw_pass_find("nll-loss");

	CU_ASSERT_FATAL(p && p->approx);
	for (int f = 0; f < 3; f++) {
		struct ir_model *m = tm_new(13);
		struct rt_value *ins[2], *y = NULL;
		struct ir_node *n;

		tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3), 2);
		tm_input(m, "t", IR_DTYPE_INT64, TM_DIMS(2), 1);
		n = tm_node(m, "NegativeLogLikelihoodLoss", NULL, TM_NAMES("x", "t"), 2,
			    TM_NAMES("y"), 1);
		CU_ASSERT_FATAL(ir_node_set_string(n, "reduction", "none") == 0);
		tg_finish(m, IR_DTYPE_FLOAT);
		ins[0] = tensor(IR_DTYPE_FLOAT, TM_DIMS(2, 3), 2, x);
		ins[1] = tensor(IR_DTYPE_INT64, TM_DIMS(2), 1, t);
		run_rewritten(m, "nll-loss", forms[f], ins, 2, &y, 1);
		if (f == 0) {
			CU_ASSERT(rt_value_get_f64(y, 0) == 1 && rt_value_get_f64(y, 1) == 0.5);
			CU_ASSERT(p->approx[variant_index(p, forms[f])] == 0);
		} else {
			CU_ASSERT(isnan(rt_value_get_f64(y, 0)));
			CU_ASSERT(p->approx[variant_index(p, forms[f])] == 2);
		}
		rt_value_unref(ins[0]);
		rt_value_unref(ins[1]);
		rt_value_unref(y);
		ir_model_free(m);
	}
}

/* ---- LayerNormalization's statistics ---------------------------------------- */

enum {
	LN_KIND = 3,            /* 0 LayerNormalization, 1 com.microsoft's, 2
				 * com.microsoft SimplifiedLayerNormalization */
	LN_MEAN_ONLY = 1 << 2,  /* InvStdDev not an output */
	LN_INV_ONLY = 1 << 3,   /* Mean absent */
	LN_NOBIAS = 1 << 4,
	LN_F16 = 1 << 5,        /* float16 data: statistics in float32 */
};

static struct ir_model *b_ln(uint64_t *s, int param)
{
	static const char *const ops[] = {
		"LayerNormalization", "LayerNormalization", "SimplifiedLayerNormalization"
	};
	int kind = param & LN_KIND, dt = param & LN_F16 ? IR_DTYPE_FLOAT16 : IR_DTYPE_FLOAT;
	struct ir_model *m = tm_new(17);
	int r = (int)tg_rnd(s, 1, 4);
	int64_t x[4], axis = tg_rnd(s, -r, r - 1), a = axis < 0 ? axis + r : axis;
	double sc[256], bi[256];
	int64_t k = 1;
	const char *out[3] = { "y", "", "" };
	struct ir_node *n;

	for (int i = 0; i < r; i++)
		x[i] = tg_rnd(s, 1, 4);
	for (int i = (int)a; i < r; i++)
		k *= x[i];
	for (int64_t i = 0; i < k; i++) {
		sc[i] = 0.5 + (double)tg_rnd(s, 0, 100) / 100;
		bi[i] = (double)tg_rnd(s, -100, 100) / 100;
	}
	tm_input(m, "x", dt, x, (size_t)r);
	tm_init(m, "s", dt, x + a, (size_t)(r - a), sc);
	tm_init(m, "b", dt, x + a, (size_t)(r - a), bi);
	if (kind == 2) {
		out[1] = "inv";
	} else {
		out[1] = param & LN_INV_ONLY ? "" : "mean";
		out[2] = param & LN_MEAN_ONLY ? "" : "inv";
	}
	n = tm_node(m, ops[kind], kind ? "com.microsoft" : NULL, TM_NAMES("x", "s", "b"),
		    kind == 2 || param & LN_NOBIAS ? 2 : 3, out, kind == 2 ? 2 : 3);
	CU_ASSERT_FATAL(ir_node_set_int(n, "axis", axis) == 0);
	if (tg_rnd(s, 0, 1))
		CU_ASSERT_FATAL(ir_node_set_float(n, "epsilon", 0.1f) == 0);
	tm_output(m, "y", dt, NULL, 0);
	for (int i = 1; i < 3; i++)
		if (*out[i])
			tm_output(m, out[i], IR_DTYPE_FLOAT, NULL, 0);
	tm_verify(m);
	return m;
}

#define LN(p) { "layer-norm", ((p) & LN_KIND) == 2 ? "SimplifiedLayerNormalization" : \
		"LayerNormalization", b_ln, (p), TL_REAL, 1e-5, 1e-5, 8 }
/* float16: y rounded at the scale's Mul and the bias' Add (an ulp or two
 * of 2^-10), the statistics float32 */
#define LN16(p) { "layer-norm", ((p) & LN_KIND) == 2 ? "SimplifiedLayerNormalization" : \
		  "LayerNormalization", b_ln, (p) | LN_F16, TL_REAL, 4e-3, 2e-3, 8 }
static const struct tl_case ln_cases[] = {
	LN(0), LN(1), LN(2), LN(LN_MEAN_ONLY), LN(LN_INV_ONLY), LN(LN_NOBIAS | LN_MEAN_ONLY),
	LN(1 | LN_INV_ONLY), LN(2 | LN_NOBIAS), LN16(0), LN16(2), LN16(LN_NOBIAS | LN_INV_ONLY),
};
#undef LN
#undef LN16

static void test_layer_norm_stats(void)
{
	tl_run_cases(ln_cases, sizeof(ln_cases) / sizeof(ln_cases[0]), 1717);
	tl_expect_all_variants("layer-norm");
	tg_run_checker();
}

/* The statistics by hand: x = [1, 2, 3, 6] over the last axis, eps 0:
 * mean 3, variance (4 + 1 + 0 + 9) / 4 = 3.5, InvStdDev 1 / sqrt(3.5). */
static void test_layer_norm_stats_values(void)
{
	static const double x[4] = { 1, 2, 3, 6 };
	const double *vals[1] = { x };
	const struct rw_pass *p = rw_pass_find("layer-norm");
	struct ir_model *m = tm_new(17);
	struct rt_value *y[3] = { 0 };
	struct ir_node *n;
	struct rw_ctx ctx;
	struct ir_diag d;
	double one = 1, zero = 0, inv = 1 / sqrt(3.5);

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 4), 2);
	tm_init(m, "s", IR_DTYPE_FLOAT, NULL, 0, &one);
	tm_init(m, "b", IR_DTYPE_FLOAT, NULL, 0, &zero);
	n = tm_node(m, "LayerNormalization", NULL, TM_NAMES("x", "s", "b"), 3,
		    TM_NAMES("y", "mean", "inv"), 3);
	CU_ASSERT_FATAL(ir_node_set_float(n, "epsilon", 0) == 0);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "mean", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "inv", IR_DTYPE_FLOAT, NULL, 0);
	tm_verify(m);
	ir_diag_init(&d);
	CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, NULL, &d) == 0);
	CU_ASSERT_FATAL(rw_apply(&ctx, p, m->graph->nodes[0], 0) == 0);
	CU_ASSERT_FATAL(rw_refresh(&ctx) == 0);
	CU_ASSERT(tg_find_op(m, "LayerNormalization") == NULL);
	CU_ASSERT_FATAL(tm_run_floats(m, vals, y, 3) == 0);
	CU_ASSERT(y[1]->rank == 2 && y[1]->dims[0] == 1 && y[1]->dims[1] == 1);
	CU_ASSERT(fabs(rt_value_get_f64(y[1], 0) - 3) < 1e-6);
	CU_ASSERT(fabs(rt_value_get_f64(y[2], 0) - inv) < 1e-6);
	for (int i = 0; i < 4; i++)
		CU_ASSERT(fabs(rt_value_get_f64(y[0], i) - (x[i] - 3) * inv) < 1e-6);
	for (int i = 0; i < 3; i++)
		rt_value_unref(y[i]);
	rw_ctx_release(&ctx);
	ir_model_free(m);
}

/* ---- CastLike ---------------------------------------------------------------- */

static const int cast_dtypes[] = {
	IR_DTYPE_FLOAT, IR_DTYPE_FLOAT16, IR_DTYPE_DOUBLE, IR_DTYPE_INT32, IR_DTYPE_INT64,
	IR_DTYPE_UINT8, IR_DTYPE_BOOL, IR_DTYPE_INT8,
};

/* param: from | to << 4 | 256 like a graph input | 512 opset 19 */
static struct ir_model *b_castlike(uint64_t *s, int param)
{
	int from = cast_dtypes[param & 15], to = cast_dtypes[(param >> 4) & 15];
	struct ir_model *m = tm_new(param & 512 ? 19 : 15);
	int64_t d[2] = { tg_rnd(s, 1, 4), tg_rnd(s, 1, 4) };
	double zero = 0;

	tm_input(m, "x", from, d, 2);
	if (param & 256)
		tm_input(m, "like", to, TM_DIMS(1), 1);
	else
		tm_init(m, "like", to, NULL, 0, &zero);
	tm_node(m, "CastLike", NULL, TM_NAMES("x", "like"), 2, TM_NAMES("y"), 1);
	tg_finish(m, to);
	return m;
}

#define CL(f, t, p) { "cast-like", "CastLike", b_castlike, (f) | (t) << 4 | (p), TL_WIDE, 0, \
		      0, 3 }
static const struct tl_case castlike_cases[] = {
	CL(0, 1, 0), CL(0, 2, 256), CL(1, 0, 0), CL(2, 0, 512), CL(0, 3, 0), CL(3, 0, 256),
	CL(4, 2, 0), CL(0, 6, 512), CL(6, 0, 0), CL(5, 4, 256), CL(7, 1, 0), CL(0, 0, 0),
};
#undef CL

static void test_castlike(void)
{
	tl_run_cases(castlike_cases, sizeof(castlike_cases) / sizeof(castlike_cases[0]), 1515);
	tl_expect_all_variants("cast-like");
	tg_run_checker();
}

/* ---- ReduceMax, ReduceMin as MaxPool ------------------------------------------ */

enum {
	RP_MIN = 1,
	RP_OPSET18 = 1 << 1,    /* axes an input */
	RP_GAP = 1 << 2,        /* at least two reduced axes with a kept one between */
	RP_ALL = 1 << 3,        /* no axes: every axis */
	RP_F64 = 1 << 4,
	RP_F16 = 1 << 5,
};

static struct ir_model *b_reduce_pool(uint64_t *s, int param)
{
	int r = (int)tg_rnd(s, param & RP_GAP ? 3 : 1, 5), dt = param & RP_F64 ? IR_DTYPE_DOUBLE :
		param & RP_F16 ? IR_DTYPE_FLOAT16 : IR_DTYPE_FLOAT;
	struct ir_model *m = tm_new(param & RP_OPSET18 ? 18 : 13);
	int64_t x[5], axes[5];
	size_t k = 0;
	struct ir_node *n;

	for (int i = 0; i < r; i++)
		x[i] = tg_rnd(s, 1, 4);
	if (param & RP_GAP) {
		int64_t a = tg_rnd(s, 0, r - 3), b = tg_rnd(s, a + 2, r - 1);

		axes[k++] = tg_rnd(s, 0, 1) ? a : a - r;
		axes[k++] = b;
	} else if (!(param & RP_ALL)) {
		int64_t a = tg_rnd(s, 0, r - 1), b = tg_rnd(s, a, r - 1);

		for (int64_t i = a; i <= b; i++)
			axes[k++] = tg_rnd(s, 0, 1) ? i : i - r;
	}
	tm_input(m, "x", dt, x, (size_t)r);
	if (param & RP_OPSET18 && k)
		tg_int_init(m, "axes", axes, TM_DIMS((int64_t)k), 1);
	n = tm_node(m, param & RP_MIN ? "ReduceMin" : "ReduceMax", NULL, TM_NAMES("x", "axes"),
		    param & RP_OPSET18 && k ? 2 : 1, TM_NAMES("y"), 1);
	if (!(param & RP_OPSET18) && k)
		tg_set_ints(n, "axes", axes, k);
	if (tg_rnd(s, 0, 1))
		CU_ASSERT_FATAL(ir_node_set_int(n, "keepdims", 0) == 0);
	tg_finish(m, dt);
	return m;
}

#define RP(p, v) { "reduce-max-pool", (p) & RP_MIN ? "ReduceMin" : "ReduceMax", b_reduce_pool, \
		   (p), v, 0, 0, 8 }
static const struct tl_case reduce_pool_cases[] = {
	RP(0, TL_REAL), RP(RP_MIN, TL_REAL), RP(RP_OPSET18, TL_TIES),
	RP(RP_MIN | RP_OPSET18, TL_WIDE), RP(RP_GAP, TL_REAL), RP(RP_GAP | RP_MIN, TL_TIES),
	RP(RP_GAP | RP_OPSET18, TL_REAL), RP(RP_ALL, TL_REAL), RP(RP_ALL | RP_MIN | RP_OPSET18, TL_REAL),
	RP(RP_F64, TL_WIDE), RP(RP_F16 | RP_MIN, TL_TIES), RP(RP_GAP | RP_MIN | RP_OPSET18, TL_REAL),
};
#undef RP

static void test_reduce_pool(void)
{
	tl_run_cases(reduce_pool_cases, sizeof(reduce_pool_cases) / sizeof(reduce_pool_cases[0]),
		     3131);
	tl_expect_all_variants("reduce-max-pool");
	tg_run_checker();
}

/* ---- ArgMax, ArgMin ------------------------------------------------------------ */

static const int arg_dtypes[] = {
	IR_DTYPE_FLOAT, IR_DTYPE_INT32, IR_DTYPE_INT64, IR_DTYPE_DOUBLE, IR_DTYPE_FLOAT16,
};

/* param: | 1 ArgMin | 2 select_last_index | dtype index << 2 | 32 opset 11
 * (no select_last_index) */
static struct ir_model *b_arg(uint64_t *s, int param)
{
	int dt = arg_dtypes[(param >> 2) & 7], r = (int)tg_rnd(s, 1, 4);
	struct ir_model *m = tm_new(param & 32 ? 11 : 13);
	int64_t x[4];
	struct ir_node *n;

	for (int i = 0; i < r; i++)
		x[i] = tg_rnd(s, 1, 5);
	tm_input(m, "x", dt, x, (size_t)r);
	n = tm_node(m, param & 1 ? "ArgMin" : "ArgMax", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	if (tg_rnd(s, 0, 3))
		CU_ASSERT_FATAL(ir_node_set_int(n, "axis", tg_rnd(s, -r, r - 1)) == 0);
	if (tg_rnd(s, 0, 1))
		CU_ASSERT_FATAL(ir_node_set_int(n, "keepdims", 0) == 0);
	if (param & 2)
		CU_ASSERT_FATAL(ir_node_set_int(n, "select_last_index", 1) == 0);
	tg_finish(m, IR_DTYPE_INT64);
	return m;
}

#define AR(p, v) { "arg-max-min", (p) & 1 ? "ArgMin" : "ArgMax", b_arg, (p), v, 0, 0, 8 }
static const struct tl_case arg_cases[] = {
	AR(0, TL_TIES), AR(1, TL_TIES), AR(2, TL_TIES), AR(3, TL_TIES), AR(0, TL_WIDE),
	AR(1, TL_REAL), AR(0 | 1 << 2, TL_REAL), AR(3 | 2 << 2, TL_REAL), AR(2 | 3 << 2, TL_TIES),
	AR(1 | 4 << 2, TL_TIES), AR(0 | 32, TL_TIES), AR(1 | 32 | 4 << 2, TL_WIDE),
};
#undef AR

static void test_arg(void)
{
	tl_run_cases(arg_cases, sizeof(arg_cases) / sizeof(arg_cases[0]), 4141);
	tl_expect_all_variants("arg-max-min");
	tg_run_checker();
}

/* Infinite extremes: the Equal forms are exact; the arithmetic forms are
 * marked approximate (inf - inf is NaN). */
static void test_arg_inf(void)
{
	static const double x[8] = { 1, INFINITY, 3, INFINITY, -INFINITY, 0, -INFINITY, 2 };
	static const struct { const char *op, *variant; int last; int64_t want; } ex[] = {
		{ "ArgMax", "argmax-equal", 0, 1 }, { "ArgMax", "argmax-equal", 1, 3 },
		{ "ArgMin", "argmin-equal", 0, 4 }, { "ArgMin", "argmin-equal", 1, 6 },
	};
	const double *vals[1] = { x };
	const struct rw_pass *p = rw_pass_find("arg-max-min");

	CU_ASSERT_FATAL(p && p->approx);
	CU_ASSERT(p->approx[variant_index(p, "argmax-arith")] == 2 &&
		  p->approx[variant_index(p, "argmin-arith")] == 2 &&
		  p->approx[variant_index(p, "argmax-equal")] == 0);
	for (size_t k = 0; k < sizeof(ex) / sizeof(ex[0]); k++) {
		struct ir_model *m = tm_new(13);
		struct rt_value *y = NULL;
		struct ir_node *n;
		struct rw_ctx ctx;
		struct ir_diag d;

		tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(8), 1);
		n = tm_node(m, ex[k].op, NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
		CU_ASSERT_FATAL(ir_node_set_int(n, "select_last_index", ex[k].last) == 0);
		tg_finish(m, IR_DTYPE_INT64);
		ir_diag_init(&d);
		CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, NULL, &d) == 0);
		CU_ASSERT_FATAL(rw_apply(&ctx, p, m->graph->nodes[0],
					 variant_index(p, ex[k].variant)) == 0);
		CU_ASSERT_FATAL(rw_refresh(&ctx) == 0);
		CU_ASSERT_FATAL(tm_run_floats(m, vals, &y, 1) == 0);
		CU_ASSERT(rt_value_get_f64(y, 0) == (double)ex[k].want);
		rt_value_unref(y);
		rw_ctx_release(&ctx);
		ir_model_free(m);
	}
}

/* The arithmetic hit tells apart values one float apart, the smallest
 * subnormal from 0 included: 1 - clip((m - x) S S, 0, 1) is 0 for them. */
static void test_arg_close(void)
{
	static const double tiny[6] = { 0x1p-149, 0, -0x1p-149, 0x1p-148, 0, 0x1p-149 };
	static const double near1[6] = { 1, 1 + 0x1p-23, 1, 1, 1 - 0x1p-24, 1 };
	static const struct { const char *op, *variant; int64_t want[2]; } ex[] = {
		{ "ArgMax", "argmax-arith", { 3, 1 } }, { "ArgMin", "argmin-arith", { 2, 4 } },
		{ "ArgMax", "argmax-equal", { 3, 1 } }, { "ArgMin", "argmin-equal", { 2, 4 } },
	};
	const struct rw_pass *p = rw_pass_find("arg-max-min");

	for (size_t k = 0; k < sizeof(ex) / sizeof(ex[0]); k++)
		for (int part = 0; part < 2; part++) {
			const double *vals[1] = { part ? near1 : tiny };
			struct ir_model *m = tm_new(13);
			struct rt_value *y = NULL;
			struct rw_ctx ctx;
			struct ir_diag d;

			tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(6), 1);
			tm_node(m, ex[k].op, NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
			tg_finish(m, IR_DTYPE_INT64);
			ir_diag_init(&d);
			CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, NULL, &d) == 0);
			CU_ASSERT_FATAL(rw_apply(&ctx, p, m->graph->nodes[0],
						 variant_index(p, ex[k].variant)) == 0);
			CU_ASSERT_FATAL(rw_refresh(&ctx) == 0);
			CU_ASSERT_FATAL(tm_run_floats(m, vals, &y, 1) == 0);
			if (rt_value_get_f64(y, 0) != (double)ex[k].want[part])
				fprintf(stderr, "\n%s part %d: %g, want %lld\n", ex[k].variant, part,
					rt_value_get_f64(y, 0), (long long)ex[k].want[part]);
			CU_ASSERT(rt_value_get_f64(y, 0) == (double)ex[k].want[part]);
			rt_value_unref(y);
			rw_ctx_release(&ctx);
			ir_model_free(m);
		}
}

/* ---- Trilu ----------------------------------------------------------------------- */

/* param: | 1 upper | 2 k a graph input | dtype index << 2 (float, int32,
 * int64) | 16 k constant */
static struct ir_model *b_trilu(uint64_t *s, int param)
{
	static const int dts[] = { IR_DTYPE_FLOAT, IR_DTYPE_INT32, IR_DTYPE_INT64 };
	int dt = dts[(param >> 2) & 3], r = (int)tg_rnd(s, 2, 4);
	struct ir_model *m = tm_new(14);
	int64_t x[4], k = tg_rnd(s, -3, 3);
	struct ir_node *n;

	for (int i = 0; i < r; i++)
		x[i] = tg_rnd(s, 1, 5);
	tm_input(m, "x", dt, x, (size_t)r);
	if (param & 2)
		tm_input(m, "k", IR_DTYPE_INT64, NULL, 0);
	else if (param & 16)
		tg_int_init(m, "k", &k, NULL, 0);
	n = tm_node(m, "Trilu", NULL, TM_NAMES("x", "k"), param & (2 | 16) ? 2 : 1,
		    TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "upper", param & 1) == 0);
	tg_finish(m, dt);
	return m;
}

#define TR(p) { "trilu", "Trilu", b_trilu, (p), TL_REAL, 0, 0, 6 }
static const struct tl_case trilu_cases[] = {
	TR(0), TR(1), TR(1 | 16), TR(2), TR(3), TR(2 | 1 << 2), TR(3 | 2 << 2), TR(0 | 1 << 2),
	TR(1 | 16 | 2 << 2), TR(2 | 2 << 2),
};
#undef TR

static void test_trilu(void)
{
	tl_run_cases_fill(trilu_cases, sizeof(trilu_cases) / sizeof(trilu_cases[0]), 6161,
			  fill_inputs);
	tl_expect_all_variants("trilu");
	tg_run_checker();
}

/* ---- GatherElements --------------------------------------------------------------- */

/* param: data dtype index (float, int32, int64) | 4 int32 indices */
static struct ir_model *b_gather_elements(uint64_t *s, int param)
{
	static const int dts[] = { IR_DTYPE_FLOAT, IR_DTYPE_INT32, IR_DTYPE_INT64 };
	int dt = dts[param & 3], r = (int)tg_rnd(s, 1, 4);
	struct ir_model *m = tm_new(13);
	int64_t d[4], ix[4], axis = tg_rnd(s, 0, r - 1);
	struct ir_node *n;

	for (int i = 0; i < r; i++)
		d[i] = ix[i] = tg_rnd(s, 1, 4);
	ix[axis] = tg_rnd(s, 1, 5);
	tm_input(m, "x", dt, d, (size_t)r);
	tm_input(m, "i", param & 4 ? IR_DTYPE_INT32 : IR_DTYPE_INT64, ix, (size_t)r);
	n = tm_node(m, "GatherElements", NULL, TM_NAMES("x", "i"), 2, TM_NAMES("y"), 1);
	if (axis || tg_rnd(s, 0, 1))
		CU_ASSERT_FATAL(ir_node_set_int(n, "axis", tg_rnd(s, 0, 1) ? axis : axis - r) == 0);
	tg_finish(m, dt);
	return m;
}

#define GE(p, v) { "gather-elements", "GatherElements", b_gather_elements, (p), v, 0, 0, 8 }
static const struct tl_case ge_cases[] = {
	GE(0, TL_REAL), GE(1, TL_REAL), GE(2, TL_REAL), GE(0 | 4, TL_WIDE), GE(2 | 4, TL_REAL),
};
#undef GE

static void test_gather_elements(void)
{
	tl_run_cases_fill(ge_cases, sizeof(ge_cases) / sizeof(ge_cases[0]), 7373, fill_inputs);
	tl_expect_all_variants("gather-elements");
	tg_run_checker();
}

/* ---- Mod ---------------------------------------------------------------------------- */

/* param: | 1 fmod 1 | 2 int64 | 4 b broadcast along the last axis */
static struct ir_model *b_mod(uint64_t *s, int param)
{
	int dt = param & 2 ? IR_DTYPE_INT64 : IR_DTYPE_INT32;
	struct ir_model *m = tm_new(13);
	int64_t d[3] = { tg_rnd(s, 1, 4), tg_rnd(s, 1, 4), tg_rnd(s, 1, 4) };
	struct ir_node *n;

	tm_input(m, "ma", dt, d, 3);
	tm_input(m, "mb", dt, param & 4 ? d + 2 : d, param & 4 ? 1 : 3);
	n = tm_node(m, "Mod", NULL, TM_NAMES("ma", "mb"), 2, TM_NAMES("y"), 1);
	if (param & 1)
		CU_ASSERT_FATAL(ir_node_set_int(n, "fmod", 1) == 0);
	tg_finish(m, dt);
	return m;
}

#define MD(p) { "mod-int", "Mod", b_mod, (p), TL_REAL, 0, 0, 8 }
static const struct tl_case mod_cases[] = {
	MD(0), MD(1), MD(2), MD(3), MD(4), MD(1 | 4), MD(2 | 4), MD(3 | 4),
};
#undef MD

static void test_mod(void)
{
	tl_run_cases_fill(mod_cases, sizeof(mod_cases) / sizeof(mod_cases[0]), 8383, fill_inputs);
	tl_expect_all_variants("mod-int");
	tg_run_checker();
}

/* Mod by hand: the signs of both rules, and the extremes that wrap in
 * b (a / b) (int32). */
static void test_mod_values(void)
{
	static const double a[6] = { -7, 7, 7, -7, -2147483648.0, 2147483647 };
	static const double b[6] = { 3, -3, 3, -3, 7, -7 };
	static const double want[2][6] = {
		{ 2, -2, 1, -1, 5, -6 },              /* fmod 0: the divisor's sign */
		{ -1, 1, 1, -1, -2, 1 },              /* fmod 1: the dividend's */
	};
	const struct rw_pass *p = rw_pass_find("mod-int");
	struct rt_opts o = { .threads = 1 };

	for (int fm = 0; fm < 2; fm++) {
		struct ir_model *m = tm_new(13);
		struct rt_value *ins[2], *y = NULL;
		struct rt_session *ss = NULL;
		struct ir_node *n;
		struct rw_ctx ctx;
		struct ir_diag d;

		tm_input(m, "ma", IR_DTYPE_INT32, TM_DIMS(6), 1);
		tm_input(m, "mb", IR_DTYPE_INT32, TM_DIMS(6), 1);
		n = tm_node(m, "Mod", NULL, TM_NAMES("ma", "mb"), 2, TM_NAMES("y"), 1);
		CU_ASSERT_FATAL(ir_node_set_int(n, "fmod", fm) == 0);
		tg_finish(m, IR_DTYPE_INT32);
		ir_diag_init(&d);
		CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, NULL, &d) == 0);
		CU_ASSERT_FATAL(rw_apply(&ctx, p, m->graph->nodes[0], !fm) == 0);
		CU_ASSERT_FATAL(rw_refresh(&ctx) == 0);
		CU_ASSERT(tg_find_op(m, "Mod") == NULL);
		ins[0] = tensor(IR_DTYPE_INT32, TM_DIMS(6), 1, a);
		ins[1] = tensor(IR_DTYPE_INT32, TM_DIMS(6), 1, b);
		CU_ASSERT_FATAL(rt_session_new(m, &o, &ss, &d) == 0);
		CU_ASSERT_FATAL(rt_session_run(ss, ins, 2, &y, &d) == 0);
		for (int i = 0; i < 6; i++) {
			if (rt_value_get_f64(y, i) != want[fm][i])
				fprintf(stderr, "\nMod fmod %d of %g, %g: %g, want %g\n", fm, a[i], b[i],
					rt_value_get_f64(y, i), want[fm][i]);
			CU_ASSERT(rt_value_get_f64(y, i) == want[fm][i]);
		}
		rt_session_free(ss);
		rt_value_unref(ins[0]);
		rt_value_unref(ins[1]);
		rt_value_unref(y);
		rw_ctx_release(&ctx);
		ir_model_free(m);
	}
}

/* ---- refusals ---------------------------------------------------------------- */

static void test_refusals(void)
{
	struct ir_model *m;
	struct ir_node *n;

	/* float16 data: the sums would round in float16 */
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT16, TM_DIMS(2, 3), 2);
	tm_input(m, "t", IR_DTYPE_INT64, TM_DIMS(2), 1);
	tm_node(m, "NegativeLogLikelihoodLoss", NULL, TM_NAMES("x", "t"), 2, TM_NAMES("y"), 1);
	tg_finish(m, IR_DTYPE_FLOAT16);
	tl_refuses("nll-loss", "NegativeLogLikelihoodLoss", m, "float16");
	/* a symbolic class count */
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3), 2);
	tl_symbolic(m, "x", 1);
	tm_input(m, "t", IR_DTYPE_INT64, TM_DIMS(2), 1);
	tm_node(m, "SoftmaxCrossEntropyLoss", NULL, TM_NAMES("x", "t"), 2, TM_NAMES("y"), 1);
	tg_finish(m, IR_DTYPE_FLOAT);
	tl_refuses("sce-loss", "SoftmaxCrossEntropyLoss", m, "class count");
	/* an ignore_index int32 targets cannot hold */
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3), 2);
	tm_input(m, "t", IR_DTYPE_INT32, TM_DIMS(2), 1);
	n = tm_node(m, "NegativeLogLikelihoodLoss", NULL, TM_NAMES("x", "t"), 2, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "ignore_index", INT64_C(1) << 40) == 0);
	tg_finish(m, IR_DTYPE_FLOAT);
	tl_refuses("nll-loss", "NegativeLogLikelihoodLoss", m, "ignore_index");
	/* an unknown reduction */
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3), 2);
	tm_input(m, "t", IR_DTYPE_INT64, TM_DIMS(2), 1);
	n = tm_node(m, "NegativeLogLikelihoodLoss", NULL, TM_NAMES("x", "t"), 2, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_string(n, "reduction", "max") == 0);
	tg_finish(m, IR_DTYPE_FLOAT);
	tl_refuses("nll-loss", "NegativeLogLikelihoodLoss", m, "reduction");
	/* double data whose statistics are float (stash_type 1) */
	m = tm_new(17);
	tm_input(m, "x", IR_DTYPE_DOUBLE, TM_DIMS(2, 3), 2);
	tm_input(m, "s", IR_DTYPE_DOUBLE, TM_DIMS(3), 1);
	tm_node(m, "LayerNormalization", NULL, TM_NAMES("x", "s"), 2, TM_NAMES("y", "mean"), 2);
	tm_output(m, "y", IR_DTYPE_DOUBLE, NULL, 0);
	tm_output(m, "mean", IR_DTYPE_FLOAT, NULL, 0);
	tm_verify(m);
	tl_refuses("layer-norm", "LayerNormalization", m, "stash_type");
	/* CastLike like an op's output whose type inference does not know */
	m = tm_new(15);
	m->opsets = realloc(m->opsets, 3 * sizeof(*m->opsets));
	CU_ASSERT_FATAL(m->opsets != NULL);
	m->opsets[2].domain = strdup("example.custom");
	m->opsets[2].version = 1;
	m->opsets[2].present = 1;
	m->n_opsets = 3;
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2), 1);
	tm_node(m, "Mystery", "example.custom", TM_NAMES("x"), 1, TM_NAMES("like"), 1);
	tm_node(m, "CastLike", NULL, TM_NAMES("x", "like"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	tl_refuses("cast-like", "CastLike", m, "element type is unknown");
	/* ReduceMax of integers (MaxPool takes floats), of a symbolic dim,
	 * with noop_with_empty_axes and no axes */
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_INT32, TM_DIMS(2, 3), 2);
	tm_node(m, "ReduceMax", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	tg_finish(m, IR_DTYPE_INT32);
	tl_refuses("reduce-max-pool", "ReduceMax", m, "float");
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3), 2);
	tl_symbolic(m, "x", 0);
	tm_node(m, "ReduceMin", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	tg_finish(m, IR_DTYPE_FLOAT);
	tl_refuses("reduce-max-pool", "ReduceMin", m, "static");
	m = tm_new(18);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3), 2);
	n = tm_node(m, "ReduceMax", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "noop_with_empty_axes", 1) == 0);
	tg_finish(m, IR_DTYPE_FLOAT);
	tl_refuses("reduce-max-pool", "ReduceMax", m, "noop_with_empty_axes");
	/* ArgMax along a symbolic axis */
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3), 2);
	tl_symbolic(m, "x", 1);
	n = tm_node(m, "ArgMax", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "axis", 1) == 0);
	tg_finish(m, IR_DTYPE_INT64);
	tl_refuses("arg-max-min", "ArgMax", m, "not static");
	/* GatherElements of data larger than the indices off the axis */
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(3, 4), 2);
	tm_input(m, "i", IR_DTYPE_INT64, TM_DIMS(2, 2), 2);
	tm_node(m, "GatherElements", NULL, TM_NAMES("x", "i"), 2, TM_NAMES("y"), 1);
	tg_finish(m, IR_DTYPE_FLOAT);
	tl_refuses("gather-elements", "GatherElements", m, "differ off the axis");
	/* float Mod: a - b trunc(a / b) would round */
	m = tm_new(13);
	tm_input(m, "ma", IR_DTYPE_FLOAT, TM_DIMS(3), 1);
	tm_input(m, "mb", IR_DTYPE_FLOAT, TM_DIMS(3), 1);
	n = tm_node(m, "Mod", NULL, TM_NAMES("ma", "mb"), 2, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "fmod", 1) == 0);
	tg_finish(m, IR_DTYPE_FLOAT);
	tl_refuses("mod-int", "Mod", m, "rounds");
}

/* The arithmetic one-hot is exact while the classes are integers of the
 * dtype it computes in: float16 (the precision pass converts) to 2048. */
static void test_loss_arith_limit(void)
{
	const struct rw_pass *p = rw_pass_find("nll-loss");
	int ar = variant_index(p, "onehot-arith-mean"), eq = variant_index(p, "onehot-equal-mean");

	for (int big = 0; big < 2; big++) {
		struct ir_model *m = tm_new(13);
		struct rw_ctx ctx;
		struct ir_diag d;

		tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, big ? 2049 : 2048), 2);
		tm_input(m, "t", IR_DTYPE_INT64, TM_DIMS(1), 1);
		tm_node(m, "NegativeLogLikelihoodLoss", NULL, TM_NAMES("x", "t"), 2, TM_NAMES("y"), 1);
		tg_finish(m, IR_DTYPE_FLOAT);
		ir_diag_init(&d);
		CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, NULL, &d) == 0);
		CU_ASSERT(p->vcheck(&ctx, m->graph->nodes[0], ar));
		ctx.prec16 = 1;
		CU_ASSERT(p->vcheck(&ctx, m->graph->nodes[0], ar) == !big);
		CU_ASSERT(p->vcheck(&ctx, m->graph->nodes[0], eq));
		rw_ctx_release(&ctx);
		ir_model_free(m);
	}
}

static const struct unit_test tests[] = {
	{ "nll-loss and sce-loss agree (reductions, weights, ignore_index, ranks)", test_loss },
	{ "nll-loss gives the spec's worked examples in every form", test_loss_examples },
	{ "an infinite log-probability elsewhere: exact by GatherElements, NaN one-hot",
	  test_loss_inf },
	{ "the arithmetic one-hot stays within float16's integers", test_loss_arith_limit },
	{ "layer-norm writes Mean and InvStdDev where they are read", test_layer_norm_stats },
	{ "layer-norm's statistics by hand", test_layer_norm_stats_values },
	{ "cast-like agrees (dtype pairs, like an input or a constant)", test_castlike },
	{ "reduce-max-pool agrees (axes, keepdims, both forms)", test_reduce_pool },
	{ "arg-max-min agrees (ties, keepdims, select_last_index, dtypes)", test_arg },
	{ "arg-max-min's Equal forms are exact for infinite extremes", test_arg_inf },
	{ "arg-max-min tells apart values one float apart", test_arg_close },
	{ "trilu agrees (k constant or an input, integer and float data)", test_trilu },
	{ "gather-elements agrees (axes, negative indices, dtypes)", test_gather_elements },
	{ "mod-int agrees (fmod 0 and 1, extremes, broadcast)", test_mod },
	{ "mod-int by hand (signs, wrapping)", test_mod_values },
	{ "the lowerings of decomp5 refuse what they cannot do", test_refusals },
	{ NULL, NULL },
};

int suite_decomp5_register(void)
{
	return unit_add_suite("decomp5", tests);
}
