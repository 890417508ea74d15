/* suite_kctrl.c: unit tests of the control-flow, sequence and optional
 * kernels and of the engine under them (subgraph scopes, captures of outer
 * values and their liveness, model-local functions with absent optional
 * inputs), on small models built with Identity/Constant and those ops only,
 * against hand-derived values; error paths must name the node. */
#include <stdlib.h>
#include <string.h>

#include "tests/unit/suites.h"
#include "tests/unit/tmodel.h"

/* ---- building models with subgraphs ----------------------------------- */

static struct ir_type *ttype(int dtype, int rank, const int64_t *dims)
{
	struct ir_type *t = calloc(1, sizeof(*t));

	CU_ASSERT_FATAL(t != NULL);
	t->kind = IR_TYPE_TENSOR;
	t->present = IR_TYPE_HAS_ELEM;
	t->elem_type = dtype;
	if (rank >= 0) {
		t->present |= IR_TYPE_HAS_SHAPE;
		t->shape.n_dims = (size_t)rank;
		t->shape.dims = calloc((size_t)rank + 1, sizeof(*t->shape.dims));
		CU_ASSERT_FATAL(t->shape.dims != NULL);
		for (int i = 0; i < rank; i++) {
			t->shape.dims[i].kind = IR_DIM_VALUE;
			t->shape.dims[i].value = dims[i];
		}
	}
	return t;
}

/* A sequence (kind IR_TYPE_SEQUENCE) or optional type around inner. */
static struct ir_type *wtype(int kind, struct ir_type *inner)
{
	struct ir_type *t = calloc(1, sizeof(*t));

	CU_ASSERT_FATAL(t != NULL);
	t->kind = kind;
	t->inner = inner;
	return t;
}

static void vinfo_add(struct ir_vinfo **list, size_t *n, struct ir_value *v,
		      struct ir_type *t)
{
	struct ir_vinfo *q = realloc(*list, (*n + 1) * sizeof(*q));

	CU_ASSERT_FATAL(q != NULL);
	*list = q;
	memset(&q[*n], 0, sizeof(q[*n]));
	q[*n].value = v;
	q[*n].type = t;
	(*n)++;
	if (!v->type)
		v->type = t;
}

static struct ir_value *g_input(struct ir_graph *g, const char *name,
				struct ir_type *t)
{
	struct ir_value *v = ir_graph_value(g, name);

	CU_ASSERT_FATAL(v != NULL);
	v->is_input = 1;
	vinfo_add(&g->inputs, &g->n_inputs, v, t);
	return v;
}

/* A graph output; the name may be a value of an enclosing scope. */
static void g_output(struct ir_graph *g, const char *name, struct ir_type *t)
{
	struct ir_value *v = ir_graph_lookup(g, name);

	if (!v)
		v = ir_graph_value(g, name);
	CU_ASSERT_FATAL(v != NULL);
	vinfo_add(&g->outputs, &g->n_outputs, v, t);
}

/* A node of g reading values by name (this scope first, then enclosing
 * ones; "" absent) and writing values of g. */
static struct ir_node *g_node(struct ir_graph *g, const char *op,
			      const char *const *in, size_t n_in,
			      const char *const *out, size_t n_out)
{
	static int serial;
	char name[64];
	struct ir_node *n;

	snprintf(name, sizeof(name), "%s_%d", op, serial++);
	n = ir_node_create(op, NULL, name);
	CU_ASSERT_FATAL(n != NULL);
	for (size_t i = 0; i < n_in; i++) {
		struct ir_value *v = NULL;

		if (*in[i] && !(v = ir_graph_lookup(g, in[i])))
			v = ir_graph_value(g, in[i]);
		CU_ASSERT_FATAL(ir_node_append_input(n, v) == 0);
	}
	for (size_t i = 0; i < n_out; i++)
		CU_ASSERT_FATAL(ir_node_append_output(n, ir_graph_value(g, out[i])) == 0);
	CU_ASSERT_FATAL(ir_graph_add_node(g, n) == 0);
	return n;
}

/* A new graph held by n's graph attribute `attr`. */
static struct ir_graph *g_sub(struct ir_node *n, const char *attr)
{
	struct ir_graph *g = ir_graph_new(n->graph);
	struct ir_attr *a;

	CU_ASSERT_FATAL(g != NULL);
	g->name = strdup(attr);
	g->owner = n;
	CU_ASSERT_FATAL(ir_node_set_int(n, attr, 0) == 0);
	a = (struct ir_attr *)ir_node_attr(n, attr);
	a->present &= ~IR_ATTR_HAS_I;
	a->type = IR_ATTR_GRAPH;
	a->g = g;
	return g;
}

static void set_type_attr(struct ir_node *n, const char *attr, struct ir_type *t)
{
	struct ir_attr *a;

	CU_ASSERT_FATAL(ir_node_set_int(n, attr, 0) == 0);
	a = (struct ir_attr *)ir_node_attr(n, attr);
	a->present &= ~IR_ATTR_HAS_I;
	a->type = IR_ATTR_TYPE_PROTO;
	a->tp = t;
}

/* A Constant node of g making a float tensor. */
static void g_const(struct ir_graph *g, const char *out, int dtype, int rank,
		    const int64_t *dims, const double *vals)
{
	struct rt_value *t;
	struct ir_tensor *it;
	struct ir_diag d;
	struct ir_node *n = g_node(g, "Constant", NULL, 0, &out, 1);

	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_tensor_new(NULL, dtype, rank, dims, &t, &d) == 0);
	for (int64_t i = 0; i < t->numel; i++)
		rt_value_set_f64(t, i, vals[i]);
	CU_ASSERT_FATAL(rt_value_to_ir(t, "", &it, &d) == 0);
	rt_value_unref(t);
	CU_ASSERT_FATAL(ir_node_set_tensor(n, "value", it) == 0);
}

/* ---- running ---------------------------------------------------------- */

static struct rt_value *tensor(int dtype, int rank, const int64_t *dims,
			       const double *vals)
{
	struct rt_value *t;
	struct ir_diag d;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_tensor_new(NULL, dtype, rank, dims, &t, &d) == 0);
	for (int64_t i = 0; i < t->numel; i++)
		rt_value_set_f64(t, i, vals[i]);
	return t;
}

static struct rt_value *bool_scalar(int b)
{
	return tensor(IR_DTYPE_BOOL, 0, NULL, (const double[]){ b });
}

/* Run m with the given inputs under a memory limit (0: none); on failure
 * the message goes to err. */
static int run_limit(struct ir_model *m, int64_t limit, struct rt_value **ins,
		     size_t n_in, struct rt_value **outs, size_t n_out,
		     char *err, size_t size)
{
	struct rt_opts o = { .threads = 1, .max_memory = limit };
	struct rt_session *s = NULL;
	struct ir_diag d;
	int rc;

	ir_diag_init(&d);
	for (size_t i = 0; i < n_out; i++)
		outs[i] = NULL;
	if ((rc = rt_session_new(m, &o, &s, &d)) >= 0) {
		CU_ASSERT_FATAL(rt_session_n_outputs(s) == n_out);
		rc = rt_session_run(s, ins, n_in, outs, &d);
	}
	if (err)
		snprintf(err, size, "%s", d.msg);
	if (rc < 0 && !err)
		fprintf(stderr, "\nrun: %s\n", d.msg);
	rt_session_free(s);
	return rc;
}

static int run(struct ir_model *m, struct rt_value **ins, size_t n_in,
	       struct rt_value **outs, size_t n_out, char *err, size_t size)
{
	return run_limit(m, 0, ins, n_in, outs, n_out, err, size);
}

static void unref_all(struct rt_value **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		rt_value_unref(v[i]);
}

/* v is a tensor of dtype with these dims and values. */
static int is_tensor(const struct rt_value *v, int dtype, int rank,
		     const int64_t *dims, const double *vals)
{
	if (!v || v->kind != RT_TENSOR || v->dtype != dtype || v->rank != rank)
		return 0;
	for (int i = 0; i < rank; i++)
		if (v->dims[i] != dims[i])
			return 0;
	for (int64_t i = 0; i < v->numel; i++)
		if (rt_value_get_f64(v, i) != vals[i])
			return 0;
	return 1;
}

