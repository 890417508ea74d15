/* k_pool512.h: the fold of the AVX-512 pool kernels (k_pool_cb.c,
 * k_pool_s1.c, k_pool_nhwc.c) on sixteen lanes: an average's sum, or a
 * max as the plane loops of k_pool.c take it (KNN_MAXIN: x when larger
 * or NaN, so a NaN once in acc stays).  Include after immintrin.h. */
#ifndef OPMIG_K_POOL512_H
#define OPMIG_K_POOL512_H

__attribute__((target("avx512f"), always_inline))
static inline __m512 knn_fold512(__m512 acc, __m512 x, int avg)
{
	__mmask16 take;

	if (avg)
		return _mm512_add_ps(acc, x);
	take = _mm512_cmp_ps_mask(x, acc, _CMP_GT_OQ) | _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
	return _mm512_mask_blend_ps(take, acc, x);
}

#endif
