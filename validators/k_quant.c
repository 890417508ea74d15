/* k_quant.c: kernels of the quant family (quantize and dequantize); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_quant[] = {
	{ 0 }
};
const size_t rt_n_kernels_quant = 0;
