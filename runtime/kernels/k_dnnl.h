/* k_dnnl.h: what the kernels on oneDNN (k_conv_dnnl.c, k_mm_dnnl.c)
 * share (k_dnnl.c): the CPU engine, whether integer primitives are exact
 * here, the OpenMP thread count, a count of the primitives run, and the
 * process-wide buffers for data in oneDNN's layouts.  Private to
 * runtime/kernels/. */
#ifndef OPMIG_K_DNNL_H
#define OPMIG_K_DNNL_H

#include <stddef.h>
#include <stdint.h>

#include <oneapi/dnnl/dnnl.h>

/* oneDNN's CPU engine, or NULL when it could not be made or OPMIG_NO_DNNL
 * is set (opmig's own kernels then run). */
dnnl_engine_t knn_dnnl_engine(void);
/* A primitive descriptor for d under attr into *pd: oneDNN's first
 * choice, or, when amx is 0, its first implementation not on AMX (0, or
 * -1 when there is none). */
int knn_dnnl_pd(dnnl_primitive_desc_t *pd, const_dnnl_op_desc_t d,
		const_dnnl_primitive_attr_t attr, int amx);
/* Whether an integer product of k terms a sum (a convolution's input
 * channels per group times its window) and macs products in all runs on
 * AMX: on this Xeon oneDNN's AMX kernels took half the time from 256
 * terms and 20M products and lost below (bench/README.md, "AMX");
 * never for a 3-D convolution (three_d: see k_dnnl.c).  The test hook
 * OPMIG_DNNL_AMX: "0" never (oneDNN capped at AVX-512 VNNI), "all"
 * wherever oneDNN takes it. */
#define KNN_DNNL_AMX_MIN_K 256
#define KNN_DNNL_AMX_MIN_MACS 20000000
int knn_dnnl_amx_pays(int64_t k, int64_t macs, int three_d);
/* A new memory *m of layout to holding the data at data (layout from)
 * reordered, on stream st: a constant operand copied once into the
 * layout a primitive picked.  0, or -1 (*m then to destroy, or NULL). */
int knn_dnnl_reorder_new(dnnl_stream_t st, const dnnl_memory_desc_t *from, const void *data,
			 const dnnl_memory_desc_t *to, dnnl_memory_t *m);
/* oneDNN's threads (OpenMP's) for the next primitive made or run. */
void knn_dnnl_threads(int n);
/* One more primitive run (knn_dnnl_runs counts them: the tests). */
void knn_dnnl_count(void);
/* One more integer primitive run (counted in knn_dnnl_runs too;
 * knn_dnnl_int_runs counts them alone: the tests). */
void knn_dnnl_int_count(void);
/* One more run with a BatchNormalization folded into the product
 * (knn_dnnl_folds counts them: the tests). */
void knn_dnnl_fold_count(void);

/* oneDNN's integer primitives take s8 weights: n 8-bit values of dtype
 * (IR_DTYPE_INT8 or UINT8) as s8, uint8 minus 128. */
void knn_dnnl_to_s8(int dtype, const void *v, int64_t n, int8_t *s8);
/* For n channels with zero points z (1 or n of them, or NULL): d[i] with
 * v - z[i] = s8(v) + d[i]; whether some d[i] is not 0 (the caller then
 * corrects the sums by d times the sums of the other operand). */
int knn_dnnl_zp_shift(int dtype, const double *z, int64_t nz, int64_t n, int32_t *d);

/* oneDNN's integer primitives take each int32 sum through float32 on the
 * way out, even into an s32 destination (2^24 + 3 came out as 2^24 + 4),
 * so they are exact only for sums within 2^24: 255 (the largest |A - za|
 * or |x - xz|) times the sum of a weight column's or channel's |s8|
 * values must stay within it. */
#define KNN_DNNL_F32_EXACT 16777216   /* 2^24 */

/* Past that, an operand of 8-bit weights goes in split into parts, each
 * value v into parts that differ by at most one and add up to v, their
 * sums added in int32 (a part's values are at most |v| / parts + 1, so
 * its bound is 255 * (most / parts + terms)).  The parts needed, for
 * most the largest sum of |s8| over an output's terms terms (corr: an
 * all-ones output of terms rides along): 1 when none, 0 when no number up
 * to KNN_DNNL_MAX_PARTS does (or the ones alone pass 2^24). */
#define KNN_DNNL_MAX_PARTS 8
int knn_dnnl_parts(int64_t most, int64_t terms, int corr);
/* Part p of parts of the s8 value v: v = q parts + r (0 <= r < parts)
 * gives q + 1 to the first r parts and q to the rest. */
static inline int8_t knn_dnnl_part(int v, int parts, int p)
{
	int q = v >= 0 ? v / parts : -((-v + parts - 1) / parts);

	return (int8_t)(q + (p < v - q * parts));
}

/* Buffers of data in oneDNN's layouts, one each for the process, grown
 * to the largest asked for and kept (fresh memory per call was page
 * faults on every run), used by one primitive at a time: between
 * knn_dnnl_lock and knn_dnnl_unlock. */
enum { KNN_DN_SRC, KNN_DN_DST, KNN_DN_PAD, KNN_DN_BUFS };
void knn_dnnl_lock(void);
void knn_dnnl_unlock(void);
/* Buffer i of at least n bytes, 64-byte aligned, into *p (NULL when n is
 * 0); -1 when memory ran out.  Under the lock. */
int knn_dnnl_buf(int i, size_t n, void **p);

#endif
