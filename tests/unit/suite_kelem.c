/* suite_kelem.c: unit tests of elementwise, binary, activation and cast kernels. */
#include "tests/unit/suites.h"

static const struct unit_test tests[] = {
	{ NULL, NULL },
};

int suite_kelem_register(void)
{
	return unit_add_suite("kelem", tests);
}
