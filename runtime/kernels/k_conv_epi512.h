/* k_conv_epi512.h: one step of a node's epilogue (rt_int.h, struct
 * rt_epilogue) on a vector of sixteen floats, the operations of chain.c's
 * step_span in AVX-512 registers: no FMA; max(m, y) is y < m ? m : y (NaN
 * y kept) and min(a, t) is t > a ? a : t, as _mm512_max_ps(x, y) is
 * x > y ? x : y.  m and a are the step's coefficients for each lane's
 * channel; SiLU is the Sigmoid kernel's vector sigmoid times r.  For the
 * AVX-512 kernels (k_conv_dtile.c, k_conv_dw.c): include
 * after immintrin.h. */
#ifndef OPMIG_K_CONV_EPI512_H
#define OPMIG_K_CONV_EPI512_H

#include "runtime/kernels/k_exp512.h"
#include "runtime/rt_int.h"

/* v < 1 ? (v > 0 ? v : 0) : 1 (a NaN v gives 1), k_act.c's UNIT_CLAMP */
__attribute__((target("avx512f"), always_inline))
static inline __m512 knn_unit_clamp512(__m512 v)
{
	__mmask16 lt1 = _mm512_cmp_ps_mask(v, _mm512_set1_ps(1.0f), _CMP_LT_OQ);
	__mmask16 gt0 = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_GT_OQ);

	return _mm512_mask_mov_ps(_mm512_set1_ps(1.0f), lt1, _mm512_maskz_mov_ps(gt0, v));
}

__attribute__((target("avx512f"), always_inline))
static inline __m512 knn_epi512_step(int kind, __m512 r, __m512 m, __m512 a)
{
	switch (kind) {
	case RT_CHAIN_BN:
		return _mm512_add_ps(_mm512_mul_ps(r, m), a);
	case RT_CHAIN_MUL:
		return _mm512_mul_ps(r, m);
	case RT_CHAIN_ADD:
		return _mm512_add_ps(r, m);
	case RT_CHAIN_SUB:
		return _mm512_sub_ps(r, m);
	case RT_CHAIN_RSUB:
		return _mm512_sub_ps(m, r);
	case RT_CHAIN_DIV:
		return _mm512_div_ps(r, m);
	case RT_CHAIN_RDIV:
		return _mm512_div_ps(m, r);
	case RT_CHAIN_CLIP:
		return _mm512_min_ps(a, _mm512_max_ps(m, r));
	case RT_CHAIN_MOVE:   /* a Transpose or Reshape after: no data op */
		return r;
	case RT_CHAIN_SILU:   /* as the Sigmoid kernel (k_act512.c), then Mul */
		return _mm512_mul_ps(r, knn_sigmoid512(r));
	case RT_CHAIN_HSWISH:   /* r * clamp(r / 6 + 0.5), as k_act.c's */
		return _mm512_mul_ps(r, knn_unit_clamp512(_mm512_add_ps(
					_mm512_div_ps(r, _mm512_set1_ps(6.0f)), _mm512_set1_ps(0.5f))));
	case RT_CHAIN_HSIG:   /* clamp(m * r + a) */
		return knn_unit_clamp512(_mm512_add_ps(_mm512_mul_ps(m, r), a));
	default:   /* RT_CHAIN_RELU */
		return _mm512_max_ps(_mm512_setzero_ps(), r);
	}
}

/* r rounded to float16 and back (nearest even, F16C's conversion, as
 * rt_float_round_n): a float16 node's result computed in float32. */
__attribute__((target("avx512f"), always_inline))
static inline __m512 knn_epi512_round(__m512 r)
{
	return _mm512_cvtph_ps(_mm512_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

/* The step, then (round: a float16 epilogue's, rt_int.h) its result
 * rounded as its node's is; SiLU's sigmoid rounded first, as the Sigmoid
 * node's (rt_silu_round). */
__attribute__((target("avx512f"), always_inline))
static inline __m512 knn_epi512_rstep(int kind, __m512 r, __m512 m, __m512 a, int round)
{
	if (!round)
		return knn_epi512_step(kind, r, m, a);
	if (kind == RT_CHAIN_SILU)
		return knn_epi512_round(_mm512_mul_ps(r, knn_epi512_round(knn_sigmoid512(r))));
	return knn_epi512_round(knn_epi512_step(kind, r, m, a));
}

/* The nv vectors at acc rounded first when e says so (head_round: a
 * float16 node's result, before its steps). */
__attribute__((target("avx512f"), always_inline))
static inline void knn_epi512_head(const struct rt_epilogue *e, const int nv, __m512 *acc)
{
	if (e && e->head_round) {
#pragma GCC unroll 8
		for (int i = 0; i < nv; i++)
			acc[i] = knn_epi512_round(acc[i]);
	}
}

/* Every step of e (no tensor operands) on nv <= 4 vectors of channel ch's
 * positions: the plane-at-a-time kernels (k_conv_dwp.c, k_conv_dwf.c). */
__attribute__((target("avx512f"), always_inline))
static inline void knn_epi512_channel(const struct rt_epilogue *e, int64_t ch, const int nv,
				      __m512 *acc)
{
	knn_epi512_head(e, nv, acc);
	for (size_t s = 0; e && s < e->n; s++) {
		__m512 m = _mm512_set1_ps(e->coef[2 * e->c * (int64_t)s + ch]);
		__m512 a = _mm512_set1_ps(e->coef[2 * e->c * (int64_t)s + e->c + ch]);

#pragma GCC unroll 4
		for (int i = 0; i < nv; i++)
			acc[i] = knn_epi512_rstep(e->kind[s], acc[i], m, a, e->round);
	}
}

#endif
