/* build.c: one probe case's model from its op's seed: the variant applied
 * (dtype, attribute, rank, constant or graph input), a fresh one-node
 * model of the case's opset built around it, checked by the IR verifier,
 * static inference and the interpreter, whose outputs are the reference
 * and declare the graph outputs' types.  A variant that makes no valid
 * model is IR_EINVAL: the case is dropped, not run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/infer.h"
#include "probe/probe_int.h"
#include "runtime/inputs.h"

void probe_built_release(struct probe_built *b)
{
	for (size_t i = 0; i < b->n_in; i++) {
		rt_value_unref(b->in[i]);
		free(b->in_names[i]);
	}
	for (size_t i = 0; i < b->n_out; i++) {
		rt_value_unref(b->out[i]);
		free(b->out_names[i]);
	}
	free(b->in);
	free(b->in_names);
	free(b->out);
	free(b->out_names);
	ir_model_free(b->m);
	memset(b, 0, sizeof(*b));
}

static int is_float(int dt)
{
	return dt == IR_DTYPE_FLOAT || dt == IR_DTYPE_FLOAT16 || dt == IR_DTYPE_DOUBLE ||
	       dt == IR_DTYPE_BFLOAT16;
}

/* Seeded values of dtype and shape: floats in [-1, 1), integers 1..7
 * (no zero divisors), bools 0/1. */
static int fresh(int dtype, int rank, const int64_t *dims, uint64_t *state,
		 struct rt_value **out, struct ir_diag *d)
{
	int rc = rt_tensor_new(NULL, dtype, rank, dims, out, d);

	for (int64_t i = 0; rc == 0 && i < (*out)->numel; i++) {
		double u = rt_rand_unit(state);

		rt_value_set_f64(*out, i, is_float(dtype) ? 2 * u - 1 :
				 dtype == IR_DTYPE_BOOL ? (double)(u < 0.5) : (double)(1 + (int)(u * 7)));
	}
	return rc;
}

/* v in dtype: floats cast, other conversions fresh values of v's shape. */
static int convert(struct rt_value *v, int dtype, uint64_t *state, struct rt_value **out,
		   struct ir_diag *d)
{
	if (v->dtype == dtype)
		return (*out = rt_value_ref(v)) ? 0 : -1;
	if (is_float(dtype) && (is_float(v->dtype) || v->dtype != IR_DTYPE_BOOL))
		return rt_tensor_cast(NULL, v, dtype, out, d);
	return fresh(dtype, v->rank, v->dims, state, out, d);
}

static struct ir_type *tensor_type(int dtype, int rank, const int64_t *dims, int dynamic)
{
	struct ir_type *t = calloc(1, sizeof(*t));

	if (!t || !(t->shape.dims = calloc((size_t)rank + 1, sizeof(*t->shape.dims)))) {
		free(t);
		return NULL;
	}
	t->kind = IR_TYPE_TENSOR;
	t->present = IR_TYPE_HAS_ELEM | IR_TYPE_HAS_SHAPE;
	t->elem_type = dtype;
	t->shape.n_dims = (size_t)rank;
	for (int i = 0; i < rank; i++) {
		if (dynamic && i == 0) {
			t->shape.dims[i].kind = IR_DIM_PARAM;
			if (!(t->shape.dims[i].param = strdup("N"))) {
				ir_type_free(t);
				return NULL;
			}
			continue;
		}
		t->shape.dims[i].kind = IR_DIM_VALUE;
		t->shape.dims[i].value = dims[i];
	}
	return t;
}

static int add_vinfo(struct ir_vinfo **list, size_t *n, struct ir_value *v, struct ir_type *t,
		     int untyped)
{
	struct ir_vinfo *q;

	if ((!t && !untyped) || !(q = realloc(*list, (*n + 1) * sizeof(*q)))) {
		ir_type_free(t);
		return IR_ENOMEM;
	}
	*list = q;
	memset(&q[*n], 0, sizeof(q[*n]));
	q[*n].value = v;
	q[*n].type = t;
	(*n)++;
	if (!v->type)
		v->type = t;
	return 0;
}

struct work {
	size_t n_in;
	struct rt_value *in[PROBE_MAX_IO];
	int is_const[PROBE_MAX_IO];
};

