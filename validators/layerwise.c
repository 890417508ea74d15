/* layerwise.c: layer-by-layer comparison.  The values both models compute
 * (same name, or paired by the name map) are found, and those whose order
 * agrees in both (a longest increasing subsequence) are compared while the
 * two models run side by side, node by node, in one thread (struct
 * rt_run): a model that has produced a shared value the other has not yet
 * holds it and pauses, the other runs until it produces the same value,
 * and the two are compared there.  So at most one side holds values beyond
 * a normal run (the outputs of one node), one heap serves both, and the
 * two models' transient buffers (im2col, BLAS) never coexist.  A second
 * pass feeds the candidate the reference's value at every shared point:
 * its error there is the node's own (local); the first pass's is what
 * accumulated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_int.h"
#include "validators/val_int.h"

struct lw_part {
	size_t node[2], out[2];            /* [0] reference, [1] candidate */
	const struct val_map_entry *e;
	const struct ir_value *v[2];
};

/* A shared value one side has produced and the other has not yet. */
struct lw_held {
	struct rt_value *v;                /* a reference */
	struct rt_value **slot;            /* where its run keeps it */
	int side;
};

struct lw_state {
	struct lw_part *parts;
	size_t n;
	struct lw_held *held;              /* by part */
	size_t cursor[2];                  /* next part each side produces */
	size_t n_held[2];
	int forced;
	struct val_layer *layers;
	const struct rt_cmp_opts *tol;
};

struct lw_side {
	struct lw_state *st;
	int side;
	struct rt_session *s;
	struct rt_value **in, **out;
	struct ir_diag d;
};

struct named {
	const char *name;
	size_t node, out;
	const struct ir_value *v;
};

static int cmp_named(const void *a, const void *b)
{
	return strcmp(((const struct named *)a)->name, ((const struct named *)b)->name);
}

/* The reference's node outputs, sorted by name. */
static struct named *ref_index(const struct ir_graph *g, size_t *n)
{
	struct named *x;
	size_t k = 0, cap = 0;

	for (size_t i = 0; i < g->n_nodes; i++)
		cap += g->nodes[i]->n_outputs;
	if (!(x = calloc(cap + 1, sizeof(*x))))
		return NULL;
	for (size_t i = 0; i < g->n_nodes; i++)
		for (size_t j = 0; j < g->nodes[i]->n_outputs; j++)
			if (g->nodes[i]->outputs[j])
				x[k++] = (struct named){ ir_s(g->nodes[i]->outputs[j]->name), i, j,
							 g->nodes[i]->outputs[j] };
	qsort(x, k, sizeof(*x), cmp_named);
	*n = k;
	return x;
}

static int64_t ref_key(const struct lw_part *p)
{
	return (int64_t)p->node[0] * 65536 + (int64_t)p->out[0];
}

/* Keep the longest run of candidates whose reference order increases. */
static size_t keep_ordered(struct lw_part *p, size_t n)
{
	size_t *tail = malloc((n + 1) * sizeof(*tail)), *prev = malloc((n + 1) * sizeof(*prev));
	char *keep = calloc(n + 1, 1);
	size_t len = 0, k = 0;

	if (!tail || !prev || !keep) {
		free(tail);
		free(prev);
		free(keep);
		return (size_t)-1;
	}
	for (size_t i = 0; i < n; i++) {
		size_t lo = 0, hi = len;

		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (ref_key(&p[tail[mid]]) < ref_key(&p[i]))
				lo = mid + 1;
			else
				hi = mid;
		}
		prev[i] = lo ? tail[lo - 1] : (size_t)-1;
		tail[lo] = i;
		if (lo == len)
			len++;
	}
	for (size_t i = len ? tail[len - 1] : (size_t)-1; i != (size_t)-1; i = prev[i])
		keep[i] = 1;
	for (size_t i = 0; i < n; i++)
		if (keep[i])
			p[k++] = p[i];
	free(tail);
	free(prev);
	free(keep);
	return k;
}

