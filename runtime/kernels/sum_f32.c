/* sum_f32.c: a float32 run's sum in double for the kernels that reduce
 * planes and rows (GlobalAveragePool, LayerNorm): eight partial sums side
 * by side, which vectorize, where one running sum waits on each add.  The
 * plain sum and the sum of squared deviations are separate loops: with
 * the choice between them inside one loop gcc vectorized neither (a
 * GlobalAveragePool of 1000 13x13 planes took 169 us instead of 25). */
#include "runtime/rt_int.h"

__attribute__((target_clones("avx512f", "avx2", "default")))
double rt_sum_f32(const float *x, int64_t n, double mean, int sq)
{
	double s[8] = { 0 }, sum = 0;
	int64_t i = 0;

	if (sq) {
		for (; i + 8 <= n; i += 8)
			for (int u = 0; u < 8; u++) {
				double d = x[i + u] - mean;

				s[u] += d * d;
			}
		for (; i < n; i++)
			sum += (x[i] - mean) * (x[i] - mean);
	} else {
		for (; i + 8 <= n; i += 8)
			for (int u = 0; u < 8; u++)
				s[u] += x[i + u] - mean;
		for (; i < n; i++)
			sum += x[i] - mean;
	}
	for (int u = 0; u < 8; u++)
		sum += s[u];
	return sum;
}
