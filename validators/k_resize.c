/* k_resize.c: kernels of the resize family (Resize and Upsample); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_resize[] = {
	{ 0 }
};
const size_t rt_n_kernels_resize = 0;
