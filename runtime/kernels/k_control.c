/* k_control.c: kernels of the control family: If (one branch run as a
 * subgraph), Loop (trip count and/or condition, loop-carried values of any
 * kind, scan outputs stacked on a new first axis) and Scan (version 8 with
 * its batch axis and sequence_lens; version 9 on with per-input axes and
 * directions).  Bodies run through rt_subgraph_run, which gives them the
 * node's scope for outer values. */
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/k_ctrl_int.h"

static const char *kind_name(const struct rt_value *v)
{
	return v->kind == RT_TENSOR ? "tensor" : v->kind == RT_SEQUENCE ?
	       "sequence" : v->kind == RT_OPTIONAL ? "optional" : "map";
}

/* A condition value: a bool tensor of one element. */
static int cond_value(struct rt_kctx *k, const struct rt_value *v,
		      const char *what, int *out)
{
	char buf[160];

	if (!v || v->kind != RT_TENSOR || v->dtype != IR_DTYPE_BOOL || v->numel != 1) {
		rt_value_describe(v, buf, sizeof(buf));
		return rt_err(k, "%s must be a single bool, got %s", what, buf);
	}
	*out = ((const uint8_t *)v->data)[0] != 0;
	return 0;
}

static int scalar_new(struct rt_kctx *k, int dtype, int64_t x,
		      struct rt_value **out)
{
	int64_t one = 1;
	struct rt_value *t;

	/* a one-element tensor from kc_zeros, then rank 0 */
	if (kc_zeros(k, dtype, 1, &one, &t) < 0)
		return IR_ENOMEM;
	t->rank = 0;
	rt_store_i64(dtype, t->data, 0, x);
	*out = t;
	return 0;
}

/* ---- If --------------------------------------------------------------- */

static int k_if(struct rt_kctx *k)
{
	const char *branch;
	const struct ir_graph *g;
	struct rt_value **outs;
	size_t n;
	int c, rc;

	if ((rc = cond_value(k, rt_in(k, 0), "the condition", &c)) < 0)
		return rc;
	branch = c ? "then_branch" : "else_branch";
	if (!(g = rt_attr_graph(k, branch)))
		return rt_err(k, "attribute '%s' is missing", branch);
	n = g->n_outputs;
	if (n != k->node->n_outputs)
		return rt_err(k, "%s has %zu outputs, the node %zu", branch, n,
			      k->node->n_outputs);
	if (!(outs = calloc(n + 1, sizeof(*outs))))
		return rt_oom(k);
	rc = rt_subgraph_run(k, g, NULL, 0, outs);
	for (size_t i = 0; i < n; i++) {
		if (rc >= 0)
			rc = rt_out_set(k, i, outs[i]);
		else
			rt_value_unref(outs[i]);
	}
	free(outs);
	return rc;
}

/* ---- scan outputs ------------------------------------------------------ */

/* The per-iteration values of one scan output. */
struct scan_acc {
	size_t n, cap;
	struct rt_value **items;
};

static int acc_push(struct rt_kctx *k, struct scan_acc *a, struct rt_value *v,
		    size_t which)
{
	if (v->kind != RT_TENSOR) {
		rt_value_unref(v);
		return rt_err(k, "scan output %zu is a %s, not a tensor", which,
			      kind_name(v));
	}
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;
		struct rt_value **q = realloc(a->items, cap * sizeof(*q));

		if (!q) {
			rt_value_unref(v);
			return rt_oom(k);
		}
		a->items = q;
		a->cap = cap;
	}
	a->items[a->n++] = v;
	return 0;
}

static void acc_release(struct scan_acc *a)
{
	for (size_t i = 0; i < a->n; i++)
		rt_value_unref(a->items[i]);
	free(a->items);
	a->n = a->cap = 0;
	a->items = NULL;
}

/* Stack a scan output's items along `axis` (a normalised axis of the
 * result, or -1 for "the attribute value axis_attr, normalised here"); no
 * items: an empty tensor of the body's declared type with 0 along axis. */
static int acc_stack(struct rt_kctx *k, struct scan_acc *a, int64_t axis_attr,
		     int reverse, const struct ir_type *declared,
		     struct rt_value **out)
{
	int64_t dims[RT_MAX_RANK + 1];
	int dtype, kind, rank, axis, rc;

