/* suite_opset.c: opset conversion that must not write what the older (or
 * newer) version cannot express.  Each case converts a one-op model for
 * a target whose range forces the new opset: the result must pass the
 * strict schema check, resolve to the expected version in the expected
 * form (attributes or inputs, the op renamed), and agree exactly with
 * the original on seeded inputs (each run by the interpreter's kernel of
 * its own version); or the conversion is refused with its reason and the
 * model is left as it was. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oprules/rules.h"
#include "rewriters/rewrite.h"
#include "validators/compare.h"
#include "tests/unit/suites.h"
#include "tests/unit/tmodel.h"

/* Run opset-convert on m for a target of range [k, k] that accepts no op
 * (no decomposition can apply); returns the pass's count of changes. */
static size_t convert(struct ir_model *m, int k, struct rw_ctx *c, struct rules_target *t,
		      struct ir_diag *d)
{
	size_t changed = 0;

	memset(t, 0, sizeof(*t));
	t->id = (char *)"test";
	t->opset_min = t->opset_max = k;
	t->max_rank = -1;
	ir_diag_init(d);
	CU_ASSERT_FATAL(rw_ctx_init(c, m, t, d) == 0);
	if (rw_run(c, rw_pass_find("opset-convert"), &changed) < 0)
		fprintf(stderr, "\nopset-convert: %s\n", d->msg);
	CU_ASSERT_FATAL(d->status == 0);
	return changed;
}

/* The node of op_type op in the main graph (the first). */
static struct ir_node *find(struct ir_model *m, const char *op)
{
	for (size_t i = 0; i < m->graph->n_nodes; i++)
		if (!strcmp(ir_s(m->graph->nodes[i]->op_type), op))
			return m->graph->nodes[i];
	return NULL;
}

/* Convert m to opset k: valid, op at since_version want, outputs equal to
 * the original's.  Returns the converted op's node (m stays for more
 * checks; free it with done()). */
static struct ir_node *converts(struct ir_model *m, int k, const char *op, int want)
{
	struct rt_value *before[4] = { 0 }, *after[4] = { 0 };
	size_t no = m->graph->n_outputs;
	const struct ir_op_schema *s;
	struct rules_target t;
	struct rw_ctx c;
	struct ir_diag d;
	struct rt_cmp_opts o = { 0, 0 };
	struct rt_metrics mt;

	tm_verify(m);
	CU_ASSERT_FATAL(no >= 1 && no <= 4);
	CU_ASSERT_FATAL(tm_run(m, 5, before, no) == 0);
	CU_ASSERT(convert(m, k, &c, &t, &d) > 0);
	for (size_t i = 0; i < c.n_notes; i++)
		fprintf(stderr, "\nnote: %s\n", c.notes[i]);
	CU_ASSERT(c.n_notes == 0);
	rw_ctx_release(&c);
	CU_ASSERT(ir_model_opset(m, "") == k);
	ir_diag_init(&d);
	if (ir_model_verify_strict(m, NULL, &d) != 0)
		fprintf(stderr, "\nstrict: %s\n", d.msg);
	CU_ASSERT(d.status == 0);
	s = ir_registry_find("", op, k);
	CU_ASSERT_FATAL(s != NULL && find(m, op) != NULL);
	if (s->since_version != want)
		fprintf(stderr, "\n%s: version %d, want %d\n", op, s->since_version, want);
	CU_ASSERT(s->since_version == want);
	CU_ASSERT_FATAL(tm_run(m, 5, after, no) == 0);
	for (size_t i = 0; i < no; i++) {
		rt_compare(after[i], before[i], &o, &mt);
		if (!(mt.n == before[i]->numel && mt.max_abs == 0))
			fprintf(stderr, "\n%s at %d: output %zu differs by %g\n", op, k, i,
				mt.max_abs);
		CU_ASSERT(mt.n == before[i]->numel && mt.max_abs == 0);
		rt_value_unref(before[i]);
		rt_value_unref(after[i]);
	}
	return find(m, op);
}

/* Converting m to k is refused with a note containing why; m keeps its
 * opset and its node count. */
