/* k_gather.c: kernels of the gather family (gather and scatter); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_gather[] = {
	{ 0 }
};
const size_t rt_n_kernels_gather = 0;
