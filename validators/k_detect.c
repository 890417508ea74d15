/* k_detect.c: kernels of the detect family (detection ops); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_detect[] = {
	{ 0 }
};
const size_t rt_n_kernels_detect = 0;
