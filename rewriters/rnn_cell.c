/* rnn_cell.c: the pieces of an unrolled LSTM, GRU or RNN (see rnn_int.h):
 * the weights in the form the steps use (transposed, per direction, the
 * two biases summed: new initializers when W, R, B and P are, Transpose,
 * Gather, Split and Reshape otherwise), the activations of the spec as
 * standard ops, and one time step of each cell on [batch, H] states. */
#include <stdlib.h>

#include "rewriters/rnn_int.h"

static int is_init(const struct ir_value *v)
{
	return v && v->init && !v->is_input;
}

/* A constant of computed values v (NULL: the computation failed). */
static struct ir_value *computed(struct rw_rnn_em *m, int rank, const int64_t *dims,
				 double *v)
{
	struct ir_value *out;

	if (!v && m->e)
		m->e->failed = 1;
	out = rw_rnn_const(m, rank, dims, v);
	free(v);
	return out;
}

static double *alloc(struct rw_rnn_em *m, int64_t n)
{
	return rw_rnn_dry(m) ? NULL : calloc((size_t)n + 1, sizeof(double));
}

/* x[d] of a [ndir, ...] input, as a tensor of dims (rank k). */
static struct ir_value *direction(struct rw_rnn_em *m, struct ir_value *x, int d,
				  const int64_t *dims, size_t k)
{
	if (m->p->ndir == 1)
		return rw_rnn_reshape(m, x, dims, k, NULL);
	return rw_rnn_take(m, x, d);
}

/* [1 ... 1 0 ... 0]: ones for the columns below `ones` of n */
static struct ir_value *column_mask(struct rw_rnn_em *m, int64_t n, int64_t ones)
{
	double *v = alloc(m, n);

	for (int64_t j = 0; v && j < n; j++)
		v[j] = j < ones;
	return computed(m, 1, &n, v);
}

static void input_weights(struct rw_rnn_em *m, struct rw_rnn_weights *w)
{
	const struct rw_rnn_plan *p = m->p;
	int64_t gh = p->g * p->hid, nd = p->ndir, in = p->in;
	int64_t d3[3] = { nd, in, gh }, b3[3] = { nd, 1, gh };
	int gru_lbr = p->cell == RW_CELL_GRU && p->lbr;

	if (is_init(p->w)) {
		double *src = rw_rnn_init_doubles(m, p->w, nd * gh * in), *t = NULL;

		if (src && (t = alloc(m, nd * gh * in)))
			for (int64_t d = 0; d < nd; d++)
				for (int64_t j = 0; j < gh; j++)
					for (int64_t k = 0; k < in; k++)
						t[(d * in + k) * gh + j] = src[(d * gh + j) * in + k];
		free(src);
		w->wt = nd == 1 ? computed(m, 2, d3 + 1, t) : computed(m, 3, d3, t);
	} else {
		static const int64_t perm[3] = { 0, 2, 1 };

		w->wt = rw_rnn_transpose(m, p->w, perm, 3);
		if (nd == 1)
			w->wt = rw_rnn_reshape(m, w->wt, d3 + 1, 2, NULL);
	}
	w->bias = NULL;
	if (!p->b)
		return;
	if (is_init(p->b)) {
		double *src = rw_rnn_init_doubles(m, p->b, nd * 2 * gh), *t = NULL;

		if (src && (t = alloc(m, nd * gh)))
			for (int64_t d = 0; d < nd; d++)
				for (int64_t j = 0; j < gh; j++)
					t[d * gh + j] = src[d * 2 * gh + j] +
						(gru_lbr && j >= 2 * p->hid ? 0 : src[d * 2 * gh + gh + j]);
		free(src);
		w->bias = nd == 1 ? computed(m, 1, &gh, t) : computed(m, 3, b3, t);
	} else {
		struct ir_value *wr[2];

		rw_rnn_split(m, p->b, 1, 2, wr);
		if (gru_lbr)       /* Rbh is added inside r (.) (...) instead */
			wr[1] = rw_rnn_op(m, "Mul", wr[1], column_mask(m, gh, 2 * p->hid), NULL);
		w->bias = rw_rnn_op(m, "Add", wr[0], wr[1], NULL);
		w->bias = nd == 1 ? rw_rnn_reshape(m, w->bias, &gh, 1, NULL) :
				    rw_rnn_reshape(m, w->bias, b3, 3, NULL);
	}
}

