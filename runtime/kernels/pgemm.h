/* pgemm.h: float32 matrix products whose right operand is a constant
 * packed once (weights kept for a session), for products whose left
 * operand is small in one dimension: convolutions with few output
 * positions (ResNet-50's 7x7 stage).  OpenBLAS copies both operands into its packed layouts on every
 * call; when one of them is a layer's weights and the other has few rows,
 * that copy of the weights costs as much as the product.
 *
 *   C (m x n) = A (m x k) * B (k x n) + bias (n values, one per column)
 *
 * B is packed by rt_pgemm_pack into panels of RT_PG_NR columns (each
 * panel k rows of RT_PG_NR floats, columns past n zero).  A(i, kk) is
 * a[kk * lda + i]: a convolution's input or im2col matrix as it is, its
 * rows the products' k and its columns the output positions; it is copied
 * block by block into tiles of RT_PG_MR rows whose steps are contiguous,
 * the layout the kernel streams.  C is row-major (ldc).
 *
 * The micro-kernel (pgemm_k512.c) needs AVX-512F: rt_pgemm_ok() tells
 * whether the CPU has it (and OPMIG_NO_PGEMM=1 in the environment is not
 * set: the OpenBLAS paths, for comparison); callers use gemm.h otherwise.
 * Threads: rt_pgemm_run splits the panels of B over kc's threads. */
#ifndef OPMIG_PGEMM_H
#define OPMIG_PGEMM_H

#include <stdint.h>

#include "runtime/kernels/cpu_feat.h"   /* rt_cpu_*: kernels include them from here */

struct rt_kctx;

#define RT_PG_NR 32      /* columns per panel of B: two AVX-512 vectors */
#define RT_PG_MR 12      /* rows of A per tile (24 accumulators) */
#define RT_PG_KC 256     /* k steps per block: a panel's block is 32 KiB */
#define RT_PG_MC 480     /* rows of A per block: 480 KiB of packed A */

int rt_pgemm_ok(void);

/* Floats of packed B (k x n). */
int64_t rt_pgemm_packed_len(int64_t k, int64_t n);
/* The n columns of a k-step operand, element (kk, j) at b[kk * rs + j *
 * cs], into pb as panels of `width` columns, each k steps of width floats
 * (columns past n zero): B's panels here, A's tiles in pgemm_w.c. */
void rt_pgemm_pack_panels(const float *b, int64_t rs, int64_t cs, int64_t k,
			  int64_t n, int width, float *pb);
/* Pack B, element (kk, j) at b[kk * rs + j * cs], into pb. */
void rt_pgemm_pack(const float *b, int64_t rs, int64_t cs, int64_t k,
		   int64_t n, float *pb);

/* C = A * packed B (+ bias).  0, or -1 when scratch memory could not be
 * allocated (C then undefined). */
int rt_pgemm_run(struct rt_kctx *kc, int64_t m, int64_t n, int64_t k,
		 const float *a, int64_t lda, const float *pb,
		 const float *bias, float *c, int64_t ldc);
/* The same with A row-major: A(i, kk) at a[i * lda + kk] (a MatMul's
 * left operand). */
int rt_pgemm_run_rows(struct rt_kctx *kc, int64_t m, int64_t n, int64_t k,
		      const float *a, int64_t lda, const float *pb,
		      const float *bias, float *c, int64_t ldc);

/* Weights-side products (pgemm_w.c): C (m x n, row-major, ldc) = A * B +
 * bias (m values, one per row of C), A (m x k) packed once by
 * rt_pgemm_wpack (element (i, s) at a[i * lda + s]), B (k x n) given by
 * the function that copies its panels: a convolution's input or, without
 * ever being stored whole, its im2col matrix; C its output.  For products
 * whose positions (n) are many. */
int64_t rt_pgemm_wpacked_len(int64_t m, int64_t k);
void rt_pgemm_wpack(const float *a, int64_t lda, int64_t m, int64_t k, float *pa);
/* Copy steps [k0, k0 + kc) of B's columns [j0, j0 + nr) into dst:
 * RT_PG_NR floats per step, the columns past nr zero. */
typedef void (*rt_pgemm_panel_fn)(const void *ctx, int64_t k0, int64_t kc,
				  int64_t j0, int64_t nr, float *dst);
/* The panels of a row-major B: ctx a struct rt_pgemm_rows. */
struct rt_pgemm_rows {
	const float *b;
	int64_t ldb;
};
void rt_pgemm_rows_panel(const void *ctx, int64_t k0, int64_t kc, int64_t j0,
			 int64_t nr, float *dst);
/* 0, or -1 when scratch memory could not be allocated. */
int rt_pgemm_wrun(struct rt_kctx *kc, int64_t m, int64_t n, int64_t k,
		  const float *pa, rt_pgemm_panel_fn panel, const void *pctx,
		  const float *bias, float *c, int64_t ldc);

/* dst (row stride rows) = src (rows x ld, row stride ld) transposed, for
 * dst's rows [lo, hi) (src's columns): the products' C, computed
 * positions by channels, back in a convolution's channels-major layout. */
void rt_pgemm_transpose(const float *src, int64_t rows, int64_t ld,
			int64_t lo, int64_t hi, float *dst);

/* The micro-kernel: C's tile of mr (<= RT_PG_MR) rows and nr (<= RT_PG_NR)
 * columns at c (row stride ldc) from kc steps of a packed A tile (A(i, s)
 * at a[s * RT_PG_MR + i]) and of a packed panel pb (RT_PG_NR floats per
 * step).
 * first: store the product plus the bias (NULL: plus 0), bias[j] for
 * column j, or with bias_rows (pgemm_w.c) bias[i] for row i; else add
 * the product to C. */
void rt_pgemm_k512(int mr, int nr, int64_t kc, const float *a,
		   const float *pb, float *c, int64_t ldc, int first,
		   const float *bias, int bias_rows);

/* The same for mr <= 3 rows against RT_PG_WIDE whole panels at once, pb
 * the first's steps, the next ones pstride floats on, the last nr_last
 * columns wide; bias[j] for column j; no bias_rows.  The same bits as
 * rt_pgemm_k512 panel by panel. */
#define RT_PG_WIDE 4
void rt_pgemm_k512_wide(int mr, int nr_last, int64_t kc, const float *a, const float *pb,
			int64_t pstride, float *c, int64_t ldc, int first, const float *bias);

/* Panels [0, panels) of a product of `work` multiply-adds: fn(ctx, lo,
 * hi) split over kc's threads, or run on this one when kc is NULL, has
 * one thread, or the product is small. */
void rt_pgemm_split(struct rt_kctx *kc, int64_t panels, double work,
		    void (*fn)(void *, int64_t, int64_t), void *ctx);

/* The 16 x 16 block at src (row stride ls) transposed into dst (ld). */
void rt_pgemm_tr16_k512(const float *src, int64_t ls, float *dst, int64_t ld);
/* The same of rows < 16 rows (src's first rows, ls apart): 16 rows of
 * `rows` floats each at dst, ld apart. */
void rt_pgemm_trn_k512(const float *src, int64_t ls, int rows, float *dst, int64_t ld);

#endif
