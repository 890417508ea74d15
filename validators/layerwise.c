/* layerwise.c: layer-by-layer comparison.  The values both models compute
 * (same name, or paired by the name map) are found, and those whose order
 * agrees in both (a longest increasing subsequence) are compared while the
 * two models run side by side on two threads in lockstep: each model stops
 * at a shared value until the other has produced it, so at most one extra
 * value per model is held beyond a normal run.  Only one side computes at
 * a time (the run_mu baton passes at each wait), so the two models'
 * transient buffers (im2col, BLAS) never coexist.  A second pass feeds the
 * candidate the reference's value at every shared point: its error there is
 * the node's own (local); the first pass's is what accumulated. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validators/rt_int.h"
#include "validators/val_int.h"

struct lw_part {
	size_t node[2], out[2];            /* [0] reference, [1] candidate */
	const struct val_map_entry *e;
	const struct ir_value *v[2];
};

struct lw_state {
	pthread_mutex_t mu;
	pthread_mutex_t run_mu;            /* held by the side that computes */
	pthread_cond_t cv;
	struct lw_part *parts;
	size_t n;
	size_t cursor[2];
	long pend_idx[2];
	struct rt_value *pend[2];
	struct rt_value *subst;
	int forced, done[2], failed;
	struct val_layer *layers;
	const struct rt_cmp_opts *tol;
	struct ir_diag d;                  /* errors of the comparisons */
};

struct lw_side {
	struct lw_state *st;
	int side;
	struct rt_session *s;
	struct rt_value **in, **out;
	size_t n_in;
	struct ir_diag d;
	int rc;
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

/* Both values of part c are pending: compare, and in the forced pass make
 * the reference's value, in the candidate's form, the substitute. */
static void meet(struct lw_state *st, size_t c)
{
	const struct lw_part *p = &st->parts[c];
	struct rt_value *r = st->pend[0], *x = st->pend[1], *got = NULL;
	struct val_layer *l = &st->layers[c];
	struct ir_diag d;

	ir_diag_init(&d);
	if (val_to_ref(x, p->e, r->kind == RT_TENSOR ? r->dtype : 0, &got, &d) == 0) {
		rt_compare(got, r, st->tol, st->forced ? &l->local : &l->acc);
		rt_value_unref(got);
	} else {
		struct rt_metrics *m = st->forced ? &l->local : &l->acc;

		memset(m, 0, sizeof(*m));
		snprintf(m->why, sizeof(m->why), "%.250s", d.msg);
	}
	if (st->forced && val_to_cand(r, p->e, x->kind == RT_TENSOR ? x->dtype : 0,
				      &st->subst, &d) < 0)
		st->subst = NULL;
}

static void clear_pending(struct lw_state *st, int side)
{
	rt_value_unref(st->pend[side]);
	st->pend[side] = NULL;
	st->pend_idx[side] = -1;
}

static void take_subst(struct lw_state *st, struct rt_value **slot)
{
	if (!st->subst)
		return;
	rt_value_unref(*slot);
	*slot = st->subst;
	st->subst = NULL;
}

static int observe(void *ctx, const struct ir_node *n, size_t out, struct rt_value **slot)
{
	struct lw_side *sd = ctx;
	struct lw_state *st = sd->st;
	int side = sd->side, other = !side, stop;
	size_t c = st->cursor[side];
	int waited = 0;

	if (c >= st->n || st->parts[c].node[side] != n->index || st->parts[c].out[side] != out)
		return 0;
	st->cursor[side]++;
	pthread_mutex_lock(&st->mu);
	if (!st->failed) {
		st->pend[side] = rt_value_ref(*slot);
		st->pend_idx[side] = (long)c;
		if (st->pend_idx[other] == (long)c) {
			meet(st, c);
			if (side == 1)
				take_subst(st, slot);
			clear_pending(st, 0);
			if (side == 1)
				clear_pending(st, 1);
			else
				st->pend_idx[1] = -2;  /* met: the candidate wakes */
			pthread_cond_broadcast(&st->cv);
		} else {
			/* let the other side compute while this one waits */
			pthread_mutex_unlock(&st->run_mu);
			waited = 1;
			while (st->pend_idx[side] == (long)c && !st->failed && !st->done[other])
				pthread_cond_wait(&st->cv, &st->mu);
			if (side == 1 && st->pend_idx[1] == -2) {
				take_subst(st, slot);
				clear_pending(st, 1);
			} else if (st->pend_idx[side] == (long)c) {
				clear_pending(st, side);   /* the other side stopped */
			}
		}
	}
	stop = st->failed;
	pthread_mutex_unlock(&st->mu);
	if (waited)   /* never taken while holding mu: the other side needs mu */
		pthread_mutex_lock(&st->run_mu);
	return stop;
}

static void *side_main(void *arg)
{
	struct lw_side *sd = arg;
	struct lw_state *st = sd->st;

	pthread_mutex_lock(&st->run_mu);
	sd->rc = rt_session_run(sd->s, sd->in, sd->n_in, sd->out, &sd->d);
	pthread_mutex_unlock(&st->run_mu);
	pthread_mutex_lock(&st->mu);
	st->done[sd->side] = 1;
	if (sd->rc < 0)
		st->failed = 1;
	pthread_cond_broadcast(&st->cv);
	pthread_mutex_unlock(&st->mu);
	return NULL;
}

static int run_pass(struct lw_state *st, struct lw_side *sides, int forced,
		    struct ir_diag *d)
{
	pthread_t tid;
	int rc = 0;

