/* infer_ctrl.c: inference through control flow: If (both branches are
 * inferred; outputs take the branches' common type, or the taken branch
 * when the condition is constant), Loop and Scan (bodies inferred with
 * outer-scope results; outputs where the rule is simple). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/infer_int.h"

#define MAX_DEPTH 32

static struct ir_graph *graph_attr(struct infer_ctx *c, const char *name)
{
	const struct ir_attr *a = infer_attr(c, name);

	return a && a->type == IR_ATTR_GRAPH ? a->g : NULL;
}

static int sub_infer(struct infer_ctx *c, struct ir_graph *g)
{
	struct infer_ctx sub = *c;

	if (c->depth >= MAX_DEPTH)
		return infer_err(c, "subgraphs nested too deeply");
	sub.depth = c->depth + 1;
	return infer_graph(&sub, g);
}

static const struct ir_vtype *graph_out(struct infer_ctx *c,
					const struct ir_graph *g, size_t i)
{
	return i < g->n_outputs && g->outputs[i].value ?
	       ir_infer_get(c->r, g->outputs[i].value) : NULL;
}

/* The common type of a and b: dims where they agree. */
static void join(struct ir_vtype *o, const struct ir_vtype *a,
		 const struct ir_vtype *b)
{
	infer_vt_unknown(o);
	if (!a || !b || a->is_seq != b->is_seq || a->map_key != b->map_key)
		return;
	o->is_seq = a->is_seq;
	o->map_key = a->map_key;
	if (a->dtype == b->dtype)
		o->dtype = a->dtype;
	if (a->rank < 0 || a->rank != b->rank)
		return;
	o->rank = a->rank;
	for (int i = 0; i < a->rank; i++)
		o->dims[i] = infer_dim_eq(&a->dims[i], &b->dims[i]) ? a->dims[i] :
			     infer_dim_unknown();
}

int infer_if(struct infer_ctx *c)
{
	struct ir_graph *th = graph_attr(c, "then_branch");
	struct ir_graph *el = graph_attr(c, "else_branch");
	int64_t cond;
	int known, rc;

	if (!th || !el)
		return infer_err(c, "missing required attribute '%s'",
				 th ? "else_branch" : "then_branch");
	if ((rc = sub_infer(c, th)) < 0 || (rc = sub_infer(c, el)) < 0)
		return rc;
	if (th->n_outputs != c->n->n_outputs || el->n_outputs != c->n->n_outputs)
		return infer_err(c, "branches have %zu and %zu outputs, the node %zu",
				 th->n_outputs, el->n_outputs, c->n->n_outputs);
	known = infer_vt_const_int(infer_in(c, 0), 0, &cond);
	for (size_t i = 0; i < c->n->n_outputs; i++) {
		const struct ir_vtype *a = graph_out(c, th, i), *b = graph_out(c, el, i);

		if (known && (cond ? a : b)) {
			if ((rc = infer_vt_copy(&c->out[i], cond ? a : b)) < 0)
				return rc;
			continue;
		}
		join(&c->out[i], a, b);
	}
	return 0;
}

static void no_const(struct ir_vtype *t)
{
	free(t->cval);
	t->cval = NULL;
	t->has_const = 0;
	t->n_const = 0;
	free(t->fval);
	t->fval = NULL;
	t->has_fconst = 0;
	t->n_fconst = 0;
}

