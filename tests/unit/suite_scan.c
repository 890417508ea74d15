/* suite_scan.c: unit tests of the scanner: the format table is sorted,
 * status names round-trip, and a hand-built model against a hand-written
 * target gets the verdicts, reason codes and messages derived by hand from
 * the rules (op list, versions, dtypes, missing dtypes, ranks, attributes
 * with defaults, constant inputs, static shapes, severity), the model-level
 * findings, the rewrite hook's effect, the grouped table and the matrix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/ir.h"
#include "oprules/rules.h"
#include "scanner/report.h"
#include "scanner/scan.h"
#include "tests/unit/suites.h"
#include "tests/unit/tmodel.h"

static void test_formats_sorted(void)
{
	for (size_t i = 1; i < scan_n_formats; i++)
		CU_ASSERT(strcmp(scan_formats[i - 1].name, scan_formats[i].name) < 0);
	for (size_t i = 0; i < scan_n_formats; i++)
		CU_ASSERT_PTR_EQUAL(scan_format_find(scan_formats[i].name), &scan_formats[i]);
	CU_ASSERT_PTR_NULL(scan_format_find("pdf"));
}

static void test_status_names(void)
{
	CU_ASSERT(SCAN_SUPPORTED < SCAN_LIMITED && SCAN_LIMITED < SCAN_REWRITABLE &&
		  SCAN_REWRITABLE < SCAN_BLOCKED);
	for (int i = 0; i < SCAN_N_STATUS; i++)
		CU_ASSERT_EQUAL(scan_status_parse(scan_status_name((enum scan_status)i)), i);
	CU_ASSERT_EQUAL(scan_status_parse("partial"), -1);
}

/* The target of these tests, loaded from a temporary file. */
static const char target_json[] =
	"{\"schema\": 1, \"id\": \"unit\", \"sources\": [\"hand-written\"],\n"
	" \"opset\": [14, 17], \"missing_dtypes\": [\"int64\"], \"dynamic_shapes\": false,\n"
	" \"ops\": {\n"
	"  \"Relu\": {},\n"
	"  \"Cast\": {},\n"
	"  \"Conv\": {\"dtypes\": [\"float32\"], \"inputs\": {\"0\": {\"rank\": [4, 4]},\n"
	"            \"1\": {\"const\": true}}, \"attrs\": {\"dilations\": {\"max\": 1}}},\n"
	"  \"Softmax\": {\"severity\": \"limited\", \"attrs\": {\"axis\": {\"equals\": 1}}},\n"
	"  \"MatMul\": {\"inputs\": {\"0\": {\"rank\": [2, 2]}}},\n"
	"  \"Sigmoid\": {\"versions\": [1, 6]},\n"
	"  \"Add\": {\"dtypes\": [\"float16\"]},\n"
	"  \"Abs\": {\"static_shape\": true},\n"
	"  \"LeakyRelu\": {\"max_dim\": 4},\n"
	"  \"Tanh\": {\"supported\": false, \"notes\": \"no tanh unit\"}\n"
	" }}\n";

static int load_target(struct rules_db *db)
{
	char path[] = "/tmp/opmig-unit-scan-XXXXXX";
	struct ir_diag d;
	int fd = mkstemp(path), rc;
	FILE *f;

	rules_db_init(db);
	CU_ASSERT_FATAL(fd >= 0);
	f = fdopen(fd, "w");
	CU_ASSERT_FATAL(f != NULL);
	fputs(target_json, f);
	fclose(f);
	ir_diag_init(&d);
	rc = rules_load_file(path, db, &d);
	if (rc == 0)
		rc = rules_db_resolve(db, NULL, &d);
	unlink(path);
	if (rc)
		fprintf(stderr, "\nunit target: %s\n", d.msg);
	return rc;
}

#define W4 TM_DIMS(4, 3, 3, 3)