/* The inputs of the case: the seed's, with the variant applied. */
static int apply_inputs(const struct probe_case *c, const struct probe_spec *sp,
			uint64_t *state, struct work *w, struct ir_diag *d)
{
	const struct ir_op_schema *s = c->schema;
	const char *dc = probe_data_constraint(s);
	static const int64_t rdims[] = { 2, 3, 4, 5, 3 };
	int rc = 0;

	/* trailing absent optionals are no inputs (a seed of a newer
	 * version may have slots this version lacks) */
	w->n_in = sp->n_in;
	while (w->n_in && !sp->in[w->n_in - 1])
		w->n_in--;
	for (size_t i = 0; i < w->n_in && rc == 0; i++) {
		const char *ft = probe_formal_type(s, 1, i);
		int data = dc && ft && !strcmp(ft, dc);
		struct rt_value *v = sp->in[i];

		if (!v)
			continue;
		if (c->kind == PROBE_BACKEND)
			w->is_const[i] = sp->is_const[i];
		else if (c->kind == PROBE_BACKEND_CONST)
			w->is_const[i] = i ? 1 : sp->is_const[i];
		else if (c->kind == PROBE_GRAPH && (int)i == c->input)
			w->is_const[i] = 0;
		else if (c->kind == PROBE_CONST && i == 0)
			w->is_const[i] = 1;
		else
			w->is_const[i] = i > 0;
		if (c->kind == PROBE_RANK && data)
			rc = fresh(c->dtype, c->rank, rdims, state, &w->in[i], d);
		else if (data && c->dtype)
			rc = convert(v, c->dtype, state, &w->in[i], d);
		else
			w->in[i] = rt_value_ref(v);
	}
	/* depthwise convolution: the weights of one input channel per group */
	if (rc == 0 && c->kind == PROBE_ATTR && !strcmp(c->attr, "group") &&
	    !strcmp(s->name, "Conv") && w->n_in > 1 && w->in[0] && w->in[1] &&
	    w->in[1]->rank == w->in[0]->rank) {
		struct rt_value *wt = w->in[1], *nw;
		int64_t dims[RT_MAX_RANK];

		memcpy(dims, wt->dims, sizeof(dims));
		dims[0] = c->value.i;
		dims[1] = 1;
		if ((rc = fresh(wt->dtype, wt->rank, dims, state, &nw, d)) == 0) {
			rt_value_unref(wt);
			w->in[1] = nw;
		}
		if (rc == 0 && w->n_in > 2 && w->in[2]) {
			int64_t bd = c->value.i;

			if ((rc = fresh(w->in[2]->dtype, 1, &bd, state, &nw, d)) == 0) {
				rt_value_unref(w->in[2]);
				w->in[2] = nw;
			}
		}
	}
	return rc;
}

/* What the spec asks that the interpreter does not check: Mod of floats
 * needs fmod 1 (set, unless the case varies it: then no valid model). */
static int spec_rules(const struct probe_case *c, struct ir_node *n, const struct work *w,
		      struct ir_diag *d)
{
	if (!strcmp(c->schema->name, "Mod") && w->n_in && w->in[0] && is_float(w->in[0]->dtype)) {
		const struct ir_attr *a = ir_node_attr(n, "fmod");

		if (a && a->type == IR_ATTR_INT && a->i == 1)
			return 0;
		if (c->kind == PROBE_ATTR && !strcmp(c->attr, "fmod"))
			return diag_error(d, "Mod of floats needs fmod 1");
		if (ir_node_set_int(n, "fmod", 1) < 0)
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	return 0;
}

static int build_model(const struct probe_case *c, const struct probe_spec *sp,
		       struct work *w, struct probe_built *b, struct ir_diag *d)
{
	const struct ir_op_schema *s = c->schema;
	struct ir_model *m = b->m = ir_model_new();
	struct ir_graph *g;
	struct ir_node *n;
	int dflt = !strcmp(s->domain, "ai.onnx");
	size_t n_out = sp->n_out;
	char name[32];
	int rc;

