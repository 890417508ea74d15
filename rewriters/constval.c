/* constval.c: constant tensors as runtime values for passes that compute
 * new weights (folded batch norms, flipped ConvTranspose kernels, Range
 * results): reading an initializer, and adding one from a runtime tensor
 * or an IR tensor (a computed weight), either fresh or under the name of a
 * value a detached node produced. */
#include <stdio.h>

#include "rewriters/rw_int.h"
#include "runtime/runtime.h"

struct rt_value *rw_init_value(const struct ir_value *v)
{
	struct rt_value *t = NULL, *copy = NULL;
	struct ir_diag d;

	if (!v || !v->init || v->is_input)
		return NULL;
	ir_diag_init(&d);
	if (rt_value_from_ir(NULL, v->init, &t, &d) < 0)
		return NULL;
	/* a private copy: the view may borrow the model's payload */
	if (rt_tensor_clone(NULL, t, &copy, &d) < 0)
		copy = NULL;
	rt_value_unref(t);
	return copy;
}

void rw_const_name(struct rw_emit *e, char *name, size_t size)
{
	snprintf(name, size, "%s/const_%d", e->base, e->k++);
}

struct ir_value *rw_const_tensor(struct rw_emit *e, struct ir_tensor *t)
{
	struct ir_value *out;

	if (e->failed || !t) {
		ir_tensor_free(t);
		e->failed = 1;
		return NULL;
	}
	/* freed there on failure */
	if (!(out = ir_graph_add_initializer(e->g, t)))
		e->failed = 1;
	return out;
}

struct ir_value *rw_const_value(struct rw_emit *e, const struct rt_value *t)
{
	struct ir_tensor *it = NULL;
	struct ir_diag d;
	char name[256];

	if (e->failed)
		return NULL;
	ir_diag_init(&d);
	rw_const_name(e, name, sizeof(name));
	if (rt_value_to_ir(t, name, &it, &d) < 0) {
		e->failed = 1;
		return NULL;
	}
	return rw_const_tensor(e, it);
}

int rw_const_into(struct rw_emit *e, const struct rt_value *t, struct ir_value *v)
{
	struct ir_tensor *it = NULL;
	struct ir_diag d;

	if (e->failed)
		return IR_ENOMEM;
	ir_diag_init(&d);
	if (rt_value_to_ir(t, ir_s(v->name), &it, &d) < 0 ||
	    ir_value_attach_initializer(e->g, v, it) < 0) {
		e->failed = 1;
		return IR_ENOMEM;
	}
	ir_graph_drop_value_info(e->g, v);
	e->n_emitted++;
	return 0;
}

int rw_const_doubles(const struct rw_ctx *c, const struct ir_value *v,
		     double *out, size_t cap, size_t *n)
{
	const struct ir_vtype *t = v ? rw_type(c, v) : NULL;

	*n = 0;
	if (!t)
		return 0;
	if (t->has_fconst && t->n_fconst <= cap) {
		for (size_t i = 0; i < t->n_fconst; i++)
			out[i] = t->fval[i];
		*n = t->n_fconst;
		return 1;
	}
	if (t->has_const && t->n_const <= cap) {
		for (size_t i = 0; i < t->n_const; i++) {
			if (t->cval[i].kind != IR_VDIM_VALUE)
				return 0;
			out[i] = (double)t->cval[i].value;
		}
		*n = t->n_const;
		return 1;
	}
	return 0;
}

int rw_static_shape(const struct rw_ctx *c, const struct ir_value *v, int64_t *dims,
		    int *rank)
{
	const struct ir_vtype *t = v ? rw_type(c, v) : NULL;

	if (!t || t->rank < 0 || t->is_seq)
		return 0;
	for (int i = 0; i < t->rank; i++) {
		if (t->dims[i].kind != IR_VDIM_VALUE)
			return 0;
		dims[i] = t->dims[i].value;
	}
	*rank = t->rank;
	return 1;
}

double rw_static_numel(const struct rw_ctx *c, const struct ir_value *v)
{
	const struct ir_vtype *t = v ? rw_type(c, v) : NULL;
	double p = 1;

	if (!t || t->rank < 0)
		return -1;
	for (int k = 0; k < t->rank; k++) {
		if (t->dims[k].kind != IR_VDIM_VALUE)
			return -1;
		p *= (double)t->dims[k].value;
	}
	return p;
}

int rw_single_use(const struct ir_value *v)
{
	return v && v->n_uses == 1 && !(v->graph && ir_graph_is_output(v->graph, v));
}
