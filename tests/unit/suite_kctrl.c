/* suite_kctrl.c: unit tests of control-flow, sequence and optional kernels. */
#include "tests/unit/suites.h"

static const struct unit_test tests[] = {
	{ NULL, NULL },
};

int suite_kctrl_register(void)
{
	return unit_add_suite("kctrl", tests);
}