static int has(const char *msg, const char *part)
{
	if (strstr(msg, part))
		return 1;
	fprintf(stderr, "\nmessage '%s' lacks '%s'\n", msg, part);
	return 0;
}

#define F IR_DTYPE_FLOAT
#define I64 IR_DTYPE_INT64
#define B IR_DTYPE_BOOL
#define D(...) TM_DIMS(__VA_ARGS__)
#define V(...) ((const double[]){ __VA_ARGS__ })
#define N TM_NAMES

/* ---- If ---------------------------------------------------------------- */

/* If c then [1, 2] else [3]: both branches, outputs of different shapes */
static struct ir_model *if_model(int cond_dtype, const int64_t *cdims, int crank)
{
	struct ir_model *m = tm_new(13);
	struct ir_node *n;
	struct ir_graph *t, *e;

	g_input(m->graph, "c", ttype(cond_dtype, crank, cdims));
	n = g_node(m->graph, "If", N("c"), 1, N("y"), 1);
	t = g_sub(n, "then_branch");
	e = g_sub(n, "else_branch");
	g_const(t, "a", F, 1, D(2), V(1, 2));
	g_output(t, "a", ttype(F, -1, NULL));
	g_const(e, "b", F, 1, D(1), V(3));
	g_output(e, "b", ttype(F, -1, NULL));
	g_output(m->graph, "y", ttype(F, -1, NULL));
	tm_verify(m);
	return m;
}

static void test_if_branches(void)
{
	struct ir_model *m = if_model(B, NULL, 0);
	struct rt_value *in = bool_scalar(1), *out;

	CU_ASSERT_FATAL(run(m, &in, 1, &out, 1, NULL, 0) == 0);
	CU_ASSERT(is_tensor(out, F, 1, D(2), V(1, 2)));
	rt_value_unref(out);
	rt_value_unref(in);
	in = bool_scalar(0);
	CU_ASSERT_FATAL(run(m, &in, 1, &out, 1, NULL, 0) == 0);
	CU_ASSERT(is_tensor(out, F, 1, D(1), V(3)));
	rt_value_unref(out);
	rt_value_unref(in);
	ir_model_free(m);
}

static void test_if_bad_cond(void)
{
	struct ir_model *m = if_model(F, NULL, 0);
	struct rt_value *in = tensor(F, 0, NULL, V(1)), *out;
	char err[512];

	CU_ASSERT(run(m, &in, 1, &out, 1, err, sizeof(err)) < 0);
	CU_ASSERT(has(err, "node 'If_"));
	CU_ASSERT(has(err, "single bool"));
	rt_value_unref(in);
	ir_model_free(m);
	m = if_model(B, D(2), 1);
	in = tensor(B, 1, D(2), V(1, 0));
	CU_ASSERT(run(m, &in, 1, &out, 1, err, sizeof(err)) < 0);
	CU_ASSERT(has(err, "(If): the condition must be a single bool"));
	rt_value_unref(in);
	ir_model_free(m);
}

/* ---- Loop -------------------------------------------------------------- */

/* Loop(M, cond, s0): the body appends the iteration number to the carried
 * sequence s (its length changes every iteration), passes cond_in through
 * (or outputs a constant `stop` when stop >= 0) and scans the iteration
 * number; outputs the final sequence and the scan. */
static struct ir_model *loop_model(int with_m, int with_cond, int stop)
{
	struct ir_model *m = tm_new(13);
	struct ir_node *n;
	struct ir_graph *b;

	if (with_m)
		g_input(m->graph, "M", ttype(I64, 0, NULL));
	if (with_cond)
		g_input(m->graph, "cond", ttype(B, 0, NULL));
	g_node(m->graph, "SequenceEmpty", NULL, 0, N("s0"), 1);
	ir_node_set_int(m->graph->nodes[0], "dtype", I64);
	n = g_node(m->graph, "Loop", N(with_m ? "M" : "", with_cond ? "cond" : "", "s0"), 3,
		   N("s", "scan"), 2);
	b = g_sub(n, "body");
	g_input(b, "i", ttype(I64, 0, NULL));
	g_input(b, "c_in", ttype(B, 0, NULL));
	g_input(b, "s_in", wtype(IR_TYPE_SEQUENCE, ttype(I64, -1, NULL)));
	if (stop >= 0)
		g_const(b, "c_out", B, 0, NULL, V(stop));
	else
		g_node(b, "Identity", N("c_in"), 1, N("c_out"), 1);
	g_node(b, "SequenceInsert", N("s_in", "i"), 2, N("s_out"), 1);
	g_node(b, "Identity", N("i"), 1, N("i_out"), 1);
	g_output(b, "c_out", ttype(B, 0, NULL));
	g_output(b, "s_out", wtype(IR_TYPE_SEQUENCE, ttype(I64, -1, NULL)));
	g_output(b, "i_out", ttype(I64, 0, NULL));
	g_output(m->graph, "s", wtype(IR_TYPE_SEQUENCE, ttype(I64, -1, NULL)));
	g_output(m->graph, "scan", ttype(I64, -1, NULL));
	tm_verify(m);
	return m;
}

static void check_loop_seq(const struct rt_value *s, size_t n)
{
	CU_ASSERT_FATAL(s && s->kind == RT_SEQUENCE && s->n == n);
	CU_ASSERT(s->dtype == I64);
	for (size_t i = 0; i < n; i++)
		CU_ASSERT(is_tensor(s->items[i], I64, 0, NULL, V((double)i)));
}

static void test_loop_trip_count(void)
{
	struct ir_model *m = loop_model(1, 0, -1);
	struct rt_value *in = tensor(I64, 0, NULL, V(4)), *out[2];

	CU_ASSERT_FATAL(run(m, &in, 1, out, 2, NULL, 0) == 0);
	check_loop_seq(out[0], 4);
	CU_ASSERT(is_tensor(out[1], I64, 1, D(4), V(0, 1, 2, 3)));
	unref_all(out, 2);
	rt_value_unref(in);
	ir_model_free(m);
}

static void test_loop_cond(void)
{
	struct ir_model *m = loop_model(1, 1, -1);
	struct rt_value *in[2] = { tensor(I64, 0, NULL, V(3)), bool_scalar(1) };
	struct rt_value *out[2];

	/* cond passed through: the trip count ends it */
	CU_ASSERT_FATAL(run(m, in, 2, out, 2, NULL, 0) == 0);
	check_loop_seq(out[0], 3);
	CU_ASSERT(is_tensor(out[1], I64, 1, D(3), V(0, 1, 2)));
	unref_all(out, 2);
	/* false from the start: no iteration, the scan output is [0] */
	rt_value_unref(in[1]);
	in[1] = bool_scalar(0);
	CU_ASSERT_FATAL(run(m, in, 2, out, 2, NULL, 0) == 0);
	check_loop_seq(out[0], 0);
	CU_ASSERT(is_tensor(out[1], I64, 1, D(0), NULL));
	unref_all(out, 2);
	unref_all(in, 2);
	ir_model_free(m);
	/* a while loop: the body's condition false ends it after one run */
	m = loop_model(0, 1, 0);
	in[0] = bool_scalar(1);
	CU_ASSERT_FATAL(run(m, in, 1, out, 2, NULL, 0) == 0);
	check_loop_seq(out[0], 1);
	CU_ASSERT(is_tensor(out[1], I64, 1, D(1), V(0)));
	unref_all(out, 2);
	rt_value_unref(in[0]);
	ir_model_free(m);
	/* a trip count ignores the body's condition without a cond input */
	m = loop_model(1, 0, 0);
	in[0] = tensor(I64, 0, NULL, V(2));
	CU_ASSERT_FATAL(run(m, in, 1, out, 2, NULL, 0) == 0);
	check_loop_seq(out[0], 2);
	unref_all(out, 2);
	rt_value_unref(in[0]);
	ir_model_free(m);
}

