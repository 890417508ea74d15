/* k_binary.c: kernels of the binary family (binary arithmetic, comparison, logic and bitwise); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_binary[] = {
	{ 0 }
};
const size_t rt_n_kernels_binary = 0;
