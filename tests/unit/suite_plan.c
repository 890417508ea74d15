/* suite_plan.c: the legalization planner (rewriters/plan.c) through
 * migrate: chains of lowerings reach targets one rewrite cannot, the
 * result holds only the target's ops and computes what the original does
 * (interpreter), the chain is logged; exact plans win over approximate
 * ones, rules costs steer the choice, ties go to fewer rewrites, cycles
 * end, --passes bounds the search; and every pass's vcheck survives the
 * planner's probe node (no inputs, outputs or attributes). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oprules/rules.h"
#include "rewriters/migrate.h"
#include "tests/unit/suites.h"
#include "tests/unit/tmodel.h"

/* A target of exactly these ops (ai.onnx), with extra JSON per op
 * ("Max": {"cost": 100}) when given. */
static const struct rules_target *target(struct rules_db *db, const char *id,
					 const char *ops_json)
{
	char path[] = "/tmp/opmig-plan-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	struct ir_diag d;

	CU_ASSERT_FATAL(f != NULL);
	fprintf(f, "{\"schema\": 1, \"id\": \"%s\", \"name\": \"t\", \"vendor\": \"t\", "
		"\"description\": \"planner test\", \"sources\": [\"test\"], \"ops\": {%s}}\n",
		id, ops_json);
	fclose(f);
	ir_diag_init(&d);
	rules_db_init(db);
	if (rules_load_file(path, db, &d) < 0 || rules_db_resolve(db, NULL, &d) < 0)
		fprintf(stderr, "\nrules: %s\n", d.msg);
	unlink(path);
	CU_ASSERT_FATAL(d.status == 0);
	return rules_db_find(db, id);
}

/* x [2, 3, 4] -> op -> y (two inputs: x and a constant w of the same
 * shape when binary). */
static struct ir_model *one_op(const char *op, int binary, int64_t opset)
{
	struct ir_model *m = tm_new(opset);
	double w[24];

	for (int i = 0; i < 24; i++)
		w[i] = sin(i * 1.7) * 2;
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3, 4), 3);
	if (binary) {
		tm_init(m, "w", IR_DTYPE_FLOAT, TM_DIMS(2, 3, 4), 3, w);
		tm_node(m, op, NULL, TM_NAMES("x", "w"), 2, TM_NAMES("y"), 1);
	} else {
		tm_node(m, op, NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	}
	tm_output(m, "y", strncmp(op, "Greater", 7) && strncmp(op, "Less", 4) ?
		  IR_DTYPE_FLOAT : IR_DTYPE_BOOL, TM_DIMS(2, 3, 4), 3);
	tm_verify(m);
	return m;
}

/* Migrate a copy of m for t (validated against m); the report. */
static int migrate(struct ir_model *m, struct ir_model *orig, const struct rules_target *t,
		   const char *passes, struct mg_report *r)
{
	struct mg_opts o = { .target = t, .validate = 1, .samples = 1, .seed = 3,
			     .threads = 1, .passes = passes };
	struct ir_diag d;
	int rc;

	ir_diag_init(&d);
	rc = mg_run(m, orig, "plan-test", &o, r, &d);
	if (rc < 0)
		fprintf(stderr, "\nmigrate: %s\n", d.msg);
	return rc;
}

/* Every node of m is one of the target's ops. */
static int only_target_ops(const struct ir_model *m, const struct rules_target *t)
{
	for (size_t i = 0; i < m->graph->n_nodes; i++) {
		const struct rules_op *o = rules_target_find_op(t, "ai.onnx",
								m->graph->nodes[i]->op_type);

		if (!o || !o->supported) {
			fprintf(stderr, "\nnode %zu is %s\n", i, m->graph->nodes[i]->op_type);
			return 0;
		}
	}
	return 1;
}