static void test_loop_errors(void)
{
	struct ir_model *m = loop_model(0, 0, -1);
	struct rt_value *out[2];
	char err[512];

	CU_ASSERT(run(m, NULL, 0, out, 2, err, sizeof(err)) < 0);
	CU_ASSERT(has(err, "(Loop): neither a trip count nor a condition"));
	ir_model_free(m);
	/* a failure in the body names the inner node and the Loop */
	{
		struct ir_node *n;
		struct ir_graph *b;

		m = tm_new(13);
		tm_init(m, "M", I64, NULL, 0, V(1));
		n = g_node(m->graph, "Loop", N("M", ""), 2, N("scan"), 1);
		b = g_sub(n, "body");
		g_input(b, "i", ttype(I64, 0, NULL));
		g_input(b, "c_in", ttype(B, 0, NULL));
		g_node(b, "Identity", N("c_in"), 1, N("c_out"), 1);
		g_node(b, "SequenceEmpty", NULL, 0, N("e"), 1);
		g_node(b, "SequenceAt", N("e", "i"), 2, N("y"), 1);
		g_output(b, "c_out", ttype(B, 0, NULL));
		g_output(b, "y", ttype(F, -1, NULL));
		g_output(m->graph, "scan", ttype(F, -1, NULL));
		tm_verify(m);
		CU_ASSERT(run(m, NULL, 0, out, 1, err, sizeof(err)) < 0);
		CU_ASSERT(has(err, "(SequenceAt): position 0 out of range for a sequence of 0, "
			      "in subgraph 'body' of node 'Loop_"));
		ir_model_free(m);
	}
}

/* A scan output whose shape changes between iterations cannot be
 * stacked: the error names the Loop. */
static void test_loop_scan_shape_change(void)
{
	struct ir_model *m = tm_new(13);
	struct ir_node *n, *c;
	struct ir_graph *b;
	struct rt_value *out;
	char err[512];

	tm_init(m, "M", I64, NULL, 0, V(3));
	g_node(m->graph, "SequenceEmpty", NULL, 0, N("s0"), 1);
	ir_node_set_int(m->graph->nodes[0], "dtype", I64);
	n = g_node(m->graph, "Loop", N("M", "", "s0"), 3, N("s", "scan"), 2);
	b = g_sub(n, "body");
	g_input(b, "i", ttype(I64, 0, NULL));
	g_input(b, "c_in", ttype(B, 0, NULL));
	g_input(b, "s_in", wtype(IR_TYPE_SEQUENCE, ttype(I64, -1, NULL)));
	g_node(b, "Identity", N("c_in"), 1, N("c_out"), 1);
	g_node(b, "SequenceInsert", N("s_in", "i"), 2, N("s_out"), 1);
	c = g_node(b, "ConcatFromSequence", N("s_out"), 1, N("all"), 1);
	ir_node_set_int(c, "axis", 0);
	ir_node_set_int(c, "new_axis", 1);
	g_output(b, "c_out", ttype(B, 0, NULL));
	g_output(b, "s_out", wtype(IR_TYPE_SEQUENCE, ttype(I64, -1, NULL)));
	g_output(b, "all", ttype(I64, -1, NULL));
	g_output(m->graph, "scan", ttype(I64, -1, NULL));
	tm_verify(m);
	CU_ASSERT(run(m, NULL, 0, &out, 1, err, sizeof(err)) < 0);
	CU_ASSERT(has(err, "(Loop): cannot stack int64[1] and int64[2] (item 1)"));
	ir_model_free(m);
}

/* The memory limit reached by a Loop's scan output, with scan values
 * accumulated: a clean error naming the Loop, nothing leaked. */
static void test_loop_memory_limit(void)
{
	struct ir_model *m = tm_new(13);
	struct ir_node *n;
	struct ir_graph *b;
	struct rt_value *out;
	double *big = calloc(1000, sizeof(double));
	char err[512];

	CU_ASSERT_FATAL(big != NULL);
	tm_init(m, "M", I64, NULL, 0, V(100));
	n = g_node(m->graph, "Loop", N("M", ""), 2, N("scan"), 1);
	b = g_sub(n, "body");
	g_input(b, "i", ttype(I64, 0, NULL));
	g_input(b, "c_in", ttype(B, 0, NULL));
	g_node(b, "Identity", N("c_in"), 1, N("c_out"), 1);
	g_const(b, "big", F, 1, D(1000), big);
	g_output(b, "c_out", ttype(B, 0, NULL));
	g_output(b, "big", ttype(F, 1, D(1000)));
	g_output(m->graph, "scan", ttype(F, 2, D(100, 1000)));
	tm_verify(m);
	CU_ASSERT(run_limit(m, 200000, NULL, 0, &out, 1, err, sizeof(err)) < 0);
	/* Constant views its attribute: the stacked output is what breaks it */
	CU_ASSERT(has(err, "(Loop): memory limit of 200000 bytes reached"));
	/* within the limit it runs */
	CU_ASSERT_FATAL(run_limit(m, 1000000, NULL, 0, &out, 1, NULL, 0) == 0);
	CU_ASSERT(out->rank == 2 && out->dims[0] == 100 && out->dims[1] == 1000);
	rt_value_unref(out);
	free(big);
	ir_model_free(m);
}

/* Main: k = Identity(kinit); Loop(3) whose body holds If(c_in) with
 * then: Identity(k) (captured two scopes up) and else: Constant; the If
 * result is the loop's scan output, the body also scans k directly.  k's
 * only readers are nested: liveness must keep it alive for the Loop. */
static void test_loop_nested_capture(void)
{
	struct ir_model *m = tm_new(13);
	struct ir_node *n, *nif;
	struct ir_graph *b, *t, *e;
	struct rt_value *out[2];

	tm_init(m, "kinit", F, D(1), 1, V(7));
	tm_init(m, "M", I64, NULL, 0, V(3));
	tm_init(m, "c", B, NULL, 0, V(1));
	g_node(m->graph, "Identity", N("kinit"), 1, N("k"), 1);
	n = g_node(m->graph, "Loop", N("M", "c"), 2, N("y", "z"), 2);
	b = g_sub(n, "body");
	g_input(b, "i", ttype(I64, 0, NULL));
	g_input(b, "c_in", ttype(B, 0, NULL));
	g_node(b, "Identity", N("c_in"), 1, N("c_out"), 1);
	nif = g_node(b, "If", N("c_in"), 1, N("r"), 1);
	t = g_sub(nif, "then_branch");
	e = g_sub(nif, "else_branch");
	g_node(t, "Identity", N("k"), 1, N("tk"), 1);
	g_output(t, "tk", ttype(F, 1, D(1)));
	g_const(e, "ek", F, 1, D(1), V(-1));
	g_output(e, "ek", ttype(F, 1, D(1)));
	g_output(b, "c_out", ttype(B, 0, NULL));
	g_output(b, "r", ttype(F, 1, D(1)));
	g_output(b, "k", ttype(F, 1, D(1)));   /* an outer value as output */
	g_output(m->graph, "y", ttype(F, 2, D(3, 1)));
	g_output(m->graph, "z", ttype(F, 2, D(3, 1)));
	tm_verify(m);
	CU_ASSERT_FATAL(run(m, NULL, 0, out, 2, NULL, 0) == 0);
	CU_ASSERT(is_tensor(out[0], F, 2, D(3, 1), V(7, 7, 7)));
	CU_ASSERT(is_tensor(out[1], F, 2, D(3, 1), V(7, 7, 7)));
	unref_all(out, 2);
	ir_model_free(m);
}

/* Loop (opset 16) carrying optional(seq): starts empty, the body outputs a
 * plain sequence that the next iteration's input (declared optional)
 * receives wrapped; the scan output is OptionalHasElement of the carried
 * value; the graph output, declared optional, wraps the final sequence. */
