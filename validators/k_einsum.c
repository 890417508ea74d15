/* k_einsum.c: kernels of the einsum family (Einsum); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_einsum[] = {
	{ 0 }
};
const size_t rt_n_kernels_einsum = 0;
