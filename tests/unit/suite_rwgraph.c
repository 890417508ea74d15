/* suite_rwgraph.c: the graph passes as property tests.  Opset conversion:
 * a one-op model at the old opset is converted for a target whose range
 * forces the new one; the node must now resolve to the new version and
 * both models (each run by the interpreter's kernel of its own version)
 * must agree exactly on seeded inputs.  Also constant folding, static
 * dims, NHWC interfaces and Transpose cancellation against hand-derived
 * expectations. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/rewrite.h"
#include "validators/compare.h"
#include "tests/unit/suites.h"
#include "tests/unit/tmodel.h"

/* Run pass `name` on m for a target whose default-domain opset range is
 * [lo, hi] (and that accepts nothing else: no decomposition applies). */
static size_t run_pass(struct ir_model *m, const char *name, int lo, int hi,
		       struct rw_ctx *c, struct rules_target *t, struct ir_diag *d)
{
	size_t changed = 0;

	memset(t, 0, sizeof(*t));
	t->id = (char *)"test";
	t->opset_min = lo;
	t->opset_max = hi;
	t->max_rank = -1;
	ir_diag_init(d);
	CU_ASSERT_FATAL(rw_ctx_init(c, m, t, d) == 0);
	if (rw_run(c, rw_pass_find(name), &changed) < 0)
		fprintf(stderr, "\n%s: %s\n", name, d->msg);
	CU_ASSERT_FATAL(d->status == 0);
	return changed;
}

static double diff(struct rt_value *a, struct rt_value *b)
{
	struct rt_cmp_opts o = { 0, 0 };
	struct rt_metrics mt;

	rt_compare(a, b, &o, &mt);
	CU_ASSERT(mt.n == b->numel);
	return isnan(mt.max_abs) ? INFINITY : mt.max_abs;
}

/* Convert m to [lo, hi]; the op must resolve to since_version `want`
 * afterwards and the outputs agree within tol. */
static void convert_case(struct ir_model *m, const char *op, int lo, int hi, int want,
			 double tol)
{
	struct rt_value *before[4] = { 0 }, *after[4] = { 0 };
	size_t no = m->graph->n_outputs;
	const struct ir_op_schema *s;
	struct rules_target t;
	struct rw_ctx c;
	struct ir_diag d;
	int64_t opset;

	tm_verify(m);
	CU_ASSERT_FATAL(no >= 1 && no <= 4);
	CU_ASSERT_FATAL(tm_run(m, 21, before, no) == 0);
	CU_ASSERT(run_pass(m, "opset-convert", lo, hi, &c, &t, &d) > 0);
	opset = ir_model_opset(m, "");
	CU_ASSERT(opset == lo || opset == hi);
	s = ir_registry_find("", op, opset);
	CU_ASSERT_FATAL(s != NULL);
	if (s->since_version != want)
		fprintf(stderr, "\n%s: version %d, want %d\n", op, s->since_version, want);
	CU_ASSERT(s->since_version == want);
	for (size_t i = 0; i < c.n_notes; i++)
		fprintf(stderr, "\nnote: %s\n", c.notes[i]);
	CU_ASSERT(c.n_notes == 0);
	CU_ASSERT_FATAL(tm_run(m, 21, after, no) == 0);
	for (size_t i = 0; i < no; i++) {
		CU_ASSERT(diff(after[i], before[i]) <= tol);
		rt_value_unref(before[i]);
		rt_value_unref(after[i]);
	}
	rw_ctx_release(&c);
	ir_model_free(m);
}

static struct ir_model *unary(int opset, const char *op, const int64_t *dims, size_t n,
			      struct ir_node **node)
{
	struct ir_model *m = tm_new(opset);