static void test_loop_optional_carried(void)
{
	struct ir_model *m = tm_new(16);
	struct ir_type *oseq = wtype(IR_TYPE_OPTIONAL,
				     wtype(IR_TYPE_SEQUENCE, ttype(F, -1, NULL)));
	struct rt_value *out[2];
	struct ir_node *n;
	struct ir_graph *b;

	tm_init(m, "M", I64, NULL, 0, V(3));
	tm_init(m, "x", F, D(1), 1, V(2));
	n = g_node(m->graph, "Optional", NULL, 0, N("o0"), 1);
	set_type_attr(n, "type", wtype(IR_TYPE_SEQUENCE, ttype(F, -1, NULL)));
	n = g_node(m->graph, "Loop", N("M", "", "o0"), 3, N("o", "h"), 2);
	b = g_sub(n, "body");
	g_input(b, "i", ttype(I64, 0, NULL));
	g_input(b, "c_in", ttype(B, 0, NULL));
	g_input(b, "o_in", wtype(IR_TYPE_OPTIONAL,
				 wtype(IR_TYPE_SEQUENCE, ttype(F, -1, NULL))));
	g_node(b, "Identity", N("c_in"), 1, N("c_out"), 1);
	g_node(b, "OptionalHasElement", N("o_in"), 1, N("has"), 1);
	g_node(b, "SequenceConstruct", N("x"), 1, N("s_out"), 1);
	g_output(b, "c_out", ttype(B, 0, NULL));
	g_output(b, "s_out", wtype(IR_TYPE_SEQUENCE, ttype(F, -1, NULL)));
	g_output(b, "has", ttype(B, 0, NULL));
	g_output(m->graph, "o", oseq);
	g_output(m->graph, "h", ttype(B, 1, D(3)));
	tm_verify(m);
	CU_ASSERT_FATAL(run(m, NULL, 0, out, 2, NULL, 0) == 0);
	CU_ASSERT_FATAL(out[0]->kind == RT_OPTIONAL && out[0]->n == 1);
	CU_ASSERT_FATAL(out[0]->items[0]->kind == RT_SEQUENCE &&
			out[0]->items[0]->n == 1);
	CU_ASSERT(is_tensor(out[0]->items[0]->items[0], F, 1, D(1), V(2)));
	CU_ASSERT(is_tensor(out[1], B, 1, D(3), V(0, 1, 1)));
	unref_all(out, 2);
	ir_model_free(m);
}

/* ---- Scan -------------------------------------------------------------- */

/* Scan (opset 11) over x [3,2] with state s [2]: the new state is the
 * slice, the scan output the old state. */
static struct ir_model *scan_model(int in_dir, int out_dir, int out_axis)
{
	struct ir_model *m = tm_new(11);
	struct ir_node *n;
	struct ir_graph *b;

	tm_init(m, "s0", F, D(2), 1, V(-1, -2));
	tm_init(m, "x", F, D(3, 2), 2, V(1, 2, 3, 4, 5, 6));
	n = g_node(m->graph, "Scan", N("s0", "x"), 2, N("s", "ys"), 2);
	ir_node_set_int(n, "num_scan_inputs", 1);
	ir_node_set_ints(n, "scan_input_directions", (const int64_t[]){ in_dir }, 1);
	ir_node_set_ints(n, "scan_output_directions", (const int64_t[]){ out_dir }, 1);
	ir_node_set_ints(n, "scan_output_axes", (const int64_t[]){ out_axis }, 1);
	b = g_sub(n, "body");
	g_input(b, "s_in", ttype(F, 1, D(2)));
	g_input(b, "x_t", ttype(F, 1, D(2)));
	g_node(b, "Identity", N("x_t"), 1, N("s_out"), 1);
	g_node(b, "Identity", N("s_in"), 1, N("y"), 1);
	g_output(b, "s_out", ttype(F, 1, D(2)));
	g_output(b, "y", ttype(F, 1, D(2)));
	g_output(m->graph, "s", ttype(F, -1, NULL));
	g_output(m->graph, "ys", ttype(F, -1, NULL));
	tm_verify(m);
	return m;
}

static void test_scan(void)
{
	struct ir_model *m = scan_model(0, 0, 0);
	struct rt_value *out[2];

	CU_ASSERT_FATAL(run(m, NULL, 0, out, 2, NULL, 0) == 0);
	CU_ASSERT(is_tensor(out[0], F, 1, D(2), V(5, 6)));
	CU_ASSERT(is_tensor(out[1], F, 2, D(3, 2), V(-1, -2, 1, 2, 3, 4)));
	unref_all(out, 2);
	ir_model_free(m);
	/* reversed input, reversed output, output axis -1 (= 1) */
	m = scan_model(1, 1, -1);
	CU_ASSERT_FATAL(run(m, NULL, 0, out, 2, NULL, 0) == 0);
	CU_ASSERT(is_tensor(out[0], F, 1, D(2), V(1, 2)));
	/* steps see rows 2, 1, 0: ys rows (old states) -1-2, 56, 34, reversed
	 * and laid along axis 1 */
	CU_ASSERT(is_tensor(out[1], F, 2, D(2, 3), V(3, 5, -1, 4, 6, -2)));
	unref_all(out, 2);
	ir_model_free(m);
}

/* Scan 9 over axis 1 of x [2,3] and axis 0 of w [3]: the steps see the
 * columns of x; the scan output stacks them as rows (a transpose); scan
 * inputs of different lengths are an error naming the node. */
static void test_scan_axes(void)
{
	for (int bad = 0; bad <= 1; bad++) {
		struct ir_model *m = tm_new(9);
		struct ir_node *n;
		struct ir_graph *b;
		struct rt_value *out[2];
		char err[512];

		tm_init(m, "x", F, D(2, 3), 2, V(1, 2, 3, 4, 5, 6));
		if (bad)
			tm_init(m, "w", F, D(2), 1, V(7, 8));
		else
			tm_init(m, "w", F, D(3), 1, V(7, 8, 9));
		n = g_node(m->graph, "Scan", N("x", "w"), 2, N("cols", "ws"), 2);
		ir_node_set_int(n, "num_scan_inputs", 2);
		ir_node_set_ints(n, "scan_input_axes", (const int64_t[]){ 1, 0 }, 2);
		b = g_sub(n, "body");
		g_input(b, "x_t", ttype(F, 1, D(2)));
		g_input(b, "w_t", ttype(F, 0, NULL));
		g_node(b, "Identity", N("x_t"), 1, N("c"), 1);
		g_node(b, "Identity", N("w_t"), 1, N("wo"), 1);
		g_output(b, "c", ttype(F, 1, D(2)));
		g_output(b, "wo", ttype(F, 0, NULL));
		g_output(m->graph, "cols", ttype(F, -1, NULL));
		g_output(m->graph, "ws", ttype(F, -1, NULL));
		tm_verify(m);
		if (bad) {
			CU_ASSERT(run(m, NULL, 0, out, 2, err, sizeof(err)) < 0);
			CU_ASSERT(has(err, "(Scan): scan input 1 has 2 entries along axis 0, scan input 0 3"));
		} else {
			CU_ASSERT_FATAL(run(m, NULL, 0, out, 2, NULL, 0) == 0);
			CU_ASSERT(is_tensor(out[0], F, 2, D(3, 2), V(1, 4, 2, 5, 3, 6)));
			CU_ASSERT(is_tensor(out[1], F, 1, D(3), V(7, 8, 9)));
			unref_all(out, 2);
		}
		ir_model_free(m);
	}
}

/* Every scan input axis and direction against every output axis and
 * direction, through an Identity body, on x [2,3,4] = 0..23: the output
 * moves the scanned axis to the output axis, reversed when exactly one
 * direction is reversed (index arithmetic derived by hand below). */
