/* tlower.h: the property-test harness of the lowering suites
 * (suite_decomp3.c to suite_decomp5.c).  A case builds a one-op model from
 * a seed and a parameter; every variant of the pass whose preconditions
 * hold is applied to a fresh copy; both models run in the interpreter on
 * the same seeded inputs (drawn per dtype in the case's value mode, or by
 * a hook of the run: class targets, indices in range); every
 * output must agree (floats within the case's bound, NaN where NaN; other
 * dtypes exactly); the rewritten model verifies, keeps its output names and
 * emits exactly the ops the variant lists (no more, no fewer).  Rewritten
 * models of opset <= 17 go to onnx.checker (tg_run_checker). */
#ifndef OPMIG_TEST_TLOWER_H
#define OPMIG_TEST_TLOWER_H

#include <stdint.h>

#include "ir/ir.h"

/* How graph inputs are drawn (integers always from [-9, 9], bool 50%) */
enum tl_values {
	TL_REAL,           /* floats in [-3, 3) */
	TL_TIES,           /* small integers -2..2 as floats: ties, equalities */
	TL_SPECIAL,        /* TL_TIES with NaN, +-inf, -0 mixed in */
	TL_POSITIVE,       /* floats in [0.1, 3) */
	TL_WIDE,           /* floats of magnitudes 1e-3 to 1e4, both signs */
};

struct rt_value;
typedef struct ir_model *(*tl_build_fn)(uint64_t *s, int param);
/* Draw graph input `name` (t: its tensor, allocated) of model m itself: 1
 * when it did (targets in range, indices), 0 to leave it to the value
 * mode. */
typedef int (*tl_fill_fn)(const struct ir_model *m, const char *name, struct rt_value *t,
			  uint64_t *s);

struct tl_case {
	const char *pass, *op;
	tl_build_fn build;
	int param;
	enum tl_values values;
	double atol, rtol;           /* |a - b| <= atol + rtol max(|a|, |b|) */
	int trials;                  /* seeds tried (0: 4) */
};

/* Run the cases (per pass, the applications of each variant are
 * counted); returns the number of applications. */
int tl_run_cases(const struct tl_case *cases, size_t n, uint64_t seed);
/* The same, the inputs fill takes drawn by it. */
int tl_run_cases_fill(const struct tl_case *cases, size_t n, uint64_t seed, tl_fill_fn fill);
/* Assert that every variant of pass was applied at least once by the
 * cases run so far (printing the counts). */
void tl_expect_all_variants(const char *pass);
/* Assert that pass's check refuses m's first node of type op with a
 * reason containing word; m is freed.  Returns whether it refused. */
int tl_refuses(const char *pass, const char *op, struct ir_model *m, const char *word);
/* Give input name's dim i a symbolic name (bound to 2 when run). */
void tl_symbolic(struct ir_model *m, const char *input, int i);

#endif
