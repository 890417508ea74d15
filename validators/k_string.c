/* k_string.c: kernels of the string family (string ops); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_string[] = {
	{ 0 }
};
const size_t rt_n_kernels_string = 0;
