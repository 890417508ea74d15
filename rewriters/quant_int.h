/* quant_int.h: what the quantization files share: the plan (which nodes
 * are quantizable and how each of their inputs is quantized, the tensors
 * calibrated and the groups that share a scale), the samples, and the
 * context of one qz_run.  Only rewriters/quant_*.c and quantize.c include
 * it.
 *
 * A plan is made once on the float model; nodes are named by their index
 * in the main graph and values by name, so the same plan applies to any
 * copy of that model (the fallback loop builds one copy per trial). */
#ifndef OPMIG_QUANT_INT_H
#define OPMIG_QUANT_INT_H

#include "rewriters/quantize.h"
#include "rewriters/rw_int.h"

struct rt_session;
struct rt_value;

enum qz_role {
	QZ_R_NONE,
	QZ_R_WEIGHTED,               /* Conv, ConvTranspose, Gemm, MatMul */
	QZ_R_BINARY,                 /* Add, Mul, Sub: constants quantized too */
	QZ_R_ACT,                    /* its own output range: pools that
				      * average, activations */
	QZ_R_SAME,                   /* output shares the input's scale:
				      * MaxPool, reshapes, Resize */
	QZ_R_CONCAT,                 /* every input and the output share */
	QZ_R_GENERIC,                /* an op the target runs only quantized */
};

/* How input j of a unit is quantized. */
enum qz_in { QZ_IN_NONE, QZ_IN_ACT, QZ_IN_WEIGHT, QZ_IN_BIAS, QZ_IN_CONST };

struct qz_unit {
	enum qz_role role;
	int candidate;               /* quantized unless excluded or fallen back */
	int fused;                   /* a Relu/Clip the Q of its producer's
				      * output does (asymmetric ranges from 0) */
	const char *why;             /* not a candidate: why (static) */
	unsigned char *in;           /* enum qz_in per input (into the pool) */
	int w_axis;                  /* the weight's channel axis; -1 per tensor */
	int w_dtype;
	int w_sym;                   /* weights symmetric */
	long report;                 /* index into the report's nodes, -1 */
};

/* An activation (or a constant operand) the plan quantizes. */
struct qz_tens {
	char *name;                  /* owned */
	int is_const;                /* values known: min/max are theirs */
	int is_output;               /* a graph output: its full range */
	int seen;
	double min, max;             /* observed */
	struct qz_hist *hist;        /* percentile, entropy; owned */
	size_t group;                /* union-find parent */
	double lo, hi;               /* own range (method) */
	double glo, ghi;             /* the group's */
	size_t members;              /* the group's size (at its root) */
	int shared;                  /* in a group of several */
	float scale;
	int32_t zp;
};

struct qz_plan {
	size_t n_nodes;
	struct qz_unit *units;
	unsigned char *pool;
	size_t n_tens, cap_tens;
	struct qz_tens *tens;
	size_t *by_name;             /* tens indices sorted by name */
	int act_dtype, symmetric;
	int per_channel;
	char **op_names;             /* op type per node, to check a copy */
};

/* Sample sources: backend-layout folders, groups of tensor files bound
 * positionally, or seeded random values. */
enum qz_sample_kind { QZ_S_RANDOM, QZ_S_DIRS, QZ_S_FILES };

struct qz_samples {
	enum qz_sample_kind kind;
	size_t n;
	char **dirs;                 /* n (owned) */
	char **files;                /* n * per (owned) */
	size_t per;
	uint64_t seed;
};

struct qz_ctx {
	const struct qz_opts *o;
	struct qz_report *r;
	const char *path;
	struct ir_model *ref;        /* the float model (a copy, owned) */
	struct ir_model *float_m;    /* the model quantized, still float while
				      * the trials run: each is built in a
				      * copy of it (ir_model_clone, its
				      * weights shared); NULL with from_source */
	char tmp[4096];              /* folder of the trials written (from_source) */
	char copy_path[4200];        /* o->source (from_source) */
	int from_source;             /* copy_path is o->source (weight-only):
				      * each trial is written to tmp and read
				      * back, its weights in place */
	int n_trials;                /* trials written to tmp */
	struct qz_plan plan;
	struct qz_samples calib, val;
	struct qz_samples *eval;     /* &calib or &val */
	struct rt_value **ref_out;   /* eval->n * n_out float outputs */
	size_t n_out;
	int weight_dtype;            /* default weight dtype */
	int collect;                 /* this build fills the report's tensors */
};

/* ---- plan (quant_plan.c) ---- */
int qz_plan_make(struct qz_ctx *q, struct rw_ctx *c, struct ir_diag *d);
void qz_plan_release(struct qz_plan *p);
/* The tensor named name, or -1. */
int qz_plan_find(const struct qz_plan *p, const char *name);
/* Which nodes are quantized in the trial fl (1 = kept in float, per node;
 * NULL none) on model graph g (the plan's model or a copy): on[i] 1, or 2
 * for a fused Relu/Clip whose producer is quantized; a data-movement op
 * only when what it moves comes quantized. */
