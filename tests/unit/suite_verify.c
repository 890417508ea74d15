/* suite_verify.c: the strict schema check (ir_model_check_schema): each
 * kind of fault on a one-node model at an opset where it is one, with the
 * exact message, and the same node valid where the version allows it;
 * function bodies by their own imports, subgraphs, the report callback;
 * and the rewriters' use of it (a pass that makes a node invalid fails
 * naming it; an input's faults are tolerated while passes run but the
 * migrated model is not written). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/infer.h"
#include "oprules/rules.h"
#include "rewriters/migrate.h"
#include "tests/unit/suites.h"
#include "tests/unit/tmodel.h"

struct faults {
	int n;
	char msg[8][512];
};

static int collect(void *ctx, const struct ir_node *n, const char *msg)
{
	struct faults *f = ctx;

	(void)n;
	if (f->n < 8)
		snprintf(f->msg[f->n], sizeof(f->msg[0]), "%s", msg);
	f->n++;
	return 0;
}

/* The strict check finds exactly the faults want[0..n) (each a message
 * or its start, in order). */
static void expect(struct ir_model *m, const char *const *want, int n)
{
	struct faults f = { 0 };
	struct ir_diag d;
	int rc;

	ir_diag_init(&d);
	rc = ir_model_check_schema(m, NULL, collect, &f, &d);
	CU_ASSERT_EQUAL(rc, f.n);
	if (rc != n) {
		fprintf(stderr, "\n%d faults, want %d:", rc, n);
		for (int i = 0; i < f.n && i < 8; i++)
			fprintf(stderr, "\n  %s", f.msg[i]);
		CU_FAIL("fault count");
		return;
	}
	for (int i = 0; i < n && i < 8; i++)
		if (strncmp(f.msg[i], want[i], strlen(want[i]))) {
			fprintf(stderr, "\nfault '%s', want '%s'", f.msg[i], want[i]);
			CU_FAIL("fault message");
		}
}

#define VALID(m) expect((m), NULL, 0)
#define FAULTS(m, ...) expect((m), TM_NAMES(__VA_ARGS__), (int)TM_NN(__VA_ARGS__))

/* x[1,1,4,4] -> op -> y at opset */
static struct ir_model *pool(int64_t opset, const char *op, struct ir_node **n)
{
	struct ir_model *m = tm_new(opset);

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 4, 4), 4);
	*n = tm_node(m, op, NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_ints(*n, "kernel_shape", TM_DIMS(3, 3), 2) == 0);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	return m;
}

static void add_raw_attr(struct ir_node *n, const char *name, int64_t v)
{
	struct ir_attr *a = calloc(1, sizeof(*a)), **p;

	CU_ASSERT_FATAL(a != NULL);
	a->name = strdup(name);
	a->type = IR_ATTR_INT;
	a->present = IR_ATTR_HAS_TYPE | IR_ATTR_HAS_I;
	a->i = v;
	p = realloc(n->attrs, (n->n_attrs + 1) * sizeof(*p));
	CU_ASSERT_FATAL(p != NULL && a->name != NULL);
	n->attrs = p;
	n->attrs[n->n_attrs++] = a;
}