	tm_input(m, "x", IR_DTYPE_FLOAT, dims, n);
	*node = tm_node(m, op, NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	return m;
}

static void test_opset_up(void)
{
	struct ir_model *m;
	struct ir_node *n;

	/* Slice 1 (attributes) -> 10+ (inputs) */
	m = unary(9, "Slice", TM_DIMS(4, 6), 2, &n);
	ir_node_set_ints(n, "starts", TM_DIMS(1, -4), 2);
	ir_node_set_ints(n, "ends", TM_DIMS(3, 1000), 2);
	ir_node_set_ints(n, "axes", TM_DIMS(0, 1), 2);
	convert_case(m, "Slice", 13, 17, 13, 0);
	/* Clip 6 (min/max attributes) -> 11+ (inputs) */
	m = unary(9, "Clip", TM_DIMS(3, 5), 2, &n);
	ir_node_set_float(n, "min", -0.5f);
	ir_node_set_float(n, "max", 1.25f);
	convert_case(m, "Clip", 11, 17, 11, 0);
	/* only max */
	m = unary(9, "Clip", TM_DIMS(7), 1, &n);
	ir_node_set_float(n, "max", 0.5f);
	convert_case(m, "Clip", 13, 17, 13, 0);
	/* Pad 2 (attributes) -> 11+ */
	m = unary(9, "Pad", TM_DIMS(2, 3), 2, &n);
	ir_node_set_ints(n, "pads", TM_DIMS(1, 0, 2, 3), 4);
	ir_node_set_float(n, "value", 1.5f);
	convert_case(m, "Pad", 11, 17, 11, 0);
	m = unary(9, "Pad", TM_DIMS(2, 5), 2, &n);
	ir_node_set_ints(n, "pads", TM_DIMS(0, 2, 0, 1), 4);
	ir_node_set_string(n, "mode", "reflect");
	convert_case(m, "Pad", 13, 17, 13, 0);
	/* Softmax 1 coerced to 2-D at axis 1 of a rank-3 input -> 13 */
	m = unary(11, "Softmax", TM_DIMS(2, 3, 4), 3, &n);
	convert_case(m, "Softmax", 13, 17, 13, 1e-6);
	m = unary(9, "LogSoftmax", TM_DIMS(2, 3, 4), 3, &n);
	ir_node_set_int(n, "axis", 0);
	convert_case(m, "LogSoftmax", 13, 17, 13, 1e-5);
	m = unary(11, "Hardmax", TM_DIMS(3, 4), 2, &n);
	convert_case(m, "Hardmax", 13, 17, 13, 0);
	/* Unsqueeze/Squeeze axes attribute -> input (13) */
	m = unary(11, "Unsqueeze", TM_DIMS(3, 4), 2, &n);
	ir_node_set_ints(n, "axes", TM_DIMS(0, 3), 2);
	convert_case(m, "Unsqueeze", 13, 17, 13, 0);
	m = unary(11, "Squeeze", TM_DIMS(3, 1, 4, 1), 4, &n);
	ir_node_set_ints(n, "axes", TM_DIMS(1, -1), 2);
	convert_case(m, "Squeeze", 13, 17, 13, 0);
	/* ReduceSum 13 axes input; ReduceMean 18 */
	m = unary(11, "ReduceSum", TM_DIMS(3, 4, 2), 3, &n);
	ir_node_set_ints(n, "axes", TM_DIMS(0, 2), 2);
	convert_case(m, "ReduceSum", 13, 17, 13, 1e-6);
	m = unary(13, "ReduceMean", TM_DIMS(3, 4, 2), 3, &n);
	ir_node_set_ints(n, "axes", TM_DIMS(1), 1);
	ir_node_set_int(n, "keepdims", 0);
	convert_case(m, "ReduceMean", 18, 18, 18, 1e-6);
	/* Upsample 9 -> Resize 13 */
	m = tm_new(9);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 2, 3, 4), 4);
	tm_init(m, "s", IR_DTYPE_FLOAT, TM_DIMS(4), 1, (const double[]){ 1, 1, 2, 3 });
	n = tm_node(m, "Upsample", NULL, TM_NAMES("x", "s"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	convert_case(m, "Resize", 13, 17, 13, 0);
	/* BatchNormalization 7 with spatial=1 -> 15 */
	m = tm_new(7);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3, 2, 2), 4);
	tm_init(m, "sc", IR_DTYPE_FLOAT, TM_DIMS(3), 1, (const double[]){ 1, 2, 0.5 });
	tm_init(m, "b", IR_DTYPE_FLOAT, TM_DIMS(3), 1, (const double[]){ 0, 1, -1 });
	tm_init(m, "mu", IR_DTYPE_FLOAT, TM_DIMS(3), 1, (const double[]){ 0.1, 0.2, 0.3 });
	tm_init(m, "var", IR_DTYPE_FLOAT, TM_DIMS(3), 1, (const double[]){ 1, 2, 3 });
	n = tm_node(m, "BatchNormalization", NULL, TM_NAMES("x", "sc", "b", "mu", "var"), 5,
		    TM_NAMES("y"), 1);
	ir_node_set_int(n, "spatial", 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	convert_case(m, "BatchNormalization", 15, 17, 15, 0);
}

