/* suite_ir.c: unit tests of the in-memory IR: dtype sizes, element counts,
 * the value table and scopes, topological sort and cycle detection,
 * external-data path safety, and the verifier's checks of required inputs
 * and of attributes a function call passes by reference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/ir.h"
#include "ir/ir_int.h"
#include "tests/unit/suites.h"
#include "tests/unit/tmodel.h"

static void test_dtype_sizes(void)
{
	CU_ASSERT_EQUAL(ir_dtype_raw_size(IR_DTYPE_FLOAT, 3), 12);
	CU_ASSERT_EQUAL(ir_dtype_raw_size(IR_DTYPE_COMPLEX128, 2), 32);
	CU_ASSERT_EQUAL(ir_dtype_raw_size(IR_DTYPE_INT4, 3), 2);
	CU_ASSERT_EQUAL(ir_dtype_raw_size(IR_DTYPE_UINT4, 4), 2);
	CU_ASSERT_EQUAL(ir_dtype_raw_size(IR_DTYPE_BOOL, 5), 5);
	CU_ASSERT_EQUAL(ir_dtype_raw_size(IR_DTYPE_STRING, 1), -1);
	CU_ASSERT_EQUAL(ir_dtype_raw_size(99, 1), -1);
	CU_ASSERT_EQUAL(ir_dtype_raw_size(IR_DTYPE_DOUBLE, INT64_MAX / 4), -1);
	CU_ASSERT_STRING_EQUAL(ir_dtype_name(IR_DTYPE_BFLOAT16), "bfloat16");
	CU_ASSERT_STRING_EQUAL(ir_dtype_name(IR_DTYPE_FLOAT8E5M2), "float8e5m2");
	CU_ASSERT_STRING_EQUAL(ir_dtype_name(77), "unknown");
	CU_ASSERT_STRING_EQUAL(ir_attr_type_name(IR_ATTR_SPARSE_TENSORS), "sparse_tensors");
}

static void test_numel(void)
{
	int64_t dims[3] = { 2, 3, 4 };
	struct ir_tensor t = { .dtype = IR_DTYPE_FLOAT, .n_dims = 3, .dims = dims };

	CU_ASSERT_EQUAL(ir_tensor_numel(&t), 24);
	CU_ASSERT_EQUAL(ir_tensor_nbytes(&t), 96);
	dims[1] = -1;
	CU_ASSERT_EQUAL(ir_tensor_numel(&t), -1);
	dims[0] = dims[1] = dims[2] = (int64_t)1 << 30;
	CU_ASSERT_EQUAL(ir_tensor_numel(&t), -1);
	t.n_dims = 0;
	CU_ASSERT_EQUAL(ir_tensor_numel(&t), 1);
}

static void test_value_table(void)
{
	struct ir_graph *g = ir_graph_new(NULL), *sub;
	char name[32];

	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	for (int i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "v%d", i);
		CU_ASSERT_PTR_NOT_NULL(ir_graph_value(g, name));
	}
	CU_ASSERT_EQUAL(g->n_values, 2000);
	CU_ASSERT_PTR_EQUAL(ir_graph_value(g, "v7"), ir_graph_find(g, "v7"));
	CU_ASSERT_EQUAL(g->n_values, 2000);
	CU_ASSERT_STRING_EQUAL(g->value_list[1999]->name, "v1999");
	CU_ASSERT_PTR_NULL(ir_graph_find(g, "nope"));
	sub = ir_graph_new(g);
	CU_ASSERT_PTR_NULL(ir_graph_find(sub, "v3"));
	CU_ASSERT_PTR_EQUAL(ir_graph_lookup(sub, "v3"), ir_graph_find(g, "v3"));
	ir_graph_free(sub);
	ir_graph_free(g);
	ir_graph_free(NULL);
	ir_model_free(NULL);
}

/* Add node `name` computing `out` from `in` (NULL: no input). */
static struct ir_node *add(struct ir_graph *g, const char *name,
			   const char *in, const char *out)
{
	struct ir_node *n = calloc(1, sizeof(*n));

	n->name = strdup(name);
	n->op_type = strdup("Relu");
	n->inputs = calloc(1, sizeof(*n->inputs));
	n->outputs = calloc(1, sizeof(*n->outputs));
	ir_graph_add_node(g, n);
	if (in) {
		n->inputs[0] = ir_graph_value(g, in);
		n->n_inputs = 1;
		ir_value_add_use(n->inputs[0], n);
	}
	n->outputs[0] = ir_graph_value(g, out);
	n->outputs[0]->producer = n;
	n->n_outputs = 1;
	return n;
}

