/* k_conv.c: kernels of the conv family (convolutions); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_conv[] = {
	{ 0 }
};
const size_t rt_n_kernels_conv = 0;
