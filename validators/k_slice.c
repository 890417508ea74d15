/* k_slice.c: kernels of the slice family (slicing, padding, tiling); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_slice[] = {
	{ 0 }
};
const size_t rt_n_kernels_slice = 0;