	*out = NULL;
	if (!a->n) {
		kc_declared(declared, &dtype, &kind, &rank, dims);
		if (!dtype)
			dtype = IR_DTYPE_FLOAT;
		if (rank < 0)
			rank = 0;
		if ((rc = rt_axis(k, axis_attr, rank + 1, &axis)) < 0)
			return rc;
		memmove(dims + axis + 1, dims + axis,
			(size_t)(rank - axis) * sizeof(*dims));
		dims[axis] = 0;
		return kc_zeros(k, dtype, rank + 1, dims, out);
	}
	if ((rc = rt_axis(k, axis_attr, a->items[0]->rank + 1, &axis)) < 0)
		return rc;
	if (reverse)
		for (size_t i = 0; i < a->n / 2; i++) {
			struct rt_value *t = a->items[i];

			a->items[i] = a->items[a->n - 1 - i];
			a->items[a->n - 1 - i] = t;
		}
	return kc_join(k, a->items, a->n, axis, 1, out);
}

/* ---- Loop ------------------------------------------------------------- */

struct loop_state {
	size_t n_carried, n_scan, n_body_in;
	struct rt_value **ins;      /* body inputs: iteration, cond, carried */
	struct rt_value **outs;     /* body outputs of one run */
	struct scan_acc *scans;
};

static void loop_release(struct loop_state *L)
{
	for (size_t i = 0; L->ins && i < L->n_body_in; i++)
		rt_value_unref(L->ins[i]);
	for (size_t i = 0; L->outs && i < 1 + L->n_carried + L->n_scan; i++)
		rt_value_unref(L->outs[i]);
	for (size_t i = 0; L->scans && i < L->n_scan; i++)
		acc_release(&L->scans[i]);
	free(L->ins);
	free(L->outs);
	free(L->scans);
}

