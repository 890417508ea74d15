/* validate.h: validators/ owns validation only: running a reference and a
 * candidate model on the same inputs (through runtime/), pairing their
 * values (name maps), comparison metrics and the layer-wise comparison.
 *
 * Numerical equivalence of two models (a reference and a
 * candidate, e.g. a migrated model): both run on the same inputs (files or
 * seeded samples), inputs converted to the candidate's dtypes and layouts,
 * outputs paired by name or by a name map and compared with tolerances that
 * follow the candidate's precision; optionally layer by layer, both models
 * running side by side in lockstep, which finds the first divergent value
 * and tells local errors from accumulated ones.
 *
 * Ownership: a val_report borrows names from both models (keep them alive
 * until val_report_release); it owns its arrays.  A val_map owns its
 * strings.  Options are borrowed.
 */
#ifndef OPMIG_VALIDATE_H
#define OPMIG_VALIDATE_H

#include <stdint.h>

#include "validators/compare.h"
#include "runtime/inputs.h"
#include "runtime/runtime.h"

enum val_precision { VAL_FP32, VAL_FP16, VAL_INT8 };

/* "fp32", "fp16", "int8"; parse returns -1 for other text. */
const char *val_precision_name(enum val_precision p);
int val_precision_parse(const char *s);
/* The default tolerances of a precision (documented in
 * opmig-validate(1)). */
void val_default_tolerance(enum val_precision p, struct rt_cmp_opts *t);
/* A candidate's precision: int8 when it has quantize/dequantize or QLinear
 * nodes, fp16 when any float16 or bfloat16 initializer or declared value,
 * else fp32. */
enum val_precision val_guess_precision(const struct ir_model *cand);

/* ---- the name map between two models (written by `opmig migrate`) ----
 * A text file, one entry per line, '#' comments:
 *   input  REF_NAME CAND_NAME [perm=P0,P1,...] [dtype=NAME]
 *   output REF_NAME CAND_NAME [perm=...]
 *   value  REF_NAME CAND_NAME [perm=...]
 * perm: the candidate's tensor is the reference's transposed by perm
 * (candidate dim i = reference dim perm[i]); dtype: the candidate's
 * element type when it differs. */
enum val_map_kind { VAL_MAP_INPUT, VAL_MAP_OUTPUT, VAL_MAP_VALUE };

struct val_map_entry {
	enum val_map_kind kind;
	char *ref, *cand;
	int rank;                 /* of perm; 0: none */
	int perm[RT_MAX_RANK];
	int dtype;                /* 0: same as the reference */
};

struct val_map {
	size_t n;
	struct val_map_entry *e;
};

void val_map_init(struct val_map *m);
void val_map_release(struct val_map *m);
/* Errors are "LINE: what" (the caller prefixes the file). */
int val_map_load(const char *path, struct val_map *m, struct ir_diag *d);
int val_map_add(struct val_map *m, enum val_map_kind kind, const char *ref,
		const char *cand, const int *perm, int rank, int dtype,
		struct ir_diag *d);
/* Write the map (atomically). */
int val_map_save(const struct val_map *m, const char *path, struct ir_diag *d);
/* The entry of kind for a reference name / a candidate name; NULL none. */
const struct val_map_entry *val_map_by_ref(const struct val_map *m,
					   enum val_map_kind kind, const char *ref);
const struct val_map_entry *val_map_by_cand(const struct val_map *m,
					    enum val_map_kind kind, const char *cand);

/* ---- running a validation ------------------------------------------- */

struct val_opts {
	struct rt_cmp_opts tol;
	int precision;            /* enum val_precision, or -1: guess */
	int have_tol;             /* tol given (else the precision's) */
	int samples;              /* random samples when no --data */
	struct rt_input_opts gen; /* seed, dims, ranges */
	char *const *data_dirs;   /* each one sample (input_N.pb) */
	size_t n_data_dirs;
	char *const *input_files; /* NAME=FILE for every sample */
	size_t n_input_files;
	int layerwise;
	const struct val_map *map;
	int threads;
	const char *save_dir;     /* write inputs and outputs per sample */
	int time;                 /* time each model's runs (val_report's
				   * n_timed, ref_s, ...): not deterministic,
				   * so reports carry it only when asked */
	int logits_exact;         /* judge logits by rtol/atol too (else
				   * val_is_logits outputs by position) */
};

struct val_output {
	const char *ref_name, *cand_name;
	struct rt_metrics m;      /* over all samples */
};

/* One intermediate value both models compute, in the candidate's order. */
struct val_layer {
	const char *value;        /* reference name */
	const char *node, *op;    /* candidate node producing it */
	struct rt_metrics acc;    /* both models running freely */
	struct rt_metrics local;  /* the candidate fed reference values */
	int ok;                   /* acc within tolerance */
};

#define VAL_TOP 5

struct val_report {
	int equivalent;
	enum val_precision precision;
	struct rt_cmp_opts tol;
	size_t n_samples;
	size_t n_outputs;
	struct val_output *outputs;
	/* --layerwise (first sample) */
	int layerwise;
	size_t n_layers;
	struct val_layer *layers;
	size_t n_unordered;       /* shared values skipped: order differs */
	long first_bad;           /* index into layers, -1: none */
	int first_bad_local;      /* 1 local, 0 accumulated */
	size_t n_top;
	size_t top[VAL_TOP];      /* worst layers, worst first */
	char note[256];           /* how inputs and outputs were paired */
	char inputs_note[256];    /* decoder inputs generated by rule */
	/* with val_opts.time: wall time of the runs, each model's (seconds),
	 * over n_timed samples (--layerwise's first sample, run node by
	 * node, is not timed) */
	size_t n_timed;
	double ref_s, cand_s, ref_min_s, cand_min_s;
};

/* Logits of a decoder, judged position by position (rt_logits_judge)
 * unless val_opts.logits_exact: a float output of rank >= 2 named
 * "logits", or of rank 3 whose last dim is the vocabulary (the size of
 * the embedding input_ids index).  The cosine every position must reach:
 * 0.99 for int8 (and int4) candidates, else 0.999.  A decoder's
 * key/value cache outputs (float, rank 4, named present.*, present_key*
 * or present_value*) are judged by the same cosine per row (one
 * position's vector of one head), without top-1.  Returns 1 logits, 2 a
 * key/value cache, 0 neither. */
int val_is_logits(const struct ir_model *ref, const struct ir_vinfo *out);
double val_logits_min_cosine(enum val_precision p);

void val_report_release(struct val_report *r);
/* "time per run: reference X ms, candidate Y ms (mean of N; least ...)"
 * into buf, or "" when no run was timed (metrics_json.c) */
void val_time_describe(const struct val_report *r, char *buf, size_t size);
/* {"runs", "reference_mean", "reference_min", "candidate_mean",
 * "candidate_min"} in milliseconds, added to o as "time_per_run_ms" when
 * a run was timed; 0 when out of memory */
int val_time_json(struct cJSON *o, const struct val_report *r);

/* Validate cand against ref.  Bad input (unreadable files, signatures
 * that cannot be paired, data errors) is IR_EINVAL with a message; when
 * a file is to blame its path is copied into bad_file. */
int val_run(struct ir_model *ref, struct ir_model *cand,
	    const struct val_opts *o, struct val_report *r, char *bad_file,
	    size_t bad_size, struct ir_diag *d);

#endif
