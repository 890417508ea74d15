/* k_norm.c: kernels of the norm family (normalizations); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_norm[] = {
	{ 0 }
};
const size_t rt_n_kernels_norm = 0;
