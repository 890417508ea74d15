/* k_quant_row.c: the rows of k_quant_row.h.  The vector paths do what
 * quant_f32 does, lane by lane and in the same order (a division, the
 * clamp to +-2^22, the rounding by 1.5 * 2^23, the zero point, the clamp
 * to the range), with the NaN lanes zeroed by a mask, so they give its
 * bits; the elements past the last whole vector go through quant_f32.
 * Timings of the three paths: bench/README.md (issue 26). */
#include <immintrin.h>

#include "ir/ir.h"
#include "runtime/kernels/k_quant_row.h"
#include "runtime/kernels/pgemm.h"

/* round(x / s) + z, half to even, saturated to [lo, hi]; NaN gives 0.
 * The quotient is first clamped to +-2^22 (beyond every 16-bit range):
 * adding and taking away 1.5 * 2^23 then rounds it half to even as
 * nearbyintf does in the default rounding mode, without a library call
 * per element. */
static inline float quant_f32(float x, float s, float z, float lo, float hi)
{
	float v = x / s;

	v = v < -4194304.0f ? -4194304.0f : v > 4194304.0f ? 4194304.0f : v;
	v = (v + 12582912.0f) - 12582912.0f + z;
	v = v < lo ? lo : v > hi ? hi : v;
	return v == v ? v : 0;
}

static void range_of(int yt, float *lo, float *hi)
{
	switch (yt) {
	case IR_DTYPE_INT8: *lo = -128; *hi = 127; break;
	case IR_DTYPE_INT16: *lo = -32768; *hi = 32767; break;
	case IR_DTYPE_UINT16: *lo = 0; *hi = 65535; break;
	default: *lo = 0; *hi = 255; break;
	}
}

/* Elements [i, n) in C. */
static void row_c(int yt, const float *x, int64_t i, int64_t n, float s, float z, void *y)
{
	float lo, hi;

	range_of(yt, &lo, &hi);
	switch (yt) {
	case IR_DTYPE_INT8:
		for (; i < n; i++)
			((int8_t *)y)[i] = (int8_t)quant_f32(x[i], s, z, lo, hi);
		break;
	case IR_DTYPE_INT16:
		for (; i < n; i++)
			((int16_t *)y)[i] = (int16_t)quant_f32(x[i], s, z, lo, hi);
		break;
	case IR_DTYPE_UINT16:
		for (; i < n; i++)
			((uint16_t *)y)[i] = (uint16_t)quant_f32(x[i], s, z, lo, hi);
		break;
	default:
		for (; i < n; i++)
			((uint8_t *)y)[i] = (uint8_t)quant_f32(x[i], s, z, lo, hi);
		break;
	}
}

/* Sixteen lanes of quant_f32 as int32 (NaN lanes 0). */
__attribute__((target("avx512f"), always_inline))
static inline __m512i quant16(__m512 x, __m512 s, __m512 z, __m512 lo, __m512 hi)
{
	const __m512 big = _mm512_set1_ps(4194304.0f), mag = _mm512_set1_ps(12582912.0f);
	__m512 v = _mm512_div_ps(x, s);
	__mmask16 num = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);

	v = _mm512_min_ps(_mm512_max_ps(v, _mm512_sub_ps(_mm512_setzero_ps(), big)), big);
	v = _mm512_add_ps(_mm512_sub_ps(_mm512_add_ps(v, mag), mag), z);
	v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
	return _mm512_maskz_cvttps_epi32(num, v);
}

