/* k_math512.c: Erf and Atan of float32 in AVX-512, each as a polynomial
 * per interval whose coefficients a permute picks for each lane.
 *
 * Erf, for kel_erf_f32 (k_elem.c),
 * whose portable loop evaluates a Chebyshev series of degree 18 in double
 * element by element (1.2 ns a value: a Whisper-style encoder's GELUs 4
 * ms of its 32, onnxruntime's 0.45 ns).  Here [0, 4] is sixteen
 * intervals of a quarter, on each erf(x) / x = hi + Q(u), u = 8 (|x| - i
 * / 4) - 1, hi the float32 nearest the interval's polynomial's constant
 * and Q (degree 6, Chebyshev interpolation at 7 nodes: erf within 8e-11
 * relative) the rest, its coefficients picked for each lane's interval
 * by a permute; Q by Horner's rule in float32 is a small correction, and
 * erf = x hi + x Q(u) rounds once (a fused multiply-add): erff correctly
 * rounded or one ulp away on every third float of [-5, 5], as the
 * portable loop's (0.37 ns a value).  |x| >= 4 is clamped to 4 (erf rounds
 * to +-1 in float there); -0 stays -0, NaN stays NaN. */
#include <immintrin.h>
#include <stdint.h>

#include "runtime/kernels/k_elem_int.h"
#include "runtime/kernels/k_exp512.h"   /* knn_lanes16 */
#include "runtime/kernels/pgemm.h"      /* rt_cpu_avx512f */

/* hi for the intervals [0, 1/4) to [15/4, 4], then Q's coefficient of u^j */
static const float erf_hi[16] __attribute__((aligned(64))) = { 1.12252963f, 1.07764506f, 0.997185409f, 0.896085799f, 0.789678454f, 0.689578235f, 0.602119207f, 0.529061377f, 0.469339281f, 0.420722961f, 0.380874157f, 0.347809434f, 0.319996834f, 0.296295762f, 0.275861979f, 0.258064508f };
static const float erf_q[7][16] __attribute__((aligned(64))) = {
	{ 1.25180311e-08f, 2.84259247e-08f, 2.43240739e-09f, -1.46719756e-08f, -2.62198139e-08f, -3.98772459e-10f, 1.30731728e-08f, -1.2957762e-08f, -1.01915187e-09f, 1.19561596e-08f, -1.43751961e-08f, 7.85779886e-09f, -7.5634965e-10f, -3.62694008e-09f, 9.01664965e-09f, -3.2804186e-09f },
	{ -0.011644369f, -0.0324307606f, -0.0467371754f, -0.0530486777f, -0.0523782745f, -0.0472016782f, -0.0401266888f, -0.0330343693f, -0.0268822629f, -0.0219324473f, -0.0180822033f, -0.0151095307f, -0.012797283f, -0.0109734451f, -0.00951240584f, -0.00832465012f },
	{ -0.0057132137f, -0.00450775912f, -0.00258224527f, -0.000620758918f, 0.000846777635f, 0.00162919017f, 0.00182928937f, 0.00167813769f, 0.00138848426f, 0.00109173812f, 0.000843121728f, 0.000652401301f, 0.000510879443f, 0.00040622463f, 0.00032797936f, 0.000268531789f },
	{ 0.000108158805f, 0.000279268308f, 0.000342471001f, 0.000296098035f, 0.000187950631f, 7.62372438e-05f, -2.6837954e-06f, -4.1624553e-05f, -5.13106243e-05f, -4.61687159e-05f, -3.65101696e-05f, -2.73446203e-05f, -2.01851872e-05f, -1.49917742e-05f, -1.1299564e-05f, -8.66065147e-06f },
	{ 2.60324141e-05f, 1.53617329e-05f, 4.34874607e-07f, -1.09389621e-05f, -1.48125309e-05f, -1.23460886e-05f, -7.26331655e-06f, -2.72765806e-06f, -1.03496767e-08f, 1.07987682e-06f, 1.23501718e-06f, 1.0291028e-06f, 7.63848846e-07f, 5.4498787e-07f, 3.87541235e-07f, 2.79002165e-07f },
	{ -5.9350225e-07f, -1.41071985e-06f, -1.41839848e-06f, -7.80439507e-07f, -2.11464108e-08f, 4.3885882e-07f, 5.16256762e-07f, 3.68098483e-07f, 1.80746937e-07f, 5.13007201e-08f, -9.32387501e-09f, -2.63760978e-08f, -2.48790268e-08f, -1.87125693e-08f, -1.30474831e-08f, -8.94946428e-09f },
	{ -9.3451213e-08f, -3.63532564e-08f, 3.2444337e-08f, 6.60733974e-08f, 5.44754286e-08f, 2.12634532e-08f, -5.9107248e-09f, -1.61087197e-08f, -1.3834101e-08f, -7.67569652e-09f, -2.8197118e-09f, -3.70819681e-10f, 4.39306369e-10f, 5.25876509e-10f, 4.07734985e-10f, 2.79653106e-10f },
};

