/* run.c: running a session's main graph node by node (struct rt_run;
 * rt_session_run is begin, steps, end), so that a caller can interleave two
 * models in one thread (`opmig validate --layerwise`): inputs checked
 * against the declared types and bound, the main frame, outputs detached
 * from the session's memory account, each run's own memory peak (fold.c
 * judges from it how much the session may keep). */
#include <stdlib.h>

#include "runtime/exec_int.h"

struct rt_run {
	struct rt_session *s;
	struct rt_frame f;
	struct rt_value **all;     /* bound inputs by graph input (borrowed) */
	int begun;                 /* the frame holds values */
	int measuring;             /* rt_fold_run_begin was called */
	double t0;                 /* start, when profiling */
};

void rt_run_free(struct rt_run *r)
{
	if (!r)
		return;
	if (r->begun) {
		struct ir_diag d;

		/* an "end" that collects nothing: the frame is released */
		ir_diag_init(&d);
		rt_frame_end(&r->f, NULL, IR_EUSAGE, &d);
	}
	if (r->measuring)
		rt_fold_run_end(r->s, 0);
	free(r->all);
	free(r);
}

int rt_run_begin(struct rt_session *s, struct rt_value **inputs, size_t n,
		 struct rt_run **out, struct ir_diag *d)
{
	const struct ir_graph *g = s->m->graph;
	struct rt_run *r = calloc(1, sizeof(*r));
	size_t k = 0;
	int rc = 0;

	*out = NULL;
	if (!r || !(r->all = calloc(s->main->n_in + 1, sizeof(*r->all)))) {
		rc = ir_diag_error(d, IR_ENOMEM, "out of memory");
		goto fail;
	}
	r->s = s;
	if (s->o.profile)
		rt_profile_begin(s, r->t0 = rt_now());
	if (n > s->n_inputs) {
		rc = diag_error(d, "%zu inputs given, the model has %zu", n, s->n_inputs);
		goto fail;
	}
	for (size_t i = 0; i < g->n_inputs; i++) {
		const struct ir_value *v = g->inputs[i].value;

		if (!v || v->init || v->sparse_init)
			continue;
		if (k >= n || !inputs[k]) {
			rc = diag_error(d, "input '%s' is not given", ir_s(v->name));
			goto fail;
		}
		if ((rc = rt_session_check_input(s, k, inputs[k], d)) < 0)
			goto fail;
		r->all[i] = inputs[k++];
	}
	r->f.p = s->main;
	rt_fold_run_begin(s);
	r->measuring = 1;
	if ((rc = rt_frame_begin(&r->f, r->all, s->main->n_in, d)) < 0)
		goto fail;
	r->begun = 1;
	*out = r;
	return 0;
fail:
	rt_run_free(r);
	s->stats.peak_bytes = s->mem.peak;
	return rc;
}

int rt_run_step(struct rt_run *r, struct ir_diag *d)
{
	return rt_frame_step(r->s, &r->f, d);
}

int rt_run_end(struct rt_run *r, int rc, struct rt_value **outputs,
	       struct ir_diag *d)
{
	struct rt_session *s = r->s;

	for (size_t i = 0; i < rt_session_n_outputs(s); i++)
		outputs[i] = NULL;
	r->begun = 0;
	rc = rt_frame_end(&r->f, outputs, rc, d);
	for (size_t i = 0; rc >= 0 && i < rt_session_n_outputs(s); i++)
		rt_value_detach(outputs[i]);
	rt_fold_run_end(s, rc >= 0);
	r->measuring = 0;
	s->stats.peak_bytes = s->mem.peak;
	if (s->o.profile)
		rt_profile_run(s, r->t0, rt_now());
	rt_run_free(r);
	return rc;
}
