/* suite_rewrite.c: the pass framework and its first passes, as property
 * tests: seeded random shapes, the original and the rewritten model both
 * run in the interpreter and compared with hand-derived error bounds; the
 * rewritten model verifies, keeps its output names and emits only the ops
 * its variant lists. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/rewrite.h"
#include "validators/compare.h"
#include "tests/unit/suites.h"
#include "tests/unit/tmodel.h"

static void test_table(void)
{
	CU_ASSERT(rw_n_passes > 0);
	for (size_t i = 0; i < rw_n_passes; i++) {
		const struct rw_pass *p = rw_passes[i];

		if (i)
			CU_ASSERT(strcmp(rw_passes[i - 1]->name, p->name) < 0);
		CU_ASSERT(p->summary && *p->summary);
		CU_ASSERT(rw_pass_find(p->name) == p);
		if (p->run) {
			CU_ASSERT(!p->apply && !p->matches);
		} else {
			CU_ASSERT(p->apply && p->matches && p->n_variants > 0);
		}
	}
	CU_ASSERT(rw_pass_find("no-such-pass") == NULL);
}

/* Every node of m is one of the ops allowed (NULL-terminated). */
static int only_ops(const struct ir_model *m, const char *const *allowed)
{
	for (size_t i = 0; i < m->graph->n_nodes; i++) {
		int ok = 0;

		for (const char *const *a = allowed; *a; a++)
			ok |= !strcmp(*a, ir_s(m->graph->nodes[i]->op_type));
		if (!ok) {
			fprintf(stderr, "\nunexpected op %s\n", m->graph->nodes[i]->op_type);
			return 0;
		}
	}
	return 1;
}

static double max_abs_diff(struct rt_value *a, struct rt_value *b)
{
	struct rt_cmp_opts o = { 0, 0 };
	struct rt_metrics m;

	rt_compare(a, b, &o, &m);
	CU_ASSERT(m.n == a->numel);
	return m.max_abs;
}

static struct ir_model *gelu_model(int64_t opset, const char *approx,
				   const int64_t *dims, size_t n, const char *domain)
{
	struct ir_model *m = tm_new(opset);
	struct ir_node *g;

	tm_input(m, "x", IR_DTYPE_FLOAT, dims, n);
	g = tm_node(m, "Gelu", domain, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	if (approx)
		CU_ASSERT_FATAL(ir_node_set_string(g, "approximate", approx) == 0);
	tm_output(m, "y", IR_DTYPE_FLOAT, dims, n);
	tm_verify(m);
	return m;
}

/* Rewrite the only node of m with pass/variant; returns the max abs
 * difference of the output over seeded inputs. */
static double rewrite_error(struct ir_model *m, const char *pass, int variant,
			    uint64_t seed)
{
	const struct rw_pass *p = rw_pass_find(pass);
	struct rt_value *before = NULL, *after = NULL;
	struct rw_ctx c;
	struct ir_diag d;
	double err;

	CU_ASSERT_FATAL(p != NULL);
	CU_ASSERT_FATAL(tm_run(m, seed, &before, 1) == 0);
	ir_diag_init(&d);
	CU_ASSERT_FATAL(rw_ctx_init(&c, m, NULL, &d) == 0);
	CU_ASSERT_FATAL(rw_apply(&c, p, m->graph->nodes[0], variant) == 0);
	CU_ASSERT_FATAL(rw_refresh(&c) == 0);
	CU_ASSERT_EQUAL(c.n_log, 1);
	CU_ASSERT_STRING_EQUAL(ir_s(m->graph->outputs[0].value->name), "y");
	CU_ASSERT(only_ops(m, p->variants[variant].emits));
	CU_ASSERT_FATAL(tm_run(m, seed, &after, 1) == 0);
	err = max_abs_diff(after, before);
	rt_value_unref(before);
	rt_value_unref(after);
	rw_ctx_release(&c);
	return err;
}

static void test_gelu(void)
{
	uint64_t s = 11;

	for (int trial = 0; trial < 6; trial++) {
		int64_t dims[3] = { 1 + (int64_t)(s % 3), 2 + (int64_t)(s % 5), 7 };
		/* bounds: erf exact to float rounding; erf-poly 1.5e-7 * 0.5|x|
		 * (|x| < 3) plus rounding; tanh form 4.8e-4 (the measured max of
		 * |gelu - gelu_tanh| over the reals, at x = -2.70) */
		static const double bound[4] = { 2e-6, 2e-6, 4.8e-4, 4.8e-4 };

		for (int v = 0; v < 4; v++) {
			struct ir_model *m = gelu_model(20, NULL, dims, 3, NULL);
			double err = rewrite_error(m, "gelu", v, s + (uint64_t)v);

			if (err > bound[v])
				fprintf(stderr, "\ngelu variant %d: error %g\n", v, err);
			CU_ASSERT(err <= bound[v]);
			ir_model_free(m);
		}
		/* the tanh form is matched exactly by its two variants */
		for (int v = 2; v < 4; v++) {
			struct ir_model *m = gelu_model(20, "tanh", dims, 3, NULL);

			CU_ASSERT(rewrite_error(m, "gelu", v, s) <= 2e-6);
			ir_model_free(m);
		}
		s = s * 6364136223846793005ull + 1442695040888963407ull;
	}
}

static void test_erf_poly(void)
{
	struct ir_model *m = tm_new(13);

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(4, 250), 2);
	tm_node(m, "Erf", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(4, 250), 2);
	tm_verify(m);
	/* 1.4e-7 approximation (A&S 7.1.26) plus float32 rounding */
	CU_ASSERT(rewrite_error(m, "erf-poly", 0, 5) <= 5e-7);
	ir_model_free(m);
}

