/* tmodel.c: small test models built through the IR editing API (see
 * tmodel.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "tests/unit/tmodel.h"
#include "runtime/inputs.h"

struct ir_model *tm_new(int64_t opset)
{
	struct ir_model *m = ir_model_new();

	CU_ASSERT_FATAL(m != NULL);
	m->graph = ir_graph_new(NULL);
	m->opsets = calloc(2, sizeof(*m->opsets));
	CU_ASSERT_FATAL(m->graph && m->opsets);
	m->opsets[0].domain = strdup("");
	m->opsets[0].version = opset;
	m->opsets[0].present = 1;
	m->opsets[1].domain = strdup("com.microsoft");
	m->opsets[1].version = 1;
	m->opsets[1].present = 1;
	m->n_opsets = 2;
	m->ir_version = 8;
	m->present = IR_MODEL_HAS_IR_VERSION;
	m->graph->name = strdup("test");
	return m;
}

static struct ir_type *tensor_type(int dtype, const int64_t *dims, size_t n)
{
	struct ir_type *t = calloc(1, sizeof(*t));

	CU_ASSERT_FATAL(t != NULL);
	t->kind = IR_TYPE_TENSOR;
	t->present = IR_TYPE_HAS_ELEM | IR_TYPE_HAS_SHAPE;
	t->elem_type = dtype;
	t->shape.n_dims = n;
	t->shape.dims = calloc(n + 1, sizeof(*t->shape.dims));
	CU_ASSERT_FATAL(t->shape.dims != NULL);
	for (size_t i = 0; i < n; i++) {
		t->shape.dims[i].kind = IR_DIM_VALUE;
		t->shape.dims[i].value = dims[i];
	}
	return t;
}

static void add_vinfo(struct ir_vinfo **list, size_t *count, struct ir_value *v,
		      struct ir_type *t)
{
	struct ir_vinfo *q = realloc(*list, (*count + 1) * sizeof(*q));

	CU_ASSERT_FATAL(q != NULL);
	*list = q;
	memset(&q[*count], 0, sizeof(q[*count]));
	q[*count].value = v;
	q[*count].type = t;
	(*count)++;
	if (!v->type)
		v->type = t;
}

struct ir_value *tm_input(struct ir_model *m, const char *name, int dtype,
			  const int64_t *dims, size_t n)
{
	struct ir_value *v = ir_graph_value(m->graph, name);

	CU_ASSERT_FATAL(v != NULL);
	v->is_input = 1;
	add_vinfo(&m->graph->inputs, &m->graph->n_inputs, v, tensor_type(dtype, dims, n));
	return v;
}

void tm_output(struct ir_model *m, const char *name, int dtype,
	       const int64_t *dims, size_t n)
{
	struct ir_value *v = ir_graph_value(m->graph, name);

	CU_ASSERT_FATAL(v != NULL);
	add_vinfo(&m->graph->outputs, &m->graph->n_outputs, v,
		  dims ? tensor_type(dtype, dims, n) : tensor_type(dtype, NULL, 0));
	if (!dims)
		m->graph->outputs[m->graph->n_outputs - 1].type->present &= ~IR_TYPE_HAS_SHAPE;
}

struct ir_value *tm_init(struct ir_model *m, const char *name, int dtype,
			 const int64_t *dims, size_t n, const double *vals)
{
	struct rt_value *t;
	struct ir_tensor *it;
	struct ir_value *v;
	struct ir_diag d;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(rt_tensor_new(NULL, dtype, (int)n, dims, &t, &d) == 0);
	for (int64_t i = 0; i < t->numel; i++)
		rt_value_set_f64(t, i, vals[i]);
	CU_ASSERT_FATAL(rt_value_to_ir(t, name, &it, &d) == 0);
	rt_value_unref(t);
	v = ir_graph_add_initializer(m->graph, it);
	CU_ASSERT_FATAL(v != NULL);
	return v;
}

struct ir_node *tm_node(struct ir_model *m, const char *op, const char *domain,
			const char *const *in, size_t n_in,
			const char *const *out, size_t n_out)
{
	char name[64];
	struct ir_node *n;

	snprintf(name, sizeof(name), "%s_%zu", op, m->graph->n_nodes);
	n = ir_node_create(op, domain, name);
	CU_ASSERT_FATAL(n != NULL);
	for (size_t i = 0; i < n_in; i++)
		CU_ASSERT_FATAL(ir_node_append_input(n, *in[i] ?
						     ir_graph_value(m->graph, in[i]) : NULL) == 0);
	for (size_t i = 0; i < n_out; i++)
		CU_ASSERT_FATAL(ir_node_append_output(n, ir_graph_value(m->graph, out[i])) == 0);
	CU_ASSERT_FATAL(ir_graph_add_node(m->graph, n) == 0);
	return n;
}

void tm_verify(struct ir_model *m)
{
	struct ir_diag d;

	ir_diag_init(&d);
	if (ir_model_verify(m, &d) < 0)
		fprintf(stderr, "\nverify: %s\n", d.msg);
	CU_ASSERT_FATAL(d.status == 0);
}

int tm_run(struct ir_model *m, uint64_t seed, struct rt_value **outs, size_t n_outs)
{
	struct rt_opts o = { .threads = 1 };
	struct rt_input_opts io = { .seed = seed };
	struct rt_value_range r[16];
	struct rt_session *s = NULL;
	struct rt_value **ins = NULL;
	char names[16][80];
	struct ir_diag d;
	int rc;

	ir_diag_init(&d);
	for (size_t i = 0; i < m->graph->n_inputs && i < 16; i++) {
		snprintf(names[i], sizeof(names[i]), "%s=", ir_s(m->graph->inputs[i].value->name));
		r[i] = (struct rt_value_range){ names[i], -3, 3 };
	}
	io.ranges = r;
	io.n_ranges = m->graph->n_inputs < 16 ? m->graph->n_inputs : 16;
	if ((rc = rt_session_new(m, &o, &s, &d)) < 0)
		goto cleanup;
	CU_ASSERT_FATAL(rt_session_n_outputs(s) == n_outs);
	ins = calloc(rt_session_n_inputs(s) + 1, sizeof(*ins));
	CU_ASSERT_FATAL(ins != NULL);
	if ((rc = rt_inputs_random(s, m, &io, ins, &d)) < 0)
		goto cleanup;
	rc = rt_session_run(s, ins, rt_session_n_inputs(s), outs, &d);
cleanup:
	if (rc < 0)
		fprintf(stderr, "\nrun: %s\n", d.msg);
	if (ins)
		rt_inputs_release(ins, rt_session_n_inputs(s));
	free(ins);
	rt_session_free(s);
	return rc;
}

int tm_run_floats(struct ir_model *m, const double *const *vals, struct rt_value **outs,
		  size_t n_outs)
{
	struct rt_opts o = { .threads = 1 };
	struct rt_session *s = NULL;
	struct rt_value *ins[16] = { 0 };
	size_t n_in = m->graph->n_inputs;
	struct ir_diag d;
	int rc;

	ir_diag_init(&d);
	CU_ASSERT_FATAL(n_in <= 16);
	for (size_t i = 0; i < n_in; i++) {
		const struct ir_type *t = m->graph->inputs[i].type;
		int64_t dims[8];
		int rank = (int)t->shape.n_dims;

		CU_ASSERT_FATAL(rank <= 8);
		for (int j = 0; j < rank; j++)
			dims[j] = t->shape.dims[j].value;
		CU_ASSERT_FATAL(rt_tensor_new(NULL, IR_DTYPE_FLOAT, rank, dims, &ins[i], &d) == 0);
		for (int64_t e = 0; e < ins[i]->numel; e++)
			((float *)ins[i]->data)[e] = (float)vals[i][e];
	}
	if ((rc = rt_session_new(m, &o, &s, &d)) >= 0) {
		CU_ASSERT_FATAL(rt_session_n_outputs(s) == n_outs);
		rc = rt_session_run(s, ins, n_in, outs, &d);
	}
	if (rc < 0)
		fprintf(stderr, "\nrun: %s\n", d.msg);
	for (size_t i = 0; i < n_in; i++)
		rt_value_unref(ins[i]);
	rt_session_free(s);
	return rc;
}
