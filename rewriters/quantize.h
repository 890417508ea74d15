/* quantize.h: post-training int8 quantization (`opmig quantize`, `opmig
 * migrate --precision int8`).  The float model is calibrated in the
 * interpreter (one sample at a time: ranges and histograms of the
 * activations, never the activations themselves), each quantizable node
 * gets QuantizeLinear/DequantizeLinear around its inputs and outputs (or
 * its QLinear form, or dynamic quantization of its weights), and the
 * result is compared with the float model on the evaluation samples: when
 * the accuracy criterion fails, the nodes whose own quantization error is
 * largest (layer-wise comparison) go back to float one at a time until it
 * holds.
 *
 * Ownership: qz_run edits the model it is given in place (into the
 * quantized model) and borrows the options; a struct qz_report owns
 * everything in it (qz_report_release).  The calibration primitives below
 * work on caller memory.
 */
#ifndef OPMIG_QUANTIZE_H
#define OPMIG_QUANTIZE_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"
#include "validators/compare.h"
#include "runtime/inputs.h"

struct rules_target;

enum qz_method { QZ_MINMAX, QZ_PERCENTILE, QZ_ENTROPY };
enum qz_format { QZ_QDQ, QZ_QOPERATOR, QZ_DYNAMIC, QZ_WEIGHT_ONLY };
enum qz_metric { QZ_COSINE, QZ_SNR, QZ_TOP1, QZ_MAX_ABS };
/* How the fallback ranks nodes: the criterion with each node alone in
 * float (a trial per node), or its local SNR (one layer-wise run). */
enum qz_sensitivity { QZ_SENS_OUTPUT, QZ_SENS_LOCAL };

/* "minmax", "qdq", "cosine"; parse returns -1 for other text. */
const char *qz_method_name(enum qz_method m);
int qz_method_parse(const char *s);
const char *qz_format_name(enum qz_format f);
const char *qz_metric_name(enum qz_metric m);
/* "cosine>=0.99", "snr>=30", "top1>=0.95", "max-abs<=0.1": 0, or -1 with
 * the reason in why. */
int qz_accuracy_parse(const char *s, enum qz_metric *metric, double *value,
		      char *why, size_t size);
/* The dtypes --activations and --weights take ("uint8", "int8", "uint16",
 * "int16"; weights "int8", "uint8", "int4"): the IR dtype, or -1. */
int qz_act_dtype_parse(const char *s);
int qz_weight_dtype_parse(const char *s);

#define QZ_HIST_BINS 2048
#define QZ_DEFAULT_SAMPLES 8
#define QZ_DEFAULT_PERCENTILE 99.99
#define QZ_DEFAULT_BLOCK 32

struct qz_opts {
	const struct rules_target *target;  /* NULL: no target's rules */
	const char *calibrate;       /* DIR of samples; NULL: seeded random */
	const char *validation;      /* DIR of evaluation samples; NULL: the
				      * calibration samples */
	int samples;                 /* random samples; 0: QZ_DEFAULT_SAMPLES */
	uint64_t seed;
	enum qz_method method;
	double percentile;           /* 0: QZ_DEFAULT_PERCENTILE */
	enum qz_format format;
	int per_tensor;              /* weights per tensor (default per channel) */
	int symmetric;               /* activations symmetric (zero point 0);
				      * weight-only: the weights (no zero
				      * points) */
	int nbits;                   /* weight-only: 4 or 8 */
	int64_t block_size;          /* weight-only: 0: QZ_DEFAULT_BLOCK */
	int accuracy_level;          /* weight-only: MatMulNBits' attribute
				      * (0: not written) */
	int act_dtype, weight_dtype; /* 0: the target's, else uint8 / int8 */
	const char *exclude;         /* node names, comma-separated */
	const char *exclude_ops;     /* op types, comma-separated */
	int have_accuracy;           /* metric/threshold given (else cosine
				      * >= 0.99) */
	enum qz_metric metric;
	double threshold;
	int no_fallback;             /* report the criterion, keep every node */
	enum qz_sensitivity sensitivity;
	int max_fallback;            /* nodes returned to float at most; 0 all */
	int prepare;                 /* canonicalize and fold batch norms first */
	int logits_whole;            /* a decoder's logits judged as whole
				      * outputs only, not by position (the
				      * migrate pipeline's validation judges
				      * them by position itself) */
	size_t n_dims;
	const struct rt_dim_set *dims;
	int threads;
	const char *source;          /* the file the model was loaded from,
				      * unchanged (NULL: unknown): weight-only
				      * quantization reads its float reference
				      * from there instead of writing a copy */
	int no_check;                /* weight-only: no accuracy check (nothing
				      * run, the criterion not measured) */
};

