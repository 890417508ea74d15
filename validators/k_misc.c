/* k_misc.c: kernels of the misc family (see rt_int.h for how to add one). */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_misc[] = {
	{ 0 }
};
const size_t rt_n_kernels_misc = 0;