static void test_opset_down(void)
{
	struct ir_model *m;
	struct ir_node *n;

	/* ReduceMean 18 (axes input) -> 17 (attribute) */
	m = tm_new(18);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(3, 4, 2), 3);
	tm_init(m, "ax", IR_DTYPE_INT64, TM_DIMS(2), 1, (const double[]){ 0, -1 });
	tm_node(m, "ReduceMean", NULL, TM_NAMES("x", "ax"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	convert_case(m, "ReduceMean", 11, 17, 13, 1e-6);
	/* Softmax 13 along axis 0 -> 11 (Transposes around the last axis) */
	m = unary(13, "Softmax", TM_DIMS(3, 2, 4), 3, &n);
	ir_node_set_int(n, "axis", 0);
	convert_case(m, "Softmax", 11, 11, 11, 1e-6);
	/* Split 18 num_outputs, even -> 13 */
	m = tm_new(18);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(6, 2), 2);
	n = tm_node(m, "Split", NULL, TM_NAMES("x"), 1, TM_NAMES("y", "z"), 2);
	ir_node_set_int(n, "num_outputs", 2);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "z", IR_DTYPE_FLOAT, NULL, 0);
	convert_case(m, "Split", 13, 17, 13, 0);
	/* Slice 13 (constant inputs, steps 1) -> 9 (attributes) */
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(5, 4), 2);
	tm_init(m, "st", IR_DTYPE_INT64, TM_DIMS(1), 1, (const double[]){ 1 });
	tm_init(m, "en", IR_DTYPE_INT64, TM_DIMS(1), 1, (const double[]){ 4 });
	tm_init(m, "ax", IR_DTYPE_INT64, TM_DIMS(1), 1, (const double[]){ 0 });
	tm_node(m, "Slice", NULL, TM_NAMES("x", "st", "en", "ax"), 4, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	convert_case(m, "Slice", 7, 9, 1, 0);
}

/* A conversion that cannot be done leaves the model alone with a note. */
static void test_opset_refused(void)
{
	struct ir_model *m = tm_new(13);
	struct rules_target t;
	struct rw_ctx c;
	struct ir_diag d;
	struct ir_node *n;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(5, 4), 2);
	tm_input(m, "st", IR_DTYPE_INT64, TM_DIMS(1), 1);   /* not constant */
	tm_init(m, "en", IR_DTYPE_INT64, TM_DIMS(1), 1, (const double[]){ 4 });
	n = tm_node(m, "Slice", NULL, TM_NAMES("x", "st", "en"), 3, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	tm_verify(m);
	CU_ASSERT(run_pass(m, "opset-convert", 7, 9, &c, &t, &d) == 0);
	CU_ASSERT(ir_model_opset(m, "") == 13);
	CU_ASSERT(n->n_inputs == 3);
	CU_ASSERT_FATAL(c.n_notes == 1);
	CU_ASSERT(strstr(c.notes[0], "not constant") != NULL);
	rw_ctx_release(&c);
	ir_model_free(m);
}