static void test_scan_axes_property(void)
{
	const int64_t xd[3] = { 2, 3, 4 };
	double xv[24];

	for (int i = 0; i < 24; i++)
		xv[i] = i;
	for (int ai = 0; ai < 3; ai++)
	for (int di = 0; di < 2; di++)
	for (int ao = 0; ao < 3; ao++)
	for (int dout = 0; dout < 2; dout++) {
		struct ir_model *m = tm_new(11);
		struct ir_node *n;
		struct ir_graph *b;
		struct rt_value *out;
		int64_t T = xd[ai], rest[2], od[3];
		int ok = 1;

		for (int j = 0, r = 0; j < 3; j++)
			if (j != ai)
				rest[r++] = xd[j];
		for (int j = 0, r = 0; j < 3; j++)
			od[j] = j == ao ? T : rest[r++];
		tm_init(m, "x", F, xd, 3, xv);
		n = g_node(m->graph, "Scan", N("x"), 1, N("y"), 1);
		ir_node_set_int(n, "num_scan_inputs", 1);
		ir_node_set_ints(n, "scan_input_axes", (const int64_t[]){ ai }, 1);
		ir_node_set_ints(n, "scan_input_directions", (const int64_t[]){ di }, 1);
		ir_node_set_ints(n, "scan_output_axes", (const int64_t[]){ ao }, 1);
		ir_node_set_ints(n, "scan_output_directions", (const int64_t[]){ dout }, 1);
		b = g_sub(n, "body");
		g_input(b, "x_t", ttype(F, 2, rest));
		g_node(b, "Identity", N("x_t"), 1, N("y_t"), 1);
		g_output(b, "y_t", ttype(F, 2, rest));
		g_output(m->graph, "y", ttype(F, -1, NULL));
		tm_verify(m);
		CU_ASSERT_FATAL(run(m, NULL, 0, &out, 1, NULL, 0) == 0);
		CU_ASSERT_FATAL(out->rank == 3);
		for (int j = 0; j < 3; j++)
			ok &= out->dims[j] == od[j];
		for (int64_t e = 0; ok && e < out->numel; e++) {
			int64_t o[3], xi[3], rem = e, step, q, lin = 0;

			for (int j = 2; j >= 0; j--) {
				o[j] = rem % od[j];
				rem /= od[j];
			}
			step = dout ? T - 1 - o[ao] : o[ao];
			q = di ? T - 1 - step : step;
			for (int j = 0, r = 0; j < 3; j++) {
				if (j == ao)
					continue;
				xi[r + (r >= ai ? 1 : 0)] = o[j];
				r++;
			}
			xi[ai] = q;
			for (int j = 0; j < 3; j++)
				lin = lin * xd[j] + xi[j];
			ok &= rt_value_get_f64(out, e) == (double)lin;
		}
		if (!ok)
			fprintf(stderr, "\nscan axes: in %d/%d out %d/%d wrong\n", ai, di, ao, dout);
		CU_ASSERT(ok);
		rt_value_unref(out);
		ir_model_free(m);
	}
}

/* Scan 8: batch 2, sequence 3, reversed, sequence_lens [3, 1] (or [0, 0]:
 * no step at all); body: new state = slice, scan output = slice. */
static void test_scan8(void)
{
	for (int none = 0; none <= 1; none++) {
		struct ir_model *m = tm_new(8);
		struct ir_node *n;
		struct ir_graph *b;
		struct rt_value *out[2];

		tm_init(m, "lens", I64, D(2), 1, none ? V(0, 0) : V(3, 1));
		tm_init(m, "s0", F, D(2, 1), 2, V(-1, -2));
		tm_init(m, "x", F, D(2, 3, 1), 3, V(1, 2, 3, 4, 5, 6));
		n = g_node(m->graph, "Scan", N("lens", "s0", "x"), 3, N("s", "ys"), 2);
		ir_node_set_int(n, "num_scan_inputs", 1);
		ir_node_set_ints(n, "directions", (const int64_t[]){ 1 }, 1);
		b = g_sub(n, "body");
		g_input(b, "s_in", ttype(F, 1, D(1)));
		g_input(b, "x_t", ttype(F, 1, D(1)));
		g_node(b, "Identity", N("x_t"), 1, N("s_out"), 1);
		g_node(b, "Identity", N("x_t"), 1, N("y"), 1);
		g_output(b, "s_out", ttype(F, 1, D(1)));
		g_output(b, "y", ttype(F, 1, D(1)));
		g_output(m->graph, "s", ttype(F, -1, NULL));
		g_output(m->graph, "ys", ttype(F, -1, NULL));
		tm_verify(m);
		CU_ASSERT_FATAL(run(m, NULL, 0, out, 2, NULL, 0) == 0);
		if (none) {
			CU_ASSERT(is_tensor(out[0], F, 2, D(2, 1), V(-1, -2)));
			CU_ASSERT(is_tensor(out[1], F, 3, D(2, 3, 1), V(0, 0, 0, 0, 0, 0)));
		} else {
			/* batch 0 runs reversed over 3 steps (3, 2, 1), batch 1
			 * over its first step only (4), padded with zeros */
			CU_ASSERT(is_tensor(out[0], F, 2, D(2, 1), V(1, 4)));
			CU_ASSERT(is_tensor(out[1], F, 3, D(2, 3, 1), V(3, 2, 1, 4, 0, 0)));
		}
		unref_all(out, 2);
		ir_model_free(m);
	}
}

/* ---- sequences --------------------------------------------------------- */

static void test_sequence_ops(void)
{
	struct ir_model *m = tm_new(12);
	struct rt_value *out[8];
	struct ir_node *n;

	tm_init(m, "a", F, D(1, 2), 2, V(1, 2));
	tm_init(m, "b", F, D(2, 2), 2, V(3, 4, 5, 6));
	tm_init(m, "c", F, D(1, 2), 2, V(7, 8));
	tm_init(m, "p0", I64, NULL, 0, V(0));
	tm_init(m, "pm1", IR_DTYPE_INT32, NULL, 0, V(-1));
	tm_init(m, "p1", I64, NULL, 0, V(1));
	tm_init(m, "two", I64, NULL, 0, V(2));
	g_node(m->graph, "SequenceConstruct", N("a", "b"), 2, N("s"), 1);
	g_node(m->graph, "SequenceInsert", N("s", "c", "p0"), 3, N("s2"), 1);  /* c a b */
	g_node(m->graph, "SequenceLength", N("s2"), 1, N("len"), 1);
	g_node(m->graph, "SequenceAt", N("s2", "pm1"), 2, N("last"), 1);
	g_node(m->graph, "SequenceErase", N("s2", "p1"), 2, N("s3"), 1);       /* c b */
	n = g_node(m->graph, "ConcatFromSequence", N("s3"), 1, N("cat"), 1);
	ir_node_set_int(n, "axis", 0);
	g_node(m->graph, "SequenceErase", N("s2"), 1, N("s4"), 1);             /* c a */
	n = g_node(m->graph, "ConcatFromSequence", N("s4"), 1, N("stk"), 1);
	ir_node_set_int(n, "axis", -1);
	ir_node_set_int(n, "new_axis", 1);
	n = g_node(m->graph, "SplitToSequence", N("b", "two"), 2, N("sp"), 1);
	ir_node_set_int(n, "axis", 1);
	n = g_node(m->graph, "SplitToSequence", N("b"), 1, N("sp2"), 1);
	ir_node_set_int(n, "keepdims", 0);
	g_node(m->graph, "SequenceLength", N("sp2"), 1, N("len2"), 1);
	g_node(m->graph, "SequenceAt", N("sp2", "p1"), 2, N("row1"), 1);
	g_output(m->graph, "len", ttype(I64, 0, NULL));
	g_output(m->graph, "last", ttype(F, -1, NULL));
	g_output(m->graph, "cat", ttype(F, -1, NULL));
	g_output(m->graph, "stk", ttype(F, -1, NULL));
	g_output(m->graph, "sp", wtype(IR_TYPE_SEQUENCE, ttype(F, -1, NULL)));
	g_output(m->graph, "len2", ttype(I64, 0, NULL));
	g_output(m->graph, "row1", ttype(F, -1, NULL));
	g_output(m->graph, "s3", wtype(IR_TYPE_SEQUENCE, ttype(F, -1, NULL)));
	tm_verify(m);
	CU_ASSERT_FATAL(run(m, NULL, 0, out, 8, NULL, 0) == 0);
	CU_ASSERT(is_tensor(out[0], I64, 0, NULL, V(3)));
	CU_ASSERT(is_tensor(out[1], F, 2, D(2, 2), V(3, 4, 5, 6)));
	CU_ASSERT(is_tensor(out[2], F, 2, D(3, 2), V(7, 8, 3, 4, 5, 6)));
	CU_ASSERT(is_tensor(out[3], F, 3, D(1, 2, 2), V(7, 1, 8, 2)));
	CU_ASSERT_FATAL(out[4]->kind == RT_SEQUENCE && out[4]->n == 1);
	CU_ASSERT(is_tensor(out[4]->items[0], F, 2, D(2, 2), V(3, 4, 5, 6)));
	CU_ASSERT(is_tensor(out[5], I64, 0, NULL, V(2)));
	CU_ASSERT(is_tensor(out[6], F, 1, D(2), V(5, 6)));
	CU_ASSERT_FATAL(out[7]->kind == RT_SEQUENCE && out[7]->n == 2);
	CU_ASSERT(is_tensor(out[7]->items[0], F, 2, D(1, 2), V(7, 8)));
	CU_ASSERT(is_tensor(out[7]->items[1], F, 2, D(2, 2), V(3, 4, 5, 6)));
	unref_all(out, 8);
	ir_model_free(m);
}