/* A quantized tensor: an activation (calibrated), a weight or a bias. */
struct qz_tensor {
	char *name;                  /* owned */
	const char *kind;            /* "activation", "weight", "bias", "constant" */
	int dtype;
	int axis;                    /* per channel along axis; -1 per tensor */
	size_t n;                    /* channels (1 per tensor) */
	double scale, zero_point;    /* per tensor: the values; per channel:
				      * channel 0's */
	double scale_min, scale_max; /* over the channels */
	double min, max;             /* observed (activations) or the values */
	double lo, hi;               /* the range quantized */
	size_t group;                /* tensors sharing scale and zero point */
	int shared;                  /* its group has several tensors */
};

enum qz_state { QZ_NODE_FLOAT, QZ_NODE_QUANTIZED, QZ_NODE_FUSED };

struct qz_node {
	char *name, *op;             /* owned; name is "#index" when unnamed */
	enum qz_state state;
	char *why;                   /* float: the reason (owned) */
	double sensitivity;          /* local SNR in dB; NAN when not measured */
	double if_float;             /* the criterion's metric (worst output)
				      * with this node alone back in float;
				      * NAN when not measured */
	double flips_alone;          /* a decoder's logits judged by position:
				      * the positions whose top-1 token
				      * differs with this node alone
				      * quantized (the ranking's first key);
				      * NAN when not measured */
	size_t rank;                 /* in the sensitivity ranking, 1 = most
				      * sensitive; 0 not ranked */
	size_t n_inputs;
	char **inputs;               /* quantized: the inputs it reads
				      * quantized (see tensors), owned */
};

struct qz_output {
	char *name;                  /* owned */
	struct rt_metrics m;         /* cosine, snr_db, max_abs over samples */
	double top1;                 /* agreement of argmax over the last
				      * axis; NAN when not applicable */
	int ok;                      /* meets the criterion */
};

/* One node returned to float by the fallback loop. */
struct qz_step {
	size_t node;                 /* index into nodes */
	double worst_before, worst_after;  /* the criterion's metric, worst output */
};

struct qz_report {
	const char *method, *format; /* static */
	const char *sensitivity;     /* "output" or "local" */
	int act_dtype, weight_dtype, symmetric, per_channel;
	int nbits;                   /* weight-only: 4 or 8; 0 otherwise */
	int64_t block_size;
	int accuracy_level;
	double percentile;
	size_t n_calib, n_eval;
	int random_calib;            /* no --calibrate */
	enum qz_metric metric;
	double threshold;
	char criterion[64];          /* "cosine>=0.99" */
	int met;                     /* every output meets it */
	int unchecked;               /* no accuracy check ran (met is 1) */
	double worst_first;          /* the metric before any fallback */
	size_t n_outputs;
	struct qz_output *outputs;
	size_t n_tensors;
	struct qz_tensor *tensors;
	size_t n_nodes;              /* candidates and their fate */
	struct qz_node *nodes;
	size_t n_ranked;
	size_t *ranking;             /* indices into nodes, most sensitive first */
	size_t n_steps;
	struct qz_step *steps;
	size_t n_quantized, n_float;
	int64_t bytes_before, bytes_after;   /* initializer bytes */
	int64_t opset;               /* of the result */
	size_t n_notes;
	char **notes;                /* owned */
};

void qz_report_release(struct qz_report *r);
/* Weight-only codes not computed yet fill r's entries when they are (the
 * scales, the weights' range): before r is released while m lives on,
 * detach them from it. */
void qz_report_detach(struct ir_model *m, const struct qz_report *r);

/* Quantize m in place.  path names the model in messages.  Errors: bad
 * input or samples (IR_EINVAL), usage (IR_EUSAGE: options that cannot
 * apply to this model), IR_ENOMEM, IR_EIO; a criterion that fails is no
 * error: r->met says. */
int qz_run(struct ir_model *m, const char *path, const struct qz_opts *o,
	   struct qz_report *r, struct ir_diag *d);

/* The report as JSON (opmig.quantize/1), malloc'd; NULL out of memory. */
char *qz_report_json(const struct qz_report *r, const char *model, const char *out,
		     int written);

/* ---- calibration primitives (quant_calib.c) --------------------------
 * A histogram of |x| in QZ_HIST_BINS bins of width w from 0, kept apart
 * for positive and negative x; the width doubles (bins merge in pairs)
 * when a value beyond the top arrives. */
struct qz_hist {
	double width;                /* 0 until a non-zero value arrived */
	double pos[QZ_HIST_BINS], neg[QZ_HIST_BINS];
};

void qz_hist_add(struct qz_hist *h, const float *x, int64_t n);
/* The range [lo, hi] keeping P percent of the values: symmetric, the
 * P-th percentile of |x| on both sides; else (100 - P) / 2 percent cut
 * from each tail.  min and max clip the result. */
void qz_hist_percentile(const struct qz_hist *h, double p, int symmetric, double min,
			double max, double *lo, double *hi);
