/* k_reduce_int.h: what the reduce, softmax, sort and einsum family files
 * share privately: kernels defined in the k_reduce_*.c helper files (listed
 * in k_reduce.c's table), dtype working copies and a strided transpose.
 * Only runtime/kernels/k_reduce*.c, k_softmax*.c, k_sort.c and k_einsum.c
 * include it. */
#ifndef OPMIG_K_REDUCE_INT_H
#define OPMIG_K_REDUCE_INT_H

#include "runtime/rt_int.h"

/* k_reduce_arg.c */
int kr_argmax(struct rt_kctx *k);
int kr_argmin(struct rt_kctx *k);
int kr_cumsum(struct rt_kctx *k);
int kr_cumprod(struct rt_kctx *k);

/* Working precision of a numeric dtype: float32 stays float, other floats
 * become double, integers and bool int64 (uint64 keeps its own). */
enum kr_work { KR_F32, KR_F64, KR_I64, KR_U64 };
enum kr_work kr_work_of(int dtype);
size_t kr_work_size(enum kr_work w);
/* Is dtype's layout already w? */
int kr_native(int dtype, enum kr_work w);

/* The n elements of t converted to working type w: a new malloc'd buffer
 * in *buf, or (when t's layout already is w) t->data itself with *owned 0.
 * Returns 0 or IR_ENOMEM (diag set). */
int kr_load(struct rt_kctx *k, const struct rt_value *t, enum kr_work w,
	    void **buf, int *owned);
/* Store n working elements of w into t's data (converting). */
void kr_store(struct rt_value *t, enum kr_work w, const void *src);

/* dst = src (rank dims, elements of es bytes) with dims permuted: dst dim
 * i is src dim perm[i]. */
void kr_transpose(const void *src, void *dst, size_t es, int rank,
		  const int64_t *dims, const int *perm);

/* Softmax (lg 0) or LogSoftmax (lg 1) of n contiguous float32 values
 * x into y, in AVX-512 (k_softmax512.c): 1 done, 0 not (no AVX-512). */
int kr_softmax_line512(int lg, const float *x, float *y, int64_t n);
/* ... of n rows S apart, I columns each (the axis not innermost), each
 * column as a line: 1 done, 0 not (no AVX-512). */
int kr_softmax_rows512(int lg, const float *x, float *y, int64_t n, int64_t S, int64_t I);

/* ReduceMin (lt 1) or ReduceMax (0) of float32 in AVX-512
 * (k_reduce512.c), the values k_reduce.c's loops give: of a line of n
 * into *out, 1 done, 0 not (no AVX-512; a NaN or a zero result, which the
 * loop then redoes); of rows rows stride apart, cols columns each, into
 * y, 1 done, 0 not (no AVX-512). */
int kr_maxmin_line512(int lt, const float *x, int64_t n, float *out);
int kr_maxmin_rows512(int lt, const float *x, int64_t rows, int64_t stride, int64_t cols,
		      float *y);
/* ... of each of lines contiguous lines of n into y: 1 done, 0 not (no
 * AVX-512); a line holding a NaN gets a NaN there, which the loop redoes
 * (it keeps the last NaN). */
int kr_maxmin_lines512(int lt, const float *x, int64_t lines, int64_t n, float *y);

/* ReduceSum's double sums of float32 in AVX-512 (k_reduce512.c): of rows
 * rows stride apart, cols columns each, into acc, in the loop's order
 * (the same sums); of each of lines contiguous lines of n into s, in
 * another order (as accurate).  1 done, 0 not (no AVX-512). */
int kr_sum_rows512(const float *x, int64_t rows, int64_t stride, int64_t cols, double *acc);
int kr_sum_lines512(const float *x, int64_t lines, int64_t n, double *s);

/* ReduceLogSumExp of float32 in AVX-512 (k_reduce512.c): e^(x - m) in
 * float32 lanes summed in double, within a few float32 ulps of the
 * loops' all-double values; of a line into *out, of rows (as above) into
 * y: 1 done, 0 not (no AVX-512, a NaN, or an infinite maximum: the loops
 * then). */
int kr_lse_line512(const float *x, int64_t n, float *out);
int kr_lse_rows512(const float *x, int64_t rows, int64_t stride, int64_t cols, float *y);

/* ArgMax (max 1) or ArgMin of a float32 line of n in AVX-512
 * (k_reduce512.c), select_last_index last: its index into *out, 1 done,
 * 0 not (no AVX-512, or a NaN: the loop decides). */
int kr_arg_line512(int max, int last, const float *x, int64_t n, int64_t *out);

/* [outer, n, inner] view of a tensor around axis. */
void kr_split(const struct rt_value *t, int axis, int64_t *outer, int64_t *n,
	      int64_t *inner);

#endif
