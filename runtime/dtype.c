/* dtype.c: element load/store for every numeric dtype of the runtime
 * layout (see struct rt_value) as double or int64, and the conversions of
 * the 16-, 8- and 4-bit float formats (float16, bfloat16, the four float8
 * kinds, float4e2m1) to and from float. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rt_int.h"

float rt_half_to_float(uint16_t h)
{
	uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 31, m = h & 1023;
	uint32_t bits;
	float f;

	if (e == 0) {
		if (!m) {
			bits = s;
		} else {   /* subnormal: normalise */
			e = 127 - 15 + 1;
			while (!(m & 1024)) {
				m <<= 1;
				e--;
			}
			bits = s | (e << 23) | ((m & 1023) << 13);
		}
	} else if (e == 31) {
		bits = s | 0x7f800000u | (m << 13);
	} else {
		bits = s | ((e + 127 - 15) << 23) | (m << 13);
	}
	memcpy(&f, &bits, 4);
	return f;
}

uint16_t rt_float_to_half(float f)
{
	uint32_t x, s, e, m;

	memcpy(&x, &f, 4);
	s = (x >> 16) & 0x8000;
	e = (x >> 23) & 255;
	m = x & 0x7fffff;
	if (e == 255)
		return (uint16_t)(s | 0x7c00 | (m ? 0x200 | (m >> 13) : 0));
	if (e > 127 + 15) /* overflow: inf */
		return (uint16_t)(s | 0x7c00);
	if (e < 127 - 14) {   /* subnormal or zero in half */
		int shift = (int)(127 - 14 - e) + 13;
		uint32_t mm, r, half;

		if (shift > 24)
			return (uint16_t)s;
		mm = m | 0x800000;
		r = mm >> shift;
		half = 1u << (shift - 1);
		if ((mm & ((half << 1) - 1)) > half ||
		    ((mm & ((half << 1) - 1)) == half && (r & 1)))
			r++;
		return (uint16_t)(s | r);
	}
	{
		uint32_t h = ((e - 127 + 15) << 10) | (m >> 13);
		uint32_t rest = m & 0x1fff;

		if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
			h++;   /* may carry into the exponent: still right */
		return (uint16_t)(s | h);
	}
}

float rt_bf16_to_float(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float f;

	memcpy(&f, &bits, 4);
	return f;
}

