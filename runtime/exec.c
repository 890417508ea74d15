/* exec.c: running plans: frames of value slots, binding inputs (wrapped
 * in an optional where the graph declares one), calling each node's kernel
 * (or a function's body, model-local or a spec operator's, where inputs
 * the call leaves out read as absent and attributes it leaves out take the
 * spec's defaults), storing outputs, releasing intermediates after their last
 * consumer, subgraph calls for If/Loop/Scan/SequenceMap (also graphs
 * passed to functions by attribute reference), attribute references
 * inside functions, errors naming the enclosing node, per-op timing;
 * constant nodes whose results the session keeps (fold.c) are bound
 * instead of run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/exec_int.h"

#define MAX_CALL_DEPTH 256
#define OUT_SLOTS_MIN 8

static struct rt_frame *frame_up(struct rt_frame *f, int up)
{
	for (int i = 0; i < up && f; i++)
		f = f->parent;
	return f;
}

static struct rt_value *frame_get(struct rt_frame *f, struct rt_ref r)
{
	if (r.slot < 0)
		return NULL;
	f = frame_up(f, r.up);
	return f ? f->vals[r.slot] : NULL;
}

/* Is an unbound value a formal input of a model-local function that the
 * call left out (an absent optional input)?  Reading it then reads "". */
static int absent_formal(struct rt_frame *f, struct rt_ref r)
{
	const struct rt_gplan *p;

	if (!(f = frame_up(f, r.up)) || !f->call || !(p = f->p)->fn)
		return 0;
	for (size_t i = 0; i < p->n_in; i++)
		if (p->in[i] == r.slot)
			return 1;
	return 0;
}

static const struct ir_attr *node_attr(const struct ir_node *n,
				       const char *name)
{
	for (size_t i = 0; n && i < n->n_attrs; i++)
		if (!strcmp(ir_s(n->attrs[i]->name), name))
			return n->attrs[i];
	return NULL;
}

const struct ir_attr *rt_frame_attr(struct rt_frame *f,
				    const struct ir_node *n, const char *name)
{
	const struct ir_node *dflt = NULL;

	for (int guard = 0; n && guard < MAX_CALL_DEPTH; guard++) {
		const struct ir_attr *a = node_attr(n, name);

		/* a call node without it: the called spec body's default */
		if (!a)
			a = node_attr(dflt, name);
		if (!a || !a->ref_attr_name || !*a->ref_attr_name)
			return a;
		/* a reference to an attribute of the function's call node */
		while (f && !f->call)
			f = f->parent;
		if (!f)
			return NULL;
		name = a->ref_attr_name;
		n = f->call;
		dflt = f->p->fn_defaults;
		f = f->caller;
	}
	return NULL;
}

static void frame_release(struct rt_frame *f)
{
	for (size_t i = 0; f->vals && i < f->p->n_slots; i++)
		rt_value_unref(f->vals[i]);
	free(f->vals);
	f->vals = NULL;
	free(f->skip);
	f->skip = NULL;
	for (size_t i = 0; f->catbuf && i < f->p->n_nodes; i++)
		rt_value_unref(f->catbuf[i]);
	free(f->catbuf);
	f->catbuf = NULL;
}

/* After a failure inside a subgraph or function body: say which node's
 * body it was (the message names the inner node already). */
static void diag_within(struct ir_diag *d, const char *what, const char *name,
			const struct ir_node *n)
{
	char w[RT_WHERE_SIZE];
	size_t len = strlen(d->msg);

	if (d->status && len < sizeof(d->msg) - 1)
		snprintf(d->msg + len, sizeof(d->msg) - len, ", in %s '%s' of %s",
			 what, name, rt_node_where(n, w));
}

/* A spec body's output viewing data read-only may view a constant of the
 * body, which the session owns (plan.c); the outputs of a run outlive the
 * session, so such an output gets a copy.  Views of the model's data need
 * none, but are not told apart: spec bodies return computed values. */
static int own_data(struct rt_kctx *k, struct rt_value **v)
{
	struct ir_diag sub;
	struct rt_value *c;

	if (!*v || (*v)->kind != RT_TENSOR || !((*v)->flags & RT_VALUE_READONLY))
		return 0;
	ir_diag_init(&sub);
	if (rt_tensor_clone(k->mem, *v, &c, &sub) < 0)
		return rt_err(k, "%s", sub.msg);
	rt_value_unref(*v);
	*v = c;
	return 0;
}

