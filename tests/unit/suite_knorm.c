/* suite_knorm.c: unit tests of normalization, recurrent, quantization, attention and contrib kernels. */
#include "tests/unit/suites.h"

static const struct unit_test tests[] = {
	{ NULL, NULL },
};

int suite_knorm_register(void)
{
	return unit_add_suite("knorm", tests);
}