static void test_attributes(void)
{
	struct ir_model *m;
	struct ir_node *n;

	/* ceil_mode came with AveragePool-10 */
	m = pool(9, "AveragePool", &n);
	CU_ASSERT_FATAL(ir_node_set_int(n, "ceil_mode", 1) == 0);
	FAULTS(m, "node 'AveragePool_0' (AveragePool): attribute 'ceil_mode' is not in AveragePool-7");
	ir_model_free(m);
	m = pool(10, "AveragePool", &n);
	CU_ASSERT_FATAL(ir_node_set_int(n, "ceil_mode", 1) == 0);
	VALID(m);
	/* names starting with "__" are an implementation's own */
	add_raw_attr(n, "__internal", 1);
	VALID(m);
	/* the same attribute twice */
	add_raw_attr(n, "ceil_mode", 0);
	FAULTS(m, "node 'AveragePool_0' (AveragePool): attribute 'ceil_mode' appears twice");
	ir_model_free(m);
	/* dilations: MaxPool-10, AveragePool-19 */
	m = pool(9, "MaxPool", &n);
	CU_ASSERT_FATAL(ir_node_set_ints(n, "dilations", TM_DIMS(1, 1), 2) == 0);
	FAULTS(m, "node 'MaxPool_0' (MaxPool): attribute 'dilations' is not in MaxPool-8");
	ir_model_free(m);
	m = pool(18, "AveragePool", &n);
	CU_ASSERT_FATAL(ir_node_set_ints(n, "dilations", TM_DIMS(1, 1), 2) == 0);
	FAULTS(m, "node 'AveragePool_0' (AveragePool): attribute 'dilations' is not in AveragePool-11");
	ir_model_free(m);
	/* a required attribute missing, one of the wrong type */
	m = pool(13, "MaxPool", &n);
	ir_node_remove_attr(n, "kernel_shape");
	FAULTS(m, "node 'MaxPool_0' (MaxPool): required attribute 'kernel_shape' of MaxPool-12 is missing");
	CU_ASSERT_FATAL(ir_node_set_float(n, "kernel_shape", 3) == 0);
	FAULTS(m, "node 'MaxPool_0' (MaxPool): attribute 'kernel_shape' is float, MaxPool-12 declares ints");
	ir_model_free(m);
	/* LayerNormalization-17 takes attributes it does not declare */
	m = tm_new(17);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3), 2);
	tm_init(m, "s", IR_DTYPE_FLOAT, TM_DIMS(3), 1, (const double[]){ 1, 1, 1 });
	n = tm_node(m, "LayerNormalization", NULL, TM_NAMES("x", "s"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	add_raw_attr(n, "not_declared", 1);
	VALID(m);
	ir_model_free(m);
}

static void test_slots(void)
{
	struct ir_model *m;
	struct ir_node *n;

	/* Clip-6 takes x alone, Clip-11 min and max as optional inputs */
	m = tm_new(9);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(4), 1);
	tm_init(m, "hi", IR_DTYPE_FLOAT, NULL, 0, (const double[]){ 1 });
	tm_node(m, "Clip", NULL, TM_NAMES("x", "", "hi"), 3, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	FAULTS(m, "node 'Clip_0' (Clip): 3 inputs, Clip-6 takes 1");
	m->opsets[0].version = 13;
	VALID(m);
	ir_model_free(m);
	/* "" where the version has no optional slot: Gemm's C before 11 */
	m = tm_new(9);
	tm_input(m, "a", IR_DTYPE_FLOAT, TM_DIMS(2, 3), 2);
	tm_input(m, "b", IR_DTYPE_FLOAT, TM_DIMS(3, 4), 2);
	tm_node(m, "Gemm", NULL, TM_NAMES("a", "b", ""), 3, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	FAULTS(m, "node 'Gemm_0' (Gemm): input 2 ('C') of Gemm-9 is not optional but is \"\"");
	m->opsets[0].version = 11;
	VALID(m);
	ir_model_free(m);
	/* too few inputs, too many outputs, a variadic input below its arity */
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(4), 1);
	tm_node(m, "Add", NULL, TM_NAMES("x"), 1, TM_NAMES("a"), 1);
	tm_node(m, "Dropout", NULL, TM_NAMES("a"), 1, TM_NAMES("b", "mask", "extra"), 3);
	n = tm_node(m, "Concat", NULL, NULL, 0, TM_NAMES("c"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "axis", 0) == 0);
	tm_output(m, "b", IR_DTYPE_FLOAT, NULL, 0);
	FAULTS(m, "node 'Add_0' (Add): 1 input, Add-13 takes 2",
	       "node 'Dropout_1' (Dropout): 3 outputs, Dropout-13 takes 1 to 2",
	       "node 'Concat_2' (Concat): 0 inputs, Concat-13 takes at least 1");
	ir_model_free(m);
	/* a deprecated version */
	m = tm_new(10);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 2, 2), 4);
	tm_init(m, "s", IR_DTYPE_FLOAT, TM_DIMS(4), 1, (const double[]){ 1, 1, 2, 2 });
	tm_node(m, "Upsample", NULL, TM_NAMES("x", "s"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	FAULTS(m, "node 'Upsample_0' (Upsample): Upsample-10 is deprecated");
	m->opsets[0].version = 9;
	VALID(m);
	ir_model_free(m);
}

/* A graph input declared optional(tensor(float)). */
static void make_optional(struct ir_model *m, size_t i)
{
	struct ir_type *t = calloc(1, sizeof(*t));

	CU_ASSERT_FATAL(t != NULL);
	t->kind = IR_TYPE_OPTIONAL;
	t->inner = m->graph->inputs[i].type;
	m->graph->inputs[i].type = t;
	m->graph->inputs[i].value->type = t;
}

static void test_types(void)
{
	struct ir_model *m;
	struct ir_node *n;

	/* Add-13 has no int8; Add-14 has */
	m = tm_new(13);
	tm_input(m, "a", IR_DTYPE_INT8, TM_DIMS(4), 1);
	tm_input(m, "b", IR_DTYPE_INT8, TM_DIMS(4), 1);
	tm_node(m, "Add", NULL, TM_NAMES("a", "b"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_INT8, NULL, 0);
	FAULTS(m, "node 'Add_0' (Add): input 0 ('a') is tensor(int8), which T of Add-13 does not allow",
	       "node 'Add_0' (Add): input 1 ('b') is tensor(int8), which T of Add-13 does not allow");
	/* as loaded, the types of a model inference rejects are left to
	 * inference's error */
	{
		struct ir_diag d;

		ir_diag_init(&d);
		CU_ASSERT_EQUAL(ir_model_check_loaded(m, NULL, NULL, &d), 0);
	}
	m->opsets[0].version = 14;
	VALID(m);
	ir_model_free(m);
	/* one type variable bound to two types */
	m = tm_new(14);
	tm_input(m, "a", IR_DTYPE_FLOAT, TM_DIMS(4), 1);
	tm_input(m, "b", IR_DTYPE_INT64, TM_DIMS(4), 1);
	tm_node(m, "Add", NULL, TM_NAMES("a", "b"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	FAULTS(m, "node 'Add_0' (Add): input 1 ('b') is tensor(int64) but input 0 is tensor(float): "
	       "T of Add-14 binds one type");
	ir_model_free(m);
	/* an output's type: Cast to bfloat16 came with Cast-13 */
	m = tm_new(9);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(4), 1);
	n = tm_node(m, "Cast", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "to", IR_DTYPE_BFLOAT16) == 0);
	tm_output(m, "y", IR_DTYPE_BFLOAT16, NULL, 0);
	FAULTS(m, "node 'Cast_0' (Cast): output 0 ('y') is tensor(bfloat16), which T2 of Cast-9 "
	       "does not allow");
	{       /* which inference accepts: the check as loaded finds it */
		struct ir_diag d;

		ir_diag_init(&d);
		CU_ASSERT_EQUAL(ir_model_check_loaded(m, NULL, NULL, &d), 1);
	}
	m->opsets[0].version = 13;
	VALID(m);
	ir_model_free(m);
	/* an optional, known by its declaration: Identity takes one from 16 */
	m = tm_new(15);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(4), 1);
	make_optional(m, 0);
	tm_node(m, "Identity", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	FAULTS(m, "node 'Identity_0' (Identity): input 0 ('x') is optional(tensor(float)), which V "
	       "of Identity-14 does not allow");
	m->opsets[0].version = 16;
	VALID(m);
	ir_model_free(m);
}

/* A model-local function's body is checked at its own imports; a call of
 * it, and ops the registry does not know, are not checked. */
static void test_scopes(void)
{
	struct ir_model *m = tm_new(13);
	struct ir_function *f = calloc(1, sizeof(*f));
	struct ir_opset *o;
	struct ir_node *n;

	CU_ASSERT_FATAL(f != NULL);
	o = realloc(m->opsets, 3 * sizeof(*o));
	CU_ASSERT_FATAL(o != NULL);
	m->opsets = o;
	m->opsets[2] = (struct ir_opset){ strdup("local"), 1, 1 };
	m->n_opsets = 3;
	f->name = strdup("F");
	f->domain = strdup("local");
	f->n_inputs = f->n_outputs = 1;
	f->inputs = calloc(2, sizeof(char *));
	f->outputs = calloc(2, sizeof(char *));
	f->inputs[0] = strdup("a");
	f->outputs[0] = strdup("b");
	f->n_opsets = 1;
	f->opsets = calloc(1, sizeof(*f->opsets));
	f->opsets[0] = (struct ir_opset){ strdup(""), 9, 1 };
	f->body = ir_graph_new(NULL);
	CU_ASSERT_FATAL(f->body != NULL);
	ir_graph_value(f->body, "a")->is_input = 1;
	n = ir_node_create("AveragePool", NULL, "inner");
	CU_ASSERT_FATAL(n != NULL);
	CU_ASSERT_FATAL(ir_node_append_input(n, ir_graph_value(f->body, "a")) == 0);
	CU_ASSERT_FATAL(ir_node_append_output(n, ir_graph_value(f->body, "b")) == 0);
	CU_ASSERT_FATAL(ir_graph_add_node(f->body, n) == 0);
	CU_ASSERT_FATAL(ir_node_set_ints(n, "kernel_shape", TM_DIMS(2, 2), 2) == 0);
	CU_ASSERT_FATAL(ir_node_set_int(n, "ceil_mode", 1) == 0);
	m->functions = calloc(1, sizeof(*m->functions));
	CU_ASSERT_FATAL(m->functions != NULL);
	m->functions[0] = f;
	m->n_functions = 1;
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 4, 4), 4);
	n = tm_node(m, "F", "local", TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	add_raw_attr(n, "anything", 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	/* the body imports opset 9 (AveragePool-7); the model's 13 would
	 * allow ceil_mode */
	FAULTS(m, "node 'inner' (AveragePool): attribute 'ceil_mode' is not in AveragePool-7");
	f->opsets[0].version = 13;
	VALID(m);
	ir_model_free(m);

	/* an op of an unknown domain, and one the registry does not know */
	m = tm_new(13);
	free(m->opsets[1].domain);
	m->opsets[1] = (struct ir_opset){ strdup("custom.x"), 1, 1 };
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(4), 1);
	n = tm_node(m, "Gen", "custom.x", TM_NAMES("x"), 1, TM_NAMES("a"), 1);
	add_raw_attr(n, "anything", 1);
	n = tm_node(m, "NotAnOnnxOp", NULL, TM_NAMES("a"), 1, TM_NAMES("y"), 1);
	add_raw_attr(n, "anything", 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	VALID(m);
	ir_model_free(m);
}

/* Nodes of a subgraph (an If branch) are checked too. */
static void test_subgraph(void)
{
	struct ir_model *m = tm_new(9);
	struct ir_graph *g;
	struct ir_node *iff, *n;
	struct ir_attr *a, **p;
	struct ir_vinfo *out;

	tm_input(m, "c", IR_DTYPE_BOOL, NULL, 0);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 4, 4), 4);
	iff = tm_node(m, "If", NULL, TM_NAMES("c"), 1, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	for (int branch = 0; branch < 2; branch++) {
		CU_ASSERT_FATAL((g = ir_graph_new(m->graph)) != NULL);
		g->owner = iff;
		n = ir_node_create("MaxPool", NULL, branch ? "else_pool" : "then_pool");
		CU_ASSERT_FATAL(n != NULL);
		CU_ASSERT_FATAL(ir_node_append_input(n, ir_graph_lookup(g, "x")) == 0);
		CU_ASSERT_FATAL(ir_node_append_output(n, ir_graph_value(g, branch ? "e" : "t")) == 0);
		CU_ASSERT_FATAL(ir_graph_add_node(g, n) == 0);
		CU_ASSERT_FATAL(ir_node_set_ints(n, "kernel_shape", TM_DIMS(2, 2), 2) == 0);
		if (branch)
			CU_ASSERT_FATAL(ir_node_set_int(n, "ceil_mode", 1) == 0);
		CU_ASSERT_FATAL((out = calloc(1, sizeof(*out))) != NULL);
		out->value = n->outputs[0];
		g->outputs = out;
		g->n_outputs = 1;
		CU_ASSERT_FATAL((a = calloc(1, sizeof(*a))) != NULL);
		a->name = strdup(branch ? "else_branch" : "then_branch");
		a->type = IR_ATTR_GRAPH;
		a->present = IR_ATTR_HAS_TYPE;
		a->g = g;
		CU_ASSERT_FATAL((p = realloc(iff->attrs, (iff->n_attrs + 1) * sizeof(*p))) != NULL);
		iff->attrs = p;
		iff->attrs[iff->n_attrs++] = a;
	}
	FAULTS(m, "node 'else_pool' (MaxPool): attribute 'ceil_mode' is not in MaxPool-8");
	ir_model_free(m);
}

static int stop_at_first(void *ctx, const struct ir_node *n, const char *msg)
{
	(void)n;
	(void)msg;
	++*(int *)ctx;
	return IR_EIO;
}

/* The report callback can stop the walk; ir_model_verify_strict says the
 * first fault and how many more. */
static void test_report(void)
{
	struct ir_node *n;
	struct ir_model *m = pool(9, "MaxPool", &n);
	struct ir_diag d;
	int calls = 0;

	CU_ASSERT_FATAL(ir_node_set_int(n, "ceil_mode", 1) == 0);
	CU_ASSERT_FATAL(ir_node_set_ints(n, "dilations", TM_DIMS(1, 1), 2) == 0);
	add_raw_attr(n, "bogus", 0);
	ir_diag_init(&d);
	CU_ASSERT_EQUAL(ir_model_check_schema(m, NULL, NULL, NULL, &d), 3);
	CU_ASSERT_EQUAL(ir_model_check_schema(m, NULL, stop_at_first, &calls, &d), IR_EIO);
	CU_ASSERT_EQUAL(calls, 1);
	ir_diag_init(&d);
	CU_ASSERT_EQUAL(ir_model_verify_strict(m, NULL, &d), IR_EINVAL);
	CU_ASSERT_STRING_EQUAL(d.msg, "node 'MaxPool_0' (MaxPool): attribute 'ceil_mode' is not in "
			       "MaxPool-8 (and 2 more faults)");
	ir_model_free(m);
}

/* A pass that makes a node invalid fails, naming it; a fault the input
 * had is tolerated while passes run, but the result is not valid. */
static void test_rewriters(void)
{
	struct ir_model *m;
	struct rules_target t;
	struct rw_ctx c;
	struct ir_diag d;
	struct mg_opts o;
	struct mg_report r;
	struct ir_node *n;

	memset(&t, 0, sizeof(t));
	t.id = (char *)"test";
	t.max_rank = -1;
	m = pool(9, "MaxPool", &n);
	ir_diag_init(&d);
	CU_ASSERT_FATAL(rw_ctx_init(&c, m, &t, &d) == 0);
	CU_ASSERT_FATAL(ir_node_set_int(n, "ceil_mode", 1) == 0);
	c.pass = "some-pass";
	CU_ASSERT_EQUAL(rw_refresh(&c), IR_EINVAL);
	CU_ASSERT(c.invalid);
	CU_ASSERT_STRING_EQUAL(d.msg, "the rewritten model is invalid after pass some-pass: node "
			       "'MaxPool_0' (MaxPool): attribute 'ceil_mode' is not in MaxPool-8");
	rw_ctx_release(&c);
	/* the same fault in the input: passes go on, nothing is written */
	ir_diag_init(&d);
	CU_ASSERT_FATAL(rw_ctx_init(&c, m, &t, &d) == 0);
	CU_ASSERT_EQUAL(rw_refresh(&c), 0);
	CU_ASSERT(!c.invalid);
	rw_ctx_release(&c);
	memset(&o, 0, sizeof(o));
	o.target = &t;
	ir_diag_init(&d);
	CU_ASSERT_FATAL(mg_run(m, NULL, "m.onnx", &o, &r, &d) == 0);
	CU_ASSERT(r.invalid);
	CU_ASSERT(!r.ok);
	CU_ASSERT_STRING_EQUAL(r.why, "the migrated model is invalid: node 'MaxPool_0' (MaxPool): "
			       "attribute 'ceil_mode' is not in MaxPool-8, as in the input model");
	mg_report_release(&r);
	/* without it, the model is valid */
	ir_node_remove_attr(n, "ceil_mode");
	ir_diag_init(&d);
	CU_ASSERT_FATAL(mg_run(m, NULL, "m.onnx", &o, &r, &d) == 0);
	CU_ASSERT(!r.invalid);
	mg_report_release(&r);
	ir_model_free(m);
}

static const struct unit_test tests[] = {
	{ "attributes against the version", test_attributes },
	{ "inputs and outputs against the version", test_slots },
	{ "type constraints against inferred dtypes", test_types },
	{ "function bodies at their own imports", test_scopes },
	{ "subgraphs", test_subgraph },
	{ "the report callback and the one-error form", test_report },
	{ "the rewriters: passes and the written model", test_rewriters },
	{ NULL, NULL },
};

int suite_verify_register(void)
{
	return unit_add_suite("verify", tests);
}