static void test_toposort(void)
{
	struct ir_graph *g = ir_graph_new(NULL);
	struct ir_diag d;

	ir_diag_init(&d);
	ir_graph_value(g, "x")->is_input = 1;
	add(g, "c", "b", "y");
	add(g, "b", "a", "b");
	add(g, "a", "x", "a");
	CU_ASSERT_FALSE(ir_graph_is_sorted(g));
	CU_ASSERT_EQUAL(ir_graph_toposort(g, &d), 0);
	CU_ASSERT_STRING_EQUAL(g->nodes[0]->name, "a");
	CU_ASSERT_STRING_EQUAL(g->nodes[1]->name, "b");
	CU_ASSERT_STRING_EQUAL(g->nodes[2]->name, "c");
	CU_ASSERT_EQUAL(g->nodes[2]->index, 2);
	CU_ASSERT_TRUE(ir_graph_is_sorted(g));
	ir_graph_free(g);

	g = ir_graph_new(NULL);
	add(g, "p", "q_out", "p_out");
	add(g, "q", "p_out", "q_out");
	CU_ASSERT_EQUAL(ir_graph_toposort(g, &d), IR_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "cycle"));
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "node 'p' (Relu)"));
	ir_graph_free(g);
}

static void test_path_safety(void)
{
	char dir[] = "/tmp/opmig-unit-XXXXXX", buf[512];
	struct ir_diag d;
	char *out = NULL;
	FILE *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(buf, sizeof(buf), "%s/m", dir);
	mkdir(buf, 0755);
	snprintf(buf, sizeof(buf), "%s/m/w.bin", dir);
	f = fopen(buf, "w");
	fclose(f);
	snprintf(buf, sizeof(buf), "%s/secret", dir);
	f = fopen(buf, "w");
	fclose(f);
	snprintf(buf, sizeof(buf), "%s/m/link", dir);
	CU_ASSERT_EQUAL(symlink("../secret", buf), 0);
	snprintf(buf, sizeof(buf), "%s/m", dir);

	ir_diag_init(&d);
	CU_ASSERT_EQUAL(ir_path_resolve_inside(buf, "w.bin", &out, &d), 0);
	CU_ASSERT_PTR_NOT_NULL(out && strstr(out, "/m/w.bin"));
	free(out);
	CU_ASSERT_EQUAL(ir_path_resolve_inside(buf, "./sub/../w.bin", &out, &d), IR_EINVAL);
	ir_diag_init(&d);
	CU_ASSERT_EQUAL(ir_path_resolve_inside(buf, "../secret", &out, &d), IR_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "escapes"));
	ir_diag_init(&d);
	CU_ASSERT_EQUAL(ir_path_resolve_inside(buf, "/etc/passwd", &out, &d), IR_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "absolute"));
	ir_diag_init(&d);
	CU_ASSERT_EQUAL(ir_path_resolve_inside(buf, "link", &out, &d), IR_EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, "outside"));
	ir_diag_init(&d);
	CU_ASSERT_EQUAL(ir_path_resolve_inside(buf, "missing.bin", &out, &d), IR_EINVAL);
	CU_ASSERT_PTR_NULL(out);
	snprintf(buf, sizeof(buf), "rm -rf '%s'", dir);
	CU_ASSERT_EQUAL(system(buf), 0);
}

/* ir_model_verify fails with a message containing each of want[]. */
static void verify_fails(struct ir_model *m, const char *const *want, size_t n)
{
	struct ir_diag d;

	ir_diag_init(&d);
	CU_ASSERT_EQUAL(ir_model_verify(m, &d), IR_EINVAL);
	for (size_t i = 0; i < n; i++)
		if (!strstr(d.msg, want[i])) {
			fprintf(stderr, "\nverify: '%s' lacks '%s'\n", d.msg, want[i]);
			CU_FAIL("message");
		}
}

