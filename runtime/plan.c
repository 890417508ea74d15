/* plan.c: execution plans, built once per session for every graph the
 * model can run (main graph, subgraphs, called model-local functions, the
 * function bodies of spec operators that have no kernel): value slots, the
 * kernel of each node (a node with neither kernel nor function is an error
 * before anything runs), where each input is read from, constants, and
 * liveness: the slots each node is the last consumer of; then fold.c
 * marks the main graph's constant nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/exec_int.h"

#define MAX_PLAN_DEPTH 64

static int cmp_vidx(const void *a, const void *b)
{
	const struct rt_vidx *x = a, *y = b;

	return (x->v > y->v) - (x->v < y->v);
}

int rt_plan_slot(const struct rt_gplan *p, const struct ir_value *v)
{
	struct rt_vidx key = { v, 0 }, *hit;

	hit = bsearch(&key, p->index, p->n_slots, sizeof(key), cmp_vidx);
	return hit ? hit->slot : -1;
}

/* Resolve a value read in plan p: this scope or an enclosing one. */
static int resolve(const struct rt_gplan *p, const struct ir_value *v,
		   struct rt_ref *r)
{
	r->up = 0;
	r->slot = -1;
	if (!v)
		return 0;
	for (; p; p = p->parent, r->up++)
		if (v->graph == p->g && (r->slot = rt_plan_slot(p, v)) >= 0)
			return 0;
	return -1;
}

static void plan_release(struct rt_gplan *p);

void rt_plan_free(struct rt_gplan *p)
{
	if (!p)
		return;
	plan_release(p);
	free(p);
}

struct rt_nplan *rt_plan_node(struct rt_gplan *p, const struct ir_node *n)
{
	if (!n || n->graph != p->g || n->index >= p->n_nodes || p->nodes[n->index].node != n)
		return NULL;
	return &p->nodes[n->index];
}

struct rt_nplan *rt_plan_sole_use(struct rt_gplan *p, const struct ir_value *v)
{
	struct rt_nplan *c;
	size_t reads = 0;

	if (!v || v->n_uses != 1 || ir_graph_is_output(p->g, v) ||
	    !(c = rt_plan_node(p, v->uses[0])))
		return NULL;
	for (size_t i = 0; i < c->node->n_inputs; i++)
		reads += c->node->inputs[i] == v;
	return reads == 1 ? c : NULL;
}

void rt_nplan_cache_free(struct rt_nplan *np)
{
	if (np->cache) {
		if (np->cache_free)   /* NULL: the session's (shared.c) */
			np->cache_free(np->cache);
		np->cache_mem->cur -= np->cache_bytes;
		np->cache = NULL;
	}
}

static void plan_release(struct rt_gplan *p)
{
	rt_qdq_release(p);
	for (size_t i = 0; p->nodes && i < p->n_nodes; i++) {
		free(p->nodes[i].in);
		free(p->nodes[i].out);
		free(p->nodes[i].release);
		free(p->nodes[i].subs);
		rt_nplan_cache_free(&p->nodes[i]);
		rt_fold_release(&p->nodes[i]);
		rt_chain_release(&p->nodes[i]);
		rt_lowp_release(&p->nodes[i]);
		rt_cat_release(&p->nodes[i]);
	}
	for (size_t i = 0; i < p->n_consts; i++)
		rt_value_unref(p->const_val[i]);
	free(p->nodes);
	free(p->slot_value);
	free(p->index);
	free(p->in);
	free(p->out);
	free(p->const_slot);
	free(p->const_val);
	/* a spec operator's body: the plan owns the parsed function */
	ir_function_free(p->spec_fn);
	ir_node_free(p->fn_defaults);
}

static int add_plan(struct rt_session *s, struct rt_gplan *p, struct ir_diag *d)
{
	if (s->n_plans == s->cap_plans) {
		size_t cap = s->cap_plans ? s->cap_plans * 2 : 8;
		struct rt_gplan **q = realloc(s->plans, cap * sizeof(*q));

		if (!q)
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		s->plans = q;
		s->cap_plans = cap;
	}
	s->plans[s->n_plans++] = p;
	return 0;
}

struct rt_gplan *rt_plan_find(struct rt_session *s, const struct ir_graph *g)
{
	for (size_t i = 0; i < s->n_plans; i++)
		if (s->plans[i]->g == g)
			return s->plans[i];
	return NULL;
}

