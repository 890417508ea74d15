/* k_cast.c: kernels of the cast family (Cast, CastLike and dtype conversions); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_cast[] = {
	{ 0 }
};
const size_t rt_n_kernels_cast = 0;
