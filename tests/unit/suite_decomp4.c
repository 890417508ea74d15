/* suite_decomp4.c: placeholder */
#include "tests/unit/suites.h"

static const struct unit_test tests[] = {
	{ NULL, NULL },
};

int suite_decomp4_register(void)
{
	return unit_add_suite("decomp4", tests);
}
