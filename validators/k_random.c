/* k_random.c: kernels of the random family (random generators); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_random[] = {
	{ 0 }
};
const size_t rt_n_kernels_random = 0;