static void test_verify_required_inputs(void)
{
	struct ir_model *m = tm_new(13);
	struct ir_node *n;

	/* SequenceInsert(s, ""): the tensor to insert is absent */
	tm_node(m, "SequenceEmpty", NULL, NULL, 0, TM_NAMES("s"), 1);
	tm_node(m, "SequenceInsert", NULL, TM_NAMES("s", ""), 2, TM_NAMES("y"), 1);
	verify_fails(m, TM_NAMES("node 'SequenceInsert_1' (SequenceInsert): ",
				 "missing required input 'tensor' of SequenceInsert-11"), 2);
	ir_model_free(m);

	/* Add with one input */
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2), 1);
	tm_node(m, "Add", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	verify_fails(m, TM_NAMES("node 'Add_0' (Add): missing required input 'B' of Add-13"), 1);
	ir_model_free(m);

	/* a variadic input below its minimum arity */
	m = tm_new(13);
	n = tm_node(m, "Concat", NULL, NULL, 0, TM_NAMES("y"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "axis", 0) == 0);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	verify_fails(m, TM_NAMES("missing required input 'inputs' of Concat-13"), 1);
	ir_model_free(m);
}

static void test_verify_inputs_accepted(void)
{
	struct ir_model *m = tm_new(13);
	struct ir_node *n;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2), 1);
	tm_init(m, "hi", IR_DTYPE_FLOAT, NULL, 0, (const double[]){ 1 });
	/* an optional input in the middle given as "" */
	tm_node(m, "Clip", NULL, TM_NAMES("x", "", "hi"), 3, TM_NAMES("c"), 1);
	/* a variadic input with its minimum arity and no more */
	n = tm_node(m, "Concat", NULL, TM_NAMES("c"), 1, TM_NAMES("k"), 1);
	CU_ASSERT_FATAL(ir_node_set_int(n, "axis", 0) == 0);
	tm_node(m, "Max", NULL, TM_NAMES("k"), 1, TM_NAMES("y"), 1);
	/* trailing optional inputs left out */
	tm_node(m, "Clip", NULL, TM_NAMES("y"), 1, TM_NAMES("z"), 1);
	tm_output(m, "z", IR_DTYPE_FLOAT, NULL, 0);
	tm_verify(m);
	ir_model_free(m);

	/* an op the registry does not know, without inputs */
	m = tm_new(13);
	free(m->opsets[1].domain);
	m->opsets[1] = (struct ir_opset){ strdup("custom.x"), 1, 1 };
	tm_node(m, "Gen", "custom.x", NULL, 0, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	tm_verify(m);
	ir_model_free(m);
}

/* Model-local function local.F(a, b) -> y with attribute 'ax': its body
 * node `op` (domain dom) reads attribute `attr` of declared type `type`
 * from the call's 'ax'; the main graph calls F(x, x). */
static struct ir_model *ref_model(const char *op, const char *dom,
				  const char *attr, int type,
				  struct ir_node **call)
{
	struct ir_model *m = tm_new(13);
	struct ir_function *f = calloc(1, sizeof(*f));
	struct ir_node *n;
	struct ir_attr *a;

