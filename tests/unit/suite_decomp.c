/* suite_decomp.c: property tests of the decompositions: for each case a
 * one-op model (seeded random shapes, the case's attributes), every
 * variant whose preconditions hold is applied; the original (run by the
 * op's own kernel, itself checked against the ONNX backend data) and the
 * rewritten model run on the same seeded inputs and must agree within the
 * case's bound; the rewritten model verifies, keeps its output name and
 * emits only the ops its variant lists; rewritten models of opset <= 17
 * pass onnx.checker's full check. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/rewrite.h"
#include "validators/compare.h"
#include "tests/unit/suites.h"
#include "tests/unit/tgen.h"
#include "tests/unit/tmodel.h"

struct extra {
	int rank;                    /* -1: a scalar; -2: x's shape */
	int64_t dims[4];
	double fill;                 /* NaN: seeded random values */
	int like_dim;                /* >= 0: dims[0] = x's dim like_dim */
};

struct dcase {
	const char *pass, *op, *domain;
	int opset;
	int rank;                    /* x's rank; dims random in [1, 5] */
	const char *pre;             /* op applied to x first ("Abs") */
	const char *attrs;           /* "alpha=0.3 axis=1 mode=s:tanh axes=i:0,2" */
	int n_extra;
	struct extra extra[3];
	double tol;
	int n_outputs;               /* outputs of the op (only the first read) */
};

static uint64_t next(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

static void set_attrs(struct ir_node *n, const char *spec)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", spec ? spec : "");
	for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(t, '=');

		CU_ASSERT_FATAL(eq != NULL);
		*eq++ = 0;
		if (!strncmp(eq, "s:", 2)) {
			CU_ASSERT_FATAL(ir_node_set_string(n, t, eq + 2) == 0);
		} else if (!strncmp(eq, "i:", 2)) {
			int64_t v[8];
			size_t k = 0;

			for (char *p = eq + 2; *p && k < 8; p += strcspn(p, ","), p += *p == ',')
				v[k++] = strtoll(p, NULL, 10);
			CU_ASSERT_FATAL(ir_node_set_ints(n, t, v, k) == 0);
		} else if (strchr(eq, '.') || strchr(eq, 'e')) {
			CU_ASSERT_FATAL(ir_node_set_float(n, t, strtof(eq, NULL)) == 0);
		} else {
			CU_ASSERT_FATAL(ir_node_set_int(n, t, strtoll(eq, NULL, 10)) == 0);
		}
	}
}

static struct ir_model *build(const struct dcase *c, uint64_t seed)
{
	struct ir_model *m = tm_new(c->opset);
	int64_t dims[4];
	const char *in[4] = { "x", "", "", "" };
	const char *out[4] = { "y", "", "", "" };
	char names[3][16];
	struct ir_node *n;

	for (int i = 0; i < c->rank; i++)
		dims[i] = 1 + (int64_t)(next(&seed) % 5);
	if (c->rank >= 2 && !strcmp(c->op, "GroupNormalization"))
		dims[1] = 6;     /* divisible by 1, 2, 3 groups */
	tm_input(m, "x", IR_DTYPE_FLOAT, dims, (size_t)c->rank);
	if (c->pre) {
		tm_node(m, c->pre, NULL, TM_NAMES("x"), 1, TM_NAMES("x1"), 1);
		in[0] = "x1";
	}
	CU_ASSERT_FATAL(c->n_extra <= 3);
	for (int i = 0; i < c->n_extra; i++) {
		const struct extra *e = &c->extra[i];
		int64_t ed[4];
		double v[512];
		int64_t k = 1;

		int er = e->rank == -2 ? c->rank : e->rank < 0 ? 0 : e->rank;

		snprintf(names[i], sizeof(names[i]), "p%d", i);
		for (int j = 0; j < er; j++) {
			ed[j] = e->rank == -2 ? dims[j] : e->dims[j];
			if (j == 0 && e->like_dim >= 0)
				ed[0] = dims[e->like_dim];
			k *= ed[j];
		}
		CU_ASSERT_FATAL(k <= 512);
		for (int64_t j = 0; j < k; j++)
			v[j] = isnan(e->fill) ? (double)(next(&seed) % 2000) / 1000.0 - 1.0 : e->fill;
		tm_init(m, names[i], IR_DTYPE_FLOAT, ed, (size_t)er, v);
		in[1 + i] = names[i];
	}
	for (int i = 1; i < c->n_outputs; i++)
		out[i] = i == 1 ? "o1" : i == 2 ? "o2" : "o3";
	n = tm_node(m, c->op, c->domain, in, 1 + (size_t)c->n_extra, out,
		    (size_t)(c->n_outputs ? c->n_outputs : 1));
	set_attrs(n, c->attrs);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	tm_verify(m);
	return m;
}