static size_t stat_index(struct rt_session *s, const char *domain,
			 const char *op, struct ir_diag *d, int *rc)
{
	struct rt_stats *st = &s->stats;

	for (size_t i = 0; i < st->n_ops; i++)
		if (!strcmp(st->ops[i].domain, domain) && !strcmp(st->ops[i].op, op))
			return i;
	if (st->n_ops == s->cap_stats) {
		size_t cap = s->cap_stats ? s->cap_stats * 2 : 32;
		struct rt_op_stat *q = realloc(st->ops, cap * sizeof(*q));

		if (!q) {
			*rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
			return 0;
		}
		st->ops = q;
		s->cap_stats = cap;
	}
	st->ops[st->n_ops] = (struct rt_op_stat){ .domain = domain, .op = op };
	return st->n_ops++;
}

/* A sparse initializer as a dense tensor. */
static int densify(struct rt_session *s, struct ir_sparse *sp,
		   struct rt_value **out, struct ir_diag *d)
{
	struct rt_value *vals = NULL, *idx = NULL, *t = NULL;
	int rc, rank = (int)sp->n_dims;
	size_t es;

	*out = NULL;
	if (!sp->values || !sp->indices || rank > RT_MAX_RANK)
		return diag_error(d, "sparse initializer without values or indices");
	if ((rc = rt_value_from_ir(&s->mem, sp->values, &vals, d)) < 0 ||
	    (rc = rt_value_from_ir(&s->mem, sp->indices, &idx, d)) < 0 ||
	    (rc = rt_tensor_new(&s->mem, vals->dtype, rank, sp->dims, &t, d)) < 0)
		goto cleanup;
	es = rt_dtype_size(t->dtype);
	rc = IR_EINVAL;
	if (t->dtype == IR_DTYPE_STRING || vals->rank != 1 ||
	    !(idx->rank == 1 || (idx->rank == 2 && idx->dims[1] == rank)) ||
	    idx->dims[0] != vals->numel)
		goto cleanup;
	memset(t->data, 0, (size_t)t->numel * es);
	for (int64_t i = 0; i < vals->numel; i++) {
		int64_t off = 0;

		if (idx->rank == 1) {
			off = rt_load_i64(idx->dtype, idx->data, i);
		} else {
			for (int j = 0; j < rank; j++) {
				int64_t x = rt_load_i64(idx->dtype, idx->data, i * rank + j);

				if (x < 0 || x >= t->dims[j])
					goto cleanup;
				off = off * t->dims[j] + x;
			}
		}
		if (off < 0 || off >= t->numel)
			goto cleanup;
		memcpy((char *)t->data + off * (int64_t)es,
		       (const char *)vals->data + i * (int64_t)es, es);
	}
	rc = 0;
	*out = t;
	t = NULL;
cleanup:
	if (rc == IR_EINVAL && !d->status)
		diag_error(d, "sparse initializer '%s': bad indices",
			   ir_s(sp->values->name));
	rt_value_unref(vals);
	rt_value_unref(idx);
	rt_value_unref(t);
	return rc;
}

static int add_const(struct rt_session *s, struct rt_gplan *p, int slot,
		     struct rt_value *v)
{
	p->const_slot[p->n_consts] = slot;
	p->const_val[p->n_consts++] = v;
	if (v->flags & RT_VALUE_PACKED)
		s->viewed += (v->numel + 1) / 2;
	else if (v->flags & RT_VALUE_READONLY)
		s->viewed += v->numel * (int64_t)rt_dtype_size(v->dtype);
	return 0;
}

static int build_consts(struct rt_session *s, struct rt_gplan *p,
			struct ir_diag *d)
{
	const struct ir_graph *g = p->g;
	size_t n = g->n_inits + g->n_sparse_inits;
	int rc;

