/* gemm.h: dense matrix products for the interpreter's kernels (Conv,
 * MatMul, Gemm, attention, RNN): row-major C = alpha * op(A) * op(B) +
 * beta * C in float32 and float64 over OpenBLAS.
 *
 * Threads: OpenBLAS is set to one thread on first use (its own pool would
 * fight the session's); rt_gemm_*() run on the calling thread, and
 * rt_gemm_*_par() split C by rows (or by columns when N is larger) over
 * the session's threads.  Callers that already run one product per
 * thread (batches, groups) use the plain form inside rt_parallel_for.
 *
 * Shapes: op(A) is m x k, op(B) is k x n, C is m x n; trans_a means A is
 * stored k x m (lda >= m), else m x k (lda >= k); likewise for B.  beta 0
 * ignores C's previous contents (NaN included).  k == 0 gives beta * C.
 * Dimensions must fit in an int (OpenBLAS's blasint).
 * Ownership: every pointer is borrowed; nothing is kept between calls. */
#ifndef OPMIG_GEMM_H
#define OPMIG_GEMM_H

#include <stdint.h>

struct rt_kctx;

void rt_gemm_f32(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
		 float alpha, const float *a, int64_t lda,
		 const float *b, int64_t ldb,
		 float beta, float *c, int64_t ldc);
void rt_gemm_f64(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
		 double alpha, const double *a, int64_t lda,
		 const double *b, int64_t ldb,
		 double beta, double *c, int64_t ldc);

/* The same split over the session's threads of kernel context kc (inline
 * when it has one thread, the product is small, or the caller already
 * runs inside a parallel chunk). */
void rt_gemm_f32_par(struct rt_kctx *kc, int trans_a, int trans_b,
		     int64_t m, int64_t n, int64_t k,
		     float alpha, const float *a, int64_t lda,
		     const float *b, int64_t ldb,
		     float beta, float *c, int64_t ldc);
/* rt_gemm_f32_par splitting from min_work (m n k) instead of its ~1e6:
 * for a caller running many small products in a row (a recurrent cell's
 * steps), where the pool's workers are awake between them. */
void rt_gemm_f32_split(struct rt_kctx *kc, double min_work, int trans_a, int trans_b,
		       int64_t m, int64_t n, int64_t k,
		       float alpha, const float *a, int64_t lda,
		       const float *b, int64_t ldb,
		       float beta, float *c, int64_t ldc);
void rt_gemm_f64_par(struct rt_kctx *kc, int trans_a, int trans_b,
		     int64_t m, int64_t n, int64_t k,
		     double alpha, const double *a, int64_t lda,
		     const double *b, int64_t ldb,
		     double beta, double *c, int64_t ldc);

/* Keep OpenBLAS single-threaded from now on and end the worker threads it
 * started when it loaded (they spin for a while looking for work: a tenth
 * of a second of another core at every start).  Call before any product. */
void rt_gemm_single_thread(void);

/* OpenBLAS picks its kernels when it loads, from the CPU model; on CPUs
 * it does not know (this project's VMs) it falls back to its generic
 * "Prescott" SSE3 kernels, 3-6x slower.  The kernel set worth forcing with
 * the OPENBLAS_CORETYPE environment variable (read only at load, so a
 * program sets it and re-executes itself), or NULL when OpenBLAS already
 * uses kernels matching the CPU's AVX-512 / AVX2. */
const char *rt_gemm_better_coretype(void);
/* OpenBLAS's kernel set in use ("SkylakeX", "Haswell", "Prescott"...). */
const char *rt_gemm_coretype(void);

#endif