uint16_t rt_float_to_bf16(float f)
{
	uint32_t x;

	memcpy(&x, &f, 4);
	if ((x & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((x >> 16) | 0x40);  /* quiet NaN */
	x += 0x7fff + ((x >> 16) & 1);           /* round to nearest even */
	return (uint16_t)(x >> 16);
}

/* ---- float8 and float4: decode tables, encode by nearest value ------ */

struct minifloat {
	int ebits, mbits, bias;
	int has_inf;      /* E5M2: IEEE inf and NaN */
	int uz;           /* FNUZ: 0x80 is the one NaN, no -0 */
	int no_nan;       /* float4e2m1 */
	int bits;
};

static const struct minifloat *mf_of(int dtype)
{
	static const struct minifloat e4m3fn = { 4, 3, 7, 0, 0, 0, 8 };
	static const struct minifloat e4m3fnuz = { 4, 3, 8, 0, 1, 0, 8 };
	static const struct minifloat e5m2 = { 5, 2, 15, 1, 0, 0, 8 };
	static const struct minifloat e5m2fnuz = { 5, 2, 16, 0, 1, 0, 8 };
	static const struct minifloat e2m1 = { 2, 1, 1, 0, 0, 1, 4 };

	switch (dtype) {
	case IR_DTYPE_FLOAT8E4M3FN: return &e4m3fn;
	case IR_DTYPE_FLOAT8E4M3FNUZ: return &e4m3fnuz;
	case IR_DTYPE_FLOAT8E5M2: return &e5m2;
	case IR_DTYPE_FLOAT8E5M2FNUZ: return &e5m2fnuz;
	case IR_DTYPE_FLOAT4E2M1: return &e2m1;
	default: return NULL;
	}
}

static float mf_decode(const struct minifloat *f, unsigned v)
{
	unsigned sign = v >> (f->bits - 1) & 1;
	unsigned e = (v >> f->mbits) & ((1u << f->ebits) - 1);
	unsigned m = v & ((1u << f->mbits) - 1);
	unsigned emax = (1u << f->ebits) - 1;
	float x;

	if (f->uz && v == (1u << (f->bits - 1)))
		return NAN;
	if (f->has_inf && e == emax)
		return m ? NAN : (sign ? -INFINITY : INFINITY);
	if (!f->has_inf && !f->uz && !f->no_nan && e == emax &&
	    m == (1u << f->mbits) - 1)
		return NAN;                       /* E4M3FN: S.1111.111 */
	if (e == 0)
		x = ldexpf((float)m, 1 - f->bias - f->mbits);
	else
		x = ldexpf((float)(m | (1u << f->mbits)), (int)e - f->bias - f->mbits);
	return sign ? -x : x;
}

float rt_f8_to_float(int dtype, uint8_t v)
{
	const struct minifloat *f = mf_of(dtype);

	return f ? mf_decode(f, v) : 0.0f;
}

uint8_t rt_float_to_f8(int dtype, float x, int saturate)
{
	const struct minifloat *f = mf_of(dtype);
	unsigned top, sign, best = 0, n;
	float ax, maxv;

	if (!f)
		return 0;
	top = 1u << (f->bits - 1);
	n = top;   /* codes 0..top-1 are the non-negative ones, increasing */
	if (isnan(x))
		return (uint8_t)(f->uz ? top : f->has_inf ? 0x7f :
				 f->no_nan ? 0 : 0x7f);
	sign = signbit(x) ? top : 0;
	ax = fabsf(x);
	/* largest finite code */
	while (n > 0 && !isfinite(mf_decode(f, n - 1)))
		n--;
	maxv = mf_decode(f, n - 1);
	if (isinf(ax) || ax > maxv) {
		if (isinf(ax) && !saturate)
			goto overflow;
		if (!saturate) {
			/* values that round to max stay max */
			float next = maxv + (maxv - mf_decode(f, n - 2)) / 2;

			if (ax >= next)
				goto overflow;
		}
		best = n - 1;
	} else {
		unsigned lo = 0, hi = n - 1;

		while (lo < hi) {   /* first code >= ax */
			unsigned mid = (lo + hi) / 2;

			if (mf_decode(f, mid) < ax)
				lo = mid + 1;
			else
				hi = mid;
		}
		best = lo;
		if (lo > 0) {
			float a = mf_decode(f, lo - 1), b = mf_decode(f, lo);

			if (ax - a < b - ax || (ax - a == b - ax && !((lo - 1) & 1)))
				best = lo - 1;
		}
	}
	if (f->uz && best == 0)
		sign = 0;  /* no negative zero */
	return (uint8_t)(sign | best);
overflow:
	if (f->has_inf)
		return (uint8_t)(sign | 0x7c);
	if (f->uz)
		return (uint8_t)top;
	return (uint8_t)(sign | 0x7f);
}

/* ---- load/store ------------------------------------------------------ */

int rt_dtype_is_float(int t)
{
	switch (t) {
	case IR_DTYPE_FLOAT: case IR_DTYPE_DOUBLE: case IR_DTYPE_FLOAT16:
	case IR_DTYPE_BFLOAT16: case IR_DTYPE_FLOAT8E4M3FN:
	case IR_DTYPE_FLOAT8E4M3FNUZ: case IR_DTYPE_FLOAT8E5M2:
	case IR_DTYPE_FLOAT8E5M2FNUZ: case IR_DTYPE_FLOAT4E2M1:
		return 1;
	default:
		return 0;
	}
}

int rt_dtype_is_signed(int t)
{
	switch (t) {
	case IR_DTYPE_INT8: case IR_DTYPE_INT16: case IR_DTYPE_INT32:
	case IR_DTYPE_INT64: case IR_DTYPE_INT4:
		return 1;
	default:
		return 0;
	}
}

int rt_dtype_is_int(int t)
{
	switch (t) {
	case IR_DTYPE_UINT8: case IR_DTYPE_UINT16: case IR_DTYPE_UINT32:
	case IR_DTYPE_UINT64: case IR_DTYPE_UINT4:
		return 1;
	default:
		return rt_dtype_is_signed(t);
	}
}

double rt_load_f64(int t, const void *p, int64_t i)
{
	switch (t) {
	case IR_DTYPE_FLOAT: return ((const float *)p)[i];
	case IR_DTYPE_DOUBLE: return ((const double *)p)[i];
	case IR_DTYPE_FLOAT16: return rt_half_to_float(((const uint16_t *)p)[i]);
	case IR_DTYPE_BFLOAT16: return rt_bf16_to_float(((const uint16_t *)p)[i]);
	case IR_DTYPE_FLOAT8E4M3FN: case IR_DTYPE_FLOAT8E4M3FNUZ:
	case IR_DTYPE_FLOAT8E5M2: case IR_DTYPE_FLOAT8E5M2FNUZ:
	case IR_DTYPE_FLOAT4E2M1:
		return rt_f8_to_float(t, ((const uint8_t *)p)[i]);
	case IR_DTYPE_UINT64: return (double)((const uint64_t *)p)[i];
	default: return (double)rt_load_i64(t, p, i);
	}
}

int64_t rt_load_i64(int t, const void *p, int64_t i)
{
	switch (t) {
	case IR_DTYPE_INT8: case IR_DTYPE_INT4: return ((const int8_t *)p)[i];
	case IR_DTYPE_UINT8: case IR_DTYPE_UINT4: case IR_DTYPE_BOOL:
		return ((const uint8_t *)p)[i];
	case IR_DTYPE_INT16: return ((const int16_t *)p)[i];
	case IR_DTYPE_UINT16: return ((const uint16_t *)p)[i];
	case IR_DTYPE_INT32: return ((const int32_t *)p)[i];
	case IR_DTYPE_UINT32: return ((const uint32_t *)p)[i];
	case IR_DTYPE_INT64: return ((const int64_t *)p)[i];
	case IR_DTYPE_UINT64: return (int64_t)((const uint64_t *)p)[i];
	default: {
		double v = rt_load_f64(t, p, i);

		if (isnan(v))
			return INT64_MIN;
		if (v >= 9.2233720368547758e18)
			return INT64_MAX;
		if (v <= -9.2233720368547758e18)
			return INT64_MIN;
		return (int64_t)v;
	}
	}
}

void rt_store_i64(int t, void *p, int64_t i, int64_t v)
{
	switch (t) {
	case IR_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
	case IR_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case IR_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	case IR_DTYPE_INT4: ((int8_t *)p)[i] = (int8_t)(v < -8 ? -8 : v > 7 ? 7 : v); break;
	case IR_DTYPE_UINT4: ((uint8_t *)p)[i] = (uint8_t)(v < 0 ? 0 : v > 15 ? 15 : v); break;
	case IR_DTYPE_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
	case IR_DTYPE_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
	case IR_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
	case IR_DTYPE_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
	case IR_DTYPE_INT64: ((int64_t *)p)[i] = v; break;
	case IR_DTYPE_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
	default: rt_store_f64(t, p, i, (double)v); break;
	}
}

/* double -> integer as C truncation, clamped to int64 (NaN -> INT64_MIN,
 * what x86 gives), then wrapped to the width as numpy's astype does. */
static int64_t trunc_i64(double v)
{
	if (isnan(v) || v <= -9.2233720368547758e18)
		return INT64_MIN;
	if (v >= 9.2233720368547758e18)
		return INT64_MAX;
	return (int64_t)v;
}

void rt_store_f64(int t, void *p, int64_t i, double v)
{
	switch (t) {
	case IR_DTYPE_FLOAT: ((float *)p)[i] = (float)v; break;
	case IR_DTYPE_DOUBLE: ((double *)p)[i] = v; break;
	case IR_DTYPE_FLOAT16: ((uint16_t *)p)[i] = rt_float_to_half((float)v); break;
	case IR_DTYPE_BFLOAT16: ((uint16_t *)p)[i] = rt_float_to_bf16((float)v); break;
	case IR_DTYPE_FLOAT8E4M3FN: case IR_DTYPE_FLOAT8E4M3FNUZ:
	case IR_DTYPE_FLOAT8E5M2: case IR_DTYPE_FLOAT8E5M2FNUZ:
	case IR_DTYPE_FLOAT4E2M1:
		((uint8_t *)p)[i] = rt_float_to_f8(t, (float)v, 1);
		break;
	case IR_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	case IR_DTYPE_UINT64:
		((uint64_t *)p)[i] = v >= 1.8446744073709552e19 ? UINT64_MAX :
				     v >= 9.2233720368547758e18 ?
				     (uint64_t)(v - 9.2233720368547758e18) + (1ull << 63) :
				     (uint64_t)trunc_i64(v);
		break;
	default: rt_store_i64(t, p, i, trunc_i64(v)); break;
	}
}

/* ---- float16 and bfloat16 arrays <-> float, for whole tensors -------- */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define RT_F16C 1

__attribute__((target("avx,f16c")))
static int64_t f16c_widen(const uint16_t *h, float *f, int64_t n)
{
	int64_t i = 0;

	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(f + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i))));
	return i;
}

