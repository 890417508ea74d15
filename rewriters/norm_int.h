/* norm_int.h: what the normalization lowerings share (norm.c, skip_norm.c):
 * the statistics as ReduceMean and elementwise ops, and the dtype they are
 * computed in (float32 for float16 and bfloat16 data, between Casts, as
 * onnxruntime's kernels accumulate).  Values are the graph's (rw_int.h);
 * nothing here owns any.  Only rewriters/ includes it. */
#ifndef OPMIG_NORM_INT_H
#define OPMIG_NORM_INT_H

#include "rewriters/rw_int.h"

#define RW_NORM_MAX_RANK 16

/* (x - mean) / sqrt(var + eps), or x / sqrt(mean(x^2) + eps) (rms), over
 * the k axes, in e->dtype (x must be of it); with mean or inv non-NULL,
 * d * inv where inv = 1 / sqrt(..) is written to inv and the mean
 * (keepdims) to mean. */
struct ir_value *rw_norm_stats(struct rw_emit *e, struct ir_value *x, const int64_t *axes,
			       size_t k, double eps, int rms, struct ir_value *mean,
			       struct ir_value *inv);

/* The dtype n's statistics are computed in: float32 for float16 and
 * bfloat16 data when stash is 0 (the op has no stash_type: the skip norms,
 * whose onnxruntime kernels accumulate in float) or its stash_type is 1
 * (the default), else the data's dtype (0 unknown). */
int rw_norm_stats_dtype(const struct rw_ctx *c, const struct ir_node *n, int stash);

/* Can the statistics of data dt be computed in st by the ops (the
 * variant's, NULL-terminated; Casts skipped)?  Where st is not dt: Cast
 * must exist for dt (bfloat16: opset 13) and the target must take each op
 * for st.  0 with the reason in why otherwise. */
int rw_norm_check_stats(const struct rw_ctx *c, int dt, int st, const char *const *ops,
			char *why, size_t size);

/* x cast to dtype `to` (nothing when e->dtype is it already), e->dtype
 * becoming it: around the statistics, to st and back to the data's. */
struct ir_value *rw_norm_cast(struct rw_emit *e, struct ir_value *x, int to);

/* Is input i present? */
int rw_norm_has(const struct ir_node *n, size_t i);
/* Output i if it is read, else NULL. */
struct ir_value *rw_norm_used_output(const struct ir_node *n, size_t i);

#endif