	if (!(p->const_slot = calloc(n + 1, sizeof(int))) ||
	    !(p->const_val = calloc(n + 1, sizeof(*p->const_val))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < g->n_inits; i++) {
		struct ir_value *v = ir_graph_find(g, ir_s(g->inits[i]->name));
		struct rt_value *t;
		int slot = v ? rt_plan_slot(p, v) : -1;

		if (slot < 0)
			continue;
		/* 4-bit codes stay packed until a reader wants them unpacked
		 * (exec.c): the weight-only unit reads them so (qdq_wo.c) */
		if ((rc = rt_value_from_ir_packed(&s->mem, g->inits[i], &t, d)) < 0)
			return rc;
		add_const(s, p, slot, t);
	}
	for (size_t i = 0; i < g->n_sparse_inits; i++) {
		struct ir_sparse *sp = g->sparse_inits[i];
		struct ir_value *v = sp->values ?
			ir_graph_find(g, ir_s(sp->values->name)) : NULL;
		struct rt_value *t;
		int slot = v ? rt_plan_slot(p, v) : -1;

		if (slot < 0)
			continue;
		if ((rc = densify(s, sp, &t, d)) < 0)
			return rc;
		add_const(s, p, slot, t);
	}
	return 0;
}

static struct ir_function *find_function(struct ir_model *m, const char *domain,
					 const char *op)
{
	for (size_t i = 0; i < m->n_functions; i++) {
		struct ir_function *f = m->functions[i];
		const char *fd = f->domain && *f->domain ? f->domain : "ai.onnx";

		if (!strcmp(fd, domain) && !strcmp(ir_s(f->name), op))
			return f;
	}
	return NULL;
}

/* The opset a node of `domain` in plan p uses: the enclosing function's
 * imports, else the model's. */
static int64_t node_opset(struct rt_session *s, const struct rt_gplan *p,
			  const char *domain)
{
	const char *want = strcmp(domain, "ai.onnx") ? domain : "";

	for (; p; p = p->parent) {
		if (!p->fn)
			continue;
		for (size_t i = 0; i < p->fn->n_opsets; i++) {
			const char *dd = ir_s(p->fn->opsets[i].domain);

			if (!strcmp(dd, "ai.onnx"))
				dd = "";
			if (!strcmp(dd, want))
				return p->fn->opsets[i].version;
		}
		break;
	}
	return ir_model_opset(s->m, domain);
}

static int build(struct rt_session *s, const struct ir_graph *g,
		 struct rt_gplan *parent, const struct ir_function *fn,
		 int depth, struct rt_gplan **out, struct ir_diag *d);

/* Mark values of scope p captured by nodes nested in g as used by the
 * node at index `at` of p. */
static void captures(const struct rt_gplan *p, const struct ir_graph *g,
		     size_t at, long *last)
{
	for (size_t i = 0; i < g->n_nodes; i++) {
		const struct ir_node *n = g->nodes[i];

		for (size_t j = 0; j < n->n_inputs; j++) {
			const struct ir_value *v = n->inputs[j];
			int slot;

			if (v && v->graph == p->g && (slot = rt_plan_slot(p, v)) >= 0 &&
			    last[slot] < (long)at)
				last[slot] = (long)at;
		}
		for (size_t a = 0; a < n->n_attrs; a++) {
			const struct ir_attr *at_ = n->attrs[a];

			if (at_->g)
				captures(p, at_->g, at, last);
			for (size_t k = 0; k < at_->n_graphs; k++)
				captures(p, at_->graphs[k], at, last);
		}
	}
	/* a subgraph output may name an outer value directly */
	for (size_t i = 0; i < g->n_outputs; i++) {
		const struct ir_value *v = g->outputs[i].value;
		int slot;

		if (v && v->graph == p->g && (slot = rt_plan_slot(p, v)) >= 0 &&
		    last[slot] < (long)at)
			last[slot] = (long)at;
	}
}

/* ---- spec operators run through their function bodies ---------------- */

/* A registry default list ("0,2,3") as numbers; *n 0 for "". */
static int parse_list(const char *text, int floats, void **out, size_t *n)
{
	size_t k = *text ? 1 : 0;
	const char *p = text;
	char *end;

	for (const char *c = text; *c; c++)
		k += *c == ',';
	if (!(*out = calloc(k + 1, floats ? sizeof(float) : sizeof(int64_t))))
		return IR_ENOMEM;
	for (size_t i = 0; i < k; i++, p = end + (*end == ',')) {
		if (floats)
			((float *)*out)[i] = strtof(p, &end);
		else
			((int64_t *)*out)[i] = strtoll(p, &end, 10);
		if (end == p || (*end && *end != ','))
			return IR_EINVAL;
	}
	*n = k;
	return 0;
}

/* The schema defaults of the attributes fn declares, as attributes of a
 * node that never runs: rt_frame_attr reads them where the call node has
 * none of that name (a FunctionProto of this IR version carries no
 * defaults of its own). */
static int spec_defaults(const struct ir_op_schema *sc,
			 const struct ir_function *fn, struct ir_node **out,
			 struct ir_diag *d)
{
	struct ir_node *n = ir_node_create(ir_s(fn->name), fn->domain, "defaults");
	int rc = n ? 0 : IR_ENOMEM;