static void refused(struct ir_model *m, int k, const char *why)
{
	int64_t opset = ir_model_opset(m, "");
	size_t nodes = m->graph->n_nodes;
	struct rules_target t;
	struct rw_ctx c;
	struct ir_diag d;

	tm_verify(m);
	CU_ASSERT(convert(m, k, &c, &t, &d) == 0);
	CU_ASSERT(ir_model_opset(m, "") == opset);
	CU_ASSERT(m->graph->n_nodes == nodes);
	CU_ASSERT_FATAL(c.n_notes == 1);
	if (!strstr(c.notes[0], why))
		fprintf(stderr, "\nnote '%s' lacks '%s'\n", c.notes[0], why);
	CU_ASSERT(strstr(c.notes[0], why) != NULL);
	rw_ctx_release(&c);
	ir_model_free(m);
}

/* x[dims] -> op -> y at opset */
static struct ir_model *unary(int opset, const char *op, const int64_t *dims, size_t n,
			      struct ir_node **node)
{
	struct ir_model *m = tm_new(opset);

	tm_input(m, "x", IR_DTYPE_FLOAT, dims, n);
	*node = tm_node(m, op, NULL, TM_NAMES("x"), 1, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	return m;
}

static int64_t int_attr(const struct ir_node *n, const char *name, int64_t dflt)
{
	const struct ir_attr *a = n ? ir_node_attr(n, name) : NULL;

	return a ? a->i : dflt;
}

static const char *str_attr(const struct ir_node *n, const char *name)
{
	const struct ir_attr *a = n ? ir_node_attr(n, name) : NULL;

	return a && a->s ? (const char *)a->s : "";
}

static int ints_are(const struct ir_node *n, const char *name, const int64_t *v, size_t k)
{
	const struct ir_attr *a = n ? ir_node_attr(n, name) : NULL;

	if (!a || a->type != IR_ATTR_INTS || a->n_ints != k)
		return 0;
	for (size_t i = 0; i < k; i++)
		if (a->ints[i] != v[i])
			return 0;
	return 1;
}

/* ceil_mode below 10: end padding (AveragePool-7, MaxPool-8), a Pad in
 * front when count_include_pad counts explicit pads. */
static void test_pool_ceil(void)
{
	struct ir_model *m;
	struct ir_node *n;

	/* 5 wide, kernel 2, stride 2: 2 windows by floor, 3 by ceiling */
	m = unary(11, "AveragePool", TM_DIMS(1, 2, 5, 5), 4, &n);
	ir_node_set_ints(n, "kernel_shape", TM_DIMS(2, 2), 2);
	ir_node_set_ints(n, "strides", TM_DIMS(2, 2), 2);
	ir_node_set_int(n, "ceil_mode", 1);
	n = converts(m, 9, "AveragePool", 7);
	CU_ASSERT(!ir_node_attr(n, "ceil_mode"));
	CU_ASSERT(ints_are(n, "pads", TM_DIMS(0, 0, 1, 1), 4));
	ir_model_free(m);
	/* count_include_pad 1 with explicit pads: they become a Pad */
	m = unary(11, "AveragePool", TM_DIMS(1, 1, 6, 5), 4, &n);
	ir_node_set_ints(n, "kernel_shape", TM_DIMS(3, 2), 2);
	ir_node_set_ints(n, "strides", TM_DIMS(2, 2), 2);
	ir_node_set_ints(n, "pads", TM_DIMS(1, 0, 1, 1), 4);
	ir_node_set_int(n, "count_include_pad", 1);
	ir_node_set_int(n, "ceil_mode", 1);
	n = converts(m, 9, "AveragePool", 7);
	CU_ASSERT(find(m, "Pad") != NULL);
	CU_ASSERT(int_attr(n, "count_include_pad", 1) == 0);
	ir_model_free(m);
	/* count_include_pad 1 without pads */
	m = unary(11, "AveragePool", TM_DIMS(1, 1, 5, 5), 4, &n);
	ir_node_set_ints(n, "kernel_shape", TM_DIMS(2, 2), 2);
	ir_node_set_ints(n, "strides", TM_DIMS(2, 2), 2);
	ir_node_set_int(n, "count_include_pad", 1);
	ir_node_set_int(n, "ceil_mode", 1);
	converts(m, 9, "AveragePool", 7);
	CU_ASSERT(find(m, "Pad") == NULL);
	ir_model_free(m);
	m = unary(12, "MaxPool", TM_DIMS(1, 1, 7, 5), 4, &n);
	ir_node_set_ints(n, "kernel_shape", TM_DIMS(3, 2), 2);
	ir_node_set_ints(n, "strides", TM_DIMS(2, 2), 2);
	ir_node_set_ints(n, "pads", TM_DIMS(1, 0, 0, 0), 4);
	ir_node_set_int(n, "ceil_mode", 1);
	n = converts(m, 9, "MaxPool", 8);
	CU_ASSERT(ints_are(n, "pads", TM_DIMS(1, 0, 1, 1), 4));
	ir_model_free(m);
	/* the last window would start in the end padding: refused */
	m = unary(11, "MaxPool", TM_DIMS(1, 1, 4, 4), 4, &n);
	ir_node_set_ints(n, "kernel_shape", TM_DIMS(2, 2), 2);
	ir_node_set_ints(n, "strides", TM_DIMS(2, 2), 2);
	ir_node_set_ints(n, "pads", TM_DIMS(0, 0, 1, 1), 4);
	ir_node_set_int(n, "ceil_mode", 1);
	refused(m, 9, "last window starting in the padding");
	/* ceil_mode 0 just goes */
	m = unary(11, "MaxPool", TM_DIMS(1, 1, 4, 4), 4, &n);
	ir_node_set_ints(n, "kernel_shape", TM_DIMS(2, 2), 2);
	ir_node_set_int(n, "ceil_mode", 0);
	n = converts(m, 7, "MaxPool", 1);
	CU_ASSERT(!ir_node_attr(n, "ceil_mode"));
	ir_model_free(m);
}

/* MaxPool dilations below 10: a Max over strided Slices. */
static void test_pool_dilations(void)
{
	struct ir_model *m;
	struct ir_node *n;

	m = unary(11, "MaxPool", TM_DIMS(1, 2, 5, 6), 4, &n);
	ir_node_set_ints(n, "kernel_shape", TM_DIMS(2, 2), 2);
	ir_node_set_ints(n, "dilations", TM_DIMS(2, 3), 2);
	converts(m, 9, "Max", 8);
	CU_ASSERT(find(m, "MaxPool") == NULL);
	CU_ASSERT(find(m, "Slice") != NULL);
	ir_model_free(m);
	m = unary(11, "MaxPool", TM_DIMS(1, 1, 7, 7), 4, &n);
	ir_node_set_ints(n, "kernel_shape", TM_DIMS(3, 2), 2);
	ir_node_set_ints(n, "dilations", TM_DIMS(2, 2), 2);
	ir_node_set_ints(n, "strides", TM_DIMS(2, 1), 2);
	converts(m, 7, "Max", 6);
	CU_ASSERT(find(m, "MaxPool") != NULL);     /* the strides */
	ir_model_free(m);
	m = unary(11, "MaxPool", TM_DIMS(1, 1, 7, 7), 4, &n);
	ir_node_set_ints(n, "kernel_shape", TM_DIMS(2, 2), 2);
	ir_node_set_ints(n, "dilations", TM_DIMS(2, 2), 2);
	ir_node_set_ints(n, "pads", TM_DIMS(1, 1, 1, 1), 4);
	refused(m, 9, "dilations with pads");
	/* AveragePool-19's dilations go only when they are ones */
	m = unary(19, "AveragePool", TM_DIMS(1, 1, 5, 5), 4, &n);
	ir_node_set_ints(n, "kernel_shape", TM_DIMS(2, 2), 2);
	ir_node_set_ints(n, "dilations", TM_DIMS(1, 1), 2);
	n = converts(m, 13, "AveragePool", 11);
	CU_ASSERT(!ir_node_attr(n, "dilations"));
	ir_model_free(m);
	m = unary(19, "AveragePool", TM_DIMS(1, 1, 5, 5), 4, &n);
	ir_node_set_ints(n, "kernel_shape", TM_DIMS(2, 2), 2);
	ir_node_set_ints(n, "dilations", TM_DIMS(2, 1), 2);
	refused(m, 13, "dilations other than 1");
}

/* x with a constant second input `name` of int64 values v. */
static struct ir_model *with_const(int opset, const char *op, const int64_t *dims, size_t n,
				   const double *v, size_t k, struct ir_node **node)
{
	struct ir_model *m = tm_new(opset);

	tm_input(m, "x", IR_DTYPE_FLOAT, dims, n);
	tm_init(m, "k", IR_DTYPE_INT64, TM_DIMS((int64_t)k), 1, v);
	*node = tm_node(m, op, NULL, TM_NAMES("x", "k"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	return m;
}

/* Attributes that became inputs: down (constants required), and up. */
static void test_attr_input_forms(void)
{
	struct ir_model *m;
	struct ir_node *n;

	/* Clip with constant min and max, and with both absent */
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(3, 4), 2);
	tm_init(m, "lo", IR_DTYPE_FLOAT, NULL, 0, (const double[]){ -0.5 });
	tm_init(m, "hi", IR_DTYPE_FLOAT, NULL, 0, (const double[]){ 1.5 });
	tm_node(m, "Clip", NULL, TM_NAMES("x", "lo", "hi"), 3, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	n = converts(m, 9, "Clip", 6);
	CU_ASSERT(n->n_inputs == 1 && ir_node_attr(n, "min") && ir_node_attr(n, "max"));
	ir_model_free(m);
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(3, 4), 2);
	tm_node(m, "Clip", NULL, TM_NAMES("x", "", ""), 3, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	n = converts(m, 9, "Clip", 6);
	CU_ASSERT(n->n_inputs == 1);
	ir_model_free(m);
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(3, 4), 2);
	tm_input(m, "hi", IR_DTYPE_FLOAT, NULL, 0);
	tm_node(m, "Clip", NULL, TM_NAMES("x", "", "hi"), 3, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	refused(m, 9, "input 2 (max) is not a constant scalar");
	/* Pad, Split, Squeeze, Unsqueeze, ReduceSum, ReduceMean with
	 * constant inputs (negative axes made non-negative) */
	m = with_const(13, "Pad", TM_DIMS(2, 3), 2, (const double[]){ 1, 0, 2, 1 }, 4, &n);
	n = converts(m, 9, "Pad", 2);
	CU_ASSERT(n->n_inputs == 1 && ints_are(n, "pads", TM_DIMS(1, 0, 2, 1), 4));
	ir_model_free(m);
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(5, 2), 2);
	tm_init(m, "k", IR_DTYPE_INT64, TM_DIMS(2), 1, (const double[]){ 2, 3 });
	n = tm_node(m, "Split", NULL, TM_NAMES("x", "k"), 2, TM_NAMES("y", "z"), 2);
	ir_node_set_int(n, "axis", -2);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "z", IR_DTYPE_FLOAT, NULL, 0);
	n = converts(m, 9, "Split", 2);
	CU_ASSERT(n->n_inputs == 1 && ints_are(n, "split", TM_DIMS(2, 3), 2));
	CU_ASSERT(int_attr(n, "axis", -1) == 0);
	ir_model_free(m);
	m = with_const(13, "Squeeze", TM_DIMS(3, 1, 4, 1), 4, (const double[]){ 1, -1 }, 2, &n);
	n = converts(m, 9, "Squeeze", 1);
	CU_ASSERT(n->n_inputs == 1 && ints_are(n, "axes", TM_DIMS(1, 3), 2));
	ir_model_free(m);
	m = with_const(13, "Unsqueeze", TM_DIMS(3, 4), 2, (const double[]){ -1, 0 }, 2, &n);
	n = converts(m, 9, "Unsqueeze", 1);
	CU_ASSERT(n->n_inputs == 1 && ints_are(n, "axes", TM_DIMS(3, 0), 2));
	ir_model_free(m);
	m = with_const(13, "ReduceSum", TM_DIMS(3, 4, 2), 3, (const double[]){ 0, -1 }, 2, &n);
	n = converts(m, 9, "ReduceSum", 1);
	CU_ASSERT(n->n_inputs == 1 && ints_are(n, "axes", TM_DIMS(0, 2), 2));
	ir_model_free(m);
	m = with_const(18, "ReduceMean", TM_DIMS(3, 4, 2), 3, (const double[]){ -2 }, 1, &n);
	ir_node_set_int(n, "keepdims", 0);
	n = converts(m, 9, "ReduceMean", 1);
	CU_ASSERT(n->n_inputs == 1 && ints_are(n, "axes", TM_DIMS(1), 1));
	ir_model_free(m);
	/* axes that are no constant cannot go down */
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(3, 4), 2);
	tm_input(m, "k", IR_DTYPE_INT64, TM_DIMS(1), 1);
	tm_node(m, "Unsqueeze", NULL, TM_NAMES("x", "k"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	refused(m, 9, "input 1 (axes) is not constant");

	/* up: Split-2's split attribute, or none (num_outputs from 18) */
	m = unary(9, "Split", TM_DIMS(6, 2), 2, &n);
	ir_node_set_ints(n, "split", TM_DIMS(2, 4), 2);
	CU_ASSERT_FATAL(ir_node_append_output(n, ir_graph_value(m->graph, "z")) == 0);
	tm_output(m, "z", IR_DTYPE_FLOAT, NULL, 0);
	n = converts(m, 18, "Split", 18);
	CU_ASSERT(n->n_inputs == 2 && !ir_node_attr(n, "split"));
	ir_model_free(m);
	m = unary(9, "Split", TM_DIMS(6, 2), 2, &n);
	CU_ASSERT_FATAL(ir_node_append_output(n, ir_graph_value(m->graph, "z")) == 0);
	CU_ASSERT_FATAL(ir_node_append_output(n, ir_graph_value(m->graph, "w")) == 0);
	tm_output(m, "z", IR_DTYPE_FLOAT, NULL, 0);
	tm_output(m, "w", IR_DTYPE_FLOAT, NULL, 0);
	n = converts(m, 18, "Split", 18);
	CU_ASSERT(n->n_inputs == 1 && int_attr(n, "num_outputs", 0) == 3);
	ir_model_free(m);
	m = unary(9, "ReduceMean", TM_DIMS(3, 4, 2), 3, &n);
	ir_node_set_ints(n, "axes", TM_DIMS(0, 2), 2);
	n = converts(m, 18, "ReduceMean", 18);
	CU_ASSERT(n->n_inputs == 2 && !ir_node_attr(n, "axes"));
	ir_model_free(m);
	m = unary(9, "Squeeze", TM_DIMS(1, 3, 1), 3, &n);
	ir_node_set_ints(n, "axes", TM_DIMS(0, 2), 2);
	n = converts(m, 13, "Squeeze", 13);
	CU_ASSERT(n->n_inputs == 2);
	ir_model_free(m);
}

/* x[1,1,2,3] with constant scales [1,1,2,3] */
static struct ir_model *resize_model(const char *mode, const char *ctm, const char *nearest)
{
	struct ir_model *m = tm_new(13);
	struct ir_node *n;

	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 2, 3), 4);
	tm_init(m, "s", IR_DTYPE_FLOAT, TM_DIMS(4), 1, (const double[]){ 1, 1, 2, 3 });
	n = tm_node(m, "Resize", NULL, TM_NAMES("x", "", "s"), 3, TM_NAMES("y"), 1);
	ir_node_set_string(n, "mode", mode);
	if (ctm)
		ir_node_set_string(n, "coordinate_transformation_mode", ctm);
	if (nearest)
		ir_node_set_string(n, "nearest_mode", nearest);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	return m;
}