static int find_parts(const struct ir_model *ref, const struct ir_model *cand,
		      const struct val_map *map, struct lw_state *st,
		      size_t *unordered, struct ir_diag *d)
{
	const struct ir_graph *g = cand->graph;
	size_t nr, n = 0, cap = 0, kept;
	struct named *idx = ref_index(ref->graph, &nr);

	if (!idx)
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	for (size_t i = 0; i < g->n_nodes; i++)
		cap += g->nodes[i]->n_outputs;
	if (!(st->parts = calloc(cap + 1, sizeof(*st->parts)))) {
		free(idx);
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < g->n_nodes; i++)
		for (size_t j = 0; j < g->nodes[i]->n_outputs; j++) {
			const struct ir_value *v = g->nodes[i]->outputs[j];
			const struct val_map_entry *e;
			struct named key, *hit;

			if (!v)
				continue;
			e = val_map_by_cand(map, VAL_MAP_VALUE, ir_s(v->name));
			if (!e)
				e = val_map_by_cand(map, VAL_MAP_OUTPUT, ir_s(v->name));
			key.name = e ? e->ref : ir_s(v->name);
			if (!(hit = bsearch(&key, idx, nr, sizeof(key), cmp_named)))
				continue;
			st->parts[n++] = (struct lw_part){ { hit->node, i }, { hit->out, j }, e,
							   { hit->v, v } };
		}
	free(idx);
	if ((kept = keep_ordered(st->parts, n)) == (size_t)-1)
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	*unordered = n - kept;
	st->n = kept;
	return 0;
}

static void set_why(struct rt_metrics *m, const char *why)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->why, sizeof(m->why), "%.250s", why);
}

/* Part c was held by one side and the other has just produced it: compare,
 * and in the forced pass let the candidate go on with the reference's
 * value (in the candidate's form) in place of its own. */
static void meet(struct lw_state *st, size_t c, struct rt_value *r,
		 struct rt_value *x, struct rt_value **cand_slot)
{
	const struct lw_part *p = &st->parts[c];
	struct rt_metrics *m = st->forced ? &st->layers[c].local : &st->layers[c].acc;
	struct rt_value *got = NULL, *sub = NULL;
	struct ir_diag d;

	ir_diag_init(&d);
	if (val_to_ref(x, p->e, r->kind == RT_TENSOR ? r->dtype : 0, &got, &d) == 0) {
		rt_compare(got, r, st->tol, m);
		rt_value_unref(got);
	} else {
		set_why(m, d.msg);
	}
	/* the slot is the candidate's only while it still holds x (a value
	 * nothing reads is released right after its node) */
	if (!st->forced || *cand_slot != x)
		return;
	ir_diag_init(&d);
	if (val_to_cand(r, p->e, x->kind == RT_TENSOR ? x->dtype : 0, &sub, &d) < 0)
		return;
	rt_value_unref(*cand_slot);
	*cand_slot = sub;
}

static void release_held(struct lw_state *st, size_t c)
{
	struct lw_held *h = &st->held[c];

	if (!h->v)
		return;
	st->n_held[h->side]--;
	rt_value_unref(h->v);
	memset(h, 0, sizeof(*h));
}

/* The observer of both runs: a shared value either meets the other side's
 * held copy or is held until the other side produces it. */
static int observe(void *ctx, const struct ir_node *n, size_t out, struct rt_value **slot)
{
	struct lw_side *sd = ctx;
	struct lw_state *st = sd->st;
	int side = sd->side;
	size_t c = st->cursor[side];
	struct lw_held *h;

	if (c >= st->n || st->parts[c].node[side] != n->index || st->parts[c].out[side] != out)
		return 0;
	st->cursor[side]++;
	h = &st->held[c];
	if (h->v) {
		/* both sides run every node of their main graph in order, and
		 * parts are ordered the same in both: only the other side can
		 * hold part c */
		if (side == 1)
			meet(st, c, h->v, *slot, slot);
		else
			meet(st, c, *slot, h->v, h->slot);
		release_held(st, c);
		return 0;
	}
	h->v = rt_value_ref(*slot);
	h->slot = slot;
	h->side = side;
	st->n_held[side]++;
	return 0;
}

/* One pass: both models' runs interleaved in this thread.  A side runs
 * node by node until it holds a value the other has not produced; then
 * the other side runs.  The first pass keeps the outputs for outputs_fn;
 * the second drops them as each run ends. */
