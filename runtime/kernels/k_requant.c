/* k_requant.c: requantizing exact integer sums into 8-bit codes (and
 * float8), for the qlinear family (k_qlinear.c) and oneDNN's integer
 * convolutions (k_conv_dnnl_int.c): float32(sum + bias) * multiplier,
 * rounded half to even, plus the zero point, saturated, as onnxruntime's
 * MLAS requantizes, a value at a time (knn_store_q), a plane, a row of
 * per-column multipliers or channels-last pixels at a time in vectors
 * (AVX-512 where the CPU has it, else gcc's vectors of the same C), every
 * path the same bits. */
#include <immintrin.h>
#include <math.h>

#include "runtime/kernels/cpu_feat.h"   /* rt_cpu_avx512core */
#include "runtime/kernels/k_conv_int.h"

static int is_f8(int dtype)
{
	return dtype == IR_DTYPE_FLOAT8E4M3FN || dtype == IR_DTYPE_FLOAT8E4M3FNUZ ||
	       dtype == IR_DTYPE_FLOAT8E5M2 || dtype == IR_DTYPE_FLOAT8E5M2FNUZ;
}

/* Requantize the exact accumulator acc (bias included) with the float32
 * multiplier mult = in_scale * w_scale / y_scale: float32 (acc) * mult
 * rounded half to even, plus the zero point, saturated into an 8-bit
 * dtype, as onnxruntime's MLAS requantizes (so the two agree bit for
 * bit); a float8 dtype gets the product plus the zero point, converted
 * saturating. */
void knn_store_q(int dtype, void *data, int64_t i, double acc, float mult, double zp)
{
	float v = (float)acc * mult;

	if (is_f8(dtype)) {
		((uint8_t *)data)[i] = rt_float_to_f8(dtype, (float)((double)v + zp), 1);
		return;
	}
	v = nearbyintf(v) + (float)zp;
	if (dtype == IR_DTYPE_INT8)
		((int8_t *)data)[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
	else
		((uint8_t *)data)[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* n int32 sums acc[i] (+ bias) requantized as knn_store_q does into an
 * 8-bit dtype (k_conv_int.h), from out[0]: float32 (acc + bias) * mult, clamped into
 * the dtype's range less zp (integral bounds: the clamp and the rounding
 * commute), rounded half to even by adding and taking 1.5 * 2^23 (exact
 * below 2^22), plus zp.  A whole plane in vectors. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=haswell", "default"),
	       optimize("no-trapping-math")))
#endif
static void requant_i32_c(const int32_t *acc, int64_t n, int32_t bias, float mult, float zp,
			 int dtype, void *out)
{
	const float magic = 12582912.0f;   /* 1.5 * 2^23 */
	float lo = (dtype == IR_DTYPE_INT8 ? -128.0f : 0.0f) - zp;
	float hi = (dtype == IR_DTYPE_INT8 ? 127.0f : 255.0f) - zp;

	if (dtype == IR_DTYPE_INT8) {
		int8_t *y = out;

		for (int64_t i = 0; i < n; i++) {
			float v = (float)((double)acc[i] + bias) * mult;

			v = v < lo ? lo : v > hi ? hi : v;
			y[i] = (int8_t)(int32_t)((v + magic) - magic + zp);
		}
	} else {
		uint8_t *y = out;

		for (int64_t i = 0; i < n; i++) {
			float v = (float)((double)acc[i] + bias) * mult;

			v = v < lo ? lo : v > hi ? hi : v;
			y[i] = (uint8_t)(int32_t)((v + magic) - magic + zp);
		}
	}
}

/* requant_i32_c's operations in sixteen lanes of AVX-512 (gcc's
 * vectors of it, eight lanes through doubles, ran at 0.5 ns an element):
 * int32 to float32 one rounding either way (through int64 when a bias is
 * added: the exact sum, then one rounding, as the double's), then the
 * same float32 product, clamp, additions and truncation. */
