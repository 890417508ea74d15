/* rnn.c: passes "lstm", "gru" and "rnn": the recurrent ops unrolled over
 * their static sequence length into standard ops.  X W^T + biases of every
 * step and direction is one MatMul (X transposed first with layout 1),
 * reshaped to rows and Split into [batch, G*H] steps; each step is a
 * MatMul of the state by R^T and the cell's gates (rnn_cell.c) on [batch,
 * H] states; Y, Y_h and Y_c are Concats of the step states reshaped to
 * the node's layout.  A constant sequence_lens shorter than the sequence
 * needs no masking: reverse directions read their steps through a Gather
 * of the rows (each sequence reversed within its length), every state is
 * computed, and the outputs Gather the states that count (zero rows past a
 * sequence's end, Y_h and Y_c from its last valid step or the initial
 * state); the batch is then static.  Refused: a non-constant
 * sequence_lens, a dynamic sequence length, unknown activations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rewriters/rnn_int.h"
#include "runtime/runtime.h"

/* ---- the plan --------------------------------------------------------- */

static const struct {
	const char *name;
	enum rw_rnn_act_kind kind;
	int has_alpha, has_beta;
	float alpha, beta;              /* defaults, as the interpreter's */
} acts[] = {
	{ "Affine", RW_ACT_AFFINE, 1, 1, 1.0f, 0.0f },
	{ "Elu", RW_ACT_ELU, 1, 0, 1.0f, 0.0f },
	{ "HardSigmoid", RW_ACT_HARD_SIGMOID, 1, 1, 0.2f, 0.5f },
	{ "LeakyRelu", RW_ACT_LEAKY, 1, 0, 0.01f, 0.0f },
	{ "Relu", RW_ACT_RELU, 0, 0, 0.0f, 0.0f },
	{ "ScaledTanh", RW_ACT_SCALED_TANH, 1, 1, 1.0f, 1.0f },
	{ "Sigmoid", RW_ACT_SIGMOID, 0, 0, 0.0f, 0.0f },
	{ "Softplus", RW_ACT_SOFTPLUS, 0, 0, 0.0f, 0.0f },
	{ "Softsign", RW_ACT_SOFTSIGN, 0, 0, 0.0f, 0.0f },
	{ "Tanh", RW_ACT_TANH, 0, 0, 0.0f, 0.0f },
	{ "ThresholdedRelu", RW_ACT_THRESH, 1, 0, 1.0f, 0.0f },
};

/* The activations list (per direction, or once for both), alpha and beta
 * consumed in order by the functions that take them; the defaults of the
 * cell when the list is absent. */
static int parse_acts(const struct ir_node *n, struct rw_rnn_plan *p, char *why, size_t size)
{
	static const char *const dflt[3][3] = {
		{ "Tanh" }, { "Sigmoid", "Tanh" }, { "Sigmoid", "Tanh", "Tanh" }
	};
	const struct ir_attr *a = ir_node_attr(n, "activations");
	size_t per = (size_t)(p->cell == RW_CELL_RNN ? 1 : p->cell == RW_CELL_GRU ? 2 : 3);
	size_t na = 0, nb = 0, ia = 0, ib = 0, k, nd = (size_t)p->ndir;
	const float *al = rw_attr_floats(n, "activation_alpha", &na);
	const float *be = rw_attr_floats(n, "activation_beta", &nb);
	int listed = a && a->type == IR_ATTR_STRINGS && a->n_strings;

	k = listed ? a->n_strings : per;
	if (k != per && k != per * nd) {
		snprintf(why, size, "activations lists %zu functions, expected %zu", k, per * nd);
		return 0;
	}
	for (size_t i = 0; i < per * nd; i++) {
		size_t j = i % k, t;
		const char *name = listed ? (const char *)a->strings[j] : dflt[p->cell][j];
		size_t len = listed ? a->string_lens[j] : strlen(name);
		struct rw_rnn_act *o = &p->act[i / per][i % per];

		for (t = 0; t < sizeof(acts) / sizeof(acts[0]); t++)
			if (strlen(acts[t].name) == len && !strncasecmp(acts[t].name, name, len))
				break;
		if (t == sizeof(acts) / sizeof(acts[0])) {
			snprintf(why, size, "unknown activation '%.*s'", (int)(len > 40 ? 40 : len), name);
			return 0;
		}
		o->kind = acts[t].kind;
		o->alpha = acts[t].alpha;
		o->beta = acts[t].beta;
		if (j == 0 && i)       /* one list for both directions: its values too */
			ia = ib = 0;
		if (acts[t].has_alpha && ia < na)
			o->alpha = al[ia++];
		if (acts[t].has_beta && ib < nb)
			o->beta = be[ib++];
	}
	return 1;
}