	for (size_t i = 0; n && i < fn->n_attr_names && !rc; i++) {
		const struct ir_op_attr *a = ir_op_schema_attr(sc, fn->attr_names[i]);
		const char *name = fn->attr_names[i];
		void *list = NULL;
		size_t k = 0;

		if (!a || !a->default_value)
			continue;
		switch (a->type) {
		case IR_ATTR_INT:
			rc = ir_node_set_int(n, name, strtoll(a->default_value, NULL, 10));
			break;
		case IR_ATTR_FLOAT:
			rc = ir_node_set_float(n, name, strtof(a->default_value, NULL));
			break;
		case IR_ATTR_STRING:
			rc = ir_node_set_string(n, name, a->default_value);
			break;
		case IR_ATTR_INTS:
		case IR_ATTR_FLOATS:
			if (!(rc = parse_list(a->default_value, a->type == IR_ATTR_FLOATS,
					      &list, &k)))
				rc = a->type == IR_ATTR_INTS ?
				     ir_node_set_ints(n, name, list, k) :
				     ir_node_set_floats(n, name, list, k);
			free(list);
			break;
		default:  /* no spec body has a default of another kind */
			break;
		}
		if (rc == IR_EINVAL)
			rc = diag_error(d, "%s %s version %d: bad default '%s' of attribute '%s'",
					sc->domain, sc->name, sc->since_version,
					a->default_value, name);
	}
	if (rc < 0) {
		ir_node_free(n);
		return rc == IR_ENOMEM ? ir_diag_error(d, IR_ENOMEM, "out of memory") : rc;
	}
	*out = n;
	return 0;
}

/* A node whose op has no kernel runs as a call of the spec's function body
 * for its schema version: parsed once per session, its plan shared by
 * every such node and owning the function.  Failures name the node. */
static int spec_call(struct rt_session *s, struct rt_nplan *np,
		     const struct ir_spec_function *sf, int depth,
		     struct ir_diag *d)
{
	struct ir_function *fn = NULL;
	struct ir_node *dflt = NULL;
	struct rt_gplan *p;
	struct ir_diag sub;
	char w[RT_WHERE_SIZE];
	size_t len;
	int rc;

