/* k_sort.c: kernels of the sort family (TopK, Unique and sorting); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_sort[] = {
	{ 0 }
};
const size_t rt_n_kernels_sort = 0;