/* Node names are "Op_index" (tm_node). */
static struct ir_model *build(void)
{
	struct ir_model *m = tm_new(13);
	double w[108] = { 0 };
	struct ir_node *n;
	struct ir_type *ty;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 3, 8, 8), 4);
	tm_input(m, "wi", IR_DTYPE_FLOAT, W4, 4);
	tm_input(m, "m3", IR_DTYPE_FLOAT, TM_DIMS(2, 3, 4), 3);
	tm_input(m, "xd", IR_DTYPE_FLOAT, TM_DIMS(1, 4), 2);
	/* xd gets a symbolic batch dim */
	ty = m->graph->inputs[3].type;
	ty->shape.dims[0].kind = IR_DIM_PARAM;
	ty->shape.dims[0].param = strdup("N");
	tm_init(m, "w", IR_DTYPE_FLOAT, W4, 4, w);
	tm_node(m, "Relu", NULL, TM_NAMES("x"), 1, TM_NAMES("r"), 1);           /* 0 */
	n = tm_node(m, "Conv", NULL, TM_NAMES("r", "w"), 2, TM_NAMES("c1"), 1); /* 1 */
	CU_ASSERT_FATAL(ir_node_set_ints(n, "dilations", TM_DIMS(2, 2), 2) == 0);
	tm_node(m, "Conv", NULL, TM_NAMES("r", "wi"), 2, TM_NAMES("c2"), 1);    /* 2 */
	tm_node(m, "Softmax", NULL, TM_NAMES("c2"), 1, TM_NAMES("s"), 1);       /* 3 */
	tm_node(m, "Erf", NULL, TM_NAMES("s"), 1, TM_NAMES("e"), 1);            /* 4 */
	tm_node(m, "MatMul", NULL, TM_NAMES("m3", "m3t"), 2, TM_NAMES("mm"), 1);/* 5 */
	tm_node(m, "Sigmoid", NULL, TM_NAMES("e"), 1, TM_NAMES("sg"), 1);       /* 6 */
	n = tm_node(m, "Cast", NULL, TM_NAMES("sg"), 1, TM_NAMES("ci"), 1);     /* 7 */
	CU_ASSERT_FATAL(ir_node_set_int(n, "to", IR_DTYPE_INT64) == 0);
	tm_node(m, "Add", NULL, TM_NAMES("sg", "sg"), 2, TM_NAMES("ad"), 1);    /* 8 */
	tm_node(m, "Abs", NULL, TM_NAMES("xd"), 1, TM_NAMES("ab"), 1);          /* 9 */
	tm_node(m, "Tanh", NULL, TM_NAMES("ab"), 1, TM_NAMES("th"), 1);         /* 10 */
	/* m3t: the transpose of m3, computed, rank 3 */
	tm_node(m, "Transpose", NULL, TM_NAMES("m3"), 1, TM_NAMES("m3t0"), 1);  /* 11 */
	tm_node(m, "LeakyRelu", NULL, TM_NAMES("x"), 1, TM_NAMES("lr"), 1);      /* 12 */
	return m;
}

static struct ir_model *build_sorted(void)
{
	struct ir_model *m = build();
	struct ir_node *n;

	/* MatMul's second input: Transpose with perm (0,2,1) */
	n = m->graph->nodes[11];
	CU_ASSERT_FATAL(ir_node_set_ints(n, "perm", TM_DIMS(0, 2, 1), 3) == 0);
	n = m->graph->nodes[5];
	CU_ASSERT_FATAL(ir_node_set_input(n, 1, ir_graph_value(m->graph, "m3t0")) == 0);
	tm_output(m, "c1", IR_DTYPE_FLOAT, TM_DIMS(1, 4, 4, 4), 4);
	tm_output(m, "mm", IR_DTYPE_FLOAT, TM_DIMS(2, 3, 3), 3);
	tm_output(m, "ci", IR_DTYPE_INT64, TM_DIMS(1, 4, 6, 6), 4);
	tm_output(m, "ad", IR_DTYPE_FLOAT, TM_DIMS(1, 4, 6, 6), 4);
	tm_output(m, "th", IR_DTYPE_FLOAT, TM_DIMS(1, 4), 2);
	tm_output(m, "lr", IR_DTYPE_FLOAT, TM_DIMS(1, 3, 8, 8), 4);
	tm_verify(m);
	return m;
}

static const struct scan_verdict *verdict(const struct scan_result *r, const char *name)
{
	for (size_t i = 0; i < r->n_nodes; i++)
		if (!strcmp(r->nodes[i].label, name))
			return &r->targets[0].verdicts[i];
	CU_FAIL("node not found");
	return NULL;
}

/* The verdict of node `name` has status st and, when code is not NULL,
 * exactly one reason: code with message msg. */