/* A function call: run the body in a fresh frame (no outer scope). */
static int call_function(struct rt_kctx *k)
{
	struct rt_frame sub = { 0 };
	struct rt_gplan *p = k->np->fn_plan;
	struct rt_value **outs = calloc(p->n_out + 1, sizeof(*outs));
	int rc;

	if (!outs)
		return rt_oom(k);
	sub.p = p;
	sub.call = k->node;
	sub.caller = k->f;
	sub.depth = k->f->depth + 1;
	rc = rt_frame_run(k->s, &sub, k->in, k->n_in < p->n_in ? k->n_in : p->n_in,
			  outs, k->d);
	if (rc < 0)
		diag_within(k->d, "function", ir_s(p->fn->name), k->node);
	for (size_t i = 0; i < p->n_out; i++) {
		if (rc == 0 && i < k->n_out && p->spec_fn)
			rc = own_data(k, &outs[i]);
		if (rc == 0 && i < k->n_out)
			rt_out_set(k, i, outs[i]);
		else
			rt_value_unref(outs[i]);
	}
	free(outs);
	return rc;
}

static int run_node(struct rt_session *s, struct rt_frame *f,
		    struct rt_nplan *np, struct ir_diag *d)
{
	const struct ir_node *n = np->node;
	size_t n_out = n->n_outputs > OUT_SLOTS_MIN ? n->n_outputs : OUT_SLOTS_MIN;
	struct rt_value *ins_small[8], *outs_small[OUT_SLOTS_MIN];
	struct rt_value **ins = n->n_inputs <= 8 ? ins_small :
				calloc(n->n_inputs, sizeof(*ins));
	struct rt_value **outs = n_out <= OUT_SLOTS_MIN ? outs_small :
				 calloc(n_out, sizeof(*outs));
	struct rt_value *wide_small[8] = { 0 }, *plain_small[8] = { 0 };
	struct rt_value **wide = n->n_inputs <= 8 ? wide_small :
				 calloc(n->n_inputs, sizeof(*wide));
	struct rt_value **plain = n->n_inputs <= 8 ? plain_small :
				  calloc(n->n_inputs, sizeof(*plain));
	struct rt_kctx k = { 0 };
	char w[RT_WHERE_SIZE];
	double t0 = 0;
	void *shapes = NULL;
	int rc = 0;

	if (!ins || !outs || !wide || !plain) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	memset(outs, 0, n_out * sizeof(*outs));
	for (size_t i = 0; i < n->n_inputs; i++) {
		ins[i] = frame_get(f, np->in[i]);
		if (np->in[i].slot >= 0 && !ins[i] && !absent_formal(f, np->in[i])) {
			rc = ir_diag_error(d, IR_EINVAL,
					   "%s: input '%s' has no value (a graph input left unbound?)",
					   rt_node_where(n, w), ir_s(n->inputs[i]->name));
			goto cleanup;
		}
		/* a constant kept packed (4-bit codes) is unpacked for the
		 * first reader that does not read it packed */
		if (ins[i] && (ins[i]->flags & RT_VALUE_PACKED) && !rt_qdq_wo_packed_in(np, i) &&
		    (rc = rt_value_unpack(&s->mem, ins[i], d)) < 0)
			goto cleanup;
	}
	k = (struct rt_kctx){ .s = s, .f = f, .np = np, .node = n,
			      .schema = np->schema,
			      .version = np->schema ? np->schema->since_version : 0,
			      .opset = np->opset, .n_in = n->n_inputs,
			      .n_out = n_out, .in = ins, .out = outs,
			      .mem = &s->mem, .d = d, .plain = plain };
	if (s->o.profile)
		shapes = rt_profile_shapes(ins, n->n_inputs);
	if (s->o.collect_stats || s->o.profile)
		t0 = rt_now();
	if ((rc = rt_cl_begin(&k)) >= 0 && (rc = rt_lowp_begin(&k, wide)) >= 0) {
		rc = np->kernel ? np->kernel->run(&k) : call_function(&k);
		if (k.lowp)
			rc = rt_lowp_end(&k, wide, rc);
	}
	np->runs++;
	if (s->o.collect_stats || s->o.profile) {
		double t1 = rt_now();

		if (s->o.collect_stats) {
			s->stats.ops[np->stat].seconds += t1 - t0;
			s->stats.ops[np->stat].count++;
			np->seconds += t1 - t0;
		}
		if (s->o.profile)
			rt_profile_node(s, n, f->depth, shapes, t0, t1);
	}
	if (rc < 0) {
		/* the recorded error's status wins: kernels return IR_ENOMEM
		 * whenever rt_out_tensor fails, also when it refused a size */
		if (!d->status)
			rc = ir_diag_error(d, rc, "%s: failed", rt_node_where(n, w));
		else
			rc = d->status;
		goto cleanup;
	}
	for (size_t i = 0; i < n->n_outputs; i++) {
		if (np->out[i] < 0)
			continue;
		if (!outs[i]) {
			rc = ir_diag_error(d, IR_EINVAL,
					   "%s: output %zu ('%s') was not produced",
					   rt_node_where(n, w), i, ir_s(n->outputs[i]->name));
			goto cleanup;
		}
		if (outs[i]->flags & RT_VALUE_CL)
			s->stats.cl_values++;
		rt_value_unref(f->vals[np->out[i]]);
		f->vals[np->out[i]] = outs[i];
		outs[i] = NULL;
		if (f->depth == 0 && !f->parent && s->o.observe &&
		    s->o.observe(s->o.observe_ctx, n, i, &f->vals[np->out[i]])) {
			rc = d->status ? d->status :
			     ir_diag_error(d, IR_EUSAGE, "run stopped by the observer");
			goto cleanup;
		}
	}
	rt_epilogue_end(f, np, k.epi, 1);
	k.epi = NULL;
cleanup:
	rt_epilogue_end(f, np, k.epi, 0);
	for (size_t i = 0; outs && i < n_out; i++)
		rt_value_unref(outs[i]);
	if (ins != ins_small)
		free(ins);
	if (outs != outs_small)
		free(outs);
	for (size_t i = 0; wide && i < n->n_inputs; i++)
		rt_value_unref(wide[i]);   /* left by a failed rt_lowp_begin */
	if (wide != wide_small)
		free(wide);
	if (plain) {
		rt_cl_end(&k);
		if (plain != plain_small)
			free(plain);
	}
	return rc;
}

