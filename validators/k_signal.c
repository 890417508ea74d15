/* k_signal.c: kernels of the signal family (signal processing); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_signal[] = {
	{ 0 }
};
const size_t rt_n_kernels_signal = 0;