/* SplitToSequence with a scalar split leaves a short last chunk; with a
 * list it follows the lengths. */
static void test_split_to_sequence(void)
{
	struct ir_model *m = tm_new(12);
	struct rt_value *out[2];
	struct ir_node *n;

	tm_init(m, "x", F, D(5), 1, V(1, 2, 3, 4, 5));
	tm_init(m, "two", I64, NULL, 0, V(2));
	tm_init(m, "lens", I64, D(2), 1, V(1, 4));
	n = g_node(m->graph, "SplitToSequence", N("x", "two"), 2, N("a"), 1);
	n = g_node(m->graph, "SplitToSequence", N("x", "lens"), 2, N("b"), 1);
	ir_node_set_int(n, "keepdims", 0);    /* ignored with split */
	g_output(m->graph, "a", wtype(IR_TYPE_SEQUENCE, ttype(F, -1, NULL)));
	g_output(m->graph, "b", wtype(IR_TYPE_SEQUENCE, ttype(F, -1, NULL)));
	tm_verify(m);
	CU_ASSERT_FATAL(run(m, NULL, 0, out, 2, NULL, 0) == 0);
	CU_ASSERT_FATAL(out[0]->kind == RT_SEQUENCE && out[0]->n == 3);
	CU_ASSERT(is_tensor(out[0]->items[0], F, 1, D(2), V(1, 2)));
	CU_ASSERT(is_tensor(out[0]->items[1], F, 1, D(2), V(3, 4)));
	CU_ASSERT(is_tensor(out[0]->items[2], F, 1, D(1), V(5)));
	CU_ASSERT_FATAL(out[1]->kind == RT_SEQUENCE && out[1]->n == 2);
	CU_ASSERT(is_tensor(out[1]->items[0], F, 1, D(1), V(1)));
	CU_ASSERT(is_tensor(out[1]->items[1], F, 1, D(4), V(2, 3, 4, 5)));
	unref_all(out, 2);
	ir_model_free(m);
}

/* SplitToSequence then ConcatFromSequence along each axis (also
 * negative) gives x back: kept axes concatenated, dropped axes stacked. */
static void test_split_concat_roundtrip(void)
{
	const int64_t xd[3] = { 2, 3, 4 };
	double xv[24];

	for (int i = 0; i < 24; i++)
		xv[i] = i * 0.5;
	for (int axis = -3; axis < 3; axis++)
	for (int keep = 0; keep <= 1; keep++) {
		struct ir_model *m = tm_new(12);
		struct ir_node *n;
		struct rt_value *out;

		tm_init(m, "x", F, xd, 3, xv);
		n = g_node(m->graph, "SplitToSequence", N("x"), 1, N("s"), 1);
		ir_node_set_int(n, "axis", axis);
		ir_node_set_int(n, "keepdims", keep);
		n = g_node(m->graph, "ConcatFromSequence", N("s"), 1, N("y"), 1);
		ir_node_set_int(n, "axis", axis);
		ir_node_set_int(n, "new_axis", !keep);
		g_output(m->graph, "y", ttype(F, -1, NULL));
		tm_verify(m);
		CU_ASSERT_FATAL(run(m, NULL, 0, &out, 1, NULL, 0) == 0);
		if (!is_tensor(out, F, 3, xd, xv))
			fprintf(stderr, "\nroundtrip: axis %d keepdims %d wrong\n", axis, keep);
		CU_ASSERT(is_tensor(out, F, 3, xd, xv));
		rt_value_unref(out);
		ir_model_free(m);
	}
}

static void test_sequence_errors(void)
{
	struct ir_model *m = tm_new(12);
	struct rt_value *out;
	char err[512];

	tm_init(m, "a", F, D(1), 1, V(1));
	tm_init(m, "p", I64, NULL, 0, V(1));
	g_node(m->graph, "SequenceConstruct", N("a"), 1, N("s"), 1);
	g_node(m->graph, "SequenceAt", N("s", "p"), 2, N("y"), 1);
	g_output(m->graph, "y", ttype(F, -1, NULL));
	tm_verify(m);
	CU_ASSERT(run(m, NULL, 0, &out, 1, err, sizeof(err)) < 0);
	CU_ASSERT(has(err, "(SequenceAt): position 1 out of range for a sequence of 1"));
	CU_ASSERT(has(err, "node 'SequenceAt_"));
	ir_model_free(m);
	/* inserting a tensor of another dtype */
	m = tm_new(12);
	tm_init(m, "a", F, D(1), 1, V(1));
	tm_init(m, "i", I64, D(1), 1, V(1));
	g_node(m->graph, "SequenceConstruct", N("a"), 1, N("s"), 1);
	g_node(m->graph, "SequenceInsert", N("s", "i"), 2, N("y"), 1);
	g_output(m->graph, "y", wtype(IR_TYPE_SEQUENCE, ttype(F, -1, NULL)));
	tm_verify(m);
	CU_ASSERT(run(m, NULL, 0, &out, 1, err, sizeof(err)) < 0);
	CU_ASSERT(has(err, "(SequenceInsert): tensor of int64 does not fit a sequence of float"));
	ir_model_free(m);
	/* split lengths that overflow when added */
	m = tm_new(12);
	tm_init(m, "a", F, D(3), 1, V(1, 2, 3));
	tm_init(m, "l", I64, D(2), 1, V(2, 9.2e18));
	g_node(m->graph, "SplitToSequence", N("a", "l"), 2, N("y"), 1);
	g_output(m->graph, "y", wtype(IR_TYPE_SEQUENCE, ttype(F, -1, NULL)));
	tm_verify(m);
	CU_ASSERT(run(m, NULL, 0, &out, 1, err, sizeof(err)) < 0);
	CU_ASSERT(has(err, "(SplitToSequence): split lengths do not add up to 3, the size of axis 0"));
	ir_model_free(m);
}

/* A Constant node of g making a 1-D string tensor. */
static void g_const_strings(struct ir_graph *g, const char *out,
			    const char *const *vals, int64_t n)
{
	struct rt_value *t;
	struct ir_tensor *it;
	struct ir_diag d;
	struct ir_node *node = g_node(g, "Constant", NULL, 0, &out, 1);

	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_tensor_new(NULL, IR_DTYPE_STRING, 1, &n, &t, &d) == 0);
	for (int64_t i = 0; i < n; i++)
		CU_ASSERT_FATAL((((char **)t->data)[i] = strdup(vals[i])) != NULL);
	CU_ASSERT_FATAL(rt_value_to_ir(t, "", &it, &d) == 0);
	rt_value_unref(t);
	CU_ASSERT_FATAL(ir_node_set_tensor(node, "value", it) == 0);
}

static int is_strings(const struct rt_value *v, int rank, const int64_t *dims,
		      const char *const *vals)
{
	if (!v || v->kind != RT_TENSOR || v->dtype != IR_DTYPE_STRING || v->rank != rank)
		return 0;
	for (int i = 0; i < rank; i++)
		if (v->dims[i] != dims[i])
			return 0;
	for (int64_t i = 0; i < v->numel; i++)
		if (strcmp(((char *const *)v->data)[i], vals[i]))
			return 0;
	return 1;
}

