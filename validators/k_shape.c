/* k_shape.c: kernels of the shape family (see rt_int.h for how to add one). */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_shape[] = {
	{ 0 }
};
const size_t rt_n_kernels_shape = 0;
