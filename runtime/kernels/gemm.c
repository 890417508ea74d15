/* gemm.c: row-major float32/float64 matrix products over OpenBLAS's cblas
 * interface, single-threaded inside OpenBLAS and split over the session's
 * threads here (see gemm.h). */
#include <pthread.h>
#include <stddef.h>
#include <strings.h>

#include <cblas.h>

#include "runtime/kernels/gemm.h"
#include "runtime/rt_int.h"

static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

/* OpenBLAS's pthread build exports this (it ends its worker threads before
 * a fork); its serial and OpenMP builds may not: weak, called if there. */
extern void blas_thread_shutdown_(void) __attribute__((weak));

static void blas_init(void)
{
	openblas_set_num_threads(1);
}

void rt_gemm_single_thread(void)
{
	pthread_once(&blas_once, blas_init);
	if (blas_thread_shutdown_)
		blas_thread_shutdown_();
}

/* C = beta * C for the degenerate k == 0 product. */
#define SCALE_C(c, m, n, ldc, beta) do { \
	for (int64_t i_ = 0; i_ < (m); i_++) \
		for (int64_t j_ = 0; j_ < (n); j_++) \
			(c)[i_ * (ldc) + j_] = (beta) == 0 ? 0 : \
				(beta) * (c)[i_ * (ldc) + j_]; \
} while (0)

/* A product with one row or one column of C is a matrix-vector product:
 * OpenBLAS's gemm would copy the whole matrix into its packed layout
 * first (a Gemm of 1x1280 by 1280x1000 spent most of its time there).
 * m == 1: C's row = op(B)^T applied to A's row (stride 1, or lda when A
 * is stored transposed); else n == 1: C's column (stride ldc) = op(A)
 * applied to B's column.  beta 0 clears C first: gemv only scales it,
 * and 0 * NaN would stay NaN. */
#define GEMV(fn, T) do { \
	if (beta == 0) \
		SCALE_C(c, m, n, ldc, beta); \
	if (m == 1) \
		fn(CblasRowMajor, trans_b ? CblasNoTrans : CblasTrans, \
		   (int)(trans_b ? n : k), (int)(trans_b ? k : n), alpha, b, (int)ldb, \
		   a, trans_a ? (int)lda : 1, beta, c, 1); \
	else \
		fn(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, \
		   (int)(trans_a ? k : m), (int)(trans_a ? m : k), alpha, a, (int)lda, \
		   b, trans_b ? 1 : (int)ldb, beta, c, (int)ldc); \
} while (0)

void rt_gemm_f32(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
		 float alpha, const float *a, int64_t lda,
		 const float *b, int64_t ldb,
		 float beta, float *c, int64_t ldc)
{
	if (m <= 0 || n <= 0)
		return;
	if (k <= 0) {
		SCALE_C(c, m, n, ldc, beta);
		return;
	}
	pthread_once(&blas_once, blas_init);
	if (m == 1 || n == 1) {
		GEMV(cblas_sgemv, float);
		return;
	}
	cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
		    trans_b ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k,
		    alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
}

void rt_gemm_f64(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
		 double alpha, const double *a, int64_t lda,
		 const double *b, int64_t ldb,
		 double beta, double *c, int64_t ldc)
{
	if (m <= 0 || n <= 0)
		return;
	if (k <= 0) {
		SCALE_C(c, m, n, ldc, beta);
		return;
	}
	pthread_once(&blas_once, blas_init);
	if (m == 1 || n == 1) {
		GEMV(cblas_dgemv, double);
		return;
	}
	cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
		    trans_b ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k,
		    alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
}

/* One product split by rows (by_cols 0) or columns of C. */
struct split {
	int f64, trans_a, trans_b, by_cols;
	int64_t m, n, k, lda, ldb, ldc;
	double alpha, beta;
	const void *a, *b;
	void *c;
};

