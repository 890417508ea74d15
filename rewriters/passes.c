/* passes.c: the pass table, sorted by name (a unit test checks), one line
 * per pass; each pass lives in rewriters/<name>.c. */
#include <stddef.h>

#include "rewriters/rewrite.h"

#define PASS(x) extern const struct rw_pass rw_pass_##x;
#define RW_PASSES(X) \
	X(dce) \
	X(eliminate_identity) \
	X(erf_poly) \
	X(gelu)
RW_PASSES(PASS)
#undef PASS
#define PASS(x) &rw_pass_##x,
const struct rw_pass *const rw_passes[] = { RW_PASSES(PASS) };
#undef PASS
const size_t rw_n_passes = sizeof(rw_passes) / sizeof(rw_passes[0]);