__attribute__((target("avx512f,avx512dq,avx512bw,avx512vl")))
static void requant_i32_512(const int32_t *acc, int64_t n, int32_t bias, const float *mv,
			    float mult, float zp, int dtype, void *out)
{
	const __m512 magic = _mm512_set1_ps(12582912.0f), m1 = _mm512_set1_ps(mult);
	const __m512 z = _mm512_set1_ps(zp);
	const __m512 lo = _mm512_set1_ps((dtype == IR_DTYPE_INT8 ? -128.0f : 0.0f) - zp);
	const __m512 hi = _mm512_set1_ps((dtype == IR_DTYPE_INT8 ? 127.0f : 255.0f) - zp);
	const __m512i b64 = _mm512_set1_epi64(bias);
	uint8_t *y = out;

	for (int64_t i = 0; i < n; i += 16) {
		__mmask16 k = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
		__m512i a = _mm512_maskz_loadu_epi32(k, acc + i);
		__m512 v;

		if (bias) {
			__m256 l = _mm512_cvtepi64_ps(_mm512_add_epi64(
				_mm512_cvtepi32_epi64(_mm512_castsi512_si256(a)), b64));
			__m256 h = _mm512_cvtepi64_ps(_mm512_add_epi64(
				_mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(a, 1)), b64));

			v = _mm512_insertf32x8(_mm512_castps256_ps512(l), h, 1);
		} else {
			v = _mm512_cvtepi32_ps(a);
		}
		/* one multiplier, or element i's mv[i] (knn_requant_row) */
		v = _mm512_mul_ps(v, mv ? _mm512_maskz_loadu_ps(k, mv + i) : m1);
		/* v < lo ? lo : v > hi ? hi : v */
		v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ), v, lo);
		v = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, hi, _CMP_GT_OQ), v, hi);
		v = _mm512_add_ps(_mm512_sub_ps(_mm512_add_ps(v, magic), magic), z);
		_mm512_mask_cvtepi32_storeu_epi8(y + i, k, _mm512_cvttps_epi32(v));
	}
}

void knn_requant_i32(const int32_t *acc, int64_t n, int32_t bias, float mult, float zp,
		     int dtype, void *out)
{
	if (rt_cpu_avx512core() && (dtype == IR_DTYPE_INT8 || dtype == IR_DTYPE_UINT8))
		requant_i32_512(acc, n, bias, NULL, mult, zp, dtype, out);
	else
		requant_i32_c(acc, n, bias, mult, zp, dtype, out);
}

/* n pixels of m channels of sums each (channels last, a pixel's sums
 * `stride` apart; acc[m] of a pixel the correction's sums when has_d),
 * as knn_requant_i32 does each: acc[o] + d[o] * acc[m] + bias[o] (in
 * int32: the caller bounds the true value), as float32 times mult[o], clamped into
 * [lo, hi] less zp, rounded half to even, plus zp; pixel i's m codes at
 * out + i * m.  No pointer may be NULL: a masked load of a lane the loop
 * skips, from an address that is not mapped, costs a microcode assist on
 * some CPUs. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "arch=haswell", "default"),
	       optimize("no-trapping-math")))
#endif
static void requant_px8(const int32_t *acc, int64_t n, int64_t stride, int64_t m, int has_d,
			const int32_t *d, const int32_t *bias, const float *mult, float zp,
			float lo, float hi, uint8_t *out)
{
	const float magic = 12582912.0f;   /* 1.5 * 2^23, as knn_requant_i32 */

	lo -= zp;
	hi -= zp;
	for (int64_t i = 0; i < n; i++, acc += stride, out += m) {
		int32_t ones = has_d ? acc[m] : 0;

		for (int64_t o = 0; o < m; o++) {
			/* wrapping in uint32: the true sum is in range */
			float v = (float)(int32_t)((uint32_t)acc[o] + (uint32_t)d[o] * (uint32_t)ones +
						   (uint32_t)bias[o]) * mult[o];

			v = v < lo ? lo : v > hi ? hi : v;
			out[o] = (uint8_t)(int8_t)(int32_t)((v + magic) - magic + zp);
		}
	}
}