static struct ir_value *input(const struct ir_node *n, size_t i)
{
	return n->n_inputs > i ? n->inputs[i] : NULL;
}

static struct ir_value *read_output(const struct ir_node *n, size_t i)
{
	return n->n_outputs > i && rw_value_used(n->outputs[i]) ? n->outputs[i] : NULL;
}

/* sequence_lens as constant values (1), or unknown (0) */
static int read_lens(struct rw_ctx *c, const struct ir_value *v, int64_t **out, size_t *k)
{
	struct rt_value *t = rw_init_value(v);
	int64_t *l;

	*out = NULL;
	if (t) {
		if (t->numel > RW_RNN_MAX_BATCH ||
		    !(l = malloc((size_t)(t->numel + 1) * sizeof(*l)))) {
			rt_value_unref(t);
			return 0;
		}
		for (int64_t i = 0; i < t->numel; i++)
			l[i] = (int64_t)rt_value_get_f64(t, i);
		*k = (size_t)t->numel;
		rt_value_unref(t);
		*out = l;
		return 1;
	}
	if (!(l = malloc(RW_RNN_MAX_BATCH * sizeof(*l))))
		return 0;
	if (!rw_const_ints(c, v, l, RW_RNN_MAX_BATCH, k)) {
		free(l);
		return 0;
	}
	*out = l;
	return 1;
}

static int plan_lens(struct rw_ctx *c, const struct ir_node *n, struct rw_rnn_plan *p,
		     char *why, size_t size)
{
	const struct ir_value *v = input(n, 4);
	size_t k;
	int full = 1;

	if (!v)
		return 1;
	if (!read_lens(c, v, &p->lens, &k)) {
		snprintf(why, size, "sequence_lens is not a constant (the lengths are known only "
			 "at run time)");
		return 0;
	}
	if (p->batch >= 0 && (int64_t)k != p->batch) {
		snprintf(why, size, "sequence_lens has %zu entries for batch %lld", k,
			 (long long)p->batch);
		return 0;
	}
	p->max_len = 0;
	for (size_t i = 0; i < k; i++) {
		if (p->lens[i] < 0 || p->lens[i] > p->seq) {
			snprintf(why, size, "sequence_lens[%zu] = %lld outside [0, %lld]", i,
				 (long long)p->lens[i], (long long)p->seq);
			return 0;
		}
		full &= p->lens[i] == p->seq;
		if (p->lens[i] > p->max_len)
			p->max_len = p->lens[i];
	}
	if (full) {       /* every sequence is whole: nothing to do */
		free(p->lens);
		p->lens = NULL;
		return 1;
	}
	if (!p->max_len) {
		snprintf(why, size, "every sequence_lens entry is 0 (nothing to unroll)");
		return 0;
	}
	p->batch = (int64_t)k;
	return 1;
}

static int static_dims3(struct rw_ctx *c, const struct ir_value *v, int64_t *dims)
{
	int r;

	return rw_static_shape(c, v, dims, &r) && r == 3;
}

