/* fit.c: --fit-memory: the largest batch whose estimated peak memory fits
 * the target's device memory.  The estimate is the weights (every
 * initializer's bytes, all resident on the device) plus the batch times
 * the activations of one sample, where the activations are the planned
 * peak of live tensors (inputs included) of a run at the model's own
 * batch (1 where it is symbolic), from static inference and the
 * interpreter's release order (rt_session_plan_peak), divided by that
 * batch.  Activations grow linearly with the batch in the networks this is
 * for; the chosen batch is then made static by static-dims. */
#include <stdio.h>

#include "oprules/rules.h"
#include "rewriters/migrate.h"
#include "rewriters/rw_int.h"
#include "runtime/runtime.h"

static int64_t weight_bytes(const struct ir_graph *g)
{
	int64_t w = 0;

	for (size_t i = 0; i < g->n_inits; i++) {
		int64_t b = ir_tensor_nbytes(g->inits[i]);

		if (b > 0)
			w += b;
	}
	return w;
}

/* The model's own batch: dim 0 of the first graph input of rank >= 1
 * that no initializer backs, when static; else 1. */
static int64_t own_batch(const struct ir_graph *g)
{
	for (size_t i = 0; i < g->n_inputs; i++) {
		const struct ir_type *t = g->inputs[i].type;

		if (g->inputs[i].value->init || !t || t->kind != IR_TYPE_TENSOR ||
		    !t->shape.n_dims)
			continue;
		return t->shape.dims[0].kind == IR_DIM_VALUE && t->shape.dims[0].value > 0 ?
		       t->shape.dims[0].value : 1;
	}
	return 1;
}

int mg_fit_batch(struct ir_model *m, const struct rules_target *t, const struct mg_opts *o,
		 int64_t *batch, char *how, size_t size, struct ir_diag *d)
{
	struct rt_opts ro = { .threads = 1 };
	struct rw_sample r;
	int64_t w, peak = 0, b0, per, mem = t->device_memory_bytes;
	size_t unknown = 0;
	int rc;

	if (mem <= 0)
		return ir_diag_error(d, IR_EUSAGE, "--fit-memory: the rules of '%s' give no "
				     "device memory", t->id);
	if ((rc = rw_sample_init(&r, m, &ro, o->dims, o->n_dims, d)) < 0 ||
	    (rc = rt_session_plan_peak(r.s, r.ins, r.n_ins, &peak, &unknown, d)) < 0)
		goto done;
	w = weight_bytes(m->graph);
	b0 = own_batch(m->graph);
	per = (peak + b0 - 1) / b0;
	if (per <= 0) {
		rc = ir_diag_error(d, IR_EINVAL, "--fit-memory: the activations' size is unknown "
				   "(%zu values of unknown size; make dims static with --dim)", unknown);
		goto done;
	}
	if (w + per > mem) {
		rc = ir_diag_error(d, IR_EINVAL, "--fit-memory: even batch 1 needs about %lld "
				   "bytes (weights %lld + activations %lld), the device has %lld",
				   (long long)(w + per), (long long)w, (long long)per, (long long)mem);
		goto done;
	}
	*batch = (mem - w) / per;
	if (*batch > 65536)
		*batch = 65536;
	snprintf(how, size, "--fit-memory: batch %lld: weights %lld + %lld x %lld bytes of "
		 "activations per sample <= %lld bytes of device memory%s",
		 (long long)*batch, (long long)w, (long long)*batch, (long long)per, (long long)mem,
		 unknown ? " (some values of unknown size not counted)" : "");
	rc = 0;
done:
	rw_sample_release(&r);
	return rc;
}