static void recurrent_weights(struct rw_rnn_em *m, struct rw_rnn_weights *w)
{
	const struct rw_rnn_plan *p = m->p;
	int64_t h = p->hid, gh = p->g * h, nd = p->ndir;
	int64_t rt_dims[2] = { h, gh }, rh_dims[2] = { h, h };
	int gru = p->cell == RW_CELL_GRU;
	struct ir_value *t3 = NULL;
	double *src = NULL;

	if (is_init(p->r))
		src = rw_rnn_init_doubles(m, p->r, nd * gh * h);
	else {
		static const int64_t perm[3] = { 0, 2, 1 };

		t3 = rw_rnn_transpose(m, p->r, perm, 3);
	}
	for (int d = 0; d < nd; d++) {
		if (is_init(p->r)) {
			double *t = src ? alloc(m, h * gh) : NULL, *u = src && gru ? alloc(m, h * h) : NULL;

			for (int64_t j = 0; t && j < gh; j++)
				for (int64_t k = 0; k < h; k++)
					t[k * gh + j] = gru && j >= 2 * h ? 0 : src[(d * gh + j) * h + k];
			for (int64_t j = 0; u && j < h; j++)
				for (int64_t k = 0; k < h; k++)
					u[k * h + j] = src[(d * gh + 2 * h + j) * h + k];
			w->rt[d] = computed(m, 2, rt_dims, t);
			if (gru)
				w->rh[d] = computed(m, 2, rh_dims, u);
		} else {
			struct ir_value *rtd = direction(m, t3, d, rt_dims, 2), *parts[3];

			w->rt[d] = rtd;
			if (gru) {
				w->rt[d] = rw_rnn_op(m, "Mul", rtd, column_mask(m, gh, 2 * h), NULL);
				rw_rnn_split(m, rtd, 1, 3, parts);
				w->rh[d] = parts[2];
			}
		}
	}
	free(src);
}

/* GRU's Rbh (linear_before_reset) and LSTM's peepholes, per direction */
static void vectors(struct rw_rnn_em *m, struct rw_rnn_weights *w)
{
	const struct rw_rnn_plan *p = m->p;
	int64_t h = p->hid, gh = p->g * h, nd = p->ndir, two = 2 * gh, three = 3 * h;

	for (int d = 0; d < nd; d++) {
		w->rbh[d] = w->pi[d] = w->po[d] = w->pf[d] = NULL;
		if (p->cell == RW_CELL_GRU && p->lbr && p->b) {
			if (is_init(p->b)) {
				double *src = rw_rnn_init_doubles(m, p->b, nd * two), *t = NULL;

				if (src && (t = alloc(m, h)))
					for (int64_t j = 0; j < h; j++)
						t[j] = src[d * two + gh + 2 * h + j];
				free(src);
				w->rbh[d] = computed(m, 1, &h, t);
			} else {
				struct ir_value *parts[6];

				rw_rnn_split(m, direction(m, p->b, d, &two, 1), 0, 6, parts);
				w->rbh[d] = parts[5];
			}
		}
		if (p->cell == RW_CELL_LSTM && p->p) {
			struct ir_value **dst[3] = { &w->pi[d], &w->po[d], &w->pf[d] };

			if (is_init(p->p)) {
				double *src = rw_rnn_init_doubles(m, p->p, nd * three);

				for (int k = 0; k < 3; k++) {
					double *t = src ? alloc(m, h) : NULL;

					for (int64_t j = 0; t && j < h; j++)
						t[j] = src[d * three + k * h + j];
					*dst[k] = computed(m, 1, &h, t);
				}
				free(src);
			} else {
				struct ir_value *parts[3];

				rw_rnn_split(m, direction(m, p->p, d, &three, 1), 0, 3, parts);
				for (int k = 0; k < 3; k++)
					*dst[k] = parts[k];
			}
		}
	}
}

void rw_rnn_weights_make(struct rw_rnn_em *m, struct rw_rnn_weights *w)
{
	input_weights(m, w);
	recurrent_weights(m, w);
	vectors(m, w);
}

/* ---- activations ------------------------------------------------------ */

static struct ir_value *op1(struct rw_rnn_em *m, const char *op, struct ir_value *x)
{
	return rw_rnn_op(m, op, x, NULL, NULL);
}

static struct ir_value *op2(struct rw_rnn_em *m, const char *op, struct ir_value *a,
			    struct ir_value *b)
{
	return rw_rnn_op(m, op, a, b, NULL);
}

static struct ir_value *times(struct rw_rnn_em *m, struct ir_value *x, double k)
{
	return op2(m, "Mul", x, rw_rnn_scalar(m, k));
}