int rw_rnn_plan_make(struct rw_ctx *c, const struct ir_node *n, struct rw_rnn_plan *p,
		     char *why, size_t size)
{
	const char *op = ir_s(n->op_type), *dir = rw_attr_str(n, "direction", "forward");
	const struct ir_vtype *xt;
	int64_t wd[3], rd[3], hs;
	int dt = rw_node_dtype(c, n);

	memset(p, 0, sizeof(*p));
	p->cell = !strcmp(op, "LSTM") ? RW_CELL_LSTM : !strcmp(op, "GRU") ? RW_CELL_GRU : RW_CELL_RNN;
	p->g = p->cell == RW_CELL_LSTM ? 4 : p->cell == RW_CELL_GRU ? 3 : 1;
	if (c->opset < 7) {
		snprintf(why, size, "needs default-domain opset >= 7, the model has %lld",
			 (long long)c->opset);
		return 0;
	}
	p->x = input(n, 0);
	p->w = input(n, 1);
	p->r = input(n, 2);
	if (!p->x || !p->w || !p->r) {
		snprintf(why, size, "X, W or R is absent");
		return 0;
	}
	if (dt != IR_DTYPE_FLOAT && dt != IR_DTYPE_DOUBLE && dt != IR_DTYPE_FLOAT16) {
		snprintf(why, size, "the decomposition is for float16, float and double data, not %s",
			 dt ? ir_dtype_name(dt) : "an unknown dtype");
		return 0;
	}
	/* the attribute exists from version 14: read it whatever the opset
	 * the node is being converted to (a GRU-14 lowered while the model
	 * goes down to 11 keeps its layout) */
	p->layout = (int)rw_attr_int(n, "layout", 0);
	if (p->layout != 0 && p->layout != 1) {
		snprintf(why, size, "layout %d is not 0 or 1", p->layout);
		return 0;
	}
	xt = rw_type(c, p->x);
	if (!xt || xt->rank != 3) {
		snprintf(why, size, "the rank of X is unknown or not 3");
		return 0;
	}
	if (xt->dims[p->layout].kind != IR_VDIM_VALUE) {
		snprintf(why, size, "the sequence length (X dim %d) is not static", p->layout);
		return 0;
	}
	p->seq = xt->dims[p->layout].value;
	p->batch = xt->dims[1 - p->layout].kind == IR_VDIM_VALUE ? xt->dims[1 - p->layout].value : -1;
	if (p->seq < 1 || p->seq > RW_RNN_MAX_STEPS) {
		snprintf(why, size, "sequence length %lld outside [1, %d]", (long long)p->seq,
			 RW_RNN_MAX_STEPS);
		return 0;
	}
	if (!static_dims3(c, p->w, wd) || !static_dims3(c, p->r, rd)) {
		snprintf(why, size, "W or R has no static 3-D shape");
		return 0;
	}
	if (!strcmp(dir, "bidirectional")) {
		p->ndir = 2;
	} else if (!strcmp(dir, "forward") || !strcmp(dir, "reverse")) {
		p->ndir = 1;
		p->reverse = !strcmp(dir, "reverse");
	} else {
		snprintf(why, size, "unknown direction '%.40s'", dir);
		return 0;
	}
	hs = rw_attr_int(n, "hidden_size", 0);
	p->hid = hs > 0 ? hs : wd[1] / p->g;
	p->in = wd[2];
	if (p->hid < 1 || wd[0] != p->ndir || wd[1] != p->g * p->hid || rd[0] != p->ndir ||
	    rd[1] != p->g * p->hid || rd[2] != p->hid ||
	    (xt->dims[2].kind == IR_VDIM_VALUE && xt->dims[2].value != p->in)) {
		snprintf(why, size, "W or R does not match %lld direction(s), hidden size %lld "
			 "and the input size", (long long)p->ndir, (long long)p->hid);
		return 0;
	}
	p->has_clip = ir_node_attr(n, "clip") != NULL;
	p->clip = rw_attr_float(n, "clip", 0);
	if (p->has_clip && !(p->clip >= 0)) {
		snprintf(why, size, "clip %g is negative", (double)p->clip);
		return 0;
	}
	p->lbr = p->cell == RW_CELL_GRU && rw_attr_int(n, "linear_before_reset", 0) != 0;
	p->input_forget = p->cell == RW_CELL_LSTM && rw_attr_int(n, "input_forget", 0) != 0;
	if (!parse_acts(n, p, why, size) || !plan_lens(c, n, p, why, size))
		return 0;
	p->b = input(n, 3);
	p->h0 = input(n, 5);
	if (p->cell == RW_CELL_LSTM) {
		p->c0 = input(n, 6);
		p->p = input(n, 7);
	}
	p->y = read_output(n, 0);
	p->yh = read_output(n, 1);
	p->yc = p->cell == RW_CELL_LSTM ? read_output(n, 2) : NULL;
	if (!p->y && !p->yh && !p->yc) {
		snprintf(why, size, "no output is read");
		return 0;
	}
	return 1;
}

void rw_rnn_plan_release(struct rw_rnn_plan *p)
{
	free(p->lens);
	p->lens = NULL;
}

/* ---- the unrolled graph ------------------------------------------------ */

static int reversed(const struct rw_rnn_plan *p, int d)
{
	return p->ndir == 2 ? d == 1 : p->reverse;
}