/* ConstantOfShape(const) + x, and Shape(x) -> Gather: both folded. */
static void test_fold(void)
{
	struct ir_model *m = tm_new(13);
	struct rt_value *before = NULL, *after = NULL;
	struct rules_target t;
	struct rw_ctx c;
	struct ir_diag d;
	struct ir_node *n;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3), 2);
	tm_init(m, "shape", IR_DTYPE_INT64, TM_DIMS(2), 1, (const double[]){ 2, 3 });
	n = tm_node(m, "ConstantOfShape", NULL, TM_NAMES("shape"), 1, TM_NAMES("w"), 1);
	ir_node_set_tensor(n, "value", ir_tensor_new_raw("v", IR_DTYPE_FLOAT, TM_DIMS(1), 1,
							 &(float){ 2.5f }, 4));
	tm_node(m, "Add", NULL, TM_NAMES("x", "w"), 2, TM_NAMES("y"), 1);
	tm_node(m, "Shape", NULL, TM_NAMES("x"), 1, TM_NAMES("s"), 1);
	tm_node(m, "Cast", NULL, TM_NAMES("s"), 1, TM_NAMES("sf"), 1);
	ir_node_set_int(m->graph->nodes[3], "to", IR_DTYPE_FLOAT);
	tm_node(m, "ReduceSum", NULL, TM_NAMES("sf"), 1, TM_NAMES("k"), 1);
	tm_node(m, "Mul", NULL, TM_NAMES("y", "k"), 2, TM_NAMES("z"), 1);
	tm_output(m, "z", IR_DTYPE_FLOAT, NULL, 0);
	tm_verify(m);
	CU_ASSERT_FATAL(tm_run(m, 3, &before, 1) == 0);
	CU_ASSERT(run_pass(m, "fold-constants", 1, 30, &c, &t, &d) == 4);
	CU_ASSERT_EQUAL(m->graph->n_nodes, 2);       /* Add, Mul remain */
	CU_ASSERT_STRING_EQUAL(m->graph->nodes[0]->op_type, "Add");
	CU_ASSERT_PTR_NOT_NULL(ir_graph_find(m->graph, "w")->init);
	CU_ASSERT_PTR_NOT_NULL(ir_graph_find(m->graph, "k")->init);
	CU_ASSERT_FATAL(tm_run(m, 3, &after, 1) == 0);
	CU_ASSERT(diff(after, before) == 0);
	/* k = 2 + 3, w = 2.5 everywhere, as stored */
	{
		const uint8_t *data;
		size_t len;

		CU_ASSERT_FATAL(ir_tensor_data(ir_graph_find(m->graph, "k")->init, &data, &len,
					       &d) == 0 && len == 4);
		CU_ASSERT(*(const float *)data == 5.0f);
		CU_ASSERT_FATAL(ir_tensor_data(ir_graph_find(m->graph, "w")->init, &data, &len,
					       &d) == 0 && len == 24);
		CU_ASSERT(((const float *)data)[5] == 2.5f);
	}
	rt_value_unref(before);
	rt_value_unref(after);
	rw_ctx_release(&c);
	ir_model_free(m);
}