static void split_run(void *ctx, int64_t lo, int64_t hi)
{
	const struct split *s = ctx;
	int64_t m = s->m, n = s->n, ao = 0, bo = 0, co;

	if (s->by_cols) {
		n = hi - lo;
		bo = s->trans_b ? lo * s->ldb : lo;
		co = lo;
	} else {
		m = hi - lo;
		ao = s->trans_a ? lo : lo * s->lda;
		co = lo * s->ldc;
	}
	if (s->f64)
		rt_gemm_f64(s->trans_a, s->trans_b, m, n, s->k, s->alpha,
			    (const double *)s->a + ao, s->lda,
			    (const double *)s->b + bo, s->ldb, s->beta,
			    (double *)s->c + co, s->ldc);
	else
		rt_gemm_f32(s->trans_a, s->trans_b, m, n, s->k, (float)s->alpha,
			    (const float *)s->a + ao, s->lda,
			    (const float *)s->b + bo, s->ldb, (float)s->beta,
			    (float *)s->c + co, s->ldc);
}

/* Split when work (m n k) reaches min_work: below ~2 MFLOP a thread
 * hand-off costs more than it saves (rt_gemm_f32_par), unless the caller
 * runs many in a row with the pool's workers awake (rt_gemm_f32_split). */
static void split_go(struct rt_kctx *kc, struct split *s, double min_work)
{
	int64_t len, grain;
	double work = (double)s->m * (double)s->n * (double)(s->k > 0 ? s->k : 1);

	s->by_cols = s->n > s->m;
	len = s->by_cols ? s->n : s->m;
	if (!kc || rt_threads(kc) < 2 || work < min_work || len < 8) {
		split_run(s, 0, len);
		return;
	}
	grain = 4;
	rt_parallel_for(kc, len, grain, split_run, s);
}

void rt_gemm_f32_split(struct rt_kctx *kc, double min_work, int trans_a, int trans_b,
		       int64_t m, int64_t n, int64_t k,
		       float alpha, const float *a, int64_t lda,
		       const float *b, int64_t ldb,
		       float beta, float *c, int64_t ldc)
{
	struct split s = { 0, trans_a, trans_b, 0, m, n, k, lda, ldb, ldc,
			   alpha, beta, a, b, c };

	split_go(kc, &s, min_work);
}

void rt_gemm_f32_par(struct rt_kctx *kc, int trans_a, int trans_b,
		     int64_t m, int64_t n, int64_t k,
		     float alpha, const float *a, int64_t lda,
		     const float *b, int64_t ldb,
		     float beta, float *c, int64_t ldc)
{
	rt_gemm_f32_split(kc, 1e6, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void rt_gemm_f64_par(struct rt_kctx *kc, int trans_a, int trans_b,
		     int64_t m, int64_t n, int64_t k,
		     double alpha, const double *a, int64_t lda,
		     const double *b, int64_t ldb,
		     double beta, double *c, int64_t ldc)
{
	struct split s = { 1, trans_a, trans_b, 0, m, n, k, lda, ldb, ldc,
			   alpha, beta, a, b, c };

	split_go(kc, &s, 1e6);
}

const char *rt_gemm_coretype(void)
{
	const char *c = openblas_get_corename();

	return c ? c : "unknown";
}

const char *rt_gemm_better_coretype(void)
{
	static const char *const avx512[] = {
		"SkylakeX", "Cooperlake", "SapphireRapids", "Zen"
	};
	static const char *const avx2[] = {
		"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids",
		"Excavator"
	};
	const char *core = rt_gemm_coretype();

	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
		for (size_t i = 0; i < sizeof(avx512) / sizeof(avx512[0]); i++)
			if (!strcasecmp(core, avx512[i]))
				return NULL;
		return "SkylakeX";
	}
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
		for (size_t i = 0; i < sizeof(avx2) / sizeof(avx2[0]); i++)
			if (!strcasecmp(core, avx2[i]))
				return NULL;
		return "Haswell";
	}
	return NULL;
}