void qz_units_on(const struct qz_plan *p, const struct ir_graph *g, const unsigned char *fl,
		 unsigned char *on);
/* A Relu, or a Clip from 0: its upper bound (INFINITY none), 1; else 0. */
int qz_clip_max(const struct rw_ctx *c, const struct ir_node *n, double *max);

/* ---- calibration (quant_calib.c) ---- */
int qz_calibrate(struct qz_ctx *q, struct ir_diag *d);
void qz_ranges(struct qz_ctx *q);

/* ---- building (quant_qdq.c, quant_qop.c, quant_dyn.c) ----
 * Quantize the copy c->m by the plan, with the nodes fl marks (NULL: none)
 * kept in float. */
int qz_build_qdq(struct qz_ctx *q, struct rw_ctx *c, const unsigned char *fl,
		 struct ir_diag *d);
int qz_to_qoperator(struct qz_ctx *q, struct rw_ctx *c, size_t *n_conv, struct ir_diag *d);
int qz_build_dynamic(struct qz_ctx *q, struct rw_ctx *c, const unsigned char *fl,
		     struct ir_diag *d);
/* Weight-only (quant_nbits.c): every candidate MatMul as com.microsoft
 * MatMulNBits of o->nbits codes in blocks of o->block_size along K. */
int qz_build_nbits(struct qz_ctx *q, struct rw_ctx *c, const unsigned char *fl,
		   struct ir_diag *d);
/* Quantize a weight: a new initializer of dtype per channel along axis
 * (-1 per tensor), symmetric or not; its scales and zero points become
 * initializers too.  *out gets the DequantizeLinear's output (NULL: the
 * weight cannot be read). */
int qz_weight(struct rw_ctx *c, struct ir_value *w, int dtype, int axis, int sym,
	      struct ir_value **out, struct qz_tensor *info, struct ir_diag *d);

/* ---- weight codes (quant_wcodes.c) ----
 * A float weight w seen as outer x n_ch x inner elements (per tensor: one
 * channel of every element): each channel's finite range into lo and hi
 * (n_ch each, from 0), w read piece by piece. */
int qz_wcodes_range(struct ir_tensor *w, int64_t n_ch, int64_t inner, double *lo, double *hi,
		    struct ir_diag *d);
/* *out (new, named name): w's codes of dtype at the channels' scales sc
 * and zero points zp (n_ch each, copied).  A computed tensor, its codes
 * made piece by piece when written or read, where dtype is int8 or uint8
 * and w's payload is shared (external data, a view of the model file);
 * else computed now. */
int qz_wcodes_make(struct ir_tensor *w, const char *name, int dtype, int64_t n_ch,
		   int64_t inner, const float *sc, const int32_t *zp, struct ir_tensor **out,
		   struct ir_diag *d);

/* A node of op named hint (or hint_N when a node of g has that name),
 * its doc string saying the quantizer made it; NULL out of memory. */
struct ir_node *qz_node_new(struct ir_graph *g, const char *op, const char *hint);

/* ---- samples and evaluation (quant_eval.c) ---- */
int qz_samples_open(struct qz_ctx *q, struct qz_samples *s, const char *dir,
		    size_t n_inputs, uint64_t seed, struct ir_diag *d);
void qz_samples_release(struct qz_samples *s);
int qz_samples_bind(struct qz_ctx *q, const struct qz_samples *s, size_t k,
		    struct rt_session *sess, struct rt_value **vals, struct ir_diag *d);
/* The float outputs of the evaluation samples (when they are not the
 * calibration samples, whose runs keep them). */
int qz_eval_reference(struct qz_ctx *q, struct ir_diag *d);
/* Run model m on the evaluation samples and compare with the float
 * outputs: out gets one entry per output (names borrowed from m until
 * copied), *worst the criterion's metric of the worst output, *met. */
int qz_evaluate(struct qz_ctx *q, struct ir_model *m, struct qz_output *out,
		double *worst, int *met, struct ir_diag *d);

/* ---- fallback (quant_fallback.c) ---- */
/* Build, evaluate and return nodes to float until the criterion holds;
 * fl (per node) gets the final float set. */
int qz_fallback(struct qz_ctx *q, unsigned char *fl, struct ir_diag *d);
/* Load a fresh copy of the float model and build the trial fl into it
 * (the format's build); the caller frees it. */
int qz_trial(struct qz_ctx *q, const unsigned char *fl, struct ir_model **out,
	     struct ir_diag *d);
/* Build the format into the model c->m. */
int qz_build(struct qz_ctx *q, struct rw_ctx *c, const unsigned char *fl, struct ir_diag *d);

/* The temporary folder (q->tmp), made on first use (quantize.c). */
int qz_tmp_dir(struct qz_ctx *q, struct ir_diag *d);
/* Report helpers (quantize.c). */
int qz_note(struct qz_report *r, struct ir_diag *d, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int qz_tensor_add(struct qz_report *r, const struct qz_tensor *t, struct ir_diag *d);
/* d's error again, prefixed ("PREFIX: message"), with status. */
int qz_wrap(struct ir_diag *d, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
