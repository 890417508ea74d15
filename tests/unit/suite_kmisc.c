/* suite_kmisc.c: unit tests of random, string, ml, signal, detection and training kernels. */
#include "tests/unit/suites.h"

static const struct unit_test tests[] = {
	{ NULL, NULL },
};

int suite_kmisc_register(void)
{
	return unit_add_suite("kmisc", tests);
}