static void expect(const struct scan_result *r, const char *name, enum scan_status st,
		   const char *code, const char *msg)
{
	const struct scan_verdict *v = verdict(r, name);

	if (!v)
		return;
	if (v->status != st || (code && (v->n_reasons != 1 || strcmp(v->reasons[0].code, code) ||
					 strcmp(v->reasons[0].message, msg))) ||
	    (!code && v->n_reasons)) {
		fprintf(stderr, "\n  %s: got %s", name, scan_status_name(v->status));
		for (size_t i = 0; i < v->n_reasons; i++)
			fprintf(stderr, " [%s: %s]", v->reasons[i].code, v->reasons[i].message);
		fprintf(stderr, "\n  want %s [%s: %s]\n", scan_status_name(st),
			code ? code : "-", msg ? msg : "-");
		CU_FAIL("unexpected verdict");
	}
}

static void test_verdicts(void)
{
	struct rules_db db;
	struct ir_model *m;
	struct scan_result r;
	struct ir_diag d;
	const struct rules_target *t;

	CU_ASSERT_FATAL(load_target(&db) == 0);
	t = rules_db_find(&db, "unit");
	CU_ASSERT_FATAL(t != NULL);
	m = build_sorted();
	ir_diag_init(&d);
	CU_ASSERT_FATAL(scan_model(m, "unit.onnx", &t, 1, NULL, &r, &d) == 0);
	CU_ASSERT_EQUAL(r.n_nodes, 13);
	CU_ASSERT_EQUAL(r.n_main_nodes, 13);
	expect(&r, "Relu_0", SCAN_SUPPORTED, NULL, NULL);
	expect(&r, "Conv_1", SCAN_BLOCKED, "attribute",
	       "attribute dilations is [2,2], above the target's maximum 1");
	expect(&r, "Conv_2", SCAN_BLOCKED, "input_not_constant",
	       "input 1 ('wi') must be a constant");
	/* Softmax-13's axis defaults to -1; severity limited */
	expect(&r, "Softmax_3", SCAN_LIMITED, "attribute",
	       "attribute axis is -1, the target needs 1");
	expect(&r, "Erf_4", SCAN_BLOCKED, "op_not_supported",
	       "Erf is not in the target's operator list");
	expect(&r, "MatMul_5", SCAN_BLOCKED, "rank",
	       "input 0 ('m3') has rank 3, the target accepts rank 2");
	expect(&r, "Sigmoid_6", SCAN_BLOCKED, "version_out_of_range",
	       "Sigmoid version 13 (opset 13) is outside the target's versions 1 to 6");
	expect(&r, "Cast_7", SCAN_BLOCKED, "dtype",
	       "output 0 ('ci') is int64, which the target lacks");
	CU_ASSERT_EQUAL(verdict(&r, "Add_8")->n_reasons, 3);   /* a, b, out */
	expect(&r, "Abs_9", SCAN_BLOCKED, "dynamic_shape",
	       "input 0 ('xd') is float[N,4], the target needs static shapes");
	expect(&r, "Tanh_10", SCAN_BLOCKED, "op_not_supported",
	       "Tanh is not supported by the target: no tanh unit");
	expect(&r, "Transpose_11", SCAN_BLOCKED, "op_not_supported",
	       "Transpose is not in the target's operator list");
	/* the first dim above max_dim 4 */
	expect(&r, "LeakyRelu_12", SCAN_BLOCKED, "rank",
	       "input 0 ('x') dim 2 is 8, above the target's maximum 4");
	CU_ASSERT_EQUAL(r.targets[0].counts.nodes, 13);
	CU_ASSERT_EQUAL(r.targets[0].counts.supported, 1);
	CU_ASSERT_EQUAL(r.targets[0].counts.limited, 1);
	CU_ASSERT_EQUAL(r.targets[0].counts.blocked, 11);
	/* Conv, Erf, MatMul, Sigmoid, Cast, Add, Abs, Tanh, Transpose, LeakyRelu */
	CU_ASSERT_EQUAL(r.targets[0].blocked_op_types, 10);
	/* model-level: opset 13 < 14, xd dynamic, int64 at run time */
	CU_ASSERT_EQUAL_FATAL(r.targets[0].n_findings, 3);
	CU_ASSERT_STRING_EQUAL(r.targets[0].findings[0].code, "opset_out_of_range");
	CU_ASSERT_STRING_EQUAL(r.targets[0].findings[0].message,
			       "the model imports ai.onnx opset 13, the target accepts 14 to 17");
	CU_ASSERT_STRING_EQUAL(r.targets[0].findings[1].code, "dynamic_input");
	CU_ASSERT_EQUAL(r.targets[0].findings[1].status, SCAN_BLOCKED);
	CU_ASSERT_STRING_EQUAL(r.targets[0].findings[2].code, "int64");
	CU_ASSERT_EQUAL(r.targets[0].findings[2].status, SCAN_BLOCKED);
	CU_ASSERT(scan_target_has(&r.targets[0], SCAN_BLOCKED));
	scan_result_release(&r);
	scan_result_release(&r);   /* twice is fine */
	ir_model_free(m);
	rules_db_release(&db);
}

