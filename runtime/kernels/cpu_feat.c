/* cpu_feat.c: cpu_feat.h's answers, from one set of feature bits found
 * on the first call (__builtin_cpu_supports takes only literal names). */
#include "runtime/kernels/cpu_feat.h"

enum { F_512F = 1, F_512BW = 2, F_512DQ = 4, F_512VL = 8, F_512VBMI = 16, F_KNOWN = 32 };

static int cpu_has(unsigned want)
{
	static unsigned bits;

	if (!bits) {
		__builtin_cpu_init();
		bits = F_KNOWN | (__builtin_cpu_supports("avx512f") ? F_512F : 0) |
		       (__builtin_cpu_supports("avx512bw") ? F_512BW : 0) |
		       (__builtin_cpu_supports("avx512dq") ? F_512DQ : 0) |
		       (__builtin_cpu_supports("avx512vl") ? F_512VL : 0) |
		       (__builtin_cpu_supports("avx512vbmi") ? F_512VBMI : 0);
	}
	return (bits & want) == want;
}

int rt_cpu_avx512f(void)
{
	return cpu_has(F_512F);
}

int rt_cpu_avx512core(void)
{
	return cpu_has(F_512F | F_512BW | F_512DQ | F_512VL);
}

int rt_cpu_avx512vbmi(void)
{
	return cpu_has(F_512VBMI | F_512BW);
}