/* Strings through split, erase and stack (the copying paths). */
static void test_sequence_strings(void)
{
	struct ir_model *m = tm_new(12);
	struct rt_value *out[2];
	struct ir_node *n;

	g_const_strings(m->graph, "x", N("ab", "c", "def"), 3);
	n = g_node(m->graph, "SplitToSequence", N("x"), 1, N("s"), 1);
	ir_node_set_int(n, "keepdims", 0);
	g_node(m->graph, "SequenceErase", N("s"), 1, N("s2"), 1);
	n = g_node(m->graph, "ConcatFromSequence", N("s2"), 1, N("y"), 1);
	ir_node_set_int(n, "axis", 0);
	ir_node_set_int(n, "new_axis", 1);
	g_output(m->graph, "y", ttype(IR_DTYPE_STRING, -1, NULL));
	g_output(m->graph, "s", wtype(IR_TYPE_SEQUENCE, ttype(IR_DTYPE_STRING, -1, NULL)));
	tm_verify(m);
	CU_ASSERT_FATAL(run(m, NULL, 0, out, 2, NULL, 0) == 0);
	CU_ASSERT(is_strings(out[0], 1, D(2), N("ab", "c")));
	CU_ASSERT_FATAL(out[1]->kind == RT_SEQUENCE && out[1]->n == 3);
	CU_ASSERT(is_strings(out[1]->items[2], 0, NULL, N("def")));
	unref_all(out, 2);
	ir_model_free(m);
}

/* SequenceMap over one sequence and one tensor, body of Identities. */
static void test_sequence_map(void)
{
	struct ir_model *m = tm_new(17);
	struct rt_value *out[2];
	struct ir_node *n;
	struct ir_graph *b;

	tm_init(m, "a", F, D(1), 1, V(1));
	tm_init(m, "b", F, D(2), 1, V(2, 3));
	tm_init(m, "t", I64, NULL, 0, V(9));
	g_node(m->graph, "SequenceConstruct", N("a", "b"), 2, N("s"), 1);
	n = g_node(m->graph, "SequenceMap", N("s", "t"), 2, N("o1", "o2"), 2);
	b = g_sub(n, "body");
	g_input(b, "x", ttype(F, -1, NULL));
	g_input(b, "y", ttype(I64, 0, NULL));
	g_node(b, "Identity", N("x"), 1, N("x2"), 1);
	g_node(b, "Identity", N("y"), 1, N("y2"), 1);
	g_output(b, "x2", ttype(F, -1, NULL));
	g_output(b, "y2", ttype(I64, 0, NULL));
	g_output(m->graph, "o1", wtype(IR_TYPE_SEQUENCE, ttype(F, -1, NULL)));
	g_output(m->graph, "o2", wtype(IR_TYPE_SEQUENCE, ttype(I64, -1, NULL)));
	tm_verify(m);
	CU_ASSERT_FATAL(run(m, NULL, 0, out, 2, NULL, 0) == 0);
	CU_ASSERT_FATAL(out[0]->kind == RT_SEQUENCE && out[0]->n == 2);
	CU_ASSERT(is_tensor(out[0]->items[0], F, 1, D(1), V(1)));
	CU_ASSERT(is_tensor(out[0]->items[1], F, 1, D(2), V(2, 3)));
	CU_ASSERT_FATAL(out[1]->kind == RT_SEQUENCE && out[1]->n == 2);
	CU_ASSERT(out[1]->dtype == I64);
	CU_ASSERT(is_tensor(out[1]->items[1], I64, 0, NULL, V(9)));
	unref_all(out, 2);
	ir_model_free(m);
}

/* SequenceMap over sequences of different lengths; a body whose input
 * count does not match the node's. */
static void test_sequence_map_errors(void)
{
	for (int which = 0; which < 2; which++) {
		struct ir_model *m = tm_new(17);
		struct rt_value *out;
		struct ir_node *n;
		struct ir_graph *b;
		char err[512];

		tm_init(m, "a", F, D(1), 1, V(1));
		g_node(m->graph, "SequenceConstruct", N("a", "a"), 2, N("s2"), 1);
		g_node(m->graph, "SequenceConstruct", N("a"), 1, N("s1"), 1);
		n = g_node(m->graph, "SequenceMap", N("s2", "s1"), 2, N("o"), 1);
		b = g_sub(n, "body");
		g_input(b, "x", ttype(F, -1, NULL));
		if (!which)
			g_input(b, "y", ttype(F, -1, NULL));
		g_node(b, "Identity", N("x"), 1, N("x2"), 1);
		g_output(b, "x2", ttype(F, -1, NULL));
		g_output(m->graph, "o", wtype(IR_TYPE_SEQUENCE, ttype(F, -1, NULL)));
		tm_verify(m);
		CU_ASSERT(run(m, NULL, 0, &out, 1, err, sizeof(err)) < 0);
		CU_ASSERT(has(err, which ? "(SequenceMap): body has 1 inputs, the node 2" :
			      "(SequenceMap): input 1 has 1 items, input 0 2"));
		ir_model_free(m);
	}
}

/* ---- optionals --------------------------------------------------------- */

static void test_optional(void)
{
	struct ir_model *m = tm_new(18);
	struct rt_value *out[5];
	struct ir_node *n;

	tm_init(m, "x", F, D(2), 1, V(4, 5));
	g_node(m->graph, "Optional", N("x"), 1, N("o"), 1);
	g_node(m->graph, "OptionalHasElement", N("o"), 1, N("h1"), 1);
	g_node(m->graph, "OptionalGetElement", N("o"), 1, N("x2"), 1);
	n = g_node(m->graph, "Optional", NULL, 0, N("e"), 1);
	set_type_attr(n, "type", wtype(IR_TYPE_SEQUENCE, ttype(F, -1, NULL)));
	g_node(m->graph, "OptionalHasElement", N("e"), 1, N("h2"), 1);
	g_node(m->graph, "OptionalHasElement", N(""), 1, N("h3"), 1);
	g_output(m->graph, "h1", ttype(B, 0, NULL));
	g_output(m->graph, "x2", ttype(F, -1, NULL));
	g_output(m->graph, "h2", ttype(B, 0, NULL));
	g_output(m->graph, "h3", ttype(B, 0, NULL));
	g_output(m->graph, "e", wtype(IR_TYPE_OPTIONAL, wtype(IR_TYPE_SEQUENCE,
							      ttype(F, -1, NULL))));
	tm_verify(m);
	CU_ASSERT_FATAL(run(m, NULL, 0, out, 5, NULL, 0) == 0);
	CU_ASSERT(is_tensor(out[0], B, 0, NULL, V(1)));
	CU_ASSERT(is_tensor(out[1], F, 1, D(2), V(4, 5)));
	CU_ASSERT(is_tensor(out[2], B, 0, NULL, V(0)));
	CU_ASSERT(is_tensor(out[3], B, 0, NULL, V(0)));
	CU_ASSERT(out[4]->kind == RT_OPTIONAL && out[4]->n == 0 &&
		  out[4]->elem_kind == RT_SEQUENCE && out[4]->dtype == F);
	unref_all(out, 5);
	ir_model_free(m);
}

static void test_optional_errors(void)
{
	struct ir_model *m = tm_new(15);
	struct rt_value *out;
	struct ir_node *n;
	char err[512];

	n = g_node(m->graph, "Optional", NULL, 0, N("e"), 1);
	set_type_attr(n, "type", ttype(F, -1, NULL));
	g_node(m->graph, "OptionalGetElement", N("e"), 1, N("y"), 1);
	g_output(m->graph, "y", ttype(F, -1, NULL));
	tm_verify(m);
	CU_ASSERT(run(m, NULL, 0, &out, 1, err, sizeof(err)) < 0);
	CU_ASSERT(has(err, "(OptionalGetElement): the optional input is empty"));
	ir_model_free(m);
	/* version 15 takes optionals only; 18 passes a tensor through */
	for (int v = 15; v <= 18; v += 3) {
		m = tm_new(v);
		tm_init(m, "x", F, D(1), 1, V(3));
		g_node(m->graph, "OptionalGetElement", N("x"), 1, N("y"), 1);
		g_output(m->graph, "y", ttype(F, -1, NULL));
		tm_verify(m);
		if (v == 15) {
			CU_ASSERT(run(m, NULL, 0, &out, 1, err, sizeof(err)) < 0);
			CU_ASSERT(has(err, "input is not an optional"));
		} else {
			CU_ASSERT_FATAL(run(m, NULL, 0, &out, 1, NULL, 0) == 0);
			CU_ASSERT(is_tensor(out, F, 1, D(1), V(3)));
			rt_value_unref(out);
		}
		ir_model_free(m);
	}
}