/* The native forms use the activation's own op where ai.onnx has one at
 * the model's opset; the composed forms (variant 1) use only Relu, Mul,
 * Add, Sub, Div, Exp, Log, Clip, Greater and Cast:
 *   LeakyRelu        relu(x) - alpha relu(-x)
 *   ThresholdedRelu  x cast(x > alpha)  (also natively before opset 10)
 *   HardSigmoid      clip(alpha x + beta, 0, 1)
 *   Elu              relu(x) + alpha (exp(x - relu(x)) - 1)
 *   Softsign         x / (1 + relu(x) + relu(-x))
 *   Softplus         relu(x) + log(1 + exp(x - 2 relu(x)))
 * each exact where the op is in real arithmetic (-|x| = x - 2 relu(x)). */
static struct ir_value *activate(struct rw_rnn_em *m, const struct rw_rnn_act *a,
				 struct ir_value *x, int clip)
{
	int native = !m->p->composed;
	struct ir_value *r;

	if (clip && m->p->has_clip)
		x = rw_rnn_clip(m, x, -(double)m->p->clip, m->p->clip);
	switch (a->kind) {
	case RW_ACT_RELU:
		return op1(m, "Relu", x);
	case RW_ACT_TANH:
		return op1(m, "Tanh", x);
	case RW_ACT_SIGMOID:
		return op1(m, "Sigmoid", x);
	case RW_ACT_AFFINE:
		return op2(m, "Add", times(m, x, a->alpha), rw_rnn_scalar(m, a->beta));
	case RW_ACT_SCALED_TANH:
		return times(m, op1(m, "Tanh", times(m, x, a->beta)), a->alpha);
	case RW_ACT_LEAKY:
		if (native)
			return rw_rnn_op_attr(m, "LeakyRelu", x, "alpha", a->alpha, NULL, 0);
		return op2(m, "Sub", op1(m, "Relu", x),
			   times(m, op1(m, "Relu", times(m, x, -1)), a->alpha));
	case RW_ACT_THRESH:
		if (native && m->opset >= 10)
			return rw_rnn_op_attr(m, "ThresholdedRelu", x, "alpha", a->alpha, NULL, 0);
		r = op2(m, "Greater", x, rw_rnn_scalar(m, a->alpha));
		return op2(m, "Mul", x, rw_rnn_cast(m, r, m->e ? m->e->dtype : 0));
	case RW_ACT_HARD_SIGMOID:
		if (native)
			return rw_rnn_op_attr(m, "HardSigmoid", x, "alpha", a->alpha, "beta", a->beta);
		return rw_rnn_clip(m, op2(m, "Add", times(m, x, a->alpha), rw_rnn_scalar(m, a->beta)),
				   0, 1);
	case RW_ACT_ELU:
		if (native)
			return rw_rnn_op_attr(m, "Elu", x, "alpha", a->alpha, NULL, 0);
		r = op1(m, "Relu", x);
		return op2(m, "Add", r, times(m, op2(m, "Sub", op1(m, "Exp", op2(m, "Sub", x, r)),
						     rw_rnn_scalar(m, 1)), a->alpha));
	case RW_ACT_SOFTSIGN:
		if (native)
			return op1(m, "Softsign", x);
		r = op2(m, "Add", op1(m, "Relu", x), op1(m, "Relu", times(m, x, -1)));
		return op2(m, "Div", x, op2(m, "Add", r, rw_rnn_scalar(m, 1)));
	case RW_ACT_SOFTPLUS:
		if (native)
			return op1(m, "Softplus", x);
		r = op1(m, "Relu", x);
		return op2(m, "Add", r, op1(m, "Log", op2(m, "Add", op1(m, "Exp",
				op2(m, "Sub", op2(m, "Sub", x, r), r)), rw_rnn_scalar(m, 1))));
	}
	return x;
}

struct ir_value *rw_rnn_activate(struct rw_rnn_em *m, const struct rw_rnn_act *a,
				 struct ir_value *x)
{
	return activate(m, a, x, 1);
}

/* ---- one step ----------------------------------------------------------- */

/* x + h R^T (h NULL: zero) */
static struct ir_value *gates(struct rw_rnn_em *m, struct ir_value *x, struct ir_value *h,
			      struct ir_value *rt)
{
	return h ? op2(m, "Add", x, op2(m, "MatMul", h, rt)) : x;
}

static void step_rnn(struct rw_rnn_em *m, const struct rw_rnn_weights *w, int d,
		     struct ir_value *x, struct ir_value **h)
{
	*h = rw_rnn_activate(m, &m->p->act[d][0], gates(m, x, *h, w->rt[d]));
}

