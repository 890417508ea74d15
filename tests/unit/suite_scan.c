/* suite_scan.c: unit tests of the scanner. */
#include "tests/unit/suites.h"

static const struct unit_test tests[] = {
	{ NULL, NULL },
};

int suite_scan_register(void)
{
	return unit_add_suite("scan", tests);
}