__attribute__((target("avx,f16c")))
static int64_t f16c_round(float *f, int64_t n)
{
	int64_t i = 0;

	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(f + i, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(f + i),
									 _MM_FROUND_TO_NEAREST_INT)));
	return i;
}

__attribute__((target("avx,f16c")))
static int64_t f16c_narrow(const float *f, uint16_t *h, int64_t n)
{
	int64_t i = 0;

	for (; i + 8 <= n; i += 8)
		_mm_storeu_si128((__m128i *)(h + i),
				 _mm256_cvtps_ph(_mm256_loadu_ps(f + i), _MM_FROUND_TO_NEAREST_INT));
	return i;
}

/* The same sixteen at a time, the tail under a mask: with AVX-512 the
 * conversions of a float16 model's results take half the instructions
 * (a float16 VAE decoder's rounding 7.5% of its time at eight a step) */
__attribute__((target("avx512f")))
static int64_t round512(float *f, int64_t n)
{
	for (int64_t i = 0; i < n; i += 16) {
		__mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);

		_mm512_mask_storeu_ps(f + i, m, _mm512_cvtph_ps(_mm512_cvtps_ph(
				_mm512_maskz_loadu_ps(m, f + i), _MM_FROUND_TO_NEAREST_INT)));
	}
	return n;
}