/* zt = f(Xt Wz^T + Ht-1 Rz^T + Wbz + Rbz), rt likewise,
 * ht = g(Xt Wh^T + (rt (.) Ht-1) Rh^T + Rbh + Wbh)      (lbr 0)
 * ht = g(Xt Wh^T + rt (.) (Ht-1 Rh^T + Rbh) + Wbh)      (lbr 1)
 * Ht = (1 - zt) (.) ht + zt (.) Ht-1 = ht + zt (.) (Ht-1 - ht)
 * The first MatMul's h columns are zero, so its Split gives Xt Wh^T + Wbh
 * (+ Rbh when lbr is 0) as the third part. */
static void step_gru(struct rw_rnn_em *m, const struct rw_rnn_weights *w, int d,
		     struct ir_value *x, struct ir_value **h)
{
	const struct rw_rnn_plan *p = m->p;
	struct ir_value *part[3], *z, *r = NULL, *pre, *ht, *hh = NULL;

	rw_rnn_split(m, gates(m, x, *h, w->rt[d]), 1, 3, part);
	z = rw_rnn_activate(m, &p->act[d][0], part[0]);
	pre = part[2];
	if (!p->lbr) {
		if (*h) {
			r = rw_rnn_activate(m, &p->act[d][0], part[1]);
			pre = op2(m, "Add", pre, op2(m, "MatMul", op2(m, "Mul", r, *h), w->rh[d]));
		}
	} else {
		if (*h)
			hh = op2(m, "MatMul", *h, w->rh[d]);
		if (w->rbh[d])
			hh = hh ? op2(m, "Add", hh, w->rbh[d]) : w->rbh[d];
		if (hh) {
			r = rw_rnn_activate(m, &p->act[d][0], part[1]);
			pre = op2(m, "Add", pre, op2(m, "Mul", r, hh));
		}
	}
	ht = rw_rnn_activate(m, &p->act[d][1], pre);
	if (*h)
		*h = op2(m, "Add", ht, op2(m, "Mul", z, op2(m, "Sub", *h, ht)));
	else
		*h = op2(m, "Sub", ht, op2(m, "Mul", z, ht));
}

/* it = f(Xt Wi^T + Ht-1 Ri^T + Pi (.) Ct-1 + Wbi + Rbi), ft likewise (or
 * 1 - it with input_forget), ct = g(Xt Wc^T + Ht-1 Rc^T + Wbc + Rbc),
 * Ct = ft (.) Ct-1 + it (.) ct, ot = f(... + Po (.) Ct + ...),
 * Ht = ot (.) h(Ct) (clip bounds the gates' inputs, not Ct); gates in
 * the order i, o, f, c */
static void step_lstm(struct rw_rnn_em *m, const struct rw_rnn_weights *w, int d,
		      struct ir_value *x, struct ir_value **h, struct ir_value **c)
{
	const struct rw_rnn_plan *p = m->p;
	const struct rw_rnn_act *af = &p->act[d][0], *ag = &p->act[d][1], *ah = &p->act[d][2];
	struct ir_value *part[4], *gi, *go, *i, *f, *cc, *cn, *o;

	rw_rnn_split(m, gates(m, x, *h, w->rt[d]), 1, 4, part);
	gi = part[0];
	go = part[1];
	if (w->pi[d] && *c)
		gi = op2(m, "Add", gi, op2(m, "Mul", *c, w->pi[d]));
	i = rw_rnn_activate(m, af, gi);
	cc = rw_rnn_activate(m, ag, part[3]);
	cn = op2(m, "Mul", i, cc);
	if (*c) {
		if (p->input_forget) {
			f = op2(m, "Sub", rw_rnn_scalar(m, 1), i);
		} else {
			struct ir_value *gf = part[2];

			if (w->pf[d])
				gf = op2(m, "Add", gf, op2(m, "Mul", *c, w->pf[d]));
			f = rw_rnn_activate(m, af, gf);
		}
		cn = op2(m, "Add", op2(m, "Mul", f, *c), cn);
	}
	if (w->po[d])
		go = op2(m, "Add", go, op2(m, "Mul", cn, w->po[d]));
	o = rw_rnn_activate(m, af, go);
	*h = op2(m, "Mul", o, activate(m, ah, cn, 0));
	*c = cn;
}

void rw_rnn_step(struct rw_rnn_em *m, const struct rw_rnn_weights *w, int d,
		 struct ir_value *x, struct ir_value **h, struct ir_value **c)
{
	switch (m->p->cell) {
	case RW_CELL_RNN:
		step_rnn(m, w, d, x, h);
		break;
	case RW_CELL_GRU:
		step_gru(m, w, d, x, h);
		break;
	default:
		step_lstm(m, w, d, x, h, c);
		break;
	}
}
