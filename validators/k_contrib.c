/* k_contrib.c: kernels of the contrib family (see rt_int.h for how to add one). */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_contrib[] = {
	{ 0 }
};
const size_t rt_n_kernels_contrib = 0;
