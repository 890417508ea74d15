/* rnn_emit.c: the emitter of the recurrent decompositions (see rnn_int.h):
 * each builder records the op type it emits, then builds the node in the
 * model's opset form (Split's split input from 13 and num_outputs from 18,
 * Clip's bounds as inputs from 11) or, in a dry run, returns a placeholder
 * value so that the same code computes the exact op list. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rewriters/rnn_int.h"
#include "runtime/runtime.h"

/* What values are in a dry run: never read, only passed along. */
static struct ir_value placeholder;

int rw_rnn_dry(const struct rw_rnn_em *m)
{
	return !m->e || m->e->failed;
}

static void record(struct rw_rnn_em *m, const char *op)
{
	for (size_t i = 0; i < m->n_ops; i++)
		if (!strcmp(m->ops[i], op))
			return;
	if (m->n_ops < RW_RNN_MAX_OPS)
		m->ops[m->n_ops++] = op;
}

static struct ir_value *ph(struct ir_value *out)
{
	return out ? out : &placeholder;
}

struct ir_value *rw_rnn_op(struct rw_rnn_em *m, const char *op, struct ir_value *a,
			   struct ir_value *b, struct ir_value *out)
{
	record(m, op);
	if (rw_rnn_dry(m))
		return ph(out);
	return rw_op_to(m->e, op, a, b, out);
}

/* A node op(in...) whose attributes the caller sets; NULL in a dry run. */
static struct ir_node *node(struct rw_rnn_em *m, const char *op, struct ir_value *const *in,
			    size_t n_in, struct ir_value *out)
{
	record(m, op);
	if (rw_rnn_dry(m))
		return NULL;
	return rw_node(m->e, op, NULL, in, n_in, out);
}

static void set_failed(struct rw_rnn_em *m, int rc)
{
	if (rc < 0 && m->e)
		m->e->failed = 1;
}

static struct ir_value *out_of(struct ir_node *n)
{
	return n ? n->outputs[0] : &placeholder;
}

struct ir_value *rw_rnn_op_attr(struct rw_rnn_em *m, const char *op, struct ir_value *x,
				const char *name1, float v1, const char *name2, float v2)
{
	struct ir_node *n = node(m, op, &x, 1, NULL);

	if (n) {
		set_failed(m, ir_node_set_float(n, name1, v1));
		if (name2)
			set_failed(m, ir_node_set_float(n, name2, v2));
	}
	return out_of(n);
}

void rw_rnn_split(struct rw_rnn_em *m, struct ir_value *x, int64_t axis, int64_t k,
		  struct ir_value **outs)
{
	struct ir_node *n;

	if (k == 1) {
		outs[0] = x;
		return;
	}
	n = node(m, "Split", &x, 1, NULL);
	outs[0] = out_of(n);
	for (int64_t i = 1; i < k; i++) {
		struct ir_value *v = NULL;

		if (n) {
			char hint[200];

			snprintf(hint, sizeof(hint), "%s/split_%d", m->e->base, m->e->k++);
			if (!(v = ir_graph_new_value(m->e->g, hint)) ||
			    ir_node_append_output(n, v) < 0)
				m->e->failed = 1;
		}
		outs[i] = v ? v : &placeholder;
	}
	if (n) {
		set_failed(m, ir_node_set_int(n, "axis", axis));
		/* equal parts: no split list before 18, num_outputs from 18 */
		if (m->opset >= 18)
			set_failed(m, ir_node_set_int(n, "num_outputs", k));
	}
}

struct ir_value *rw_rnn_concat(struct rw_rnn_em *m, struct ir_value *const *in, size_t n,
			       int64_t axis)
{
	struct ir_node *nd;

	if (n == 1)
		return in[0];
	nd = node(m, "Concat", in, n, NULL);
	if (nd)
		set_failed(m, ir_node_set_int(nd, "axis", axis));
	return out_of(nd);
}

static struct ir_value *ints(struct rw_rnn_em *m, const int64_t *v, size_t n)
{
	return rw_rnn_dry(m) ? &placeholder : rw_ints(m->e, v, n);
}

struct ir_value *rw_rnn_reshape(struct rw_rnn_em *m, struct ir_value *x, const int64_t *dims,
				size_t n, struct ir_value *out)
{
	return rw_rnn_op(m, "Reshape", x, ints(m, dims, n), out);
}

struct ir_value *rw_rnn_transpose(struct rw_rnn_em *m, struct ir_value *x, const int64_t *perm,
				  size_t n)
{
	struct ir_node *nd = node(m, "Transpose", &x, 1, NULL);

	if (nd)
		set_failed(m, ir_node_set_ints(nd, "perm", perm, n));
	return out_of(nd);
}

struct ir_value *rw_rnn_gather(struct rw_rnn_em *m, struct ir_value *x, const int64_t *idx,
			       size_t n)
{
	return rw_rnn_op(m, "Gather", x, ints(m, idx, n), NULL);
}

struct ir_value *rw_rnn_take(struct rw_rnn_em *m, struct ir_value *x, int64_t i)
{
	double v = (double)i;
	struct ir_value *idx = rw_rnn_dry(m) ? &placeholder :
			       rw_const(m->e, IR_DTYPE_INT64, 0, NULL, &v);

	return rw_rnn_op(m, "Gather", x, idx, NULL);
}

struct ir_value *rw_rnn_cast(struct rw_rnn_em *m, struct ir_value *x, int to)
{
	struct ir_node *nd = node(m, "Cast", &x, 1, NULL);

	if (nd)
		set_failed(m, ir_node_set_int(nd, "to", to));
	return out_of(nd);
}

struct ir_value *rw_rnn_clip(struct rw_rnn_em *m, struct ir_value *x, double lo, double hi)
{
	record(m, "Clip");
	if (rw_rnn_dry(m))
		return &placeholder;
	return rw_clip(m->e, x, lo, hi, NULL);
}

struct ir_value *rw_rnn_scalar(struct rw_rnn_em *m, double v)
{
	return rw_rnn_dry(m) ? &placeholder : rw_scalar(m->e, m->e->dtype, v);
}

struct ir_value *rw_rnn_const(struct rw_rnn_em *m, int rank, const int64_t *dims,
			      const double *v)
{
	return rw_rnn_dry(m) ? &placeholder : rw_const(m->e, m->e->dtype, rank, dims, v);
}

double *rw_rnn_init_doubles(struct rw_rnn_em *m, const struct ir_value *v, int64_t n)
{
	struct rt_value *t;
	double *out = NULL;

	if (rw_rnn_dry(m))
		return NULL;
	t = rw_init_value(v);
	if (t && t->numel == n && (out = malloc((size_t)(n + 1) * sizeof(*out))))
		for (int64_t i = 0; i < n; i++)
			out[i] = rt_value_get_f64(t, i);
	rt_value_unref(t);
	if (!out)
		m->e->failed = 1;
	return out;
}
