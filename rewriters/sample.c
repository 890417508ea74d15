/* sample.c: the interpreter session of a model being rewritten with one
 * set of seeded random inputs (rw_int.h): fold-constants runs the model in
 * it once to capture constant values, --fit-memory plans its peak memory
 * (fit.c). */
#include <stdlib.h>

#include "rewriters/rw_int.h"
#include "runtime/inputs.h"
#include "runtime/runtime.h"

int rw_sample_init(struct rw_sample *r, struct ir_model *m, const struct rt_opts *o,
		   const struct rt_dim_set *dims, size_t n_dims, struct ir_diag *d)
{
	struct rt_input_opts io = { .seed = 1, .n_dims = n_dims, .dims = dims };
	int rc;

	r->s = NULL;
	r->ins = NULL;
	r->n_ins = 0;
	if ((rc = rt_session_new(m, o, &r->s, d)) < 0)
		return rc;
	if (!(r->ins = calloc(rt_session_n_inputs(r->s) + 1, sizeof(*r->ins))))
		return ir_diag_error(d, IR_ENOMEM, "out of memory");
	r->n_ins = rt_session_n_inputs(r->s);
	return rt_inputs_random(r->s, m, &io, r->ins, d);
}

void rw_sample_release(struct rw_sample *r)
{
	if (r->ins)
		rt_inputs_release(r->ins, r->n_ins);
	free(r->ins);
	rt_session_free(r->s);
	r->s = NULL;
	r->ins = NULL;
	r->n_ins = 0;
}
