/* suite_kreduce.c: unit tests of reduction, softmax, sort and einsum kernels. */
#include "tests/unit/suites.h"

static const struct unit_test tests[] = {
	{ NULL, NULL },
};

int suite_kreduce_register(void)
{
	return unit_add_suite("kreduce", tests);
}
