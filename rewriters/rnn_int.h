/* rnn_int.h: what the recurrent decompositions share (rnn.c: the plan, the
 * checks and the unrolled graph; rnn_cell.c: weights, activations and the
 * three cells; rnn_emit.c: the emitter).  The emitter either builds nodes
 * or, in a dry run, only records the op types it would build: the ops a
 * node's rewrite asks the target about are exactly those it emits.  Only
 * rewriters/rnn*.c include it. */
#ifndef OPMIG_RNN_INT_H
#define OPMIG_RNN_INT_H

#include "rewriters/rw_int.h"

enum { RW_CELL_RNN, RW_CELL_GRU, RW_CELL_LSTM };

enum rw_rnn_act_kind {
	RW_ACT_RELU, RW_ACT_TANH, RW_ACT_SIGMOID, RW_ACT_AFFINE, RW_ACT_LEAKY,
	RW_ACT_THRESH, RW_ACT_SCALED_TANH, RW_ACT_HARD_SIGMOID, RW_ACT_ELU,
	RW_ACT_SOFTSIGN, RW_ACT_SOFTPLUS
};

struct rw_rnn_act {
	enum rw_rnn_act_kind kind;
	float alpha, beta;
};

/* Longest sequence unrolled (steps per direction), largest batch of a
 * constant sequence_lens. */
#define RW_RNN_MAX_STEPS 1024
#define RW_RNN_MAX_BATCH 4096

/* One LSTM, GRU or RNN node, as the rewrite sees it. */
struct rw_rnn_plan {
	int cell;
	int64_t g;                     /* gates: 1, 3, 4 */
	int64_t seq, batch, in, hid, ndir;  /* batch -1: dynamic */
	int reverse, layout, lbr, input_forget, has_clip;
	float clip;
	struct rw_rnn_act act[2][3];   /* per direction: f, g, h */
	int64_t *lens;                 /* owned; NULL: every sequence is seq long */
	int64_t max_len;
	struct ir_value *x, *w, *r, *b, *h0, *c0, *p;   /* NULL: absent */
	struct ir_value *y, *yh, *yc;  /* the outputs read, NULL otherwise */
	int composed;                  /* variant 1: activations as primitives */
};

/* Fill p from node n (0 with the reason in why when it cannot be
 * unrolled); rw_rnn_plan_release frees what it holds. */
int rw_rnn_plan_make(struct rw_ctx *c, const struct ir_node *n, struct rw_rnn_plan *p,
		     char *why, size_t size);
void rw_rnn_plan_release(struct rw_rnn_plan *p);

/* ---- the emitter (rnn_emit.c) ----------------------------------------- */

#define RW_RNN_MAX_OPS 40

struct rw_rnn_em {
	struct rw_emit *e;             /* NULL: a dry run */
	const struct rw_rnn_plan *p;
	int64_t opset;
	const char *ops[RW_RNN_MAX_OPS];  /* op types emitted, each once */
	size_t n_ops;
};

/* op(a) or op(a, b), into out when set (NULL: a fresh value). */
struct ir_value *rw_rnn_op(struct rw_rnn_em *m, const char *op, struct ir_value *a,
			   struct ir_value *b, struct ir_value *out);
/* op(x) with a float attribute or two (name2 NULL: one). */
struct ir_value *rw_rnn_op_attr(struct rw_rnn_em *m, const char *op, struct ir_value *x,
				const char *name1, float v1, const char *name2, float v2);
/* Split x along axis into k equal parts (outs[0..k-1]); k 1 is x itself. */
void rw_rnn_split(struct rw_rnn_em *m, struct ir_value *x, int64_t axis, int64_t k,
		  struct ir_value **outs);
struct ir_value *rw_rnn_concat(struct rw_rnn_em *m, struct ir_value *const *in, size_t n,
			       int64_t axis);
struct ir_value *rw_rnn_reshape(struct rw_rnn_em *m, struct ir_value *x, const int64_t *dims,
				size_t n, struct ir_value *out);
struct ir_value *rw_rnn_transpose(struct rw_rnn_em *m, struct ir_value *x, const int64_t *perm,
				  size_t n);
/* Gather rows idx (int64, n of them) of x along axis 0. */
struct ir_value *rw_rnn_gather(struct rw_rnn_em *m, struct ir_value *x, const int64_t *idx,
			       size_t n);
/* x[i] along axis 0 (the axis removed). */
struct ir_value *rw_rnn_take(struct rw_rnn_em *m, struct ir_value *x, int64_t i);
struct ir_value *rw_rnn_cast(struct rw_rnn_em *m, struct ir_value *x, int to);
struct ir_value *rw_rnn_clip(struct rw_rnn_em *m, struct ir_value *x, double lo, double hi);
/* Constants in the data's dtype (nothing is recorded for them). */
struct ir_value *rw_rnn_scalar(struct rw_rnn_em *m, double v);
struct ir_value *rw_rnn_const(struct rw_rnn_em *m, int rank, const int64_t *dims,
			      const double *v);
/* An initializer's values as doubles (owned by the caller, NULL on
 * failure: then the rewrite fails). */
double *rw_rnn_init_doubles(struct rw_rnn_em *m, const struct ir_value *v, int64_t n);
/* A dry run or one whose allocation failed: values are placeholders. */
int rw_rnn_dry(const struct rw_rnn_em *m);

/* ---- weights, activations, cells (rnn_cell.c) ------------------------ */

/* The weights in the form the steps use, per direction d. */
struct rw_rnn_weights {
	struct ir_value *wt;           /* [in, G*H], or [ndir, in, G*H] */
	struct ir_value *bias;         /* [G*H] or [ndir, 1, G*H]; NULL: none */
	struct ir_value *rt[2];        /* [H, G*H]; GRU: the h columns zero */
	struct ir_value *rh[2];        /* GRU: [H, H] */
	struct ir_value *rbh[2];       /* GRU with linear_before_reset and B: [H] */
	struct ir_value *pi[2], *po[2], *pf[2];  /* LSTM with P: [H] */
};

void rw_rnn_weights_make(struct rw_rnn_em *m, struct rw_rnn_weights *w);
/* Activation a of x (clipped first when the node has clip). */
struct ir_value *rw_rnn_activate(struct rw_rnn_em *m, const struct rw_rnn_act *a,
				 struct ir_value *x);
/* One step of direction d: x [batch, G*H] the input projection with its
 * biases, *h and *c the state (NULL: zero), replaced by the new state. */
void rw_rnn_step(struct rw_rnn_em *m, const struct rw_rnn_weights *w, int d,
		 struct ir_value *x, struct ir_value **h, struct ir_value **c);

#endif
