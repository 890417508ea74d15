/* k_rnn.c: kernels of the rnn family (recurrent layers); see rt_int.h for how
 * to add one. */
#include "validators/rt_int.h"

const struct rt_kernel rt_kernels_rnn[] = {
	{ 0 }
};
const size_t rt_n_kernels_rnn = 0;