	st->forced = forced;
	st->failed = 0;
	for (int s = 0; s < 2; s++) {
		st->cursor[s] = 0;
		st->done[s] = 0;
		st->pend_idx[s] = -1;
		ir_diag_init(&sides[s].d);
		rt_session_set_observer(sides[s].s, observe, &sides[s]);
	}
	if (pthread_create(&tid, NULL, side_main, &sides[1]) != 0)
		return ir_diag_error(d, IR_ENOMEM, "cannot start a thread");
	side_main(&sides[0]);
	pthread_join(tid, NULL);
	for (int s = 0; s < 2; s++) {
		rt_inputs_release(sides[s].out, rt_session_n_outputs(sides[s].s));
		if (sides[s].rc < 0 && sides[s].d.status != IR_EUSAGE && !rc)
			rc = ir_diag_error(d, sides[s].d.status, "%s model: %.440s",
					   s ? "candidate" : "reference", sides[s].d.msg);
	}
	rt_value_unref(st->subst);
	st->subst = NULL;
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

int val_layerwise(struct ir_model *ref, struct ir_model *cand,
		  const struct val_opts *o, struct rt_value **ref_in,
		  struct rt_value **cand_in, struct val_report *r,
		  struct ir_diag *d)
{
	struct rt_opts ro = { .threads = o->threads };
	struct lw_state st = { .tol = &o->tol, .pend_idx = { -1, -1 } };
	struct lw_side sides[2] = { { .st = &st, .side = 0 }, { .st = &st, .side = 1 } };
	int rc;

	pthread_mutex_init(&st.mu, NULL);
	pthread_mutex_init(&st.run_mu, NULL);
	pthread_cond_init(&st.cv, NULL);
	ir_diag_init(&st.d);
	if ((rc = find_parts(ref, cand, o->map, &st, &r->n_unordered, d)) < 0)
		goto cleanup;
	if (!(st.layers = calloc(st.n + 1, sizeof(*st.layers)))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto cleanup;
	}
	if ((rc = rt_session_new(ref, &ro, &sides[0].s, d)) < 0 ||
	    (rc = rt_session_new(cand, &ro, &sides[1].s, d)) < 0)
		goto cleanup;
	sides[0].in = ref_in;
	sides[1].in = cand_in;
	for (int s = 0; s < 2; s++) {
		sides[s].n_in = rt_session_n_inputs(sides[s].s);
		if (!(sides[s].out = calloc(rt_session_n_outputs(sides[s].s) + 1,
					    sizeof(*sides[s].out)))) {
			rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
			goto cleanup;
		}
	}
	if ((rc = run_pass(&st, sides, 0, d)) < 0 || (rc = run_pass(&st, sides, 1, d)) < 0)
		goto cleanup;
	r->layerwise = 1;
	r->n_layers = st.n;
	r->layers = st.layers;
	st.layers = NULL;
	for (size_t i = 0; i < r->n_layers; i++) {
		const struct ir_node *n = cand->graph->nodes[st.parts[i].node[1]];
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
	for (int s = 0; s < 2; s++) {
		free(sides[s].out);
		rt_session_free(sides[s].s);
	}
	free(st.layers);
	free(st.parts);
	pthread_mutex_destroy(&st.mu);
	pthread_mutex_destroy(&st.run_mu);
	pthread_cond_destroy(&st.cv);
	return rc;
}