/* The log entries (pass/variant) in order, "pass(variant) pass(variant)". */
static void passes_of(const struct mg_report *r, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	for (size_t i = 0; i < r->n_rewrites && len < size; i++)
		if (*r->rewrites[i].op)
			len += (size_t)snprintf(buf + len, size - len, "%s%s(%s)", len ? " " : "",
						r->rewrites[i].pass, r->rewrites[i].variant ?
						r->rewrites[i].variant : "");
}

/* Migrate op for a target of `ops`; the passes used, and whether it
 * worked (legal, equivalent). */
static int run_case(const char *op, int binary, int64_t opset, const char *ops,
		    const char *passes, char *used, size_t size, char *chain, size_t csize)
{
	struct ir_model *m = one_op(op, binary, opset), *orig = one_op(op, binary, opset);
	struct rules_db db;
	const struct rules_target *t = target(&db, "plan-t", ops);
	struct mg_report r;
	int ok;

	CU_ASSERT_FATAL(t != NULL);
	CU_ASSERT_FATAL(migrate(m, orig, t, passes, &r) == 0);
	passes_of(&r, used, size);
	chain[0] = 0;
	for (size_t i = 0; i < r.n_rewrites && csize; i++)
		if (r.rewrites[i].parent < 0 && *r.rewrites[i].op) {
			rw_log_chain(r.rewrites, r.n_rewrites, i, chain, csize);
			break;
		}
	ok = r.ok && only_target_ops(m, t) && r.validated && r.val.equivalent;
	mg_report_release(&r);
	rules_db_release(&db);
	ir_model_free(m);
	ir_model_free(orig);
	return ok;
}

static void test_chain(void)
{
	char used[512], chain[512];

	/* Softsign -> Abs, Add, Div; Abs has no Max here -> relu form */
	CU_ASSERT(run_case("Softsign", 0, 13, "\"Relu\": {}, \"Add\": {}, \"Sub\": {}, \"Div\": {}",
			   NULL, used, sizeof(used), chain, sizeof(chain)));
	CU_ASSERT_STRING_EQUAL(used, "softsign(div) abs(relu)");
	CU_ASSERT_STRING_EQUAL(chain, "Softsign -> softsign(div) -> Abs -> abs(relu)");
	/* Erf -> polynomial with Max -> binary Max as a + relu(b - a) */
	CU_ASSERT(run_case("Erf", 0, 13, "\"Relu\": {}, \"Add\": {}, \"Sub\": {}, \"Mul\": {}, "
			   "\"Div\": {}, \"Exp\": {}", NULL, used, sizeof(used), chain,
			   sizeof(chain)));
	CU_ASSERT(strstr(chain, "Erf -> erf-poly(poly) -> Max -> max-min(add-relu)") == chain);
	/* one rewrite would not do: without the planner's recursion neither
	 * passes (the target has no Abs, no Max) */
	CU_ASSERT(!run_case("Softsign", 0, 13, "\"Add\": {}, \"Div\": {}", NULL, used,
			    sizeof(used), chain, sizeof(chain)));
}