/* ---- model-local functions ------------------------------------------ */

/* Function local.F(a, b) -> (h, r): h = OptionalHasElement(b) (opset 18),
 * r = If(c) { Identity(a) } else { Constant -1 }, the branch capturing the
 * function's input a. */
static struct ir_model *function_model(int pass_b)
{
	struct ir_model *m = tm_new(18);
	struct ir_function *f = calloc(1, sizeof(*f));
	struct ir_graph *g, *t, *e;
	struct ir_node *n;

	CU_ASSERT_FATAL(f != NULL);
	m->opsets = realloc(m->opsets, 3 * sizeof(*m->opsets));
	CU_ASSERT_FATAL(m->opsets != NULL);
	m->opsets[2] = (struct ir_opset){ strdup("local"), 1, 1 };
	m->n_opsets = 3;
	f->name = strdup("F");
	f->domain = strdup("local");
	f->n_inputs = 3;
	f->inputs = calloc(4, sizeof(char *));
	f->inputs[0] = strdup("a");
	f->inputs[1] = strdup("b");
	f->inputs[2] = strdup("c");
	f->n_outputs = 2;
	f->outputs = calloc(3, sizeof(char *));
	f->outputs[0] = strdup("h");
	f->outputs[1] = strdup("r");
	f->n_opsets = 1;
	f->opsets = calloc(1, sizeof(*f->opsets));
	f->opsets[0] = (struct ir_opset){ strdup(""), 18, 1 };
	g = f->body = ir_graph_new(NULL);
	CU_ASSERT_FATAL(g != NULL);
	for (int i = 0; i < 3; i++)
		ir_graph_value(g, f->inputs[i])->is_input = 1;
	g_node(g, "OptionalHasElement", N("b"), 1, N("h"), 1);
	n = g_node(g, "If", N("c"), 1, N("r"), 1);
	t = g_sub(n, "then_branch");
	e = g_sub(n, "else_branch");
	g_node(t, "Identity", N("a"), 1, N("ta"), 1);
	g_output(t, "ta", ttype(F, -1, NULL));
	g_const(e, "ea", F, 1, D(1), V(-1));
	g_output(e, "ea", ttype(F, -1, NULL));
	m->functions = calloc(1, sizeof(*m->functions));
	m->functions[0] = f;
	m->n_functions = 1;

	tm_init(m, "x", F, D(1), 1, V(5));
	tm_init(m, "yes", B, NULL, 0, V(1));
	tm_node(m, "F", "local", N("x", pass_b ? "x" : "", "yes"), 3, N("h", "r"), 2);
	g_output(m->graph, "h", ttype(B, 0, NULL));
	g_output(m->graph, "r", ttype(F, -1, NULL));
	tm_verify(m);
	return m;
}

static void test_function_absent_input(void)
{
	for (int pass_b = 0; pass_b <= 1; pass_b++) {
		struct ir_model *m = function_model(pass_b);
		struct rt_value *out[2];

		CU_ASSERT_FATAL(run(m, NULL, 0, out, 2, NULL, 0) == 0);
		CU_ASSERT(is_tensor(out[0], B, 0, NULL, V(pass_b)));
		CU_ASSERT(is_tensor(out[1], F, 1, D(1), V(5)));
		unref_all(out, 2);
		ir_model_free(m);
	}
}

/* Function local.G(c) -> r with a graph attribute: r = If(c) with
 * then_branch referring to the call's attribute 'branch' (a graph of the
 * caller capturing the caller's x) and a local else_branch. */
static void test_function_graph_attr(void)
{
	for (int cond = 0; cond <= 1; cond++) {
		struct ir_model *m = tm_new(13);
		struct ir_function *f = calloc(1, sizeof(*f));
		struct ir_graph *g, *e, *br;
		struct ir_node *n, *call;
		struct ir_attr *a;
		struct rt_value *out;

		CU_ASSERT_FATAL(f != NULL);
		m->opsets = realloc(m->opsets, 3 * sizeof(*m->opsets));
		CU_ASSERT_FATAL(m->opsets != NULL);
		m->opsets[2] = (struct ir_opset){ strdup("local"), 1, 1 };
		m->n_opsets = 3;
		f->name = strdup("G");
		f->domain = strdup("local");
		f->n_inputs = 1;
		f->inputs = calloc(2, sizeof(char *));
		f->inputs[0] = strdup("c");
		f->n_outputs = 1;
		f->outputs = calloc(2, sizeof(char *));
		f->outputs[0] = strdup("r");
		f->n_attr_names = 1;
		f->attr_names = calloc(2, sizeof(char *));
		f->attr_names[0] = strdup("branch");
		f->n_opsets = 1;
		f->opsets = calloc(1, sizeof(*f->opsets));
		f->opsets[0] = (struct ir_opset){ strdup(""), 13, 1 };
		g = f->body = ir_graph_new(NULL);
		CU_ASSERT_FATAL(g != NULL);
		ir_graph_value(g, "c")->is_input = 1;
		n = g_node(g, "If", N("c"), 1, N("r"), 1);
		CU_ASSERT_FATAL(ir_node_set_int(n, "then_branch", 0) == 0);
		a = (struct ir_attr *)ir_node_attr(n, "then_branch");
		a->present &= ~IR_ATTR_HAS_I;
		a->type = IR_ATTR_GRAPH;
		a->ref_attr_name = strdup("branch");
		e = g_sub(n, "else_branch");
		g_const(e, "ea", F, 1, D(1), V(-1));
		g_output(e, "ea", ttype(F, -1, NULL));
		m->functions = calloc(1, sizeof(*m->functions));
		m->functions[0] = f;
		m->n_functions = 1;

		tm_init(m, "x", F, D(1), 1, V(5));
		tm_init(m, "c", B, NULL, 0, V(cond));
		call = tm_node(m, "G", "local", N("c"), 1, N("r"), 1);
		br = g_sub(call, "branch");
		g_node(br, "Identity", N("x"), 1, N("bx"), 1);
		g_output(br, "bx", ttype(F, -1, NULL));
		g_output(m->graph, "r", ttype(F, -1, NULL));
		tm_verify(m);
		CU_ASSERT_FATAL(run(m, NULL, 0, &out, 1, NULL, 0) == 0);
		CU_ASSERT(is_tensor(out, F, 1, D(1), cond ? V(5) : V(-1)));
		rt_value_unref(out);
		ir_model_free(m);
	}
}

static const struct unit_test tests[] = {
	{ "if_branches", test_if_branches },
	{ "if_bad_cond", test_if_bad_cond },
	{ "loop_trip_count", test_loop_trip_count },
	{ "loop_cond", test_loop_cond },
	{ "loop_errors", test_loop_errors },
	{ "loop_scan_shape_change", test_loop_scan_shape_change },
	{ "loop_memory_limit", test_loop_memory_limit },
	{ "loop_nested_capture", test_loop_nested_capture },
	{ "loop_optional_carried", test_loop_optional_carried },
	{ "scan", test_scan },
	{ "scan_axes", test_scan_axes },
	{ "scan_axes_property", test_scan_axes_property },
	{ "scan8", test_scan8 },
	{ "sequence_ops", test_sequence_ops },
	{ "split_to_sequence", test_split_to_sequence },
	{ "split_concat_roundtrip", test_split_concat_roundtrip },
	{ "sequence_errors", test_sequence_errors },
	{ "sequence_strings", test_sequence_strings },
	{ "sequence_map", test_sequence_map },
	{ "sequence_map_errors", test_sequence_map_errors },
	{ "optional", test_optional },
	{ "optional_errors", test_optional_errors },
	{ "function_absent_input", test_function_absent_input },
	{ "function_graph_attr", test_function_graph_attr },
	{ NULL, NULL },
};

int suite_kctrl_register(void)
{
	return unit_add_suite("kctrl", tests);
}
