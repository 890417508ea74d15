/* k_train.c: kernels of the train family (training ops); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_train[] = {
	{ 0 }
};
const size_t rt_n_kernels_train = 0;
