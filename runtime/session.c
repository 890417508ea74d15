/* session.c: the public face of the interpreter: sessions (plans, thread
 * pool, memory accounting), input checks against the graph's declared
 * types, one run of the main graph, and statistics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/exec_int.h"

static int check_input(const struct ir_vinfo *vi, const struct rt_value *v,
		       struct ir_diag *d);

struct rt_session_ext {
	struct rt_session s;
	struct rt_stats sorted;
};

int rt_session_new(struct ir_model *m, const struct rt_opts *o,
		   struct rt_session **out, struct ir_diag *d)
{
	struct rt_session_ext *x = calloc(1, sizeof(*x));
	struct rt_session *s;
	const struct ir_graph *g = m->graph;
	int rc;

	*out = NULL;
	if (!x)
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	s = &x->s;
	s->m = m;
	if (o)
		s->o = *o;
	s->threads = s->o.threads > 0 ? s->o.threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (s->threads < 1)
		s->threads = 1;
	s->mem.limit = s->o.max_memory;
	if (!g) {
		rc = diag_error(d, "model has no graph");
		goto fail;
	}
	if (!(s->inputs = calloc(g->n_inputs + 1, sizeof(*s->inputs)))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < g->n_inputs; i++)
		if (g->inputs[i].value && !g->inputs[i].value->init &&
		    !g->inputs[i].value->sparse_init)
			s->inputs[s->n_inputs++] = &g->inputs[i];
	if ((rc = rt_plan_build(s, d)) < 0)
		goto fail;
	if (rt_pool_new(s->threads, &s->pool) < 0) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto fail;
	}
	s->stats.viewed_bytes = s->viewed;
	*out = s;
	return 0;
fail:
	rt_session_free(s);
	return rc;
}

void rt_session_free(struct rt_session *s)
{
	struct rt_session_ext *x = (struct rt_session_ext *)s;

	if (!s)
		return;
	for (size_t i = 0; i < s->n_plans; i++)
		rt_plan_free(s->plans[i]);
	free(s->plans);
	free(s->inputs);
	free(s->stats.ops);
	free(x->sorted.ops);
	free(x->sorted.nodes);
	rt_shared_free(s);   /* after the plans, whose caches may point into it */
	rt_profile_free(s->prof);
	rt_pool_free(s->pool);
	free(x);
}

void rt_session_set_observer(struct rt_session *s, rt_observe_fn fn, void *ctx)
{
	s->o.observe = fn;
	s->o.observe_ctx = ctx;
}

size_t rt_session_n_inputs(const struct rt_session *s)
{
	return s->n_inputs;
}

const struct ir_vinfo *rt_session_input(const struct rt_session *s, size_t i)
{
	return i < s->n_inputs ? s->inputs[i] : NULL;
}

size_t rt_session_n_outputs(const struct rt_session *s)
{
	return s->m->graph->n_outputs;
}

const struct ir_vinfo *rt_session_output(const struct rt_session *s, size_t i)
{
	return i < s->m->graph->n_outputs ? &s->m->graph->outputs[i] : NULL;
}

struct rt_mem *rt_session_mem(struct rt_session *s)
{
	return &s->mem;
}

static void declared_text(const struct ir_type *t, char *buf, size_t size)
{
	size_t o;

	if (!t || t->kind != IR_TYPE_TENSOR) {
		snprintf(buf, size, "%s", !t ? "?" : t->kind == IR_TYPE_SEQUENCE ?
			 "sequence" : t->kind == IR_TYPE_OPTIONAL ? "optional" :
			 t->kind == IR_TYPE_MAP ? "map" : "?");
		return;
	}
	o = (size_t)snprintf(buf, size, "%s", ir_dtype_name(t->elem_type));
	if (!IR_HAS(t, IR_TYPE_HAS_SHAPE))
		return;
	o += (size_t)snprintf(buf + o, size > o ? size - o : 0, "[");
	for (size_t i = 0; i < t->shape.n_dims && o < size; i++) {
		const struct ir_dim *dm = &t->shape.dims[i];

		if (dm->kind == IR_DIM_VALUE)
			o += (size_t)snprintf(buf + o, size - o, "%s%lld", i ? "," : "",
					      (long long)dm->value);
		else
			o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? "," : "",
					      dm->kind == IR_DIM_PARAM ? ir_s(dm->param) : "?");
	}
	if (o < size)
		snprintf(buf + o, size - o, "]");
}

int rt_session_check_input(const struct rt_session *s, size_t i,
			   const struct rt_value *v, struct ir_diag *d)
{
	const struct ir_vinfo *vi = rt_session_input(s, i);

	return vi ? check_input(vi, v, d) : diag_error(d, "no input %zu", i);
}

