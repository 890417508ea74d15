/* tgen.h: helpers of the rewrite property suites (suite_decomp2.c,
 * suite_fuse.c): a seeded generator, initializers, finishing a one-output
 * test model, comparing outputs, and checking the rewritten models with
 * onnx.checker.  Every function fails the test on allocation failure. */
#ifndef OPMIG_TEST_TGEN_H
#define OPMIG_TEST_TGEN_H

#include <stdint.h>

#include <CUnit/CUnit.h>

#include "tests/unit/tmodel.h"

uint64_t tg_next(uint64_t *s);
/* a seeded integer in [lo, hi] */
int64_t tg_rnd(uint64_t *s, int64_t lo, int64_t hi);
/* n seeded values in [-1, 1) */
void tg_fill(uint64_t *s, double *v, int64_t n);
int64_t tg_numel(const int64_t *d, size_t n);
/* float initializer of seeded values; int64 initializer of v */
struct ir_value *tg_rand_init(struct ir_model *m, uint64_t *s, const char *name,
			      const int64_t *dims, size_t n);
struct ir_value *tg_int_init(struct ir_model *m, const char *name, const int64_t *v,
			     const int64_t *dims, size_t n);
/* declare output "y" of dtype (shape unknown) and verify */
void tg_finish(struct ir_model *m, int dtype);
void tg_set_ints(struct ir_node *n, const char *name, const int64_t *v, size_t k);
/* the first node of op type op, NULL if none */
struct ir_node *tg_find_op(struct ir_model *m, const char *op);
/* max abs difference (inf when NaNs differ), shapes and dtypes checked */
double tg_compare(struct rt_value *a, struct rt_value *b);
/* Save m (opset <= 17 only; its output typed with out's shape) for
 * tg_run_checker, which checks every saved model with
 * onnx.checker.check_model(full_check=True) and removes them. */
void tg_save_for_checker(struct ir_model *m, const char *what, const struct rt_value *out);
void tg_run_checker(void);

#endif