static struct ir_node *find_op(struct ir_model *m, const char *op)
{
	for (size_t i = 0; i < m->graph->n_nodes; i++)
		if (!strcmp(ir_s(m->graph->nodes[i]->op_type), op))
			return m->graph->nodes[i];
	return NULL;
}

static int only_ops(const struct ir_model *m, const char *pre, const char *const *allowed)
{
	for (size_t i = 0; i < m->graph->n_nodes; i++) {
		const char *op = ir_s(m->graph->nodes[i]->op_type);
		int ok = pre && !strcmp(op, pre) && i == 0;

		for (const char *const *a = allowed; *a; a++)
			ok |= !strcmp(*a, op);
		if (!ok) {
			fprintf(stderr, "\nunexpected op %s\n", op);
			return 0;
		}
	}
	return 1;
}

/* Apply variant v to a fresh model; -1 when the variant does not apply,
 * else the max abs difference (NaN and inf must match exactly). */
static double try_variant(const struct dcase *c, const struct rw_pass *p, int v,
			  uint64_t seed, int save)
{
	struct ir_model *m = build(c, seed);
	struct rt_value *before = NULL, *after = NULL;
	struct rt_cmp_opts o = { 0, 0 };
	struct rt_metrics mt;
	struct ir_node *n = find_op(m, c->op);
	struct rw_ctx ctx;
	struct ir_diag d;
	char why[256];
	double err = -1;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(n != NULL);
	CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, NULL, &d) == 0);
	if ((p->check && !p->check(&ctx, n, why, sizeof(why))) ||
	    (p->vcheck && !p->vcheck(&ctx, n, v)))
		goto done;
	CU_ASSERT_FATAL(tm_run(m, seed, &before, 1) == 0);
	CU_ASSERT_FATAL(rw_apply(&ctx, p, n, v) == 0);
	if (rw_refresh(&ctx) < 0)
		fprintf(stderr, "\n%s/%s: %s\n", p->name, p->variants[v].name, d.msg);
	CU_ASSERT_FATAL(d.status == 0);
	CU_ASSERT_STRING_EQUAL(ir_s(m->graph->outputs[0].value->name), "y");
	CU_ASSERT(only_ops(m, c->pre, p->variants[v].emits));
	CU_ASSERT_FATAL(tm_run(m, seed, &after, 1) == 0);
	rt_compare(after, before, &o, &mt);
	CU_ASSERT(mt.n == before->numel);
	err = mt.max_abs;
	if (isnan(err))
		err = INFINITY;
	if (save) {         /* onnx.checker judges it (tg_run_checker) */
		char what[96];

		snprintf(what, sizeof(what), "%s-%s-%s", p->name, c->op, p->variants[v].name);
		tg_save_for_checker(m, what, after);
	}
	rt_value_unref(before);
	rt_value_unref(after);
done:
	rw_ctx_release(&ctx);
	ir_model_free(m);
	return err;
}

