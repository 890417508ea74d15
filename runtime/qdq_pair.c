/* qdq_pair.c: a binary table unit (qdq_table.c: Add, Sub, Mul, Div, Max
 * or Min between DequantizeLinear and QuantizeLinear, per tensor) in
 * float32 vectors instead of a lookup of its pair table a code at a time.
 * Each element does what the nodes do: (float)(code - zero) * scale for
 * each operand (k_quant.c's DequantizeLinear), the op in float32, then
 * QuantizeLinear's division by the output scale, rounding half to even,
 * the zero point and saturation; the division as a product by the
 * reciprocal where that gives the same codes.  Whether it does is not
 * argued but checked: the unit's pair table (the nodes' own kernels run
 * on every pair of codes) is the reference, and rt_qpair_make runs the
 * path this CPU will take over all 65536 pairs; any code that differs
 * (a division by a zero operand, a quotient a rounding boundary apart)
 * and the unit keeps its table.  So the codes are the written graph's bit
 * for bit, at a sixteenth of an element's lookup. */
#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/pgemm.h"   /* rt_cpu_avx512core */
#include "runtime/qdq_int.h"

enum { QP_ADD, QP_SUB, QP_MUL, QP_DIV, QP_MAX, QP_MIN };

static int op_of(const char *op)
{
	static const char *const names[] = { "Add", "Sub", "Mul", "Div", "Max", "Min" };

	for (int i = 0; i < (int)(sizeof(names) / sizeof(*names)); i++)
		if (!strcmp(op, names[i]))
			return i;
	return -1;
}

static inline float qp_op(int op, float a, float b)
{
	switch (op) {
	case QP_ADD: return a + b;
	case QP_SUB: return a - b;
	case QP_MUL: return a * b;
	case QP_DIV: return a / b;
	case QP_MAX: return a > b ? a : b;
	default: return a < b ? a : b;
	}
}

static inline float code_f(const struct rt_qpair *q, int j, uint8_t c)
{
	int v = q->sgn[j] ? (int)(int8_t)c : (int)c;

	return (float)(v - q->z[j]) * q->s[j];
}

static void run_c(const struct rt_qpair *q, const uint8_t *a, int64_t as, const uint8_t *b,
		  int64_t bs, uint8_t *y, int64_t n)
{
	for (int64_t i = 0; i < n; i++) {
		float r = qp_op(q->op, code_f(q, 0, a[i * as]), code_f(q, 1, b[i * bs]));

		r = q->recip ? r * q->inv : r / q->so;
		r = nearbyintf(r) + q->zo;
		r = r > q->lo ? r : q->lo;   /* a NaN gives lo */
		r = r < q->hi ? r : q->hi;
		y[i] = (uint8_t)(int)r;
	}
}

#define QP_512 __attribute__((target("avx512f,avx512bw,avx512vl")))

QP_512 static inline __m512 deq512(__m128i c, int sgn, __m512i z, __m512 s)
{
	__m512i v = sgn ? _mm512_cvtepi8_epi32(c) : _mm512_cvtepu8_epi32(c);

	return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(v, z)), s);
}

