/* suite_knn.c: unit tests of conv, pool, matmul and quantized linear kernels. */
#include "tests/unit/suites.h"

static const struct unit_test tests[] = {
	{ NULL, NULL },
};

int suite_knn_register(void)
{
	return unit_add_suite("knn", tests);
}
