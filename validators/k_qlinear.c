/* k_qlinear.c: kernels of the qlinear family (quantized linear algebra); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_qlinear[] = {
	{ 0 }
};
const size_t rt_n_kernels_qlinear = 0;