/* Q(u) of degree 6 by Horner's rule, each lane's coefficients q[j][idx]
 * (its interval's) picked by a permute */
__attribute__((target("avx512f"), always_inline))
static inline __m512 poly6(const float q[7][16], __m512i idx, __m512 u)
{
	__m512 p = _mm512_permutexvar_ps(idx, _mm512_load_ps(q[6]));

	for (int j = 5; j >= 0; j--)
		p = _mm512_fmadd_ps(p, u, _mm512_permutexvar_ps(idx, _mm512_load_ps(q[j])));
	return p;
}

__attribute__((target("avx512f")))
static void erf512(const float *x, float *y, int64_t n)
{
	const __m512 four = _mm512_set1_ps(4.0f), mfour = _mm512_set1_ps(-4.0f);

	for (int64_t i = 0; i < n; i += 16) {
		__mmask16 m = knn_lanes16(n - i);
		__m512 v = _mm512_maskz_loadu_ps(m, x + i), ax, a, u, q;
		__m512i idx;

		/* clamped with NaN kept: min(4, v) and max(-4, .) give their
		 * second operand, v, when it is NaN (whose index, any, reads
		 * some interval's coefficients: NaN times them) */
		v = _mm512_max_ps(mfour, _mm512_min_ps(four, v));
		ax = _mm512_abs_ps(v);
		idx = _mm512_min_epi32(_mm512_cvttps_epi32(_mm512_mul_ps(ax, four)),
				       _mm512_set1_epi32(15));
		a = _mm512_mul_ps(_mm512_cvtepi32_ps(idx), _mm512_set1_ps(0.25f));
		/* |x| - a is exact (Sterbenz, or a = 0), times 8 too */
		u = _mm512_fmsub_ps(_mm512_sub_ps(ax, a), _mm512_set1_ps(8.0f), _mm512_set1_ps(1.0f));
		q = poly6(erf_q, idx, u);
		_mm512_mask_storeu_ps(y + i, m, _mm512_fmadd_ps(v, _mm512_permutexvar_ps(
						idx, _mm512_load_ps(erf_hi)), _mm512_mul_ps(v, q)));
	}
}

int kel_erf512(const float *x, float *y, int64_t n)
{
	if (n < 1 || !rt_cpu_avx512f())
		return 0;
	erf512(x, y, n);
	return 1;
}

/* Atan (k_elem.c's op, where libm's atan in double per element took 10
 * ns a value, onnxruntime 2.6): odd; for |x| <= 1 on sixteen intervals of
 * a sixteenth, atan(t) / t = hi + Q(u) as Erf's (degree 6: atan within
 * 5e-14 relative), t x hi + t Q(u) rounded once; past 1, pi/2 - atan(r)
 * for r = 1 / |x| rounded (a correction for that rounding changed none of
 * the bounds below), pi/2 in two parts (in one, two ulps): atan in
 * double rounded, or one ulp away, on every fifth float (0.54 ns a
 * value). */
