/* pgemm.c: packing and the blocked loops of pgemm.h around the AVX-512
 * micro-kernel.  For each block of RT_PG_MC rows and RT_PG_KC steps of A
 * (kept in L2), every panel of B given to this thread meets every tile of
 * the block: the panel's KC steps (32 KiB) stay in L1 while the block's
 * tiles stream past it. */
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/pgemm.h"
#include "runtime/rt_int.h"

int rt_pgemm_ok(void)
{
	static int ok = -1;

	if (ok < 0) {
		const char *off = getenv("OPMIG_NO_PGEMM");

		ok = rt_cpu_avx512f() && !(off && *off && *off != '0');
	}
	return ok;
}

int64_t rt_pgemm_packed_len(int64_t k, int64_t n)
{
	return (n + RT_PG_NR - 1) / RT_PG_NR * RT_PG_NR * k;
}

/* Steps [s0, k) of a panel's columns [j0, j0 + w) into pb (width
 * floats a step, the columns past w zero), column by column when the
 * columns' steps are contiguous (rs 1: a convolution's weights, each
 * output channel a row), else step by step. */
static void pack_rest(const float *b, int64_t rs, int64_t cs, int64_t s0, int64_t k,
		      int64_t j0, int64_t w, int width, float *pb)
{
	for (int64_t s = s0; s < k; s++)
		for (int64_t j = w; j < width; j++)
			pb[s * width + j] = 0;
	if (rs == 1) {
		for (int64_t j = 0; j < w; j++)
			for (int64_t s = s0; s < k; s++)
				pb[s * width + j] = b[s + (j0 + j) * cs];
		return;
	}
	for (int64_t s = s0; s < k; s++)
		for (int64_t j = 0; j < w; j++)
			pb[s * width + j] = b[s * rs + (j0 + j) * cs];
}

void rt_pgemm_pack_panels(const float *b, int64_t rs, int64_t cs, int64_t k,
			  int64_t n, int width, float *pb)
{
	for (int64_t j0 = 0; j0 < n; j0 += width, pb += k * width) {
		int64_t w = n - j0 < width ? n - j0 : width, s0 = 0;

		/* contiguous steps, whole blocks of 16 columns: 16 x 16
		 * transposes (weights packed in the first run of a
		 * convolution had been a sixth of resnet50's first run,
		 * gathered one float at a time across rows) */
		if (rs == 1 && w == width && width % 16 == 0 && rt_cpu_avx512f())
			for (; s0 + 16 <= k; s0 += 16)
				for (int jj = 0; jj < width; jj += 16)
					rt_pgemm_tr16_k512(b + (j0 + jj) * cs + s0, cs,
							   pb + s0 * width + jj, width);
		/* narrower panels (A's tiles of RT_PG_MR rows): the same with
		 * fewer rows */
		if (rs == 1 && w == width && width < 16 && rt_cpu_avx512f())
			for (; s0 + 16 <= k; s0 += 16)
				rt_pgemm_trn_k512(b + j0 * cs + s0, cs, width, pb + s0 * width, width);
		pack_rest(b, rs, cs, s0, k, j0, w, width, pb);
	}
}

void rt_pgemm_pack(const float *b, int64_t rs, int64_t cs, int64_t k,
		   int64_t n, float *pb)
{
	rt_pgemm_pack_panels(b, rs, cs, k, n, RT_PG_NR, pb);
}

struct pg_job {
	int64_t m, n, k, lda, ldc;
	int a_rows;               /* A(i, kk) at a[i * lda + kk] */
	const float *a, *pb, *bias;
	float *c;
	int failed;
};

/* Rows [i0, i0 + mc) by steps [k0, k0 + kc) of A as tiles of MR rows,
 * each kc steps of MR floats (row i of a tile at offset i; rows past mc
 * not written, or zero for a row-major A, never stored by the kernel). */
static void pg_pack_a(const struct pg_job *jb, int64_t i0, int64_t mc,
		      int64_t k0, int64_t kc, float *dst)
{
	if (jb->a_rows) {   /* each row's steps contiguous: pgemm_w.c's tiles */
		rt_pgemm_pack_panels(jb->a + i0 * jb->lda + k0, 1, jb->lda, kc, mc, RT_PG_MR,
				     dst);
		return;
	}
	for (int64_t t = 0; t < mc; t += RT_PG_MR, dst += kc * RT_PG_MR) {
		int64_t mr = mc - t < RT_PG_MR ? mc - t : RT_PG_MR;
		const float *src = jb->a + k0 * jb->lda + i0 + t;

		for (int64_t s = 0; s < kc; s++)
			memcpy(dst + s * RT_PG_MR, src + s * jb->lda, (size_t)mr * sizeof(float));
	}
}