/* The whole vectors of a row into dtype yt (a constant where inlined). */
__attribute__((target("avx512f"), always_inline))
static inline int64_t rows512(int yt, const float *x, int64_t n, float s, float z, void *y)
{
	float lo, hi;
	__m512 vs = _mm512_set1_ps(s), vz = _mm512_set1_ps(z), vlo, vhi;
	int64_t i = 0;

	range_of(yt, &lo, &hi);
	vlo = _mm512_set1_ps(lo);
	vhi = _mm512_set1_ps(hi);
	for (; i + 16 <= n; i += 16) {
		__m512i q = quant16(_mm512_loadu_ps(x + i), vs, vz, vlo, vhi);

		if (yt == IR_DTYPE_INT16 || yt == IR_DTYPE_UINT16)
			_mm256_storeu_si256((__m256i *)((int16_t *)y + i), _mm512_cvtepi32_epi16(q));
		else
			_mm_storeu_si128((__m128i *)((int8_t *)y + i), _mm512_cvtepi32_epi8(q));
	}
	return i;
}

__attribute__((target("avx512f")))
static int64_t row512(int yt, const float *x, int64_t n, float s, float z, void *y)
{
	/* values are in y's range already: the truncating narrowings fit */
	switch (yt) {
	case IR_DTYPE_INT16: return rows512(IR_DTYPE_INT16, x, n, s, z, y);
	case IR_DTYPE_UINT16: return rows512(IR_DTYPE_UINT16, x, n, s, z, y);
	case IR_DTYPE_INT8: return rows512(IR_DTYPE_INT8, x, n, s, z, y);
	default: return rows512(IR_DTYPE_UINT8, x, n, s, z, y);
	}
}

/* Eight lanes of quant_f32 as int32 (NaN lanes 0). */
__attribute__((target("avx2"), always_inline))
static inline __m256i quant8(__m256 x, __m256 s, __m256 z, __m256 lo, __m256 hi)
{
	const __m256 big = _mm256_set1_ps(4194304.0f), mag = _mm256_set1_ps(12582912.0f);
	__m256 v = _mm256_div_ps(x, s);
	__m256 num = _mm256_cmp_ps(v, v, _CMP_ORD_Q);

	v = _mm256_min_ps(_mm256_max_ps(v, _mm256_sub_ps(_mm256_setzero_ps(), big)), big);
	v = _mm256_add_ps(_mm256_sub_ps(_mm256_add_ps(v, mag), mag), z);
	v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
	return _mm256_cvttps_epi32(_mm256_and_ps(v, num));
}

__attribute__((target("avx2"), always_inline))
static inline int64_t rows256(int yt, const float *x, int64_t n, float s, float z, void *y)
{
	float lo, hi;
	__m256 vs = _mm256_set1_ps(s), vz = _mm256_set1_ps(z), vlo, vhi;
	int64_t i = 0;

	range_of(yt, &lo, &hi);
	vlo = _mm256_set1_ps(lo);
	vhi = _mm256_set1_ps(hi);
	for (; i + 8 <= n; i += 8) {
		__m256i q = quant8(_mm256_loadu_ps(x + i), vs, vz, vlo, vhi);
		__m128i a = _mm256_castsi256_si128(q), b = _mm256_extracti128_si256(q, 1);

		/* the packs saturate, but every value is in range already */
		switch (yt) {
		case IR_DTYPE_INT16:
			_mm_storeu_si128((__m128i *)((int16_t *)y + i), _mm_packs_epi32(a, b));
			break;
		case IR_DTYPE_UINT16:
			_mm_storeu_si128((__m128i *)((int16_t *)y + i), _mm_packus_epi32(a, b));
			break;
		case IR_DTYPE_INT8:
			a = _mm_packs_epi32(a, b);
			_mm_storel_epi64((__m128i *)((int8_t *)y + i), _mm_packs_epi16(a, a));
			break;
		default:
			a = _mm_packs_epi32(a, b);
			_mm_storel_epi64((__m128i *)((int8_t *)y + i), _mm_packus_epi16(a, a));
			break;
		}
	}
	return i;
}

__attribute__((target("avx2")))
static int64_t row256(int yt, const float *x, int64_t n, float s, float z, void *y)
{
	switch (yt) {
	case IR_DTYPE_INT16: return rows256(IR_DTYPE_INT16, x, n, s, z, y);
	case IR_DTYPE_UINT16: return rows256(IR_DTYPE_UINT16, x, n, s, z, y);
	case IR_DTYPE_INT8: return rows256(IR_DTYPE_INT8, x, n, s, z, y);
	default: return rows256(IR_DTYPE_UINT8, x, n, s, z, y);
	}
}