	if (!m || !(g = m->graph = ir_graph_new(NULL)) ||
	    !(m->opsets = calloc(2, sizeof(*m->opsets))) || !(g->name = strdup("probe")) ||
	    !(m->producer_name = strdup("opmig probe")))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	m->ir_version = probe_ir_version(c->opset);
	m->present = IR_MODEL_HAS_IR_VERSION;
	if (!(m->opsets[0].domain = strdup("")))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	m->opsets[0].version = c->opset;
	m->opsets[0].present = 1;
	m->n_opsets = 1;
	if (!dflt) {
		if (!(m->opsets[1].domain = strdup(s->domain)))
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		m->opsets[1].version = s->since_version;
		m->opsets[1].present = 1;
		m->n_opsets = 2;
	}
	if (!(n = ir_node_create(s->name, dflt ? "" : s->domain, "node")))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	if ((rc = ir_graph_add_node(g, n)) < 0) {
		ir_node_free(n);
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	if (!(b->in = calloc(w->n_in + 1, sizeof(*b->in))) ||
	    !(b->in_names = calloc(w->n_in + 1, sizeof(*b->in_names))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < w->n_in; i++) {
		struct ir_value *v = NULL;
		struct rt_value *x = w->in[i];

		snprintf(name, sizeof(name), "in%zu", i);
		if (x && w->is_const[i]) {
			struct ir_tensor *t;

			if ((rc = rt_value_to_ir(x, name, &t, d)) < 0)
				return rc;
			if (!(v = ir_graph_add_initializer(g, t)))
				return ir_diag_error(d, IR_ENOMEM, "out of memory");
		} else if (x) {
			if (!(v = ir_graph_value(g, name)))
				return ir_diag_error(d, IR_ENOMEM, "out of memory");
			v->is_input = 1;
			if ((rc = add_vinfo(&g->inputs, &g->n_inputs, v,
					    tensor_type(x->dtype, x->rank, x->dims,
							c->kind == PROBE_DYNAMIC), 0)) < 0)
				return ir_diag_error(d, IR_ENOMEM, "out of memory");
			if (!(b->in_names[b->n_in] = strdup(name)))
				return ir_diag_error(d, IR_ENOMEM, "out of memory");
			b->in[b->n_in++] = rt_value_ref(x);
		}
		if (ir_node_append_input(n, v) < 0)
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	while (n_out > 1 && !sp->out_present[n_out - 1])
		n_out--;
	if (!(b->out_names = calloc(n_out + 1, sizeof(*b->out_names))) ||
	    !(b->out = calloc(n_out + 1, sizeof(*b->out))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < n_out; i++) {
		struct ir_value *v = NULL;

		if (sp->out_present[i]) {
			snprintf(name, sizeof(name), "out%zu", i);
			if (!(v = ir_graph_value(g, name)) || !(b->out_names[b->n_out++] = strdup(name)) ||
			    add_vinfo(&g->outputs, &g->n_outputs, v, NULL, 1) < 0)
				return ir_diag_error(d, IR_ENOMEM, "out of memory");
		}
		if (ir_node_append_output(n, v) < 0)
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < sp->node->n_attrs; i++) {
		const struct ir_attr *a = sp->node->attrs[i];

		if ((rc = ir_node_copy_attr(n, ir_s(a->name), a)) < 0)
			return ir_diag_error(d, rc, "attribute '%s' cannot be copied", ir_s(a->name));
	}
	if (c->kind == PROBE_ATTR) {
		if ((rc = probe_aval_set(n, c->attr, &c->value)) < 0)
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		/* explicit pads go with auto_pad NOTSET only */
		if (!strcmp(c->attr, "auto_pad") && strcmp(ir_s(c->value.s), "NOTSET"))
			ir_node_remove_attr(n, "pads");
	}
	return spec_rules(c, n, w, d);
}

/* Declare the graph outputs' types from the interpreter's values. */
static int declare_outputs(const struct probe_case *c, struct probe_built *b, struct ir_diag *d)
{
	struct ir_graph *g = b->m->graph;

	for (size_t i = 0; i < b->n_out; i++) {
		struct rt_value *v = b->out[i];
		struct ir_vinfo *vi = &g->outputs[i];

		if (v->kind != RT_TENSOR || v->dtype == IR_DTYPE_STRING)
			return diag_error(d, "output %zu is not a numeric tensor", i);
		if (!(vi->type = tensor_type(v->dtype, v->rank, v->dims,
					     c->kind == PROBE_DYNAMIC && v->rank > 0)))
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		vi->value->type = vi->type;
	}
	return 0;
}

/* Outputs the inputs do not determine: random ops, Dropout in training
 * mode, the order of an unsorted TopK. */
static int shapes_only(const struct probe_case *c, const struct ir_node *n, const struct work *w)
{
	const char *op = c->schema->name;
	const struct ir_attr *a;

	if (probe_op_random(op))
		return 1;
	if (!strcmp(op, "Dropout") && w->n_in > 2 && w->in[2] && w->in[2]->numel == 1 &&
	    rt_value_get_f64(w->in[2], 0) != 0)
		return 1;
	return !strcmp(op, "TopK") && (a = ir_node_attr(n, "sorted")) && a->type == IR_ATTR_INT &&
		a->i == 0;
}

int probe_build(const struct probe_case *c, const struct probe_spec *seed,
		uint64_t rseed, struct probe_built *b, struct ir_diag *d)
{
	struct work w;
	struct rt_session *s = NULL;
	struct rt_opts ro;
	struct ir_infer inf;
	uint64_t state = rseed;
	int rc;

	memset(&w, 0, sizeof(w));
	memset(b, 0, sizeof(*b));
	memset(&ro, 0, sizeof(ro));
	ro.threads = 1;
	ir_infer_init(&inf);
	for (const char *p = c->id; *p; p++)
		state = state * 31 + (unsigned char)*p;
	if ((rc = apply_inputs(c, seed, &state, &w, d)) < 0 ||
	    (rc = build_model(c, seed, &w, b, d)) < 0)
		goto cleanup;
	if ((rc = ir_model_verify(b->m, d)) < 0 || (rc = ir_infer_model(b->m, &inf, d)) < 0)
		goto cleanup;
	if ((rc = rt_session_new(b->m, &ro, &s, d)) < 0)
		goto cleanup;
	if (rt_session_n_outputs(s) != b->n_out || rt_session_n_inputs(s) != b->n_in) {
		rc = diag_error(d, "the model's interface is not the one built");
		goto cleanup;
	}
	if ((rc = rt_session_run(s, b->in, b->n_in, b->out, d)) < 0)
		goto cleanup;
	b->shapes_only = shapes_only(c, b->m->graph->nodes[0], &w);
	rc = declare_outputs(c, b, d);
cleanup:
	rt_session_free(s);
	ir_infer_release(&inf);
	for (size_t i = 0; i < w.n_in; i++)
		rt_value_unref(w.in[i]);
	if (rc < 0 && rc != IR_ENOMEM && rc != IR_EIO)
		rc = IR_EINVAL;
	return rc;
}