int infer_loop(struct infer_ctx *c)
{
	struct ir_graph *body = graph_attr(c, "body");
	struct ir_vdim one = infer_dim_val(1);
	struct ir_vtype t;
	size_t n_carried;
	int64_t trip = -1, cv = 0;
	int rc, cond_true;

	if (!body)
		return infer_err(c, "missing required attribute 'body'");
	cond_true = !infer_has_in(c, 1) ||
		    (infer_vt_const_int(infer_in(c, 1), 0, &cv) && cv);
	if (body->n_inputs < 2 || c->n_in < 2 || body->n_inputs - 2 != c->n_in - 2)
		return infer_err(c, "body has %zu inputs for %zu loop-carried values",
				 body->n_inputs, c->n_in < 2 ? 0 : c->n_in - 2);
	n_carried = c->n_in - 2;
	if (body->n_outputs < 1 + n_carried)
		return infer_err(c, "body has %zu outputs for %zu loop-carried values",
				 body->n_outputs, n_carried);
	for (size_t i = 0; i < body->n_inputs; i++) {
		const struct ir_vtype *x = i >= 2 ? infer_in(c, i) : NULL;

		infer_vt_unknown(&t);
		if (i == 0)
			t.dtype = IR_DTYPE_INT64, t.rank = 0;
		else if (i == 1) {
			t.dtype = IR_DTYPE_BOOL, t.rank = 0;
			/* a true condition: if the body keeps it true under that
			 * assumption, it stays true on every iteration */
			if (cond_true && (rc = infer_vt_set_const(&t, &one, 1)) < 0)
				return rc;
		}
		else if (x) {
			t.is_seq = x->is_seq;  /* its length varies: no elems */
			t.dtype = x->dtype;
			t.rank = x->rank;
			memcpy(t.dims, x->dims, sizeof(x->dims));
		}
		rc = body->inputs[i].value ? infer_set(c, body->inputs[i].value, &t) : 0;
		infer_vt_release(&t);
		if (rc < 0)
			return rc;
	}
	if ((rc = sub_infer(c, body)) < 0)
		return rc;
	if (!infer_has_in(c, 1) ||
	    (cond_true && infer_vt_const_int(graph_out(c, body, 0), 0, &cv) && cv))
		infer_vt_const_int(infer_in(c, 0), 0, &trip);
	for (size_t i = 0; i < c->n->n_outputs; i++) {
		const struct ir_vtype *b = graph_out(c, body, 1 + i);

		if (i < n_carried) {
			join(&c->out[i], b, infer_in(c, 2 + i));
			if (b && !c->out[i].dtype)
				c->out[i].dtype = b->dtype;
			continue;
		}
		if (!b)
			continue;
		if ((rc = infer_vt_copy(&c->out[i], b)) < 0)
			return rc;
		no_const(&c->out[i]);
		if (b->rank < 0 || b->rank >= IR_INFER_MAX_RANK) {
			c->out[i].rank = -1;
			continue;
		}
		memmove(c->out[i].dims + 1, b->dims, (size_t)b->rank * sizeof(b->dims[0]));
		c->out[i].dims[0] = trip >= 0 ? infer_dim_val(trip) : infer_dim_unknown();
		c->out[i].rank = b->rank + 1;
	}
	return 0;
}

/* Drop dims [0, k) of x into t (the batch axis, and the sequence axis of
 * scan inputs). */
static void drop_lead(struct ir_vtype *t, const struct ir_vtype *x, int k)
{
	infer_vt_unknown(t);
	if (!x)
		return;
	t->dtype = x->dtype;
	if (x->rank < k)
		return;
	t->rank = x->rank - k;
	memcpy(t->dims, x->dims + k, (size_t)t->rank * sizeof(t->dims[0]));
}

/* Scan-8: inputs sequence_lens (optional), states [batch, ...], scans
 * [batch, seq, ...]; outputs final states [batch, ...] and scan outputs
 * [batch, seq, ...]. */
static int scan8(struct infer_ctx *c, struct ir_graph *body)
{
	struct ir_vdim batch = infer_dim_unknown(), seq = infer_dim_unknown();
	int64_t nscan = 0;
	size_t nstate;
	struct ir_vtype t;
	int rc;

	if (!body)
		return infer_err(c, "missing required attribute 'body'");
	if ((rc = infer_attr_int(c, "num_scan_inputs", &nscan)) < 0)
		return rc;
	if (rc == 1)
		return infer_err(c, "missing required attribute 'num_scan_inputs'");
	if (c->n_in < 1 || nscan < 0 || (size_t)nscan > c->n_in - 1 ||
	    body->n_inputs != c->n_in - 1)
		return infer_err(c, "body has %zu inputs, the node %zu",
				 body->n_inputs, c->n_in);
	nstate = c->n_in - 1 - (size_t)nscan;
	for (size_t i = 0; i < body->n_inputs; i++) {
		const struct ir_vtype *x = infer_in(c, 1 + i);

		if (x && x->rank >= 1 && batch.kind == IR_VDIM_UNKNOWN)
			batch = x->dims[0];
		if (i >= nstate && x && x->rank >= 2 && seq.kind == IR_VDIM_UNKNOWN)
			seq = x->dims[1];
		drop_lead(&t, x, i < nstate ? 1 : 2);
		if (body->inputs[i].value &&
		    (rc = infer_set(c, body->inputs[i].value, &t)) < 0)
			return rc;
	}
	if (infer_has_in(c, 0))
		seq = infer_dim_unknown();  /* per-batch lengths may differ */
	if ((rc = sub_infer(c, body)) < 0)
		return rc;
	for (size_t i = 0; i < c->n->n_outputs; i++) {
		const struct ir_vtype *b = graph_out(c, body, i);
		int lead = i < nstate ? 1 : 2;

		if (!b)
			continue;
		c->out[i].dtype = b->dtype;
		if (b->rank < 0 || b->rank + lead > IR_INFER_MAX_RANK)
			continue;
		c->out[i].rank = b->rank + lead;
		c->out[i].dims[0] = batch;
		if (lead == 2)
			c->out[i].dims[1] = seq;
		memcpy(c->out[i].dims + lead, b->dims, (size_t)b->rank * sizeof(b->dims[0]));
	}
	return 0;
}

