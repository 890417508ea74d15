/* k_attn.c: kernels of the attn family (attention); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_attn[] = {
	{ 0 }
};
const size_t rt_n_kernels_attn = 0;
