/* inputs.h: the values a model is run with: bound from files (positional,
 * NAME=FILE, or a backend-test folder's input_N.pb), or generated from a
 * seed, dtype-aware: floats uniform in [-1, 1), integers in a range that
 * keeps the model valid (indices of a Gather/Embedding bounded by the size
 * of the axis they index, else [0, 8)), bools 0/1, strings short words;
 * dynamic dims from NAME=V settings, else 1.  Decoder inputs, known by
 * name and type, get what a decoder is run with instead (see
 * rt_input_role_of).  Shared by `opmig run` and `opmig validate`.
 *
 * Ownership: the vals arrays hold one reference per bound input (NULL when
 * not bound); rt_inputs_release drops them.  Option structs are borrowed.
 */
#ifndef OPMIG_INPUTS_H
#define OPMIG_INPUTS_H

#include <stdint.h>

#include "runtime/runtime.h"

struct rt_dim_set {
	const char *name;      /* a symbolic dim of the graph inputs */
	int64_t value;
};

struct rt_value_range {
	const char *name;      /* a graph input */
	double lo, hi;         /* integers: [lo, hi]; floats [lo, hi) */
};

struct rt_input_opts {
	uint64_t seed;
	size_t n_dims;
	const struct rt_dim_set *dims;
	size_t n_ranges;
	const struct rt_value_range *ranges;
};

/* Parse "NAME=V" (dims) and "NAME=LO:HI" (ranges); 0 or -1. */
int rt_dim_set_parse(const char *s, struct rt_dim_set *out);
int rt_value_range_parse(const char *s, struct rt_value_range *out);

/* Bind files: each spec is "FILE" (the next unbound input in order) or
 * "NAME=FILE".  On error the file's path is copied into bad_file (size
 * bytes) and the message says what is wrong with it. */
int rt_inputs_from_files(struct rt_session *s, char *const *specs, size_t n,
			 struct rt_value **vals, char *bad_file, size_t size,
			 struct ir_diag *d);
/* Bind DIR/input_K.pb, where present, to the K-th input (the backend
 * test layout); errors as above. */
int rt_inputs_from_dir(struct rt_session *s, const char *dir,
		       struct rt_value **vals, char *bad_file, size_t size,
		       struct ir_diag *d);
/* Fill every unbound input with seeded random data. */
int rt_inputs_random(struct rt_session *s, const struct ir_model *m,
		     const struct rt_input_opts *o, struct rt_value **vals,
		     struct ir_diag *d);
void rt_inputs_release(struct rt_value **vals, size_t n);

/* The range random integers of input `v` get by default: [0, axis size
 * - 1] when it indexes an initializer through Gather (or the like), else
 * [0, 7].  Exposed for tests. */
void rt_input_int_range(const struct ir_model *m, const struct ir_value *v,
			double *lo, double *hi);

/* Decoder inputs, by name and type (names as torch and onnxruntime-genai
 * exports give them):
 *   attention_mask  integer, rank 2: all ones (no padding; its length is
 *                   past + S, so genai's seqlens_k/total_sequence_length
 *                   come out consistent)
 *   position_ids    integer: past + 0..S-1 along the last axis, the same
 *                   in every batch row; past is dim 2 of the first
 *                   past-kv input (from the dim settings), else 0
 *   input_ids       integer: random below the embedding's size (the
 *                   Gather bound above)
 *   past_key_values.*, past_key*, past_value*  float, rank 4: random
 *                   [-1, 1) like any float input
 * A --range for the input, or a file bound to it, overrides the rule. */
enum rt_input_role {
	RT_ROLE_NONE, RT_ROLE_INPUT_IDS, RT_ROLE_ATTENTION_MASK,
	RT_ROLE_POSITION_IDS, RT_ROLE_PAST_KV
};
enum rt_input_role rt_input_role_of(const struct ir_vinfo *vi);
/* What the generator gives an input of that role, in words. */
const char *rt_input_role_rule(enum rt_input_role r);
/* The embedding size input_ids index (the vocabulary); -1 unknown. */
int64_t rt_input_vocab(const struct ir_model *m);
/* The past sequence length the generator uses for position_ids. */
int64_t rt_input_past_length(const struct ir_model *m, const struct rt_input_opts *o);

/* A deterministic generator (splitmix64). */
uint64_t rt_rand_next(uint64_t *state);
double rt_rand_unit(uint64_t *state);      /* [0, 1) */

#endif