/* Resize <-> Upsample below 10. */
static void test_resize_upsample(void)
{
	struct ir_model *m;
	struct ir_node *n;

	m = resize_model("nearest", "asymmetric", "floor");
	n = converts(m, 9, "Upsample", 9);
	CU_ASSERT(n->n_inputs == 2 && find(m, "Resize") == NULL);
	ir_model_free(m);
	m = resize_model("nearest", "asymmetric", "floor");
	n = converts(m, 7, "Upsample", 7);
	CU_ASSERT(n->n_inputs == 1 && ir_node_attr(n, "scales") != NULL);
	ir_model_free(m);
	m = resize_model("linear", "asymmetric", NULL);
	converts(m, 9, "Upsample", 9);
	ir_model_free(m);
	m = resize_model("linear", NULL, NULL);
	refused(m, 9, "coordinate_transformation_mode half_pixel");
	m = resize_model("nearest", "asymmetric", NULL);
	refused(m, 9, "nearest_mode round_prefer_floor");
	m = resize_model("cubic", "asymmetric", NULL);
	refused(m, 9, "mode cubic");
	/* scales computed at run time: Upsample-9 takes them, 7 cannot */
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 2, 3), 4);
	tm_input(m, "s", IR_DTYPE_FLOAT, TM_DIMS(4), 1);
	n = tm_node(m, "Resize", NULL, TM_NAMES("x", "", "s"), 3, TM_NAMES("y"), 1);
	ir_node_set_string(n, "mode", "linear");
	ir_node_set_string(n, "coordinate_transformation_mode", "asymmetric");
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	refused(m, 7, "the scales are not constant");
	/* nearest by scales known only at run time: Resize-10 rounds up where
	 * it shrinks, down where it enlarges, so no nearest_mode says which */
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 2, 3), 4);
	tm_input(m, "s", IR_DTYPE_FLOAT, TM_DIMS(4), 1);
	n = tm_node(m, "Resize", NULL, TM_NAMES("x", "", "s"), 3, TM_NAMES("y"), 1);
	ir_node_set_string(n, "coordinate_transformation_mode", "asymmetric");
	ir_node_set_string(n, "nearest_mode", "floor");
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	refused(m, 9, "Resize-10 rounds down where it enlarges");
	/* half_pixel nearest by integer scales picks what asymmetric floor
	 * picks (PyTorch's exports): an Upsample; by 1.5 it does not */
	m = resize_model("nearest", "half_pixel", "round_prefer_floor");
	converts(m, 9, "Upsample", 9);
	ir_model_free(m);
	m = resize_model("nearest", "pytorch_half_pixel", "round_prefer_ceil");
	converts(m, 9, "Upsample", 9);
	ir_model_free(m);
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 2, 4), 4);
	tm_init(m, "s", IR_DTYPE_FLOAT, TM_DIMS(4), 1, (const double[]){ 1, 1, 1.5, 2 });
	n = tm_node(m, "Resize", NULL, TM_NAMES("x", "", "s"), 3, TM_NAMES("y"), 1);
	ir_node_set_string(n, "coordinate_transformation_mode", "half_pixel");
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	refused(m, 9, "coordinate_transformation_mode half_pixel");
	/* shrinking: Upsample only enlarges */
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 4, 4), 4);
	tm_init(m, "s", IR_DTYPE_FLOAT, TM_DIMS(4), 1, (const double[]){ 1, 1, 0.5, 0.5 });
	n = tm_node(m, "Resize", NULL, TM_NAMES("x", "", "s"), 3, TM_NAMES("y"), 1);
	ir_node_set_string(n, "coordinate_transformation_mode", "asymmetric");
	ir_node_set_string(n, "nearest_mode", "ceil");
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	refused(m, 9, "Upsample only enlarges");
	/* up: tf_half_pixel_for_nn, which 13 dropped, as half_pixel with
	 * the nearest rounding that makes up the half pixel (6 -> 3 puts
	 * source coordinates on integers, where the roundings differ) */
	for (int k = 0; k < 3; k++) {
		static const char *const modes[] = { "floor", "round_prefer_floor",
						     "round_prefer_ceil" };
		struct ir_model *r = tm_new(11);

		tm_input(r, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 6, 7), 4);
		tm_init(r, "roi", IR_DTYPE_FLOAT, TM_DIMS(0), 1, NULL);
		tm_init(r, "s", IR_DTYPE_FLOAT, TM_DIMS(0), 1, NULL);
		tm_init(r, "sz", IR_DTYPE_INT64, TM_DIMS(4), 1, (const double[]){ 1, 1, 3, 9 });
		n = tm_node(r, "Resize", NULL, TM_NAMES("x", "roi", "s", "sz"), 4, TM_NAMES("y"), 1);
		ir_node_set_string(n, "coordinate_transformation_mode", "tf_half_pixel_for_nn");
		ir_node_set_string(n, "nearest_mode", modes[k]);
		tm_output(r, "y", IR_DTYPE_FLOAT, NULL, 0);
		if (k == 2) {
			refused(r, 13, "tf_half_pixel_for_nn with mode nearest, nearest_mode "
				"round_prefer_ceil has no later form");
			continue;
		}
		n = converts(r, 13, "Resize", 13);
		CU_ASSERT(!strcmp(str_attr(n, "coordinate_transformation_mode"), "half_pixel"));
		ir_model_free(r);
	}
	/* up: Upsample-7's attribute -> Upsample-9's input -> Resize */
	m = unary(7, "Upsample", TM_DIMS(1, 1, 2, 3), 4, &n);
	ir_node_set_floats(n, "scales", (const float[]){ 1, 1, 3, 2 }, 4);
	n = converts(m, 9, "Upsample", 9);
	CU_ASSERT(n->n_inputs == 2 && !ir_node_attr(n, "scales"));
	ir_model_free(m);
	m = unary(7, "Upsample", TM_DIMS(1, 1, 2, 3), 4, &n);
	ir_node_set_floats(n, "scales", (const float[]){ 1, 1, 3, 2 }, 4);
	converts(m, 13, "Resize", 13);
	ir_model_free(m);
}

