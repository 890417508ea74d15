/* k_nn.c: kernels of the nn family (see rt_int.h for how to add one). */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_nn[] = {
	{ 0 }
};
const size_t rt_n_kernels_nn = 0;
