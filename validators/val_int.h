/* val_int.h: what validate.c (samples, pairing, outputs) and layerwise.c
 * (side-by-side runs) share. */
#ifndef OPMIG_VAL_INT_H
#define OPMIG_VAL_INT_H

#include "validators/validate.h"

/* How one reference input or output corresponds to the candidate's. */
struct val_pair {
	size_t ref, cand;                   /* session input/output indices */
	const struct val_map_entry *e;      /* mapping, or NULL: same layout */
};

/* A reference-side value in the candidate's dtype and layout (for
 * feeding the candidate), and back (for comparing). */
int val_to_cand(struct rt_value *v, const struct val_map_entry *e,
		int cand_dtype, struct rt_value **out, struct ir_diag *d);
int val_to_ref(struct rt_value *v, const struct val_map_entry *e,
	       int ref_dtype, struct rt_value **out, struct ir_diag *d);

/* One model of a validation: its session, a sample's inputs bound for it
 * (the candidate's converted), and rt_session_n_outputs() slots for its
 * outputs. */
struct val_side {
	struct ir_model *m;
	struct rt_session *s;
	struct rt_value **in, **out;
};

/* Called when both models' outputs of the sample are in the sides' out
 * slots (released after it returns). */
typedef int (*val_outputs_fn)(void *ctx, struct ir_diag *d);

/* Layer-by-layer comparison of one sample, in the validation's sessions
 * (their observers are set for the comparison, then cleared).  Its first
 * pass runs both models freely, so it also gives the sample's outputs to
 * outputs_fn: the sample needs no separate run. */
int val_layerwise(const struct val_side *ref, const struct val_side *cand,
		  const struct val_opts *o, val_outputs_fn outputs_fn,
		  void *outputs_ctx, struct val_report *r, struct ir_diag *d);

#endif