/* initial_h or initial_c as one [batch, H] state per direction */
static void initial(struct rw_rnn_em *m, struct ir_value *v, struct ir_value **out)
{
	const struct rw_rnn_plan *p = m->p;
	int64_t s2[2] = { -1, p->hid }, s2b[2] = { -1, 2 * p->hid };

	out[0] = out[1] = NULL;
	if (!v)
		return;
	if (p->ndir == 1)
		out[0] = rw_rnn_reshape(m, v, s2, 2, NULL);
	else if (!p->layout)                /* [2, batch, H] */
		rw_rnn_split(m, rw_rnn_reshape(m, v, s2, 2, NULL), 0, 2, out);
	else                                /* [batch, 2, H] */
		rw_rnn_split(m, rw_rnn_reshape(m, v, s2b, 2, NULL), 1, 2, out);
}

/* The [seq * batch, G*H] input projections of every (direction, time)
 * row block, Split per step; with sequence_lens, reverse directions'
 * blocks are in step order (each sequence reversed within its length). */
static void projections(struct rw_rnn_em *m, const struct rw_rnn_weights *w,
			struct ir_value **pieces)
{
	const struct rw_rnn_plan *p = m->p;
	int64_t nd = p->ndir, gh = p->g * p->hid, bt = p->batch;
	int64_t rows2[2] = { -1, gh }, x3[3] = { 1, -1, p->in };
	static const int64_t swap[3] = { 1, 0, 2 };
	struct ir_value *x = p->x, *xw;

	if (p->layout)
		x = rw_rnn_transpose(m, x, swap, 3);
	if (nd == 2)
		x = rw_rnn_reshape(m, x, x3, 3, NULL);
	xw = rw_rnn_op(m, "MatMul", x, w->wt, NULL);
	if (w->bias)
		xw = rw_rnn_op(m, "Add", xw, w->bias, NULL);
	xw = rw_rnn_reshape(m, xw, rows2, 2, NULL);
	if (p->lens && (nd == 2 || p->reverse)) {
		int64_t n = nd * p->seq * bt, *idx = malloc((size_t)n * sizeof(*idx));

		if (!idx) {
			if (m->e)
				m->e->failed = 1;
			return;
		}
		for (int64_t d = 0; d < nd; d++)
			for (int64_t st = 0; st < p->seq; st++)
				for (int64_t b = 0; b < bt; b++) {
					int64_t l = p->lens[b], t = reversed(p, (int)d) && st < l ? l - 1 - st : st;

					idx[(d * p->seq + st) * bt + b] = (d * p->seq + t) * bt + b;
				}
		xw = rw_rnn_gather(m, xw, idx, (size_t)n);
		free(idx);
	}
	rw_rnn_split(m, xw, 0, nd * p->seq, pieces);
}

/* Without sequence_lens: Y from the states in (time, direction) order,
 * Y_h and Y_c from the last ones, concatenated and reshaped. */
static void outputs_whole(struct rw_rnn_em *m, struct ir_value **hs, struct ir_value **cs,
			  struct ir_value **list)
{
	const struct rw_rnn_plan *p = m->p;
	int64_t nd = p->ndir, seq = p->seq, axis = p->layout ? 1 : 0;
	int64_t y0[4] = { seq, nd, -1, p->hid }, y1[4] = { -1, seq, nd, p->hid };
	int64_t s0[3] = { nd, -1, p->hid }, s1[3] = { -1, nd, p->hid };
	struct ir_value *fin[2];

	if (p->y) {
		for (int64_t t = 0; t < seq; t++)
			for (int d = 0; d < nd; d++)
				list[t * nd + d] = hs[d * seq + (reversed(p, d) ? seq - 1 - t : t)];
		rw_rnn_reshape(m, rw_rnn_concat(m, list, (size_t)(seq * nd), axis),
			       p->layout ? y1 : y0, 4, p->y);
	}
	for (int k = 0; k < 2; k++) {
		struct ir_value **st = k ? cs : hs, *out = k ? p->yc : p->yh;

		if (!out)
			continue;
		for (int d = 0; d < nd; d++)
			fin[d] = st[d * seq + seq - 1];
		rw_rnn_reshape(m, rw_rnn_concat(m, fin, (size_t)nd, axis), p->layout ? s1 : s0, 3,
			       out);
	}
}

/* Row of state (d, st, b) in the Concat of the step states (d, st < max
 * steps), the initial states (when given) and one zero row */
