/* fold.c: constant nodes of the main graph computed once per session.
 * The analysis (when the plan is built) marks the nodes whose results are
 * the same on every run; the first run that computes one keeps references
 * to its results in the node's plan, and later runs bind those instead of
 * running it.  This file owns the kept values: who may keep, how much, and
 * releasing them with the plan.  See runtime.h (rt_session_new) for the
 * rules as the API states them. */
#include <stdlib.h>
#include <string.h>

#include "runtime/exec_int.h"

/* Ops whose results are not a function of their inputs and attributes,
 * in any domain (the registry has no flag for it): the spec lets random
 * draws differ from run to run (that k_random.c seeds unseeded ones from
 * the node's name is this interpreter's choice, not a promise), Dropout in
 * training mode draws a new mask, and Gradient reads the graph's values
 * beyond its inputs.  Sorted (bsearch). */
static const char *const unstable[] = {
	"Bernoulli", "Dropout", "Gradient", "Multinomial", "RandomNormal",
	"RandomNormalLike", "RandomUniform", "RandomUniformLike",
};

static int cmp_name(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

int rt_fold_deterministic(const char *op)
{
	return !bsearch(op, unstable, sizeof(unstable) / sizeof(unstable[0]),
			sizeof(unstable[0]), cmp_name);
}

/* Is v the same on every run?  An absent optional input is; an
 * initializer is unless it backs a graph input, which the ONNX IR lets a
 * caller override from IR version 4 on (run.c binds no such input today,
 * but the model says it may change); before IR 4 every initializer had to
 * be listed as an input, so there they are constants (as onnxruntime
 * treats them); so is the result of a constant node of this graph.  Graph
 * inputs and values of outer scopes (subgraphs are not analysed) are
 * not. */
int rt_fold_value_const(const struct rt_session *s, const struct rt_gplan *p,
			const struct ir_value *v)
{
	const struct ir_node *n;

	if (!v)
		return 1;
	if (v->graph != p->g)
		return 0;
	if (v->init || v->sparse_init)
		return !v->is_input || s->m->ir_version < 4;
	n = v->producer;
	return n && n->graph == p->g && n->index < p->n_nodes &&
	       p->nodes[n->index].node == n && p->nodes[n->index].fold;
}

/* A node is constant when it runs a kernel (model-local functions and
 * spec bodies are skipped: their bodies may hold anything), holds no graph
 * (If/Loop/Scan bodies), is deterministic and reads only constants.  Its
 * results may be kept unless one is a graph output: the caller would get
 * the kept value itself, to keep past the session or change, and such
 * outputs are rare enough to compute each time.  (An output that views a
 * kept value, through Identity or Reshape, still shares its data: see
 * runtime.h on outputs.) */
static int node_fold(const struct rt_session *s, const struct rt_gplan *p,
		     const struct rt_nplan *np)
{
	const struct ir_node *n = np->node;

	if (!np->kernel || np->fn_plan || np->n_subs ||
	    !rt_fold_deterministic(ir_s(n->op_type)))
		return RT_FOLD_NONE;
	for (size_t a = 0; a < n->n_attrs; a++)
		if (n->attrs[a]->g || n->attrs[a]->n_graphs)
			return RT_FOLD_NONE;
	for (size_t i = 0; i < n->n_inputs; i++)
		if (!rt_fold_value_const(s, p, n->inputs[i]))
			return RT_FOLD_NONE;
	for (size_t i = 0; i < n->n_outputs; i++)
		if (n->outputs[i] && ir_graph_is_output(p->g, n->outputs[i]))
			return RT_FOLD_CONST;
	return RT_FOLD_KEEP;
}

/* One pass in node order: the plan runs nodes in that order, so a
 * producer listed after its consumer would fail anyway. */
void rt_fold_mark(struct rt_session *s, struct rt_gplan *p)
{
	for (size_t i = 0; i < p->n_nodes; i++)
		p->nodes[i].fold = node_fold(s, p, &p->nodes[i]);
}

int rt_fold_active(const struct rt_session *s)
{
	return !s->o.no_weight_cache && !s->o.observe;
}

/* Bytes a kept value holds alive: its own, its base's (a view keeps
 * it), its items'.  Shared parts count twice: room is judged high. */
static int64_t value_bytes(const struct rt_value *v)
{
	int64_t b;

	if (!v)
		return 0;
	b = v->nbytes + value_bytes(v->base);
	for (size_t i = 0; i < v->n; i++)
		b += value_bytes(v->items[i]);
	return b;
}

int rt_fold_bind(struct rt_session *s, struct rt_frame *f, struct rt_nplan *np)
{
	const struct ir_node *n = np->node;

	if (!np->kept || f->p != s->main || !rt_fold_active(s))
		return 0;
	for (size_t i = 0; i < n->n_outputs; i++) {
		if (np->out[i] < 0)
			continue;
		rt_value_unref(f->vals[np->out[i]]);
		f->vals[np->out[i]] = rt_value_ref(np->kept[i]);
	}
	if (s->o.collect_stats)
		s->stats.ops[np->stat].reused++;
	return 1;
}

/* Memory: a kept value stays charged to the session's account as every
 * live tensor is (value.c), so keeping adds no charge of its own; it keeps
 * the value alive past its last consumer, for every later run.  With no
 * limit that is always done.  Under a limit a run's peak grows by at most
 * the bytes kept (a kept input is never written in place, but the new
 * output then takes the place the input's release leaves today), so a
 * result is kept only while the highest peak of a whole run so far plus
 * everything kept fits: the first run keeps nothing, the second keeps
 * what fits, later ones reuse it.  Runs with larger inputs than the
 * measured ones may need more. */
void rt_fold_keep(struct rt_session *s, struct rt_frame *f, struct rt_nplan *np)
{
	const struct ir_node *n = np->node;
	struct rt_value **kept;
	int64_t bytes = 0;

	if (np->fold != RT_FOLD_KEEP || np->kept || f->p != s->main ||
	    !rt_fold_active(s))
		return;
	for (size_t i = 0; i < n->n_outputs; i++) {
		if (np->out[i] < 0)
			continue;
		if (!f->vals[np->out[i]])
			return;
		bytes += value_bytes(f->vals[np->out[i]]);
	}
	if (s->mem.limit &&
	    (!s->fold.run_peak || s->fold.run_peak + s->fold.bytes + bytes > s->mem.limit))
		return;
	if (!(kept = calloc(n->n_outputs + 1, sizeof(*kept))))
		return;   /* recomputed next time */
	for (size_t i = 0; i < n->n_outputs; i++) {
		if (np->out[i] < 0)
			continue;
		kept[i] = rt_value_ref(f->vals[np->out[i]]);
		kept[i]->flags |= RT_VALUE_KEPT;
	}
	np->kept = kept;
	s->fold.bytes += bytes;
	s->fold.n_nodes++;
	s->stats.kept_bytes = s->fold.bytes;
	s->stats.kept_nodes = s->fold.n_nodes;
}

/* A kept value may outlive the session (an output viewing it, an
 * observer's reference): it is no longer the session's, so no longer
 * charged to it (rt_value_detach skips kept values until then). */
void rt_fold_release(struct rt_nplan *np)
{
	for (size_t i = 0; np->kept && i < np->node->n_outputs; i++) {
		if (!np->kept[i])
			continue;
		np->kept[i]->flags &= ~RT_VALUE_KEPT;
		rt_value_detach(np->kept[i]);
		rt_value_unref(np->kept[i]);
	}
	free(np->kept);
	np->kept = NULL;
}

/* The run's own peak: mem.peak restarts from what is in use now, and
 * takes back the session's highest when the run ends. */
void rt_fold_run_begin(struct rt_session *s)
{
	s->fold.saved_peak = s->mem.peak;
	s->mem.peak = s->mem.cur;
}

void rt_fold_run_end(struct rt_session *s, int ok)
{
	if (ok && s->mem.peak > s->fold.run_peak)
		s->fold.run_peak = s->mem.peak;
	if (s->fold.saved_peak > s->mem.peak)
		s->mem.peak = s->fold.saved_peak;
}
