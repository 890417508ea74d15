/* k_matmul.c: kernels of the matmul family (MatMul and Gemm); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_matmul[] = {
	{ 0 }
};
const size_t rt_n_kernels_matmul = 0;
