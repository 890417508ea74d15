/* pgemm_w.c: the weights-side products of pgemm.h.  A (a layer's
 * weights, m x k) is packed once into tiles of RT_PG_MR rows whose steps
 * are contiguous: the kernel's broadcast operand.  B (an input or im2col
 * matrix, k x n) is copied per call, RT_PG_KC steps of one panel of
 * RT_PG_NR columns at a time (32 KiB, in L1), and every tile of A meets
 * the panel before the next is copied; A stays in L2.  C comes out in
 * B's own layout (a convolution's channels by positions), so nothing is
 * transposed afterwards.  B's panels come from the caller's function:
 * copied from a matrix, or gathered from an image (im2col by panel). */
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/pgemm.h"
#include "runtime/rt_int.h"

int64_t rt_pgemm_wpacked_len(int64_t m, int64_t k)
{
	return (m + RT_PG_MR - 1) / RT_PG_MR * RT_PG_MR * k;
}

void rt_pgemm_wpack(const float *a, int64_t lda, int64_t m, int64_t k, float *pa)
{
	/* A's rows are the tiles' columns: step s of row i at a[i * lda + s] */
	rt_pgemm_pack_panels(a, 1, lda, k, m, RT_PG_MR, pa);
}

struct pw_job {
	int64_t m, n, k, ldc;
	const float *pa, *bias;
	rt_pgemm_panel_fn panel;
	const void *pctx;
	float *c;
	int failed;
};

void rt_pgemm_rows_panel(const void *ctx, int64_t k0, int64_t kc, int64_t j0,
			 int64_t nr, float *dst)
{
	const struct rt_pgemm_rows *r = ctx;
	const float *src = r->b + k0 * r->ldb + j0;

	for (int64_t s = 0; s < kc; s++, dst += RT_PG_NR, src += r->ldb) {
		memcpy(dst, src, (size_t)nr * sizeof(float));
		for (int64_t j = nr; j < RT_PG_NR; j++)
			dst[j] = 0;
	}
}

/* Panels [lo, hi) of B (and so of C) against all of A. */
static void pw_panels(void *ctx, int64_t lo, int64_t hi)
{
	struct pw_job *jb = ctx;
	float *buf = aligned_alloc(64, (size_t)RT_PG_KC * RT_PG_NR * sizeof(float));

	if (!buf) {
		jb->failed = 1;
		return;
	}
	for (int64_t p = lo; p < hi; p++) {
		int64_t j0 = p * RT_PG_NR;
		int nr = (int)(jb->n - j0 < RT_PG_NR ? jb->n - j0 : RT_PG_NR);

		for (int64_t k0 = 0; k0 == 0 || k0 < jb->k; k0 += RT_PG_KC) {
			int64_t kc = jb->k - k0 < RT_PG_KC ? jb->k - k0 : RT_PG_KC;

			jb->panel(jb->pctx, k0, kc, j0, nr, buf);
			for (int64_t i0 = 0; i0 < jb->m; i0 += RT_PG_MR)
				rt_pgemm_k512((int)(jb->m - i0 < RT_PG_MR ? jb->m - i0 : RT_PG_MR),
					      nr, kc, jb->pa + i0 * jb->k + k0 * RT_PG_MR,
					      buf, jb->c + i0 * jb->ldc + j0, jb->ldc, k0 == 0,
					      jb->bias ? jb->bias + i0 : NULL, 1);
		}
	}
	free(buf);
}

int rt_pgemm_wrun(struct rt_kctx *kc, int64_t m, int64_t n, int64_t k,
		  const float *pa, rt_pgemm_panel_fn panel, const void *pctx,
		  const float *bias, float *c, int64_t ldc)
{
	struct pw_job jb = { .m = m, .n = n, .k = k, .ldc = ldc, .pa = pa, .bias = bias,
			     .panel = panel, .pctx = pctx, .c = c };
	int64_t panels = (n + RT_PG_NR - 1) / RT_PG_NR;

	if (m <= 0 || n <= 0)
		return 0;
	rt_pgemm_split(kc, panels, (double)m * (double)n * (double)k, pw_panels, &jb);
	return jb.failed ? -1 : 0;
}
