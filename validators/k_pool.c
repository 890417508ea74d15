/* k_pool.c: kernels of the pool family (pooling); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_pool[] = {
	{ 0 }
};
const size_t rt_n_kernels_pool = 0;
