/* suite_kshape.c: unit tests of shape, gather, slice, resize and layout kernels. */
#include "tests/unit/suites.h"

static const struct unit_test tests[] = {
	{ NULL, NULL },
};

int suite_kshape_register(void)
{
	return unit_add_suite("kshape", tests);
}