/* Whole vectors of sixteen (the caller's loop takes the tail) */
__attribute__((target("avx512f")))
static int64_t widen512(const uint16_t *h, float *f, int64_t n)
{
	int64_t i = 0;

	for (; i + 16 <= n; i += 16)
		_mm512_storeu_ps(f + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(h + i))));
	return i;
}

__attribute__((target("avx512f")))
static int64_t narrow512(const float *f, uint16_t *h, int64_t n)
{
	int64_t i = 0;

	for (; i + 16 <= n; i += 16)
		_mm256_storeu_si256((__m256i *)(h + i),
				    _mm512_cvtps_ph(_mm512_loadu_ps(f + i), _MM_FROUND_TO_NEAREST_INT));
	return i;
}

/* AVX-512F (its conversions of sixteen): asked here, not of the kernels'
 * rt_cpu_avx512f, so that the dtype conversions need nothing of them */
static int have_512(void)
{
	static int known = -1;

	if (known < 0) {
		__builtin_cpu_init();
		known = __builtin_cpu_supports("avx512f") != 0;
	}
	return known;
}

/* CPUID leaf 1: F16C (ecx bit 29), AVX (28) and OSXSAVE (27), and the OS
 * saving the YMM state (XCR0 bits 1 and 2). */
static int have_f16c(void)
{
	static int known = -1;
	unsigned a, b, c, d;

	if (known < 0) {
		known = 0;
		if (__get_cpuid(1, &a, &b, &c, &d) && (c & (7u << 27)) == (7u << 27)) {
			unsigned lo, hi;

			__asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
			known = (lo & 6u) == 6u;
		}
	}
	return known;
}
#endif

void rt_half_to_float_n(const uint16_t *h, float *f, int64_t n)
{
	int64_t i = 0;

#ifdef RT_F16C
	if (have_512())
		i = widen512(h, f, n);
	else if (have_f16c())
		i = f16c_widen(h, f, n);
#endif
	for (; i < n; i++)
		f[i] = rt_half_to_float(h[i]);
}

void rt_float_round_n(float *f, int64_t n, int dtype)
{
	int64_t i = 0;

	if (dtype == IR_DTYPE_BFLOAT16) {
		for (; i < n; i++)
			f[i] = rt_bf16_to_float(rt_float_to_bf16(f[i]));
		return;
	}
#ifdef RT_F16C
	if (have_512())
		i = round512(f, n);
	else if (have_f16c())
		i = f16c_round(f, n);
#endif
	for (; i < n; i++)
		f[i] = rt_half_to_float(rt_float_to_half(f[i]));
}

void rt_float_to_half_n(const float *f, uint16_t *h, int64_t n)
{
	int64_t i = 0;

#ifdef RT_F16C
	if (have_512())
		i = narrow512(f, h, n);
	else if (have_f16c())
		i = f16c_narrow(f, h, n);
#endif
	for (; i < n; i++)
		h[i] = rt_float_to_half(f[i]);
}