static int64_t row_of(const struct rw_rnn_plan *p, int64_t d, int64_t st, int64_t b)
{
	return (d * p->max_len + st) * p->batch + b;
}

static int64_t zero_row(const struct rw_rnn_plan *p, int has_init)
{
	return (p->ndir * p->max_len + (has_init ? p->ndir : 0)) * p->batch;
}

static struct ir_value *gathered(struct rw_rnn_em *m, struct ir_value **st,
				 struct ir_value **init, const int64_t *idx, int64_t n,
				 struct ir_value **list)
{
	const struct rw_rnn_plan *p = m->p;
	int64_t k = p->ndir * p->max_len, one[2] = { 1, p->hid };
	double *zero = rw_rnn_dry(m) ? NULL : calloc((size_t)p->hid, sizeof(double));

	for (int64_t i = 0; i < k; i++)
		list[i] = st[i];
	for (int d = 0; init[0] && d < p->ndir; d++)
		list[k++] = init[d];
	if (!rw_rnn_dry(m) && !zero)
		m->e->failed = 1;
	list[k++] = rw_rnn_const(m, 2, one, zero);
	free(zero);
	return rw_rnn_gather(m, rw_rnn_concat(m, list, (size_t)k, 0), idx, (size_t)n);
}

/* With sequence_lens: the outputs gathered from the states that count. */
static void outputs_gathered(struct rw_rnn_em *m, struct ir_value **hs, struct ir_value **cs,
			     struct ir_value **h0, struct ir_value **c0, struct ir_value **list)
{
	const struct rw_rnn_plan *p = m->p;
	int64_t nd = p->ndir, seq = p->seq, bt = p->batch, n = seq * nd * bt;
	int64_t y0[4] = { seq, nd, bt, p->hid }, y1[4] = { bt, seq, nd, p->hid };
	int64_t s0[3] = { nd, bt, p->hid }, s1[3] = { bt, nd, p->hid };
	int64_t *idx = malloc((size_t)(n + 1) * sizeof(*idx));

	if (!idx) {
		if (m->e)
			m->e->failed = 1;
		return;
	}
	if (p->y) {
		for (int64_t t = 0; t < seq; t++)
			for (int64_t d = 0; d < nd; d++)
				for (int64_t b = 0; b < bt; b++) {
					int64_t l = p->lens[b], st = reversed(p, (int)d) ? l - 1 - t : t;
					int64_t at = p->layout ? (b * seq + t) * nd + d : (t * nd + d) * bt + b;

					idx[at] = t < l ? row_of(p, d, st, b) : zero_row(p, h0[0] != NULL);
				}
		rw_rnn_reshape(m, gathered(m, hs, h0, idx, n, list), p->layout ? y1 : y0, 4, p->y);
	}
	for (int k = 0; k < 2; k++) {
		struct ir_value **st = k ? cs : hs, **init = k ? c0 : h0, *out = k ? p->yc : p->yh;

		if (!out)
			continue;
		for (int64_t d = 0; d < nd; d++)
			for (int64_t b = 0; b < bt; b++) {
				int64_t l = p->lens[b], at = p->layout ? b * nd + d : d * bt + b;

				idx[at] = l ? row_of(p, d, l - 1, b) :
					  init[0] ? (nd * p->max_len + d) * bt + b : zero_row(p, 0);
			}
		rw_rnn_reshape(m, gathered(m, st, init, idx, nd * bt, list), p->layout ? s1 : s0, 3,
			       out);
	}
	free(idx);
}

/* The whole rewrite (or its dry run); < 0 when out of memory. */
static int emit(struct rw_rnn_em *m)
{
	const struct rw_rnn_plan *p = m->p;
	int64_t nd = p->ndir, steps = p->lens ? p->max_len : p->seq;
	size_t n = (size_t)(nd * p->seq + 2 * nd + 2);
	struct ir_value **pieces = calloc(n, sizeof(*pieces)), **hs = calloc(n, sizeof(*hs));
	struct ir_value **cs = calloc(n, sizeof(*cs)), **list = calloc(n, sizeof(*list));
	struct ir_value *h0[2], *c0[2];
	struct rw_rnn_weights w;
	int rc = IR_ENOMEM;

	if (!pieces || !hs || !cs || !list)
		goto cleanup;
	memset(&w, 0, sizeof(w));
	rw_rnn_weights_make(m, &w);
	projections(m, &w, pieces);
	initial(m, p->h0, h0);
	initial(m, p->c0, c0);
	for (int d = 0; d < nd; d++) {
		struct ir_value *h = h0[d], *c = c0[d];

		for (int64_t st = 0; st < steps; st++) {
			int64_t t = p->lens || !reversed(p, d) ? st : p->seq - 1 - st;

			rw_rnn_step(m, &w, d, pieces[d * p->seq + t], &h, &c);
			hs[d * steps + st] = h;
			cs[d * steps + st] = c;
		}
	}
	if (p->lens)
		outputs_gathered(m, hs, cs, h0, c0, list);
	else
		outputs_whole(m, hs, cs, list);
	rc = 0;
cleanup:
	free(pieces);
	free(hs);
	free(cs);
	free(list);
	return rc;
}