static void test_preferences(void)
{
	char used[512], chain[512];

	/* Abs: max form (Sub, Max) is cheaper than relu's (Sub, Relu, Add)... */
	CU_ASSERT(run_case("Abs", 0, 13, "\"Relu\": {}, \"Add\": {}, \"Sub\": {}, \"Max\": {}",
			   NULL, used, sizeof(used), chain, sizeof(chain)));
	CU_ASSERT_STRING_EQUAL(used, "abs(max)");
	/* ...unless the rules make Max dear */
	CU_ASSERT(run_case("Abs", 0, 13, "\"Relu\": {}, \"Add\": {}, \"Sub\": {}, "
			   "\"Max\": {\"cost\": 100}", NULL, used, sizeof(used), chain,
			   sizeof(chain)));
	CU_ASSERT_STRING_EQUAL(used, "abs(relu)");
	/* Softplus: the exact, stable form although the direct one is cheaper */
	CU_ASSERT(run_case("Softplus", 0, 13, "\"Relu\": {}, \"Abs\": {}, \"Neg\": {}, "
			   "\"Exp\": {}, \"Add\": {}, \"Log\": {}", NULL, used, sizeof(used),
			   chain, sizeof(chain)));
	CU_ASSERT_STRING_EQUAL(used, "softplus(stable)");
	/* GreaterOrEqual with Less, Equal, Or: two rewrites (swapped, then
	 * or(<, ==)); or(>, ==) then > swapped costs the same */
	CU_ASSERT(run_case("GreaterOrEqual", 1, 13, "\"Less\": {}, \"Equal\": {}, \"Or\": {}",
			   NULL, used, sizeof(used), chain, sizeof(chain)));
	CU_ASSERT_STRING_EQUAL(used, "compare(less-or-equal) compare(or-less-equal)");
	/* with Greater too, one rewrite does: or(>, ==) directly, not the
	 * swap to LessOrEqual and back (equal op costs, fewer rewrites) */
	CU_ASSERT(run_case("GreaterOrEqual", 1, 13, "\"Less\": {}, \"Greater\": {}, "
			   "\"Equal\": {}, \"Or\": {}", NULL, used, sizeof(used), chain,
			   sizeof(chain)));
	CU_ASSERT_STRING_EQUAL(used, "compare(or-greater-equal)");
}

static void test_bounds(void)
{
	char used[512], chain[512];

	/* no comparison the target has: the cycles between them end */
	CU_ASSERT(!run_case("GreaterOrEqual", 1, 13, "\"Equal\": {}, \"Or\": {}, \"Not\": {}",
			    NULL, used, sizeof(used), chain, sizeof(chain)));
	CU_ASSERT_STRING_EQUAL(used, "");
	/* --passes: a chain through a pass left out is not taken */
	CU_ASSERT(!run_case("Softsign", 0, 13, "\"Relu\": {}, \"Add\": {}, \"Sub\": {}, "
			    "\"Div\": {}", "softsign", used, sizeof(used), chain, sizeof(chain)));
	CU_ASSERT_STRING_EQUAL(used, "");
}

/* The planner asks vcheck about ops other passes emit with a node that
 * is only an op type: no pass may read inputs that are not there. */
static void test_probe(void)
{
	static const int dtypes[] = { 0, IR_DTYPE_FLOAT, IR_DTYPE_FLOAT16, IR_DTYPE_INT64,
				      IR_DTYPE_INT32, IR_DTYPE_BOOL, IR_DTYPE_UINT8 };
	struct ir_model *m = one_op("Relu", 0, 17);
	struct rw_ctx c;
	struct ir_diag d;
	size_t asked = 0;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(rw_ctx_init(&c, m, NULL, &d) == 0);
	for (size_t i = 0; i < rw_n_passes; i++) {
		const struct rw_pass *p = rw_passes[i];

		for (const char *const *mt = p->matches; p->vcheck && mt && *mt; mt++) {
			const char *colon = strchr(*mt, ':');
			char dom[64] = "";
			struct ir_node probe;

			if (colon)
				snprintf(dom, sizeof(dom), "%.*s", (int)(colon - *mt), *mt);
			rw_probe_node(&probe, dom, colon ? colon + 1 : *mt);
			for (size_t k = 0; k < sizeof(dtypes) / sizeof(*dtypes); k++)
				for (size_t v = 0; v < p->n_variants; v++) {
					c.probe_dtype = dtypes[k];
					(void)p->vcheck(&c, &probe, (int)v);
					asked++;
				}
		}
	}
	CU_ASSERT(asked > 100);
	rw_ctx_release(&c);
	ir_model_free(m);
}

static const struct unit_test tests[] = {
	{ "chains of lowerings reach the target", test_chain },
	{ "exact, then cheapest, then fewest rewrites", test_preferences },
	{ "cycles end, --passes bounds the search", test_bounds },
	{ "every vcheck takes the planner's probe", test_probe },
	{ NULL, NULL },
};

int suite_plan_register(void)
{
	return unit_add_suite("plan", tests);
}
