/* k_act.c: kernels of the act family (activations); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_act[] = {
	{ 0 }
};
const size_t rt_n_kernels_act = 0;