static int n_hook_calls;

static int fake_rewrite(void *ctx, const struct rules_target *t, const struct scan_node *sn,
			const struct scan_verdict *v, const char **pass)
{
	(void)ctx;
	(void)t;
	n_hook_calls++;
	CU_ASSERT(v->status == SCAN_LIMITED || v->status == SCAN_BLOCKED);
	if (strcmp(sn->op_type, "Erf") && strcmp(sn->op_type, "Softmax"))
		return 0;
	*pass = "fake-pass";
	return 1;
}

static void test_rewrite_hook_and_views(void)
{
	struct rules_db db;
	struct ir_model *m;
	struct scan_result r;
	struct scan_options so = { .can_rewrite = fake_rewrite };
	const struct rules_target *ts[2];
	struct scan_group *g;
	struct scan_matrix mx;
	size_t ng;
	struct ir_diag d;

	CU_ASSERT_FATAL(load_target(&db) == 0);
	ts[0] = ts[1] = rules_db_find(&db, "unit");
	m = build_sorted();
	ir_diag_init(&d);
	n_hook_calls = 0;
	CU_ASSERT_FATAL(scan_model(m, NULL, ts, 2, &so, &r, &d) == 0);
	CU_ASSERT_EQUAL(n_hook_calls, 2 * 12);   /* every node but Relu, per target */
	CU_ASSERT_EQUAL(verdict(&r, "Erf_4")->status, SCAN_REWRITABLE);
	CU_ASSERT_STRING_EQUAL(verdict(&r, "Erf_4")->rewrite, "fake-pass");
	CU_ASSERT_EQUAL(verdict(&r, "Softmax_3")->status, SCAN_REWRITABLE);
	CU_ASSERT_EQUAL(r.targets[1].counts.rewritable, 2);
	CU_ASSERT_EQUAL(r.targets[1].counts.blocked, 10);
	CU_ASSERT_EQUAL(r.targets[1].counts.limited, 0);
	/* groups: Add has 3 dtype reasons, one group of count 1; blocked first */
	CU_ASSERT_FATAL(scan_groups_build(&r, 0, &g, &ng) == 0);
	CU_ASSERT_EQUAL(ng, 12);
	CU_ASSERT_STRING_EQUAL(g[0].op_type, "Abs");
	CU_ASSERT_STRING_EQUAL(g[1].op_type, "Add");
	CU_ASSERT_EQUAL(g[1].count, 1);
	CU_ASSERT_STRING_EQUAL(g[5].op_type, "LeakyRelu");
	CU_ASSERT_STRING_EQUAL(g[10].op_type, "Erf");
	CU_ASSERT_EQUAL(g[10].status, SCAN_REWRITABLE);
	CU_ASSERT_STRING_EQUAL(g[10].rewrite, "fake-pass");
	free(g);
	/* matrix: 12 op types (Conv twice), sorted, worst verdict */
	CU_ASSERT_FATAL(scan_matrix_build(&r, &mx) == 0);
	CU_ASSERT_EQUAL(mx.n_rows, 12);
	CU_ASSERT_STRING_EQUAL(mx.rows[3].op_type, "Conv");
	CU_ASSERT_EQUAL(mx.rows[3].count, 2);
	CU_ASSERT_EQUAL(mx.rows[3].status[1], SCAN_BLOCKED);
	CU_ASSERT_STRING_EQUAL(mx.rows[7].op_type, "Relu");
	CU_ASSERT_EQUAL(mx.rows[7].status[0], SCAN_SUPPORTED);
	scan_matrix_release(&mx);
	scan_result_release(&r);
	ir_model_free(m);
	rules_db_release(&db);
}

static const struct unit_test tests[] = {
	{ "format table sorted", test_formats_sorted },
	{ "status names", test_status_names },
	{ "hand-derived verdicts", test_verdicts },
	{ "rewrite hook, groups, matrix", test_rewrite_hook_and_views },
	{ NULL, NULL },
};

int suite_scan_register(void)
{
	return unit_add_suite("scan", tests);
}