/* Other forms: Dropout, Gemm's C, Flatten's axis, Reshape's allowzero,
 * Constant, RoiAlign's mode, DFT's axis. */
static void test_other_forms(void)
{
	struct ir_model *m;
	struct ir_node *n;

	/* Dropout-13 in inference (ratio a constant input) -> Dropout-7 */
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(3, 4), 2);
	tm_init(m, "r", IR_DTYPE_FLOAT, NULL, 0, (const double[]){ 0.25 });
	n = tm_node(m, "Dropout", NULL, TM_NAMES("x", "r"), 2, TM_NAMES("y"), 1);
	ir_node_set_int(n, "seed", 3);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	n = converts(m, 9, "Dropout", 7);
	CU_ASSERT(n->n_inputs == 1 && !ir_node_attr(n, "seed") && ir_node_attr(n, "ratio"));
	ir_model_free(m);
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(3, 4), 2);
	tm_init(m, "t", IR_DTYPE_BOOL, NULL, 0, (const double[]){ 1 });
	tm_node(m, "Dropout", NULL, TM_NAMES("x", "", "t"), 3, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	refused(m, 9, "training_mode is not a constant false");
	/* Gemm without C -> Gemm-9, which needs one */
	m = tm_new(13);
	tm_input(m, "a", IR_DTYPE_FLOAT, TM_DIMS(2, 3), 2);
	tm_init(m, "b", IR_DTYPE_FLOAT, TM_DIMS(3, 2), 2, (const double[]){ 1, 2, 3, 4, 5, 6 });
	tm_node(m, "Gemm", NULL, TM_NAMES("a", "b"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	n = converts(m, 9, "Gemm", 9);
	CU_ASSERT(n->n_inputs == 3 && n->inputs[2] && n->inputs[2]->init);
	ir_model_free(m);
	/* Flatten's negative axis before 11 */
	m = unary(13, "Flatten", TM_DIMS(2, 3, 4), 3, &n);
	ir_node_set_int(n, "axis", -1);
	n = converts(m, 9, "Flatten", 9);
	CU_ASSERT(int_attr(n, "axis", -1) == 2);
	ir_model_free(m);
	/* Reshape's allowzero with a shape of no 0 */
	m = with_const(14, "Reshape", TM_DIMS(2, 6), 2, (const double[]){ 3, -1 }, 2, &n);
	ir_node_set_int(n, "allowzero", 1);
	n = converts(m, 13, "Reshape", 13);
	CU_ASSERT(!ir_node_attr(n, "allowzero"));
	ir_model_free(m);
	m = with_const(14, "Reshape", TM_DIMS(2, 6), 2, (const double[]){ 0, 6 }, 2, &n);
	ir_node_set_int(n, "allowzero", 1);
	refused(m, 13, "allowzero 1 with a 0 in the shape");
	/* an int64 Constant before 9 is an initializer */
	m = tm_new(13);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(2, 6), 2);
	n = tm_node(m, "Constant", NULL, NULL, 0, TM_NAMES("s"), 1);
	ir_node_set_tensor(n, "value", ir_tensor_new_raw("v", IR_DTYPE_INT64, TM_DIMS(2), 1,
							 (const int64_t[]){ 4, 3 }, 16));
	tm_node(m, "Reshape", NULL, TM_NAMES("x", "s"), 2, TM_NAMES("y"), 1);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	converts(m, 7, "Reshape", 5);
	CU_ASSERT(find(m, "Constant") == NULL && ir_graph_find(m->graph, "s")->init != NULL);
	ir_model_free(m);
	/* RoiAlign-10 computes output_half_pixel, which 16 must say */
	m = tm_new(10);
	tm_input(m, "x", IR_DTYPE_FLOAT, TM_DIMS(1, 1, 6, 6), 4);
	tm_init(m, "rois", IR_DTYPE_FLOAT, TM_DIMS(2, 4), 2,
		(const double[]){ 0.5, 0.5, 4.5, 3.25, 1, 0, 5, 5 });
	tm_init(m, "bi", IR_DTYPE_INT64, TM_DIMS(2), 1, (const double[]){ 0, 0 });
	n = tm_node(m, "RoiAlign", NULL, TM_NAMES("x", "rois", "bi"), 3, TM_NAMES("y"), 1);
	ir_node_set_int(n, "output_height", 2);
	ir_node_set_int(n, "output_width", 2);
	tm_output(m, "y", IR_DTYPE_FLOAT, NULL, 0);
	n = converts(m, 16, "RoiAlign", 16);
	CU_ASSERT(ir_node_attr(n, "coordinate_transformation_mode") != NULL);
	ir_model_free(m);
	/* attributes a version lacks go when they hold the old default: TopK
	 * came to largest and sorted at 11 */
	m = with_const(11, "TopK", TM_DIMS(3, 5), 2, (const double[]){ 2 }, 1, &n);
	CU_ASSERT_FATAL(ir_node_append_output(n, ir_graph_value(m->graph, "i")) == 0);
	tm_output(m, "i", IR_DTYPE_INT64, NULL, 0);
	ir_node_set_int(n, "largest", 1);
	ir_node_set_int(n, "sorted", 1);
	n = converts(m, 10, "TopK", 10);
	CU_ASSERT(!ir_node_attr(n, "largest") && !ir_node_attr(n, "sorted"));
	ir_model_free(m);
	m = with_const(11, "TopK", TM_DIMS(3, 5), 2, (const double[]){ 2 }, 1, &n);
	CU_ASSERT_FATAL(ir_node_append_output(n, ir_graph_value(m->graph, "i")) == 0);
	tm_output(m, "i", IR_DTYPE_INT64, NULL, 0);
	ir_node_set_int(n, "largest", 0);
	refused(m, 10, "attribute largest has no form in TopK-10");
	/* DFT-17's axis attribute (default 1) -> DFT-20's input (default -2) */
	m = unary(17, "DFT", TM_DIMS(2, 4, 3, 1), 4, &n);
	n = converts(m, 20, "DFT", 20);
	CU_ASSERT(n->n_inputs == 3 && !ir_node_attr(n, "axis"));
	ir_model_free(m);
}

static const struct unit_test tests[] = {
	{ "pooling ceil_mode below 10", test_pool_ceil },
	{ "pooling dilations below 10 and 19", test_pool_dilations },
	{ "attribute and input forms both ways", test_attr_input_forms },
	{ "Resize and Upsample below 10", test_resize_upsample },
	{ "Dropout, Gemm, Flatten, Reshape, Constant, RoiAlign, DFT", test_other_forms },
	{ NULL, NULL },
};

int suite_opset_register(void)
{
	return unit_add_suite("opset", tests);
}