static const float atan_hi[16] __attribute__((aligned(64))) = { 0.999674678f, 0.99708569f, 0.991979122f, 0.984492362f, 0.974817634f, 0.963188589f, 0.949865043f, 0.93511802f, 0.919216871f, 0.902418911f, 0.884962082f, 0.867059946f, 0.848899841f, 0.830642283f, 0.812421978f, 0.794349909f };
static const float atan_q[7][16] __attribute__((aligned(64))) = {
	{ -8.08023071e-09f, -2.48067309e-08f, 2.61513566e-08f, -2.00701891e-08f, -2.96478362e-08f, -1.8435754e-09f, -1.07988107e-08f, -2.52171972e-08f, -2.22142447e-08f, 1.56342459e-08f, -1.93298728e-08f, -8.7606109e-09f, -1.06447944e-08f, -2.17664144e-08f, 1.30802071e-08f, 6.42871845e-09f },
	{ -0.000650279515f, -0.00193271786f, -0.0031622739f, -0.00430838531f, -0.00534675224f, -0.0062604947f, -0.00704036281f, -0.00768414047f, -0.00819549896f, -0.00858256593f, -0.00885647442f, -0.00903004222f, -0.00911669713f, -0.00912965927f, -0.00908139069f, -0.00898325443f },
	{ -0.00032437843f, -0.000315380748f, -0.000298115076f, -0.000273923302f, -0.000244556082f, -0.000211932362f, -0.000177914219f, -0.000144133795f, -0.000111890047f, -8.21128633e-05f, -5.53799437e-05f, -3.19670326e-05f, -1.1913342e-05f, 4.91162791e-06f, 1.87483656e-05f, 2.98987761e-05f },
	{ 7.60283513e-07f, 2.21832579e-06f, 3.49903485e-06f, 4.51556434e-06f, 5.21956508e-06f, 5.60279159e-06f, 5.69096392e-06f, 5.5330006e-06f, 5.18913976e-06f, 4.72068905e-06f, 4.18281434e-06f, 3.62059086e-06f, 3.0677661e-06f, 2.54737347e-06f, 2.07336052e-06f, 1.65259075e-06f },
	{ 1.88746142e-07f, 1.73334413e-07f, 1.45011143e-07f, 1.0811101e-07f, 6.77311718e-08f, 2.86347639e-08f, -5.54703528e-09f, -3.26672165e-08f, -5.20057384e-08f, -6.39496136e-08f, -6.95777089e-08f, -7.02766059e-08f, -6.74532572e-08f, -6.23586232e-08f, -5.60057458e-08f, -4.91541137e-08f },
	{ -7.91243071e-10f, -2.2430644e-09f, -3.33845551e-09f, -3.94411437e-09f, -4.04119538e-09f, -3.70943498e-09f, -3.08680392e-09f, -2.32430497e-09f, -1.55137425e-09f, -8.58280058e-10f, -2.93817387e-10f, 1.2736609e-10f, 4.1371484e-10f, 5.86194482e-10f, 6.70181244e-10f, 6.90291879e-10f },
	{ -1.30064723e-10f, -1.08788076e-10f, -7.1956878e-11f, -2.87626312e-11f, 1.14459397e-11f, 4.19217508e-11f, 5.97648667e-11f, 6.55478796e-11f, 6.20531265e-11f, 5.28137603e-11f, 4.10784878e-11f, 2.92431496e-11f, 1.87715607e-11f, 1.03215084e-11f, 4.00878462e-12f, -3.73995756e-13f },
};

__attribute__((target("avx512f")))
static void atan512(const float *x, float *y, int64_t n)
{
	const __m512 one = _mm512_set1_ps(1.0f);

	for (int64_t i = 0; i < n; i += 16) {
		__mmask16 m = knn_lanes16(n - i);
		__m512 v = _mm512_maskz_loadu_ps(m, x + i), ax = _mm512_abs_ps(v), t, a, u, q, at;
		__mmask16 big = _mm512_cmp_ps_mask(ax, one, _CMP_GT_OQ);
		__m512i idx;

		t = _mm512_mask_div_ps(ax, big, one, ax);   /* 1 / |x| past 1 */
		idx = _mm512_min_epi32(_mm512_cvttps_epi32(_mm512_mul_ps(t, _mm512_set1_ps(16.0f))),
				       _mm512_set1_epi32(15));
		a = _mm512_mul_ps(_mm512_cvtepi32_ps(idx), _mm512_set1_ps(0.0625f));
		u = _mm512_fmsub_ps(_mm512_sub_ps(t, a), _mm512_set1_ps(32.0f), one);
		q = poly6(atan_q, idx, u);
		at = _mm512_fmadd_ps(t, _mm512_permutexvar_ps(idx, _mm512_load_ps(atan_hi)),
				     _mm512_mul_ps(t, q));
		/* past 1: pi/2 - atan(1 / |x|) */
		a = _mm512_add_ps(_mm512_sub_ps(_mm512_set1_ps(1.57079637f), at),
				  _mm512_set1_ps(-4.37113883e-08f));
		at = _mm512_mask_mov_ps(at, big, a);
		/* x's sign (a NaN x gave NaN all along) */
		at = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(at),
			_mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(INT32_MIN))));
		_mm512_mask_storeu_ps(y + i, m, at);
	}
}

int kel_atan512(const float *x, float *y, int64_t n)
{
	if (n < 1 || !rt_cpu_avx512f())
		return 0;
	atan512(x, y, n);
	return 1;
}