	CU_ASSERT_FATAL(f != NULL);
	m->opsets = realloc(m->opsets, 3 * sizeof(*m->opsets));
	CU_ASSERT_FATAL(m->opsets != NULL);
	m->opsets[2] = (struct ir_opset){ strdup("local"), 1, 1 };
	m->n_opsets = 3;
	f->name = strdup("F");
	f->domain = strdup("local");
	f->n_inputs = 2;
	f->inputs = calloc(3, sizeof(char *));
	f->inputs[0] = strdup("a");
	f->inputs[1] = strdup("b");
	f->n_outputs = 1;
	f->outputs = calloc(2, sizeof(char *));
	f->outputs[0] = strdup("y");
	f->n_attr_names = 1;
	f->attr_names = calloc(2, sizeof(char *));
	f->attr_names[0] = strdup("ax");
	f->n_opsets = 2;
	f->opsets = calloc(2, sizeof(*f->opsets));
	f->opsets[0] = (struct ir_opset){ strdup(""), 13, 1 };
	f->opsets[1] = (struct ir_opset){ strdup("local"), 1, 1 };
	f->body = ir_graph_new(NULL);
	CU_ASSERT_FATAL(f->body != NULL);
	ir_graph_value(f->body, "a")->is_input = 1;
	ir_graph_value(f->body, "b")->is_input = 1;
	n = ir_node_create(op, dom, "body");
	CU_ASSERT_FATAL(n != NULL);
	CU_ASSERT_FATAL(ir_node_append_input(n, ir_graph_value(f->body, "a")) == 0);
	CU_ASSERT_FATAL(ir_node_append_input(n, ir_graph_value(f->body, "b")) == 0);
	CU_ASSERT_FATAL(ir_node_append_output(n, ir_graph_value(f->body, "y")) == 0);
	CU_ASSERT_FATAL(ir_graph_add_node(f->body, n) == 0);
	CU_ASSERT_FATAL(ir_node_set_int(n, attr, 0) == 0);
	a = (struct ir_attr *)ir_node_attr(n, attr);
	a->present &= ~IR_ATTR_HAS_I;
	a->type = type;
	if (!type)
		a->present &= ~IR_ATTR_HAS_TYPE;
	a->ref_attr_name = strdup("ax");
	m->functions = calloc(1, sizeof(*m->functions));
	CU_ASSERT_FATAL(m->functions != NULL);
	m->functions[0] = f;
	m->n_functions = 1;
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2), 1);
	*call = tm_node(m, "F", "local", TM_NAMES("x", "x"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	return m;
}

static void test_verify_ref_attr_types(void)
{
	struct ir_node *call;
	struct ir_model *m;

	/* a float where Concat reads its int axis (the schema's type) */
	m = ref_model("Concat", NULL, "axis", IR_ATTR_INT, &call);
	CU_ASSERT_FATAL(ir_node_set_float(call, "ax", 1e30f) == 0);
	verify_fails(m, TM_NAMES("node 'F_0' (F): attribute 'ax' is float but function 'F' reads it as int",
				 "node 'body' (Concat), attribute 'axis'"), 2);
	/* the schema decides even when the reference declares otherwise */
	ir_model_free(m);
	m = ref_model("Concat", NULL, "axis", IR_ATTR_FLOAT, &call);
	CU_ASSERT_FATAL(ir_node_set_float(call, "ax", 1) == 0);
	verify_fails(m, TM_NAMES("'ax' is float but function 'F' reads it as int"), 1);
	ir_model_free(m);
	/* the right type passes, and so does a call without the attribute */
	m = ref_model("Concat", NULL, "axis", IR_ATTR_INT, &call);
	tm_verify(m);
	CU_ASSERT_FATAL(ir_node_set_int(call, "ax", 0) == 0);
	tm_verify(m);
	ir_model_free(m);

	/* no schema (an op of the function's own domain): the declared type */
	m = ref_model("G", "local", "k", IR_ATTR_INTS, &call);
	CU_ASSERT_FATAL(ir_node_set_int(call, "ax", 3) == 0);
	verify_fails(m, TM_NAMES("attribute 'ax' is int but function 'F' reads it as ints",
				 "node 'body' (G), attribute 'k'"), 2);
	ir_model_free(m);
	/* neither a schema nor a declared type: nothing to check */
	m = ref_model("G", "local", "k", 0, &call);
	CU_ASSERT_FATAL(ir_node_set_int(call, "ax", 3) == 0);
	tm_verify(m);
	ir_model_free(m);
}

/* The fuzz regressions that found these gaps load no more. */
static void test_verify_fuzz_regressions(void)
{
	static const char *const cases[][2] = {
		{ "infer-seqinsert-absent-tensor",
		  "(SequenceInsert): missing required input 'tensor' of SequenceInsert-11" },
		{ "infer-attr-float-to-int",
		  "(F): attribute 'ax' is float but function 'F' reads it as int (node '' (Concat), attribute 'axis')" },
	};
	char path[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ir_model *m = NULL;
		struct ir_diag d;

		snprintf(path, sizeof(path), "tests/fuzz/regressions/model/%s", cases[i][0]);
		ir_diag_init(&d);
		CU_ASSERT_EQUAL(ir_model_load(path, NULL, &m, &d), IR_EINVAL);
		CU_ASSERT_PTR_NOT_NULL(strstr(d.msg, cases[i][1]));
		ir_model_free(m);
	}
}

static const struct unit_test tests[] = {
	{ "dtype sizes and names", test_dtype_sizes },
	{ "element counts overflow", test_numel },
	{ "value table and scopes", test_value_table },
	{ "toposort and cycles", test_toposort },
	{ "external data path safety", test_path_safety },
	{ "verify: required inputs missing", test_verify_required_inputs },
	{ "verify: optional, variadic and unknown-op inputs", test_verify_inputs_accepted },
	{ "verify: types of attributes passed by reference", test_verify_ref_attr_types },
	{ "verify: fuzz regressions rejected", test_verify_fuzz_regressions },
	{ NULL, NULL },
};

int suite_ir_register(void)
{
	return unit_add_suite("ir", tests);
}