static int cpu_avx2(void)
{
	static int ok = -1;

	if (ok < 0) {
		__builtin_cpu_init();
		ok = __builtin_cpu_supports("avx2") != 0;
	}
	return ok;
}

int kq_isa_ok(int isa)
{
	return isa == KQ_ISA_C || (isa == KQ_ISA_AVX2 && cpu_avx2()) ||
	       (isa == KQ_ISA_AVX512 && rt_cpu_avx512f());
}

int kq_isa_best(void)
{
	return rt_cpu_avx512f() ? KQ_ISA_AVX512 : cpu_avx2() ? KQ_ISA_AVX2 : KQ_ISA_C;
}

const char *kq_isa_name(int isa)
{
	return isa == KQ_ISA_AVX512 ? "avx512f" : isa == KQ_ISA_AVX2 ? "avx2" : "c";
}

void kq_row_quantize(int isa, int yt, const float *x, int64_t n, float s, int32_t z,
		     void *y)
{
	float zf = (float)z;
	int64_t i = 0;

	if (isa == KQ_ISA_AVX512)
		i = row512(yt, x, n, s, zf, y);
	else if (isa == KQ_ISA_AVX2)
		i = row256(yt, x, n, s, zf, y);
	row_c(yt, x, i, n, s, zf, y);
}

/* The C rule: an element below (above) the running value replaces it, a
 * NaN never does.  Both ends start at +0, so the result is the same in
 * any order (no -0.0 ever replaces +0): the vector paths fold lanes
 * independently, then the lanes and the tail by this rule.  vminps and
 * vmaxps give their second operand when either is NaN: the running value
 * is passed second. */
static void minmax_c(const float *x, int64_t i, int64_t n, float *mn, float *mx)
{
	float a = *mn, b = *mx;

	for (; i < n; i++) {
		a = x[i] < a ? x[i] : a;
		b = x[i] > b ? x[i] : b;
	}
	*mn = a;
	*mx = b;
}

__attribute__((target("avx512f")))
static int64_t minmax512(const float *x, int64_t n, float *mn, float *mx)
{
	__m512 a = _mm512_setzero_ps(), b = _mm512_setzero_ps();
	float la[16], lb[16];
	int64_t i = 0;

	for (; i + 16 <= n; i += 16) {
		__m512 v = _mm512_loadu_ps(x + i);

		a = _mm512_min_ps(v, a);
		b = _mm512_max_ps(v, b);
	}
	_mm512_storeu_ps(la, a);
	_mm512_storeu_ps(lb, b);
	minmax_c(la, 0, 16, mn, mx);
	minmax_c(lb, 0, 16, mn, mx);
	return i;
}

__attribute__((target("avx2")))
static int64_t minmax256(const float *x, int64_t n, float *mn, float *mx)
{
	__m256 a = _mm256_setzero_ps(), b = _mm256_setzero_ps();
	float la[8], lb[8];
	int64_t i = 0;

	for (; i + 8 <= n; i += 8) {
		__m256 v = _mm256_loadu_ps(x + i);

		a = _mm256_min_ps(v, a);
		b = _mm256_max_ps(v, b);
	}
	_mm256_storeu_ps(la, a);
	_mm256_storeu_ps(lb, b);
	minmax_c(la, 0, 8, mn, mx);
	minmax_c(lb, 0, 8, mn, mx);
	return i;
}

void kq_row_minmax(int isa, const float *x, int64_t n, float *mn, float *mx)
{
	int64_t i = 0;

	*mn = *mx = 0;
	if (isa == KQ_ISA_AVX512)
		i = minmax512(x, n, mn, mx);
	else if (isa == KQ_ISA_AVX2)
		i = minmax256(x, n, mn, mx);
	minmax_c(x, i, n, mn, mx);
}