/* ---- the passes -------------------------------------------------------- */

static int check(struct rw_ctx *c, const struct ir_node *n, char *why, size_t size)
{
	struct rw_rnn_plan p;
	int ok = rw_rnn_plan_make(c, n, &p, why, size);

	rw_rnn_plan_release(&p);
	return ok;
}

/* The target must accept every op this node's rewrite emits: a dry run
 * lists them (activations, Clip, Transpose, Gather, Concat, Add ...). */
static int vcheck(struct rw_ctx *c, const struct ir_node *n, int v)
{
	struct rw_rnn_plan p;
	struct rw_rnn_em m;
	char why[256];
	int ok = 0, dt = rw_node_dtype(c, n);

	if (!rw_rnn_plan_make(c, n, &p, why, sizeof(why)))
		goto done;
	p.composed = v;
	memset(&m, 0, sizeof(m));
	m.p = &p;
	m.opset = c->opset;
	if (emit(&m) < 0)
		goto done;
	ok = 1;
	for (size_t i = 0; i < m.n_ops; i++)
		ok &= rw_target_accepts(c, "", m.ops[i], dt);
done:
	rw_rnn_plan_release(&p);
	return ok;
}

static int apply(struct rw_ctx *c, struct ir_node *n, int v)
{
	struct rw_rnn_plan p;
	struct rw_rnn_em m;
	struct rw_emit e;
	char why[256];
	int rc;

	if (!rw_rnn_plan_make(c, n, &p, why, sizeof(why))) {
		rw_rnn_plan_release(&p);
		return ir_diag_error(c->d, IR_EINVAL, "node '%s' (%s): %s", ir_s(n->name),
				     ir_s(n->op_type), why);
	}
	p.composed = v;
	memset(&m, 0, sizeof(m));
	m.p = &p;
	m.opset = c->opset;
	rw_begin(c, n, &e);
	m.e = &e;
	if ((rc = emit(&m)) < 0)
		e.failed = 1;
	rw_rnn_plan_release(&p);
	return rw_end(&e, 0);
}

static const char *const lstm_ops[] = { "MatMul", "Reshape", "Split", "Mul", NULL };
static const char *const gru_ops[] = { "MatMul", "Reshape", "Split", "Mul", "Sub", NULL };
static const char *const rnn_ops[] = { "MatMul", "Reshape", NULL };
static const struct rw_variant v_lstm[] = { { "native", lstm_ops }, { "primitive", lstm_ops } };
static const struct rw_variant v_gru[] = { { "native", gru_ops }, { "primitive", gru_ops } };
static const struct rw_variant v_rnn[] = { { "native", rnn_ops }, { "primitive", rnn_ops } };
static const char *const m_lstm[] = { "LSTM", NULL };
static const char *const m_gru[] = { "GRU", NULL };
static const char *const m_rnn[] = { "RNN", NULL };

RW_DECOMPOSITION(lstm, "lstm",
		 "LSTM unrolled over its static sequence: one MatMul for X W^T, per step MatMul by R^T, "
		 "Split into gates, activations, Mul/Add; plus per node what its activations (as their "
		 "ops, or primitives), clip, B, P, states, layout and sequence_lens need",
		 m_lstm, v_lstm, check, vcheck, apply);
RW_DECOMPOSITION(gru, "gru",
		 "GRU (linear_before_reset 0 or 1) unrolled over its static sequence like lstm",
		 m_gru, v_gru, check, vcheck, apply);
RW_DECOMPOSITION(rnn, "rnn", "RNN unrolled over its static sequence like lstm",
		 m_rnn, v_rnn, check, vcheck, apply);