#define R NAN
static const struct dcase cases[] = {
	{ "hard-sigmoid", "HardSigmoid", NULL, 13, 3, NULL, "alpha=0.3 beta=0.4", 0, {{0}}, 1e-6, 0 },
	{ "hard-sigmoid", "HardSigmoid", NULL, 9, 2, NULL, NULL, 0, {{0}}, 1e-6, 0 },
	{ "hard-swish", "HardSwish", NULL, 14, 3, NULL, NULL, 0, {{0}}, 1e-6, 0 },
	{ "softplus", "Softplus", NULL, 13, 3, NULL, NULL, 0, {{0}}, 1e-6, 0 },
	{ "softsign", "Softsign", NULL, 13, 2, NULL, NULL, 0, {{0}}, 1e-6, 0 },
	{ "mish", "Mish", NULL, 18, 3, NULL, NULL, 0, {{0}}, 2e-6, 0 },
	{ "elu", "Elu", NULL, 13, 3, NULL, "alpha=0.7", 0, {{0}}, 1e-6, 0 },
	{ "elu", "Selu", NULL, 13, 3, NULL, NULL, 0, {{0}}, 2e-6, 0 },
	{ "elu", "Celu", NULL, 13, 2, NULL, "alpha=2.5", 0, {{0}}, 2e-6, 0 },
	{ "thresholded-relu", "ThresholdedRelu", NULL, 13, 3, NULL, "alpha=0.5", 0, {{0}}, 0, 0 },
	{ "leaky-relu", "LeakyRelu", NULL, 13, 3, NULL, "alpha=0.1", 0, {{0}}, 1e-7, 0 },
	{ "leaky-relu", "LeakyRelu", NULL, 13, 2, NULL, "alpha=1.5", 0, {{0}}, 1e-6, 0 },
	{ "prelu", "PRelu", NULL, 13, 4, NULL, NULL, 1, {{ 3, { 0, 1, 1 }, R, 1 }}, 1e-6, 0 },
	{ "neg", "Neg", NULL, 13, 3, NULL, NULL, 0, {{0}}, 0, 0 },
	{ "reciprocal", "Reciprocal", NULL, 13, 3, NULL, NULL, 0, {{0}}, 0, 0 },
	{ "abs", "Abs", NULL, 13, 3, NULL, NULL, 0, {{0}}, 0, 0 },
	{ "abs", "Abs", NULL, 14, 2, NULL, NULL, 0, {{0}}, 0, 0 },
	{ "sign", "Sign", NULL, 13, 3, NULL, NULL, 0, {{0}}, 0, 0 },
	{ "sqrt-pow", "Sqrt", NULL, 13, 3, "Abs", NULL, 0, {{0}}, 1e-6, 0 },
	{ "pow-const", "Pow", NULL, 13, 3, "Abs", NULL, 1, {{ -1, {0}, 0.5, -1 }}, 1e-6, 0 },
	{ "pow-const", "Pow", NULL, 13, 3, NULL, NULL, 1, {{ -1, {0}, 2, -1 }}, 1e-5, 0 },
	{ "pow-const", "Pow", NULL, 13, 3, NULL, NULL, 1, {{ -1, {0}, 3, -1 }}, 1e-4, 0 },
	{ "pow-const", "Pow", NULL, 13, 2, NULL, NULL, 1, {{ -1, {0}, -1, -1 }}, 1e-5, 0 },
	{ "pow-const", "Pow", NULL, 13, 2, "Abs", NULL, 1, {{ -1, {0}, -0.5, -1 }}, 1e-5, 0 },
	{ "variadic", "Sum", NULL, 13, 3, NULL, NULL, 2, {{ 1, { 0 }, R, 2 }, { -1, {0}, 1.5, -1 }}, 1e-6, 0 },
	{ "variadic", "Mean", NULL, 13, 2, NULL, NULL, 2, {{ 1, { 0 }, R, 1 }, { 2, { 0, 1 }, R, 0 }}, 1e-6, 0 },
	{ "variadic", "Max", NULL, 13, 3, NULL, NULL, 2, {{ 1, { 0 }, R, 2 }, { -1, {0}, 0.25, -1 }}, 0, 0 },
	{ "variadic", "Min", NULL, 13, 2, NULL, NULL, 3, {{ 1, { 0 }, R, 1 }, { -1, {0}, 0.25, -1 }, { -1, {0}, -1, -1 }}, 0, 0 },
	{ "reduce", "ReduceL1", NULL, 13, 3, NULL, "axes=i:1 keepdims=0", 0, {{0}}, 1e-5, 0 },
	{ "reduce", "ReduceL2", NULL, 18, 3, NULL, NULL, 0, {{0}}, 1e-5, 0 },
	{ "reduce", "ReduceLogSum", NULL, 13, 3, "Abs", "axes=i:0,2", 0, {{0}}, 1e-5, 0 },
	{ "reduce", "ReduceLogSumExp", NULL, 13, 3, NULL, "axes=i:-1 keepdims=0", 0, {{0}}, 1e-5, 0 },
	{ "reduce", "ReduceLogSumExp", NULL, 18, 2, NULL, NULL, 0, {{0}}, 1e-5, 0 },
	{ "reduce", "ReduceSumSquare", NULL, 11, 4, NULL, "axes=i:1,3", 0, {{0}}, 1e-5, 0 },
	{ "softmax", "Softmax", NULL, 13, 3, NULL, "axis=1", 0, {{0}}, 1e-6, 0 },
	{ "softmax", "Softmax", NULL, 11, 3, NULL, NULL, 0, {{0}}, 1e-6, 0 },
	{ "softmax", "LogSoftmax", NULL, 13, 3, NULL, NULL, 0, {{0}}, 1e-5, 0 },
	{ "softmax", "LogSoftmax", NULL, 9, 4, NULL, "axis=2", 0, {{0}}, 1e-5, 0 },
	{ "global-pool", "GlobalAveragePool", NULL, 13, 4, NULL, NULL, 0, {{0}}, 1e-6, 0 },
	{ "global-pool", "GlobalMaxPool", NULL, 18, 3, NULL, NULL, 0, {{0}}, 0, 0 },
	{ "layer-norm", "LayerNormalization", NULL, 17, 3, NULL, NULL, 2,
	  {{ 1, { 0 }, R, 2 }, { 1, { 0 }, R, 2 }}, 1e-5, 0 },
	{ "layer-norm", "LayerNormalization", NULL, 17, 3, NULL, "axis=1 epsilon=0.001", 1,
	  {{ 2, { 0, 1 }, R, 1 }}, 1e-5, 0 },
	{ "layer-norm", "SimplifiedLayerNormalization", "com.microsoft", 17, 3, NULL, NULL, 1,
	  {{ 1, { 0 }, R, 2 }}, 1e-5, 0 },
	{ "skip-layer-norm", "SkipLayerNormalization", "com.microsoft", 17, 3, NULL, "epsilon=0.00001", 3,
	  {{ -2, { 0 }, R, -1 }, { 1, { 0 }, R, 2 }, { 1, { 0 }, R, 2 }}, 1e-5, 4 },
	{ "instance-norm", "InstanceNormalization", NULL, 13, 4, NULL, NULL, 2,
	  {{ 1, { 0 }, R, 1 }, { 1, { 0 }, R, 1 }}, 1e-5, 0 },
	{ "group-norm", "GroupNormalization", NULL, 18, 4, NULL, "num_groups=3", 2,
	  {{ 1, { 3 }, R, -1 }, { 1, { 3 }, R, -1 }}, 1e-5, 0 },
	{ "group-norm", "GroupNormalization", NULL, 21, 3, NULL, "num_groups=2 epsilon=0.01", 2,
	  {{ 1, { 6 }, R, -1 }, { 1, { 6 }, R, -1 }}, 1e-5, 0 },
	{ "lp-norm", "LpNormalization", NULL, 13, 3, NULL, "p=1 axis=1", 0, {{0}}, 1e-6, 0 },
	{ "lp-norm", "LpNormalization", NULL, 13, 2, NULL, NULL, 0, {{0}}, 1e-6, 0 },
};
#undef R