void knn_requant_px(const int32_t *acc, int64_t n, int64_t stride, int64_t m, const int32_t *d,
		    const int32_t *bias, const float *mult, float zp, int dtype, uint8_t *out)
{
	static const int32_t zero[KNN_PX_MAX];

	if (dtype == IR_DTYPE_INT8)
		requant_px8(acc, n, stride, m, d != NULL, d ? d : zero, bias ? bias : zero, mult,
			    zp, -128.0f, 127.0f, out);
	else
		requant_px8(acc, n, stride, m, d != NULL, d ? d : zero, bias ? bias : zero, mult,
			    zp, 0.0f, 255.0f, out);
}

/* Requantize planes of `len` int32 sums (plane p: channel p % nch of
 * mult[], bias[]) into y (an 8-bit or float8 dtype); float8 and a
 * multiplier that is not finite go through knn_store_q. */
void knn_requant_planes(const int32_t *acc, int64_t planes, int64_t len, int64_t nch,
			   const float *mult, const double *bias, double zp, struct rt_value *y)
{
	for (int64_t pl = 0; pl < planes; pl++) {
		int64_t c = pl % nch, off = pl * len;
		double b = bias ? bias[c] : 0;

		if (is_f8(y->dtype) || !isfinite(mult[c]))
			for (int64_t i = 0; i < len; i++)
				knn_store_q(y->dtype, y->data, off + i, (double)acc[off + i] + b,
					mult[c], zp);
		else
			knn_requant_i32(acc + off, len, (int32_t)b, mult[c], (float)zp, y->dtype,
				    (char *)y->data + off);
	}
}

/* knn_requant_i32 of one row of n sums, column c's multiplier mult[c]. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=haswell", "default"), optimize("no-trapping-math")))
#endif
static void requant_row_c(const int32_t *acc, int64_t n, const float *mult, float zp, int dtype,
			  void *out)
{
	const float magic = 12582912.0f;   /* 1.5 * 2^23, as knn_requant_i32 */
	float lo = (dtype == IR_DTYPE_INT8 ? -128.0f : 0.0f) - zp;
	float hi = (dtype == IR_DTYPE_INT8 ? 127.0f : 255.0f) - zp;

	for (int64_t i = 0; i < n; i++) {
		float v = (float)acc[i] * mult[i];
		int32_t q;

		v = v < lo ? lo : v > hi ? hi : v;
		q = (int32_t)((v + magic) - magic + zp);
		if (dtype == IR_DTYPE_INT8)
			((int8_t *)out)[i] = (int8_t)q;
		else
			((uint8_t *)out)[i] = (uint8_t)q;
	}
}

void knn_requant_row(const int32_t *acc, int64_t n, const float *mult, float zp, int dtype,
		     void *out)
{
	if (rt_cpu_avx512core())
		requant_i32_512(acc, n, 0, mult, 0.0f, zp, dtype, out);
	else
		requant_row_c(acc, n, mult, zp, dtype, out);
}

/* rows of n int32 sums into 8-bit codes at out, as knn_store_q does:
 * one multiplier for all (nmult 1, a plane's vectors) or column c's
 * mult[c] (nmult n). */
void knn_requant_block(const int32_t *acc, int64_t rows, int64_t n, const float *mult,
		       int64_t nmult, float zp, int dtype, void *out)
{
	if (nmult == 1)
		knn_requant_i32(acc, rows * n, 0, mult[0], zp, dtype, out);
	else
		for (int64_t r = 0; r < rows; r++)
			knn_requant_row(acc + r * n, n, mult, zp, dtype, (char *)out + r * n);
}