	for (size_t i = 0; i < s->n_plans; i++)
		if (s->plans[i]->spec == sf) {
			np->fn_plan = s->plans[i];
			return 0;
		}
	ir_diag_init(&sub);
	if ((rc = ir_function_parse(sf->body, sf->len, &fn, &sub)) < 0)
		return ir_diag_error(d, rc, "%s: function body of %s %s version %d: %s",
				     rt_node_where(np->node, w), sf->domain, sf->op,
				     sf->since_version, sub.msg);
	if ((rc = spec_defaults(np->schema, fn, &dflt, d)) < 0)
		goto cleanup;
	rc = build(s, fn->body, NULL, fn, depth + 1, &np->fn_plan, d);
	/* the body's plan joined the session's list even if building it
	 * failed: it owns the function from here */
	if ((p = rt_plan_find(s, fn->body))) {
		p->spec = sf;
		p->spec_fn = fn;
		p->fn_defaults = dflt;
		fn = NULL;
		dflt = NULL;
	}
	len = strlen(d->msg);
	if (rc < 0 && d->status && len < sizeof(d->msg) - 1)
		snprintf(d->msg + len, sizeof(d->msg) - len,
			 ", in the function body of %s %s version %d run for %s",
			 sf->domain, sf->op, sf->since_version,
			 rt_node_where(np->node, w));
cleanup:
	ir_function_free(fn);
	ir_node_free(dflt);
	return rc;
}

static int plan_node(struct rt_session *s, struct rt_gplan *p, size_t i,
		     int depth, struct ir_diag *d)
{
	const struct ir_node *n = p->g->nodes[i];
	struct rt_nplan *np = &p->nodes[i];
	const char *domain = n->domain && *n->domain ? n->domain : "ai.onnx";
	const char *op = ir_s(n->op_type);
	struct ir_function *f = NULL;
	const struct ir_spec_function *sf = NULL;
	char w[RT_WHERE_SIZE];
	int rc = 0;

	np->node = n;
	np->opset = node_opset(s, p, domain);
	np->schema = ir_registry_find_flags(domain, op, np->opset,
					    IR_REGISTRY_ORT_DEFAULT);
	if (np->schema)
		np->kernel = rt_kernel_find(np->schema->domain, op,
					    np->schema->since_version);
	if (!np->kernel && (f = find_function(s->m, domain, op))) {
		if ((rc = build(s, f->body, NULL, f, depth + 1, &np->fn_plan, d)) < 0)
			return rc;
	} else if (!np->kernel && np->schema &&
		   (sf = ir_spec_function_find(np->schema->domain, op,
					       np->schema->since_version))) {
		if ((rc = spec_call(s, np, sf, depth, d)) < 0)
			return rc;
	} else if (!np->kernel) {
		if (np->schema)
			return diag_error(d, "%s: no kernel for %s %s version %d (model opset %lld)",
					  rt_node_where(n, w), np->schema->domain, op,
					  np->schema->since_version,
					  (long long)np->opset);
		return diag_error(d, "%s: no kernel for operator %s of domain '%s' at opset %lld",
				  rt_node_where(n, w), op, domain,
				  (long long)np->opset);
	}
	np->stat = stat_index(s, np->schema ? np->schema->domain : domain, op, d, &rc);
	if (rc < 0)
		return rc;
	if (!(np->in = calloc(n->n_inputs + 1, sizeof(*np->in))) ||
	    !(np->out = calloc(n->n_outputs + 1, sizeof(int))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t j = 0; j < n->n_inputs; j++)
		if (resolve(p, n->inputs[j], &np->in[j]) < 0)
			return diag_error(d, "%s: input '%s' is not defined in any scope",
					  rt_node_where(n, w), ir_s(n->inputs[j]->name));
	for (size_t j = 0; j < n->n_outputs; j++)
		np->out[j] = n->outputs[j] ? rt_plan_slot(p, n->outputs[j]) : -1;
	for (size_t a = 0; a < n->n_attrs; a++) {
		const struct ir_attr *at = n->attrs[a];
		size_t k = at->g ? 1 : at->n_graphs;

		for (size_t j = 0; j < k; j++) {
			const struct ir_graph *sub = at->g ? at->g : at->graphs[j];
			struct rt_gplan **q = realloc(np->subs, (np->n_subs + 1) * sizeof(*q));

			if (!q)
				return ir_diag_error(d, IR_ENOMEM, "out of memory");
			np->subs = q;
			if ((rc = build(s, sub, p, NULL, depth + 1, &q[np->n_subs], d)) < 0)
				return rc;
			np->n_subs++;
		}
	}
	return 0;
}

static int liveness(struct rt_gplan *p, struct ir_diag *d)
{
	long *last = malloc((p->n_slots + 1) * sizeof(long));
	char *keep = calloc(p->n_slots + 1, 1);
	int rc = IR_ENOMEM;

	if (!last || !keep)
		goto cleanup;
	for (size_t i = 0; i < p->n_slots; i++)
		last[i] = -1;
	for (size_t i = 0; i < p->n_out; i++)
		if (p->out[i].up == 0 && p->out[i].slot >= 0)
			keep[p->out[i].slot] = 1;
	for (size_t i = 0; i < p->n_nodes; i++) {
		const struct rt_nplan *np = &p->nodes[i];

		for (size_t j = 0; j < np->node->n_inputs; j++)
			if (np->in[j].up == 0 && np->in[j].slot >= 0)
				last[np->in[j].slot] = (long)i;
		for (size_t j = 0; j < np->node->n_outputs; j++)
			if (np->out[j] >= 0 && last[np->out[j]] < (long)i)
				last[np->out[j]] = (long)i;  /* dead outputs */
		for (size_t a = 0; a < np->node->n_attrs; a++) {
			const struct ir_attr *at = np->node->attrs[a];

			if (at->g)
				captures(p, at->g, i, last);
			for (size_t k = 0; k < at->n_graphs; k++)
				captures(p, at->graphs[k], i, last);
		}
	}
	for (size_t s = 0; s < p->n_slots; s++) {
		struct rt_nplan *np;
		int *q;

		if (keep[s] || last[s] < 0)
			continue;
		np = &p->nodes[last[s]];
		if (!(q = realloc(np->release, (np->n_release + 1) * sizeof(int))))
			goto cleanup;
		np->release = q;
		q[np->n_release++] = (int)s;
	}
	rc = 0;
cleanup:
	if (rc < 0)
		ir_diag_error(d, IR_ENOMEM, "out of memory");
	free(last);
	free(keep);
	return rc;
}

static int build_interface(struct rt_gplan *p, struct ir_diag *d)
{
	const struct ir_graph *g = p->g;
	const struct ir_function *fn = p->fn;

	p->n_in = fn ? fn->n_inputs : g->n_inputs;
	p->n_out = fn ? fn->n_outputs : g->n_outputs;
	if (!(p->in = calloc(p->n_in + 1, sizeof(int))) ||
	    !(p->out = calloc(p->n_out + 1, sizeof(*p->out))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < p->n_in; i++) {
		const struct ir_value *v = fn ? ir_graph_find(g, fn->inputs[i]) :
					   g->inputs[i].value;

		p->in[i] = v ? rt_plan_slot(p, v) : -1;
	}
	for (size_t i = 0; i < p->n_out; i++) {
		const struct ir_value *v = fn ? ir_graph_find(g, fn->outputs[i]) :
					   g->outputs[i].value;

		if (!v || resolve(p, v, &p->out[i]) < 0 || p->out[i].slot < 0)
			return diag_error(d, "graph '%s': output %zu ('%s') is never defined",
					  ir_s(g->name), i,
					  fn ? fn->outputs[i] : v ? ir_s(v->name) : "");
	}
	return 0;
}

static int build(struct rt_session *s, const struct ir_graph *g,
		 struct rt_gplan *parent, const struct ir_function *fn,
		 int depth, struct rt_gplan **out, struct ir_diag *d)
{
	struct rt_gplan *p;
	int rc;

	*out = NULL;
	if (!g)
		return diag_error(d, "function '%s' has no body", fn ? ir_s(fn->name) : "");
	if ((p = rt_plan_find(s, g))) {
		if (p->building)
			return diag_error(d, "function '%s' calls itself", ir_s(fn ? fn->name : g->name));
		*out = p;
		return 0;
	}
	if (depth > MAX_PLAN_DEPTH)
		return diag_error(d, "graphs nested deeper than %d levels", MAX_PLAN_DEPTH);
	if (!(p = calloc(1, sizeof(*p))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	if ((rc = add_plan(s, p, d)) < 0) {
		free(p);
		return rc;
	}
	p->g = g;
	p->fn = fn;
	p->parent = parent;
	p->building = 1;
	p->n_slots = g->n_values;
	p->n_nodes = g->n_nodes;
	if (!(p->slot_value = calloc(p->n_slots + 1, sizeof(*p->slot_value))) ||
	    !(p->index = calloc(p->n_slots + 1, sizeof(*p->index))) ||
	    !(p->nodes = calloc(p->n_nodes + 1, sizeof(*p->nodes))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < p->n_slots; i++) {
		p->slot_value[i] = g->value_list[i];
		p->index[i] = (struct rt_vidx){ g->value_list[i], (int)i };
	}
	qsort(p->index, p->n_slots, sizeof(*p->index), cmp_vidx);
	if ((rc = build_interface(p, d)) < 0 || (rc = build_consts(s, p, d)) < 0)
		return rc;
	for (size_t i = 0; i < p->n_nodes; i++)
		if ((rc = plan_node(s, p, i, depth, d)) < 0)
			return rc;
	if ((rc = liveness(p, d)) < 0)
		return rc;
	p->building = 0;
	*out = p;
	return 0;
}

int rt_plan_build(struct rt_session *s, struct ir_diag *d)
{
	int rc = build(s, s->m->graph, NULL, NULL, 0, &s->main, d);

	if (rc == 0) {
		rt_fold_mark(s, s->main);
		rt_qdq_mark(s, s->main);
		if (rt_chain_mark(s, s->main) < 0 || rt_cl_mark(s, s->main) < 0)
			return ir_diag_error(d, IR_ENOMEM, "out of memory");
		if (rt_chain_off())
			rt_chain_drop(s->main);
		rt_cat_mark(s, s->main);
		rt_lowp_mark(s, s->main);
	}
	return rc;
}