int infer_scan(struct infer_ctx *c)
{
	struct ir_graph *body = graph_attr(c, "body");
	int64_t nscan = 0, in_axes[64], out_axes[64];
	size_t n_in_axes = 0, n_out_axes = 0, nstate;
	struct ir_vdim seq = infer_dim_unknown();
	struct ir_vtype t;
	int rc;

	if (c->opset < 9)
		return scan8(c, body);
	if (!body)
		return infer_err(c, "missing required attribute 'body'");
	if ((rc = infer_attr_int(c, "num_scan_inputs", &nscan)) < 0)
		return rc;
	if (rc == 1)
		return infer_err(c, "missing required attribute 'num_scan_inputs'");
	if ((rc = infer_attr_ints(c, "scan_input_axes", in_axes, 64, &n_in_axes)) < 0 ||
	    (rc = infer_attr_ints(c, "scan_output_axes", out_axes, 64, &n_out_axes)) < 0)
		return rc;
	if (nscan < 0 || (size_t)nscan > c->n_in || body->n_inputs != c->n_in)
		return infer_err(c, "body has %zu inputs, the node %zu",
				 body->n_inputs, c->n_in);
	nstate = c->n_in - (size_t)nscan;
	for (size_t i = 0; i < c->n_in; i++) {
		const struct ir_vtype *x = infer_in(c, i);

		infer_vt_unknown(&t);
		if (x) {
			t.dtype = x->dtype;
			t.rank = x->rank;
			memcpy(t.dims, x->dims, sizeof(x->dims));
		}
		if (i >= nstate && x && x->rank > 0) {
			int64_t ax;

			if (n_in_axes && i - nstate >= n_in_axes)
				return infer_err(c, "scan_input_axes has %zu values for %lld scan inputs",
						 n_in_axes, (long long)nscan);
			ax = n_in_axes ? in_axes[i - nstate] : 0;

			if (ax < 0)
				ax += x->rank;
			if (ax < 0 || ax >= x->rank)
				return infer_err(c, "scan input axis out of range");
			if (i == nstate)
				seq = x->dims[ax];
			memmove(t.dims + ax, t.dims + ax + 1,
				(size_t)(x->rank - 1 - ax) * sizeof(t.dims[0]));
			t.rank--;
		}
		if (body->inputs[i].value &&
		    (rc = infer_set(c, body->inputs[i].value, &t)) < 0)
			return rc;
	}
	if ((rc = sub_infer(c, body)) < 0)
		return rc;
	for (size_t i = 0; i < c->n->n_outputs; i++) {
		const struct ir_vtype *b = graph_out(c, body, i);
		int64_t ax;

		if (!b)
			continue;
		if ((rc = infer_vt_copy(&c->out[i], b)) < 0)
			return rc;
		no_const(&c->out[i]);
		if (i < nstate || b->rank < 0)
			continue;
		if (b->rank >= IR_INFER_MAX_RANK) {
			c->out[i].rank = -1;
			continue;
		}
		if (n_out_axes && i - nstate >= n_out_axes)
			return infer_err(c, "scan_output_axes has %zu values for %zu scan outputs",
					 n_out_axes, c->n->n_outputs - nstate);
		ax = n_out_axes ? out_axes[i - nstate] : 0;
		if (ax < 0)
			ax += b->rank + 1;
		if (ax < 0 || ax > b->rank)
			return infer_err(c, "scan output axis out of range");
		memmove(c->out[i].dims + ax + 1, b->dims + ax,
			(size_t)(b->rank - ax) * sizeof(b->dims[0]));
		c->out[i].dims[ax] = seq;
		c->out[i].rank = b->rank + 1;
	}
	return 0;
}
