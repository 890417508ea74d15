/* k_elem.c: kernels of the elem family (see rt_int.h for how to add one). */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_elem[] = {
	{ 0 }
};
const size_t rt_n_kernels_elem = 0;
