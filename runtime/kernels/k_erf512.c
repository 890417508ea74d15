/* k_erf512.c: Erf of float32 in AVX-512, for kel_erf_f32 (k_elem.c),
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
		q = _mm512_permutexvar_ps(idx, _mm512_load_ps(erf_q[6]));
		for (int j = 5; j >= 0; j--)
			q = _mm512_fmadd_ps(q, u, _mm512_permutexvar_ps(idx, _mm512_load_ps(erf_q[j])));
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