/* Transpose pairs: inverse ones vanish, others compose. */
static void test_cancel(void)
{
	struct ir_model *m = tm_new(13);
	struct rt_value *before = NULL, *after = NULL;
	struct rules_target t;
	struct rw_ctx c;
	struct ir_diag d;
	const int64_t *p;
	size_t k;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 3, 4), 3);
	tm_node(m, "Transpose", NULL, TM_NAMES("x"), 1, TM_NAMES("a"), 1);
	ir_node_set_ints(m->graph->nodes[0], "perm", TM_DIMS(1, 2, 0), 3);
	tm_node(m, "Transpose", NULL, TM_NAMES("a"), 1, TM_NAMES("b"), 1);
	ir_node_set_ints(m->graph->nodes[1], "perm", TM_DIMS(2, 0, 1), 3);   /* inverse */
	tm_node(m, "Relu", NULL, TM_NAMES("b"), 1, TM_NAMES("r"), 1);
	tm_node(m, "Transpose", NULL, TM_NAMES("r"), 1, TM_NAMES("c"), 1);
	ir_node_set_ints(m->graph->nodes[3], "perm", TM_DIMS(1, 0, 2), 3);
	tm_node(m, "Transpose", NULL, TM_NAMES("c"), 1, TM_NAMES("y"), 1);
	ir_node_set_ints(m->graph->nodes[4], "perm", TM_DIMS(0, 2, 1), 3);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	tm_verify(m);
	CU_ASSERT_FATAL(tm_run(m, 4, &before, 1) == 0);
	CU_ASSERT(run_pass(m, "cancel-transposes", 1, 30, &c, &t, &d) == 2);
	CU_ASSERT_EQUAL_FATAL(m->graph->n_nodes, 2);
	CU_ASSERT_STRING_EQUAL(m->graph->nodes[0]->op_type, "Relu");
	CU_ASSERT_STRING_EQUAL(m->graph->nodes[0]->inputs[0]->name, "x");
	/* y[i][j][k] = c[i][k][j] = r[k][i][j]: perm (1, 0, 2) then (0, 2, 1)
	 * composes to (1, 2, 0) */
	CU_ASSERT_FATAL(ir_node_attr(m->graph->nodes[1], "perm") != NULL);
	p = ir_node_attr(m->graph->nodes[1], "perm")->ints;
	k = ir_node_attr(m->graph->nodes[1], "perm")->n_ints;
	CU_ASSERT_FATAL(p != NULL && k == 3);
	CU_ASSERT(p[0] == 1 && p[1] == 2 && p[2] == 0);
	CU_ASSERT_FATAL(tm_run(m, 4, &after, 1) == 0);
	CU_ASSERT(diff(after, before) == 0);
	rt_value_unref(before);
	rt_value_unref(after);
	rw_ctx_release(&c);
	ir_model_free(m);
}

/* --batch and --dim on symbolic inputs; nhwc-io on the result. */
static void test_static_and_nhwc(void)
{
	struct ir_model *m = tm_new(13);
	struct rt_dim_set dims[1] = { { "H", 6 } };
	struct rules_target t;
	struct rw_ctx c;
	struct ir_diag d;
	struct ir_value *x;
	size_t changed = 0;
	const struct val_map_entry *e;

	x = tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 3, 1, 5), 4);
	m->graph->inputs[0].type->shape.dims[0].kind = IR_DIM_PARAM;
	m->graph->inputs[0].type->shape.dims[0].param = strdup("N");
	m->graph->inputs[0].type->shape.dims[2].kind = IR_DIM_PARAM;
	m->graph->inputs[0].type->shape.dims[2].param = strdup("H");
	(void)x;
	tm_node(m, "Relu", NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, TM_DIMS(1, 3, 1, 5), 4);
	m->graph->outputs[0].type->shape.dims[0].kind = IR_DIM_PARAM;
	m->graph->outputs[0].type->shape.dims[0].param = strdup("N");
	tm_verify(m);
	memset(&t, 0, sizeof(t));
	ir_diag_init(&d);
	CU_ASSERT_FATAL(rw_ctx_init(&c, m, NULL, &d) == 0);
	c.batch = 4;
	c.dims = dims;
	c.n_dims = 1;
	CU_ASSERT_FATAL(rw_run(&c, rw_pass_find("static-dims"), &changed) == 0);
	CU_ASSERT(changed == 3);                     /* x's N and H, y's N */
	CU_ASSERT(m->graph->outputs[0].type->shape.dims[0].value == 4);
	CU_ASSERT(m->graph->inputs[0].type->shape.dims[0].kind == IR_DIM_VALUE);
	CU_ASSERT(m->graph->inputs[0].type->shape.dims[0].value == 4);
	CU_ASSERT(m->graph->inputs[0].type->shape.dims[2].value == 6);
	CU_ASSERT(c.n_notes == 0);
	CU_ASSERT_FATAL(rw_run(&c, rw_pass_find("nhwc-io"), &changed) == 0);
	CU_ASSERT(changed == 2);                     /* x and y */
	CU_ASSERT(m->graph->inputs[0].type->shape.dims[3].value == 3);   /* [4,6,5,3] */
	CU_ASSERT(m->graph->inputs[0].type->shape.dims[1].value == 6);
	e = val_map_by_ref(&c.map, VAL_MAP_INPUT, "x");
	CU_ASSERT_FATAL(e != NULL);
	CU_ASSERT(e->rank == 4 && e->perm[1] == 2 && e->perm[3] == 1);
	CU_ASSERT(val_map_by_ref(&c.map, VAL_MAP_OUTPUT, "y") != NULL);
	CU_ASSERT_EQUAL(m->graph->n_nodes, 3);
	rw_ctx_release(&c);
	ir_model_free(m);
}