/* On generic-npu (no Erf, no Gelu) Gelu goes through the polynomial. */
static void test_choose(void)
{
	struct ir_model *m = gelu_model(17, NULL, TM_DIMS(2, 3), 2, "com.microsoft");
	struct rules_db db;
	const struct rules_target *t;
	const struct rw_pass *p;
	struct rw_ctx c;
	struct ir_diag d;
	int v = -1;

	ir_diag_init(&d);
	rules_db_init(&db);
	CU_ASSERT_FATAL(rules_load_dir("oprules", &db, &d) == 0);
	CU_ASSERT_FATAL((t = rules_db_find(&db, "generic-npu")) != NULL);
	CU_ASSERT_FATAL(rw_ctx_init(&c, m, t, &d) == 0);
	p = rw_choose(&c, m->graph->nodes[0], RW_DECOMPOSE, &v);
	CU_ASSERT_FATAL(p != NULL);
	CU_ASSERT_STRING_EQUAL(p->name, "gelu");
	CU_ASSERT_STRING_EQUAL(p->variants[v].name, "erf-poly");
	CU_ASSERT(!rw_target_accepts(&c, "", "Erf", IR_DTYPE_FLOAT));
	CU_ASSERT(rw_target_accepts(&c, "", "Mul", IR_DTYPE_FLOAT));
	CU_ASSERT(!rw_target_accepts(&c, "", "Mul", IR_DTYPE_INT64));  /* no int64 */
	rw_ctx_release(&c);
	rules_db_release(&db);
	ir_model_free(m);
}

/* x -> Identity -> Relu -> Identity -> y, and a dead branch. */
static void test_canon(void)
{
	struct ir_model *m = tm_new(13);
	struct rt_value *before = NULL, *after = NULL;
	struct rw_ctx c;
	struct ir_diag d;
	size_t changed;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(3, 4), 2);
	tm_node(m, "Identity", NULL, TM_NAMES("x"), 1, TM_NAMES("a"), 1);
	tm_node(m, "Relu", NULL, TM_NAMES("a"), 1, TM_NAMES("b"), 1);
	tm_node(m, "Identity", NULL, TM_NAMES("b"), 1, TM_NAMES("y"), 1);
	tm_node(m, "Sigmoid", NULL, TM_NAMES("b"), 1, TM_NAMES("dead1"), 1);
	tm_node(m, "Neg", NULL, TM_NAMES("dead1"), 1, TM_NAMES("dead2"), 1);
	tm_init(m, "unused", IR_DTYPE_FLOAT, TM_DIMS(2), 1, (const double[]){ 1, 2 });
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(3, 4), 2);
	tm_verify(m);
	CU_ASSERT_FATAL(tm_run(m, 3, &before, 1) == 0);
	ir_diag_init(&d);
	CU_ASSERT_FATAL(rw_ctx_init(&c, m, NULL, &d) == 0);
	CU_ASSERT_FATAL(rw_run(&c, rw_pass_find("dce"), &changed) == 0);
	CU_ASSERT_EQUAL(changed, 3);        /* Neg, Sigmoid, the initializer */
	CU_ASSERT_EQUAL(m->graph->n_nodes, 3);
	CU_ASSERT_EQUAL(m->graph->n_inits, 0);
	CU_ASSERT_FATAL(rw_run(&c, rw_pass_find("eliminate-identity"), &changed) == 0);
	CU_ASSERT_EQUAL(changed, 2);
	CU_ASSERT_EQUAL(m->graph->n_nodes, 1);
	CU_ASSERT_STRING_EQUAL(m->graph->nodes[0]->op_type, "Relu");
	CU_ASSERT_STRING_EQUAL(m->graph->nodes[0]->inputs[0]->name, "x");
	CU_ASSERT_STRING_EQUAL(m->graph->nodes[0]->outputs[0]->name, "y");
	CU_ASSERT_FATAL(tm_run(m, 3, &after, 1) == 0);
	CU_ASSERT_EQUAL(max_abs_diff(after, before), 0);
	rt_value_unref(before);
	rt_value_unref(after);
	rw_ctx_release(&c);
	ir_model_free(m);
}

static const struct unit_test tests[] = {
	{ "pass table sorted and complete", test_table },
	{ "gelu variants against exact Gelu", test_gelu },
	{ "erf polynomial error bound", test_erf_poly },
	{ "variant chosen by the target", test_choose },
	{ "dce and identity elimination", test_canon },
	{ NULL, NULL },
};

int suite_rewrite_register(void)
{
	return unit_add_suite("rewrite", tests);
}