/* A bound input must match the declared dtype, rank and static dims. */
static int check_input(const struct ir_vinfo *vi, const struct rt_value *v,
		       struct ir_diag *d)
{
	const struct ir_type *t = vi->type;
	char want[256], got[256];
	int bad = 0;

	if (!t)
		return 0;
	if (t->kind == IR_TYPE_TENSOR) {
		bad = v->kind != RT_TENSOR ||
		      (IR_HAS(t, IR_TYPE_HAS_ELEM) && t->elem_type && t->elem_type != v->dtype);
		if (!bad && IR_HAS(t, IR_TYPE_HAS_SHAPE)) {
			bad = (int)t->shape.n_dims != v->rank;
			for (size_t i = 0; !bad && i < t->shape.n_dims; i++)
				bad = t->shape.dims[i].kind == IR_DIM_VALUE &&
				      t->shape.dims[i].value != v->dims[i];
		}
	} else if (t->kind == IR_TYPE_SEQUENCE) {
		bad = v->kind != RT_SEQUENCE;
	} else if (t->kind == IR_TYPE_OPTIONAL) {
		bad = v->kind != RT_OPTIONAL;
	}
	if (!bad)
		return 0;
	declared_text(t, want, sizeof(want));
	rt_value_describe(v, got, sizeof(got));
	return diag_error(d, "input '%s' is %s, the model declares %s",
			  ir_s(vi->value->name), got, want);
}

int rt_session_run(struct rt_session *s, struct rt_value **inputs, size_t n,
		   struct rt_value **outputs, struct ir_diag *d)
{
	struct rt_run *r;
	int rc;

	for (size_t i = 0; i < rt_session_n_outputs(s); i++)
		outputs[i] = NULL;
	if ((rc = rt_run_begin(s, inputs, n, &r, d)) < 0)
		return rc;
	while ((rc = rt_run_step(r, d)) > 0)
		;
	return rt_run_end(r, rc, outputs, d);
}

static int cmp_stat(const void *a, const void *b)
{
	const struct rt_op_stat *x = a, *y = b;

	if (x->seconds != y->seconds)
		return x->seconds < y->seconds ? 1 : -1;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->op, y->op);
}

static int cmp_node(const void *a, const void *b)
{
	const struct rt_node_stat *x = a, *y = b;

	if (x->seconds != y->seconds)
		return x->seconds < y->seconds ? 1 : -1;
	return 0;
}

/* every node that ran with its time, slowest first (none when out of
 * memory) */
static void node_stats(struct rt_session *s, struct rt_session_ext *x)
{
	size_t n = 0, k = 0;
	struct rt_node_stat *ns;

	for (size_t i = 0; i < s->n_plans; i++)
		for (size_t j = 0; j < s->plans[i]->n_nodes; j++)
			n += s->plans[i]->nodes[j].runs > 0;
	x->sorted.n_nodes = 0;
	if (!(ns = realloc(x->sorted.nodes, (n + 1) * sizeof(*ns)))) {
		free(x->sorted.nodes);
		x->sorted.nodes = NULL;
		return;
	}
	for (size_t i = 0; i < s->n_plans; i++)
		for (size_t j = 0; j < s->plans[i]->n_nodes; j++) {
			const struct rt_nplan *np = &s->plans[i]->nodes[j];

			if (np->runs > 0)
				ns[k++] = (struct rt_node_stat){ np->node, np->runs, np->seconds };
		}
	qsort(ns, k, sizeof(*ns), cmp_node);
	x->sorted.nodes = ns;
	x->sorted.n_nodes = k;
}

const struct rt_stats *rt_session_stats(struct rt_session *s)
{
	struct rt_session_ext *x = (struct rt_session_ext *)s;
	struct rt_op_stat *ops = realloc(x->sorted.ops,
					 (s->stats.n_ops + 1) * sizeof(*ops));
	struct rt_node_stat *nodes = x->sorted.nodes;

	if (!ops)
		free(x->sorted.ops);
	x->sorted = s->stats;
	x->sorted.peak_bytes = s->mem.peak;
	x->sorted.nodes = nodes;
	x->sorted.ops = ops;
	if (!ops) {
		x->sorted.n_ops = 0;
		return &x->sorted;
	}
	memcpy(ops, s->stats.ops, s->stats.n_ops * sizeof(*ops));
	qsort(ops, s->stats.n_ops, sizeof(*ops), cmp_stat);
	node_stats(s, x);
	return &x->sorted;
}