/* Equal initializers become one; different ones (by value, dtype or
 * shape) stay. */
static void test_dedup(void)
{
	struct ir_model *m = tm_new(13);
	struct rt_value *before = NULL, *after = NULL;
	struct rules_target t;
	struct rw_ctx c;
	struct ir_diag d;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2), 1);
	tm_init(m, "a", IR_DTYPE_FLOAT, TM_DIMS(2), 1, (const double[]){ 1, 2 });
	tm_init(m, "b", IR_DTYPE_FLOAT, TM_DIMS(2), 1, (const double[]){ 1, 2 });
	tm_init(m, "c", IR_DTYPE_FLOAT, TM_DIMS(2), 1, (const double[]){ 1, 3 });
	tm_init(m, "e", IR_DTYPE_FLOAT, TM_DIMS(1, 2), 2, (const double[]){ 1, 2 });
	tm_node(m, "Add", NULL, TM_NAMES("x", "a"), 2, TM_NAMES("y1"), 1);
	tm_node(m, "Mul", NULL, TM_NAMES("y1", "b"), 2, TM_NAMES("y2"), 1);
	tm_node(m, "Sub", NULL, TM_NAMES("y2", "c"), 2, TM_NAMES("y3"), 1);
	tm_node(m, "Add", NULL, TM_NAMES("y3", "e"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	tm_verify(m);
	CU_ASSERT_FATAL(tm_run(m, 5, &before, 1) == 0);
	CU_ASSERT(run_pass(m, "dedup-constants", 1, 30, &c, &t, &d) == 1);
	CU_ASSERT_EQUAL(m->graph->n_inits, 3);
	CU_ASSERT_STRING_EQUAL(m->graph->nodes[1]->inputs[1]->name, "a");
	CU_ASSERT_STRING_EQUAL(m->graph->nodes[2]->inputs[1]->name, "c");
	CU_ASSERT_STRING_EQUAL(m->graph->nodes[3]->inputs[1]->name, "e");
	CU_ASSERT_FATAL(tm_run(m, 5, &after, 1) == 0);
	CU_ASSERT(diff(after, before) == 0);
	rt_value_unref(before);
	rt_value_unref(after);
	rw_ctx_release(&c);
	ir_model_free(m);
}

static const struct unit_test tests[] = {
	{ "duplicate constants merged", test_dedup },
	{ "opset conversion up agrees with the old versions", test_opset_up },
	{ "opset conversion down agrees with the new versions", test_opset_down },
	{ "opset conversion refused leaves the model", test_opset_refused },
	{ "constant folding by the interpreter", test_fold },
	{ "transpose cancellation", test_cancel },
	{ "static dims and NHWC interfaces", test_static_and_nhwc },
	{ NULL, NULL },
};

int suite_rwgraph_register(void)
{
	return unit_add_suite("rwgraph", tests);
}