/* The threshold T minimizing the KL divergence between the clipped
 * distribution of |x| and its quantization to `levels` levels (TensorRT's
 * calibration): the upper edge of the first i bins, i from levels to
 * n_bins (n_bins <= levels: the top).  hist has n_bins counts. */
double qz_entropy_threshold(const double *hist, size_t n_bins, double width, int levels);
/* Scale and zero point of [lo, hi] (widened to hold 0) for an integer
 * dtype; symmetric: zero point in the middle of the range (0 for signed
 * types, whose range is then [-qmax, qmax]). */
void qz_params(double lo, double hi, int dtype, int symmetric, float *scale,
	       int32_t *zero_point);
/* Weight-only blockwise quantization of w [k, n] (row-major float32) as
 * onnxruntime's MatMulNBits quantizer does it (quant_nbits.c says the
 * formulas): q gets n * ceil(k / bs) * bs * bits / 8 packed codes, scales
 * n * ceil(k / bs) (rounded through float16 when half), zp (NULL when
 * symmetric) n * ceil(ceil(k / bs) * bits / 8) packed zero points; work
 * holds 4 * n floats. */
void qz_nbits_quantize(const float *w, int64_t k, int64_t n, int bits, int64_t bs, int sym,
		       int half, uint8_t *q, float *scales, uint8_t *zp, float *work);
/* The same codes, scales and zero points of weight w [k, n] (float32 or
 * float16; scales of its dtype) as derived tensors named NAME_Q<bits>,
 * NAME_scales and NAME_zero_points (*z NULL when symmetric), computed only
 * when read (ir_tensor_data) or written (ir_tensor_stream: cols columns at
 * a time, reading bs rows of them at a time; cols 0: as many as give 8
 * MiB of codes), byte for byte qz_nbits_quantize's.  0, or < 0 with d. */
int qz_nbits_derive(const struct ir_tensor *w, const char *name, int bits, int64_t bs, int sym,
		    int64_t cols, struct ir_tensor **q, struct ir_tensor **s, struct ir_tensor **z,
		    struct ir_diag *d);
/* MatMulNBits' B [n, kb, blob], scales [n, kb] and zero points (z, NULL
 * none) as the operands of a blocked DequantizeLinear-21 along K: codes
 * [k, n] of wdtype (uint4/int4 or uint8/int8; signed: code - zero point,
 * 2^(bits - 1) where z is NULL, with z only 4-bit B as int8; codes at
 * least B's width), scales [kb, n] of the scales' dtype and, unsigned,
 * zero points [kb, n] (*zps NULL signed); or, wdtype float32 or float16
 * (a model's own B only), *codes alone: the dequantized weight [k, n],
 * (code - zero point) * scale in float32 (rounded to float16).  Derived
 * tensors named names[0..2] computed a range of rows of K at a time when
 * written or read: from the float weight itself when B, scales and z are
 * qz_nbits_derive's (one pass over the weight for all three), else from
 * B's bytes.  1 made, 0 not for these (B not uint8, n * bits of 4-bit
 * codes not whole bytes, float zero points: the caller computes them
 * itself), < 0 with d. */
int qz_nbits_dq_derive(const struct ir_tensor *b, const struct ir_tensor *s,
		       const struct ir_tensor *z, int64_t k, int64_t n, int bits, int64_t bs,
		       int wdtype, const char *const names[3], struct ir_tensor **codes,
		       struct ir_tensor **scales, struct ir_tensor **zps, struct ir_diag *d);
/* The same with the tensors' shapes chosen (a model's own B, codes of
 * 8 bits: uint8 or int8 (code - zero point of 4-bit B, or 2^(bits - 1));
 * the quantizer's codes as uint8 with uint8 zero points or none):
 * side_rank 2 scales and zero points [kb, n] (qz_nbits_dq_derive's), 1
 * [n] (one block: a per-axis DequantizeLinear), 3 [kb, 1, n]; pad: codes
 * [kb, bs, n], K padded to whole blocks with B's own codes of the last
 * block (the caller slices them off); zdt float32 or float16: zero points
 * as values of that dtype (and none made when z is NULL), for a Cast,
 * Sub and Mul of the codes.  0 when not for these. */
struct qz_nbits_shape {
	int wdtype, zdt, pad, side_rank;
};
int qz_nbits_codes_derive(const struct ir_tensor *b, const struct ir_tensor *s,
			  const struct ir_tensor *z, int64_t k, int64_t n, int bits, int64_t bs,
			  const struct qz_nbits_shape *f, const char *const names[3],
			  struct ir_tensor **codes, struct ir_tensor **scales,
			  struct ir_tensor **zps, struct ir_diag *d);
/* The integer range of a quantized dtype (int8, uint8, int16, uint16,
 * int4, uint4, int32). */
void qz_dtype_range(int dtype, int64_t *qmin, int64_t *qmax);

#endif