static int run_pass(struct lw_state *st, struct lw_side *sides, int forced,
		    val_outputs_fn outputs_fn, void *outputs_ctx, struct ir_diag *d)
{
	struct rt_run *run[2] = { NULL, NULL };
	int done[2] = { 0, 0 }, side = 0, rc = 0, bad = -1;

	st->forced = forced;
	for (int s = 0; s < 2; s++) {
		st->cursor[s] = 0;
		ir_diag_init(&sides[s].d);
		rt_session_set_observer(sides[s].s, observe, &sides[s]);
	}
	for (int s = 0; s < 2 && bad < 0; s++)
		if (rt_run_begin(sides[s].s, sides[s].in, rt_session_n_inputs(sides[s].s),
				 &run[s], &sides[s].d) < 0)
			bad = s;
	while (bad < 0 && !(done[0] && done[1])) {
		int step;

		if (done[side])
			side = !side;
		step = rt_run_step(run[side], &sides[side].d);
		if (step < 0) {
			bad = side;
		} else if (step == 0) {
			struct rt_run *r = run[side];

			run[side] = NULL;
			done[side] = 1;
			if (rt_run_end(r, 0, sides[side].out, &sides[side].d) < 0)
				bad = side;
			else if (forced)
				rt_inputs_release(sides[side].out,
						  rt_session_n_outputs(sides[side].s));
		} else if (st->n_held[side]) {
			side = !side;
		}
	}
	if (bad >= 0)
		rc = ir_diag_error(d, sides[bad].d.status, "%s model: %.440s",
				   bad ? "candidate" : "reference", sides[bad].d.msg);
	for (int s = 0; s < 2; s++) {
		rt_run_free(run[s]);
		rt_session_set_observer(sides[s].s, NULL, NULL);
	}
	for (size_t c = 0; c < st->n; c++) {
		if (st->held[c].v && rc == 0)
			set_why(forced ? &st->layers[c].local : &st->layers[c].acc,
				"the other model did not compute it");
		release_held(st, c);
	}
	if (rc == 0 && !forced && outputs_fn)
		rc = outputs_fn(outputs_ctx, d);
	for (int s = 0; s < 2; s++)
		rt_inputs_release(sides[s].out, rt_session_n_outputs(sides[s].s));
	return rc;
}

static void rank_layers(struct val_report *r)
{
	for (size_t i = 0; i < r->n_layers; i++) {
		size_t k = r->n_top < VAL_TOP ? r->n_top : VAL_TOP - 1;
		double x = r->layers[i].acc.max_ratio;

		if (r->n_top == VAL_TOP && x <= r->layers[r->top[k]].acc.max_ratio)
			continue;
		while (k > 0 && r->layers[r->top[k - 1]].acc.max_ratio < x) {
			r->top[k] = r->top[k - 1];
			k--;
		}
		r->top[k] = i;
		if (r->n_top < VAL_TOP)
			r->n_top++;
	}
}

int val_layerwise(const struct val_side *ref, const struct val_side *cand,
		  const struct val_opts *o, val_outputs_fn outputs_fn,
		  void *outputs_ctx, struct val_report *r, struct ir_diag *d)
{
	struct lw_state st = { .tol = &o->tol };
	struct lw_side sides[2] = {
		{ .st = &st, .side = 0, .s = ref->s, .in = ref->in, .out = ref->out },
		{ .st = &st, .side = 1, .s = cand->s, .in = cand->in, .out = cand->out } };
	int rc;

	if ((rc = find_parts(ref->m, cand->m, o->map, &st, &r->n_unordered, d)) < 0)
		goto cleanup;
	if (!(st.layers = calloc(st.n + 1, sizeof(*st.layers))) ||
	    !(st.held = calloc(st.n + 1, sizeof(*st.held)))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	if ((rc = run_pass(&st, sides, 0, outputs_fn, outputs_ctx, d)) < 0 ||
	    (rc = run_pass(&st, sides, 1, NULL, NULL, d)) < 0)
		goto cleanup;
	r->layerwise = 1;
	r->n_layers = st.n;
	r->layers = st.layers;
	st.layers = NULL;
	for (size_t i = 0; i < r->n_layers; i++) {
		const struct ir_node *n = cand->m->graph->nodes[st.parts[i].node[1]];
		struct val_layer *l = &r->layers[i];

		l->value = ir_s(st.parts[i].v[0]->name);
		l->node = ir_s(n->name);
		l->op = ir_s(n->op_type);
		l->ok = l->acc.ok;
		if (!l->ok && r->first_bad < 0) {
			r->first_bad = (long)i;
			r->first_bad_local = !l->local.ok;
		}
	}
	rank_layers(r);
cleanup:
	free(st.held);
	free(st.layers);
	free(st.parts);
	return rc;
}