static void test_decompositions(void)
{
	uint64_t seed = 99;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct dcase *c = &cases[i];
		const struct rw_pass *p = rw_pass_find(c->pass);
		int applied = 0;

		CU_ASSERT_FATAL(p != NULL);
		for (int trial = 0; trial < 3; trial++, next(&seed))
			for (size_t v = 0; v < p->n_variants; v++) {
				double err = try_variant(c, p, (int)v, seed, trial == 0);

				if (err < 0)
					continue;
				applied++;
				if (err > c->tol)
					fprintf(stderr, "\n%s %s variant %s: error %g > %g\n", c->pass,
						c->op, p->variants[v].name, err, c->tol);
				CU_ASSERT(err <= c->tol);
			}
		if (!applied)
			fprintf(stderr, "\ncase %zu (%s %s): no variant applies\n", i, c->pass, c->op);
		CU_ASSERT(applied > 0);
	}
	tg_run_checker();
}

/* Preconditions refuse precisely. */
static void test_refusals(void)
{
	static const struct dcase bad[] = {
		{ "lp-norm", "LpNormalization", NULL, 13, 2, NULL, "p=3", 0, {{0}}, 0, 0 },
		{ "pow-const", "Pow", NULL, 13, 2, NULL, NULL, 1, {{ -1, {0}, 1.7, -1 }}, 0, 0 },
		{ "skip-layer-norm", "SkipSimplifiedLayerNormalization", "com.microsoft", 17, 3, NULL,
		  "epsilon=0.00001", 3, {{ -2, { 0 }, NAN, -1 }, { 1, { 0 }, NAN, 2 },
		  { 1, { 0 }, NAN, 2 }}, 0, 4 },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const struct rw_pass *p = rw_pass_find(bad[i].pass);
		struct ir_model *m = build(&bad[i], 5);
		struct rw_ctx ctx;
		struct ir_diag d;
		char why[256] = "";

		ir_diag_init(&d);
		if (i == 2)    /* the simplified skip norm's mean (it has none) read */
			tm_output(m, "o1", IR_DTYPE_FLOAT, NULL, 0);
		CU_ASSERT_FATAL(rw_ctx_init(&ctx, m, NULL, &d) == 0);
		CU_ASSERT(!p->check(&ctx, find_op(m, bad[i].op), why, sizeof(why)));
		CU_ASSERT(why[0] != 0);
		rw_ctx_release(&ctx);
		ir_model_free(m);
	}
}

static const struct unit_test tests[] = {
	{ "decompositions agree with the op they replace", test_decompositions },
	{ "decompositions refuse what they cannot do", test_refusals },
	{ NULL, NULL },
};

int suite_decomp_register(void)
{
	return unit_add_suite("decomp", tests);
}
