/* passes.c: the pass table, sorted by name (a unit test checks), one line
 * per pass; each pass lives in rewriters/<name>.c. */
#include <stddef.h>

#include "rewriters/rewrite.h"

#define PASS(x) extern const struct rw_pass rw_pass_##x;
#define RW_PASSES(X) \
	X(abs) \
	X(arg_max_min) \
	X(attention) \
	X(avgpool_count) \
	X(cancel_transposes) \
	X(cast_like) \
	X(clip) \
	X(compare) \
	X(conv_transpose) \
	X(conv1d) \
	X(cumsum) \
	X(dce) \
	X(dedup_constants) \
	X(depth_space) \
	X(einsum) \
	X(eliminate_identity) \
	X(elu) \
	X(erf_poly) \
	X(expand_simplified_ln) \
	X(expand_tile) \
	X(fold_constants) \
	X(fp16) \
	X(fuse_attention) \
	X(fuse_batch_norm) \
	X(fuse_gelu) \
	X(fuse_gemm) \
	X(fuse_gqa) \
	X(fuse_layer_norm) \
	X(fuse_matmul_nbits) \
	X(fuse_rms_norm) \
	X(fuse_rotary) \
	X(fuse_skip_norm) \
	X(gather_elements) \
	X(gather_slice) \
	X(gelu) \
	X(gemm) \
	X(global_pool) \
	X(group_norm) \
	X(group_query_attention) \
	X(gru) \
	X(hard_sigmoid) \
	X(hard_swish) \
	X(if_const) \
	X(inline_functions) \
	X(instance_norm) \
	X(kernel_split) \
	X(layer_norm) \
	X(leaky_relu) \
	X(logic_arith) \
	X(lp_norm) \
	X(lstm) \
	X(matmul_batch) \
	X(matmul_nbits) \
	X(max_min) \
	X(merge_casts) \
	X(mish) \
	X(mod_int) \
	X(narrow_float64) \
	X(narrow_int64) \
	X(neg) \
	X(nhwc_io) \
	X(nll_loss) \
	X(onehot) \
	X(opset_convert) \
	X(pool_split) \
	X(pow_const) \
	X(prelu) \
	X(range_const) \
	X(reciprocal) \
	X(reduce) \
	X(reduce_max_pool) \
	X(reduce_mean_sum) \
	X(rnn) \
	X(rotary) \
	X(sce_loss) \
	X(sigmoid) \
	X(sign) \
	X(skip_layer_norm) \
	X(softmax) \
	X(softplus) \
	X(softsign) \
	X(sqrt_pow) \
	X(static_dims) \
	X(swish) \
	X(tanh) \
	X(thresholded_relu) \
	X(to_reshape) \
	X(topk_arg) \
	X(transpose_rank) \
	X(trilu) \
	X(variadic) \
	X(where_arith)
RW_PASSES(PASS)
#undef PASS
#define PASS(x) &rw_pass_##x,
const struct rw_pass *const rw_passes[] = { RW_PASSES(PASS) };
#undef PASS
const size_t rw_n_passes = sizeof(rw_passes) / sizeof(rw_passes[0]);
