/* tmodel.h: building small models in unit tests through the IR editing
 * API: typed graph inputs and outputs, initializers, nodes with
 * attributes; running them through the interpreter with seeded inputs.
 * Every function fails the test (CU_ASSERT_FATAL) on allocation failure. */
#ifndef OPMIG_TEST_TMODEL_H
#define OPMIG_TEST_TMODEL_H

#include <stdint.h>

#include "ir/ir.h"
#include "runtime/runtime.h"

/* A model importing the default domain at opset, plus com.microsoft 1. */
struct ir_model *tm_new(int64_t opset);
/* A graph input/output of dtype with static dims (rank n). */
struct ir_value *tm_input(struct ir_model *m, const char *name, int dtype,
			  const int64_t *dims, size_t n);
void tm_output(struct ir_model *m, const char *name, int dtype,
	       const int64_t *dims, size_t n);
/* An initializer of doubles converted to dtype. */
struct ir_value *tm_init(struct ir_model *m, const char *name, int dtype,
			 const int64_t *dims, size_t n, const double *v);
/* A node (domain NULL: default) reading and writing values by name
 * ("" for an absent optional input). */
struct ir_node *tm_node(struct ir_model *m, const char *op, const char *domain,
			const char *const *in, size_t n_in,
			const char *const *out, size_t n_out);
/* Verify (the test fails on an error, printing it). */
void tm_verify(struct ir_model *m);

/* Run m on seeded random inputs (floats in [-3, 3)); outs gets one
 * reference per graph output.  Returns 0 or a negative status (message
 * printed). */
int tm_run(struct ir_model *m, uint64_t seed, struct rt_value **outs, size_t n_outs);

/* Run m with graph input i bound to the float32 tensor of its declared
 * (static) dims holding vals[i]; outs gets one reference per graph output.
 * Returns 0 or a negative status (message printed). */
int tm_run_floats(struct ir_model *m, const double *const *vals, struct rt_value **outs,
		  size_t n_outs);

#define TM_DIMS(...) ((const int64_t[]){ __VA_ARGS__ })
#define TM_N(...) (sizeof((const int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t))
#define TM_NAMES(...) ((const char *const[]){ __VA_ARGS__ })
#define TM_NN(...) (sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(char *))

#endif