QP_512 static void run512(const struct rt_qpair *q, const uint8_t *a, int64_t as,
			  const uint8_t *b, int64_t bs, uint8_t *y, int64_t n)
{
	const __m512i za = _mm512_set1_epi32(q->z[0]), zb = _mm512_set1_epi32(q->z[1]);
	const __m512 sa = _mm512_set1_ps(q->s[0]), sb = _mm512_set1_ps(q->s[1]);
	const __m512 inv = _mm512_set1_ps(q->inv), so = _mm512_set1_ps(q->so);
	const __m512 zo = _mm512_set1_ps(q->zo), lo = _mm512_set1_ps(q->lo);
	const __m512 hi = _mm512_set1_ps(q->hi);
	/* an operand of one code along the run (as or bs 0) once */
	const __m512 fa1 = _mm512_set1_ps(as ? 0.0f : code_f(q, 0, a[0]));
	const __m512 fb1 = _mm512_set1_ps(bs ? 0.0f : code_f(q, 1, b[0]));

	for (int64_t i = 0; i < n; i += 16) {
		__mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
		__m512 fa = as ? deq512(_mm_maskz_loadu_epi8(m, a + i), q->sgn[0], za, sa) : fa1;
		__m512 fb = bs ? deq512(_mm_maskz_loadu_epi8(m, b + i), q->sgn[1], zb, sb) : fb1;
		__m512 r;

		switch (q->op) {
		case QP_ADD: r = _mm512_add_ps(fa, fb); break;
		case QP_SUB: r = _mm512_sub_ps(fa, fb); break;
		case QP_MUL: r = _mm512_mul_ps(fa, fb); break;
		case QP_DIV: r = _mm512_div_ps(fa, fb); break;
		/* a > b ? a : b and a < b ? a : b, as run_c */
		case QP_MAX: r = _mm512_max_ps(fa, fb); break;
		default: r = _mm512_min_ps(fa, fb); break;
		}
		r = q->recip ? _mm512_mul_ps(r, inv) : _mm512_div_ps(r, so);
		r = _mm512_add_ps(_mm512_roundscale_ps(r, _MM_FROUND_TO_NEAREST_INT |
							  _MM_FROUND_NO_EXC), zo);
		r = _mm512_min_ps(_mm512_max_ps(r, lo), hi);   /* a NaN gives lo, as run_c */
		_mm512_mask_cvtepi32_storeu_epi8(y + i, m, _mm512_cvtps_epi32(r));
	}
}

void rt_qpair_run(const struct rt_qpair *q, const uint8_t *a, int64_t as, const uint8_t *b,
		  int64_t bs, uint8_t *y, int64_t n)
{
	if (q->isa512)
		run512(q, a, as, b, bs, y, n);
	else
		run_c(q, a, as, b, bs, y, n);
}

/* Does the path give table's codes for every pair?  Table index: input
 * 0's code index (int8 -128 is 0) high, input 1's low. */
static int matches(const struct rt_qpair *q, const uint8_t *table, uint8_t *buf)
{
	uint8_t *a = buf, *b = buf + 65536, *y = buf + 2 * 65536;

	for (int i = 0; i < 65536; i++) {
		a[i] = (uint8_t)((i >> 8) ^ (q->sgn[0] ? 0x80 : 0));
		b[i] = (uint8_t)((i & 255) ^ (q->sgn[1] ? 0x80 : 0));
	}
	rt_qpair_run(q, a, 1, b, 1, y, 65536);
	return !memcmp(y, table, 65536);
}

int rt_qpair_make(struct rt_qpair *q, const char *op, const int dt[3], const float s[3],
		  const int32_t z[3], const uint8_t *table)
{
	uint8_t *buf;
	int ok = 0;

	memset(q, 0, sizeof(*q));
	if ((q->op = op_of(op)) < 0 || !(s[2] > 0) || !isfinite(s[0]) || !isfinite(s[1]))
		return 0;
	for (int j = 0; j < 2; j++) {
		q->sgn[j] = dt[j] == IR_DTYPE_INT8;
		q->s[j] = s[j];
		q->z[j] = z[j];
	}
	q->so = s[2];
	q->inv = 1.0f / s[2];
	q->zo = (float)z[2];
	q->lo = dt[2] == IR_DTYPE_INT8 ? -128.0f : 0.0f;
	q->hi = dt[2] == IR_DTYPE_INT8 ? 127.0f : 255.0f;
	q->isa512 = rt_cpu_avx512core();
	if (!(buf = malloc(3 * 65536)))
		return 0;
	q->recip = 1;
	if (!(ok = matches(q, table, buf))) {
		q->recip = 0;
		ok = matches(q, table, buf);
	}
	free(buf);
	return q->ok = ok;
}
