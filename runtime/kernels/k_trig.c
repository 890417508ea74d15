/* k_trig.c: Sin and Cos on float32 in a straight loop the compiler
 * vectorizes, where libm's sin and cos are a call per element (a NeRF
 * MLP's positional encoding: 0.9 ms a node against onnxruntime's 0.12).
 * In double: x = k pi/2 + r, k = rint(x 2/pi), by fdlibm's three-part
 * pi/2 (exact products for |k| < 2^20), |r| <= pi/4; sin r and cos r by
 * their Taylor polynomials to r^15 and r^16 (truncation below 3e-14
 * relative), the quadrant k mod 4 picking and signing them: so the result
 * is sin or cos in double rounded, or one ulp away.  Lanes past |x| of
 * 1e6 (and NaN, infinities) are redone by libm in double after the loop. */
#include <math.h>

#include "runtime/kernels/k_elem_int.h"

#define TRIG_BIG 1e6

/* no-trapping-math: the quadrant's selects become blends (no FP
 * exception flags are observed anywhere); gcc only, as kel_erf_f32 */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "arch=haswell", "default"),
	       optimize("no-trapping-math")))
#endif
static void sincos_loop(const float *xs, float *ys, int64_t n, int want_cos)
{
	for (int64_t i = 0; i < n; i++) {
		double x = xs[i], k, r, z, s, c, q, v;

		x = fabs(x) < TRIG_BIG ? x : 0;   /* redone below */
		k = rint(x * 0.63661977236758134308);
		r = ((x - k * 1.57079632673412561417e+00) - k * 6.07710050630396597660e-11) -
		    k * 2.02226624879595063154e-21;
		r = k == 0 ? x : r;   /* sin -0 is -0 */
		z = r * r;
		s = r + r * z * (-1.0 / 6 + z * (1.0 / 120 + z * (-1.0 / 5040 + z * (1.0 / 362880 +
		    z * (-1.0 / 39916800 + z * (1.0 / 6227020800.0 + z * (-1.0 / 1307674368000.0)))))));
		s = z == 0 ? r : s;   /* and r tiny: r itself */
		c = 1 + z * (-0.5 + z * (1.0 / 24 + z * (-1.0 / 720 + z * (1.0 / 40320 +
		    z * (-1.0 / 3628800 + z * (1.0 / 479001600 + z * (-1.0 / 87178291200.0 +
		    z * (1.0 / 20922789888000.0))))))));
		/* the quadrant, 0 to 3 (cos: a quarter turn on) */
		q = k + want_cos;
		q = q - 4 * floor(q * 0.25);
		v = q == 0 || q == 2 ? s : c;
		ys[i] = (float)(q >= 2 ? -v : v);
	}
}

/* Lanes the loop does not take, a block at a time (y may be x) */
#define TRIG_BLOCK 512

void kel_sincos_f32(const float *xs, float *ys, int64_t n, int want_cos)
{
	for (int64_t b = 0; b < n; b += TRIG_BLOCK) {
		int64_t m = n - b < TRIG_BLOCK ? n - b : TRIG_BLOCK, nf = 0;
		int64_t at[TRIG_BLOCK];
		float v[TRIG_BLOCK];

		for (int64_t i = 0; i < m; i++)
			if (!(fabsf(xs[b + i]) < (float)TRIG_BIG)) {
				at[nf] = b + i;
				v[nf++] = xs[b + i];
			}
		sincos_loop(xs + b, ys + b, m, want_cos);
		for (int64_t j = 0; j < nf; j++)
			ys[at[j]] = (float)(want_cos ? cos((double)v[j]) : sin((double)v[j]));
	}
}
