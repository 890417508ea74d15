/* sum_f32.c: a float32 run's sum in double for the kernels that reduce
 * planes and rows (GlobalAveragePool, LayerNorm): eight partial sums side
 * by side, which vectorize, where one running sum waits on each add. */
#include "validators/rt_int.h"

__attribute__((target_clones("avx512f", "avx2", "default")))
double rt_sum_f32(const float *x, int64_t n, double mean, int sq)
{
	double s[8] = { 0 }, sum = 0;
	int64_t i = 0;

	for (; i + 8 <= n; i += 8)
		for (int u = 0; u < 8; u++) {
			double d = x[i + u] - mean;

			s[u] += sq ? d * d : d;
		}
	for (; i < n; i++) {
		double d = x[i] - mean;

		sum += sq ? d * d : d;
	}
	for (int u = 0; u < 8; u++)
		sum += s[u];
	return sum;
}