/* A value bound to a formal input or output declared optional is wrapped
 * in one when it is a plain tensor or sequence: a Loop feeds the body's
 * carried output (a sequence) back to an input declared optional(seq). */
static int as_declared(const struct ir_type *t, struct rt_value **v,
		       struct ir_diag *d)
{
	struct rt_value *o;
	int rc;

	if (!t || t->kind != IR_TYPE_OPTIONAL || !*v ||
	    ((*v)->kind != RT_TENSOR && (*v)->kind != RT_SEQUENCE))
		return 0;
	if ((rc = rt_optional_new((*v)->dtype, (int)(*v)->kind, *v, &o, d)) < 0) {
		*v = NULL;
		return rc;
	}
	*v = o;
	return 0;
}

int rt_frame_begin(struct rt_frame *f, struct rt_value **ins, size_t n_in,
		   struct ir_diag *d)
{
	struct rt_gplan *p = f->p;
	int rc;

	f->next = 0;
	if (f->depth > MAX_CALL_DEPTH)
		return diag_error(d, "calls nested deeper than %d levels", MAX_CALL_DEPTH);
	if (!(f->vals = calloc(p->n_slots + 1, sizeof(*f->vals))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	/* chains fuse in the main graph only; without the flags they do not */
	f->skip = (p->n_chains || p->n_qdq) && f->depth == 0 && !f->parent && !f->call ?
		  calloc(p->n_nodes, 1) : NULL;
	/* so do Concats in place */
	f->catbuf = p->n_cats && f->depth == 0 && !f->parent && !f->call ?
		    calloc(p->n_nodes, sizeof(*f->catbuf)) : NULL;
	for (size_t i = 0; i < p->n_consts; i++)
		f->vals[p->const_slot[i]] = rt_value_ref(p->const_val[i]);
	/* bound inputs override initializers of the same name */
	for (size_t i = 0; i < n_in && i < p->n_in; i++) {
		if (p->in[i] < 0 || !ins[i])
			continue;
		rt_value_unref(f->vals[p->in[i]]);
		f->vals[p->in[i]] = rt_value_ref(ins[i]);
		if (!p->fn && (rc = as_declared(p->g->inputs[i].type,
						&f->vals[p->in[i]], d)) < 0) {
			frame_release(f);
			return rc;
		}
	}
	return 0;
}

int rt_frame_step(struct rt_session *s, struct rt_frame *f, struct ir_diag *d)
{
	struct rt_nplan *np;
	int rc;

	if (f->next >= f->p->n_nodes)
		return 0;
	if (f->next == 0)
		rt_qdq_begin(s, f);
	np = &f->p->nodes[f->next++];
	if (f->skip && f->skip[f->next - 1]) {
		/* done by the chain of the node before it (a Relu or Clip after
		 * a move: the move's result is its own) */
		if (f->skip[f->next - 1] == RT_SKIP_ALIAS)
			f->vals[np->out[0]] = rt_value_ref(f->vals[np->in[0].slot]);
		if (s->o.collect_stats)
			s->stats.ops[np->stat].fused++;
	} else if (s->o.only && f->depth == 0 && !f->parent &&
		   !s->o.only(s->o.only_ctx, np->node)) {
		/* not asked for: its outputs stay unset */
	} else if (!np->kept || !rt_fold_bind(s, f, np)) {
		/* (a constant node whose results the session kept: bound) */
		if ((rc = run_node(s, f, rt_qdq_plan(f, np), d)) < 0)
			return rc;
		if (np->cat && f->catbuf) {   /* shapes for the next run */
			rt_cat_record(f, np);
			rt_value_unref(f->catbuf[f->next - 1]);
			f->catbuf[f->next - 1] = NULL;
		}
		if (np->fold == RT_FOLD_KEEP && !np->kept)
			rt_fold_keep(s, f, np);
	}
	for (size_t j = 0; j < np->n_release; j++) {
		rt_value_unref(f->vals[np->release[j]]);
		f->vals[np->release[j]] = NULL;
	}
	/* after the releases: a result written in place over an input that
	 * died here is then this slot's alone */
	if (np->chain && f->skip && !f->skip[f->next - 1]) {
		double t0 = s->o.collect_stats ? rt_now() : 0;

		if (rt_chain_apply(s, f, np) && s->o.collect_stats) {
			double dt = rt_now() - t0;

			s->stats.ops[np->stat].seconds += dt;
			np->seconds += dt;
		}
	}
	return 1;
}

int rt_frame_end(struct rt_frame *f, struct rt_value **outs, int rc,
		 struct ir_diag *d)
{
	struct rt_gplan *p = f->p;

	for (size_t i = 0; rc >= 0 && i < p->n_out; i++) {
		struct rt_value *v = frame_get(f, p->out[i]);

		if (!v) {
			rc = diag_error(d, "%s '%s': output %zu has no value",
					p->fn ? "function" : "graph",
					ir_s(p->fn ? p->fn->name : p->g->name), i);
			break;
		}
		outs[i] = rt_value_ref(v);
		if ((rc = rt_value_unpack(v->mem, v, d)) < 0 ||
		    (rc = rt_cl_plain_value(v->mem, &outs[i], d)) < 0 ||
		    (rc = rt_lowp_narrow_value(v->mem, &outs[i], d)) < 0)
			break;
		if (!p->fn && (rc = as_declared(p->g->outputs[i].type, &outs[i], d)) < 0)
			break;
	}
	if (rc < 0 && outs)
		for (size_t i = 0; i < p->n_out; i++) {
			rt_value_unref(outs[i]);
			outs[i] = NULL;
		}
	frame_release(f);
	return rc;
}

int rt_frame_run(struct rt_session *s, struct rt_frame *f,
		 struct rt_value **ins, size_t n_in, struct rt_value **outs,
		 struct ir_diag *d)
{
	int rc;

	if ((rc = rt_frame_begin(f, ins, n_in, d)) == 0)
		while ((rc = rt_frame_step(s, f, d)) > 0)
			;
	return rt_frame_end(f, outs, rc, d);
}

int rt_subgraph_run(struct rt_kctx *k, const struct ir_graph *g,
		    struct rt_value **ins, size_t n_in, struct rt_value **outs)
{
	struct rt_frame sub = { 0 };
	int rc;

	for (size_t i = 0; i < k->np->n_subs; i++)
		if (k->np->subs[i]->g == g)
			sub.p = k->np->subs[i];
	sub.parent = k->f;
	if (!sub.p && (sub.p = rt_plan_find(k->s, g))) {
		/* a graph attribute of a function's call node, reached through
		 * ref_attr_name: its scope is the caller's, found by walking
		 * out through lexical parents and callers */
		struct rt_frame *f = k->f;

		while (f && f->p != sub.p->parent)
			f = f->parent ? f->parent : f->caller;
		sub.parent = f;
		if (!f)
			sub.p = NULL;
	}
	if (!sub.p)
		return rt_err(k, "subgraph '%s' is not an attribute of this node",
			      ir_s(g->name));
	sub.depth = k->f->depth + 1;
	if ((rc = rt_frame_run(k->s, &sub, ins, n_in, outs, k->d)) < 0)
		diag_within(k->d, "subgraph", ir_s(g->name), k->node);
	return rc;
}

void rt_parallel_for(struct rt_kctx *k, int64_t n, int64_t grain,
		     rt_range_fn fn, void *ctx)
{
	rt_pool_for(k->s->pool, n, grain, fn, ctx);
}

int rt_threads(struct rt_kctx *k)
{
	return k->s->threads;
}