/* Panels [lo, hi) of B against all of A. */
static void pg_panels(void *ctx, int64_t lo, int64_t hi)
{
	struct pg_job *jb = ctx;
	/* A's block as large as this product needs (a recurrent cell's few
	 * rows: 12 KiB, not 480, which came from fresh pages each step) */
	int64_t rows = (jb->m < RT_PG_MC ? jb->m : RT_PG_MC) + RT_PG_MR - 1;
	float *buf = NULL;

	rows -= rows % RT_PG_MR;
	if (!(buf = malloc((size_t)rows * (jb->k < RT_PG_KC ? (jb->k > 0 ? jb->k : 1) : RT_PG_KC) *
			   sizeof(float)))) {
		jb->failed = 1;
		return;
	}
	for (int64_t i0 = 0; i0 < jb->m; i0 += RT_PG_MC) {
		int64_t mc = jb->m - i0 < RT_PG_MC ? jb->m - i0 : RT_PG_MC;

		for (int64_t k0 = 0; k0 == 0 || k0 < jb->k; k0 += RT_PG_KC) {
			int64_t kc = jb->k - k0 < RT_PG_KC ? jb->k - k0 : RT_PG_KC, p;

			pg_pack_a(jb, i0, mc, k0, kc, buf);
			/* a few rows: RT_PG_WIDE panels at once (pg_wide) */
			for (p = lo; mc <= 3 && p + RT_PG_WIDE <= hi; p += RT_PG_WIDE) {
				int64_t j0 = p * RT_PG_NR, last = j0 + (RT_PG_WIDE - 1) * RT_PG_NR;

				rt_pgemm_k512_wide((int)mc, (int)(jb->n - last < RT_PG_NR ?
								  jb->n - last : RT_PG_NR), kc, buf,
						   jb->pb + j0 * jb->k + k0 * RT_PG_NR,
						   RT_PG_NR * jb->k, jb->c + i0 * jb->ldc + j0, jb->ldc,
						   k0 == 0, jb->bias ? jb->bias + j0 : NULL);
			}
			for (; p < hi; p++) {
				int64_t j0 = p * RT_PG_NR;
				int nr = (int)(jb->n - j0 < RT_PG_NR ? jb->n - j0 : RT_PG_NR);
				const float *pbk = jb->pb + j0 * jb->k + k0 * RT_PG_NR;

				for (int64_t t = 0; t < mc; t += RT_PG_MR)
					rt_pgemm_k512((int)(mc - t < RT_PG_MR ? mc - t : RT_PG_MR),
						      nr, kc, buf + t * kc, pbk,
						      jb->c + (i0 + t) * jb->ldc + j0, jb->ldc,
						      k0 == 0, jb->bias ? jb->bias + j0 : NULL, 0);
			}
		}
	}
	free(buf);
}

static int pg_run(struct rt_kctx *kc, struct pg_job *jb)
{
	int64_t panels = (jb->n + RT_PG_NR - 1) / RT_PG_NR;

	if (jb->m <= 0 || jb->n <= 0)
		return 0;
	rt_pgemm_split(kc, panels, (double)jb->m * (double)jb->n * (double)jb->k,
		       pg_panels, jb);
	return jb->failed ? -1 : 0;
}

int rt_pgemm_run(struct rt_kctx *kc, int64_t m, int64_t n, int64_t k,
		 const float *a, int64_t lda, const float *pb,
		 const float *bias, float *c, int64_t ldc)
{
	struct pg_job jb = { .m = m, .n = n, .k = k, .lda = lda, .ldc = ldc, .a = a,
			     .pb = pb, .bias = bias, .c = c };

	return pg_run(kc, &jb);
}

int rt_pgemm_run_rows(struct rt_kctx *kc, int64_t m, int64_t n, int64_t k,
		      const float *a, int64_t lda, const float *pb,
		      const float *bias, float *c, int64_t ldc)
{
	struct pg_job jb = { .m = m, .n = n, .k = k, .lda = lda, .ldc = ldc, .a_rows = 1,
			     .a = a, .pb = pb, .bias = bias, .c = c };

	return pg_run(kc, &jb);
}

void rt_pgemm_split(struct rt_kctx *kc, int64_t panels, double work,
		    void (*fn)(void *, int64_t, int64_t), void *ctx)
{
	if (kc && rt_threads(kc) > 1 && work >= 1e6)
		rt_parallel_for(kc, panels, 1, fn, ctx);
	else
		fn(ctx, 0, panels);
}

void rt_pgemm_transpose(const float *src, int64_t rows, int64_t ld,
			int64_t lo, int64_t hi, float *dst)
{
	int64_t j0 = lo;

	for (; j0 + 16 <= hi; j0 += 16) {
		int64_t i0 = 0;

		for (; i0 + 16 <= rows; i0 += 16)
			rt_pgemm_tr16_k512(src + i0 * ld + j0, ld, dst + j0 * rows + i0, rows);
		for (int64_t j = j0; j < j0 + 16; j++)
			for (int64_t i = i0; i < rows; i++)
				dst[j * rows + i] = src[i * ld + j];
	}
	for (int64_t j = j0; j < hi; j++)
		for (int64_t i = 0; i < rows; i++)
			dst[j * rows + i] = src[i * ld + j];
}
