/* k_optional.c: kernels of the optional family (optional values); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_optional[] = {
	{ 0 }
};
const size_t rt_n_kernels_optional = 0;
