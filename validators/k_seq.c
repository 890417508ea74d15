/* k_seq.c: kernels of the seq family (see rt_int.h for how to add one). */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_seq[] = {
	{ 0 }
};
const size_t rt_n_kernels_seq = 0;
