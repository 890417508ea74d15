/* k_softmax.c: kernels of the softmax family (Softmax, LogSoftmax, Hardmax); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_softmax[] = {
	{ 0 }
};
const size_t rt_n_kernels_softmax = 0;
