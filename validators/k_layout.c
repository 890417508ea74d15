/* k_layout.c: kernels of the layout family (layout ops); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_layout[] = {
	{ 0 }
};
const size_t rt_n_kernels_layout = 0;