static int k_loop(struct rt_kctx *k)
{
	const struct ir_graph *g = rt_attr_graph(k, "body");
	const struct ir_node *n = k->node;
	struct loop_state L = { 0 };
	int64_t trip = 0;
	int has_trip = rt_in(k, 0) != NULL, has_cond = rt_in(k, 1) != NULL;
	int cond = 1, rc = 0;

	if (!g)
		return rt_err(k, "attribute 'body' is missing");
	L.n_carried = n->n_inputs > 2 ? n->n_inputs - 2 : 0;
	L.n_body_in = 2 + L.n_carried;
	if (g->n_inputs != L.n_body_in)
		return rt_err(k, "body has %zu inputs, expected %zu (iteration, condition and %zu loop-carried)",
			      g->n_inputs, L.n_body_in, L.n_carried);
	if (g->n_outputs < 1 + L.n_carried)
		return rt_err(k, "body has %zu outputs, expected at least %zu",
			      g->n_outputs, 1 + L.n_carried);
	L.n_scan = g->n_outputs - 1 - L.n_carried;
	if (n->n_outputs > L.n_carried + L.n_scan)
		return rt_err(k, "the node has %zu outputs, the body gives %zu",
			      n->n_outputs, L.n_carried + L.n_scan);
	if (has_trip && (rc = rt_in_int(k, 0, &trip)) < 0)
		return rc;
	if (has_cond && (rc = cond_value(k, rt_in(k, 1), "input 'cond'", &cond)) < 0)
		return rc;
	if (!has_trip && !has_cond)
		return rt_err(k, "neither a trip count nor a condition: the loop would never end");
	if (!(L.ins = calloc(L.n_body_in + 1, sizeof(*L.ins))) ||
	    !(L.outs = calloc(g->n_outputs + 1, sizeof(*L.outs))) ||
	    !(L.scans = calloc(L.n_scan + 1, sizeof(*L.scans)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (size_t i = 0; i < L.n_carried; i++)
		if (!(L.ins[2 + i] = rt_value_ref(rt_in(k, 2 + i)))) {
			rc = rt_err(k, "loop-carried input %zu is missing", i);
			goto cleanup;
		}
	if ((rc = scalar_new(k, IR_DTYPE_BOOL, cond, &L.ins[1])) < 0)
		goto cleanup;
	for (int64_t it = 0; (!has_trip || it < trip) && cond; it++) {
		rt_value_unref(L.ins[0]);
		L.ins[0] = NULL;
		if ((rc = scalar_new(k, IR_DTYPE_INT64, it, &L.ins[0])) < 0 ||
		    (rc = rt_subgraph_run(k, g, L.ins, L.n_body_in, L.outs)) < 0)
			goto cleanup;
		/* without a cond input the body's condition is ignored */
		if (has_cond && (rc = cond_value(k, L.outs[0], "the body's condition output",
						 &cond)) < 0)
			goto cleanup;
		rt_value_unref(L.ins[1]);
		L.ins[1] = L.outs[0];
		L.outs[0] = NULL;
		for (size_t i = 0; i < L.n_carried; i++) {
			rt_value_unref(L.ins[2 + i]);
			L.ins[2 + i] = L.outs[1 + i];
			L.outs[1 + i] = NULL;
		}
		for (size_t j = 0; j < L.n_scan; j++) {
			struct rt_value *v = L.outs[1 + L.n_carried + j];

			L.outs[1 + L.n_carried + j] = NULL;
			if ((rc = acc_push(k, &L.scans[j], v, j)) < 0)
				goto cleanup;
		}
	}
	for (size_t i = 0; i < L.n_carried && i < n->n_outputs; i++)
		if ((rc = rt_out_set(k, i, rt_value_ref(L.ins[2 + i]))) < 0)
			goto cleanup;
	for (size_t j = 0; j < L.n_scan && L.n_carried + j < n->n_outputs; j++) {
		struct rt_value *t;

		if ((rc = acc_stack(k, &L.scans[j], 0, 0,
				    g->outputs[1 + L.n_carried + j].type, &t)) < 0 ||
		    (rc = rt_out_set(k, L.n_carried + j, t)) < 0)
			goto cleanup;
		acc_release(&L.scans[j]);
	}
cleanup:
	loop_release(&L);
	return rc;
}

/* ---- Scan ------------------------------------------------------------- */

/* Attribute list `name` of n entries (default 0 each) into out. */
static int scan_list(struct rt_kctx *k, const char *name, size_t n, int64_t *out)
{
	size_t m;
	const int64_t *v = rt_attr_ints(k, name, &m);

	for (size_t i = 0; i < n; i++)
		out[i] = 0;
	if (!v)
		return 0;
	if (m != n)
		return rt_err(k, "attribute '%s' has %zu entries, expected %zu", name, m, n);
	for (size_t i = 0; i < n; i++)
		out[i] = v[i];
	return 0;
}

struct scan_run {
	const struct ir_graph *g;
	size_t n_state, n_in, n_out;      /* N states, M scan inputs, K scan outputs */
	int64_t *in_axis, *in_dir, *out_axis, *out_dir;
	struct rt_value **ins;            /* body inputs: states then slices */
	struct rt_value **outs;           /* body outputs of one run */
	struct scan_acc *scans;
};

static void scan_release(struct scan_run *S)
{
	for (size_t i = 0; S->ins && i < S->n_state + S->n_in; i++)
		rt_value_unref(S->ins[i]);
	for (size_t i = 0; S->outs && i < S->n_state + S->n_out; i++)
		rt_value_unref(S->outs[i]);
	for (size_t i = 0; S->scans && i < S->n_out; i++)
		acc_release(&S->scans[i]);
	free(S->ins);
	free(S->outs);
	free(S->scans);
	free(S->in_axis);
}

static int scan_setup(struct rt_kctx *k, struct scan_run *S, size_t first_state)
{
	const struct ir_graph *g = rt_attr_graph(k, "body");
	int64_t m = rt_attr_int(k, "num_scan_inputs", -1);
	size_t n_vars = k->node->n_inputs - first_state;

	S->g = g;
	if (!g)
		return rt_err(k, "attribute 'body' is missing");
	if (m < 1 || (size_t)m > n_vars)
		return rt_err(k, "num_scan_inputs %lld does not fit %zu inputs",
			      (long long)m, n_vars);
	S->n_in = (size_t)m;
	S->n_state = n_vars - S->n_in;
	if (g->n_inputs != n_vars)
		return rt_err(k, "body has %zu inputs, expected %zu", g->n_inputs, n_vars);
	if (g->n_outputs < S->n_state)
		return rt_err(k, "body has %zu outputs, expected at least %zu",
			      g->n_outputs, S->n_state);
	S->n_out = g->n_outputs - S->n_state;
	if (k->node->n_outputs > g->n_outputs)
		return rt_err(k, "the node has %zu outputs, the body gives %zu",
			      k->node->n_outputs, g->n_outputs);
	if (!(S->in_axis = calloc(2 * (S->n_in + S->n_out) + 1, sizeof(int64_t))) ||
	    !(S->ins = calloc(n_vars + 1, sizeof(*S->ins))) ||
	    !(S->outs = calloc(g->n_outputs + 1, sizeof(*S->outs))) ||
	    !(S->scans = calloc(S->n_out + 1, sizeof(*S->scans))))
		return rt_oom(k);
	S->in_dir = S->in_axis + S->n_in;
	S->out_axis = S->in_dir + S->n_in;
	S->out_dir = S->out_axis + S->n_out;
	for (size_t i = 0; i < n_vars; i++)
		if (!rt_in(k, first_state + i))
			return rt_err(k, "input %zu is missing", first_state + i);
	return 0;
}

/* Run the body `len` times over scan inputs `xs` (tensors whose axis
 * S->in_axis[j] has >= len entries), states in S->ins[0..N) (replaced by
 * the final states); scan outputs collect in S->scans. */
static int scan_steps(struct rt_kctx *k, struct scan_run *S,
		      struct rt_value *const *xs, int64_t len)
{
	size_t N = S->n_state;
	int rc;

	for (int64_t t = 0; t < len; t++) {
		for (size_t j = 0; j < S->n_in; j++) {
			int64_t at = S->in_dir[j] ? len - 1 - t : t;

			rt_value_unref(S->ins[N + j]);
			S->ins[N + j] = NULL;
			if ((rc = kc_take(k, xs[j], (int)S->in_axis[j], at, 1, 0,
					  &S->ins[N + j])) < 0)
				return rc;
		}
		if ((rc = rt_subgraph_run(k, S->g, S->ins, N + S->n_in, S->outs)) < 0)
			return rc;
		for (size_t i = 0; i < N; i++) {
			rt_value_unref(S->ins[i]);
			S->ins[i] = S->outs[i];
			S->outs[i] = NULL;
		}
		for (size_t j = 0; j < S->n_out; j++) {
			struct rt_value *v = S->outs[N + j];

			S->outs[N + j] = NULL;
			if ((rc = acc_push(k, &S->scans[j], v, j)) < 0)
				return rc;
		}
	}
	return 0;
}

/* Scan 9 and later: no batch axis; per-input axes and directions. */
static int k_scan(struct rt_kctx *k)
{
	struct scan_run S = { 0 };
	struct rt_value **xs;
	int64_t len = -1;
	int rc;

	if ((rc = scan_setup(k, &S, 0)) < 0 ||
	    (rc = scan_list(k, "scan_input_axes", S.n_in, S.in_axis)) < 0 ||
	    (rc = scan_list(k, "scan_input_directions", S.n_in, S.in_dir)) < 0 ||
	    (rc = scan_list(k, "scan_output_axes", S.n_out, S.out_axis)) < 0 ||
	    (rc = scan_list(k, "scan_output_directions", S.n_out, S.out_dir)) < 0)
		goto cleanup;
	xs = k->in + S.n_state;
	for (size_t j = 0; j < S.n_in; j++) {
		int axis;

		if (xs[j]->kind != RT_TENSOR) {
			rc = rt_err(k, "scan input %zu is a %s, not a tensor", j,
				    kind_name(xs[j]));
			goto cleanup;
		}
		if ((rc = rt_axis(k, S.in_axis[j], xs[j]->rank, &axis)) < 0)
			goto cleanup;
		if (xs[j]->rank < 1) {
			rc = rt_err(k, "scan input %zu is a scalar", j);
			goto cleanup;
		}
		S.in_axis[j] = axis;
		if (len >= 0 && xs[j]->dims[axis] != len) {
			rc = rt_err(k, "scan input %zu has %lld entries along axis %d, scan input 0 %lld",
				    j, (long long)xs[j]->dims[axis], axis, (long long)len);
			goto cleanup;
		}
		len = xs[j]->dims[axis];
	}
	for (size_t i = 0; i < S.n_state; i++)
		S.ins[i] = rt_value_ref(k->in[i]);
	if ((rc = scan_steps(k, &S, xs, len)) < 0)
		goto cleanup;
	for (size_t i = 0; i < S.n_state && i < k->node->n_outputs; i++)
		if ((rc = rt_out_set(k, i, rt_value_ref(S.ins[i]))) < 0)
			goto cleanup;
	for (size_t j = 0; j < S.n_out && S.n_state + j < k->node->n_outputs; j++) {
		struct rt_value *t;

		if ((rc = acc_stack(k, &S.scans[j], S.out_axis[j], S.out_dir[j] != 0,
				    S.g->outputs[S.n_state + j].type, &t)) < 0 ||
		    (rc = rt_out_set(k, S.n_state + j, t)) < 0)
			goto cleanup;
	}
cleanup:
	scan_release(&S);
	return rc;
}

/* Scan 8's scan output j: the per-batch stacks per[b * K + j] ([len, ...],
 * NULL where a sequence had no step: zeros shaped as the others, or as
 * the body declares when no step ran at all) stacked on a batch axis. */
static int scan8_output(struct rt_kctx *k, struct scan_run *S,
			struct rt_value **per, int64_t batch, int64_t len,
			size_t j, struct rt_value **out)
{
	const struct rt_value *shape = NULL;
	struct rt_value **col;
	int64_t dims[RT_MAX_RANK + 2];
	int dtype, kind, rank, rc = 0;

	*out = NULL;
	for (int64_t b = 0; b < batch && !shape; b++)
		shape = per[(size_t)b * S->n_out + j];
	if (shape) {
		dtype = shape->dtype;
		rank = shape->rank;
		memcpy(dims, shape->dims, sizeof(shape->dims));
	} else {
		/* no step ran at all: [len, declared dims...] for each entry */
		kc_declared(S->g->outputs[S->n_state + j].type, &dtype, &kind, &rank,
			    dims + 1);
		if (rank < 0 || rank >= RT_MAX_RANK)
			return rt_err(k, "scan output %zu: no step ran and its shape is not declared", j);
		if (!dtype)
			dtype = IR_DTYPE_FLOAT;
		dims[0] = len;
		rank++;
	}
	if (!batch) {
		memmove(dims + 1, dims, (size_t)rank * sizeof(*dims));
		dims[0] = 0;
		return kc_zeros(k, dtype, rank + 1, dims, out);
	}
	if (!(col = calloc((size_t)batch + 1, sizeof(*col))))
		return rt_oom(k);
	for (int64_t b = 0; b < batch && rc >= 0; b++) {
		struct rt_value **p = &per[(size_t)b * S->n_out + j];

		if (!*p)
			rc = kc_zeros(k, dtype, rank, dims, p);
		col[b] = *p;
	}
	if (rc >= 0)
		rc = kc_join(k, col, (size_t)batch, 0, 1, out);
	free(col);
	return rc;
}

/* Scan 8: axis 0 of every input and output is the batch; scan inputs
 * and outputs have the sequence on axis 1; sequence_lens (input 0,
 * optional) shortens sequences per batch entry, the scan outputs being
 * padded with zeros past a sequence's end. */
static int k_scan8(struct rt_kctx *k)
{
	struct scan_run S = { 0 };
	struct rt_value **xs, **bx = NULL, **fin = NULL, **per = NULL;
	struct rt_value *lens = rt_in(k, 0);
	int64_t batch = -1, len = -1;
	size_t N = 0;
	int rc;

	if ((rc = scan_setup(k, &S, 1)) < 0 ||
	    (rc = scan_list(k, "directions", S.n_in, S.in_dir)) < 0)
		goto cleanup;
	N = S.n_state;
	xs = k->in + 1 + N;
	for (size_t i = 0; i < N + S.n_in; i++) {
		struct rt_value *v = k->in[1 + i];

		if (v->kind != RT_TENSOR || v->rank < (i < N ? 1 : 2)) {
			rc = rt_err(k, "input %zu must be a tensor of rank %d or more "
				    "(batch%s)", 1 + i, i < N ? 1 : 2,
				    i < N ? "" : ", sequence");
			goto cleanup;
		}
		if (batch >= 0 && v->dims[0] != batch) {
			rc = rt_err(k, "input %zu has batch %lld, expected %lld", 1 + i,
				    (long long)v->dims[0], (long long)batch);
			goto cleanup;
		}
		batch = v->dims[0];
		if (i >= N) {
			if (len >= 0 && v->dims[1] != len) {
				rc = rt_err(k, "scan input %zu has %lld steps, expected %lld",
					    i - N, (long long)v->dims[1], (long long)len);
				goto cleanup;
			}
			len = v->dims[1];
		}
	}
	if (lens && (lens->kind != RT_TENSOR || lens->numel != batch ||
		     rt_dtype_is_float(lens->dtype))) {
		rc = rt_err(k, "sequence_lens must hold %lld integers", (long long)batch);
		goto cleanup;
	}
	for (size_t j = 0; j < S.n_in; j++)
		S.in_axis[j] = 0;       /* after taking the batch entry */
	if (!(bx = calloc(S.n_in + 1, sizeof(*bx))) ||
	    !(fin = calloc((N + 1) * (size_t)batch + 1, sizeof(*fin))) ||
	    !(per = calloc((S.n_out + 1) * (size_t)batch + 1, sizeof(*per)))) {
		rc = rt_oom(k);
		goto cleanup;
	}
	for (int64_t b = 0; b < batch; b++) {
		int64_t n_b = lens ? rt_load_i64(lens->dtype, lens->data, b) : len;

		if (n_b < 0 || n_b > len) {
			rc = rt_err(k, "sequence_lens[%lld] = %lld outside [0, %lld]",
				    (long long)b, (long long)n_b, (long long)len);
			goto cleanup;
		}
		for (size_t i = 0; i < N; i++) {
			rt_value_unref(S.ins[i]);
			S.ins[i] = NULL;
			if ((rc = kc_take(k, k->in[1 + i], 0, b, 1, 0, &S.ins[i])) < 0)
				goto cleanup;
		}
		for (size_t j = 0; j < S.n_in; j++) {
			rt_value_unref(bx[j]);
			bx[j] = NULL;
			if ((rc = kc_take(k, xs[j], 0, b, 1, 0, &bx[j])) < 0)
				goto cleanup;
		}
		if ((rc = scan_steps(k, &S, bx, n_b)) < 0)
			goto cleanup;
		for (size_t i = 0; i < N; i++)
			fin[(size_t)b * N + i] = rt_value_ref(S.ins[i]);
		for (size_t j = 0; j < S.n_out; j++) {
			struct scan_acc *a = &S.scans[j];
			struct rt_value *z = NULL;

			/* pad to the full length with zeros shaped as the items */
			while (a->n && (int64_t)a->n < len) {
				if ((rc = kc_zeros(k, a->items[0]->dtype, a->items[0]->rank,
						   a->items[0]->dims, &z)) < 0 ||
				    (rc = acc_push(k, a, z, j)) < 0)
					goto cleanup;
			}
			if (!a->n)
				continue;   /* filled in below, once a shape is known */
			rc = acc_stack(k, a, 0, 0, NULL, &per[(size_t)b * S.n_out + j]);
			acc_release(a);
			if (rc < 0)
				goto cleanup;
		}
	}
	for (size_t i = 0; i < N && i < k->node->n_outputs; i++) {
		struct rt_value **col, *t = NULL;

		if (!batch) {
			if ((rc = rt_out_set(k, i, rt_value_ref(k->in[1 + i]))) < 0)
				goto cleanup;
			continue;
		}
		if (!(col = calloc((size_t)batch + 1, sizeof(*col)))) {
			rc = rt_oom(k);
			goto cleanup;
		}
		for (int64_t b = 0; b < batch; b++)
			col[b] = fin[(size_t)b * N + i];
		rc = kc_join(k, col, (size_t)batch, 0, 1, &t);
		free(col);
		if (rc < 0 || (rc = rt_out_set(k, i, t)) < 0)
			goto cleanup;
	}
	for (size_t j = 0; j < S.n_out && N + j < k->node->n_outputs; j++) {
		struct rt_value *t = NULL;

		if ((rc = scan8_output(k, &S, per, batch, len, j, &t)) < 0 ||
		    (rc = rt_out_set(k, N + j, t)) < 0)
			goto cleanup;
	}
cleanup:
	for (size_t j = 0; bx && j < S.n_in; j++)
		rt_value_unref(bx[j]);
	for (size_t i = 0; fin && i < N * (size_t)batch; i++)
		rt_value_unref(fin[i]);
	for (size_t i = 0; per && i < S.n_out * (size_t)batch; i++)
		rt_value_unref(per[i]);
	free(bx);
	free(fin);
	free(per);
	scan_release(&S);
	return rc;
}

const struct rt_kernel rt_kernels_control[] = {
	{ "ai.onnx", "If", 1, RT_OPEN, k_if },
	{ "ai.onnx", "Loop", 1, RT_OPEN, k_loop },
	{ "ai.onnx", "Scan", 8, 8, k_scan8 },
	{ "ai.onnx", "Scan", 9, RT_OPEN, k_scan },
};
const size_t rt_n_kernels_control =
	sizeof(rt_kernels_control) / sizeof(rt_kernels_control[0]);
